/* probes.h - independent victim/reference kernels that check the SoIs from outside. */
#ifndef IB_PROBES_H
#define IB_PROBES_H
#include <stdint.h>

#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* STREAM triad (a = b + s*c, 24 bytes counted per element) on `cpu`, with three arrays of array_bytes each
 * (0: 4x the claimed LLC, at least 32 MiB each), `reps` timed passes. Its own loop, compiled here, sharing no code
 * with the SoIs. *best gets the best pass (STREAM's convention), *median the median pass (either may be NULL). */
int probe_triad(const struct topo *t, int cpu, uint64_t array_bytes, unsigned reps, double *best, double *median);

#ifdef __cplusplus
}
#endif
#endif
