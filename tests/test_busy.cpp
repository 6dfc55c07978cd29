// test_busy.cpp - "busy is a verdict" (docs/validation.md): a ramp whose threads did not get their CPU reads BUSY, never
// FAIL or pass; a broken SoI on an idle CPU still reads FAIL. On this machine, with a CPU hog the test starts and
// stops itself (ib_test::CpuHog, killed and reaped on every path).
#include <math.h>
#include <time.h>

#include "test_support.h"
#include "validate.h"

namespace {

::testing::Environment *const g_cache_env = ::testing::AddGlobalTestEnvironment(new ib_test::PrivateCacheEnv("busy"));

// A broken duty SoI: each step() is on the CPU for 200 us, then sleeps 200 us. The engine paces a duty SoI by the
// time spent in step(), so it believes it holds x % while its worker is on the CPU about half of that: its
// self-meter must FAIL whatever the machine does, and the sleeps cause no run-queue wait.
int half_step(struct soi *, unsigned, uint64_t *units)
{
    timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000);
    timespec nap = {0, 200000};
    nanosleep(&nap, nullptr);
    *units = 1;
    return 0;
}

int half_prepare(struct soi *s, char *, size_t)
{
    s->capacity = 1; // a duty SoI's figure is its workers' on-CPU share
    snprintf(s->unit, sizeof s->unit, "on-CPU");
    return 0;
}
void half_teardown(struct soi *) {}

const struct soi_ops half_ops = {
    .version = SOI_OPS_VERSION,
    .name = "half",
    .resource = "nothing",
    .summary = "on its CPU half the time it says",
    .paper = "-",
    .scope = TOPO_SCOPE_PU,
    .kind = SOI_DUTY,
    .opts = nullptr,
    .opts_size = 0,
    .supported = nullptr,
    .prepare = half_prepare,
    .set_intensity = nullptr,
    .step = half_step,
    .measure = nullptr,
    .teardown = half_teardown,
    .min_threads = 0,
    .placement = SOI_PLACE_SHARE,
    .io = 0,
    .occupancy = SOI_OCC_NONE,
    .caused_ref = nullptr,
};

class Busy : public ::testing::Test {
protected:
    struct machine m{};
    int cpu = -1;
    atomic_int stop{0};
    char why[512] = "";
    struct soi_env env{};
    struct soi *s = nullptr;
    void SetUp() override
    {
        ASSERT_EQ(machine_open(&m, nullptr, why, sizeof why), 0) << why;
        cpu = topo_pu_os(m.topo, topo_npus(m.topo) - 1); // where ibench validate puts an SoI
        ib_sched probe{};
        if (ib_sched_thread(0, &probe, why, sizeof why) == -ENOENT)
            GTEST_SKIP() << "no schedstat on this kernel: " << why;
    }
    void open(const soi_ops *ops)
    {
        soi_env_init(&env, ops, &m, 1, &cpu, -1, &stop);
        soi_opts_quick(&env);
        ASSERT_EQ(soi_open(ops, &env, &s, nullptr, why, sizeof why), 0) << why;
    }
    void TearDown() override
    {
        soi_close(s);
        machine_close(&m);
    }
};

void print_self(const char *what, const val_self &o)
{
    printf("%s: a@0..100 %.1f %.1f %.1f %.1f %.1f, wait per level %.1f %.1f %.1f %.1f %.1f, over the ramp %.1f %% "
           "(%.0f us before a run, on the mean), worst step %.1f %% at %.0f %%, %u busy steps\n  %s: %s\n",
           what, o.achieved[0], o.achieved[1], o.achieved[2], o.achieved[3], o.achieved[4], o.wait[0], o.wait[1],
           o.wait[2], o.wait[3], o.wait[4], o.wait_pct, o.wait_run_us, o.wait_worst_pct, o.wait_worst_level,
           o.busy_steps, val_verdict_name(o.verdict), o.reason);
}

} // namespace

// The case: int's self-meter ramp with another program spinning on its CPU. Its 100 % windows read about
// half (its worker gets half the CPU), so the readings alone say FAIL; the verdict is BUSY, with the figure.
TEST_F(Busy, RampBesideACpuHogIsBusyNotFail)
{
    open(soi_find("int"));
    ib_test::CpuHog hog(cpu);
    ASSERT_TRUE(hog.ok()) << "the hog did not run on CPU " << cpu;
    val_self o{};
    val_self_ramp(s, 1, &stop, NULL, &o, NULL);
    print_self("int beside a hog on its CPU", o);
    ASSERT_TRUE(o.judged) << o.reason;
    EXPECT_GT(o.wait_pct, IB_BUSY_WAIT_PCT) << "a hog on the same CPU: the worker waits for it";
    EXPECT_GT(o.wait[4], 30.0) << "at 100 % it shares its CPU with the hog: about half its runnable time waiting";
    EXPECT_GT(o.busy_steps, 0u);
    EXPECT_GE(o.wait_run_us, IB_BUSY_WAIT_RUN_US) << "the hog's slices, not wake-ups, are what it waited for";
    EXPECT_EQ(o.verdict, VAL_BUSY) << o.reason;
    EXPECT_NE(o.measured, VAL_PASS) << "half a CPU at 100 %: the readings alone cannot pass";
    EXPECT_NE(strstr(o.reason, "for a CPU (bound 10 %)"), nullptr) << o.reason;
    EXPECT_NE(strstr(o.reason, "the readings alone: "), nullptr) << o.reason;
}

// A broken SoI on a CPU nobody else uses is still FAIL, and its threads did not wait: being busy is measured, not
// assumed. When the machine is busy after all (other work on this CPU), the test says so and skips.
TEST_F(Busy, BrokenSelfMeterOnAnIdleCpuIsStillFail)
{
    open(&half_ops);
    val_self o{};
    val_self_ramp(s, 1, &stop, NULL, &o, NULL);
    print_self("a duty SoI on its CPU half the time it says", o);
    ASSERT_TRUE(o.judged) << o.reason;
    // waiting only lowers an on-CPU share: this holds busy or not
    EXPECT_LT(o.achieved[3], 60.0) << "the fake is broken: at 75 % it is on its CPU about half of that";
    // the rest needs the CPU: a busy one widens the noise, and with it the bar (a broken ramp read "pass" so once,
    // noise 23.8 points, its threads waiting 20.7 %)
    IB_SKIP_IF_BUSY(ib_test::busy_why(o.wait_pct, "the SoI's threads over the ramp"));
    IB_SKIP_IF_BUSY(ib_test::busy_why(o.wait_worst_pct, "the SoI's threads in one step"));
    EXPECT_EQ(o.measured, VAL_FAIL) << "its readings alone: " << o.reason;
    EXPECT_LE(o.wait_pct, IB_BUSY_WAIT_PCT);
    EXPECT_EQ(o.verdict, VAL_FAIL) << o.reason;
    EXPECT_EQ(strstr(o.reason, "BUSY"), nullptr) << o.reason;
}

// The command line: `ibench run` says BUSY per step and in its verdict line; `ibench validate` calls the self-meter
// BUSY and exits 0 (nothing FAILED: BUSY says this host could not show it), or 1 with --fail-on busy, with a hog on
// the SoI's CPU.
TEST_F(Busy, RunAndValidateSayBusyBesideAHog)
{
    const std::string c = std::to_string(cpu);
    const std::vector<std::string> cache = {"IBENCH_CACHE_DIR=" + std::string(getenv("IBENCH_CACHE_DIR"))};
    ib_test::CpuHog hog(cpu);
    ASSERT_TRUE(hog.ok()) << "the hog did not run on CPU " << cpu;
    ib_test::Proc r;
    ASSERT_TRUE(r.start({"run", "--soi", "int", "--levels", "50,100", "--step-ms", "400", "--cpus", c}, cache));
    ASSERT_TRUE(r.finish(120 * ib_test::kHangScale)) << r.err;
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    printf("%s", r.out.c_str());
    EXPECT_NE(r.out.find("wait %"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("verdict   BUSY: step "), std::string::npos) << r.out;

    ib_test::Proc j;
    ASSERT_TRUE(j.start({"run", "--soi", "int", "--intensity", "100", "--duration", "0.5", "--cpus", c, "--json",
                         "--cached-capacity"},
                        cache));
    ASSERT_TRUE(j.finish(120 * ib_test::kHangScale)) << j.err;
    json_error_t e;
    json_t *doc = json_loads(j.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text << ": " << j.out;
    json_t *st = json_array_get(json_object_get(doc, "steps"), 0), *busy = json_object_get(doc, "busy");
    EXPECT_GT(json_number_value(json_object_get(st, "wait_pct")), IB_BUSY_WAIT_PCT) << j.out;
    EXPECT_TRUE(json_is_true(json_object_get(st, "busy"))) << j.out;
    EXPECT_STREQ(json_string_value(json_object_get(busy, "verdict")), "BUSY") << j.out;
    EXPECT_EQ(json_number_value(json_object_get(busy, "bound_pct")), IB_BUSY_WAIT_PCT);
    EXPECT_NE(ib_test::busy_why_run_json(doc), "") << "the tests' guard reads the same figure";
    json_decref(doc);

    ib_test::Proc v;
    ASSERT_TRUE(v.start({"validate", "--soi", "int", "--quick", "--no-overlap", "--json"}, cache));
    ASSERT_TRUE(v.finish(180 * ib_test::kHangScale)) << v.err;
    EXPECT_EQ(v.exit_code(), 0) << "BUSY alone: not judged here, no failure\n" << v.err;
    EXPECT_NE(v.err.find("BUSY"), std::string::npos) << v.err;
    ib_test::Proc f;
    ASSERT_TRUE(f.start({"validate", "--soi", "int", "--quick", "--no-overlap", "--json", "--fail-on", "busy"}, cache));
    ASSERT_TRUE(f.finish(180 * ib_test::kHangScale)) << f.err;
    EXPECT_EQ(f.exit_code(), 1) << "--fail-on busy: BUSY fails the run\n" << f.err;
    doc = json_loads(v.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text << ": " << v.out;
    json_t *self = json_object_get(json_array_get(json_object_get(doc, "sois"), 0), "self");
    EXPECT_STREQ(json_string_value(json_object_get(self, "verdict")), "BUSY") << v.out;
    json_t *b = json_object_get(self, "busy");
    EXPECT_GT(json_number_value(json_object_get(b, "wait_pct")), IB_BUSY_WAIT_PCT) << v.out;
    EXPECT_NE(ib_test::busy_why_validate_json(b, "int"), "");
    json_decref(doc);
}
