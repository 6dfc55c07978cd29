/* pl_ext_nodes.h - the extender's node store (pl_extender.h): the node state directory (NAME.json a node) read whole
 * into an immutable snapshot, and the store watched for a change.  A request takes a reference to the snapshot it
 * starts with, so a reload never changes a decision half-way; the snapshot is replaced whole when the directory
 * changes.  The watch is a stat of the profile and node directories and of their `..data` symlinks (a ConfigMap
 * volume's atomic swap) at most every PL_EXT_STORE_CHECK_MS, on the request path: no thread, no inotify. */
#ifndef IB_PL_EXT_NODES_H
#define IB_PL_EXT_NODES_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "pl_ext_names.h"
#include "pl_ext_state.h"

struct ext_cache;

/* A node state directory as read at one moment. */
struct nsnap {
    unsigned refs; /* under ext_nodes.smu */
    struct strtab names;
    struct ninfo *node;
    unsigned n;
    struct ninfo **b; /* hash chains by name, nb a power of two */
    unsigned nb;
};

/* What says that a directory changed. */
struct dsig {
    struct timespec m, c, lm;
    ino_t ino, lino;
    dev_t dev;
    char link[128];
    int err;
};

struct ext_nodes {
    char *dir, *ndir; /* the profile store and the node state directory */
    pthread_mutex_t reload_mu, smu;
    atomic_llong next_check_ns;
    struct dsig psig, nsig;
    struct nsnap *snap; /* under smu */
    bool loaded;        /* under smu */
    char load_why[256]; /* under smu */
    atomic_ulong reloads;
};

/* The store at profiles (NULL: "."), its node state at nodes (NULL: PROFILES/nodes).  0 or -ENOMEM. */
int ext_nodes_init(struct ext_nodes *n, const char *profiles, const char *nodes);
void ext_nodes_fini(struct ext_nodes *n);
/* The store checked for a change at time now (seconds), at most every PL_EXT_STORE_CHECK_MS unless force; one caller
 * does it, the others go on.  A change of the profile directory empties cache (NULL: none); a change of the node
 * directory, or force, reads the node state again. */
void ext_nodes_check(struct ext_nodes *n, struct ext_cache *cache, double now, bool force);
/* The snapshot held now, referenced (NULL: none yet), and its release. */
struct nsnap *ext_nodes_get(struct ext_nodes *n);
void ext_nodes_put(struct ext_nodes *n, struct nsnap *s);
/* The node name (len bytes) of s; NULL when it has none. */
const struct ninfo *nsnap_find(const struct nsnap *s, const char *name, size_t len);
/* Nodes in the snapshot held now. */
unsigned long ext_nodes_count(struct ext_nodes *n);
/* Whether the store is loaded (pl_extender_ready). */
bool ext_nodes_ready(struct ext_nodes *n, char *why, size_t len);

#endif
