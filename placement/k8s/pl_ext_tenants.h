/* pl_ext_tenants.h - the extender's assumed tenants (pl_extender.h): a pod prioritize gave the top score counts as a
 * tenant of that node in later decisions (a burst of pods sees its own earlier members) until the node's tenant list
 * shows it or ttl_s passes.  Keyed by the pod (metadata.uid, else namespace/name); at most PL_EXT_MAX_ASSUMED at
 * once, the oldest dropped.  Thread-safe (one mutex). */
#ifndef IB_PL_EXT_TENANTS_H
#define IB_PL_EXT_TENANTS_H
#include <pthread.h>
#include <stdbool.h>

struct pl_extender_stats;

struct assumed {
    char *key, *node, *profile;
    unsigned expect; /* confirmed when the node lists this many tenants of profile */
    double t;
};

struct ext_assumed {
    pthread_mutex_t mu;
    struct assumed *as;
    unsigned n, cap;
    unsigned long total, confirmed, expired;
    unsigned ttl_s; /* 0: nothing is assumed */
};

/* An assumed tenant of a request's node, copied out of the table. */
struct ext_use {
    unsigned node;
    char *profile;
};

void ext_assumed_init(struct ext_assumed *a, unsigned ttl_s);
void ext_assumed_fini(struct ext_assumed *a);
/* The assumed tenants of a request's nodes at time now: expired ones dropped; for each on a node of the request
 * (find: its index, and how many tenants of the profile its list holds; -1 when the request has no such node or the
 * node fails), dropped when the list confirms it, else copied to *use (malloc'd, *nuse of them) unless it is the
 * pod's own (key; NULL: the pod has none).  0 or -ENOMEM. */
int ext_assumed_uses(struct ext_assumed *a, double now, const char *key,
                     int (*find)(void *ctx, const char *node, const char *profile, unsigned *listed), void *ctx,
                     struct ext_use **use, unsigned *nuse);
void ext_uses_free(struct ext_use *use, unsigned nuse);
/* The pod key takes node as an assumed tenant of profile, whose list holds listed of them; the pod's earlier one is
 * dropped.  0 or -ENOMEM. */
int ext_assumed_take(struct ext_assumed *a, double now, const char *key, const char *node, const char *profile,
                     unsigned listed);
void ext_assumed_stats(struct ext_assumed *a, struct pl_extender_stats *s);

#endif
