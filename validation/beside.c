/* beside.c - a probe beside an SoI whose intensity alternates in short steps (beside.h). */
#define _GNU_SOURCE
#include "beside.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ib_err.h"
#include "kernels.h"
#include "measure.h"
#include "probes.h"
#include "stats.h"

struct sample {
    uint64_t t0, t1;
    double v;
};

/* The probe thread (meas_start's one serving thread): opened and warm before the SoI starts, then sampling back to
 * back until beside_run is done with the SoI. */
struct probe_job {
    struct beside_probe *p;
    const atomic_int *stop;
    struct sample *smp;
    size_t n, cap;
    int opened;
};

static int probe_setup(void *arg, unsigned tid)
{
    (void)tid;
    struct probe_job *j = arg;
    int rc = j->p->open ? j->p->open(j->p->ctx) : 0;
    if (rc < 0)
        return rc;
    j->opened = 1;
    double warm;
    j->p->sample(j->p->ctx, &warm);
    return 0;
}

static int probe_serve(void *arg, unsigned tid, const atomic_int *done)
{
    (void)tid;
    struct probe_job *j = arg;
    while (!atomic_load(done) && !(j->stop && atomic_load(j->stop))) {
        if (j->n == j->cap) {
            size_t nc = j->cap ? 2 * j->cap : 4096;
            struct sample *ns = realloc(j->smp, nc * sizeof(*ns));
            if (!ns)
                return -ENOMEM;
            j->smp = ns;
            j->cap = nc;
        }
        struct sample *x = &j->smp[j->n];
        x->t0 = clk_mono_ns();
        int rc = j->p->sample(j->p->ctx, &x->v);
        x->t1 = clk_mono_ns();
        if (rc < 0)
            return rc;
        j->n++;
    }
    return 0;
}

static void probe_teardown(void *arg, unsigned tid)
{
    (void)tid;
    struct probe_job *j = arg;
    if (j->opened && j->p->close)
        j->p->close(j->p->ctx);
}

/* ib_median, but 0 (not NAN) for no values: the level fields stay numbers */
static double beside_median(double *v, size_t n)
{
    return n ? ib_median(v, n) : 0;
}

/* Sleeps until `until` in slices of a few ms; nonzero when the stop flag rose. */
static int nap(const atomic_int *stop, uint64_t until)
{
    struct ib_clock clk;
    clk_init_monotonic(&clk);
    for (;;) {
        if (stop && atomic_load(stop))
            return 1;
        uint64_t now = clk_mono_ns();
        if (now >= until)
            return 0;
        clk.sleep_until_ns(&clk, until - now > 5 * IB_NS_PER_MS ? now + 5 * IB_NS_PER_MS : until);
    }
}

/* The SoI through the background engine: at each step its level is set and a window marked, held step_ns, and read:
 * win[i] gets step i's window. *ndone: the steps completed. */
static int run_levels(struct soi *s, const double *levels, unsigned nlevels, size_t nsteps, uint64_t step_ns,
                      const atomic_int *stop, struct engine_window *win, size_t *ndone, char *why, size_t len)
{
    /* a metering step longer than a window: every window is one step, cut at both ends by the requests */
    struct engine_bg_opts o = {.step_ns = 4 * step_ns};
    struct engine_bg *e = NULL;
    int rc = engine_start(s, levels[0], &o, stop, &e, why, len);
    for (size_t i = 0; rc == 0 && i < nsteps; i++) {
        if ((rc = engine_set(e, levels[i % nlevels], why, len)) < 0 || (rc = engine_mark(e, why, len)) < 0)
            break;
        if (nap(stop, clk_mono_ns() + step_ns)) {
            rc = ib_why(why, len, -EINTR, "interrupted");
            break;
        }
        if ((rc = engine_read(e, &win[i], why, len)) == 0)
            *ndone = i + 1;
    }
    char w2[256] = "";
    int src = engine_stop(e, w2, sizeof(w2));
    if (rc == 0 && src < 0)
        rc = ib_why(why, len, src, "%s", w2);
    return rc;
}

int beside_run(struct soi *s, const double *levels, unsigned nlevels, unsigned cycles, uint64_t step_ns,
               uint64_t settle_ns, int probe_cpu, struct beside_probe *probe, const atomic_int *stop,
               struct beside_result *out, char *why, size_t len)
{
    if (!s || !levels || nlevels == 0 || nlevels > BESIDE_MAX_LEVELS || cycles == 0 || !probe || !probe->sample ||
        settle_ns >= step_ns)
        return ib_why(why, len, -EINVAL, "beside: bad arguments");
    if (cycles > BESIDE_MAX_CYCLES)
        return ib_why(why, len, -EINVAL, "beside: %u cycles, at most %u", cycles, BESIDE_MAX_CYCLES);
    memset(out, 0, sizeof(*out));
    for (int k = 0; k < IB_PSI_N; k++)
        out->machine.some_pct[k] = out->machine.full_pct[k] = NAN;
    out->machine.steal_pct = NAN;
    size_t nsteps = (size_t)nlevels * cycles, ndone = 0;
    struct engine_window *res = calloc(nsteps, sizeof(*res));
    struct probe_job pj = {.p = probe, .stop = stop};
    double *vals = NULL, *ev = NULL, *od = NULL, *stepmed = NULL, *tmp = NULL, *ach = NULL, *cpu = NULL, *wcpu = NULL;
    int rc = 0;
    if (!res) {
        rc = -ENOMEM;
        goto out;
    }
    struct meas_spec sp = {.what = "beside: the probe", .n = 1, .cpus = &probe_cpu, .topo = s->env->topo,
                           .arg = &pj, .setup = probe_setup, .serve = probe_serve, .teardown = probe_teardown};
    struct meas_ctl *mr = NULL;
    if ((rc = meas_start(&sp, &mr, why, len)) < 0) { /* the probe is built and warm before the SoI starts */
        rc = ib_why(why, len, rc, "beside: probe %s cannot start on CPU %d: %s", probe->name, probe_cpu,
                    strerror(-rc));
        goto out;
    }
    rc = run_levels(s, levels, nlevels, nsteps, step_ns, stop, res, &ndone, why, len);
    char w2[160] = "";
    int prc = meas_finish(mr, NULL, w2, sizeof(w2)); /* the probe's own error (no stop flag given: it polls it) */
    if (rc < 0)
        goto out;
    if (prc < 0) {
        rc = ib_why(why, len, prc, "beside: probe %s failed: %s", probe->name, strerror(-prc));
        goto out;
    }
    out->nsteps = (unsigned)ndone;
    out->nlevels = nlevels;
    vals = malloc((pj.n + 1) * sizeof(double));
    ev = malloc((pj.n + 1) * sizeof(double));
    od = malloc((pj.n + 1) * sizeof(double));
    ach = malloc((cycles + 1) * sizeof(double));
    cpu = malloc((cycles + 1) * sizeof(double));
    wcpu = malloc((cycles + 1) * sizeof(double));
    stepmed = malloc(nsteps * sizeof(double));
    tmp = malloc((pj.n + cycles + 1) * sizeof(double));
    if (!vals || !ev || !od || !ach || !cpu || !wcpu || !stepmed || !tmp) {
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned l = 0; l < nlevels; l++) {
        size_t nv = 0, ne = 0, no = 0, na = 0, nw = 0, k = 0;
        struct beside_level *bl = &out->lv[l];
        bl->wait_max_pct = NAN;
        for (unsigned c = 0; c < cycles; c++) {
            const struct engine_window *r = &res[(size_t)c * nlevels + l];
            stepmed[(size_t)c * nlevels + l] = NAN;
            if ((size_t)c * nlevels + l >= ndone)
                break;
            ib_sched_add(&bl->sched, &r->sched);
            ib_pressure_add(&out->machine, &r->machine);
            if (!isnan(r->wait_pct) && !(r->wait_pct <= bl->wait_max_pct))
                bl->wait_max_pct = r->wait_pct;
            cpu[na] = r->cpu_share;
            ach[na++] = r->achieved_pct;
            if (r->cpu_share > 0 && isfinite(r->achieved_pct))
                wcpu[nw++] = r->achieved_pct / r->cpu_share;
            uint64_t from = r->t0_ns + settle_ns, to = r->t1_ns;
            while (k < pj.n && pj.smp[k].t0 < from) /* samples are in time order */
                k++;
            size_t first = nv;
            for (size_t q = k; q < pj.n && pj.smp[q].t0 < to; q++) {
                if (pj.smp[q].t1 > to)
                    break;
                vals[nv++] = pj.smp[q].v;
                if (c % 2)
                    od[no++] = pj.smp[q].v;
                else
                    ev[ne++] = pj.smp[q].v;
            }
            if (nv > first) { /* this step's own median, on a copy (vals is sorted later) */
                memcpy(tmp, vals + first, (nv - first) * sizeof(double));
                stepmed[(size_t)c * nlevels + l] = beside_median(tmp, nv - first);
            }
        }
        bl->wait_pct = ib_sched_share(&bl->sched);
        bl->level = levels[l];
        bl->nsamples = (unsigned)nv;
        bl->median = beside_median(vals, nv);
        bl->med_even = beside_median(ev, ne);
        bl->med_odd = beside_median(od, no);
        bl->achieved_pct = beside_median(ach, na);
        bl->cpu_share = beside_median(cpu, na);
        bl->work_cpu_pct = nw ? ib_median(wcpu, nw) : NAN;
        if (l == 0 && bl->median > 0 && ne && no) { /* noise: the solo level only (beside.h) */
            double d = (bl->med_even - bl->med_odd) / bl->median;
            d = d < 0 ? -d : d;
            out->noise = d > out->noise ? d : out->noise;
        }
        if (nv == 0 && l == 0) {
            rc = ib_why(why, len, -EIO, "beside: no probe sample fell inside a %g %% step (steps too short?)",
                        levels[l]);
            goto out;
        }
        if (nv == 0) /* not one sample finished inside any step at this level: the probe was starved */
            bl->median = INFINITY;
    }
    for (unsigned l = 0; l < nlevels; l++) { /* paired by cycle (beside.h) */
        struct beside_level *bl = &out->lv[l];
        size_t nr = 0;
        for (unsigned c = 0; c < BESIDE_MAX_CYCLES; c++)
            bl->cycle_ratio[c] = NAN;
        for (unsigned c = 0; c < cycles; c++) {
            double a = stepmed[(size_t)c * nlevels + l], b = stepmed[(size_t)c * nlevels];
            if (isfinite(a) && isfinite(b) && b > 0)
                tmp[nr++] = a / b;
            else if (!isfinite(a) && isfinite(b) && l > 0 && (size_t)c * nlevels + l < ndone)
                tmp[nr++] = INFINITY; /* starved in this step */
            else
                continue;
            bl->cycle_ratio[c] = tmp[nr - 1];
        }
        bl->ncycles = (unsigned)nr;
        double mean = 0, var = 0;
        int inf = 0;
        for (size_t i = 0; i < nr; i++) {
            inf |= isinf(tmp[i]);
            mean += tmp[i] / (double)nr;
        }
        for (size_t i = 0; i < nr && !inf; i++)
            var += (tmp[i] - mean) * (tmp[i] - mean);
        bl->ratio_se = nr > 1 && !inf ? sqrt(var / (double)(nr - 1) / (double)nr) : 0;
        bl->ratio = nr ? beside_median(tmp, nr) : (l == 0 ? 1 : NAN);
        bl->ratio_rse = inf ? 0 : ib_median_rse(tmp, nr, bl->ratio); /* one stalled cycle does not swamp it */
    }
out:
    free(ach);
    free(cpu);
    free(wcpu);
    free(stepmed);
    free(tmp);
    free(vals);
    free(ev);
    free(od);
    free(pj.smp);
    free(res);
    if (rc < 0 && why && !*why)
        ib_why(why, len, rc, "beside: %s", strerror(-rc));
    return rc;
}

/* ---- the chase probe ------------------------------------------------------------------------------------------- */

static int chase_open(void *ctx)
{
    struct probe_chase_ctx *c = ctx;
    c->buf = probe_chase_build(c->bytes);
    c->cursor = c->buf;
    return c->buf ? 0 : -ENOMEM;
}

static int chase_sample(void *ctx, double *v)
{
    struct probe_chase_ctx *c = ctx;
    *v = probe_chase_walk_ns(&c->cursor, c->loads);
    return 0;
}

static void chase_close(void *ctx)
{
    struct probe_chase_ctx *c = ctx;
    if (c->buf)
        ib_unmap(c->buf, c->bytes);
    c->buf = c->cursor = NULL;
}

void beside_chase_probe(struct beside_probe *p, struct probe_chase_ctx *ctx, uint64_t bytes)
{
    *ctx = (struct probe_chase_ctx){.bytes = bytes & ~(uint64_t)63, .loads = 100000};
    *p = (struct beside_probe){.name = "chase", .unit = "ns/load", .open = chase_open, .sample = chase_sample,
                               .close = chase_close, .ctx = ctx};
}
