/* calib.h - measured capacities, next to what hwloc/cpuid claim, cached per machine.
 *
 * A pointer-chase latency sweep finds where each cache level really ends (the knee), because a VM's effective LLC
 * is often far smaller than cpuid says.  Streaming bandwidth is measured per level (L2, LLC, DRAM) with the same
 * kernel and working-set rule the bandwidth SoIs use, per set of CPUs.  Results live in a JSON file keyed by a
 * hardware fingerprint under $IBENCH_CACHE_DIR, else $XDG_CACHE_HOME/ibench, else ~/.cache/ibench.
 */
#ifndef IB_CALIB_H
#define IB_CALIB_H
#include "ib_atomic.h"
#include <stdint.h>

#include "cpuinfo.h"
#include "kernels.h"
#include "memlimit.h"
#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CALIB_FORMAT 3 /* 2: DRAM bandwidth with the triad kernel; 3: chunked as the SoIs stream */
#define CALIB_MAX_SWEEP 160
#define CALIB_MAX_BW 48

struct calib_point {
    uint64_t bytes;
    double ns;
};

enum calib_level { CALIB_L1 = 0, CALIB_L2, CALIB_LLC, CALIB_NLEVELS };

struct calib_bw {
    char kind[64];      /* "l2", "llc", "dram", "int", "dr254:0/128" (disk), "n127.0.0.1:5301" (net) */
    char cpus[64];      /* CPU list it was measured on, e.g. "0" or "0-1" */
    uint64_t ws_bytes;  /* working set per thread */
    double bps;         /* median bytes/s over all threads */
    double spread;      /* (max-min)/median of the repeats */
    int64_t when;       /* unix time */
};

struct calib {
    char fingerprint[96];
    char path[1024];            /* cache file */
    int have_caches;
    int sweep_cpu;
    int64_t caches_when;
    uint64_t claimed[CALIB_NLEVELS];   /* hwloc's sizes for the sweep's CPU (0 if absent) */
    uint64_t measured[CALIB_NLEVELS];  /* knees; 0 if not found */
    double plateau_ns[CALIB_NLEVELS + 1]; /* latency inside L1, L2, LLC and DRAM */
    struct calib_point sweep[CALIB_MAX_SWEEP];
    unsigned nsweep;
    struct calib_bw bw[CALIB_MAX_BW];
    unsigned nbw;
    int dirty;                  /* something was measured since open/save */
};

const char *calib_level_name(enum calib_level l);

/* Fingerprint: CPU model/family/model/stepping, PU count, cache sizes, memory total, calib format. */
int calib_fingerprint(const struct topo *t, const struct cpu_info *ci, const struct mlim *m, char *out,
                      size_t len);
/* Directory of the cache (created on save). */
const char *calib_dir(char *buf, size_t len);
/* Initialise c for fingerprint fp and load its cache file if present (absent or stale format: empty, 0). */
int calib_open(struct calib *c, const char *fp, char *why, size_t len);
/* Save atomically. */
int calib_save(const struct calib *c, char *why, size_t len);
/* Forget everything measured (for `ibench calibrate`). */
void calib_reset(struct calib *c);

typedef void (*calib_progress_fn)(void *arg, const char *what, double frac);

/* Latency sweep on cpu (16 KiB .. 4x the claimed LLC, at least 64 MiB), knees for L1, L2, LLC. */
int calib_measure_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop,
                         calib_progress_fn progress, void *arg, char *why, size_t len);
/* Knee between the plateau just below `lo_bytes` (latencies in [lo_bytes/2, lo_bytes]) and the plateau at or
 * above `hi_bytes`: the size where latency crosses their geometric mean, interpolated in log-size.
 * Works on any recorded sweep. -ENOENT when there is no crossing. */
int calib_find_knee(const struct calib_point *pts, unsigned n, uint64_t lo_bytes, uint64_t hi_bytes,
                    uint64_t *knee, double *lo_ns, double *hi_ns);
/* The effective size of a level: the measured knee, capped at hwloc's claim; the claim when no knee was found. */
uint64_t calib_effective(const struct calib *c, enum calib_level l);

/* Working set per thread used by the bandwidth SoIs and their calibration for kind "l2", "llc" or "dram". */
uint64_t calib_bw_ws(const struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     unsigned nthreads);
/* The kernel a kind is measured (and its SoI streams) with: TRIAD for "dram" (two read and one write stream press
 * DRAM harder than one read stream: ~31 vs ~26 GB/s on one core here), READ for "l2"/"llc". */
enum stream_op calib_bw_op(const char *kind);
/* Bytes per streaming step for a kind, shared by the SoI and its calibration so both stream identically: about
 * 50-100 us at this machine's rates (sub-millisecond pacing slices, small per-step cost). */
size_t calib_bw_chunk(const char *kind);
/* Cached bandwidth for kind on exactly these CPUs, or NULL. */
const struct calib_bw *calib_bw_find(const struct calib *c, const char *kind, const int *cpus, unsigned n);
/* Measure streaming-read bandwidth for kind on cpus (threads bound there, all streaming at once), store it. */
int calib_measure_bw(struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     const int *cpus, unsigned n, const atomic_int *stop, double *bps, char *why, size_t len);
/* find, else measure (and mark for saving). */
int calib_need_bw(struct calib *c, const struct topo *t, const struct mlim *m, const char *kind, const int *cpus,
                  unsigned n, const atomic_int *stop, double *bps, char *why, size_t len);
int calib_need_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop, char *why,
                      size_t len);

#ifdef __cplusplus
}
#endif
#endif
