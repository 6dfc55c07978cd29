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

#ifdef __cplusplus
}
#endif
#endif
