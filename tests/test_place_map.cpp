// The characteristics heuristic (placement/mapping/pl_map.h): Tang et al. ISCA'11's Table 4 from the fixture of section 5's five
// applications, every branch of Algorithm 1, the infeasible-branch rule, the levels, the co-runner's PUs, the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "test_support.h"

extern "C" {
#include "pl_map.h"
#include "profile_fmt.h"
}

namespace {

struct Machine {
    pl_machine m{};
    pl_hier h{};
    Machine(const std::string &spec, const char *concerns)
    {
        char why[256] = "";
        EXPECT_EQ(pl_machine_load(&m, spec.c_str(), nullptr, why, sizeof why), 0) << why;
        EXPECT_EQ(pl_hier_from_topo(m.topo, concerns, &h, why, sizeof why), 0) << why;
    }
    ~Machine()
    {
        pl_hier_free(&h);
        if (m.topo)
            pl_machine_free(&m);
    }
};

const char *kClovertown = "synthetic:pack:2 l2:2 core:2 pu:1";

pl_map_chars fixture(const char *name)
{
    std::string path = std::string(IBENCH_FIXTURES) + "/tang-isca11/" + name + ".json";
    std::string text = ib_test::file_text(path);
    EXPECT_FALSE(text.empty()) << path;
    pl_map_chars c;
    char why[256] = "";
    EXPECT_EQ(pl_map_chars_parse(text.c_str(), path.c_str(), &c, why, sizeof why), 0) << why;
    return c;
}

pl_map_chars chars(const char *name, double bus, double fp, double sharing)
{
    pl_map_chars c{};
    snprintf(c.name, sizeof c.name, "%s", name);
    c.bus_usage = bus, c.llc_footprint = fp, c.data_sharing = sharing;
    return c;
}

const pl_map_opts kOpts = {PL_MAP_SHARING_HIGH, PL_MAP_FOOTPRINT_HIGH};

std::string map(const Machine &M, const pl_map_chars &p, const pl_map_chars &c, unsigned np, unsigned nc,
                pl_map_decision *dout = nullptr, bool *adjusted = nullptr)
{
    pl_map_decision d;
    char why[512] = "";
    EXPECT_EQ(pl_map_decide(&p, &c, &kOpts, &d, why, sizeof why), 0) << why;
    int llc, bus;
    EXPECT_EQ(pl_map_levels(&M.h, &llc, &bus, why, sizeof why), 0) << why;
    pl_map_result r;
    EXPECT_EQ(pl_map_place(&M.h, llc, bus, np, nc, &d, &r, why, sizeof why), 0) << why;
    std::string n = r.notation;
    if (dout)
        *dout = d;
    if (adjusted)
        *adjusted = r.adjusted;
    pl_map_result_free(&r);
    return n;
}

// Tang et al. ISCA'11, Table 4, "Predicted": 4 threads of each latency-sensitive application beside 4 of a batch one, on
// Clovertown (two sockets = two FSBs, each of two 4 MB L2s shared by 2 cores).  The characteristics are
// tests/fixtures/tang-isca11/*.json; each file's "note" says where each number comes from.
TEST(PlaceMap, SeedZeroTableFourPredictedColumn)
{
    Machine M(kClovertown, "package,l2");
    struct Row {
        const char *p, *c, *predicted;
        int line;
    } rows[] = {
        {"bigtable", "stitcher", "{XXXX****}", 4},        {"bigtable", "protobuf", "{XX**XX**}", 6},
        {"contentAnalyzer", "stitcher", "{XXXX****}", 12}, {"contentAnalyzer", "protobuf", "{X*X*X*X*}", 20},
        {"webSearch", "stitcher", "{XXXX****}", 14},       {"webSearch", "protobuf", "{X*X*X*X*}", 20},
    };
    for (const Row &r : rows) {
        pl_map_chars p = fixture(r.p), c = fixture(r.c);
        pl_map_decision d;
        EXPECT_EQ(map(M, p, c, p.threads, c.threads, &d), r.predicted) << r.p << " w/ " << r.c;
        EXPECT_EQ(d.line, r.line) << r.p << " w/ " << r.c << ": " << d.why;
    }
}

// Every line of Algorithm 1, on hand-made characteristics; a tie is not "less"; unknown sharing is not high.
TEST(PlaceMap, EveryBranchOfAlgorithmOne)
{
    struct Case {
        pl_map_chars p, c;
        enum pl_share llc, bus;
        int line;
    } cases[] = {
        {chars("P", 10, 0, 0.5), chars("C", 20, 0, NAN), PL_SHARED, PL_SHARED, 4},
        {chars("P", 20, 0, 0.5), chars("C", 20, 0, NAN), PL_SHARED, PL_SPREAD, 6}, // 20 < 20 is false
        {chars("P", 10, 50, 0.1), chars("C", 20, 0, NAN), PL_SPREAD, PL_SHARED, 12}, // 50 >= 50: high
        {chars("P", 10, 49.9, NAN), chars("C", 20, 0, NAN), PL_SHARED, PL_SHARED, 14},
        {chars("P", 30, 10, 0.29), chars("C", 20, 20, NAN), PL_SHARED, PL_SPREAD, 18},
        {chars("P", 30, 20, 0.29), chars("C", 20, 20, NAN), PL_SPREAD, PL_SPREAD, 20},
    };
    for (const Case &k : cases) {
        pl_map_decision d;
        char why[256] = "";
        ASSERT_EQ(pl_map_decide(&k.p, &k.c, &kOpts, &d, why, sizeof why), 0) << why;
        EXPECT_EQ(d.line, k.line) << d.why;
        EXPECT_EQ(d.llc, k.llc) << d.why;
        EXPECT_EQ(d.bus, k.bus) << d.why;
        EXPECT_EQ(d.bus_first, k.line > 6) << d.why;
    }
    // the thresholds are options: 0.5 sharing is not high at 0.6
    pl_map_opts o = {0.6, PL_MAP_FOOTPRINT_HIGH};
    pl_map_chars p = chars("P", 10, 0, 0.5), c = chars("C", 20, 0, NAN);
    pl_map_decision d;
    char why[256] = "";
    ASSERT_EQ(pl_map_decide(&p, &c, &o, &d, why, sizeof why), 0);
    EXPECT_EQ(d.line, 14) << d.why;
    // what a taken branch needs and does not have is refused with the reason
    pl_map_chars nb = chars("P", NAN, 0, 0.5);
    EXPECT_EQ(pl_map_decide(&nb, &c, &kOpts, &d, why, sizeof why), -EINVAL);
    EXPECT_NE(std::string(why).find("bus usage is unknown"), std::string::npos) << why;
    pl_map_chars nf = chars("P", 30, 10, 0.1), cf = chars("C", 20, NAN, NAN);
    EXPECT_EQ(pl_map_decide(&nf, &cf, &kOpts, &d, why, sizeof why), -EINVAL);
    EXPECT_NE(std::string(why).find("C's LLC footprint is unknown"), std::string::npos) << why;
    // ... but an unknown figure on a branch not taken is not needed
    pl_map_chars sh = chars("P", 30, NAN, 0.9);
    EXPECT_EQ(pl_map_decide(&sh, &cf, &kOpts, &d, why, sizeof why), 0) << why;
}

// Table 2's three 4-thread configurations from the four decisions on Clovertown; the fourth (spread LLC on one
// bus) is not possible for 4 threads on 4-core sockets: the bus decision (made first, line 10) stands.
TEST(PlaceMap, InfeasibleBranchKeepsTheFirstDecision)
{
    Machine M(kClovertown, "package,l2");
    bool adj = false;
    EXPECT_EQ(map(M, chars("P", 10, 80, 0.1), chars("C", 20, 0, NAN), 4, 4, nullptr, &adj), "{XXXX****}");
    EXPECT_TRUE(adj);
    // with 2 threads it is possible: {X.X.....}, one socket, two L2s; C stays off P's socket
    EXPECT_EQ(map(M, chars("P", 10, 80, 0.1), chars("C", 20, 0, NAN), 2, 2, nullptr, &adj), "{X.X.**..}");
    EXPECT_FALSE(adj);
    // one L3 per package (package and l3 merge): LLC shared and bus spread cannot both hold; with high data
    // sharing the LLC decision comes first (line 2) and stands: one package
    Machine W("synthetic:pack:2 l3:1 core:6 pu:1", "package,l3");
    EXPECT_EQ(map(W, chars("P", 30, 0, 0.9), chars("C", 20, 0, NAN), 6, 6, nullptr, &adj), "{XXXXXX******}");
    EXPECT_TRUE(adj);
    // without it the bus decision comes first (line 20: spread) and stands: both packages
    EXPECT_EQ(map(W, chars("P", 30, 10, 0.1), chars("C", 20, 5, NAN), 6, 6, nullptr, &adj), "{XXX***XXX***}");
    EXPECT_FALSE(adj); // spread LLC and spread bus agree on one level
}

TEST(PlaceMap, LevelsAreTheCoarsestCacheAndMemoryPath)
{
    char why[256] = "";
    int llc, bus;
    Machine C(kClovertown, "package,l2");
    ASSERT_EQ(pl_map_levels(&C.h, &llc, &bus, why, sizeof why), 0);
    EXPECT_STREQ(C.h.lv[llc].name, "l2");
    EXPECT_STREQ(C.h.lv[bus].name, "package");
    Machine N("synthetic:pack:2 [numa] l3:1 l2:4 core:1 pu:2", "numa,l3,l2");
    ASSERT_EQ(pl_map_levels(&N.h, &llc, &bus, why, sizeof why), 0);
    EXPECT_NE(std::string(N.h.lv[llc].name).find("l3"), std::string::npos) << N.h.lv[llc].name;
    EXPECT_NE(std::string(N.h.lv[bus].name).find("numa"), std::string::npos) << N.h.lv[bus].name;
    EXPECT_LE(bus, llc);
}

// C takes the PUs away from P first: another socket before another L2 of P's socket before P's own L2.
TEST(PlaceMap, CoRunnerStaysAwayFromTheTarget)
{
    Machine M(kClovertown, "package,l2");
    // P shares both (line 4): {0,1}; C's 2 threads go to the other socket
    EXPECT_EQ(map(M, chars("P", 10, 0, 0.9), chars("C", 20, 0, NAN), 2, 2), "{XX..**..}");
    // C of 5: the other socket's 4, then the free L2 of P's socket
    EXPECT_EQ(map(M, chars("P", 10, 0, 0.9), chars("C", 20, 0, NAN), 2, 5), "{XX*.****}");
    // C of 6: P's own L2 is not free: the two PUs of its socket's other L2 and the other socket
    EXPECT_EQ(map(M, chars("P", 10, 0, 0.9), chars("C", 20, 0, NAN), 2, 6), "{XX******}");
}

// On two packages of two NUMA nodes of 4 two-way SMT cores, a spread target (line 20) holds one PU of a
// core in every node, so every free PU shares an LLC with it; the co-runner must still take whole cores (never a
// sibling of the target while a core is free), one thread a core before doubling up on its own siblings.
TEST(PlaceMap, CoRunnerTakesWholeCoresBeforeTargetSiblings)
{
    Machine M("synthetic:pack:2 numa:2 l3:1 core:4 pu:2", nullptr);
    int core = pl_hier_find(&M.h, "core");
    ASSERT_GE(core, 0);
    for (unsigned nc : {4u, 8u, 12u, 16u, 28u}) {
        pl_map_decision d;
        char why[512] = "";
        pl_map_chars p = chars("P", 30, 20, 0.1), c = chars("C", 20, 20, NAN);
        ASSERT_EQ(pl_map_decide(&p, &c, &kOpts, &d, why, sizeof why), 0) << why;
        ASSERT_EQ(d.line, 20);
        int llc, bus;
        ASSERT_EQ(pl_map_levels(&M.h, &llc, &bus, why, sizeof why), 0) << why;
        pl_map_result r;
        ASSERT_EQ(pl_map_place(&M.h, llc, bus, 4, nc, &d, &r, why, sizeof why), 0) << why;
        std::vector<int> pcore(M.h.lv[core].ninst, 0), ccore(M.h.lv[core].ninst, 0);
        for (unsigned j = 0; j < r.np; j++)
            pcore[M.h.lv[core].inst[r.p_pus[j]]]++;
        for (unsigned j = 0; j < r.nc; j++)
            ccore[M.h.lv[core].inst[r.c_pus[j]]]++;
        unsigned free_cores = 0, doubled = 0, beside_p = 0;
        for (unsigned k = 0; k < M.h.lv[core].ninst; k++) {
            free_cores += pcore[k] == 0;
            doubled += ccore[k] == 2;
            beside_p += pcore[k] && ccore[k];
        }
        EXPECT_EQ(free_cores, 12u) << r.notation;
        // siblings of the target only once every free core is full; C's own siblings only once each has one
        EXPECT_EQ(beside_p, nc > 2 * free_cores ? nc - 2 * free_cores : 0u) << nc << " " << r.notation;
        EXPECT_EQ(doubled, nc > free_cores ? std::min(nc, 2 * free_cores) - free_cores : 0u) << nc << " " << r.notation;
        pl_map_result_free(&r);
    }
}

// 3 threads on two 6-core packages (one L3 each): only 3 + 0 is balanced, so line 20's "spread" cannot be
// honoured; the answer must say so (adjusted, and why) instead of reporting a spread it did not make.
TEST(PlaceMap, UnhonouredSpreadIsSaidAndWhy)
{
    Machine M("synthetic:pack:2 l3:1 core:6 pu:1", nullptr);
    pl_map_decision d;
    char why[512] = "";
    pl_map_chars p = chars("P", 30, 20, 0.1), c = chars("C", 20, 10, NAN);
    ASSERT_EQ(pl_map_decide(&p, &c, &kOpts, &d, why, sizeof why), 0) << why;
    ASSERT_EQ(d.line, 20);
    ASSERT_EQ(d.llc, PL_SPREAD);
    int llc, bus;
    ASSERT_EQ(pl_map_levels(&M.h, &llc, &bus, why, sizeof why), 0) << why;
    pl_map_result r;
    ASSERT_EQ(pl_map_place(&M.h, llc, bus, 3, 3, &d, &r, why, sizeof why), 0) << why;
    EXPECT_STREQ(r.notation, "{XXX...***...}");
    EXPECT_TRUE(r.adjusted);
    EXPECT_EQ(r.llc, PL_SHARED);
    EXPECT_EQ(r.llc_used, 1u);
    std::string aw = r.adjust_why;
    EXPECT_NE(aw.find("spread (line 20) is not possible for 3 threads here: every balanced placement uses 1 of the 2"),
              std::string::npos) << aw;
    pl_map_result_free(&r);
    // 6 threads can spread (3 + 3): nothing to say
    ASSERT_EQ(pl_map_place(&M.h, llc, bus, 6, 6, &d, &r, why, sizeof why), 0) << why;
    EXPECT_FALSE(r.adjusted) << r.adjust_why;
    EXPECT_EQ(r.llc, PL_SPREAD);
    pl_map_result_free(&r);
}

// From a profile: caused mem-bw and llc-cap, and data sharing from its 1.3 characteristics when place cluster wrote it.
TEST(PlaceMap, CharacteristicsFromAProfile)
{
    profile p;
    char why[256] = "";
    ASSERT_EQ(profile_read(IBENCH_FIXTURES "/../../docs/data/corun/memcached.json", &p, why, sizeof why), 0) << why;
    pl_map_chars c;
    ASSERT_EQ(pl_map_chars_from_profile(&p, &c, why, sizeof why), 0) << why;
    EXPECT_TRUE(std::isnan(c.data_sharing));
    EXPECT_STREQ(c.src[2], "unknown (not in the profile)");
    EXPECT_EQ(std::string(c.src[0]).rfind("caused mem-bw ", 0), 0u) << c.src[0];
    p.data_sharing = 0.4;
    p.data_sharing_source = strdup("place cluster --source soft");
    ASSERT_EQ(pl_map_chars_from_profile(&p, &c, why, sizeof why), 0) << why;
    EXPECT_DOUBLE_EQ(c.data_sharing, 0.4);
    EXPECT_STREQ(c.src[2], "place cluster --source soft");
    profile_free(&p);
}

TEST(PlaceMap, CharacteristicsFilesAreReadStrictly)
{
    pl_map_chars c;
    char why[256] = "";
    EXPECT_EQ(pl_map_chars_parse("{\"name\":\"a\",\"bus_usage\":1,\"llc_footprint\":2}", "f", &c, why, sizeof why),
              0) << why;
    EXPECT_TRUE(std::isnan(c.data_sharing));
    EXPECT_EQ(c.threads, 0u);
    const char *bad[] = {
        "", "[]", "{\"name\":\"a\",\"bus_usage\":1}", "{\"name\":\"a\",\"bus_usage\":\"x\",\"llc_footprint\":2}",
        "{\"name\":\"a\",\"bus_usage\":1,\"llc_footprint\":2,\"data_sharing\":1.5}",
        "{\"name\":\"a\",\"bus_usage\":1,\"llc_footprint\":2,\"color\":1}",
        "{\"name\":\"a\",\"bus_usage\":1,\"llc_footprint\":2,\"threads\":0}",
        "{\"name\":\"a\",\"name\":\"b\",\"bus_usage\":1,\"llc_footprint\":2}",
    };
    for (const char *b : bad) {
        EXPECT_EQ(pl_map_chars_parse(b, "f", &c, why, sizeof why), -EINVAL) << b;
        EXPECT_EQ(std::string(why).find('\n'), std::string::npos) << why;
    }
}

using ib_test::sh;

TEST(PlaceMap, CommandPrintsCpusetsNotationAndWhy)
{
    int rc;
    std::string fx = std::string(IBENCH_FIXTURES) + "/tang-isca11/";
    std::string base = std::string(IBENCH_BIN) + " place map --topology 'synthetic:pack:2 l2:2 core:2 pu:1' "
                       "--concerns package,l2 --target " + fx + "contentAnalyzer.json --corunner " + fx;
    std::string o = sh(base + "stitcher.json", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("contentAnalyzer  cpus 0-3\nstitcher         cpus 4-7\nnotation         {XXXX****}"),
              std::string::npos) << o;
    EXPECT_NE(o.find("adjusted: LLC spread with the bus shared is not possible for 4 threads here"),
              std::string::npos) << o;
    o = sh(base + "protobuf.json --json", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("\"notation\": \"{X*X*X*X*}\""), std::string::npos) << o;
    EXPECT_NE(o.find("\"cpus\": \"0,2,4,6\""), std::string::npos) << o;
    // threads from the argument: 2 + 2
    o = sh(base + "protobuf.json:2", &rc);
    EXPECT_EQ(rc, 0) << o;
    const char *bad[] = {"", " --corunner /nonexistent.json", " --corunner " IBENCH_FIXTURES "/tang-isca11/bigtable.json:0",
                         " --corunner " IBENCH_FIXTURES "/tang-isca11/bigtable.json:5", " --sharing-high 2 --corunner x"};
    for (const char *b : bad) {
        o = sh(std::string(IBENCH_BIN) + " place map --topology 'synthetic:pack:2 l2:2 core:2 pu:1' --target " + fx +
                   "webSearch.json" + b,
               &rc);
        EXPECT_EQ(rc, 2) << b << ": " << o;
        EXPECT_EQ(o.rfind("ibench place map: ", 0), 0u) << o;
        EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
    }
}

// A profile from another machine is applied with a warning naming both machines (this machine: the
// fingerprints; a synthetic topology: the CPU counts), one from this machine without; a missing thread count says
// what is assumed; an unhonoured spread is "adjusted" with its reason in the table and the JSON.
TEST(PlaceMap, CommandWarnsOnForeignProfilesAndAssumedThreads)
{
    int rc;
    std::string topo = sh(std::string(IBENCH_BIN) + " topo --json 2>/dev/null", &rc);
    ASSERT_EQ(rc, 0) << topo;
    size_t at = topo.find("\"fingerprint\": \"");
    ASSERT_NE(at, std::string::npos) << topo;
    std::string fp = topo.substr(at + 16, topo.find('"', at + 16) - at - 16);
    std::string prof = ib_test::file_text(IBENCH_FIXTURES "/../../docs/data/corun/memcached.json");
    size_t f = prof.find("\"fingerprint\": \"");
    ASSERT_NE(f, std::string::npos);
    size_t fe = prof.find('"', f + 16);
    std::string dir = ::testing::TempDir(), here = dir + "/map_here.json", away = dir + "/map_away.json";
    ASSERT_TRUE(ib_test::write_file(here, prof.substr(0, f + 16) + fp + prof.substr(fe)));
    ASSERT_TRUE(ib_test::write_file(away, prof.substr(0, f + 16) + "intel-06-00-2cpu-0000000000000000" +
                                              prof.substr(fe)));
    std::string fx = std::string(IBENCH_FIXTURES) + "/tang-isca11/";
    std::string o = sh(std::string(IBENCH_BIN) + " place map --target " + here + ":1 --corunner " + fx +
                           "protobuf.json:1 --json 2>&1", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("\"warnings\": []"), std::string::npos) << o;
    o = sh(std::string(IBENCH_BIN) + " place map --target " + away + ":1 --corunner " + fx + "protobuf.json:1", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("warning: memcached was profiled on machine intel-06-00-2cpu-0000000000000000, this one is " +
                     fp), std::string::npos) << o;
    // a synthetic topology: 2 CPUs measured, 12 PUs here; the profile has no thread count
    o = sh(std::string(IBENCH_BIN) + " place map --topology 'synthetic:pack:2 l3:1 core:6 pu:1' --target " + here +
               " --corunner " + fx + "protobuf.json:3 --json 2>/dev/null", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("memcached was profiled on a machine of 2 CPUs"), std::string::npos) << o;
    EXPECT_NE(o.find("memcached: no thread count"), std::string::npos) << o;
    EXPECT_NE(o.find("half the machine's PUs assumed, 6"), std::string::npos) << o;
    // line 20 for 3 threads on two packages: adjusted, with why, in both forms
    std::string spread = std::string(IBENCH_BIN) + " place map --topology 'synthetic:pack:2 l3:1 core:6 pu:1' "
                         "--target " + fx + "contentAnalyzer.json:3 --corunner " + fx + "protobuf.json:3";
    o = sh(spread, &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("decision: LLC spread, memory path spread (line 20)"), std::string::npos) << o;
    EXPECT_NE(o.find("adjusted: LLC spread (line 20) is not possible for 3 threads here"), std::string::npos) << o;
    o = sh(spread + " --json", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("\"adjusted\": true"), std::string::npos) << o;
    EXPECT_NE(o.find("every balanced placement uses 1 of the 2"), std::string::npos) << o;
    remove(here.c_str());
    remove(away.c_str());
}

} // namespace
