/* validate.c - the validation method (validate.h, docs/validation.md). */
#define _GNU_SOURCE
#include "validate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "engine.h"
#include "ib_err.h"
#include "output.h"
#include "parse.h"
#include "stats.h"

const char *val_verdict_name(enum val_verdict v)
{
    static const char *const n[] = {"pass", "FAIL", "skipped", "undecidable", "interrupted", "BUSY", "ISOLATED",
                                    "UNCHECKED"};
    return (unsigned)v < IB_ARRAY_SIZE(n) ? n[v] : "?";
}

enum val_verdict val_busy_rule(enum val_verdict measured, double wait_all_pct, double wait_worst_pct)
{
    if (measured == VAL_SKIPPED || measured == VAL_INTERRUPTED || measured == VAL_BUSY)
        return measured;
    if (ib_busy(wait_all_pct))
        return VAL_BUSY;
    if ((measured == VAL_FAIL || measured == VAL_UNDECIDABLE || measured == VAL_UNCHECKED ||
         measured == VAL_ISOLATED) && ib_busy(wait_worst_pct))
        return VAL_BUSY;
    return measured;
}

int val_busy_judged(double wait_per_run_us) { return ib_busy_waits(wait_per_run_us); }

/* BUSY's reason, in place of the readings' own: the figure first (over every step when that is above the bound, else
 * the worst step's), then what the readings alone said. */
static void busy_reason(char *reason, size_t len, enum val_verdict measured, double all, double worst,
                        double worst_level, const struct ib_pressure *p)
{
    char fig[256], was[640];
    int n;
    snprintf(was, sizeof(was), "%s", reason);
    if (ib_busy(all))
        ib_busy_text(all, p, fig, sizeof(fig));
    else {
        char t[200];
        ib_busy_text(worst, NULL, t, sizeof(t));
        snprintf(fig, sizeof(fig), "in a step at %.0f %% %s (%.1f %% over every step)", worst_level, t, all);
    }
    /* the figure first: what a short buffer cuts is the tail of the readings' own reason, marked "..." */
    n = snprintf(reason, len, "%s; the readings alone: %s: %s", fig, val_verdict_name(measured), was);
    if (n >= (int)len && len > 4)
        memcpy(reason + len - 4, "...", 4);
}

const char *const val_mprobes[VAL_NPROBES] = {"pagecache", "stream-dram", "chase-dram", "chase-llc", "stream-llc",
                                              "chase-l2",  "ops-int",     "disk-rand",  "disk-seq",  "net"};
/* the probes that count wall time on an I/O path: their cells need longer steps */
static const unsigned char mprobe_io[VAL_NPROBES] = {0, 0, 0, 0, 0, 0, 0, 1, 1, 1};

static int mprobe_index(const char *name)
{
    for (unsigned i = 0; i < VAL_NPROBES; i++)
        if (!strcmp(val_mprobes[i], name))
            return (int)i;
    return -1;
}

static int stopped(const atomic_int *stop) { return stop && atomic_load(stop); }

int val_works_on_cpu(const struct soi_ops *ops) { return ops && ops->kind != SOI_FOOTPRINT && !ops->io; }

int val_work_cpu_ok(double w) { return isfinite(w) && w >= VAL_WORK_CPU_MIN_PCT && w <= VAL_WORK_CPU_MAX_PCT; }

/* ---- the real meter: beside_run on the open SoI and the probes ------------------------------------------------- */

struct val_ctx {
    struct machine *m;
    struct val_opts o;
    int soi_cpu, other_cpu;
    struct vprobe probes[VAL_NPROBES];
    int probe_ok[VAL_NPROBES];
    char probe_why[VAL_NPROBES][160];
    struct soi *s; /* the open SoI */
    int bad_input; /* the last real_open failed on the user's input (soi_open's mark) */
    int cpus[SOI_MAX_THREADS];
    struct soi_env env;
    struct val_meter meter;
};

/* The probe, initialised once (its data is built on first use and kept until val_close). */
static struct vprobe *get_probe(struct val_ctx *c, const char *name, char *why, size_t len)
{
    int i = mprobe_index(name);
    if (i < 0) { /* a probe outside the matrix (a ramp's own): kept in no slot, so not cached */
        ib_why(why, len, -ENOENT, "no probe %s in the matrix", name);
        return NULL;
    }
    if (c->probe_ok[i] == 0) {
        int rc = vprobe_init(&c->probes[i], name, &c->m->calib, &c->m->mlim, c->o.dir, NULL, c->other_cpu,
                             c->probe_why[i], sizeof(c->probe_why[i]));
        c->probe_ok[i] = rc < 0 ? -1 : 1;
    }
    if (c->probe_ok[i] < 0) {
        snprintf(why, len, "%s", c->probe_why[i]);
        return NULL;
    }
    return &c->probes[i];
}

/* Ramp probes not in the matrix (chase-l1, tlb): one at a time, released with the SoI. */
static struct vprobe *ramp_probe(struct val_ctx *c, const char *name, struct vprobe *own, int *owned, char *why,
                                 size_t len)
{
    *owned = 0;
    if (mprobe_index(name) >= 0)
        return get_probe(c, name, why, len);
    if (vprobe_init(own, name, &c->m->calib, &c->m->mlim, c->o.dir, NULL, c->other_cpu, why, len) < 0)
        return NULL;
    *owned = 1;
    return own;
}

/* Open an SoI on soi_cpu with settings that keep it quick and safe: its options' quick values (smaller files). */
static int real_open(void *ctx, const struct soi_ops *ops, int fresh, char *why, size_t len)
{
    struct val_ctx *c = ctx;
    unsigned n = ops->min_threads > 1 ? ops->min_threads : 1;
    if (ops->placement == SOI_PLACE_SPREAD) {
        int rc = topo_spread(c->m->topo, c->soi_cpu, n, c->cpus);
        if (rc < 0) /* c->cpus holds nothing to run on */
            return ib_why(why, len, rc, "%s: cannot place %u thread(s) apart from CPU %d: %s", ops->name, n,
                          c->soi_cpu, strerror(-rc));
    } else {
        for (unsigned i = 0; i < n; i++)
            c->cpus[i] = c->soi_cpu;
    }
    soi_env_init(&c->env, ops, c->m, n, c->cpus, c->other_cpu, c->o.stop);
    soi_opts_quick(&c->env);
    c->env.cached_capacity = !fresh;
    c->env.dir = c->o.dir;
    return soi_open(ops, &c->env, &c->s, &c->bad_input, why, len);
}

static void real_close(void *ctx)
{
    struct val_ctx *c = ctx;
    soi_close(c->s);
    c->s = NULL;
}

static int real_beside(void *ctx, const char *probe, int probe_cpu, const double *levels, unsigned nlevels,
                       unsigned cycles, uint64_t step_ns, uint64_t settle_ns, struct beside_result *out, char *why,
                       size_t len)
{
    struct val_ctx *c = ctx;
    struct vprobe own;
    int owned;
    struct vprobe *p = ramp_probe(c, probe, &own, &owned, why, len);
    if (!p)
        return -ENOTSUP;
    int rc = beside_run(c->s, levels, nlevels, cycles, step_ns, settle_ns, probe_cpu, &p->bp, c->o.stop, out, why,
                        len);
    if (owned)
        vprobe_fini(&own);
    return rc;
}

/* Is this bandwidth a shared bottleneck of the two CPUs at all? Both streaming at once against one alone, measured
 * now, back to back: 1 when two CPUs get at least 90 % of twice one (nothing for a probe to feel). A shared host
 * moves this within minutes (docs/validation.md), so it only explains a ramp that showed no effect; it never
 * replaces one. */
static int real_unshared(void *ctx, const char *kind, int pcpu, char *why, size_t len)
{
    struct val_ctx *c = ctx;
    int one[1] = {c->soi_cpu}, two[2] = {pcpu, c->soi_cpu};
    double b1 = 0, b2 = 0;
    char w[256];
    out_progress("validate", "is %s bandwidth shared by CPUs %d and %d?", kind, pcpu, c->soi_cpu);
    if (calib_measure_bw(&c->m->calib, c->m->topo, &c->m->mlim, kind, one, 1, c->o.stop, &b1, w, sizeof(w)) < 0 ||
        calib_measure_bw(&c->m->calib, c->m->topo, &c->m->mlim, kind, two, 2, c->o.stop, &b2, w, sizeof(w)) < 0 ||
        b1 <= 0)
        return -1;
    char r1[32], r2[32];
    snprintf(why, len, "%s bandwidth is no shared bottleneck of CPUs %d and %d now: both at once stream %s, "
             "%.0f %% of twice one (%s)", kind, pcpu, c->soi_cpu, fmt_scaled(b2, 0, 1, "B/s", r2, sizeof(r2)),
             100 * b2 / (2 * b1), fmt_scaled(b1, 0, 1, "B/s", r1, sizeof(r1)));
    return b2 >= 0.9 * 2 * b1;
}

int val_open(struct val_ctx **out, struct machine *m, const struct val_opts *o, char *why, size_t len)
{
    struct val_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return ib_why(why, len, -ENOMEM, "out of memory");
    c->m = m;
    c->o = *o;
    unsigned npus = topo_npus(m->topo);
    c->soi_cpu = topo_pu_os(m->topo, npus - 1);
    c->other_cpu = npus > 1 ? topo_pu_os(m->topo, 0) : -1;
    c->meter = (struct val_meter){real_open, real_close, real_beside, real_unshared, c};
    *out = c;
    if (!m->calib.have_caches) { /* the probes' sizes come from the effective caches */
        out_progress("validate", "measuring this machine's caches once");
        calib_measure_caches(&m->calib, m->topo, c->soi_cpu, o->stop, NULL, NULL, why, len);
    }
    return 0;
}

int val_soi_cpu(const struct val_ctx *c) { return c->soi_cpu; }
int val_probe_cpu(const struct val_ctx *c) { return c->other_cpu; }

void val_close(struct val_ctx *c)
{
    if (!c)
        return;
    if (c->s)
        real_close(c);
    for (unsigned k = 0; k < VAL_NPROBES; k++)
        if (c->probe_ok[k] > 0)
            vprobe_fini(&c->probes[k]);
    free(c);
}

/* The outside meter at every step: read after each step (the engine's on_step, workers parked), and once before. */
struct xread {
    struct val_xmeter *xm;
    double *c;     /* c[0]: before the ramp; c[i + 1]: after step i (NAN: the read failed) */
    unsigned n;
    char why[200]; /* the first failure */
};

static void xread_step(void *arg, const struct step_result *r, unsigned nsteps)
{
    (void)nsteps;
    struct xread *x = arg;
    if (r->index + 1 > x->n || !x->xm->read)
        return;
    double v;
    x->c[r->index + 1] = x->xm->read(x->xm, &v, x->why[0] ? NULL : x->why, sizeof(x->why)) == 0 ? v : NAN;
}

/* xc from the ramp's steps: a rate meter's figure is the count's growth over the step's wall time (the SoIs it
 * reads do their I/O inside a step and drain it before parking), a level meter's what it held after the step; a
 * duty SoI's is its workers' on-CPU share. */
static void xmeter_finish(const struct soi *s, const struct val_xmeter *xm, const struct xread *x, const double *xs,
                          const struct step_result *res, unsigned n, struct val_xcheck *xc)
{
    double v[2 * 9], self[2 * 9];
    const int duty = xm->kind == VPM_ONCPU;
    for (unsigned i = 0; i < n; i++) {
        self[i] = duty ? res[i].cpu_frac * 100 : res[i].achieved_pct;
        if (duty)
            v[i] = res[i].cpu_frac;
        else if (xm->rate)
            v[i] = res[i].wall_ns ? (x->c[i + 1] - x->c[i]) / ((double)res[i].wall_ns / IB_NS_PER_S) : NAN;
        else
            v[i] = x->c[i + 1];
    }
    snprintf(xc->what, sizeof(xc->what), "%s", xm->what);
    snprintf(xc->unit, sizeof(xc->unit), "%s", xm->unit);
    val_xmeter_judge(duty ? 0 : xm->rate, xs, v, self, n, duty ? 1.0 : s->capacity, xc);
    if (x->why[0]) {
        size_t k = strlen(xc->reason);
        snprintf(xc->reason + k, sizeof(xc->reason) - k, "; a reading failed: %s", x->why);
    }
}

/* ---- the self-meter ramp ---------------------------------------------------------------------------------------
 * Footprint SoIs climb 0..100 % and come back down: two readings per level. Rate and duty SoIs (CPU and I/O rates,
 * which this shared host moves by tens of % within a second) visit every level between two 100 % windows
 * (100, 0, 100, 25, 100, 50, 100, 75, 100, twice), so the capacity of the moment is known next to every reading.
 * Readings are achieved % of the capacity measured when the SoI opened; a duty SoI's are its workers' on-CPU % (their
 * own CPU time over the wall time: what an observer sees, and what its pacer holds at x). A paced level (25-75 %) must
 * read x. A rate SoI's reading whose neighbouring 100 %
 * windows fell below x + 5 % could not reach its target and is left out; a level left with no reading makes the
 * verdict "undecidable". 100 % is unpaced: what it reads is how far the capacity moved, reported, not judged.
 * Noise: the largest gap between a level's two readings. Pass: every paced level within 5 points + the noise of x
 * and R^2 >= 0.98 (over 0-75 % for a rate SoI); when readings disagree by more than 5 points, the bound decides. */
void val_self_ramp(struct soi *s, int quick, const atomic_int *stop, struct val_xmeter *xm, struct val_self *o,
                   struct val_xcheck *xc)
{
    const struct soi_ops *ops = s->ops;
    static const double lv[VAL_LEVELS] = {0, 25, 50, 75, 100};
    const int ref = ops->kind != SOI_FOOTPRINT, duty = ops->kind == SOI_DUTY;
    const uint64_t step = (ops->io ? 200 : quick ? 80 : 150) * IB_NS_PER_MS;
    double xs[2 * 9];
    unsigned n = 0;
    for (unsigned cy = 0; cy < 2; cy++) {
        if (ref) {
            for (unsigned i = 0; i < VAL_LEVELS - 1; i++) {
                xs[n++] = 100;
                xs[n++] = lv[i];
            }
            xs[n++] = 100;
        } else {
            for (unsigned i = 0; i < VAL_LEVELS; i++)
                xs[n++] = cy ? lv[VAL_LEVELS - 1 - i] : lv[i];
        }
    }
    struct ramp_sched sc = {0, NULL};
    struct step_result res[2 * 9];
    unsigned nd = 0;
    o->ran = 1;
    for (int r = 0; r < IB_PSI_N; r++)
        o->machine.some_pct[r] = o->machine.full_pct[r] = NAN;
    o->machine.steal_pct = o->wait_pct = o->wait_worst_pct = o->wait_worst_level = o->wait_run_us = NAN;
    for (unsigned l = 0; l < VAL_LEVELS; l++)
        o->wait[l] = NAN;
    o->method = duty ? "levels between 100 % windows, on-CPU %" : ref ? "levels between 100 % windows"
                                                                      : "climb and descend";
    o->tag = duty ? "duty" : ref ? "ref" : "climb";
    o->step_ms = (double)step / IB_NS_PER_MS;
    double counts[2 * 9 + 1];
    struct xread x = {xm, counts, n, ""};
    for (unsigned i = 0; i <= n; i++)
        counts[i] = NAN;
    if (xm && xm->read && xm->read(xm, &counts[0], x.why, sizeof(x.why)) < 0)
        counts[0] = NAN;
    struct engine_cb cb = {xread_step, &x};
    int rc = ramp_list(&sc, xs, n, step);
    if (rc == 0) {
        out_progress("validate", "%s: self-meter ramp, alone%s%s", ops->name, xm ? "; outside meter: " : "",
                     xm ? val_xmeter_kind_text(xm->kind) : "");
        rc = engine_run(s, &sc, stop, xm ? &cb : NULL, res, &nd, o->reason, sizeof(o->reason));
    }
    ramp_free(&sc);
    if (rc < 0 || nd != n) {
        o->verdict = o->measured = rc == -EINTR ? VAL_INTERRUPTED : VAL_FAIL;
        if (!o->reason[0])
            snprintf(o->reason, sizeof(o->reason), "%s", strerror(rc < 0 ? -rc : EIO));
        return;
    }
    double rd[VAL_LEVELS][4], lo100 = INFINITY, hi100 = 0, sum100 = 0, ach100 = 0;
    double cpu_sum[VAL_LEVELS] = {0}, ach_sum[VAL_LEVELS] = {0};
    unsigned k[VAL_LEVELS] = {0}, n100 = 0, limited = 0, nall[VAL_LEVELS] = {0};
    struct ib_sched lsch[VAL_LEVELS] = {{0}}, all = {0};
    o->wait_worst_pct = o->wait_worst_level = NAN;
    o->busy_steps = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned l = (unsigned)(xs[i] / 25);
        /* did the workers get their CPU (validate.h, busy rule)? every step that asks for some, whatever its reading */
        ib_sched_add(&lsch[l], &res[i].sched);
        ib_pressure_add(&o->machine, &res[i].machine);
        if (xs[i] > 0)
            ib_sched_add(&all, &res[i].sched);
        o->busy_steps += xs[i] > 0 && ib_busy(res[i].wait_pct);
        if (xs[i] > 0 && !isnan(res[i].wait_pct) && !(res[i].wait_pct <= o->wait_worst_pct)) {
            o->wait_worst_pct = res[i].wait_pct;
            o->wait_worst_level = xs[i];
        }
        double v = duty ? res[i].cpu_frac * 100 : res[i].achieved_pct;
        cpu_sum[l] += res[i].cpu_frac * 100; /* every reading: what the workers used, reachable target or not */
        ach_sum[l] += res[i].achieved_pct;
        nall[l]++;
        if (xs[i] == 100) {
            lo100 = fmin(lo100, v);
            hi100 = fmax(hi100, v);
            sum100 += v;
            ach100 += res[i].achieved_pct;
            n100++;
        } else if (ref && !duty && xs[i] > 0 &&
                   0.5 * (res[i - 1].achieved_pct + res[i + 1].achieved_pct) < xs[i] + 5) {
            limited++; /* the capacity of the moment was below the target */
            continue;
        }
        if (k[l] < 4)
            rd[l][k[l]++] = v;
    }
    double y[VAL_LEVELS], noise = 0, worst = 0;
    int missing = 0;
    for (unsigned l = 0; l < VAL_LEVELS; l++) {
        o->level[l] = lv[l];
        y[l] = 0;
        for (unsigned j = 0; j < k[l]; j++)
            y[l] += rd[l][j] / k[l];
        if (l < VAL_LEVELS - 1 && k[l] >= 2)
            noise = fmax(noise, fabs(rd[l][0] - rd[l][1]));
        if (l > 0 && l < VAL_LEVELS - 1)
            worst = fmax(worst, fabs(y[l] - lv[l]));
        missing |= k[l] == 0 && l < VAL_LEVELS - 1; /* 100 % has its own windows */
        o->achieved[l] = k[l] ? y[l] : NAN;
        o->readings[l] = k[l];
        o->on_cpu[l] = nall[l] ? cpu_sum[l] / nall[l] : NAN;
        o->work_cpu[l] = cpu_sum[l] > 0 ? 100 * ach_sum[l] / cpu_sum[l] : NAN;
        o->wait[l] = ib_sched_share(&lsch[l]);
    }
    o->wait_pct = ib_sched_share(&all);
    o->wait_run_us = ib_sched_wait_per_run_us(&all);
    o->calib_pct = n100 ? sum100 / n100 : 0;
    o->alone_pct = n100 ? ach100 / n100 : 0;
    y[VAL_LEVELS - 1] = o->calib_pct; /* every 100 % window */
    o->achieved[VAL_LEVELS - 1] = y[VAL_LEVELS - 1];
    o->readings[VAL_LEVELS - 1] = n100;
    /* a rate SoI's 100 % is unpaced (where the host's capacity is now): the fit is over the levels it paces */
    o->fit_levels = ref && !duty ? VAL_LEVELS - 1 : VAL_LEVELS;
    struct linfit lf = {0};
    linfit_compute(lv, y, o->fit_levels, &lf);
    o->slope = lf.slope;
    o->r2 = lf.r2;
    o->worst_pts = worst;
    o->noise_pts = noise;
    o->capacity_limited = limited;
    o->calib_lo = lo100;
    o->calib_hi = hi100;
    o->judged = 1;
    const unsigned top = VAL_LEVELS - 1; /* flat out: its work per CPU second is its kernel's speed (validate.h) */
    if (val_works_on_cpu(ops) && !val_work_cpu_ok(o->work_cpu[top])) {
        o->verdict = VAL_FAIL;
        snprintf(o->reason, sizeof(o->reason), "at 100 %% it did %.0f %% of its capacity per second of its own CPU "
                 "time (on CPU %.1f %% of the time; bar %.0f-%.0f %%): its step does not do the work it counts",
                 o->work_cpu[top], o->on_cpu[top], VAL_WORK_CPU_MIN_PCT, VAL_WORK_CPU_MAX_PCT);
    } else if (missing) {
        o->verdict = VAL_UNDECIDABLE;
        snprintf(o->reason, sizeof(o->reason), "the host took the capacity below the targets: 100 %% windows read "
                 "%.0f-%.0f %% of the calibration, %u readings could not reach theirs", lo100, hi100, limited);
    } else if ((lf.r2 < 0.98 && noise <= 5) || worst > 5 + noise) {
        o->verdict = VAL_FAIL;
        snprintf(o->reason, sizeof(o->reason), "a paced level is %.1f points from x, R^2 %.3f (bar: <= %.1f, R^2 >= "
                 "0.98)", worst, lf.r2, 5 + noise);
    } else {
        o->verdict = VAL_PASS;
        snprintf(o->reason, sizeof(o->reason), "paced levels within %.1f points of x (noise %.1f), R^2 %.4f; 100 %% "
                 "read %.0f-%.0f %% %s", worst, noise, lf.r2, lo100, hi100, duty ? "on-CPU" : "of the calibration");
    }
    /* the busy rule on every verdict, work per CPU second's too: that one divides by the capacity measured when the
     * SoI opened, on the same CPUs, which a busy machine moves (docs/validation.md) */
    o->measured = o->verdict;
    if (val_busy_judged(o->wait_run_us))
        o->verdict = val_busy_rule(o->measured, o->wait_pct, o->wait_worst_pct);
    if (o->verdict == VAL_BUSY)
        busy_reason(o->reason, sizeof(o->reason), o->measured, o->wait_pct, o->wait_worst_pct, o->wait_worst_level,
                    &o->machine);
    if (xm && xc) { /* the outside meter, on the same steps, under the same busy rule */
        xmeter_finish(s, xm, &x, xs, res, n, xc);
        if (val_busy_judged(o->wait_run_us))
            xc->verdict = val_busy_rule(xc->measured, o->wait_pct, o->wait_worst_pct);
        if (xc->verdict == VAL_BUSY)
            busy_reason(xc->reason, sizeof(xc->reason), xc->measured, o->wait_pct, o->wait_worst_pct,
                        o->wait_worst_level, &o->machine);
    }
}

/* ---- the probe ramp ---------------------------------------------------------------------------------------------- */

/* A degradation from a paired ratio r (cost at the level over cost at 0 % in the same cycle): d = 1 - 1/r, the share
 * of its solo rate the probe lost (0-100 %; a starved probe is 100 %), and its standard error se(r) / r^2. */
static void deg_of(double ratio, double ratio_se, double *d, double *se)
{
    if (isinf(ratio)) {
        *d = 100;
        *se = 0;
    } else if (ratio > 0 && isfinite(ratio)) {
        *d = (1 - 1 / ratio) * 100;
        *se = ratio_se / (ratio * ratio) * 100;
    } else {
        *d = 0;
        *se = 0;
    }
}

/* How far d may fall from one level to the next and still count as monotone: twice the standard error of the
 * difference, and half a point. */
static double mono_tol(double se_a, double se_b) { return 2 * sqrt(se_a * se_a + se_b * se_b) + 0.5; }

#define POOL_MAX 512
/* The per-cycle ratios at one dwell, pooled over the rounds run at it. */
struct pool {
    unsigned n[VAL_LEVELS];
    double r[VAL_LEVELS][POOL_MAX];
    double ach[VAL_LEVELS], cost[VAL_LEVELS], cpu[VAL_LEVELS], wcpu[VAL_LEVELS]; /* cycle-weighted sums */
    unsigned wwt[VAL_LEVELS];                 /* the weights of wcpu (rounds with a figure) */
    unsigned wt[VAL_LEVELS], samples[VAL_LEVELS];
    struct ib_sched sch[VAL_LEVELS];          /* the SoI workers' run-queue accounting, summed */
    double wait_worst, wait_worst_level;      /* the worst step's wait share (NAN: none measured) */
    struct ib_pressure machine;
};

static void pool_add(struct pool *p, const struct beside_result *br, unsigned nl, unsigned cycles)
{
    for (unsigned l = 0; l < nl; l++) {
        const struct beside_level *bl = &br->lv[l];
        for (unsigned c = 0; c < cycles && c < BESIDE_MAX_CYCLES; c++)
            if (!isnan(bl->cycle_ratio[c]) && p->n[l] < POOL_MAX)
                p->r[l][p->n[l]++] = bl->cycle_ratio[c];
        p->ach[l] += bl->achieved_pct * bl->ncycles;
        p->cost[l] += bl->median * bl->ncycles;
        p->cpu[l] += bl->cpu_share * 100 * bl->ncycles;
        if (isfinite(bl->work_cpu_pct)) {
            p->wcpu[l] += bl->work_cpu_pct * bl->ncycles;
            p->wwt[l] += bl->ncycles;
        }
        p->wt[l] += bl->ncycles;
        p->samples[l] += bl->nsamples;
        ib_sched_add(&p->sch[l], &bl->sched);
        if (bl->level > 0 && !isnan(bl->wait_max_pct) && !(bl->wait_max_pct <= p->wait_worst)) {
            p->wait_worst = bl->wait_max_pct;
            p->wait_worst_level = bl->level;
        }
    }
    ib_pressure_add(&p->machine, &br->machine);
}

static void pool_reset(struct pool *p)
{
    memset(p, 0, sizeof(*p));
    p->wait_worst = p->wait_worst_level = NAN;
    for (int r = 0; r < IB_PSI_N; r++)
        p->machine.some_pct[r] = p->machine.full_pct[r] = NAN;
    p->machine.steal_pct = NAN;
}

/* A level's pool: the median ratio, its robust standard error (from the median absolute deviation, ib_median_rse:
 * one stalled or starved cycle does not swamp it; 0 with fewer than 2 cycles) and the robust spread of the
 * per-cycle degradations (1.4826 MAD, in points). */
static void pool_ratio(const struct pool *p, unsigned l, double *ratio, double *se, double *sd_d)
{
    unsigned n = p->n[l];
    double v[POOL_MAX], dd[POOL_MAX];
    for (unsigned i = 0; i < n; i++) {
        v[i] = p->r[l][i];
        dd[i] = (1 - 1 / v[i]) * 100;
    }
    *ratio = n ? ib_median(v, n) : (l == 0 ? 1 : NAN);
    *se = *sd_d = 0;
    if (n < 2 || !isfinite(*ratio))
        return;
    *se = ib_median_rse(v, n, *ratio);
    *sd_d = ib_median_rse(dd, n, ib_median(dd, n)) * sqrt(n) / 1.2533;
}

static void ramp_summarise(const struct pool *p, struct val_ramp *r)
{
    double x[VAL_LEVELS], d[VAL_LEVELS], a[VAL_LEVELS], sd = 0;
    const unsigned nl = r->nlevels;
    for (unsigned l = 0; l < nl; l++) {
        struct val_level *lv = &r->lv[l];
        double ratio, rse;
        pool_ratio(p, l, &ratio, &rse, &sd);
        deg_of(ratio, rse, &lv->d, &lv->se);
        lv->achieved_pct = p->wt[l] ? p->ach[l] / p->wt[l] : 0;
        lv->on_cpu_pct = p->wt[l] ? p->cpu[l] / p->wt[l] : 0;
        lv->work_cpu_pct = p->wwt[l] ? p->wcpu[l] / p->wwt[l] : NAN;
        lv->probe_cost = !isfinite(ratio) ? INFINITY : p->wt[l] ? p->cost[l] / p->wt[l] : 0;
        lv->samples = p->samples[l];
        lv->cycles = p->n[l];
        lv->wait_pct = ib_sched_share(&p->sch[l]);
        x[l] = lv->level;
        d[l] = lv->d;
        a[l] = lv->achieved_pct;
    }
    r->cycle_sd_pct = sd; /* the last level's: 100 % */
    struct ib_sched all = {0};
    for (unsigned l = 0; l < nl; l++)
        if (r->lv[l].level > 0) /* the solo level asks the SoI for no CPU (validate.h) */
            ib_sched_add(&all, &p->sch[l]);
    r->wait_pct = ib_sched_share(&all);
    r->wait_run_us = ib_sched_wait_per_run_us(&all);
    r->busy_exempt = !val_busy_judged(r->wait_run_us);
    r->wait_worst_pct = p->wait_worst;
    r->wait_worst_level = p->wait_worst_level;
    r->machine = p->machine;
    struct linfit f = {0};
    linfit_compute(x, d, nl, &f);
    r->slope = f.slope, r->icpt = f.intercept, r->r2 = f.r2;
    linfit_compute(a, d, nl, &f);
    r->a_slope = f.slope, r->a_icpt = f.intercept, r->a_r2 = f.r2;
    linfit_compute(x, a, nl, &f);
    r->self_slope = f.slope, r->self_r2 = f.r2;
    r->monotone = 1;
    for (unsigned l = 1; l < nl; l++)
        if (d[l] < d[l - 1] - mono_tol(r->lv[l].se, r->lv[l - 1].se))
            r->monotone = 0;
    const struct val_level *top = &r->lv[nl - 1];
    /* decided: an effect beyond 3 standard errors (se under a third of it) whose shape passes, or with every
     * level's se under a twelfth of it (noise that small keeps R^2 of a straight line over 5 levels near 0.95: a
     * failing shape is real); or whatever is there is under 1 %; or the probe starved */
    double se_max = 0, n = top->cycles;
    for (unsigned l = 1; l < nl; l++)
        se_max = fmax(se_max, r->lv[l].se);
    /* 3 standard errors, widened for few cycles (a t statistic's spread: sqrt((n-1)/(n-3))) */
    int effect = n > 3 && fabs(top->d) > 3 * sqrt((n - 1) / (n - 3)) * top->se;
    int shape = r->r2 >= 0.9 && r->monotone;
    r->decided = isinf(top->probe_cost) || (effect && (top->d < 0 || shape || se_max <= top->d / 12)) ||
                 fabs(top->d) + 3 * top->se < 1.0;
}

int val_probe_ramp(const struct val_meter *m, const struct val_ramp_cfg *cfg, struct val_ramp *r, char *why,
                   size_t len)
{
    static const double levels[VAL_LEVELS] = {0, 25, 50, 75, 100};
    memset(r, 0, sizeof(*r));
    r->wait_pct = r->wait_worst_pct = r->wait_worst_level = r->wait_run_us = NAN;
    r->nlevels = VAL_LEVELS;
    r->budget_s = cfg->budget_s;
    for (unsigned l = 0; l < VAL_LEVELS; l++)
        r->lv[l].level = levels[l];
    if (!m || !m->beside || !cfg->step_ns || !cfg->cycles)
        return ib_why(why, len, -EINVAL, "validate: bad probe-ramp arguments");
    struct pool *p = calloc(1, sizeof(*p));
    struct beside_result *br = malloc(sizeof(*br));
    int rc = 0;
    if (!p || !br) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    uint64_t step = cfg->step_ns, pool_step = 0;
    unsigned cycles = cfg->cycles;
    for (unsigned k = 0; k < VAL_MAX_ROUNDS; k++) {
        if (k > 0) { /* undecided: look longer, within the budget (validate.h) */
            if (r->decided || cfg->budget_s <= 0 || stopped(cfg->stop))
                break;
            int grow = cfg->max_step_ns > step;
            if (grow)
                step = step * 4 < cfg->max_step_ns ? step * 4 : cfg->max_step_ns;
            double left = cfg->budget_s - r->looked_s, per = VAL_LEVELS * (double)step / 1e9;
            cycles = cfg->more_cycles;
            if (left < cycles * per)
                cycles = left > 0 ? (unsigned)(left / per) : 0;
            if (cycles < (grow ? 4u : 2u))
                break;
        }
        uint64_t settle = (uint64_t)((double)cfg->settle_ns * (double)step / (double)cfg->step_ns);
        if (k > 0)
            out_progress("validate", "%s: undecided (%+.1f +- %.1f %%), %u cycles of %.0f ms", cfg->probe,
                         r->lv[VAL_LEVELS - 1].d, r->lv[VAL_LEVELS - 1].se, cycles, (double)step / 1e6);
        rc = m->beside(m->ctx, cfg->probe, cfg->probe_cpu, levels, VAL_LEVELS, cycles, step, settle, br, why, len);
        if (rc < 0)
            break;
        if (step != pool_step) { /* a new dwell is another measurement: a new pool */
            pool_reset(p);
            pool_step = step;
        }
        pool_add(p, br, VAL_LEVELS, cycles);
        r->looked_s += (double)br->nsteps * (double)step / 1e9;
        r->noise_pct = br->noise * 100;
        r->dwell_ms = (double)step / 1e6;
        ramp_summarise(p, r);
        r->cycles = r->lv[VAL_LEVELS - 1].cycles;
        r->round[r->nrounds++] = (struct val_round){r->dwell_ms, cycles, r->lv[VAL_LEVELS - 1].d,
                                                    r->lv[VAL_LEVELS - 1].se};
    }
out:
    free(p);
    free(br);
    return rc;
}

void val_looked_text(const struct val_ramp *r, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "looked %.0f s: %u cycles of %.0f ms", r->looked_s, r->cycles, r->dwell_ms);
    for (unsigned k = 0; k < r->nrounds && r->nrounds > 1 && n < len; k++)
        n += (size_t)snprintf(out + n, len - n, "%s%u x %.0f", k ? ", " : " (rounds: ", r->round[k].cycles,
                              r->round[k].dwell_ms);
    if (r->nrounds > 1 && n < len)
        n += (size_t)snprintf(out + n, len - n, " ms)");
    if (n < len)
        n += (size_t)snprintf(out + n, len - n, "; noise: se %.1f %%, per cycle %.1f %%, solo %.1f %%",
                              r->lv[r->nlevels - 1].se, r->cycle_sd_pct, r->noise_pct);
    if (!r->decided && r->nrounds && n < len)
        snprintf(out + n, len - n, r->budget_s > 0 ? "; still undecided when the %.0f s budget ran out"
                                                   : "; undecided, with no budget to look longer", r->budget_s);
}

/* No effect on the neighbour: d(100) within 2 standard errors of 0, or under 1 %. */
static int no_effect(const struct val_ramp *r)
{
    const struct val_level *top = &r->lv[r->nlevels - 1];
    return top->d <= 2 * top->se || top->d < 1.0;
}

void val_ramp_shape(const struct val_ramp *r, char *out, size_t len)
{
    unsigned steep = 1;
    for (unsigned l = 2; l < r->nlevels; l++)
        if (r->lv[l].d - r->lv[l - 1].d > r->lv[steep].d - r->lv[steep - 1].d)
            steep = l;
    snprintf(out, len, "%+.1f +- %.1f %% at 100 %%, %s, falls fastest from %.0f to %.0f %% (%+.1f points), R^2 %.3f "
             "against x", r->lv[r->nlevels - 1].d, r->lv[r->nlevels - 1].se,
             r->monotone ? "monotone within the noise" : "not monotone", r->lv[steep - 1].level, r->lv[steep].level,
             r->lv[steep].d - r->lv[steep - 1].d, r->r2);
}

enum val_verdict val_ramp_verdict(const struct val_ramp *r, const struct val_meter *m, const char *bwkind,
                                  int probe_cpu, double alone_pct, int rate_soi, char *reason, size_t len,
                                  enum val_verdict *measured)
{
    const struct val_level *top = &r->lv[r->nlevels - 1];
    char looked[400], bwhy[256] = "", shape[200];
    val_looked_text(r, looked, sizeof(looked));
    val_ramp_shape(r, shape, sizeof(shape));
    enum val_verdict v;
    int none = no_effect(r);
    if (none && bwkind && m && m->unshared && m->unshared(m->ctx, bwkind, probe_cpu, bwhy, sizeof(bwhy)) == 1) {
        v = VAL_SKIPPED;
        snprintf(reason, len, "no effect (%.1f +- %.1f %% at 100 %%), and no shared bottleneck to feel: %s; %s",
                 top->d, top->se, bwhy, looked);
    } else if (none) {
        v = VAL_UNCHECKED;
        snprintf(reason, len, "no effect beyond the noise: %.1f +- %.1f %% at 100 %%%s; %s", top->d, top->se,
                 alone_pct > 0 && top->achieved_pct >= 0.95 * alone_pct && rate_soi
                     ? "; the probe did not slow the SoI either (100 % read as much beside it as alone): they "
                       "shared no bottleneck during this ramp"
                     : "",
                 looked);
    } else if (!r->monotone) {
        v = VAL_UNCHECKED;
        snprintf(reason, len, "an effect, but not monotone in x (it falls between levels by more than twice their "
                 "standard error): %s; %s", shape, looked);
    } else {
        v = VAL_PASS;
        snprintf(reason, len, "%s; %s", shape, looked);
    }
    if (measured)
        *measured = v;
    enum val_verdict b = r->busy_exempt ? v : val_busy_rule(v, r->wait_pct, r->wait_worst_pct);
    if (b == VAL_BUSY)
        busy_reason(reason, len, v, r->wait_pct, r->wait_worst_pct, r->wait_worst_level, &r->machine);
    return b;
}

/* ---- one SoI ----------------------------------------------------------------------------------------------------- */

/* Where the probe for this SoI must run; -1 with why when this machine has no such CPU. */
static int probe_cpu_for(struct val_ctx *c, const struct soi_ops *ops, const struct vprobe_map *vm, char *why,
                         size_t len)
{
    unsigned npus = topo_npus(c->m->topo);
    if (vm && vm->min_cpus > npus)
        return ib_why(why, len, -ENOTSUP, "needs %u CPUs (%s); this machine has %u", vm->min_cpus,
                      vm->cpus_why ? vm->cpus_why : "for the SoI and its probe", npus), -1;
    if (!vm || !vm->probe)
        return ib_why(why, len, -ENOTSUP, "no independent probe for %s yet (docs/validation.md)", ops->name), -1;
    if (vm->where == TOPO_SCOPE_MACHINE)
        return c->other_cpu >= 0 ? c->other_cpu : c->soi_cpu;
    int *set = NULL, cpu = -1;
    unsigned n = 0;
    topo_sharing(c->m->topo, vm->where, c->soi_cpu, &set, &n);
    for (unsigned i = 0; i < n && cpu < 0; i++)
        if (set[i] != c->soi_cpu)
            cpu = set[i];
    free(set);
    if (cpu < 0)
        ib_why(why, len, -ENOTSUP, "the %s probe must share the %s with CPU %d, and no other CPU does here%s",
               vm->probe, topo_scope_name(vm->where), c->soi_cpu,
               vm->where == TOPO_SCOPE_CORE ? " (no SMT): on the same CPU the two would only time-share it" : "");
    return cpu;
}

void val_soi_verdict(struct val_soi *v)
{
    const enum val_verdict sv = v->self.ran ? v->self.verdict : VAL_SKIPPED, mv = v->meter.verdict,
                           nv = v->neighbour;
    const char *nr = v->neighbour_reason;
    enum val_verdict out;
    const char *why;
    char pre[96];
    if (sv == VAL_FAIL || mv == VAL_FAIL) {
        out = VAL_FAIL;
        why = mv == VAL_FAIL ? v->meter.reason : v->self.reason;
        snprintf(pre, sizeof(pre), "%s: ", mv == VAL_FAIL ? "outside meter" : "self-meter");
    } else if (sv == VAL_BUSY || mv == VAL_BUSY || nv == VAL_BUSY) {
        out = VAL_BUSY;
        why = sv == VAL_BUSY ? v->self.reason : mv == VAL_BUSY ? v->meter.reason : nr;
        snprintf(pre, sizeof(pre), "%s: ", sv == VAL_BUSY ? "self-meter" : mv == VAL_BUSY ? "outside meter"
                                                                                           : "neighbour");
    } else if (sv == VAL_INTERRUPTED || mv == VAL_INTERRUPTED || nv == VAL_INTERRUPTED) {
        out = VAL_INTERRUPTED;
        why = "interrupted";
        pre[0] = 0;
    } else if (sv == VAL_UNDECIDABLE || mv == VAL_UNDECIDABLE) {
        out = VAL_UNDECIDABLE;
        why = sv == VAL_UNDECIDABLE ? v->self.reason : v->meter.reason;
        snprintf(pre, sizeof(pre), "%s: ", sv == VAL_UNDECIDABLE ? "self-meter" : "outside meter");
    } else if (mv == VAL_PASS) { /* pressed as it says; the neighbour's view adds ISOLATED or nothing */
        out = nv == VAL_ISOLATED ? VAL_ISOLATED : VAL_PASS;
        why = out == VAL_ISOLATED ? nr : v->meter.reason;
        snprintf(pre, sizeof(pre), "%s", out == VAL_ISOLATED ? "the meter saw the pressure, the neighbour nothing: "
                                                             : "outside meter: ");
    } else if (nv == VAL_PASS) {
        out = VAL_PASS;
        why = nr;
        snprintf(pre, sizeof(pre), "no outside meter here; the neighbour felt it: ");
    } else {
        out = VAL_UNCHECKED;
        why = nr;
        snprintf(pre, sizeof(pre), "no outside meter here, and the neighbour %s: ",
                 nv == VAL_SKIPPED ? "could not be measured" : "felt no monotone effect");
    }
    v->verdict = out;
    snprintf(v->reason, sizeof(v->reason), "%s%s", pre, why);
}

int val_soi_run(struct val_ctx *c, const struct soi_ops *ops, struct val_soi *out)
{
    memset(out, 0, sizeof(*out));
    out->ops = ops;
    out->soi_cpu = c->soi_cpu;
    const struct vprobe_map *vm = vprobe_map_of(ops->name);
    if (c->o.quick && vm && vm->quick_skip) {
        out->verdict = out->neighbour = VAL_SKIPPED;
        snprintf(out->reason, sizeof(out->reason), "%s", vm->quick_skip);
        snprintf(out->neighbour_reason, sizeof(out->neighbour_reason), "%s", vm->quick_skip);
        out->meter.verdict = VAL_SKIPPED;
        snprintf(out->meter.reason, sizeof(out->meter.reason), "%s", vm->quick_skip);
        return 0;
    }
    char pwhy[320] = "";
    int pcpu = probe_cpu_for(c, ops, vm, pwhy, sizeof(pwhy));
    out_progress("validate", "%s: opening", ops->name);
    c->bad_input = 0;
    int rc = real_open(c, ops, 1, out->reason, sizeof(out->reason));
    if (rc < 0) {
        out->open_rc = rc;
        out->bad_input = c->bad_input;
        out->verdict = out->neighbour = out->meter.verdict = rc == -EINTR ? VAL_INTERRUPTED : VAL_SKIPPED;
        snprintf(out->neighbour_reason, sizeof(out->neighbour_reason), "%s", out->reason);
        snprintf(out->meter.reason, sizeof(out->meter.reason), "%s", out->reason);
        return rc == -EINTR ? rc : 0;
    }
    out->opened = 1;
    out->soi_cpu = c->cpus[0];
    out->capacity = c->s->capacity;
    snprintf(out->unit, sizeof(out->unit), "%s", c->s->unit);
    snprintf(out->capacity_src, sizeof(out->capacity_src), "%s", c->s->capacity_src);
    /* the outside meter: a counter in the SoI's own unit, or UNCHECKED with why */
    struct val_xmeter xm;
    out->meter_kind = vm ? vm->meter : VPM_NONE;
    int xrc = val_xmeter_open(out->meter_kind, c->o.dir, NULL, &xm, out->meter.reason, sizeof(out->meter.reason));
    if (xrc == 0 && xm.kind != VPM_ONCPU && strcmp(xm.unit, c->s->unit) != 0) {
        xrc = ib_why(out->meter.reason, sizeof(out->meter.reason), -ENOTSUP, "%s reads %s, the SoI's capacity is in "
                     "%s", xm.what, xm.unit, c->s->unit);
        val_xmeter_close(&xm);
    }
    if (xrc < 0) {
        out->meter.verdict = VAL_UNCHECKED;
        if (out->meter_kind == VPM_NONE)
            snprintf(out->meter.reason, sizeof(out->meter.reason), "no counter the kernel keeps of %s (nor a "
                     "portable PMU event: validate reads none)", ops->resource);
    }
    val_self_ramp(c->s, c->o.quick, c->o.stop, xrc == 0 ? &xm : NULL, &out->self, &out->meter);
    if (xrc == 0)
        val_xmeter_close(&xm); /* a resctrl group: its threads go back before the probe's are made */
    if (xrc == 0 && !out->meter.ran) { /* the ramp did not complete */
        out->meter.verdict = out->self.verdict;
        snprintf(out->meter.reason, sizeof(out->meter.reason), "the self-meter ramp did not complete");
    }
    out->alone_100 = out->self.alone_pct;
    struct vprobe *p = NULL;
    if (pcpu >= 0 && !stopped(c->o.stop)) {
        struct vprobe own;
        int owned;
        if ((p = ramp_probe(c, vm->probe, &own, &owned, pwhy, sizeof(pwhy))) != NULL) {
            out->have_probe = 1;
            out->probe_cpu = pcpu;
            snprintf(out->probe, sizeof(out->probe), "%s", p->name);
            snprintf(out->probe_unit, sizeof(out->probe_unit), "%s", p->unit);
            snprintf(out->probe_what, sizeof(out->probe_what), "%s", p->what);
            if (owned)
                vprobe_fini(&own);
        }
    }
    if (!out->have_probe) { /* no probe here: the self-meter ramp and the meter, then the reason */
        real_close(c);
        out->neighbour = stopped(c->o.stop) ? VAL_INTERRUPTED : VAL_SKIPPED;
        snprintf(out->neighbour_reason, sizeof(out->neighbour_reason), "%s", pwhy);
        val_soi_verdict(out);
        return stopped(c->o.stop) ? -EINTR : 0;
    }
    const int io = ops->io != 0; /* a probe's request waits behind the SoI's I/O queue for tens of ms */
    struct val_ramp_cfg cfg = {.probe = vm->probe, .probe_cpu = pcpu,
                               .step_ns = (io ? (c->o.quick ? 200 : 400) : 60) * IB_NS_PER_MS,
                               .settle_ns = (io ? 20 : 8) * IB_NS_PER_MS,
                               .cycles = io ? (c->o.quick ? 4 : 8) : (c->o.quick ? 8 : 16),
                               .max_step_ns = (io ? 1600 : 960) * IB_NS_PER_MS, .more_cycles = 8,
                               .budget_s = c->o.budget_s >= 0 ? c->o.budget_s : c->o.quick ? 0 : 100,
                               .stop = c->o.stop};
    out_progress("validate", "%s: ramp beside the %s probe on CPU %d", ops->name, vm->probe, pcpu);
    rc = val_probe_ramp(&c->meter, &cfg, &out->ramp, out->neighbour_reason, sizeof(out->neighbour_reason));
    real_close(c);
    if (rc < 0) {
        out->have_probe = 0;
        out->neighbour = rc == -EINTR ? VAL_INTERRUPTED : VAL_SKIPPED;
        val_soi_verdict(out);
        return rc == -EINTR ? rc : 0;
    }
    out->beside_100 = out->ramp.lv[VAL_LEVELS - 1].achieved_pct;
    out->neighbour = val_ramp_verdict(&out->ramp, &c->meter, vm->bwkind, pcpu, out->alone_100,
                                      ops->kind != SOI_FOOTPRINT, out->neighbour_reason,
                                      sizeof(out->neighbour_reason), &out->measured);
    if (out->neighbour == VAL_UNCHECKED && out->meter.verdict == VAL_PASS && no_effect(&out->ramp))
        /* no effect, though the meter saw the pressure: this host isolates the resource */
        out->neighbour = VAL_ISOLATED;
    val_soi_verdict(out);
    return 0;
}

/* ---- the overlap matrix ------------------------------------------------------------------------------------------ */

int val_cell_measure(const struct val_meter *m, const char *probe, int probe_cpu, int io_soi, int quick,
                     struct val_cell *cell, char *why, size_t len)
{
    static const double levels[] = {0, 100};
    int k = mprobe_index(probe);
    /* I/O cells need longer steps; --quick halves them: the matrix is 17 x 10 cells, a third of them I/O */
    const int io = io_soi || (k >= 0 && mprobe_io[k]);
    const uint64_t step = (io ? (quick ? 200 : 400) : 60) * IB_NS_PER_MS;
    struct beside_result *br = malloc(sizeof(*br));
    if (!br)
        return ib_why(why, len, -ENOMEM, "out of memory");
    int rc = m->beside(m->ctx, probe, probe_cpu, levels, 2, quick ? 4 : 8, step, (io ? 20 : 8) * IB_NS_PER_MS, br,
                       why, len);
    if (rc == 0) {
        memset(cell, 0, sizeof(*cell));
        cell->measured = 1;
        deg_of(br->lv[1].ratio, br->lv[1].ratio_se, &cell->d, &cell->se);
        cell->noise = br->noise * 100;
        cell->soi_pct = br->lv[1].achieved_pct;
        cell->soi_on_cpu_pct = br->lv[1].cpu_share * 100;
        cell->soi_work_cpu_pct = br->lv[1].work_cpu_pct;
        cell->wait_pct = br->lv[1].wait_pct;
    }
    free(br);
    return rc;
}

/* the row of SoI `soi` (a name from the tables in vprobe.c), by its ops (soi_find) */
static struct val_row *row_of(struct val_overlap *ov, const char *soi)
{
    const struct soi_ops *ops = soi_find(soi);
    for (unsigned i = 0; i < ov->nrows && ops; i++)
        if (ov->row[i].ops == ops)
            return &ov->row[i];
    return NULL;
}

void val_normalise(struct val_overlap *ov)
{
    for (unsigned k = 0; k < VAL_NPROBES; k++) {
        const char *own = NULL;
        for (size_t i = 0; i < vprobe_nmaps && !own; i++)
            if (vprobe_maps[i].probe && !strcmp(vprobe_maps[i].probe, val_mprobes[k]))
                own = vprobe_maps[i].soi;
        struct val_row *orow = own ? row_of(ov, own) : NULL;
        const struct val_cell *oc = orow ? &orow->cell[k] : NULL;
        for (unsigned i = 0; i < ov->nrows; i++) {
            struct val_cell *cl = &ov->row[i].cell[k];
            cl->has_norm = oc && oc->measured && oc->d > 0.5 && cl->measured;
            cl->normalised = cl->has_norm ? cl->d / oc->d : 0;
        }
    }
}

int val_overlap_run(struct val_ctx *c, const struct soi_ops *only, struct val_overlap *ov)
{
    memset(ov, 0, sizeof(*ov));
    for (unsigned i = 0; i < soi_count() && ov->nrows < VAL_MAX_SOIS && !stopped(c->o.stop); i++) {
        const struct soi_ops *ops = soi_at(i);
        if (only && ops != only)
            continue;
        struct val_row *row = &ov->row[ov->nrows++];
        row->ops = ops;
        const struct vprobe_map *vm = vprobe_map_of(ops->name);
        if (c->o.quick && vm && vm->quick_skip) {
            row->skipped = 1;
            snprintf(row->why, sizeof(row->why), "%s", vm->quick_skip);
            continue;
        }
        int claimed = 0; /* --quick measures the rows the claims read (vprobe.c's overlap_claims), no other */
        for (size_t k = 0; k < overlap_nclaims; k++)
            claimed |= !strcmp(overlap_claims[k].soi, ops->name);
        if (c->o.quick && !claimed) {
            row->skipped = 1;
            snprintf(row->why, sizeof(row->why), "--quick: no claim reads this row (validate without --quick "
                     "measures it)");
            continue;
        }
        if (real_open(c, ops, 0, row->why, sizeof(row->why)) < 0) {
            row->skipped = 1;
            continue;
        }
        for (unsigned k = 0; k < VAL_NPROBES && !stopped(c->o.stop); k++) {
            int used = 0;
            for (unsigned t = 0; t < c->env.nthreads; t++)
                used |= c->cpus[t] == c->other_cpu;
            if (c->other_cpu < 0 || used) {
                snprintf(row->cell[k].why, sizeof(row->cell[k].why), "the SoI uses every CPU");
                continue;
            }
            /* --quick keeps each row's own side of the CPU / I/O divide: a cell across it takes an I/O cell's long
             * steps (1.6 s), they are two thirds of the matrix's time, and no claim reads one */
            if (c->o.quick && (ops->io != 0) != (mprobe_io[k] != 0)) {
                snprintf(row->cell[k].why, sizeof(row->cell[k].why),
                         "--quick: across the CPU / I/O divide (validate without --quick measures it)");
                continue;
            }
            out_progress("validate", "overlap: %s at 100 %% against %s", ops->name, val_mprobes[k]);
            val_cell_measure(&c->meter, val_mprobes[k], c->other_cpu, ops->io != 0, c->o.quick, &row->cell[k],
                             row->cell[k].why, sizeof(row->cell[k].why));
        }
        real_close(c);
    }
    val_normalise(ov);
    return val_claims_check(ov, &c->meter, c->other_cpu, c->o.quick, c->o.stop);
}

/* ---- the claims -------------------------------------------------------------------------------------------------- */

static struct val_cell *claim_cell(struct val_overlap *ov, const char *soi, const char *probe, unsigned *row,
                                   unsigned *col)
{
    struct val_row *r = row_of(ov, soi);
    int k = probe ? mprobe_index(probe) : -1;
    if (!r || k < 0 || !r->cell[k].measured)
        return NULL;
    *row = (unsigned)(r - ov->row);
    *col = (unsigned)k;
    return &r->cell[k];
}

/* "; SOI x PROBE first read D %" when that cell was measured twice */
static void note_first(const struct val_cell *cl, const char *soi, const char *probe, char *msg, size_t size)
{
    size_t n = strlen(msg);
    if (cl->remeasured && n < size)
        snprintf(msg + n, size - n, "; %s x %s first read %+.1f %%", soi, probe, cl->first_d);
}

static int hurt(const struct val_cell *c) { return c->d > 2 * c->se + 1; }

/* the larger of two wait shares, NAN only when both are */
static double wmax(double a, double b) { return isnan(a) || b > a ? b : a; }

int val_claims_eval(struct val_overlap *ov, struct val_cellref *bad, unsigned *nbad, unsigned maxbad)
{
    int failed = 0;
    unsigned nb = 0;
    ov->nchecks = 0;
#define BAD(r_, c_)                                                                                                    \
    do {                                                                                                               \
        if (bad && nb < maxbad)                                                                                        \
            bad[nb++] = (struct val_cellref){r_, c_};                                                                  \
    } while (0)
    for (size_t i = 0; i < overlap_nclaims && ov->nchecks < VAL_MAX_CHECKS; i++) {
        const struct overlap_claim *cl = &overlap_claims[i];
        struct val_check *ck = &ov->check[ov->nchecks];
        unsigned ra, ca, rb, cb;
        struct val_cell *a = claim_cell(ov, cl->soi, cl->probe, &ra, &ca), *b;
        double ck_wait = NAN; /* the largest wait share among the cells the check rests on */
        ck->claim = cl;
        if (cl->kind == CLAIM_SMALL) {
            const char *ps[1 + CLAIM_MAX_OTHERS] = {cl->probe, cl->other[0], cl->other[1]};
            const char *wp = NULL;
            double worst = 0, wse = 0;
            int any = 0;
            ck->verdict = VAL_PASS;
            const char *idle = NULL; /* a probe beside which the SoI did not do its work (validate.h) */
            double idle_w = 0;
            ck_wait = NAN;
            for (unsigned j = 0; j < 1 + CLAIM_MAX_OTHERS; j++) {
                struct val_cell *x = claim_cell(ov, cl->soi, ps[j], &rb, &cb);
                if (!x)
                    continue;
                any = 1;
                ck_wait = wmax(ck_wait, x->wait_pct);
                if (fabs(x->d) >= cl->factor + 2 * x->se) {
                    ck->verdict = VAL_FAIL;
                    BAD(rb, cb);
                }
                if (val_works_on_cpu(ov->row[rb].ops) && !val_work_cpu_ok(x->soi_work_cpu_pct) && !idle) {
                    idle = ps[j], idle_w = x->soi_work_cpu_pct;
                    BAD(rb, cb);
                }
                if (!wp || fabs(x->d) > fabs(worst)) {
                    worst = x->d, wse = x->se, wp = ps[j];
                }
            }
            if (!any)
                continue;
            /* "moves nothing" holds for an SoI that did nothing: it is judged only beside one that did its work */
            if (idle && ck->verdict == VAL_PASS)
                ck->verdict = VAL_UNDECIDABLE;
            snprintf(ck->text, sizeof(ck->text), "%s at 100 %%: %s move at most %+.1f +- %.1f %% (%s; bar: under "
                     "%.0f %% + twice the standard error)", cl->soi, cl->what, worst, wse, wp ? wp : "-", cl->factor);
            if (idle) {
                size_t tl = strlen(ck->text);
                snprintf(ck->text + tl, sizeof(ck->text) - tl, "; beside %s it did %.0f %% of its capacity per CPU "
                         "second (bar %.0f-%.0f %%): it did not do its work", idle, idle_w, VAL_WORK_CPU_MIN_PCT,
                         VAL_WORK_CPU_MAX_PCT);
            }
            for (unsigned j = 0; j < 1 + CLAIM_MAX_OTHERS; j++)
                if (ps[j] && (b = claim_cell(ov, cl->soi, ps[j], &rb, &cb)) != NULL)
                    note_first(b, cl->soi, ps[j], ck->text, sizeof(ck->text));
        } else {
            b = claim_cell(ov, cl->soi, cl->other[0], &rb, &cb);
            if (!a || !b)
                continue;
            ck_wait = wmax(a->wait_pct, b->wait_pct);
            if (cl->kind == CLAIM_UNDER) {
                ck->verdict = !hurt(b) ? VAL_UNDECIDABLE : a->d < cl->factor * b->d ? VAL_PASS : VAL_FAIL;
                snprintf(ck->text, sizeof(ck->text), "%s at 100 %%: %s %+.1f %% vs %s %+.1f +- %.1f %% (must be "
                         "under %.0f %% of it)%s%s", cl->soi, cl->what, a->d, cl->other_what, b->d, b->se,
                         100 * cl->factor, ck->verdict == VAL_UNDECIDABLE ? ": the " : "",
                         ck->verdict == VAL_UNDECIDABLE ? "second probe was not hurt in this run" : "");
            } else {
                ck->verdict = !hurt(a) && !hurt(b) ? VAL_UNDECIDABLE : a->d > b->d ? VAL_PASS : VAL_FAIL;
                snprintf(ck->text, sizeof(ck->text), "%s at 100 %%: %s %+.1f +- %.1f %% vs %s %+.1f %% (must be "
                         "larger)%s", cl->soi, cl->what, a->d, a->se, cl->other_what, b->d,
                         ck->verdict == VAL_UNDECIDABLE ? ": neither probe was hurt in this run" : "");
            }
            note_first(a, cl->soi, cl->probe, ck->text, sizeof(ck->text));
            note_first(b, cl->soi, cl->other[0], ck->text, sizeof(ck->text));
            if (ck->verdict != VAL_PASS) {
                BAD(ra, ca);
                BAD(rb, cb);
            }
        }
        /* the busy rule (validate.h) on the cells the check rests on: each is one step at 100 %, all of the check's
         * evidence (an SoI on part of its CPU moves a probe less, and "moves nothing" would pass by it) */
        enum val_verdict measured = ck->verdict;
        ck->verdict = val_busy_rule(measured, ck_wait, ck_wait);
        if (ck->verdict == VAL_BUSY) {
            char fig[200];
            size_t tl = strlen(ck->text);
            ib_busy_text(ck_wait, NULL, fig, sizeof(fig));
            snprintf(ck->text + tl, sizeof(ck->text) - tl, "; BUSY, not %s: in a cell it rests on %s",
                     val_verdict_name(measured), fig);
        }
        failed |= ck->verdict == VAL_FAIL;
        ov->nchecks++;
    }
#undef BAD
    if (nbad)
        *nbad = nb;
    return failed;
}

/* A cell that fails a check, or leaves it undecidable, is measured once more and the check judged on the second
 * figure (both are printed): the host changes what the two vCPUs share within seconds, and a claim should fail on
 * what repeats. */
int val_claims_check(struct val_overlap *ov, const struct val_meter *m, int probe_cpu, int quick,
                     const atomic_int *stop)
{
    struct val_cellref bad[3 * VAL_MAX_CHECKS];
    unsigned nbad = 0;
    int failed = val_claims_eval(ov, bad, &nbad, IB_ARRAY_SIZE(bad));
    if (!nbad || stopped(stop))
        return failed;
    for (unsigned i = 0; i < nbad && !stopped(stop); i++) {
        struct val_row *row = &ov->row[bad[i].row];
        struct val_cell *old = &row->cell[bad[i].col], now;
        char why[256] = "";
        if (old->remeasured || !m->open || m->open(m->ctx, row->ops, 0, why, sizeof(why)) < 0)
            continue;
        out_progress("validate", "overlap: %s against %s, once more", row->ops->name, val_mprobes[bad[i].col]);
        if (val_cell_measure(m, val_mprobes[bad[i].col], probe_cpu, row->ops->io != 0, quick, &now, why,
                             sizeof(why)) == 0) {
            now.remeasured = 1;
            now.first_d = old->d;
            now.first_se = old->se;
            *old = now;
        }
        if (m->close)
            m->close(m->ctx);
    }
    val_normalise(ov);
    return val_claims_eval(ov, NULL, NULL, 0);
}
