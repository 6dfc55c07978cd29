// test_memlimit.cpp - memlimit against the fixture trees in tests/fixtures and against this machine.
#include "memlimit.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace {

constexpr uint64_t KiB = 1024ULL;
constexpr uint64_t MiB = 1024ULL * KiB;
constexpr uint64_t GiB = 1024ULL * MiB;

std::string fixture(const char *name) { return std::string(IBENCH_FIXTURES) + "/" + name; }

struct mlim read_ok(const char *name)
{
    struct mlim m;
    int rc = mlim_read(&m, fixture(name).c_str());
    EXPECT_EQ(rc, 0) << name;
    return m;
}

}  // namespace

// v1: our cgroup /job/a allows 2 GiB, its parent /job only 1 GiB; the parent's limit and usage are reported.
TEST(Memlimit, V1TightestAncestorWins)
{
    struct mlim m = read_ok("cgroup-v1");
    EXPECT_EQ(m.mem_total, 16 * GiB);
    EXPECT_EQ(m.mem_available, 12 * GiB);
    EXPECT_EQ(m.cg_version, 1);
    EXPECT_STREQ(m.cg_path, "/job/a");
    EXPECT_EQ(m.cg_limit, 1 * GiB);
    EXPECT_EQ(m.cg_usage, 600 * MiB);  // /job's usage, not /job/a's 512 MiB
    EXPECT_EQ(mlim_margin(&m), 512 * MiB);  // 10 % of 1 GiB is below the 512 MiB floor
    // 1 GiB - 600 MiB = 424 MiB left in the cgroup, less than the margin: nothing to spare.
    EXPECT_EQ(mlim_spare(&m), 0u);
    EXPECT_EQ(mlim_cap(&m, 0), 0u);
    EXPECT_EQ(mlim_cap(&m, 100 * MiB), 0u);
}

// v2: /svc/web has memory.max 3 GiB, /svc says "max"; the root has no memory.max at all.
TEST(Memlimit, V2LimitAndMax)
{
    struct mlim m = read_ok("cgroup-v2");
    EXPECT_EQ(m.mem_total, 64 * GiB);
    EXPECT_EQ(m.mem_available, 40 * GiB);
    EXPECT_EQ(m.cg_version, 2);
    EXPECT_STREQ(m.cg_path, "/svc/web");
    EXPECT_EQ(m.cg_limit, 3 * GiB);
    EXPECT_EQ(m.cg_usage, 1 * GiB);
    EXPECT_EQ(mlim_margin(&m), 512 * MiB);            // 10 % of 3 GiB = 307 MiB < 512 MiB
    EXPECT_EQ(mlim_spare(&m), 2 * GiB - 512 * MiB);   // min(40 GiB, 3 - 1 GiB) - 512 MiB
    EXPECT_EQ(mlim_cap(&m, 0), 1536 * MiB);
    EXPECT_EQ(mlim_cap(&m, 1 * GiB), 1 * GiB);
    EXPECT_EQ(mlim_cap(&m, 4 * GiB), 1536 * MiB);
}

// v1 inside a cgroup namespace: /docker/0123abcd is not under the mount, so the mount root's files are used.
// The controller list "cpu,memory" must be recognised as holding the memory controller.
TEST(Memlimit, V1HiddenPathFallsBackToMountRoot)
{
    struct mlim m = read_ok("cgroup-v1-hidden");
    EXPECT_EQ(m.mem_total, 32 * GiB);
    EXPECT_EQ(m.mem_available, 30 * GiB);
    EXPECT_EQ(m.cg_version, 1);
    EXPECT_STREQ(m.cg_path, "/docker/0123abcd");
    EXPECT_EQ(m.cg_limit, 8 * GiB);
    EXPECT_EQ(m.cg_usage, 2 * GiB);
    EXPECT_EQ(mlim_margin(&m), 858993459u);  // 10 % of 8 GiB, above the floor
    EXPECT_EQ(mlim_spare(&m), 6 * GiB - 858993459u);
    EXPECT_EQ(mlim_cap(&m, 0), 6 * GiB - 858993459u);
    EXPECT_EQ(mlim_cap(&m, 1 * GiB), 1 * GiB);
}

// A cgroup outside our namespace shows as "/../other": the walk must stay inside the mount (the fixture has a
// trap sys/fs/other/memory.max of 1 GiB that a naive path join would reach).
TEST(Memlimit, PathOutsideNamespaceStaysUnderMount)
{
    struct mlim m = read_ok("cgroup-v2-outside");
    EXPECT_EQ(m.cg_version, 2);
    EXPECT_STREQ(m.cg_path, "/../other");
    EXPECT_EQ(m.cg_limit, 2 * GiB);
    EXPECT_EQ(m.cg_usage, 100 * MiB);
    EXPECT_EQ(mlim_margin(&m), 512 * MiB);
    EXPECT_EQ(mlim_spare(&m), 2 * GiB - 100 * MiB - 512 * MiB);  // min(3 GiB, 2 GiB - 100 MiB) - margin
}

// Both a v1 memory line and a unified hierarchy: the v1 memory controller is the one that counts.
TEST(Memlimit, HybridPrefersV1Memory)
{
    struct mlim m = read_ok("cgroup-hybrid");
    EXPECT_EQ(m.cg_version, 1);
    EXPECT_STREQ(m.cg_path, "/app");
    EXPECT_EQ(m.cg_limit, 6 * GiB);  // not the v2 memory.max of 1 GiB
    EXPECT_EQ(m.cg_usage, 2 * GiB);
    EXPECT_EQ(mlim_margin(&m), 644245094u);  // 10 % of 6 GiB
    EXPECT_EQ(mlim_spare(&m), 4 * GiB - 644245094u);
}

// Only /proc/meminfo: no cgroup, the margin is the 512 MiB floor (10 % of 4 GiB is less).
TEST(Memlimit, NoCgroup)
{
    struct mlim m = read_ok("no-cgroup");
    EXPECT_EQ(m.mem_total, 4 * GiB);
    EXPECT_EQ(m.mem_available, 3 * GiB);
    EXPECT_EQ(m.cg_version, 0);
    EXPECT_EQ(m.cg_limit, MLIM_UNLIMITED);
    EXPECT_EQ(m.cg_usage, 0u);
    EXPECT_STREQ(m.cg_path, "");
    EXPECT_EQ(mlim_margin(&m), 512 * MiB);
    EXPECT_EQ(mlim_spare(&m), 3 * GiB - 512 * MiB);
    EXPECT_EQ(mlim_cap(&m, 0), 2560 * MiB);
    EXPECT_EQ(mlim_cap(&m, 1 * GiB), 1 * GiB);
    EXPECT_EQ(mlim_cap(&m, 100 * GiB), 2560 * MiB);
}

TEST(Memlimit, GarbageMeminfoIsEinval)
{
    struct mlim m;
    EXPECT_EQ(mlim_read(&m, fixture("bad-meminfo").c_str()), -EINVAL);
}

TEST(Memlimit, MissingRootIsEnoent)
{
    struct mlim m;
    EXPECT_EQ(mlim_read(&m, fixture("does-not-exist").c_str()), -ENOENT);
}

TEST(Memlimit, OverlongRootIsRefusedNotTruncated)
{
    struct mlim m;
    std::string root = "/" + std::string(8000, 'x');
    EXPECT_EQ(mlim_read(&m, root.c_str()), -ENAMETOOLONG);
}

// The arithmetic on hand-made values: the margin's 10 % branch, and the floor at 0.
TEST(Memlimit, MarginAndSpareArithmetic)
{
    struct mlim m = {};
    m.mem_total = 64 * GiB;
    m.mem_available = 60 * GiB;
    m.cg_limit = MLIM_UNLIMITED;
    EXPECT_EQ(mlim_margin(&m), 64 * GiB / 10);
    EXPECT_EQ(mlim_spare(&m), 60 * GiB - 64 * GiB / 10);

    // A cgroup limit smaller than MemTotal sets the margin base.
    m.cg_version = 2;
    m.cg_limit = 16 * GiB;
    m.cg_usage = 4 * GiB;
    EXPECT_EQ(mlim_margin(&m), 16 * GiB / 10);
    EXPECT_EQ(mlim_spare(&m), 12 * GiB - 16 * GiB / 10);

    // Usage above the limit (v1 can briefly report this) must not wrap around.
    m.cg_usage = 17 * GiB;
    EXPECT_EQ(mlim_spare(&m), 0u);
    EXPECT_EQ(mlim_cap(&m, 0), 0u);
    EXPECT_EQ(mlim_cap(&m, 1 * GiB), 0u);

    // MemAvailable below the margin.
    m.cg_limit = MLIM_UNLIMITED;
    m.cg_usage = 0;
    m.mem_available = 100 * MiB;
    EXPECT_EQ(mlim_spare(&m), 0u);
}

TEST(Memlimit, LiveSystem)
{
    struct mlim m;
    ASSERT_EQ(mlim_read(&m, ""), 0);
    EXPECT_GT(m.mem_total, 0u);
    EXPECT_LE(m.mem_available, m.mem_total);
    EXPECT_GE(m.cg_version, 0);
    EXPECT_LE(m.cg_version, 2);
    EXPECT_GT(m.cg_limit, 0u);
    EXPECT_LE(mlim_cap(&m, 1 * MiB), 1 * MiB);
}

// The rule every size that reaches an allocation obeys: n x each within mlim_spare, overflow refused, one line.
TEST(Memlimit, CheckHoldsSizesToTheSpareMemory)
{
    struct mlim m = {};
    m.mem_total = 8 * GiB;
    m.mem_available = 4 * GiB;
    m.cg_limit = MLIM_UNLIMITED;
    const uint64_t spare = mlim_spare(&m);  // 4 GiB less a 0.8 GiB margin
    char why[256] = "";
    EXPECT_EQ(mlim_check(&m, 1, spare, "x", why, sizeof why), 0) << why;
    EXPECT_EQ(mlim_check(&m, 3, spare / 3, "x", why, sizeof why), 0) << why;
    EXPECT_EQ(mlim_check(&m, 2, spare / 2 + 1, "probe x", why, sizeof why), -E2BIG);
    EXPECT_EQ(std::string(why).rfind("probe x ", 0), 0u) << why;
    EXPECT_NE(strstr(why, ", more than this machine can spare ("), nullptr) << why;
    EXPECT_NE(strstr(why, "can spare"), nullptr) << why;
    EXPECT_EQ(strchr(why, '\n'), nullptr) << why;
    // 3 x 2^63 wraps to 2^63 in 64 bits, and 2^64 - 1 x 2 to 2^64 - 2: refused as more than 16 EiB, not wrapped
    EXPECT_EQ(mlim_check(&m, 3, 1ULL << 63, "y", why, sizeof why), -E2BIG);
    EXPECT_NE(strstr(why, "more than 16"), nullptr) << why;
    EXPECT_EQ(mlim_check(&m, UINT64_MAX, 2, "y", why, sizeof why), -E2BIG);
    EXPECT_EQ(mlim_check(&m, 0, UINT64_MAX, "y", why, sizeof why), 0) << "nothing asked, nothing refused";
}
