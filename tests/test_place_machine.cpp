// test_place_machine.cpp - placement/machine/pl_machine: a topology as the placement engine sees it (levels as PU
// partitions, merges, default concerns, crossing levels refused), NUMA distances from hwloc XML and from a JSON
// file, and `ibench place topo` through the binary.
#include <gtest/gtest.h>
#include <jansson.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "pl_machine.h"
#include "test_support.h"

namespace {

const char *const kClovertown = "synthetic:pack:2 l2:2 core:2 pu:1";
const char *const kIntel002 = "synthetic:pack:4 [numa] l3:1 l2:12 core:1 pu:2";

struct Machine {
    struct pl_machine m;
    struct pl_hier h;
    int rc = 0;
    char why[512] = "";
    Machine(const char *spec, const char *concerns, const char *dist = nullptr)
    {
        memset(&h, 0, sizeof h);
        rc = pl_machine_load(&m, spec, dist, why, sizeof why);
        if (rc == 0) {
            rc = pl_hier_from_topo(m.topo, concerns, &h, why, sizeof why);
            if (rc < 0)
                pl_machine_free(&m);
        }
    }
    ~Machine()
    {
        if (rc == 0) {
            pl_hier_free(&h);
            pl_machine_free(&m);
        }
    }
    std::vector<std::string> names() const
    {
        std::vector<std::string> v;
        for (unsigned k = 0; k < h.nlevels; k++)
            v.emplace_back(h.lv[k].name);
        return v;
    }
};

using Names = std::vector<std::string>;

TEST(PlaceMachine, ClovertownDefaultConcernsArePackageAndL2)
{
    Machine c(kClovertown, nullptr);
    ASSERT_EQ(c.rc, 0) << c.why;
    EXPECT_EQ(c.h.npus, 8u);
    // core (one PU each) and the one NUMA node share nothing between threads: left out
    EXPECT_EQ(c.names(), (Names{"package", "l2"}));
    EXPECT_EQ(c.h.lv[0].ninst, 2u);
    EXPECT_EQ(c.h.lv[1].ninst, 4u);
    // instances numbered by their first PU: l2 k holds PUs 2k, 2k+1
    for (unsigned p = 0; p < 8; p++) {
        EXPECT_EQ(c.h.lv[0].inst[p], p / 4) << p;
        EXPECT_EQ(c.h.lv[1].inst[p], p / 2) << p;
    }
}

TEST(PlaceMachine, EqualPartitionsMergeAndOrderIsCoarseToFine)
{
    // Intel E7-4830 v3 of Funston et al. ATC'18: package = NUMA node = L3; L2 = core (2 PUs by SMT)
    Machine c(kIntel002, nullptr);
    ASSERT_EQ(c.rc, 0) << c.why;
    EXPECT_EQ(c.names(), (Names{"package+numa+l3", "l2+core"}));
    EXPECT_EQ(pl_hier_find(&c.h, "numa"), 0);
    EXPECT_EQ(pl_hier_find(&c.h, "node"), 0);
    EXPECT_EQ(pl_hier_find(&c.h, "core"), 1);
    EXPECT_EQ(pl_hier_find(&c.h, "l1"), -1);
    // concerns given in any order come out coarse to fine
    Machine d(kIntel002, "l2,numa");
    ASSERT_EQ(d.rc, 0) << d.why;
    EXPECT_EQ(d.names(), (Names{"numa", "l2"}));
    EXPECT_EQ(d.h.lv[1].ninst, 48u);
    // named explicitly, a one-instance level stays (its score is always 1)
    Machine e("synthetic:pack:1 l3:1 l2:2 core:1 pu:1", "package,l2");
    ASSERT_EQ(e.rc, 0) << e.why;
    EXPECT_EQ(e.names(), (Names{"package", "l2"}));
}

TEST(PlaceMachine, BadConcernsAreRefusedWithOneLine)
{
    struct {
        const char *spec, *concerns, *word;
    } cases[] = {
        {kClovertown, "package,l9", "unknown concern 'l9'"},
        {kClovertown, "l3", "no l3 level"},
        {kClovertown, ",,", "names no level"},
        {kClovertown, "", nullptr}, // "" is the default
    };
    for (const auto &k : cases) {
        Machine c(k.spec, k.concerns);
        if (!k.word) {
            EXPECT_EQ(c.rc, 0) << c.why;
            continue;
        }
        EXPECT_EQ(c.rc, -EINVAL) << k.concerns;
        EXPECT_NE(strstr(c.why, k.word), nullptr) << c.why;
        EXPECT_EQ(strchr(c.why, '\n'), nullptr);
    }
}

// Two NUMA nodes with the same CPUs (DDR and HBM beside it, as on KNL): one instance for thread placement, named by
// the first node's OS index.  hwloc's tree cannot make CPU-side levels cross, so laminarity holds for topologies.
TEST(PlaceMachine, NodesWithTheSameCpusAreOneInstance)
{
    Machine c("synthetic:pack:2 [numa] [numa] core:2 pu:1", "numa");
    ASSERT_EQ(c.rc, 0) << c.why;
    ASSERT_EQ(c.h.nlevels, 1u);
    EXPECT_EQ(c.h.lv[0].ninst, 2u);
    EXPECT_EQ(c.h.lv[0].inst_os[0], 0u);
    EXPECT_EQ(c.h.lv[0].inst_os[1], 2u);
    EXPECT_EQ(c.h.lv[0].inst[3], 1u);
}

TEST(PlaceMachine, UniformFakeHasTheArities)
{
    struct pl_hier h;
    const char *names[] = {"package", "l3", "core"};
    unsigned ar[] = {2, 3, 4};
    char why[256];
    ASSERT_EQ(pl_hier_uniform(&h, names, ar, 3, 2, why, sizeof why), 0) << why;
    EXPECT_EQ(h.npus, 48u);
    EXPECT_EQ(h.lv[0].ninst, 2u);
    EXPECT_EQ(h.lv[1].ninst, 6u);
    EXPECT_EQ(h.lv[2].ninst, 24u);
    EXPECT_EQ(h.lv[1].inst[47], 5u);
    EXPECT_EQ(h.lv[2].inst_npus[23], 2u);
    pl_hier_free(&h);
    unsigned zero[] = {2, 0, 4};
    EXPECT_EQ(pl_hier_uniform(&h, names, zero, 3, 2, why, sizeof why), -EINVAL);
}

TEST(PlaceMachine, TopologySpecsAndTheirErrors)
{
    struct pl_machine m;
    char why[512];
    ASSERT_EQ(pl_machine_load(&m, "live", nullptr, why, sizeof why), 0) << why;
    EXPECT_STREQ(m.kind, "live");
    EXPECT_GE(m.nnodes, 1u);
    pl_machine_free(&m);
    EXPECT_EQ(pl_machine_load(&m, "synthetic:pack:2 bogus:3", nullptr, why, sizeof why), -EINVAL);
    EXPECT_NE(strstr(why, "synthetic"), nullptr) << why;
    EXPECT_EQ(pl_machine_load(&m, "synthetic:", nullptr, why, sizeof why), -EINVAL);
    EXPECT_EQ(pl_machine_load(&m, "/nonexistent/topo.xml", nullptr, why, sizeof why), -EINVAL);
    EXPECT_NE(strstr(why, "no such file"), nullptr) << why;
    ib_test::TempDir dir("place_bad_xml");
    std::string bad = dir.path() + "/bad.xml";
    std::ofstream(bad) << "<topology>not hwloc</topology>\n";
    EXPECT_EQ(pl_machine_load(&m, bad.c_str(), nullptr, why, sizeof why), -EINVAL);
    EXPECT_EQ(strchr(why, '\n'), nullptr);
}

TEST(PlaceMachine, DistancesFileParsing)
{
    double *d = nullptr;
    unsigned n = 0;
    char why[256];
    ASSERT_EQ(pl_distances_parse("[[10,20],[20,10]]", &d, &n, why, sizeof why), 0) << why;
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(d[1], 20);
    free(d);
    ASSERT_EQ(pl_distances_parse("{\"matrix\": [[10, 21.5], [21.5, 10]], \"source\": \"x\"}", &d, &n, why, sizeof why),
              0)
        << why;
    EXPECT_EQ(d[2], 21.5);
    free(d);
    struct {
        const char *text, *word;
    } bad[] = {
        {"[[10,20],[20]]", "row 1"},
        {"[[10,20],[20,10],[1,2]]", "row 0"},
        {"[[10,-1],[20,10]]", "[0][1]"},
        {"[[10,5],[20,10]]", "below the diagonal"},
        {"[]", "square matrix"},
        {"{\"distances\": 3}", "square matrix"},
        {"[[10,\"x\"],[20,10]]", "[0][1]"},
        {"nonsense", "not JSON"},
    };
    for (const auto &b : bad) {
        d = nullptr;
        EXPECT_EQ(pl_distances_parse(b.text, &d, &n, why, sizeof why), -EINVAL) << b.text;
        EXPECT_EQ(d, nullptr);
        EXPECT_NE(strstr(why, b.word), nullptr) << b.text << " -> " << why;
    }
}

// A synthetic machine with a latency matrix, exported as XML the way lstopo writes it: the distances come back
// from the XML, indexed by node; a --distances file replaces them and must match the node count.
TEST(PlaceMachine, DistancesFromXmlAndFromAFile)
{
    ib_test::TempDir dir("place_dist");
    std::string xml = dir.path() + "/four.xml";
    ASSERT_EQ(ib_test::write_ring_numa_xml(xml), "");
    struct pl_machine m;
    char why[512];
    ASSERT_EQ(pl_machine_load(&m, xml.c_str(), nullptr, why, sizeof why), 0) << why;
    EXPECT_STREQ(m.kind, "xml");
    ASSERT_EQ(m.nnodes, 4u);
    ASSERT_NE(m.dist, nullptr) << m.dist_source;
    EXPECT_NE(strstr(m.dist_source, "NUMALatency"), nullptr) << m.dist_source;
    EXPECT_EQ(m.dist[0 * 4 + 2], 30);
    EXPECT_EQ(m.dist[1 * 4 + 2], 20);
    EXPECT_EQ(m.dist[3 * 4 + 3], 10);
    pl_machine_free(&m);

    std::string file = dir.path() + "/d.json";
    std::ofstream(file) << "[[10,12,12,12],[12,10,12,12],[12,12,10,12],[12,12,12,10]]\n";
    ASSERT_EQ(pl_machine_load(&m, xml.c_str(), file.c_str(), why, sizeof why), 0) << why;
    EXPECT_EQ(m.dist[2], 12);
    EXPECT_NE(strstr(m.dist_source, "file"), nullptr);
    pl_machine_free(&m);
    std::ofstream(file) << "[[10,20],[20,10]]\n";
    EXPECT_EQ(pl_machine_load(&m, xml.c_str(), file.c_str(), why, sizeof why), -EINVAL);
    EXPECT_NE(strstr(why, "2 rows but the topology has 4"), nullptr) << why;
    // a synthetic topology has no matrix: said, not invented
    ASSERT_EQ(pl_machine_load(&m, kClovertown, nullptr, why, sizeof why), 0) << why;
    EXPECT_EQ(m.dist, nullptr);
    EXPECT_NE(strstr(m.dist_source, "none"), nullptr) << m.dist_source;
    pl_machine_free(&m);
}

// ---- `ibench place topo` through the binary --------------------------------------------------------------------

int run(const std::vector<std::string> &args, std::string *out, std::string *err)
{
    ib_test::Proc p;
    if (!p.start(args, {}))
        return -1;
    if (!p.finish(30))
        return -2;
    *out = p.out;
    *err = p.err;
    return p.exit_code();
}

TEST(PlaceTopoCli, TableAndJson)
{
    std::string out, err;
    ASSERT_EQ(run({"place", "topo", "--topology", kClovertown}, &out, &err), 0) << err;
    EXPECT_NE(out.find("concerns  package, l2"), std::string::npos) << out;
    EXPECT_NE(out.find("l2                 4          2"), std::string::npos) << out;
    ASSERT_EQ(run({"place", "topo", "--topology", kIntel002, "--json"}, &out, &err), 0) << err;
    json_error_t je;
    json_t *doc = json_loads(out.c_str(), 0, &je);
    ASSERT_NE(doc, nullptr) << je.text;
    EXPECT_EQ(json_integer_value(json_object_get(json_object_get(doc, "topology"), "pus")), 96);
    json_t *conc = json_object_get(doc, "concerns");
    ASSERT_EQ(json_array_size(conc), 2u);
    EXPECT_STREQ(json_string_value(json_array_get(conc, 0)), "package+numa+l3");
    EXPECT_TRUE(json_is_null(json_object_get(json_object_get(doc, "distances"), "matrix")));
    json_decref(doc);
    ASSERT_EQ(run({"place", "topo"}, &out, &err), 0) << err; // this machine
    EXPECT_NE(out.find("(live)"), std::string::npos) << out;
}

TEST(PlaceTopoCli, BadInputExitsTwoWithOneLine)
{
    const std::vector<std::vector<std::string>> cases = {
        {"place", "topo", "--topology", "synthetic:pack:x"},
        {"place", "topo", "--topology", "/nonexistent.xml"},
        {"place", "topo", "--concerns", "l7"},
        {"place", "topo", "--distances", "/nonexistent.json"},
        {"place", "topo", "--bogus"},
        {"place", "topo", "extra"},
        {"place", "nosuch"},
    };
    for (const auto &c : cases) {
        std::string out, err;
        EXPECT_EQ(run(c, &out, &err), 2) << c.back() << ": " << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_EQ(out, "") << c.back();
    }
}

}  // namespace
