// test_counters.cpp - common/counters.c: software events always count, hardware events either count or are
// reported missing with a reason (this branch is decided at run time, never skipped).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstddef> // counters.h uses size_t
#include <cstdint>
#include <cstring>
#include <string>

#include "counters.h"

namespace {

int index_of(const struct pmu_set &p, const char *name)
{
    for (unsigned i = 0; i < p.n; i++)
        if (p.ev[i].name && strcmp(p.ev[i].name, name) == 0)
            return (int)i;
    return -1;
}

uint64_t thread_cpu_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

volatile uint64_t g_sink;

// Spin on the CPU for about `ns` of this thread's CPU time.
void busy(uint64_t ns)
{
    uint64_t t0 = thread_cpu_ns();
    uint64_t x = 1;
    while (thread_cpu_ns() - t0 < ns)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    g_sink = x;
}

bool fd_is_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

} // namespace

TEST(Counters, OpenSelfFillsTheStandardSet)
{
    struct pmu_set p;
    ASSERT_EQ(pmu_open_self(&p), 0);
    EXPECT_EQ(p.n, 5u);
    const char *names[] = {"cycles", "instructions", "llc-misses", "task-clock", "page-faults"};
    for (const char *n : names)
        EXPECT_GE(index_of(p, n), 0) << n;
    for (unsigned i = 0; i < p.n; i++) {
        EXPECT_NE(p.ev[i].pfm, nullptr);
        if (p.ev[i].fd < 0) {
            EXPECT_NE(p.ev[i].why[0], '\0') << p.ev[i].name << " closed without a reason";
        } else {
            EXPECT_TRUE(fd_is_open(p.ev[i].fd));
        }
    }
    EXPECT_FALSE(p.ev[index_of(p, "task-clock")].hardware);
    EXPECT_TRUE(p.ev[index_of(p, "cycles")].hardware);
    pmu_close(&p);
    EXPECT_EQ(pmu_open_self(nullptr), -EINVAL);
}

TEST(Counters, TaskClockCountsBusyLoop)
{
    struct pmu_set p;
    ASSERT_EQ(pmu_open_self(&p), 0);
    int tc = index_of(p, "task-clock");
    ASSERT_GE(tc, 0);
    ASSERT_GE(p.ev[tc].fd, 0) << "task-clock not open: " << p.ev[tc].why;
    uint64_t a[PMU_MAX_EVENTS], b[PMU_MAX_EVENTS];
    ASSERT_EQ(pmu_read(&p, a), 0);
    busy(20 * 1000000ULL);
    ASSERT_EQ(pmu_read(&p, b), 0);
    EXPECT_GT(b[tc], a[tc]);
    // task-clock counts nanoseconds of this thread's CPU time: ~20 ms spent, allow generous slack.
    EXPECT_GE(b[tc] - a[tc], 10 * 1000000ULL);
    EXPECT_LE(b[tc] - a[tc], 2000 * 1000000ULL);
    pmu_close(&p);
}

TEST(Counters, PageFaultsCountFreshPages)
{
    struct pmu_set p;
    ASSERT_EQ(pmu_open_self(&p), 0);
    int pf = index_of(p, "page-faults");
    ASSERT_GE(pf, 0);
    ASSERT_GE(p.ev[pf].fd, 0) << "page-faults not open: " << p.ev[pf].why;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t npages = 256; // 1 MiB with 4 KiB pages: too small for a transparent huge page
    uint64_t a[PMU_MAX_EVENTS], b[PMU_MAX_EVENTS];
    void *m = mmap(nullptr, npages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    ASSERT_EQ(pmu_read(&p, a), 0);
    volatile char *c = static_cast<volatile char *>(m);
    for (size_t i = 0; i < npages; i++)
        c[i * page] = 1;
    ASSERT_EQ(pmu_read(&p, b), 0);
    munmap(m, npages * page);
    EXPECT_GE(b[pf] - a[pf], npages / 2);
    pmu_close(&p);
}

TEST(Counters, HardwareEventsCountOrExplain)
{
    char why[256];
    memset(why, 'x', sizeof(why));
    bool hw = pmu_hw_available(why, sizeof(why));
    struct pmu_set p;
    ASSERT_EQ(pmu_open_self(&p), 0);
    char miss[512];
    pmu_missing(&p, miss, sizeof(miss));
    int cy = index_of(p, "cycles");
    ASSERT_GE(cy, 0);
    if (!hw) {
        EXPECT_NE(why[0], '\0');
        EXPECT_NE(strchr(why, '\0'), why + sizeof(why)) << "why not terminated";
        EXPECT_NE(strstr(miss, "cycles"), nullptr) << miss;
        EXPECT_LT(p.ev[cy].fd, 0);
        EXPECT_NE(p.ev[cy].why[0], '\0');
        // Closed hardware events read as 0.
        uint64_t v[PMU_MAX_EVENTS];
        memset(v, 0xff, sizeof(v));
        ASSERT_EQ(pmu_read(&p, v), 0);
        EXPECT_EQ(v[cy], 0u);
        printf("[ info ] no hardware PMU: %s\n[ info ] missing: %s\n", why, miss);
    } else {
        EXPECT_EQ(why[0], '\0');
        ASSERT_GE(p.ev[cy].fd, 0) << p.ev[cy].why;
        EXPECT_EQ(strstr(miss, "cycles"), nullptr) << miss;
        uint64_t a[PMU_MAX_EVENTS], b[PMU_MAX_EVENTS];
        ASSERT_EQ(pmu_read(&p, a), 0);
        busy(5 * 1000000ULL);
        ASSERT_EQ(pmu_read(&p, b), 0);
        EXPECT_GT(b[cy], a[cy]);
        printf("[ info ] hardware PMU available; missing: \"%s\"\n", miss);
    }
    // Tolerates no buffer.
    (void)pmu_hw_available(nullptr, 0);
    pmu_close(&p);
}

TEST(Counters, CloseResetsFds)
{
    struct pmu_set p;
    ASSERT_EQ(pmu_open_self(&p), 0);
    int fds[PMU_MAX_EVENTS];
    for (unsigned i = 0; i < p.n; i++)
        fds[i] = p.ev[i].fd;
    pmu_close(&p);
    for (unsigned i = 0; i < p.n; i++) {
        EXPECT_EQ(p.ev[i].fd, -1) << p.ev[i].name;
        if (fds[i] >= 0) {
            EXPECT_FALSE(fd_is_open(fds[i])) << p.ev[i].name;
        }
    }
    // Closed set: reads give zeros, closing twice is harmless.
    uint64_t v[PMU_MAX_EVENTS];
    memset(v, 0xff, sizeof(v));
    EXPECT_EQ(pmu_read(&p, v), 0);
    for (unsigned i = 0; i < p.n; i++)
        EXPECT_EQ(v[i], 0u);
    pmu_close(&p);
    pmu_close(nullptr);
}

TEST(Counters, MissingFormatting)
{
    struct pmu_set p;
    memset(&p, 0, sizeof(p));
    p.n = 5;
    const char *names[] = {"cycles", "instructions", "llc-misses", "task-clock", "page-faults"};
    for (unsigned i = 0; i < p.n; i++) {
        p.ev[i].name = names[i];
        p.ev[i].fd = -1;
        snprintf(p.ev[i].why, sizeof(p.ev[i].why), "no PMU: /sys/bus/event_source/devices/cpu missing");
    }
    p.ev[3].fd = 1000; // pretend task-clock and page-faults are open
    p.ev[3].why[0] = '\0';
    p.ev[4].fd = 1001;
    p.ev[4].why[0] = '\0';
    char buf[256];
    EXPECT_STREQ(pmu_missing(&p, buf, sizeof(buf)),
                 "cycles, instructions, llc-misses (no PMU: /sys/bus/event_source/devices/cpu missing)");

    // Different reasons make separate groups, in order of first appearance.
    snprintf(p.ev[1].why, sizeof(p.ev[1].why), "Permission denied");
    p.ev[4].fd = -1;
    snprintf(p.ev[4].why, sizeof(p.ev[4].why), "Permission denied");
    EXPECT_STREQ(pmu_missing(&p, buf, sizeof(buf)),
                 "cycles, llc-misses (no PMU: /sys/bus/event_source/devices/cpu missing); "
                 "instructions, page-faults (Permission denied)");

    // Nothing missing: empty string.
    for (unsigned i = 0; i < p.n; i++)
        p.ev[i].fd = 1000 + (int)i;
    EXPECT_STREQ(pmu_missing(&p, buf, sizeof(buf)), "");

    // Truncation keeps the buffer terminated.
    p.ev[0].fd = -1;
    char small[10];
    EXPECT_STREQ(pmu_missing(&p, small, sizeof(small)), "cycles (n");
    EXPECT_STREQ(pmu_missing(&p, nullptr, 0), "");
}
