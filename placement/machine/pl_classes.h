/* pl_classes.h - sharing classes of N-thread placements, and the important ones (seeds 000 §2.1, 002 §3).
 *
 * A placement is a set of N PUs (one thread each).  Two placements are in the same class when a symmetry of the
 * hierarchy (pl_machine.h: its levels are the concerns) maps one onto the other: they use the same number of
 * instances of every level with the same distribution of threads over them.  Classes are found on the tree's
 * symmetry (a class is a multiset of its children's classes), never by enumerating PU sets.
 *
 * The important placements (Funston et al. ATC'18 §3) are the balanced classes: for every level's score s (instances used),
 * N mod s == 0 and every used instance holds N/s threads; feasible (N/s at most an instance's PUs); with a
 * bandwidth file, the interconnect rule for node sets (pl_classes.c says which sets are kept and why).
 */
#ifndef IB_PL_CLASSES_H
#define IB_PL_CLASSES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Measured aggregate bandwidth of NUMA node sets (Funston et al. ATC'18's interconnect concern). */
struct pl_bw_set {
    uint64_t nodes; /* bit i: NUMA node with OS index i */
    double bw;      /* in `unit` */
};
struct pl_bandwidth {
    unsigned n;
    struct pl_bw_set *v;
    char unit[32];
};
/* JSON: {"unit": "GB/s", "sets": [{"nodes": [0, 1], "bandwidth": 23.5}, ...]}; node numbers are OS indexes below 64,
 * bandwidths positive, no set twice.  -EINVAL with one line otherwise. */
int pl_bandwidth_parse(const char *text, struct pl_bandwidth *b, char *why, size_t len);
int pl_bandwidth_load(const char *path, struct pl_bandwidth *b, char *why, size_t len);
void pl_bandwidth_free(struct pl_bandwidth *b);

struct pl_class {
    unsigned id;                    /* 1-based row in its listing (0: not from a listing) */
    unsigned nthreads;
    unsigned score[PL_MAX_LEVELS];  /* per level of the hierarchy: instances used */
    char *usage[PL_MAX_LEVELS];     /* per level: threads per used instance, descending, e.g. "2,2" */
    unsigned *pus;                  /* the representative: nthreads PU logical indexes, ascending */
    char *orbit;                    /* placements the class stands for, exact, in decimal */
    double orbit_frac;              /* orbit / C(PUs, N) */
    char *key;                      /* canonical form: equal keys <=> same class */
    bool balanced;
    uint64_t nodes;                 /* OS-index mask of the NUMA nodes the representative uses (0: no numa level) */
    double bandwidth;               /* interconnect score of the representative's node set; NaN without a file */
    char *why;                      /* important listing: why it is kept ("balanced", "best 2-node bandwidth", ...) */
};

struct pl_class_list {
    unsigned n;
    struct pl_class *v;
    char *total; /* C(PUs, N), exact, in decimal */
};

/* The default of `--limit` (place classes --all, place apply --class --all): more classes are refused. */
#define PL_CLASSES_LIMIT 10000UL

struct pl_classes_opts {
    unsigned nthreads;
    bool all;                      /* every class; else the important placements */
    unsigned long limit;           /* --all: refuse (-E2BIG, with the reason) when there are more classes */
    const struct pl_bandwidth *bw; /* NULL: no interconnect concern */
    double progress_after;         /* seconds of work before the first progress line (out_progress, label "place
                                    * classes"); 0: 1 s */
    double progress_every;         /* seconds at least between two lines; 0: 0.5 s */
};

/* The classes of opts->nthreads-thread placements, sorted (pl_classes.c documents the order, which gives ids).
 * -EINVAL for N = 0 or N > PUs, -E2BIG beyond the limit. */
int pl_classes(const struct pl_hier *h, const struct pl_classes_opts *o, struct pl_class_list *out, char *why,
               size_t len);
void pl_class_list_free(struct pl_class_list *l);

/* The class of one placement (n PU logical indexes, distinct): fills every field but id and why. */
int pl_class_of(const struct pl_hier *h, const unsigned *pus, unsigned n, struct pl_class *out, char *why,
                size_t len);
void pl_class_free(struct pl_class *c);
/* The listed class with the same key as c, or NULL. */
const struct pl_class *pl_class_find(const struct pl_class_list *l, const struct pl_class *c);

/* Tang et al. ISCA'11's notation for the representative: '{' then one 'X' (used) or '.' per PU in logical order, then '}'.
 * -E2BIG for a machine of more than 64 PUs. */
int pl_class_notation(const struct pl_hier *h, const struct pl_class *c, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
