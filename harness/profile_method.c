/* profile_method.c - baseline, tolerated search and caused, on any meter (profile_method.h). */
#define _GNU_SOURCE
#include "profile_method.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "parse.h"
#include "stats.h"

void prof_params_default(struct prof_params *pp)
{
    *pp = (struct prof_params){.qos = 0.95, .higher_better = 1, .samples = 3, .bisect_steps = 2,
                               .caused_level = 100, .caused_min_rounds = 3, .caused_max_rounds = 12,
                               .caused_se_target = 5, .caused_budget_s = 4, .caused_window_ms = 300,
                               .settle_ms = 40, .sequential = 1, .floor = 0.5, .floor_steps = 2,
                               .burst_on_s = {0.25, 1, 4}, .nburst_on = 3, .caused_counted = 1,
                               .flat_first = 1};
}

static void say(struct prof_meter *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct prof_meter *m, const char *fmt, ...)
{
    if (!m->progress)
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    m->progress(m->ctx, line);
}

/* One sample, which must be a positive finite number. */
static int sample1(struct prof_meter *m, double *v, char *why, size_t len)
{
    int rc = m->sample(m->ctx, v, why, len);
    if (rc < 0)
        return rc;
    if (!isfinite(*v) || *v <= 0)
        return ib_why(why, len, -EBADMSG, "a sample of the metric is not a positive number (%g)", *v);
    return 0;
}

/* Relative performance, higher = better. */
static double rel_of(const struct prof_params *pp, double value, double base)
{
    return pp->higher_better ? value / base : base / value;
}

int prof_baseline(const struct prof_params *pp, struct prof_meter *m, unsigned n, double *v, unsigned *got,
                  double *median, char *why, size_t len)
{
    (void)pp;
    double tmp[PROF_MAX_SAMPLES];
    n = n > PROF_MAX_SAMPLES ? PROF_MAX_SAMPLES : n;
    int rc = 0;
    unsigned i = 0;
    for (; i < n && rc == 0; i++) {
        say(m, "baseline, solo sample %u/%u", i + 1, n);
        if ((rc = sample1(m, &v[i], why, len)) < 0)
            break;
        tmp[i] = v[i];
    }
    *got = i;
    *median = i ? ib_median(tmp, i) : NAN;
    return rc;
}

/* sample standard deviation of v[0..n-1] (n >= 2), and their mean in *mean */
static double sd_of(const double *v, unsigned n, double *mean)
{
    double m = 0, ss = 0;
    for (unsigned i = 0; i < n; i++)
        m += v[i] / n;
    for (unsigned i = 0; i < n; i++)
        ss += (v[i] - m) * (v[i] - m);
    *mean = m;
    return sqrt(ss / (n - 1));
}

/* relative standard deviation of v[0..n-1] */
static double rsd(const double *v, unsigned n)
{
    double mean = 0;
    double sd = n < 2 ? 0 : sd_of(v, n, &mean);
    return mean > 0 ? sd / mean : 0;
}

double prof_noise(const double *v, unsigned n)
{
    if (n < 3 || n > PROF_MAX_SAMPLES)
        return 0;
    double t[PROF_MAX_SAMPLES];
    memcpy(t, v, n * sizeof(double));
    double med = ib_median(t, n);
    if (!(med > 0))
        return 0;
    for (unsigned i = 0; i < n; i++)
        t[i] = fabs(v[i] - med);
    double robust = 1.4826 * ib_median(t, n) / med;
    /* the larger of the robust and the plain estimate: from a handful of samples either can come out far too low,
     * and an early stop on too small a noise figure is a wrong decision, while a stop missed costs one sample */
    return fmax(robust, rsd(v, n));
}

/* One sample, and its wall time by the meter's clock (the timeout's clock: it starts the sample). */
static int sample_timed(struct prof_meter *m, double *v, double *wall_s, char *why, size_t len)
{
    uint64_t t0 = m->now_ns(m->ctx);
    int rc = sample1(m, v, why, len);
    uint64_t t1 = m->now_ns(m->ctx);
    *wall_s = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0;
    return rc;
}

/* The standard error of a relative performance from ns solo and k beside samples, each with relative noise s: a
 * median of n has about 1.2533 s / sqrt(n) (its efficiency; for 1 or 2 samples a slight over-statement, on the safe
 * side), and the two medians' errors add in quadrature. */
static double rel_se(double rel, double s, unsigned ns, unsigned k)
{
    return rel * s * 1.2533 * sqrt(1.0 / ns + 1.0 / k);
}

/* The verdict on a point (profile_method.h, "Tolerated"): +1 meets QoS beyond its noise, -1 breaks it beyond its
 * noise, 0 uncertain. Without a noise figure, the relative alone decides. */
int prof_point_verdict(const struct prof_params *pp, double rel, double se)
{
    if (!(se > 0))
        return rel >= pp->qos ? 1 : -1;
    if (rel >= pp->qos + PROF_CONFIDENCE_Z * se)
        return 1;
    if (rel < pp->qos - PROF_CONFIDENCE_Z * se)
        return -1;
    return 0;
}

/* A point's local solo baseline (profile_method.h, "Tolerated"): the SoI idle, n more solo samples appended to
 * solo[]/wall[] (*ns of them so far); two that agree within the noise of one are enough in a first round. Their
 * median in *sm (base when it is not a positive number) and their wall times' in *solo_wall. A solo sample past its
 * timeout: *to PROF_TO_SOLO. */
static int local_solo(const struct prof_params *pp, struct prof_meter *m, const char *what, double x, int first,
                      unsigned n, double base, double *solo, double *wall, unsigned *ns, double *sm, double *solo_wall,
                      enum prof_timeout *to, char *why, size_t len)
{
    double t[PROF_MAX_SAMPLES];
    int rc = m->soi_hold(m->ctx, 0, 0, why, len);
    if (rc < 0)
        return rc;
    for (unsigned i = 0; i < n; i++) {
        say(m, "%s, %g %%: solo sample %u", what, x, *ns + 1);
        if ((rc = sample_timed(m, &solo[*ns], &wall[*ns], why, len)) < 0) {
            if (rc == -ETIMEDOUT)
                *to = PROF_TO_SOLO;
            return rc;
        }
        ++*ns;
        /* two solo samples that agree within the noise of one are the local baseline already (first round) */
        if (first && *ns == 2 && n > 2 && pp->sequential && pp->noise > 0 &&
            fabs(solo[0] - solo[1]) <= pp->noise * 0.5 * (solo[0] + solo[1]))
            break;
    }
    memcpy(t, solo, *ns * sizeof(double));
    *sm = ib_median(t, *ns);
    if (!(*sm > 0) || !isfinite(*sm))
        *sm = base;
    memcpy(t, wall, *ns * sizeof(double));
    *solo_wall = ib_median(t, *ns);
    return 0;
}

/* One point (profile_method.h, "Tolerated"): rounds of solo then beside samples until the verdict is certain or
 * PROF_CONFIRM_ROUNDS more rounds are spent; a timeout (prof_tolerated's comment) says which in *to. */
static int point(const struct prof_params *pp, struct prof_meter *m, double x, double base, struct profile_point *p,
                 enum prof_timeout *to, char *why, size_t len)
{
    const unsigned n = pp->samples < 1 ? 1 : pp->samples > PROF_MAX_SAMPLES / (PROF_CONFIRM_ROUNDS + 1)
                                                 ? PROF_MAX_SAMPLES / (PROF_CONFIRM_ROUNDS + 1)
                                                 : pp->samples;
    double solo[PROF_MAX_SAMPLES], bes[PROF_MAX_SAMPLES], t[PROF_MAX_SAMPLES], wall[PROF_MAX_SAMPLES], w1 = 0;
    unsigned ns = 0, k = 0;
    int rc = 0, verdict = 0, timed_out = 0;
    double sm = base, v = 0, rel = 0, se = 0;
    struct prof_window w = {.achieved_pct = NAN};
    for (unsigned round = 0; round <= PROF_CONFIRM_ROUNDS && !timed_out; round++) {
        double solo_wall;
        if ((rc = local_solo(pp, m, "tolerated", x, round == 0, n, base, solo, wall, &ns, &sm, &solo_wall, to, why,
                             len)) < 0)
            return rc;
        if ((rc = m->soi_hold(m->ctx, x, 0, why, len)) < 0 || (rc = m->soi_mark(m->ctx, why, len)) < 0)
            return rc;
        const double margin = 3 * pp->noise;
        for (unsigned i = 0; i < n; i++) {
            say(m, "tolerated, %g %%: sample %u beside the SoI", x, k + 1);
            if ((rc = sample_timed(m, &bes[k], &w1, why, len)) == -ETIMEDOUT) {
                /* a bound, when the metric's relative performance is at most the wall time's and that is below QoS */
                const double bound = pp->timeout_s > 0 ? solo_wall / pp->timeout_s : NAN;
                if (!pp->wall_bound || !(bound < pp->qos)) {
                    char wy[256];
                    snprintf(wy, sizeof(wy), "%s", why);
                    *to = PROF_TO_BESIDE;
                    if (!pp->wall_bound)
                        return ib_why(why, len, rc, "beside the SoI at %g %%: %s; this metric is not bounded by a "
                                      "sample's wall time, so the point is neither a value nor a bound", x, wy);
                    return ib_why(why, len, rc, "beside the SoI at %g %%: %s; the solo samples took %.3g s, too close "
                                  "to the timeout for a bound below QoS", x, wy, solo_wall);
                }
                bes[k++] = pp->higher_better ? sm * bound : sm / bound;
                timed_out = 1;
                rc = 0;
                break; /* a sample past the timeout is not noise: waiting for more would cost a timeout each */
            }
            if (rc < 0)
                return rc;
            k++;
            if (round > 0 || !pp->sequential || pp->noise <= 0 || k < 2 || i + 1 >= n)
                continue;
            int above = 1, below = 1;
            for (unsigned j = 0; j < k; j++) {
                double r = rel_of(pp, bes[j], sm);
                above &= r > pp->qos + margin;
                below &= r < pp->qos - margin;
            }
            if (above || below)
                break; /* every sample so far is far on one side of QoS */
        }
        if ((rc = m->soi_read(m->ctx, &w, why, len)) < 0)
            return rc;
        if (timed_out) { /* the bound: the timed-out sample is the worst of the point, whatever the others read */
            v = bes[k - 1];
            rel = rel_of(pp, v, sm);
            se = 0;
            verdict = -1; /* a break by at least the bound: decided */
            break;
        }
        memcpy(t, bes, k * sizeof(double));
        v = ib_median(t, k);
        rel = rel_of(pp, v, sm);
        se = rel_se(rel, pp->noise, ns, k);
        verdict = prof_point_verdict(pp, rel, se);
        if (verdict != 0)
            break;
    }
    *p = (struct profile_point){.intensity = x, .value = v, .solo = sm, .relative = rel, .relative_se = se,
                                .achieved_pct = w.achieved_pct, .samples = k, .timed_out = timed_out,
                                .solo_samples = ns};
    p->meets_qos = verdict > 0;
    p->uncertain = verdict == 0;
    p->again = k > n; /* confirmed: more rounds were taken */
    if (timed_out)
        say(m, "tolerated, %g %%: a sample did not finish within %g s: relative <= %.3f, a QoS break", x,
            pp->timeout_s, p->relative);
    return 0;
}

/* The point estimate: where the measured relatives cross QoS, read linearly between the last point (by intensity,
 * alone at 0 counting 1.0) at or above QoS and the first below it. Every point counts, the uncertain ones too: they
 * are the best figures near the crossing, and the estimate is not a decision (the safe end is). Without a figure
 * below QoS, the first point that did not meet it. Clamped into the bracket. */
static double estimate(const struct prof_params *pp, const struct prof_tol_result *t, double search_hi)
{
    double xs[PROF_MAX_POINTS + 1], rs[PROF_MAX_POINTS + 1];
    unsigned n = 0;
    xs[n] = 0, rs[n++] = 1.0;
    for (unsigned i = 0; i < t->ncurve; i++) { /* sorted by intensity; a repeated intensity keeps its last figure */
        unsigned k = 0;
        while (k < n && xs[k] < t->curve[i].intensity)
            k++;
        if (k < n && xs[k] == t->curve[i].intensity) {
            rs[k] = t->curve[i].relative;
            continue;
        }
        memmove(xs + k + 1, xs + k, (n - k) * sizeof xs[0]);
        memmove(rs + k + 1, rs + k, (n - k) * sizeof rs[0]);
        xs[k] = t->curve[i].intensity, rs[k] = t->curve[i].relative, n++;
    }
    double x = search_hi; /* no figure below QoS: the search stopped at an uncertain point, the crossing is near it */
    for (unsigned k = 1; k < n; k++)
        if (rs[k] < pp->qos) {
            double r0 = rs[k - 1], r1 = rs[k];
            x = r0 > r1 ? xs[k - 1] + (xs[k] - xs[k - 1]) * (r0 - pp->qos) / (r0 - r1) : xs[k - 1];
            break;
        }
    return fmin(t->hi, fmax(t->lo, x));
}

/* The curve's point at intensity x, or NULL. */
static const struct profile_point *point_at(const struct prof_tol_result *t, double x)
{
    const struct profile_point *p = NULL;
    for (unsigned i = 0; i < t->ncurve; i++)
        if (t->curve[i].intensity == x)
            p = &t->curve[i]; /* a repeated intensity: its last figure */
    return p;
}

/* The floor bracket: the highest intensity whose point reads at or above pp->floor (0 and 1.0 when none) and the
 * lowest point above it that reads below the floor (*hi < 0 when none). */
static void floor_bracket(const struct prof_params *pp, const struct prof_tol_result *t, double *lo, double *rlo,
                          double *hi, double *rhi)
{
    *lo = 0, *rlo = 1.0, *hi = -1, *rhi = NAN;
    for (unsigned i = 0; i < t->ncurve; i++)
        if (t->curve[i].relative >= pp->floor && t->curve[i].intensity > *lo)
            *lo = t->curve[i].intensity, *rlo = t->curve[i].relative;
    for (unsigned i = 0; i < t->ncurve; i++)
        if (t->curve[i].relative < pp->floor && t->curve[i].intensity > *lo && (*hi < 0 || t->curve[i].intensity < *hi))
            *hi = t->curve[i].intensity, *rhi = t->curve[i].relative;
}

/* One depth point at x, appended. A sample beside the SoI past its timeout that gives no bound (a metric not
 * bounded by the wall time) ends the depth there, not the SoI: what the search measured stands (1 returned). */
static int depth_point(const struct prof_params *pp, struct prof_meter *m, double base, struct prof_tol_result *out,
                       double x, enum prof_timeout *to, char *why, size_t len)
{
    struct profile_point p;
    int rc = point(pp, m, x, base, &p, to, why, len);
    if (rc == -ETIMEDOUT && *to == PROF_TO_BESIDE) {
        *to = PROF_TO_NONE;
        return 1;
    }
    if (rc < 0)
        return rc;
    out->curve[out->ncurve++] = p;
    out->depth_points++;
    return 0;
}

/* The depth (profile_method.h): 100 % when not measured (nor tried first), then where the curve falls below the
 * floor. */
static int depth(const struct prof_params *pp, struct prof_meter *m, double base, struct prof_tol_result *out,
                 int top_tried, double *x, enum prof_timeout *to, char *why, size_t len)
{
    const uint64_t t0 = m->now_ns(m->ctx);
    int rc = 0;
    if (!point_at(out, 100) && !top_tried && out->ncurve < PROF_MAX_POINTS) {
        *x = 100;
        rc = depth_point(pp, m, base, out, 100, to, why, len);
    }
    double lo, rlo, hi, rhi;
    for (unsigned b = 0; rc == 0 && out->ncurve < PROF_MAX_POINTS; b++) {
        floor_bracket(pp, out, &lo, &rlo, &hi, &rhi);
        if (hi < 0 || hi - lo < 1) /* never below the floor, or located within a point of intensity */
            break;
        if (b >= pp->floor_steps && hi - lo <= PROF_FLOOR_WIDTH) /* the steps taken, and located closely enough */
            break;
        *x = 0.5 * (lo + hi);
        rc = depth_point(pp, m, base, out, *x, to, why, len);
    }
    if (rc < 0)
        return rc;
    const struct profile_point *at = point_at(out, 100);
    out->have_depth = at != NULL;
    out->depth_rel = at ? at->relative : NAN;
    out->depth_se = at ? at->relative_se : NAN;
    floor_bracket(pp, out, &lo, &rlo, &hi, &rhi);
    out->below_floor_at = hi < 0 ? NAN : rlo > rhi ? lo + (hi - lo) * (rlo - pp->floor) / (rlo - rhi) : lo;
    out->depth_s = (double)(m->now_ns(m->ctx) - t0) / 1e9;
    return 0;
}

int prof_tolerated(const struct prof_params *pp, struct prof_meter *m, double base, struct prof_tol_result *out,
                   char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    double lo = 0, hi = -1, x = 0;
    int rc = 0;
    struct profile_point p;
    enum prof_timeout to = PROF_TO_NONE;
    /* Flat first (profile_method.h): with the depth on, 100 % is measured whatever the search finds, so first; a
     * point there that meets QoS beyond its noise ends the search. A sample past its timeout there that bounds
     * nothing ends that point only, as in the depth; the ramp stops where it would measure 100 % again. */
    int top_tried = 0;
    char top_why[256] = "";
    if (prof_flat_first(pp)) {
        x = 100;
        top_tried = 1;
        rc = point(pp, m, 100, base, &p, &to, why, len);
        if (rc == -ETIMEDOUT && to == PROF_TO_BESIDE) {
            snprintf(top_why, sizeof(top_why), "%s", why);
            rc = 0;
            to = PROF_TO_NONE;
        } else if (rc == 0) {
            out->curve[out->ncurve++] = p;
            if (p.meets_qos)
                lo = 100;
        }
    }
    for (x = 25; x <= 100 && lo < 100 && rc == 0; x += 25) {
        const struct profile_point *top = x == 100 ? point_at(out, 100) : NULL;
        if (top) {
            p = *top; /* measured first */
        } else if (x == 100 && top_tried) { /* it timed out, bounding nothing: the search stops there, as it would */
            to = PROF_TO_BESIDE;
            rc = ib_why(why, len, -ETIMEDOUT, "%s", top_why);
            break;
        } else {
            if ((rc = point(pp, m, x, base, &p, &to, why, len)) < 0)
                break;
            out->curve[out->ncurve++] = p;
        }
        if (!p.meets_qos) { /* broke it, or could not be told from it: the safe end stays below */
            hi = x;
            break;
        }
        lo = x;
    }
    for (unsigned b = 0; b < pp->bisect_steps && rc == 0 && hi > 0 && out->ncurve < PROF_MAX_POINTS; b++) {
        x = 0.5 * (lo + hi);
        if ((rc = point(pp, m, x, base, &p, &to, why, len)) < 0)
            break;
        out->curve[out->ncurve++] = p;
        if (p.meets_qos)
            lo = x;
        else
            hi = x;
    }
    out->below_floor_at = out->depth_rel = out->depth_se = NAN;
    if (rc == 0 && pp->floor > 0)
        rc = depth(pp, m, base, out, top_tried, &x, &to, why, len);
    for (unsigned i = 0; i < out->ncurve; i++)
        out->ntimed_out += out->curve[i].timed_out != 0;
    char hw[256] = "";
    int hr = m->soi_hold(m->ctx, 0, 0, hw, sizeof(hw));
    if (rc < 0)
        out->timeout_at = x;
    if (rc == -ETIMEDOUT)
        out->timeout = to;
    if (rc < 0)
        return rc;
    if (hr < 0 && hr != -EINTR) /* a stop after the last point leaves the search whole; the adapter stops the SoI */
        return ib_why(why, len, hr, "%s", hw);
    /* The bracket: from the safe end (the highest point that met QoS beyond its noise, every lower one having met
     * it too) to the lowest point that broke QoS beyond its noise, 100 when none did: an uncertain point may lie
     * either side of the truth, so it closes neither end. Read from every point, the depth's too (a floor bisection
     * may land inside the QoS bracket). */
    for (unsigned i = 0; i < out->ncurve; i++) {
        int below = 1; /* every point at or below this one met QoS */
        for (unsigned j = 0; j < out->ncurve; j++)
            below &= out->curve[j].intensity > out->curve[i].intensity || out->curve[j].meets_qos;
        if (below && out->curve[i].intensity > lo)
            lo = out->curve[i].intensity;
    }
    out->lo = lo;
    out->hi = 100;
    for (unsigned i = 0; i < out->ncurve; i++)
        if (!out->curve[i].meets_qos && !out->curve[i].uncertain && out->curve[i].intensity < out->hi &&
            out->curve[i].intensity > lo)
            out->hi = out->curve[i].intensity;
    out->tolerated = hi < 0 ? 100 : estimate(pp, out, hi);
    return 0;
}

/* ---- bursts (profile_method.h, "Bursts") ------------------------------------------------------------------------ */

int prof_bursts_due(const struct prof_params *pp, const struct prof_meter *m, const struct prof_tol_result *t)
{
    const struct profile_point *at = point_at(t, 100);
    return pp->nburst_on > 0 && m->soi_wave && at && !at->meets_qos && !at->uncertain;
}

/* The burst point of on-length on_s: solo, then the wave until enough samples and periods (the header's rule). */
static int burst_point(const struct prof_params *pp, struct prof_meter *m, double base, double on_s,
                       struct profile_burst *b, enum prof_timeout *to, char *why, size_t len)
{
    const unsigned n = pp->samples < 1 ? 1 : pp->samples > PROF_MAX_SAMPLES ? PROF_MAX_SAMPLES : pp->samples;
    const double off_s = on_s, period = on_s + off_s, cap = fmax(PROF_BURST_PERIODS * period, PROF_BURST_CAP_S);
    const uint64_t t0 = m->now_ns(m->ctx);
    double solo[PROF_MAX_SAMPLES], wall[PROF_MAX_SAMPLES], sm = base, solo_wall = 0;
    unsigned ns = 0;
    int rc = local_solo(pp, m, "bursts", on_s, 1, n, base, solo, wall, &ns, &sm, &solo_wall, to, why, len);
    if (rc < 0)
        return rc;
    if ((rc = m->soi_wave(m->ctx, PROF_BURST_LEVEL, on_s, off_s, why, len)) < 0)
        return rc;
    const uint64_t w0 = m->now_ns(m->ctx);
    /* Running sums (a short victim beside long bursts takes many samples): the work done, each sample's relative
     * times its wall time, and the time; per sample and per block of whole periods (batch means). */
    double sw = 0, sd = 0, sr = 0, sr2 = 0, bw = 0, bd = 0, mb = 0, mb2 = 0, el = 0, next = period;
    unsigned k = 0, blocks = 0;
    int timed_out = 0;
    while ((k < n && el < cap) || el < PROF_BURST_PERIODS * period) {
        double v, w;
        say(m, "bursts of %g s: sample %u beside the SoI", on_s, k + 1);
        if ((rc = sample_timed(m, &v, &w, why, len)) == -ETIMEDOUT) {
            if (!pp->wall_bound || !(pp->timeout_s > 0)) {
                char wy[256];
                snprintf(wy, sizeof(wy), "%s", why);
                *to = PROF_TO_BESIDE;
                return ib_why(why, len, rc, "beside bursts of %g s: %s; this metric is not bounded by a sample's wall "
                              "time, so the burst is neither a value nor a bound", on_s, wy);
            }
            const double bound = solo_wall / pp->timeout_s;
            v = pp->higher_better ? sm * bound : sm / bound;
            timed_out = 1;
            rc = 0;
        }
        if (rc < 0)
            return rc;
        const double r = rel_of(pp, v, sm);
        k++;
        sw += r * w, sd += w, sr += r, sr2 += r * r, bw += r * w, bd += w;
        el = (double)(m->now_ns(m->ctx) - w0) / 1e9;
        if (el >= next && bd > 0) { /* a block of whole periods closes */
            mb += bw / bd, mb2 += (bw / bd) * (bw / bd), blocks++;
            bw = bd = 0;
            next = (floor(el / period) + 1) * period;
        }
        if (timed_out)
            break; /* a sample past the timeout is not noise: waiting for more would cost a timeout each */
    }
    /* The work over the time against solo (sw / sd: sm / mean for equal-work samples of a lower-is-better metric,
     * mean / sm for equal-time ones of a higher-is-better one), read over whole periods: the span's last period is
     * partial, and samples end rarely inside an on phase that slows them, so the span overweights on time. The
     * span's own on and off time (the wave's schedule) give the on speed, and whole periods weigh it on/P. */
    const double per = sd > 0 ? sw / sd : 0, whole = floor(el / period), rem = el - whole * period;
    const double on_t = whole * on_s + fmin(rem, on_s), on_share = on_s / period;
    const double span_on = el > 0 ? on_t / el : on_share;
    const double x_on = (per - (1 - span_on)) / span_on, rel = fmax(0, (1 - on_share) + on_share * x_on);
    double cv; /* the work rate's relative standard error */
    if (blocks >= 2) {
        const double bm = mb / blocks;
        cv = sqrt(fmax(0, (mb2 - blocks * bm * bm) / (blocks - 1)) / blocks) / bm;
    } else if (k >= 2) {
        const double rm = sr / k;
        cv = sqrt(fmax(0, (sr2 - k * rm * rm) / (k - 1)) / k) / rm;
    } else {
        cv = pp->noise;
    }
    *b = (struct profile_burst){.on_s = on_s, .off_s = off_s, .level = PROF_BURST_LEVEL, .relative = rel,
                                .relative_se = timed_out ? NAN : rel * sqrt(pow(1.2533 * pp->noise, 2) / ns + cv * cv),
                                .on_relative = fmin(1, fmax(0, (rel - (1 - on_share)) / on_share)), .samples = k,
                                .seconds = (double)(m->now_ns(m->ctx) - t0) / 1e9, .timed_out = timed_out};
    say(m, "bursts of %g s: relative %.3f, on %.3f (%u samples, %.3g periods)%s", on_s, rel, b->on_relative, k,
        el / period, timed_out ? ", a bound: a sample ran out of time" : "");
    return 0;
}

int prof_bursts(const struct prof_params *pp, struct prof_meter *m, double base, const struct prof_tol_result *t,
                struct prof_burst_result *out, char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    out->at_on_s = NAN;
    if (!prof_bursts_due(pp, m, t))
        return 0;
    double on[PROFILE_MAX_BURSTS];
    unsigned n = pp->nburst_on > PROFILE_MAX_BURSTS ? PROFILE_MAX_BURSTS : pp->nburst_on;
    memcpy(on, pp->burst_on_s, n * sizeof(double));
    for (unsigned i = 1; i < n; i++) /* sorted by on_s */
        for (unsigned j = i; j > 0 && on[j] < on[j - 1]; j--) {
            double x = on[j];
            on[j] = on[j - 1], on[j - 1] = x;
        }
    const uint64_t t0 = m->now_ns(m->ctx);
    int rc = 0;
    enum prof_timeout to = PROF_TO_NONE;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        if (i && on[i] == on[i - 1])
            continue;
        if ((rc = burst_point(pp, m, base, on[i], &out->b[out->n], &to, why, len)) < 0)
            out->at_on_s = on[i];
        else
            out->n++;
    }
    char hw[256] = "";
    int hr = m->soi_hold(m->ctx, 0, 0, hw, sizeof(hw));
    out->seconds = (double)(m->now_ns(m->ctx) - t0) / 1e9;
    if (rc == -ETIMEDOUT)
        out->timeout = to;
    if (rc < 0)
        return rc;
    if (hr < 0 && hr != -EINTR) /* a stop after the last burst leaves them whole; the adapter stops the SoI */
        return ib_why(why, len, hr, "%s", hw);
    return 0;
}

double prof_rounds_se(const double *v, unsigned n)
{
    if (n < 2)
        return 0;
    double mean;
    double sd = sd_of(v, n, &mean);
    return 1.2533 * sd / sqrt((double)n) * ib_t975(n - 1) / 1.96 * sqrt(1 + (double)(n - 1) / (3.0 * n));
}

/* One window of the SoI: wait, read. */
static int window(const struct prof_params *pp, struct prof_meter *m, struct prof_window *w, char *why, size_t len)
{
    int rc = m->soi_mark(m->ctx, why, len);
    if (rc == 0)
        rc = m->wait_ms(m->ctx, pp->caused_window_ms, why, len);
    if (rc == 0)
        rc = m->soi_read(m->ctx, w, why, len);
    return rc;
}

static int caused_rounds(const struct prof_params *pp, struct prof_meter *m, double *c, double *cl, double *a_rate,
                         double *b_rate, unsigned *nr, double *occ, unsigned *nocc, char *why, size_t len)
{
    /* a standard error needs rounds to come from: fewer than 3 would make it 0 (1 round) or a guess (2) */
    const unsigned minr = pp->caused_min_rounds < PROF_MIN_ROUNDS ? PROF_MIN_ROUNDS : pp->caused_min_rounds;
    unsigned maxr = pp->caused_max_rounds > PROF_MAX_ROUNDS ? PROF_MAX_ROUNDS : pp->caused_max_rounds;
    maxr = maxr < minr ? minr : maxr;
    const uint64_t budget = (uint64_t)(pp->caused_budget_s * 1e9);
    double alone[PROF_MAX_ROUNDS + 1], ashare[PROF_MAX_ROUNDS + 1];
    struct prof_window w;
    int rc = m->soi_hold(m->ctx, pp->caused_level, 1, why, len);
    const uint64_t t0 = m->now_ns(m->ctx); /* the budget is the rounds': growing a footprint is not in it */
    if (rc == 0)
        rc = m->wait_ms(m->ctx, pp->settle_ms, why, len);
    if (rc == 0)
        rc = window(pp, m, &w, why, len);
    if (rc < 0)
        return rc;
    if (!(w.rate_cpu > 0) || !isfinite(w.rate_cpu))
        return ib_why(why, len, -ENODATA, "the SoI did no measurable work alone at %g %% to read its rate from",
                      pp->caused_level);
    alone[0] = w.rate_cpu;
    ashare[0] = w.cpu_share;
    a_rate[0] = w.rate_cpu;
    *nr = 0;
    *nocc = 0;
    for (unsigned r = 1; r <= maxr; r++) {
        /* beside: the work on, settled */
        if ((rc = m->work(m->ctx, 1, why, len)) < 0 || (rc = m->wait_ms(m->ctx, pp->settle_ms, why, len)) < 0 ||
            (rc = window(pp, m, &w, why, len)) < 0)
            break;
        double brate = w.rate_cpu, bshare = w.cpu_share, o;
        if (m->occupancy && m->occupancy(m->ctx, &o, why, len) == 0 && isfinite(o))
            occ[(*nocc)++] = o;
        /* alone again: the work paused, settled */
        if ((rc = m->work(m->ctx, 0, why, len)) < 0 || (rc = m->wait_ms(m->ctx, pp->settle_ms, why, len)) < 0 ||
            (rc = window(pp, m, &w, why, len)) < 0)
            break;
        alone[r] = w.rate_cpu;
        ashare[r] = w.cpu_share;
        a_rate[r] = w.rate_cpu;
        b_rate[r - 1] = brate;
        double ref = 0.5 * (alone[r - 1] + alone[r]), sref = 0.5 * (ashare[r - 1] + ashare[r]);
        c[r - 1] = ref > 0 && isfinite(brate) ? 100 * (1 - brate / ref) : NAN;
        cl[r - 1] = sref > 0 ? 100 * (1 - bshare / sref) : NAN;
        *nr = r;
        if (!isfinite(c[r - 1])) {
            rc = ib_why(why, len, -ENODATA, "the SoI did no measurable work in a window to read its rate from");
            break;
        }
        if (r < minr)
            continue;
        /* more rounds while the error predicted from the alone windows' own spread is above the target */
        double pred = 1.2533 * 100 * rsd(alone, r + 1) * sqrt(1.5) / sqrt((double)r);
        double se = prof_rounds_se(c, r);
        if ((pred <= pp->caused_se_target && se <= 2 * pp->caused_se_target) ||
            m->now_ns(m->ctx) - t0 >= budget)
            break;
    }
    int wr = m->work(m->ctx, 0, why, len);
    return rc < 0 ? rc : wr;
}

int prof_caused(const struct prof_params *pp, struct prof_meter *m, struct profile_caused *out, char *why,
                size_t len)
{
    double c[PROF_MAX_ROUNDS], cl[PROF_MAX_ROUNDS], a[PROF_MAX_ROUNDS + 1], b[PROF_MAX_ROUNDS],
        occ[PROF_MAX_ROUNDS], t[PROF_MAX_ROUNDS + 1];
    unsigned n = 0, nocc = 0;
    say(m, "caused, %g %%: alone and beside the working target, alternating", pp->caused_level);
    int rc = caused_rounds(pp, m, c, cl, a, b, &n, occ, &nocc, why, len);
    char hw[256] = "";
    int hr = m->soi_hold(m->ctx, 0, 0, hw, sizeof(hw));
    if (rc == -ENODATA) { /* no figure rather than a made-up one */
        out->value = out->se = out->alone = out->beside = out->cpu_lost_pct = out->cpu_lost_se = NAN;
        out->distinguishable = -1;
        out->reason = strdup(why);
        rc = 0;
    }
    if (rc < 0)
        return rc;
    if (hr < 0 && hr != -EINTR) /* a stop after the last round leaves the rounds whole */
        return ib_why(why, len, hr, "%s", hw);
    if (out->reason)
        return 0;
    out->basis = strdup("cpu-second");
    out->unthrottled = 1;
    out->rounds = n ? malloc(n * sizeof(double)) : NULL;
    if (!out->basis || (n && !out->rounds))
        return ib_why(why, len, -ENOMEM, "out of memory");
    memcpy(out->rounds, c, n * sizeof(double));
    out->nrounds = n;
    memcpy(t, c, n * sizeof(double));
    out->value = ib_median(t, n);
    out->se = prof_rounds_se(c, n);
    out->distinguishable = fabs(out->value) > 2 * out->se;
    memcpy(t, cl, n * sizeof(double));
    out->cpu_lost_pct = ib_median(t, n);
    out->cpu_lost_se = prof_rounds_se(cl, n);
    memcpy(t, a, (n + 1) * sizeof(double));
    out->alone = ib_median(t, n + 1);
    memcpy(t, b, n * sizeof(double));
    out->beside = ib_median(t, n);
    out->occupancy_pct = nocc ? ib_median(occ, nocc) : NAN;
    say(m, "caused %+.1f +- %.1f %% over %u rounds (cpu lost %+.1f %%)", out->value, out->se, n, out->cpu_lost_pct);
    return 0;
}

/* ---- caused counted by the kernel (profile_method.h, prof_caused_counted) ------------------------------------ */

const char *prof_counted_text(const struct profile_caused *c, char *buf, size_t len)
{
    char f1[48], f2[48];
    const char *res = c->counted_res ? c->counted_res : "?", *unit = c->counted_unit ? c->counted_unit : "";
    fmt_scaled(c->counted_mean, 1, -1, unit, f2, sizeof(f2));
    if (c->counted_floor > 0)
        snprintf(buf, len, "its %s under %s in all %u windows (mean %s)", res,
                 fmt_scaled(c->counted_floor, 1, -1, unit, f1, sizeof(f1)), c->counted_windows, f2);
    else
        snprintf(buf, len, "its %s, %s on the mean over %u windows", res, f2, c->counted_windows);
    return buf;
}

int prof_caused_counted(const struct profile *p, const struct profile_soi *e, struct profile_caused *c)
{
    if (!p->have_usage || !(e->capacity > 0) || !p->nbefore)
        return 0;
    double run_s = NAN; /* a solo sample's wall time: one run of the work */
    for (unsigned i = 0; i < p->nphases; i++)
        if (!strcmp(p->phases[i].phase, "baseline before"))
            run_s = p->phases[i].wall_s / p->nbefore;
    if (!(p->usage.seconds >= run_s))
        return 0;
    for (unsigned i = 0; i < p->usage.nres; i++) {
        const struct profile_usage_res *x = &p->usage.res[i];
        const char *soi = profile_usage_soi(x->name);
        if (!soi || strcmp(soi, e->soi) || !(x->floor >= 0) || !profile_usage_unit_ok(x->unit, e->capacity_unit))
            continue;
        const int footprint = x->floor == 0; /* never noise: what it holds is what it presses */
        unsigned n = 0;
        double sum = 0, ss = 0;
        for (unsigned k = 0; k < x->nwindows; k++) {
            if (!isfinite(x->windows[k]))
                continue;
            if (!footprint && x->windows[k] > x->floor)
                return 0; /* the target pressed it at least once: the rounds say how much a neighbour feels */
            n++;
            sum += x->windows[k];
        }
        if (n < PROF_COUNTED_MIN_WINDOWS)
            return 0;
        const double mean = sum / n;
        for (unsigned k = 0; k < x->nwindows; k++)
            if (isfinite(x->windows[k]))
                ss += (x->windows[k] - mean) * (x->windows[k] - mean);
        const double sd = sqrt(ss / (n - 1));
        free(c->basis);
        free(c->unit);
        c->basis = strdup("counted");
        c->unit = strdup("% of the SoI's capacity (counted)");
        c->counted_res = strdup(x->name);
        c->counted_unit = strdup(x->unit);
        if (!c->basis || !c->unit || !c->counted_res || !c->counted_unit)
            return -ENOMEM;
        c->counted_mean = mean;
        c->counted_floor = x->floor;
        c->counted_windows = n;
        c->value = 100 * mean / e->capacity;
        c->se = 100 * sd / sqrt(n) / e->capacity;
        /* every window under the floor: nothing a neighbour could tell from noise; a footprint: its occupancy */
        c->distinguishable = footprint && fabs(c->value) > 2 * c->se;
        if (footprint) {
            c->occupancy_pct = c->value;
            if (!(c->occupancy_what = strdup(x->name)))
                return -ENOMEM;
        }
        return 1;
    }
    return 0;
}

/* ---- caused through a reference (soi_ops.caused_ref) ---------------------------------------------------------- */

const double PROF_REF_LEVELS[PROF_REF_NLEVELS] = {0, 25, 50, 75, 100};

double prof_ref_equiv(const double *lv, const double *rel, unsigned n, double r)
{
    if (n < 2 || !isfinite(r) || !(rel[n - 1] < rel[0]))
        return NAN;
    if (r >= rel[0]) { /* faster than alone: beyond the first segment that falls */
        unsigned k = 1;
        while (k < n && !(rel[k] < rel[0]))
            k++;
        return lv[0] - (r - rel[0]) * (lv[k] - lv[0]) / (rel[0] - rel[k]);
    }
    for (unsigned k = 1; k < n; k++)
        if (r >= rel[k]) /* rel[k-1] > r >= rel[k]: the segment falls (the lowest such) */
            return lv[k - 1] + (rel[k - 1] - r) * (lv[k] - lv[k - 1]) / (rel[k - 1] - rel[k]);
    /* below the last point: beyond the last segment that falls */
    unsigned k = n - 1;
    while (k > 0 && !(rel[k - 1] > rel[n - 1]))
        k--;
    return lv[n - 1] + (rel[n - 1] - r) * (lv[n - 1] - lv[k - 1]) / (rel[k - 1] - rel[n - 1]);
}

/* The equivalent intensity, within the calibration's range: 0 for a reference at least as fast as alone, 100 for
 * one slower than beside the SoI at 100 % (a pressure is capped at 100 anyway). */
static double ref_equiv_clamped(const struct profile_caused *c, double r)
{
    double x = prof_ref_equiv(c->ref_levels, c->ref_rel, c->nref, r);
    return isfinite(x) ? fmin(c->ref_levels[c->nref - 1], fmax(0, x)) : x;
}

static int ref_window(const struct prof_params *pp, struct prof_meter *m, double *rate, char *why, size_t len)
{
    int rc = m->wait_ms(m->ctx, pp->settle_ms, why, len);
    return rc < 0 ? rc : m->ref_window(m->ctx, rate, why, len);
}

int prof_caused_ref(const struct prof_params *pp, struct prof_meter *m, const char *probe, struct profile_caused *out,
                    char *why, size_t len)
{
    if (!m->ref_curve || !m->ref_window)
        return ib_why(why, len, -ENOTSUP, "no reference to measure caused on");
    double rel[PROF_REF_NLEVELS], rel_se[PROF_REF_NLEVELS];
    say(m, "caused: the %s reference beside the SoI at 0-100 %%, its scale", probe);
    int rc = m->soi_hold(m->ctx, 0, 0, why, len);
    if (rc == 0)
        rc = m->ref_curve(m->ctx, PROF_REF_LEVELS, PROF_REF_NLEVELS, rel, rel_se, why, len);
    if (rc < 0)
        return rc;
    out->ref_probe = strdup(probe);
    out->basis = strdup("reference");
    if (!out->ref_probe || !out->basis)
        return ib_why(why, len, -ENOMEM, "out of memory");
    out->nref = PROF_REF_NLEVELS;
    for (unsigned k = 0; k < PROF_REF_NLEVELS; k++) { /* more of the SoI never helps: a running minimum, from 1 */
        double v = k == 0 ? 1.0 : isfinite(rel[k]) && rel[k] > 0 ? rel[k] / rel[0] : NAN;
        out->ref_levels[k] = PROF_REF_LEVELS[k];
        out->ref_rel[k] = k == 0 ? 1.0 : isfinite(v) ? fmin(v, out->ref_rel[k - 1]) : out->ref_rel[k - 1];
    }
    const double top = 1 - out->ref_rel[PROF_REF_NLEVELS - 1];
    out->value = out->se = out->alone = out->beside = NAN;
    out->distinguishable = -1;
    if (!(top >= PROF_REF_MIN_EFFECT)) {
        char r[200];
        snprintf(r, sizeof r, "the %s reference slowed by %.1f %% beside the SoI at 100 %% (under %.0f %%): no scale to "
                 "read the target's effect on", probe, 100 * top, 100 * PROF_REF_MIN_EFFECT);
        return (out->reason = strdup(r)) ? 0 : ib_why(why, len, -ENOMEM, "out of memory");
    }
    const unsigned minr = pp->caused_min_rounds < PROF_MIN_ROUNDS ? PROF_MIN_ROUNDS : pp->caused_min_rounds;
    unsigned maxr = pp->caused_max_rounds > PROF_MAX_ROUNDS ? PROF_MAX_ROUNDS : pp->caused_max_rounds;
    maxr = maxr < minr ? minr : maxr;
    const uint64_t budget = (uint64_t)(pp->caused_budget_s * 1e9), t0 = m->now_ns(m->ctx);
    double a[PROF_MAX_ROUNDS + 1], b[PROF_MAX_ROUNDS], q[PROF_MAX_ROUNDS], t[PROF_MAX_ROUNDS + 1];
    unsigned n = 0;
    say(m, "caused: the %s reference alone and beside the working target, alternating", probe);
    rc = m->work(m->ctx, 0, why, len);
    if (rc == 0)
        rc = ref_window(pp, m, &a[0], why, len);
    for (unsigned r = 1; rc == 0 && r <= maxr; r++) {
        if ((rc = m->work(m->ctx, 1, why, len)) < 0 || (rc = ref_window(pp, m, &b[r - 1], why, len)) < 0 ||
            (rc = m->work(m->ctx, 0, why, len)) < 0 || (rc = ref_window(pp, m, &a[r], why, len)) < 0)
            break;
        const double base = 0.5 * (a[r - 1] + a[r]);
        if (!(base > 0) || !isfinite(b[r - 1])) {
            rc = ib_why(why, len, -EIO, "the %s reference did no measurable work in a window", probe);
            break;
        }
        q[r - 1] = 100 * b[r - 1] / base; /* the reference's speed beside the target, % of alone */
        n = r;
        if (r < minr)
            continue;
        double pred = 1.2533 * 100 * rsd(a, r + 1) * sqrt(1.5) / sqrt((double)r);
        if ((pred <= pp->caused_se_target && prof_rounds_se(q, r) <= 2 * pp->caused_se_target) ||
            m->now_ns(m->ctx) - t0 >= budget)
            break;
    }
    int wr = m->work(m->ctx, 0, why, len);
    if (rc == 0)
        rc = wr;
    if (rc < 0)
        return rc;
    out->rounds = malloc(n * sizeof(double));
    if (!out->rounds)
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < n; i++)
        out->rounds[i] = ref_equiv_clamped(out, q[i] / 100);
    out->nrounds = n;
    /* decided in the reference's own terms, where its noise is its own: the MEAN relative speed and its se (a
     * program beside the target lives through its bursts -- a buffered writer's writeback slows a reader in some
     * windows and not others, and a median of rounds would discard exactly those), then read on the calibration. A
     * calibration flat over most of its range (a disk hurts a reader only once saturated) would turn each round's
     * noise into tens of points of intensity, so rounds are not averaged after mapping: the mean is mapped, and so
     * is the interval of one se around it. */
    double mean = 0, sdq = n > 1 ? sd_of(q, n, &mean) : (mean = q[0], 0);
    const double med = mean / 100,
                 se_rel = n > 1 ? sdq / sqrt((double)n) * ib_t975(n - 1) / 1.96 * sqrt(1 + (double)(n - 1) / (3.0 * n)) / 100
                                : 0;
    (void)t;
    out->value = ref_equiv_clamped(out, med);
    const double sr = fabs(ref_equiv_clamped(out, med - se_rel) - ref_equiv_clamped(out, med + se_rel)) / 2;
    /* the calibration's own uncertainty at that point, interpolated, through the curve */
    double h = 0;
    for (unsigned k = 1; k < out->nref; k++)
        if (out->value <= out->ref_levels[k] || k == out->nref - 1) {
            double f = (out->value - out->ref_levels[k - 1]) / (out->ref_levels[k] - out->ref_levels[k - 1]);
            f = fmin(1, fmax(0, f));
            double s0 = k - 1 == 0 || !isfinite(rel_se[k - 1]) ? 0 : rel_se[k - 1]; /* level 0 is the scale's 1 */
            double s1 = isfinite(rel_se[k]) ? rel_se[k] : 0;
            h = s0 + f * (s1 - s0);
            break;
        }
    const double sc = h > 0 ? fabs(ref_equiv_clamped(out, med - h) - ref_equiv_clamped(out, med + h)) / 2 : 0;
    out->se = sqrt(sr * sr + sc * sc);
    out->distinguishable = 1 - med > 2 * se_rel; /* slowed beyond its noise; faster than alone counts 0 */
    memcpy(t, a, (n + 1) * sizeof(double));
    out->alone = ib_median(t, n + 1);
    memcpy(t, b, n * sizeof(double));
    out->beside = ib_median(t, n);
    say(m, "caused %.1f +- %.1f %% (equivalent intensity; the %s reference at %.3f of its speed alone) over %u rounds",
        out->value, out->se, probe, med, n);
    return 0;
}

void prof_phase_begin(struct prof_meter *m, struct prof_phase_mark *k)
{
    char w[128];
    k->ok = m->pressure && m->pressure(m->ctx, &k->a, w, sizeof(w)) == 0;
}

void prof_phase_end(struct prof_meter *m, const struct prof_phase_mark *k, struct ib_pressure *out)
{
    struct ib_pressure_snap b;
    char w[128];
    if (k->ok && m->pressure(m->ctx, &b, w, sizeof(w)) == 0) {
        ib_pressure_delta(&k->a, &b, out);
        return;
    }
    *out = (struct ib_pressure){.wall_s = 0, .steal_pct = NAN};
    for (int r = 0; r < IB_PSI_N; r++)
        out->some_pct[r] = out->full_pct[r] = NAN;
}

void prof_phase_figures(const struct ib_pressure *pr, struct profile_phase *out)
{
    *out = (struct profile_phase){.wall_s = pr->wall_s,
                                  .cpu_some = pr->some_pct[IB_PSI_CPU],
                                  .io_some = pr->some_pct[IB_PSI_IO],
                                  .io_full = pr->full_pct[IB_PSI_IO],
                                  .memory_some = pr->some_pct[IB_PSI_MEM],
                                  .memory_full = pr->full_pct[IB_PSI_MEM],
                                  .steal = pr->steal_pct};
}

/* ---- a whole profile (profile_method.h, "a whole profile") ------------------------------------------------------ */

char *prof_dupf(const char *fmt, ...)
{
    char *p = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&p, fmt, ap) < 0)
        p = NULL;
    va_end(ap);
    return p;
}

static char *sdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int oom(char *why, size_t len)
{
    return ib_why(why, len, -ENOMEM, "out of memory");
}

static int raised(const atomic_int *stop)
{
    return stop && atomic_load(stop);
}

/* The stop's doing: -EINTR, or any failure while the stop flag is up (a child the same Ctrl-C killed, a service that
 * went with it); running out of memory is not. */
static int stopped(int rc, const atomic_int *stop)
{
    return rc == -EINTR || (rc < 0 && rc != -ENOMEM && raised(stop));
}

/* The pressure over a phase that began at k, into p->phases. */
static int phase_done(struct prof_meter *m, const struct prof_phase_mark *k, struct profile *p, const char *phase,
                      const char *soi, char *why, size_t len)
{
    struct ib_pressure pr;
    struct profile_phase f;
    prof_phase_end(m, k, &pr);
    prof_phase_figures(&pr, &f);
    return profile_add_phase(p, phase, soi, &f) < 0 ? oom(why, len) : 0;
}

/* Listed, as every SoI asked for is, with why it was not measured. */
static int not_measured(struct profile *p, struct profile_soi *e, char *reason)
{
    e->status = PROFILE_INCOMPLETE;
    free(e->reason);
    e->reason = reason;
    return !reason ? -ENOMEM : profile_add_missing(p, "tolerated", e->soi, NAN, reason);
}

/* An SoI's tolerated search cut short (a timeout, prof_tolerated's comment, or a stop): the entry is incomplete with
 * the points that finished; the point under way is listed. */
static int cut_short(struct profile *p, struct profile_soi *e, const struct prof_tol_result *t, const char *w)
{
    e->status = PROFILE_INCOMPLETE;
    free(e->reason);
    e->reason = prof_dupf("tolerated cut short at %g %%: %s", t->timeout_at, w);
    if (t->ncurve && (e->curve = calloc(t->ncurve, sizeof(*e->curve)))) {
        memcpy(e->curve, t->curve, t->ncurve * sizeof(*e->curve));
        e->ncurve = t->ncurve;
    }
    return !e->reason || (t->ncurve && !e->curve) ? -ENOMEM
                                                  : profile_add_missing(p, "tolerated", e->soi, t->timeout_at, w);
}

/* Caused stopped during its rounds: no figure (a part of its rounds is not the median of them), the reason, listed.
 * Nothing of a reference is kept: its calibration without rounds reads nothing, and the adapter names its unit only
 * once caused is measured. */
static int caused_cut(struct profile *p, const struct profile_soi *e, struct profile_caused *c, const char *reason)
{
    free(c->rounds);
    c->rounds = NULL;
    c->nrounds = 0;
    free(c->basis);
    free(c->ref_probe);
    free(c->ref_unit);
    free(c->counted_res);
    free(c->counted_unit);
    c->basis = c->ref_probe = c->ref_unit = c->counted_res = c->counted_unit = NULL;
    c->nref = 0;
    c->value = c->se = c->alone = c->beside = c->cpu_lost_pct = c->cpu_lost_se = c->occupancy_pct = NAN;
    c->distinguishable = -1;
    free(c->reason);
    c->reason = strdup(reason);
    if (!c->unit) /* the adapter sets it first; a file must have one */
        c->unit = strdup("-");
    return !c->reason || !c->unit ? -ENOMEM
                                  : profile_add_missing(p, "caused", e->soi, c->intensity, c->reason);
}

/* The bursts of a measured SoI (profile_method.h, "Bursts") into e, which keeps the bursts measured whatever
 * happens. A stop or a solo sample past its timeout raises *halt (a stop *intr too): the burst under way and caused
 * are listed missing (caused NAN with its reason). A sample beside the wave that gives no bound ends the bursts, listed;
 * caused follows. A bound is listed as the tolerated search lists its bounds. 0, or -errno that ends the profile. */
static int soi_bursts(const struct prof_params *pp, struct prof_meter *m, double base, const struct prof_tol_result *t,
                      const atomic_int *stop, struct profile *p, struct profile_soi *e, int *halt, int *intr,
                      char *why, size_t len)
{
    struct prof_phase_mark mk;
    struct prof_burst_result br;
    prof_phase_begin(m, &mk);
    int rc = prof_bursts(pp, m, base, t, &br, why, len);
    int prc = phase_done(m, &mk, p, "bursts", e->soi, why, len);
    memcpy(e->bursts, br.b, br.n * sizeof(br.b[0]));
    e->nbursts = br.n;
    for (unsigned k = 0; k < br.n && prc == 0; k++)
        if (br.b[k].timed_out) {
            char *tw = prof_dupf("bursts of %g s: a sample beside the SoI did not finish within %g s: relative <= %.3g, "
                                 "a bound, not a value", br.b[k].on_s, pp->timeout_s, br.b[k].relative);
            prc = !tw || profile_add_missing(p, "bursts", e->soi, PROF_BURST_LEVEL, tw) < 0 ? oom(why, len) : 0;
            free(tw);
        }
    if (prc < 0)
        return prc;
    const int intr_now = stopped(rc, stop), solo_to = rc == -ETIMEDOUT && br.timeout == PROF_TO_SOLO;
    if (!intr_now && !(rc == -ETIMEDOUT && br.timeout != PROF_TO_NONE))
        return rc;
    char *r = intr_now ? prof_dupf("bursts of %g s not measured: " PROF_INTERRUPTED, br.at_on_s)
                       : prof_dupf("bursts of %g s not measured: %s", br.at_on_s, why);
    rc = !r || profile_add_missing(p, "bursts", e->soi, PROF_BURST_LEVEL, r) < 0 ? oom(why, len) : 0;
    free(r);
    if (rc < 0 || !(intr_now || solo_to)) {
        if (rc == 0)
            say(m, "%s", why);
        return rc;
    }
    *halt = 1;
    *intr |= intr_now;
    r = intr_now ? strdup("not measured: " PROF_INTERRUPTED " during its bursts")
                 : prof_dupf("not measured: the profile stopped at a solo sample of its bursts (%s)", why);
    rc = !r || caused_cut(p, e, &e->caused, r) < 0 ? oom(why, len) : 0;
    free(r);
    return rc;
}

/* SoI i: open, tolerated, caused, close; e filled: measured, skipped, or incomplete (p->missing says what). A timeout
 * of a solo sample, or a stop, raises *halt (a stop *intr too). 0, or -errno that ends the profile. */
static int one_soi(const struct prof_params *pp, struct prof_meter *m, struct prof_sois *s, unsigned i, double base,
                   const atomic_int *stop, struct profile *p, struct profile_soi *e, int *halt, int *intr, char *why,
                   size_t len)
{
    struct prof_phase_mark mk;
    int prc = 0, rc = s->open(s->ctx, i, e, why, len);
    if (rc <= 0) {
        if (stopped(rc, stop)) { /* stopped while it was set up (its capacity measured, its reach probed) */
            *halt = *intr = 1;
            rc = not_measured(p, e, strdup("not measured: " PROF_INTERRUPTED " while it was set up")) < 0
                     ? oom(why, len)
                     : 0;
        }
        goto out; /* 0: skipped, e says why */
    }
    struct prof_tol_result t;
    prof_phase_begin(m, &mk);
    rc = prof_tolerated(pp, m, base, &t, why, len);
    prc = phase_done(m, &mk, p, "tolerated", e->soi, why, len);
    if (stopped(rc, stop)) {
        *halt = *intr = 1;
        rc = cut_short(p, e, &t, PROF_INTERRUPTED) < 0 ? oom(why, len) : prc;
        goto out;
    }
    if (rc == -ETIMEDOUT && t.timeout != PROF_TO_NONE) { /* written as it is, incomplete; the profile goes on */
        say(m, "%s", why);
        *halt |= t.timeout == PROF_TO_SOLO; /* nothing after it is comparable */
        rc = cut_short(p, e, &t, why) < 0 ? oom(why, len) : prc;
        goto out;
    }
    if (rc == 0)
        rc = prc;
    if (rc < 0)
        goto out;
    for (unsigned k = 0; k < t.ncurve && rc == 0; k++) /* a bound is not a value: the profile says so */
        if (t.curve[k].timed_out) {
            char *tw = prof_dupf("a sample beside the SoI did not finish within %g s: relative performance <= %.3g, a bound "
                            "(the QoS break counted), not a value", pp->timeout_s, t.curve[k].relative);
            rc = !tw || profile_add_missing(p, "tolerated", e->soi, t.curve[k].intensity, tw) < 0 ? oom(why, len) : 0;
            free(tw);
        }
    if (rc < 0)
        goto out;
    e->status = PROFILE_MEASURED;
    e->tolerated = t.tolerated;
    e->bracket[0] = t.lo;
    e->bracket[1] = t.hi;
    if (!(e->curve = calloc(t.ncurve ? t.ncurve : 1, sizeof(*e->curve)))) {
        rc = oom(why, len);
        goto out;
    }
    memcpy(e->curve, t.curve, t.ncurve * sizeof(*e->curve));
    e->ncurve = t.ncurve;
    const double full = profile_soi_full_achieved(e);
    if (full > PROFILE_CAPACITY_LOW_PCT)
        say(m, "%s: at 100 %% (unthrottled) it achieved %.0f %% of the capacity its other points were paced against: "
               "that capacity was measured while the resource was slower (ibench calibrate measures it again)",
            e->soi, full);
    if ((e->have_depth = t.have_depth))
        e->depth = (struct profile_depth){.floor = pp->floor, .relative_100 = t.depth_rel, .se_100 = t.depth_se,
                                          .below_floor_at = t.below_floor_at, .points = t.depth_points,
                                          .seconds = t.depth_s};
    struct profile_caused *c = &e->caused;
    *c = (struct profile_caused){.intensity = pp->caused_level, .occupancy_pct = NAN, .cpu_lost_pct = NAN,
                                 .cpu_lost_se = NAN, .se = NAN, .value = NAN, .alone = NAN, .beside = NAN,
                                 .distinguishable = -1, .unthrottled = -1};
    e->have_caused = 1;
    const int buffered = !pp->bursts_buffered || !s->buffered || s->buffered(s->ctx, i);
    if (prof_bursts_due(pp, m, &t) && !buffered)
        say(m, "bursts not measured: its pressure acts as it is applied (no queue or cache in front of it), so the "
               "model reads a burst as that much sustained pressure (--bursts-all measures them)");
    if (prof_bursts_due(pp, m, &t) && buffered) {
        rc = soi_bursts(pp, m, base, &t, stop, p, e, halt, intr, why, len);
        if (rc < 0 || *halt) /* caused is not measured after a stop or a solo timeout (soi_bursts listed it) */
            goto out;
    }
    prof_phase_begin(m, &mk);
    rc = pp->caused_counted ? prof_caused_counted(p, e, c) : 0;
    if (rc > 0) {
        char ct[160];
        say(m, "caused %.2f %% counted: %s of its usage, no rounds", c->value, prof_counted_text(c, ct, sizeof(ct)));
    }
    rc = rc < 0 ? oom(why, len) : rc > 0 ? 0 : s->caused(s->ctx, pp, m, c, why, len);
    prc = phase_done(m, &mk, p, "caused", e->soi, why, len);
    if (stopped(rc, stop)) { /* the tolerated search stands: the entry is measured, its caused missing */
        *halt = *intr = 1;
        rc = caused_cut(p, e, c, "not measured: " PROF_INTERRUPTED " during its rounds") < 0 ? oom(why, len) : prc;
    } else if (rc == 0) {
        rc = prc;
    }
out:;
    char cw[256] = "";
    int cr = s->close(s->ctx, cw, sizeof(cw));
    if (rc == 0 && cr < 0 && !*intr && !raised(stop)) /* an SoI that failed as it was stopped: its figures stand */
        rc = ib_why(why, len, cr, "%s", cw);
    return rc;
}

static double spread_pct(const double *v, unsigned n, double med)
{
    double lo = INFINITY, hi = -INFINITY;
    for (unsigned i = 0; i < n; i++) {
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    return med > 0 && isfinite(lo) ? 100 * (hi - lo) / med : 0;
}

/* The baseline's missing part after a stop or a timeout (0 or -ENOMEM). */
static int baseline_cut(struct profile *p, const char *phase, int intr, unsigned got, unsigned nb, const char *why)
{
    char *r = intr ? prof_dupf(PROF_INTERRUPTED " after %u of %u solo samples", got, nb) : sdup(why);
    int rc = !r ? -ENOMEM : profile_add_missing(p, phase, NULL, NAN, r);
    free(r);
    return rc;
}

int prof_profile(const struct prof_params *pp0, struct prof_meter *m, struct prof_sois *s, unsigned nb,
                 const atomic_int *stop, struct profile *p, char *why, size_t len)
{
    struct prof_params pp = *pp0;
    nb = nb > PROF_MAX_SAMPLES ? PROF_MAX_SAMPLES : nb;
    p->before = calloc(nb ? nb : 1, sizeof(double));
    p->after = calloc(nb ? nb : 1, sizeof(double));
    p->sois = calloc(s->n ? s->n : 1, sizeof(*p->sois));
    if (!p->before || !p->after || !p->sois)
        return oom(why, len);
    /* halt: nothing more is measured (a solo sample timed out: halt_why; or a stop: intr) */
    int halt = 0, intr = 0;
    char halt_why[600] = "";
    struct prof_phase_mark mk;
    unsigned got = 0;
    if (s->stage)
        s->stage(s->ctx, 0, 0);
    prof_phase_begin(m, &mk);
    int rc = prof_baseline(&pp, m, nb, p->before, &got, &p->before_median, why, len);
    p->nbefore = got;
    int prc = phase_done(m, &mk, p, "baseline before", NULL, why, len);
    if (stopped(rc, stop)) {
        if (!got) /* a file of nothing would only replace what --out held */
            return ib_why(why, len, -EINTR, "interrupted before the first sample finished: nothing measured");
        halt = intr = 1;
        rc = baseline_cut(p, "baseline before", 1, got, nb, NULL) < 0 ? oom(why, len) : prc;
    } else if (rc == -ETIMEDOUT) {
        halt = 1;
        snprintf(halt_why, sizeof(halt_why), "%s", why);
        rc = baseline_cut(p, "baseline before", 0, got, nb, halt_why) < 0 ? oom(why, len) : 0;
    } else if (rc == 0) {
        rc = prc;
    }
    if (rc < 0)
        return rc;
    pp.noise = prof_noise(p->before, got);
    /* what bursts were asked for, or why none were */
    if (pp.nburst_on && m->soi_wave) {
        p->nburst_on = pp.nburst_on > PROFILE_MAX_BURSTS ? PROFILE_MAX_BURSTS : pp.nburst_on;
        memcpy(p->burst_on_s, pp.burst_on_s, p->nburst_on * sizeof(double));
    } else if (!(p->bursts_off = strdup(pp.nburst_on ? "off: this meter cannot run the SoI as a square wave"
                                                     : "off: not asked for"))) {
        return oom(why, len);
    }
    /* what the target presses over time, counted by the kernel while its work runs alone (optional): a failure is
     * written as missing, the SoIs go on */
    if (m->usage && !halt) {
        char uw[512] = "";
        int ur = m->usage(m->ctx, &p->usage, uw, sizeof(uw));
        if (ur == 0) {
            p->have_usage = 1;
        } else if (stopped(ur, stop)) {
            halt = intr = 1;
            rc = profile_add_missing(p, "usage", NULL, NAN, "not measured: " PROF_INTERRUPTED);
        } else {
            rc = profile_add_missing(p, "usage", NULL, NAN, uw);
        }
        if (rc < 0)
            return oom(why, len);
    }
    for (unsigned i = 0; rc == 0 && i < s->n; i++) {
        struct profile_soi *e = &p->sois[p->nsois++];
        profile_soi_init(e);
        e->soi = sdup(s->name(s->ctx, i));
        e->resource = sdup(s->resource(s->ctx, i));
        if (!e->soi || !e->resource) {
            rc = oom(why, len);
            break;
        }
        if (s->stage)
            s->stage(s->ctx, 1, i);
        if (!halt && raised(stop))
            halt = intr = 1;
        if (halt) {
            char *r = intr ? strdup("not measured: " PROF_INTERRUPTED " before it began")
                           : prof_dupf("not measured: the profile stopped before it (%s)", halt_why);
            rc = not_measured(p, e, r) < 0 ? oom(why, len) : 0;
            continue;
        }
        const unsigned nmissing = p->nmissing;
        rc = one_soi(&pp, m, s, i, p->before_median, stop, p, e, &halt, &intr, why, len);
        /* A curve whose points' solo baselines strayed beyond PROFILE_SOLO_STRAY_MAX outside the baseline was
         * measured while the machine or the target was in another state (the placement model reads such a curve in
         * its pessimistic bound only): measured once more, when the first pass ended cleanly; the first pass's
         * phases stay listed. */
        double f = rc == 0 && !halt && e->status == PROFILE_MEASURED && p->nmissing == nmissing
                       ? profile_soi_solo_stray(p, e)
                       : NAN;
        if (f > PROFILE_SOLO_STRAY_MAX) {
            say(m, "%s: the target's own solo speed moved %.1f-fold outside its baseline while this curve was "
                   "measured: the machine or the target was in another state, not the SoI; measuring it once more",
                e->soi, f);
            char *nm = e->soi, *res = e->resource;
            e->soi = e->resource = NULL;
            profile_soi_clear(e);
            e->soi = nm, e->resource = res;
            rc = one_soi(&pp, m, s, i, p->before_median, stop, p, e, &halt, &intr, why, len);
            if (rc == 0 && e->status == PROFILE_MEASURED && (f = profile_soi_solo_stray(p, e)) > PROFILE_SOLO_STRAY_MAX)
                say(m, "%s: moved %.1f-fold again: kept as measured; its confidence says so and the placement model "
                       "reads it in its pessimistic bound only", e->soi, f);
        }
        if (rc == 0 && halt && !intr)
            snprintf(halt_why, sizeof(halt_why), "%s: %s", e->soi,
                     e->reason ? e->reason : e->caused.reason ? e->caused.reason : "");
    }
    if (rc == 0 && !halt && raised(stop))
        halt = intr = 1;
    if (rc == 0 && !halt) {
        if (s->stage)
            s->stage(s->ctx, 2, 0);
        prof_phase_begin(m, &mk);
        rc = prof_baseline(&pp, m, nb, p->after, &got, &p->after_median, why, len);
        p->nafter = got;
        prc = phase_done(m, &mk, p, "baseline after", NULL, why, len);
        if (stopped(rc, stop) || rc == -ETIMEDOUT) {
            intr = stopped(rc, stop);
            rc = baseline_cut(p, "baseline after", intr, got, nb, why) < 0 ? oom(why, len) : prc;
        } else if (rc == 0) {
            rc = prc;
        }
    } else if (rc == 0) {
        rc = profile_add_missing(p, "baseline after", NULL, NAN,
                                 intr ? "not measured: " PROF_INTERRUPTED " before it"
                                      : "not measured: the profile stopped before it") < 0
                 ? oom(why, len)
                 : 0;
    }
    if (rc < 0)
        return rc;
    p->interrupted = intr;
    p->timeout_s = pp.timeout_s;
    p->noise_pct = fmax(spread_pct(p->before, p->nbefore, p->before_median),
                        spread_pct(p->after, p->nafter, p->after_median));
    if (p->nbefore && p->nafter && p->before_median > 0 && p->after_median > 0)
        p->drift_pct = 100 * (rel_of(&pp, p->after_median, p->before_median) - 1);
    const char *conf = !p->nbefore ? NULL
                       : !p->nafter ? "low: no solo baseline after the SoIs to check the drift against (incomplete)"
                       : fabs(p->drift_pct) > 100 * (1 - pp.qos) ? "low: the solo baseline moved by more than the QoS band"
                       : p->noise_pct > 50 * (1 - pp.qos) ? "low: solo samples spread by more than half the QoS band"
                                                          : "high";
    if (!p->nbefore)
        p->noise_pct = NAN; /* nothing measured: no figure rather than a 0 */
    if (conf && !(p->confidence = strdup(conf)))
        return oom(why, len);
    for (unsigned i = 0; i < p->nsois; i++) {
        struct profile_soi *e = &p->sois[i];
        if (e->status != PROFILE_MEASURED)
            continue;
        e->have_confidence = 1;
        e->confidence.tolerated_pts = e->bracket[1] - e->bracket[0];
        e->confidence.noise_pct = p->noise_pct;
        const double f = profile_soi_solo_stray(p, e);
        if (f > PROFILE_SOLO_STRAY_MAX)
            e->confidence.level = prof_dupf("low: the target's own solo speed moved %.1f-fold outside its baseline "
                                            "while this curve was measured (the machine or the target was in another "
                                            "state)", f);
        else if (conf)
            e->confidence.level = strdup(conf);
        if (conf && !e->confidence.level)
            return oom(why, len);
    }
    return 0;
}
