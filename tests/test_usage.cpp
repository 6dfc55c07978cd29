// test_usage.cpp - a target's pressure window by window (harness/usage.h): the kernel files' parsers on recorded
// texts and malformed ones, the sources on fixture trees (tests/fixtures/usage/), the sampler on a fake source and
// clock, the summaries on synthetic series, and one real child writing through the process-set source.
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "test_support.h"

extern "C" {
#include "profile_fmt.h"
#include "usage.h"
}

namespace {

std::string fx(const std::string &rel) { return std::string(IBENCH_FIXTURES) + "/usage/" + rel; }

uint64_t page_size() { return (uint64_t)sysconf(_SC_PAGESIZE); }

bool has(const char *why, const char *what) { return strstr(why, what) != nullptr; }

// ---- a fake clock: time moves only when the sampler sleeps (or a source's read takes time)

struct FakeClock {
    uint64_t now = 0;
    std::vector<uint64_t> late;            // how long after its deadline sleep k returns
    unsigned wakes = 0;
    std::function<void(unsigned)> on_wake; // called after sleep k returns, with k (0, 1, ...)
};

uint64_t fake_now(void *ctx) { return static_cast<FakeClock *>(ctx)->now; }

void fake_sleep_until(void *ctx, uint64_t t)
{
    auto *c = static_cast<FakeClock *>(ctx);
    unsigned k = c->wakes++;
    c->now = std::max(c->now, t) + (k < c->late.size() ? c->late[k] : 0);
    if (c->on_wake)
        c->on_wake(k);
}

usage_clock clock_of(FakeClock &c) { return usage_clock{fake_now, fake_sleep_until, &c}; }

// ---- a fake source: scripted snapshots, and a failure at a chosen read

struct FakeSrc {
    std::vector<usage_snap> script;
    size_t next = 0;
    size_t fail_at = SIZE_MAX;
};

int fake_read(void *ctx, usage_snap *s, char *why, size_t len)
{
    auto *f = static_cast<FakeSrc *>(ctx);
    if (f->next == f->fail_at || f->next >= f->script.size()) {
        snprintf(why, len, "fake source: read %zu fails", f->next);
        return -EIO;
    }
    uint64_t t = s->t_ns;
    *s = f->script[f->next++];
    s->t_ns = t;
    return 0;
}

void fake_close(void *) {}

const usage_src_ops fake_ops = {"fake", fake_read, fake_close};

usage_snap io_snap(uint64_t rb, uint64_t wb, uint64_t ro, uint64_t wo, uint64_t cpu, uint64_t mem)
{
    usage_snap s{};
    s.have_io = s.have_cpu = s.have_mem = true;
    s.read_bytes = rb;
    s.write_bytes = wb;
    s.read_ops = ro;
    s.write_ops = wo;
    s.cpu_ns = cpu;
    s.mem_bytes = mem;
    return s;
}

constexpr uint64_t kMs = 1000000ULL;
constexpr uint64_t kMiB = 1024ULL * 1024ULL;

} // namespace

// ---- parsers

TEST(Usage, ParsesV2IoStatSummedOverDevices)
{
    char why[256] = "";
    usage_io io{};
    // two devices; the second carries io.latency's keys, whose values are not all numbers ("depth=max")
    ASSERT_EQ(0, usage_parse_io_stat(ib_test::file_text(fx("v2/io.stat")).c_str(), &io, why, sizeof why)) << why;
    EXPECT_EQ(6664192u + 4096u, io.read_bytes);
    EXPECT_EQ(314773504u + 8192u, io.write_bytes);
    EXPECT_EQ(193u, io.read_ops);
    EXPECT_EQ(355u, io.write_ops);
    ASSERT_EQ(0, usage_parse_io_stat("", &io, why, sizeof why)) << why; // a cgroup that did no I/O yet
    EXPECT_EQ(0u, io.read_bytes + io.write_bytes + io.read_ops + io.write_ops);

    const char *ok = "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0\n";
    EXPECT_EQ(-EINVAL, usage_parse_io_stat((std::string(ok) + "8:16 rbytes=1 wbytes=2 rios=3\n").c_str(), &io, why,
                                           sizeof why));
    EXPECT_TRUE(has(why, "line 2") && has(why, "wios=")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_io_stat("8:0 rbytes=12x wbytes=2 rios=3 wios=4\n", &io, why, sizeof why));
    EXPECT_TRUE(has(why, "line 1") && has(why, "rbytes='12x'")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_io_stat("8:0 rbytes=-1 wbytes=2 rios=3 wios=4\n", &io, why, sizeof why));
    EXPECT_TRUE(has(why, "rbytes")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_io_stat("sda rbytes=1 wbytes=2 rios=3 wios=4\n", &io, why, sizeof why));
    EXPECT_TRUE(has(why, "'sda'") && has(why, "MAJ:MIN")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_io_stat("8:0 rbytes=1 rbytes=1 wbytes=2 rios=3 wios=4\n", &io, why, sizeof why));
    EXPECT_TRUE(has(why, "rbytes= twice")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_io_stat("8:0 rbytes=1 wbytes 2 rios=3 wios=4\n", &io, why, sizeof why));
    EXPECT_TRUE(has(why, "'wbytes'") && has(why, "key=value")) << why;
    EXPECT_EQ(nullptr, strchr(why, '\n'));
}

TEST(Usage, ParsesV1BlkioReadAndWriteOnly)
{
    char why[256] = "";
    uint64_t rd = 1, wr = 1;
    ASSERT_EQ(0, usage_parse_blkio(ib_test::file_text(fx("v1/blkio/blkio.throttle.io_service_bytes")).c_str(), &rd,
                                   &wr, why, sizeof why))
        << why;
    EXPECT_EQ(1048576u + 4096u, rd); // Sync, Async, Discard and both Totals left out
    EXPECT_EQ(8388608u, wr);
    ASSERT_EQ(0, usage_parse_blkio(ib_test::file_text(fx("v1/blkio/blkio.throttle.io_serviced")).c_str(), &rd, &wr,
                                   why, sizeof why))
        << why;
    EXPECT_EQ(13u, rd);
    EXPECT_EQ(64u, wr);
    ASSERT_EQ(0, usage_parse_blkio("Total 0\n", &rd, &wr, why, sizeof why)) << why; // a cgroup without I/O (here)
    EXPECT_EQ(0u, rd + wr);

    EXPECT_EQ(-EINVAL, usage_parse_blkio("254:0 Read 1\n254:0 Frobnicate 5\n", &rd, &wr, why, sizeof why));
    EXPECT_TRUE(has(why, "line 2") && has(why, "'Frobnicate'")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_blkio("254:0 Read x1\n", &rd, &wr, why, sizeof why));
    EXPECT_TRUE(has(why, "line 1") && has(why, "'x1'")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_blkio("254:0 Read\n", &rd, &wr, why, sizeof why));
    EXPECT_TRUE(has(why, "line 1") && has(why, "MAJ:MIN")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_blkio("254:0 Write 1\nTotal many\n", &rd, &wr, why, sizeof why));
    EXPECT_TRUE(has(why, "line 2") && has(why, "Total")) << why;
}

TEST(Usage, ParsesProcIoWithSyscallsAsOperations)
{
    char why[256] = "";
    usage_io io{};
    ASSERT_EQ(0, usage_parse_proc_io(ib_test::file_text(fx("proc/100/io")).c_str(), &io, why, sizeof why)) << why;
    EXPECT_EQ(6664192u, io.read_bytes);
    EXPECT_EQ(1060864u, io.write_bytes);
    EXPECT_EQ(36034u, io.read_ops); // syscr: read system calls
    EXPECT_EQ(720u, io.write_ops);  // syscw

    EXPECT_EQ(-EINVAL, usage_parse_proc_io("read_bytes: 1\nsyscr: 1\nsyscw: 1\n", &io, why, sizeof why));
    EXPECT_TRUE(has(why, "write_bytes")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_proc_io("read_bytes: -5\nwrite_bytes: 1\nsyscr: 1\nsyscw: 1\n", &io, why,
                                           sizeof why));
    EXPECT_TRUE(has(why, "line 1") && has(why, "read_bytes") && has(why, "'-5'")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_proc_io("rchar: 1\nwhat is this\n", &io, why, sizeof why));
    EXPECT_TRUE(has(why, "line 2") && has(why, "name: N")) << why;
}

TEST(Usage, ParsesCpuAndMemoryFiles)
{
    char why[256] = "";
    uint64_t v = 0;
    ASSERT_EQ(0, usage_parse_cpu_stat(ib_test::file_text(fx("v2/cpu.stat")).c_str(), &v, why, sizeof why)) << why;
    EXPECT_EQ(12509788596000u, v); // usage_usec in ns
    EXPECT_EQ(-EINVAL, usage_parse_cpu_stat("user_usec 1\nsystem_usec 2\n", &v, why, sizeof why));
    EXPECT_TRUE(has(why, "usage_usec")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_cpu_stat("usage_usec 1.5\n", &v, why, sizeof why));
    EXPECT_TRUE(has(why, "line 1") && has(why, "'1.5'")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_cpu_stat("usage_usec\n", &v, why, sizeof why));
    EXPECT_TRUE(has(why, "line 1")) << why;

    ASSERT_EQ(0, usage_parse_number(ib_test::file_text(fx("v1/cpuacct/cpuacct.usage")).c_str(), "cpuacct.usage", &v,
                                    why, sizeof why));
    EXPECT_EQ(13108071075041u, v);
    ASSERT_EQ(0, usage_parse_number(ib_test::file_text(fx("v2/memory.current")).c_str(), "memory.current", &v, why,
                                    sizeof why));
    EXPECT_EQ(1032163328u, v);
    ASSERT_EQ(0, usage_parse_number(ib_test::file_text(fx("v1/memory/memory.usage_in_bytes")).c_str(),
                                    "memory.usage_in_bytes", &v, why, sizeof why));
    EXPECT_EQ(995467264u, v);
    EXPECT_EQ(-EINVAL, usage_parse_number("max\n", "memory.current", &v, why, sizeof why));
    EXPECT_TRUE(has(why, "memory.current") && has(why, "'max'")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_number("1\n2\n", "cpuacct.usage", &v, why, sizeof why));
    EXPECT_TRUE(has(why, "cpuacct.usage")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_number("99999999999999999999\n", "cpuacct.usage", &v, why, sizeof why));

    ASSERT_EQ(0, usage_parse_schedstat(ib_test::file_text(fx("proc/101/task/101/schedstat")).c_str(), &v, why,
                                       sizeof why));
    EXPECT_EQ(500000000u, v);
    EXPECT_EQ(-EINVAL, usage_parse_schedstat("", &v, why, sizeof why));
    EXPECT_TRUE(has(why, "schedstat") && has(why, "empty")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_schedstat("12 x 3\n", &v, why, sizeof why));
    EXPECT_TRUE(has(why, "field 2")) << why;

    ASSERT_EQ(0, usage_parse_statm(ib_test::file_text(fx("proc/100/statm")).c_str(), 4096, &v, why, sizeof why));
    EXPECT_EQ(1035u * 4096u, v); // resident pages x the page size
    EXPECT_EQ(-EINVAL, usage_parse_statm("1283 1035\n", 4096, &v, why, sizeof why));
    EXPECT_TRUE(has(why, "statm") && has(why, "2 fields, expected 7")) << why;
}

// /proc/PID/net/dev recorded here: lo's bytes and packets once (transmitted), eth0's received plus transmitted.
TEST(Usage, ParsesNetDevLoopbackOnceOthersBothWays)
{
    char why[256] = "";
    usage_net net{};
    ASSERT_EQ(0, usage_parse_net_dev(ib_test::file_text(fx("net-dev")).c_str(), &net, why, sizeof why)) << why;
    EXPECT_EQ(1561934651391u + 40846332u + 52364u, net.bytes);
    EXPECT_EQ(74521224u + 921u + 625u, net.packets);
    ASSERT_EQ(0, usage_parse_net_dev("", &net, why, sizeof why)) << why;
    EXPECT_EQ(0u, net.bytes + net.packets);
    // an old kernel's glued "eth0:123": the name ends at the colon
    ASSERT_EQ(0, usage_parse_net_dev("eth0:1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n", &net, why, sizeof why)) << why;
    EXPECT_EQ(4u, net.bytes);
    EXPECT_EQ(6u, net.packets);

    EXPECT_EQ(-EINVAL, usage_parse_net_dev("  eth0: 1 2 3\n", &net, why, sizeof why));
    EXPECT_TRUE(has(why, "line 1") && has(why, "'eth0' has 3 numbers, expected 16")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_net_dev("eth0 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n", &net, why, sizeof why));
    EXPECT_TRUE(has(why, "expected 'interface: 16 numbers'")) << why;
    EXPECT_EQ(-EINVAL,
              usage_parse_net_dev("lo: 1 2 0 0 0 0 0 0 x 4 0 0 0 0 0 0\n", &net, why, sizeof why));
    EXPECT_TRUE(has(why, "'lo' field 9 'x' is not a number")) << why;
    EXPECT_EQ(-EINVAL, usage_parse_net_dev(" : 1\n", &net, why, sizeof why));
    EXPECT_TRUE(has(why, "no interface name")) << why;
    EXPECT_EQ(nullptr, strchr(why, '\n'));
}

// Each usage resource a share of the SoI that presses it, the table the profile and the placement model read.
TEST(Usage, ResourcesMapToTheSoIsThatPressThem)
{
    const char *want[USAGE_NMETRIC] = {"disk-bw", "disk-write", nullptr,  nullptr,   nullptr,
                                       "mem-cap", "net-bw",     nullptr,  "llc-cap", "mem-bw"};
    for (int m = 0; m < USAGE_NMETRIC; m++) {
        const char *soi = profile_usage_soi(usage_metric_name[m]);
        if (want[m])
            EXPECT_STREQ(want[m], soi ? soi : "(none)") << usage_metric_name[m];
        else
            EXPECT_EQ(nullptr, soi) << usage_metric_name[m];
    }
    EXPECT_STREQ("packet/s", usage_metric_unit[USAGE_NET_PPS]);
    EXPECT_STREQ("B", usage_metric_unit[USAGE_LLC_BYTES]);
}

// ---- the cgroup sources on fixture directories

TEST(Usage, CgroupV2SourceReadsItsFilesAndMissingControllersAreAbsent)
{
    char why[256] = "";
    usage_src src{};
    ASSERT_EQ(0, usage_src_cgroup_v2(&src, fx("v2").c_str(), why, sizeof why)) << why;
    EXPECT_STREQ("cgroup-v2", src.ops->name);
    usage_snap s{};
    ASSERT_EQ(0, usage_src_read(&src, &s, why, sizeof why)) << why;
    EXPECT_TRUE(s.have_io && s.have_cpu && s.have_mem);
    EXPECT_EQ(6668288u, s.read_bytes);
    EXPECT_EQ(314781696u, s.write_bytes);
    EXPECT_EQ(193u, s.read_ops);
    EXPECT_EQ(355u, s.write_ops);
    EXPECT_EQ(12509788596000u, s.cpu_ns);
    EXPECT_EQ(1032163328u, s.mem_bytes);
    usage_src_close(&src);
    usage_src_close(&src); // idempotent

    // the io and memory controllers not enabled for this cgroup: only cpu.stat
    ASSERT_EQ(0, usage_src_cgroup_v2(&src, fx("v2-cpu-only").c_str(), why, sizeof why)) << why;
    ASSERT_EQ(0, usage_src_read(&src, &s, why, sizeof why)) << why;
    EXPECT_FALSE(s.have_io);
    EXPECT_FALSE(s.have_mem);
    EXPECT_TRUE(s.have_cpu);
    EXPECT_EQ(250000000u, s.cpu_ns);
    usage_src_close(&src);

    EXPECT_EQ(-ENOENT, usage_src_cgroup_v2(&src, fx("v1/blkio").c_str(), why, sizeof why));
    EXPECT_TRUE(has(why, "cpu.stat")) << why;

    // a cgroup removed under the sampler: the files that were there are gone
    ib_test::TempDir d("usage_v2");
    ASSERT_FALSE(d.path().empty());
    std::filesystem::copy(fx("v2"), d.path());
    ASSERT_EQ(0, usage_src_cgroup_v2(&src, d.path().c_str(), why, sizeof why)) << why;
    ASSERT_TRUE(ib_test::write_file(d.path() + "/io.stat", "8:0 rbytes=1 wbytes=2\n"));
    EXPECT_EQ(-EINVAL, usage_src_read(&src, &s, why, sizeof why));
    EXPECT_TRUE(has(why, "/io.stat: io.stat line 1: no rios=")) << why;
    unlink((d.path() + "/io.stat").c_str());
    EXPECT_EQ(-ENOENT, usage_src_read(&src, &s, why, sizeof why));
    EXPECT_TRUE(has(why, "io.stat")) << why;
    usage_src_close(&src);
}

TEST(Usage, CgroupV1SourceEachHierarchyOptional)
{
    char why[256] = "";
    usage_src src{};
    ASSERT_EQ(0, usage_src_cgroup_v1(&src, fx("v1/blkio").c_str(), fx("v1/cpuacct").c_str(), fx("v1/memory").c_str(),
                                     why, sizeof why))
        << why;
    EXPECT_STREQ("cgroup-v1", src.ops->name);
    usage_snap s{};
    ASSERT_EQ(0, usage_src_read(&src, &s, why, sizeof why)) << why;
    EXPECT_TRUE(s.have_io && s.have_cpu && s.have_mem);
    EXPECT_EQ(1052672u, s.read_bytes);
    EXPECT_EQ(8388608u, s.write_bytes);
    EXPECT_EQ(13u, s.read_ops);
    EXPECT_EQ(64u, s.write_ops);
    EXPECT_EQ(13108071075041u, s.cpu_ns);
    EXPECT_EQ(995467264u, s.mem_bytes);
    usage_src_close(&src);

    ASSERT_EQ(0, usage_src_cgroup_v1(&src, nullptr, fx("v1/cpuacct").c_str(), nullptr, why, sizeof why)) << why;
    ASSERT_EQ(0, usage_src_read(&src, &s, why, sizeof why)) << why;
    EXPECT_FALSE(s.have_io);
    EXPECT_FALSE(s.have_mem);
    EXPECT_TRUE(s.have_cpu);
    usage_src_close(&src);

    EXPECT_EQ(-ENOENT, usage_src_cgroup_v1(&src, fx("v1/cpuacct").c_str(), nullptr, nullptr, why, sizeof why));
    EXPECT_TRUE(has(why, "blkio.throttle.io_service_bytes")) << why;
}

// ---- the sampler on a fake source and clock

TEST(UsageSampler, RatesOverTheMeasuredTimes)
{
    FakeSrc f;
    f.script = {io_snap(0, 0, 0, 0, 0, 1000),
                io_snap(10000000, 20000000, 100, 200, 50000000, 2000),       // 0.1 s
                io_snap(25000000, 20000000, 130, 200, 350000000, 3000),      // 0.15 s: this sleep returned 50 ms late
                io_snap(25000000, 25000000, 130, 205, 350000000, 4000)};     // 0.05 s: back on the grid
    FakeClock c;
    c.late = {0, 50 * kMs, 0};
    usage_src src{&fake_ops, &f};
    usage_clock clk = clock_of(c);
    usage_series s{};
    char why[256] = "";
    ASSERT_EQ(0, usage_sample(&src, &clk, 100 * kMs, 3, nullptr, &s, why, sizeof why)) << why;
    ASSERT_EQ(3u, s.n);
    EXPECT_EQ(0u, s.t_ns[0]);
    EXPECT_EQ(100 * kMs, s.t_ns[1]);
    EXPECT_EQ(250 * kMs, s.t_ns[2]);
    EXPECT_EQ(300 * kMs, s.t_ns[3]);
    EXPECT_DOUBLE_EQ(100e6, s.v[USAGE_READ_BPS][0]);
    EXPECT_DOUBLE_EQ(200e6, s.v[USAGE_WRITE_BPS][0]);
    EXPECT_DOUBLE_EQ(1000, s.v[USAGE_READ_OPS][0]);
    EXPECT_DOUBLE_EQ(2000, s.v[USAGE_WRITE_OPS][0]);
    EXPECT_DOUBLE_EQ(0.5, s.v[USAGE_CPU][0]);
    EXPECT_DOUBLE_EQ(2000, s.v[USAGE_MEM_BYTES][0]);
    EXPECT_DOUBLE_EQ(100e6, s.v[USAGE_READ_BPS][1]); // 15 MB over 0.15 s, not over the nominal 0.1 s
    EXPECT_DOUBLE_EQ(0, s.v[USAGE_WRITE_BPS][1]);
    EXPECT_DOUBLE_EQ(200, s.v[USAGE_READ_OPS][1]);
    EXPECT_DOUBLE_EQ(2.0, s.v[USAGE_CPU][1]);
    EXPECT_DOUBLE_EQ(3000, s.v[USAGE_MEM_BYTES][1]);
    EXPECT_DOUBLE_EQ(100e6, s.v[USAGE_WRITE_BPS][2]); // 5 MB over 0.05 s
    EXPECT_DOUBLE_EQ(100, s.v[USAGE_WRITE_OPS][2]);
    EXPECT_DOUBLE_EQ(0, s.v[USAGE_CPU][2]);
    EXPECT_DOUBLE_EQ(4000, s.v[USAGE_MEM_BYTES][2]);
    usage_series_free(&s);
    usage_series_free(&s);

    // a read that takes time is stamped halfway through it
    struct Slow {
        FakeSrc f;
        FakeClock *c;
    } slow{{}, &c};
    slow.f.script = {io_snap(0, 0, 0, 0, 0, 0), io_snap(0, 10100000, 0, 0, 0, 0)};
    static const usage_src_ops slow_ops = {
        "slow",
        [](void *ctx, usage_snap *sn, char *w, size_t l) {
            auto *sl = static_cast<Slow *>(ctx);
            sl->c->now += 2 * kMs;
            return fake_read(&sl->f, sn, w, l);
        },
        fake_close};
    c = FakeClock{};
    usage_src slow_src{&slow_ops, &slow};
    clk = clock_of(c);
    ASSERT_EQ(0, usage_sample(&slow_src, &clk, 100 * kMs, 1, nullptr, &s, why, sizeof why)) << why;
    ASSERT_EQ(1u, s.n);
    EXPECT_EQ(1 * kMs, s.t_ns[0]);
    EXPECT_EQ(102 * kMs, s.t_ns[1]); // deadline 101 ms, read from 101 to 103 ms
    EXPECT_DOUBLE_EQ(100e6, s.v[USAGE_WRITE_BPS][0]);
    usage_series_free(&s);
}

TEST(UsageSampler, CounterGoingBackwardsIsAbsentNeverNegative)
{
    FakeSrc f;
    usage_snap no_io = io_snap(0, 0, 0, 0, 300000000, 7);
    no_io.have_io = false;
    f.script = {io_snap(0, 5000000, 0, 50, 100000000, 1), io_snap(0, 6000000, 0, 60, 200000000, 2),
                io_snap(0, 1000000, 0, 10, 50000000, 3), // the cgroup was made again: its counters restart
                io_snap(0, 2000000, 0, 20, 150000000, 4), no_io, io_snap(0, 3000000, 0, 30, 400000000, 5)};
    FakeClock c;
    usage_src src{&fake_ops, &f};
    usage_clock clk = clock_of(c);
    usage_series s{};
    char why[256] = "";
    ASSERT_EQ(0, usage_sample(&src, &clk, 100 * kMs, 5, nullptr, &s, why, sizeof why)) << why;
    ASSERT_EQ(5u, s.n);
    EXPECT_DOUBLE_EQ(10e6, s.v[USAGE_WRITE_BPS][0]);
    EXPECT_DOUBLE_EQ(1.0, s.v[USAGE_CPU][0]);
    EXPECT_TRUE(isnan(s.v[USAGE_WRITE_BPS][1]));
    EXPECT_TRUE(isnan(s.v[USAGE_WRITE_OPS][1]));
    EXPECT_TRUE(isnan(s.v[USAGE_CPU][1]));
    EXPECT_DOUBLE_EQ(0, s.v[USAGE_READ_BPS][1]); // the counters that did not go back are still read
    EXPECT_DOUBLE_EQ(3, s.v[USAGE_MEM_BYTES][1]);
    EXPECT_DOUBLE_EQ(10e6, s.v[USAGE_WRITE_BPS][2]); // counted again from the new cgroup's first reading
    EXPECT_DOUBLE_EQ(1.0, s.v[USAGE_CPU][2]);
    EXPECT_TRUE(isnan(s.v[USAGE_WRITE_BPS][3])); // a snapshot without I/O: both windows beside it
    EXPECT_TRUE(isnan(s.v[USAGE_WRITE_BPS][4]));
    EXPECT_DOUBLE_EQ(1.5, s.v[USAGE_CPU][3]);
    for (int m = 0; m < USAGE_NMETRIC; m++)
        for (unsigned i = 0; i < s.n; i++)
            EXPECT_FALSE(s.v[m][i] < 0) << usage_metric_name[m] << " window " << i;
    usage_series_free(&s);
}

TEST(UsageSampler, StopKeepsTheWindowsSoFar)
{
    FakeSrc f;
    for (uint64_t i = 0; i < 11; i++)
        f.script.push_back(io_snap(0, i * 1000000, 0, 0, 0, 0));
    FakeClock c;
    std::atomic<int> stop{0};
    c.on_wake = [&](unsigned k) {
        if (k == 2) // during the third window's sleep
            stop = 1;
    };
    usage_src src{&fake_ops, &f};
    usage_clock clk = clock_of(c);
    usage_series s{};
    char why[256] = "";
    EXPECT_EQ(-EINTR, usage_sample(&src, &clk, 100 * kMs, 10, &stop, &s, why, sizeof why));
    EXPECT_TRUE(has(why, "stopped after 2 of 10 windows")) << why;
    ASSERT_EQ(2u, s.n);
    EXPECT_DOUBLE_EQ(10e6, s.v[USAGE_WRITE_BPS][0]);
    EXPECT_DOUBLE_EQ(10e6, s.v[USAGE_WRITE_BPS][1]);
    EXPECT_EQ(200 * kMs, s.t_ns[2]);
    usage_series_free(&s);

    // a read that fails ends the sampling the same way, with the source's error
    f.next = 0;
    f.fail_at = 4;
    c = FakeClock{};
    clk = clock_of(c);
    EXPECT_EQ(-EIO, usage_sample(&src, &clk, 100 * kMs, 10, nullptr, &s, why, sizeof why));
    EXPECT_TRUE(has(why, "read 4 fails")) << why;
    EXPECT_EQ(3u, s.n);
    usage_series_free(&s);

    EXPECT_EQ(-EINVAL, usage_sample(&src, &clk, 0, 10, nullptr, &s, why, sizeof why));
    EXPECT_EQ(0u, s.n);
}

// ---- summaries

TEST(UsageSummary, PercentilesInterpolateLinearlyBetweenOrderStatistics)
{
    const double a[] = {1, 2, 3, 4};
    EXPECT_DOUBLE_EQ(1, usage_percentile_sorted(a, 4, 0));
    EXPECT_DOUBLE_EQ(2.5, usage_percentile_sorted(a, 4, 0.5)); // h = 1.5
    EXPECT_DOUBLE_EQ(3.7, usage_percentile_sorted(a, 4, 0.9)); // h = 2.7: 3 + 0.7 x (4 - 3)
    EXPECT_DOUBLE_EQ(4, usage_percentile_sorted(a, 4, 1));
    double b[11];
    for (int i = 0; i <= 10; i++)
        b[i] = 10.0 * i;
    EXPECT_DOUBLE_EQ(90, usage_percentile_sorted(b, 11, 0.9)); // h = 9, an order statistic itself
    EXPECT_DOUBLE_EQ(50, usage_percentile_sorted(b, 11, 0.5));
    const double one[] = {7};
    EXPECT_DOUBLE_EQ(7, usage_percentile_sorted(one, 1, 0.9)); // one value: itself
    EXPECT_TRUE(isnan(usage_percentile_sorted(a, 0, 0.5)));

    usage_stats st{};
    const double x[] = {4, 1, 3, 2}; // unsorted: the summary sorts
    ASSERT_EQ(0, usage_summarise(x, 4, 0.1, 0, &st));
    EXPECT_DOUBLE_EQ(2.5, st.mean);
    EXPECT_DOUBLE_EQ(2.5, st.p50);
    EXPECT_DOUBLE_EQ(3.7, st.p90);
    EXPECT_DOUBLE_EQ(4, st.max);
}

namespace {
// reps times: `on` windows at v then `off` windows at 0
std::vector<double> on_off(unsigned on, unsigned off, unsigned reps, double v)
{
    std::vector<double> x;
    for (unsigned r = 0; r < reps; r++) {
        x.insert(x.end(), on, v);
        x.insert(x.end(), off, 0.0);
    }
    return x;
}
} // namespace

TEST(UsageSummary, OnOffSeriesGivesDutyLevelAndBursts)
{
    std::vector<double> x = on_off(2, 6, 4, 100e6); // 2 windows of 100 MB/s, 6 idle, four times
    usage_stats st{};
    ASSERT_EQ(0, usage_summarise(x.data(), (unsigned)x.size(), 0.1, 1e6, &st));
    EXPECT_EQ(32u, st.n);
    EXPECT_DOUBLE_EQ(0.25, st.duty);
    EXPECT_DOUBLE_EQ(100e6, st.level);
    EXPECT_DOUBLE_EQ(25e6, st.mean);
    EXPECT_DOUBLE_EQ(0, st.p50);
    EXPECT_DOUBLE_EQ(100e6, st.p90); // h = 27.9 over 24 zeros and 8 x 100e6
    EXPECT_DOUBLE_EQ(100e6, st.max);
    EXPECT_EQ(4u, st.bursts);
    EXPECT_DOUBLE_EQ(0.2, st.burst_mean_s);
    EXPECT_DOUBLE_EQ(0.2, st.burst_max_s);
    EXPECT_DOUBLE_EQ(0.6, st.gap_mean_s); // three gaps between four bursts; the trailing idle is no gap

    // uneven: bursts of 1, 3 and 1 windows, gaps of 2 and 4, the level the p90 of the active windows only
    const double y[] = {5, 0, 0, 6, 7, 8, 0, 0, 0, 0, 9};
    ASSERT_EQ(0, usage_summarise(y, 11, 0.1, 1, &st));
    EXPECT_DOUBLE_EQ(5.0 / 11, st.duty);
    EXPECT_DOUBLE_EQ(8.6, st.level); // sorted 5 6 7 8 9: h = 3.6
    EXPECT_EQ(3u, st.bursts);
    EXPECT_DOUBLE_EQ(5.0 / 3 * 0.1, st.burst_mean_s);
    EXPECT_DOUBLE_EQ(0.30000000000000004, st.burst_max_s); // 3 x 0.1
    EXPECT_DOUBLE_EQ(0.3, st.gap_mean_s);
}

TEST(UsageSummary, AllIdleAndAllActive)
{
    std::vector<double> idle(20, 0.0);
    idle[7] = 5e5; // noise under the floor
    usage_stats st{};
    ASSERT_EQ(0, usage_summarise(idle.data(), 20, 0.1, 1e6, &st));
    EXPECT_DOUBLE_EQ(0, st.duty);
    EXPECT_DOUBLE_EQ(0, st.level);
    EXPECT_EQ(0u, st.bursts);
    EXPECT_DOUBLE_EQ(0, st.burst_mean_s);
    EXPECT_DOUBLE_EQ(0, st.burst_max_s);
    EXPECT_TRUE(isnan(st.gap_mean_s));
    EXPECT_DOUBLE_EQ(5e5 / 20, st.mean);
    EXPECT_DOUBLE_EQ(5e5, st.max);

    std::vector<double> busy(20, 50e6);
    ASSERT_EQ(0, usage_summarise(busy.data(), 20, 0.1, 1e6, &st));
    EXPECT_DOUBLE_EQ(1, st.duty);
    EXPECT_DOUBLE_EQ(50e6, st.level);
    EXPECT_EQ(1u, st.bursts);
    EXPECT_DOUBLE_EQ(2.0, st.burst_mean_s);
    EXPECT_DOUBLE_EQ(2.0, st.burst_max_s);
    EXPECT_TRUE(isnan(st.gap_mean_s)); // one burst: no gap between two

    EXPECT_EQ(-EINVAL, usage_summarise(busy.data(), 20, 0, 1e6, &st));
    EXPECT_EQ(-EINVAL, usage_summarise(busy.data(), 20, 0.1, NAN, &st));
}

TEST(UsageSummary, NansAreLeftOut)
{
    std::vector<double> x = on_off(2, 6, 4, 100e6), holed;
    for (size_t i = 0; i < x.size(); i++) {
        holed.push_back(x[i]);
        if (i % 3 == 0) // inside bursts and gaps alike
            holed.push_back(NAN);
    }
    usage_stats a{}, b{};
    ASSERT_EQ(0, usage_summarise(x.data(), (unsigned)x.size(), 0.1, 1e6, &a));
    ASSERT_EQ(0, usage_summarise(holed.data(), (unsigned)holed.size(), 0.1, 1e6, &b));
    EXPECT_EQ(a.n, b.n);
    EXPECT_DOUBLE_EQ(a.mean, b.mean);
    EXPECT_DOUBLE_EQ(a.p50, b.p50);
    EXPECT_DOUBLE_EQ(a.p90, b.p90);
    EXPECT_DOUBLE_EQ(a.max, b.max);
    EXPECT_DOUBLE_EQ(0.25, b.duty);
    EXPECT_DOUBLE_EQ(100e6, b.level);
    EXPECT_EQ(4u, b.bursts);
    EXPECT_DOUBLE_EQ(0.2, b.burst_mean_s);
    EXPECT_DOUBLE_EQ(0.6, b.gap_mean_s);

    const double none[] = {NAN, NAN};
    EXPECT_EQ(-ENODATA, usage_summarise(none, 2, 0.1, 0, &b));
    EXPECT_EQ(0u, b.n);
    EXPECT_TRUE(isnan(b.mean) && isnan(b.duty));
    EXPECT_EQ(-ENODATA, usage_summarise(nullptr, 0, 0.1, 0, &b));
}

// ---- the process set on a fake /proc that changes between reads

namespace {

void set_io(const std::string &proc, int pid, uint64_t rb, uint64_t wb)
{
    ASSERT_TRUE(ib_test::write_file(proc + "/" + std::to_string(pid) + "/io",
                                    "rchar: 0\nwchar: 0\nsyscr: 0\nsyscw: 0\nread_bytes: " + std::to_string(rb) +
                                        "\nwrite_bytes: " + std::to_string(wb) + "\ncancelled_write_bytes: 0\n"));
}

// One process of the fake tree: its stat, io and statm, and a thread per (tid, on-CPU ns).
void fake_proc(const std::string &proc, int pid, int ppid, uint64_t start, uint64_t rb, uint64_t wb, uint64_t resident,
               const std::vector<std::pair<int, uint64_t>> &tasks, const std::string &children = "")
{
    std::string d = proc + "/" + std::to_string(pid);
    std::filesystem::create_directories(d);
    ASSERT_TRUE(ib_test::write_file(d + "/stat", std::to_string(pid) + " (p" + std::to_string(pid) + ") S " +
                                                     std::to_string(ppid) + " " + std::to_string(pid) +
                                                     " 23819 0 -1 4194304 101 0 0 0 0 0 0 0 20 0 1 0 " +
                                                     std::to_string(start) + " 3133440 408 0\n"));
    set_io(proc, pid, rb, wb);
    ASSERT_TRUE(ib_test::write_file(d + "/statm", "1283 " + std::to_string(resident) + " 779 193 0 302 0\n"));
    for (auto &t : tasks) {
        std::string td = d + "/task/" + std::to_string(t.first);
        std::filesystem::create_directories(td);
        ASSERT_TRUE(ib_test::write_file(td + "/schedstat", std::to_string(t.second) + " 0 1\n"));
        ASSERT_TRUE(ib_test::write_file(td + "/children", t.first == pid ? children : ""));
    }
}

void set_cpu(const std::string &proc, int pid, int tid, uint64_t ns)
{
    ASSERT_TRUE(ib_test::write_file(proc + "/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat",
                                    std::to_string(ns) + " 0 1\n"));
}

// The fixture's tree: 100 (a shell, threads 100 and 102, 1060864 bytes written) and its child 101 (4194304
// written). Windows of 0.1 s; before each read the tree moves on:
//   read 1: 101 writes 1 MiB, 101 runs 0.1 s, 102 0.05 s;
//   read 2: 101 writes 0.5 MiB more and exits, 100 reaps it (its counters grow by all 101's), thread 102 exits;
//   read 3: 100 has started 104, which wrote 2 MiB and ran 10 ms;
//   read 4: 104 exits and 100 reaps it;
//   read 5: 100 itself writes 1 MiB.
void run_exit_scenario(bool tree)
{
    ib_test::TempDir d("usage_procs");
    ASSERT_FALSE(d.path().empty());
    std::filesystem::copy(fx("proc"), d.path() + "/proc", std::filesystem::copy_options::recursive);
    std::filesystem::copy(fx("cgroup.procs"), d.path() + "/cgroup.procs");
    const std::string proc = d.path() + "/proc", procs = d.path() + "/cgroup.procs";
    const uint64_t pg = page_size();
    FakeClock c;
    c.on_wake = [&](unsigned k) {
        switch (k) {
        case 0:
            set_io(proc, 101, 0, 4194304 + kMiB);
            set_cpu(proc, 101, 101, 500000000 + 100000000);
            set_cpu(proc, 100, 102, 1000000 + 50000000);
            break;
        case 1:
            std::filesystem::remove_all(proc + "/101");
            set_io(proc, 100, 6664192, 1060864 + 4194304 + kMiB + kMiB / 2);
            std::filesystem::remove_all(proc + "/100/task/102");
            ASSERT_TRUE(ib_test::write_file(proc + "/100/task/100/children", ""));
            ASSERT_TRUE(ib_test::write_file(procs, "100\n"));
            break;
        case 2:
            fake_proc(proc, 104, 100, 1400000, 0, 2 * kMiB, 100, {{104, 10000000}});
            ASSERT_TRUE(ib_test::write_file(proc + "/100/task/100/children", "104 "));
            ASSERT_TRUE(ib_test::write_file(procs, "100\n104\n"));
            break;
        case 3:
            std::filesystem::remove_all(proc + "/104");
            set_io(proc, 100, 6664192, 1060864 + 4194304 + kMiB + kMiB / 2 + 2 * kMiB);
            ASSERT_TRUE(ib_test::write_file(proc + "/100/task/100/children", ""));
            ASSERT_TRUE(ib_test::write_file(procs, "100\n"));
            break;
        case 4:
            set_io(proc, 100, 6664192, 1060864 + 4194304 + kMiB + kMiB / 2 + 2 * kMiB + kMiB);
            break;
        }
    };
    char why[256] = "";
    usage_src src{};
    if (tree)
        ASSERT_EQ(0, usage_src_procs_tree(&src, proc.c_str(), 100, why, sizeof why)) << why;
    else
        ASSERT_EQ(0, usage_src_procs_cgroup(&src, proc.c_str(), procs.c_str(), why, sizeof why)) << why;
    EXPECT_STREQ("procs", src.ops->name);
    usage_clock clk = clock_of(c);
    usage_series s{};
    ASSERT_EQ(0, usage_sample(&src, &clk, 100 * kMs, 5, nullptr, &s, why, sizeof why)) << why;
    usage_src_close(&src);
    ASSERT_EQ(5u, s.n);
    const double *w = s.v[USAGE_WRITE_BPS], *cpu = s.v[USAGE_CPU], *mem = s.v[USAGE_MEM_BYTES];
    for (int m = 0; m < USAGE_NMETRIC; m++) // net, llc, mem-bw: absent (no ns/net links, no resctrl)
        for (unsigned i = 0; i < s.n; i++)
            EXPECT_TRUE(m >= USAGE_NET_BPS ? isnan(s.v[m][i]) : s.v[m][i] >= 0)
                << usage_metric_name[m] << " window " << i << ": " << s.v[m][i];
    EXPECT_DOUBLE_EQ(10.0 * kMiB, w[0]);
    EXPECT_DOUBLE_EQ(1.5, cpu[0]);
    EXPECT_DOUBLE_EQ((1035.0 + 408) * pg, mem[0]);
    // 101's last half MiB reaches us through 100, once: 100's jump less 101's counters as last read
    EXPECT_DOUBLE_EQ(5.0 * kMiB, w[1]);
    EXPECT_DOUBLE_EQ(0, cpu[1]); // 102's last CPU is lost with it
    EXPECT_DOUBLE_EQ(1035.0 * pg, mem[1]);
    EXPECT_DOUBLE_EQ(20.0 * kMiB, w[2]); // a new process counts from 0
    EXPECT_DOUBLE_EQ(0.1, cpu[2]);
    EXPECT_DOUBLE_EQ((1035.0 + 100) * pg, mem[2]);
    EXPECT_DOUBLE_EQ(0, w[3]); // 104's 2 MiB folded into 100: not counted twice
    EXPECT_DOUBLE_EQ(10.0 * kMiB, w[4]); // and 100's own writes after it are not eaten
    EXPECT_DOUBLE_EQ(0, s.v[USAGE_READ_BPS][4]);
    usage_series_free(&s);
}

} // namespace

TEST(UsageProcs, CgroupListPidExitsBetweenReadsNeverNegative) { run_exit_scenario(false); }

TEST(UsageProcs, TreePidExitsBetweenReadsNeverNegative) { run_exit_scenario(true); }

// cgroup.procs leaves out a process that exited and is not yet reaped (a zombie): its last writes are still read
// from its /proc entry, and when its parent reaps it they are not counted again.
TEST(UsageProcs, ZombieLeftOutOfCgroupProcsCountsItsLastWindowOnce)
{
    ib_test::TempDir d("usage_zombie");
    ASSERT_FALSE(d.path().empty());
    std::filesystem::copy(fx("proc"), d.path() + "/proc", std::filesystem::copy_options::recursive);
    std::filesystem::copy(fx("cgroup.procs"), d.path() + "/cgroup.procs");
    const std::string proc = d.path() + "/proc", procs = d.path() + "/cgroup.procs";
    FakeClock c;
    c.on_wake = [&](unsigned k) {
        if (k == 0) { // 101 wrote 1 MiB more and exited: a zombie, gone from cgroup.procs, still in /proc
            std::string st = ib_test::file_text(proc + "/101/stat");
            size_t at = st.find(") R ");
            ASSERT_NE(std::string::npos, at);
            st[at + 2] = 'Z';
            ASSERT_TRUE(ib_test::write_file(proc + "/101/stat", st));
            set_io(proc, 101, 0, 4194304 + kMiB);
            ASSERT_TRUE(ib_test::write_file(proc + "/101/statm", "0 0 0 0 0 0 0\n"));
            ASSERT_TRUE(ib_test::write_file(procs, "100\n"));
        } else if (k == 1) { // 100 reaps it
            std::filesystem::remove_all(proc + "/101");
            set_io(proc, 100, 6664192, 1060864 + 4194304 + kMiB);
        }
    };
    char why[256] = "";
    usage_src src{};
    ASSERT_EQ(0, usage_src_procs_cgroup(&src, proc.c_str(), procs.c_str(), why, sizeof why)) << why;
    usage_clock clk = clock_of(c);
    usage_series s{};
    ASSERT_EQ(0, usage_sample(&src, &clk, 100 * kMs, 2, nullptr, &s, why, sizeof why)) << why;
    usage_src_close(&src);
    ASSERT_EQ(2u, s.n);
    EXPECT_DOUBLE_EQ(10.0 * kMiB, s.v[USAGE_WRITE_BPS][0]);
    EXPECT_DOUBLE_EQ(1035.0 * page_size(), s.v[USAGE_MEM_BYTES][0]);
    EXPECT_DOUBLE_EQ(0, s.v[USAGE_WRITE_BPS][1]);
    usage_series_free(&s);
}

TEST(UsageProcs, MalformedAndGoneRefusedWithOneLine)
{
    ib_test::TempDir d("usage_bad");
    ASSERT_FALSE(d.path().empty());
    std::filesystem::copy(fx("proc"), d.path() + "/proc", std::filesystem::copy_options::recursive);
    const std::string proc = d.path() + "/proc", procs = d.path() + "/cgroup.procs";
    char why[256] = "";
    usage_src src{};
    EXPECT_EQ(-ESRCH, usage_src_procs_tree(&src, proc.c_str(), 999, why, sizeof why));
    EXPECT_TRUE(has(why, "999")) << why;
    EXPECT_EQ(-ENOENT, usage_src_procs_cgroup(&src, proc.c_str(), procs.c_str(), why, sizeof why));

    ASSERT_TRUE(ib_test::write_file(procs, "100\nabc\n"));
    ASSERT_EQ(0, usage_src_procs_cgroup(&src, proc.c_str(), procs.c_str(), why, sizeof why)) << why;
    usage_snap s{};
    EXPECT_EQ(-EINVAL, usage_src_read(&src, &s, why, sizeof why));
    EXPECT_TRUE(has(why, "cgroup.procs line 2") && has(why, "'abc'")) << why;
    ASSERT_TRUE(ib_test::write_file(procs, "100\n101\n"));
    ASSERT_TRUE(ib_test::write_file(proc + "/101/io", "read_bytes: 1\n"));
    EXPECT_EQ(-EINVAL, usage_src_read(&src, &s, why, sizeof why));
    EXPECT_TRUE(has(why, "101/io: io: no write_bytes line")) << why;
    ASSERT_TRUE(ib_test::write_file(proc + "/101/stat", "101 (x) S\n"));
    EXPECT_EQ(-EINVAL, usage_src_read(&src, &s, why, sizeof why));
    EXPECT_TRUE(has(why, "101/stat")) << why;
    EXPECT_EQ(nullptr, strchr(why, '\n'));
    usage_src_close(&src);

    // the tree's root gone: -ESRCH
    ASSERT_EQ(0, usage_src_procs_tree(&src, proc.c_str(), 100, why, sizeof why)) << why;
    std::filesystem::remove_all(proc + "/100");
    EXPECT_EQ(-ESRCH, usage_src_read(&src, &s, why, sizeof why));
    EXPECT_TRUE(has(why, "process 100 is gone")) << why;
    usage_src_close(&src);
}

// ---- network, counted per namespace

namespace {

void link_ns(const std::string &proc, int pid, const std::string &id)
{
    std::filesystem::create_directories(proc + "/" + std::to_string(pid) + "/ns");
    std::filesystem::remove(proc + "/" + std::to_string(pid) + "/ns/net");
    std::filesystem::create_symlink(id, proc + "/" + std::to_string(pid) + "/ns/net");
}

// A net/dev of lo and eth0: lo transmitted lo_b bytes (lo_p packets); eth0 received rx_b, transmitted tx_b.
std::string net_dev(uint64_t lo_b, uint64_t lo_p, uint64_t rx_b, uint64_t tx_b)
{
    auto n = [](uint64_t v) { return std::to_string(v); };
    return "Inter-|   Receive                                                |  Transmit\n"
           " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
           "carrier compressed\n"
           "    lo: " + n(lo_b) + " " + n(lo_p) + " 0 0 0 0 0 0 " + n(lo_b) + " " + n(lo_p) + " 0 0 0 0 0 0\n"
           "  eth0: " + n(rx_b) + " 10 0 0 0 0 0 0 " + n(tx_b) + " 20 0 0 0 0 0 0\n";
}

} // namespace

// The fixture's 100 and 101 share one namespace: its traffic counts once, not once per process. Then 101 enters a
// namespace of its own (unshare -n): first seen, it counts from its first reading, and its traffic adds after.
TEST(UsageProcs, NetworkCountedOncePerNamespace)
{
    ib_test::TempDir d("usage_net");
    ASSERT_FALSE(d.path().empty());
    std::filesystem::copy(fx("proc"), d.path() + "/proc", std::filesystem::copy_options::recursive);
    const std::string proc = d.path() + "/proc";
    link_ns(proc, 100, "net:[4026531840]");
    link_ns(proc, 101, "net:[4026531840]");
    auto both = [&](const std::string &text) {
        ASSERT_TRUE(ib_test::write_file(proc + "/100/net/dev", text));
        ASSERT_TRUE(ib_test::write_file(proc + "/101/net/dev", text));
    };
    both(net_dev(1000, 10, 5000, 6000));
    FakeClock c;
    c.on_wake = [&](unsigned k) {
        if (k == 0) { // 1 MiB over lo (sent and received: once), 1 MiB in and out of eth0; 100 packets on lo
            both(net_dev(1000 + kMiB, 110, 5000 + kMiB / 2, 6000 + kMiB / 2));
        } else if (k == 1) { // 101 in its own namespace, with a past of 50 MiB; the first one moves 0.5 MiB
            link_ns(proc, 101, "net:[4026532999]");
            ASSERT_TRUE(ib_test::write_file(proc + "/101/net/dev", net_dev(0, 0, 50 * kMiB, 0)));
            ASSERT_TRUE(ib_test::write_file(proc + "/100/net/dev", net_dev(1000 + kMiB + kMiB / 2, 110, 5000 + kMiB / 2,
                                                                         6000 + kMiB / 2)));
        } else if (k == 2) { // the new namespace receives 2 MiB
            ASSERT_TRUE(ib_test::write_file(proc + "/101/net/dev", net_dev(0, 0, 52 * kMiB, 0)));
        } else if (k == 3) { // lo's counters restart (the namespace made again under the same id): nothing, never < 0
            ASSERT_TRUE(ib_test::write_file(proc + "/100/net/dev", net_dev(0, 0, 0, 0)));
        }
    };
    char why[256] = "";
    usage_src src{};
    ASSERT_EQ(0, usage_src_procs_tree(&src, proc.c_str(), 100, why, sizeof why)) << why;
    usage_clock clk = clock_of(c);
    usage_series s{};
    ASSERT_EQ(0, usage_sample(&src, &clk, 100 * kMs, 4, nullptr, &s, why, sizeof why)) << why;
    usage_src_close(&src);
    ASSERT_EQ(4u, s.n);
    const double *b = s.v[USAGE_NET_BPS], *p = s.v[USAGE_NET_PPS];
    EXPECT_DOUBLE_EQ(20.0 * kMiB, b[0]); // 1 MiB lo + 0.5 + 0.5 MiB eth0, over 0.1 s
    EXPECT_DOUBLE_EQ(1000, p[0]);
    EXPECT_DOUBLE_EQ(5.0 * kMiB, b[1]); // the new namespace's 50 MiB past is not counted
    EXPECT_DOUBLE_EQ(20.0 * kMiB, b[2]);
    EXPECT_DOUBLE_EQ(0, b[3]);
    usage_series_free(&s);

    // no namespace link readable: no network figure
    std::filesystem::remove(proc + "/100/ns/net");
    std::filesystem::remove(proc + "/101/ns/net");
    ASSERT_EQ(0, usage_src_procs_tree(&src, proc.c_str(), 100, why, sizeof why)) << why;
    usage_snap snap{};
    ASSERT_EQ(0, usage_src_read(&src, &snap, why, sizeof why)) << why;
    EXPECT_FALSE(snap.have_net);
    usage_src_close(&src);
}

// ---- resctrl monitoring on a fixture root

namespace {

std::string rdt_group(const std::string &root) { return root + "/mon_groups/ibench-" + std::to_string(getpid()); }

void set_mon(const std::string &group, const char *dom, const char *file, const std::string &v)
{
    ASSERT_TRUE(ib_test::write_file(group + "/mon_data/mon_L3_" + dom + "/" + file, v + "\n"));
}

} // namespace

// No resctrl, or no monitoring of what is read: -ENOTSUP with one line, the source left as it was.
TEST(UsageResctrl, AbsentIsNotSupportedWithOneLineAndTheSourceUnchanged)
{
    ib_test::TempDir d("usage_rdt_none");
    ASSERT_FALSE(d.path().empty());
    std::filesystem::copy(fx("proc"), d.path() + "/proc", std::filesystem::copy_options::recursive);
    const std::string proc = d.path() + "/proc", root = d.path() + "/resctrl";
    std::filesystem::create_directories(root);
    char why[256] = "";
    usage_src src{};
    ASSERT_EQ(0, usage_src_procs_tree(&src, proc.c_str(), 100, why, sizeof why)) << why;
    EXPECT_EQ(-ENOTSUP, usage_src_add_resctrl(&src, root.c_str(), why, sizeof why));
    EXPECT_TRUE(has(why, "no resctrl monitoring: ") && has(why, "/resctrl is not mounted")) << why;
    EXPECT_STREQ("procs", src.ops->name);
    std::filesystem::create_directories(root + "/info/L3");
    EXPECT_EQ(-ENOTSUP, usage_src_add_resctrl(&src, root.c_str(), why, sizeof why));
    EXPECT_TRUE(has(why, "the CPU has no L3 monitoring")) << why;
    std::filesystem::create_directories(root + "/info/L3_MON");
    ASSERT_TRUE(ib_test::write_file(root + "/info/L3_MON/mon_features", "mbm_local_bytes\n"));
    EXPECT_EQ(-ENOTSUP, usage_src_add_resctrl(&src, root.c_str(), why, sizeof why));
    EXPECT_TRUE(has(why, "the CPU has no llc_occupancy")) << why;
    EXPECT_EQ(nullptr, strchr(why, '\n'));
    EXPECT_STREQ("procs", src.ops->name);
    EXPECT_FALSE(std::filesystem::exists(root + "/mon_groups")) << "nothing made";
    usage_snap snap{};
    ASSERT_EQ(0, usage_src_read(&src, &snap, why, sizeof why)) << why;
    EXPECT_FALSE(snap.have_llc || snap.have_mbw);
    usage_src_close(&src);

    usage_src cg{};
    ASSERT_EQ(0, usage_src_cgroup_v2(&cg, fx("v2").c_str(), why, sizeof why)) << why;
    EXPECT_EQ(-EINVAL, usage_src_add_resctrl(&cg, root.c_str(), why, sizeof why));
    EXPECT_TRUE(has(why, "process set")) << why;
    usage_src_close(&cg);

    // this machine, as it is
    if (!std::filesystem::exists("/sys/fs/resctrl/info")) {
        ASSERT_EQ(0, usage_src_procs_tree(&src, nullptr, getpid(), why, sizeof why)) << why;
        EXPECT_EQ(-ENOTSUP, usage_src_add_resctrl(&src, nullptr, why, sizeof why));
        EXPECT_STREQ("no resctrl monitoring: /sys/fs/resctrl is not mounted", why);
        usage_src_close(&src);
    }
}

// The group is made, every thread of the set written to its tasks, its two L3 domains summed (llc_occupancy a level,
// mbm_total_bytes a rate), an "Unavailable" domain leaves that figure absent, and closing removes the group.
TEST(UsageResctrl, GroupOfTheSetsThreadsReadOverDomainsAndRemoved)
{
    ib_test::TempDir d("usage_rdt");
    ASSERT_FALSE(d.path().empty());
    std::filesystem::copy(fx("proc"), d.path() + "/proc", std::filesystem::copy_options::recursive);
    std::filesystem::copy(fx("resctrl"), d.path() + "/resctrl", std::filesystem::copy_options::recursive);
    const std::string proc = d.path() + "/proc", root = d.path() + "/resctrl", group = rdt_group(root);
    std::filesystem::create_directories(root + "/mon_groups");
    char why[256] = "";
    usage_src src{};
    ASSERT_EQ(0, usage_src_procs_tree(&src, proc.c_str(), 100, why, sizeof why)) << why;
    ASSERT_EQ(0, usage_src_add_resctrl(&src, root.c_str(), why, sizeof why)) << why;
    EXPECT_STREQ("procs+resctrl", src.ops->name);
    ASSERT_TRUE(std::filesystem::is_directory(group));
    std::string tasks = ib_test::file_text(group + "/tasks");
    std::vector<std::string> tids;
    for (size_t a = 0, b; (b = tasks.find('\n', a)) != std::string::npos; a = b + 1)
        tids.push_back(tasks.substr(a, b - a));
    std::sort(tids.begin(), tids.end());
    EXPECT_EQ((std::vector<std::string>{"100", "101", "102"}), tids) << "every thread of 100 and its child 101";
    // what the kernel gives a new group: its mon_data (here the root's recorded shape)
    std::filesystem::copy(root + "/mon_data", group + "/mon_data", std::filesystem::copy_options::recursive);
    FakeClock c;
    c.on_wake = [&](unsigned k) {
        if (k == 0) { // 10 MiB more on domain 0, 5 on 1; occupancy 2 MiB + 1 MiB
            set_mon(group, "00", "mbm_total_bytes", std::to_string(6815744 + 10 * kMiB));
            set_mon(group, "01", "mbm_total_bytes", std::to_string(2097152 + 5 * kMiB));
            set_mon(group, "00", "llc_occupancy", std::to_string(2 * kMiB));
            set_mon(group, "01", "llc_occupancy", std::to_string(kMiB));
        } else if (k == 1) {
            set_mon(group, "01", "mbm_total_bytes", "Unavailable");
        }
    };
    usage_clock clk = clock_of(c);
    usage_series s{};
    ASSERT_EQ(0, usage_sample(&src, &clk, 100 * kMs, 2, nullptr, &s, why, sizeof why)) << why;
    ASSERT_EQ(2u, s.n);
    EXPECT_DOUBLE_EQ(150.0 * kMiB, s.v[USAGE_MEMBW_BPS][0]);
    EXPECT_DOUBLE_EQ(3.0 * kMiB, s.v[USAGE_LLC_BYTES][0]);
    EXPECT_TRUE(isnan(s.v[USAGE_MEMBW_BPS][1]));
    EXPECT_DOUBLE_EQ(3.0 * kMiB, s.v[USAGE_LLC_BYTES][1]);
    EXPECT_TRUE(s.v[USAGE_WRITE_BPS][0] >= 0) << "the process set is still read";
    usage_series_free(&s);
    // the kernel's files go with the group; here the test takes them off, as rmdir would
    std::filesystem::remove_all(group + "/mon_data");
    std::filesystem::remove(group + "/tasks");
    usage_src_close(&src);
    EXPECT_FALSE(std::filesystem::exists(group)) << "the group is removed on close";
}

// A failure after the group was made (the set is empty: no thread to monitor) removes it.
TEST(UsageResctrl, FailureAfterTheGroupWasMadeRemovesIt)
{
    ib_test::TempDir d("usage_rdt_fail");
    ASSERT_FALSE(d.path().empty());
    std::filesystem::copy(fx("proc"), d.path() + "/proc", std::filesystem::copy_options::recursive);
    std::filesystem::copy(fx("resctrl"), d.path() + "/resctrl", std::filesystem::copy_options::recursive);
    const std::string proc = d.path() + "/proc", root = d.path() + "/resctrl", procs = d.path() + "/cgroup.procs";
    std::filesystem::create_directories(root + "/mon_groups");
    ASSERT_TRUE(ib_test::write_file(procs, ""));
    char why[256] = "";
    usage_src src{};
    ASSERT_EQ(0, usage_src_procs_cgroup(&src, proc.c_str(), procs.c_str(), why, sizeof why)) << why;
    EXPECT_EQ(-ESRCH, usage_src_add_resctrl(&src, root.c_str(), why, sizeof why));
    EXPECT_TRUE(has(why, "no thread")) << why;
    EXPECT_STREQ("procs", src.ops->name);
    EXPECT_FALSE(std::filesystem::exists(rdt_group(root))) << "removed after the failure";
    // a group left by a killed ibench of the same pid is made again
    std::filesystem::create_directories(rdt_group(root));
    ASSERT_TRUE(ib_test::write_file(procs, "101\n"));
    ASSERT_EQ(0, usage_src_add_resctrl(&src, root.c_str(), why, sizeof why)) << why;
    EXPECT_EQ("101\n", ib_test::file_text(rdt_group(root) + "/tasks"));
    std::filesystem::remove(rdt_group(root) + "/tasks");
    usage_src_close(&src);
    EXPECT_FALSE(std::filesystem::exists(rdt_group(root)));
}

// ---- real processes: a child's writes, counted by the process-set source

namespace {

// The real clock; its first sleep (the sampler's baseline is read by then) lets the child start.
struct GoClock {
    usage_clock mono;
    int go_fd;
    bool sent;
};

uint64_t go_now(void *ctx)
{
    auto *g = static_cast<GoClock *>(ctx);
    return g->mono.now_ns(g->mono.ctx);
}

void go_sleep_until(void *ctx, uint64_t t)
{
    auto *g = static_cast<GoClock *>(ctx);
    if (!g->sent) {
        g->sent = true;
        ssize_t n = write(g->go_fd, "g", 1);
        (void)n;
    }
    g->mono.sleep_until(g->mono.ctx, t);
}

// Write n bytes of file at path, then fsync: 0 or an errno.
int write_file_sync(const std::string &path, uint64_t n)
{
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    static char block[1 << 20];
    memset(block, 'u', sizeof block);
    for (uint64_t done = 0; done < n;) {
        ssize_t w = write(fd, block, (size_t)std::min<uint64_t>(sizeof block, n - done));
        if (w <= 0) {
            close(fd);
            return errno ? errno : EIO;
        }
        done += (uint64_t)w;
    }
    int rc = fsync(fd) ? errno : 0;
    close(fd);
    return rc;
}

// A child that waits for a byte on go, runs body, reports on done and then waits for go to close. The sampler
// reads the child's tree every 100 ms from before the go until 250 ms after the done; returns the bytes written
// over the windows (sum of rate x window).
double sample_child_writes(const std::function<int()> &body, std::string *err)
{
    int go[2], done[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(done, O_CLOEXEC)) {
        *err = "pipe failed";
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        close(go[1]);
        close(done[0]);
        if (read(go[0], &b, 1) != 1)
            _exit(2);
        int rc = body();
        if (write(done[1], rc ? "f" : "d", 1) != 1)
            _exit(3);
        while (read(go[0], &b, 1) > 0) {
        }
        _exit(rc ? 1 : 0);
    }
    close(go[0]);
    close(done[1]);
    double bytes = -1;
    char why[256] = "";
    usage_src src{};
    int rc = pid > 0 ? usage_src_procs_tree(&src, nullptr, pid, why, sizeof why) : -errno;
    if (rc == 0) {
        GoClock g{{}, go[1], false};
        usage_clock_mono(&g.mono);
        usage_clock clk{go_now, go_sleep_until, &g};
        std::atomic<int> stop{0};
        usage_series s{};
        int src_rc = 0;
        char swhy[256] = "";
        std::thread t([&] { src_rc = usage_sample(&src, &clk, 100 * kMs, 50, &stop, &s, swhy, sizeof swhy); });
        struct pollfd p = {done[0], POLLIN, 0};
        char b = 0;
        bool ok = poll(&p, 1, 5000) == 1 && read(done[0], &b, 1) == 1 && b == 'd';
        usleep(250000); // one more window closes after the child's fsync
        stop = 1;
        t.join();
        if (!ok)
            *err = "the child did not write (done byte '" + std::string(1, b) + "')";
        else if (src_rc != -EINTR)
            *err = std::string("usage_sample: ") + swhy;
        else {
            bytes = 0;
            for (unsigned i = 0; i < s.n; i++) {
                if (!(s.v[USAGE_WRITE_BPS][i] >= 0)) {
                    *err = "window " + std::to_string(i) + " has no write rate";
                    bytes = -1;
                    break;
                }
                bytes += s.v[USAGE_WRITE_BPS][i] * (double)(s.t_ns[i + 1] - s.t_ns[i]) / 1e9;
            }
        }
        usage_series_free(&s);
        usage_src_close(&src);
    } else {
        *err = why;
    }
    close(go[1]);
    close(done[0]);
    if (pid > 0)
        waitpid(pid, nullptr, 0);
    return bytes;
}

} // namespace

TEST(UsageReal, ChildWritesCountedThroughTheProcessSet)
{
    if (access("/proc/self/io", R_OK) != 0)
        GTEST_SKIP() << "no /proc/self/io here (a kernel without CONFIG_TASK_IO_ACCOUNTING)";
    ib_test::TempDir d("usage_write", "/var/tmp");
    ASSERT_FALSE(d.path().empty()) << "cannot make a directory under /var/tmp";
    const std::string file = d.path() + "/data";
    std::string err;
    double bytes = sample_child_writes([&] { return write_file_sync(file, 8 * kMiB); }, &err);
    ASSERT_GE(bytes, 0) << err;
    EXPECT_GE(llround(bytes), (long long)(8 * kMiB)) << "counted " << bytes << " bytes of 8 MiB";
    EXPECT_LT(bytes, 10.0 * kMiB) << "counted " << bytes << " bytes of 8 MiB";
}

TEST(UsageReal, GrandchildReapedByItsParentCountedOnce)
{
    if (access("/proc/self/io", R_OK) != 0)
        GTEST_SKIP() << "no /proc/self/io here (a kernel without CONFIG_TASK_IO_ACCOUNTING)";
    ib_test::TempDir d("usage_reap", "/var/tmp");
    ASSERT_FALSE(d.path().empty()) << "cannot make a directory under /var/tmp";
    // the child forks a writer that writes 4 MiB, waits long enough to be read at least twice, writes 4 MiB more
    // and exits; the child reaps it, and the kernel adds the writer's 8 MiB to the child's own counters
    std::string err;
    double bytes = sample_child_writes(
        [&] {
            pid_t w = fork();
            if (w == 0) {
                int rc = write_file_sync(d.path() + "/a", 4 * kMiB);
                usleep(300000);
                rc = rc ? rc : write_file_sync(d.path() + "/b", 4 * kMiB);
                _exit(rc ? 1 : 0);
            }
            int st = 0;
            return w > 0 && waitpid(w, &st, 0) == w && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
        },
        &err);
    ASSERT_GE(bytes, 0) << err;
    EXPECT_GE(llround(bytes), (long long)(8 * kMiB)) << "counted " << bytes << " bytes of 8 MiB";
    // counted twice, the writer's bytes would read 12 MiB (4 MiB seen while it ran, then all 8 through its parent)
    EXPECT_LT(bytes, 10.0 * kMiB) << "counted " << bytes << " bytes: the writer's counted again through its parent";
}
