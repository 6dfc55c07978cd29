/* calib.c - measured capacities: cache knees from a latency sweep, streaming bandwidth per level, JSON cache. */
#define _GNU_SOURCE
#include "calib.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "ib_err.h"
#include "kernels.h"
#include "output.h"
#include "stats.h"

const char *calib_level_name(enum calib_level l)
{
    static const char *const names[] = {"l1d", "l2", "llc"};
    return l < CALIB_NLEVELS ? names[l] : "?";
}

/* ---- fingerprint and file ------------------------------------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

int calib_fingerprint(const struct topo *t, const struct cpu_info *ci, const struct mlim *m, char *out,
                      size_t len)
{
    char desc[512];
    struct topo_cache c1 = {0}, c2 = {0}, c3 = {0};
    topo_cache_info(t, 1, false, -1, &c1);
    topo_cache_info(t, 2, false, -1, &c2);
    topo_cache_info(t, topo_llc_level(t), false, -1, &c3);
    snprintf(desc, sizeof(desc), "%s|%s|%u.%u.%u|pus=%u|cores=%u|l1=%llu|l2=%llu|llc=%llu|mem=%llu|f=%d",
             ci->vendor, ci->model, ci->family, ci->model_id, ci->stepping, topo_npus(t), topo_ncores(t),
             (unsigned long long)c1.size, (unsigned long long)c2.size, (unsigned long long)c3.size,
             (unsigned long long)(m->mem_total >> 30), CALIB_FORMAT);
    int n = snprintf(out, len, "%s-%02x-%02x-%ucpu-%016llx", !strncmp(ci->vendor, "Authentic", 9) ? "amd"
                                                             : !strncmp(ci->vendor, "Genuine", 7) ? "intel"
                                                                                                   : "cpu",
                     ci->family, ci->model_id, topo_npus(t), (unsigned long long)fnv1a(desc));
    return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

const char *calib_dir(char *buf, size_t len)
{
    const char *d = getenv("IBENCH_CACHE_DIR");
    if (d && *d)
        snprintf(buf, len, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && *d)
        snprintf(buf, len, "%s/ibench", d);
    else if ((d = getenv("HOME")) && *d)
        snprintf(buf, len, "%s/.cache/ibench", d);
    else
        snprintf(buf, len, "/tmp/ibench-cache-%u", (unsigned)getuid());
    return buf;
}

static int mkdir_p(const char *path)
{
    char tmp[1024];
    if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

void calib_reset(struct calib *c)
{
    char fp[sizeof(c->fingerprint)], path[sizeof(c->path)];
    memcpy(fp, c->fingerprint, sizeof(fp));
    memcpy(path, c->path, sizeof(path));
    memset(c, 0, sizeof(*c));
    memcpy(c->fingerprint, fp, sizeof(fp));
    memcpy(c->path, path, sizeof(path));
}

static uint64_t jget_u64(json_t *o, const char *k) { return (uint64_t)json_number_value(json_object_get(o, k)); }

static void load_doc(struct calib *c, json_t *doc)
{
    json_t *caches = json_object_get(doc, "caches");
    if (json_is_object(caches)) {
        json_t *cl = json_object_get(caches, "claimed"), *me = json_object_get(caches, "measured");
        json_t *pl = json_object_get(caches, "plateau_ns"), *sw = json_object_get(caches, "sweep");
        c->sweep_cpu = (int)json_integer_value(json_object_get(caches, "cpu"));
        c->caches_when = json_integer_value(json_object_get(caches, "when"));
        for (int l = 0; l < CALIB_NLEVELS; l++) {
            c->claimed[l] = jget_u64(cl, calib_level_name(l));
            c->measured[l] = jget_u64(me, calib_level_name(l));
            c->plateau_ns[l] = json_number_value(json_object_get(pl, calib_level_name(l)));
        }
        c->plateau_ns[CALIB_NLEVELS] = json_number_value(json_object_get(pl, "dram"));
        size_t i;
        json_t *pt;
        json_array_foreach(sw, i, pt)
        {
            if (c->nsweep >= CALIB_MAX_SWEEP)
                break;
            c->sweep[c->nsweep].bytes = (uint64_t)json_number_value(json_array_get(pt, 0));
            c->sweep[c->nsweep].ns = json_number_value(json_array_get(pt, 1));
            c->nsweep++;
        }
        c->have_caches = c->nsweep > 0;
    }
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(doc, "bandwidth"), i, b)
    {
        if (c->nbw >= CALIB_MAX_BW)
            break;
        struct calib_bw *e = &c->bw[c->nbw];
        const char *kind = json_string_value(json_object_get(b, "kind"));
        const char *cpus = json_string_value(json_object_get(b, "cpus"));
        if (!kind || !cpus)
            continue;
        snprintf(e->kind, sizeof(e->kind), "%s", kind);
        snprintf(e->cpus, sizeof(e->cpus), "%s", cpus);
        e->ws_bytes = jget_u64(b, "ws_bytes");
        e->bps = json_number_value(json_object_get(b, "bps"));
        e->spread = json_number_value(json_object_get(b, "spread"));
        e->when = json_integer_value(json_object_get(b, "when"));
        if (e->bps > 0)
            c->nbw++;
    }
}

int calib_open(struct calib *c, const char *fp, char *why, size_t len)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->fingerprint, sizeof(c->fingerprint), "%s", fp);
    char dir[900];
    if (snprintf(c->path, sizeof(c->path), "%s/calib-%s.json", calib_dir(dir, sizeof(dir)), fp) >=
        (int)sizeof(c->path))
        return ib_why(why, len, -ENAMETOOLONG, "calibration cache path too long");
    json_error_t jerr;
    json_t *doc = json_load_file(c->path, 0, &jerr);
    if (!doc)
        return 0; /* absent or unreadable: start empty, measure on demand */
    if (json_integer_value(json_object_get(doc, "format")) == CALIB_FORMAT &&
        !strcmp(json_string_value(json_object_get(doc, "fingerprint")) ?: "", fp))
        load_doc(c, doc);
    json_decref(doc);
    return 0;
}

int calib_save(const struct calib *c, char *why, size_t len)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", c->path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
        int rc = mkdir_p(dir);
        if (rc < 0)
            return ib_why(why, len, rc, "cannot create %s: %s", dir, strerror(-rc));
    }
    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_integer(CALIB_FORMAT));
    json_object_set_new(doc, "fingerprint", json_string(c->fingerprint));
    json_object_set_new(doc, "tool", json_string("ibench " IBENCH_VERSION));
    if (c->have_caches) {
        json_t *caches = json_object(), *cl = json_object(), *me = json_object(), *pl = json_object();
        json_t *sw = json_array();
        for (int l = 0; l < CALIB_NLEVELS; l++) {
            json_object_set_new(cl, calib_level_name(l), json_integer((json_int_t)c->claimed[l]));
            json_object_set_new(me, calib_level_name(l), json_integer((json_int_t)c->measured[l]));
            json_object_set_new(pl, calib_level_name(l), json_real(c->plateau_ns[l]));
        }
        json_object_set_new(pl, "dram", json_real(c->plateau_ns[CALIB_NLEVELS]));
        for (unsigned i = 0; i < c->nsweep; i++)
            json_array_append_new(sw, json_pack("[I,f]", (json_int_t)c->sweep[i].bytes, c->sweep[i].ns));
        json_object_set_new(caches, "cpu", json_integer(c->sweep_cpu));
        json_object_set_new(caches, "when", json_integer(c->caches_when));
        json_object_set_new(caches, "claimed", cl);
        json_object_set_new(caches, "measured", me);
        json_object_set_new(caches, "plateau_ns", pl);
        json_object_set_new(caches, "sweep", sw);
        json_object_set_new(doc, "caches", caches);
    }
    json_t *bw = json_array();
    for (unsigned i = 0; i < c->nbw; i++)
        json_array_append_new(bw, json_pack("{s:s,s:s,s:I,s:f,s:f,s:I}", "kind", c->bw[i].kind, "cpus",
                                            c->bw[i].cpus, "ws_bytes", (json_int_t)c->bw[i].ws_bytes, "bps",
                                            c->bw[i].bps, "spread", c->bw[i].spread, "when",
                                            (json_int_t)c->bw[i].when));
    json_object_set_new(doc, "bandwidth", bw);
    int rc = out_json_file_atomic(c->path, doc);
    json_decref(doc);
    if (rc < 0)
        return ib_why(why, len, rc, "cannot write %s: %s", c->path, strerror(-rc));
    return 0;
}

/* ---- knees ---------------------------------------------------------------------------------------------- */

/* Median latency of the points with bytes in [lo, hi]; 0 when there are none. */
static double median_in(const struct calib_point *p, unsigned n, uint64_t lo, uint64_t hi)
{
    double v[CALIB_MAX_SWEEP];
    unsigned k = 0;
    for (unsigned i = 0; i < n && k < CALIB_MAX_SWEEP; i++)
        if (p[i].bytes >= lo && p[i].bytes <= hi)
            v[k++] = p[i].ns;
    if (!k)
        return 0;
    qsort(v, k, sizeof(double), ib_cmp_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

int calib_find_knee(const struct calib_point *pts, unsigned n, uint64_t lo_bytes, uint64_t hi_bytes,
                    uint64_t *knee, double *lo_ns, double *hi_ns)
{
    if (!pts || n < 3 || lo_bytes == 0 || hi_bytes <= lo_bytes)
        return -EINVAL;
    double lo = median_in(pts, n, lo_bytes / 2, lo_bytes);
    double hi = median_in(pts, n, hi_bytes, 2 * hi_bytes);
    if (!(lo > 0) || !(hi > lo * 1.15)) /* no step worth calling a cache boundary */
        return -ENOENT;
    double thr = sqrt(lo * hi);
    /* First point past the low plateau where latency crosses the threshold and stays above it (a lone noisy
     * spike inside a plateau does not count). */
    for (unsigned i = 1; i < n; i++) {
        if (pts[i].bytes <= lo_bytes / 2 || pts[i].ns < thr)
            continue;
        if (i + 1 < n && pts[i + 1].ns < thr)
            continue;
        const struct calib_point *a = &pts[i - 1], *b = &pts[i];
        double t = a->ns >= thr ? 0 : (log(thr) - log(a->ns)) / (log(b->ns) - log(a->ns));
        double lb = log((double)a->bytes) + t * (log((double)b->bytes) - log((double)a->bytes));
        *knee = (uint64_t)exp(lb) & ~(uint64_t)63;
        if (lo_ns)
            *lo_ns = lo;
        if (hi_ns)
            *hi_ns = hi;
        return 0;
    }
    return -ENOENT;
}

uint64_t calib_effective(const struct calib *c, enum calib_level l)
{
    if (l >= CALIB_NLEVELS)
        return 0;
    /* A knee above the claim is the next level's transition bleeding in (seen here: an L2 "knee" at 2x the 1 MiB
     * L2 on an AMD victim-L3 VM), never a bigger cache: a cache cannot hold more than the hardware has. */
    if (c->measured[l] && c->claimed[l] && c->measured[l] > c->claimed[l])
        return c->claimed[l];
    return c->measured[l] ? c->measured[l] : c->claimed[l];
}

/* ---- latency sweep -------------------------------------------------------------------------------------- */

struct bind_guard {
    hwloc_bitmap_t old;
    const struct topo *t;
};

static int bind_push(struct bind_guard *g, const struct topo *t, int cpu)
{
    g->t = t;
    g->old = hwloc_bitmap_alloc();
    if (!g->old)
        return -ENOMEM;
    hwloc_get_cpubind(topo_hwloc(t), g->old, HWLOC_CPUBIND_THREAD);
    return topo_bind_thread(t, cpu);
}

static void bind_pop(struct bind_guard *g)
{
    if (!g->old)
        return;
    if (!hwloc_bitmap_iszero(g->old))
        hwloc_set_cpubind(topo_hwloc(g->t), g->old, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(g->old);
    g->old = NULL;
}

static int cmp_pt(const void *a, const void *b)
{
    const struct calib_point *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static double measure_point(void *buf, uint64_t bytes, double est_ns)
{
    double budget = 3e6; /* ~3 ms per timed repeat */
    uint64_t iters = (uint64_t)(budget / (est_ns > 0.5 ? est_ns : 0.5));
    if (iters < 20000)
        iters = 20000;
    if (iters > 3000000)
        iters = 3000000;
    return chase_latency_ns(buf, bytes, iters, 5, bytes * 2654435761ULL + 1);
}

static void find_knees(struct calib *c)
{
    uint64_t c1 = c->claimed[CALIB_L1], c2 = c->claimed[CALIB_L2], c3 = c->claimed[CALIB_LLC];
    double lo, hi;
    memset(c->measured, 0, sizeof(c->measured));
    if (c1 && calib_find_knee(c->sweep, c->nsweep, c1 / 2, 2 * c1, &c->measured[CALIB_L1], &lo, &hi) == 0)
        c->plateau_ns[CALIB_L1] = lo;
    if (c2 && calib_find_knee(c->sweep, c->nsweep, c2 / 2, 2 * c2, &c->measured[CALIB_L2], &lo, &hi) == 0)
        c->plateau_ns[CALIB_L2] = lo;
    if (c3 && c3 > c2) {
        uint64_t lo_b = c2 ? 3 * c2 : c3 / 8;
        if (lo_b > c3 / 2)
            lo_b = c3 / 2;
        if (calib_find_knee(c->sweep, c->nsweep, lo_b, 2 * c3, &c->measured[CALIB_LLC], &lo, &hi) == 0) {
            c->plateau_ns[CALIB_LLC] = lo;
            c->plateau_ns[CALIB_NLEVELS] = hi;
        }
    }
}

int calib_measure_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop,
                         calib_progress_fn progress, void *arg, char *why, size_t len)
{
    struct topo_cache tc;
    int llc = topo_llc_level(t);
    memset(c->claimed, 0, sizeof(c->claimed));
    if (topo_cache_info(t, 1, false, cpu, &tc) == 0)
        c->claimed[CALIB_L1] = tc.size;
    if (llc >= 2 && topo_cache_info(t, 2, false, cpu, &tc) == 0)
        c->claimed[CALIB_L2] = tc.size;
    if (llc >= 2 && topo_cache_info(t, llc, false, cpu, &tc) == 0)
        c->claimed[CALIB_LLC] = tc.size;
    if (llc == 2) /* two-level machine: the L2 is the LLC */
        c->claimed[CALIB_L2] = 0;
    uint64_t top = 4 * c->claimed[CALIB_LLC];
    if (top < 64 * IB_MIB)
        top = 64 * IB_MIB;
    if (top > IB_GIB)
        top = IB_GIB;

    struct bind_guard g = {0};
    int rc = bind_push(&g, t, cpu);
    if (rc < 0) {
        bind_pop(&g);
        return ib_why(why, len, rc, "cannot bind to CPU %d for the latency sweep", cpu);
    }
    void *buf = ib_map(top, 1);
    if (!buf) {
        bind_pop(&g);
        return ib_why(why, len, -ENOMEM, "cannot map %llu MiB for the latency sweep",
                      (unsigned long long)(top >> 20));
    }
    memset(buf, 1, top);
    c->nsweep = 0;
    double est = 1.0;
    unsigned total = 0;
    for (double b = 16 * 1024; b <= (double)top * 1.0001; b *= 1.189207115) /* 2^(1/4) */
        total++;
    unsigned k = 0;
    for (double b = 16 * 1024; b <= (double)top * 1.0001 && c->nsweep < CALIB_MAX_SWEEP - 16; b *= 1.189207115) {
        if (stop && atomic_load(stop)) {
            rc = -EINTR;
            break;
        }
        uint64_t bytes = (uint64_t)b & ~(uint64_t)63;
        est = measure_point(buf, bytes, est);
        c->sweep[c->nsweep++] = (struct calib_point){bytes, est};
        if (progress)
            progress(arg, "latency sweep", (double)++k / (total + 12));
    }
    if (rc == 0) {
        /* refine around the LLC knee: 12 more points across [knee/1.6, knee*1.6] */
        find_knees(c);
        uint64_t kn = c->measured[CALIB_LLC];
        for (int i = 0; kn && i < 12 && c->nsweep < CALIB_MAX_SWEEP; i++) {
            if (stop && atomic_load(stop)) {
                rc = -EINTR;
                break;
            }
            uint64_t bytes = (uint64_t)((double)kn / 1.6 * pow(1.6 * 1.6, (i + 0.5) / 12.0)) & ~(uint64_t)63;
            if (bytes > top)
                break;
            c->sweep[c->nsweep++] = (struct calib_point){bytes, measure_point(buf, bytes, 20)};
            if (progress)
                progress(arg, "latency sweep", (double)++k / (total + 12));
        }
        qsort(c->sweep, c->nsweep, sizeof(c->sweep[0]), cmp_pt);
        find_knees(c);
    }
    ib_unmap(buf, top);
    bind_pop(&g);
    if (rc < 0)
        return ib_why(why, len, rc, "latency sweep interrupted");
    c->have_caches = 1;
    c->sweep_cpu = cpu;
    c->caches_when = (int64_t)time(NULL);
    c->dirty = 1;
    /* bandwidth working sets depend on the knees: forget bandwidths measured against older knees */
    c->nbw = 0;
    return 0;
}

int calib_need_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop, char *why, size_t len)
{
    if (c->have_caches)
        return 0;
    return calib_measure_caches(c, t, cpu, stop, NULL, NULL, why, len);
}

/* ---- bandwidth ------------------------------------------------------------------------------------------ */

uint64_t calib_bw_ws(const struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     unsigned nthreads)
{
    if (nthreads == 0)
        nthreads = 1;
    uint64_t l2 = calib_effective(c, CALIB_L2), llc = calib_effective(c, CALIB_LLC), ws;
    struct topo_cache tc;
    uint64_t llc_claimed = topo_cache_info(t, topo_llc_level(t), false, -1, &tc) == 0 ? tc.size : llc;
    if (!strcmp(kind, "l2")) {
        ws = l2 ? l2 / 2 : 128 * IB_KIB; /* inside L2, well beyond L1 */
    } else if (!strcmp(kind, "llc")) {
        /* inside the effective LLC but well beyond L2: half the LLC shared out, at least 1.5x an L2 each, but never
         * more than 80 % of the LLC in all (staying in the LLC wins when many threads share a small one) */
        ws = llc / 2 / nthreads;
        if (ws < l2 + l2 / 2)
            ws = l2 + l2 / 2;
        if (ws * nthreads > llc / 10 * 8)
            ws = llc / 10 * 8 / nthreads;
    } else { /* dram: at least 4x the larger of the claimed and the effective LLC, at most 10 % of memory */
        uint64_t big = llc_claimed > llc ? llc_claimed : llc;
        uint64_t total = 4 * big;
        if (total < 64 * IB_MIB)
            total = 64 * IB_MIB;
        uint64_t cap = m && m->mem_total ? m->mem_total / 10 : total;
        if (total > cap)
            total = cap;
        ws = total / nthreads;
    }
    return ws & ~(uint64_t)4095;
}

static void cpus_str(const int *cpus, unsigned n, char *buf, size_t len)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < n; i++)
        hwloc_bitmap_set(b, (unsigned)cpus[i]);
    hwloc_bitmap_list_snprintf(buf, len, b);
    hwloc_bitmap_free(b);
}

const struct calib_bw *calib_bw_find(const struct calib *c, const char *kind, const int *cpus, unsigned n)
{
    char key[64];
    cpus_str(cpus, n, key, sizeof(key));
    for (unsigned i = 0; i < c->nbw; i++)
        if (!strcmp(c->bw[i].kind, kind) && !strcmp(c->bw[i].cpus, key))
            return &c->bw[i];
    return NULL;
}

/* A barrier whose party count can shrink (a thread that could not be started must not hang the others). */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned parties, arrived, gen;
};

static void gate_wait(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    unsigned gen = g->gen;
    if (++g->arrived >= g->parties) {
        g->arrived = 0;
        g->gen++;
        pthread_cond_broadcast(&g->cv);
    } else {
        while (gen == g->gen)
            pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

static void gate_shrink(struct gate *g, unsigned parties)
{
    pthread_mutex_lock(&g->mu);
    g->parties = parties;
    if (g->arrived && g->arrived >= g->parties) {
        g->arrived = 0;
        g->gen++;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
}

enum stream_op calib_bw_op(const char *kind) { return !strcmp(kind, "dram") ? STREAM_TRIAD : STREAM_READ; }

size_t calib_bw_chunk(const char *kind)
{
    return !strcmp(kind, "dram") ? 2 * IB_MIB : !strcmp(kind, "llc") ? 4 * IB_MIB : 8 * IB_MIB;
}

struct bw_job {
    const struct topo *t;
    int cpu;
    uint64_t ws;
    struct gate *bar;
    const atomic_int *stop;
    atomic_int *abort;
    double bps[5];
    int err;
    enum stream_op op;
    size_t chunk;
};

#define BW_REPS 5
#define BW_REP_NS (120 * IB_NS_PER_MS)

static void *bw_thread(void *arg)
{
    struct bw_job *j = arg;
    int rc = topo_bind_thread(j->t, j->cpu);
    void *buf = rc == 0 ? ib_map(j->ws, 1) : NULL;
    if (rc < 0 || !buf) {
        j->err = rc < 0 ? rc : -ENOMEM;
        atomic_store(j->abort, 1);
    } else {
        memset(buf, 1, j->ws); /* first touch on this CPU: NUMA-local pages */
    }
    volatile uint64_t sink = 0;
    for (int r = 0; r < BW_REPS; r++) {
        gate_wait(j->bar);
        if (atomic_load(j->abort) || (j->stop && atomic_load(j->stop)))
            continue;
        size_t pos = 0;
        sink += stream_step(buf, j->ws, &pos, j->ws, j->op); /* warm */
        uint64_t bytes = 0, t0 = clk_mono_ns(), dt;
        do { /* the SoI's own stepping: same chunks, same wrap, a clock read per step */
            bytes += stream_step(buf, j->ws, &pos, j->chunk, j->op);
            dt = clk_mono_ns() - t0;
        } while (dt < BW_REP_NS);
        j->bps[r] = (double)bytes / ((double)dt / 1e9);
    }
    (void)sink;
    ib_unmap(buf, j->ws);
    return NULL;
}

int calib_measure_bw(struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     const int *cpus, unsigned n, const atomic_int *stop, double *bps, char *why, size_t len)
{
    if (strcmp(kind, "l2") && strcmp(kind, "llc") && strcmp(kind, "dram"))
        return ib_why(why, len, -EINVAL, "unknown bandwidth kind '%s'", kind);
    if (n == 0 || n > 1024)
        return ib_why(why, len, -EINVAL, "bad CPU count %u", n);
    if (!topo_is_this_machine(t))
        return ib_why(why, len, -ENOTSUP, "bandwidth can only be measured on this machine's topology");
    uint64_t ws = calib_bw_ws(c, t, m, kind, n);
    struct bw_job *jobs = calloc(n, sizeof(*jobs));
    pthread_t *th = calloc(n, sizeof(*th));
    struct gate bar = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .parties = n};
    atomic_int abort_flag = 0;
    int rc = 0;
    unsigned started = 0;
    if (!jobs || !th) {
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        jobs[i] = (struct bw_job){.t = t, .cpu = cpus[i], .ws = ws, .bar = &bar, .stop = stop, .abort = &abort_flag,
                                  .op = calib_bw_op(kind), .chunk = calib_bw_chunk(kind)};
        if (pthread_create(&th[i], NULL, bw_thread, &jobs[i])) {
            rc = -EAGAIN;
            atomic_store(&abort_flag, 1);
            gate_shrink(&bar, started); /* the missing threads must not hang the started ones */
            break;
        }
        started++;
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (rc == 0 && stop && atomic_load(stop))
        rc = -EINTR;
    for (unsigned i = 0; rc == 0 && i < n; i++)
        if (jobs[i].err)
            rc = jobs[i].err;
    if (rc == 0) {
        double tot[BW_REPS];
        for (int r = 0; r < BW_REPS; r++) {
            tot[r] = 0;
            for (unsigned i = 0; i < n; i++)
                tot[r] += jobs[i].bps[r];
        }
        qsort(tot, BW_REPS, sizeof(double), ib_cmp_double);
        double med = tot[BW_REPS / 2];
        struct calib_bw e = {.ws_bytes = ws, .bps = med, .spread = med > 0 ? (tot[BW_REPS - 1] - tot[0]) / med : 0,
                             .when = (int64_t)time(NULL)};
        snprintf(e.kind, sizeof(e.kind), "%s", kind);
        cpus_str(cpus, n, e.cpus, sizeof(e.cpus));
        struct calib_bw *slot = (struct calib_bw *)calib_bw_find(c, kind, cpus, n);
        if (!slot && c->nbw < CALIB_MAX_BW)
            slot = &c->bw[c->nbw++];
        if (slot)
            *slot = e;
        c->dirty = 1;
        *bps = med;
    }
out:
    free(jobs);
    free(th);
    if (rc < 0 && why && !*why)
        ib_why(why, len, rc, "%s bandwidth measurement failed: %s", kind, strerror(-rc));
    return rc;
}

int calib_need_bw(struct calib *c, const struct topo *t, const struct mlim *m, const char *kind, const int *cpus,
                  unsigned n, const atomic_int *stop, double *bps, char *why, size_t len)
{
    int rc = calib_need_caches(c, t, cpus[0], stop, why, len);
    if (rc < 0)
        return rc;
    const struct calib_bw *e = calib_bw_find(c, kind, cpus, n);
    if (e && e->ws_bytes == calib_bw_ws(c, t, m, kind, n)) {
        *bps = e->bps;
        return 0;
    }
    return calib_measure_bw(c, t, m, kind, cpus, n, stop, bps, why, len);
}
