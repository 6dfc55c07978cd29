/* stats.c - small statistics (stats.h). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

int ib_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ib_median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof(double), ib_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ib_median_rse(double *v, size_t n, double med)
{
    if (n < 2)
        return 0;
    for (size_t i = 0; i < n; i++)
        v[i] = fabs(v[i] - med);
    return 1.2533 * 1.4826 * ib_median(v, n) / sqrt((double)n);
}
