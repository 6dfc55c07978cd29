/* pl_check.c - predictions against measured co-runs (pl_check.h). */
#include "pl_check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_rand.h"
#include "pl_sim.h"
#include "pl_wmodel.h"
#include "profile_fmt.h"

/* The candidates, simplest first (a tie in selection goes to the earlier one); the model's two last. */
const struct pl_pred_rule pl_pred_rules[] = {
    {"product-flat-dist", 0, 0, 0, 0}, {"product-extend-dist", 0, 1, 0, 0}, {"min-flat-dist", 1, 0, 0, 0},
    {"min-extend-dist", 1, 1, 0, 0},   {"product-flat-any", 0, 0, 1, 0},    {"product-extend-any", 0, 1, 1, 0},
    {"min-flat-any", 1, 0, 1, 0},      {"min-extend-any", 1, 1, 1, 0},      {"windows", 0, 0, 0, 1},
    {"windows-min", 1, 0, 0, 1},
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
    if (r->windows) {
        struct pl_wm_pred p;
        return pl_wm_predict(app, others, n, r->min ? PL_WM_MIN : PL_WM_PRODUCT, only_soi, &p) == 0 ? p.rel : NAN;
    }
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

enum pl_truth pl_check_truth(double measured, double se, double qos)
{
    if (!isfinite(se) || se < 0)
        return PL_TRUTH_UNCLEAR;
    return measured + 2 * se < qos ? PL_TRUTH_BREAK : measured - 2 * se >= qos ? PL_TRUTH_SAFE : PL_TRUTH_UNCLEAR;
}

const char *pl_truth_name(enum pl_truth t)
{
    static const char *const n[] = {"break", "safe", "unclear"};
    return (unsigned)t < sizeof n / sizeof n[0] ? n[t] : "?";
}

enum pl_coloc_verdict pl_check_decision(const struct profile *a, const struct profile *b,
                                        const struct pl_coloc_opts *o)
{
    const struct profile *g[2] = {a, b};
    struct pl_coloc_result r;
    char why[512];
    if (pl_coloc_check(g, 2, o, &r, why, sizeof why) < 0)
        return PL_COLOC_UNSAFE;
    enum pl_coloc_verdict v = r.verdict;
    pl_coloc_result_free(&r);
    return v;
}

enum pl_coloc_verdict pl_check_decision_of(double predicted, double qos)
{
    return predicted < qos ? PL_COLOC_UNSAFE : PL_COLOC_SAFE;
}

const char *pl_check_decision_name(enum pl_coloc_verdict d)
{
    return d == PL_COLOC_SAFE ? "kept" : d == PL_COLOC_UNCERTAIN ? "uncertain" : d == PL_COLOC_UNSAFE ? "refused" : "?";
}

static double ratio(unsigned num, unsigned den) { return den ? (double)num / den : NAN; }

void pl_check_decisions(const struct pl_check_case *c, const enum pl_coloc_verdict *d, unsigned n, double qos,
                        struct pl_check_dec *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < n; i++) {
        enum pl_truth t = pl_check_truth(c[i].measured, c[i].se, qos);
        if ((unsigned)d[i] < 3)
            out->n[t][d[i]]++;
    }
    const unsigned *b = out->n[PL_TRUTH_BREAK], *s = out->n[PL_TRUTH_SAFE], *u = out->n[PL_TRUTH_UNCLEAR];
    out->breaks = b[PL_COLOC_SAFE] + b[PL_COLOC_UNCERTAIN] + b[PL_COLOC_UNSAFE];
    out->safe = s[PL_COLOC_SAFE] + s[PL_COLOC_UNCERTAIN] + s[PL_COLOC_UNSAFE];
    out->unclear = u[PL_COLOC_SAFE] + u[PL_COLOC_UNCERTAIN] + u[PL_COLOC_UNSAFE];
    out->recall_kept = ratio(b[PL_COLOC_UNSAFE], out->breaks);
    out->recall_refused = ratio(b[PL_COLOC_UNSAFE] + b[PL_COLOC_UNCERTAIN], out->breaks);
    out->false_kept = ratio(s[PL_COLOC_UNSAFE], out->safe);
    out->false_refused = ratio(s[PL_COLOC_UNSAFE] + s[PL_COLOC_UNCERTAIN], out->safe);
}

void pl_check_cover(const struct pl_check_case *c, const double *lo, const double *hi, unsigned n,
                    struct pl_check_coverage *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < n; i++) {
        if (!isfinite(lo[i]) || !isfinite(hi[i]) || !isfinite(c[i].measured))
            continue;
        const double m = c[i].measured, w = isfinite(c[i].se) ? 2 * c[i].se : 0;
        out->n++;
        out->inside += m >= lo[i] && m <= hi[i];
        out->inside_2se += m >= lo[i] - w && m <= hi[i] + w;
    }
}

int pl_check_io_bound(const struct profile *p)
{
    double most = -1;
    for (unsigned i = 0; p && i < p->nphases; i++)
        if (!p->phases[i].soi && isfinite(p->phases[i].io_some))
            most = fmax(most, p->phases[i].io_some);
    return most >= PL_CHECK_IO_SOME_PCT;
}

void pl_check_group_fit(const double *measured, const int *group, const int *half, unsigned n, double *pred,
                        double mean[2][2], unsigned count[2][2])
{
    double sum[2][2] = {{0, 0}, {0, 0}};
    unsigned cnt[2][2] = {{0, 0}, {0, 0}};
    for (unsigned i = 0; i < n; i++) {
        sum[half[i] != 0][group[i] != 0] += measured[i];
        cnt[half[i] != 0][group[i] != 0]++;
    }
    for (unsigned i = 0; i < n; i++) {
        const int o = half[i] == 0, g = group[i] != 0; /* the other half, this record's group */
        const unsigned all = cnt[o][0] + cnt[o][1];
        pred[i] = cnt[o][g] ? sum[o][g] / cnt[o][g] : all ? (sum[o][0] + sum[o][1]) / all : 1.0;
    }
    for (int h = 0; h < 2; h++)
        for (int g = 0; g < 2; g++) {
            if (mean)
                mean[h][g] = cnt[h][g] ? sum[h][g] / cnt[h][g] : NAN;
            if (count)
                count[h][g] = cnt[h][g];
        }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int pl_check_bootstrap(const double *measured, const double *model, const double *base, unsigned n,
                       unsigned resamples, uint64_t seed, struct pl_boot *out)
{
    out->gain = out->lo = out->hi = NAN;
    if (n == 0 || resamples == 0)
        return -EINVAL;
    double *d = malloc(((size_t)n + resamples) * sizeof(double));
    if (!d)
        return -ENOMEM;
    double *g = d + n, sum = 0;
    for (unsigned i = 0; i < n; i++) {
        d[i] = fabs(base[i] - measured[i]) - fabs(model[i] - measured[i]);
        sum += d[i];
    }
    out->gain = sum / n;
    uint64_t state = seed;
    for (unsigned b = 0; b < resamples; b++) {
        double s = 0;
        for (unsigned k = 0; k < n; k++)
            s += d[ib_splitmix64(&state) % n];
        g[b] = s / n;
    }
    qsort(g, resamples, sizeof(double), cmp_double);
    /* ceil(q B)-th smallest, 1-based, in integers: q = 25/1000 and 975/1000 */
    const uint64_t B = resamples, klo = (B * 25 + 999) / 1000, khi = (B * 975 + 999) / 1000;
    out->lo = g[klo ? klo - 1 : 0];
    out->hi = g[khi ? khi - 1 : 0];
    free(d);
    return 0;
}
