// test_pace.cpp - clocks (common/clock.h) and the virtual-time pacers (common/pace.h), on the fake clock.
//
// The simulated worker does what an engine worker does: a quantum of work (the fake clock advances by the
// quantum's work time), a charge, and a sleep until the returned deadline if there is one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "clock.h"
#include "pace.h"

namespace {

constexpr uint64_t kUs = 1000ULL, kMs = 1000000ULL, kSec = 1000000000ULL;
constexpr uint64_t kStart = 1000 * kSec; // fake clocks start away from 0 so "now - burst" cannot underflow

// Simulated peak: a 64 KiB quantum takes 6554 ns (~10 GB/s).
constexpr double kQUnits = 65536.0;
constexpr uint64_t kQNs = 6554;
constexpr double kPeak = kQUnits * 1e9 / (double)kQNs;

struct Sim {
    double units = 0;       // work done
    uint64_t active = 0;    // ns spent working
    uint64_t elapsed = 0;   // ns of clock time
    unsigned throttles = 0; // charges that returned a deadline
    double rate() const { return units * 1e9 / (double)elapsed; }
    double duty() const { return (double)active / (double)elapsed; }
};

// Rate worker: quantum, charge, sleep.
Sim run_bucket(pace_bucket &b, ib_clock &c, uint64_t dur_ns, double q_units = kQUnits, uint64_t q_ns = kQNs)
{
    Sim s;
    const uint64_t t0 = c.fake_ns, end = t0 + dur_ns;
    while (c.fake_ns < end) {
        clk_fake_advance(&c, q_ns);
        s.units += q_units;
        s.active += q_ns;
        uint64_t dl = pace_bucket_charge(&b, q_units);
        if (dl) {
            EXPECT_GT(dl, c.fake_ns);
            s.throttles++;
            c.sleep_until_ns(&c, dl);
        }
    }
    s.elapsed = c.fake_ns - t0;
    return s;
}

// Duty worker: asks first (charge(0)) so that duty 0 does no work at all, then quantum, charge, sleep.
// q_ns_of(i) gives the work time of quantum i.
template <typename F> Sim run_duty(pace_duty &d, ib_clock &c, uint64_t dur_ns, F q_ns_of)
{
    Sim s;
    const uint64_t t0 = c.fake_ns, end = t0 + dur_ns;
    unsigned i = 0;
    while (c.fake_ns < end) {
        uint64_t dl = pace_duty_charge(&d, 0);
        if (dl) {
            c.sleep_until_ns(&c, dl);
            continue;
        }
        uint64_t q = q_ns_of(i++);
        clk_fake_advance(&c, q);
        s.active += q;
        dl = pace_duty_charge(&d, q);
        if (dl) {
            s.throttles++;
            c.sleep_until_ns(&c, dl);
        }
    }
    s.elapsed = c.fake_ns - t0;
    return s;
}

// ---------------------------------------------------------------- clocks

TEST(FakeClock, AdvanceAndSleep)
{
    ib_clock c;
    clk_init_fake(&c, 500);
    EXPECT_EQ(c.now_ns(&c), 500u);
    clk_fake_advance(&c, 250);
    EXPECT_EQ(c.now_ns(&c), 750u);
    EXPECT_EQ(c.fake_slept_ns, 0u); // working is not sleeping
    c.sleep_until_ns(&c, 1000);
    EXPECT_EQ(c.now_ns(&c), 1000u);
    EXPECT_EQ(c.fake_slept_ns, 250u);
    c.sleep_until_ns(&c, 900); // never backwards
    EXPECT_EQ(c.now_ns(&c), 1000u);
    EXPECT_EQ(c.fake_slept_ns, 250u);
    c.sleep_until_ns(&c, 1000);
    EXPECT_EQ(c.fake_slept_ns, 250u);
    c.sleep_until_ns(&c, 5000);
    EXPECT_EQ(c.now_ns(&c), 5000u);
    EXPECT_EQ(c.fake_slept_ns, 4250u);
}

TEST(RealClock, SleepUntilNeverReturnsEarly)
{
    ib_clock c;
    clk_init_monotonic(&c);
    for (int i = 0; i < 5; i++) {
        const uint64_t deadline = c.now_ns(&c) + 2 * kMs;
        c.sleep_until_ns(&c, deadline);
        EXPECT_GE(c.now_ns(&c), deadline);
        EXPECT_GE(clk_mono_ns(), deadline);
    }
    // A deadline in the past returns (the test would hang otherwise).
    c.sleep_until_ns(&c, c.now_ns(&c) - kMs);
    c.sleep_until_ns(&c, 0);
}

TEST(RealClock, MonotoneAndThreadCpu)
{
    uint64_t a = clk_mono_ns(), b = clk_mono_ns();
    EXPECT_GT(a, 0u);
    EXPECT_GE(b, a);
    uint64_t c0 = clk_thread_cpu_ns();
    volatile double x = 1;
    for (int i = 0; i < 1000000; i++)
        x = x * 1.0000001;
    uint64_t c1 = clk_thread_cpu_ns();
    EXPECT_GE(c1, c0);
}

// ---------------------------------------------------------------- pace_bucket

class BucketRate : public ::testing::TestWithParam<double> {};

TEST_P(BucketRate, AchievesTargetWithinHalfPercent)
{
    const double frac = GetParam();
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    const double rate = frac * kPeak;
    ASSERT_EQ(pace_bucket_init(&b, &c, rate, 500 * kUs), 0);
    EXPECT_EQ(b.vt_ns, kStart);
    Sim s = run_bucket(b, c, kSec);
    EXPECT_GE(s.elapsed, kSec);
    EXPECT_NEAR(s.rate() / rate, 1.0, 0.005) << "target " << rate << " achieved " << s.rate();
    EXPECT_EQ((double)b.units_total, s.units);
    EXPECT_EQ(c.fake_slept_ns, s.elapsed - s.active);
    if (frac < 1.0) {
        EXPECT_GT(s.throttles, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Fractions, BucketRate, ::testing::Values(0.01, 0.10, 0.50, 0.90, 1.00));

TEST(Bucket, AwkwardRateOverOneSecond)
{
    // Rate and quantum chosen so no charge is a whole number of ns: rounding per charge would drift.
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    const double rate = 123456789.0; // units/s
    ASSERT_EQ(pace_bucket_init(&b, &c, rate, 200 * kUs), 0);
    Sim s = run_bucket(b, c, kSec, 777.0, 1001);
    EXPECT_NEAR(s.rate() / rate, 1.0, 0.0005);
}

TEST(Bucket, MillionsOfTinyChargesDoNotDrift)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    ASSERT_EQ(pace_bucket_init(&b, &c, 3e9, 0), 0); // 0.333 ns per unit
    uint64_t dl = 0;
    for (int i = 0; i < 3000000; i++)
        dl = pace_bucket_charge(&b, 1.0);
    // 3e6 units at 3e9/s earn exactly 1 ms of virtual time.
    EXPECT_NEAR((double)(dl - kStart), 1e6, 1.0);
    EXPECT_EQ(b.units_total, 3000000u);

    // Fractional charges (units_total is a whole count, so there is no carry for them) are paced by their
    // share to within 1 ns each; with units worth hundreds of ns that is exact enough.
    pace_bucket_set_rate(&b, 3e6); // 333.3 ns per unit
    const uint64_t t_set = c.fake_ns;
    for (int i = 0; i < 1000000; i++)
        dl = pace_bucket_charge(&b, 0.3);
    EXPECT_NEAR((double)(dl - t_set), 1e8, 1e6); // 3e5 units at 3e6/s = 100 ms
}

TEST(Bucket, BoundedCreditAfterStall)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    const uint64_t burst = 500 * kUs;
    const double rate = 0.10 * kPeak;
    ASSERT_EQ(pace_bucket_init(&b, &c, rate, burst), 0);
    run_bucket(b, c, 100 * kMs); // steady state

    clk_fake_advance(&c, 50 * kMs); // stall: preemption, page-fault storm...

    // Catch-up: quanta that run without a deadline.
    const uint64_t t_resume = c.fake_ns;
    double units = 0;
    uint64_t dl = 0;
    unsigned unthrottled = 0;
    while (!dl) {
        clk_fake_advance(&c, kQNs);
        units += kQUnits;
        dl = pace_bucket_charge(&b, kQUnits);
        if (!dl)
            unthrottled++;
        ASSERT_LT(unthrottled, 100000u) << "never throttled after a stall";
    }
    const uint64_t catchup = c.fake_ns - t_resume;
    EXPECT_GT(unthrottled, 0u) << "some credit should be usable";
    EXPECT_LE(catchup, burst) << "throttled only after " << catchup << " ns of catch-up";
    // Work beyond the nominal rate during catch-up is at most one burst's worth (plus the quantum in flight),
    // far from the 50 ms the stall "owed".
    const double excess = units - rate * (double)catchup / 1e9;
    EXPECT_LE(excess, rate * (double)burst / 1e9 + kQUnits);
    EXPECT_LT(excess, rate * (double)(50 * kMs) / 1e9 / 10);

    // And pacing is back on target afterwards.
    c.sleep_until_ns(&c, dl);
    Sim after = run_bucket(b, c, 200 * kMs);
    EXPECT_NEAR(after.rate() / rate, 1.0, 0.005);
}

// The rate SoIs whose real tests cannot bound their shortfall on a shared host, on the fake clock: a paced worker
// gets its target, or, when its quanta are too slow for it, everything they allow; never less.

// interconnect: the hub's quanta are round trips (two messages with one responder) that the host makes 2 us or
// 30 us long; the engine's 2 ms of credit. Target-bound, it gets its target; latency-bound, one message per rtt / 2.
TEST(Bucket, RoundTripQuantaGetTheTargetOrAllTheyAllow)
{
    for (uint64_t rtt : {2 * kUs, 30 * kUs}) {
        SCOPED_TRACE("round trip " + std::to_string(rtt) + " ns");
        ib_clock c;
        clk_init_fake(&c, kStart);
        pace_bucket b;
        const double rate = 2e5;  // msg/s: 20 % of a 1e6 msg/s peak
        ASSERT_EQ(pace_bucket_init(&b, &c, rate, 2 * kMs), 0);
        Sim s = run_bucket(b, c, 150 * kMs, 2.0, rtt);
        const double allowed = std::min(rate, 2e9 / (double)rtt);
        EXPECT_NEAR(s.rate() / allowed, 1.0, 0.01) << "achieved " << s.rate() << " of " << allowed;
    }
}

// A round trip that is slow for a while (a responder descheduled for 1 ms every 10 ms): the 2 ms of credit makes the
// lost rounds up, so the step still reaches its target.
TEST(Bucket, SlowSpellsShorterThanTheCreditAreMadeUp)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    const double rate = 2e5;
    ASSERT_EQ(pace_bucket_init(&b, &c, rate, 2 * kMs), 0);
    const uint64_t t0 = c.fake_ns, end = t0 + 150 * kMs;
    double units = 0;
    while (c.fake_ns < end) {
        clk_fake_advance(&c, ((c.fake_ns - t0) % (10 * kMs)) < kMs ? 1 * kMs : 2 * kUs);
        units += 2;
        if (uint64_t dl = pace_bucket_charge(&b, 2))
            c.sleep_until_ns(&c, dl);
    }
    EXPECT_NEAR(units * 1e9 / (double)(c.fake_ns - t0) / rate, 1.0, 0.01);
}

// disk-bw and net-bw: 25 ms of credit (soi->pace_burst_ns) for an I/O path that stalls for tens of ms. A 256 KiB
// block every 100 us, at 30 % of 2.5 GB/s, with a 20 ms stall in a 150 ms step: the step still gets its target.
TEST(Bucket, IoStallShorterThanItsCreditIsMadeUpWithinTheStep)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    const double block = 256.0 * 1024, rate = 0.3 * 2.5e9;
    ASSERT_EQ(pace_bucket_init(&b, &c, rate, 25 * kMs), 0);
    const uint64_t t0 = c.fake_ns;
    Sim a = run_bucket(b, c, 50 * kMs, block, 100 * kUs);
    clk_fake_advance(&c, 20 * kMs);  // the stall: no block completes
    Sim z = run_bucket(b, c, 80 * kMs, block, 100 * kUs);
    const double achieved = (a.units + z.units) * 1e9 / (double)(c.fake_ns - t0);
    EXPECT_NEAR(achieved / rate, 1.0, 0.01) << "after a 20 ms stall";
    // and a stall longer than the credit loses only what exceeds it (40 ms stalled, 25 ms made up)
    const uint64_t t1 = c.fake_ns;
    clk_fake_advance(&c, 40 * kMs);
    Sim y = run_bucket(b, c, 110 * kMs, block, 100 * kUs);
    const double lost = rate * 150e-3 - y.units;
    EXPECT_NEAR(lost / (rate * 15e-3), 1.0, 0.05) << "c.fake_ns - t1 = " << c.fake_ns - t1;
}

TEST(Bucket, UnlimitedNeverThrottles)
{
    for (double rate : {0.0, -1.0}) {
        ib_clock c;
        clk_init_fake(&c, kStart);
        pace_bucket b;
        ASSERT_EQ(pace_bucket_init(&b, &c, rate, 0), 0);
        for (int i = 0; i < 100000; i++)
            ASSERT_EQ(pace_bucket_charge(&b, 1e12), 0u) << rate;
        Sim s = run_bucket(b, c, 10 * kMs);
        EXPECT_EQ(s.throttles, 0u);
        EXPECT_EQ(c.fake_slept_ns, 0u);
    }
    // set_rate to unlimited mid-run, including when in debt.
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    ASSERT_EQ(pace_bucket_init(&b, &c, 1000.0, 0), 0);
    EXPECT_GT(pace_bucket_charge(&b, 1e6), 0u); // 1000 s of debt
    pace_bucket_set_rate(&b, 0.0);
    EXPECT_EQ(pace_bucket_charge(&b, 1e6), 0u);
}

TEST(Bucket, SetRateMidRunCarriesNoDebtOrCredit)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    const double slow = 0.01 * kPeak, fast = 0.50 * kPeak;
    ASSERT_EQ(pace_bucket_init(&b, &c, slow, 500 * kUs), 0);
    Sim s1 = run_bucket(b, c, 300 * kMs);
    EXPECT_NEAR(s1.rate() / slow, 1.0, 0.005);

    // One more quantum at the slow rate leaves ~100 quanta of debt...
    clk_fake_advance(&c, kQNs);
    uint64_t dl = pace_bucket_charge(&b, kQUnits);
    ASSERT_GT(dl, c.fake_ns + 50 * kQNs);
    // ...which set_rate forgets: the next deadline only reflects the fast rate.
    const uint64_t t_set = c.fake_ns;
    pace_bucket_set_rate(&b, fast);
    EXPECT_EQ(b.vt_ns, t_set);
    EXPECT_EQ(b.units_total, 0u);
    EXPECT_EQ(b.rate, fast);
    clk_fake_advance(&c, kQNs);
    dl = pace_bucket_charge(&b, kQUnits);
    EXPECT_NEAR((double)dl, (double)t_set + kQUnits * 1e9 / fast, 1.0);
    c.sleep_until_ns(&c, dl);
    Sim s2 = run_bucket(b, c, 500 * kMs);
    EXPECT_NEAR(s2.rate() / fast, 1.0, 0.005);

    // Credit is not carried either: after a stall, set_rate puts vt at now.
    clk_fake_advance(&c, 20 * kMs);
    pace_bucket_set_rate(&b, slow);
    EXPECT_EQ(b.vt_ns, c.fake_ns);
    clk_fake_advance(&c, kQNs);
    EXPECT_GT(pace_bucket_charge(&b, kQUnits), c.fake_ns); // throttled on the first quantum
    Sim s3 = run_bucket(b, c, 300 * kMs);
    EXPECT_NEAR(s3.rate() / slow, 1.0, 0.005);
}

TEST(Bucket, InitErrors)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_bucket b;
    EXPECT_EQ(pace_bucket_init(&b, &c, std::numeric_limits<double>::quiet_NaN(), 0), -EINVAL);
    EXPECT_EQ(pace_bucket_init(&b, nullptr, 1.0, 0), -EINVAL);
    EXPECT_EQ(pace_bucket_init(nullptr, &c, 1.0, 0), -EINVAL);
}

// ---------------------------------------------------------------- pace_duty

class DutyCycle : public ::testing::TestWithParam<double> {};

TEST_P(DutyCycle, AchievesDutyWithinPointTwo)
{
    const double duty = GetParam();
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_duty d;
    ASSERT_EQ(pace_duty_init(&d, &c, duty, 500 * kUs), 0);
    Sim s = run_duty(d, c, kSec, [](unsigned) { return 20 * kUs; });
    EXPECT_GE(s.elapsed, kSec);
    EXPECT_NEAR(s.duty() * 100, duty * 100, 0.2) << "achieved " << s.duty() * 100 << " %";
    EXPECT_EQ(c.fake_slept_ns, s.elapsed - s.active);
    if (duty == 1.0) {
        EXPECT_EQ(c.fake_slept_ns, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Duties, DutyCycle, ::testing::Values(0.0, 0.05, 0.10, 0.50, 0.90, 1.00));

TEST(Duty, TenPercentTwentyMicrosecondQuantaIsTightToPointOnePercent)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_duty d;
    ASSERT_EQ(pace_duty_init(&d, &c, 0.10, 500 * kUs), 0);
    Sim s = run_duty(d, c, kSec, [](unsigned) { return 20 * kUs; });
    EXPECT_NEAR(s.duty(), 0.10, 0.001 * 0.10); // 10 % +- 0.1 % (relative)
}

TEST(Duty, IrregularQuantaAndAwkwardDuty)
{
    // Work times vary 5..35 us (deterministic LCG) and 1/duty is not an integer.
    for (double duty : {0.07, 1.0 / 3.0, 0.77}) {
        ib_clock c;
        clk_init_fake(&c, kStart);
        pace_duty d;
        ASSERT_EQ(pace_duty_init(&d, &c, duty, 500 * kUs), 0);
        uint32_t seed = 12345;
        Sim s = run_duty(d, c, kSec, [&seed](unsigned) {
            seed = seed * 1664525u + 1013904223u;
            return 5 * kUs + (uint64_t)(seed >> 8) % (30 * kUs);
        });
        EXPECT_NEAR(s.duty() * 100, duty * 100, 0.2) << duty;
    }
}

TEST(Duty, ZeroIdlesOneBurstAndOneNeverThrottles)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_duty d;
    ASSERT_EQ(pace_duty_init(&d, &c, 0.0, 300 * kUs), 0);
    EXPECT_EQ(pace_duty_charge(&d, 0), kStart + 300 * kUs);
    EXPECT_EQ(pace_duty_charge(&d, 20 * kUs), kStart + 300 * kUs);

    pace_duty_set(&d, 1.0);
    for (int i = 0; i < 1000; i++) {
        clk_fake_advance(&c, 20 * kUs);
        EXPECT_EQ(pace_duty_charge(&d, 20 * kUs), 0u);
    }
    EXPECT_EQ(d.active_ns, 1000 * 20 * kUs);
}

TEST(Duty, BoundedCreditAfterStall)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_duty d;
    const uint64_t burst = 500 * kUs, q = 20 * kUs;
    ASSERT_EQ(pace_duty_init(&d, &c, 0.25, burst), 0);
    run_duty(d, c, 100 * kMs, [q](unsigned) { return q; });
    clk_fake_advance(&c, 50 * kMs); // stall without work
    const uint64_t t_resume = c.fake_ns;
    uint64_t dl = 0, active = 0;
    while (!dl) {
        clk_fake_advance(&c, q);
        active += q;
        dl = pace_duty_charge(&d, q);
        ASSERT_LT(active, 50 * kMs);
    }
    // Extra active time beyond 25 % of the catch-up window is at most burst * duty (+ one quantum).
    const uint64_t catchup = c.fake_ns - t_resume;
    EXPECT_LE(catchup, burst);
    EXPECT_LE((double)active - 0.25 * (double)catchup, 0.25 * (double)burst + (double)q);
    c.sleep_until_ns(&c, dl);
    Sim after = run_duty(d, c, 200 * kMs, [q](unsigned) { return q; });
    EXPECT_NEAR(after.duty(), 0.25, 0.002);
}

TEST(Duty, SetMidRunCarriesNoDebt)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_duty d;
    ASSERT_EQ(pace_duty_init(&d, &c, 0.05, 500 * kUs), 0);
    clk_fake_advance(&c, 20 * kUs);
    uint64_t dl = pace_duty_charge(&d, 20 * kUs);
    EXPECT_EQ(dl, kStart + 400 * kUs); // 20 us at 5 % earns 400 us
    pace_duty_set(&d, 0.5);
    EXPECT_EQ(d.vt_ns, c.fake_ns);
    EXPECT_EQ(d.active_ns, 0u);
    const uint64_t t_set = c.fake_ns;
    clk_fake_advance(&c, 20 * kUs);
    EXPECT_EQ(pace_duty_charge(&d, 20 * kUs), t_set + 40 * kUs);
    Sim s = run_duty(d, c, 500 * kMs, [](unsigned) { return 20 * kUs; });
    EXPECT_NEAR(s.duty(), 0.5, 0.002);

    // Out-of-range values are clamped.
    pace_duty_set(&d, 7.0);
    EXPECT_EQ(d.duty, 1.0);
    pace_duty_set(&d, -1.0);
    EXPECT_EQ(d.duty, 0.0);
    pace_duty_set(&d, std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(d.duty, 0.0);
}

TEST(Duty, PeriodGatesTheSleeps)
{
    // Without a period the worker sleeps after every 20 us quantum; with 1 ms it works 250 us, then sleeps 750 us.
    for (uint64_t period : {0 * kUs, 1000 * kUs}) {
        ib_clock c;
        clk_init_fake(&c, kStart);
        pace_duty d;
        ASSERT_EQ(pace_duty_init(&d, &c, 0.25, 2 * kMs), 0);
        pace_duty_set_period(&d, period);
        Sim s = run_duty(d, c, 100 * kMs, [](unsigned) { return 20 * kUs; });
        EXPECT_NEAR(s.duty(), 0.25, 0.003) << period;
        if (period)
            EXPECT_NEAR(s.throttles, 98, 3) << "one sleep a period (13 quanta make its 260 us of work)";
        else
            EXPECT_NEAR(s.throttles, 1250, 2) << "one sleep a quantum";
    }
}

TEST(Duty, SyncTakesBackAnOverestimate)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_duty d;
    ASSERT_EQ(pace_duty_init(&d, &c, 0.5, 500 * kUs), 0);
    EXPECT_EQ(pace_duty_charge(&d, 100 * kUs), kStart + 200 * kUs);
    // the thread's clock says 60 us were used, not 100: the 40 us charged too much are worth 80 us at 50 %
    EXPECT_EQ(pace_duty_sync(&d, 60 * kUs), kStart + 120 * kUs);
    EXPECT_EQ(d.active_ns, 60 * kUs);
    // and an underestimate pushes it on
    EXPECT_EQ(pace_duty_sync(&d, 90 * kUs), kStart + 180 * kUs);
}

TEST(DutyPeriod, ShortestUnderTwoPercentWithinBounds)
{
    EXPECT_EQ(pace_duty_period_for(0), PACE_PERIOD_MIN_NS);
    EXPECT_EQ(pace_duty_period_for(1 * kUs), PACE_PERIOD_MIN_NS);    // 50 us would do: the floor
    EXPECT_EQ(pace_duty_period_for(40 * kUs), 2000 * kUs);           // 40 us is 2 % of 2 ms
    EXPECT_EQ(pace_duty_period_for(44 * kUs), 2200 * kUs);
    EXPECT_EQ(pace_duty_period_for(1000 * kUs), PACE_PERIOD_MAX_NS); // 50 ms would do: the cap
}

// ---------------------------------------------------------------- pace_dw: a duty worker whose sleeps cost CPU time

// The model of a VM's sleep, after what was measured on one (docs/sois.md, "Duty SoIs"): a sleep to a deadline
// wakes `wake` late, and the thread's clock counts those `wake` ns as its CPU time. A worker: quanta of `q` ns of
// work, pace_dw_worked, sleep, pace_dw_woke with the CPU time used. Returns the thread's on-CPU share.
struct DwSim {
    double on_cpu = 0, overhead = 0; // shares of the elapsed time: CPU time, and CPU time beyond the work
    unsigned sleeps = 0;
};
// q_cpu: the CPU time a quantum of q wall ns gets (less when another thread preempts it); wake2: when not 0, wake-ups
// alternate between wake and wake2.
DwSim run_dw(pace_dw &w, ib_clock &c, uint64_t dur_ns, uint64_t q, uint64_t wake, bool sync = true, uint64_t q_cpu = 0,
             uint64_t wake2 = 0)
{
    DwSim r;
    const uint64_t t0 = c.fake_ns, end = t0 + dur_ns;
    uint64_t cpu = 0, work = 0;
    if (!q_cpu)
        q_cpu = q;
    while (c.fake_ns < end) {
        clk_fake_advance(&c, q);
        cpu += q_cpu;
        work += q_cpu;
        uint64_t dl = pace_dw_worked(&w, q);
        if (dl) {
            uint64_t wk = wake2 && (r.sleeps & 1) ? wake2 : wake;
            c.sleep_until_ns(&c, dl);
            clk_fake_advance(&c, wk);
            cpu += wk;
            r.sleeps++;
            if (sync)
                pace_dw_woke(&w, cpu);
        }
    }
    double el = (double)(c.fake_ns - t0);
    r.on_cpu = (double)cpu / el;
    r.overhead = (double)(cpu - work) / el;
    return r;
}

class DutyWorker : public ::testing::TestWithParam<double> {};

TEST_P(DutyWorker, WakeUpsCountAgainstTheDuty)
{
    // 40 us a wake-up (a KVM guest), estimated at 25 us at start: the thread's clock corrects it, and the period
    // follows the real cost, so the share an observer sees is x and the wake-ups take about 2 % of a CPU.
    const double duty = GetParam();
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_dw w;
    ASSERT_EQ(pace_dw_init(&w, &c, duty, 2 * kMs, 25 * kUs, 0), 0);
    DwSim r = run_dw(w, c, 2 * kSec, 20 * kUs, 40 * kUs);
    EXPECT_NEAR(r.on_cpu * 100, duty * 100, 0.3);
    EXPECT_NEAR((double)pace_dw_period(&w), 2000.0 * kUs, 100.0 * kUs) << "the period followed the real cost";
    EXPECT_LE(r.overhead * 100, 2.2);
}

INSTANTIATE_TEST_SUITE_P(Duties, DutyWorker, ::testing::Values(0.10, 0.25, 0.50, 0.75, 0.90));

TEST(DutyWorkerModel, ChargingOnlyTheWorkOvershootsAsOnTheVm)
{
    // The model reproduces what a user saw (59 % on-CPU at 25 %): the same worker that charges only
    // its work and sleeps after every quantum is on its CPU far more than x. The test above is the fix.
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_dw w;
    ASSERT_EQ(pace_dw_init(&w, &c, 0.25, 2 * kMs, 0, 1), 0); // no wake-up budget; a 1 ns period: sleep every quantum
    DwSim r = run_dw(w, c, kSec, 20 * kUs, 40 * kUs, false);
    EXPECT_GT(r.on_cpu * 100, 50.0);
}

TEST(DutyWorkerModel, TheThreadClockCorrectsWhatTheWallClockCannotSee)
{
    // Quanta preempted a fifth of their time (16 us of CPU in 20 us) and wake-ups of 10 or 70 us in turn: only the
    // thread's clock, read on waking, knows either. The share stays x.
    for (double duty : {0.25, 0.6}) {
        ib_clock c;
        clk_init_fake(&c, kStart);
        pace_dw w;
        ASSERT_EQ(pace_dw_init(&w, &c, duty, 2 * kMs, 40 * kUs, 0), 0);
        DwSim r = run_dw(w, c, 2 * kSec, 20 * kUs, 10 * kUs, true, 16 * kUs, 70 * kUs);
        EXPECT_NEAR(r.on_cpu * 100, duty * 100, 0.3) << duty;
    }
}

TEST(DutyWorkerModel, TimeAwayIsNotIdleCredit)
{
    // Metering steps of 1 ms with 0.4 ms parked between them (a busy engine): the pacer carries over, and the parked
    // time earns no credit, so within the steps the share is x. Without the skip it would spend the parks' credit.
    for (bool skip : {true, false}) {
        ib_clock c;
        clk_init_fake(&c, kStart);
        pace_dw w;
        ASSERT_EQ(pace_dw_init(&w, &c, 0.3, 2 * kMs, 40 * kUs, 0), 0);
        uint64_t in_steps = 0, cpu = 0;
        for (int step = 0; step < 1000; step++) {
            uint64_t end = c.fake_ns + kMs, t0 = c.fake_ns;
            while (c.fake_ns < end) {
                uint64_t dl = w.due;
                if (!dl) {
                    clk_fake_advance(&c, 20 * kUs);
                    cpu += 20 * kUs;
                    dl = pace_dw_worked(&w, 20 * kUs);
                }
                if (dl) {
                    if (dl > end) { // the step ends first: the sleep is cut short, finished in the next step
                        c.sleep_until_ns(&c, end);
                        break;
                    }
                    c.sleep_until_ns(&c, dl);
                    clk_fake_advance(&c, 40 * kUs);
                    cpu += 40 * kUs;
                    pace_dw_woke(&w, cpu);
                }
            }
            in_steps += c.fake_ns - t0;
            clk_fake_advance(&c, 400 * kUs); // parked
            if (skip)
                pace_dw_skip(&w, 400 * kUs);
        }
        double share = (double)cpu / (double)in_steps;
        if (skip)
            EXPECT_NEAR(share * 100, 30.0, 1.0);
        else
            EXPECT_GT(share * 100, 38.0) << "the parked time was spent as credit";
    }
}

TEST(DutyWorkerModel, ForcedPeriodStaysAndOneAtFullDutyNeverSleeps)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_dw w;
    ASSERT_EQ(pace_dw_init(&w, &c, 0.3, 2 * kMs, 40 * kUs, 500 * kUs), 0);
    DwSim r = run_dw(w, c, kSec, 20 * kUs, 40 * kUs);
    EXPECT_EQ(pace_dw_period(&w), 500 * kUs);
    EXPECT_NEAR(r.on_cpu * 100, 30.0, 0.3);
    // one sleep a period: 500 us, or up to a quantum's worth (20 us / 0.3) more, as whole quanta make the work
    EXPECT_GE(r.sleeps, 1700u);
    EXPECT_LE(r.sleeps, 2000u);
    EXPECT_NEAR(r.overhead, r.sleeps * 40e-6, 1e-3) << "what a short forced period costs: 40 us a period";
    EXPECT_GT(r.overhead * 100, 6.5);

    ASSERT_EQ(pace_dw_init(&w, &c, 1.0, 2 * kMs, 40 * kUs, 0), 0);
    r = run_dw(w, c, 100 * kMs, 20 * kUs, 40 * kUs);
    EXPECT_EQ(r.sleeps, 0u);
    EXPECT_DOUBLE_EQ(r.on_cpu, 1.0);
}

TEST(Duty, InitErrors)
{
    ib_clock c;
    clk_init_fake(&c, kStart);
    pace_duty d;
    EXPECT_EQ(pace_duty_init(&d, &c, -0.1, 0), -EINVAL);
    EXPECT_EQ(pace_duty_init(&d, &c, 1.5, 0), -EINVAL);
    EXPECT_EQ(pace_duty_init(&d, &c, std::numeric_limits<double>::quiet_NaN(), 0), -EINVAL);
    EXPECT_EQ(pace_duty_init(&d, nullptr, 0.5, 0), -EINVAL);
    EXPECT_EQ(pace_duty_init(&d, &c, 0.5, 0), 0);
    EXPECT_EQ(d.vt_ns, kStart);
    EXPECT_EQ(d.active_ns, 0u);
}

} // namespace
