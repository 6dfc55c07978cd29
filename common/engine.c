/* engine.c - runs an SoI on worker threads bound through hwloc, parked between steps, paced: through a schedule
 * (engine_run) or held in the background at an intensity the caller changes (engine_start .. engine_stop).
 *
 * Step protocol (the controlling thread: the caller of engine_run, or the background engine's control thread):
 *   workers parked -> set_intensity(x) when x changes -> configure pacing -> release workers -> nap the step
 *   (polling the stop flag every few ms; a background request ends it early) -> tell workers to park -> wait until
 *   all parked -> collect counters -> measure().
 * Workers run step() quanta and sleep to their pacer's absolute deadline in slices of at most 1 ms, so a park
 * request or Ctrl-C is seen within about a millisecond.
 */
#define _GNU_SOURCE
#include "engine.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ib_err.h"
#include "pace.h"

enum phase { PH_PARK = 0, PH_RUN, PH_QUIT };

struct eng;

struct worker {
    struct eng *e;
    pthread_t th;
    unsigned tid;
    pid_t os_tid;        /* the kernel's id of the thread (its /proc/self/task entry), set before it first parks */
    int cpu;
    int started;
    /* published by the worker before it parks; read by the controlling thread under the mutex */
    uint64_t units, active_ns, window_ns, cpu_ns;
    uint64_t sleeps, wake_sum, period_ns; /* duty SoIs, the last step: its sleeps, what they cost, the last period */
    int err;
    /* the worker's own: duty SoIs keep their pacer from step to step while the intensity stays (a metering step may
     * be shorter than a period); its clock reads the thread's CPU time since dw_cpu0 */
    uint64_t wake_ns;    /* what a sleep and wake-up cost this worker's CPU time, measured at start */
    struct ib_clock clk;
    struct pace_dw dw;
    double dw_duty;      /* the duty dw paces (NAN: none yet; -1: none since an idle step) */
    uint64_t dw_cpu0;    /* dw's CPU time starts here (moved on by the CPU time spent parked) */
    uint64_t park_ns, park_cpu; /* when the worker last left a step: clocks of the wall and of its CPU */
};

struct eng {
    struct soi *s;
    const atomic_int *stop;
    pthread_mutex_t mu;
    pthread_cond_t cv_go, cv_parked, cv_end; /* cv_end: the step ends (idle and sleeping duty workers wait on it) */
    enum phase phase;
    unsigned gen;        /* bumped each time workers are released */
    unsigned nparked;
    unsigned n;
    atomic_int running;  /* 1 while a step runs: workers poll it between quanta */
    /* pacing for the current intensity, set while workers are parked */
    double x;               /* intensity in force */
    uint64_t settle_ns;     /* what its set_intensity took */
    int unthrottled;        /* FOOTPRINT: ignore soi->rate_cap */
    int idle;
    double rate_per_thread; /* units/s, <= 0 unlimited */
    int lead_only;          /* only worker 0 is paced, at rate_per_thread; the others run unpaced */
    double duty;
    uint64_t units;         /* the last step's units, all workers */
    struct worker *w;
    pid_t *tids;            /* the workers' os_tid, for their schedstat */
    struct ib_sched sch0;   /* the workers' run-queue accounting when the step was released */
    struct ib_pressure_snap ps0; /* the machine's, then */
    /* The controlling side: a nap waits on cv_ctl, so a request (wake) ends the running step at once. The background
     * engine's request state lives under cmu too. */
    pthread_mutex_t cmu;
    pthread_cond_t cv_ctl;
    int wake;
};

#define SLICE_NS (1 * IB_NS_PER_MS)
/* How often a nap or a waiting caller looks at the stop flag (nobody signals it). */
#define POLL_NS (5 * IB_NS_PER_MS)
#define IDLE_GUARD_NS (100 * IB_NS_PER_MS)
/* Credit a paced worker may bank after falling behind (a slow chunk, a preemption): enough to absorb the
 * millisecond-scale dips of a shared memory system, small against a step. Slices stay sub-millisecond. */
#define BURST_NS (2 * IB_NS_PER_MS)

static void cond_init_mono(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
}

/* Waits on cv (monotonic) until `until` at the latest. */
static void cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t until)
{
    struct timespec ts = {.tv_sec = (time_t)(until / IB_NS_PER_S), .tv_nsec = (long)(until % IB_NS_PER_S)};
    pthread_cond_timedwait(cv, mu, &ts);
}

static int stopped(const struct eng *e) { return e->stop && atomic_load(e->stop); }

static void worker_step_loop(struct worker *w)
{
    struct eng *e = w->e;
    struct soi *s = e->s;
    uint64_t units = 0, active = 0, start = clk_mono_ns(), cpu0 = clk_thread_cpu_ns();
    if (e->idle) {
        /* 0 %: no wake-ups at all (each costs CPU time an observer sees) until the step ends, which signals cv_end;
         * the timeout only guards against a lost signal */
        pthread_mutex_lock(&e->mu);
        while (atomic_load(&e->running) && e->phase == PH_RUN && !stopped(e))
            cond_wait_until(&e->cv_end, &e->mu, clk_mono_ns() + IDLE_GUARD_NS);
        pthread_mutex_unlock(&e->mu);
        if (!isnan(w->dw_duty))
            w->dw_duty = -1; /* the next paced step starts afresh (keeping what wake-ups were found to cost) */
        goto out;
    }
    struct pace_bucket b;
    struct pace_dw *d = &w->dw;
    int duty = s->ops->kind == SOI_DUTY;
    uint64_t burst = s->pace_burst_ns ? s->pace_burst_ns : BURST_NS, sleeps0 = d->sleeps, wake0 = d->wake_sum;
    if (duty && w->dw_duty != e->duty) { /* a new intensity: no credit or debt carried over */
        /* the wake-up cost this worker learnt carries over; the start-up measurement serves its first step */
        pace_dw_init(d, &w->clk, e->duty, burst, isnan(w->dw_duty) ? w->wake_ns : d->wake_ns, s->env->duty_period_ns);
        w->dw_duty = e->duty;
        w->dw_cpu0 = cpu0;
        sleeps0 = wake0 = 0;
    } else if (duty) { /* the same intensity: time and CPU time spent parked are not the pacer's */
        pace_dw_skip(d, start - w->park_ns);
        w->dw_cpu0 += cpu0 - w->park_cpu;
    } else {
        pace_bucket_init(&b, &w->clk, e->lead_only && w->tid ? 0 : e->rate_per_thread, burst);
    }
    while (atomic_load(&e->running) && !stopped(e)) {
        /* a duty sleep the last step's end cut short is finished first: the pacer's cycle spans metering steps */
        uint64_t deadline = duty ? d->due : 0;
        if (!deadline) {
            uint64_t u = 0, t0 = clk_mono_ns();
            int rc = s->ops->step(s, w->tid, &u);
            uint64_t t1 = clk_mono_ns();
            if (rc < 0) {
                w->err = rc;
                atomic_store(&e->running, 0); /* end the step now: the controlling thread reports the failure */
                pthread_mutex_lock(&e->cmu);
                pthread_cond_broadcast(&e->cv_ctl);
                pthread_mutex_unlock(&e->cmu);
                break;
            }
            units += u;
            active += t1 - t0;
            deadline = duty ? pace_dw_worked(d, t1 - t0) : pace_bucket_charge(&b, (double)u);
        }
        if (duty && deadline && !s->pace_spin) {
            /* A duty worker sleeps once a period, in one piece (a wake-up per slice would cost CPU time) but on
             * cv_end, so the step's end wakes it: it parks at once and finishes the sleep in the next step. */
            pthread_mutex_lock(&e->mu);
            while (atomic_load(&e->running) && e->phase == PH_RUN && !stopped(e) && clk_mono_ns() < deadline)
                cond_wait_until(&e->cv_end, &e->mu, deadline);
            pthread_mutex_unlock(&e->mu);
            if (clk_mono_ns() >= deadline)
                pace_dw_woke(d, clk_thread_cpu_ns() - w->dw_cpu0);
            continue;
        }
        /* a rate worker (or a spinning one) waits in slices of at most a millisecond, so it parks within one */
        while (deadline && atomic_load(&e->running) && !stopped(e)) {
            uint64_t now = clk_mono_ns();
            if (now >= deadline)
                break;
            if (s->pace_spin)
                __builtin_ia32_pause();
            else
                w->clk.sleep_until_ns(&w->clk, deadline - now > SLICE_NS ? now + SLICE_NS : deadline);
        }
        if (duty)
            d->due = 0; /* a spinning wait is CPU time by design: it budgets step() alone */
    }
    if (duty) {
        w->sleeps = d->sleeps - sleeps0;
        w->wake_sum = d->wake_sum - wake0;
        w->period_ns = pace_dw_period(d);
    }
out:
    w->park_ns = clk_mono_ns();
    w->park_cpu = clk_thread_cpu_ns();
    w->units = units;
    w->active_ns = active;
    w->window_ns = w->park_ns - start;
    w->cpu_ns = w->park_cpu - cpu0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct eng *e = w->e;
    w->os_tid = (pid_t)syscall(SYS_gettid);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* sub-millisecond sleeps need a tight timer slack */
    char name[16];
    snprintf(name, sizeof(name), "ib-%.8s-%u", e->s->ops->name, w->tid % 100);
    pthread_setname_np(pthread_self(), name); /* an observer (top -H, /proc/PID/task) can tell the workers apart */
    if (topo_is_this_machine(e->s->env->topo)) {
        int rc = topo_bind_thread(e->s->env->topo, w->cpu);
        if (rc < 0)
            w->err = rc;
    }
    if (e->s->ops->kind == SOI_DUTY && !w->err && !e->s->pace_spin)
        w->wake_ns = clk_wake_cost_ns(); /* where it runs, as it will sleep */
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

/* Starts s's workers and waits until every one is bound and parked: a binding failure is reported before anything
 * runs. Release with eng_close, also after a failure. */
static int eng_open(struct eng *e, struct soi *s, const atomic_int *stop, char *why, size_t len)
{
    *e = (struct eng){.s = s, .stop = stop, .n = s->env->nthreads, .phase = PH_PARK, .x = NAN};
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv_go, NULL);
    pthread_cond_init(&e->cv_parked, NULL);
    cond_init_mono(&e->cv_end);
    pthread_mutex_init(&e->cmu, NULL);
    cond_init_mono(&e->cv_ctl);
    e->w = calloc(e->n, sizeof(*e->w));
    e->tids = calloc(e->n, sizeof(*e->tids));
    if (!e->w || !e->tids)
        return ib_why(why, len, -ENOMEM, "engine: out of memory");
    for (unsigned i = 0; i < e->n; i++) {
        e->w[i] = (struct worker){.e = e, .tid = i, .cpu = s->env->cpus[i], .dw_duty = NAN};
        clk_init_monotonic(&e->w[i].clk);
        int prc = pthread_create(&e->w[i].th, NULL, worker_main, &e->w[i]);
        if (prc)
            return ib_why(why, len, -prc, "cannot start worker %u: %s", i, strerror(prc));
        e->w[i].started = 1;
    }
    wait_parked(e);
    uint64_t wake = 0;
    for (unsigned i = 0; i < e->n; i++)
        e->tids[i] = e->w[i].os_tid;
    for (unsigned i = 0; i < e->n; i++) {
        if (e->w[i].err)
            return ib_why(why, len, e->w[i].err, "cannot bind worker %u to CPU %d: %s", i, e->w[i].cpu,
                          strerror(-e->w[i].err));
        if (e->w[i].wake_ns > wake)
            wake = e->w[i].wake_ns;
    }
    if (s->ops->kind == SOI_DUTY) { /* the start: each worker then follows its own wake-ups (pace_dw) */
        s->duty_wake_ns = wake;
        s->duty_period_ns = s->env->duty_period_ns ? s->env->duty_period_ns : pace_duty_period_for(wake);
    }
    return 0;
}

static void eng_close(struct eng *e)
{
    pthread_mutex_lock(&e->mu);
    e->phase = PH_QUIT;
    pthread_cond_broadcast(&e->cv_go);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; e->w && i < e->n; i++)
        if (e->w[i].started)
            pthread_join(e->w[i].th, NULL);
    pthread_cond_destroy(&e->cv_ctl);
    pthread_mutex_destroy(&e->cmu);
    pthread_cond_destroy(&e->cv_parked);
    pthread_cond_destroy(&e->cv_end);
    pthread_cond_destroy(&e->cv_go);
    pthread_mutex_destroy(&e->mu);
    free(e->w);
    free(e->tids);
    e->w = NULL;
    e->tids = NULL;
}

/* Puts intensity x in force with the workers parked: set_intensity (when call_set), then the pacing. */
static int eng_set(struct eng *e, double x, int call_set, char *why, size_t len)
{
    struct soi *s = e->s;
    const struct soi_ops *ops = s->ops;
    uint64_t t_set = clk_mono_ns();
    if (call_set && ops->set_intensity) {
        int rc = ops->set_intensity(s, x, why, len);
        if (rc < 0)
            return rc;
    }
    if (stopped(e))
        return ib_why(why, len, -EINTR, "interrupted");
    e->settle_ns = clk_mono_ns() - t_set;
    e->x = x;
    e->idle = x <= 0;
    e->duty = x / 100.0;
    double target = s->capacity * x / 100.0;
    switch (ops->kind) {
    case SOI_RATE:
        /* Below 100 %: x % of the peak measured with the very same stepping (calib_bw_chunk). At 100 %:
         * unthrottled. Pacing exactly at the mean of a fluctuating resource is biased low (fast moments are capped
         * at the target, slow ones beyond the credit are lost), while unthrottled averages to the peak
         * (docs/capacities.md has the figures). The self-meter reports what it got. */
        e->lead_only = s->pace_lead_only;
        e->rate_per_thread = x >= 100.0 ? 0 : target / (e->lead_only ? 1 : e->n);
        break;
    case SOI_FOOTPRINT:
        e->rate_per_thread = s->rate_cap > 0 && !e->unthrottled ? s->rate_cap / e->n : 0;
        break;
    case SOI_DUTY:
        e->rate_per_thread = 0;
        break;
    }
    return 0;
}

/* Releases the parked workers into a step at the intensity in force; returns when (CLOCK_MONOTONIC), read before
 * they can run: every step() of this step starts after it, every one of the last step ended before it. */
static uint64_t eng_release(struct eng *e)
{
    for (unsigned i = 0; i < e->n; i++)
        e->w[i].units = e->w[i].active_ns = e->w[i].window_ns = e->w[i].cpu_ns = e->w[i].sleeps =
            e->w[i].wake_sum = e->w[i].period_ns = 0;
    /* the workers are parked (off the run queue): their counters stand still until the broadcast below. An
     * unreadable schedstat (CONFIG_SCHED_INFO off) leaves the step's wait share NAN, not an error. */
    ib_sched_threads(e->tids, e->n, &e->sch0, NULL, 0);
    ib_pressure_read(&e->ps0, NULL, NULL, 0);
    pthread_mutex_lock(&e->mu);
    uint64_t t0 = clk_mono_ns();
    e->nparked = 0;
    e->gen++;
    e->phase = PH_RUN;
    atomic_store(&e->running, 1);
    pthread_cond_broadcast(&e->cv_go);
    pthread_mutex_unlock(&e->mu);
    return t0;
}

/* Naps until `until`; returns early when a worker failed or a request came (0), or the stop flag rose (1). */
static int nap_until(struct eng *e, uint64_t until)
{
    int intr = 0;
    pthread_mutex_lock(&e->cmu);
    for (;;) {
        if (stopped(e)) {
            intr = 1;
            break;
        }
        uint64_t now = clk_mono_ns();
        if (e->wake || !atomic_load(&e->running) || now >= until)
            break;
        cond_wait_until(&e->cv_ctl, &e->cmu, until - now > POLL_NS ? now + POLL_NS : until);
    }
    pthread_mutex_unlock(&e->cmu);
    return intr;
}

/* Ends the step released at t0: parks the workers, then (unless intr) meters it into r. */
static int eng_collect(struct eng *e, uint64_t t0, int intr, struct step_result *r, char *why, size_t len)
{
    struct soi *s = e->s;
    const struct soi_ops *ops = s->ops;
    atomic_store(&e->running, 0);
    uint64_t t1 = clk_mono_ns();
    pthread_mutex_lock(&e->mu);
    e->phase = PH_PARK;
    pthread_cond_broadcast(&e->cv_end);
    pthread_mutex_unlock(&e->mu);
    wait_parked(e);
    if (intr)
        return ib_why(why, len, -EINTR, "interrupted");
    struct ib_sched sch1;
    struct ib_pressure_snap ps1;
    ib_sched_threads(e->tids, e->n, &sch1, NULL, 0);
    ib_pressure_read(&ps1, NULL, NULL, 0);
    ib_sched_delta(&e->sch0, &sch1, &r->sched);
    r->wait_pct = ib_sched_share(&r->sched);
    ib_pressure_delta(&e->ps0, &ps1, &r->machine);

    r->requested = e->x;
    r->target = s->capacity * e->x / 100.0;
    r->settle_ns = e->settle_ns;
    r->t0_ns = t0;
    r->t1_ns = t1;
    struct soi_meter m = {.wall_ns = t1 - t0};
    uint64_t windows = 0, cpu = 0, sleeps = 0, wake = 0;
    r->period_ns = 0;
    for (unsigned i = 0; i < e->n; i++) {
        windows += e->w[i].window_ns;
        sleeps += e->w[i].sleeps;
        wake += e->w[i].wake_sum;
        if (e->w[i].period_ns > r->period_ns)
            r->period_ns = e->w[i].period_ns;
        if (e->w[i].err)
            return ib_why(why, len, e->w[i].err, "%s: worker %u on CPU %d failed: %s", ops->name, i, e->w[i].cpu,
                          strerror(-e->w[i].err));
        m.units += e->w[i].units;
        m.active_ns += e->w[i].active_ns;
        cpu += e->w[i].cpu_ns;
    }
    e->units = m.units;
    double secs = (double)m.wall_ns / 1e9;
    m.secondary = secs > 0 ? (double)m.units / secs : 0;
    switch (ops->kind) {
    case SOI_RATE:
        m.achieved = m.secondary;
        break;
    case SOI_DUTY: /* the share of their CPUs the workers held, as an observer counts it */
        m.achieved = m.wall_ns ? (double)cpu / ((double)m.wall_ns * e->n) : 0;
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
    r->cpu_frac = windows ? (double)cpu / (double)windows : 0;
    r->cpu_ns = cpu;
    r->wake_ns = sleeps ? (double)wake / (double)sleeps : 0;
    return 0;
}

int engine_run(struct soi *s, const struct ramp_sched *sched, const atomic_int *stop, const struct engine_cb *cb,
               struct step_result *results, unsigned *ndone, char *why, size_t len)
{
    *ndone = 0;
    if (!s || !sched || sched->n == 0 || !results)
        return ib_why(why, len, -EINVAL, "nothing to run");
    struct eng e;
    int rc = eng_open(&e, s, stop, why, len);
    for (size_t i = 0; rc == 0 && i < sched->n; i++) {
        const struct ramp_step *st = &sched->steps[i];
        results[i] = (struct step_result){.index = (unsigned)i};
        if ((rc = eng_set(&e, st->intensity, 1, why, len)) < 0)
            break;
        uint64_t t0 = eng_release(&e);
        rc = eng_collect(&e, t0, nap_until(&e, t0 + st->dur_ns), &results[i], why, len);
        if (rc == 0) {
            *ndone = (unsigned)i + 1;
            if (cb && cb->on_step)
                cb->on_step(cb->arg, &results[i], (unsigned)sched->n);
        }
    }
    if (rc == 0 && stopped(&e))
        rc = -EINTR;
    eng_close(&e);
    if (rc == -EINTR)
        ib_why(why, len, -EINTR, "interrupted");
    return rc;
}

/* ---- the engine in the background ------------------------------------------------------------------------------
 * The caller posts one request at a time (under e.cmu) and waits for its answer; the control thread ends the running
 * step, acts on the request with the workers parked, releases them into the next step and only then answers, so a
 * window begun by a request starts no later than the request returns. Windows are aggregated on the fly. */

enum bg_req { REQ_NONE = 0, REQ_SET, REQ_WAVE, REQ_MARK, REQ_READ, REQ_QUIT };

struct win_acc {
    uint64_t t0, t1, units, cpu_ns, wall_sum;
    unsigned steps;
    double pct_w, ach_w; /* achieved % and achieved, times the step's wall ns */
    struct ib_sched sched;
    struct ib_pressure machine;
};

struct engine_bg {
    struct eng e;
    uint64_t step_ns;
    pthread_t ctl;
    int ctl_started;
    pthread_cond_t cv_done; /* a request was answered */
    /* under e.cmu */
    enum bg_req req;
    double req_x;
    uint64_t req_on, req_off; /* REQ_WAVE */
    uint64_t req_ns;        /* when it was posted */
    unsigned posted, answered;
    int req_rc;
    int err;                /* the control thread halted: the SoI's -errno, or -EINTR */
    char err_why[256];
    struct engine_window win; /* the window a READ ended */
    /* the control thread's own */
    struct win_acc acc;
    int wave;               /* a square wave runs (engine_wave): wave_x in the on phase (high), 0 in the off phase */
    int high;
    double wave_x;
    uint64_t wave_on, wave_off, flip_at; /* flip_at: CLOCK_MONOTONIC, the running phase's end */
    char why[256];
};

static void acc_add(struct win_acc *a, const struct step_result *r, uint64_t units)
{
    if (a->steps++ == 0)
        a->t0 = r->t0_ns;
    a->t1 = r->t1_ns;
    a->units += units;
    a->cpu_ns += r->cpu_ns;
    a->wall_sum += r->wall_ns;
    a->pct_w += r->achieved_pct * (double)r->wall_ns;
    a->ach_w += r->achieved * (double)r->wall_ns;
    ib_sched_add(&a->sched, &r->sched);
    ib_pressure_add(&a->machine, &r->machine);
}

static void acc_window(const struct win_acc *a, double x, unsigned nthreads, struct engine_window *w)
{
    *w = (struct engine_window){.intensity = x, .t0_ns = a->t0, .t1_ns = a->t1, .units = a->units,
                                .cpu_ns = a->cpu_ns, .steps = a->steps};
    w->wall_ns = a->t1 - a->t0;
    double secs = (double)w->wall_ns / 1e9, cpu = (double)a->cpu_ns / 1e9;
    w->achieved_pct = a->wall_sum ? a->pct_w / (double)a->wall_sum : NAN;
    w->achieved = a->wall_sum ? a->ach_w / (double)a->wall_sum : NAN;
    w->rate = secs > 0 ? (double)a->units / secs : 0;
    w->rate_cpu = cpu > 0 ? (double)a->units / cpu : NAN;
    w->cpu_share = secs > 0 ? cpu / (secs * nthreads) : 0;
    w->sched = a->sched;
    w->wait_pct = ib_sched_share(&a->sched);
    w->machine = a->machine;
}

static void *ctl_main(void *arg)
{
    struct engine_bg *b = arg;
    struct eng *e = &b->e;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* steps end on time, to the microsecond */
    int rc;
    enum bg_req q;
    unsigned took = 1; /* the requests acted on (engine_start's is the first), answered once the workers run */
    do {
        uint64_t t0 = eng_release(e);
        pthread_mutex_lock(&e->cmu);
        if (took) { /* answer what the last step's end acted on; a request posted since ends this step */
            b->answered = took;
            b->req_rc = 0;
            pthread_cond_broadcast(&b->cv_done);
        }
        pthread_mutex_unlock(&e->cmu);
        struct step_result r = {0};
        uint64_t until = t0 + b->step_ns;
        if (b->wave && b->flip_at < until) /* a phase ends the step it ends in */
            until = b->flip_at;
        rc = eng_collect(e, t0, nap_until(e, until), &r, b->why, sizeof(b->why));
        if (rc == 0)
            acc_add(&b->acc, &r, e->units);
        pthread_mutex_lock(&e->cmu);
        q = b->req;
        double x = b->req_x;
        uint64_t on = b->req_on, off = b->req_off;
        if (rc == 0 && q != REQ_NONE && b->req_ns > r.t1_ns) {
            /* posted while this step's workers parked: a window ended here would end before its request; the next
             * step (ended at once: wake stays set) is the request's */
            q = REQ_NONE;
            took = 0;
        } else {
            took = q != REQ_NONE ? b->posted : 0;
            b->req = REQ_NONE;
            e->wake = 0;
            if (rc == 0 && q == REQ_READ)
                acc_window(&b->acc, e->x, e->n, &b->win);
        }
        pthread_mutex_unlock(&e->cmu);
        if (rc == 0 && (q == REQ_SET || q == REQ_WAVE)) { /* set_intensity only on a change: mem-cap's grows GBs */
            b->wave = q == REQ_WAVE;
            rc = eng_set(e, x, x != e->x, b->why, sizeof(b->why));
            if (b->wave) {
                b->wave_x = x, b->wave_on = on, b->wave_off = off, b->high = 1;
                b->flip_at = clk_mono_ns() + on;
            }
        } else if (rc == 0 && b->wave && clk_mono_ns() >= b->flip_at) {
            /* the next phase; it lasts its length from when its level is in force (a footprint grown, or released:
             * set_intensity runs at every flip), so a slow set_intensity stretches the period, not the on time */
            b->high = !b->high;
            rc = eng_set(e, b->high ? b->wave_x : 0, 1, b->why, sizeof(b->why));
            b->flip_at = clk_mono_ns() + (b->high ? b->wave_on : b->wave_off);
        }
        if (q != REQ_NONE) /* a new window begins with the next step */
            b->acc = (struct win_acc){0};
    } while (rc == 0 && q != REQ_QUIT);
    /* The workers are parked. Halted (the SoI failed, or the stop flag rose): answer, then wait for engine_stop. */
    pthread_mutex_lock(&e->cmu);
    if (rc < 0) {
        b->err = rc;
        snprintf(b->err_why, sizeof(b->err_why), "%s", b->why);
        b->answered = b->posted;
        b->req_rc = rc;
        pthread_cond_broadcast(&b->cv_done);
    }
    while (q != REQ_QUIT && b->req != REQ_QUIT)
        pthread_cond_wait(&e->cv_ctl, &e->cmu);
    pthread_mutex_unlock(&e->cmu);
    return NULL;
}

/* Under e.cmu: -EINTR once the stop flag rose, the halted engine's error, or 0. */
static int bg_state(struct engine_bg *b, char *why, size_t len)
{
    if (stopped(&b->e))
        return ib_why(why, len, -EINTR, "interrupted");
    if (b->err < 0)
        return ib_why(why, len, b->err, "%s", b->err_why);
    return 0;
}

/* Under e.cmu: waits until request number `n` is answered, the engine halted, or the stop flag rose. */
static int bg_wait(struct engine_bg *b, unsigned n, char *why, size_t len)
{
    while ((int)(b->answered - n) < 0 && !stopped(&b->e) && b->err == 0)
        cond_wait_until(&b->cv_done, &b->e.cmu, clk_mono_ns() + POLL_NS);
    int rc = bg_state(b, why, len);
    return rc < 0 ? rc : b->req_rc;
}

static int bg_call(struct engine_bg *b, enum bg_req q, double x, uint64_t on, uint64_t off, struct engine_window *w,
                   char *why, size_t len)
{
    if (!b)
        return ib_why(why, len, -EINVAL, "engine: not started");
    struct eng *e = &b->e;
    pthread_mutex_lock(&e->cmu);
    int rc = bg_state(b, why, len);
    if (rc == 0) {
        b->req = q;
        b->req_x = x;
        b->req_on = on;
        b->req_off = off;
        b->req_ns = clk_mono_ns();
        e->wake = 1;
        pthread_cond_broadcast(&e->cv_ctl);
        rc = bg_wait(b, ++b->posted, why, len);
        if (rc == 0 && w)
            *w = b->win;
    }
    pthread_mutex_unlock(&e->cmu);
    return rc;
}

int engine_start(struct soi *s, double x, const struct engine_bg_opts *opts, const atomic_int *stop,
                 struct engine_bg **out, char *why, size_t len)
{
    if (out)
        *out = NULL;
    if (!s || !out || !(x >= 0 && x <= 100))
        return ib_why(why, len, -EINVAL, "engine: bad arguments (intensity %g %%)", x);
    if (stop && atomic_load(stop))
        return ib_why(why, len, -EINTR, "interrupted");
    struct engine_bg *b = calloc(1, sizeof(*b));
    if (!b)
        return ib_why(why, len, -ENOMEM, "engine: out of memory");
    cond_init_mono(&b->cv_done);
    b->step_ns = opts && opts->step_ns ? opts->step_ns : 200 * IB_NS_PER_MS;
    int rc = eng_open(&b->e, s, stop, why, len);
    b->e.unthrottled = opts && opts->unthrottled;
    if (rc == 0)
        rc = eng_set(&b->e, x, 1, why, len);
    if (rc == 0) {
        b->posted = 1; /* answered once the workers run at x */
        int prc = pthread_create(&b->ctl, NULL, ctl_main, b);
        if (prc)
            rc = ib_why(why, len, -prc, "engine: cannot start the control thread: %s", strerror(prc));
        b->ctl_started = !prc;
    }
    if (rc == 0) {
        pthread_mutex_lock(&b->e.cmu);
        rc = bg_wait(b, 1, why, len);
        pthread_mutex_unlock(&b->e.cmu);
    }
    if (rc < 0) {
        engine_stop(b, NULL, 0);
        return rc == -EINTR ? ib_why(why, len, -EINTR, "interrupted") : rc;
    }
    *out = b;
    return 0;
}

int engine_set(struct engine_bg *e, double x, char *why, size_t len)
{
    if (!(x >= 0 && x <= 100))
        return ib_why(why, len, -EINVAL, "engine: intensity %g %% is not in 0..100", x);
    return bg_call(e, REQ_SET, x, 0, 0, NULL, why, len);
}

int engine_wave(struct engine_bg *e, double x, uint64_t on_ns, uint64_t off_ns, char *why, size_t len)
{
    if (!(x > 0 && x <= 100) || !on_ns || !off_ns)
        return ib_why(why, len, -EINVAL, "engine: a wave needs an intensity in (0, 100] and both phases > 0 (%g %%, "
                      "%llu ns on, %llu ns off)", x, (unsigned long long)on_ns, (unsigned long long)off_ns);
    return bg_call(e, REQ_WAVE, x, on_ns, off_ns, NULL, why, len);
}

int engine_mark(struct engine_bg *e, char *why, size_t len) { return bg_call(e, REQ_MARK, 0, 0, 0, NULL, why, len); }

int engine_read(struct engine_bg *e, struct engine_window *w, char *why, size_t len)
{
    struct engine_window tmp;
    return bg_call(e, REQ_READ, 0, 0, 0, w ? w : &tmp, why, len);
}

int engine_status(struct engine_bg *e, char *why, size_t len)
{
    if (!e)
        return ib_why(why, len, -EINVAL, "engine: not started");
    pthread_mutex_lock(&e->e.cmu);
    int rc = bg_state(e, why, len);
    pthread_mutex_unlock(&e->e.cmu);
    return rc;
}

int engine_stop(struct engine_bg *b, char *why, size_t len)
{
    if (!b)
        return 0;
    struct eng *e = &b->e;
    if (b->ctl_started) {
        pthread_mutex_lock(&e->cmu);
        b->req = REQ_QUIT;
        e->wake = 1;
        pthread_cond_broadcast(&e->cv_ctl);
        pthread_mutex_unlock(&e->cmu);
        pthread_join(b->ctl, NULL);
    }
    int rc = b->err < 0 && b->err != -EINTR ? ib_why(why, len, b->err, "%s", b->err_why) : 0;
    eng_close(e);
    pthread_cond_destroy(&b->cv_done);
    free(b);
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
