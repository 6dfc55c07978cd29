/* pl_check.h - how well do predictions of relative performance match measured co-runs, beside the simplest baseline?
 *
 * A case is one measured co-run (harness/corun.h): A's measured relative performance beside B with its standard
 * error, and a prediction of it. The statistics are computed for any predictor; `place predict --check` computes
 * them for the profiles' model and for the constant "no interference" predictor (1.0) on the same cases, so that a
 * claim of skill is always read beside what a user gets for free.
 *   mae          mean |predicted - measured|
 *   rank_corr    Spearman's rank correlation (ties take their mean rank); NAN when either side is constant (the
 *                constant predictor has none)
 *   within_2se   cases with |predicted - measured| <= 2 se
 *   unsafe       a relative below the QoS line (qos, e.g. 0.95: more than 5 % slower): the confusion matrix of
 *                predicted against measured, and precision = tp / (tp + fp), recall = tp / (tp + fn) for "unsafe"
 *                (NAN when the denominator is 0: a predictor that never says unsafe has no precision).
 * Beyond the errors, the decisions (pl_check_decisions: place pair's verdict against the measured truth), a second
 * baseline a user could fit by hand (pl_check_group_fit) and the paired bootstrap of the gain in mean absolute error
 * over a baseline (pl_check_bootstrap). */
#ifndef IB_PL_CHECK_H
#define IB_PL_CHECK_H

#include <stdint.h>

#include "pl_coloc.h"

#ifdef __cplusplus
extern "C" {
#endif

struct profile;

/* A prediction rule: how the co-runners' pressures add up and how A's curves are read (docs/placement.md,
 * "Prediction rules").  The default, PL_PRED_MODEL ("windows"), is the model that decides (pl_wmodel.h): the
 * co-runners' pressure window by window, A's curves and burst response, the mean over windows.  PL_PRED_TRUTH is the
 * fleet simulator's truth model (pl_sim_truth), the default before 1.7: the product over A's measured SoIs of its
 * curve at the summed caused figures distinguishable from 0, flat beyond the last point.  The others are candidates
 * a corpus may select, on one half, to be reported on the other (place predict --fit). */
struct pl_pred_rule {
    const char *name;
    int min;    /* 1: the worst single resource; 0: the product over resources */
    int extend; /* 1: beyond the last measured point the curve goes on along its last segment (down to 0, never up);
                 * 0: flat */
    int any;    /* 1: every finite positive caused figure counts, distinguishable or not; 0: distinguishable only */
    int windows; /* 1: the model (pl_wm_predict, min: PL_WM_MIN); extend and any do not apply */
};
#define PL_PRED_MODEL "windows"
#define PL_PRED_TRUTH "product-flat-dist"
#define PL_PRED_DEFAULT PL_PRED_MODEL
extern const struct pl_pred_rule pl_pred_rules[];
extern const unsigned pl_pred_nrules;
const struct pl_pred_rule *pl_pred_rule_find(const char *name);
/* A's relative performance beside others[0..n-1] by rule r; only_soi non-NULL: that resource alone (1.0 when A did
 * not measure it). */
double pl_predict(const struct profile *app, const struct profile *const *others, unsigned n,
                  const struct pl_pred_rule *r, const char *only_soi);

/* The held-out split of a corpus, by a rule that does not read the records: 0 (half A) when the 32-bit FNV-1a hash of
 * "A--B" (the programs' names) is even, 1 (half B) when odd. */
/* The pressure others put on soi by rule r: their counted caused figures summed, capped at 100. */
double pl_pred_pressure(const struct profile *const *others, unsigned n, const char *soi, const struct pl_pred_rule *r);
uint32_t pl_fnv1a32(const char *s);
int pl_check_half(const char *a, const char *b);

struct pl_check_case {
    double predicted, measured, se;
};

struct pl_check_stats {
    unsigned n;
    double mae;
    double rank_corr;
    unsigned within_2se;
    unsigned tp, fp, fn, tn; /* "unsafe" is positive */
    double precision, recall;
};

/* The statistics above over c[0..n-1] at the QoS line qos; constant: score the constant predictor `constant_value`
 * instead of c[i].predicted (for the baseline; pass 0 for the cases' own predictions). */
void pl_check_eval(const struct pl_check_case *c, unsigned n, double qos, int constant, double constant_value,
                   struct pl_check_stats *out);
/* Spearman's rank correlation of x and y (n >= 2; mean ranks for ties); NAN when either is constant. */
double pl_spearman(const double *x, const double *y, unsigned n);

/* ---- Decisions against the measured truth ---------------------------------------------------------------------
 * A record's truth at the QoS line: a break when it is slower than the line beyond its noise (measured + 2 se < qos),
 * safe when faster beyond it (measured - 2 se >= qos), else unclear (also a record without a standard error: its
 * noise is unknown, so nothing is established). */
enum pl_truth { PL_TRUTH_BREAK, PL_TRUTH_SAFE, PL_TRUTH_UNCLEAR };
enum pl_truth pl_check_truth(double measured, double se, double qos);
const char *pl_truth_name(enum pl_truth t); /* "break", "safe", "unclear" */

/* The decision `place pair` makes for the pair {a, b} under o: pl_coloc_check's verdict, both directions, the code
 * place pair, colocate and the extender decide by.  PL_COLOC_UNSAFE is refused, PL_COLOC_UNCERTAIN not refused but
 * ranked after every safe choice (only with o->established), PL_COLOC_SAFE kept.  A pair that cannot be judged is
 * refused, as pl_verdict_of counts it. */
enum pl_coloc_verdict pl_check_decision(const struct profile *a, const struct profile *b,
                                        const struct pl_coloc_opts *o);
/* A predictor's decision: refused (PL_COLOC_UNSAFE) when its prediction is below qos, else kept (PL_COLOC_SAFE). */
enum pl_coloc_verdict pl_check_decision_of(double predicted, double qos);
const char *pl_check_decision_name(enum pl_coloc_verdict d); /* "kept", "uncertain", "refused" */

/* Decisions d[i] on cases c[i] scored against their truth.  "Uncertain kept" is `place pair --refuse established`
 * (an uncertain pair is not refused); "uncertain refused" is `--refuse uncertain` (every negative headroom refuses:
 * exactly the pairs established refuses plus those it calls uncertain).  The front ends' default, `--refuse likely`,
 * is scored by passing its own decisions (pl_check_decision with pl_coloc_opts.likely): its "uncertain kept". */
struct pl_check_dec {
    unsigned n[3][3];        /* [enum pl_truth][enum pl_coloc_verdict]: records by truth and decision */
    unsigned breaks, safe, unclear;
    double recall_kept;      /* breaks refused / breaks, uncertain counted kept; NAN without a break */
    double recall_refused;   /* (breaks refused + uncertain) / breaks, uncertain counted refused */
    double false_kept;       /* safe records refused / safe records, uncertain counted kept; NAN without a safe one */
    double false_refused;    /* (safe refused + uncertain) / safe records, uncertain counted refused */
};
void pl_check_decisions(const struct pl_check_case *c, const enum pl_coloc_verdict *d, unsigned n, double qos,
                        struct pl_check_dec *out);

/* ---- The model's bounds against the measurements ---------------------------------------------------------------
 * How often a record's measured figure lies within the model's bounds [lo, hi] (its pessimistic and optimistic
 * readings, pl_wm_predict): inside when lo <= measured <= hi; inside_2se when lo - 2 se <= measured <= hi + 2 se
 * (a record without a standard error counts as se 0).  The bounds carry the profiles' noise only (curves, caused
 * and bursts at 2 se), neither the model's error nor the machine's drift between a profile and a co-run, so the
 * measurement's own noise is allowed for in inside_2se.  A case with a bound that is not finite is not counted. */
struct pl_check_coverage {
    unsigned n, inside, inside_2se;
};
void pl_check_cover(const struct pl_check_case *c, const double *lo, const double *hi, unsigned n,
                    struct pl_check_coverage *out);

/* ---- The per-group baseline -------------------------------------------------------------------------------------
 * A two-number predictor a user could fit by hand: the mean measured relative performance of the records whose
 * co-runner B is I/O-bound, and of the others.  B is I/O-bound when the largest PSI "io some" share of its profile's
 * solo baseline phases (the phases of no SoI: B alone on the machine) is at least PL_CHECK_IO_SOME_PCT: a program
 * that stalls on I/O when alone.  It reads B's profile only, never a record.  A profile without phases (format before
 * 1.4) shows no I/O and is not I/O-bound. */
#define PL_CHECK_IO_SOME_PCT 5.0
int pl_check_io_bound(const struct profile *p); /* 1 or 0 */
/* Cross-fitted on the held-out split: record i (group[i] 0 or 1, half[i] 0 or 1) is predicted by the mean of
 * measured[] over the records of the other half in its group, so no record is predicted from its own half; a group
 * with no record in the other half takes that half's mean over both groups, and an empty other half gives 1.0 (the
 * constant).  pred[n] out; mean[half][group] (NAN: no record) and count[half][group] out when not NULL. */
void pl_check_group_fit(const double *measured, const int *group, const int *half, unsigned n, double *pred,
                        double mean[2][2], unsigned count[2][2]);

/* ---- The paired bootstrap of a gain in mean absolute error --------------------------------------------------------
 * gain = MAE(base) - MAE(model) over the same cases: above 0, the model's error is lower.  Per case
 * d_i = |base_i - measured_i| - |model_i - measured_i|; each of `resamples` resamples draws n cases with replacement
 * (index = the next value of ib_rand.h's splitmix64 stream from `seed`, modulo n: a bias under n / 2^64) and takes the
 * mean of their d, so both predictors are scored on the same draw (paired).  The interval is the percentile one at
 * 95 %: the ceil(0.025 B)-th and ceil(0.975 B)-th smallest of the B resampled means (1-based; the inverse of their
 * empirical distribution at 2.5 % and 97.5 %).  out->gain is the mean of d over the cases themselves.  0, or -EINVAL
 * (n or resamples 0), -ENOMEM. */
#define PL_BOOT_RESAMPLES 2000
#define PL_BOOT_SEED 1
struct pl_boot {
    double gain, lo, hi;
};
int pl_check_bootstrap(const double *measured, const double *model, const double *base, unsigned n,
                       unsigned resamples, uint64_t seed, struct pl_boot *out);

#ifdef __cplusplus
}
#endif
#endif
