/* soikit.h - building blocks the memory-hierarchy SoIs share, so each SoI file stays a small ops table.
 *
 *  - domain shares: how threads split a shared structure (two threads on one LLC each hold half of it);
 *  - fpset: per-thread random pointer chases whose footprint is set per step and whose coverage is metered;
 *  - strset: per-thread streaming buffers, advanced chunk by chunk;
 *  - NUMA-local memory for a worker's buffer.
 */
#ifndef IB_SOIKIT_H
#define IB_SOIKIT_H
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "soi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For each thread i, share[i] = 1 / (number of threads whose CPU is in the same `scope` object); *ndomains gets
 * the number of distinct objects. */
int kit_shares(const struct topo *t, enum topo_scope scope, const int *cpus, unsigned n, double *share,
               unsigned *ndomains);
/* Map `bytes` for a worker on `cpu`: hugepages advised or refused, memory bound to the CPU's NUMA node. */
void *kit_map_local(const struct topo *t, int cpu, size_t bytes, int hugepages);

struct fpthread {
    void *buf;
    size_t buf_bytes;
    size_t max_slots;
    size_t nslots;         /* current footprint in slots */
    struct chase ch;
    uint64_t steps_done;   /* chase steps (per chain) since the meter was reset */
    uint64_t chase_ns;     /* time spent chasing (sweep excluded) since the meter was reset */
    uint64_t quantum;      /* chase steps per step() call, adapted to ~100 us */
    void *sweep;           /* optional buffer streamed between quanta to push the chase out of inner caches */
    size_t sweep_bytes;
    size_t sweep_pos;      /* where the cyclic sweep goes on */
    uint64_t seed;
};

struct fpset {
    unsigned n;
    struct fpthread *t;
    size_t stride, skew;
    unsigned nchains;
};

struct strthread {
    void *buf;
    size_t ws;      /* working set */
    size_t chunk;   /* bytes per step() */
    size_t pos;
};

struct strset {
    unsigned n;
    struct strthread *t;
    enum stream_op op;
};

/* A rate SoI's units: s->unit and s->secondary_unit both `unit`.  Returns buf holding "; cached <old>" when a cached
 * figure old > 0 was there but the capacity was measured anew (the tail of capacity_src), else "". */
const char *kit_rate_units(struct soi *s, const char *unit, double old, char *buf, size_t len);

/* ---- ready-made callbacks ------------------------------------------------------------------------------
 * A footprint SoI over cache lines or pages: its prepare() sizes things and calls kit_fp_prepare(); the ops table
 * then uses kit_fp_set_intensity / kit_fp_step / kit_fp_measure / kit_fp_teardown directly. */
struct kit_fp {
    struct fpset set;
    double share[SOI_MAX_THREADS]; /* each thread's share of its domain */
    double slots_per_domain;       /* capacity of one domain (one LLC, one core's L2...) in slots */
    double slot_units;             /* units one slot counts for: 64 (bytes per line) or 1 (a page) */
    unsigned ndomains;
};
int kit_fp_prepare(struct soi *s, enum topo_scope scope, double slots_per_domain, double slot_units,
                   const char *unit, size_t stride, size_t skew, unsigned nchains, int hugepages, size_t sweep_bytes,
                   char *why, size_t len);
/* The cache-footprint SoIs' whole prepare: make sure the cache knees are measured, size the footprint from the
 * effective size of `level` (calib.h), chase it in `scope`, optionally sweeping an inner cache (`sweep_level`,
 * or -1 for none) so accesses land in `level`, and say where the capacity came from. */
int kit_cache_prepare(struct soi *s, int level, enum topo_scope scope, int sweep_level, unsigned nchains, char *why,
                      size_t len);
int kit_fp_set_intensity(struct soi *s, double x, char *why, size_t len);
int kit_fp_step(struct soi *s, unsigned tid, uint64_t *units);
int kit_fp_measure(struct soi *s, struct soi_meter *m);
void kit_fp_teardown(struct soi *s);

/* A streaming-bandwidth SoI: prepare() calls kit_stream_open(s, kind); ops use kit_stream_step/_teardown. */
int kit_stream_open(struct soi *s, const char *kind, char *why, size_t len);
int kit_stream_step(struct soi *s, unsigned tid, uint64_t *units);
void kit_stream_teardown(struct soi *s);

#ifdef __cplusplus
}
#endif
#endif
