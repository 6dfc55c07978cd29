/* measure.h - one way to measure with threads: n jobs on n threads, each bound to its CPU, started together, measured
 * in windows in step (a barrier between windows), the figure the median over the windows (ib_median).
 *
 * Thread i (tid i, on cpus[i]) is created, waits until every thread is created (or the starter gave up), binds to
 * cpus[i] (when topo is not NULL), calls setup(arg, i), and waits until every thread is set up.  Then:
 *   - a measuring thread (tid < nmeasure) runs `warmups` windows of warm_ns (discarded), then `windows` windows of
 *     window_ns, each after a barrier the measuring threads share; window(arg, tid, rep, ns, &value) gives its figure
 *     (rep -1 for a warm-up).  Windows are skipped once the stop flag rose or a thread failed (every thread still
 *     passes every barrier, so none hangs).
 *   - any other thread (a helper: a responder, a probe beside the run) runs serve(arg, tid, done) once; serve must
 *     return soon after *done rises, which happens once every measuring thread has finished (meas_finish).
 * Finally teardown(arg, tid) (when setup was called, whatever it returned), so setup's leftovers are released.
 * Window w's total is the sum over the measuring threads of their window-w figures; the figure is the median of the
 * totals. Failures: a thread that cannot be created ends every thread created (-EAGAIN); a bind, setup, window or
 * serve error fails the measurement with the first error; the stop flag gives -EINTR. Every thread created is joined
 * on every path. */
#ifndef IB_MEASURE_H
#define IB_MEASURE_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "ib_atomic.h"
#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MEAS_MAX_THREADS 1024
#define MEAS_MAX_WINDOWS 4096

struct meas_spec {
    const char *what;         /* names the measurement in a reason: "peak-rate", "dram bandwidth" */
    unsigned n;               /* threads (1..MEAS_MAX_THREADS) */
    const int *cpus;          /* cpus[i] for thread i */
    const struct topo *topo;  /* bind thread i to cpus[i] in it; NULL: leave the threads unbound */
    const atomic_int *stop;   /* may be NULL */
    void *arg;
    unsigned nmeasure;        /* threads 0..nmeasure-1 measure, the rest serve (0 <= nmeasure <= n) */
    unsigned warmups, windows; /* windows: at least 1 when nmeasure > 0 (at most MEAS_MAX_WINDOWS) */
    uint64_t warm_ns, window_ns;
    int (*setup)(void *arg, unsigned tid);                                         /* may be NULL */
    int (*window)(void *arg, unsigned tid, int rep, uint64_t ns, double *value);  /* needed when nmeasure > 0 */
    int (*serve)(void *arg, unsigned tid, const atomic_int *done);                /* needed when nmeasure < n */
    void (*teardown)(void *arg, unsigned tid);                                     /* may be NULL */
};

struct meas_out {
    double median;            /* of the windows' totals */
    double spread;            /* (max - min) / median of the totals, 0 when the median is not > 0 */
    double *totals;           /* optional, spec.windows doubles: the totals, ascending */
};

struct meas_ctl;

/* Start the threads and return once every one of them is bound and set up (*r to pass to meas_finish). A failure
 * to start, bind or set up ends and joins every thread before returning it (*r NULL). */
int meas_start(const struct meas_spec *sp, struct meas_ctl **r, char *why, size_t len);
/* Wait for the measuring threads, raise `done` for the others, join them all, free r; out (may be NULL) gets the
 * figures when it returns 0. */
int meas_finish(struct meas_ctl *r, struct meas_out *out, char *why, size_t len);
/* meas_start then meas_finish. */
int meas_run(const struct meas_spec *sp, struct meas_out *out, char *why, size_t len);

/* Creates the threads (pthread_create); tests replace it with one that fails, to walk the failure path. */
extern int (*meas_thread_create)(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

#ifdef __cplusplus
}
#endif
#endif
