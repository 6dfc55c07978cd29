/* stats.h - small statistics shared by the SoIs, the calibration, the probes and the harness. */
#ifndef IB_STATS_H
#define IB_STATS_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* qsort comparator for doubles, ascending. */
int ib_cmp_double(const void *a, const void *b);
/* Median of v[0..n-1] (sorts v in place); the mean of the two middle values when n is even; NAN when n is 0. */
double ib_median(double *v, size_t n);
/* Robust standard error of the median med of v[0..n-1]: 1.2533 x 1.4826 x MAD / sqrt(n) (1.4826 MAD estimates sigma
 * for normal data, and a median's standard error is ~1.2533 sigma / sqrt n), so one wild value does not swamp it.
 * Overwrites v with the absolute deviations. 0 when n < 2. */
double ib_median_rse(double *v, size_t n, double med);
/* Student's t(0.975, df): the two-sided 95 % quantile (INFINITY for df 0; 2.06, 2.02, 1.98 past the table). */
double ib_t975(unsigned df);

#ifdef __cplusplus
}
#endif
#endif
