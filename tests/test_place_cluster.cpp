// Thread clustering (placement/cluster/pl_cluster.h, pl_trace.h): synthetic traces with a known grouping (seeded, several
// seeds, tids renamed: the same clusters and chips), the paper's similarity arithmetic, the global-line rule,
// saturation, the filter and its per-thread limit, 1-in-N sampling with jitter, the chip assignment on hand-made
// cases, the adjusted Rand index by hand, the trace reader, and a sweep over sampling rate and noise (a table).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "ib_rand.h"
#include "ib_err.h"
#include "pl_cluster.h"
#include "pl_trace.h"
}
#include "test_support.h"

namespace {

struct Rng { // the tests' own seeded stream (splitmix64, ib_rand.h)
    uint64_t x;
    uint64_t next() { return ib_splitmix64(&x); }
    unsigned below(unsigned n) { return (unsigned)(next() % n); }
};

struct Pipe {
    struct pl_cluster *c = nullptr;
    char why[256] = "";
    explicit Pipe(const struct pl_cluster_opts *o = nullptr) { EXPECT_EQ(pl_cluster_new(o, &c, why, sizeof why), 0) << why; }
    ~Pipe() { pl_cluster_free(c); }
    void add(uint32_t tid, uint64_t addr, unsigned times = 1, enum pl_src src = PL_SRC_REMOTE)
    {
        struct pl_sample s = {tid, addr, src};
        for (unsigned i = 0; i < times; i++)
            ASSERT_EQ(pl_cluster_add(c, &s), 0);
    }
};

struct Result {
    struct pl_cluster_result r = {};
    ~Result() { pl_cluster_result_free(&r); }
    // tid -> cluster index (-1: unclustered)
    std::map<uint32_t, int> by_tid() const
    {
        std::map<uint32_t, int> m;
        for (unsigned i = 0; i < r.nthreads; i++)
            m[r.thread[i].tid] = r.thread[i].cluster;
        return m;
    }
};

void run(Pipe &p, Result &res)
{
    char why[256] = "";
    ASSERT_EQ(pl_cluster_run(p.c, &res.r, why, sizeof why), 0) << why;
}

// Synthetic trace: groups of threads each sharing 8 private lines, 4 lines shared by all threads, per-thread
// private noise lines (noise_pct of the remote samples), and local samples (which must not count).  Thread t is
// in group t / per; its tid is tids[t].
struct Synth {
    unsigned groups, per, noise_pct;
    uint64_t samples, seed;
    std::vector<uint32_t> tids;
};

void feed(Pipe &p, const Synth &s)
{
    Rng g{s.seed};
    unsigned T = s.groups * s.per;
    std::vector<uint64_t> group_line, global_line, noise_line;
    auto line = [&](uint64_t base) { return base + (uint64_t)g.below(1u << 20) * 64; };
    for (unsigned k = 0; k < s.groups * 8; k++)
        group_line.push_back(line(0x10000000ULL + (uint64_t)(k / 8) * 0x10000000ULL));
    for (unsigned k = 0; k < 4; k++)
        global_line.push_back(line(0x700000000ULL));
    for (unsigned k = 0; k < T * 64; k++)
        noise_line.push_back(line(0x800000000ULL + (uint64_t)(k / 64) * 0x10000000ULL));
    for (uint64_t i = 0; i < s.samples; i++) {
        unsigned t = g.below(T), grp = t / s.per;
        uint64_t a;
        enum pl_src src = PL_SRC_REMOTE;
        unsigned kind = g.below(100);
        if (g.below(10) == 0) { // a local access to shared data: never counted
            src = PL_SRC_LOCAL;
            a = global_line[g.below(4)];
        } else if (kind < s.noise_pct) {
            a = noise_line[t * 64 + g.below(64)];
        } else if (g.below(5) == 0) {
            a = global_line[g.below(4)];
        } else {
            a = group_line[grp * 8 + g.below(8)];
        }
        p.add(s.tids[t], a + g.below(64), 1, src);
    }
}

std::vector<uint32_t> plain_tids(unsigned T)
{
    std::vector<uint32_t> v;
    for (unsigned t = 0; t < T; t++)
        v.push_back(1000 + t);
    return v;
}

// Per synthetic thread t (in true order): its cluster label (unclustered: a label of its own).
std::vector<int> labels(const Result &res, const Synth &s)
{
    std::map<uint32_t, int> m = res.by_tid();
    std::vector<int> l;
    for (unsigned t = 0; t < s.tids.size(); t++) {
        auto it = m.find(s.tids[t]);
        l.push_back(it == m.end() || it->second < 0 ? 100000 + (int)t : it->second);
    }
    return l;
}

std::vector<int> truth(const Synth &s)
{
    std::vector<int> l;
    for (unsigned t = 0; t < s.tids.size(); t++)
        l.push_back((int)(t / s.per));
    return l;
}

double synth_ari(const Synth &s, const struct pl_cluster_opts *o)
{
    Pipe p(o);
    feed(p, s);
    Result res;
    run(p, res);
    std::vector<int> a = labels(res, s), b = truth(s);
    return pl_ari(a.data(), b.data(), (unsigned)a.size());
}

// The chips of synthetic threads in true order.
std::vector<int> synth_chips(const Synth &s, unsigned nchips, std::vector<int> *lab = nullptr,
                             const struct pl_cluster_opts *o = nullptr)
{
    Pipe p(o);
    feed(p, s);
    Result res;
    run(p, res);
    std::vector<int> chip(res.r.nthreads);
    char why[256] = "";
    EXPECT_EQ(pl_cluster_result_chips(&res.r, nchips, nullptr, chip.data(), why, sizeof why), 0) << why;
    std::map<uint32_t, int> by;
    for (unsigned i = 0; i < res.r.nthreads; i++)
        by[res.r.thread[i].tid] = chip[i];
    std::vector<int> out;
    for (uint32_t tid : s.tids)
        out.push_back(by[tid]);
    if (lab)
        *lab = labels(res, s);
    return out;
}

void expect_grouping(unsigned groups, unsigned per, uint64_t samples)
{
    for (uint64_t seed = 1; seed <= 5; seed++) {
        Synth s{groups, per, 10, samples, seed, plain_tids(groups * per)};
        std::vector<int> lab1;
        std::vector<int> chips1 = synth_chips(s, groups, &lab1);
        std::vector<int> tr = truth(s);
        EXPECT_DOUBLE_EQ(pl_ari(lab1.data(), tr.data(), (unsigned)tr.size()), 1.0) << "seed " << seed;
        // each group alone on its chip (as many chips as groups)
        EXPECT_DOUBLE_EQ(pl_ari(chips1.data(), tr.data(), (unsigned)tr.size()), 1.0) << "seed " << seed;
        // the same trace with the tids renamed by a seeded shuffle (scanned in another order): the same clusters
        // and the same threads together on a chip
        Rng g{seed * 77};
        std::vector<uint32_t> perm = s.tids;
        for (size_t i = perm.size() - 1; i > 0; i--)
            std::swap(perm[i], perm[g.below((unsigned)i + 1)]);
        Synth s2 = s;
        s2.tids = perm;
        std::vector<int> lab2;
        std::vector<int> chips2 = synth_chips(s2, groups, &lab2);
        // the paper's pass runs in tid order: the same partitions, maybe numbered in another order
        EXPECT_DOUBLE_EQ(pl_ari(lab2.data(), lab1.data(), (unsigned)lab1.size()), 1.0) << "seed " << seed;
        EXPECT_DOUBLE_EQ(pl_ari(chips2.data(), chips1.data(), (unsigned)chips1.size()), 1.0) << "seed " << seed;
    }
}

TEST(PlaceCluster, FourGroupsOfFourFoundWithAriOne) { expect_grouping(4, 4, 200000); }

TEST(PlaceCluster, TwoGroupsOfSixteenFoundWithAriOne) { expect_grouping(2, 16, 400000); }

// --- the paper's arithmetic (§4.4.1) ---

TEST(PlaceCluster, SimilarityIsTheDotProductWithSmallEntriesIgnored)
{
    uint16_t a[4] = {201, 0, 0, 0}, b[4] = {201, 0, 0, 0};
    EXPECT_EQ(pl_cluster_similarity(a, b, 4, 3), 40401u); // one entry > 200: above 40000
    uint16_t c[4] = {145, 145, 0, 0};
    EXPECT_EQ(pl_cluster_similarity(c, c, 4, 3), 42050u); // two entries of 145: above 40000
    uint16_t d[4] = {2, 255, 7, 1}, e[4] = {255, 2, 3, 255};
    EXPECT_EQ(pl_cluster_similarity(d, e, 4, 3), 21u); // 2 and 1 count as 0; only 7 x 3
    EXPECT_EQ(pl_cluster_similarity(d, e, 4, 1), 2u * 255 + 255u * 2 + 21 + 255);
}

// Threads 1 and 2 share line A n times each; threads 3 and 4 have a private line each, so A is in exactly half of
// the 4 threads (kept).  Similar when n * n > 40000.
static Result *pair_on(unsigned n1, unsigned n2, unsigned n3 = 0, const struct pl_cluster_opts *o = nullptr)
{
    Pipe p(o);
    p.add(1, 0x1000, n1);
    p.add(2, 0x1000 + 8, n2); // the same 64-byte region
    p.add(3, 0x1000, n3);
    p.add(3, 0x900000, 10);
    p.add(4, 0xa00000, 10);
    Result *res = new Result;
    run(p, *res);
    return res;
}

TEST(PlaceCluster, PaperThresholdOnPipeline)
{
    {
        std::unique_ptr<Result> r(pair_on(201, 201));
        EXPECT_DOUBLE_EQ(r->r.threshold, 40000.0);
        ASSERT_EQ(r->r.nclusters, 1u);
        EXPECT_EQ(r->r.cluster[0].n, 2u);
        EXPECT_EQ(r->r.nglobal, 0u); // in 2 of 4 threads: exactly half, kept
        std::map<uint32_t, int> m = r->by_tid();
        EXPECT_EQ(m[1], 0);
        EXPECT_EQ(m[2], 0);
        EXPECT_EQ(m[3], -1);
        EXPECT_EQ(m[4], -1);
        EXPECT_EQ(r->r.nunclustered, 2u);
    }
    {
        std::unique_ptr<Result> r(pair_on(200, 200)); // 40000: not above the threshold
        EXPECT_EQ(r->r.nclusters, 0u);
        EXPECT_EQ(r->r.nunclustered, 4u);
    }
    {
        std::unique_ptr<Result> r(pair_on(201, 2)); // 2 is below the small cut: nothing shared
        EXPECT_EQ(r->r.nclusters, 0u);
    }
}

TEST(PlaceCluster, ThresholdScalesWithCounterWidth)
{
    struct pl_cluster_opts o = {};
    o.bits = 4;
    std::unique_ptr<Result> r(pair_on(12, 12, 0, &o)); // 40000 * (15/255)^2 = 138.4; 12 * 12 = 144
    EXPECT_NEAR(r->r.threshold, 40000.0 * 225 / 65025, 1e-9);
    EXPECT_EQ(r->r.nclusters, 1u);
    std::unique_ptr<Result> r2(pair_on(11, 11, 0, &o)); // 121
    EXPECT_EQ(r2->r.nclusters, 0u);
}

TEST(PlaceCluster, LineInMoreThanHalfTheThreadsIsRemoved)
{
    // line A in threads 1, 2, 3 of 4: global, removed, so 3 does not join 1 and 2 through it; line B in 1 and 2
    // (exactly half): kept, and 1 and 2 cluster through it
    Pipe p;
    p.add(1, 0x1000, 255);
    p.add(2, 0x1000, 255);
    p.add(3, 0x1000, 255);
    p.add(1, 0x2000, 210);
    p.add(2, 0x2000, 210);
    p.add(4, 0x3000, 50);
    Result r;
    run(p, r);
    EXPECT_EQ(r.r.nglobal, 1u);
    ASSERT_EQ(r.r.nclusters, 1u);
    std::map<uint32_t, int> m = r.by_tid();
    EXPECT_EQ(m[1], 0);
    EXPECT_EQ(m[2], 0);
    EXPECT_EQ(m[3], -1);
    EXPECT_EQ(m[4], -1);
    // the paper's pass: by tid; 2 joined 1 with 210^2 (A left out), 3 compared with 1 only (0)
    EXPECT_EQ(r.r.thread[1].tid, 2u);
    EXPECT_EQ(r.r.thread[1].rep_similarity, 210u * 210);
    EXPECT_EQ(r.r.thread[2].rep_similarity, 0u);
}

TEST(PlaceCluster, CountersSaturate)
{
    for (unsigned bits : {8u, 4u, 12u, 1u}) {
        struct pl_cluster_opts o = {};
        o.bits = bits;
        Pipe p(&o);
        p.add(7, 0x4000, 5000);
        unsigned e = pl_cluster_slot(p.c, 0x4000);
        EXPECT_EQ(pl_cluster_counter(p.c, 7, e), std::min(5000u, (1u << bits) - 1)) << bits << " bits";
    }
    struct pl_cluster_opts o = {};
    o.bits = 17;
    struct pl_cluster *c = nullptr;
    char why[128] = "";
    EXPECT_EQ(pl_cluster_new(&o, &c, why, sizeof why), -EINVAL);
    EXPECT_STREQ(why, "counter width 17: 1-16 bits expected");
}

TEST(PlaceCluster, OnlyRemoteAndUnknownSamplesCount)
{
    Pipe p;
    p.add(1, 0x1000, 5, PL_SRC_REMOTE);
    p.add(1, 0x1000, 3, PL_SRC_UNKNOWN);
    p.add(1, 0x1000, 4, PL_SRC_LOCAL);
    p.add(2, 0x1000, 6, PL_SRC_MEMORY);
    struct pl_cluster_stats st = pl_cluster_counts(p.c);
    EXPECT_EQ(st.samples, 18u);
    EXPECT_EQ(st.counted, 8u);
    EXPECT_EQ(pl_cluster_counter(p.c, 1, pl_cluster_slot(p.c, 0x1000)), 8u);
    EXPECT_EQ(pl_cluster_counter(p.c, 2, pl_cluster_slot(p.c, 0x1000)), 0u);
    Result r;
    run(p, r);
    EXPECT_EQ(r.r.nthreads, 2u); // thread 2 is known (it gets a chip) though nothing of it counted
}

// Two addresses in different regions on the same filter entry.
static void colliding(const struct pl_cluster *c, uint64_t a, uint64_t *b)
{
    unsigned e = pl_cluster_slot(c, a);
    for (uint64_t x = a + 64;; x += 64)
        if (pl_cluster_slot(c, x) == e) {
            *b = x;
            return;
        }
}

TEST(PlaceCluster, FilterKeepsTheFirstRegionOfAnEntry)
{
    Pipe p;
    uint64_t a = 0x10000, b = 0;
    colliding(p.c, a, &b);
    unsigned e = pl_cluster_slot(p.c, a);
    p.add(1, a + 5, 4);   // claims entry e for a's region
    p.add(2, b, 3);       // another region on e: discarded
    EXPECT_EQ(pl_cluster_counter(p.c, 2, e), 0u);
    EXPECT_EQ(pl_cluster_counts(p.c).collided, 3u);
    p.add(2, a + 63, 2);  // a's region, claimed by thread 1: counts for thread 2 too
    EXPECT_EQ(pl_cluster_counter(p.c, 2, e), 2u);
    EXPECT_EQ(pl_cluster_counter(p.c, 1, e), 4u);
    EXPECT_EQ(pl_cluster_counts(p.c).recorded, 6u);
}

TEST(PlaceCluster, FilterLimitPerThread)
{
    struct pl_cluster_opts o = {};
    o.filter_limit = 2;
    Pipe p(&o);
    // three regions on three different entries
    std::vector<uint64_t> addr;
    std::set<unsigned> used;
    for (uint64_t x = 0x40000; addr.size() < 3; x += 64)
        if (used.insert(pl_cluster_slot(p.c, x)).second)
            addr.push_back(x);
    p.add(1, addr[0]);
    p.add(1, addr[1]);
    p.add(1, addr[2]); // a third free entry: over thread 1's limit, discarded
    EXPECT_EQ(pl_cluster_counter(p.c, 1, pl_cluster_slot(p.c, addr[2])), 0u);
    EXPECT_EQ(pl_cluster_counts(p.c).limited, 1u);
    p.add(2, addr[2]);    // thread 2 may claim it ...
    p.add(1, addr[2], 2); // ... and then thread 1's samples there count (claimed, same region)
    EXPECT_EQ(pl_cluster_counter(p.c, 2, pl_cluster_slot(p.c, addr[2])), 1u);
    EXPECT_EQ(pl_cluster_counter(p.c, 1, pl_cluster_slot(p.c, addr[2])), 2u);
    Result r;
    run(p, r);
    EXPECT_EQ(r.r.filter_limit, 2u);
    // the default: entries / 8
    Pipe d;
    Result rd;
    run(d, rd);
    EXPECT_EQ(rd.r.filter_limit, 32u);
    o.filter_limit = 0;
    o.entries = 16;
    Pipe d16(&o);
    Result r16;
    run(d16, r16);
    EXPECT_EQ(r16.r.filter_limit, 2u);
}

// The gaps between taken samples (counted ones only), from the stats after each sample.
static std::vector<uint64_t> gaps(unsigned n, int jitter, uint64_t seed, unsigned samples)
{
    struct pl_cluster_opts o = {};
    o.sample_n = n;
    o.jitter_pct = jitter;
    o.seed = seed;
    Pipe p(&o);
    std::vector<uint64_t> g;
    uint64_t last = 0, taken = 0;
    for (unsigned i = 1; i <= samples; i++) {
        p.add(1, 0x1000, 1, PL_SRC_REMOTE);
        p.add(1, 0x1000, 1, PL_SRC_LOCAL); // not counted: never moves the countdown
        uint64_t t = pl_cluster_counts(p.c).taken;
        if (t != taken) {
            g.push_back(i - last);
            last = i, taken = t;
        }
    }
    return g;
}

TEST(PlaceCluster, TemporalSamplingOneInNWithJitter)
{
    std::vector<uint64_t> g = gaps(100, -1, 1, 100000); // no jitter
    EXPECT_EQ(g.size(), 1000u); // exactly every 100th
    EXPECT_EQ(*std::min_element(g.begin(), g.end()), 100u);
    EXPECT_EQ(*std::max_element(g.begin(), g.end()), 100u);
    g = gaps(100, 10, 1, 100000); // gaps 90-110, uniform
    uint64_t lo = *std::min_element(g.begin(), g.end()), hi = *std::max_element(g.begin(), g.end());
    EXPECT_EQ(lo, 90u);
    EXPECT_EQ(hi, 110u);
    EXPECT_GE(g.size(), 990u); // mean gap 100: 1000 +- 3 standard deviations (about 2 each)
    EXPECT_LE(g.size(), 1010u);
    EXPECT_EQ(gaps(100, 10, 1, 100000), g);  // seeded: the same again
    EXPECT_NE(gaps(100, 10, 2, 100000), g);  // another seed, other gaps
    EXPECT_EQ(gaps(1, 10, 1, 1000).size(), 1000u); // N = 1: every sample, whatever the jitter
}

// data_sharing is Algorithm 1's DataSharing (Tang et al. ISCA'11 §5.1): the share of ALL sampled accesses (any
// source) on lines two or more threads touch; the old figure, the share of recorded remote samples on shared entries,
// is remote_shared, close to 1 by construction when threads share at all.
TEST(PlaceCluster, DataSharingIsTheShareOfAllSamplesOnSharedLines)
{
    Pipe p;
    p.add(1, 0x1000, 10);
    p.add(2, 0x1010, 10); // the same 64-byte line
    p.add(1, 0x2000, 20);
    p.add(3, 0x3000, 7, PL_SRC_LOCAL);   // not recorded, but an access all the same
    p.add(1, 0x4000, 953, PL_SRC_LOCAL); // thread 1's private working set, served locally
    Result r;
    run(p, r);
    EXPECT_EQ(r.r.stats.recorded, 40u);
    EXPECT_DOUBLE_EQ(r.r.remote_shared, 0.5);
    EXPECT_DOUBLE_EQ(r.r.data_sharing, 20.0 / 1000);
    EXPECT_EQ(r.r.lines, 4u);
    EXPECT_EQ(r.r.shared_lines, 1u);
    EXPECT_EQ(r.r.lines_untracked, 0u);
    // remote samples alone on shared lines: remote_shared 1 whatever the local traffic, data_sharing not
    Pipe q;
    q.add(1, 0x1000, 10);
    q.add(2, 0x1000, 10);
    q.add(1, 0x9000, 180, PL_SRC_LOCAL);
    Result rq;
    run(q, rq);
    EXPECT_DOUBLE_EQ(rq.r.remote_shared, 1.0);
    EXPECT_DOUBLE_EQ(rq.r.data_sharing, 0.1);
    Pipe none;
    Result rn;
    run(none, rn);
    EXPECT_EQ(rn.r.nthreads, 0u);
    EXPECT_DOUBLE_EQ(rn.r.data_sharing, 0.0);
    // a bound on the lines tracked: past it, new lines are counted as untracked and left out of the share
    struct pl_cluster_opts o = {};
    o.max_lines = 2;
    Pipe b(&o);
    b.add(1, 0x1000, 5);
    b.add(2, 0x1000, 5);
    b.add(1, 0x2000, 10);
    b.add(1, 0x3000, 4);
    Result rb;
    run(b, rb);
    EXPECT_EQ(rb.r.lines, 2u);
    EXPECT_EQ(rb.r.lines_untracked, 4u);
    EXPECT_DOUBLE_EQ(rb.r.data_sharing, 0.5);
}

// Tam et al. EuroSys'07 §4.4.2: the one pass compares each thread with the known representatives only.  A chain A-B,
// B-C above the threshold with A-C = 0 (tids 1 < 2 < 3; two bystanders 4, 5 keep the chain's lines under the global
// rule): A founds a cluster, B joins A, C is not similar to A, the representative, so it founds its own and stays
// alone (unclustered).  The pre-sorted pass this replaced put B (the most total sharing) first and all three together.
TEST(PlaceCluster, ThreeThreadChainJoinsInThePapersOrder)
{
    Pipe p;
    p.add(1, 0x1000, 210);
    p.add(2, 0x1000, 210);
    p.add(2, 0x2000, 210);
    p.add(3, 0x2000, 210);
    p.add(4, 0x7000, 50);
    p.add(5, 0x8000, 50);
    Result r;
    run(p, r);
    EXPECT_EQ(r.r.nglobal, 0u);
    EXPECT_TRUE(r.r.triggered);
    std::map<uint32_t, int> m = r.by_tid();
    ASSERT_EQ(r.r.nclusters, 1u);
    EXPECT_EQ(m[1], 0);
    EXPECT_EQ(m[2], 0);
    EXPECT_EQ(m[3], -1);
    EXPECT_EQ(m[4], -1);
    EXPECT_EQ(r.r.thread[r.r.cluster[0].member[0]].tid, 1u); // A represents
    // 2 compared with 1; 3 with 1; 4 with 1 and 3; 5 with 1, 3 and 4 (each alone founds one): 7, not C(5, 2) = 10
    EXPECT_EQ(r.r.comparisons, 7u);
}

// Tam et al. EuroSys'07 §4.2: clustering is activated only when the remote share is above the trigger (20 %).  Without
// a measured stall share the figure is the share of remote samples among those whose source is known.
TEST(PlaceCluster, PhaseOneTriggerOnTheRemoteShare)
{
    auto feed2 = [](Pipe &p, unsigned local) {
        p.add(1, 0x1000, 210);
        p.add(2, 0x1000, 210);
        p.add(3, 0x5000, 50);
        p.add(4, 0x6000, 50);
        p.add(1, 0x9000, local, PL_SRC_LOCAL);
    };
    { // 520 remote of 2600 known: 0.20, not above 0.20: no clustering, every thread unclustered
        Pipe p;
        feed2(p, 2080);
        Result r;
        run(p, r);
        EXPECT_DOUBLE_EQ(r.r.remote_share, 0.2);
        EXPECT_FALSE(r.r.triggered);
        EXPECT_EQ(r.r.nclusters, 0u);
        EXPECT_EQ(r.r.nunclustered, 4u);
        EXPECT_EQ(r.r.comparisons, 0u);
    }
    { // 520 of 2599: above
        Pipe p;
        feed2(p, 2079);
        Result r;
        run(p, r);
        EXPECT_TRUE(r.r.triggered);
        EXPECT_EQ(r.r.nclusters, 1u);
    }
    { // a measured stall share overrides the estimate; a negative trigger always clusters
        struct pl_cluster_opts o = {};
        o.have_stall_share = true, o.stall_share = 0.35;
        Pipe p(&o);
        feed2(p, 100000);
        Result r;
        run(p, r);
        EXPECT_DOUBLE_EQ(r.r.remote_share, 0.35);
        EXPECT_TRUE(r.r.triggered);
        struct pl_cluster_opts n = {};
        n.trigger = -1;
        Pipe q(&n);
        feed2(q, 100000);
        Result rq;
        run(q, rq);
        EXPECT_FALSE(rq.r.remote_share > 0.2);
        EXPECT_TRUE(rq.r.triggered);
        EXPECT_EQ(rq.r.nclusters, 1u);
    }
    { // no sample says where it was served: unknown, clustering goes ahead
        Pipe p;
        struct pl_sample s = {1, 0x1000, PL_SRC_UNKNOWN};
        for (int i = 0; i < 10; i++)
            ASSERT_EQ(pl_cluster_add(p.c, &s), 0);
        Result r;
        run(p, r);
        EXPECT_TRUE(std::isnan(r.r.remote_share));
        EXPECT_TRUE(r.r.triggered);
    }
}

// Tam et al. EuroSys'07 §4.1: the repeat loop.  A fake process of two pairs sharing data: before a migration 60 % of
// its samples are remote; after the first, only the pair the migration did not fix stays remote (30 %), after the
// second none (10 %).  The loop clusters and migrates while phase 1 is triggered and stops at the round it is not.
struct FakeProc {
    unsigned migrations = 0;
    std::vector<unsigned> rounds_seen;
    int fail_at = -1;
};

int fake_sample(void *ctx, unsigned round, pl_sample_fn fn, void *fctx, char *why, size_t len)
{
    FakeProc *f = (FakeProc *)ctx;
    f->rounds_seen.push_back(round);
    if ((int)round == f->fail_at)
        return ib_why(why, len, -ESRCH, "process gone");
    unsigned remote = f->migrations == 0 ? 60 : f->migrations == 1 ? 30 : 10; // % of samples
    for (unsigned i = 0; i < 1000; i++) {
        bool rem = i % 100 < remote;
        uint32_t tid = 1 + i % 4;                    // pairs {1, 2} and {3, 4}
        uint64_t line = tid <= 2 ? 0x1000 : 0x2000;  // each pair's shared line
        struct pl_sample s = {tid, rem ? line : 0x100000 + tid * 0x1000, rem ? PL_SRC_REMOTE : PL_SRC_LOCAL};
        int rc = fn(fctx, &s);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int fake_migrate(void *ctx, unsigned, const struct pl_cluster_result *r, char *, size_t)
{
    FakeProc *f = (FakeProc *)ctx;
    EXPECT_TRUE(r->triggered);
    f->migrations++;
    return 0;
}

TEST(PlaceCluster, RepeatLoopRunsWhilePhaseOneIsTriggered)
{
    struct pl_cluster_opts o = {};
    o.threshold = 100; // the fake's few samples: similar at 150 x 150 per pair
    FakeProc f;
    struct pl_cluster_round_cb cb = {fake_sample, fake_migrate, &f};
    struct pl_cluster_result last;
    struct pl_cluster_round_info info[5];
    unsigned rounds = 0;
    char why[256] = "";
    ASSERT_EQ(pl_cluster_loop(&o, &cb, 5, &last, info, &rounds, why, sizeof why), 0) << why;
    ASSERT_EQ(rounds, 3u); // 0.6 and 0.3: migrate; 0.1: stop
    EXPECT_EQ(f.migrations, 2u);
    EXPECT_DOUBLE_EQ(info[0].remote_share, 0.6);
    EXPECT_TRUE(info[0].migrated);
    EXPECT_EQ(info[0].nclusters, 2u);
    EXPECT_DOUBLE_EQ(info[1].remote_share, 0.3);
    EXPECT_TRUE(info[1].migrated);
    EXPECT_DOUBLE_EQ(info[2].remote_share, 0.1);
    EXPECT_FALSE(info[2].triggered);
    EXPECT_FALSE(info[2].migrated);
    EXPECT_FALSE(last.triggered);
    EXPECT_EQ(last.nthreads, 4u);
    pl_cluster_result_free(&last);
    // at most max_rounds, even while triggered
    FakeProc g;
    cb.ctx = &g;
    ASSERT_EQ(pl_cluster_loop(&o, &cb, 1, &last, info, &rounds, why, sizeof why), 0) << why;
    EXPECT_EQ(rounds, 1u);
    EXPECT_EQ(g.migrations, 1u);
    pl_cluster_result_free(&last);
    // a source failing in a later round fails the loop with its reason, nothing left to free
    FakeProc h;
    h.fail_at = 1;
    cb.ctx = &h;
    EXPECT_EQ(pl_cluster_loop(&o, &cb, 5, &last, info, &rounds, why, sizeof why), -ESRCH);
    EXPECT_STREQ(why, "process gone");
    EXPECT_EQ(last.thread, nullptr);
    EXPECT_EQ(pl_cluster_loop(&o, &cb, 0, &last, info, &rounds, why, sizeof why), -EINVAL);
}

// --- clusters onto chips (§4.5) ---

struct Chips {
    std::vector<std::vector<unsigned>> cl;
    std::vector<unsigned> un;
    std::vector<int> chip;
    int rc = 0;
    char why[256] = "";
    Chips(std::vector<std::vector<unsigned>> c, std::vector<unsigned> u, unsigned nthreads, unsigned nchips,
          const unsigned *cap = nullptr)
        : cl(std::move(c)), un(std::move(u)), chip(nthreads, -9)
    {
        std::vector<struct pl_cluster_group> g;
        for (auto &m : cl)
            g.push_back({m.data(), (unsigned)m.size()});
        rc = pl_cluster_chips(g.data(), (unsigned)g.size(), un.data(), (unsigned)un.size(), nthreads, nchips, cap,
                              chip.data(), why, sizeof why);
    }
};

TEST(PlaceCluster, ChipsBalancedClustersWhole)
{
    Chips c({{0, 1, 2, 3}, {4, 5, 6, 7}}, {}, 8, 2);
    ASSERT_EQ(c.rc, 0) << c.why;
    EXPECT_EQ(c.chip, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(PlaceCluster, ChipsSpreadAClusterThatWouldUnbalance)
{
    // 10 threads on 2 chips: quota 5.  A (6) exceeds it: spread 3 + 3; then B (2) onto chip 0 (a tie: the lower
    // number), C (2) onto chip 1.
    Chips c({{0, 1, 2, 3, 4, 5}, {6, 7}, {8, 9}}, {}, 10, 2);
    ASSERT_EQ(c.rc, 0) << c.why;
    EXPECT_EQ(c.chip, (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 0, 1, 1}));
    // largest first whatever the order given: B, A, C gives the same
    Chips d({{6, 7}, {0, 1, 2, 3, 4, 5}, {8, 9}}, {}, 10, 2);
    EXPECT_EQ(d.chip, c.chip);
    // the threads renamed (t -> 9 - t): the same assignment, renamed
    Chips e({{9, 8, 7, 6, 5, 4}, {3, 2}, {1, 0}}, {}, 10, 2);
    for (unsigned t = 0; t < 10; t++)
        EXPECT_EQ(e.chip[9 - t], c.chip[t]) << t;
}

TEST(PlaceCluster, ChipsUnclusteredThreadsBalance)
{
    // 7 threads, 2 chips, quota 4: the cluster of 3 onto chip 0, then 3, 4, 5 onto chip 1 (more free places), 6
    // onto chip 0 (1 free place each: the lower number)
    Chips c({{0, 1, 2}}, {3, 4, 5, 6}, 7, 2);
    ASSERT_EQ(c.rc, 0) << c.why;
    EXPECT_EQ(c.chip, (std::vector<int>{0, 0, 0, 1, 1, 1, 0}));
    // capacities 2:1:1, 8 threads: quotas 4, 2, 2
    unsigned cap[3] = {2, 1, 1};
    Chips d({{0, 1, 2, 3}, {4, 5}}, {6, 7}, 8, 3, cap);
    ASSERT_EQ(d.rc, 0) << d.why;
    EXPECT_EQ(d.chip, (std::vector<int>{0, 0, 0, 0, 1, 1, 2, 2}));
}

TEST(PlaceCluster, ChipsRejectBadInput)
{
    EXPECT_EQ(Chips({{0, 1}}, {}, 2, 0).rc, -EINVAL);
    Chips twice({{0, 1}}, {1}, 2, 2);
    EXPECT_EQ(twice.rc, -EINVAL);
    EXPECT_STREQ(twice.why, "thread 1: named twice");
    Chips missing({{0, 1}}, {}, 3, 2);
    EXPECT_STREQ(missing.why, "thread 2: in no cluster and not unclustered");
    unsigned cap[2] = {1, 0};
    EXPECT_EQ(Chips({{0, 1}}, {}, 2, 2, cap).rc, -EINVAL);
}

// --- the adjusted Rand index ---

TEST(PlaceCluster, AdjustedRandIndexByHand)
{
    // a = {0,0,1,1}, b = {0,0,1,2}: pairs together in both 1, in a 2, in b 1, of 6: expected 2 * 1 / 6 = 1/3,
    // max 3/2: (1 - 1/3) / (3/2 - 1/3) = 4/7
    int a[4] = {0, 0, 1, 1}, b[4] = {0, 0, 1, 2};
    EXPECT_NEAR(pl_ari(a, b, 4), 4.0 / 7, 1e-12);
    // {0,0,0,1,1,1} vs {0,0,1,1,2,2}: both 2, in a 6, in b 3, of 15: (2 - 1.2) / (4.5 - 1.2) = 8/33
    int c[6] = {0, 0, 0, 1, 1, 1}, d[6] = {0, 0, 1, 1, 2, 2};
    EXPECT_NEAR(pl_ari(c, d, 6), 8.0 / 33, 1e-12);
    int e[6] = {5, 5, 5, -1, -1, -1}; // the same partition, other labels
    EXPECT_DOUBLE_EQ(pl_ari(c, e, 6), 1.0);
    int single[3] = {0, 1, 2}, one[3] = {4, 4, 4};
    EXPECT_DOUBLE_EQ(pl_ari(single, single, 3), 1.0);
    EXPECT_DOUBLE_EQ(pl_ari(one, one, 3), 1.0);
    EXPECT_DOUBLE_EQ(pl_ari(single, one, 3), 0.0);
}

// --- the trace source ---

struct Collect {
    std::vector<struct pl_sample> s;
    int stop_at = -1;
    static int fn(void *ctx, const struct pl_sample *x)
    {
        Collect *c = static_cast<Collect *>(ctx);
        if ((int)c->s.size() == c->stop_at)
            return -EINTR;
        c->s.push_back(*x);
        return 0;
    }
};

static std::string write(const ib_test::TempDir &d, const char *name, const std::string &text)
{
    std::string p = d.path() + "/" + name;
    std::ofstream(p) << text;
    return p;
}

TEST(PlaceCluster, TraceReadsTidAddressSource)
{
    ib_test::TempDir d("cluster_trace");
    std::string p = write(d, "t.trace",
                          "# tid address [source]\n"
                          "12 0x7f00001000 remote\n"
                          "\n"
                          "  13\t7F00001040\n"
                          "4294967295 ffffffffffffffff local\n"
                          "13 0x0 memory\n"
                          "   # an indented comment\n"
                          "12 0X10 unknown\r\n");
    Collect c;
    char why[256] = "";
    ASSERT_EQ(pl_trace_read(p.c_str(), Collect::fn, &c, why, sizeof why), 0) << why;
    ASSERT_EQ(c.s.size(), 5u);
    EXPECT_EQ(c.s[0].tid, 12u);
    EXPECT_EQ(c.s[0].addr, 0x7f00001000u);
    EXPECT_EQ(c.s[0].src, PL_SRC_REMOTE);
    EXPECT_EQ(c.s[1].addr, 0x7f00001040u);
    EXPECT_EQ(c.s[1].src, PL_SRC_UNKNOWN);
    EXPECT_EQ(c.s[2].tid, 4294967295u);
    EXPECT_EQ(c.s[2].addr, UINT64_MAX);
    EXPECT_EQ(c.s[2].src, PL_SRC_LOCAL);
    EXPECT_EQ(c.s[3].src, PL_SRC_MEMORY);
    EXPECT_EQ(c.s[4].addr, 0x10u);
    EXPECT_STREQ(pl_src_name(PL_SRC_REMOTE), "remote");
    EXPECT_EQ(pl_src_parse("memory"), (int)PL_SRC_MEMORY);
    EXPECT_EQ(pl_src_parse("Remote"), -1);
    // the pipeline as the callback
    struct pl_cluster *pc = nullptr;
    ASSERT_EQ(pl_cluster_new(nullptr, &pc, why, sizeof why), 0);
    EXPECT_EQ(pl_trace_read(p.c_str(), pl_cluster_add_fn, pc, why, sizeof why), 0) << why;
    EXPECT_EQ(pl_cluster_counts(pc).samples, 5u);
    EXPECT_EQ(pl_cluster_counts(pc).counted, 3u);
    pl_cluster_free(pc);
}

TEST(PlaceCluster, TraceRejectsBadLinesWithTheirNumber)
{
    ib_test::TempDir d("cluster_trace_bad");
    struct Case {
        const char *text, *why;
    } cases[] = {
        {"1 0x10\nx1 0x20\n", "bad:2: 'x1': a decimal thread id (0-4294967295) expected"},
        {"# c\n1 0xZZ\n", "bad:2: '0xZZ': a hexadecimal address (at most 64 bits) expected"},
        {"1 10000000000000000\n", "bad:1: '10000000000000000': a hexadecimal address (at most 64 bits) expected"},
        {"4294967296 10\n", "bad:1: '4294967296': a decimal thread id (0-4294967295) expected"},
        {"1 10 l3\n", "bad:1: 'l3': unknown, local, remote or memory expected"},
        {"\n\n1 10 remote extra\n", "bad:3: 'tid address [source]' expected, more than 3 fields"},
        {"1\n", "bad:1: 'tid address [source]' expected, 1 field"},
        {"-1 10\n", "bad:1: '-1': a decimal thread id (0-4294967295) expected"},
        {"1 0x\n", "bad:1: '0x': a hexadecimal address (at most 64 bits) expected"},
    };
    for (const Case &k : cases) {
        std::string p = write(d, "bad", k.text);
        Collect c;
        char why[256] = "";
        EXPECT_EQ(pl_trace_read(p.c_str(), Collect::fn, &c, why, sizeof why), -EINVAL) << k.text;
        EXPECT_EQ(std::string(why), d.path() + "/" + k.why) << k.text;
    }
    Collect c;
    char why[256] = "";
    EXPECT_EQ(pl_trace_read((d.path() + "/none").c_str(), Collect::fn, &c, why, sizeof why), -ENOENT);
    // the consumer stops: its value comes back
    std::string p = write(d, "ok", "1 10\n2 20\n3 30\n");
    c.stop_at = 2;
    EXPECT_EQ(pl_trace_read(p.c_str(), Collect::fn, &c, why, sizeof why), -EINTR);
    EXPECT_EQ(c.s.size(), 2u);
}

// perf2trace's expected outputs (tests/perf2trace.sh) are traces this reader takes
TEST(PlaceCluster, TraceReadsPerf2traceOutput)
{
    for (const char *name : {"perf2trace-mem.expected", "perf2trace-script.expected"}) {
        Collect c;
        char why[256] = "";
        std::string p = std::string(IBENCH_FIXTURES) + "/" + name;
        ASSERT_EQ(pl_trace_read(p.c_str(), Collect::fn, &c, why, sizeof why), 0) << why;
        ASSERT_FALSE(c.s.empty());
        EXPECT_EQ(c.s[0].tid, 4243u);
        EXPECT_EQ(c.s[0].addr, 0x7f3a1c000040u);
        EXPECT_EQ(c.s[0].src, PL_SRC_REMOTE);
        EXPECT_EQ(c.s.back().src, PL_SRC_UNKNOWN);
    }
}

// --- the sweep: sampling rate N x private noise share (the table in docs/placement.md) ---

TEST(PlaceCluster, SweepSamplingRateAndNoise)
{
    const unsigned ns[] = {1, 10, 100, 1000}, noises[] = {0, 25, 50, 75};
    const unsigned nseeds = 3;
    {
        double mean[4][4];
        printf("ARI, 4 groups x 4 threads, 4000000 samples, mean of %u seeds\n", nseeds);
        printf("%8s", "N \\ noise");
        for (unsigned z : noises)
            printf("  %5u %%", z);
        printf("\n");
        for (unsigned i = 0; i < 4; i++) {
            printf("%8u ", ns[i]);
            for (unsigned j = 0; j < 4; j++) {
                double sum = 0;
                for (uint64_t seed = 1; seed <= nseeds; seed++) {
                    Synth s{4, 4, noises[j], 4000000, seed, plain_tids(16)};
                    struct pl_cluster_opts o = {};
                    o.sample_n = ns[i];
                    o.seed = seed;
                    sum += synth_ari(s, &o);
                }
                mean[i][j] = sum / nseeds;
                printf("  %7.3f", mean[i][j]);
            }
            printf("\n");
        }
        EXPECT_DOUBLE_EQ(mean[0][0], 1.0);
        // monotone in both: a larger N keeps fewer samples of the same trace (smaller counters, below the absolute
        // threshold sooner); more private noise leaves fewer samples on the shared lines and fills the filter with
        // private regions
        for (unsigned i = 0; i < 4; i++)
            for (unsigned j = 0; j < 4; j++) {
                if (i + 1 < 4) {
                    EXPECT_LE(mean[i + 1][j], mean[i][j] + 1e-12) << "N " << ns[i + 1] << ", noise " << noises[j];
                }
                if (j + 1 < 4) {
                    EXPECT_LE(mean[i][j + 1], mean[i][j] + 1e-12) << "N " << ns[i] << ", noise " << noises[j + 1];
                }
            }
    }
}

} // namespace
