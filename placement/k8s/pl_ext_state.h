/* pl_ext_state.h - one node's state as the extender's decisions need it (struct ninfo: its tenants, its room), read
 * from a Node object of a request or from a node state file (nodes/NAME.json), and the Kubernetes quantities of its
 * room.  A Node object scanned by pl_jscan is read straight from its text when it is usual (ninfo_scan); anything
 * unusual goes to jansson (ninfo_parse), which decides it exactly as a whole parse would. */
#ifndef IB_PL_EXT_STATE_H
#define IB_PL_EXT_STATE_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pl_ext_names.h"

/* A piece of the request's text: a checked JSON value (n 0: absent). */
struct span {
    const char *p;
    size_t n;
};

/* The parts of one scanned Node object the decisions read, and the object itself (filter echoes it). */
struct nspans {
    struct span raw, name, annotations, allocatable;
    bool object; /* false: the item was not an object */
};

struct ninfo {
    char *name;
    uint64_t h;       /* ext_hash(name) */
    char *json;       /* the node state's: name as a JSON string, quoted (answers copy it); NULL: not made */
    size_t jlen;
    uint64_t sh;      /* ninfo_state_hash */
    const char **ten; /* the tenants annotation's elements, interned (one pointer a distinct name); NULL: not a
                       * string */
    unsigned nten;    /* 0: none (no annotation, or an empty list) */
    char *fail;       /* non-NULL: the node fails with this (its state unreadable) */
    char *badq;       /* non-NULL: an allocatable that is not a quantity ("status.allocatable.cpu: 'abc' is not a
                       * quantity"): a 400 in a request's Node, the node's failure in the node state (fail) */
    double cpu, mem;  /* allocatable; < 0: not given (or badq) */
    struct ninfo *hnext;
};

void ninfo_clear(struct ninfo *ni);
/* What the decisions read of a node, hashed and compared: its tenants (interned: by pointer) and its room. */
uint64_t ninfo_state_hash(const struct ninfo *ni);
bool ninfo_same_state(const struct ninfo *a, const struct ninfo *b);
/* ni from a node object (a Node, or the node state's NAME.json), its tenant names interned in st (ni->name is the
 * caller's).  0 or -ENOMEM. */
int ninfo_from_json(json_t *obj, struct ninfo *ni, struct strtab *st);
/* ni from a scanned Node's text, as ninfo_from_json reads the same Node parsed.  0, 1 (not usual: ninfo_parse; ni
 * holds what ninfo_clear releases), or -ENOMEM. */
int ninfo_scan(const struct nspans *it, struct ninfo *ni, struct strtab *st);
/* ni from a scanned Node's parts parsed by jansson.  0; 1 with a one-line reason in why (the request's 400: no
 * name, a duplicate key); -ENOMEM.  i is the item's index, for the reason. */
int ninfo_parse(const struct nspans *it, unsigned i, struct ninfo *ni, struct strtab *st, char *why, size_t len);

/* A Kubernetes quantity in base units ("500m", "2", "4Gi", "1e3", ".5"); -1 when it is not one. */
double ext_quantity(const char *s);
/* o[key] as a quantity: 1 with *v, 0 when absent (or null), -1 when present and not a quantity (*bad: its text). */
int ext_qty_of(json_t *o, const char *key, double *v, char *bad, size_t len);
/* o[key] with the key matched without case, as Go's decoder does; NULL when o is not an object or has no such key. */
json_t *ext_ci_get(json_t *o, const char *key);
/* The annotation key of a Kubernetes object (metadata.annotations; a node state file's top-level annotations), a
 * string; NULL when absent or of another type. */
const char *ext_annotation(json_t *obj, const char *key);

#endif
