/* pl_wmodel.c - one model that predicts and decides (pl_wmodel.h; docs/placement.md, "One model that predicts and
 * decides").  The rules, each with its reason:
 * - A curve measured while A's own speed moved is read by the pessimistic bound only: when a point's solo baseline
 *   lies more than PROFILE_SOLO_STRAY_MAX times outside the range of A's baseline samples (profile_soi_solo_stray),
 *   the machine or A was in another state while s was measured, and no point of s says what s does.  The point and
 *   the optimistic bound count no harm from s (no evidence), the pessimistic one keeps the harm it shows (not ruled
 *   out), so the decision says uncertain rather than kept, and its line names s.
 * - Curves: A's sustained curve on s is pl_sim_curve's reading (repeats averaged, capped at 1, 1 at 0, linear, flat
 *   beyond the last point).  Its bounds move every point by 2 relative_se (NAN: 0) down (pessimistic) or up
 *   (optimistic), capped to [0, 1]: the points' own noise, nothing invented between them.
 * - Pressure from a co-runner B on s, per window: B's usage resource that presses s (profile_usage_soi, the table the
 *   profile's of_capacity reads) as 100 x window / A's capacity of s, when the units agree ("B/s"; "B" with
 *   "bytes") and A's capacity is known; a window at or below the resource's floor (NAN: 0) counts 0, it is the
 *   counters' noise.  Kernel counts carry no standard error here: the same windows in all three readings.  Without
 *   such windows, B's caused figure on s in every window (sustained), as pl_predict counts it: a figure
 *   distinguishable from 0 (its flag, and |value| > 2 se where se is known) counts max(0, value), its bounds value
 *   -+ 2 se clamped at 0; a figure within 2 se of 0, or none, counts 0 in all readings: noise is not evidence.
 * - Several co-runners: their phases are unknown, so their timelines are aligned at their starts and each repeats
 *   (a loop runs again): window w of the sum is sum_j x_j[w mod n_j], capped at 100, over N windows, the largest
 *   count.  Windows of different lengths are laid on the shortest one by time (with equal lengths, index by index).
 *   No co-runner with windows: one window.
 * - Burst length of window w: the run of consecutive active windows (x > 0) it belongs to, times the window.  A run
 *   touching the first or last window was cut by the measurement, so its length is at least what was seen: max(seen,
 *   mean of the closed runs), and with no closed run it is sustained (infinite).  Caused-based pressure is active in
 *   every window, hence sustained.
 * - k(L), the share of the sustained harm a burst of L s does, from A's bursts on s: k_i = (1 - on_relative_i) /
 *   (1 - y(level_i)) (1 when 1 - y(level_i) < 0.01: the sustained harm is too small to divide by), repeats of one
 *   on_s averaged; linear in log L between the measured on_s (the bursts are measured at lengths a factor apart);
 *   below the shortest k_min L / L_min (a burst of no length does no harm); above the longest and finite, k at the
 *   longest (no evidence that it grows further); infinite 1 (sustained is the curve itself); clamped to [0, 1].  No
 *   burst measured: 1 (every burst as harmful as sustained pressure: the curve's reading).  Bounds: on_relative -+ 2
 *   relative_se / on share (the on share of the wave carries its whole loss), the denominator the central curve's
 *   (k is a share; the curve's uncertainty is in the curve's bounds); a timed-out burst (relative an upper bound)
 *   is harmful without bound in the pessimistic reading (k 1).
 * - A's relative in window w on s: 1 - k(L_w) (1 - y(x_w)); across resources in a window the product (each slows A
 *   on its own) or the worst one (PL_WM_MIN, for place predict --check --fit to compare); A's prediction is the mean
 *   over windows: a batch victim's time is the time its progress, summed window by window, takes to complete its
 *   work, so its speeds average over time; a service's rate per window averages the same way.
 * - Bounds: the same computation on the pessimistic and the optimistic readings.  A curve that rises with x or a k
 *   that falls with L can invert them; they are then taken around the central value (lo <= rel <= hi).  Less
 *   pressure never predicts worse while A's curves fall with x and its k grows with L (what measured ones do).
 * - Decision at A's QoS line q: refused when hi < q (even the optimistic reading breaks it), kept when lo >= q,
 *   else uncertain.  A group: refused if any member is, kept if all are, else uncertain; its fit the smallest
 *   central prediction. */
#define _GNU_SOURCE
#include "pl_wmodel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

#define CURVE_MAX 64 /* pl_sim_curve's bound on points read */
#define N_MAX (4 * PROFILE_USAGE_WINDOWS)

static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

/* ---- curves ---------------------------------------------------------------------------------------------------- */

struct wcurve {
    double x[CURVE_MAX], y[CURVE_MAX];
    unsigned n;
};

/* The three readings of s's curve at once (one pass: the points are sorted and averaged the same way in each). */
static void curve_prep3(const struct profile_soi *s, struct wcurve c[3])
{
    unsigned cnt[CURVE_MAX], n = 0;
    for (unsigned i = 0; s->curve && i < s->ncurve && i < CURVE_MAX; i++) {
        const struct profile_point *p = &s->curve[i];
        if (!isfinite(p->intensity) || !isfinite(p->relative))
            continue;
        const double se = isfinite(p->relative_se) ? p->relative_se : 0;
        const double y[3] = {p->relative, p->relative - 2 * se, p->relative + 2 * se}; /* enum pl_wm_reading's order */
        unsigned k = 0;
        while (k < n && c[0].x[k] < p->intensity)
            k++;
        if (k < n && c[0].x[k] == p->intensity) {
            for (int r = 0; r < 3; r++)
                c[r].y[k] += y[r];
            cnt[k]++;
            continue;
        }
        for (int r = 0; r < 3; r++) {
            memmove(c[r].x + k + 1, c[r].x + k, (n - k) * sizeof c[r].x[0]);
            memmove(c[r].y + k + 1, c[r].y + k, (n - k) * sizeof c[r].y[0]);
            c[r].x[k] = p->intensity, c[r].y[k] = y[r];
        }
        memmove(cnt + k + 1, cnt + k, (n - k) * sizeof cnt[0]);
        cnt[k] = 1, n++;
    }
    for (int r = 0; r < 3; r++) {
        c[r].n = n;
        for (unsigned k = 0; k < n; k++)
            c[r].y[k] = clamp01(c[r].y[k] / cnt[k]);
    }
}

static void curve_prep(const struct profile_soi *s, enum pl_wm_reading rd, struct wcurve *c)
{
    struct wcurve all[3];
    curve_prep3(s, all);
    *c = all[rd];
}

static double curve_at(const struct wcurve *c, double x)
{
    if (c->n == 0 || x <= 0)
        return 1.0;
    double px = 0, py = 1.0;
    for (unsigned k = 0; k < c->n; k++) {
        if (x <= c->x[k])
            return c->x[k] == px ? c->y[k] : py + (c->y[k] - py) * (x - px) / (c->x[k] - px);
        px = c->x[k], py = c->y[k];
    }
    return py;
}

double pl_wm_curve(const struct profile_soi *s, double x, enum pl_wm_reading rd)
{
    struct wcurve c;
    curve_prep(s, rd, &c);
    return curve_at(&c, x);
}

/* ---- bursts ---------------------------------------------------------------------------------------------------- */

struct wburst {
    double L[PROFILE_MAX_BURSTS], k[PROFILE_MAX_BURSTS];
    unsigned n;
};

static void bursts_prep(const struct profile_soi *s, const struct wcurve *central, enum pl_wm_reading rd,
                        struct wburst *b)
{
    unsigned cnt[PROFILE_MAX_BURSTS];
    b->n = 0;
    for (unsigned i = 0; i < s->nbursts && i < PROFILE_MAX_BURSTS; i++) {
        const struct profile_burst *u = &s->bursts[i];
        if (!(u->on_s > 0) || !isfinite(u->on_s) || !(u->off_s >= 0) || !isfinite(u->on_relative) ||
            !isfinite(u->level))
            continue;
        const double harm = 1 - curve_at(central, u->level);
        double k = 1;
        if (harm >= 0.01) {
            const double share = u->on_s / (u->on_s + u->off_s), se = isfinite(u->relative_se) ? u->relative_se : 0;
            const double d = 2 * se / share;
            const double on = clamp01(u->on_relative + (rd == PL_WM_PESSIMISTIC ? -d : rd == PL_WM_OPTIMISTIC ? d : 0));
            k = rd == PL_WM_PESSIMISTIC && u->timed_out ? 1 : clamp01((1 - on) / harm);
        }
        unsigned j = 0;
        while (j < b->n && b->L[j] < u->on_s)
            j++;
        if (j < b->n && b->L[j] == u->on_s) {
            b->k[j] += k, cnt[j]++;
            continue;
        }
        memmove(b->L + j + 1, b->L + j, (b->n - j) * sizeof b->L[0]);
        memmove(b->k + j + 1, b->k + j, (b->n - j) * sizeof b->k[0]);
        memmove(cnt + j + 1, cnt + j, (b->n - j) * sizeof cnt[0]);
        b->L[j] = u->on_s, b->k[j] = k, cnt[j] = 1, b->n++;
    }
    for (unsigned j = 0; j < b->n; j++)
        b->k[j] /= cnt[j];
}

static double share_at(const struct wburst *b, double L)
{
    if (b->n == 0 || !isfinite(L))
        return 1.0;
    if (L <= b->L[0])
        return clamp01(b->k[0] * L / b->L[0]);
    for (unsigned j = 0; j + 1 < b->n; j++)
        if (L <= b->L[j + 1]) {
            const double t = log(L / b->L[j]) / log(b->L[j + 1] / b->L[j]);
            return clamp01(b->k[j] + t * (b->k[j + 1] - b->k[j]));
        }
    return clamp01(b->k[b->n - 1]);
}

double pl_wm_burst_share(const struct profile_soi *s, double L, enum pl_wm_reading rd)
{
    struct wcurve c;
    struct wburst b;
    curve_prep(s, PL_WM_CENTRAL, &c);
    bursts_prep(s, &c, rd, &b);
    return share_at(&b, L);
}

/* ---- pressure -------------------------------------------------------------------------------------------------- */

/* hint: where name probably is (profiles of one ibench list their SoIs in the same order) */
static const struct profile_soi *soi_at(const struct profile *p, const char *name, unsigned hint)
{
    if (hint < p->nsois && !strcmp(p->sois[hint].soi, name))
        return &p->sois[hint];
    for (unsigned i = 0; i < p->nsois; i++)
        if (!strcmp(p->sois[i].soi, name))
            return &p->sois[i];
    return NULL;
}

/* B's usage resource that presses s, in a unit A's capacity of s converts; NULL: none (B's caused counts). */
static const struct profile_usage_res *usage_for(const struct profile *b, const struct profile_soi *s)
{
    if (!b->have_usage || !(b->usage.window_s > 0) || !(s->capacity > 0) || !isfinite(s->capacity) ||
        !s->capacity_unit)
        return NULL;
    for (unsigned i = 0; i < b->usage.nres; i++) {
        const struct profile_usage_res *u = &b->usage.res[i];
        const char *soi = u->name ? profile_usage_soi(u->name) : NULL;
        if (!soi || strcmp(soi, s->soi) || !u->windows || u->nwindows == 0 || !u->unit)
            continue;
        if (profile_usage_unit_ok(u->unit, s->capacity_unit))
            return u;
    }
    return NULL;
}

/* B's caused figure on soi by reading, % of capacity; 0 in all three when within 2 se of 0 or not measured. */
static void caused_readings(const struct profile *b, const char *soi, unsigned hint, double c[3])
{
    c[0] = c[1] = c[2] = 0;
    const struct profile_soi *s = soi_at(b, soi, hint);
    if (!s || s->status != PROFILE_MEASURED || !s->have_caused || !isfinite(s->caused.value))
        return;
    const double v = s->caused.value, se = isfinite(s->caused.se) ? s->caused.se : 0;
    if (s->caused.distinguishable == 0 || (se > 0 && fabs(v) <= 2 * se))
        return;
    c[PL_WM_CENTRAL] = fmax(0, v), c[PL_WM_PESSIMISTIC] = fmax(0, v + 2 * se), c[PL_WM_OPTIMISTIC] = fmax(0, v - 2 * se);
}

/* Burst lengths L[w] of x[0..n) in windows of ws seconds (the edge rule above); 0 where idle. */
static void lengths(const double *x, unsigned n, double ws, double *L)
{
    double closed = 0;
    unsigned nclosed = 0;
    for (unsigned w = 0; w < n;) {
        if (!(x[w] > 0)) {
            L[w++] = 0;
            continue;
        }
        unsigned e = w;
        while (e < n && x[e] > 0)
            e++;
        if (w > 0 && e < n)
            closed += (e - w) * ws, nclosed++;
        w = e;
    }
    const double mean = nclosed ? closed / nclosed : NAN;
    for (unsigned w = 0; w < n;) {
        if (!(x[w] > 0)) {
            w++;
            continue;
        }
        unsigned e = w;
        while (e < n && x[e] > 0)
            e++;
        double len = (e - w) * ws;
        if (w == 0 || e == n) /* cut by the measurement */
            len = nclosed ? fmax(len, mean) : INFINITY;
        if (!isfinite(ws))
            len = INFINITY;
        for (unsigned k = w; k < e; k++)
            L[k] = len;
        w = e;
    }
}

/* "2.7 GB/s" */
static void fmt_si(char *buf, size_t len, double v, const char *unit)
{
    static const char *const pre[] = {"", "k", "M", "G", "T", "P"};
    unsigned k = 0;
    while (fabs(v) >= 1000 && k + 1 < sizeof pre / sizeof pre[0])
        v /= 1000, k++;
    const char *u = unit && !strcmp(unit, "bytes") ? "B" : unit ? unit : "";
    snprintf(buf, len, "%.*f %s%s", fabs(v) < 10 ? 1 : 0, v, pre[k], u);
}

/* ---- the prediction -------------------------------------------------------------------------------------------- */

bool pl_wm_curve_stray(const struct profile *a, const struct profile_soi *s)
{
    return profile_soi_solo_stray(a, s) > PROFILE_SOLO_STRAY_MAX;
}

double pl_wm_qos(const struct profile *p) { return isfinite(p->qos) && p->qos > 0 ? p->qos : 0.9; }

enum pl_wm_decision pl_wm_decide(const struct pl_wm_pred *p, double qos)
{
    return p->hi < qos ? PL_WM_REFUSED : p->lo >= qos ? PL_WM_KEPT : PL_WM_UNCERTAIN;
}

const char *pl_wm_decision_name(enum pl_wm_decision d)
{
    return d == PL_WM_KEPT ? "kept" : d == PL_WM_UNCERTAIN ? "uncertain" : d == PL_WM_REFUSED ? "refused" : "?";
}

/* The timeline: the shortest window among co-runners whose usage presses a resource A measured, and the largest
 * count laid on it.  *ws NAN and 1 window when none has windows. */
static unsigned timeline(const struct profile *a, const struct profile *const *others, unsigned n, const char *only,
                         double *ws)
{
    *ws = NAN;
    double span = 0;
    for (unsigned j = 0; j < n; j++)
        for (unsigned i = 0; i < a->nsois; i++) {
            const struct profile_soi *s = &a->sois[i];
            if (s->status != PROFILE_MEASURED || (only && strcmp(s->soi, only)))
                continue;
            const struct profile_usage_res *u = usage_for(others[j], s);
            if (!u)
                continue;
            const double T = others[j]->usage.window_s;
            if (!(T >= *ws))
                *ws = T;
            span = fmax(span, u->nwindows * T);
        }
    if (!isfinite(*ws))
        return 1;
    const double N = floor(span / *ws + 0.5);
    return N < 1 ? 1 : N > N_MAX ? N_MAX : (unsigned)N;
}

/* what presses s, for the deciding resource's line: "fio's write 2.7 GB/s (100 % of capacity) + gzip's caused 4.0
 * +- 1.0 %" */
static void beside_text(const struct profile_soi *s, unsigned hint, const struct profile *const *others, unsigned n,
                        char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (unsigned j = 0; j < n && at < len; j++) {
        const struct profile *b = others[j];
        const char *name = b->name ? b->name : "?";
        const struct profile_usage_res *u = usage_for(b, s);
        int w = 0;
        if (u) {
            const double fl = isfinite(u->floor) ? u->floor : 0;
            double sum = 0;
            unsigned act = 0;
            for (unsigned k = 0; k < u->nwindows; k++)
                if (isfinite(u->windows[k]) && u->windows[k] > fl)
                    sum += u->windows[k], act++;
            if (!act)
                continue;
            char fig[32];
            fmt_si(fig, sizeof fig, sum / act, u->unit);
            w = snprintf(buf + at, len - at, "%s%s's %s %s (%.0f %% of capacity)", at ? " + " : "", name, u->name, fig,
                         100 * (sum / act) / s->capacity);
        } else {
            double c[3];
            caused_readings(b, s->soi, hint, c);
            if (!(c[PL_WM_PESSIMISTIC] > 0))
                continue;
            const struct profile_soi *bs = soi_at(b, s->soi, hint);
            w = snprintf(buf + at, len - at, "%s%s's caused %.1f +- %.1f %%", at ? " + " : "", name, bs->caused.value,
                         isfinite(bs->caused.se) ? bs->caused.se : 0.0);
        }
        if (w > 0)
            at += (size_t)w;
    }
    if (!buf[0])
        snprintf(buf, len, "no co-runner's counted pressure");
}

/* texts false: no deciding/why (a scheduler's inner loop: formatting the line costs more than the prediction) */
static int predict(const struct profile *a, const struct profile *const *others, unsigned n, enum pl_wm_combine comb,
                   const char *only_soi, bool texts, struct pl_wm_pred *out)
{
    memset(out, 0, sizeof *out);
    out->rel = out->lo = out->hi = NAN;
    double ws;
    const unsigned N = timeline(a, others, n, only_soi, &ws);
    double *mem = malloc(6 * (size_t)N * sizeof(double));
    if (!mem)
        return -ENOMEM;
    double *u = mem, *x = mem + N, *L = mem + 2 * N, *acc[3] = {mem + 3 * N, mem + 4 * N, mem + 5 * N};
    for (unsigned w = 0; w < 3 * N; w++)
        acc[0][w] = 1.0;
    out->nwindows = N, out->window_s = ws;
    double best[3] = {2, 2, 2}, dec_active = 0, dec_lsum = 0, dec_ksum = 0;
    unsigned dec_nfin = 0, dec_ninf = 0;
    const struct profile_soi *dec = NULL, *stray_soi = NULL; /* the first pressed curve not read (stray) */
    for (unsigned i = 0; i < a->nsois; i++) {
        const struct profile_soi *s = &a->sois[i];
        if (s->status != PROFILE_MEASURED || (only_soi && strcmp(s->soi, only_soi)))
            continue;
        const bool stray = pl_wm_curve_stray(a, s);
        /* the co-runners' pressure on s: usage windows summed in u, caused figures summed per reading */
        double cs[3] = {0, 0, 0};
        bool pressed = false;
        for (unsigned w = 0; w < N; w++)
            u[w] = 0;
        for (unsigned j = 0; j < n; j++) {
            const struct profile_usage_res *us = usage_for(others[j], s);
            if (!us) {
                double c[3];
                caused_readings(others[j], s->soi, i, c);
                for (int r = 0; r < 3; r++)
                    cs[r] += c[r];
                continue;
            }
            const double T = others[j]->usage.window_s, fl = isfinite(us->floor) ? us->floor : 0;
            for (unsigned w = 0; w < N; w++) {
                const double v = us->windows[(unsigned)floor((w + 0.5) * ws / T) % us->nwindows];
                if (isfinite(v) && v > fl)
                    u[w] += 100 * v / s->capacity;
            }
        }
        bool any = cs[PL_WM_PESSIMISTIC] > 0;
        for (unsigned w = 0; w < N && !any; w++)
            any = u[w] > 0;
        if (!any)
            continue; /* nothing presses s: 1 in every window, in every reading */
        struct wcurve cv[3];
        struct wburst bs[3];
        double m[3], active = 0, lsum = 0, ksum = 0;
        unsigned nfin = 0, ninf = 0;
        curve_prep3(s, cv);
        for (int r = 0; r < 3; r++)
            bursts_prep(s, &cv[PL_WM_CENTRAL], (enum pl_wm_reading)r, &bs[r]);
        for (int r = 0; r < 3; r++) {
            for (unsigned w = 0; w < N; w++)
                x[w] = fmin(100.0, u[w] + cs[r]);
            lengths(x, N, ws, L);
            double sum = 0;
            for (unsigned w = 0; w < N; w++) {
                double rw = 1.0;
                if (x[w] > 0 && stray && r == PL_WM_CENTRAL && !stray_soi)
                    stray_soi = s;
                if (x[w] > 0 && (!stray || r == PL_WM_PESSIMISTIC)) {
                    pressed = pressed || !stray;
                    const double k = share_at(&bs[r], L[w]);
                    rw = clamp01(1 - k * (1 - curve_at(&cv[r], x[w])));
                    if (r == PL_WM_CENTRAL) {
                        active++;
                        if (isfinite(L[w]))
                            lsum += L[w], ksum += k, nfin++;
                        else
                            ninf++;
                    }
                }
                acc[r][w] = comb == PL_WM_MIN ? fmin(acc[r][w], rw) : acc[r][w] * rw;
                sum += rw;
            }
            m[r] = sum / N;
        }
        if (!pressed || m[PL_WM_CENTRAL] > best[PL_WM_CENTRAL] ||
            (m[PL_WM_CENTRAL] == best[PL_WM_CENTRAL] && m[PL_WM_PESSIMISTIC] >= best[PL_WM_PESSIMISTIC]))
            continue;
        /* the deciding resource so far; its line is written once, at the end (a scheduler's loop calls this often) */
        memcpy(best, m, sizeof best);
        dec = s, dec_active = active, dec_lsum = lsum, dec_ksum = ksum, dec_nfin = nfin, dec_ninf = ninf;
    }
    if (dec && texts) {
        snprintf(out->deciding, sizeof out->deciding, "%s", dec->soi);
        char beside[256], burst[96];
        beside_text(dec, (unsigned)(dec - a->sois), others, n, beside, sizeof beside);
        if (!dec_nfin)
            snprintf(burst, sizeof burst, "sustained");
        else
            snprintf(burst, sizeof burst, "bursts of %.2g s (k %.2f)%s", dec_lsum / dec_nfin, dec_ksum / dec_nfin,
                     dec_ninf ? ", partly sustained" : "");
        const double lo = fmin(best[PL_WM_PESSIMISTIC], best[PL_WM_CENTRAL]),
                     hi = fmax(best[PL_WM_OPTIMISTIC], best[PL_WM_CENTRAL]);
        if (snprintf(out->why, sizeof out->why, "%s: %.2f [%.2f, %.2f] beside %s, active %.0f %% of %u window%s, %s",
                     dec->soi, best[PL_WM_CENTRAL], lo, hi, beside, 100 * dec_active / N, N, N == 1 ? "" : "s",
                     burst) < 0)
            out->why[0] = 0; /* a longer line is cut: still one line */
    }
    double sum[3] = {0, 0, 0};
    for (int r = 0; r < 3; r++)
        for (unsigned w = 0; w < N; w++)
            sum[r] += acc[r][w];
    free(mem);
    out->rel = sum[PL_WM_CENTRAL] / N;
    out->lo = fmin(sum[PL_WM_PESSIMISTIC] / N, out->rel);
    out->hi = fmax(sum[PL_WM_OPTIMISTIC] / N, out->rel);
    if (!out->deciding[0] && texts)
        snprintf(out->why, sizeof out->why, "no counted pressure on a resource %s measured", a->name ? a->name : "?");
    if (stray_soi && texts) {
        const size_t at = strlen(out->why);
        if (snprintf(out->why + at, sizeof out->why - at,
                     "; %s not read: measured while %s's own solo speed moved %.1f-fold (the pessimistic bound only)",
                     stray_soi->soi, a->name ? a->name : "?", profile_soi_solo_stray(a, stray_soi)) < 0)
            out->why[at] = 0;
    }
    return 0;
}

int pl_wm_predict(const struct profile *a, const struct profile *const *others, unsigned n, enum pl_wm_combine comb,
                  const char *only_soi, struct pl_wm_pred *out)
{
    return predict(a, others, n, comb, only_soi, true, out);
}

int pl_wm_group_check(const struct profile *const *apps, unsigned n, enum pl_wm_combine c, bool texts,
                      struct pl_wm_pred *preds, struct pl_wm_group *g)
{
    g->decision = PL_WM_KEPT, g->fit = INFINITY, g->worst = 0;
    const struct profile **others = malloc((n ? n : 1) * sizeof *others);
    if (!others)
        return -ENOMEM;
    bool any_uncertain = false, any_refused = false;
    for (unsigned a = 0; a < n; a++) {
        unsigned k = 0;
        for (unsigned b = 0; b < n; b++)
            if (b != a)
                others[k++] = apps[b];
        if (predict(apps[a], others, k, c, NULL, texts, &preds[a]) < 0) {
            free(others);
            return -ENOMEM;
        }
        const enum pl_wm_decision d = pl_wm_decide(&preds[a], pl_wm_qos(apps[a]));
        any_refused |= d == PL_WM_REFUSED;
        any_uncertain |= d == PL_WM_UNCERTAIN;
        if (preds[a].rel < g->fit)
            g->fit = preds[a].rel, g->worst = a;
    }
    free(others);
    g->decision = any_refused ? PL_WM_REFUSED : any_uncertain ? PL_WM_UNCERTAIN : PL_WM_KEPT;
    if (!isfinite(g->fit))
        g->fit = 1.0;
    return 0;
}
