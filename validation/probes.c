/* probes.c - reference kernels, independent of the SoIs' own code paths. */
#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "ib_err.h"
#include "clock.h"
#include "kernels.h"

/* STREAM's triad loop, kept apart from the SoIs' kernels so the reference is independent of what it checks. */
__attribute__((optimize("O3"))) static void ref_triad(double *restrict a, const double *restrict b,
                                                      const double *restrict c, size_t n)
{
    const double scalar = 3.0;
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + scalar * c[i];
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
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
            qsort(t, j->reps, sizeof(double), cmp_d);
            j->best = t[j->reps - 1];
            j->median = t[j->reps / 2];
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
