// test_duty.cpp - duty SoIs as an observer sees them: `ibench run` in a child process, its worker thread's on-CPU
// share read from /proc/PID/task/TID/schedstat (the kernel's run time of that thread), as `top -H` would.
//
// Bounds are loose on purpose: the suite runs under ctest -j2 on 2 vCPUs, so another test may share the worker's
// CPU. The tight figures (within 2 points of x at 10-90 %, beside stress-ng) are validation/bench-duty's.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "test_support.h"

namespace {

::testing::Environment *const g_cache_env = ::testing::AddGlobalTestEnvironment(new ib_test::PrivateCacheEnv("duty"));

// The thread of pid whose name is `comm` (the engine names its workers "ib-<soi>-<n>"), or -1.
int find_thread(pid_t pid, const std::string &comm)
{
    std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR *d = opendir(dir.c_str());
    if (!d)
        return -1;
    int tid = -1;
    while (struct dirent *e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        std::ifstream f(dir + "/" + e->d_name + "/comm");
        std::string name;
        if (std::getline(f, name) && name == comm) {
            tid = atoi(e->d_name);
            break;
        }
    }
    closedir(d);
    return tid;
}

// The thread's run time so far (ns), the first field of schedstat; -1 when it is gone.
long long run_ns(pid_t pid, int tid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
    long long v = -1;
    if (!(f >> v))
        return -1;
    return v;
}

// Runs `soi` at x % on the last CPU for 5 s and returns its worker's on-CPU % over 2.5 s in the middle, from outside;
// *self gets the run's own on-CPU % (its JSON). -1 when it could not be measured (the test has failed already).
double observed_on_cpu(const char *soi, double x, double *self, std::string *busy)
{
    const std::string cpu = std::to_string(sysconf(_SC_NPROCESSORS_ONLN) - 1);
    ib_test::Proc p;
    EXPECT_TRUE(p.start({"run", "--soi", soi, "--intensity", std::to_string(x), "--cpus", cpu, "--duration", "5",
                         "--json"},
                        {"IBENCH_CACHE_DIR=" + std::string(getenv("IBENCH_CACHE_DIR"))}));
    const std::string comm = std::string("ib-") + soi + "-0";
    int tid = -1;
    // the worker appears once the peak is measured and the engine starts
    p.pump_until([&] { return (tid = find_thread(p.pid, comm)) > 0; }, 30);
    EXPECT_GT(tid, 0) << "no thread named " << comm << "; stderr: " << p.err;
    double share = -1;
    if (tid > 0) {
        p.pump(500); // past the start-up (the wake-up cost measurement, the first quanta)
        long long r0 = run_ns(p.pid, tid);
        double t0 = ib_test::now_s();
        p.pump(2500);
        long long r1 = run_ns(p.pid, tid);
        double t1 = ib_test::now_s();
        EXPECT_GE(r0, 0);
        EXPECT_GT(r1, r0) << "the worker ran";
        if (r0 >= 0 && r1 > r0)
            share = 100.0 * (double)(r1 - r0) / ((t1 - t0) * 1e9);
    }
    EXPECT_TRUE(p.finish(30));
    EXPECT_EQ(p.exit_code(), 0) << p.err;
    *busy = ib_test::busy_why_run_json(p.out); // the run's own measure of its worker's run-queue delay
    const char *k = strstr(p.out.c_str(), "\"on_cpu_pct\":");
    *self = k ? atof(k + strlen("\"on_cpu_pct\":")) : -1;
    EXPECT_NE(k, nullptr) << p.out;
    return share;
}

} // namespace

// The issue this answers: at 25 % the int worker was on its CPU 59 % of the time (20 us quanta, a sleep after each,
// and every sleep and wake-up costing tens of us of CPU time on this VM). Before the fix this test read 59-67 %.
TEST(DutyOnCpu, IntAt25PercentKeepsItsWorkerUnder35Percent)
{
    std::string busy;
    double self = 0, seen = observed_on_cpu("int", 25, &self, &busy);
    printf("int at 25 %%: worker on-CPU %.1f %% seen from /proc, %.1f %% by the run itself\n", seen, self);
    EXPECT_LT(seen, 35.0);
    // a worker that waited for its CPU gets less than its duty: the lower bound is the host's then (busy guard)
    if (!(seen > 15.0 && fabs(self - seen) <= 8.0))
        IB_SKIP_IF_BUSY(busy);
    EXPECT_GT(seen, 15.0) << "it did work";
    EXPECT_NEAR(self, seen, 8.0) << "the run's own on-CPU % is what an observer sees";
}

TEST(DutyOnCpu, PrefetchAt25PercentToo)
{
    std::string busy;
    double self = 0, seen = observed_on_cpu("prefetch", 25, &self, &busy);
    printf("prefetch at 25 %%: worker on-CPU %.1f %% seen from /proc, %.1f %% by the run itself\n", seen, self);
    EXPECT_LT(seen, 35.0);
    if (!(seen > 15.0 && fabs(self - seen) <= 8.0))
        IB_SKIP_IF_BUSY(busy);
    EXPECT_GT(seen, 15.0);
    EXPECT_NEAR(self, seen, 8.0);
}
