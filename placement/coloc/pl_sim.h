/* pl_sim.h - a fleet simulator for co-location policies (the iBench paper §V.A): applications with profiles arrive on a
 * fleet of machines, a policy places them, and a ground truth separate from every policy says how each performs.
 *
 * Deterministic under a seed: one PRNG (splitmix64 seeding xoshiro256**), integer-second events in a fixed order,
 * no rand(), no clock, no hash order.  The truth model (pl_sim_truth) composes the profile's sensitivity curves
 * across resources as a product; pl_sim.c states every rule and its reason.
 */
#ifndef IB_PL_SIM_H
#define IB_PL_SIM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_coloc.h"
#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_SIM_MAX_TENANTS (PL_COLOC_MAX_APPS - 1)
#define PL_SIM_NOISE_SD 0.02 /* lognormal noise on the truth: sd of its log, ~2 % */
#define PL_SIM_LEARN 4        /* re-profiles an application keeps: the pressures it was found breaking at */
#define PL_SIM_LEARN_SOIS 32  /* of its first SoIs (the rest are left out of the comparison: more refusals) */

struct pl_sim_machine {
    char name[32];
    unsigned cpus;
    double mem;                             /* bytes */
    unsigned ntenants;
    unsigned tenant[PL_SIM_MAX_TENANTS];    /* indices into the app array */
    double cpu_used, mem_used;
    bool closed;                            /* closed to newcomers by the adaptive step */
};

struct pl_sim_app {
    const struct profile *p;                /* not owned */
    unsigned cpus;
    double mem;                             /* bytes */
    unsigned arrival;                       /* seconds */
    unsigned duration;                      /* seconds of work: its run time alone */
    double qos;                             /* relative performance it must keep (the profile's qos) */
    /* filled by the run */
    int machine;                            /* -1: not placed (waiting or done) */
    unsigned start, end;                    /* seconds: placed first, left */
    double rate;                            /* its truth now: seconds of work done per second */
    double done;                            /* seconds of work done */
    bool violated;                          /* was ever under its QoS in the truth */
    /* the adaptive step's re-profiles (the iBench paper V.A): the pressure on each of its SoIs (the profile's order) where
     * it was found under its QoS, its co-runners' summed caused; the interference policy refuses a group that
     * presses it at least as hard on every one of them again */
    float learned[PL_SIM_LEARN][PL_SIM_LEARN_SOIS];
    unsigned nlearned;
    double worst;                           /* lowest truth it saw (1.0 if never co-located) */
};

/* Recorded co-runs as the ground truth (place simulate --truth recorded): per ordered pair of program names (A's
 * performance beside B), the relative performance of each repetition of its co-run records. */
struct pl_sim_pair {
    char *a, *b;
    double *rel;
    unsigned n;
    double median;
};
struct pl_sim_records {
    struct pl_sim_pair *pair;
    unsigned n;
};
struct corun_record;
/* The pairs of n co-run records (harness/corun.h); records of one ordered pair pool their repetitions. 0 or -ENOMEM. */
int pl_sim_records_make(const struct corun_record *recs, unsigned n, struct pl_sim_records *out, char *why,
                        size_t len);
void pl_sim_records_free(struct pl_sim_records *r);
/* The pair (a beside b), or NULL. */
const struct pl_sim_pair *pl_sim_records_find(const struct pl_sim_records *r, const char *a, const char *b);

struct pl_sim_fleet {
    struct pl_sim_machine *m;
    unsigned nm;
    struct pl_sim_app *app;
    unsigned napps;
    /* NULL: the truth is the model (pl_sim_truth, with its noise). Else, for every co-runner B of A with a record
     * of (A, B), a repetition drawn at random from the records (capped at 1.0), multiplied over such co-runners;
     * the co-runners without a record go through the model together. */
    const struct pl_sim_records *records;
    /* What decides in the interference policy (place simulate --decide): PL_DECIDE_MODEL (0, the default since 1.7)
     * or PL_DECIDE_HEADROOM (the rule before 1.7, for comparison).  Other policies ignore it. */
    enum pl_coloc_decide decide;
};

/* A policy: the machine index for app (not yet on any machine), or -1 (wait).  `exclude` is a machine it may not
 * choose (the adaptive step's current machine), -1 for none. */
struct pl_sim_policy {
    const char *name;
    int (*choose)(const struct pl_sim_fleet *f, unsigned app, int exclude);
};
const struct pl_sim_policy *pl_sim_policy_find(const char *name);
/* The interference policy's rule with the check's options given (the policy itself: f->decide, margin
 * PL_COLOC_MARGIN, unknowns optimistic, uncertain refused; pl_sim.c says why): among machines where CPU and memory fit and the tenants plus app are safe, a shared one
 * before an empty one, the fullest first, then the best fit, then name.  -1: none. */
int pl_sim_choose_safe(const struct pl_sim_fleet *f, unsigned app, int exclude, const struct pl_coloc_opts *o);
/* The interference policy's order between two machines that both take the application (safe, or empty): whether
 * machine i (its group's fit fit_i; any value when empty) comes before machine j.  Shared before empty, the fullest
 * (least free CPU) first, the better fit, then less loaded and name. */
bool pl_sim_safe_before(const struct pl_sim_fleet *f, unsigned i, double fit_i, unsigned j, double fit_j);
/* The same order on two machines held apart from their names (the extender's nodes share one machine a distinct
 * state): names compared on their first sizeof(m->name) - 1 bytes, as a machine holds its name. */
bool pl_sim_machine_safe_before(const struct pl_sim_machine *a, const char *name_a, double fit_a,
                                const struct pl_sim_machine *b, const char *name_b, double fit_b);

/* Sensitivity curve of one SoI at an intensity (%): points sorted by intensity, repeated intensities averaged,
 * every point capped at 1.0, 1.0 at 0, linear between points, flat beyond the last.  No curve: 1.0. */
double pl_sim_curve(const struct profile_soi *s, double intensity);
/* The pressure n co-runners put on an SoI together: their known, positive caused values summed, capped at 100. */
double pl_sim_pressure(const struct profile *const *others, unsigned n, const char *soi);
/* The truth without noise: the product over app's measured SoIs of its curve at the pressure the others cause
 * together on that SoI (their known, positive caused values summed, capped at 100). */
double pl_sim_truth(const struct profile *app, const struct profile *const *others, unsigned n);

struct pl_sim_result {
    unsigned napps, nmachines;
    unsigned violations;        /* applications ever under their QoS in the truth */
    unsigned moves, closures;   /* the adaptive step: applications moved; machines closed (no machine to move to) */
    unsigned waited;            /* applications that could not be placed on arrival */
    double mean_rel, worst_rel; /* over applications of the lowest truth each saw */
    double mean_perf;           /* over applications of duration / (end - start): run time alone over run time */
    double mean_wait;           /* seconds from arrival to first placement, averaged over applications */
    unsigned makespan;          /* the second the last application left */
    double utilization;         /* CPU demand / CPUs of used machines, averaged over seconds with a used machine */
    double useful;              /* the same with each application's CPUs weighted by its rate (work done) */
    double mean_used;           /* machines used, averaged over the same seconds */
    double machine_seconds;     /* machines used, summed over the seconds: what the fleet cost */
    unsigned peak_used;
    unsigned *used;             /* machines used at each second 0..nseries-1 */
    unsigned nseries;
    /* with recorded truth: co-runner pairs evaluated from records, and through the model (no record) */
    unsigned long truth_recorded, truth_model;
    const char *decide;         /* the interference policy: what decided ("model", "headroom"); other policies NULL */
};

/* Runs the fleet (machines start empty; apps sorted by arrival) under a policy.  0 or -EINVAL with one line. */
int pl_sim_run(struct pl_sim_fleet *f, const struct pl_sim_policy *pol, uint64_t seed, struct pl_sim_result *r,
               char *why, size_t len);
void pl_sim_result_free(struct pl_sim_result *r);

/* A built-in scenario ("ibench-200x40"): the fleet and the applications, drawn from the seed; recorded profiles
 * (already read; NULL: the built-in pool recorded on the development machine, pl_recorded.h) are mixed with
 * synthetic ones.  *f and *owned (the synthetic profiles) are freed with
 * pl_sim_scenario_free.  -EINVAL (unknown scenario) with one line. */
struct pl_sim_scenario {
    struct pl_sim_fleet f;
    struct profile *synth;
    unsigned nsynth;
    struct profile *builtin;    /* the built-in recorded pool (pl_recorded.h), when recorded == NULL */
    unsigned nbuiltin;
};
int pl_sim_scenario_make(const char *name, uint64_t seed, const struct profile *const *recorded, unsigned nrec,
                         struct pl_sim_scenario *s, char *why, size_t len);
void pl_sim_scenario_free(struct pl_sim_scenario *s);

/* The JSON text of a result (malloc'd, NULL on out of memory); the same inputs give the same bytes. */
/* truth: "model" or "recorded" (then the co-runner pairs evaluated from records and through the model are given). */
char *pl_sim_json(const char *scenario, const char *policy, uint64_t seed, const char *truth,
                  const struct pl_sim_result *r);

#ifdef __cplusplus
}
#endif
#endif
