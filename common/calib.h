/* calib.h - measured capacities, next to what hwloc/cpuid claim, cached per machine.
 *
 * A pointer-chase latency sweep finds where each cache level really ends (the knee), because a VM's effective LLC
 * is often far smaller than cpuid says.  Streaming bandwidth is measured per level (L2, LLC, DRAM) with the same
 * kernel and working-set rule the bandwidth SoIs use, per set of CPUs.  Results live in a JSON file keyed by a
 * hardware fingerprint under $IBENCH_CACHE_DIR, else $XDG_CACHE_HOME/ibench, else ~/.cache/ibench.
 *
 * The file is shared by every ibench process of the user: it is read under a shared lock and saved under an
 * exclusive one (flock on the sibling calib-<fingerprint>.lock), where what is on disk is re-read and merged with
 * what this process holds (the newer of each entry wins) before the atomic write, so concurrent processes never
 * lose each other's measurements.  Values read back are range-checked: an implausible one is dropped (and so
 * measured again), never trusted.  The directory must belong to the user and be writable by nobody else; otherwise
 * the cache is not used at all (calib.nocache says why) and everything is measured afresh.
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

/* 2: DRAM bandwidth with the triad kernel; 3: chunked as the SoIs stream; 4: full CPU lists and I/O-path kinds
 * (3 cut CPU lists to 63 and net targets to 40 characters, so one set could read another's entry: not read);
 * 5: cache sizes are the median knee of repeated, checked sweeps, with their spread and each sweep's summary.
 * Overridable at compile time so that a test can build this code at the next format and see the fingerprint hold
 * and the older file refused. */
#ifndef CALIB_FORMAT
#define CALIB_FORMAT 5
#endif
#define CALIB_MAX_SWEEP 160
#define CALIB_MAX_SWEEPS 8  /* sweeps per calibration, retries included */
#define CALIB_MIN_SWEEPS 3  /* consistent sweeps wanted before a median is trusted */
#define CALIB_MAX_BW 64     /* entries; when full, the oldest gives way */
#define CALIB_KIND_LEN 320  /* a kind names a whole net target (host name up to 253 characters) or a filesystem */
#define CALIB_CPUS_LEN 2048 /* hwloc list string: any range of CPUs, ~450 scattered ones; longer sets are not cached */

struct calib_point {
    uint64_t bytes;
    double ns;
};

enum calib_level { CALIB_L1 = 0, CALIB_L2, CALIB_LLC, CALIB_NLEVELS };

/* One latency sweep, summarised: its knees and plateaus, how long its thread waited for a CPU, and whether the
 * consistency checks kept it (reject[0] == 0) or why not. */
struct calib_sweep_sum {
    uint64_t knee[CALIB_NLEVELS];          /* 0: no knee found */
    double plateau_ns[CALIB_NLEVELS + 1];  /* L1, L2, LLC, DRAM; 0 where not found */
    double wait_pct;                       /* the sweeping thread's run-queue wait, % (NAN: unknown) */
    char reject[120];
};

/* What the sweeps of one calibration add up to (calib_judge). */
struct calib_verdict {
    uint64_t knee[CALIB_NLEVELS];          /* median of the kept sweeps' knees; 0 where none */
    uint64_t knee_lo[CALIB_NLEVELS], knee_hi[CALIB_NLEVELS]; /* their range */
    double spread[CALIB_NLEVELS];          /* (max - min) / median of the kept knees; 0 with one */
    double plateau_ns[CALIB_NLEVELS + 1];  /* medians over the kept sweeps */
    unsigned nkept;
    int agree;                             /* >= CALIB_MIN_SWEEPS kept and their LLC (else L2) knees within the bound */
};

struct calib_bw {
    char kind[CALIB_KIND_LEN]; /* "l2", "llc", "dram", "int", "dr254:0/128" (disk), "n127.0.0.1:5301/1024" (net) */
    char cpus[CALIB_CPUS_LEN]; /* the whole CPU set it was measured on, as hwloc's list: "0", "0-1", "0,2,5-9" */
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
    struct calib_point sweep[CALIB_MAX_SWEEP]; /* the sweep whose LLC knee is the median one */
    unsigned nsweep;
    double spread[CALIB_NLEVELS];       /* (max - min) / median of the kept sweeps' knees */
    uint64_t knee_lo[CALIB_NLEVELS], knee_hi[CALIB_NLEVELS];
    struct calib_sweep_sum sweeps[CALIB_MAX_SWEEPS]; /* every sweep of the calibration, rejected ones too */
    unsigned nsweeps;
    char caches_note[256];              /* "" when the sweeps were consistent; else what was done about it */
    struct calib_bw bw[CALIB_MAX_BW];
    unsigned nbw;
    int dirty;                  /* something was measured since open/save */
    int nocache;                /* the cache directory is unsafe: nothing was read, nothing will be saved */
    char nocache_why[1200];     /* why, one line (names the directory) */
};

const char *calib_level_name(enum calib_level l);

/* The machine's fingerprint, "<vendor>-<family>-<model>-<N>cpu-<hash>": the hash covers the CPU vendor, brand,
 * family/model/stepping, the kernel's view of the topology (packages, NUMA nodes, cores, PUs), hwloc's L1d, L2 and
 * LLC sizes and the memory total in GiB.  It names the machine and nothing else, no file format: profiles and
 * co-run records carry it, and one machine's must match across any format bump.  The cache file keeps its own
 * "format" field, checked apart from it (calib_open).  -ENAMETOOLONG when out is too short. */
int calib_fingerprint(const struct topo *t, const struct cpu_info *ci, const struct mlim *m, char *out,
                      size_t len);
/* Directory of the cache (created on save). */
const char *calib_dir(char *buf, size_t len);
/* path and its missing parents made, private (0700): the cache, and what is kept beside it, says what this machine
 * can do, nobody else's to rewrite. 0 or -errno. */
int calib_dir_make(const char *path);
/* Initialise c for fingerprint fp and load its cache file if present and both its "format" is CALIB_FORMAT and its
 * "fingerprint" is fp (absent, another format, another machine or garbage: empty, 0; measured again on need).
 * A cache directory owned by another user, or writable by group or others, is not read: c->nocache is set, with
 * the reason in c->nocache_why, and 0 is returned (the caller measures without a cache and says so). */
int calib_open(struct calib *c, const char *fp, char *why, size_t len);
/* Save: create the directory (0700) if absent, lock, merge the file's entries into c (the newer of each entry and
 * of the latency sweep win), write atomically, unlock.  -EPERM with c->nocache_why when the directory is unsafe. */
int calib_save(struct calib *c, char *why, size_t len);
/* Forget everything measured in memory (the file is untouched). */
void calib_reset(struct calib *c);
/* The cache key of a CPU set: hwloc's list string of the whole set ("0-3,8").  -ENAMETOOLONG when it does not fit
 * in len (such a set is measured but not cached: a key is never cut), -EINVAL for no CPUs or a negative one. */
int calib_cpus_key(const int *cpus, unsigned n, char *buf, size_t len);
/* Store e in c, replacing the entry of the same kind and CPU set (else a free slot, else the oldest); marks c
 * dirty.  -ENAMETOOLONG for an empty or unterminated kind or CPU list (not stored). */
int calib_bw_store(struct calib *c, const struct calib_bw *e);

typedef void (*calib_progress_fn)(void *arg, const char *what, double frac);

/* Latency sweeps on cpu, knees for L1, L2, LLC: one full sweep (16 KiB .. 4x the claimed LLC, at least 64 MiB),
 * then shorter ones up to 4x its LLC knee (they borrow its DRAM plateau), until CALIB_MIN_SWEEPS pass calib_judge's
 * checks and agree, or CALIB_MAX_SWEEPS were taken; then a chase just inside the median LLC knee must read LLC-like.
 * What fell short is said in c->caches_note (the kept sweeps' median is used; none kept: all sweeps' median).
 * The memory bandwidths (l2, llc, dram: their working sets derive from the knees) are forgotten; every other rate
 * (peak issue rates, interconnect, disk and net paths) does not depend on cache sizes and is kept. */
int calib_measure_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop,
                         calib_progress_fn progress, void *arg, char *why, size_t len);
/* Knee between the plateau just below `lo_bytes` (latencies in [lo_bytes/2, lo_bytes]) and the plateau at or
 * above `hi_bytes`: the size where latency crosses their geometric mean, interpolated in log-size.
 * Works on any recorded sweep. -ENOENT when there is no crossing. */
int calib_find_knee(const struct calib_point *pts, unsigned n, uint64_t lo_bytes, uint64_t hi_bytes,
                    uint64_t *knee, double *lo_ns, double *hi_ns);
/* The knees and plateaus of one sweep (points sorted by size) against the claimed sizes (0: level absent): L1 and
 * L2 between plateaus at half and twice their claim; the LLC between the plateau below min(3x the L2 claim, half the
 * LLC claim) and the DRAM plateau at 2-4x its claim.  wait_pct and reject are left alone. */
void calib_sweep_knees(const struct calib_point *pts, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                       struct calib_sweep_sum *s);
/* The consistency checks over n sweeps of one calibration, on their summaries alone.  A sweep is rejected (its
 * reject says why) when its thread waited for a CPU beyond IB_BUSY_WAIT_PCT; when an inner knee (L1, L2) lies
 * above 125 % of its claim (the next level bleeding in: the LLC read slow); when its LLC knee lies inside the window
 * its own LLC latency was read from, or that latency is over half the DRAM latency (DRAM-like); when it found no
 * LLC knee where others did; or when its LLC latency is over 125 % of the quietest kept sweep's (interference
 * only ever adds latency).  v gets the medians of the kept sweeps.  Returns the number kept. */
unsigned calib_judge(struct calib_sweep_sum *s, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                     struct calib_verdict *v);
/* What a calibration's sweeps give when sweeping stops: calib_judge's verdict in v, and in note what fell short
 * ("" when they were kept and agree): too few kept or too spread (their median is used); none kept (the median of
 * those consistent apart from waiting for a CPU, else of all).  s keeps calib_judge's verdict on each. */
void calib_settle(struct calib_sweep_sum *s, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                  struct calib_verdict *v, char *note, size_t len);
/* The bound on agreement: kept LLC knees whose (max - min) / median exceeds this disagree, and more are taken. */
#define CALIB_AGREE_SPREAD 0.30

/* The start-of-run check of a cached size: a chase just inside (80 %) and just outside (160 %) it: the band is as
 * wide as the host's effective LLC moves within seconds (docs/capacities.md), so a good size passes while one off
 * by 2x does not.  Inside must read
 * below the knee's threshold, the geometric mean of the level's latency and the next one's (LLC-like); outside
 * must read above it (DRAM-like, or the next level's).  Pure: 1 when the size holds, else 0 with the reason. */
#define CALIB_CHECK_IN 0.80
#define CALIB_CHECK_OUT 1.60
int calib_check_judge(double level_ns, double next_ns, double inside_ns, double outside_ns, char *why, size_t len);
struct calib_check {
    enum calib_level level;
    uint64_t size;            /* the cached effective size checked */
    double inside_ns, outside_ns;
    int held;                 /* 1: the size passed its check */
    int remeasured;           /* 0, or 1: it failed and the caches were measured again (c holds the new sizes) */
    uint64_t new_size;
    double cost_s;            /* wall time of the check itself, re-measuring excluded */
    char why[160];            /* why it failed */
};
/* Check c's cached LLC on cpu (a few tens of ms); when it fails, measure the caches again (calib_measure_caches).
 * -ENOENT when there is no cached measured LLC size to check (nothing done). */
int calib_recheck(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop, struct calib_check *r,
                  char *why, size_t len);

/* The effective size of a level: the measured knee, capped at hwloc's claim; the claim when no knee was found. */
uint64_t calib_effective(const struct calib *c, enum calib_level l);

/* Working set per thread used by the bandwidth SoIs and their calibration for kind "l2", "llc" or "dram". */
uint64_t calib_bw_ws(const struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     unsigned nthreads);
/* What a cached peak of this kind measures, the one place kinds are told apart by their spelling. */
enum calib_kind_class {
    CALIB_CLASS_OPS = 0, /* an issue or message rate: int, fp, simd-*, interconnect */
    CALIB_CLASS_MEMORY,  /* a memory bandwidth: l2, llc, dram */
    CALIB_CLASS_IO,      /* a disk ("dr254:0/1024/8": d, r|w|m, device, block KiB, depth) or net ("n<target>/KiB")
                          * bandwidth */
};
enum calib_kind_class calib_kind_class(const char *kind);
/* Its unit: "B/s" for memory and I/O, "msg/s" for interconnect, else "ops/s". */
const char *calib_kind_unit(const char *kind);
/* The kernel a kind is measured (and its SoI streams) with: TRIAD for "dram" (two read and one write stream press
 * DRAM harder than one read stream), READ for "l2"/"llc". */
enum stream_op calib_bw_op(const char *kind);
/* Bytes per streaming step for a kind, shared by the SoI and its calibration so both stream identically: sized for
 * steps well under a millisecond at a level's usual bandwidth (fine pacing slices) yet long enough that the per-step
 * cost stays small. */
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
