/* probes.h - independent victim/reference kernels that check the SoIs from outside. */
#ifndef IB_PROBES_H
#define IB_PROBES_H
#include <stdint.h>

#include "memlimit.h"
#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* STREAM triad (a = b + s*c, 24 bytes counted per element) on `cpu`, with three arrays of array_bytes each
 * (0: 4x the claimed LLC, at least 32 MiB each), `reps` timed passes. Its own loop, compiled here, sharing no code
 * with the SoIs. *best gets the best pass (STREAM's convention), *median the median pass (either may be NULL). */
int probe_triad(const struct topo *t, int cpu, uint64_t array_bytes, unsigned reps, double *best, double *median);

/* Dependent loads over a random cyclic permutation of the cache lines of `bytes` (Sattolo), on `cpu`: ns per load
 * per unit of the probe thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), so time-sharing alone does not count.
 * reps timed walks of max(4 x lines, 200000) loads; median and best. */
int probe_chase(const struct topo *t, int cpu, uint64_t bytes, unsigned reps, double *median_ns, double *best_ns);
/* The chase's pieces: a mapping of `bytes` (ib_unmap it) holding one random cycle through its cache lines (NULL on
 * failure), and `loads` dependent loads from *cursor (advanced), in ns per load of the calling thread's CPU time. */
void *probe_chase_build(uint64_t bytes);
/* What the chase over `bytes` holds at its peak: the lines and their permutation (UINT64_MAX when that overflows). */
uint64_t probe_chase_footprint(uint64_t bytes);
/* Whether `probe` (triad: three arrays of `bytes`; chase) fits in what the machine can spare (mlim_check, m NULL:
 * the live system): 0, or -E2BIG with a one-line reason naming --bytes. */
int probe_check_bytes(const struct mlim *m, const char *probe, uint64_t bytes, char *why, size_t len);
double probe_chase_walk_ns(void **cursor, uint64_t loads);
/* Round trip of one cache line each way between cpu_a (initiator) and cpu_b (responder), both spinning:
 * reps windows of >= 20 ms, ns per round trip (median and best window). -ETIMEDOUT if the responder never answers. */
int probe_pingpong(const struct topo *t, int cpu_a, int cpu_b, unsigned reps, double *median_ns, double *best_ns);

#ifdef __cplusplus
}
#endif
#endif
