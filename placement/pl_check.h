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

#ifdef __cplusplus
extern "C" {
#endif

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
