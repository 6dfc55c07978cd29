// test_place_sources.cpp - thread clustering's sample sources: the shipped workload ibench-share with the `soft`
// reader (live, on this machine), and the `perf` reader (no PMU here: -EOPNOTSUPP with the event named) with its ring
// decoder on hand-built buffers in the perf ABI layout.
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>

#include "test_support.h"

extern "C" {
#include "pl_src_perf.h"
#include "pl_src_soft.h"
}

using ib_test::Proc;

namespace {

struct Collected {
    std::vector<pl_sample> v;
    int stop_after = -1; // return -ECANCELED at this sample (0-based), -1 never
};

int collect(void *ctx, const pl_sample *s)
{
    auto *c = static_cast<Collected *>(ctx);
    if (c->stop_after >= 0 && (int)c->v.size() == c->stop_after)
        return -ECANCELED;
    c->v.push_back(*s);
    return 0;
}

bool one_line(const char *why) { return why[0] != '\0' && strchr(why, '\n') == nullptr; }

bool file_exists(const std::string &p)
{
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

std::string channel(pid_t pid) { return "/dev/shm/ibench-share." + std::to_string(pid); }

// Removes pid's channel when a test leaves early (a failed ASSERT, then Proc's SIGKILL, would leave it behind).
struct ChannelGuard {
    const Proc &p;
    ~ChannelGuard()
    {
        if (p.pid > 0)
            unlink(channel(p.pid).c_str());
    }
};

using ib_test::start_share;

} // namespace

// ---- soft: the workload and its reader, live

TEST(PlaceSourcesSoft, GroupsAndGlobalsSeenByTheirThreads)
{
    const unsigned G = 3, T = 2, L = 4, K = 2;
    Proc p;
    ChannelGuard guard{p};
    std::map<uint32_t, unsigned> layout;
    ASSERT_TRUE(start_share(p, {"--groups", "3", "--threads", "2", "--lines", "4", "--global-lines", "2", "--noise",
                                "30", "--sample", "200", "--seconds", "20"},
                            layout))
        << p.out << p.err;
    ASSERT_EQ(layout.size(), G * T) << p.out;
    for (unsigned g = 0; g < G; g++) {
        unsigned n = 0;
        for (auto &kv : layout)
            n += kv.second == g;
        EXPECT_EQ(n, T) << "group " << g;
    }
    EXPECT_TRUE(file_exists(channel(p.pid)));

    Collected c;
    char why[256] = "";
    pl_soft_stats st;
    ASSERT_EQ(pl_src_soft_read_stats(p.pid, 1.0, collect, &c, &st, why, sizeof why), 0) << why;
    EXPECT_EQ(st.threads, G * T);
    EXPECT_EQ(st.samples, c.v.size());
    ASSERT_GT(c.v.size(), 1000u);

    // who saw each address
    std::map<uint64_t, std::set<uint32_t>> seen;
    std::map<uint32_t, uint64_t> per_thread;
    for (auto &s : c.v) {
        ASSERT_TRUE(layout.count(s.tid)) << "sample from a thread not in the layout: " << s.tid;
        EXPECT_EQ(s.src, PL_SRC_UNKNOWN);
        EXPECT_EQ(s.addr % 64, 0u) << "not line-aligned: " << s.addr;
        seen[s.addr].insert(s.tid);
        per_thread[s.tid]++;
    }
    for (auto &kv : layout)
        EXPECT_GT(per_thread[kv.first], 50u) << "thread " << kv.first << " reported too little";
    // an address is private (one thread), a group's (threads of one group only) or global (threads of every group)
    std::map<unsigned, std::set<uint64_t>> group_lines;
    std::set<uint64_t> globals;
    unsigned priv = 0;
    for (auto &kv : seen) {
        std::set<unsigned> groups;
        for (uint32_t t : kv.second)
            groups.insert(layout[t]);
        if (kv.second.size() == 1) {
            priv++;
        } else if (groups.size() == 1) {
            group_lines[*groups.begin()].insert(kv.first);
            EXPECT_EQ(kv.second.size(), T) << "a group line not seen by all of its group";
        } else {
            EXPECT_EQ(groups.size(), G) << "a line shared by some groups but not all: " << kv.first;
            EXPECT_EQ(kv.second.size(), G * T) << "a global line not seen by every thread";
            globals.insert(kv.first);
        }
    }
    EXPECT_EQ(globals.size(), K);
    ASSERT_EQ(group_lines.size(), G);
    for (auto &kv : group_lines)
        EXPECT_EQ(kv.second.size(), L) << "group " << kv.first;
    EXPECT_GT(priv, 0u);
    printf("soft: %zu samples in 1 s from %u threads (%llu lost), %zu addresses: %zu global, %u private\n", c.v.size(),
           st.threads, (unsigned long long)st.lost, seen.size(), globals.size(), priv);

    // SIGTERM: exit 130, channel removed
    kill(p.pid, SIGTERM);
    ASSERT_TRUE(p.finish(10));
    EXPECT_EQ(p.exit_code(), 130) << p.err;
    EXPECT_FALSE(file_exists(channel(p.pid)));
    // and the pid is gone now
    EXPECT_EQ(pl_src_soft_read(p.pid, 0.1, collect, &c, why, sizeof why), -ESRCH);
    EXPECT_TRUE(one_line(why)) << why;
}

TEST(PlaceSourcesSoft, TimedRunExitsCleanAndRemovesItsChannel)
{
    Proc p;
    ChannelGuard guard{p};
    std::map<uint32_t, unsigned> layout;
    ASSERT_TRUE(start_share(p, {"--groups", "2", "--threads", "1", "--seconds", "0.3"}, layout)) << p.err;
    EXPECT_EQ(layout.size(), 2u);
    ASSERT_TRUE(p.finish(10));
    EXPECT_EQ(p.exit_code(), 0) << p.err;
    EXPECT_EQ(p.err, "");
    EXPECT_FALSE(file_exists(channel(p.pid)));
}

TEST(PlaceSourcesSoft, ReadEndsWithEsrchWhenTheWorkloadExits)
{
    Proc p;
    ChannelGuard guard{p};
    std::map<uint32_t, unsigned> layout;
    ASSERT_TRUE(start_share(p, {"--groups", "1", "--threads", "2", "--sample", "10", "--seconds", "0.5"}, layout));
    Collected c;
    char why[256] = "";
    double t0 = ib_test::now_s();
    EXPECT_EQ(pl_src_soft_read(p.pid, 10, collect, &c, why, sizeof why), -ESRCH);
    EXPECT_LT(ib_test::now_s() - t0, 5.0) << "the read did not notice the exit";
    EXPECT_TRUE(one_line(why)) << why;
    EXPECT_NE(strstr(why, "exited"), nullptr) << why;
    EXPECT_GT(c.v.size(), 0u);
    ASSERT_TRUE(p.finish(10));
    EXPECT_EQ(p.exit_code(), 0);
}

TEST(PlaceSourcesSoft, NotIbenchShareIsEnoentGoneIsEsrch)
{
    Collected c;
    char why[256] = "";
    // this test process: running, but no channel
    EXPECT_EQ(pl_src_soft_read(getpid(), 0.1, collect, &c, why, sizeof why), -ENOENT);
    EXPECT_TRUE(one_line(why)) << why;
    EXPECT_NE(strstr(why, "not running ibench-share"), nullptr) << why;
    // a reaped child: gone
    pid_t kid = fork();
    if (kid == 0)
        _exit(0);
    int stt;
    waitpid(kid, &stt, 0);
    why[0] = '\0';
    EXPECT_EQ(pl_src_soft_read(kid, 0.1, collect, &c, why, sizeof why), -ESRCH);
    EXPECT_TRUE(one_line(why)) << why;
    EXPECT_EQ(pl_src_soft_read(0, 0.1, collect, &c, why, sizeof why), -EINVAL);
    EXPECT_EQ(pl_src_soft_read(getpid(), -1, collect, &c, why, sizeof why), -EINVAL);
    EXPECT_TRUE(c.v.empty());
}

TEST(PlaceSourcesSoft, SigkilledLeftoverIsIgnored)
{
    Proc p;
    ChannelGuard guard{p};
    std::map<uint32_t, unsigned> layout;
    ASSERT_TRUE(start_share(p, {"--groups", "1", "--threads", "1", "--seconds", "20"}, layout));
    pid_t pid = p.pid;
    p.kill_now();
    std::string path = channel(pid);
    EXPECT_TRUE(file_exists(path)) << "SIGKILL leaves the channel (documented)";
    Collected c;
    char why[256] = "";
    EXPECT_EQ(pl_src_soft_read(pid, 0.1, collect, &c, why, sizeof why), -ESRCH);
    EXPECT_TRUE(one_line(why)) << why;
    EXPECT_EQ(std::string(why), "no process " + std::to_string(pid));
    unlink(path.c_str());
}

TEST(PlaceSourcesSoft, StaleChannelOfALivePidIsEnoent)
{
    // a channel for this process, then its start time spoiled: what a leftover looks like once the pid is reused
    void *map = nullptr;
    size_t size = 0;
    char why[256] = "";
    ASSERT_EQ(pl_share_create(1, 64, &map, &size, why, sizeof why), 0) << why;
    Collected c;
    EXPECT_EQ(pl_src_soft_read(getpid(), 0.05, collect, &c, why, sizeof why), 0) << why;
    static_cast<pl_share_hdr *>(map)->starttime += 1;
    EXPECT_EQ(pl_src_soft_read(getpid(), 0.05, collect, &c, why, sizeof why), -ENOENT);
    EXPECT_NE(strstr(why, "stale"), nullptr) << why;
    static_cast<pl_share_hdr *>(map)->starttime -= 1;
    static_cast<pl_share_hdr *>(map)->version = 99;
    EXPECT_EQ(pl_src_soft_read(getpid(), 0.05, collect, &c, why, sizeof why), -EPROTO);
    EXPECT_TRUE(one_line(why)) << why;
    munmap(map, size);
    unlink(channel(getpid()).c_str());
}

TEST(PlaceSourcesSoft, BadOptionsExit2WithOneLine)
{
    const char *bad[] = {"--groups 0 --threads 2", "--threads 2", "--groups 2 --threads 2 --noise 101",
                         "--groups 2 --threads 2 --seconds 0", "--groups 2 --threads 2 --bogus",
                         "--groups 600 --threads 2", "--groups 2 --threads 2 --sample 0"};
    for (const char *a : bad) {
        int rc;
        std::string out = ib_test::sh(std::string(IBENCH_SHARE_BIN) + " " + a, &rc);
        EXPECT_EQ(rc, 2) << a << ": " << out;
        EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << a << ": " << out;
        EXPECT_EQ(out.rfind("ibench-share: ", 0), 0u) << out;
    }
}

// ---- perf: no PMU here; the decoder on hand-built rings

static bool sysfs_has(const char *p) { return access(p, F_OK) == 0; }

TEST(PlaceSourcesPerf, NoPmuIsEopnotsuppNamingTheEvent)
{
    if (sysfs_has("/sys/bus/event_source/devices/cpu/events/mem-loads") ||
        sysfs_has("/sys/bus/event_source/devices/cpu_core/events/mem-loads") ||
        sysfs_has("/sys/bus/event_source/devices/ibs_op/type"))
        GTEST_SKIP() << "this machine has a PMU event with data addresses";
    Collected c;
    char why[256] = "";
    EXPECT_EQ(pl_src_perf_read(getpid(), 0.1, collect, &c, why, sizeof why), -EOPNOTSUPP);
    EXPECT_TRUE(one_line(why)) << why;
    std::string w = why;
    EXPECT_EQ(w.rfind("perf_event_open(", 0), 0u) << w;
    EXPECT_TRUE(w.find("mem-loads") != std::string::npos || w.find("ibs_op") != std::string::npos) << w;
    EXPECT_NE(w.find("): "), std::string::npos) << w;
    EXPECT_NE(w.find("no PMU here"), std::string::npos) << w;
    printf("perf: %s\n", why);
    EXPECT_TRUE(c.v.empty());
}

TEST(PlaceSourcesPerf, BadOrGonePid)
{
    Collected c;
    char why[256] = "";
    EXPECT_EQ(pl_src_perf_read(0, 0.1, collect, &c, why, sizeof why), -EINVAL);
    pid_t kid = fork();
    if (kid == 0)
        _exit(0);
    int stt;
    waitpid(kid, &stt, 0);
    EXPECT_EQ(pl_src_perf_read(kid, 0.1, collect, &c, why, sizeof why), -ESRCH);
    EXPECT_TRUE(one_line(why)) << why;
}

namespace {

constexpr uint64_t kType = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;

// A perf ring's data area with free-running head, records written as the kernel does (wrapping at the end).
struct Ring {
    std::vector<unsigned char> d;
    uint64_t tail, head;
    explicit Ring(size_t size, uint64_t start = 0) : d(size, 0xee), tail(start), head(start) {}
    void put(const void *p, size_t n)
    {
        for (size_t i = 0; i < n; i++)
            d[(head + i) & (d.size() - 1)] = static_cast<const unsigned char *>(p)[i];
        head += n;
    }
    void sample(uint32_t pid, uint32_t tid, uint64_t addr, uint64_t weight, uint64_t dsrc)
    {
        perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(sizeof h + 32)};
        put(&h, sizeof h);
        uint32_t pt[2] = {pid, tid};
        put(pt, 8);
        put(&addr, 8);
        put(&weight, 8);
        put(&dsrc, 8);
    }
    void other(uint32_t type, size_t payload)
    {
        perf_event_header h = {type, 0, (uint16_t)(sizeof h + payload)};
        put(&h, sizeof h);
        std::vector<unsigned char> z(payload, 0x5a);
        put(z.data(), payload);
    }
    void lost(uint64_t n)
    {
        perf_event_header h = {PERF_RECORD_LOST, 0, (uint16_t)(sizeof h + 16)};
        put(&h, sizeof h);
        uint64_t id = 7;
        put(&id, 8);
        put(&n, 8);
    }
    int decode(pid_t pid, Collected &c, pl_perf_stats &st, char *why, size_t len, uint64_t type = kType)
    {
        return pl_perf_decode(d.data(), d.size(), tail, head, type, pid, collect, &c, &st, why, len);
    }
};

uint64_t lvl(uint64_t l) { return l << PERF_MEM_LVL_SHIFT; }
uint64_t snoop(uint64_t s) { return s << PERF_MEM_SNOOP_SHIFT; }
uint64_t lvlnum(uint64_t n) { return n << PERF_MEM_LVLNUM_SHIFT; }
uint64_t remote() { return (uint64_t)PERF_MEM_REMOTE_REMOTE << PERF_MEM_REMOTE_SHIFT; }
uint64_t hops(uint64_t h) { return h << 43; } // PERF_MEM_HOPS_SHIFT (Linux 5.17; older headers lack it)

} // namespace

TEST(PlaceSourcesPerf, DecodesSamplesAndSkipsOtherRecords)
{
    Ring r(4096);
    uint64_t l3_hitm = lvl(PERF_MEM_LVL_L3 | PERF_MEM_LVL_HIT) | snoop(PERF_MEM_SNOOP_HITM);
    uint64_t rem_hitm = lvl(PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_HIT) | snoop(PERF_MEM_SNOOP_HITM);
    uint64_t ram = lvl(PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT);
    r.other(PERF_RECORD_MMAP, 40);
    r.sample(100, 101, 0x1000, 55, rem_hitm);
    r.other(PERF_RECORD_THROTTLE, 24);
    r.sample(100, 102, 0x2040, 30, l3_hitm);
    r.lost(3);
    r.sample(100, 101, 0x3080, 300, ram);
    Collected c;
    pl_perf_stats st;
    char why[256] = "";
    ASSERT_EQ(r.decode(0, c, st, why, sizeof why), 0) << why;
    ASSERT_EQ(c.v.size(), 3u);
    EXPECT_EQ(c.v[0].tid, 101u);
    EXPECT_EQ(c.v[0].addr, 0x1000u);
    EXPECT_EQ(c.v[0].src, PL_SRC_REMOTE);
    EXPECT_EQ(c.v[1].tid, 102u);
    EXPECT_EQ(c.v[1].addr, 0x2040u);
    EXPECT_EQ(c.v[1].src, PL_SRC_LOCAL);
    EXPECT_EQ(c.v[2].tid, 101u);
    EXPECT_EQ(c.v[2].addr, 0x3080u);
    EXPECT_EQ(c.v[2].src, PL_SRC_MEMORY);
    EXPECT_EQ(st.records, 6u);
    EXPECT_EQ(st.samples, 3u);
    EXPECT_EQ(st.skipped, 2u);
    EXPECT_EQ(st.lost, 3u);
    EXPECT_EQ(st.filtered, 0u);
}

TEST(PlaceSourcesPerf, DecodesAWrappedRing)
{
    // start 20 bytes before the end of a 256-byte ring: the first sample's fields straddle the end, and the records
    // after it lie past the wrap; head and tail are free-running (beyond the size)
    Ring r(256, 3 * 256 - 20);
    for (uint32_t i = 0; i < 5; i++)
        r.sample(9, 10 + i, 0x10000 + 64 * i, i, lvl(PERF_MEM_LVL_L1 | PERF_MEM_LVL_HIT));
    ASSERT_EQ(r.head - r.tail, 200u);
    Collected c;
    pl_perf_stats st;
    char why[256] = "";
    ASSERT_EQ(r.decode(0, c, st, why, sizeof why), 0) << why;
    ASSERT_EQ(c.v.size(), 5u);
    for (uint32_t i = 0; i < 5; i++) {
        EXPECT_EQ(c.v[i].tid, 10 + i);
        EXPECT_EQ(c.v[i].addr, 0x10000u + 64 * i);
        EXPECT_EQ(c.v[i].src, PL_SRC_LOCAL);
    }
}

TEST(PlaceSourcesPerf, DataSrcClasses)
{
    struct {
        uint64_t d;
        pl_src want;
        const char *what;
    } cases[] = {
        {lvl(PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_HIT) | snoop(PERF_MEM_SNOOP_HITM), PL_SRC_REMOTE, "remote HITM"},
        {lvl(PERF_MEM_LVL_REM_CCE2 | PERF_MEM_LVL_HIT) | snoop(PERF_MEM_SNOOP_HIT), PL_SRC_REMOTE, "remote clean"},
        {lvlnum(PERF_MEM_LVLNUM_L3) | remote() | snoop(PERF_MEM_SNOOP_HITM), PL_SRC_REMOTE, "L3 num, remote"},
        {lvlnum(PERF_MEM_LVLNUM_ANY_CACHE) | hops(3), PL_SRC_REMOTE, "any cache, other socket"},
        {lvlnum(PERF_MEM_LVLNUM_L2) | hops(2), PL_SRC_REMOTE, "L2, other node"},
        {lvlnum(PERF_MEM_LVLNUM_L2) | hops(1), PL_SRC_LOCAL, "L2, other core same node"},
        {lvl(PERF_MEM_LVL_L3 | PERF_MEM_LVL_HIT) | snoop(PERF_MEM_SNOOP_HITM), PL_SRC_LOCAL, "local LLC HITM"},
        {lvl(PERF_MEM_LVL_L1 | PERF_MEM_LVL_HIT), PL_SRC_LOCAL, "L1"},
        {lvl(PERF_MEM_LVL_LFB | PERF_MEM_LVL_HIT), PL_SRC_LOCAL, "LFB"},
        {lvlnum(PERF_MEM_LVLNUM_L1) | lvl(PERF_MEM_LVL_NA), PL_SRC_LOCAL, "L1 num"},
        {lvl(PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT), PL_SRC_MEMORY, "local DRAM"},
        {lvl(PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_HIT), PL_SRC_MEMORY, "remote DRAM"},
        {lvlnum(PERF_MEM_LVLNUM_RAM) | remote(), PL_SRC_MEMORY, "RAM num, remote"},
        {0, PL_SRC_UNKNOWN, "nothing"},
        {lvl(PERF_MEM_LVL_NA) | lvlnum(PERF_MEM_LVLNUM_NA), PL_SRC_UNKNOWN, "NA"},
        {lvl(PERF_MEM_LVL_L3 | PERF_MEM_LVL_MISS), PL_SRC_UNKNOWN, "L3 miss, source not said"},
        {lvlnum(PERF_MEM_LVLNUM_IO), PL_SRC_UNKNOWN, "I/O"},
        {lvl(PERF_MEM_LVL_UNC | PERF_MEM_LVL_HIT), PL_SRC_UNKNOWN, "uncached"},
    };
    Ring r(8192);
    uint32_t i = 0;
    for (auto &k : cases) {
        EXPECT_EQ(pl_perf_data_src(k.d), k.want) << k.what;
        r.sample(1, 1000 + i, 0x40 * (i + 1), 0, k.d);
        i++;
    }
    Collected c;
    pl_perf_stats st;
    char why[256] = "";
    ASSERT_EQ(r.decode(0, c, st, why, sizeof why), 0) << why;
    ASSERT_EQ(c.v.size(), sizeof cases / sizeof cases[0]);
    for (size_t j = 0; j < c.v.size(); j++) {
        EXPECT_EQ(c.v[j].src, cases[j].want) << cases[j].what;
        EXPECT_EQ(c.v[j].tid, 1000 + j);
    }
}

TEST(PlaceSourcesPerf, FiltersOtherProcessesAndAddresslessSamples)
{
    Ring r(4096);
    r.sample(50, 51, 0x100, 0, 0);
    r.sample(60, 61, 0x200, 0, 0); // another process (a per-CPU IBS event sees everyone)
    r.sample(50, 52, 0, 0, 0);     // no address
    Collected c;
    pl_perf_stats st;
    char why[256] = "";
    ASSERT_EQ(r.decode(50, c, st, why, sizeof why), 0) << why;
    ASSERT_EQ(c.v.size(), 1u);
    EXPECT_EQ(c.v[0].tid, 51u);
    EXPECT_EQ(st.filtered, 2u);
    // pid 0: no process filter, the address rule stays
    Collected all;
    ASSERT_EQ(r.decode(0, all, st, why, sizeof why), 0) << why;
    EXPECT_EQ(all.v.size(), 2u);
}

TEST(PlaceSourcesPerf, OtherSampleLayoutsAndMalformedRecords)
{
    char why[256] = "";
    pl_perf_stats st;
    // IP | TID | TIME | ADDR | CPU | PERIOD | DATA_SRC: the decoder walks the fields in the ABI's order
    {
        Ring r(4096);
        perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(sizeof h + 7 * 8)};
        r.put(&h, sizeof h);
        uint64_t ip = 0xffff, tm = 123456, addr = 0xabc0, cpu = 1, period = 1000;
        uint32_t pt[2] = {5, 6};
        uint64_t ds = lvl(PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_HIT);
        r.put(&ip, 8);
        r.put(pt, 8);
        r.put(&tm, 8);
        r.put(&addr, 8);
        r.put(&cpu, 8);
        r.put(&period, 8);
        r.put(&ds, 8);
        Collected c;
        uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                        PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC;
        ASSERT_EQ(r.decode(0, c, st, why, sizeof why, type), 0) << why;
        ASSERT_EQ(c.v.size(), 1u);
        EXPECT_EQ(c.v[0].tid, 6u);
        EXPECT_EQ(c.v[0].addr, 0xabc0u);
        EXPECT_EQ(c.v[0].src, PL_SRC_REMOTE);
        Collected c2;
        EXPECT_EQ(r.decode(0, c2, st, why, sizeof why, type | PERF_SAMPLE_CALLCHAIN), -EINVAL);
        EXPECT_TRUE(one_line(why)) << why;
    }
    // a sample shorter than its sample_type says
    {
        Ring r(4096);
        perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(sizeof h + 16)};
        r.put(&h, sizeof h);
        uint64_t z[2] = {0, 0};
        r.put(z, 16);
        Collected c;
        EXPECT_EQ(r.decode(0, c, st, why, sizeof why), -EPROTO);
        EXPECT_TRUE(one_line(why)) << why;
        EXPECT_NE(strstr(why, "shorter than its sample_type"), nullptr) << why;
    }
    // a record running past head, and one whose size is below a header's
    {
        Ring r(4096);
        r.sample(1, 1, 0x40, 0, 0);
        r.head -= 8;
        Collected c;
        EXPECT_EQ(r.decode(0, c, st, why, sizeof why), -EPROTO);
        EXPECT_TRUE(one_line(why)) << why;
        Ring z(4096);
        perf_event_header h = {PERF_RECORD_SAMPLE, 0, 4};
        z.put(&h, sizeof h);
        EXPECT_EQ(z.decode(0, c, st, why, sizeof why), -EPROTO);
        EXPECT_TRUE(c.v.empty());
    }
}

TEST(PlaceSourcesPerf, CallbackStopsTheDecode)
{
    Ring r(4096);
    for (uint32_t i = 0; i < 4; i++)
        r.sample(1, i, 0x40 * (i + 1), 0, 0);
    Collected c;
    c.stop_after = 2;
    pl_perf_stats st;
    char why[256] = "";
    EXPECT_EQ(r.decode(0, c, st, why, sizeof why), -ECANCELED);
    EXPECT_EQ(c.v.size(), 2u);
}
