/* profile.h - profiling a target: how much interference of each kind it tolerates before its QoS breaks, and how
 * much it causes (iBench section V.A), written as a versioned profile (docs/profile-schema.md).
 *
 * Tolerated, per SoI: the SoI runs on CPUs that share its resource with the target (never on the target's own
 * CPUs) and holds an intensity while the target's metric is sampled: 25, 50, 75, 100 %, then bisection inside the
 * first bracket that breaks QoS (two steps: 6.25 points). tolerated = the highest intensity that still met QoS
 * (performance relative to the solo baseline >= qos); 100 when it never broke, 0 when 25 % already broke it.
 * Caused, per SoI: the SoI at the reference intensity, alone and then beside the working target (its batch job
 * rerun, or its load generator rerun); caused = 100 x (1 - the SoI's work rate beside / alone), clamped to 0-100:
 * the share of its own speed the target took. Baselines (solo samples) come before and after; their drift is
 * reported and a profile whose baselines moved by more than the QoS band is marked low confidence.
 * Noise: a ramp point that breaks QoS is measured once more, and the break counts only when the second measurement
 * breaks too (a single noisy sample set must not end the ramp).
 * Reach: for an SoI whose sharing with the target rests on hwloc's word that a CPU set shares a cache or memory path
 * (llc-cap, llc-bw, mem-bw), a validation probe first runs on the target's CPU beside the SoI alternating 0 / 100 %.
 * When it moves by less than half the QoS band (with twice its standard error), the SoI cannot reach the target
 * from where it runs -- on a VM the vCPUs may sit on different physical caches or sockets -- and the entry is
 * skipped with the figures: a tolerated of 100 would describe the placement, not the target. */
#ifndef IB_PROFILE_H
#define IB_PROFILE_H
#include <jansson.h>
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
};

/* Run the whole profile on machine m. On success *doc is the profile (profile v1). Returns 0, -EINTR (stopped:
 * nothing to write), or -errno with why (target died, output unparsable, ...). Every child and SoI is gone on
 * return. progress: stderr lines (out_progress). */
int profile_run(struct machine *m, const struct profile_opts *o, const atomic_int *stop, json_t **doc, char *why,
                size_t len);

/* The reach verdict from a probe's effect (%, beside the SoI at 100 % vs at 0 %), its standard error and the bar
 * (half the QoS band, %): "does not reach" when effect + 2 se < bar, "reaches" when effect - 2 se > 0, else
 * "undecided" (also for non-finite figures). */
const char *profile_reach_verdict(double effect_pct, double se_pct, double bar_pct);

/* Read a profile file: 0 with *doc, or -errno with why (unreadable, malformed JSON, not a profile, a major
 * version this build does not know). */
int profile_load(const char *path, json_t **doc, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
