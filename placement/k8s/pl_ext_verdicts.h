/* pl_ext_verdicts.h - verdicts kept across requests: the same pod profile beside the same tenants on the same room
 * gets the same verdict (a Deployment's replicas, prioritize after filter...).  Keyed by the profiles' addresses,
 * valid while no cached profile has been freed since it was made (gen: ext_cache_freed), so an address that comes
 * back for another profile never meets an old verdict.  A changed tenant list or room is another key.  Bounded;
 * thread-safe (one mutex). */
#ifndef IB_PL_EXT_VERDICTS_H
#define IB_PL_EXT_VERDICTS_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "pl_sim.h"
#include "pl_verdict.h"

struct vcent;

struct pl_extender_stats;

struct ext_verdicts {
    pthread_mutex_t mu;
    struct vcent *vc; /* NULL: nothing kept (out of memory at start), nothing else lost */
    uint64_t *tag;    /* each entry's hash, apart: a set's four are one cache line */
    uint64_t clock;   /* +1 at each use: the least recently used entry of a set makes way */
    unsigned long hits, misses;
};

void ext_verdicts_init(struct ext_verdicts *v);
void ext_verdicts_fini(struct ext_verdicts *v);
/* The verdict kept for machine i of f taking application a (filter: in full; else terse), h the machine's hash (its
 * room and tenants), gen the cache's freed count now: true with *out, or false. */
bool ext_verdict_get(struct ext_verdicts *v, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                     uint64_t h, uint64_t gen, struct pl_verdict *out);
/* Keeps it. */
void ext_verdict_put(struct ext_verdicts *v, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                     uint64_t h, uint64_t gen, const struct pl_verdict *in);
/* verdict_hits and verdict_misses into s. */
void ext_verdicts_stats(struct ext_verdicts *v, struct pl_extender_stats *s);

#endif
