// test_engine.cpp - the ramp engine (common/engine.c) driven by tiny fake SoIs defined here, the linearity fit,
// and the shared kernels (common/kernels.c): pointer-chase cycles, the streaming ISAs, the mapping gauge, and the
// domain shares of common/soikit.c on a synthetic topology.
//
// Only generous, one-sided timing bounds are asserted (a pacer never runs far ahead of its target); the host is a
// noisy shared VM.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "clock.h"
#include "engine.h"
#include "ib_err.h"
#include "kernels.h"
#include "ramp.h"
#include "soi.h"
#include "test_support.h"
#include "soikit.h"
#include "topo.h"

namespace {

constexpr uint64_t kMs = 1000000ULL;
constexpr uint64_t MiB = 1024ULL * 1024ULL;

// One socket, one L3, two cores with private L2/L1, no SMT: binding is skipped on synthetic topologies, so the
// engine runs its workers unbound.
const char *const kSmall = "pack:1 l3:1(size=8MiB) l2:2(size=1MiB) l1:1(size=32KiB) core:1 pu:1";
// 2 sockets x (one 8 MiB L3, 4 cores with a private 1 MiB L2, 2 PUs per core): PUs 0..7 on socket 0, core k =
// PUs {2k, 2k+1}.
const char *const kTwoSocket = "pack:2 l3:1(size=8MiB) l2:4(size=1MiB) l1:1(size=32KiB) core:1 pu:2";

void spin_ns(uint64_t ns)
{
    uint64_t end = clk_mono_ns() + ns;
    while (clk_mono_ns() < end) {
    }
}

// ---- fake SoIs -----------------------------------------------------------------------------------------------
// Their callbacks record what the engine asked of them in one global, reset by every test.
struct FakeState {
    std::mutex mu;
    std::vector<double> set_calls;       // intensities passed to set_intensity, in order
    unsigned measure_calls = 0;
    unsigned teardowns = 0;
    double cur = 0;                      // current intensity
    std::atomic<uint64_t> steps{0};      // step() calls, all threads
    std::atomic<uint64_t> steps_at_zero{0};
    std::atomic<int> fail_step{0};       // step() returns this (when nonzero) once intensity > 0
    int fail_set = 0;                    // set_intensity returns this when nonzero
    int fail_measure = 0;                // measure returns this when nonzero
    unsigned set_delay_ms = 0;           // set_intensity takes this long (a footprint growing)
    std::set<int> cpus_seen;             // sched_getcpu() inside step()
    std::set<unsigned> tids_seen;
};
FakeState *g;

int fake_prepare_common(struct soi *s, double capacity, const char *unit)
{
    s->capacity = capacity;
    snprintf(s->unit, sizeof(s->unit), "%s", unit);
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "units/s");
    return 0;
}
int rate_prepare(struct soi *s, char *, size_t) { return fake_prepare_common(s, 1e6, "units/s"); }
int duty_prepare(struct soi *s, char *, size_t) { return fake_prepare_common(s, 1, "duty"); }
int fp_prepare(struct soi *s, char *, size_t) { return fake_prepare_common(s, 4096, "B"); }

int fake_set(struct soi *, double x, char *why, size_t len)
{
    std::lock_guard<std::mutex> l(g->mu);
    g->set_calls.push_back(x);
    if (g->set_delay_ms)
        std::this_thread::sleep_for(std::chrono::milliseconds(g->set_delay_ms));
    if (g->fail_set)
        return ib_why(why, len, g->fail_set, "fake: no room for %g %%", x);
    g->cur = x;
    return 0;
}

void note_step(unsigned tid)
{
    g->steps++;
    if (g->cur <= 0)
        g->steps_at_zero++;
    int cpu = sched_getcpu();
    std::lock_guard<std::mutex> l(g->mu);
    g->cpus_seen.insert(cpu);
    g->tids_seen.insert(tid);
}

// RATE: every quantum "does" 1000 units in ~10 us.
int rate_step(struct soi *, unsigned tid, uint64_t *units)
{
    note_step(tid);
    if (g->fail_step && g->cur > 0)
        return g->fail_step;
    spin_ns(10000);
    *units = 1000;
    return 0;
}

// DUTY: quanta of ~50 us of busy time.
int duty_step(struct soi *, unsigned tid, uint64_t *units)
{
    note_step(tid);
    spin_ns(50000);
    *units = 1;
    return 0;
}

// FOOTPRINT: holds exactly x % of 4096 "bytes"; measure reports it.
int fp_step(struct soi *, unsigned tid, uint64_t *units)
{
    note_step(tid);
    if (g->fail_step && g->cur > 0)
        return g->fail_step;
    spin_ns(5000);
    *units = 1;
    return 0;
}
int fp_measure(struct soi *s, struct soi_meter *m)
{
    std::lock_guard<std::mutex> l(g->mu);
    g->measure_calls++;
    if (g->fail_measure)
        return g->fail_measure;
    m->achieved = s->capacity * g->cur / 100.0;
    return 0;
}
void fake_teardown(struct soi *)
{
    std::lock_guard<std::mutex> l(g->mu);
    g->teardowns++;
}

soi_ops make_ops(const char *name, soi_kind kind)
{
    soi_ops o;
    memset(&o, 0, sizeof(o));
    o.version = SOI_OPS_VERSION;
    o.name = name;
    o.resource = "nothing";
    o.summary = "a fake SoI for the engine tests";
    o.paper = "-";
    o.scope = TOPO_SCOPE_MACHINE;
    o.kind = kind;
    o.set_intensity = fake_set;
    o.teardown = fake_teardown;
    switch (kind) {
    case SOI_RATE:
        o.prepare = rate_prepare;
        o.step = rate_step;
        break;
    case SOI_DUTY:
        o.prepare = duty_prepare;
        o.step = duty_step;
        break;
    case SOI_FOOTPRINT:
        o.prepare = fp_prepare;
        o.step = fp_step;
        o.measure = fp_measure;
        break;
    }
    return o;
}
const soi_ops kRate = make_ops("fake-rate", SOI_RATE);
const soi_ops kDuty = make_ops("fake-duty", SOI_DUTY);
const soi_ops kFp = make_ops("fake-fp", SOI_FOOTPRINT);

struct OnStepLog {
    std::vector<unsigned> index;
    std::vector<double> requested;
    std::vector<unsigned> nsteps;
    std::atomic<unsigned> count{0};
};
void log_step(void *arg, const struct step_result *r, unsigned nsteps)
{
    auto *l = static_cast<OnStepLog *>(arg);
    l->index.push_back(r->index);
    l->requested.push_back(r->requested);
    l->nsteps.push_back(nsteps);
    l->count++;
}

class Engine : public ::testing::Test {
protected:
    FakeState state;
    struct topo *topo = nullptr;
    std::vector<int> cpus;
    struct soi_env env;
    struct soi *s = nullptr;
    char why[256] = "";

    void SetUp() override
    {
        g = &state;
        ASSERT_EQ(topo_load(&topo, kSmall, why, sizeof why), 0) << why;
    }
    void TearDown() override
    {
        if (s)
            soi_close(s);
        if (topo)
            topo_destroy(topo);
        g = nullptr;
    }
    // Opens ops with n threads on the given topology (default: the synthetic one).
    void open(const soi_ops &ops, std::vector<int> on = {0}, struct topo *t = nullptr)
    {
        cpus = on;
        soi_env_init(&env, &ops, nullptr, (unsigned)cpus.size(), cpus.data(), -1, nullptr);
        env.topo = t ? t : topo;
        ASSERT_EQ(soi_open(&ops, &env, &s, nullptr, why, sizeof why), 0) << why;
    }
};

struct Sched {
    ramp_sched r = {0, nullptr};
    ~Sched() { ramp_free(&r); }
};

}  // namespace

// ---- linfit ---------------------------------------------------------------------------------------------------

TEST(Linfit, ExactLine)
{
    const double x[] = {0, 25, 50, 75, 100};
    double y[5];
    for (int i = 0; i < 5; i++)
        y[i] = 2.0 * x[i] + 3.0;
    struct linfit f;
    ASSERT_EQ(linfit_compute(x, y, 5, &f), 0);
    EXPECT_NEAR(f.slope, 2.0, 1e-12);
    EXPECT_NEAR(f.intercept, 3.0, 1e-12);
    EXPECT_NEAR(f.r2, 1.0, 1e-12);
    EXPECT_NEAR(f.worst_dev_fit, 0.0, 1e-9);
    EXPECT_NEAR(f.worst_dev_ideal, 103.0, 1e-9);  // at x=100: |203 - 100|
    EXPECT_EQ(f.n, 5u);

    // The identity: perfect linearity and no deviation from the ideal either.
    ASSERT_EQ(linfit_compute(x, x, 5, &f), 0);
    EXPECT_NEAR(f.slope, 1.0, 1e-12);
    EXPECT_NEAR(f.intercept, 0.0, 1e-12);
    EXPECT_NEAR(f.r2, 1.0, 1e-12);
    EXPECT_NEAR(f.worst_dev_ideal, 0.0, 1e-12);
}

// Worked by hand: x = 0, 50, 100; y = 0, 60, 100.  mean x 50, mean y 160/3; Sxx 5000, Sxy 5000 -> slope 1,
// intercept 10/3; residuals -10/3, 20/3, -10/3 -> SSR 200/3; Syy 15200/3 -> R^2 = 1 - 200/15200.
TEST(Linfit, NoisyKnownValues)
{
    const double x[] = {0, 50, 100}, y[] = {0, 60, 100};
    struct linfit f;
    ASSERT_EQ(linfit_compute(x, y, 3, &f), 0);
    EXPECT_NEAR(f.slope, 1.0, 1e-12);
    EXPECT_NEAR(f.intercept, 10.0 / 3.0, 1e-12);
    EXPECT_NEAR(f.r2, 1.0 - 200.0 / 15200.0, 1e-12);
    EXPECT_NEAR(f.worst_dev_fit, 20.0 / 3.0, 1e-12);
    EXPECT_NEAR(f.worst_dev_ideal, 10.0, 1e-12);

    // A saturating SoI: 0, 50, 90, 90, 90 % achieved for 0, 25, 50, 75, 100 requested.
    const double x2[] = {0, 25, 50, 75, 100}, y2[] = {0, 50, 90, 90, 90};
    ASSERT_EQ(linfit_compute(x2, y2, 5, &f), 0);
    // mean x 50, mean y 64; Sxy = -50*-64 + -25*-14 + 0 + 25*26 + 50*26 = 3200+350+650+1300 = 5500; Sxx 6250
    EXPECT_NEAR(f.slope, 0.88, 1e-12);
    EXPECT_NEAR(f.intercept, 64.0 - 0.88 * 50.0, 1e-12);
    // fit 20 + 0.88 x: residuals -20, 8, 26, 4, -18 -> SSR 1480; Syy 6320
    EXPECT_NEAR(f.r2, 1.0 - 1480.0 / 6320.0, 1e-12);
    EXPECT_NEAR(f.worst_dev_fit, 26.0, 1e-9);
    EXPECT_NEAR(f.worst_dev_ideal, 40.0, 1e-12);  // 90 achieved at 50 requested
}

TEST(Linfit, Degenerate)
{
    const double x[] = {50, 50, 50}, y[] = {1, 2, 3};
    struct linfit f;
    EXPECT_EQ(linfit_compute(x, y, 1, &f), -EINVAL);   // one point
    EXPECT_EQ(linfit_compute(x, y, 3, &f), -EINVAL);   // no spread in x
    const double x2[] = {0, 100}, flat[] = {7, 7};
    ASSERT_EQ(linfit_compute(x2, flat, 2, &f), 0);     // flat y fits exactly
    EXPECT_NEAR(f.slope, 0.0, 1e-12);
    EXPECT_NEAR(f.r2, 1.0, 1e-12);
}

// ---- engine_run -----------------------------------------------------------------------------------------------

TEST_F(Engine, RunsEveryStepInOrderAndCallsOnStep)
{
    open(kFp);
    Sched sc;
    const double xs[] = {0, 25, 100, 50};
    ASSERT_EQ(ramp_list(&sc.r, xs, 4, 30 * kMs), 0);
    OnStepLog log;
    struct engine_cb cb = {log_step, &log};
    struct step_result res[4];
    unsigned ndone = 99;
    atomic_int stop{0};
    ASSERT_EQ(engine_run(s, &sc.r, &stop, &cb, res, &ndone, why, sizeof why), 0) << why;
    EXPECT_EQ(ndone, 4u);
    ASSERT_EQ(log.index.size(), 4u);
    for (unsigned i = 0; i < 4; i++) {
        EXPECT_EQ(log.index[i], i);
        EXPECT_EQ(log.requested[i], xs[i]);
        EXPECT_EQ(log.nsteps[i], 4u);
        EXPECT_EQ(res[i].index, i);
        EXPECT_EQ(res[i].requested, xs[i]);
        EXPECT_DOUBLE_EQ(res[i].target, 4096 * xs[i] / 100);
        // the fake footprint reports exactly what it holds
        EXPECT_DOUBLE_EQ(res[i].achieved, 4096 * xs[i] / 100);
        EXPECT_DOUBLE_EQ(res[i].achieved_pct, xs[i]);
        EXPECT_GE(res[i].wall_ns, 30 * kMs) << "a step lasts at least its duration";
    }
    EXPECT_EQ(state.set_calls, std::vector<double>(xs, xs + 4));
    EXPECT_EQ(state.measure_calls, 4u);
    EXPECT_EQ(state.steps_at_zero.load(), 0u) << "workers stay parked through a 0 % step";
    EXPECT_GT(state.steps.load(), 0u);
    EXPECT_EQ(res[0].active_frac, 0.0);
    EXPECT_GT(res[2].active_frac, 0.0);
    EXPECT_GT(res[2].secondary, 0.0);  // step units per second
    EXPECT_EQ(state.teardowns, 0u);    // the engine does not close the SoI
    soi_close(s);
    s = nullptr;
    EXPECT_EQ(state.teardowns, 1u);
}

TEST_F(Engine, RateSoiIsPacedToItsTarget)
{
    open(kRate);
    Sched sc;
    const double xs[] = {0, 20, 50};
    ASSERT_EQ(ramp_list(&sc.r, xs, 3, 100 * kMs), 0);
    struct step_result res[3];
    unsigned ndone = 0;
    ASSERT_EQ(engine_run(s, &sc.r, nullptr, nullptr, res, &ndone, why, sizeof why), 0) << why;
    ASSERT_EQ(ndone, 3u);
    EXPECT_EQ(res[0].achieved, 0.0);
    EXPECT_EQ(res[0].achieved_pct, 0.0);
    for (int i = 1; i < 3; i++) {
        printf("%.0f %% -> %.2f %% (active %.3f)\n", xs[i], res[i].achieved_pct, res[i].active_frac);
        EXPECT_DOUBLE_EQ(res[i].target, 1e6 * xs[i] / 100);
        EXPECT_GT(res[i].achieved, 0.0);
        // RATE: achieved is units per second of the step, the same figure as the secondary
        EXPECT_DOUBLE_EQ(res[i].achieved, res[i].secondary);
        // The pacer never runs far ahead of its target (2 ms of credit in a 100 ms step); generous bound.
        EXPECT_LT(res[i].achieved_pct, xs[i] * 1.25) << "step " << i;
        // Nor far behind: the worker is busy 1 % of the time at 100 %, so even a CPU shared with busy threads
        // leaves it its target (19.98-20.98 % and 49.96-50.95 % beside other tests here); a quarter short is a
        // pacer that loses time, not the host, unless its worker was measured waiting for the CPU (busy guard).
        if (!(res[i].achieved_pct > xs[i] * 0.75))
            IB_SKIP_IF_BUSY(ib_test::busy_why(&res[i], 1));
        EXPECT_GT(res[i].achieved_pct, xs[i] * 0.75) << "step " << i;
        // and at 20-50 % of 1e6 units/s (10 us per 1000 units = 1 % busy at 100 %), the workers mostly sleep
        EXPECT_LT(res[i].active_frac, 0.5);
    }
}

TEST_F(Engine, DutySoiReportsItsActiveFraction)
{
    open(kDuty);
    Sched sc;
    const double xs[] = {0, 40};
    ASSERT_EQ(ramp_list(&sc.r, xs, 2, 200 * kMs), 0);
    struct step_result res[2];
    unsigned ndone = 0;
    ASSERT_EQ(engine_run(s, &sc.r, nullptr, nullptr, res, &ndone, why, sizeof why), 0) << why;
    ASSERT_EQ(ndone, 2u);
    // a duty SoI's achieved is its workers' on-CPU share: at 0 % the idle worker waits on a condition variable, so
    // its share is its wake-up at the step's end, far under a point
    EXPECT_EQ(res[0].active_frac, 0.0);
    EXPECT_LT(res[0].achieved_pct, 0.5);
    EXPECT_NEAR(res[1].achieved_pct, res[1].cpu_frac * 100.0, 2.0) << "over the step's wall time, or its workers'";
    EXPECT_GT(res[1].achieved, 0.0);
    EXPECT_LE(res[1].achieved, 1.0);
    EXPECT_DOUBLE_EQ(res[1].achieved_pct, res[1].achieved * 100.0);  // capacity 1
    // 40 % of the CPU; the fake's quanta (~50 us, a spin) are mostly CPU time. Generous: the host is shared, and
    // beside interconnect's two spinning threads the worker got 22 % of its CPU here; a third of the target (two
    // busy threads on its CPU) is the floor, unless the worker was measured waiting for its CPU more than that (busy
    // guard). The pacer's own accuracy is test_pace's, on the fake clock.
    if (!(res[1].achieved_pct > 40.0 / 3))
        IB_SKIP_IF_BUSY(ib_test::busy_why(&res[1], 1));
    EXPECT_GT(res[1].achieved_pct, 40.0 / 3);
    EXPECT_LT(res[1].achieved_pct, 55.0);
}

TEST_F(Engine, TwoWorkersBothRun)
{
    open(kFp, {0, 1});
    Sched sc;
    ASSERT_EQ(ramp_hold(&sc.r, 100, 60 * kMs), 0);
    struct step_result r;
    unsigned ndone = 0;
    ASSERT_EQ(engine_run(s, &sc.r, nullptr, nullptr, &r, &ndone, why, sizeof why), 0) << why;
    EXPECT_EQ(ndone, 1u);
    EXPECT_EQ(state.tids_seen, (std::set<unsigned>{0, 1}));
}

// On this machine's topology the workers are bound: step() must run on the CPU it was given.
TEST_F(Engine, WorkersAreBoundOnThisMachine)
{
    struct topo *real = nullptr;
    ASSERT_EQ(topo_load(&real, nullptr, why, sizeof why), 0) << why;
    int last = topo_pu_os(real, topo_npus(real) - 1);
    open(kFp, {last}, real);
    Sched sc;
    ASSERT_EQ(ramp_hold(&sc.r, 100, 40 * kMs), 0);
    struct step_result r;
    unsigned ndone = 0;
    EXPECT_EQ(engine_run(s, &sc.r, nullptr, nullptr, &r, &ndone, why, sizeof why), 0) << why;
    EXPECT_EQ(state.cpus_seen, (std::set<int>{last}));
    soi_close(s);
    s = nullptr;
    topo_destroy(real);
}

TEST_F(Engine, StepErrorSurfacesWithTheSoiName)
{
    open(kFp);
    state.fail_step = -EIO;
    Sched sc;
    const double xs[] = {0, 50, 100};
    ASSERT_EQ(ramp_list(&sc.r, xs, 3, 30 * kMs), 0);
    OnStepLog log;
    struct engine_cb cb = {log_step, &log};
    struct step_result res[3];
    unsigned ndone = 0;
    EXPECT_EQ(engine_run(s, &sc.r, nullptr, &cb, res, &ndone, why, sizeof why), -EIO);
    EXPECT_EQ(ndone, 1u) << "the 0 % step completes; the 50 % step fails";
    EXPECT_EQ(log.count.load(), 1u);
    EXPECT_NE(strstr(why, "fake-fp"), nullptr) << why;
    EXPECT_NE(strstr(why, strerror(EIO)), nullptr) << why;
}

TEST_F(Engine, RateStepErrorToo)
{
    open(kRate, {0, 1});
    state.fail_step = -EIO;
    Sched sc;
    ASSERT_EQ(ramp_hold(&sc.r, 50, 30 * kMs), 0);
    struct step_result r;
    unsigned ndone = 5;
    EXPECT_EQ(engine_run(s, &sc.r, nullptr, nullptr, &r, &ndone, why, sizeof why), -EIO);
    EXPECT_EQ(ndone, 0u);
    EXPECT_NE(strstr(why, "fake-rate"), nullptr) << why;
}

TEST_F(Engine, SetIntensityAndMeasureErrors)
{
    open(kFp);
    Sched sc;
    const double xs[] = {10, 20};
    ASSERT_EQ(ramp_list(&sc.r, xs, 2, 20 * kMs), 0);
    struct step_result res[2];
    unsigned ndone = 0;
    state.fail_set = -ENOSPC;
    EXPECT_EQ(engine_run(s, &sc.r, nullptr, nullptr, res, &ndone, why, sizeof why), -ENOSPC);
    EXPECT_EQ(ndone, 0u);
    EXPECT_NE(strstr(why, "no room for 10"), nullptr) << why;  // the SoI's own words

    state.fail_set = 0;
    state.fail_measure = -EFAULT;
    why[0] = 0;
    EXPECT_EQ(engine_run(s, &sc.r, nullptr, nullptr, res, &ndone, why, sizeof why), -EFAULT);
    EXPECT_EQ(ndone, 0u);
    EXPECT_NE(strstr(why, "fake-fp"), nullptr) << why;
    EXPECT_NE(strstr(why, "self-meter"), nullptr) << why;
}

// Another thread raises the stop flag once two steps are done: -EINTR, the completed steps are valid.
TEST_F(Engine, StopFlagFromAnotherThreadInterrupts)
{
    open(kFp, {0, 1});
    Sched sc;
    ASSERT_EQ(ramp_linear(&sc.r, 0, 100, 20, 100 * kMs), 0);
    OnStepLog log;
    struct engine_cb cb = {log_step, &log};
    std::vector<step_result> res(20);
    unsigned ndone = 0;
    atomic_int stop{0};
    std::atomic<bool> quit{false};
    std::thread raiser([&] {
        uint64_t deadline = clk_mono_ns() + 30000 * kMs;  // never hang
        while (log.count.load() < 2 && !quit.load() && clk_mono_ns() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        stop.store(1);
    });
    uint64_t t0 = clk_mono_ns();
    int rc = engine_run(s, &sc.r, &stop, &cb, res.data(), &ndone, why, sizeof why);
    uint64_t dt = clk_mono_ns() - t0;
    quit = true;
    raiser.join();
    EXPECT_EQ(rc, -EINTR);
    EXPECT_GE(ndone, 2u);
    EXPECT_LT(ndone, 20u);
    EXPECT_EQ(log.count.load(), ndone);
    EXPECT_NE(strstr(why, "interrupted"), nullptr) << why;
    for (unsigned i = 0; i < ndone; i++)
        EXPECT_DOUBLE_EQ(res[i].achieved_pct, res[i].requested);
    EXPECT_LT(dt, 20 * 100 * kMs) << "the run stopped before its end";
}

// Steps far shorter than a scheduler delay: a worker that wakes only after its step is over (released and parked
// again while it slept) must still count as parked, or the engine waits for it forever.  Four workers share the
// two CPUs with four spinning threads, through 300 steps of 0.2 ms.  Run in a child so a hang is a failure, not a
// hung test binary.
TEST_F(Engine, WorkersThatSleepThroughAStepDoNotHangIt)
{
    open(kFp, {0, 1, 0, 1});
    Sched sc;
    ASSERT_EQ(ramp_linear(&sc.r, 0, 100, 300, 200000), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        std::atomic<bool> quit{false};
        std::vector<std::thread> spin;
        for (int i = 0; i < 4; i++)
            spin.emplace_back([&] {
                while (!quit.load()) {
                }
            });
        std::vector<step_result> res(300);
        unsigned ndone = 0;
        char w[256] = "";
        int rc = engine_run(s, &sc.r, nullptr, nullptr, res.data(), &ndone, w, sizeof w);
        quit = true;
        for (auto &t : spin)
            t.join();
        _exit(rc == 0 && ndone == 300 ? 0 : 1);
    }
    int status = 0;
    uint64_t deadline = clk_mono_ns() + 60000 * kMs;
    pid_t got = 0;
    while ((got = waitpid(pid, &status, WNOHANG)) == 0 && clk_mono_ns() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        FAIL() << "engine_run hung: a worker missed a step and was never counted as parked";
    }
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "engine_run failed or stopped early";
}

TEST_F(Engine, StopAlreadyRaisedRunsNothing)
{
    open(kFp);
    Sched sc;
    ASSERT_EQ(ramp_hold(&sc.r, 50, 10000 * kMs), 0);  // would take 10 s
    atomic_int stop{1};
    struct step_result r;
    unsigned ndone = 7;
    uint64_t t0 = clk_mono_ns();
    EXPECT_EQ(engine_run(s, &sc.r, &stop, nullptr, &r, &ndone, why, sizeof why), -EINTR);
    EXPECT_EQ(ndone, 0u);
    EXPECT_LT(clk_mono_ns() - t0, 5000 * kMs);
}

TEST_F(Engine, NothingToRun)
{
    open(kFp);
    ramp_sched empty = {0, nullptr};
    struct step_result r;
    unsigned ndone = 3;
    EXPECT_EQ(engine_run(s, &empty, nullptr, nullptr, &r, &ndone, why, sizeof why), -EINVAL);
    EXPECT_EQ(ndone, 0u);
    Sched sc;
    ASSERT_EQ(ramp_hold(&sc.r, 50, kMs), 0);
    EXPECT_EQ(engine_run(s, &sc.r, nullptr, nullptr, nullptr, &ndone, why, sizeof why), -EINVAL);
    EXPECT_EQ(engine_run(nullptr, &sc.r, nullptr, nullptr, &r, &ndone, why, sizeof why), -EINVAL);
}

// ---- the background engine ----------------------------------------------------------------------------------

namespace {

// A held SoI that logs every step() call (start, end, units) into preallocated arrays: one worker, so no race.
struct CallLog {
    static constexpr size_t kCap = 1 << 20;
    std::vector<uint64_t> t0, t1, units;
    std::atomic<size_t> n{0};
    std::atomic<bool> overflow{false};
    CallLog() : t0(kCap), t1(kCap), units(kCap) {}
};
CallLog *g_log;

// DUTY: ~10 us of work per quantum (at 50 % it idles about as long between quanta, so it parks within microseconds
// of a step's end), a varying number of units (so a sum that drops or doubles a call shows).
int logged_step(struct soi *, unsigned, uint64_t *units)
{
    uint64_t a = clk_mono_ns();
    spin_ns(10000);
    size_t i = g_log->n.load();
    *units = 1000 + i % 7;
    if (i >= CallLog::kCap) {
        g_log->overflow = true;
        return 0;
    }
    g_log->t0[i] = a;
    g_log->t1[i] = clk_mono_ns();
    g_log->units[i] = *units;
    g_log->n.store(i + 1);
    return 0;
}

soi_ops make_logged_ops()
{
    soi_ops o = make_ops("fake-logged", SOI_DUTY);
    o.step = logged_step;
    return o;
}
const soi_ops kLogged = make_logged_ops();

// DUTY at 100 %: spins all the time.
soi_ops make_spin_ops()
{
    soi_ops o = make_ops("fake-spin", SOI_DUTY);
    return o;
}
const soi_ops kSpin = make_spin_ops();

struct Bg {
    struct engine_bg *e = nullptr;
    ~Bg() { engine_stop(e, nullptr, 0); }
};

void hold_ms(uint64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

// The acceptance ("a profile point held for 15 minutes keeps the SoI at its intensity all along") in short
// form: metering steps of 0.5 ms under a 5 s window, i.e. thousands of steps (the old fixed schedule stopped at 3000):
// the SoI ran all along (no gap between step() calls, none at the window's ends) and the window's figures cover all
// of it (its units are exactly what step() returned inside it).
TEST_F(Engine, BgHeldPointKeepsTheSoiRunningAllAlong)
{
    const char *env_ms = getenv("IBENCH_TEST_HOLD_MS");  // a shorter window for valgrind (no step-count bound)
    const uint64_t hold = env_ms ? strtoull(env_ms, nullptr, 10) : 5000;
    CallLog log;
    g_log = &log;
    open(kLogged);
    const uint64_t step = kMs / 2;
    struct engine_bg_opts o = {step, 0};
    Bg bg;
    ASSERT_EQ(engine_start(s, 50, &o, nullptr, &bg.e, why, sizeof why), 0) << why;
    ASSERT_EQ(engine_mark(bg.e, why, sizeof why), 0) << why;
    hold_ms(hold);
    struct engine_window w, next;
    ASSERT_EQ(engine_read(bg.e, &w, why, sizeof why), 0) << why;
    ASSERT_EQ(engine_read(bg.e, &next, why, sizeof why), 0) << why;  // its t0 bounds the calls of w's last step
    EXPECT_EQ(engine_stop(bg.e, why, sizeof why), 0) << why;
    bg.e = nullptr;
    g_log = nullptr;
    ASSERT_FALSE(log.overflow.load());

    EXPECT_EQ(w.intensity, 50.0);
    EXPECT_EQ(w.wall_ns, w.t1_ns - w.t0_ns);
    EXPECT_GE(w.wall_ns, hold * kMs);
    EXPECT_LT(w.wall_ns, hold * kMs + 200 * kMs);
    // 10 000 nominal. Each park costs two thread wake-ups: a fraction of a ms alone, over 1 ms when the other test
    // of a -j2 run keeps both CPUs busy (3834 steps were seen so). A schedule that runs out is caught by the gap
    // below; this bound catches a park that costs a scheduler tick (4 ms) or more.
    if (!env_ms) {
        EXPECT_GE(w.steps, hold / 4) << "metering steps back to back";
    }
    EXPECT_LE(w.steps, hold * kMs / step + 1);
    EXPECT_GT(next.t0_ns, w.t1_ns);
    uint64_t units = 0, gap = 0, first = 0, last = 0;
    size_t in = 0;
    for (size_t i = 0; i < log.n.load(); i++) {
        if (log.t0[i] < w.t0_ns || log.t0[i] >= next.t0_ns)
            continue;
        if (in++ == 0)
            first = log.t0[i];
        else
            gap = std::max(gap, log.t0[i] - last);
        last = log.t1[i];
        units += log.units[i];
    }
    EXPECT_EQ(w.units, units) << "the window's units are what step() returned inside it";
    EXPECT_GE(in, w.steps) << "every metering step ran the SoI";
    // A gap is the SoI not running: a schedule that ran out would leave one of seconds. The bound allows for the
    // scheduler delays of a CPU shared with the rest of a parallel test run.
    EXPECT_LT(gap, 250 * kMs) << "the SoI ran all along";
    EXPECT_LT(first - w.t0_ns, 250 * kMs) << "from the window's start";
    EXPECT_LT(w.t1_ns - std::min(last, w.t1_ns), 250 * kMs) << "to its end";
    RecordProperty("steps", (int)w.steps);
    RecordProperty("max_gap_us", (int)(gap / 1000));
    // its on-CPU share: 50 % is what a CPU shared with one other busy test still gives
    EXPECT_NEAR(w.achieved_pct, 50.0, 15.0) << "at its intensity all along";
    EXPECT_DOUBLE_EQ(w.rate, (double)w.units / ((double)w.wall_ns / 1e9));
    EXPECT_EQ(state.set_calls, std::vector<double>{50}) << "set_intensity once, not at every metering step";
}

// Requests at any moment against steps far shorter than a scheduler delay: every window is a fresh one, made of
// the steps between its ends (never the previous window's figures, never an empty one).
TEST_F(Engine, BgWindowsFollowEachOther)
{
    open(kFp);
    struct engine_bg_opts o = {200000, 0};  // 0.2 ms metering steps
    Bg bg;
    ASSERT_EQ(engine_start(s, 30, &o, nullptr, &bg.e, why, sizeof why), 0) << why;
    struct engine_window prev, w;
    ASSERT_EQ(engine_read(bg.e, &prev, why, sizeof why), 0) << why;
    unsigned bad = 0;
    for (unsigned i = 0; i < 1000 && !bad; i++) {
        if (i % 3)
            std::this_thread::sleep_for(std::chrono::microseconds(i % 400));
        double x = i % 2 ? 30 : 60;
        if (i % 5 == 0) {
            ASSERT_EQ(engine_set(bg.e, x, why, sizeof why), 0) << why;
        }
        ASSERT_EQ(engine_read(bg.e, &w, why, sizeof why), 0) << why;
        if (i % 5 == 0) {
            EXPECT_EQ(w.intensity, x);
        }
        bad += w.steps == 0 || w.t0_ns <= prev.t1_ns || w.t1_ns <= w.t0_ns || w.wall_ns != w.t1_ns - w.t0_ns;
        EXPECT_GE(w.steps, 1u) << "read " << i;
        EXPECT_GT(w.t0_ns, prev.t1_ns) << "read " << i;
        EXPECT_GT(w.t1_ns, w.t0_ns) << "read " << i;
        EXPECT_DOUBLE_EQ(w.achieved_pct, w.intensity) << "read " << i;  // the fake footprint holds exactly x
        prev = w;
    }
}

// engine_set changes the intensity: each window reports the achieved pressure at its own level.
TEST_F(Engine, BgSetChangesTheIntensity)
{
    open(kDuty);
    struct engine_bg_opts o = {50 * kMs, 0};
    Bg bg;
    ASSERT_EQ(engine_start(s, 20, &o, nullptr, &bg.e, why, sizeof why), 0) << why;
    struct engine_window lo, hi, same;
    ASSERT_EQ(engine_mark(bg.e, why, sizeof why), 0) << why;
    hold_ms(400);
    ASSERT_EQ(engine_read(bg.e, &lo, why, sizeof why), 0) << why;
    ASSERT_EQ(engine_set(bg.e, 80, why, sizeof why), 0) << why;
    hold_ms(400);
    ASSERT_EQ(engine_read(bg.e, &hi, why, sizeof why), 0) << why;
    // the same level again: no set_intensity, but a new window all the same
    ASSERT_EQ(engine_set(bg.e, 80, why, sizeof why), 0) << why;
    ASSERT_EQ(engine_mark(bg.e, why, sizeof why), 0) << why;
    hold_ms(200);
    ASSERT_EQ(engine_read(bg.e, &same, why, sizeof why), 0) << why;
    EXPECT_EQ(engine_status(bg.e, why, sizeof why), 0) << why;
    EXPECT_EQ(lo.intensity, 20.0);
    EXPECT_EQ(hi.intensity, 80.0);
    // A duty SoI's achieved is its worker's on-CPU share: 80 % is more than a CPU shared with busy threads gives it
    // (36-53 % here beside two spinning loops on two CPUs), so the high level is asserted as clearly above the low.
    EXPECT_NEAR(lo.achieved_pct, 20.0, 15.0);
    EXPECT_GT(hi.achieved_pct, lo.achieved_pct + 10.0);
    EXPECT_LT(hi.achieved_pct, 95.0);
    EXPECT_GE(lo.steps, 8u) << "400 ms of 50 ms metering steps";
    EXPECT_GE(hi.wall_ns, 400 * kMs);
    EXPECT_GT(hi.t0_ns, lo.t1_ns);
    EXPECT_GT(same.t0_ns, hi.t1_ns);
    EXPECT_GE(same.wall_ns, 200 * kMs);
    EXPECT_LT(same.wall_ns, 400 * kMs);
    EXPECT_GT(same.achieved_pct, lo.achieved_pct + 10.0);
    EXPECT_EQ(state.set_calls, (std::vector<double>{20, 80}));
}

// The workers' own CPU time: in every engine_run step and over a background window.
TEST_F(Engine, BgCpuTimeRateAndShare)
{
    open(kSpin, {0, 1});
    Sched sc;
    ASSERT_EQ(ramp_hold(&sc.r, 100, 100 * kMs), 0);
    struct step_result r;
    unsigned ndone = 0;
    ASSERT_EQ(engine_run(s, &sc.r, nullptr, nullptr, &r, &ndone, why, sizeof why), 0) << why;
    EXPECT_GT(r.cpu_ns, 0u);
    EXPECT_LE((double)r.cpu_ns, (double)r.wall_ns * 2 * 1.05);

    struct engine_bg_opts o = {20 * kMs, 0};
    Bg bg;
    ASSERT_EQ(engine_start(s, 100, &o, nullptr, &bg.e, why, sizeof why), 0) << why;
    hold_ms(300);
    struct engine_window w;
    ASSERT_EQ(engine_read(bg.e, &w, why, sizeof why), 0) << why;
    EXPECT_GT(w.cpu_ns, 0u);
    EXPECT_LE((double)w.cpu_ns, (double)w.wall_ns * 2 * 1.05) << "two workers, no more than their CPUs";
    EXPECT_GE(w.rate_cpu * 2 * 1.05, w.rate) << "two workers get no more than two CPU seconds per wall second";
    EXPECT_DOUBLE_EQ(w.rate_cpu, (double)w.units / ((double)w.cpu_ns / 1e9));
    EXPECT_DOUBLE_EQ(w.cpu_share, (double)w.cpu_ns / ((double)w.wall_ns * 2));
    EXPECT_GT(w.cpu_share, 0.0);
    EXPECT_LE(w.cpu_share, 1.05);
}

// unthrottled: a FOOTPRINT SoI's rate cap is off (its work rate must be free to fall, or to rise).
TEST_F(Engine, BgUnthrottledIgnoresTheRateCap)
{
    open(kFp);
    s->rate_cap = 20000;  // units/s; the fake does ~200 000 (5 us per unit) flat out
    struct engine_window capped, free_run;
    for (int unthrottled = 0; unthrottled < 2; unthrottled++) {
        struct engine_bg_opts o = {50 * kMs, unthrottled};
        Bg bg;
        ASSERT_EQ(engine_start(s, 50, &o, nullptr, &bg.e, why, sizeof why), 0) << why;
        hold_ms(300);
        ASSERT_EQ(engine_read(bg.e, unthrottled ? &free_run : &capped, why, sizeof why), 0) << why;
    }
    EXPECT_LT(capped.rate, 20000 * 1.3) << "capped";
    EXPECT_GT(capped.rate, 20000 * 0.5) << "and running";
    EXPECT_GT(free_run.rate, 20000 * 2.0) << "the cap is off";
    EXPECT_DOUBLE_EQ(capped.achieved_pct, 50.0);  // the fake footprint reports what it holds
}

// The stop flag: every call returns -EINTR within a few ms of it; engine_stop cleans up.
TEST_F(Engine, BgStopFlagInterrupts)
{
    open(kDuty, {0, 1});
    atomic_int stop{0};
    struct engine_bg_opts o = {10000 * kMs, 0};  // one metering step would last 10 s
    Bg bg;
    ASSERT_EQ(engine_start(s, 50, &o, &stop, &bg.e, why, sizeof why), 0) << why;
    std::thread raiser([&] {
        hold_ms(100);
        stop.store(1);
    });
    uint64_t t_raise = 0;
    int rc = 0;
    // a caller blocked nowhere notices at its next call; the control thread parks the workers on its own
    while ((rc = engine_status(bg.e, why, sizeof why)) == 0)
        hold_ms(1);
    t_raise = clk_mono_ns();
    raiser.join();
    EXPECT_EQ(rc, -EINTR);
    struct engine_window w;
    EXPECT_EQ(engine_read(bg.e, &w, why, sizeof why), -EINTR);
    EXPECT_NE(strstr(why, "interrupted"), nullptr) << why;
    EXPECT_EQ(engine_set(bg.e, 10, why, sizeof why), -EINTR);
    EXPECT_EQ(engine_mark(bg.e, why, sizeof why), -EINTR);
    EXPECT_LT(clk_mono_ns() - t_raise, 100 * kMs);
    uint64_t t = clk_mono_ns();
    EXPECT_EQ(engine_stop(bg.e, why, sizeof why), 0) << why;
    bg.e = nullptr;
    EXPECT_LT(clk_mono_ns() - t, 100 * kMs) << "the 10 s step ended at once";
    uint64_t steps = state.steps.load();
    hold_ms(20);
    EXPECT_EQ(state.steps.load(), steps) << "nothing runs after engine_stop";

    // raised before the start: nothing starts
    struct engine_bg *e2 = reinterpret_cast<struct engine_bg *>(&stop);
    EXPECT_EQ(engine_start(s, 50, &o, &stop, &e2, why, sizeof why), -EINTR);
    EXPECT_EQ(e2, nullptr);
}

// Raised while a caller waits for its answer: the control thread is in a long set_intensity (one that does not
// poll the stop flag itself); the caller returns within a few ms of the flag all the same.
TEST_F(Engine, BgStopFlagWhileACallWaits)
{
    open(kFp);
    atomic_int stop{0};
    Bg bg;
    ASSERT_EQ(engine_start(s, 10, nullptr, &stop, &bg.e, why, sizeof why), 0) << why;
    state.set_delay_ms = 400;
    std::atomic<uint64_t> t_raise{0};
    std::thread raiser([&] {
        hold_ms(50);
        t_raise = clk_mono_ns();
        stop.store(1);
    });
    EXPECT_EQ(engine_set(bg.e, 20, why, sizeof why), -EINTR);
    uint64_t t_ret = clk_mono_ns();
    raiser.join();
    EXPECT_GE(t_ret, t_raise.load()) << "it waited for its answer until the flag rose";
    EXPECT_LT(t_ret - t_raise.load(), 100 * kMs) << "within a few ms of the flag, not after the 400 ms set";
    EXPECT_EQ(engine_stop(bg.e, why, sizeof why), 0) << why;
    bg.e = nullptr;
}

// An SoI failure halts the engine and is reported, with the SoI's name or its own words, by the next call,
// engine_status and engine_stop.
TEST_F(Engine, BgSoiFailureIsReported)
{
    open(kFp);
    struct engine_bg_opts o = {20 * kMs, 0};
    Bg bg;
    ASSERT_EQ(engine_start(s, 0, &o, nullptr, &bg.e, why, sizeof why), 0) << why;
    state.fail_step = -EIO;  // once the intensity is above 0
    int rc = engine_set(bg.e, 50, why, sizeof why);
    EXPECT_TRUE(rc == 0 || rc == -EIO) << rc;
    hold_ms(50);
    struct engine_window w;
    why[0] = 0;
    EXPECT_EQ(engine_read(bg.e, &w, why, sizeof why), -EIO);
    EXPECT_NE(strstr(why, "fake-fp"), nullptr) << why;
    EXPECT_NE(strstr(why, strerror(EIO)), nullptr) << why;
    why[0] = 0;
    EXPECT_EQ(engine_status(bg.e, why, sizeof why), -EIO);
    EXPECT_NE(strstr(why, "fake-fp"), nullptr) << why;
    EXPECT_EQ(engine_mark(bg.e, why, sizeof why), -EIO);
    why[0] = 0;
    EXPECT_EQ(engine_stop(bg.e, why, sizeof why), -EIO);
    EXPECT_NE(strstr(why, strerror(EIO)), nullptr) << why;
    bg.e = nullptr;

    // set_intensity failing: in engine_set, in the SoI's own words; in engine_start, nothing is left running
    state.fail_step = 0;
    ASSERT_EQ(engine_start(s, 10, &o, nullptr, &bg.e, why, sizeof why), 0) << why;
    state.fail_set = -ENOSPC;
    EXPECT_EQ(engine_set(bg.e, 20, why, sizeof why), -ENOSPC);
    EXPECT_NE(strstr(why, "no room for 20"), nullptr) << why;
    EXPECT_EQ(engine_status(bg.e, why, sizeof why), -ENOSPC);
    struct engine_bg *e2 = nullptr;
    EXPECT_EQ(engine_start(s, 30, &o, nullptr, &e2, why, sizeof why), -ENOSPC);
    EXPECT_EQ(e2, nullptr);
}

// engine_wave: the SoI alternates between its level and 0 on the wave's period, set_intensity at every flip (the
// footprint released and grown again), until engine_set ends the wave. On a coarse period (200 ms phases, 10 ms
// steps, windows of 50 ms): most windows lie inside one phase, so their intensities alternate in runs; a window of
// whole periods averages both.
TEST_F(Engine, BgWaveAlternatesUntilSet)
{
    open(kFp);
    struct engine_bg_opts o = {10 * kMs, 0};
    Bg bg;
    ASSERT_EQ(engine_start(s, 30, &o, nullptr, &bg.e, why, sizeof why), 0) << why;
    EXPECT_EQ(engine_wave(bg.e, 0, 200 * kMs, 200 * kMs, why, sizeof why), -EINVAL);
    EXPECT_EQ(engine_wave(bg.e, 100, 0, 200 * kMs, why, sizeof why), -EINVAL);
    EXPECT_EQ(engine_wave(bg.e, 100, 200 * kMs, 0, why, sizeof why), -EINVAL);
    ASSERT_EQ(engine_wave(bg.e, 100, 200 * kMs, 200 * kMs, why, sizeof why), 0) << why;
    const uint64_t t0 = clk_mono_ns();
    std::vector<double> x, pct;
    struct engine_window w;
    ASSERT_EQ(engine_mark(bg.e, why, sizeof why), 0) << why;
    while (clk_mono_ns() - t0 < 1600 * kMs) {
        hold_ms(50);
        ASSERT_EQ(engine_read(bg.e, &w, why, sizeof why), 0) << why;
        x.push_back(w.intensity);
        pct.push_back(w.achieved_pct);
    }
    unsigned flips = 0, on = 0;
    for (size_t i = 0; i < x.size(); i++) {
        EXPECT_TRUE(x[i] == 100 || x[i] == 0) << "window " << i << " at " << x[i];
        on += x[i] == 100;
        flips += i && x[i] != x[i - 1];
    }
    // 1.6 s of 0.4 s periods: 8 phases, 7 flips; loose bounds for a loaded host (a late read merges windows)
    EXPECT_GE(flips, 4u);
    EXPECT_LE(flips, 10u);
    EXPECT_GE(on, x.size() / 4);
    EXPECT_LE(on, 3 * x.size() / 4);
    // a window of two whole periods: the footprint held half the time
    ASSERT_EQ(engine_mark(bg.e, why, sizeof why), 0) << why;
    hold_ms(800);
    ASSERT_EQ(engine_read(bg.e, &w, why, sizeof why), 0) << why;
    EXPECT_NEAR(w.achieved_pct, 50.0, 15.0);
    // set_intensity at every flip, alternating
    {
        std::lock_guard<std::mutex> l(state.mu);
        ASSERT_GE(state.set_calls.size(), 6u);
        EXPECT_EQ(state.set_calls[0], 30.0);
        for (size_t i = 1; i < state.set_calls.size(); i++)
            EXPECT_EQ(state.set_calls[i], i % 2 ? 100.0 : 0.0) << "call " << i;
    }
    // engine_set ends the wave: the level holds
    ASSERT_EQ(engine_set(bg.e, 30, why, sizeof why), 0) << why;
    for (int i = 0; i < 6; i++) {
        hold_ms(100);
        ASSERT_EQ(engine_read(bg.e, &w, why, sizeof why), 0) << why;
        EXPECT_EQ(w.intensity, 30.0);
        EXPECT_DOUBLE_EQ(w.achieved_pct, 30.0) << "read " << i;
    }
    EXPECT_EQ(engine_status(bg.e, why, sizeof why), 0) << why;
}

TEST_F(Engine, BgBadArguments)
{
    open(kFp);
    struct engine_bg *e = nullptr;
    EXPECT_EQ(engine_start(s, 101, nullptr, nullptr, &e, why, sizeof why), -EINVAL);
    EXPECT_EQ(engine_start(s, NAN, nullptr, nullptr, &e, why, sizeof why), -EINVAL);
    EXPECT_EQ(engine_start(nullptr, 10, nullptr, nullptr, &e, why, sizeof why), -EINVAL);
    EXPECT_EQ(e, nullptr);
    EXPECT_EQ(engine_stop(nullptr, why, sizeof why), 0);
    EXPECT_EQ(engine_status(nullptr, why, sizeof why), -EINVAL);
    struct engine_window w;
    EXPECT_EQ(engine_read(nullptr, &w, why, sizeof why), -EINVAL);
    Bg bg;
    ASSERT_EQ(engine_start(s, 10, nullptr, nullptr, &bg.e, why, sizeof why), 0) << why;
    EXPECT_EQ(engine_set(bg.e, -1, why, sizeof why), -EINVAL);
    EXPECT_EQ(engine_status(bg.e, why, sizeof why), 0) << "a refused intensity leaves it running";
}

// ---- chase ----------------------------------------------------------------------------------------------------

namespace {

size_t slot_of(const struct chase &c, void *p, size_t skew)
{
    size_t off = (size_t)((char *)p - (char *)c.base);
    size_t i = off / c.stride;
    size_t want = skew ? ((i * skew) % c.stride) & ~(size_t)63 : 0;
    EXPECT_EQ(off - i * c.stride, want) << "slot " << i << " pointer at the wrong offset";
    return i;
}

// Walks every chain for its share of one pass and checks that the union is every slot exactly once, and that
// following the pointers for n steps from any head returns to it (one single cycle of length n).
void check_cycle(size_t nslots, size_t stride, size_t skew, unsigned nchains, uint64_t seed)
{
    SCOPED_TRACE("nslots " + std::to_string(nslots) + " stride " + std::to_string(stride) + " skew " +
                 std::to_string(skew) + " chains " + std::to_string(nchains));
    size_t bytes = nslots * stride;
    void *buf = ib_map(bytes, 0);
    ASSERT_NE(buf, nullptr);
    struct chase c;
    ASSERT_EQ(chase_build(&c, buf, nslots, stride, skew, nchains, seed), 0);
    unsigned eff = nchains < nslots ? nchains : (unsigned)nslots;
    EXPECT_EQ(c.nchains, eff);
    EXPECT_EQ(c.nlines, nslots);
    EXPECT_EQ(c.stride, stride);

    // Whole cycle from head 0.
    std::vector<int> seen(nslots, 0);
    void *p = c.head[0];
    for (size_t k = 0; k < nslots; k++) {
        size_t i = slot_of(c, p, skew);
        ASSERT_LT(i, nslots);
        seen[i]++;
        p = *(void **)p;
    }
    EXPECT_EQ(p, c.head[0]) << "not a single cycle of length nslots";
    for (size_t i = 0; i < nslots; i++)
        ASSERT_EQ(seen[i], 1) << "slot " << i;

    // Chain k covers its own segment [k*n/c, (k+1)*n/c) of the cycle: the segments partition the slots.
    std::vector<int> seen2(nslots, 0);
    for (unsigned k = 0; k < eff; k++) {
        size_t seg = (size_t)(k + 1) * nslots / eff - (size_t)k * nslots / eff;
        void *q = c.head[k];
        for (size_t j = 0; j < seg; j++) {
            seen2[slot_of(c, q, skew)]++;
            q = *(void **)q;
        }
        if (k + 1 < eff)
            EXPECT_EQ(q, c.head[k + 1]) << "chain " << k << " does not end where chain " << k + 1 << " starts";
        else
            EXPECT_EQ(q, c.head[0]);
    }
    for (size_t i = 0; i < nslots; i++)
        ASSERT_EQ(seen2[i], 1) << "slot " << i;

    // chase_run: after nslots steps every chain is back at its head.
    struct chase c2 = c;
    chase_run(&c2, nslots);
    for (unsigned k = 0; k < eff; k++)
        EXPECT_EQ(c2.head[k], c.head[k]) << "chain " << k;
    // and after one step each head has moved to its successor
    c2 = c;
    chase_run(&c2, 1);
    for (unsigned k = 0; k < eff; k++)
        EXPECT_EQ(c2.head[k], *(void **)c.head[k]);
    ib_unmap(buf, bytes);
}

}  // namespace

TEST(Chase, SingleCycleOneChain) { check_cycle(1000, 64, 0, 1, 42); }
TEST(Chase, SingleCycleEightChains) { check_cycle(4099, 64, 0, 8, 7); }
TEST(Chase, SingleCycleOddChainCount) { check_cycle(777, 64, 0, 5, 3); }
TEST(Chase, PageStrideWithSkew) { check_cycle(300, 4096, 64 * 37, 8, 11); }
TEST(Chase, PageStrideWithSkewOneChain) { check_cycle(257, 4096, 64 * 37, 1, 0); }
TEST(Chase, MoreChainsThanSlots) { check_cycle(3, 64, 0, 8, 5); }
TEST(Chase, OneSlot) { check_cycle(1, 64, 0, 1, 5); }

TEST(Chase, DifferentSeedsGiveDifferentOrders)
{
    const size_t n = 512;
    void *a = ib_map(n * 64, 0), *b = ib_map(n * 64, 0);
    ASSERT_TRUE(a && b);
    struct chase ca, cb;
    ASSERT_EQ(chase_build(&ca, a, n, 64, 0, 1, 1), 0);
    ASSERT_EQ(chase_build(&cb, b, n, 64, 0, 1, 2), 0);
    std::vector<size_t> oa, ob;
    void *p = ca.head[0], *q = cb.head[0];
    for (size_t i = 0; i < n; i++) {
        oa.push_back((size_t)((char *)p - (char *)a) / 64);
        ob.push_back((size_t)((char *)q - (char *)b) / 64);
        p = *(void **)p;
        q = *(void **)q;
    }
    EXPECT_NE(oa, ob);
    // Random, not sequential: few successors are the next slot.
    unsigned seq = 0;
    for (size_t i = 0; i + 1 < n; i++)
        seq += oa[i + 1] == oa[i] + 1;
    EXPECT_LT(seq, 20u);
    ib_unmap(a, n * 64);
    ib_unmap(b, n * 64);
}

TEST(Chase, RejectsBadArguments)
{
    void *buf = ib_map(4096, 0);
    ASSERT_NE(buf, nullptr);
    struct chase c;
    EXPECT_EQ(chase_build(&c, buf, 64, 64, 0, 0, 1), -EINVAL);
    EXPECT_EQ(chase_build(&c, buf, 64, 64, 0, CHASE_MAX_CHAINS + 1, 1), -EINVAL);
    EXPECT_EQ(chase_build(&c, buf, 0, 64, 0, 1, 1), -EINVAL);
    EXPECT_EQ(chase_build(&c, buf, 64, 4, 0, 1, 1), -EINVAL);  // stride smaller than a pointer
    EXPECT_EQ(chase_build(&c, nullptr, 64, 64, 0, 1, 1), -EINVAL);
    EXPECT_EQ(chase_build(nullptr, buf, 64, 64, 0, 1, 1), -EINVAL);
    EXPECT_EQ(chase_build(&c, buf, 64, 64, 0, CHASE_MAX_CHAINS, 1), 0);
    ib_unmap(buf, 4096);
}

TEST(Chase, LatencyIsPositive)
{
    const size_t bytes = 64 * 1024;
    void *buf = ib_map(bytes, 0);
    ASSERT_NE(buf, nullptr);
    double ns = chase_latency_ns(buf, bytes, 20000, 3, 9);
    EXPECT_GT(ns, 0.0);
    EXPECT_LT(ns, 1e6);
    EXPECT_LT(chase_latency_ns(buf, bytes, 20000, 0, 9), 0.0);   // no repeats
    EXPECT_LT(chase_latency_ns(buf, bytes, 0, 3, 9), 0.0);       // no iterations
    ib_unmap(buf, bytes);
}

// ---- stream ---------------------------------------------------------------------------------------------------

namespace {

struct IsaGuard {
    ~IsaGuard() { stream_force_isa(nullptr); }
};

std::vector<const char *> available_isas()
{
    std::vector<const char *> v = {"sse2"};
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        v.push_back("avx2");
    if (__builtin_cpu_supports("avx512f"))
        v.push_back("avx512");
    return v;
}

uint64_t xor_of_words(const void *buf, size_t bytes)
{
    const uint64_t *w = static_cast<const uint64_t *>(buf);
    uint64_t x = 0;
    for (size_t i = 0; i < bytes / 8; i++)
        x ^= w[i];
    return x;
}

}  // namespace

TEST(Stream, ForceIsaValidation)
{
    IsaGuard guard;
    EXPECT_EQ(stream_force_isa("bogus"), -EINVAL);
    EXPECT_EQ(stream_force_isa(""), -EINVAL);
    EXPECT_EQ(stream_force_isa("sse2"), 0);
    EXPECT_STREQ(stream_isa(), "sse2");
    __builtin_cpu_init();
    EXPECT_EQ(stream_force_isa("avx2"), __builtin_cpu_supports("avx2") ? 0 : -ENOTSUP);
    EXPECT_EQ(stream_force_isa("avx512"), __builtin_cpu_supports("avx512f") ? 0 : -ENOTSUP);
    // A refused ISA leaves the previous choice in place.
    ASSERT_EQ(stream_force_isa("sse2"), 0);
    EXPECT_EQ(stream_force_isa("bogus"), -EINVAL);
    EXPECT_STREQ(stream_isa(), "sse2");
    // Auto picks the widest present.
    ASSERT_EQ(stream_force_isa(nullptr), 0);
    EXPECT_STREQ(stream_isa(), available_isas().back());
}

// READ folds the data; every ISA must fold the same data to the same value (all 64-bit words XORed), so every
// byte is really read and a forced fallback computes what the fast path computes.
TEST(Stream, ReadFoldIsTheSameOnEveryIsa)
{
    IsaGuard guard;
    const size_t bytes = 1 * MiB + 256 * 3;
    void *buf = ib_map(bytes, 0);
    ASSERT_NE(buf, nullptr);
    uint64_t s = 0x1234;
    for (size_t i = 0; i < bytes / 8; i++)
        static_cast<uint64_t *>(buf)[i] = ib_rand(&s);
    const uint64_t want = xor_of_words(buf, bytes);
    ASSERT_NE(want, 0u);
    for (const char *isa : available_isas()) {
        ASSERT_EQ(stream_force_isa(isa), 0) << isa;
        EXPECT_STREQ(stream_isa(), isa);
        EXPECT_EQ(stream_pass(buf, bytes, STREAM_READ), want) << isa;
        // Changing one word anywhere changes the fold.
        uint64_t *w = static_cast<uint64_t *>(buf);
        for (size_t at : {size_t(0), size_t(1), size_t(5), size_t(7), size_t(31), bytes / 8 - 1}) {
            w[at] ^= 0x100;
            EXPECT_EQ(stream_pass(buf, bytes, STREAM_READ), want ^ 0x100) << isa << " word " << at;
            w[at] ^= 0x100;
        }
    }
    // Only whole 256-byte blocks are streamed: a length that is not a multiple of 256 is rounded down.
    ASSERT_EQ(stream_force_isa(nullptr), 0);
    EXPECT_EQ(stream_pass(buf, 256 + 100, STREAM_READ), xor_of_words(buf, 256));
    ib_unmap(buf, bytes);
}

TEST(Stream, WriteAndCopyOnEveryIsa)
{
    IsaGuard guard;
    const size_t bytes = 256 * 1024;
    void *buf = ib_map(bytes, 0);
    ASSERT_NE(buf, nullptr);
    uint64_t *w = static_cast<uint64_t *>(buf);
    for (const char *isa : available_isas()) {
        SCOPED_TRACE(isa);
        ASSERT_EQ(stream_force_isa(isa), 0);
        memset(buf, 0xAB, bytes);
        EXPECT_EQ(stream_pass(buf, bytes, STREAM_WRITE), bytes);
        size_t bad = 0;
        for (size_t i = 0; i < bytes / 8; i++)
            bad += w[i] != bytes;
        EXPECT_EQ(bad, 0u) << "WRITE must store its pattern in every word";

        uint64_t s = 99;
        for (size_t i = 0; i < bytes / 8; i++)
            w[i] = ib_rand(&s);
        EXPECT_EQ(stream_pass(buf, bytes, STREAM_COPY), bytes / 2);
        EXPECT_EQ(memcmp(buf, static_cast<char *>(buf) + bytes / 2, bytes / 2), 0) << "COPY: second half = first";
    }
    ib_unmap(buf, bytes);
}

// ---- ib_map ---------------------------------------------------------------------------------------------------

TEST(Map, LiveBytesBalanced)
{
    const uint64_t before = ib_map_live_bytes();
    EXPECT_EQ(ib_map(0, 1), nullptr);
    EXPECT_EQ(ib_map_live_bytes(), before);
    void *a = ib_map(1, 1);  // rounded up to one 2 MiB unit
    ASSERT_NE(a, nullptr);
    EXPECT_EQ((uintptr_t)a % (2 * MiB), 0u) << "2 MiB aligned";
    EXPECT_EQ(ib_map_live_bytes(), before + 2 * MiB);
    void *b = ib_map(5 * MiB + 1, 0);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ((uintptr_t)b % (2 * MiB), 0u);
    EXPECT_EQ(ib_map_live_bytes(), before + 2 * MiB + 6 * MiB);
    memset(b, 1, 5 * MiB + 1);  // the whole requested range is usable
    static_cast<char *>(a)[0] = 1;
    ib_unmap(a, 1);
    EXPECT_EQ(ib_map_live_bytes(), before + 6 * MiB);
    ib_unmap(b, 5 * MiB + 1);
    EXPECT_EQ(ib_map_live_bytes(), before);
    ib_unmap(nullptr, 4096);  // no-ops
    ib_unmap(b, 0);
    EXPECT_EQ(ib_map_live_bytes(), before);
}

// A length so large that rounding it up to 2 MiB wraps must be refused, not mapped as a few bytes
TEST(Map, RefusesALengthThatWrapsWhenRounded)
{
    const uint64_t before = ib_map_live_bytes();
    for (size_t bytes : {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 2 * MiB + 2, SIZE_MAX - 2 * MiB - 1}) {
        SCOPED_TRACE(bytes);
        errno = 0;
        EXPECT_EQ(ib_map(bytes, 0), nullptr);
        EXPECT_EQ(errno, ENOMEM);
        EXPECT_EQ(ib_map_live_bytes(), before);
    }
}

// ---- kit_shares -----------------------------------------------------------------------------------------------

TEST(KitShares, SyntheticTopology)
{
    struct topo *t = nullptr;
    char why[256] = "";
    ASSERT_EQ(topo_load(&t, kTwoSocket, why, sizeof why), 0) << why;
    double share[4];
    unsigned nd = 0;

    const int same_l3[] = {0, 2};  // two cores of socket 0
    ASSERT_EQ(kit_shares(t, TOPO_SCOPE_LLC, same_l3, 2, share, &nd), 0);
    EXPECT_DOUBLE_EQ(share[0], 0.5);
    EXPECT_DOUBLE_EQ(share[1], 0.5);
    EXPECT_EQ(nd, 1u);
    ASSERT_EQ(kit_shares(t, TOPO_SCOPE_L2, same_l3, 2, share, &nd), 0);  // private L2s
    EXPECT_DOUBLE_EQ(share[0], 1.0);
    EXPECT_DOUBLE_EQ(share[1], 1.0);
    EXPECT_EQ(nd, 2u);

    const int smt[] = {4, 5};  // SMT siblings of core 2
    ASSERT_EQ(kit_shares(t, TOPO_SCOPE_CORE, smt, 2, share, &nd), 0);
    EXPECT_DOUBLE_EQ(share[0], 0.5);
    EXPECT_DOUBLE_EQ(share[1], 0.5);
    EXPECT_EQ(nd, 1u);

    const int sockets[] = {0, 8};
    ASSERT_EQ(kit_shares(t, TOPO_SCOPE_LLC, sockets, 2, share, &nd), 0);
    EXPECT_DOUBLE_EQ(share[0], 1.0);
    EXPECT_DOUBLE_EQ(share[1], 1.0);
    EXPECT_EQ(nd, 2u);

    const int mixed[] = {0, 2, 4, 9};  // three on socket 0's L3, one on socket 1's
    ASSERT_EQ(kit_shares(t, TOPO_SCOPE_LLC, mixed, 4, share, &nd), 0);
    EXPECT_DOUBLE_EQ(share[0], 1.0 / 3);
    EXPECT_DOUBLE_EQ(share[1], 1.0 / 3);
    EXPECT_DOUBLE_EQ(share[2], 1.0 / 3);
    EXPECT_DOUBLE_EQ(share[3], 1.0);
    EXPECT_EQ(nd, 2u);

    const int twice[] = {3, 3};  // the same PU twice shares everything, even the PU
    ASSERT_EQ(kit_shares(t, TOPO_SCOPE_PU, twice, 2, share, nullptr), 0);
    EXPECT_DOUBLE_EQ(share[0], 0.5);
    EXPECT_DOUBLE_EQ(share[1], 0.5);
    topo_destroy(t);
}

// stream_step keeps its position vector-aligned whatever the chunk (a triad chunk/3 that was not a multiple of 64
// once advanced the position to misaligned addresses: caught by UBSan) and counts what it streamed.
TEST(Kernels, StreamStepStaysAlignedAndCounts)
{
    const size_t ws = 3 * 64 * 1024 + 4096;
    void *buf = ib_map(ws, 0);
    ASSERT_NE(buf, nullptr);
    memset(buf, 0, ws);
    for (enum stream_op op : {STREAM_READ, STREAM_TRIAD}) {
        size_t pos = 0;
        for (size_t chunk : {4096 + 100, 16384 + 7, 100000, 3 * 65536 + 1}) {
            for (int i = 0; i < 20; i++) {
                uint64_t bytes = stream_step(buf, ws, &pos, chunk, op);
                EXPECT_EQ(pos % 256, 0u) << "op " << op << " chunk " << chunk;
                EXPECT_LT(pos, stream_span(ws, op));
                size_t per = (op == STREAM_TRIAD ? chunk / 3 : chunk) & ~(size_t)255;
                EXPECT_EQ(bytes, op == STREAM_TRIAD ? 3 * (uint64_t)per : (uint64_t)per);
            }
        }
    }
    ib_unmap(buf, ws);
}
