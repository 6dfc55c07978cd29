/* pl_atom.h - AToM, the adaptive thread-to-core mapper (Tang et al. ISCA'11 §5.2): a learning phase runs the application in
 * each sharing class of its thread count for an equal time and keeps the winner.  The measurements come through an
 * ops table, so the method is tested on a simulated application (pl_atom_oracle) and runs live through a thin
 * adapter (cli/place/mapping/cmd_place_atom.c).  pl_atom.c states the rules; docs/placement.md, "The adaptive mapper". */
#ifndef IB_PL_ATOM_H
#define IB_PL_ATOM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PL_ATOM_Z 2.0       /* a win: the best mean above every other by more than Z combined standard errors */
#define PL_ATOM_ROUNDS 30   /* default slices per class (docs/placement.md: pick rates against rounds) */

struct pl_atom_ops {
    /* Put the application in class k (0-based).  0 or -errno with why. */
    int (*apply)(void *ctx, unsigned k, char *why, size_t len);
    /* Let it run `seconds` where it is and return its metric over that time.  0 or -errno (-EINTR: stopped). */
    int (*measure)(void *ctx, unsigned k, double seconds, double *value, char *why, size_t len);
};

struct pl_atom_opts {
    double period;      /* seconds each class gets in a learning phase */
    unsigned rounds;    /* the period is run as this many interleaved slices (noise is judged over them) */
    bool higher_better; /* the metric's direction */
    double z;           /* PL_ATOM_Z */
};

struct pl_atom_stat {
    unsigned n;
    double mean, sd, se;
};

struct pl_atom_result {
    unsigned nclasses;
    struct pl_atom_stat *st; /* per class */
    unsigned *order;         /* the class of each slice, in the order run (nclasses x rounds) */
    unsigned nslices;
    double slice_s;          /* period / rounds */
    double learning_s;       /* nslices x slice_s = nclasses x period */
    int best;                /* the best mean */
    int rival;               /* the closest other class (-1 with one class) */
    double margin_se;        /* (best - rival) over their combined standard error, oriented (INFINITY: no rival) */
    bool clear;              /* margin_se > z: the best wins beyond the spread */
    char why[256];           /* one line: the winner and by how much, or that it is within noise of whom */
};

/* One learning phase over nclasses classes: round r runs the classes in the order r, r+1, ... (mod nclasses), each
 * for period / rounds seconds, so every class meets every position and slow drift spreads evenly.  Leaves the
 * application in the last class measured: the caller applies the winner.  0, or the first -errno of an op (the
 * result then holds what was measured so far). */
int pl_atom_learn(const struct pl_atom_ops *ops, void *ctx, unsigned nclasses, const struct pl_atom_opts *o,
                  struct pl_atom_result *r, char *why, size_t len);
void pl_atom_result_free(struct pl_atom_result *r);

/* A simulated application (--oracle): performance per class, times lognormal noise (sd of the log), seeded. */
struct pl_atom_oracle {
    unsigned n;
    double *perf;
    char **label;   /* per class, the notation it was given for (may be NULL) */
    double noise;
    uint64_t state; /* the PRNG */
    unsigned applied;
    unsigned applies;
};
/* {"name"?, "noise", "classes": [{"class": "{XXXX....}", "performance": 1.0}, ...], "note"?}: strictly. */
int pl_atom_oracle_parse(const char *text, const char *file, struct pl_atom_oracle *o, char *why, size_t len);
void pl_atom_oracle_seed(struct pl_atom_oracle *o, uint64_t seed);
void pl_atom_oracle_free(struct pl_atom_oracle *o);
extern const struct pl_atom_ops pl_atom_oracle_ops; /* ctx: struct pl_atom_oracle * */

#ifdef __cplusplus
}
#endif
#endif
