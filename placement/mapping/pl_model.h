/* pl_model.h - the placement model (Funston et al. ATC'18 §4-5): performance vectors of workloads in the important placements,
 * clustered; the iterative method (the paper's Algorithm 1) that finds a new workload's cluster by measuring it in a
 * few placements; and packing containers of a workload on a machine under a performance goal.
 *
 * Conventions (docs/placement.md, "The placement model"):
 * - A performance vector holds, per important placement, the workload's performance there divided by its
 *   performance in the baseline placement, which is the FIRST placement (its entry is 1.0).  Higher is better
 *   (throughput, or 1/run time); a goal of 0.9 means "at least 90 % of the baseline's performance".
 * - Clusters come from k-means (seeded, k-means++, PL_MODEL_RESTARTS restarts, lowest inertia kept; k chosen by the
 *   mean silhouette when asked) or from a label column.
 * - A cluster's interval at placement p is [min, max] of its members' entries at p, widened by the model's
 *   tolerance (default 0: the paper's exact intervals); its centroid is the predicted vector.
 * pl_model.c states every rule and tie-break.  No I/O besides parsing given text and reading/writing model JSON. */
#ifndef IB_PL_MODEL_H
#define IB_PL_MODEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_MODEL_RESTARTS 10 /* k-means restarts per k (each a fresh k-means++ start) */
#define PL_MODEL_MAX_ITER 100
#define PL_MODEL_KMAX 10     /* k auto tries 2..min(PL_MODEL_KMAX, n - 1) */
#define PL_MODEL_FORMAT "ibench-placement-model"
#define PL_MODEL_VERSION 1

/* A CSV of performance vectors: header `workload,<placement ids...>[,label]`. */
struct pl_vectors {
    unsigned n, np;  /* workloads, placements */
    char **name;     /* n workload names, distinct */
    char **pid;      /* np placement ids, distinct */
    double *v;       /* n x np, row-major */
    char **label;    /* n labels, or NULL when there is no label column */
};

/* Strict: a header whose first column is `workload`, at least one placement id, ids distinct and non-empty, an
 * optional last column `label`; every row with exactly the header's columns; every value a finite number > 0;
 * workload names distinct and non-empty; at least one row.  Blank lines and a trailing CR are ignored.  -EINVAL
 * with one line naming the line and column otherwise. */
int pl_vectors_parse(const char *text, struct pl_vectors *out, char *why, size_t len);
int pl_vectors_load(const char *path, struct pl_vectors *out, char *why, size_t len);
void pl_vectors_free(struct pl_vectors *v);

/* --- k-means and the silhouette (x: n x d, row-major) --- */

/* Mean silhouette of a partition (assign[i] in 0..k-1): Euclidean distances; a member of a singleton cluster scores
 * 0 (Rousseeuw).  NAN when k < 2 or n < 2. */
double pl_silhouette(const double *x, unsigned n, unsigned d, const unsigned *assign, unsigned k);

/* k-means: PL_MODEL_RESTARTS restarts from k-means++ seeds drawn from `seed`, Lloyd's iterations until no point
 * moves (at most PL_MODEL_MAX_ITER), the lowest inertia kept (ties: the earliest restart).  Clusters are then
 * renumbered by their first member (cluster 0 holds point 0).  assign: n entries.  -EINVAL when k is 0 or > n. */
int pl_kmeans(const double *x, unsigned n, unsigned d, unsigned k, uint64_t seed, unsigned *assign, double *inertia);

/* --- the model --- */

struct pl_cluster {
    char *name;        /* the label, or "1".."k" (k-means) */
    unsigned size;
    double *centroid;  /* np: the predicted vector */
    double *lo, *hi;   /* np: the interval [min, max] of the members (not widened: tolerance applies on use) */
    char **members;    /* size workload names, in CSV order */
};

struct pl_model {
    unsigned np, k;
    char **pid;            /* np placement ids; pid[0] is the baseline */
    struct pl_cluster *c;  /* k clusters */
    double tolerance;      /* intervals are widened by this (absolute, in relative-performance units) on both sides */
    uint64_t seed;
    bool from_labels;
    /* training report: the silhouette of every k tried (k auto) or of the chosen k; NAN when undefined */
    unsigned nk;
    unsigned *ks;
    double *sil;
    double silhouette;     /* of the chosen partition */
};

struct pl_train_opts {
    unsigned k;        /* 0: auto */
    uint64_t seed;
    double tolerance;  /* >= 0 */
};

/* Distances to two intervals closer than this (times max(1, |value|)) are a tie in Algorithm 1's closest rule. */
#define PL_MODEL_TIE_EPS 1e-9

/* Trains on v: clusters from the label column when there is one (k, when given, must be the number of labels; the
 * seed is not used), else k-means.  -EINVAL with
 * one line (k > n, fewer than 3 workloads for k auto, a baseline entry that is not 1 within 1e-9, ...). */
int pl_model_train(const struct pl_vectors *v, const struct pl_train_opts *o, struct pl_model *m, char *why,
                   size_t len);
void pl_model_free(struct pl_model *m);

/* JSON text of the model (malloc'd, to free()); NULL on ENOMEM. */
char *pl_model_dump(const struct pl_model *m);
/* Strict reader: {"format": PL_MODEL_FORMAT, "version": 1, ...} with nothing missing, extra or inconsistent. */
int pl_model_parse(const char *text, struct pl_model *m, char *why, size_t len);
int pl_model_load(const char *path, struct pl_model *m, char *why, size_t len);

/* The index of a cluster name, or -1. */
int pl_model_cluster(const struct pl_model *m, const char *name);

/* --- the iterative method (Algorithm 1) --- */

/* Performance of the workload in placement p (model order; any unit, higher is better, > 0).  The method divides
 * by the baseline's (placement 0), so a relative vector or raw throughputs both work. */
typedef double (*pl_measure_fn)(void *ctx, unsigned placement);

enum pl_predict_status {
    PL_PRED_FOUND,     /* one cluster's intervals contain every measurement */
    PL_PRED_CLOSEST,   /* a measurement outside every interval: the closest interval's cluster kept (Algorithm 1) */
    PL_PRED_NONE,      /* every cluster excluded: "no cluster"; every placement is then measured */
    PL_PRED_AMBIGUOUS, /* every placement measured, still more than one cluster: the nearest centroid is named */
};
const char *pl_predict_status_name(enum pl_predict_status s);

struct pl_prediction {
    enum pl_predict_status status;
    int cluster;        /* index, or -1 for PL_PRED_NONE */
    unsigned ntried;    /* placements measured, the baseline first */
    unsigned *tried;    /* np entries, ntried used, in the order measured */
    unsigned *remaining;/* np entries: clusters left after each measurement */
    double *measured;   /* np: relative performance measured (NAN where not measured) */
    double *vector;     /* np: measured where measured, else the cluster's centroid (NAN for none: never, see .c) */
};

int pl_model_predict(const struct pl_model *m, pl_measure_fn measure, void *ctx, struct pl_prediction *out,
                     char *why, size_t len);
void pl_prediction_free(struct pl_prediction *p);

/* --- packing (Funston et al. ATC'18 §5) --- */

enum pl_pack_bound {
    PL_PACK_CENTROID, /* a placement meets the goal when the cluster's centroid there is >= goal */
    PL_PACK_MIN,      /* ... when the interval's minimum (every training member) is >= goal */
};

struct pl_pack_row {
    unsigned placement;   /* model index */
    unsigned class_id;    /* the important placement's id on this topology (its listing row) */
    unsigned units;       /* instances of the coarsest concern level one container uses */
    unsigned containers;  /* containers of this placement that fit: floor(instances / units) */
    double perf;          /* predicted relative performance (by the bound) */
    bool meets;           /* perf >= goal */
};

struct pl_pack {
    unsigned nthreads;
    char level[PL_NAME_LEN]; /* the coarsest concern level: containers never share its instances */
    unsigned ninst;          /* its instances on the machine */
    struct pl_pack_row *row; /* np rows, model order */
    unsigned nrow;
    int choice;              /* model index of the chosen placement, -1 when none meets the goal */
    unsigned containers;     /* 0 when none */
};

/* The important placements of nthreads threads on h (*l, pl_class_list_free) and each model placement's row among them
 * (rowof, m->np entries): a placement id of digits is a class id, other text a notation ({XX..XX..}).  -EINVAL with
 * one line for a placement that is not one of them, or two on one class. */
struct pl_class_list;
int pl_model_classes(const struct pl_model *m, const struct pl_hier *h, unsigned nthreads, struct pl_class_list *l,
                     unsigned *rowof, char *why, size_t len);
/* Packs containers of the cluster's workload (nthreads threads each) on the machine h: every model placement id must
 * name one of the topology's important placements (pl_classes, no bandwidth file) by its id ("3") or its notation
 * ("{XX..XX..}").  -EINVAL with one line otherwise. */
int pl_model_pack(const struct pl_model *m, unsigned cluster, double goal, enum pl_pack_bound bound,
                  const struct pl_hier *h, unsigned nthreads, struct pl_pack *out, char *why, size_t len);
void pl_pack_free(struct pl_pack *p);

#ifdef __cplusplus
}
#endif
#endif
