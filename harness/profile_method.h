/* profile_method.h - the profiling method as library code: the solo baseline, the tolerated search and the caused
 * measurement, and the whole profile made of them (prof_profile: its order, its timeouts and stops), taking every
 * measurement through struct prof_meter and every SoI through struct prof_sois, so a test can pass a fake target and
 * fake SoIs (with seeded noise and a fake clock) and run the real search in milliseconds. harness/profile.c is the
 * adapter to real targets and SoIs.
 *
 * Tolerated (iBench section V.A): 25, 50, 75, 100 %, then bisection inside the first bracket that broke QoS
 * (bisect_steps steps: 6.25 points with 2). Each point: `samples` solo samples with the SoI at 0 % (the local
 * baseline), then samples with the SoI held at x for the whole point; relative = median beside against the local
 * solo median, with a standard error from the baseline's noise (prof_point_verdict). Meeting and breaking are judged
 * alike: a point meets QoS when its relative lies 2 standard errors above qos, breaks it 2 below, and is otherwise
 * uncertain and takes up to PROF_CONFIRM_ROUNDS more rounds (solo, then beside), decided on all its samples. The ramp
 * stops, and bisection starts, at the first point that did not meet QoS (broke it, or stayed uncertain).
 * Sequential stop: once 2 samples beside the SoI are in, and the noise of one sample is known (from the baseline),
 * a point stops early when every relative so far lies beyond qos by more than 3 noise, on the same side; and the
 * solo samples stop at 2 when those two agree within the noise of one sample.
 * lo, the safe end decisions read = the last intensity that met QoS beyond its noise (0 when nothing did);
 * hi = the lowest intensity above it that broke QoS beyond its noise (100 when none did: an uncertain point may lie
 * either side of the truth); tolerated = the point estimate, where the points' relatives cross qos, in [lo, hi]
 * (100 when every point met QoS). docs/profile.md has the sweep over curve shapes and noise that justifies it.
 * Depth (floor > 0): the curve is then followed to the cliff, so that no prediction rests on extending a point that
 * met QoS: 100 % is measured when the search did not reach it; when it reads below `floor` (0.5), where the curve
 * first falls below the floor is bisected floor_steps (2) times between the highest point at or above the floor and
 * the lowest point above it below the floor, and on while they lie more than PROF_FLOOR_WIDTH (10) points of
 * intensity apart (at most 2 steps more from a bracket of 25-100 %), and read by linear interpolation between them.
 * Why 10: a co-runner that saturates a device spreads its 100 ms windows over about 90-120 % of the capacity, so a
 * cliff read across 19 points put windows at 90 % on a slope the victim need not have (docs/profile.md, "Depth").
 * Each is a point as above (appended to the curve); the bracket and the point estimate are then taken from every
 * point.
 * Flat first (flat_first, with the depth on; profile 1.8): 100 % is then measured in any case, so it is measured
 * before 25 %, and a point there that meets QoS beyond its noise ends the search (the curve is flat to 100 %, under
 * the monotone curve the bisection assumes already): one point where the ramp took four. Otherwise the ramp and the
 * bisection go on as above with that point in place of a second one at 100 %, and the depth has the floor to
 * bisect only: never more points than without it. A sample past its timeout there that bounds nothing ends that
 * point only (as in the depth); the ramp then stops where it would measure 100 % again, with that timeout.
 * Bursts (pp->nburst_on > 0 and the meter has soi_wave; prof_bursts): when the SoI's point at 100 % broke QoS beyond
 * its noise (whatever the SoI), the victim is measured beside the SoI as a square wave, 100 % for on_s then idle for
 * off_s = on_s, for each on_s of pp->burst_on_s (0.25, 1, 4 s): a point's local solo baseline (as above: median sm of
 * `samples` solo samples, 2 when they agree), then samples beside the wave, back to back from the start of its first
 * on phase, until at least `samples` samples AND 3 whole periods (P = on + off) have elapsed; never past
 * cap = max(3 P, PROF_BURST_CAP_S) (no sample starts after it: a long victim gets fewer samples). A sample that runs
 * out of time ends the point as a bound (timed_out, relative <=; its value is the point's timeout bound) where
 * wall_bound; otherwise the bursts end there (PROF_TO_BESIDE). relative = the work done over the time it took
 * against solo: sm / mean(beside) for a lower-is-better metric (equal-work samples: run times), mean(beside) / sm
 * for a higher-is-better one (equal-time samples: rates). relative_se = relative x sqrt((1.2533 noise)^2 / ns +
 * (se_b / mean)^2): the solo median's error from the baseline's noise (ns solo samples), and se_b the error of the
 * beside mean by batch means, the sd of the means of blocks of whole periods (a block closes at the first sample that
 * ends past a period boundary) over sqrt(blocks): the phase-to-phase spread inside a period is not error; with
 * fewer than 2 whole blocks, sd(samples) / sqrt(k), and the noise when k < 2. on_relative = clamp((relative -
 * off/P) / (on/P), 0, 1): the speed while on that explains the mean, idle phases counted unharmed. Sorted by on_s.
 *
 * Caused: the SoI held at the reference intensity, unthrottled, its windows alternating alone (the target's work
 * paused) and beside (the work running): A0 B1 A1 B2 A2 ... Per round i, caused_i = 100 x (1 - B_i / mean(A_i-1,
 * A_i)) on the SoI's work per second of its own CPU time, so CPU time the target takes from the SoI's CPUs is not
 * read as resource pressure (it is reported apart, as cpu_lost_pct, from the same rounds on the CPU share). Caused
 * is the median over rounds (raw: it may be negative), with a standard error (below); at least min_rounds rounds,
 * more while the standard error predicted from the alone windows' own spread is above se_target, within the budget.
 * distinguishable: |caused| > 2 se.
 * The standard error of the median of n rounds: 1.2533 x sd / sqrt(n) (a median's efficiency), times
 * t(0.975, n-1) / 1.96 (few rounds: the sd itself is uncertain), times sqrt(1 + (n-1)/(3n)) (neighbouring rounds
 * share an alone window: correlation 1/6 when alone and beside windows are equally noisy). The rounds continue on
 * the alone windows' spread, not on the rounds' own, so that stopping does not select an underestimated error. */
#ifndef IB_PROFILE_METHOD_H
#define IB_PROFILE_METHOD_H
#include <stddef.h>
#include <stdint.h>

#include "ib_atomic.h"
#include "pressure.h"
#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PROF_MAX_POINTS 16
#define PROF_MAX_SAMPLES 64
#define PROF_FLOOR_WIDTH 10.0 /* depth: points of intensity the floor's bracket is narrowed to (above) */
#define PROF_MAX_ROUNDS 64
#define PROF_CONFIRM_ROUNDS 2 /* tolerated: rounds a point whose verdict is uncertain may add */
#define PROF_CONFIDENCE_Z 2.0 /* tolerated: a point meets (breaks) QoS when its relative lies this many standard
                               * errors above (below) it; one-sided, 2.3 % each way with a known noise */
#define PROF_MIN_ROUNDS 3 /* caused: fewer rounds give no standard error (--caused-rounds refuses them) */

/* What the SoI did over a window (engine_window, reduced). */
struct prof_window {
    double achieved_pct; /* NAN: no figure */
    double rate;         /* work per wall second */
    double rate_cpu;     /* work per second of the SoI's own CPU time */
    double cpu_share;    /* the share of its CPUs the SoI got */
};

/* Every measurement the method takes. Each returns 0 or -errno with why (-EINTR: stopped). */
struct prof_meter {
    void *ctx;
    /* one sample of the target's metric (a batch run, a load run, a metric command) */
    int (*sample)(void *ctx, double *value, char *why, size_t len);
    /* hold the SoI at x % from now on (0: idle), unthrottled or not; returns once x is in force */
    int (*soi_hold)(void *ctx, double x, int unthrottled, char *why, size_t len);
    /* begin a window of the SoI's figures / end it and report it */
    int (*soi_mark)(void *ctx, char *why, size_t len);
    int (*soi_read)(void *ctx, struct prof_window *w, char *why, size_t len);
    /* the target's work in the background, for caused: on (started the first time, else resumed) or off
     * (paused); the last call is off. A work that failed is reported by the next call. */
    int (*work)(void *ctx, int on, char *why, size_t len);
    /* wait (the real meter sleeps and keeps the work going; a fake advances its clock) */
    int (*wait_ms)(void *ctx, unsigned ms, char *why, size_t len);
    uint64_t (*now_ns)(void *ctx);
    /* optional: the target's own occupancy of the SoI's resource, % of the SoI's capacity (footprint SoIs whose
     * resource the OS shows, e.g. resident memory for mem-cap); -ENOTSUP when it has none */
    int (*occupancy)(void *ctx, double *pct, char *why, size_t len);
    /* optional: the SoI's caused reference (soi_ops.caused_ref, prof_caused_ref). ref_curve: the reference's speed
     * beside the SoI at levels[0..n-1] (levels[0] is 0), relative to it beside the SoI at 0 (1 = unharmed), the
     * target's work paused, with standard errors rel_se; ref_window: one window of the reference's work rate (work per wall second), the SoI
     * idle, the target's work as m->work last left it. */
    int (*ref_curve)(void *ctx, const double *levels, unsigned n, double *rel, double *rel_se, char *why,
                     size_t len);
    int (*ref_window)(void *ctx, double *rate, char *why, size_t len);
    /* optional: run the SoI as a square wave from now on, x % for on_s then idle (0 %, its footprint released) for
     * off_s, repeating, until the next soi_hold; returns once the first on phase began. NULL: bursts are not
     * measured (the profile says so, method.bursts_off) */
    int (*soi_wave)(void *ctx, double x, double on_s, double off_s, char *why, size_t len);
    /* optional progress lines */
    void (*progress)(void *ctx, const char *line);
    /* optional: the target's usage over time while its work runs alone, counted by the kernel (struct
     * profile_usage, 1.6), taken after the first baseline; a failure is written as missing ("usage") */
    int (*usage)(void *ctx, struct profile_usage *out, char *why, size_t len);
    /* optional: a snapshot of the machine's pressure (ib_pressure_read; a fake returns scripted ones) */
    int (*pressure)(void *ctx, struct ib_pressure_snap *s, char *why, size_t len);
};

struct prof_params {
    double qos;             /* relative performance that still meets QoS, (0, 1] */
    int higher_better;      /* the metric's direction */
    unsigned samples;       /* samples per side of a point, at most (1..PROF_MAX_SAMPLES) */
    double noise;           /* relative standard deviation of one solo sample (prof_noise); 0: unknown, no early stop */
    unsigned bisect_steps;  /* 2 */
    double caused_level;    /* % */
    unsigned caused_min_rounds, caused_max_rounds;
    double caused_se_target; /* points */
    double caused_budget_s; /* the rounds stop at the first round boundary past it (min_rounds always run) */
    unsigned caused_window_ms, settle_ms;
    int sequential;         /* 1: the early stop above */
    double timeout_s;       /* a sample's limit (the meter's sample returns -ETIMEDOUT past it); 0: none known */
    int wall_bound;         /* 1: a sample's relative performance is at most its wall time's (runtime, and the
                             * throughput or latency of a load of fixed work), so a timed-out sample is a bound */
    double floor;           /* depth: the relative the curve is followed down to (0.5); 0: no depth */
    unsigned floor_steps;   /* depth: bisection steps towards where the curve falls below floor (2); more while
                             * the bracket is wider than PROF_FLOOR_WIDTH */
    double burst_on_s[PROFILE_MAX_BURSTS]; /* bursts: the on-lengths, s (0.25, 1, 4); each in [0.05, 60] */
    unsigned nburst_on;     /* 0: no bursts */
    int bursts_buffered;    /* 1: bursts only on SoIs whose path buffers (prof_sois.buffered); 0: on every SoI */
    int flat_first;         /* 1: with the depth on, 100 % first; meeting QoS there ends the search (above) */
    int caused_counted;     /* 1: caused from the kernel's count where it saw the target leave the resource alone
                             * (prof_caused_counted), no rounds; 0: rounds everywhere */
};
/* The defaults: qos 0.95, 3 samples, 2 bisection steps, caused at 100 % with 3..12 rounds, se target 5 points,
 * budget 4 s of rounds (about 6), 300 ms windows, 40 ms settle, sequential, depth to a floor of 0.5 in 2 steps,
 * bursts of 0.25, 1 and 4 s, caused counted where the kernel saw nothing. */
void prof_params_default(struct prof_params *pp);

/* Caused counted, not measured (profile 1.8; docs/profile.md, "Caused counted"): the resource of the profile's
 * usage (p->usage) that SoI e presses in its capacity's unit (profile_usage_soi), over at least
 * PROF_COUNTED_MIN_WINDOWS windows and at least one solo sample's wall time (the baseline before's, per sample: a
 * whole run of the work, start-up included, so a batch job that writes only at its end is not read as one that never
 * writes), when either
 *  - the resource has a noise floor (bytes read, written, of the network) and every window lay at or under it: the
 *    kernel counts every byte the target's processes move, so rounds would only look for an effect of nothing, at
 *    their cost (4 s and more for each SoI); not distinguishable; or
 *  - it is a footprint (no floor: resident memory against mem-cap, LLC occupancy against llc-cap): what the target
 *    holds is the capacity it takes from a neighbour, which the rounds (the SoI's work rate alone and beside) do not
 *    read; distinguishable when beyond 2 se of 0, and occupancy_pct the same figure.
 * Then c (its figures preset NAN) is the usage's mean as % of e's capacity, se the windows' standard error of it
 * (sd / sqrt(n)), basis "counted", counted_* its resource, no rounds. 1 filled, 0 not applicable (c untouched),
 * -ENOMEM. */
#define PROF_COUNTED_MIN_WINDOWS 10
int prof_caused_counted(const struct profile *p, const struct profile_soi *e, struct profile_caused *c);

/* What a counted caused figure (c->counted_res set) rests on, in one phrase for the progress line and `ibench show`:
 * "its write under 1.00 MiB/s in all 30 windows (mean 12.0 KiB/s)", or for a footprint (no floor) "its memory,
 * 403 MiB on the mean over 30 windows". Returns buf. */
const char *prof_counted_text(const struct profile_caused *c, char *buf, size_t len);

/* Whether the search measures 100 % first (flat first): asked, and with the depth on (a floor). */
static inline int prof_flat_first(const struct prof_params *pp) { return pp->flat_first && pp->floor > 0; }

/* n solo samples with the SoI idle (the caller holds none): values in v[0..n-1], their median. On an error (a
 * sample that timed out among them) *got says how many were taken, and *median is theirs (NAN with none). */
int prof_baseline(const struct prof_params *pp, struct prof_meter *m, unsigned n, double *v, unsigned *got,
                  double *median, char *why, size_t len);
/* Relative standard deviation of one sample from a set of solo samples: the larger of 1.4826 MAD / median and
 * sd / mean (either can come out far too low from a handful; a low figure would stop points early on noise); 0 with
 * fewer than 3. */
double prof_noise(const double *v, unsigned n);

/* Where a sample ran out of time (prof_tol_result.timeout). */
enum prof_timeout {
    PROF_TO_NONE = 0,
    PROF_TO_BESIDE, /* beside the SoI, and no bound below QoS follows from it: this SoI cannot be measured */
    PROF_TO_SOLO,   /* a solo sample (the SoI stopped): the target or the machine, not the SoI; nothing after it is
                     * comparable, the profile stops */
};

struct prof_tol_result {
    double tolerated, lo, hi;  /* hi = 100 when nothing broke QoS */
    struct profile_point curve[PROF_MAX_POINTS];
    unsigned ncurve;
    enum prof_timeout timeout; /* with -ETIMEDOUT: which; the curve holds the points measured before it */
    double timeout_at;         /* with -ETIMEDOUT or another error (-EINTR): the intensity being measured */
    unsigned ntimed_out;       /* points recorded as bounds (timed_out) */
    /* depth (pp->floor > 0 and the search ended without an error): */
    int have_depth;
    double depth_rel, depth_se; /* the relative at 100 % and its standard error */
    double below_floor_at;     /* where the curve first falls below pp->floor, %; NAN: not up to 100 % */
    unsigned depth_points;     /* points the depth added (0: the search had measured what it needed) */
    double depth_s;            /* the seconds they took */
};
/* A point's verdict: +1 meets QoS, -1 breaks it, 0 uncertain (within PROF_CONFIDENCE_Z standard errors of it). */
int prof_point_verdict(const struct prof_params *pp, double rel, double se);
/* The tolerated search with the SoI the meter holds (the SoI is left idle at 0 %; a stop that fails only that last
 * hold, -EINTR after every point was measured, does not undo the search). base: the profile's solo median,
 * used when a point's local solo median is not a positive number.
 * Timeouts (docs/profile.md, "A sample that times out"): a sample beside the SoI that does not finish within
 * pp->timeout_s ends its point, which is recorded as a bound, timed_out: relative <= (the median wall time of the
 * point's solo samples) / timeout, a QoS break by at least that much, when pp->wall_bound and that bound is below
 * qos: a decided break (a bound is no noise to confirm), and the search goes on. Otherwise the search stops with -ETIMEDOUT and
 * out->timeout PROF_TO_BESIDE; a solo sample that times out stops it with PROF_TO_SOLO. */
int prof_tolerated(const struct prof_params *pp, struct prof_meter *m, double base, struct prof_tol_result *out,
                   char *why, size_t len);

/* Bursts (above, "Bursts"). */
#define PROF_BURST_LEVEL 100.0
#define PROF_BURST_PERIODS 3      /* whole periods beside the wave, at least */
#define PROF_BURST_CAP_S 40.0     /* beside the wave: no sample starts past max(this, 3 periods) */
#define PROF_BURST_MIN_S 0.05     /* an on-length's range, s */
#define PROF_BURST_MAX_S 60.0
struct prof_burst_result {
    struct profile_burst b[PROFILE_MAX_BURSTS]; /* by on_s ascending */
    unsigned n;
    enum prof_timeout timeout; /* with -ETIMEDOUT: which (PROF_TO_BESIDE: a sample beside the wave past its timeout
                                * gave no bound; PROF_TO_SOLO: a solo sample, the profile stops) */
    double at_on_s;            /* with an error: the on-length being measured; NAN otherwise */
    double seconds;            /* what the bursts took */
};
/* Are bursts due after this search: on, a meter with soi_wave, and a point at 100 % that broke QoS beyond its
 * noise (a bound counts)? */
int prof_bursts_due(const struct prof_params *pp, const struct prof_meter *m, const struct prof_tol_result *t);
/* The bursts of the SoI the meter holds, after its tolerated search t (nothing when not due: out->n 0); the SoI is
 * left idle. base as prof_tolerated's. 0, -ETIMEDOUT (out->timeout says which; out->b holds the bursts measured
 * before), -EINTR or -errno with why. */
int prof_bursts(const struct prof_params *pp, struct prof_meter *m, double base, const struct prof_tol_result *t,
                struct prof_burst_result *out, char *why, size_t len);

/* Caused at pp->caused_level (the SoI left idle as prof_tolerated leaves it); fills out's measured members (value, se, distinguishable, alone, beside,
 * cpu_lost_pct/se, unthrottled, rounds (malloc'd), occupancy_pct, basis "cpu-second"); the caller sets intensity,
 * unit and occupancy_what. value NAN with reason when the SoI gave no work rate to compare. */
int prof_caused(const struct prof_params *pp, struct prof_meter *m, struct profile_caused *out, char *why,
                size_t len);

/* Caused through a reference (soi_ops.caused_ref): for an SoI whose own rate does not show the pressure it stands for.
 * 1. The reference's calibration: its speed beside the SoI at PROF_REF_LEVELS (m->ref_curve), made non-increasing
 *    (a running minimum: more of the SoI never helps). When the SoI at 100 % slows it by less than PROF_REF_MIN_EFFECT
 *    the reference gives no scale: value NAN with the reason.
 * 2. Rounds as prof_caused's, the SoI idle: the reference's rate alone (the target's work paused) and beside the
 *    working target, A0 B1 A1 ...; per round rel_i = B_i / mean(A_i-1, A_i).
 * 3. Decided in the reference's own terms: distinguishable when 1 - mean(rel) > 2 se (the mean's, with prof_rounds_se's
 *    small-sample and shared-window factors); the mean, not the median: a program beside the target lives through
 *    its bursts (a buffered writer's writeback). A reference faster beside the target counts 0. value = the mean
 *    rel read on the calibration as the
 *    SoI intensity with the same effect (prof_ref_equiv), clamped to 0-100; se = half the width of the interval of
 *    one se of rel around the median read the same way, combined with the calibration's own se at that point.
 *    rounds[] hold each round read alone (clamped), alone/beside the reference's median rates; basis "reference",
 *    reference_* hold the probe's calibration.
 * The rounds stop as prof_caused's do (min rounds, se target on the alone windows' spread, budget). */
#define PROF_REF_NLEVELS 5
#define PROF_REF_MIN_EFFECT 0.05
extern const double PROF_REF_LEVELS[PROF_REF_NLEVELS]; /* 0, 25, 50, 75, 100 */
int prof_caused_ref(const struct prof_params *pp, struct prof_meter *m, const char *probe, struct profile_caused *out,
                    char *why, size_t len);
/* The intensity at which a non-increasing calibration (levels[i], rel[i]), rel[0] = 1 at levels[0] = 0, reaches rel:
 * linear between points, the lowest such intensity on a flat stretch; above 1 or below rel[n-1] linear beyond the end
 * segments (a round faster than alone reads negative, as a raw caused may). NAN when the calibration is flat. */
double prof_ref_equiv(const double *levels, const double *rel, unsigned n, double r);

/* The standard error above for n per-round values (their median med); 0 when n < 2. */
double prof_rounds_se(const double *v, unsigned n);

/* The machine's pressure over a phase (baseline, a tolerated search, a caused measurement): a snapshot at its
 * begin and one at its end through m->pressure. Without a source (no callback, or it failed) every share is NAN. */
struct prof_phase_mark {
    struct ib_pressure_snap a;
    int ok;
};
void prof_phase_begin(struct prof_meter *m, struct prof_phase_mark *k);
void prof_phase_end(struct prof_meter *m, const struct prof_phase_mark *k, struct ib_pressure *out);
/* Its figures as the profile keeps them (phase and soi left NULL). */
void prof_phase_figures(const struct ib_pressure *pr, struct profile_phase *out);

/* ---- a whole profile ---------------------------------------------------------------------------------------------
 * The SoIs of a profile as its adapter has them (harness/profile.c: real SoIs through the background engine; a test:
 * fakes). open and close bracket each SoI's measurement: close is called after every open, whatever it returned. */
struct prof_sois {
    void *ctx;
    unsigned n;                                  /* the SoIs asked for, in measuring order */
    const char *(*name)(void *ctx, unsigned i);
    const char *(*resource)(void *ctx, unsigned i);
    /* make SoI i the meter's and describe it in e (cpus, capacity, reach): 1 measure it; 0 it cannot be measured
     * here (e->status PROFILE_SKIPPED and its reason set); -errno stops the profile (-EINTR: stopped) */
    int (*open)(void *ctx, unsigned i, struct profile_soi *e, char *why, size_t len);
    /* caused of the open SoI into c (intensity and NAN figures preset): its unit, then prof_caused or
     * prof_caused_ref, then what the adapter knows of it (unthrottled, occupancy_what) */
    int (*caused)(void *ctx, const struct prof_params *pp, struct prof_meter *m, struct profile_caused *c,
                  char *why, size_t len);
    /* release the SoI opened last, its threads and the target's work: 0 or -errno */
    int (*close)(void *ctx, char *why, size_t len);
    /* optional, for progress: the baseline before (stage 0), SoI i (1), the baseline after (2) begins */
    void (*stage)(void *ctx, int stage, unsigned i);
    /* optional: 1 when SoI i presses a path with a queue or a cache in front (storage, network), which can answer
     * a burst otherwise than sustained pressure; 0 when its pressure acts as it is applied (a memory or CPU
     * resource). With pp->bursts_buffered, bursts are measured only where it says 1 (NULL: everywhere). */
    int (*buffered)(void *ctx, unsigned i);
};

/* The reason an interrupted part carries in the profile (docs/profile.md, "Interrupted"). */
#define PROF_INTERRUPTED "interrupted (SIGINT/SIGTERM)"

/* A whole profile into p (profile_init'd and described by the caller; its before, after and sois are allocated here
 * and freed by profile_free): nb solo samples, each SoI's tolerated search and caused, nb solo samples again; the
 * noise from the baseline before (pp is copied), each phase's pressure, the drift, the confidence.
 * Timeouts (docs/profile.md, "A sample that times out"): written as what they are, p->complete 0 and p->missing saying
 * what and why; a solo sample that times out ends the measuring.
 * Stops (docs/profile.md, "Interrupted"): *stop raised (checked before each SoI and before the baseline after),
 * or a measurement that returns -EINTR, or any error while *stop is raised (a child the same Ctrl-C killed), ends the
 * measuring the way a solo timeout does: what was measured is kept -- the baseline samples that finished, the points
 * of a tolerated search that finished (its SoI incomplete, the point under way listed), a measured tolerated whose
 * caused was cut short (caused NAN, its reason, listed) -- every SoI not reached is listed incomplete "not measured",
 * the baseline after is listed missing, and p->interrupted is 1.
 * Returns 0 (complete, or incomplete after a timeout or a stop), -EINTR when stopped before the first sample finished
 * (nothing measured: nothing to write), or -errno with why (a failure of the target, an SoI's open refusing the
 * user's input, out of memory; p then holds a part to free, never to write). Every SoI opened is closed. */
int prof_profile(const struct prof_params *pp, struct prof_meter *m, struct prof_sois *s, unsigned nb,
                 const atomic_int *stop, struct profile *p, char *why, size_t len);

/* A malloc'd printf, NULL when out of memory: the reasons and texts a profile carries. */
char *prof_dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif
#endif
