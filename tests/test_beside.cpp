// test_beside.cpp - beside_run: a probe sampling beside an SoI that alternates between levels, in one process.
// A fake SoI marks when it last ran; a fake probe reports 2 while the SoI ran within the last millisecond and 1
// otherwise, so the classification of samples into steps is checked exactly, independent of the host's noise.
#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "beside.h"
#include "clock.h"
#include "machine.h"
#include "soi.h"
#include "test_support.h"

namespace {

constexpr uint64_t kMs = 1000000ULL;
::testing::Environment *const g_cache_env = ::testing::AddGlobalTestEnvironment(new ib_test::PrivateCacheEnv("beside"));
std::atomic<uint64_t> g_last_step{0};

int fake_step(struct soi *, unsigned, uint64_t *units)
{
    uint64_t t0 = clk_mono_ns();
    while (clk_mono_ns() - t0 < 20000) {
    }
    g_last_step.store(clk_mono_ns());
    *units = 1;
    return 0;
}

int fake_prepare(struct soi *s, char *, size_t)
{
    s->capacity = 1;
    snprintf(s->unit, sizeof s->unit, "active");
    return 0;
}
void fake_teardown(struct soi *) {}

const struct soi_ops fake_ops = {
    .version = SOI_OPS_VERSION,
    .name = "fake",
    .resource = "nothing",
    .summary = "marks when it ran",
    .paper = "-",
    .scope = TOPO_SCOPE_PU,
    .kind = SOI_DUTY,
    .opts = nullptr,
    .opts_size = 0,
    .supported = nullptr,
    .prepare = fake_prepare,
    .set_intensity = nullptr,
    .step = fake_step,
    .measure = nullptr,
    .teardown = fake_teardown,
    .min_threads = 0,
    .placement = SOI_PLACE_SHARE,
    .io = 0,
    .occupancy = SOI_OCC_NONE,
    .caused_ref = nullptr,
};

struct FakeProbe {
    int opened = 0, closed = 0;
    static int open(void *c)
    {
        static_cast<FakeProbe *>(c)->opened++;
        return 0;
    }
    static int sample(void *, double *v)
    {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, nullptr);
        *v = clk_mono_ns() - g_last_step.load() < kMs ? 2.0 : 1.0;
        return 0;
    }
    static void close(void *c) { static_cast<FakeProbe *>(c)->closed++; }
};

}  // namespace

// The fake SoI opened on the highest CPU of this machine, the fake probe for the lowest.
class Beside : public ::testing::Test {
protected:
    struct machine m {};
    char why[256] = "";
    int soi_cpu = -1, probe_cpu = -1;
    struct soi_env env {};
    atomic_int stop{0};
    struct soi *s = nullptr;
    FakeProbe fp;
    struct beside_probe p = {"fake", "x", FakeProbe::open, FakeProbe::sample, FakeProbe::close, &fp};
    void SetUp() override
    {
        ASSERT_EQ(machine_open(&m, nullptr, why, sizeof why), 0) << why;
        const unsigned npus = topo_npus(m.topo);
        soi_cpu = topo_pu_os(m.topo, npus - 1);
        probe_cpu = topo_pu_os(m.topo, 0);
        soi_env_init(&env, &fake_ops, &m, 1, &soi_cpu, -1, &stop);
        ASSERT_EQ(soi_open(&fake_ops, &env, &s, nullptr, why, sizeof why), 0) << why;
    }
    void TearDown() override
    {
        soi_close(s);
        machine_close(&m);
    }
};

TEST_F(Beside, SamplesAreClassifiedByStep)
{
    const double levels[] = {0, 100};
    struct beside_result r;
    // 6 cycles of 40 ms steps; samples in the first 5 ms of a step are dropped
    ASSERT_EQ(beside_run(s, levels, 2, 6, 40 * kMs, 5 * kMs, probe_cpu, &p, &stop, &r, why, sizeof why), 0) << why;
    EXPECT_EQ(fp.opened, 1);
    EXPECT_EQ(fp.closed, 1);
    EXPECT_EQ(r.nsteps, 12u);
    ASSERT_EQ(r.nlevels, 2u);
    EXPECT_EQ(r.lv[0].level, 0.0);
    EXPECT_EQ(r.lv[1].level, 100.0);
    EXPECT_GT(r.lv[0].nsamples, 12u);
    EXPECT_GT(r.lv[1].nsamples, 12u);
    EXPECT_EQ(r.lv[0].median, 1.0) << "samples while the SoI idled";
    EXPECT_EQ(r.lv[1].median, 2.0) << "samples while the SoI ran";
    EXPECT_LT(r.noise, 0.5) << "even and odd cycles agree (a preempted SoI could flip a few samples, not a median)";
    EXPECT_LT(r.lv[0].achieved_pct, 0.5) << "a duty SoI's 0 %: its idle worker's wake-ups at the steps' ends";
    // the worker's own run-queue accounting came through the windows (NAN only without schedstat)
    EXPECT_TRUE(std::isnan(r.lv[1].wait_pct) || (r.lv[1].wait_pct >= 0 && r.lv[1].wait_pct <= 100)) << r.lv[1].wait_pct;
    EXPECT_TRUE(std::isnan(r.lv[1].wait_pct) || r.lv[1].sched.run_ns > 0);
    if (!(r.lv[1].achieved_pct > 20.0)) // a worker on a fifth of its CPU: the host's, when it was measured waiting
        IB_SKIP_IF_BUSY(ib_test::busy_why(r.lv[1].wait_max_pct, "the SoI's worker in a 100 % step"));
    EXPECT_GT(r.lv[1].achieved_pct, 20.0);
    // seen from outside the SoI: its worker's own CPU time; a duty SoI's achieved figure is that share, so its work
    // per CPU second is its whole capacity
    EXPECT_LT(r.lv[0].cpu_share, 0.005);
    EXPECT_NEAR(r.lv[1].cpu_share * 100, r.lv[1].achieved_pct, 2.0);
    EXPECT_NEAR(r.lv[1].work_cpu_pct, 100.0, 2.0);

    // bad arguments
    EXPECT_EQ(beside_run(s, levels, 2, 0, 40 * kMs, 5 * kMs, probe_cpu, &p, &stop, &r, why, sizeof why), -EINVAL);
    EXPECT_EQ(beside_run(s, levels, 2, 2, 5 * kMs, 5 * kMs, probe_cpu, &p, &stop, &r, why, sizeof why), -EINVAL);
    // a probe that cannot start: the error comes back and nothing runs
    struct beside_probe bad = p;
    bad.open = [](void *) { return -ENOMEM; };
    EXPECT_EQ(beside_run(s, levels, 2, 2, 40 * kMs, 5 * kMs, probe_cpu, &bad, &stop, &r, why, sizeof why), -ENOMEM);
    EXPECT_NE(strstr(why, "cannot start"), nullptr) << why;
    // stop raised: -EINTR
    atomic_store(&stop, 1);
    EXPECT_EQ(beside_run(s, levels, 2, 2, 40 * kMs, 5 * kMs, probe_cpu, &p, &stop, &r, why, sizeof why), -EINTR);
}

// The per-cycle ratios behind each level's ratio: one per cycle that gave one, NAN for the rest of the array, and
// their median is the ratio. More cycles than the array holds are refused.
TEST_F(Beside, PerCycleRatios)
{
    const double levels[] = {0, 100, 0};
    const unsigned cycles = 5;
    struct beside_result r;
    ASSERT_EQ(beside_run(s, levels, 3, cycles, 30 * kMs, 5 * kMs, probe_cpu, &p, &stop, &r, why, sizeof why), 0)
        << why;
    EXPECT_EQ(r.nsteps, 15u);
    for (unsigned l = 0; l < 3; l++) {
        const struct beside_level &bl = r.lv[l];
        // a ratio is a number, or INFINITY for a step in which the probe was starved (a loaded host); NAN is none
        std::vector<double> given;
        std::string all;
        for (unsigned c = 0; c < BESIDE_MAX_CYCLES; c++) {
            if (c < cycles)
                all += std::to_string(bl.cycle_ratio[c]) + " ";
            if (!std::isnan(bl.cycle_ratio[c])) {
                EXPECT_LT(c, cycles) << "level " << l;
                given.push_back(bl.cycle_ratio[c]);
            }
        }
        EXPECT_EQ(given.size(), bl.ncycles) << "level " << l << ": " << all;
        EXPECT_GE(bl.ncycles, cycles - 1) << "level " << l << ": " << all;
        ASSERT_FALSE(given.empty());
        std::sort(given.begin(), given.end());
        size_t n = given.size();
        double med = n % 2 ? given[n / 2] : (given[n / 2 - 1] + given[n / 2]) / 2;
        EXPECT_DOUBLE_EQ(med, bl.ratio) << "level " << l << ": " << all;
    }
    // The probe reads 1 while the SoI idles and 2 while it runs, so the solo steps' medians are 1 and every ratio is
    // between 1 and 2 (not exactly 2: on a loaded host the SoI's CPU may go to others for much of a step).
    EXPECT_DOUBLE_EQ(r.lv[0].ratio, 1.0);
    for (unsigned l = 1; l < 3; l++)
        for (unsigned c = 0; c < cycles; c++)
            if (std::isfinite(r.lv[l].cycle_ratio[c])) {
                EXPECT_GE(r.lv[l].cycle_ratio[c], 1.0) << "level " << l << " cycle " << c;
                EXPECT_LE(r.lv[l].cycle_ratio[c], 2.0) << "level " << l << " cycle " << c;
            }

    why[0] = 0;
    EXPECT_EQ(beside_run(s, levels, 3, BESIDE_MAX_CYCLES + 1, 30 * kMs, 5 * kMs, probe_cpu, &p, &stop, &r, why,
                         sizeof why),
              -EINVAL);
    EXPECT_NE(strstr(why, "cycles"), nullptr) << why;
}
