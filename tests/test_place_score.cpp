// test_place_score.cpp - the NUMA locality score (placement/machine/pl_numa.h, Tang et al. HPCA'13 Eq. 1): exact values, the paper's
// range on a 4-node ring with hop distances, the hop rule, the numa_maps parser on recorded lines, the per-thread CPU
// sampler on a fixture /proc tree whose files change between samples, and `ibench place score` through the binary:
// offline table and JSON, the exit-2 cases, and a live child process on this machine.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <jansson.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ib_err.h"
#include "pl_numa.h"
#include "test_support.h"

namespace {

using ib_test::Proc;
using ib_test::TempDir;

const char *kFourNodes = "synthetic:pack:4 [numa] core:2 pu:1";

// A 4-node ring 0-1-2-3-0 as a firmware would give it (SLIT 10/21/31): node i is one hop from i +- 1, two from i + 2.
std::vector<double> ring_slit()
{
    std::vector<double> d(16);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int hops = std::min((i - j + 4) % 4, (j - i + 4) % 4);
            d[i * 4 + j] = hops == 0 ? 10 : hops == 1 ? 21 : 31;
        }
    return d;
}

std::string matrix_json(const std::vector<double> &d, int n)
{
    std::string s = "[";
    for (int i = 0; i < n; i++) {
        s += i ? ",[" : "[";
        for (int j = 0; j < n; j++)
            s += (j ? "," : "") + std::to_string((int)d[i * n + j]);
        s += "]";
    }
    return s + "]\n";
}

void write_file(const std::string &path, const std::string &text)
{
    std::ofstream f(path);
    f << text;
    ASSERT_TRUE(f.good()) << path;
}

double score_of(const std::vector<double> &c, const std::vector<double> &m, const std::vector<double> &d)
{
    double s = -1;
    char why[256] = "";
    EXPECT_EQ(pl_numa_score(c.data(), m.data(), d.data(), (unsigned)c.size(), &s, why, sizeof why), 0) << why;
    return s;
}

// ---- Eq. 1 ------------------------------------------------------------------------------------------------------

TEST(NumaScore, Eq1ExactValues)
{
    std::vector<double> d2 = {10, 20, 20, 10};
    // half the CPU on each node, all memory on node 0: node 0's half is local (1), node 1's half one hop (10/20)
    EXPECT_DOUBLE_EQ(score_of({0.5, 0.5}, {1, 0}, d2), 0.75);
    // raw usage is normalised: (3, 1) is (0.75, 0.25); memory split evenly: each row gives (1 + 10/21) / 2
    EXPECT_DOUBLE_EQ(score_of({3, 1}, {1, 1}, {10, 21, 21, 10}), (1 + 10.0 / 21) / 2);
    // D(i,i)/D(i,j) is taken on the CPU's row: a matrix whose rows differ tells the orientation apart
    std::vector<double> asym = {10, 20, 40, 20};
    EXPECT_DOUBLE_EQ(score_of({0, 1}, {1, 0}, asym), 0.5);   // D(1,1)/D(1,0) = 20/40
    EXPECT_DOUBLE_EQ(score_of({1, 0}, {0, 1}, asym), 0.5);   // D(0,0)/D(0,1) = 10/20
    EXPECT_DOUBLE_EQ(score_of({1, 1}, {1, 1}, asym), 0.75);  // (1 + 0.5 + 0.5 + 1) / 4
    // all local on any matrix is 1
    EXPECT_DOUBLE_EQ(score_of({0, 0, 7}, {0, 0, 2}, {10, 20, 30, 20, 10, 20, 30, 20, 10}), 1.0);
}

TEST(NumaScore, RejectsBadUsage)
{
    std::vector<double> d2 = {10, 20, 20, 10};
    const double nan = std::nan("");
    struct {
        std::vector<double> c, m;
        const char *word;
    } bad[] = {{{0, 0}, {1, 0}, "every entry is 0"},
               {{1, 0}, {0, 0}, "every entry is 0"},
               {{-1, 2}, {1, 0}, "not a number >= 0"},
               {{nan, 1}, {1, 0}, "not a number >= 0"},
               {{1, 0}, {INFINITY, 0}, "not a number >= 0"}};
    for (auto &b : bad) {
        double s = -1;
        char why[256] = "";
        EXPECT_EQ(pl_numa_score(b.c.data(), b.m.data(), d2.data(), 2, &s, why, sizeof why), -EINVAL);
        EXPECT_NE(strstr(why, b.word), nullptr) << why;
        EXPECT_EQ(strchr(why, '\n'), nullptr);
        EXPECT_EQ(s, -1) << "no score on bad input";
    }
    double s = -1;
    char why[256] = "";
    std::vector<double> zero_dist = {10, 0, 20, 10};
    EXPECT_EQ(pl_numa_score(std::vector<double>{1, 0}.data(), std::vector<double>{0, 1}.data(), zero_dist.data(), 2,
                            &s, why, sizeof why),
              -EINVAL);
    EXPECT_NE(strstr(why, "[0][1]"), nullptr) << why;
}

// The paper (Tang et al. HPCA'13, section 2.2): on a machine whose farthest node is two hops away the score runs from 0.33 (all
// memory two hops away) to 1 (all local).
TEST(NumaScore, PaperRangeOnFourNodeRingWithHops)
{
    std::vector<double> d = ring_slit();
    ASSERT_EQ(pl_numa_hops(d.data(), 4, d.data()), 0);
    EXPECT_DOUBLE_EQ(score_of({1, 0, 0, 0}, {0, 0, 1, 0}, d), 1.0 / 3);  // two hops
    EXPECT_DOUBLE_EQ(score_of({1, 0, 0, 0}, {0, 1, 0, 0}, d), 0.5);      // one hop
    EXPECT_DOUBLE_EQ(score_of({1, 0, 0, 0}, {1, 0, 0, 0}, d), 1.0);      // local
    EXPECT_DOUBLE_EQ(score_of({1, 1, 1, 1}, {1, 1, 1, 1}, d), (1 + 0.5 + 0.5 + 1.0 / 3) / 4);
    double lo = 0, hi = 0;
    pl_numa_range(d.data(), 4, &lo, &hi);
    EXPECT_DOUBLE_EQ(lo, 1.0 / 3);
    EXPECT_DOUBLE_EQ(hi, 1.0);
    // on the raw SLIT the same placement scores 10/31, not the paper's 1/3: hops are a choice, not the default
    std::vector<double> raw = ring_slit();
    EXPECT_DOUBLE_EQ(score_of({1, 0, 0, 0}, {0, 0, 1, 0}, raw), 10.0 / 31);
}

TEST(NumaHops, RankOfDistinctRemoteValues)
{
    std::vector<double> d = ring_slit();
    std::vector<double> h(16);
    ASSERT_EQ(pl_numa_hops(d.data(), 4, h.data()), 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            EXPECT_EQ(h[i * 4 + j], d[i * 4 + j] == 10 ? 10 : d[i * 4 + j] == 21 ? 20 : 30) << i << "," << j;
    // four distinct remote values are 1..4 hops, whatever their gaps; the input is untouched
    std::vector<double> line = {10, 16, 22, 28, 16, 10, 16, 22, 22, 16, 10, 16, 28, 22, 16, 10};
    std::vector<double> want = {10, 20, 30, 40, 20, 10, 20, 30, 30, 20, 10, 20, 40, 30, 20, 10};
    std::vector<double> copy = line;
    ASSERT_EQ(pl_numa_hops(line.data(), 4, h.data()), 0);
    EXPECT_EQ(h, want);
    EXPECT_EQ(line, copy);
    // a remote entry no larger than its row's diagonal is local; values already in hops stay
    std::vector<double> flat = {10, 10, 10, 10};
    ASSERT_EQ(pl_numa_hops(flat.data(), 2, flat.data()), 0);
    EXPECT_EQ(flat, (std::vector<double>{10, 10, 10, 10}));
    std::vector<double> hop3 = {10, 20, 30, 20, 10, 20, 30, 20, 10};
    std::vector<double> again = hop3;
    ASSERT_EQ(pl_numa_hops(again.data(), 3, again.data()), 0);
    EXPECT_EQ(again, hop3);
    // one node: nothing remote
    std::vector<double> one = {17};
    ASSERT_EQ(pl_numa_hops(one.data(), 1, one.data()), 0);
    EXPECT_EQ(one[0], 10);
}

// ---- numa_maps ----------------------------------------------------------------------------------------------------

// Lines as the kernel prints them (recorded here and completed with a 2-node and a huge-page process).
const char kMaps[] =
    "564bc5310000 default file=/usr/bin/bash mapped=47 mapmax=4 N0=47 kernelpagesize_kB=4\n"
    "564bc5445000 default anon=11 dirty=11 mapmax=3 active=0 N0=11 kernelpagesize_kB=4\n"
    "564c04489000 default heap anon=56 dirty=56 mapmax=3 active=0 N0=40 N1=16 kernelpagesize_kB=4\n"
    "7f2e93a3f000 default file=/usr/lib/x86_64-linux-gnu/libtinfo.so.6.4\n"
    "7f2e93a5f000 default\n"
    "7f0000000000 bind:1 file=/dev/hugepages/a\\040b huge dirty=3 N1=3 kernelpagesize_kB=2048\n"
    "7e0000000000 interleave:0-1 file=/mnt/huge1g/x huge dirty=1 N0=1 kernelpagesize_kB=1048576\n"
    "7d0000000000 default anon=512 dirty=512 active=0 N1=512 kernelpagesize_kB=4\n"
    "7ffd1b5c3000 default stack anon=33 dirty=33 N0=33 kernelpagesize_kB=4\n"
    "7c0000000000 default file=/tmp/name with spaces N9=9 mapped=2 N0=2 kernelpagesize_kB=4";  // no final newline

TEST(NumaMaps, RecordedLinesInBytes)
{
    const unsigned nodes[2] = {0, 1};
    uint64_t b[2] = {99, 99};
    char why[256] = "";
    ASSERT_EQ(pl_numa_maps_parse(kMaps, nodes, 2, 4, b, why, sizeof why), 0) << why;
    const uint64_t KiB = 1024;
    EXPECT_EQ(b[0], (47 + 11 + 40 + 33 + 2) * 4 * KiB + 1048576 * KiB);
    EXPECT_EQ(b[1], (16 + 512) * 4 * KiB + 3 * 2048 * KiB);
    // nodes named by OS index, in any order
    const unsigned swapped[2] = {1, 0};
    ASSERT_EQ(pl_numa_maps_parse(kMaps, swapped, 2, 4, b, why, sizeof why), 0) << why;
    EXPECT_EQ(b[0], (16 + 512) * 4 * KiB + 3 * 2048 * KiB);
    // a line without kernelpagesize_kB takes the default page size
    ASSERT_EQ(pl_numa_maps_parse("7f00 default anon=2 N0=2\n", nodes, 2, 64, b, why, sizeof why), 0) << why;
    EXPECT_EQ(b[0], 2 * 64 * KiB);
    EXPECT_EQ(b[1], 0u);
    // nothing resident at all
    ASSERT_EQ(pl_numa_maps_parse("7f00 default\n\n", nodes, 2, 4, b, why, sizeof why), 0);
    EXPECT_EQ(b[0] + b[1], 0u);
}

TEST(NumaMaps, RejectsWhatItCannotCount)
{
    const unsigned nodes[2] = {0, 1};
    uint64_t b[2];
    char why[256] = "";
    EXPECT_EQ(pl_numa_maps_parse("a default N0=1 kernelpagesize_kB=4\nb default N3=1 kernelpagesize_kB=4\n", nodes,
                                 2, 4, b, why, sizeof why),
              -EINVAL);
    EXPECT_NE(strstr(why, "line 2: node 3 is not in the topology"), nullptr) << why;
    EXPECT_EQ(pl_numa_maps_parse("a default N0=x kernelpagesize_kB=4\n", nodes, 2, 4, b, why, sizeof why), -EINVAL);
    EXPECT_NE(strstr(why, "line 1: bad field N0=x"), nullptr) << why;
    EXPECT_EQ(pl_numa_maps_parse("a default N0=1 kernelpagesize_kB=z\n", nodes, 2, 4, b, why, sizeof why), -EINVAL);
    EXPECT_NE(strstr(why, "kernelpagesize_kB=z"), nullptr) << why;
}

TEST(NumaMaps, ReadsThisProcess)
{
    const unsigned nodes[1] = {0};
    std::vector<unsigned> all;
    for (unsigned n = 0; n < 1024; n++)
        if (access(("/sys/devices/system/node/node" + std::to_string(n)).c_str(), F_OK) == 0)
            all.push_back(n);
    if (all.empty())
        all.assign(nodes, nodes + 1);
    std::vector<uint64_t> b(all.size());
    char why[256] = "";
    ASSERT_EQ(pl_numa_maps_read(nullptr, getpid(), all.data(), (unsigned)all.size(), b.data(), why, sizeof why), 0)
        << why;
    uint64_t sum = 0;
    for (uint64_t x : b)
        sum += x;
    EXPECT_GT(sum, 1024u * 1024) << "a test binary maps more than 1 MiB";
    EXPECT_EQ(pl_numa_maps_read("/nonexistent", 1, nodes, 1, b.data(), why, sizeof why), -ESRCH);
    EXPECT_NE(strstr(why, "no process 1"), nullptr) << why;
}

// ---- the CPU sampler on a fixture /proc tree ----------------------------------------------------------------------

// A /proc/PID/task tree whose threads' schedstat and stat the wait hook rewrites before each sample.
struct FakeProc {
    std::string root;
    int pid = 4242;
    struct Thr {
        long tid;
        double ns;
        int cpu;
        unsigned born, dies;  // present in samples born..dies-1
    };
    std::vector<Thr> thr;
    // per sample: how much each thread ran and where it ended up
    std::function<void(unsigned, Thr &)> step;

    void write(unsigned sample)
    {
        std::string task = root + "/" + std::to_string(pid) + "/task";
        mkdir((root + "/" + std::to_string(pid)).c_str(), 0755);
        mkdir(task.c_str(), 0755);
        for (auto &t : thr) {
            std::string dir = task + "/" + std::to_string(t.tid);
            if (sample < t.born)
                continue;
            if (sample >= t.dies) {
                unlink((dir + "/stat").c_str());
                unlink((dir + "/schedstat").c_str());
                rmdir(dir.c_str());
                continue;
            }
            if (sample > t.born)
                step(sample, t);
            mkdir(dir.c_str(), 0755);
            // a command name with spaces and parentheses: the fields count from the last ')'
            std::string stat = std::to_string(t.tid) + " (a (b) c) R 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 100 0 0 "
                               "0 0 0 0 0 0 0 0 0 0 0 0 0 17 " + std::to_string(t.cpu) + " 0 0 0 0 0\n";
            write_file(dir + "/stat", stat);
            char ss[64];
            snprintf(ss, sizeof ss, "%.0f 5 6\n", t.ns);
            write_file(dir + "/schedstat", ss);
        }
    }
    static void wait(void *ctx, unsigned sample, uint64_t) { static_cast<FakeProc *>(ctx)->write(sample); }
};

struct Machine4 {
    pl_machine m{};
    int *cpu_node = nullptr;
    unsigned ncpus = 0;
    bool ok = false;
    Machine4()
    {
        char why[256] = "";
        if (pl_machine_load(&m, kFourNodes, nullptr, why, sizeof why) == 0 &&
            pl_numa_cpu_nodes(&m, &cpu_node, &ncpus, why, sizeof why) == 0)
            ok = true;
        else
            ADD_FAILURE() << why;
    }
    ~Machine4()
    {
        free(cpu_node);
        pl_machine_free(&m);
    }
};

TEST(NumaSampler, CpuNodesFromTheTopology)
{
    Machine4 mc;
    ASSERT_TRUE(mc.ok);
    ASSERT_EQ(mc.m.nnodes, 4u);
    ASSERT_EQ(mc.ncpus, 8u);
    for (unsigned c = 0; c < 8; c++)
        EXPECT_EQ(mc.cpu_node[c], (int)c / 2) << "cpu " << c;
}

TEST(NumaSampler, AttributesEachThreadsDeltaToTheNodeItWasSeenOn)
{
    Machine4 mc;
    ASSERT_TRUE(mc.ok);
    TempDir dir("place_score");
    ASSERT_FALSE(dir.path().empty());
    FakeProc fp;
    fp.root = dir.path();
    // thread A: 1 ms per interval on CPU 0 (node 0) throughout;
    // thread B: 3 ms per interval on CPU 5 (node 2), then from sample 3 on CPU 6 (node 3);
    // thread C: born at sample 2 with 50 ms already run (not counted), then 2 ms per interval on CPU 7 (node 3);
    // thread D: 4 ms per interval on CPU 2 (node 1), gone from sample 3 (its earlier deltas count);
    // thread E: idle on CPU 1 (node 0).
    fp.thr = {{100, 0, 0, 0, 99}, {101, 0, 5, 0, 99}, {102, 50e6, 7, 2, 99}, {103, 0, 2, 0, 3}, {104, 9, 1, 0, 99}};
    fp.step = [](unsigned s, FakeProc::Thr &t) {
        switch (t.tid) {
        case 100: t.ns += 1e6; break;
        case 101:
            t.ns += 3e6;
            t.cpu = s >= 3 ? 6 : 5;
            break;
        case 102: t.ns += 2e6; break;
        case 103: t.ns += 4e6; break;
        default: break;
        }
    };
    fp.write(0);
    double ns[4], last[4];
    pl_cpu_use use = {ns, last, 0, 0};
    pl_sample_opts o = {};
    o.proc_root = fp.root.c_str();
    o.window_ns = 40 * IB_NS_PER_MS;  // 5 samples, 4 intervals
    o.interval_ns = 10 * IB_NS_PER_MS;
    o.wait = FakeProc::wait;
    o.ctx = &fp;
    char why[256] = "";
    ASSERT_EQ(pl_numa_cpu_sample(fp.pid, &o, mc.cpu_node, mc.ncpus, 4, &use, why, sizeof why), 0) << why;
    EXPECT_EQ(use.nsamples, 5u);
    EXPECT_EQ(use.nthreads, 4u);  // A, B, C, E at the end
    EXPECT_DOUBLE_EQ(ns[0], 4 * 1e6);                   // A
    EXPECT_DOUBLE_EQ(ns[1], 2 * 4e6);                   // D, samples 1 and 2
    EXPECT_DOUBLE_EQ(ns[2], 2 * 3e6);                   // B, samples 1 and 2
    EXPECT_DOUBLE_EQ(ns[3], 2 * 3e6 + 2 * 2e6);         // B after its move, C's two intervals (3, 4)
    EXPECT_EQ(std::vector<double>(last, last + 4), (std::vector<double>{2, 0, 0, 2}));  // A,E / B,C

    // the whole live path on the fixture: memory from its numa_maps, distances from a file, Eq. 1
    write_file(fp.root + "/4242/numa_maps", "7f00 default anon=256 N0=256 kernelpagesize_kB=4\n"
                                            "7e00 default anon=3 N2=1 N0=0 kernelpagesize_kB=2048\n"
                                            "7d00 default\n");
    uint64_t bytes[4];
    ASSERT_EQ(pl_numa_maps_read(fp.root.c_str(), fp.pid, mc.m.node_os, 4, bytes, why, sizeof why), 0) << why;
    EXPECT_EQ(std::vector<uint64_t>(bytes, bytes + 4), (std::vector<uint64_t>{1 << 20, 0, 2 << 20, 0}));
    std::string dist = fp.root + "/ring.json";
    write_file(dist, matrix_json(ring_slit(), 4));
    pl_machine withd{};
    ASSERT_EQ(pl_machine_load(&withd, kFourNodes, dist.c_str(), why, sizeof why), 0) << why;
    std::vector<double> mem(bytes, bytes + 4), cpu(ns, ns + 4);
    double got = -1;
    ASSERT_EQ(pl_numa_score(cpu.data(), mem.data(), withd.dist, 4, &got, why, sizeof why), 0) << why;
    pl_machine_free(&withd);
    // C = (4, 8, 6, 10) / 28, M = (1, 0, 2, 0) / 3; node i's row weighs M by D(i,i)/D(i,j) on the 10/21/31 ring
    double c[4] = {4 / 28.0, 8 / 28.0, 6 / 28.0, 10 / 28.0};
    double want = c[0] * (1 / 3.0 + 2 / 3.0 * 10 / 31) + c[1] * (10 / 21.0) + c[2] * (1 / 3.0 * 10 / 31 + 2 / 3.0) +
                  c[3] * (10 / 21.0);
    EXPECT_DOUBLE_EQ(got, want);
    // no such process, and a process that exits during the window
    EXPECT_EQ(pl_numa_cpu_sample(1, &o, mc.cpu_node, mc.ncpus, 4, &use, why, sizeof why), -ESRCH);
    EXPECT_NE(strstr(why, "no process 1"), nullptr) << why;
    for (auto &t : fp.thr)
        t.dies = 2;
    fp.write(0);
    EXPECT_EQ(pl_numa_cpu_sample(fp.pid, &o, mc.cpu_node, mc.ncpus, 4, &use, why, sizeof why), -ESRCH);
    EXPECT_NE(strstr(why, "exited during the window"), nullptr) << why;
}

// ---- the binary ---------------------------------------------------------------------------------------------------

struct CliRun {
    int code = -1;
    std::string out, err;
};

CliRun ibench(const std::vector<std::string> &args, double timeout_s = 30)
{
    Proc p;
    CliRun r;
    std::vector<std::string> a = {"place", "score"};
    a.insert(a.end(), args.begin(), args.end());
    EXPECT_TRUE(p.start(a, {}));
    EXPECT_TRUE(p.finish(timeout_s)) << "ibench place score hung";
    r.code = p.exit_code();
    r.out = p.out;
    r.err = p.err;
    return r;
}

json_t *parse(const std::string &s)
{
    json_error_t e;
    json_t *doc = json_loads(s.c_str(), 0, &e);
    EXPECT_NE(doc, nullptr) << e.text << " in: " << s;
    return doc;
}

std::vector<double> reals(json_t *a)
{
    std::vector<double> v;
    for (size_t i = 0; i < json_array_size(a); i++)
        v.push_back(json_number_value(json_array_get(a, i)));
    return v;
}

class ScoreCli : public ::testing::Test {
protected:
    TempDir dir{"place_score_cli"};
    std::string ring, bad;
    void SetUp() override
    {
        ASSERT_FALSE(dir.path().empty());
        ring = dir.path() + "/ring.json";
        write_file(ring, matrix_json(ring_slit(), 4));
        bad = dir.path() + "/bad.json";
        write_file(bad, "[[10,20],[20]]\n");
    }
};

TEST_F(ScoreCli, OfflineTable)
{
    CliRun r = ibench({"--cpu-usage", "1,0,0,0", "--memory", "0,0,1,0", "--distances", ring, "--hops"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("score     0.333  (0.333 all memory farthest .. 1 all local"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("distances hops (10 local, 10 (1 + k) at the k-th nearest remote distance) from file "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("       0     10     20     30     20\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("     2      0.000         1.000\n"), std::string::npos) << r.out;
    // the raw SLIT by default
    r = ibench({"--cpu-usage", "1,0,0,0", "--memory", "0,0,1,0", "--distances", ring});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("score     0.323"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("distances file " + ring + "\n"), std::string::npos) << r.out;
}

TEST_F(ScoreCli, OfflineJson)
{
    CliRun r = ibench({"--cpu-usage", "0.5,0.5,0,0", "--memory", "2,0,0,2", "--topology", kFourNodes, "--distances",
                    ring, "--hops", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_t *doc = parse(r.out);
    ASSERT_NE(doc, nullptr);
    EXPECT_STREQ(json_string_value(json_object_get(doc, "command")), "place score");
    EXPECT_TRUE(json_is_null(json_object_get(doc, "pid")));
    EXPECT_TRUE(json_is_null(json_object_get(doc, "window_s")));
    EXPECT_TRUE(json_is_null(json_object_get(doc, "memory_bytes")));
    EXPECT_TRUE(json_is_null(json_object_get(doc, "why")));
    EXPECT_EQ(reals(json_object_get(doc, "nodes")), (std::vector<double>{0, 1, 2, 3}));
    EXPECT_EQ(reals(json_object_get(doc, "cpu")), (std::vector<double>{0.5, 0.5, 0, 0}));
    EXPECT_EQ(reals(json_object_get(doc, "memory")), (std::vector<double>{0.5, 0, 0, 0.5}));
    json_t *d = json_object_get(doc, "distances");
    EXPECT_TRUE(json_is_true(json_object_get(d, "hops")));
    EXPECT_EQ(std::string(json_string_value(json_object_get(d, "source"))), "file " + ring);
    EXPECT_EQ(reals(json_array_get(json_object_get(d, "matrix"), 1)), (std::vector<double>{20, 10, 20, 30}));
    // node 0's CPU: half local, half one hop (node 3); node 1's: half one hop (0), half two hops (3)
    EXPECT_DOUBLE_EQ(json_real_value(json_object_get(doc, "score")), 0.5 * (0.5 + 0.25) + 0.5 * (0.25 + 1.0 / 6));
    json_t *range = json_object_get(doc, "range");
    EXPECT_DOUBLE_EQ(json_real_value(json_object_get(range, "min")), 1.0 / 3);
    EXPECT_DOUBLE_EQ(json_real_value(json_object_get(range, "max")), 1.0);
    json_decref(doc);
}

// An hwloc XML export of the 4-node machine with the ring's SLIT (10/21/31) as its latency matrix, as a firmware
// would give it: the default is the raw matrix, --distances hops the paper's 10/20/30.
TEST_F(ScoreCli, TopologyMatrixRawAndAsHops)
{
    hwloc_topology_t t;
    ASSERT_EQ(hwloc_topology_init(&t), 0);
    ASSERT_EQ(hwloc_topology_set_synthetic(t, "pack:4 [numa] core:2 pu:1"), 0);
    ASSERT_EQ(hwloc_topology_load(t), 0);
    hwloc_obj_t nodes[4];
    hwloc_uint64_t values[16];
    std::vector<double> d = ring_slit();
    for (int i = 0; i < 4; i++)
        nodes[i] = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
    for (int i = 0; i < 16; i++)
        values[i] = (hwloc_uint64_t)d[i];
    const unsigned long kind = HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY;
    hwloc_distances_add_handle_t h = hwloc_distances_add_create(t, "NUMALatency", kind, 0);
    ASSERT_NE(h, nullptr);
    ASSERT_EQ(hwloc_distances_add_values(t, h, 4, nodes, values, 0), 0);
    ASSERT_EQ(hwloc_distances_add_commit(t, h, 0), 0);
    std::string xml = dir.path() + "/ring4.xml";
    ASSERT_EQ(hwloc_topology_export_xml(t, xml.c_str(), 0), 0);
    hwloc_topology_destroy(t);

    CliRun r = ibench({"--cpu-usage", "1,0,0,0", "--memory", "0,0,1,0", "--topology", xml, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_t *doc = parse(r.out);
    ASSERT_NE(doc, nullptr);
    json_t *dist = json_object_get(doc, "distances");
    EXPECT_STREQ(json_string_value(json_object_get(dist, "source")), "hwloc NUMALatency");
    EXPECT_TRUE(json_is_false(json_object_get(dist, "hops")));
    EXPECT_EQ(reals(json_array_get(json_object_get(dist, "matrix"), 0)), (std::vector<double>{10, 21, 31, 21}));
    EXPECT_DOUBLE_EQ(json_real_value(json_object_get(doc, "score")), 10.0 / 31);
    json_decref(doc);

    r = ibench({"--cpu-usage", "1,0,0,0", "--memory", "0,0,1,0", "--topology", xml, "--distances", "hops", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    doc = parse(r.out);
    ASSERT_NE(doc, nullptr);
    dist = json_object_get(doc, "distances");
    EXPECT_TRUE(json_is_true(json_object_get(dist, "hops")));
    EXPECT_EQ(reals(json_array_get(json_object_get(dist, "matrix"), 0)), (std::vector<double>{10, 20, 30, 20}));
    EXPECT_DOUBLE_EQ(json_real_value(json_object_get(doc, "score")), 1.0 / 3);
    EXPECT_DOUBLE_EQ(json_real_value(json_object_get(json_object_get(doc, "range"), "min")), 1.0 / 3);
    json_decref(doc);
}

TEST_F(ScoreCli, OneNodeScoresOneAndSaysWhy)
{
    CliRun r = ibench({"--cpu-usage", "3", "--memory", "5", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_t *doc = parse(r.out);
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(json_real_value(json_object_get(doc, "score")), 1.0);
    EXPECT_STREQ(json_string_value(json_object_get(doc, "why")), "one NUMA node: every access is local");
    EXPECT_TRUE(json_is_null(json_object_get(json_object_get(doc, "distances"), "matrix")));
    json_decref(doc);
    r = ibench({"--cpu-usage", "1", "--memory", "1", "--topology", "synthetic:pack:2 core:2 pu:1"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("why       one NUMA node: every access is local\n"), std::string::npos) << r.out;
}

TEST_F(ScoreCli, BadInputExitsTwoWithOneLine)
{
    struct {
        std::vector<std::string> args;
        const char *says;
    } cases[] = {
        {{}, "give --pid P, or --cpu-usage LIST and --memory LIST"},
        {{"--pid"}, "--pid needs a value"},
        {{"--pid", "abc"}, "--pid 'abc' is not a process id"},
        {{"--pid", "2147483647"}, "no process 2147483647"},
        {{"--pid", "1", "--topology", kFourNodes}, "--topology must be live"},
        {{"--pid", "1", "--window", "0"}, "--window '0'"},
        {{"--cpu-usage", "1,0"}, "give both --cpu-usage LIST and --memory LIST"},
        {{"--cpu-usage", "1,,0", "--memory", "1,0,0"}, "--cpu-usage: entry 1 '' is not a number"},
        {{"--cpu-usage", "1,-1", "--memory", "1,0"}, "entry 1 '-1' is not a number >= 0"},
        {{"--cpu-usage", "0,0,0,0", "--memory", "1,0,0,0", "--distances", "R"}, "--cpu-usage: every entry is 0"},
        {{"--cpu-usage", "1,0", "--memory", "1,0,0"}, "--cpu-usage has 2 entries and --memory 3"},
        {{"--cpu-usage", "1,0", "--memory", "1,0", "--distances", "R"}, "have 2 entries but the distances file has 4"},
        {{"--cpu-usage", "1,0", "--memory", "1,0", "--distances", "B"}, "row 1 has 1 entries, want 2"},
        {{"--cpu-usage", "1,0", "--memory", "1,0", "--distances", "/nonexistent.json"}, "cannot read distances file"},
        {{"--cpu-usage", "1,0", "--memory", "1,0"}, "no distances for 2 nodes: give --distances FILE"},
        {{"--cpu-usage", "1,0", "--memory", "1,0", "--distances", "hops"}, "no distances for 2 nodes"},
        {{"--cpu-usage", "1,0,0,0", "--memory", "1,0,0,0", "--topology", kFourNodes}, "4 NUMA nodes but no distances "
                                                                                      "(the topology has no NUMA "
                                                                                      "distance matrix): give "
                                                                                      "--distances FILE"},
        {{"--cpu-usage", "1,0,0,0", "--memory", "1,0,0,0", "--topology", "synthetic:pack:4 [numa] core:2 pu:1",
          "--distances", "B"},
         "row 1 has 1 entries"},
        {{"--cpu-usage", "1", "--memory", "1", "--concerns", "numa"}, "--concerns does not apply"},
        {{"--cpu-usage", "1", "--memory", "1", "--window", "1s"}, "--window applies to --pid only"},
        {{"--pid", "1", "--memory", "1"}, "not both"},
        {{"--cpu-usage", "1", "--memory", "1", "extra"}, "unexpected argument 'extra'"},
    };
    for (auto &b : cases) {
        for (auto &a : b.args)
            a = a == "R" ? ring : a == "B" ? bad : a;
        CliRun r = ibench(b.args);
        std::string line = r.err;
        EXPECT_EQ(r.code, 2) << b.says << ": " << r.err;
        EXPECT_EQ(r.out, "") << b.says;
        EXPECT_EQ(line.find("ibench place score: "), 0u) << line;
        EXPECT_NE(line.find(b.says), std::string::npos) << "[" << line << "] should say: " << b.says;
        EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
    }
}

// A process with nothing resident (a kernel thread: its numa_maps is empty) cannot be scored: exit 1 at once, before
// the window, with one line.
TEST(ScoreLive, KernelThreadHasNoMemory)
{
    std::string kthread;
    for (const std::string &e : ib_test::dir_entries("/proc")) {
        if (e.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream st("/proc/" + e + "/stat"), maps("/proc/" + e + "/numa_maps");
        std::string line, rest;
        // kernel threads carry PF_KTHREAD (0x00200000) in stat's flags (field 9)
        if (!std::getline(st, line) || line.rfind(')') == std::string::npos || !maps.good())
            continue;
        std::istringstream f(line.substr(line.rfind(')') + 2));
        std::string state;
        long ppid, pgrp, session, tty, tpgid;
        unsigned long flags = 0;
        f >> state >> ppid >> pgrp >> session >> tty >> tpgid >> flags;
        if ((flags & 0x00200000) && !std::getline(maps, rest)) {
            kthread = e;
            break;
        }
    }
    if (kthread.empty())
        GTEST_SKIP() << "no kernel thread visible in /proc";
    double t0 = ib_test::now_s();
    CliRun r = ibench({"--pid", kthread, "--window", "10s"});
    EXPECT_LT(ib_test::now_s() - t0, 5.0) << "refused before the window";
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.err, "ibench place score: process " + kthread + " has no resident memory (a kernel thread?)\n");
}

// A live child on this machine: it maps and touches 64 MiB, then waits to be killed.
TEST(ScoreLive, ChildProcessOnThisMachine)
{
    const size_t touched = 64 << 20;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char *p = (char *)mmap(nullptr, touched, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            _exit(1);
        memset(p, 1, touched);
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    struct Reap {
        pid_t pid;
        ~Reap()
        {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    } reap{child};
    close(ready[1]);
    char c = 0;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    close(ready[0]);
    unsigned nodes = 0;
    while (access(("/sys/devices/system/node/node" + std::to_string(nodes)).c_str(), F_OK) == 0)
        nodes++;
    CliRun r = ibench({"--pid", std::to_string(child), "--window", "200ms", "--json"});
    CliRun t = ibench({"--pid", std::to_string(child), "--window", "100ms"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_t *doc = parse(r.out);
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(json_integer_value(json_object_get(doc, "pid")), child);
    EXPECT_DOUBLE_EQ(json_real_value(json_object_get(doc, "window_s")), 0.2);
    double bytes = 0;
    for (double b : reals(json_object_get(doc, "memory_bytes")))
        bytes += b;
    EXPECT_GT(bytes, (double)touched) << "numa_maps counts the touched 64 MiB and the program";
    double score = json_real_value(json_object_get(doc, "score"));
    if (nodes <= 1) {
        EXPECT_EQ(score, 1.0);
        EXPECT_STREQ(json_string_value(json_object_get(doc, "why")), "one NUMA node: every access is local");
    } else {
        EXPECT_GT(score, 0);
        EXPECT_LE(score, 1);
    }
    json_decref(doc);
    ASSERT_EQ(t.code, 0) << t.err;
    EXPECT_NE(t.out.find("process   " + std::to_string(child) + ": memory from numa_maps, CPU use of 1 thread(s)"),
              std::string::npos)
        << t.out;
}

}  // namespace
