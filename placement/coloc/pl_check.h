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
 *                (NAN when the denominator is 0: a predictor that never says unsafe has no precision). */
#ifndef IB_PL_CHECK_H
#define IB_PL_CHECK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct profile;

/* A prediction rule: how the co-runners' pressures add up and how A's curves are read (docs/placement.md,
 * "Prediction rules").  The default, PL_PRED_DEFAULT, is the fleet simulator's truth model (pl_sim_truth): the product
 * over A's measured SoIs of its curve at the summed caused figures distinguishable from 0, flat beyond the last point.
 * The others are candidates a corpus may select, on one half, to be reported on the other (place predict --fit). */
struct pl_pred_rule {
    const char *name;
    int min;    /* 1: the worst single resource; 0: the product over resources */
    int extend; /* 1: beyond the last measured point the curve goes on along its last segment (down to 0, never up);
                 * 0: flat */
    int any;    /* 1: every finite positive caused figure counts, distinguishable or not; 0: distinguishable only */
};
#define PL_PRED_DEFAULT "product-flat-dist"
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

#ifdef __cplusplus
}
#endif
#endif
