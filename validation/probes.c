/* probes.c - reference kernels, independent of the SoIs' own code paths. */
#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ib_atomic.h"

#include "ib_err.h"
#include "clock.h"
#include "kernels.h"
#include "stats.h"

/* STREAM's triad loop, kept apart from the SoIs' kernels so the reference is independent of what it checks. */
__attribute__((optimize("O3"))) static void ref_triad(double *restrict a, const double *restrict b,
                                                      const double *restrict c, size_t n)
{
    const double scalar = 3.0;
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + scalar * c[i];
}

struct triad_job {
    const struct topo *t;
    int cpu;
    uint64_t bytes;
    unsigned reps;
    double best, median;
    int err;
};

static void *triad_thread(void *arg)
{
    struct triad_job *j = arg;
    int rc = topo_bind_thread(j->t, j->cpu);
    if (rc < 0) {
        j->err = rc;
        return NULL;
    }
    size_t n = j->bytes / sizeof(double);
    double *a = ib_map(j->bytes, 1), *b = ib_map(j->bytes, 1), *c = ib_map(j->bytes, 1);
    if (a && b && c) {
        for (size_t i = 0; i < n; i++) { /* first touch on the probe's CPU, as STREAM does */
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.5;
        }
        double *t = calloc(j->reps, sizeof(double));
        if (t) {
            ref_triad(a, b, c, n); /* warm */
            for (unsigned r = 0; r < j->reps; r++) {
                uint64_t t0 = clk_mono_ns();
                ref_triad(a, b, c, n);
                t[r] = 24.0 * (double)n / ((double)(clk_mono_ns() - t0) / 1e9);
            }
            j->median = ib_median(t, j->reps); /* sorts t */
            j->best = t[j->reps - 1];
            free(t);
        } else {
            j->err = -ENOMEM;
        }
    } else {
        j->err = -ENOMEM;
    }
    ib_unmap(a, j->bytes);
    ib_unmap(b, j->bytes);
    ib_unmap(c, j->bytes);
    return NULL;
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
    struct triad_job j = {.t = t, .cpu = cpu, .bytes = array_bytes & ~(uint64_t)4095, .reps = reps};
    pthread_t th; /* a thread of its own, so binding it leaves the caller's affinity alone */
    if (pthread_create(&th, NULL, triad_thread, &j))
        return -EAGAIN;
    pthread_join(th, NULL);
    if (j.err)
        return j.err;
    if (best)
        *best = j.best;
    if (median)
        *median = j.median;
    return 0;
}

/* ---- chase: dependent loads over a random cyclic permutation of cache lines ------------------------------------- */

struct chase_job {
    const struct topo *t;
    int cpu;
    uint64_t bytes;
    unsigned reps;
    double median, best;
    int err;
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

static void *chase_thread(void *arg)
{
    struct chase_job *j = arg;
    int rc = topo_bind_thread(j->t, j->cpu);
    if (rc < 0) {
        j->err = rc;
        return NULL;
    }
    size_t lines = j->bytes / 64;
    void *buf = probe_chase_build(j->bytes);
    double *ns = calloc(j->reps, sizeof(*ns));
    if (!buf || !ns) {
        j->err = -ENOMEM;
        goto out;
    }
    void *p = buf;
    uint64_t steps = lines * 4 < 200000 ? 200000 : lines * 4;
    probe_chase_walk_ns(&p, steps); /* warm */
    for (unsigned r = 0; r < j->reps; r++)
        ns[r] = probe_chase_walk_ns(&p, steps);
    j->median = ib_median(ns, j->reps); /* sorts ns */
    j->best = ns[0];
out:
    free(ns);
    if (buf)
        ib_unmap(buf, j->bytes);
    return NULL;
}

int probe_chase(const struct topo *t, int cpu, uint64_t bytes, unsigned reps, double *median_ns, double *best_ns)
{
    if (!topo_cpu_exists(t, cpu) || reps == 0 || bytes < 4096)
        return -EINVAL;
    struct chase_job j = {.t = t, .cpu = cpu, .bytes = bytes & ~(uint64_t)63, .reps = reps};
    pthread_t th;
    if (pthread_create(&th, NULL, chase_thread, &j))
        return -EAGAIN;
    pthread_join(th, NULL);
    if (j.err)
        return j.err;
    if (median_ns)
        *median_ns = j.median;
    if (best_ns)
        *best_ns = j.best;
    return 0;
}

/* ---- ping-pong: one cache line each way between two CPUs ---------------------------------------------------------- */

struct pp_shared {
    _Alignas(64) atomic_uint_fast64_t ping;
    _Alignas(64) atomic_uint_fast64_t pong;
    _Alignas(64) atomic_int quit;
};

struct pp_job {
    const struct topo *t;
    struct pp_shared *sh;
    int cpu;
    unsigned reps;
    double *ns; /* initiator: per-rep median-free mean round trip */
    int err;
};

static void *pp_responder(void *arg)
{
    struct pp_job *j = arg;
    j->err = topo_bind_thread(j->t, j->cpu);
    uint64_t last = 0;
    while (!atomic_load_explicit(&j->sh->quit, memory_order_relaxed)) {
        uint64_t v = atomic_load_explicit(&j->sh->ping, memory_order_acquire);
        if (v != last) {
            last = v;
            atomic_store_explicit(&j->sh->pong, v, memory_order_release);
        } else {
            __builtin_ia32_pause();
        }
    }
    return NULL;
}

static void *pp_initiator(void *arg)
{
    struct pp_job *j = arg;
    j->err = topo_bind_thread(j->t, j->cpu);
    uint64_t seq = 0;
    for (unsigned r = 0; r < j->reps + 1 && !j->err; r++) { /* rep 0 warms up */
        uint64_t n = 0, t0 = clk_mono_ns(), d;
        do {
            for (int k = 0; k < 256; k++) {
                atomic_store_explicit(&j->sh->ping, ++seq, memory_order_release);
                uint64_t spins = 0;
                while (atomic_load_explicit(&j->sh->pong, memory_order_acquire) != seq)
                    if (++spins > 400000000ull) { /* the responder never ran: ~seconds */
                        j->err = -ETIMEDOUT;
                        goto done;
                    }
                n++;
            }
            d = clk_mono_ns() - t0;
        } while (d < 20 * IB_NS_PER_MS);
        if (r)
            j->ns[r - 1] = (double)d / (double)n;
    }
done:
    atomic_store(&j->sh->quit, 1);
    return NULL;
}

int probe_pingpong(const struct topo *t, int cpu_a, int cpu_b, unsigned reps, double *median_ns, double *best_ns)
{
    if (!topo_cpu_exists(t, cpu_a) || !topo_cpu_exists(t, cpu_b) || reps == 0)
        return -EINVAL;
    struct pp_shared *sh = ib_map(sizeof(*sh), 0);
    double *ns = calloc(reps, sizeof(double));
    int rc = 0;
    if (!sh || !ns) {
        rc = -ENOMEM;
        goto out;
    }
    struct pp_job a = {.t = t, .sh = sh, .cpu = cpu_a, .reps = reps, .ns = ns};
    struct pp_job b = {.t = t, .sh = sh, .cpu = cpu_b};
    pthread_t ta, tb;
    if (pthread_create(&tb, NULL, pp_responder, &b)) {
        rc = -EAGAIN;
        goto out;
    }
    if (pthread_create(&ta, NULL, pp_initiator, &a)) {
        atomic_store(&sh->quit, 1);
        pthread_join(tb, NULL);
        rc = -EAGAIN;
        goto out;
    }
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    rc = a.err ? a.err : b.err;
    if (rc == 0) {
        double med = ib_median(ns, reps); /* sorts ns */
        if (median_ns)
            *median_ns = med;
        if (best_ns)
            *best_ns = ns[0];
    }
out:
    free(ns);
    if (sh)
        ib_unmap(sh, sizeof(*sh));
    return rc;
}
