/* engine.h - the ramp engine: runs an SoI through a schedule on its threads, paced, and self-metered.
 *
 * The engine owns worker threads (one per env->cpus entry, bound through hwloc), parks them between steps,
 * paces them (token bucket for RATE, duty cycle for DUTY, rate cap for FOOTPRINT) and watches the stop flag.
 * Every step yields a result with the requested intensity and the achieved pressure in real units and in % of
 * the SoI's measured capacity.
 */
#ifndef IB_ENGINE_H
#define IB_ENGINE_H
#include "ib_atomic.h"
#include <stdint.h>

#include "ramp.h"
#include "soi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct step_result {
    unsigned index;
    double requested;     /* % */
    double target;        /* requested pressure in soi->unit */
    double achieved;      /* achieved pressure in soi->unit */
    double achieved_pct;  /* achieved / capacity * 100 */
    double secondary;     /* step units per second */
    double active_frac;   /* fraction of wall time the workers were inside step() */
    double load_ns;       /* chase SoIs: ns per dependent load during the step (0: not a chase SoI) */
    uint64_t wall_ns;
    uint64_t settle_ns;   /* time set_intensity took (growing a footprint) */
    uint64_t t0_ns, t1_ns; /* CLOCK_MONOTONIC when the workers were released and told to park: what ran beside the
                            * SoI between the two ran beside this step */
};

struct engine_cb {
    void (*on_step)(void *arg, const struct step_result *r, unsigned nsteps);
    void *arg;
};

/* Runs s through sched. results must hold sched->n entries; *ndone gets the number of completed steps.
 * Returns 0, -EINTR when *stop was raised (completed steps are valid), or -errno with why filled. */
int engine_run(struct soi *s, const struct ramp_sched *sched, const atomic_int *stop, const struct engine_cb *cb,
               struct step_result *results, unsigned *ndone, char *why, size_t len);

/* Linearity of achieved % vs requested %: least squares fit, R^2, and the worst distance (points of full scale)
 * of any step from the ideal line achieved == requested and from the fitted line. */
struct linfit {
    double slope, intercept, r2;
    double worst_dev_ideal;   /* max |achieved_pct - requested| */
    double worst_dev_fit;     /* max |achieved_pct - fit(requested)| */
    unsigned n;
};
int linfit_compute(const double *x, const double *y, unsigned n, struct linfit *out);

#ifdef __cplusplus
}
#endif
#endif
