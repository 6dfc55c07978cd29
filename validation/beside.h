/* beside.h - a probe running beside an SoI whose intensity alternates every few tens of milliseconds, in one
 * process, so that "with" and "without" are measured moments apart and the host's slow drift cancels.
 *
 * The SoI runs in the background engine (engine_start) on its own CPUs through levels[0], levels[1], ..., repeated
 * `cycles` times (at most BESIDE_MAX_CYCLES), step_ns each: per step engine_set, engine_mark, step_ns, engine_read.
 * A probe thread, bound to probe_cpu, takes back-to-back samples (each one short, ~1 ms) for the whole run.  A sample
 * counts for a step when it started at least settle_ns after the step's window began (its workers were released)
 * and ended before the window ended (they were told to park).  Per level: the median of its samples.  Noise: at the first
 * level (the solo one, 0 %, in every caller), the medians over even and odd cycles apart, their relative difference.
 * (At the other levels that difference is not noise: interference itself can be bimodal, e.g. a probe's LLC data
 * evicted in some cycles and not in others.) Per level also the paired ratio: per cycle, the level's median over the
 * first level's median of that same cycle; its median over the cycles and its standard error, which is the
 * uncertainty the callers' margins use (it includes the host's moves between steps, which even/odd misses). */
#ifndef IB_BESIDE_H
#define IB_BESIDE_H
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "ib_atomic.h"
#include "pressure.h"
#include "soi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BESIDE_MAX_LEVELS 16
#define BESIDE_MAX_CYCLES 256

/* A probe: open() prepares it (on the probe's thread, after binding), sample() measures once (figure per unit, e.g.
 * ns per load; larger = worse unless the probe says otherwise), close() releases it. */
struct beside_probe {
    const char *name;  /* "chase" */
    const char *unit;  /* "ns/load" */
    int (*open)(void *ctx);
    int (*sample)(void *ctx, double *value);
    void (*close)(void *ctx);
    void *ctx;
};

struct beside_level {
    double level;      /* % */
    double median;     /* probe figure, median over the samples in this level's steps; INFINITY when no sample
                        * finished inside any of them (the probe was starved; the first level must have samples) */
    double med_even, med_odd; /* medians over even / odd cycles */
    unsigned nsamples;
    double achieved_pct; /* SoI self-meter: median over its steps */
    double cpu_share;    /* the SoI's workers' own CPU time over wall time x threads, median over its steps (0-1) */
    double work_cpu_pct; /* achieved % per unit of that share (work per CPU second, % of capacity), median over its
                          * steps with CPU time (NAN: none) */
    /* Paired by cycle: in every cycle, this level's step median over the first level's step median of the same
     * cycle (moments apart, so slow drift cancels); ratio is the median of those per-cycle ratios and ratio_se
     * their standard error (sample standard deviation / sqrt(cycles); 0 with fewer than 2 cycles). */
    double ratio, ratio_se;
    double ratio_rse;    /* the ratio's robust standard error, from the median absolute deviation of the per-cycle
                          * ratios (one stalled cycle does not swamp it); 0 with fewer than 2 cycles */
    unsigned ncycles;    /* cycles that gave a ratio */
    /* Did the SoI get its CPU in this level's steps? Its workers' run-queue accounting summed over them (engine.h),
     * its wait share (% of their runnable time; NAN: not measured) and the worst single step's */
    struct ib_sched sched;
    double wait_pct, wait_max_pct;
    double cycle_ratio[BESIDE_MAX_CYCLES]; /* the per-cycle ratios, in cycle order (NAN: that cycle gave none) */
};

struct beside_result {
    unsigned nlevels;
    struct beside_level lv[BESIDE_MAX_LEVELS];
    double noise;      /* at the first (solo) level: |med_even - med_odd| / median */
    unsigned nsteps;   /* steps (windows) completed */
    struct ib_pressure machine; /* PSI and steal over the completed steps */
};

/* s: an opened SoI (soi_open); probe_cpu: where the probe thread runs (a CPU of this machine). Returns 0, -EINTR
 * when *stop rose, or -errno with why filled. */
int beside_run(struct soi *s, const double *levels, unsigned nlevels, unsigned cycles, uint64_t step_ns,
               uint64_t settle_ns, int probe_cpu, struct beside_probe *probe, const atomic_int *stop,
               struct beside_result *out, char *why, size_t len);

/* The chase probe for beside_run: dependent loads over a random cycle of `bytes`, ns per load per unit of the
 * probe thread's CPU time, `loads` per sample. ctx must stay valid through beside_run. */
struct probe_chase_ctx {
    uint64_t bytes, loads;
    void *buf;
    void *cursor;
};
void beside_chase_probe(struct beside_probe *p, struct probe_chase_ctx *ctx, uint64_t bytes);

#ifdef __cplusplus
}
#endif
#endif
