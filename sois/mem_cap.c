/* mem_cap.c - SoI1, memory capacity: a resident, randomly touched footprint = x % of the memory this SoI may use.
 *
 * What it may use is min(MemAvailable, cgroup limit - usage, --max-bytes) minus a safety margin (memlimit.h);
 * asking for more than that is refused.  Growing writes every page (OpenMP-parallel); shrinking hands pages back
 * with MADV_DONTNEED.  Before growing it re-reads /proc/meminfo and the cgroup and never grows past what the
 * machine can spare *now*.  Workers keep the footprint hot with random line touches at a bounded rate, so the SoI
 * presses capacity rather than bandwidth.  Self-meter: resident bytes, counted with mincore().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ib_err.h"
#include "kernels.h"
#include "memlimit.h"
#include "parse.h"
#include "soi_opts.h"
#include "soi.h"

#define PAGE 4096ULL
#define GROW_CHUNK (2ULL * 1024 * 1024)

static const struct soi_opt mem_cap_opts[] = {
    {SOI_OPT("max-bytes", SOI_O_SIZE, struct mem_cap_opts, max_bytes, 0, 1ULL << 50, 0,
     "footprint at 100 % (0: all the machine can spare, less the margin)")},
    {SOI_OPT("touch-rate", SOI_O_DOUBLE, struct mem_cap_opts, touch_rate, 0, 1e10, 4e6,
     "random line touches per second, all threads (0: unlimited)")},
    {0},
};

struct mem_cap {
    char *region;
    uint64_t cap;      /* bytes at 100 % */
    uint64_t cur;      /* bytes currently populated */
    unsigned char *vec;
    uint64_t seeds[SOI_MAX_THREADS * 8]; /* one PRNG per worker, 64 bytes apart */
};

static int mem_cap_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    const struct mem_cap_opts *o = soi_opts(env);
    uint64_t want = o->max_bytes;
    char a[32], b[32], c[32];
    int rc = mlim_check(env->mlim, 1, want, "mem-cap: max-bytes", why, len);
    if (rc < 0)
        return rc;
    uint64_t cap = mlim_cap(env->mlim, want) & ~(PAGE - 1);
    if (cap < 16 * PAGE)
        return ib_why(why, len, -ENOMEM, "mem-cap: the machine has no memory to spare beyond its safety margin");
    struct mem_cap *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    m->cap = cap;
    m->region = ib_map(cap, 1);
    m->vec = malloc(cap / PAGE);
    if (!m->region || !m->vec) {
        ib_unmap(m->region, cap);
        free(m->vec);
        free(m);
        return ib_why(why, len, -ENOMEM, "mem-cap: cannot reserve %s of address space", fmt_bytes((double)cap, a, sizeof(a)));
    }
    for (unsigned i = 0; i < SOI_MAX_THREADS; i++)
        m->seeds[i * 8] = 0x9E3779B97F4A7C15ULL * (i + 1);
    s->priv = m;
    s->capacity = (double)cap;
    s->rate_cap = o->touch_rate;
    snprintf(s->unit, sizeof(s->unit), "B");
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "touch/s");
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s %s (MemAvailable %s, margin %s%s)",
             want ? "max-bytes" : "spare memory", fmt_bytes((double)cap, a, sizeof(a)),
             fmt_bytes((double)env->mlim->mem_available, b, sizeof(b)),
             fmt_bytes((double)mlim_margin(env->mlim), c, sizeof(c)),
             env->mlim->cg_limit != MLIM_UNLIMITED ? ", cgroup-limited" : "");
    return 0;
}

static int mem_cap_set_intensity(struct soi *s, double x, char *why, size_t len)
{
    struct mem_cap *m = s->priv;
    uint64_t target = (uint64_t)((double)m->cap * x / 100.0) & ~(PAGE - 1);
    if (target > m->cur) {
        /* Safety: only grow by what the machine can spare right now (others may have taken memory since). */
        struct mlim now;
        if (mlim_read(&now, "") == 0 && s->env->mlim->mem_total == now.mem_total) {
            uint64_t room = mlim_spare(&now) & ~(PAGE - 1);
            if (target - m->cur > room) {
                char a[32];
                target = m->cur + room;
                snprintf(s->note, sizeof(s->note), "footprint clamped: only %s could be spared when growing",
                         fmt_bytes((double)room, a, sizeof(a)));
            }
        }
        uint64_t from = m->cur, nchunks = (target - from + GROW_CHUNK - 1) / GROW_CHUNK;
        const atomic_int *stop = s->env->stop;
        int nth = (int)s->env->nthreads;
        char *region = m->region;
#pragma omp parallel for num_threads(nth) schedule(dynamic, 4)
        for (uint64_t k = 0; k < nchunks; k++) {
            if (stop && atomic_load(stop))
                continue;
            uint64_t lo = from + k * GROW_CHUNK, hi = lo + GROW_CHUNK > target ? target : lo + GROW_CHUNK;
            for (uint64_t p = lo; p < hi; p += PAGE)
                region[p] = (char)1;
        }
        if (stop && atomic_load(stop)) {
            m->cur = target; /* some chunks were written: shrinking and teardown must cover them */
            return ib_why(why, len, -EINTR, "interrupted while growing");
        }
    } else if (target < m->cur) {
        if (madvise(m->region + target, m->cur - target, MADV_DONTNEED) < 0)
            return ib_why(why, len, -errno, "mem-cap: madvise: %s", strerror(errno));
    }
    m->cur = target;
    return 0;
}

static int mem_cap_step(struct soi *s, unsigned tid, uint64_t *units)
{
    struct mem_cap *m = s->priv;
    uint64_t lines = m->cur / 64, *seed = &m->seeds[tid * 8];
    if (!lines) {
        *units = 0;
        return 0;
    }
    volatile char *r = m->region;
    for (int i = 0; i < 256; i++)
        (void)r[(ib_rand(seed) % lines) * 64]; /* a read keeps the page resident and hot */
    *units = 256;
    return 0;
}

static int mem_cap_measure(struct soi *s, struct soi_meter *mt)
{
    struct mem_cap *m = s->priv;
    if (mincore(m->region, m->cap, m->vec) < 0)
        return -errno;
    uint64_t resident = 0;
    for (uint64_t i = 0; i < m->cap / PAGE; i++)
        resident += m->vec[i] & 1;
    mt->achieved = (double)(resident * PAGE);
    return 0;
}

static void mem_cap_teardown(struct soi *s)
{
    struct mem_cap *m = s->priv;
    if (!m)
        return;
    ib_unmap(m->region, m->cap);
    free(m->vec);
    free(m);
    s->priv = NULL;
}

const struct soi_ops soi_mem_cap = {
    .version = SOI_OPS_VERSION,
    .name = "mem-cap",
    .resource = "memory capacity",
    .summary = "holds x % of the memory it may use resident, touched at random",
    .paper = "SoI1",
    .scope = TOPO_SCOPE_NUMA,
    .kind = SOI_FOOTPRINT,
    .opts = mem_cap_opts,
    .opts_size = sizeof(struct mem_cap_opts),
    .prepare = mem_cap_prepare,
    .set_intensity = mem_cap_set_intensity,
    .step = mem_cap_step,
    .measure = mem_cap_measure,
    .teardown = mem_cap_teardown,
    .occupancy = SOI_OCC_RSS,
};
