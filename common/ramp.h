/* ramp.h - intensity schedules: hold, linear ramp, custom list. */
#ifndef IB_RAMP_H
#define IB_RAMP_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ramp_step {
    double intensity; /* 0..100 */
    uint64_t dur_ns;
};

struct ramp_sched {
    size_t n;
    struct ramp_step *steps; /* owned; ramp_free() */
};

#define RAMP_MAX_STEPS 10000

/* One step at x for dur_ns. -EINVAL if x outside [0,100] or dur_ns == 0. */
int ramp_hold(struct ramp_sched *s, double x, uint64_t dur_ns);
/* nsteps points from `from` to `to` inclusive, evenly spaced (nsteps==1: just `from`). Descending allowed. */
int ramp_linear(struct ramp_sched *s, double from, double to, unsigned nsteps, uint64_t step_ns);
/* Explicit intensities, each held step_ns. */
int ramp_list(struct ramp_sched *s, const double *xs, size_t n, uint64_t step_ns);
/* Parses "0,10,50,100" (each 0..100, optional '%') into a malloc'd array. -EINVAL on any bad element. */
int ramp_parse_list(const char *str, double **xs, size_t *n);
uint64_t ramp_total_ns(const struct ramp_sched *s);
void ramp_free(struct ramp_sched *s);

#ifdef __cplusplus
}
#endif
#endif
