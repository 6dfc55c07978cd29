/* probes.c - reference kernels, independent of the SoIs' own code paths. */
#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ib_atomic.h"

#include "ib_err.h"
#include "clock.h"
#include "kernels.h"
#include "measure.h"

/* STREAM's triad loop, kept apart from the SoIs' kernels so the reference is independent of what it checks. */
__attribute__((optimize("O3"))) static void ref_triad(double *restrict a, const double *restrict b,
                                                      const double *restrict c, size_t n)
{
    const double scalar = 3.0;
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + scalar * c[i];
}

/* One bound thread: three arrays first touched on the probe's CPU (as STREAM does), one pass warms, reps passes. */
struct triad_job {
    uint64_t bytes;
    double *a, *b, *c;
};

static int triad_setup(void *arg, unsigned tid)
{
    (void)tid;
    struct triad_job *j = arg;
    size_t n = j->bytes / sizeof(double);
    j->a = ib_map(j->bytes, 1);
    j->b = ib_map(j->bytes, 1);
    j->c = ib_map(j->bytes, 1);
    if (!j->a || !j->b || !j->c)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        j->a[i] = 1.0;
        j->b[i] = 2.0;
        j->c[i] = 0.5;
    }
    return 0;
}

static int triad_window(void *arg, unsigned tid, int rep, uint64_t ns, double *bps)
{
    (void)tid; /* a window is one pass, whatever its rep and length */
    (void)rep;
    (void)ns;
    struct triad_job *j = arg;
    size_t n = j->bytes / sizeof(double);
    uint64_t t0 = clk_mono_ns();
    ref_triad(j->a, j->b, j->c, n);
    *bps = 24.0 * (double)n / ((double)(clk_mono_ns() - t0) / 1e9);
    return 0;
}

static void triad_teardown(void *arg, unsigned tid)
{
    (void)tid;
    struct triad_job *j = arg;
    ib_unmap(j->a, j->bytes);
    ib_unmap(j->b, j->bytes);
    ib_unmap(j->c, j->bytes);
}

/* One thread of its own on `cpu` (binding it leaves the caller's affinity alone), reps windows of job: the median
 * window, and the lowest (*lo) and highest (*hi) ones (any may be NULL). */
static int probe_one(const struct topo *t, int cpu, unsigned reps, void *job, int (*setup)(void *, unsigned),
                     int (*window)(void *, unsigned, int, uint64_t, double *), void (*teardown)(void *, unsigned),
                     double *median, double *lo, double *hi)
{
    double *tot = calloc(reps, sizeof(double));
    if (!tot)
        return -ENOMEM;
    char why[160];
    struct meas_spec sp = {.what = "probe", .n = 1, .cpus = &cpu, .topo = t, .arg = job, .nmeasure = 1,
                           .warmups = 1, .windows = reps, .setup = setup, .window = window, .teardown = teardown};
    struct meas_out o = {.totals = tot};
    int rc = meas_run(&sp, &o, why, sizeof(why));
    if (rc == 0) {
        if (median)
            *median = o.median;
        if (lo)
            *lo = tot[0];
        if (hi)
            *hi = tot[reps - 1];
    }
    free(tot);
    return rc;
}

int probe_triad(const struct topo *t, int cpu, uint64_t array_bytes, unsigned reps, double *best, double *median)
{
    if (!topo_cpu_exists(t, cpu) || reps == 0)
        return -EINVAL;
    if (!array_bytes) {
        struct topo_cache llc = {0};
        topo_cache_info(t, topo_llc_level(t), false, cpu, &llc);
        array_bytes = 4 * llc.size;
        if (array_bytes < 32 * IB_MIB)
            array_bytes = 32 * IB_MIB;
    }
    struct triad_job j = {.bytes = array_bytes & ~(uint64_t)4095};
    return probe_one(t, cpu, reps, &j, triad_setup, triad_window, triad_teardown, median, NULL, best);
}

/* ---- chase: dependent loads over a random cyclic permutation of cache lines ------------------------------------- */

struct chase_job {
    uint64_t bytes, steps;
    void *buf, *cursor;
};

__attribute__((noinline)) static void *chase_walk(void *p, uint64_t n)
{
    void **q = p;
    for (uint64_t i = 0; i < n; i++)
        q = *q;
    return q;
}

void *probe_chase_build(uint64_t bytes)
{
    size_t lines = bytes / 64;
    if (lines < 2)
        return NULL;
    uint8_t *buf = ib_map(bytes, 0);
    size_t *perm = malloc(lines * sizeof(*perm));
    if (!buf || !perm) {
        free(perm);
        if (buf)
            ib_unmap(buf, bytes);
        return NULL;
    }
    /* Sattolo's shuffle: one cycle through every line, in random order */
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ bytes;
    for (size_t i = 0; i < lines; i++)
        perm[i] = i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t k = (size_t)(ib_rand(&seed) % i);
        size_t tmp = perm[i];
        perm[i] = perm[k];
        perm[k] = tmp;
    }
    for (size_t i = 0; i < lines; i++)
        *(void **)(buf + perm[i] * 64) = buf + perm[(i + 1) % lines] * 64;
    free(perm);
    return buf;
}

uint64_t probe_chase_footprint(uint64_t bytes)
{
    uint64_t perm = bytes / 64 * sizeof(size_t), sum;
    return __builtin_add_overflow(bytes, perm, &sum) ? UINT64_MAX : sum;
}

int probe_check_bytes(const struct mlim *m, const char *probe, uint64_t bytes, char *why, size_t len)
{
    char what[96];
    int triad = !strcmp(probe, "triad");
    snprintf(what, sizeof(what), "%s --bytes %llu maps%s", probe, (unsigned long long)bytes,
             triad ? " (three arrays)" : "");
    return mlim_check(m, triad ? 3 : 1, triad ? bytes : probe_chase_footprint(bytes), what, why, len);
}

double probe_chase_walk_ns(void **cursor, uint64_t loads)
{
    uint64_t c0 = clk_thread_cpu_ns();
    *cursor = chase_walk(*cursor, loads);
    return (double)(clk_thread_cpu_ns() - c0) / (double)loads;
}

static int chase_setup(void *arg, unsigned tid)
{
    (void)tid;
    struct chase_job *j = arg;
    j->cursor = j->buf = probe_chase_build(j->bytes);
    return j->buf ? 0 : -ENOMEM;
}

/* A window is one walk of max(4 x lines, 200000) loads. */
static int chase_window(void *arg, unsigned tid, int rep, uint64_t ns, double *ns_per_load)
{
    (void)tid;
    (void)rep;
    (void)ns;
    struct chase_job *j = arg;
    *ns_per_load = probe_chase_walk_ns(&j->cursor, j->steps);
    return 0;
}

static void chase_teardown(void *arg, unsigned tid)
{
    (void)tid;
    struct chase_job *j = arg;
    if (j->buf)
        ib_unmap(j->buf, j->bytes);
}

int probe_chase(const struct topo *t, int cpu, uint64_t bytes, unsigned reps, double *median_ns, double *best_ns)
{
    if (!topo_cpu_exists(t, cpu) || reps == 0 || bytes < 4096)
        return -EINVAL;
    struct chase_job j = {.bytes = bytes & ~(uint64_t)63};
    j.steps = j.bytes / 64 * 4 < 200000 ? 200000 : j.bytes / 64 * 4;
    return probe_one(t, cpu, reps, &j, chase_setup, chase_window, chase_teardown, median_ns, best_ns, NULL);
}

/* ---- ping-pong: one cache line each way between two CPUs ---------------------------------------------------- */

struct pp_shared {
    _Alignas(64) atomic_uint_fast64_t ping;
    _Alignas(64) atomic_uint_fast64_t pong;
    _Alignas(64) uint64_t seq; /* the initiator's */
};

/* Thread 1, the responder: echoes every new ping until the initiator is done. */
static int pp_serve(void *arg, unsigned tid, const atomic_int *done)
{
    (void)tid;
    struct pp_shared *sh = arg;
    uint64_t last = 0;
    while (!atomic_load_explicit(done, memory_order_relaxed)) {
        uint64_t v = atomic_load_explicit(&sh->ping, memory_order_acquire);
        if (v != last) {
            last = v;
            atomic_store_explicit(&sh->pong, v, memory_order_release);
        } else {
            __builtin_ia32_pause();
        }
    }
    return 0;
}

/* Thread 0, the initiator: a window of >= ns in batches of 256 round trips; its figure is ns per round trip. */
static int pp_window(void *arg, unsigned tid, int rep, uint64_t ns, double *rt_ns)
{
    (void)tid;
    (void)rep;
    struct pp_shared *sh = arg;
    uint64_t n = 0, t0 = clk_mono_ns(), d;
    do {
        for (int k = 0; k < 256; k++) {
            atomic_store_explicit(&sh->ping, ++sh->seq, memory_order_release);
            uint64_t spins = 0;
            while (atomic_load_explicit(&sh->pong, memory_order_acquire) != sh->seq)
                if (++spins > 400000000ull) /* the responder never ran: ~seconds */
                    return -ETIMEDOUT;
            n++;
        }
        d = clk_mono_ns() - t0;
    } while (d < ns);
    *rt_ns = (double)d / (double)n;
    return 0;
}

/* The initiator measures and the responder serves, so the two roles share the helper's start, join and median. */
int probe_pingpong(const struct topo *t, int cpu_a, int cpu_b, unsigned reps, double *median_ns, double *best_ns)
{
    if (!topo_cpu_exists(t, cpu_a) || !topo_cpu_exists(t, cpu_b) || reps == 0)
        return -EINVAL;
    struct pp_shared *sh = ib_map(sizeof(*sh), 0);
    double *ns = calloc(reps, sizeof(double));
    int rc = -ENOMEM;
    if (sh && ns) {
        int cpus[2] = {cpu_a, cpu_b};
        char why[160];
        struct meas_spec sp = {.what = "pingpong", .n = 2, .cpus = cpus, .topo = t, .arg = sh, .nmeasure = 1,
                               .warmups = 1, .warm_ns = 20 * IB_NS_PER_MS, .windows = reps,
                               .window_ns = 20 * IB_NS_PER_MS, .window = pp_window, .serve = pp_serve};
        struct meas_out o = {.totals = ns};
        if ((rc = meas_run(&sp, &o, why, sizeof(why))) == 0) {
            if (median_ns)
                *median_ns = o.median;
            if (best_ns)
                *best_ns = ns[0];
        }
    }
    free(ns);
    if (sh)
        ib_unmap(sh, sizeof(*sh));
    return rc;
}
