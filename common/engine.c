/* engine.c - runs an SoI through a ramp: worker threads bound through hwloc, parked between steps, paced.
 *
 * Step protocol (main thread):
 *   workers parked -> set_intensity(x) -> configure pacing -> release workers -> sleep the step (polling the stop
 *   flag every few ms) -> tell workers to park -> wait until all parked -> collect counters -> measure().
 * Workers run step() quanta and sleep to their pacer's absolute deadline in slices of at most 1 ms, so a park
 * request or Ctrl-C is seen within about a millisecond.
 */
#define _GNU_SOURCE
#include "engine.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "clock.h"
#include "ib_err.h"
#include "pace.h"

enum phase { PH_PARK = 0, PH_RUN, PH_QUIT };

struct eng;

struct worker {
    struct eng *e;
    pthread_t th;
    unsigned tid;
    int cpu;
    int started;
    /* published by the worker before it parks; read by main under the mutex */
    uint64_t units, active_ns, window_ns;
    int err;
};

struct eng {
    struct soi *s;
    const atomic_int *stop;
    pthread_mutex_t mu;
    pthread_cond_t cv_go, cv_parked;
    enum phase phase;
    unsigned gen;        /* bumped each time workers are released */
    unsigned nparked;
    unsigned n;
    atomic_int running;  /* 1 while a step runs: workers poll it between quanta */
    /* pacing for the current step, set while workers are parked */
    int idle;
    double rate_per_thread; /* units/s, <= 0 unlimited */
    int lead_only;          /* only worker 0 is paced, at rate_per_thread; the others run unpaced */
    double duty;
    struct worker *w;
};

#define SLICE_NS (1 * IB_NS_PER_MS)
/* Credit a paced worker may bank after falling behind (a slow chunk, a preemption): enough to absorb the
 * millisecond-scale dips of a shared memory system, small against a step. Slices stay sub-millisecond. */
#define BURST_NS (2 * IB_NS_PER_MS)

static int stopped(const struct eng *e) { return e->stop && atomic_load(e->stop); }

static void worker_step_loop(struct worker *w)
{
    struct eng *e = w->e;
    struct soi *s = e->s;
    struct ib_clock clk;
    clk_init_monotonic(&clk);
    uint64_t units = 0, active = 0, start = clk_mono_ns();
    if (e->idle) {
        while (atomic_load(&e->running) && !stopped(e))
            clk.sleep_until_ns(&clk, clk_mono_ns() + SLICE_NS);
        goto out;
    }
    struct pace_bucket b;
    struct pace_duty d;
    int duty = s->ops->kind == SOI_DUTY;
    uint64_t burst = s->pace_burst_ns ? s->pace_burst_ns : BURST_NS;
    if (duty)
        pace_duty_init(&d, &clk, e->duty, burst);
    else
        pace_bucket_init(&b, &clk, e->lead_only && w->tid ? 0 : e->rate_per_thread, burst);
    while (atomic_load(&e->running) && !stopped(e)) {
        uint64_t u = 0, t0 = clk_mono_ns();
        int rc = s->ops->step(s, w->tid, &u);
        uint64_t t1 = clk_mono_ns();
        if (rc < 0) {
            w->err = rc;
            atomic_store(&e->running, 0); /* end the step now: the main thread reports the failure */
            break;
        }
        units += u;
        active += t1 - t0;
        uint64_t deadline = duty ? pace_duty_charge(&d, t1 - t0) : pace_bucket_charge(&b, (double)u);
        while (deadline && atomic_load(&e->running) && !stopped(e)) {
            uint64_t now = clk_mono_ns();
            if (now >= deadline)
                break;
            if (s->pace_spin)
                __builtin_ia32_pause();
            else
                clk.sleep_until_ns(&clk, deadline - now > SLICE_NS ? now + SLICE_NS : deadline);
        }
    }
out:
    w->units = units;
    w->active_ns = active;
    w->window_ns = clk_mono_ns() - start;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct eng *e = w->e;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* sub-millisecond sleeps need a tight timer slack */
    if (topo_is_this_machine(e->s->env->topo)) {
        int rc = topo_bind_thread(e->s->env->topo, w->cpu);
        if (rc < 0)
            w->err = rc;
    }
    unsigned seen = 0;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        e->nparked++;
        pthread_cond_broadcast(&e->cv_parked);
        while (e->phase != PH_QUIT && !(e->phase == PH_RUN && e->gen != seen)) {
            if (e->gen != seen) {
                /* Released and parked again before this worker woke (a short step on a loaded host): it slept
                 * through that whole step.  Count it as parked for it, or the main thread waits forever. */
                seen = e->gen;
                e->nparked++;
                pthread_cond_broadcast(&e->cv_parked);
            }
            pthread_cond_wait(&e->cv_go, &e->mu);
        }
        if (e->phase == PH_QUIT)
            break;
        seen = e->gen;
        pthread_mutex_unlock(&e->mu);
        if (!w->err)
            worker_step_loop(w);
        pthread_mutex_lock(&e->mu);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static void wait_parked(struct eng *e)
{
    pthread_mutex_lock(&e->mu);
    while (e->nparked < e->n)
        pthread_cond_wait(&e->cv_parked, &e->mu);
    pthread_mutex_unlock(&e->mu);
}

static void shutdown_workers(struct eng *e)
{
    pthread_mutex_lock(&e->mu);
    e->phase = PH_QUIT;
    pthread_cond_broadcast(&e->cv_go);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < e->n; i++)
        if (e->w[i].started)
            pthread_join(e->w[i].th, NULL);
}

/* Sleep until `until` in short slices; returns early (nonzero) when the stop flag rises. */
static int nap_until(const struct eng *e, uint64_t until)
{
    struct ib_clock clk;
    clk_init_monotonic(&clk);
    for (;;) {
        if (stopped(e))
            return 1;
        if (!atomic_load(&e->running)) /* a worker failed */
            return 0;
        uint64_t now = clk_mono_ns();
        if (now >= until)
            return 0;
        clk.sleep_until_ns(&clk, until - now > 5 * IB_NS_PER_MS ? now + 5 * IB_NS_PER_MS : until);
    }
}

static int run_step(struct eng *e, const struct ramp_step *st, struct step_result *r, char *why, size_t len)
{
    struct soi *s = e->s;
    const struct soi_ops *ops = s->ops;
    double x = st->intensity;
    uint64_t t_set = clk_mono_ns();
    if (ops->set_intensity) {
        int rc = ops->set_intensity(s, x, why, len);
        if (rc < 0)
            return rc;
    }
    if (stopped(e))
        return -EINTR;
    r->settle_ns = clk_mono_ns() - t_set;
    r->requested = x;
    r->target = s->capacity * x / 100.0;
    e->idle = x <= 0;
    e->duty = x / 100.0;
    switch (ops->kind) {
    case SOI_RATE:
        /* Below 100 %: x % of the peak measured with the very same stepping (calib_bw_chunk). At 100 %:
         * unthrottled. Pacing exactly at the mean of a fluctuating resource is biased low (fast moments are capped
         * at the target, slow ones beyond the credit are lost): on this host it held DRAM at ~91 % of the peak in
         * every order of steps, while unthrottled averages to the peak. The self-meter reports what it got. */
        e->lead_only = s->pace_lead_only;
        e->rate_per_thread = x >= 100.0 ? 0 : r->target / (e->lead_only ? 1 : e->n);
        break;
    case SOI_FOOTPRINT:
        e->rate_per_thread = s->rate_cap > 0 ? s->rate_cap / e->n : 0;
        break;
    case SOI_DUTY:
        e->rate_per_thread = 0;
        break;
    }
    for (unsigned i = 0; i < e->n; i++)
        e->w[i].units = e->w[i].active_ns = e->w[i].window_ns = 0;

    pthread_mutex_lock(&e->mu);
    e->nparked = 0;
    e->gen++;
    e->phase = PH_RUN;
    atomic_store(&e->running, 1);
    pthread_cond_broadcast(&e->cv_go);
    pthread_mutex_unlock(&e->mu);

    uint64_t t0 = clk_mono_ns();
    int intr = nap_until(e, t0 + st->dur_ns);
    atomic_store(&e->running, 0);
    uint64_t t1 = clk_mono_ns();
    pthread_mutex_lock(&e->mu);
    e->phase = PH_PARK;
    pthread_mutex_unlock(&e->mu);
    wait_parked(e);
    if (intr)
        return -EINTR;

    r->t0_ns = t0;
    r->t1_ns = t1;
    struct soi_meter m = {.wall_ns = t1 - t0};
    uint64_t windows = 0;
    for (unsigned i = 0; i < e->n; i++) {
        windows += e->w[i].window_ns;
        if (e->w[i].err)
            return ib_why(why, len, e->w[i].err, "%s: worker %u on CPU %d failed: %s", ops->name, i, e->w[i].cpu,
                          strerror(-e->w[i].err));
        m.units += e->w[i].units;
        m.active_ns += e->w[i].active_ns;
    }
    double secs = (double)m.wall_ns / 1e9;
    m.secondary = secs > 0 ? (double)m.units / secs : 0;
    switch (ops->kind) {
    case SOI_RATE:
        m.achieved = m.secondary;
        break;
    case SOI_DUTY:
        m.achieved = m.wall_ns ? (double)m.active_ns / ((double)m.wall_ns * e->n) : 0;
        break;
    case SOI_FOOTPRINT:
        m.achieved = 0;
        break;
    }
    if (ops->measure) {
        int rc = ops->measure(s, &m);
        if (rc < 0)
            return ib_why(why, len, rc, "%s: self-meter failed: %s", ops->name, strerror(-rc));
    }
    r->wall_ns = m.wall_ns;
    r->achieved = m.achieved;
    r->achieved_pct = m.achieved / s->capacity * 100.0;
    r->secondary = m.secondary;
    r->load_ns = m.load_ns;
    r->active_frac = windows ? (double)m.active_ns / (double)windows : 0;
    return 0;
}

int engine_run(struct soi *s, const struct ramp_sched *sched, const atomic_int *stop, const struct engine_cb *cb,
               struct step_result *results, unsigned *ndone, char *why, size_t len)
{
    *ndone = 0;
    if (!s || !sched || sched->n == 0 || !results)
        return ib_why(why, len, -EINVAL, "nothing to run");
    struct eng e = {.s = s, .stop = stop, .n = s->env->nthreads, .phase = PH_PARK};
    e.w = calloc(e.n, sizeof(*e.w));
    if (!e.w)
        return -ENOMEM;
    pthread_mutex_init(&e.mu, NULL);
    pthread_cond_init(&e.cv_go, NULL);
    pthread_cond_init(&e.cv_parked, NULL);
    int rc = 0;
    for (unsigned i = 0; i < e.n; i++) {
        e.w[i] = (struct worker){.e = &e, .tid = i, .cpu = s->env->cpus[i]};
        int prc = pthread_create(&e.w[i].th, NULL, worker_main, &e.w[i]);
        if (prc) {
            rc = ib_why(why, len, -prc, "cannot start worker %u: %s", i, strerror(prc));
            break;
        }
        e.w[i].started = 1;
    }
    if (rc == 0) {
        /* wait for every worker to be bound and parked; report a binding failure before running anything */
        pthread_mutex_lock(&e.mu);
        while (e.nparked < e.n)
            pthread_cond_wait(&e.cv_parked, &e.mu);
        pthread_mutex_unlock(&e.mu);
        for (unsigned i = 0; i < e.n; i++)
            if (e.w[i].err) {
                rc = ib_why(why, len, e.w[i].err, "cannot bind worker %u to CPU %d: %s", i, e.w[i].cpu,
                            strerror(-e.w[i].err));
                break;
            }
    }
    for (size_t i = 0; rc == 0 && i < sched->n; i++) {
        results[i] = (struct step_result){.index = (unsigned)i};
        rc = run_step(&e, &sched->steps[i], &results[i], why, len);
        if (rc == 0) {
            *ndone = (unsigned)i + 1;
            if (cb && cb->on_step)
                cb->on_step(cb->arg, &results[i], (unsigned)sched->n);
        }
    }
    if (rc == 0 && stopped(&e))
        rc = -EINTR;
    shutdown_workers(&e);
    pthread_cond_destroy(&e.cv_parked);
    pthread_cond_destroy(&e.cv_go);
    pthread_mutex_destroy(&e.mu);
    free(e.w);
    if (rc == -EINTR)
        ib_why(why, len, -EINTR, "interrupted");
    return rc;
}

int linfit_compute(const double *x, const double *y, unsigned n, struct linfit *out)
{
    if (n < 2)
        return -EINVAL;
    double sx = 0, sy = 0;
    for (unsigned i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
    }
    double mx = sx / n, my = sy / n, sxx = 0, sxy = 0, syy = 0;
    for (unsigned i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx == 0)
        return -EINVAL;
    struct linfit f = {.n = n};
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    double ssr = 0;
    for (unsigned i = 0; i < n; i++) {
        double fit = f.intercept + f.slope * x[i];
        ssr += (y[i] - fit) * (y[i] - fit);
        f.worst_dev_fit = fmax(f.worst_dev_fit, fabs(y[i] - fit));
        f.worst_dev_ideal = fmax(f.worst_dev_ideal, fabs(y[i] - x[i]));
    }
    f.r2 = syy > 0 ? 1.0 - ssr / syy : (ssr == 0 ? 1.0 : 0.0);
    *out = f;
    return 0;
}
