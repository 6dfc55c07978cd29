/* pl_check.c - predictions against measured co-runs (pl_check.h). */
#include "pl_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* mean ranks (1-based) of v into r, ties averaged; O(n^2), n is a corpus of co-runs (tens to hundreds) */
static void ranks(const double *v, unsigned n, double *r)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned below = 0, equal = 0;
        for (unsigned k = 0; k < n; k++) {
            below += v[k] < v[i];
            equal += v[k] == v[i];
        }
        r[i] = below + (equal + 1) / 2.0;
    }
}

double pl_spearman(const double *x, const double *y, unsigned n)
{
    if (n < 2)
        return NAN;
    int xvar = 0, yvar = 0; /* a constant side has no ranks to correlate (rounding would make one up) */
    for (unsigned i = 1; i < n; i++) {
        xvar |= x[i] != x[0];
        yvar |= y[i] != y[0];
    }
    if (!xvar || !yvar)
        return NAN;
    double *rx = malloc(2 * n * sizeof(double));
    if (!rx)
        return NAN;
    double *ry = rx + n;
    ranks(x, n, rx);
    ranks(y, n, ry);
    double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    for (unsigned i = 0; i < n; i++) {
        mx += rx[i] / n;
        my += ry[i] / n;
    }
    for (unsigned i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    free(rx);
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

void pl_check_eval(const struct pl_check_case *c, unsigned n, double qos, int constant, double constant_value,
                   struct pl_check_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->n = n;
    out->mae = out->rank_corr = out->precision = out->recall = NAN;
    if (n == 0)
        return;
    double *p = malloc(2 * n * sizeof(double));
    if (!p)
        return;
    double *m = p + n, sum = 0;
    for (unsigned i = 0; i < n; i++) {
        p[i] = constant ? constant_value : c[i].predicted;
        m[i] = c[i].measured;
        double err = fabs(p[i] - m[i]);
        sum += err;
        out->within_2se += isfinite(c[i].se) && err <= 2 * c[i].se;
        int pu = p[i] < qos, mu = m[i] < qos;
        out->tp += pu && mu;
        out->fp += pu && !mu;
        out->fn += !pu && mu;
        out->tn += !pu && !mu;
    }
    out->mae = sum / n;
    out->rank_corr = pl_spearman(p, m, n);
    out->precision = out->tp + out->fp ? (double)out->tp / (out->tp + out->fp) : NAN;
    out->recall = out->tp + out->fn ? (double)out->tp / (out->tp + out->fn) : NAN;
    free(p);
}
