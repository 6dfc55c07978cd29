/* pl_hetero.h - heterogeneous cores (the iBench paper §V.D): assign the applications of a mix to the cores of a machine whose
 * cores are of several types, from profiles measured per core type, to minimise the average interference; an exact
 * assignment (the Hungarian algorithm), not a greedy one.  pl_hetero.c states the model and every rule with its
 * reason; docs/placement.md, "Heterogeneous cores: place hetero".
 */
#ifndef IB_PL_HETERO_H
#define IB_PL_HETERO_H
#include <stdbool.h>
#include <stddef.h>

#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_HETERO_MAX_CORES 256
#define PL_HETERO_MAX_TYPES 16
/* The resources every core shares in the iBench paper §V.D ("all cores share an 8MB LLC and 16GB of memory"). */
#define PL_HETERO_SHARED "mem-cap,mem-bw,llc-cap,llc-bw"

/* The linear assignment problem, exactly: n rows (applications) to m >= n distinct columns (cores), minimising the
 * sum of cost[i * m + assign[i]] (row-major n x m, every entry finite).  O(n^2 m) (Kuhn-Munkres with potentials).
 * 0 with assign[] and *total (the sum in row order), or -EINVAL (n == 0, n > m, a cost not finite). */
int pl_hungarian(const double *cost, unsigned n, unsigned m, unsigned *assign, double *total);

/* Greedy for comparison: each row in turn takes its cheapest free column (the lowest-numbered on a tie). */
int pl_assign_greedy(const double *cost, unsigned n, unsigned m, unsigned *assign, double *total);

/* The exact optimum with the deterministic tie-break: among all assignments of minimum total, the one whose column
 * vector (assign[0], assign[1], ...) is lexicographically smallest.  Exact on integer-valued costs (the sums are
 * then exact in a double up to 2^53); pl_hetero quantises its costs so.  0 or -EINVAL as pl_hungarian. */
int pl_assign_lexmin(const double *cost, unsigned n, unsigned m, unsigned *assign, double *total);

/* One application of the mix: its profile on every core type (prof[t] for the machine's type t). */
struct pl_hetero_app {
    const char *name;
    const struct profile *const *prof; /* ntypes of them */
};

struct pl_hetero_machine {
    const char *const *type; /* ntypes names */
    const unsigned *count;   /* cores of each type: cores are numbered type by type, in this order */
    unsigned ntypes;
};

struct pl_hetero_opts {
    const char *const *shared; /* the SoIs the cores share (NULL: PL_HETERO_SHARED) */
    unsigned nshared;
    bool pessimistic;          /* unknowns count against the application (default) or in its favour */
};

/* What application a sees on shared resource r on a core of type t. */
struct pl_hetero_cell {
    double tolerated; /* a's tolerance on t, as counted */
    double others;    /* what the others cause there together, as counted (capped at 100) */
    double excess;    /* max(0, others - tolerated): the interference a suffers there, points */
    bool unknown_tol, unknown_oth, judged;
};

struct pl_hetero_result {
    unsigned napps, ncores, ntypes, nres;
    char **res;                   /* nres shared resource names, in the order given */
    struct pl_hetero_cell *cell;  /* napps x ntypes x nres: [(a * ntypes + t) * nres + r] */
    double *cost;                 /* napps x ntypes: a's interference on a core of type t, points (the sum of the
                                   * excesses, quantised to 1e-6) */
    unsigned *core, *type;        /* napps: the exact assignment (core index, its type) */
    double total, average;        /* of cost over the assignment */
    double *placed;               /* napps: a's interference with the co-runners' caused taken on their own cores'
                                   * types (<= cost: the objective is the bound, this what the profiles say) */
    double placed_total, placed_average;
    unsigned *greedy_core;        /* napps: the greedy assignment, for comparison */
    double greedy_total;
};

/* Assigns the n applications to the machine's cores (n <= cores), exactly.  0 with *r filled (pl_hetero_result_free),
 * or -EINVAL with one line (no application, more applications than cores, too many cores or types, a profile with no
 * measured SoI, an empty shared list) or -ENOMEM. */
int pl_hetero_assign(const struct pl_hetero_app *apps, unsigned n, const struct pl_hetero_machine *m,
                     const struct pl_hetero_opts *o, struct pl_hetero_result *r, char *why, size_t len);
void pl_hetero_result_free(struct pl_hetero_result *r);

#ifdef __cplusplus
}
#endif
#endif
