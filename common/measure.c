/* measure.c - n bound threads started together, measured in windows in step, the median of the windows (measure.h). */
#include "measure.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "stats.h"

int (*meas_thread_create)(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) = pthread_create;

enum meas_phase { MEAS_OK, MEAS_BIND, MEAS_SETUP, MEAS_WINDOW, MEAS_SERVE };

struct meas_thr {
    struct meas_ctl *r;
    unsigned tid;
};

struct meas_ctl {
    struct meas_spec sp;
    pthread_t *th;
    struct meas_thr *thr;
    double *val;              /* val[tid * windows + w] */
    unsigned created;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;                /* 0 wait, 1 run, -1 give up (a thread could not be created) */
    unsigned ready;           /* threads bound and set up (or failed at it) */
    int err;                  /* the first failure, with its thread and phase */
    unsigned err_tid;
    enum meas_phase err_phase;
    pthread_barrier_t bar;    /* the measuring threads, between windows */
    int bar_init;
    atomic_int failed;        /* a thread failed: the others skip their windows */
    atomic_int done;          /* the measuring threads have finished: the serving ones return */
};

static void meas_fail(struct meas_ctl *r, unsigned tid, enum meas_phase ph, int rc)
{
    pthread_mutex_lock(&r->mu);
    if (!r->err) {
        r->err = rc;
        r->err_tid = tid;
        r->err_phase = ph;
    }
    pthread_mutex_unlock(&r->mu);
    atomic_store(&r->failed, 1);
}

static int meas_skip(const struct meas_ctl *r)
{
    return atomic_load(&r->failed) || (r->sp.stop && atomic_load(r->sp.stop));
}

static void *meas_thread(void *a)
{
    struct meas_thr *t = a;
    struct meas_ctl *r = t->r;
    const struct meas_spec *sp = &r->sp;
    pthread_mutex_lock(&r->mu);
    while (r->state == 0)
        pthread_cond_wait(&r->cv, &r->mu);
    int state = r->state;
    pthread_mutex_unlock(&r->mu);
    if (state < 0)
        return NULL;

    int rc = sp->topo ? topo_bind_thread(sp->topo, sp->cpus[t->tid]) : 0, set = 0;
    if (rc < 0) {
        meas_fail(r, t->tid, MEAS_BIND, rc);
    } else if (sp->setup) {
        set = 1;
        if ((rc = sp->setup(sp->arg, t->tid)) < 0)
            meas_fail(r, t->tid, MEAS_SETUP, rc);
    }
    pthread_mutex_lock(&r->mu); /* all set up before any measures */
    if (++r->ready == sp->n)
        pthread_cond_broadcast(&r->cv);
    while (r->ready < sp->n)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);

    if (t->tid < sp->nmeasure) {
        for (int w = -(int)sp->warmups; w < (int)sp->windows; w++) {
            if (w >= 0)
                pthread_barrier_wait(&r->bar); /* every measuring thread passes every barrier, failed or not */
            if (meas_skip(r))
                continue;
            double v = 0;
            if ((rc = sp->window(sp->arg, t->tid, w < 0 ? -1 : w, w < 0 ? sp->warm_ns : sp->window_ns, &v)) < 0)
                meas_fail(r, t->tid, MEAS_WINDOW, rc);
            else if (w >= 0)
                r->val[(size_t)t->tid * sp->windows + (size_t)w] = v;
        }
    } else if (!meas_skip(r) && (rc = sp->serve(sp->arg, t->tid, &r->done)) < 0) {
        meas_fail(r, t->tid, MEAS_SERVE, rc);
    }
    if (set && sp->teardown)
        sp->teardown(sp->arg, t->tid);
    return NULL;
}

static void meas_free(struct meas_ctl *r)
{
    if (r->bar_init)
        pthread_barrier_destroy(&r->bar);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r->th);
    free(r->thr);
    free(r->val);
    free(r);
}

/* Joins the measuring threads, then raises done and joins the rest; the first failure (or -EINTR) with its reason. */
static int meas_join(struct meas_ctl *r, char *why, size_t len)
{
    const struct meas_spec *sp = &r->sp;
    for (unsigned i = 0; i < r->created && i < sp->nmeasure; i++)
        pthread_join(r->th[i], NULL);
    atomic_store(&r->done, 1);
    for (unsigned i = sp->nmeasure; i < r->created; i++)
        pthread_join(r->th[i], NULL);
    if (sp->stop && atomic_load(sp->stop))
        return ib_why(why, len, -EINTR, "%s: interrupted", sp->what);
    if (!r->err)
        return 0;
    int cpu = sp->cpus[r->err_tid];
    if (r->err_phase == MEAS_BIND)
        return ib_why(why, len, r->err, "%s: cannot bind a thread to CPU %d: %s", sp->what, cpu, strerror(-r->err));
    return ib_why(why, len, r->err, "%s failed on CPU %d: %s", sp->what, cpu, strerror(-r->err));
}

int meas_start(const struct meas_spec *sp, struct meas_ctl **out, char *why, size_t len)
{
    *out = NULL;
    if (sp->n == 0 || sp->n > MEAS_MAX_THREADS || sp->nmeasure > sp->n || !sp->cpus ||
        (sp->nmeasure && (!sp->window || sp->windows == 0 || sp->windows > MEAS_MAX_WINDOWS)) ||
        (sp->nmeasure < sp->n && !sp->serve))
        return ib_why(why, len, -EINVAL, "%s: bad measurement (%u threads, %u measuring, %u windows)",
                      sp->what ? sp->what : "measurement", sp->n, sp->nmeasure, sp->windows);
    struct meas_ctl *r = calloc(1, sizeof(*r));
    if (!r)
        return ib_why(why, len, -ENOMEM, "out of memory");
    r->sp = *sp;
    if (!r->sp.what)
        r->sp.what = "measurement";
    sp = &r->sp;
    const char *what = sp->what; /* the caller's string or a literal: it outlives r, which a failure below frees */
    r->th = calloc(sp->n, sizeof(*r->th));
    r->thr = calloc(sp->n, sizeof(*r->thr));
    r->val = calloc((size_t)sp->n * (sp->windows ? sp->windows : 1), sizeof(*r->val));
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    if (!r->th || !r->thr || !r->val) {
        meas_free(r);
        return ib_why(why, len, -ENOMEM, "%s: out of memory", what);
    }
    if (sp->nmeasure) {
        if (pthread_barrier_init(&r->bar, NULL, sp->nmeasure)) {
            meas_free(r);
            return ib_why(why, len, -ENOMEM, "%s: cannot make a barrier", what);
        }
        r->bar_init = 1;
    }
    int rc = 0;
    for (unsigned i = 0; i < sp->n; i++) {
        r->thr[i] = (struct meas_thr){.r = r, .tid = i};
        if (meas_thread_create(&r->th[i], NULL, meas_thread, &r->thr[i])) {
            rc = ib_why(why, len, -EAGAIN, "%s: cannot start thread %u of %u", sp->what, i + 1, sp->n);
            break;
        }
        r->created++;
    }
    pthread_mutex_lock(&r->mu); /* release them: to run, or to give up when one could not be created */
    r->state = rc == 0 ? 1 : -1;
    pthread_cond_broadcast(&r->cv);
    if (rc == 0)
        while (r->ready < sp->n)
            pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    if (rc == 0 && atomic_load(&r->failed))
        rc = meas_join(r, why, len); /* a bind or setup failed: the others skip everything */
    else if (rc < 0)
        for (unsigned i = 0; i < r->created; i++)
            pthread_join(r->th[i], NULL);
    if (rc < 0) {
        meas_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int meas_finish(struct meas_ctl *r, struct meas_out *out, char *why, size_t len)
{
    int rc = meas_join(r, why, len);
    const struct meas_spec *sp = &r->sp;
    if (rc == 0 && out && sp->nmeasure) {
        double *tot = out->totals ? out->totals : calloc(sp->windows, sizeof(double));
        if (!tot) {
            rc = ib_why(why, len, -ENOMEM, "%s: out of memory", sp->what);
        } else {
            for (unsigned w = 0; w < sp->windows; w++) {
                tot[w] = 0;
                for (unsigned i = 0; i < sp->nmeasure; i++)
                    tot[w] += r->val[(size_t)i * sp->windows + w];
            }
            out->median = ib_median(tot, sp->windows); /* sorts tot: its ends give the spread */
            out->spread = out->median > 0 ? (tot[sp->windows - 1] - tot[0]) / out->median : 0;
            if (tot != out->totals)
                free(tot);
        }
    } else if (rc == 0 && out) {
        out->median = out->spread = 0;
    }
    meas_free(r);
    return rc;
}

int meas_run(const struct meas_spec *sp, struct meas_out *out, char *why, size_t len)
{
    struct meas_ctl *r = NULL;
    int rc = meas_start(sp, &r, why, len);
    return rc < 0 ? rc : meas_finish(r, out, why, len);
}
