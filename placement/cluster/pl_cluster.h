/* pl_cluster.h - thread clustering (Tam et al. EuroSys'07 §4.3-4.5): per-thread shMaps of saturating counters over fixed-size
 * regions, the process's shMap filter, temporal sampling, the dot-product similarity, one-pass clustering against
 * cluster representatives, and clusters onto chips.  pl_cluster.c states every rule; docs/placement.md, "Thread
 * clustering: the pipeline", states them with their reasons and the results. */
#ifndef IB_PL_CLUSTER_H
#define IB_PL_CLUSTER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_samples.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The paper's values (Tam et al. EuroSys'07 §4.3.1, §4.4.1); 0 in a field means its default. */
#define PL_CLUSTER_ENTRIES 256     /* counters per shMap (and entries of the filter) */
#define PL_CLUSTER_BITS 8          /* counter width: saturates at 2^bits - 1 */
#define PL_CLUSTER_REGION 64       /* bytes per region when the caller gives none (the CLI passes hwloc's line) */
#define PL_CLUSTER_JITTER_PCT 10   /* each 1-in-N gap is N +- N * 10 % (uniform, integer) */
#define PL_CLUSTER_SMALL 3         /* counters below 3 count as 0 in the similarity */
#define PL_CLUSTER_THRESHOLD 40000 /* similarity threshold for 8-bit counters; scaled by ((2^bits - 1) / 255)^2 */
#define PL_CLUSTER_LIMIT_DIV 8     /* a thread may own at most entries / 8 filter entries (32 of 256) */
#define PL_CLUSTER_TRIGGER 0.20    /* phase 1: cluster only when the remote share is above 20 % (§4.2) */
#define PL_CLUSTER_MAX_LINES (1u << 22) /* distinct lines data_sharing tracks (24 bytes each at most 2x: 200 MB) */

struct pl_cluster_opts {
    unsigned entries;      /* 0: 256 */
    unsigned bits;         /* 1-16; 0: 8 */
    uint64_t region;       /* bytes, a power of two; 0: 64 */
    unsigned sample_n;     /* temporal sampling: 1 in N counted samples; 0 or 1: every one */
    int jitter_pct;        /* 1-100; 0: the default 10; negative: none (exactly every N-th) */
    unsigned small;        /* 0: 3 (the cut is absolute, not scaled with the width) */
    double threshold;      /* 0: 40000 * ((2^bits - 1) / 255)^2 */
    unsigned filter_limit; /* filter entries one thread may own; 0: entries / 8 (at least 1) */
    uint64_t seed;         /* of the jitter */
    double trigger;        /* phase 1's activation share; 0: 0.20; negative: none (always cluster) */
    bool have_stall_share; /* stall_share is a measured remote stall share (else estimated from the samples) */
    double stall_share;    /* 0-1 */
    unsigned max_lines;    /* distinct lines tracked for data_sharing; 0: PL_CLUSTER_MAX_LINES */
};

struct pl_cluster_stats {
    uint64_t samples;   /* handed to pl_cluster_add */
    uint64_t counted;   /* of which remote or unknown */
    uint64_t taken;     /* of which kept by temporal sampling */
    uint64_t recorded;  /* of which passed the filter (counted into a shMap, saturated or not) */
    uint64_t collided;  /* taken, discarded: the entry holds another region */
    uint64_t limited;   /* taken, discarded: the entry was free but the thread owns its limit */
    uint64_t local, remote, memory; /* samples by source (the rest: unknown) */
};

struct pl_cluster_thread {
    uint32_t tid;
    uint64_t samples;  /* all of its samples */
    uint64_t recorded; /* of its samples counted into its shMap */
    uint64_t rep_similarity; /* its similarity with the representative it joined (0: it founded one, or none) */
    int cluster;       /* index into clusters, or -1: unclustered */
};

struct pl_cluster_group {
    unsigned *member; /* indices into the result's threads, in scan order; member[0] is the representative */
    unsigned n;
};

struct pl_cluster_result {
    struct pl_cluster_thread *thread; /* every thread seen, in scan order (tid ascending) */
    unsigned nthreads;
    struct pl_cluster_group *cluster; /* clusters of 2 or more threads, in the order the pass created them */
    unsigned nclusters;
    unsigned *unclustered;            /* indices into thread, in scan order */
    unsigned nunclustered;
    unsigned nglobal;                 /* entries removed as globally shared (in more than half of the threads) */
    double data_sharing;              /* 0-1, Algorithm 1's (Tang et al. ISCA'11): samples on lines 2+ threads touched / all
                                       * samples on tracked lines, any source */
    uint64_t lines, shared_lines, lines_untracked; /* distinct lines, of which shared; samples on untracked lines */
    double remote_shared;             /* 0-1: recorded (remote) samples on entries in 2+ threads' shMaps / recorded */
    uint64_t comparisons;             /* similarities computed in the pass */
    bool triggered;                   /* phase 1: clustering activated (else every thread unclustered) */
    double trigger, remote_share;     /* the activation share and the figure it was compared with (NAN: unknown,
                                       * then clustering goes ahead) */
    char remote_share_source[96];
    double threshold;                 /* the one applied */
    unsigned small, filter_limit;     /* the ones applied */
    struct pl_cluster_stats stats;
};

struct pl_cluster;

/* A pipeline with opts (NULL: every default); 0 or -EINVAL / -ENOMEM with one line. */
int pl_cluster_new(const struct pl_cluster_opts *opts, struct pl_cluster **out, char *why, size_t len);
void pl_cluster_free(struct pl_cluster *c);
/* Feeds one sample: 0 or -ENOMEM. */
int pl_cluster_add(struct pl_cluster *c, const struct pl_sample *s);
/* pl_sample_fn: ctx is the struct pl_cluster. */
int pl_cluster_add_fn(void *ctx, const struct pl_sample *s);
/* What was fed so far (the counts of pl_cluster_stats). */
struct pl_cluster_stats pl_cluster_counts(const struct pl_cluster *c);
/* The filter entry a region's address maps to (the hash; exposed for the tests). */
unsigned pl_cluster_slot(const struct pl_cluster *c, uint64_t addr);
/* A thread's counter at an entry (0 for a thread never seen). */
unsigned pl_cluster_counter(const struct pl_cluster *c, uint32_t tid, unsigned entry);
/* The similarity of two counter vectors of n entries: sum of a[i] * b[i] over entries where both are >= small. */
uint64_t pl_cluster_similarity(const uint16_t *a, const uint16_t *b, unsigned n, unsigned small);
/* The global-line removal, similarity, one-pass clustering and summary over what was fed so far (the shMaps are
 * not changed: run may be called again after more samples).  0 or -ENOMEM with one line. */
int pl_cluster_run(struct pl_cluster *c, struct pl_cluster_result *r, char *why, size_t len);
void pl_cluster_result_free(struct pl_cluster_result *r);

/* The repeat loop (Tam et al. EuroSys'07 §4.1): rounds of sampling, phase 1, clustering and migration, each on a fresh pipeline
 * of opts, until phase 1 is not triggered (then that round migrates nothing and the loop ends) or max_rounds rounds
 * have run.  The sources and the migration are callbacks, so tests fake them. */
struct pl_cluster_round_cb {
    /* feeds round `round`'s samples (from 0) to fn(fctx, ...): 0 or -errno with why */
    int (*sample)(void *ctx, unsigned round, pl_sample_fn fn, void *fctx, char *why, size_t len);
    /* moves the threads as r says (NULL: nothing moves): 0 or -errno with why */
    int (*migrate)(void *ctx, unsigned round, const struct pl_cluster_result *r, char *why, size_t len);
    void *ctx;
};
struct pl_cluster_round_info {
    double remote_share; /* NAN: unknown */
    bool triggered, migrated;
    unsigned nthreads, nclusters, nunclustered;
};
/* 0 with *last the last round's result (to free) and info[0..*rounds-1] (info: max_rounds entries), or -errno with
 * why (nothing to free).  max_rounds >= 1. */
int pl_cluster_loop(const struct pl_cluster_opts *opts, const struct pl_cluster_round_cb *cb, unsigned max_rounds,
                    struct pl_cluster_result *last, struct pl_cluster_round_info *info, unsigned *rounds, char *why,
                    size_t len);

/* Clusters onto nchips chips (pl_cluster.c states the rule and its tie-breaks): nthreads threads 0..nthreads-1,
 * clusters (member indices) in their tie-break order, unclustered threads in their order; cap[k] the capacity of
 * chip k (NULL: all equal).  chip[t] receives thread t's chip.  0 or -EINVAL with one line (no chip, a capacity of
 * 0, an index out of range or a thread named twice or never). */
int pl_cluster_chips(const struct pl_cluster_group *clusters, unsigned nclusters, const unsigned *unclustered,
                     unsigned nunclustered, unsigned nthreads, unsigned nchips, const unsigned *cap, int *chip,
                     char *why, size_t len);
/* The same for a result: chip[i] for r->thread[i]. */
int pl_cluster_result_chips(const struct pl_cluster_result *r, unsigned nchips, const unsigned *cap, int *chip,
                            char *why, size_t len);

/* The adjusted Rand index of two labelings of n items (Hubert & Arabie 1985); 1 when both are the same partition,
 * including the degenerate cases where the expected index equals the maximum. */
double pl_ari(const int *a, const int *b, unsigned n);

#ifdef __cplusplus
}
#endif
#endif
