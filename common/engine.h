/* engine.h - the ramp engine: runs an SoI through a schedule on its threads, paced, and self-metered.
 *
 * The engine owns worker threads (one per env->cpus entry, bound through hwloc), parks them between steps,
 * paces them (token bucket for RATE, duty cycle for DUTY, rate cap for FOOTPRINT) and watches the stop flag.
 * Every step yields a result with the requested intensity and the achieved pressure in real units and in % of
 * the SoI's measured capacity.
 */
#ifndef IB_ENGINE_H
#define IB_ENGINE_H
#include "ib_atomic.h"
#include <stdint.h>

#include "pressure.h"
#include "ramp.h"
#include "soi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct step_result {
    unsigned index;
    double requested;     /* % */
    double target;        /* requested pressure in soi->unit */
    double achieved;      /* achieved pressure in soi->unit */
    double achieved_pct;  /* achieved / capacity * 100 */
    double secondary;     /* step units per second */
    double active_frac;   /* fraction of wall time the workers were inside step() */
    double cpu_frac;      /* fraction of wall time the workers were on their CPUs (their own CPU time: what top or
                           * schedstat show, pacing sleeps' wake-ups included); a duty SoI's pacer holds it at x */
    double load_ns;       /* chase SoIs: ns per dependent load during the step (0: not a chase SoI) */
    uint64_t wall_ns;
    uint64_t settle_ns;   /* time set_intensity took (growing a footprint) */
    uint64_t t0_ns, t1_ns; /* CLOCK_MONOTONIC when the workers were released and told to park: what ran beside the
                            * SoI between the two ran beside this step */
    uint64_t cpu_ns;      /* the workers' own CPU time during the step (CLOCK_THREAD_CPUTIME_ID), summed */
    double wake_ns;       /* duty SoIs: the CPU time a pacing sleep and wake-up cost, mean over the step's (0: none) */
    uint64_t period_ns;   /* duty SoIs: the duty quantum at the step's end (the largest over workers; 0: not paced) */
    /* Did the workers get the CPU they asked for? The kernel's count, independent of the self-meter (pressure.h):
     * sched is the workers' own run-queue accounting over the step (read from their schedstat while they were
     * parked, at release and after the park: no other thread of the process is in it), wait_pct its wait share
     * (NAN: not measured, or never runnable); machine is PSI and steal over the same interval, for context. */
    struct ib_sched sched;
    double wait_pct;
    struct ib_pressure machine;
};

struct engine_cb {
    void (*on_step)(void *arg, const struct step_result *r, unsigned nsteps);
    void *arg;
};

/* Runs s through sched. results must hold sched->n entries; *ndone gets the number of completed steps.
 * Returns 0, -EINTR when *stop was raised (completed steps are valid), or -errno with why filled. */
int engine_run(struct soi *s, const struct ramp_sched *sched, const atomic_int *stop, const struct engine_cb *cb,
               struct step_result *results, unsigned *ndone, char *why, size_t len);

/* ---- the engine in the background ------------------------------------------------------------------------------
 * An SoI held at an intensity for as long as the caller wants: no schedule, no length limit. A control thread runs
 * metering steps of opts.step_ns back to back at the current intensity; set_intensity is called only when the
 * intensity changes. A window (engine_mark .. engine_read) ends the running step at both ends, so its figures cover
 * exactly the window: the interference is on for the whole of it (but for the sub-millisecond parks at step
 * boundaries) and its achieved pressure is over all of it, however long. */
struct engine_bg;

struct engine_bg_opts {
    uint64_t step_ns;  /* one metering step (0: 200 ms) */
    int unthrottled;   /* FOOTPRINT SoIs: ignore soi->rate_cap (caused: a rate-capped SoI's work rate must be free to
                        * fall) */
};

/* What the SoI did over a window. Rates are over the window's whole wall time. */
struct engine_window {
    double intensity;     /* % in force (the last engine_set) */
    uint64_t t0_ns, t1_ns; /* CLOCK_MONOTONIC: the window's ends */
    uint64_t wall_ns;     /* t1 - t0: its steps and the sub-millisecond parks between them */
    uint64_t units;       /* step units of every worker over the window */
    uint64_t cpu_ns;      /* the workers' own CPU time over the window, summed */
    unsigned steps;       /* metering steps that make it up (whole and cut ones) */
    double achieved_pct;  /* wall-time-weighted mean of the steps' achieved % (NAN: no step) */
    double achieved;      /* the same in soi->unit */
    double rate;          /* units per wall second */
    double rate_cpu;      /* units per second of the workers' own CPU time (NAN when cpu_ns is 0) */
    double cpu_share;     /* cpu_ns / (wall_ns x threads): the share of their CPUs the workers got */
    struct ib_sched sched; /* the workers' run-queue accounting over the window's steps, summed (step_result) */
    double wait_pct;       /* its wait share, % (NAN: not measured) */
    struct ib_pressure machine; /* PSI and steal over the window's steps */
};

/* Start s's workers at intensity x in the background; returns once x is in force (the footprint grown). 0, -EINTR,
 * or -errno with why. Release with engine_stop on every path. */
int engine_start(struct soi *s, double x, const struct engine_bg_opts *opts, const atomic_int *stop,
                 struct engine_bg **out, char *why, size_t len);
/* Change the intensity: the running step ends, set_intensity(x) runs with the workers parked (not when x is the
 * intensity in force), and they resume at x before this returns; a new window begins. 0, -EINTR, or -errno with why
 * (the SoI failed). */
int engine_set(struct engine_bg *e, double x, char *why, size_t len);
/* Run the SoI as a square wave from now on: x (0 < x <= 100) for on_ns, then 0 (the workers parked, set_intensity(0):
 * a footprint released) for off_ns, repeating, until the next engine_set or engine_wave. Each phase lasts its length
 * from when its level is in force (set_intensity runs at every flip; a slow one stretches the period), and ends the
 * metering step it ends in. Returns once x is in force, the on phase begun; windows go on across phases (a window's
 * intensity is the level in force at its end, its achieved the mean over both). 0, -EINTR, -EINVAL (x, or a phase
 * of 0 ns), or -errno with why. */
int engine_wave(struct engine_bg *e, double x, uint64_t on_ns, uint64_t off_ns, char *why, size_t len);
/* Begin a window now. 0, -EINTR, or -errno with why. */
int engine_mark(struct engine_bg *e, char *why, size_t len);
/* End the window begun by the last engine_mark (or engine_start / engine_set when none since) now, and report it;
 * a new window begins at once. 0, -EINTR, or -errno with why. */
int engine_read(struct engine_bg *e, struct engine_window *w, char *why, size_t len);
/* 0 while it runs; -EINTR after *stop rose; -errno with why once the SoI failed. */
int engine_status(struct engine_bg *e, char *why, size_t len);
/* Stop the workers and free everything (NULL: nothing), also after a failure or -EINTR. 0, or the SoI's error with
 * why (a raised stop flag is not one). */
int engine_stop(struct engine_bg *e, char *why, size_t len);

/* Linearity of achieved % vs requested %: least squares fit, R^2, and the worst distance (points of full scale)
 * of any step from the ideal line achieved == requested and from the fitted line. */
struct linfit {
    double slope, intercept, r2;
    double worst_dev_ideal;   /* max |achieved_pct - requested| */
    double worst_dev_fit;     /* max |achieved_pct - fit(requested)| */
    unsigned n;
};
int linfit_compute(const double *x, const double *y, unsigned n, struct linfit *out);

#ifdef __cplusplus
}
#endif
#endif
