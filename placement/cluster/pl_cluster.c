/* pl_cluster.c - thread clustering (pl_cluster.h; Tam et al. EuroSys'07 §4.3-4.5).  Rules, and why:
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
 * - Global lines: an entry non-zero in more than half of the threads known (2 * count > threads) is left out of
 *   every similarity; in exactly half it is kept.
 * - Phase 1 (§4.2): clustering is activated only when the remote share is above the trigger (0.20, the paper's
 *   "20 % of the cycles spent accessing remote caches").  The share is a measured remote stall share when the caller
 *   gives one; else the share of REMOTE samples among those whose source is known (LOCAL, REMOTE, MEMORY), a proxy
 *   that undercounts stalls (a remote access stalls longer than a local one), so it activates late rather than
 *   early.  With no known source it is unknown and clustering goes ahead (a trace without sources asks for it).
 *   Not activated: no pass, every thread unclustered, and the result says the share and the trigger.
 * - The one pass (§4.4.2), the paper's: threads in tid order, each compared with the representatives of the
 *   clusters known so far only (O(T * c) similarities, computed on demand from the shMaps: no T x T matrix); it joins
 *   the one it is most similar to above the threshold (ties: the older cluster), else founds a cluster as its
 *   representative.  A cluster left with one thread is no cluster: its thread is unclustered.  A chain A-B, B-C with
 *   A-C = 0 gives {A, B} and C alone: C is compared with A, the representative, not with B.  The presorted variant
 *   this replaced (every pair's similarity, then total sharing descending) found the same clusters on every
 *   synthetic trace measured (docs/placement.md: the sweep, and 1000 threads over 100 000 lines) at O(T^2) memory
 *   (135 MB against 13 MB for 4000 threads) and up to 3.6 times the time: it earned no flag.
 * - The repeat loop (§4.1: "after the thread migration phase, the system returns to the stall breakdown phase"):
 *   pl_cluster_loop, each round a fresh pipeline (the filter too, so threads it starved get another chance).
 * - data_sharing, Algorithm 1's DataSharing (Tang et al. ISCA'11 §5.1: LLC requests in the Shared state over all LLC
 *   requests): the share of all samples, any source, on lines (regions) that two or more threads touched.  A line
 *   two threads' caches hold is what the Shared state records; the sample stream stands in for the LLC requests
 *   (the sources cannot split core-private hits from LLC ones).  Lines are tracked in a table of at most
 *   max_lines distinct lines (first thread seen, shared or not, samples); samples on lines past it are counted
 *   apart (lines_untracked) and left out of the share.  The former figure, recorded remote samples on entries two
 *   or more threads' shMaps hold, is remote_shared: remote samples are on shared lines by construction, so it reads
 *   close to 1 whenever threads share at all (1.000 and 0.964 seen) and says nothing to Algorithm 1's threshold.
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
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
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

struct line {
    uint64_t line;  /* region number + 1; 0: empty */
    uint64_t count; /* samples on it, any source */
    uint32_t tid;   /* the first thread seen on it */
    bool shared;    /* a second thread was seen on it */
};

struct pl_cluster {
    unsigned entries, bits, small, limit, shift;
    double trigger, stall_share; /* stall_share NAN: estimate from the samples */
    struct line *lines;          /* open addressing, at most half full */
    unsigned lcap, nlines, max_lines;
    uint64_t untracked;          /* samples on lines past max_lines */
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
    if (o.trigger > 1)
        return ib_why(why, len, -EINVAL, "trigger %g: a share in [0, 1], or negative for none, expected", o.trigger);
    if (o.have_stall_share && !(o.stall_share >= 0 && o.stall_share <= 1))
        return ib_why(why, len, -EINVAL, "remote stall share %g: a share in [0, 1] expected", o.stall_share);
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
    c->trigger = o.trigger == 0 ? PL_CLUSTER_TRIGGER : o.trigger;
    c->stall_share = o.have_stall_share ? o.stall_share : NAN;
    c->max_lines = o.max_lines ? o.max_lines : PL_CLUSTER_MAX_LINES;
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
    free(c->lines);
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

static uint64_t line_hash(uint64_t line)
{
    uint64_t r = line - 0x9e3779b97f4a7c15ULL;
    return ib_splitmix64(&r);
}

/* Counts a sample on its line (any source): the first thread seen there, and whether another came.  Past max_lines
 * distinct lines a new line is not tracked (counted in untracked).  0 or -ENOMEM. */
static int line_add(struct pl_cluster *c, uint64_t region, uint32_t tid)
{
    if (2 * (c->nlines + 1) > c->lcap && c->nlines < c->max_lines) { /* grow: keep it at most half full */
        unsigned ncap = c->lcap ? 2 * c->lcap : 1024;
        struct line *nl = calloc(ncap, sizeof *nl);
        if (!nl)
            return -ENOMEM;
        for (unsigned i = 0; i < c->lcap; i++)
            if (c->lines[i].line) {
                unsigned h = (unsigned)(line_hash(c->lines[i].line) & (ncap - 1));
                while (nl[h].line)
                    h = (h + 1) & (ncap - 1);
                nl[h] = c->lines[i];
            }
        free(c->lines);
        c->lines = nl, c->lcap = ncap;
    }
    uint64_t key = region + 1;
    for (unsigned h = c->lcap ? (unsigned)(line_hash(key) & (c->lcap - 1)) : 0; c->lcap; h = (h + 1) & (c->lcap - 1)) {
        struct line *l = &c->lines[h];
        if (l->line == key) {
            l->count++;
            l->shared |= l->tid != tid;
            return 0;
        }
        if (!l->line) {
            if (c->nlines >= c->max_lines || 2 * (c->nlines + 1) > c->lcap)
                break;
            l->line = key, l->count = 1, l->tid = tid;
            c->nlines++;
            return 0;
        }
    }
    c->untracked++;
    return 0;
}

int pl_cluster_add(struct pl_cluster *c, const struct pl_sample *s)
{
    struct th *t = get_thread(c, s->tid);
    if (!t)
        return -ENOMEM;
    t->samples++;
    c->st.samples++;
    c->st.local += s->src == PL_SRC_LOCAL;
    c->st.remote += s->src == PL_SRC_REMOTE;
    c->st.memory += s->src == PL_SRC_MEMORY;
    if (line_add(c, s->addr >> c->shift, s->tid) < 0)
        return -ENOMEM;
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

/* The similarity of threads a and b over the entries not removed as global. */
static uint64_t sim_kept(const struct pl_cluster *c, const unsigned char *global, unsigned a, unsigned b)
{
    const uint16_t *x = c->th[a].map, *y = c->th[b].map;
    uint64_t s = 0;
    for (unsigned e = 0; e < c->entries; e++)
        if (!global[e] && x[e] >= c->small && y[e] >= c->small)
            s += (uint64_t)x[e] * y[e];
    return s;
}

static int cmp_tid(const void *pa, const void *pb, void *ctx)
{
    const struct pl_cluster *c = ctx;
    uint32_t a = c->th[*(const unsigned *)pa].tid, b = c->th[*(const unsigned *)pb].tid;
    return a < b ? -1 : a > b;
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

/* Phase 1 (Tam et al. EuroSys'07 §4.2): the remote share the trigger reads, and whether clustering is activated. */
static void phase_one(const struct pl_cluster *c, struct pl_cluster_result *r)
{
    r->trigger = c->trigger;
    uint64_t known = c->st.local + c->st.remote + c->st.memory;
    if (!isnan(c->stall_share)) {
        r->remote_share = c->stall_share;
        snprintf(r->remote_share_source, sizeof r->remote_share_source, "given (measured stall share)");
    } else if (known) {
        r->remote_share = (double)c->st.remote / (double)known;
        snprintf(r->remote_share_source, sizeof r->remote_share_source,
                 "remote samples of those with a known source (%llu of %llu)", (unsigned long long)c->st.remote,
                 (unsigned long long)known);
    } else {
        r->remote_share = NAN;
        snprintf(r->remote_share_source, sizeof r->remote_share_source,
                 "unknown: no sample says where it was served");
    }
    r->triggered = c->trigger < 0 || isnan(r->remote_share) || r->remote_share > c->trigger;
}

int pl_cluster_run(struct pl_cluster *c, struct pl_cluster_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    unsigned T = c->nth, E = c->entries, T1 = T ? T : 1;
    r->threshold = c->threshold, r->small = c->small, r->filter_limit = c->limit, r->stats = c->st;
    unsigned char *global = calloc(E, 1);
    uint64_t *rsim = calloc(T1, sizeof *rsim);
    unsigned *order = calloc(T1, sizeof *order);
    unsigned *rep = calloc(T1, sizeof *rep), *size = calloc(T1, sizeof *size);
    int *cl = calloc(T1, sizeof *cl), *renum = calloc(T1, sizeof *renum);
    r->thread = calloc(T1, sizeof *r->thread);
    r->unclustered = calloc(T1, sizeof *r->unclustered);
    int rc = 0;
    if (!global || !rsim || !order || !rep || !size || !cl || !renum ||
        !r->thread || !r->unclustered) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    /* the histogram: how many threads have each entry non-zero; global entries marked, remote sharing summarised */
    uint64_t shared_hits = 0;
    for (unsigned e = 0; e < E; e++) {
        unsigned cnt = 0;
        for (unsigned t = 0; t < T; t++)
            cnt += c->th[t].map[e] != 0;
        if (cnt >= 2)
            shared_hits += c->fhits[e];
        global[e] = 2ULL * cnt > T;
        r->nglobal += global[e];
    }
    r->remote_shared = c->st.recorded ? (double)shared_hits / (double)c->st.recorded : 0;
    /* Algorithm 1's DataSharing: samples on lines two or more threads touched, of all the samples on tracked lines */
    uint64_t on_shared = 0, tracked = 0;
    for (unsigned i = 0; i < c->lcap; i++)
        if (c->lines[i].line) {
            tracked += c->lines[i].count;
            r->lines++;
            if (c->lines[i].shared) {
                on_shared += c->lines[i].count;
                r->shared_lines++;
            }
        }
    r->lines_untracked = c->untracked;
    r->data_sharing = tracked ? (double)on_shared / (double)tracked : 0;
    phase_one(c, r);
    for (unsigned t = 0; t < T; t++)
        order[t] = t;
    qsort_r(order, T, sizeof *order, cmp_tid, c);
    /* the one pass: each thread against the known representatives only; joins the most similar above the threshold
     * (ties: the older), else founds a cluster.  Not triggered: no pass, every thread unclustered. */
    unsigned ncl = 0;
    for (unsigned i = 0; i < T; i++) {
        unsigned t = order[i];
        int best = -1;
        uint64_t bs = 0;
        for (unsigned k = 0; r->triggered && k < ncl; k++) {
            uint64_t s = sim_kept(c, global, t, rep[k]);
            r->comparisons++;
            if ((double)s > c->threshold && (best < 0 || s > bs))
                best = (int)k, bs = s;
        }
        if (best < 0) {
            rep[ncl] = t;
            best = (int)ncl++;
        }
        cl[t] = best;
        rsim[t] = bs;
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
        o->rep_similarity = rsim[t];
        o->cluster = renum[cl[t]];
        if (o->cluster >= 0) {
            struct pl_cluster_group *g = &r->cluster[o->cluster];
            g->member[g->n++] = i; /* scan order: the representative, who founded it, comes first */
        } else {
            r->unclustered[r->nunclustered++] = i;
        }
    }
out:
    free(global);
    free(rsim);
    free(order);
    free(rep);
    free(size);
    free(cl);
    free(renum);
    if (rc)
        pl_cluster_result_free(r);
    return rc;
}

int pl_cluster_loop(const struct pl_cluster_opts *opts, const struct pl_cluster_round_cb *cb, unsigned max_rounds,
                    struct pl_cluster_result *last, struct pl_cluster_round_info *info, unsigned *rounds, char *why,
                    size_t len)
{
    memset(last, 0, sizeof *last);
    *rounds = 0;
    if (max_rounds < 1)
        return ib_why(why, len, -EINVAL, "at least one round expected");
    for (unsigned k = 0; k < max_rounds; k++) {
        struct pl_cluster *c;
        int rc = pl_cluster_new(opts, &c, why, len);
        if (rc < 0)
            goto fail;
        rc = cb->sample(cb->ctx, k, pl_cluster_add_fn, c, why, len);
        if (rc == 0) {
            if (k)
                pl_cluster_result_free(last);
            rc = pl_cluster_run(c, last, why, len);
        }
        pl_cluster_free(c);
        if (rc < 0)
            goto fail;
        struct pl_cluster_round_info *in = &info[k];
        *in = (struct pl_cluster_round_info){last->remote_share, last->triggered, false, last->nthreads,
                                             last->nclusters, last->nunclustered};
        *rounds = k + 1;
        if (!last->triggered)
            return 0; /* phase 1 says the remote accesses no longer matter: nothing to move, nothing to repeat */
        if (cb->migrate) {
            if ((rc = cb->migrate(cb->ctx, k, last, why, len)) < 0)
                goto fail;
            in->migrated = true;
        }
        continue;
    fail:
        pl_cluster_result_free(last); /* zeroed, or the last round's */
        return rc;
    }
    return 0;
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
