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

double ib_t975(unsigned df)
{
    static const double t[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
    if (df == 0)
        return INFINITY;
    if (df < sizeof(t) / sizeof(t[0]))
        return t[df];
    return df < 30 ? 2.06 : df < 60 ? 2.02 : 1.98;
}
