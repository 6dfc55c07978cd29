// test_pressure.cpp - the procfs readers behind the BUSY verdict (common/pressure.h), on recorded text and on
// this process's own threads.
#include <math.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sched.h>
#include <time.h>

#include "test_support.h"

extern "C" {
#include "pressure.h"
}

TEST(Pressure, ParsesPsiWithAndWithoutFullLine)
{
    uint64_t some = 0, full = 0;
    bool hf = false;
    char why[256] = "";
    // recorded here: /proc/pressure/io on Linux 6.1
    ASSERT_EQ(0, ib_psi_parse("some avg10=1.00 avg60=2.68 avg300=1.13 total=4526060\n"
                              "full avg10=0.92 avg60=2.58 avg300=1.07 total=4331335\n",
                              &some, &full, &hf, why, sizeof(why)))
        << why;
    EXPECT_EQ(4526060u, some);
    EXPECT_EQ(4331335u, full);
    EXPECT_TRUE(hf);
    // a kernel before 5.13: /proc/pressure/cpu has no "full" line
    ASSERT_EQ(0, ib_psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=17\n", &some, &full, &hf, why,
                              sizeof(why)));
    EXPECT_EQ(17u, some);
    EXPECT_FALSE(hf);
    EXPECT_EQ(-EINVAL, ib_psi_parse("nonsense\n", &some, &full, &hf, why, sizeof(why)));
    EXPECT_NE(nullptr, strstr(why, "some"));
    EXPECT_EQ(-EINVAL, ib_psi_parse("some avg10=0.00 total=x\n", &some, &full, &hf, why, sizeof(why)));
}

TEST(Pressure, ParsesStealFromTheAggregateCpuLine)
{
    uint64_t steal = 0, total = 0;
    char why[256] = "";
    ASSERT_EQ(0, ib_stat_parse("cpu  5556 0 2470 22830 489 0 29 32 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n", &steal, &total,
                               why, sizeof(why)))
        << why;
    EXPECT_EQ(32u, steal);
    EXPECT_EQ(5556u + 2470 + 22830 + 489 + 29 + 32, total); // guest time is inside user: not counted twice
    // an old kernel without steal: 0 stolen, not an error
    ASSERT_EQ(0, ib_stat_parse("cpu  10 0 10 80\n", &steal, &total, why, sizeof(why)));
    EXPECT_EQ(0u, steal);
    EXPECT_EQ(100u, total);
    EXPECT_EQ(-EINVAL, ib_stat_parse("intr 1 2 3\n", &steal, &total, why, sizeof(why)));
    EXPECT_EQ(-EINVAL, ib_stat_parse("cpu  1 2\n", &steal, &total, why, sizeof(why)));
}

TEST(Pressure, DeltaIsAShareOfWallTimeAndAbsentStaysAbsent)
{
    ib_pressure_snap a{}, b{};
    a.t_ns = 0;
    b.t_ns = 2000000000ULL; // 2 s
    a.psi_have[IB_PSI_CPU] = b.psi_have[IB_PSI_CPU] = true;
    a.psi_some_us[IB_PSI_CPU] = 1000;
    b.psi_some_us[IB_PSI_CPU] = 1000 + 500000; // 0.5 s of 2 s
    a.psi_have[IB_PSI_IO] = true;              // io vanished in b: absent
    a.stat_have = b.stat_have = true;
    a.total_ticks = 100;
    b.total_ticks = 500;
    a.steal_ticks = 10;
    b.steal_ticks = 50;
    ib_pressure p{};
    ib_pressure_delta(&a, &b, &p);
    EXPECT_DOUBLE_EQ(2.0, p.wall_s);
    EXPECT_DOUBLE_EQ(25.0, p.some_pct[IB_PSI_CPU]);
    EXPECT_TRUE(isnan(p.some_pct[IB_PSI_IO]));
    EXPECT_TRUE(isnan(p.some_pct[IB_PSI_MEM]));
    EXPECT_DOUBLE_EQ(10.0, p.steal_pct);

    ib_pressure acc{};
    ib_pressure_add(&acc, &p);
    ib_pressure q = p;
    q.wall_s = 6.0;
    q.some_pct[IB_PSI_CPU] = 5.0;
    q.some_pct[IB_PSI_IO] = 40.0;
    ib_pressure_add(&acc, &q);
    EXPECT_DOUBLE_EQ(8.0, acc.wall_s);
    EXPECT_DOUBLE_EQ((25.0 * 2 + 5.0 * 6) / 8, acc.some_pct[IB_PSI_CPU]);
    EXPECT_DOUBLE_EQ(40.0, acc.some_pct[IB_PSI_IO]); // the only interval that had it
}

TEST(Pressure, SnapshotReadsARecordedProcfsRoot)
{
    ib_test::TempDir d("pressure");
    ASSERT_FALSE(d.path().empty());
    ASSERT_EQ(0, mkdir((d.path() + "/pressure").c_str(), 0755));
    ib_test::write_file(d.path() + "/pressure/cpu", "some avg10=0.00 avg60=0.00 avg300=0.00 total=777\n");
    ib_test::write_file(d.path() + "/stat", "cpu  1 2 3 4 5 6 7 8 0 0\n");
    ib_pressure_snap s{};
    char why[256] = "";
    ASSERT_EQ(0, ib_pressure_read(&s, d.path().c_str(), why, sizeof(why))) << why;
    EXPECT_TRUE(s.psi_have[IB_PSI_CPU]);
    EXPECT_EQ(777u, s.psi_some_us[IB_PSI_CPU]);
    EXPECT_FALSE(s.psi_have[IB_PSI_IO]); // not there: absent, not zero
    EXPECT_TRUE(s.stat_have);
    EXPECT_EQ(8u, s.steal_ticks);
    EXPECT_EQ(-ENOENT, ib_pressure_read(&s, "/nonexistent-procfs", why, sizeof(why)));
}

TEST(Pressure, WaitShareOfTheCallingThread)
{
    ib_sched a{}, b{};
    char why[256] = "";
    int rc = ib_sched_thread(0, &a, why, sizeof(why));
    if (rc == -ENOENT)
        GTEST_SKIP() << "no schedstat on this kernel: " << why;
    ASSERT_EQ(0, rc) << why;
    // spin 50 ms on-CPU
    timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 10000; i++)
            x = x + (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e9 + (t.tv_nsec - t0.tv_nsec) < 50e6);
    ASSERT_EQ(0, ib_sched_thread(0, &b, why, sizeof(why))) << why;
    EXPECT_GE(b.run_ns - a.run_ns, 20000000u); // it ran: at least 20 of the 50 ms, however busy the machine
    double w = ib_sched_wait_pct(&a, &b);
    EXPECT_GE(w, 0.0);
    EXPECT_LE(w, 100.0);
    // the process view includes this thread
    ib_sched p{};
    ASSERT_EQ(0, ib_sched_process(0, &p, why, sizeof(why))) << why;
    EXPECT_GE(p.ntasks, 1u);
    EXPECT_GE(p.run_ns, b.run_ns);
    // a share over an interval that went backwards or was never runnable is unknown, not 0
    EXPECT_TRUE(isnan(ib_sched_wait_pct(&b, &a)));
    EXPECT_TRUE(isnan(ib_sched_wait_pct(&a, &a)));
}

// The busy rule on fake numbers, exactly: above IB_BUSY_WAIT_PCT is busy, at it is not, unmeasured never is.
TEST(Pressure, BusyRuleOnFakeNumbers)
{
    EXPECT_EQ(10.0, IB_BUSY_WAIT_PCT);
    EXPECT_FALSE(ib_busy(0.0));
    EXPECT_FALSE(ib_busy(10.0));
    EXPECT_TRUE(ib_busy(10.000001));
    EXPECT_TRUE(ib_busy(48.0));
    EXPECT_FALSE(ib_busy(NAN));
    // a delta of fake counters: 30 ms waited of 100 ms runnable -> 30 %
    ib_sched a{true, 70000000, 10000000, 100, 2}, b{true, 140000000, 40000000, 130, 2}, d{};
    ib_sched_delta(&a, &b, &d);
    EXPECT_TRUE(d.have);
    EXPECT_EQ(70000000u, d.run_ns);
    EXPECT_EQ(30000000u, d.wait_ns);
    EXPECT_DOUBLE_EQ(30.0, ib_sched_share(&d));
    EXPECT_DOUBLE_EQ(ib_sched_wait_pct(&a, &b), ib_sched_share(&d));
    // backwards (another set of threads) or absent: no delta
    ib_sched_delta(&b, &a, &d);
    EXPECT_FALSE(d.have);
    EXPECT_TRUE(isnan(ib_sched_share(&d)));
    // runnable under IB_BUSY_MIN_RUNNABLE_NS: a few wake-ups' latency, not judged
    ib_sched small{true, 600000, 399999, 10, 1};
    EXPECT_TRUE(isnan(ib_sched_share(&small)));
    small.wait_ns = 400000; // exactly 1 ms runnable: judged, 40 %
    EXPECT_DOUBLE_EQ(40.0, ib_sched_share(&small));
    // adding intervals sums the counters (a ramp's share is over all its runnable time), absent parts left out
    ib_sched acc{}, none{};
    ib_sched_add(&acc, &none);
    EXPECT_FALSE(acc.have);
    ib_sched i1{true, 90000000, 10000000, 40, 1}, i2{true, 50000000, 50000000, 10, 1};
    ib_sched_add(&acc, &i1);
    ib_sched_add(&acc, &i2);
    EXPECT_DOUBLE_EQ(30.0, ib_sched_share(&acc));
    EXPECT_EQ(50u, acc.slices);
}

// The second half of the rule: the mean wait before a run tells another task's slice (ms: the machine took the CPU)
// from a wake-up's latency (us: an I/O SoI woken by its own completions), exactly on fake counters.
TEST(Pressure, WaitPerRunTellsASliceFromAWakeUp)
{
    EXPECT_EQ(250.0, IB_BUSY_WAIT_RUN_US);
    // beside a CPU hog: 30 ms waited over 10 runs, 3 ms each
    ib_sched hog{true, 30000000, 30000000, 10, 1};
    EXPECT_DOUBLE_EQ(3000.0, ib_sched_wait_per_run_us(&hog));
    EXPECT_TRUE(ib_busy_waits(ib_sched_wait_per_run_us(&hog)));
    // a disk SoI alone: 40 % of its runnable time waited, in 2000 wake-ups of 20 us
    ib_sched io{true, 60000000, 40000000, 2000, 1};
    EXPECT_DOUBLE_EQ(40.0, ib_sched_share(&io));
    EXPECT_DOUBLE_EQ(20.0, ib_sched_wait_per_run_us(&io));
    EXPECT_FALSE(ib_busy_waits(ib_sched_wait_per_run_us(&io)));
    // at the bound: judged; unmeasured (no runs, absent): judged, the share alone decides as before
    EXPECT_TRUE(ib_busy_waits(250.0));
    EXPECT_FALSE(ib_busy_waits(249.9));
    ib_sched never{true, 0, 0, 0, 1}, absent{};
    EXPECT_TRUE(isnan(ib_sched_wait_per_run_us(&never)));
    EXPECT_TRUE(isnan(ib_sched_wait_per_run_us(&absent)));
    EXPECT_TRUE(ib_busy_waits(NAN));
    // the slices are parsed from schedstat's third field
    uint64_t r = 0, w = 0, n = 0;
    char why[128];
    ASSERT_EQ(0, ib_schedstat_parse("123 456 789\n", &r, &w, &n, why, sizeof why)) << why;
    EXPECT_EQ(789u, n);
    ASSERT_EQ(0, ib_schedstat_parse("123 456 789\n", &r, &w, nullptr, why, sizeof why)) << why;
}

TEST(Pressure, BusyTextSaysTheFigures)
{
    ib_pressure p{};
    p.wall_s = 1;
    for (int r = 0; r < IB_PSI_N; r++)
        p.some_pct[r] = p.full_pct[r] = NAN;
    p.some_pct[IB_PSI_CPU] = 51.0;
    p.steal_pct = 0.0;
    char t[256];
    ib_busy_text(48.0, &p, t, sizeof(t));
    EXPECT_STREQ("the SoI's threads waited 48.0 % of their runnable time for a CPU (bound 10 %); PSI cpu some 51.0 %, "
                 "steal 0.0 %",
                 t);
    p.some_pct[IB_PSI_CPU] = NAN; // no PSI here: left out
    ib_busy_text(3.25, &p, t, sizeof(t));
    EXPECT_STREQ("the SoI's threads waited 3.2 % of their runnable time for a CPU (bound 10 %); steal 0.0 %", t);
    ib_busy_text(NAN, nullptr, t, sizeof(t));
    EXPECT_NE(nullptr, strstr(t, "not measured"));
}

// ib_sched_threads reads the named threads of this process only; one unreadable thread makes the set absent.
TEST(Pressure, SchedOfNamedThreads)
{
    ib_sched s{};
    char why[256] = "";
    pid_t self = (pid_t)syscall(SYS_gettid);
    // the kernel adds a thread's run time to its schedstat when the thread is switched out or ticked: a test run
    // alone in a fresh process (ctest -R) can read it before either happened, 0. Some CPU, then a sleep, first.
    for (const double t0 = ib_test::now_s(); ib_test::now_s() - t0 < 0.005;)
        ;
    usleep(1000);
    int rc = ib_sched_threads(&self, 1, &s, why, sizeof(why));
    if (rc == -ENOENT)
        GTEST_SKIP() << "no schedstat on this kernel: " << why;
    ASSERT_EQ(0, rc) << why;
    EXPECT_TRUE(s.have);
    EXPECT_EQ(1u, s.ntasks);
    EXPECT_GT(s.run_ns, 0u);
    pid_t two[2] = {self, 999999999}; // no such thread
    EXPECT_EQ(-ENOENT, ib_sched_threads(two, 2, &s, why, sizeof(why)));
    EXPECT_FALSE(s.have);
    EXPECT_NE(nullptr, strstr(why, "999999999"));
}
