// test_interconnect.cpp - the interconnect SoI: spread placement on synthetic topologies, fan-out, and a real ramp
// through the engine (hub paced, responders serving) with its self-meter.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "calib.h"
#include "engine.h"
#include "machine.h"
#include "ramp.h"
#include "soi.h"
#include "test_support.h"
#include "topo.h"

extern "C" unsigned ic_fanout(unsigned responders, double x);

namespace {

constexpr uint64_t kMs = 1000000ULL;
::testing::Environment *const g_cache_env =
    ::testing::AddGlobalTestEnvironment(new ib_test::PrivateCacheEnv("interconnect"));

struct Topo {
    struct topo *t = nullptr;
    char why[256] = "";
    explicit Topo(const char *spec) { EXPECT_EQ(topo_load(&t, spec, why, sizeof why), 0) << spec << ": " << why; }
    ~Topo() { topo_destroy(t); }
};

std::string apart(const Topo &tp, int a, int b)
{
    char buf[32] = "?";
    EXPECT_EQ(topo_apart(tp.t, a, b, buf, sizeof buf), 0);
    return buf;
}

}  // namespace

TEST(TopoSpread, FarthestFirstAcrossSocketsCachesCores)
{
    struct Case {
        const char *spec;
        const char *first_apart;  // what the hub and the first responder do not share
    } cases[] = {
        {"pack:2 l3:2 core:2 pu:2", "Package"},
        {"pack:1 l3:2 core:4 pu:2", "L3"},
        {"pack:1 l3:1 core:4 pu:2", "Core"},
        {"pack:1 core:1 pu:2", "PU"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.spec);
        Topo tp(c.spec);
        ASSERT_NE(tp.t, nullptr);
        unsigned n = topo_npus(tp.t);
        std::vector<int> cpus(n + 2);
        ASSERT_EQ(topo_spread(tp.t, -1, n + 2, cpus.data()), 0);
        // the hub is the highest-numbered PU; every PU is used once before the order repeats
        EXPECT_EQ(cpus[0], topo_pu_os(tp.t, n - 1));
        EXPECT_EQ(std::set<int>(cpus.begin(), cpus.begin() + n).size(), n);
        EXPECT_EQ(cpus[n], cpus[0]);
        EXPECT_EQ(cpus[n + 1], cpus[1]);
        EXPECT_EQ(apart(tp, cpus[0], cpus[1]), c.first_apart);
    }
    // hub on CPU 0 of two sockets: responders fill the other socket first, spread over its L3s and cores before
    // any two share a core
    Topo tp("pack:2 l3:2 core:2 pu:2");
    int cpus[9];
    ASSERT_EQ(topo_spread(tp.t, 0, 9, cpus), 0);
    EXPECT_EQ(cpus[0], 0);
    for (int i = 1; i <= 8; i++)
        EXPECT_EQ(apart(tp, 0, cpus[i]), "Package") << "responder " << i << " on CPU " << cpus[i];
    EXPECT_EQ(apart(tp, cpus[1], cpus[2]), "L3");  // the second responder avoids the first one's L3
    for (int i = 1; i <= 4; i++)
        EXPECT_NE(apart(tp, cpus[i], cpus[i % 4 + 1]), "PU") << "two of the first four responders share a core";
    // bad input
    EXPECT_EQ(topo_spread(tp.t, 99, 2, cpus), -EINVAL);
    EXPECT_EQ(topo_spread(tp.t, 0, 0, cpus), -EINVAL);
    char buf[8];
    EXPECT_EQ(topo_apart(tp.t, 0, 0, buf, sizeof buf), 0);
    EXPECT_STREQ(buf, "");
    EXPECT_EQ(topo_apart(tp.t, 0, 99, buf, sizeof buf), -EINVAL);
}

TEST(Interconnect, FanoutGrowsWithIntensity)
{
    EXPECT_EQ(ic_fanout(1, 0), 1u);
    EXPECT_EQ(ic_fanout(1, 100), 1u);
    EXPECT_EQ(ic_fanout(7, 10), 1u);
    EXPECT_EQ(ic_fanout(7, 15), 2u);
    EXPECT_EQ(ic_fanout(7, 50), 4u);
    EXPECT_EQ(ic_fanout(7, 100), 7u);
    unsigned prev = 0;
    for (int x = 0; x <= 100; x += 5) {
        unsigned f = ic_fanout(15, x);
        EXPECT_GE(f, prev);
        EXPECT_LE(f, 15u);
        prev = f;
    }
}

class InterconnectRun : public ::testing::Test {
protected:
    struct machine m {};
    bool open = false;
    atomic_int stop{0};
    char why[512] = "";
    int cpus[2] = {0, 0};
    void SetUp() override
    {
        ASSERT_EQ(machine_open(&m, nullptr, why, sizeof why), 0) << why;
        open = true;
        ASSERT_EQ(topo_spread(m.topo, -1, 2, cpus), 0);
    }
    void TearDown() override
    {
        if (open)
            machine_close(&m);
    }
    struct soi_env env(unsigned n)
    {
        struct soi_env e;
        soi_env_init(&e, soi_find("interconnect"), &m, n, cpus, -1, &stop);
        return e;
    }
};

TEST_F(InterconnectRun, NeedsTwoThreads)
{
    const soi_ops *ops = soi_find("interconnect");
    ASSERT_NE(ops, nullptr);
    EXPECT_EQ(ops->min_threads, 2u);
    EXPECT_EQ(ops->placement, SOI_PLACE_SPREAD);
    struct soi_env e = env(1);
    struct soi *s = nullptr;
    EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -EINVAL);
    EXPECT_NE(strstr(why, "at least 2 threads"), nullptr) << why;
    EXPECT_EQ(s, nullptr);
}

TEST_F(InterconnectRun, RampIsPacedAndSelfMetered)
{
    const soi_ops *ops = soi_find("interconnect");
    ASSERT_NE(ops, nullptr);
    if (topo_npus(m.topo) < 2)
        GTEST_SKIP() << "one CPU: hub and responder would time-share it";
    struct soi_env e = env(2);
    struct soi *s = nullptr;
    ASSERT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), 0) << why;
    printf("peak: %s\nnote: %s\n", s->capacity_src, s->note);
    EXPECT_GT(s->capacity, 0);
    EXPECT_STREQ(s->unit, "msg/s");
    EXPECT_EQ(s->pace_lead_only, 1);
    EXPECT_NE(strstr(s->capacity_src, "measured now"), nullptr) << s->capacity_src;
    EXPECT_NE(strstr(s->note, "another"), nullptr) << s->note;
    ramp_sched r = {0, nullptr};
    const double xs[] = {0, 20, 50, 100};
    ASSERT_EQ(ramp_list(&r, xs, 4, 150 * kMs), 0);
    struct step_result res[4];
    unsigned ndone = 0;
    ASSERT_EQ(engine_run(s, &r, &stop, nullptr, res, &ndone, why, sizeof why), 0) << why;
    ASSERT_EQ(ndone, 4u);
    for (const step_result &x : res)
        printf("%5.0f %% -> %6.1f %% (%.3g msg/s, %.0f ns/round trip)\n", x.requested, x.achieved_pct, x.achieved,
               x.load_ns);
    EXPECT_EQ(res[0].achieved, 0.0);
    // paced below 100 %: the hub's bucket allows no more than the target (plus its 2 ms of credit per 150 ms step)
    EXPECT_LT(res[1].achieved_pct, 20 * 1.2);
    EXPECT_LT(res[2].achieved_pct, 50 * 1.2);
    // No lower bound holds here: the hub reached 5-8 % at 20 %, and 0.34-0.80 of what its own round trips allowed
    // (2 messages per load_ns, capped at the target), beside other tests (docs/validation.md). The pacer's share of
    // what the round trips allow is checked on the fake clock: Bucket.RoundTripQuanta* and Bucket.SlowSpells* in
    // test_pace.
    // and it does send: a trend, not a timing bar (the host is shared); a trend broken while hub or responder waited
    // for its CPU beyond the bound is the host's (busy guard), not the pacer's
    EXPECT_GT(res[1].achieved, 0.0);
    const bool trend = (res[1].achieved_pct >= 0.9 * 20 ? res[2].achieved > res[1].achieved
                                                        : res[2].achieved > 0.8 * res[1].achieved) &&
                       res[3].achieved > res[1].achieved;
    for (const step_result &x : res)
        printf("%5.0f %%: the SoI's threads waited %.1f %% of their runnable time for a CPU\n", x.requested,
               x.wait_pct);
    if (!trend) // the steps the trend compares: 20, 50 and 100 %
        IB_SKIP_IF_BUSY(ib_test::busy_why(res + 1, 3));
    // More at 50 % than at 20 % only where 20 % was reached (pacing bound); where the round trips bound both steps
    // (the hub under its target at 20 % already), both run as fast as the round trips allow, and the host's noise
    // orders them (6.99e6 against 7.07e6 msg/s once): then 50 % must not fall far below 20 %.
    if (res[1].achieved_pct >= 0.9 * 20)
        EXPECT_GT(res[2].achieved, res[1].achieved);
    else
        EXPECT_GT(res[2].achieved, 0.8 * res[1].achieved);
    EXPECT_GT(res[3].achieved, res[1].achieved);
    for (int i = 1; i < 4; i++)
        EXPECT_GT(res[i].load_ns, 0.0) << "step " << i;
    ramp_free(&r);
    soi_close(s);
    // cached: a second open with cached_capacity reuses the stored peak
    e.cached_capacity = 1;
    ASSERT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), 0) << why;
    EXPECT_NE(strstr(s->capacity_src, "cached"), nullptr) << s->capacity_src;
    soi_close(s);
}
