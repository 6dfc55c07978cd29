/* soikit.c - shared pieces of the memory-hierarchy SoIs (see soikit.h). */
#define _GNU_SOURCE
#include "soikit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "clock.h"
#include "ib_err.h"
#include "parse.h"

int kit_shares(const struct topo *t, enum topo_scope scope, const int *cpus, unsigned n, double *share,
               unsigned *ndomains)
{
    int *first = calloc(n, sizeof(int)); /* smallest PU of each thread's domain identifies the domain */
    if (!first)
        return -ENOMEM;
    for (unsigned i = 0; i < n; i++) {
        int *set;
        unsigned k;
        int rc = topo_sharing(t, scope, cpus[i], &set, &k);
        if (rc < 0) {
            free(first);
            return rc;
        }
        first[i] = k ? set[0] : cpus[i];
        free(set);
    }
    unsigned nd = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned same = 0, seen_before = 0;
        for (unsigned j = 0; j < n; j++) {
            if (first[j] == first[i]) {
                same++;
                if (j < i)
                    seen_before = 1;
            }
        }
        share[i] = 1.0 / same;
        nd += !seen_before;
    }
    free(first);
    if (ndomains)
        *ndomains = nd;
    return 0;
}

void *kit_map_local(const struct topo *t, int cpu, size_t bytes, int hugepages)
{
    void *p = ib_map(bytes, hugepages);
    if (!p || !topo_is_this_machine(t) || topo_nnuma(t) < 2)
        return p;
    int *node;
    unsigned k;
    if (topo_sharing(t, TOPO_SCOPE_NUMA, cpu, &node, &k) == 0) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        for (unsigned i = 0; i < k; i++)
            hwloc_bitmap_set(set, (unsigned)node[i]);
        /* best effort: binding can be refused (cpuset cgroups); first touch still places pages sensibly */
        hwloc_set_area_membind(topo_hwloc(t), p, bytes, set, HWLOC_MEMBIND_BIND, 0);
        hwloc_bitmap_free(set);
        free(node);
    }
    return p;
}

/* ---- fpset ---------------------------------------------------------------------------------------------- */

#define FP_QUANTUM_NS 100000.0 /* aim for ~100 us per step() */

static void fpset_free(struct fpset *f);

static int fpset_init(struct fpset *f, const struct topo *topo, const int *cpus, unsigned n, const size_t *max_slots,
               size_t stride, size_t skew, unsigned nchains, int hugepages, size_t sweep_bytes)
{
    memset(f, 0, sizeof(*f));
    f->t = calloc(n, sizeof(*f->t));
    if (!f->t)
        return -ENOMEM;
    f->n = n;
    f->stride = stride;
    f->skew = skew;
    f->nchains = nchains;
    for (unsigned i = 0; i < n; i++) {
        struct fpthread *th = &f->t[i];
        th->max_slots = max_slots[i] ? max_slots[i] : 1;
        th->buf_bytes = th->max_slots * stride;
        th->buf = kit_map_local(topo, cpus[i], th->buf_bytes, hugepages);
        th->seed = 0x1234567ULL * (i + 1);
        th->quantum = 256;
        if (!th->buf) {
            fpset_free(f);
            return -ENOMEM;
        }
        memset(th->buf, 0, th->buf_bytes);
        if (sweep_bytes) {
            th->sweep_bytes = (sweep_bytes + 255) & ~(size_t)255;
            th->sweep = kit_map_local(topo, cpus[i], th->sweep_bytes, 1);
            if (!th->sweep) {
                fpset_free(f);
                return -ENOMEM;
            }
            memset(th->sweep, 0, th->sweep_bytes);
        }
    }
    return 0;
}

/* Rebuild thread i's chase over nslots (0: idle). */
static int fpset_resize(struct fpset *f, unsigned i, size_t nslots)
{
    struct fpthread *th = &f->t[i];
    if (nslots > th->max_slots)
        nslots = th->max_slots;
    th->nslots = nslots;
    th->steps_done = 0;
    if (nslots == 0)
        return 0;
    unsigned chains = f->nchains < nslots ? f->nchains : (unsigned)nslots;
    return chase_build(&th->ch, th->buf, nslots, f->stride, f->skew, chains, th->seed++);
}

/* One quantum on thread i; returns the number of accesses made. */
static uint64_t fpset_step(struct fpset *f, unsigned i)
{
    struct fpthread *th = &f->t[i];
    if (th->nslots == 0)
        return 0;
    uint64_t q = th->quantum, t0 = clk_mono_ns();
    if (th->sweep) { /* at most one pass of the footprint per quantum, so every reuse is preceded by a sweep */
        uint64_t pass = (th->nslots + th->ch.nchains - 1) / th->ch.nchains;
        if (q > pass)
            q = pass;
    }
    chase_run(&th->ch, q);
    uint64_t t1 = clk_mono_ns();
    th->chase_ns += t1 - t0;
    if (th->sweep) {
        /* Stream sweep bytes in proportion: one inner-cache size per footprint's worth of chase accesses, so a
         * chase line is always evicted from the inner cache before the chase comes back to it. */
        double frac = (double)(q * th->ch.nchains) / (double)th->nslots;
        size_t len = ((size_t)(frac * (double)th->sweep_bytes) + 255) & ~(size_t)255;
        while (len) {
            size_t run = th->sweep_bytes - th->sweep_pos < len ? th->sweep_bytes - th->sweep_pos : len;
            stream_pass((char *)th->sweep + th->sweep_pos, run, STREAM_READ);
            th->sweep_pos = (th->sweep_pos + run) % th->sweep_bytes;
            len -= run;
        }
    }
    double dt = (double)(clk_mono_ns() - t0);
    th->steps_done += q;
    /* adapt the quantum toward ~100 us, by at most 2x per call (one preempted quantum must not blow it up) */
    double ratio = dt > 0 ? FP_QUANTUM_NS / dt : 2.0;
    ratio = ratio > 2.0 ? 2.0 : ratio < 0.5 ? 0.5 : ratio;
    uint64_t nq = (uint64_t)((double)q * ratio);
    th->quantum = nq < 16 ? 16 : nq > (1u << 24) ? (1u << 24) : nq;
    return q * th->ch.nchains;
}

/* Distinct slots touched by thread i since the last reset (each chain covers its own segment of the cycle). */
static uint64_t fpset_covered(const struct fpset *f, unsigned i)
{
    const struct fpthread *th = &f->t[i];
    if (th->nslots == 0)
        return 0;
    /* chain k walks its own segment of the cycle: segment lengths differ by at most one */
    uint64_t covered = 0, n = th->nslots, c = th->ch.nchains;
    for (uint64_t k = 0; k < c; k++) {
        uint64_t seg = (k + 1) * n / c - k * n / c;
        covered += th->steps_done < seg ? th->steps_done : seg;
    }
    return covered;
}

/* Mean ns per dependent load on thread i since the last reset (chase time / steps per chain); 0 if none. */
static double fpset_load_ns(const struct fpset *f, unsigned i)
{
    const struct fpthread *th = &f->t[i];
    return th->steps_done ? (double)th->chase_ns / (double)th->steps_done : 0;
}

static void fpset_reset_meter(struct fpset *f)
{
    for (unsigned i = 0; i < f->n; i++)
        f->t[i].steps_done = f->t[i].chase_ns = 0;
}

static void fpset_free(struct fpset *f)
{
    if (!f->t)
        return;
    for (unsigned i = 0; i < f->n; i++) {
        ib_unmap(f->t[i].buf, f->t[i].buf_bytes);
        ib_unmap(f->t[i].sweep, f->t[i].sweep_bytes);
    }
    free(f->t);
    f->t = NULL;
    f->n = 0;
}

/* ---- strset --------------------------------------------------------------------------------------------- */

static void strset_free(struct strset *s);

static int strset_init(struct strset *s, const struct topo *topo, const int *cpus, unsigned n, size_t ws, size_t chunk,
                enum stream_op op)
{
    memset(s, 0, sizeof(*s));
    ws &= ~(size_t)4095;
    if (ws < 4096 || chunk < 4096)
        return -EINVAL;
    s->t = calloc(n, sizeof(*s->t));
    if (!s->t)
        return -ENOMEM;
    s->n = n;
    s->op = op;
    for (unsigned i = 0; i < n; i++) {
        s->t[i].ws = ws;
        s->t[i].chunk = chunk;
        s->t[i].buf = kit_map_local(topo, cpus[i], ws, 1);
        if (!s->t[i].buf) {
            strset_free(s);
            return -ENOMEM;
        }
        memset(s->t[i].buf, 1, ws);
    }
    return 0;
}

/* Stream one chunk on thread i; returns bytes moved. */
static uint64_t strset_step(struct strset *s, unsigned i)
{
    struct strthread *t = &s->t[i];
    return stream_step(t->buf, t->ws, &t->pos, t->chunk, s->op);
}

static void strset_free(struct strset *s)
{
    if (!s->t)
        return;
    for (unsigned i = 0; i < s->n; i++)
        ib_unmap(s->t[i].buf, s->t[i].ws);
    free(s->t);
    s->t = NULL;
    s->n = 0;
}

const char *kit_rate_units(struct soi *s, const char *unit, double old, char *buf, size_t len)
{
    char r[32];
    snprintf(s->unit, sizeof(s->unit), "%s", unit);
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "%s", unit);
    if (old > 0 && !s->env->cached_capacity)
        snprintf(buf, len, "; cached %s", fmt_rate(old, unit, r, sizeof(r)));
    else if (len)
        *buf = 0;
    return buf;
}

/* The shared prepare of the three streaming SoIs: measure (or look up) the bandwidth of `kind` ("l2", "llc",
 * "dram") on env->cpus, size buffers, and fill s->capacity/unit/capacity_src. */
static int kit_stream_prepare(struct soi *s, struct strset *set, const char *kind, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    double bps, cached = 0;
    int rc;
    /* Peak rates drift on a shared host, by tens of % within minutes (docs/capacities.md), so unless told
     * to trust the cache, measure the peak now, on these CPUs, with this kernel: 100 % then means 100 % of now. */
    const struct calib_bw *e = calib_bw_find(env->calib, kind, env->cpus, env->nthreads);
    if (e)
        cached = e->bps;
    if (env->cached_capacity)
        rc = calib_need_bw(env->calib, env->topo, env->mlim, kind, env->cpus, env->nthreads, env->stop, &bps, why,
                           len);
    else if ((rc = calib_need_caches(env->calib, env->topo, env->cpus[0], env->stop, why, len)) == 0)
        rc = calib_measure_bw(env->calib, env->topo, env->mlim, kind, env->cpus, env->nthreads, env->stop, &bps,
                              why, len);
    if (rc < 0)
        return rc;
    size_t ws = calib_bw_ws(env->calib, env->topo, env->mlim, kind, env->nthreads);
    rc = strset_init(set, env->topo, env->cpus, env->nthreads, ws, calib_bw_chunk(kind), calib_bw_op(kind));
    if (rc < 0)
        return ib_why(why, len, rc, "cannot map %zu bytes per thread for %s streaming", ws, kind);
    s->capacity = bps;
    uint64_t l2 = calib_effective(env->calib, CALIB_L2);
    if (!strcmp(kind, "llc") && l2 && ws < l2 + l2 / 2) {
        char b[32], c[32];
        snprintf(s->note, sizeof(s->note),
                 "the LLC is too small to give %u thread(s) %s each (1.5x the L2, %s): part of this traffic hits L2",
                 env->nthreads, fmt_bytes((double)(l2 + l2 / 2), b, sizeof(b)), fmt_bytes((double)l2, c, sizeof(c)));
    }
    char b1[32], b2[48];
    kit_rate_units(s, "B/s", cached, b2, sizeof(b2));
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s %s %s bandwidth on %u CPU(s), %s/thread, %s%s",
             env->cached_capacity ? "cached" : "measured now:", kind,
             calib_bw_op(kind) == STREAM_TRIAD ? "triad" : "read", env->nthreads,
             fmt_bytes((double)ws, b1, sizeof(b1)), stream_isa(), b2);
    return 0;
}

/* ---- ready-made callbacks ------------------------------------------------------------------------------- */

int kit_fp_prepare(struct soi *s, enum topo_scope scope, double slots_per_domain, double slot_units,
                   const char *unit, size_t stride, size_t skew, unsigned nchains, int hugepages, size_t sweep_bytes,
                   char *why, size_t len)
{
    const struct soi_env *env = s->env;
    if (!(slots_per_domain >= 1))
        return ib_why(why, len, -EINVAL, "%s: nothing to size against", s->ops->name);
    struct kit_fp *k = calloc(1, sizeof(*k));
    if (!k)
        return -ENOMEM;
    int rc = kit_shares(env->topo, scope, env->cpus, env->nthreads, k->share, &k->ndomains);
    size_t max_slots[SOI_MAX_THREADS];
    for (unsigned i = 0; rc == 0 && i < env->nthreads; i++)
        max_slots[i] = (size_t)(slots_per_domain * k->share[i] + 0.5);
    if (rc == 0)
        rc = fpset_init(&k->set, env->topo, env->cpus, env->nthreads, max_slots, stride, skew, nchains, hugepages,
                        sweep_bytes);
    if (rc < 0) {
        free(k);
        return ib_why(why, len, rc, "%s: cannot set up its buffers: %s", s->ops->name, strerror(-rc));
    }
    k->slots_per_domain = slots_per_domain;
    k->slot_units = slot_units;
    s->priv = k;
    s->capacity = slots_per_domain * slot_units * k->ndomains;
    snprintf(s->unit, sizeof(s->unit), "%s", unit);
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "acc/s");
    return 0;
}

int kit_cache_prepare(struct soi *s, int level, enum topo_scope scope, int sweep_level, unsigned nchains, char *why,
                      size_t len)
{
    const struct soi_env *env = s->env;
    int rc = calib_need_caches(env->calib, env->topo, env->cpus[0], env->stop, why, len);
    if (rc < 0)
        return rc;
    enum calib_level l = (enum calib_level)level;
    uint64_t eff = calib_effective(env->calib, l);
    if (!eff)
        return ib_why(why, len, -ENOTSUP, "no %s size from hwloc or measurement", calib_level_name(l));
    uint64_t sweep = sweep_level >= 0 ? calib_effective(env->calib, (enum calib_level)sweep_level) : 0;
    rc = kit_fp_prepare(s, scope, (double)(eff / 64), 64, "B", 64, 0, nchains, 1, sweep, why, len);
    if (rc < 0)
        return rc;
    char a[32], b[32], c[48] = "";
    uint64_t measured = env->calib->measured[l], claimed = env->calib->claimed[l];
    if (sweep)
        snprintf(c, sizeof(c), "; sweeps %s of %s", fmt_bytes((double)sweep, b, sizeof(b)),
                 calib_level_name((enum calib_level)sweep_level));
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s %s %s%s (hwloc claims %s)%s",
             !measured ? "claimed" : measured > claimed ? "claimed (knee above it)" : "measured",
             calib_level_name(l), fmt_bytes((double)eff, a, sizeof(a)),
             measured && measured <= claimed ? " at the latency knee" : "",
             fmt_bytes((double)claimed, b, sizeof(b)), c);
    return 0;
}

int kit_fp_set_intensity(struct soi *s, double x, char *why, size_t len)
{
    struct kit_fp *k = s->priv;
    for (unsigned i = 0; i < k->set.n; i++) {
        size_t want = (size_t)(k->slots_per_domain * k->share[i] * x / 100.0 + 0.5);
        if (want != k->set.t[i].nslots) {
            int rc = fpset_resize(&k->set, i, want);
            if (rc < 0)
                return ib_why(why, len, rc, "%s: cannot build the chase: %s", s->ops->name, strerror(-rc));
        }
    }
    fpset_reset_meter(&k->set);
    return 0;
}

int kit_fp_step(struct soi *s, unsigned tid, uint64_t *units)
{
    *units = fpset_step(&((struct kit_fp *)s->priv)->set, tid);
    return 0;
}

int kit_fp_measure(struct soi *s, struct soi_meter *m)
{
    struct kit_fp *k = s->priv;
    uint64_t covered = 0;
    double lat = 0;
    unsigned nlat = 0;
    for (unsigned i = 0; i < k->set.n; i++) {
        covered += fpset_covered(&k->set, i);
        double l = fpset_load_ns(&k->set, i);
        if (l > 0) {
            lat += l;
            nlat++;
        }
    }
    /* Distinct lines/pages actually touched during the step: counted from the chase's progress over a cycle whose
     * slots are distinct by construction (a starved or stalled SoI shows less). Where those lines live is shown by
     * the latency of its own dependent loads, to read against the calibrated plateaus (ibench topo). */
    m->achieved = (double)covered * k->slot_units;
    m->load_ns = nlat ? lat / nlat : 0;
    fpset_reset_meter(&k->set);
    return 0;
}

void kit_fp_teardown(struct soi *s)
{
    struct kit_fp *k = s->priv;
    if (!k)
        return;
    fpset_free(&k->set);
    free(k);
    s->priv = NULL;
}

int kit_stream_open(struct soi *s, const char *kind, char *why, size_t len)
{
    struct strset *set = calloc(1, sizeof(*set));
    if (!set)
        return -ENOMEM;
    int rc = kit_stream_prepare(s, set, kind, why, len);
    if (rc < 0) {
        free(set);
        return rc;
    }
    s->priv = set;
    return 0;
}

int kit_stream_step(struct soi *s, unsigned tid, uint64_t *units)
{
    *units = strset_step(s->priv, tid);
    return 0;
}

void kit_stream_teardown(struct soi *s)
{
    if (!s->priv)
        return;
    strset_free(s->priv);
    free(s->priv);
    s->priv = NULL;
}
