/* pl_ext_metrics.h - the extender's own figures (decisions, refusals by resource, Node objects read by path); the
 * other modules keep theirs, and pl_extender_get_stats and pl_extender_metrics gather them all. */
#ifndef IB_PL_EXT_METRICS_H
#define IB_PL_EXT_METRICS_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct refusal {
    char name[64];
    unsigned long n;
};

struct ext_figures {
    atomic_ulong decisions[2];  /* [0] filter, [1] prioritize */
    atomic_ulong nodes_read[2]; /* Node objects' state read: [0] from the scanned text, [1] through jansson */
    pthread_mutex_t mu;         /* the refusals */
    struct refusal *ref;
    unsigned nref;
};

void ext_figures_init(struct ext_figures *f);
void ext_figures_fini(struct ext_figures *f);
/* times refusals for resource res (l bytes; a name that is not [a-z0-9._-] counts as "other"). */
void ext_count_refusal(struct ext_figures *f, const char *res, size_t l, unsigned long times);
/* times refusals for each resource an unsafe verdict's reason names at its top level ("RES (...), RES (...)"). */
void ext_count_refusals(struct ext_figures *f, const char *why, unsigned long times);

#endif
