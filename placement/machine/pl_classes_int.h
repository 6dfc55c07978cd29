/* pl_classes_int.h - inside the sharing classes (pl_classes.h): the machine's tree with its shapes, the classes of
 * each shape memoised, and what pl_classes.c (the tree, the classes, their representatives) shares with
 * pl_classes_list.c (the class of one placement, the listings).  Not for other files. */
#ifndef IB_PL_CLASSES_INT_H
#define IB_PL_CLASSES_INT_H
#include <gmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_classes.h"

#define PROGRESS_FIRST 1.0
#define PROGRESS_EVERY 0.5
#define PROGRESS_TICKS 4096u
#define MAX_NODE_SETS 1000000.0
#define MAX_FAMILIES 1000000.0

struct tnode {
    unsigned shape;
    unsigned nch;
    unsigned *ch;    /* children, logical order */
    int level;       /* -1 root, 0..nlevels-1 an instance of that level, nlevels a PU */
    unsigned inst;   /* instance (PU: logical index) */
    uint64_t nodes;  /* OS mask of the NUMA nodes in the subtree (numa level present) */
};

struct shape {
    char *key;
    unsigned npus;
    int level;
    unsigned ngroups;
    unsigned *gshape;
    unsigned *gcount;
};

struct cent {
    char *key;
    unsigned n;
    mpz_t orbit;
    unsigned nch;       /* nonempty children, group by group, each group's in canonical order */
    struct cent **ch;
    unsigned *gn;       /* per group: how many of ch */
};

struct clist {
    unsigned n, cap;
    struct cent **v;
};

struct ctx {
    const struct pl_hier *h;
    unsigned ntn;
    struct tnode *t;
    unsigned nshapes, capshapes;
    struct shape *s;
    struct clist **memo; /* [shape][n] */
    const unsigned *chain;
    unsigned long limit;
    struct cent **arena;
    size_t narena, carena;
    struct cent *empty, *one;
    int numa; /* level index of numa, or -1 */
    /* progress */
    uint64_t made, root_made, ticks;
    double t0, next, every;
    bool shown;
    int err;
    char *why;
    size_t len;
};

double cls_mono_now(void);
/* Whether a progress line is due: the work has run PROGRESS_FIRST s and the last line was PROGRESS_EVERY s ago.
 * force: read the clock now (each step of the phase is slow); else once per PROGRESS_TICKS calls. */
bool cls_progress_due(struct ctx *c, bool force);
/* The first failure, kept with its reason: err. */
int cls_fail(struct ctx *c, int err, const char *msg);
int cls_ctx_init(struct ctx *c, const struct pl_hier *h, char *why, size_t len);
void cls_ctx_free(struct ctx *c);
void cls_memo_reset(struct ctx *c);
/* Canonical order of children's classes: most threads first, then key. */
int cls_cent_cmp(const struct cent *a, const struct cent *b);
/* A class from its children (canonical order within each group): key and orbit. */
struct cent *cls_cent_make(struct ctx *c, const struct shape *sh, struct cent *const *ch, const unsigned *gn);
/* The classes of n threads in a subtree of shape s, memoised. */
const struct clist *cls_classes(struct ctx *c, unsigned s, unsigned n);
/* Places class e in node i: PUs appended to out[*cnt].  With `cons`, the NUMA nodes used must be exactly `set`
 * (children are tried in logical order, classes largest first, backtracking).  False when it cannot. */
bool cls_realise(const struct ctx *c, unsigned i, const struct cent *e, bool cons, uint64_t set, unsigned *out,
                 unsigned *cnt);
/* qsort's order of unsigned ints. */
int cls_cmp_uint(const void *a, const void *b);
/* Fills a pl_class (but id and why) from class e realised with the given node constraint. */
int cls_fill_class(struct ctx *c, const struct cent *e, bool cons, uint64_t set, const mpz_t total,
                   struct pl_class *out);

#endif
