// `ibench place cluster` (cli/place/cluster/cmd_place_cluster.c): the soft source end to end on this machine (the shipped
// ibench-share's groups recovered, --apply pins each group onto one CPU, read back from /proc), perf without a PMU
// (exit 77 with the event named), a trace with --profile (the data_sharing characteristic place map then reads), and
// bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <jansson.h>
#include <unistd.h>

#include "test_support.h"

extern "C" {
#include "pl_cluster.h"
}

using ib_test::Proc;
using ib_test::sh;

namespace {

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The CPUs thread tid of pid may run on, from /proc/PID/task/TID/status.
std::string allowed(pid_t pid, uint32_t tid)
{
    std::string st = slurp("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
    size_t p = st.find("Cpus_allowed_list:");
    if (p == std::string::npos)
        return "";
    p = st.find_first_not_of(" \t", p + 18);
    return st.substr(p, st.find('\n', p) - p);
}

// The acceptance: on this machine (2 CPUs: --chips 2 gives 2 chips of 1 CPU), ibench-share's groups are recovered
// (adjusted Rand index 1) and --apply pins each group onto one CPU, the two groups onto different ones.
TEST(PlaceClusterCmd, SoftGroupsRecoveredAndPinnedOneGroupACpu)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "needs 2 CPUs";
    Proc p;
    std::map<uint32_t, unsigned> layout;
    ASSERT_TRUE(ib_test::start_share(p, {"--groups", "2", "--threads", "3", "--seconds", "20"}, layout))
        << p.out << p.err;
    ASSERT_EQ(layout.size(), 6u);
    int rc;
    std::string o = sh(std::string(IBENCH_BIN) + " place cluster --pid " + std::to_string(p.pid) +
                           " --source soft --seconds 1 --chips 2 --apply --json",
                       &rc);
    ASSERT_EQ(rc, 0) << o;
    json_error_t e;
    json_t *d = json_loads(o.c_str(), 0, &e);
    ASSERT_NE(d, nullptr) << e.text << o;
    json_t *threads = json_object_get(d, "threads");
    std::vector<int> truth, got;
    std::map<unsigned, std::set<std::string>> cpus_of_group;
    size_t i;
    json_t *t;
    json_array_foreach(threads, i, t)
    {
        uint32_t tid = (uint32_t)json_integer_value(json_object_get(t, "tid"));
        ASSERT_TRUE(layout.count(tid)) << "thread " << tid << " is not the workload's";
        json_t *cl = json_object_get(t, "cluster");
        truth.push_back((int)layout[tid]);
        got.push_back(json_is_integer(cl) ? (int)json_integer_value(cl) : -1 - (int)i);
        cpus_of_group[layout[tid]].insert(allowed(p.pid, tid));
    }
    EXPECT_EQ(truth.size(), 6u) << "every thread was sampled";
    EXPECT_DOUBLE_EQ(pl_ari(truth.data(), got.data(), (unsigned)truth.size()), 1.0) << o;
    ASSERT_EQ(cpus_of_group.size(), 2u);
    std::string a = *cpus_of_group[0].begin(), b = *cpus_of_group[1].begin();
    EXPECT_EQ(cpus_of_group[0].size(), 1u) << "group 0's threads are on one CPU";
    EXPECT_EQ(cpus_of_group[1].size(), 1u) << "group 1's threads are on one CPU";
    EXPECT_TRUE((a == "0" && b == "1") || (a == "1" && b == "0")) << a << " / " << b;
    EXPECT_EQ(json_integer_value(json_object_get(json_object_get(d, "applied"), "pinned")), 6);
    json_decref(d);
}

// --source perf where the events cannot be opened (no PMU, or one without data addresses): exit 77, one line naming
// the event. Where the kernel lists no CPU PMU at all, success is itself the failure.
TEST(PlaceClusterCmd, PerfWithoutAPmuExits77WithTheReason)
{
    int rc;
    std::string o = sh(std::string(IBENCH_BIN) + " place cluster --pid " + std::to_string(getpid()) +
                           " --source perf --seconds 0.2 --chips 2",
                       &rc);
    const bool pmu = access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
                     access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0 ||
                     access("/sys/bus/event_source/devices/ibs_op", F_OK) == 0;
    if (rc == 0) { // sampled data addresses: possible only with a PMU, and the clustering was printed
        EXPECT_TRUE(pmu) << "perf sampling succeeded where the kernel lists no CPU PMU: " << o;
        EXPECT_FALSE(o.empty());
        return;
    }
    EXPECT_EQ(rc, 77) << o;
    EXPECT_EQ(o.rfind("ibench place cluster: perf_event_open(", 0), 0u) << o;
    EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
}

std::string temp_with(const std::string &text, const char *suffix)
{
    return ib_test::temp_file_with(text, "ibench-cluster", suffix);
}

// A trace of two pairs of threads, each pair hammering its own lines remotely and each thread three times as often
// its own private lines locally: two clusters, one per chip of a synthetic two-package machine.  --profile writes
// the data sharing into a profile, which place map then reads: Algorithm 1's, the share of all accesses on shared
// lines (1 in 4), not the share of remote samples on shared entries (1.000 by construction).
TEST(PlaceClusterCmd, TraceClustersAndWritesTheProfilesDataSharing)
{
    std::string tr;
    for (int rep = 0; rep < 1000; rep++)
        for (unsigned tid = 1; tid <= 4; tid++) {
            unsigned group = (tid - 1) / 2;
            char l[64];
            snprintf(l, sizeof l, "%u 0x%x remote\n", tid, 0x10000 + group * 0x1000 + (rep % 4) * 64);
            tr += l;
            for (int k = 0; k < 3; k++) {
                snprintf(l, sizeof l, "%u 0x%x local\n", tid, 0x100000 * tid + ((rep * 3 + k) % 64) * 64);
                tr += l;
            }
        }
    std::string trace = temp_with(tr, ".trace");
    std::string prof = temp_with(slurp(IBENCH_FIXTURES "/../../docs/data/corun/memcached.json"), ".json");
    int rc;
    std::string o = sh(std::string(IBENCH_BIN) + " place cluster --trace " + trace +
                           " --topology 'synthetic:pack:2 core:2 pu:1' --profile " + prof,
                       &rc);
    ASSERT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("4 threads, 2 clusters, 0 unclustered"), std::string::npos) << o;
    EXPECT_NE(o.find("chips (the 2 instances of package)"), std::string::npos) << o;
    EXPECT_NE(o.find("phase 1: remote share 0.250 (remote samples of those with a known source (4000 of 16000)) > "
                     "trigger 0.20: clustering activated"), std::string::npos) << o;
    EXPECT_NE(o.find("data sharing (Algorithm 1's): 0.250 of all samples on lines 2 or more threads touch (8 of 264 "
                     "lines shared); remote samples on shared shMap entries: 1.000"), std::string::npos) << o;
    EXPECT_NE(o.find("data sharing 0.250 written into " + prof), std::string::npos) << o;
    std::string m = sh(std::string(IBENCH_BIN) + " place map --target " + prof + ":2 --corunner " + prof +
                           ":2 --topology 'synthetic:pack:2 l2:2 core:2 pu:1' --json",
                       &rc);
    EXPECT_EQ(rc, 0) << m;
    EXPECT_NE(m.find("\"data_sharing\": 0.25"), std::string::npos) << m;
    EXPECT_NE(m.find("place cluster --trace " + trace), std::string::npos) << m;
    unlink(trace.c_str());
    unlink(prof.c_str());
}

TEST(PlaceClusterCmd, BadInputExits2WithOneLine)
{
    std::string bad_trace = temp_with("1 0x1000\n2 zz\n", ".trace");
    std::string good_trace = temp_with("1 0x1000\n2 0x1000\n", ".trace");
    const std::vector<std::string> bad = {
        "--chips 2",
        "--trace " + bad_trace + " --pid 1 --chips 2",
        "--pid 1 --chips 2",
        "--trace " + bad_trace + " --chips 2",
        "--trace " + bad_trace + " --chips 2 --apply",
        "--pid " + std::to_string(getpid()) + " --source soft --seconds 0.1 --chips 2",
        "--trace /nonexistent.trace --chips 2",
        "--trace " + bad_trace + " --chips 99",
        "--trace " + bad_trace + " --region 48 --chips 2",
        // options with no use here are refused, not ignored (on a trace that reads well alone: exit 0);
        // phase 1's figures are shares
        "--trace " + good_trace + " --chips 2 --rounds 2",
        "--trace " + good_trace + " --chips 2 --seconds 2",
        "--trace " + good_trace + " --chips 2 --distances /nonexistent.json",
        "--trace " + good_trace + " --chips 2 --trigger 1.5",
        "--trace " + good_trace + " --chips 2 --remote-share -0.1",
    };
    int grc;
    std::string go = sh(std::string(IBENCH_BIN) + " place cluster --trace " + good_trace + " --chips 2", &grc);
    EXPECT_EQ(grc, 0) << go;
    for (const std::string &b : bad) {
        int rc;
        std::string o = sh(std::string(IBENCH_BIN) + " place cluster " + b, &rc);
        EXPECT_EQ(rc, 2) << b << ": " << o;
        EXPECT_EQ(o.rfind("ibench place cluster: ", 0), 0u) << b << ": " << o;
        EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << b << ": " << o;
    }
    unlink(bad_trace.c_str());
    unlink(good_trace.c_str());
}

} // namespace
