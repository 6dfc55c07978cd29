// test_taskcount.cpp - the ipc metric's counters (common/taskcount.h): scaling, inheritance, process trees, and the
// refusal where the PMU is missing. Software events (task-clock: CPU ns) stand in for instructions and cycles, so
// the counting itself is tested on a machine without a PMU.
#include <gtest/gtest.h>

#include <linux/perf_event.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "taskcount.h"

namespace {

const struct tc_event kSoft[2] = {{PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock"},
                                  {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock"}};

// A child that burns `ms` of CPU and exits.
pid_t burner(int ms)
{
    pid_t p = fork();
    if (p == 0) {
        struct timespec t0, t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        do {
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
        _exit(0);
    }
    return p;
}

bool software_events_allowed()
{
    struct taskcount t;
    tc_init(&t, kSoft);
    char why[256];
    int rc = tc_open_self(&t, why, sizeof why);
    tc_close(&t);
    return rc == 0;
}

} // namespace

TEST(TaskCount, ScaleStretchesAMultiplexedCount)
{
    EXPECT_DOUBLE_EQ(tc_scale(1000, 100, 100), 1000.0);
    EXPECT_DOUBLE_EQ(tc_scale(1000, 400, 100), 4000.0) << "ran a quarter of the time";
    EXPECT_TRUE(std::isnan(tc_scale(1000, 400, 0))) << "never ran: no figure";
}

TEST(TaskCount, SelfCountsTheChildrenItStartsAfterwards)
{
    if (!software_events_allowed())
        GTEST_SKIP() << "perf_event_open refused even software events here";
    struct taskcount t;
    tc_init(&t, kSoft);
    char why[256] = "";
    ASSERT_EQ(tc_open_self(&t, why, sizeof why), 0) << why;
    pid_t p = burner(150);
    ASSERT_GT(p, 0);
    int st = 0;
    ASSERT_EQ(waitpid(p, &st, 0), p);
    double a = 0, b = 0;
    ASSERT_EQ(tc_read(&t, &a, &b, why, sizeof why), 0) << why;
    tc_close(&t);
    // the child's 150 ms of CPU were folded into the inherited counter when it exited
    EXPECT_GT(a, 120e6) << "task-clock ns";
    EXPECT_LT(a, 2e9);
    EXPECT_NEAR(a / b, 1.0, 0.2) << "task-clock and cpu-clock agree";
}

TEST(TaskCount, TreeCountsEveryThreadOfAProcessAndItsChildren)
{
    if (!software_events_allowed())
        GTEST_SKIP() << "perf_event_open refused even software events here";
    // a shell whose child spins: the tree is the shell and the spinner
    pid_t sh = fork();
    if (sh == 0) {
        execlp("sh", "sh", "-c", "sh -c 'while :; do :; done' & wait", (char *)nullptr);
        _exit(127);
    }
    ASSERT_GT(sh, 0);
    usleep(200000); // the spinner is running
    struct taskcount t;
    tc_init(&t, kSoft);
    char why[256] = "";
    ASSERT_EQ(tc_open_tree(&t, sh, why, sizeof why), 0) << why;
    EXPECT_GE(t.n, 2u) << "the shell and its spinning child";
    usleep(300000);
    double a = 0, b = 0;
    ASSERT_EQ(tc_read(&t, &a, &b, why, sizeof why), 0) << why;
    tc_close(&t);
    // the spinner and its shell: the whole tree is the shell's children and itself
    char cpath[64];
    snprintf(cpath, sizeof cpath, "/proc/%d/task/%d/children", (int)sh, (int)sh);
    FILE *f = fopen(cpath, "r");
    int child = 0;
    while (f && fscanf(f, "%d", &child) == 1)
        kill(child, SIGKILL);
    if (f)
        fclose(f);
    kill(sh, SIGKILL);
    waitpid(sh, nullptr, 0);
    EXPECT_GT(a, 100e6) << "the spinner's CPU ns over 300 ms, counted through the tree";

    EXPECT_EQ(tc_open_tree(&t, 999999999, why, sizeof why), -ESRCH);
    EXPECT_NE(strstr(why, "gone"), nullptr) << why;
}

// Where there is no PMU (this VM), ipc is refused with the event and the kernel's reason, not a fixed sentence.
TEST(TaskCount, HardwareEventsOpenOrSayWhyNot)
{
    struct taskcount t;
    tc_init(&t, nullptr);
    char why[256] = "";
    int rc = tc_open_self(&t, why, sizeof why);
    struct stat st;
    bool pmu = stat("/sys/bus/event_source/devices/cpu", &st) == 0;
    if (rc == 0) {
        double ins = 0, cyc = 0;
        for (volatile int i = 0; i < 10000000; i = i + 1) {
        }
        ASSERT_EQ(tc_read(&t, &ins, &cyc, why, sizeof why), 0) << why;
        EXPECT_GT(ins, 1e7) << "the loop's instructions";
        EXPECT_GT(cyc, 0.0);
        tc_close(&t);
    } else {
        EXPECT_EQ(rc, -ENOTSUP) << why;
        EXPECT_NE(strstr(why, "cannot count instructions: perf_event_open: "), nullptr) << why;
        if (!pmu) {
            EXPECT_NE(strstr(why, "no hardware PMU"), nullptr) << why;
        }
        EXPECT_EQ(t.n, 0u) << "nothing left open";
    }
}
