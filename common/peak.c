/* peak.c - measured peak issue rates of the core SoIs, cached in the calibration, and their shared callbacks. */
#include "peak.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ib_err.h"
#include "kernels.h"
#include "measure.h"
#include "parse.h"
#include "soikit.h"

uint64_t peak_iters_for(peak_kernel_fn k, double rate, uint64_t quantum_ns)
{
    uint64_t ipi = k(1); /* instructions per iteration */
    if (!ipi || !(rate > 0))
        return 1;
    double it = rate * (double)quantum_ns / 1e9 / (double)ipi;
    return it < 1 ? 1 : (uint64_t)it;
}

/* A kernel's peak through peak_threads: the warm-up window also finds the ~20 us quantum the SoI will step with
 * (the clock ramps meanwhile); the measured windows then step exactly as the SoI does, one clock read a quantum. */
struct pk_arg {
    peak_kernel_fn k;
    uint64_t q[SOI_MAX_THREADS];
};

static int pk_window(void *arg, unsigned tid, uint64_t ns, double *rate)
{
    struct pk_arg *a = arg;
    uint64_t n = 0, s = clk_mono_ns(), d;
    if (!a->q[tid]) {
        uint64_t iters = 1000, dt = 0, cnt = 0;
        do {
            uint64_t t0 = clk_mono_ns();
            cnt = a->k(iters);
            dt = clk_mono_ns() - t0;
            if (dt < 200000)
                iters *= 2;
        } while (clk_mono_ns() - s < ns);
        a->q[tid] = peak_iters_for(a->k, dt ? (double)cnt / ((double)dt / 1e9) : 0, PEAK_QUANTUM_NS);
        *rate = 0;
        return 0;
    }
    do {
        n += a->k(a->q[tid]);
        d = clk_mono_ns() - s;
    } while (d < ns);
    *rate = (double)n / ((double)d / 1e9);
    return 0;
}

int peak_measure(const struct topo *t, const int *cpus, unsigned n, peak_kernel_fn k, const atomic_int *stop,
                 double *ops, double *spread, char *why, size_t len)
{
    if (n == 0 || n > SOI_MAX_THREADS)
        return ib_why(why, len, -EINVAL, "bad CPU count %u", n);
    struct pk_arg *a = calloc(1, sizeof(*a));
    if (!a)
        return -ENOMEM;
    a->k = k;
    struct soi_env env = {.topo = (struct topo *)t, .nthreads = n, .cpus = cpus, .stop = stop};
    int rc = peak_threads(&env, n, pk_window, a, PEAK_REP_NS, ops, spread, why, len);
    free(a);
    return rc;
}

void peak_store(struct calib *c, const char *kind, const int *cpus, unsigned n, double ops, double spread)
{
    struct calib_bw e = {.ws_bytes = 0, .bps = ops, .spread = spread, .when = (int64_t)time(NULL)};
    /* a kind or CPU set too long for its field is measured every time rather than cached under a cut key */
    if (snprintf(e.kind, sizeof(e.kind), "%s", kind) >= (int)sizeof(e.kind) ||
        calib_cpus_key(cpus, n, e.cpus, sizeof(e.cpus)) < 0)
        return;
    calib_bw_store(c, &e);
}

/* Cached rate if `cached` and one is there, else measure now and store.  *old gets the cached rate seen before
 * (0 if none). */
static int peak_need(struct calib *c, const struct topo *t, const char *kind, const int *cpus, unsigned n,
                     peak_kernel_fn k, int cached, const atomic_int *stop, double *ops, double *old, char *why,
                     size_t len)
{
    const struct calib_bw *e = calib_bw_find(c, kind, cpus, n);
    *old = e ? e->bps : 0;
    if (cached && e && e->bps > 0) {
        *ops = e->bps;
        return 0;
    }
    double spread = 0;
    int rc = peak_measure(t, cpus, n, k, stop, ops, &spread, why, len);
    if (rc == 0)
        peak_store(c, kind, cpus, n, *ops, spread);
    return rc;
}

/* ---- threads that measure themselves ---------------------------------------------------------------------------- */

struct pt_arg {
    peak_window_fn window;
    void *arg;
};

static int pt_window(void *a, unsigned tid, int rep, uint64_t ns, double *rate)
{
    (void)rep;
    struct pt_arg *p = a;
    return p->window(p->arg, tid, ns, rate);
}

int peak_threads(const struct soi_env *env, unsigned n, peak_window_fn window, void *arg, uint64_t window_ns,
                 double *peak, double *spread, char *why, size_t len)
{
    if (n == 0 || n > SOI_MAX_THREADS)
        return ib_why(why, len, -EINVAL, "bad thread count %u", n);
    struct pt_arg pa = {.window = window, .arg = arg};
    struct meas_spec sp = {.what = "measuring the peak", .n = n, .cpus = env->cpus, .stop = env->stop, .arg = &pa,
                           .topo = topo_is_this_machine(env->topo) ? env->topo : NULL, .nmeasure = n,
                           .warmups = 1, .warm_ns = 50 * IB_NS_PER_MS, .windows = PEAK_REPS, .window_ns = window_ns,
                           .window = pt_window};
    struct meas_out o = {0};
    int rc = meas_run(&sp, &o, why, len);
    if (rc < 0)
        return rc;
    *peak = o.median;
    if (spread)
        *spread = o.spread;
    return *peak > 0 ? 0 : ib_why(why, len, -EIO, "the peak measured as 0");
}

int peak_need_threads(const struct soi_env *env, const char *kind, unsigned n, peak_window_fn window, void *arg,
                      uint64_t window_ns, double *peak, double *old, char *why, size_t len)
{
    const struct calib_bw *e = calib_bw_find(env->calib, kind, env->cpus, n);
    *old = e ? e->bps : 0;
    if (env->cached_capacity && *old > 0) {
        *peak = *old;
        return 0;
    }
    double spread = 0;
    int rc = peak_threads(env, n, window, arg, window_ns, peak, &spread, why, len);
    if (rc == 0)
        peak_store(env->calib, kind, env->cpus, n, *peak, spread);
    return rc;
}

/* ---- shared callbacks ---------------------------------------------------------------------------------------- */

struct core_priv {
    peak_kernel_fn k;
    size_t bytes;
    struct {
        uint64_t iters; /* per step() */
        char pad[56];   /* one cache line per worker */
    } t[];
};

int core_soi_open(struct soi *s, const char *kind, peak_kernel_fn k, const char *what, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    double peak = 0, old = 0;
    int rc = peak_need(env->calib, env->topo, kind, env->cpus, env->nthreads, k, env->cached_capacity, env->stop,
                       &peak, &old, why, len);
    if (rc < 0)
        return rc;
    size_t bytes = sizeof(struct core_priv) + (size_t)env->nthreads * 64;
    struct core_priv *p = ib_map(bytes, 0);
    if (!p)
        return ib_why(why, len, -ENOMEM, "%s: cannot map %zu bytes", s->ops->name, bytes);
    p->k = k;
    p->bytes = bytes;
    /* each worker's share of the summed peak, in ~20 us quanta (sub-millisecond duty-cycle slices) */
    uint64_t q = peak_iters_for(k, peak / env->nthreads, PEAK_QUANTUM_NS);
    for (unsigned i = 0; i < env->nthreads; i++)
        p->t[i].iters = q;
    s->priv = p;
    s->capacity = peak;
    char b1[32], b2[48];
    kit_rate_units(s, "ops/s", old, b2, sizeof(b2));
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s peak of %s on %u CPU(s): %s%s",
             env->cached_capacity && old > 0 ? "cached" : "measured now:", what, env->nthreads,
             fmt_rate(peak, "ops/s", b1, sizeof(b1)), b2);
    return 0;
}

int core_soi_step(struct soi *s, unsigned tid, uint64_t *units)
{
    struct core_priv *p = s->priv;
    *units = p->k(p->t[tid].iters);
    return 0;
}

int core_soi_measure(struct soi *s, struct soi_meter *m)
{
    (void)s;
    m->achieved = m->secondary; /* instructions issued per second, counted by the kernels themselves */
    return 0;
}

void core_soi_teardown(struct soi *s)
{
    struct core_priv *p = s->priv;
    if (!p)
        return;
    ib_unmap(p, p->bytes);
    s->priv = NULL;
}
