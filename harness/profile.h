/* profile.h - profiling a real target: how much interference of each kind it tolerates before its QoS breaks, and
 * how much it causes (iBench section V.A), as a struct profile (profile_fmt.h). The method is profile_method.h;
 * this is its adapter to real targets (a service left running, or a batch job run once per sample) and real SoIs.
 *
 * Each SoI runs on CPUs that share its resource with the target (never on the target's own CPUs), held through the
 * background engine (engine.h) for as long as a point or a caused window lasts; 0 % is the SoI's footprint released
 * and the SoI stopped (no thread of it left): solo is solo.
 * Caused: the target's work (its batch job or load generator) runs in its own process group, paused with SIGSTOP
 * for the alone windows and resumed with SIGCONT for the beside ones, and started again whenever a run finishes.
 * Baselines (solo samples) come before and after; their drift is reported and a profile whose baselines moved by
 * more than the QoS band is marked low confidence.
 * Reach: for an SoI whose sharing with the target rests on hwloc's word that a CPU set shares a cache or memory path
 * (vprobe_maps' `placed`), a validation probe first runs on the target's CPU beside the SoI alternating 0 / 100 %.
 * When it moves by less than half the QoS band (with twice its standard error), the SoI cannot reach the target
 * from where it runs -- on a VM the vCPUs may sit on different physical caches or sockets -- and the entry is
 * skipped with the figures: a tolerated of 100 would describe the placement, not the target. */
#ifndef IB_PROFILE_H
#define IB_PROFILE_H
#include <stddef.h>
#include <sys/types.h>

#include "ib_atomic.h"
#include "machine.h"
#include "metric.h"
#include "profile_fmt.h"
#include "soi.h"

#ifdef __cplusplus
extern "C" {
#endif


struct profile_opts {
    const char *name;
    const char *target_cmd; /* --target CMD */
    pid_t pid;              /* --pid PID (0: none) */
    const char *load_cmd;   /* --load CMD */
    struct metric metric;
    double qos;             /* relative performance that still meets QoS, (0, 1] */
    const char *sois;       /* comma list, or NULL for all */
    int tcpus[SOI_MAX_THREADS];
    unsigned ntcpus;
    unsigned samples;       /* samples per measured point (median) */
    unsigned baselines;     /* solo samples before and after */
    double caused_level;    /* reference intensity for caused */
    unsigned timeout_s;     /* per sample */
    unsigned warmup_ms;     /* after starting a service target */
    const char *dir;        /* disk SoIs' files */
    int no_reach_check;     /* --no-reach-check: ramp even an SoI whose probe shows it does not reach the target */
    unsigned caused_rounds; /* at least this many alone/beside rounds (0: the method's default, 3) */
    double caused_budget_s; /* rounds stop past this (0: the default) */
    int no_sequential;      /* every point takes all its samples */
    double floor;           /* depth: follow each curve down to this relative (0: the method's default, 0.5) */
    int no_depth;           /* no depth: the tolerated search only */
    int no_flat_first;      /* the ramp from 25 % even with the depth on (prof_params.flat_first 0) */
    double bursts[PROFILE_MAX_BURSTS]; /* bursts' on-lengths, s (nbursts 0: the method's default, 0.25, 1, 4) */
    unsigned nbursts;
    int no_bursts;          /* no bursts */
    int caused_rounds_always; /* rounds on every SoI: never caused counted (prof_params.caused_counted) */
    int bursts_all;         /* bursts on every SoI, not only those whose path buffers (storage, network) */
    double usage_s;         /* the target's usage over time, counted, for this many seconds (0: not measured) */
};

/* Run the whole profile on machine m (prof_profile on the real target and SoIs). On success *out is the profile
 * (release with profile_free and free); it may be incomplete ((*out)->complete 0, (*out)->missing says what and why):
 * a sample ran out of --timeout, and the profile holds everything measured before and after it (docs/profile.md,
 * "A sample that times out"); or *stop was raised, and the profile holds everything measured before it and
 * (*out)->interrupted is 1 (docs/profile.md, "Interrupted": the caller writes it and exits 130). Returns 0, -EINTR
 * (stopped before the first sample finished: nothing to write), or -errno with why (target died, output unparsable,
 * an SoI refused the user's input, ...); on failure *bad_input (may be NULL) is 1 when it was the user's input
 * (cli_exit_for). Every child and SoI is gone on return. Progress (out_progress): the phase, the SoI, the point and
 * the time left, once per sample. The machine's pressure over each phase is in (*out)->phases. */
int profile_run(struct machine *m, const struct profile_opts *o, const atomic_int *stop, struct profile **out,
                int *bad_input, char *why, size_t len);

/* 1 when a profile of these SoIs (--sois: comma-separated names, NULL: all) sizes an SoI by the cached LLC size
 * (an SoI of scope TOPO_SCOPE_LLC), so the CLI checks that size first; 0: it would spend seconds for nothing. */
int profile_uses_llc_size(const char *sois);

/* The reach verdict from a probe's effect (%, beside the SoI at 100 % vs at 0 %), its standard error and the bar
 * (half the QoS band, %): "does not reach" when effect + 2 se < bar, "reaches" when effect - 2 se > 0, else
 * "undecided" (also for non-finite figures). */
const char *profile_reach_verdict(double effect_pct, double se_pct, double bar_pct);

#ifdef __cplusplus
}
#endif
#endif
