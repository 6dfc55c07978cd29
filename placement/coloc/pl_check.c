/* pl_check.c - predictions against measured co-runs (pl_check.h). */
#include "pl_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_sim.h"
#include "profile_fmt.h"

/* The candidates, simplest first (a tie in selection goes to the earlier one). */
const struct pl_pred_rule pl_pred_rules[] = {
    {"product-flat-dist", 0, 0, 0}, {"product-extend-dist", 0, 1, 0}, {"min-flat-dist", 1, 0, 0},
    {"min-extend-dist", 1, 1, 0},   {"product-flat-any", 0, 0, 1},    {"product-extend-any", 0, 1, 1},
    {"min-flat-any", 1, 0, 1},      {"min-extend-any", 1, 1, 1},
};
const unsigned pl_pred_nrules = sizeof pl_pred_rules / sizeof pl_pred_rules[0];

const struct pl_pred_rule *pl_pred_rule_find(const char *name)
{
    for (unsigned i = 0; name && i < pl_pred_nrules; i++)
        if (!strcmp(pl_pred_rules[i].name, name))
            return &pl_pred_rules[i];
    return NULL;
}

static double caused_by(const struct profile *p, const char *soi, int any)
{
    for (unsigned i = 0; i < p->nsois; i++) {
        const struct profile_soi *s = &p->sois[i];
        if (strcmp(s->soi, soi) != 0)
            continue;
        if (s->status != PROFILE_MEASURED || !s->have_caused || !isfinite(s->caused.value) || s->caused.value < 0 ||
            (!any && s->caused.distinguishable == 0))
            return 0;
        return s->caused.value;
    }
    return 0;
}

/* The curve beyond its last point along its last segment (from (0, 1) when it has one point), down to 0, never
 * above the last point; pl_sim_curve's reading (averaged repeats, capped at 1) up to the last point. */
static double curve_extended(const struct profile_soi *s, double x)
{
    double last = -1, prev = 0;
    for (unsigned i = 0; i < s->ncurve; i++)
        if (isfinite(s->curve[i].intensity) && isfinite(s->curve[i].relative) && s->curve[i].intensity > last)
            last = s->curve[i].intensity;
    if (last <= 0 || x <= last)
        return pl_sim_curve(s, x);
    for (unsigned i = 0; i < s->ncurve; i++)
        if (isfinite(s->curve[i].intensity) && isfinite(s->curve[i].relative) && s->curve[i].intensity < last &&
            s->curve[i].intensity > prev)
            prev = s->curve[i].intensity;
    const double yl = pl_sim_curve(s, last), yp = prev > 0 ? pl_sim_curve(s, prev) : 1.0;
    const double slope = (yl - yp) / (last - prev);
    return slope < 0 ? fmax(0.0, yl + slope * (x - last)) : yl;
}

double pl_pred_pressure(const struct profile *const *others, unsigned n, const char *soi, const struct pl_pred_rule *r)
{
    double press = 0;
    for (unsigned j = 0; j < n; j++)
        press += caused_by(others[j], soi, r->any);
    return fmin(100.0, press);
}

double pl_predict(const struct profile *app, const struct profile *const *others, unsigned n,
                  const struct pl_pred_rule *r, const char *only_soi)
{
    double rel = 1.0;
    for (unsigned i = 0; i < app->nsois; i++) {
        const struct profile_soi *s = &app->sois[i];
        if (s->status != PROFILE_MEASURED || (only_soi && strcmp(s->soi, only_soi) != 0))
            continue;
        const double press = pl_pred_pressure(others, n, s->soi, r);
        const double y = r->extend ? curve_extended(s, press) : pl_sim_curve(s, press);
        rel = r->min ? fmin(rel, y) : rel * y;
    }
    return rel;
}

uint32_t pl_fnv1a32(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int pl_check_half(const char *a, const char *b)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s--%s", a, b); /* program names are short; a longer one is cut, still deterministic */
    return (int)(pl_fnv1a32(buf) & 1);
}

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
