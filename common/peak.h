/* peak.h - measured peak issue rates of the core SoIs (int, fp, simd) and the callbacks they share.
 *
 * A kernel is `uint64_t kernel(uint64_t iters)`: it runs iters loop iterations and returns the instructions it
 * executed (sois/core_kernels.S).  Its peak is measured on a set of CPUs with one bound thread per CPU, all running
 * at once, stepping exactly as the SoI steps (a quantum of ~PEAK_QUANTUM_NS, a clock read per quantum), and is cached
 * in the calibration's rate table (struct calib_bw, with bps holding instructions/s) under a kind such as "int".
 */
#ifndef IB_PEAK_H
#define IB_PEAK_H
#include "ib_atomic.h"
#include <stddef.h>
#include <stdint.h>

#include "calib.h"
#include "soi.h"
#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t (*peak_kernel_fn)(uint64_t iters);

#define PEAK_QUANTUM_NS 20000ULL   /* one step() of a core SoI: ~20 us */
#define PEAK_REPS 5
#define PEAK_REP_NS (100ULL * 1000000ULL)

/* Iterations of k giving about quantum_ns at `rate` instructions/s on one thread (at least 1). */
uint64_t peak_iters_for(peak_kernel_fn k, double rate, uint64_t quantum_ns);
/* Measure k's summed rate (instructions/s) over cpus (threads bound there when t is this machine): the median over
 * PEAK_REPS repeats of PEAK_REP_NS; *spread = (max-min)/median (may be NULL). */
int peak_measure(const struct topo *t, const int *cpus, unsigned n, peak_kernel_fn k, const atomic_int *stop,
                 double *ops, double *spread, char *why, size_t len);
/* Store a measured rate for kind on cpus in c (replacing an older one), marking c for saving.  A kind or CPU list
 * too long for its key is not stored (measured again next time, never found under a cut key). */
void peak_store(struct calib *c, const char *kind, const int *cpus, unsigned n, double ops, double spread);
/* Peak of a rate SoI whose threads each measure themselves: one thread per env->cpus[i] (bound when env's topology
 * is this machine), all running at once. Each calls window(arg, tid, ns, &rate) once to warm up (50 ms, discarded),
 * then PEAK_REPS times for window_ns, in step with the others (a barrier between windows); rate is that thread's
 * units/s. *peak is the median over windows of the summed rate, *spread (max-min)/median (spread may be NULL). A window that returns
 * < 0 fails the measurement with its error. Polls env->stop between windows (-EINTR). */
typedef int (*peak_window_fn)(void *arg, unsigned tid, uint64_t window_ns, double *rate);
int peak_threads(const struct soi_env *env, unsigned n, peak_window_fn window, void *arg, uint64_t window_ns,
                 double *peak, double *spread, char *why, size_t len);

/* A rate SoI's peak: the cached rate of `kind` on env->cpus when env->cached_capacity and one is there,
 * else peak_threads now and store it. *old gets the cached rate seen before (0 if none). */
int peak_need_threads(const struct soi_env *env, const char *kind, unsigned n, peak_window_fn window, void *arg,
                      uint64_t window_ns, double *peak, double *old, char *why, size_t len);

/* ---- the core SoIs' shared callbacks --------------------------------------------------------------------------
 * prepare(): core_soi_open(s, kind, kernel, "what the kernel issues") measures (or looks up) the peak on env->cpus
 * and sets capacity (instructions/s), units and capacity_src; step() runs one ~20 us quantum and counts the
 * instructions it issued; measure() reports instructions/s as the achieved pressure (the duty controller paces). */
int core_soi_open(struct soi *s, const char *kind, peak_kernel_fn k, const char *what, char *why, size_t len);
int core_soi_step(struct soi *s, unsigned tid, uint64_t *units);
int core_soi_measure(struct soi *s, struct soi_meter *m);
void core_soi_teardown(struct soi *s);

#ifdef __cplusplus
}
#endif
#endif
