/* calib.c - measured capacities: cache knees from a latency sweep, streaming bandwidth per level.  The fingerprint
 * and the per-machine cache file they are kept in are calib_file.c's. */
#define _GNU_SOURCE
#include "calib.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ib_err.h"
#include "kernels.h"
#include "measure.h"
#include "output.h"
#include "parse.h"
#include "pressure.h"
#include "stats.h"

const char *calib_level_name(enum calib_level l)
{
    static const char *const names[] = {"l1d", "l2", "llc"};
    return l < CALIB_NLEVELS ? names[l] : "?";
}

/* ---- knees ---------------------------------------------------------------------------------------------- */

/* Median latency of the points with bytes in [lo, hi]; 0 when there are none. */
static double median_in(const struct calib_point *p, unsigned n, uint64_t lo, uint64_t hi)
{
    double v[CALIB_MAX_SWEEP];
    unsigned k = 0;
    for (unsigned i = 0; i < n && k < CALIB_MAX_SWEEP; i++)
        if (p[i].bytes >= lo && p[i].bytes <= hi)
            v[k++] = p[i].ns;
    return k ? ib_median(v, k) : 0;
}

int calib_find_knee(const struct calib_point *pts, unsigned n, uint64_t lo_bytes, uint64_t hi_bytes,
                    uint64_t *knee, double *lo_ns, double *hi_ns)
{
    if (!pts || n < 3 || lo_bytes == 0 || hi_bytes <= lo_bytes)
        return -EINVAL;
    double lo = median_in(pts, n, lo_bytes / 2, lo_bytes);
    double hi = median_in(pts, n, hi_bytes, 2 * hi_bytes);
    if (!(lo > 0) || !(hi > lo * 1.15)) /* no step worth calling a cache boundary */
        return -ENOENT;
    double thr = sqrt(lo * hi);
    /* First point past the low plateau where latency crosses the threshold and stays above it (a lone noisy
     * spike inside a plateau does not count). */
    for (unsigned i = 1; i < n; i++) {
        if (pts[i].bytes <= lo_bytes / 2 || pts[i].ns < thr)
            continue;
        if (i + 1 < n && pts[i + 1].ns < thr)
            continue;
        const struct calib_point *a = &pts[i - 1], *b = &pts[i];
        double t = a->ns >= thr ? 0 : (log(thr) - log(a->ns)) / (log(b->ns) - log(a->ns));
        double lb = log((double)a->bytes) + t * (log((double)b->bytes) - log((double)a->bytes));
        *knee = (uint64_t)exp(lb) & ~(uint64_t)63;
        if (lo_ns)
            *lo_ns = lo;
        if (hi_ns)
            *hi_ns = hi;
        return 0;
    }
    return -ENOENT;
}

uint64_t calib_effective(const struct calib *c, enum calib_level l)
{
    if (l >= CALIB_NLEVELS)
        return 0;
    /* A knee above the claim is the next level's transition bleeding in (seen here: an L2 "knee" at 2x the 1 MiB
     * L2 on an AMD victim-L3 VM), never a bigger cache: a cache cannot hold more than the hardware has. */
    if (c->measured[l] && c->claimed[l] && c->measured[l] > c->claimed[l])
        return c->claimed[l];
    return c->measured[l] ? c->measured[l] : c->claimed[l];
}

/* ---- latency sweep -------------------------------------------------------------------------------------- */

struct bind_guard {
    hwloc_bitmap_t old;
    const struct topo *t;
};

static int bind_push(struct bind_guard *g, const struct topo *t, int cpu)
{
    g->t = t;
    g->old = hwloc_bitmap_alloc();
    if (!g->old)
        return -ENOMEM;
    hwloc_get_cpubind(topo_hwloc(t), g->old, HWLOC_CPUBIND_THREAD);
    return topo_bind_thread(t, cpu);
}

static void bind_pop(struct bind_guard *g)
{
    if (!g->old)
        return;
    if (!hwloc_bitmap_iszero(g->old))
        hwloc_set_cpubind(topo_hwloc(g->t), g->old, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(g->old);
    g->old = NULL;
}

static int cmp_pt(const void *a, const void *b)
{
    const struct calib_point *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* One point: the median of `reps` timed walks of about budget_ns each (the first sweep: 5 of 3 ms; the short ones
 * that follow: 3 of 1.5 ms, since their number, not their length, is what averages the host's moving LLC out). */
static double measure_point(void *buf, uint64_t bytes, double est_ns, double budget, unsigned reps)
{
    uint64_t iters = (uint64_t)(budget / (est_ns > 0.5 ? est_ns : 0.5));
    if (iters < 20000)
        iters = 20000;
    if (iters > 3000000)
        iters = 3000000;
    return chase_latency_ns(buf, bytes, iters, reps, bytes * 2654435761ULL + 1);
}

/* Top of the window the LLC's own latency is read from: 3x the L2 claim (past the L2's bleed into the LLC), at most
 * half the LLC claim; an eighth of the LLC claim without an L2. */
static uint64_t llc_lo_bytes(const uint64_t claimed[CALIB_NLEVELS])
{
    uint64_t c2 = claimed[CALIB_L2], c3 = claimed[CALIB_LLC];
    uint64_t lo = c2 ? 3 * c2 : c3 / 8;
    return lo > c3 / 2 ? c3 / 2 : lo;
}

void calib_sweep_knees(const struct calib_point *pts, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                       struct calib_sweep_sum *s)
{
    uint64_t c1 = claimed[CALIB_L1], c2 = claimed[CALIB_L2], c3 = claimed[CALIB_LLC];
    double lo, hi;
    memset(s->knee, 0, sizeof(s->knee));
    memset(s->plateau_ns, 0, sizeof(s->plateau_ns));
    if (c1 && calib_find_knee(pts, n, c1 / 2, 2 * c1, &s->knee[CALIB_L1], &lo, &hi) == 0)
        s->plateau_ns[CALIB_L1] = lo;
    if (c2 && calib_find_knee(pts, n, c2 / 2, 2 * c2, &s->knee[CALIB_L2], &lo, &hi) == 0)
        s->plateau_ns[CALIB_L2] = lo;
    if (c3 && c3 > c2 && calib_find_knee(pts, n, llc_lo_bytes(claimed), 2 * c3, &s->knee[CALIB_LLC], &lo, &hi) == 0) {
        s->plateau_ns[CALIB_LLC] = lo;
        s->plateau_ns[CALIB_NLEVELS] = hi;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Median of the non-zero knees of level l over the kept sweeps, with their range; 0 when none. */
static uint64_t knee_median(const struct calib_sweep_sum *s, unsigned n, int l, uint64_t *lo, uint64_t *hi)
{
    uint64_t v[CALIB_MAX_SWEEPS];
    unsigned k = 0;
    for (unsigned i = 0; i < n && k < CALIB_MAX_SWEEPS; i++)
        if (!s[i].reject[0] && s[i].knee[l])
            v[k++] = s[i].knee[l];
    *lo = *hi = 0;
    if (!k)
        return 0;
    qsort(v, k, sizeof(v[0]), cmp_u64);
    *lo = v[0];
    *hi = v[k - 1];
    /* an even count takes the lower middle: of two candidate sizes, the one more surely inside the cache */
    return v[(k - 1) / 2] & ~(uint64_t)63;
}

static void verdict_of(const struct calib_sweep_sum *s, unsigned n, struct calib_verdict *v);

unsigned calib_judge(struct calib_sweep_sum *s, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                     struct calib_verdict *v)
{
    char a[32], b[32];
    memset(v, 0, sizeof(*v));
    if (n > CALIB_MAX_SWEEPS)
        n = CALIB_MAX_SWEEPS;
    unsigned with_llc = 0;
    for (unsigned i = 0; i < n; i++)
        with_llc += s[i].knee[CALIB_LLC] != 0;
    /* checks on each sweep alone */
    for (unsigned i = 0; i < n; i++) {
        struct calib_sweep_sum *w = &s[i];
        const double *p = w->plateau_ns;
        w->reject[0] = 0;
        if (isfinite(w->wait_pct) && w->wait_pct > IB_BUSY_WAIT_PCT) {
            snprintf(w->reject, sizeof(w->reject), "its thread waited %.0f %% of the time for a CPU", w->wait_pct);
            continue;
        }
        for (int l = CALIB_L1; l <= CALIB_L2 && !w->reject[0]; l++)
            if (w->knee[l] && claimed[l] && w->knee[l] > claimed[l] / 4 * 5)
                snprintf(w->reject, sizeof(w->reject), "%s knee %s above its claim of %s", calib_level_name(l),
                         fmt_bytes((double)w->knee[l], a, sizeof(a)), fmt_bytes((double)claimed[l], b, sizeof(b)));
        if (w->reject[0])
            continue;
        if (w->knee[CALIB_LLC] && w->knee[CALIB_LLC] <= llc_lo_bytes(claimed))
            snprintf(w->reject, sizeof(w->reject), "LLC knee %s inside the window its LLC latency was read from",
                     fmt_bytes((double)w->knee[CALIB_LLC], a, sizeof(a)));
        else if (w->knee[CALIB_LLC] && p[CALIB_NLEVELS] > 0 && p[CALIB_LLC] * 2 > p[CALIB_NLEVELS])
            snprintf(w->reject, sizeof(w->reject), "LLC latency %.1f ns is DRAM-like (DRAM %.1f ns)", p[CALIB_LLC],
                     p[CALIB_NLEVELS]);
        else if (!w->knee[CALIB_LLC] && claimed[CALIB_LLC] && 2 * with_llc > n)
            snprintf(w->reject, sizeof(w->reject), "no LLC knee, where most sweeps found one");
    }
    /* the LLC latency against the quietest sweep's: interference only ever adds latency */
    double quiet = 0;
    for (unsigned i = 0; i < n; i++)
        if (!s[i].reject[0] && s[i].plateau_ns[CALIB_LLC] > 0 && (!(quiet > 0) || s[i].plateau_ns[CALIB_LLC] < quiet))
            quiet = s[i].plateau_ns[CALIB_LLC];
    for (unsigned i = 0; i < n; i++)
        if (!s[i].reject[0] && quiet > 0 && s[i].plateau_ns[CALIB_LLC] > 1.25 * quiet)
            snprintf(s[i].reject, sizeof(s[i].reject),
                     "LLC latency %.1f ns, %.0f %% above the quietest sweep's %.1f ns", s[i].plateau_ns[CALIB_LLC],
                     100 * (s[i].plateau_ns[CALIB_LLC] / quiet - 1), quiet);
    verdict_of(s, n, v);
    return v->nkept;
}

/* The medians and ranges of the sweeps not rejected. */
static void verdict_of(const struct calib_sweep_sum *s, unsigned n, struct calib_verdict *v)
{
    memset(v, 0, sizeof(*v));
    for (unsigned i = 0; i < n; i++)
        v->nkept += !s[i].reject[0];
    for (int l = 0; l < CALIB_NLEVELS; l++) {
        v->knee[l] = knee_median(s, n, l, &v->knee_lo[l], &v->knee_hi[l]);
        v->spread[l] = v->knee[l] ? (double)(v->knee_hi[l] - v->knee_lo[l]) / (double)v->knee[l] : 0;
    }
    for (int l = 0; l <= CALIB_NLEVELS; l++) {
        double x[CALIB_MAX_SWEEPS];
        unsigned k = 0;
        for (unsigned i = 0; i < n; i++)
            if (!s[i].reject[0] && s[i].plateau_ns[l] > 0)
                x[k++] = s[i].plateau_ns[l];
        v->plateau_ns[l] = k ? ib_median(x, k) : 0;
    }
    int lv = v->knee[CALIB_LLC] ? CALIB_LLC : CALIB_L2;
    v->agree = v->nkept >= CALIB_MIN_SWEEPS && v->spread[lv] <= CALIB_AGREE_SPREAD;
}

void calib_settle(struct calib_sweep_sum *s, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                  struct calib_verdict *v, char *note, size_t len)
{
    char a[32], b[32];
    if (n > CALIB_MAX_SWEEPS)
        n = CALIB_MAX_SWEEPS;
    if (len)
        *note = 0;
    if (calib_judge(s, n, claimed, v) > 0) {
        if (v->nkept < CALIB_MIN_SWEEPS)
            snprintf(note, len, "only %u of %u sweeps passed their checks: their median is used", v->nkept, n);
        else if (!v->agree)
            snprintf(note, len,
                     "%u of %u sweeps passed their checks and their LLC knees spread %.0f %% (%s-%s), over the %.0f "
                     "%% bound: their median is used", v->nkept, n, 100 * v->spread[CALIB_LLC],
                     fmt_bytes((double)v->knee_lo[CALIB_LLC], a, sizeof(a)),
                     fmt_bytes((double)v->knee_hi[CALIB_LLC], b, sizeof(b)), 100 * CALIB_AGREE_SPREAD);
        return;
    }
    /* On a host busy on every CPU all sweeps may have waited: the ones consistent apart from that come next, then
     * all of them; either way it is said, and the start-of-run check tests the size again.  s keeps its verdicts. */
    struct calib_sweep_sum all[CALIB_MAX_SWEEPS];
    memcpy(all, s, n * sizeof(all[0]));
    double wlo = NAN, whi = NAN;
    for (unsigned i = 0; i < n; i++) {
        if (isfinite(all[i].wait_pct)) {
            wlo = isnan(wlo) || all[i].wait_pct < wlo ? all[i].wait_pct : wlo;
            whi = isnan(whi) || all[i].wait_pct > whi ? all[i].wait_pct : whi;
        }
        all[i].wait_pct = NAN;
    }
    if (isfinite(wlo) && calib_judge(all, n, claimed, v) > 0) {
        snprintf(note, len,
                 "every sweep of %u was rejected, %s waited for a CPU (%.0f-%.0f %% of the time): the median of the %u "
                 "consistent apart from that is used, and may be off", n, whi > IB_BUSY_WAIT_PCT ? "some" : "none",
                 wlo, whi, v->nkept);
        return;
    }
    for (unsigned i = 0; i < n; i++)
        all[i].reject[0] = 0;
    verdict_of(all, n, v);
    v->agree = 0;
    snprintf(note, len, "no sweep of %u passed its checks (first: %s): the median of all is used, unchecked", n,
             s[0].reject);
}

int calib_check_judge(double level_ns, double next_ns, double inside_ns, double outside_ns, char *why, size_t len)
{
    if (!(level_ns > 0) || !(next_ns > level_ns)) {
        ib_why(why, len, 0, "no latencies to judge against");
        return 0;
    }
    double thr = sqrt(level_ns * next_ns);
    if (!(inside_ns < thr)) {
        ib_why(why, len, 0, "inside %.0f ns, DRAM-like", inside_ns);
        return 0;
    }
    if (!(outside_ns > thr)) {
        ib_why(why, len, 0, "outside %.0f ns, still LLC-like", outside_ns);
        return 0;
    }
    if (why && len)
        *why = 0;
    return 1;
}

/* The sizes of one sweep: 2^(1/4) apart from 16 KiB to top, and 2^(1/8) apart within [dense/1.6, dense*1.6]. */
static unsigned sweep_plan(uint64_t top, uint64_t dense, uint64_t *sz, unsigned max)
{
    unsigned n = 0;
    for (double b = 16 * 1024; b <= (double)top * 1.0001 && n < max; b *= 1.189207115) {
        if (dense && b > dense / 1.6 && b < dense * 1.6) { /* the dense stretch, in eighths of an octave */
            for (double d = b; d < dense * 1.6 && d <= (double)top * 1.0001 && n < max; d *= 1.090507733)
                sz[n++] = (uint64_t)d & ~(uint64_t)63;
            while (b * 1.189207115 < dense * 1.6)
                b *= 1.189207115;
            continue;
        }
        sz[n++] = (uint64_t)b & ~(uint64_t)63;
    }
    return n;
}

struct sweep_run {
    void *buf;
    const atomic_int *stop;
    calib_progress_fn progress;
    void *arg;
    unsigned done, total; /* points, for the progress bar */
};

/* One sweep over sz[0..n) into pts, with the thread's run-queue wait over it (NAN when unknown). */
static int sweep_once(struct sweep_run *r, const uint64_t *sz, unsigned n, int full, struct calib_point *pts,
                      double *wait_pct)
{
    struct ib_sched a, b;
    char w[64];
    int have = ib_sched_thread(0, &a, w, sizeof(w)) == 0;
    double est = 1.0;
    for (unsigned i = 0; i < n; i++) {
        if (r->stop && atomic_load(r->stop))
            return -EINTR;
        est = full ? measure_point(r->buf, sz[i], est, 3e6, 5) : measure_point(r->buf, sz[i], est, 1.5e6, 3);
        pts[i] = (struct calib_point){sz[i], est};
        r->done++;
        if (r->progress)
            r->progress(r->arg, "latency sweeps", (double)r->done / (r->total > r->done ? r->total : r->done + 1));
    }
    *wait_pct = have && ib_sched_thread(0, &b, w, sizeof(w)) == 0 ? ib_sched_wait_pct(&a, &b) : NAN;
    return 0;
}

/* A chase's latency at one size, for the checks: the median of 3 short timed walks after a warm pass. */
static double check_point(void *buf, uint64_t bytes)
{
    return chase_latency_ns(buf, bytes & ~(uint64_t)63, 100000, 3, bytes * 2654435761ULL + 7);
}

/* 1 for the memory bandwidths ("l2", "llc", "dram"), whose working sets derive from the cache knees; else 0. */
static int calib_kind_is_memory(const char *kind)
{
    return !strcmp(kind, "l2") || !strcmp(kind, "llc") || !strcmp(kind, "dram");
}

int calib_measure_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop,
                         calib_progress_fn progress, void *arg, char *why, size_t len)
{
    struct topo_cache tc;
    int llc = topo_llc_level(t);
    memset(c->claimed, 0, sizeof(c->claimed));
    if (topo_cache_info(t, 1, false, cpu, &tc) == 0)
        c->claimed[CALIB_L1] = tc.size;
    if (llc >= 2 && topo_cache_info(t, 2, false, cpu, &tc) == 0)
        c->claimed[CALIB_L2] = tc.size;
    if (llc >= 2 && topo_cache_info(t, llc, false, cpu, &tc) == 0)
        c->claimed[CALIB_LLC] = tc.size;
    if (llc == 2) /* two-level machine: the L2 is the LLC */
        c->claimed[CALIB_L2] = 0;
    uint64_t top = 4 * c->claimed[CALIB_LLC];
    if (top < 64 * IB_MIB)
        top = 64 * IB_MIB;
    if (top > IB_GIB)
        top = IB_GIB;

    struct bind_guard g = {0};
    int rc = bind_push(&g, t, cpu);
    if (rc < 0) {
        bind_pop(&g);
        return ib_why(why, len, rc, "cannot bind to CPU %d for the latency sweep", cpu);
    }
    void *buf = ib_map(top, 1);
    struct calib_point(*pts)[CALIB_MAX_SWEEP] = calloc(CALIB_MAX_SWEEPS, sizeof(*pts));
    unsigned npts[CALIB_MAX_SWEEPS] = {0};
    if (!buf || !pts) {
        if (buf)
            ib_unmap(buf, top);
        free(pts);
        bind_pop(&g);
        char b[32];
        return ib_why(why, len, -ENOMEM, "cannot map %s for the latency sweep", fmt_bytes((double)top, b, sizeof(b)));
    }
    memset(buf, 1, top);
    uint64_t sz[CALIB_MAX_SWEEP];
    struct sweep_run r = {.buf = buf, .stop = stop, .progress = progress, .arg = arg};
    struct calib_sweep_sum sums[CALIB_MAX_SWEEPS];
    struct calib_verdict v = {0};
    unsigned ns = 0, nfull = sweep_plan(top, 0, sz, CALIB_MAX_SWEEP);
    uint64_t dram_from = 2 * c->claimed[CALIB_LLC];
    char held_why[160] = "";
    double in_ns = 0;
    int held = 0;
    r.total = nfull + (CALIB_MIN_SWEEPS - 1) * (nfull * 3 / 4);
    /* The first sweep is the full one: it measures the DRAM plateau, which the shorter ones that follow borrow. */
    while (rc == 0 && ns < CALIB_MAX_SWEEPS) {
        uint64_t guess = ns ? v.knee[CALIB_LLC] : 0;
        if (ns && !guess) /* fall back on any sweep's LLC knee to place the short sweep */
            for (unsigned i = 0; i < ns && !guess; i++)
                guess = sums[i].knee[CALIB_LLC];
        uint64_t stop_at = ns && guess ? 4 * guess : top;
        if (stop_at < 16 * IB_MIB)
            stop_at = 16 * IB_MIB;
        if (stop_at > top || dram_from == 0)
            stop_at = top;
        unsigned n = sweep_plan(stop_at, guess, sz, CALIB_MAX_SWEEP - CALIB_MAX_SWEEP / 4);
        struct calib_sweep_sum *w = &sums[ns];
        memset(w, 0, sizeof(*w));
        if ((rc = sweep_once(&r, sz, n, ns == 0, pts[ns], &w->wait_pct)) < 0)
            break;
        if (stop_at < top)
            for (unsigned i = 0; i < npts[0] && n < CALIB_MAX_SWEEP; i++)
                if (pts[0][i].bytes >= dram_from && pts[0][i].bytes > stop_at)
                    pts[ns][n++] = pts[0][i];
        qsort(pts[ns], n, sizeof(pts[ns][0]), cmp_pt);
        npts[ns] = n;
        calib_sweep_knees(pts[ns], n, c->claimed, w);
        ns++;
        calib_judge(sums, ns, c->claimed, &v);
        if (!v.agree)
            continue;
        /* the median knee itself, checked as a cached one is: just inside it must read LLC-like */
        if (v.knee[CALIB_LLC] && v.plateau_ns[CALIB_NLEVELS] > 0) {
            uint64_t in = (uint64_t)((double)v.knee[CALIB_LLC] * CALIB_CHECK_IN);
            in_ns = check_point(buf, in);
            held = in_ns < sqrt(v.plateau_ns[CALIB_LLC] * v.plateau_ns[CALIB_NLEVELS]);
            if (!held)
                snprintf(held_why, sizeof(held_why), "%.0f ns just inside it", in_ns);
        } else {
            held = 1;
        }
        if (held)
            break;
    }
    ib_unmap(buf, top);
    bind_pop(&g);
    if (rc < 0) {
        free(pts);
        return ib_why(why, len, rc, "latency sweep interrupted");
    }
    calib_settle(sums, ns, c->claimed, &v, c->caches_note, sizeof(c->caches_note));
    if (!*c->caches_note && !held) {
        char a[32];
        snprintf(c->caches_note, sizeof(c->caches_note),
                 "the median LLC knee %s read %s after %u sweeps: used, but it may not hold",
                 fmt_bytes((double)v.knee[CALIB_LLC], a, sizeof(a)), held_why, ns);
    }
    /* the sweep kept for the record: the one whose LLC knee is the median */
    unsigned pick = 0;
    for (unsigned i = 0; i < ns; i++)
        if ((sums[i].knee[CALIB_LLC] & ~(uint64_t)63) == v.knee[CALIB_LLC]) {
            pick = i;
            break;
        }
    memcpy(c->sweep, pts[pick], npts[pick] * sizeof(c->sweep[0]));
    c->nsweep = npts[pick];
    free(pts);
    memcpy(c->measured, v.knee, sizeof(c->measured));
    memcpy(c->knee_lo, v.knee_lo, sizeof(c->knee_lo));
    memcpy(c->knee_hi, v.knee_hi, sizeof(c->knee_hi));
    memcpy(c->spread, v.spread, sizeof(c->spread));
    memcpy(c->plateau_ns, v.plateau_ns, sizeof(c->plateau_ns));
    memcpy(c->sweeps, sums, ns * sizeof(sums[0]));
    c->nsweeps = ns;
    c->have_caches = 1;
    c->sweep_cpu = cpu;
    c->caches_when = (int64_t)time(NULL);
    c->dirty = 1;
    /* the memory bandwidths' working sets derive from the knees: forget those measured against older knees; the
     * peak issue rates, the interconnect and the I/O paths do not depend on cache sizes and stay */
    unsigned keep = 0;
    for (unsigned i = 0; i < c->nbw; i++)
        if (!calib_kind_is_memory(c->bw[i].kind))
            c->bw[keep++] = c->bw[i];
    c->nbw = keep;
    return 0;
}

int calib_recheck(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop, struct calib_check *r,
                  char *why, size_t len)
{
    memset(r, 0, sizeof(*r));
    r->level = CALIB_LLC;
    r->size = calib_effective(c, CALIB_LLC);
    double lat = c->plateau_ns[CALIB_LLC], next = c->plateau_ns[CALIB_NLEVELS];
    if (!c->have_caches || !c->measured[CALIB_LLC] || !r->size || !(lat > 0) || !(next > lat))
        return ib_why(why, len, -ENOENT, "no measured LLC size to check");
    uint64_t out = (uint64_t)((double)r->size * CALIB_CHECK_OUT);
    struct bind_guard g = {0};
    int rc = bind_push(&g, t, cpu);
    if (rc < 0) {
        bind_pop(&g);
        return ib_why(why, len, rc, "cannot bind to CPU %d to check the cached LLC size", cpu);
    }
    uint64_t t0 = clk_mono_ns();
    void *buf = ib_map(out, 1);
    if (!buf) {
        bind_pop(&g);
        return ib_why(why, len, -ENOMEM, "cannot map %llu bytes to check the cached LLC size",
                      (unsigned long long)out);
    }
    memset(buf, 1, out);
    r->inside_ns = check_point(buf, (uint64_t)((double)r->size * CALIB_CHECK_IN));
    r->outside_ns = check_point(buf, out);
    ib_unmap(buf, out);
    bind_pop(&g);
    r->cost_s = (double)(clk_mono_ns() - t0) / 1e9;
    r->held = calib_check_judge(lat, next, r->inside_ns, r->outside_ns, r->why, sizeof(r->why));
    if (r->held)
        return 0;
    if (stop && atomic_load(stop))
        return ib_why(why, len, -EINTR, "interrupted");
    rc = calib_measure_caches(c, t, cpu, stop, NULL, NULL, why, len);
    if (rc < 0)
        return rc;
    r->remeasured = 1;
    r->new_size = calib_effective(c, CALIB_LLC);
    return 0;
}

int calib_need_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop, char *why, size_t len)
{
    if (c->have_caches)
        return 0;
    return calib_measure_caches(c, t, cpu, stop, NULL, NULL, why, len);
}

/* ---- bandwidth ------------------------------------------------------------------------------------------ */

uint64_t calib_bw_ws(const struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     unsigned nthreads)
{
    if (nthreads == 0)
        nthreads = 1;
    uint64_t l2 = calib_effective(c, CALIB_L2), llc = calib_effective(c, CALIB_LLC), ws;
    struct topo_cache tc;
    uint64_t llc_claimed = topo_cache_info(t, topo_llc_level(t), false, -1, &tc) == 0 ? tc.size : llc;
    if (!strcmp(kind, "l2")) {
        ws = l2 ? l2 / 2 : 128 * IB_KIB; /* inside L2, well beyond L1 */
    } else if (!strcmp(kind, "llc")) {
        /* inside the effective LLC but well beyond L2: half the LLC shared out, at least 1.5x an L2 each, but never
         * more than 80 % of the LLC in all (staying in the LLC wins when many threads share a small one) */
        ws = llc / 2 / nthreads;
        if (ws < l2 + l2 / 2)
            ws = l2 + l2 / 2;
        if (ws * nthreads > llc / 10 * 8)
            ws = llc / 10 * 8 / nthreads;
    } else { /* dram: at least 4x the larger of the claimed and the effective LLC, at most 10 % of memory */
        uint64_t big = llc_claimed > llc ? llc_claimed : llc;
        uint64_t total = 4 * big;
        if (total < 64 * IB_MIB)
            total = 64 * IB_MIB;
        uint64_t cap = m && m->mem_total ? m->mem_total / 10 : total;
        if (total > cap)
            total = cap;
        ws = total / nthreads;
    }
    return ws & ~(uint64_t)4095;
}

int calib_cpus_key(const int *cpus, unsigned n, char *buf, size_t len)
{
    if (len)
        *buf = 0;
    if (!n)
        return -EINVAL;
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    if (!b)
        return -ENOMEM;
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++)
        rc = cpus[i] < 0 ? -EINVAL : hwloc_bitmap_set(b, (unsigned)cpus[i]) < 0 ? -ENOMEM : 0;
    if (rc == 0) {
        int w = hwloc_bitmap_list_snprintf(buf, len, b);
        rc = w < 0 ? -EINVAL : (size_t)w >= len ? -ENAMETOOLONG : 0;
    }
    if (rc < 0 && len)
        *buf = 0; /* never a cut key */
    hwloc_bitmap_free(b);
    return rc;
}

int calib_bw_store(struct calib *c, const struct calib_bw *e)
{
    if (strnlen(e->kind, sizeof(e->kind)) >= sizeof(e->kind) || !e->kind[0] ||
        strnlen(e->cpus, sizeof(e->cpus)) >= sizeof(e->cpus) || !e->cpus[0])
        return -ENAMETOOLONG;
    struct calib_bw *slot = NULL;
    for (unsigned i = 0; i < c->nbw && !slot; i++)
        if (!strcmp(c->bw[i].kind, e->kind) && !strcmp(c->bw[i].cpus, e->cpus))
            slot = &c->bw[i];
    if (!slot && c->nbw < CALIB_MAX_BW)
        slot = &c->bw[c->nbw++];
    for (unsigned i = 0; !slot && i < c->nbw; i++) /* full: the oldest entry gives way */
        if (i == 0 || c->bw[i].when < slot->when)
            slot = &c->bw[i];
    *slot = *e;
    c->dirty = 1;
    return 0;
}

const struct calib_bw *calib_bw_find(const struct calib *c, const char *kind, const int *cpus, unsigned n)
{
    char key[CALIB_CPUS_LEN];
    if (calib_cpus_key(cpus, n, key, sizeof(key)) < 0)
        return NULL;
    for (unsigned i = 0; i < c->nbw; i++)
        if (!strcmp(c->bw[i].kind, kind) && !strcmp(c->bw[i].cpus, key))
            return &c->bw[i];
    return NULL;
}

enum calib_kind_class calib_kind_class(const char *k)
{
    if (calib_kind_is_memory(k))
        return CALIB_CLASS_MEMORY;
    if ((k[0] == 'd' && k[1] && strchr("rwm", k[1]) && k[2] >= '0' && k[2] <= '9') || k[0] == 'n')
        return CALIB_CLASS_IO;
    return CALIB_CLASS_OPS;
}

const char *calib_kind_unit(const char *kind)
{
    if (calib_kind_class(kind) != CALIB_CLASS_OPS)
        return "B/s";
    return !strcmp(kind, "interconnect") ? "msg/s" : "ops/s";
}

enum stream_op calib_bw_op(const char *kind) { return !strcmp(kind, "dram") ? STREAM_TRIAD : STREAM_READ; }

size_t calib_bw_chunk(const char *kind)
{
    return !strcmp(kind, "dram") ? 2 * IB_MIB : !strcmp(kind, "llc") ? 4 * IB_MIB : 8 * IB_MIB;
}

/* One thread's buffer; the threads step through it as the SoI does: same chunks, same wrap, a clock read a step. */
struct bw_job {
    uint64_t ws;
    enum stream_op op;
    size_t chunk;
    struct {
        void *buf;
        char pad[56]; /* one cache line per thread */
    } t[];
};

#define BW_REPS 5
#define BW_REP_NS (120 * IB_NS_PER_MS)

static int bw_setup(void *arg, unsigned tid)
{
    struct bw_job *j = arg;
    void *buf = ib_map(j->ws, 1);
    if (!buf)
        return -ENOMEM;
    memset(buf, 1, j->ws); /* first touch on this CPU: NUMA-local pages */
    j->t[tid].buf = buf;
    return 0;
}

static int bw_window(void *arg, unsigned tid, int rep, uint64_t ns, double *bps)
{
    (void)rep;
    struct bw_job *j = arg;
    void *buf = j->t[tid].buf;
    volatile uint64_t sink = 0;
    size_t pos = 0;
    sink += stream_step(buf, j->ws, &pos, j->ws, j->op); /* warm */
    uint64_t bytes = 0, t0 = clk_mono_ns(), dt;
    do {
        bytes += stream_step(buf, j->ws, &pos, j->chunk, j->op);
        dt = clk_mono_ns() - t0;
    } while (dt < ns);
    (void)sink;
    *bps = (double)bytes / ((double)dt / 1e9);
    return 0;
}

static void bw_teardown(void *arg, unsigned tid)
{
    struct bw_job *j = arg;
    ib_unmap(j->t[tid].buf, j->ws);
    j->t[tid].buf = NULL;
}

int calib_measure_bw(struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     const int *cpus, unsigned n, const atomic_int *stop, double *bps, char *why, size_t len)
{
    if (strcmp(kind, "l2") && strcmp(kind, "llc") && strcmp(kind, "dram"))
        return ib_why(why, len, -EINVAL, "unknown bandwidth kind '%s'", kind);
    if (n == 0 || n > 1024)
        return ib_why(why, len, -EINVAL, "bad CPU count %u", n);
    if (!topo_is_this_machine(t))
        return ib_why(why, len, -ENOTSUP, "bandwidth can only be measured on this machine's topology");
    uint64_t ws = calib_bw_ws(c, t, m, kind, n);
    struct bw_job *j = calloc(1, sizeof(*j) + (size_t)n * sizeof(j->t[0]));
    if (!j)
        return ib_why(why, len, -ENOMEM, "%s bandwidth measurement failed: out of memory", kind);
    *j = (struct bw_job){.ws = ws, .op = calib_bw_op(kind), .chunk = calib_bw_chunk(kind)};
    char what[48];
    snprintf(what, sizeof(what), "%s bandwidth measurement", kind);
    struct meas_spec sp = {.what = what, .n = n, .cpus = cpus, .topo = t, .stop = stop, .arg = j, .nmeasure = n,
                           .windows = BW_REPS, .window_ns = BW_REP_NS, .setup = bw_setup, .window = bw_window,
                           .teardown = bw_teardown};
    struct meas_out o = {0};
    int rc = meas_run(&sp, &o, why, len);
    free(j);
    if (rc < 0)
        return rc;
    struct calib_bw e = {.ws_bytes = ws, .bps = o.median, .spread = o.spread, .when = (int64_t)time(NULL)};
    snprintf(e.kind, sizeof(e.kind), "%s", kind);
    if (calib_cpus_key(cpus, n, e.cpus, sizeof(e.cpus)) == 0) /* else measured, but too long a key to cache */
        calib_bw_store(c, &e);
    *bps = o.median;
    return 0;
}

int calib_need_bw(struct calib *c, const struct topo *t, const struct mlim *m, const char *kind, const int *cpus,
                  unsigned n, const atomic_int *stop, double *bps, char *why, size_t len)
{
    int rc = calib_need_caches(c, t, cpus[0], stop, why, len);
    if (rc < 0)
        return rc;
    const struct calib_bw *e = calib_bw_find(c, kind, cpus, n);
    if (e && e->ws_bytes == calib_bw_ws(c, t, m, kind, n)) {
        *bps = e->bps;
        return 0;
    }
    return calib_measure_bw(c, t, m, kind, cpus, n, stop, bps, why, len);
}
