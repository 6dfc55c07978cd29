/* probes.c - reference kernels, independent of the SoIs' own code paths. */
#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "ib_err.h"
#include "kernels.h"

struct triad_job {
    const struct topo *t;
    int cpu;
    uint64_t bytes;
    unsigned reps;
    double bps;
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
        j->bps = stream_triad_bps(a, b, c, n, j->reps);
    } else {
        j->err = -ENOMEM;
    }
    ib_unmap(a, j->bytes);
    ib_unmap(b, j->bytes);
    ib_unmap(c, j->bytes);
    return NULL;
}

int probe_triad(const struct topo *t, int cpu, uint64_t array_bytes, unsigned reps, double *bps)
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
    *bps = j.bps;
    return 0;
}
