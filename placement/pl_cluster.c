/* pl_cluster.c - thread clustering (pl_cluster.h; seed 003 §4.3-4.5).  Rules, and why:
 * - Which samples count: the paper's shMaps count remote cache accesses only (§4.3.1).  PL_SRC_REMOTE counts;
 *   PL_SRC_UNKNOWN counts too: a source that cannot tell (a trace without the field, a PMU without a data source)
 *   would otherwise count nothing, and the paper's own Power5 samples were "very likely" remote, not known remote
 *   (§5.2.1).  LOCAL does not: threads on one chip share through their own cache without cross-chip traffic, which
 *   the paper says must not update the shMaps.  MEMORY does not: a DRAM fill is not data shared with another
 *   thread's cache.  Every sample (any source) makes its thread known, so it gets a chip.
 * - Temporal sampling: one countdown for the process (the paper's PMU overflows on the process's remote-access
 *   count, not per thread).  Each gap is N + u, u uniform in [-j, j], j = floor(N * jitter / 100) (the paper's
 *   "small random value"), at least 1; the gap-th counted sample is taken.  N = 1: every sample.
 * - Regions: addr >> log2(region); the hash is splitmix64's finalizer of the region number, mod entries.  The
 *   filter (one per process) holds, per entry, the first region taken on it, for good; a taken sample on a
 *   different region is discarded (collided).  A thread may claim at most filter_limit free entries (the paper's
 *   "limit on the number of entries allowed by a thread", left unvalued: entries / 8, so at least 8 threads always
 *   find room); past it, its samples on free entries are discarded (limited), on entries others claimed for the
 *   same region still count.
 * - Counters saturate at 2^bits - 1.  The similarity is the dot product over entries where both counters are >=
 *   small (3: "less than 3" counts as 0).  The threshold 40000 is for 8-bit counters ("a single entry ... greater
 *   than 200"); for w bits it is 40000 * ((2^w - 1) / 255)^2, the same share of the saturated product.  Similar:
 *   strictly greater than the threshold.  The small cut is absolute: it removes incidental counts, whatever the
 *   width.
 * - Global lines: an entry non-zero in more than half of the threads known (2 * count > threads) is zeroed in
 *   every shMap before the similarity; in exactly half it is kept.
 * - Scan order of the one pass: total sharing (sum of a thread's similarity with every other) descending; ties by
 *   the shMaps compared entry by entry (the larger first), then samples recorded descending, then tid ascending.
 *   Only threads alike in all of these are ordered by tid, and exchanging them changes no cluster.  Each thread
 *   joins the cluster whose representative it is most similar to above the threshold (ties: the older cluster),
 *   else founds a cluster as its representative.  A cluster left with one thread is no cluster: its thread is
 *   unclustered (it shares with nobody above the threshold).
 * - data_sharing: the share of recorded samples (passed sampling and the filter) that fell on entries non-zero in
 *   two or more threads' shMaps, global ones included (they are shared data too); 0 when nothing was recorded.
 * - Chips: quota(k) = ceil(threads * cap(k) / sum cap) (equal capacities: ceil(threads / chips)); a chip holding
 *   more than its quota is imbalanced.  "Least loaded" is the chip with the most free places (quota - load), ties
 *   by the lower chip number; with equal capacities that is the paper's "fewest threads".  Clusters go largest
 *   first (ties: their given order, the creation order of the pass), each whole onto the least loaded chip if it
 *   fits its quota, else its threads one by one (in member order) each onto the least loaded chip at that moment;
 *   then the unclustered threads one by one likewise.  A free place always exists while threads remain, since the
 *   quotas sum to at least the threads. */
#define _GNU_SOURCE /* qsort_r */
#include "pl_cluster.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "ib_rand.h"

struct th {
    uint32_t tid;
    uint64_t samples, recorded;
    unsigned owned;
    uint16_t *map;
};

struct pl_cluster {
    unsigned entries, bits, small, limit, shift;
    uint16_t maxc;
    unsigned n;            /* temporal sampling N */
    unsigned jit;          /* j */
    double threshold;
    struct ib_xoshiro rng;
    uint64_t countdown;
    uint64_t *freg;        /* filter: the region per entry */
    unsigned char *ftaken;
    uint64_t *fhits;       /* recorded samples per entry */
    struct th *th;
    unsigned nth, cth;
    uint32_t *hkey;        /* tid -> index + 1 (0: empty), open addressing */
    unsigned *hval, hcap;
    struct pl_cluster_stats st;
};

static uint64_t draw_gap(struct pl_cluster *c)
{
    if (c->n <= 1)
        return 1;
    uint64_t g = (uint64_t)c->n - c->jit + ib_xoshiro_next(&c->rng) % (2ULL * c->jit + 1);
    return g ? g : 1;
}

int pl_cluster_new(const struct pl_cluster_opts *opts, struct pl_cluster **out, char *why, size_t len)
{
    struct pl_cluster_opts o = {0};
    if (opts)
        o = *opts;
    *out = NULL;
    if (o.bits > 16)
        return ib_why(why, len, -EINVAL, "counter width %u: 1-16 bits expected", o.bits);
    if (o.region & (o.region - 1))
        return ib_why(why, len, -EINVAL, "region %llu: a power of two expected", (unsigned long long)o.region);
    if (o.entries > (1u << 20))
        return ib_why(why, len, -EINVAL, "entries %u: at most %u", o.entries, 1u << 20);
    if (o.jitter_pct > 100)
        return ib_why(why, len, -EINVAL, "jitter %d %%: at most 100 expected", o.jitter_pct);
    if (o.threshold < 0)
        return ib_why(why, len, -EINVAL, "threshold %g: >= 0 expected", o.threshold);
    struct pl_cluster *c = calloc(1, sizeof *c);
    if (!c)
        return ib_why(why, len, -ENOMEM, "out of memory");
    c->entries = o.entries ? o.entries : PL_CLUSTER_ENTRIES;
    c->bits = o.bits ? o.bits : PL_CLUSTER_BITS;
    c->maxc = (uint16_t)((1u << c->bits) - 1);
    uint64_t region = o.region ? o.region : PL_CLUSTER_REGION;
    while ((1ULL << c->shift) < region)
        c->shift++;
    c->n = o.sample_n ? o.sample_n : 1;
    int jp = o.jitter_pct == 0 ? PL_CLUSTER_JITTER_PCT : o.jitter_pct < 0 ? 0 : o.jitter_pct;
    c->jit = (unsigned)((uint64_t)c->n * (unsigned)jp / 100);
    c->small = o.small ? o.small : PL_CLUSTER_SMALL;
    double scale = (double)c->maxc / 255.0;
    c->threshold = o.threshold > 0 ? o.threshold : PL_CLUSTER_THRESHOLD * scale * scale;
    c->limit = o.filter_limit ? o.filter_limit : c->entries / PL_CLUSTER_LIMIT_DIV;
    if (!c->limit)
        c->limit = 1;
    ib_xoshiro_seed(&c->rng, o.seed);
    c->countdown = draw_gap(c);
    c->freg = calloc(c->entries, sizeof *c->freg);
    c->ftaken = calloc(c->entries, 1);
    c->fhits = calloc(c->entries, sizeof *c->fhits);
    if (!c->freg || !c->ftaken || !c->fhits) {
        pl_cluster_free(c);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    *out = c;
    return 0;
}

void pl_cluster_free(struct pl_cluster *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->nth; i++)
        free(c->th[i].map);
    free(c->th);
    free(c->hkey);
    free(c->hval);
    free(c->freg);
    free(c->ftaken);
    free(c->fhits);
    free(c);
}

static unsigned tid_hash(uint32_t tid, unsigned cap) { return (unsigned)((tid * 0x9e3779b1u) & (cap - 1)); }

/* The index of thread tid, or -1 (not seen). */
static long find_thread(const struct pl_cluster *c, uint32_t tid)
{
    if (!c->hcap)
        return -1;
    for (unsigned h = tid_hash(tid, c->hcap);; h = (h + 1) & (c->hcap - 1)) {
        if (!c->hval[h])
            return -1;
        if (c->hkey[h] == tid)
            return (long)c->hval[h] - 1;
    }
}

static int hash_put(uint32_t *key, unsigned *val, unsigned cap, uint32_t tid, unsigned idx)
{
    unsigned h = tid_hash(tid, cap);
    while (val[h])
        h = (h + 1) & (cap - 1);
    key[h] = tid;
    val[h] = idx + 1;
    return 0;
}

static struct th *get_thread(struct pl_cluster *c, uint32_t tid)
{
    long i = find_thread(c, tid);
    if (i >= 0)
        return &c->th[i];
    if (2 * (c->nth + 1) > c->hcap) { /* keep the table at most half full */
        unsigned ncap = c->hcap ? 2 * c->hcap : 64;
        uint32_t *k = calloc(ncap, sizeof *k);
        unsigned *v = calloc(ncap, sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return NULL;
        }
        for (unsigned j = 0; j < c->nth; j++)
            hash_put(k, v, ncap, c->th[j].tid, j);
        free(c->hkey);
        free(c->hval);
        c->hkey = k, c->hval = v, c->hcap = ncap;
    }
    if (c->nth == c->cth) {
        unsigned ncap = c->cth ? 2 * c->cth : 16;
        struct th *t = realloc(c->th, ncap * sizeof *t);
        if (!t)
            return NULL;
        c->th = t, c->cth = ncap;
    }
    struct th *t = &c->th[c->nth];
    memset(t, 0, sizeof *t);
    if (!(t->map = calloc(c->entries, sizeof *t->map)))
        return NULL;
    t->tid = tid;
    hash_put(c->hkey, c->hval, c->hcap, tid, c->nth);
    c->nth++;
    return t;
}

unsigned pl_cluster_slot(const struct pl_cluster *c, uint64_t addr)
{
    uint64_t r = (addr >> c->shift) - 0x9e3779b97f4a7c15ULL; /* splitmix64 adds it back: the finalizer of r */
    return (unsigned)(ib_splitmix64(&r) % c->entries);
}

struct pl_cluster_stats pl_cluster_counts(const struct pl_cluster *c) { return c->st; }

unsigned pl_cluster_counter(const struct pl_cluster *c, uint32_t tid, unsigned entry)
{
    long i = find_thread(c, tid);
    return i < 0 || entry >= c->entries ? 0 : c->th[i].map[entry];
}

int pl_cluster_add(struct pl_cluster *c, const struct pl_sample *s)
{
    struct th *t = get_thread(c, s->tid);
    if (!t)
        return -ENOMEM;
    t->samples++;
    c->st.samples++;
    if (s->src != PL_SRC_REMOTE && s->src != PL_SRC_UNKNOWN)
        return 0;
    c->st.counted++;
    if (--c->countdown)
        return 0;
    c->countdown = draw_gap(c);
    c->st.taken++;
    uint64_t region = s->addr >> c->shift;
    unsigned e = pl_cluster_slot(c, s->addr);
    if (c->ftaken[e]) {
        if (c->freg[e] != region) {
            c->st.collided++;
            return 0;
        }
    } else {
        if (t->owned >= c->limit) {
            c->st.limited++;
            return 0;
        }
        c->ftaken[e] = 1;
        c->freg[e] = region;
        t->owned++;
    }
    if (t->map[e] < c->maxc)
        t->map[e]++;
    t->recorded++;
    c->fhits[e]++;
    c->st.recorded++;
    return 0;
}

int pl_cluster_add_fn(void *ctx, const struct pl_sample *s) { return pl_cluster_add(ctx, s); }

uint64_t pl_cluster_similarity(const uint16_t *a, const uint16_t *b, unsigned n, unsigned small)
{
    uint64_t s = 0;
    for (unsigned i = 0; i < n; i++)
        if (a[i] >= small && b[i] >= small)
            s += (uint64_t)a[i] * b[i];
    return s;
}

struct scan_ctx {
    const struct pl_cluster *c;
    const uint16_t *w; /* thread i's shMap after the global removal: w + i * entries */
    const uint64_t *total;
};

static int cmp_scan(const void *pa, const void *pb, void *ctx)
{
    const struct scan_ctx *g = ctx;
    unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;
    const struct pl_cluster *c = g->c;
    if (g->total[a] != g->total[b])
        return g->total[a] > g->total[b] ? -1 : 1;
    const uint16_t *x = g->w + (size_t)a * c->entries, *y = g->w + (size_t)b * c->entries;
    for (unsigned e = 0; e < c->entries; e++)
        if (x[e] != y[e])
            return x[e] > y[e] ? -1 : 1;
    if (c->th[a].recorded != c->th[b].recorded)
        return c->th[a].recorded > c->th[b].recorded ? -1 : 1;
    return c->th[a].tid < c->th[b].tid ? -1 : c->th[a].tid > c->th[b].tid;
}

void pl_cluster_result_free(struct pl_cluster_result *r)
{
    for (unsigned i = 0; r->cluster && i < r->nclusters; i++)
        free(r->cluster[i].member);
    free(r->cluster);
    free(r->thread);
    free(r->unclustered);
    memset(r, 0, sizeof *r);
}

int pl_cluster_run(struct pl_cluster *c, struct pl_cluster_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    unsigned T = c->nth, E = c->entries;
    r->threshold = c->threshold, r->small = c->small, r->filter_limit = c->limit, r->stats = c->st;
    uint16_t *w = calloc((size_t)(T ? T : 1) * E, sizeof *w);
    uint64_t *sim = calloc((size_t)(T ? T : 1) * (T ? T : 1), sizeof *sim);
    uint64_t *total = calloc(T ? T : 1, sizeof *total);
    unsigned *order = calloc(T ? T : 1, sizeof *order);
    unsigned *rep = calloc(T ? T : 1, sizeof *rep), *size = calloc(T ? T : 1, sizeof *size);
    int *cl = calloc(T ? T : 1, sizeof *cl), *renum = calloc(T ? T : 1, sizeof *renum);
    r->thread = calloc(T ? T : 1, sizeof *r->thread);
    r->unclustered = calloc(T ? T : 1, sizeof *r->unclustered);
    int rc = 0;
    if (!w || !sim || !total || !order || !rep || !size || !cl || !renum || !r->thread || !r->unclustered) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    /* the histogram: how many threads have each entry non-zero; global entries removed, sharing summarised */
    uint64_t shared_hits = 0;
    for (unsigned e = 0; e < E; e++) {
        unsigned cnt = 0;
        for (unsigned t = 0; t < T; t++)
            cnt += c->th[t].map[e] != 0;
        if (cnt >= 2)
            shared_hits += c->fhits[e];
        bool global = 2ULL * cnt > T;
        r->nglobal += global;
        for (unsigned t = 0; t < T; t++)
            w[(size_t)t * E + e] = global ? 0 : c->th[t].map[e];
    }
    r->data_sharing = c->st.recorded ? (double)shared_hits / (double)c->st.recorded : 0;
    for (unsigned a = 0; a < T; a++)
        for (unsigned b = a + 1; b < T; b++) {
            uint64_t s = pl_cluster_similarity(w + (size_t)a * E, w + (size_t)b * E, E, c->small);
            sim[(size_t)a * T + b] = sim[(size_t)b * T + a] = s;
            total[a] += s, total[b] += s;
        }
    for (unsigned t = 0; t < T; t++)
        order[t] = t;
    struct scan_ctx sc = {c, w, total};
    qsort_r(order, T, sizeof *order, cmp_scan, &sc);
    /* the one pass: join the most similar representative above the threshold (ties: the older), else found one */
    unsigned ncl = 0;
    for (unsigned i = 0; i < T; i++) {
        unsigned t = order[i];
        int best = -1;
        uint64_t bs = 0;
        for (unsigned k = 0; k < ncl; k++) {
            uint64_t s = sim[(size_t)t * T + rep[k]];
            if ((double)s > c->threshold && (best < 0 || s > bs))
                best = (int)k, bs = s;
        }
        if (best < 0) {
            rep[ncl] = t;
            best = (int)ncl++;
        }
        cl[t] = best;
        size[best]++;
    }
    for (unsigned k = 0; k < ncl; k++)
        renum[k] = size[k] >= 2 ? (int)r->nclusters++ : -1;
    if (!(r->cluster = calloc(r->nclusters ? r->nclusters : 1, sizeof *r->cluster))) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    for (unsigned k = 0; k < ncl; k++)
        if (renum[k] >= 0 && !(r->cluster[renum[k]].member = calloc(size[k], sizeof(unsigned)))) {
            rc = ib_why(why, len, -ENOMEM, "out of memory");
            goto out;
        }
    r->nthreads = T;
    for (unsigned i = 0; i < T; i++) {
        unsigned t = order[i];
        struct pl_cluster_thread *o = &r->thread[i];
        o->tid = c->th[t].tid;
        o->samples = c->th[t].samples;
        o->recorded = c->th[t].recorded;
        o->total = total[t];
        o->cluster = renum[cl[t]];
        if (o->cluster >= 0) {
            struct pl_cluster_group *g = &r->cluster[o->cluster];
            g->member[g->n++] = i; /* scan order: the representative, who founded it, comes first */
        } else {
            r->unclustered[r->nunclustered++] = i;
        }
    }
out:
    free(w);
    free(sim);
    free(total);
    free(order);
    free(rep);
    free(size);
    free(cl);
    free(renum);
    if (rc)
        pl_cluster_result_free(r);
    return rc;
}

/* The least loaded chip: the most free places (quota - load), ties by the lower number. */
static unsigned least_loaded(const uint64_t *quota, const uint64_t *load, unsigned nchips)
{
    unsigned best = 0;
    for (unsigned k = 1; k < nchips; k++)
        if ((int64_t)(quota[k] - load[k]) > (int64_t)(quota[best] - load[best]))
            best = k;
    return best;
}

int pl_cluster_chips(const struct pl_cluster_group *clusters, unsigned nclusters, const unsigned *unclustered,
                     unsigned nunclustered, unsigned nthreads, unsigned nchips, const unsigned *cap, int *chip,
                     char *why, size_t len)
{
    if (!nchips)
        return ib_why(why, len, -EINVAL, "no chip to place threads on");
    uint64_t capsum = 0;
    for (unsigned k = 0; k < nchips; k++) {
        if (cap && !cap[k])
            return ib_why(why, len, -EINVAL, "chip %u: a capacity of 0", k);
        capsum += cap ? cap[k] : 1;
    }
    for (unsigned t = 0; t < nthreads; t++)
        chip[t] = -2; /* not named yet */
    for (unsigned i = 0; i <= nclusters; i++) {
        const unsigned *m = i < nclusters ? clusters[i].member : unclustered;
        unsigned n = i < nclusters ? clusters[i].n : nunclustered;
        for (unsigned j = 0; j < n; j++) {
            if (m[j] >= nthreads)
                return ib_why(why, len, -EINVAL, "thread %u: out of range (%u threads)", m[j], nthreads);
            if (chip[m[j]] != -2)
                return ib_why(why, len, -EINVAL, "thread %u: named twice", m[j]);
            chip[m[j]] = -1;
        }
    }
    for (unsigned t = 0; t < nthreads; t++)
        if (chip[t] == -2)
            return ib_why(why, len, -EINVAL, "thread %u: in no cluster and not unclustered", t);
    uint64_t *quota = calloc(nchips, sizeof *quota), *load = calloc(nchips, sizeof *load);
    unsigned *ord = calloc(nclusters ? nclusters : 1, sizeof *ord);
    if (!quota || !load || !ord) {
        free(quota);
        free(load);
        free(ord);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned k = 0; k < nchips; k++)
        quota[k] = ((uint64_t)nthreads * (cap ? cap[k] : 1) + capsum - 1) / capsum;
    /* largest first; a stable insertion sort keeps the given order among equals */
    for (unsigned i = 0; i < nclusters; i++) {
        unsigned j = i;
        while (j > 0 && clusters[ord[j - 1]].n < clusters[i].n) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = i;
    }
    for (unsigned i = 0; i < nclusters; i++) {
        const struct pl_cluster_group *g = &clusters[ord[i]];
        unsigned k = least_loaded(quota, load, nchips);
        if (load[k] + g->n <= quota[k]) {
            for (unsigned j = 0; j < g->n; j++)
                chip[g->member[j]] = (int)k;
            load[k] += g->n;
            continue;
        }
        for (unsigned j = 0; j < g->n; j++) { /* it would unbalance: spread it */
            k = least_loaded(quota, load, nchips);
            chip[g->member[j]] = (int)k;
            load[k]++;
        }
    }
    for (unsigned j = 0; j < nunclustered; j++) {
        unsigned k = least_loaded(quota, load, nchips);
        chip[unclustered[j]] = (int)k;
        load[k]++;
    }
    free(quota);
    free(load);
    free(ord);
    return 0;
}

int pl_cluster_result_chips(const struct pl_cluster_result *r, unsigned nchips, const unsigned *cap, int *chip,
                            char *why, size_t len)
{
    return pl_cluster_chips(r->cluster, r->nclusters, r->unclustered, r->nunclustered, r->nthreads, nchips, cap,
                            chip, why, len);
}

double pl_ari(const int *a, const int *b, unsigned n)
{
    /* pair counts: both = pairs together in a and in b (sum C(n_ij, 2)); sa, sb = pairs together in a, in b (sum
     * C(a_i, 2), sum C(b_j, 2)); ARI = (both - sa sb / P) / ((sa + sb) / 2 - sa sb / P), P = C(n, 2) */
    if (n < 2)
        return 1.0;
    uint64_t both = 0, sa = 0, sb = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++) {
            bool x = a[i] == a[j], y = b[i] == b[j];
            sa += x, sb += y, both += x && y;
        }
    double p = (double)n * (n - 1) / 2, expected = (double)sa * (double)sb / p, max = ((double)sa + (double)sb) / 2;
    if (max == expected)
        return (double)both == max ? 1.0 : 0.0;
    return ((double)both - expected) / (max - expected);
}
