// test_topo.cpp - common/topo: hwloc synthetic and XML topologies for the multi-socket logic, this machine for
// loading and binding.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "topo.h"

namespace {

constexpr uint64_t KiB = 1024ULL;
constexpr uint64_t MiB = 1024ULL * KiB;
constexpr uint64_t GiB = 1024ULL * MiB;

// 2 sockets, one L3 and one NUMA node (2 GiB) each, 4 cores per socket each with private L2/L1d/L1i, 2 PUs per
// core: PUs 0..7 on socket 0, 8..15 on socket 1; core k = PUs {2k, 2k+1}.
const char *const kTwoSocketSmt =
    "pack:2 [numa(memory=2GiB)] l3:1(size=32MiB) l2:4(size=1MiB) l1d:1(size=32KiB) l1i:1(size=32KiB) core:1 pu:2";
// Like the build machine: one socket, one L3, 2 cores with private L2/L1, no SMT.
const char *const kNoSmt = "pack:1 l3:1 l2:2 l1:1 core:1 pu:1";
// 2 sockets x 2 NUMA nodes (1 GiB each) x 4 single-PU cores.
const char *const kFourNodes = "pack:2 numa:2(memory=1GiB) core:4 pu:1";
// Three distinct distances inside a socket: 2 L3 per socket, 2 L2 (= cores) per L3, 2 PUs per core.
// Socket 0 = PUs 0..7: L3 {0..3} {4..7}; cores {0,1} {2,3} {4,5} {6,7}.
const char *const kDeep = "pack:2 l3:2 l2:2 core:1 pu:2";

struct Topo {
    struct topo *t = nullptr;
    int rc = 0;
    char why[256] = "";
    explicit Topo(const char *spec) { rc = topo_load(&t, spec, why, sizeof why); }
    ~Topo() { topo_destroy(t); }
    Topo(const Topo &) = delete;
    Topo &operator=(const Topo &) = delete;
};

std::vector<int> sharing(const struct topo *t, enum topo_scope s, int cpu)
{
    int *cpus = nullptr;
    unsigned n = 12345;
    int rc = topo_sharing(t, s, cpu, &cpus, &n);
    EXPECT_EQ(rc, 0) << topo_scope_name(s) << " cpu " << cpu;
    std::vector<int> v;
    if (rc == 0)
        v.assign(cpus, cpus + n);
    free(cpus);
    return v;
}

std::vector<int> siblings(const struct topo *t, int cpu)
{
    int *cpus = nullptr;
    unsigned n = 12345;
    EXPECT_EQ(topo_siblings(t, cpu, &cpus, &n), 0);
    std::vector<int> v(cpus, cpus + n);
    free(cpus);
    return v;
}

std::vector<int> near(const struct topo *t, enum topo_scope s, int target, unsigned want, bool *ts)
{
    std::vector<int> v(want, -7);
    *ts = !*ts;  // make sure topo_near writes it
    EXPECT_EQ(topo_near(t, s, target, want, v.data(), ts), 0) << topo_scope_name(s);
    return v;
}

std::vector<int> range(int lo, int hi)  // [lo, hi)
{
    std::vector<int> v;
    for (int i = lo; i < hi; i++)
        v.push_back(i);
    return v;
}

std::string temp_path(const char *suffix)
{
    char tmpl[] = "/tmp/ibench_topo_XXXXXX";
    int fd = mkstemp(tmpl);
    EXPECT_GE(fd, 0);
    if (fd >= 0)
        close(fd);
    unlink(tmpl);
    return std::string(tmpl) + suffix;
}

// Load a synthetic topology with hwloc directly, let `edit` change it, export it to an XML file.
template <typename F>
std::string export_xml(const char *synthetic, const char *suffix, F edit)
{
    std::string path = temp_path(suffix);
    hwloc_topology_t h;
    EXPECT_EQ(hwloc_topology_init(&h), 0);
    hwloc_topology_set_icache_types_filter(h, HWLOC_TYPE_FILTER_KEEP_ALL);
    EXPECT_EQ(hwloc_topology_set_synthetic(h, synthetic), 0);
    EXPECT_EQ(hwloc_topology_load(h), 0);
    edit(h);
    EXPECT_EQ(hwloc_topology_export_xml(h, path.c_str(), 0), 0);
    hwloc_topology_destroy(h);
    return path;
}

}  // namespace

TEST(Topo, ScopeNames)
{
    EXPECT_STREQ(topo_scope_name(TOPO_SCOPE_PU), "pu");
    EXPECT_STREQ(topo_scope_name(TOPO_SCOPE_CORE), "core");
    EXPECT_STREQ(topo_scope_name(TOPO_SCOPE_L2), "l2");
    EXPECT_STREQ(topo_scope_name(TOPO_SCOPE_LLC), "llc");
    EXPECT_STREQ(topo_scope_name(TOPO_SCOPE_NUMA), "numa");
    EXPECT_STREQ(topo_scope_name(TOPO_SCOPE_PACKAGE), "package");
    EXPECT_STREQ(topo_scope_name(TOPO_SCOPE_MACHINE), "machine");
}

TEST(Topo, TwoSocketSmtCounts)
{
    Topo x(kTwoSocketSmt);
    ASSERT_EQ(x.rc, 0) << x.why;
    EXPECT_FALSE(topo_is_this_machine(x.t));
    EXPECT_NE(topo_hwloc(x.t), nullptr);
    EXPECT_EQ(topo_npus(x.t), 16u);
    EXPECT_EQ(topo_ncores(x.t), 8u);
    EXPECT_EQ(topo_npackages(x.t), 2u);
    EXPECT_EQ(topo_nnuma(x.t), 2u);
    EXPECT_TRUE(topo_has_smt(x.t));
    EXPECT_EQ(topo_llc_level(x.t), 3);
    for (unsigned i = 0; i < 16; i++)
        EXPECT_EQ(topo_pu_os(x.t, i), (int)i);
    EXPECT_EQ(topo_pu_os(x.t, 16), -1);
    EXPECT_TRUE(topo_cpu_exists(x.t, 0));
    EXPECT_TRUE(topo_cpu_exists(x.t, 15));
    EXPECT_FALSE(topo_cpu_exists(x.t, 16));
    EXPECT_FALSE(topo_cpu_exists(x.t, -1));
    EXPECT_EQ(topo_node_memory(x.t, 0), 2 * GiB);
    EXPECT_EQ(topo_node_memory(x.t, 12), 2 * GiB);
    EXPECT_EQ(topo_node_memory(x.t, 99), 0u);
}

TEST(Topo, TwoSocketSmtCaches)
{
    Topo x(kTwoSocketSmt);
    ASSERT_EQ(x.rc, 0) << x.why;
    struct topo_cache c;

    ASSERT_EQ(topo_cache_info(x.t, 3, false, 0, &c), 0);
    EXPECT_EQ(c.level, 3);
    EXPECT_FALSE(c.instruction);
    EXPECT_EQ(c.size, 32 * MiB);
    EXPECT_EQ(c.ways, 0u);  // synthetic: unknown
    EXPECT_EQ(c.line, 64u);
    EXPECT_EQ(c.nshared, 8u);

    ASSERT_EQ(topo_cache_info(x.t, 2, false, 9, &c), 0);
    EXPECT_EQ(c.level, 2);
    EXPECT_EQ(c.size, 1 * MiB);
    EXPECT_EQ(c.nshared, 2u);

    ASSERT_EQ(topo_cache_info(x.t, 1, false, -1, &c), 0);  // first PU
    EXPECT_EQ(c.level, 1);
    EXPECT_FALSE(c.instruction);
    EXPECT_EQ(c.size, 32 * KiB);
    EXPECT_EQ(c.nshared, 2u);

    ASSERT_EQ(topo_cache_info(x.t, 1, true, 15, &c), 0);
    EXPECT_EQ(c.level, 1);
    EXPECT_TRUE(c.instruction);
    EXPECT_EQ(c.size, 32 * KiB);
    EXPECT_EQ(c.nshared, 2u);

    EXPECT_EQ(topo_cache_info(x.t, 4, false, 0, &c), -ENOENT);
    EXPECT_EQ(topo_cache_info(x.t, 2, true, 0, &c), -ENOENT);
    EXPECT_EQ(topo_cache_info(x.t, 9, false, 0, &c), -ENOENT);
    EXPECT_EQ(topo_cache_info(x.t, 3, false, 16, &c), -EINVAL);
    EXPECT_EQ(topo_cache_info(x.t, 0, false, 0, &c), -EINVAL);
}

TEST(Topo, TwoSocketSmtSharing)
{
    Topo x(kTwoSocketSmt);
    ASSERT_EQ(x.rc, 0) << x.why;
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_PU, 5), std::vector<int>({5}));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_CORE, 5), std::vector<int>({4, 5}));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_L2, 5), std::vector<int>({4, 5}));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 5), range(0, 8));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_NUMA, 5), range(0, 8));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_PACKAGE, 5), range(0, 8));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_MACHINE, 5), range(0, 16));

    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_CORE, 10), std::vector<int>({10, 11}));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 10), range(8, 16));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_NUMA, 15), range(8, 16));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_PACKAGE, 8), range(8, 16));

    EXPECT_EQ(siblings(x.t, 0), std::vector<int>({1}));
    EXPECT_EQ(siblings(x.t, 13), std::vector<int>({12}));

    int *cpus = (int *)0x1;
    unsigned n = 7;
    EXPECT_EQ(topo_sharing(x.t, TOPO_SCOPE_CORE, 16, &cpus, &n), -EINVAL);
    EXPECT_EQ(cpus, nullptr);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(topo_sharing(x.t, TOPO_SCOPE_CORE, -1, &cpus, &n), -EINVAL);
    EXPECT_EQ(topo_sharing(x.t, (enum topo_scope)42, 0, &cpus, &n), -EINVAL);
    EXPECT_EQ(topo_siblings(x.t, 99, &cpus, &n), -EINVAL);
}

TEST(Topo, TwoSocketSmtNear)
{
    Topo x(kTwoSocketSmt);
    ASSERT_EQ(x.rc, 0) << x.why;
    bool ts = true;

    EXPECT_EQ(near(x.t, TOPO_SCOPE_CORE, 0, 1, &ts), std::vector<int>({1}));
    EXPECT_FALSE(ts);
    EXPECT_EQ(near(x.t, TOPO_SCOPE_CORE, 7, 1, &ts), std::vector<int>({6}));
    // Wrap-around: only one candidate in the core.
    EXPECT_EQ(near(x.t, TOPO_SCOPE_CORE, 0, 3, &ts), std::vector<int>({1, 1, 1}));
    EXPECT_FALSE(ts);

    // Same LLC: the SMT sibling first, then the other cores of socket 0 by OS index; never socket 1.
    EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 0, 3, &ts), std::vector<int>({1, 2, 3}));
    EXPECT_FALSE(ts);
    EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 4, 7, &ts), std::vector<int>({5, 0, 1, 2, 3, 6, 7}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 0, 10, &ts), std::vector<int>({1, 2, 3, 4, 5, 6, 7, 1, 2, 3}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 9, 4, &ts), std::vector<int>({8, 10, 11, 12}));

    EXPECT_EQ(near(x.t, TOPO_SCOPE_PACKAGE, 11, 8, &ts), std::vector<int>({10, 8, 9, 12, 13, 14, 15, 10}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_NUMA, 11, 2, &ts), std::vector<int>({10, 8}));
    // Machine: the own socket before the other one.
    std::vector<int> m = near(x.t, TOPO_SCOPE_MACHINE, 0, 15, &ts);
    EXPECT_EQ(m, std::vector<int>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_MACHINE, 14, 9, &ts), std::vector<int>({15, 8, 9, 10, 11, 12, 13, 0, 1}));

    // PU scope: nothing but the target, time-shared.
    EXPECT_EQ(near(x.t, TOPO_SCOPE_PU, 3, 2, &ts), std::vector<int>({3, 3}));
    EXPECT_TRUE(ts);

    // time_shared may be NULL.
    int out[2];
    EXPECT_EQ(topo_near(x.t, TOPO_SCOPE_CORE, 2, 2, out, nullptr), 0);
    EXPECT_EQ(out[0], 3);
    EXPECT_EQ(out[1], 3);
}

TEST(Topo, NearOrdersByCommonAncestor)
{
    Topo x(kDeep);
    ASSERT_EQ(x.rc, 0) << x.why;
    EXPECT_EQ(topo_npus(x.t), 16u);
    EXPECT_EQ(topo_ncores(x.t), 8u);
    bool ts = true;
    // SMT sibling, then same L3, then same package.
    EXPECT_EQ(near(x.t, TOPO_SCOPE_PACKAGE, 0, 7, &ts), std::vector<int>({1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_PACKAGE, 6, 7, &ts), std::vector<int>({7, 4, 5, 0, 1, 2, 3}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_PACKAGE, 6, 9, &ts), std::vector<int>({7, 4, 5, 0, 1, 2, 3, 7, 4}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 6, 5, &ts), std::vector<int>({7, 4, 5, 7, 4}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_L2, 6, 2, &ts), std::vector<int>({7, 7}));
    EXPECT_FALSE(ts);
    EXPECT_EQ(near(x.t, TOPO_SCOPE_MACHINE, 9, 15, &ts),
              std::vector<int>({8, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 6), range(4, 8));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_L2, 6), std::vector<int>({6, 7}));
}

TEST(Topo, FourNumaNodes)
{
    Topo x(kFourNodes);
    ASSERT_EQ(x.rc, 0) << x.why;
    EXPECT_EQ(topo_npus(x.t), 16u);
    EXPECT_EQ(topo_npackages(x.t), 2u);
    EXPECT_EQ(topo_nnuma(x.t), 4u);
    EXPECT_FALSE(topo_has_smt(x.t));
    EXPECT_EQ(topo_llc_level(x.t), 0);
    for (int node = 0; node < 4; node++) {
        for (int cpu = 4 * node; cpu < 4 * node + 4; cpu++) {
            EXPECT_EQ(sharing(x.t, TOPO_SCOPE_NUMA, cpu), range(4 * node, 4 * node + 4)) << "cpu " << cpu;
            EXPECT_EQ(topo_node_memory(x.t, cpu), 1 * GiB);
        }
    }
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_PACKAGE, 5), range(0, 8));
    // No caches: LLC falls back to the package, L2 to the core; there is no cache to report.
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 5), range(0, 8));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_L2, 5), std::vector<int>({5}));
    struct topo_cache c;
    EXPECT_EQ(topo_cache_info(x.t, 1, false, 0, &c), -ENOENT);

    bool ts = true;
    EXPECT_EQ(near(x.t, TOPO_SCOPE_NUMA, 5, 4, &ts), std::vector<int>({4, 6, 7, 4}));
    EXPECT_FALSE(ts);
    // Within the package the own node comes first.
    EXPECT_EQ(near(x.t, TOPO_SCOPE_PACKAGE, 1, 7, &ts), std::vector<int>({0, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(near(x.t, TOPO_SCOPE_PACKAGE, 9, 3, &ts), std::vector<int>({8, 10, 11}));
}

TEST(Topo, NoSmtLikeThisBuildMachine)
{
    Topo x(kNoSmt);
    ASSERT_EQ(x.rc, 0) << x.why;
    EXPECT_EQ(topo_npus(x.t), 2u);
    EXPECT_EQ(topo_ncores(x.t), 2u);
    EXPECT_EQ(topo_npackages(x.t), 1u);
    EXPECT_EQ(topo_nnuma(x.t), 1u);
    EXPECT_FALSE(topo_has_smt(x.t));
    EXPECT_EQ(topo_llc_level(x.t), 3);
    EXPECT_EQ(siblings(x.t, 0), std::vector<int>());
    EXPECT_EQ(siblings(x.t, 1), std::vector<int>());

    bool ts = false;
    EXPECT_EQ(near(x.t, TOPO_SCOPE_CORE, 0, 1, &ts), std::vector<int>({0}));
    EXPECT_TRUE(ts);
    EXPECT_EQ(near(x.t, TOPO_SCOPE_CORE, 1, 3, &ts), std::vector<int>({1, 1, 1}));
    EXPECT_TRUE(ts);
    EXPECT_EQ(near(x.t, TOPO_SCOPE_L2, 0, 1, &ts), std::vector<int>({0}));
    EXPECT_TRUE(ts);
    EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 0, 1, &ts), std::vector<int>({1}));
    EXPECT_FALSE(ts);
    EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 1, 3, &ts), std::vector<int>({0, 0, 0}));
    EXPECT_FALSE(ts);
    EXPECT_EQ(near(x.t, TOPO_SCOPE_MACHINE, 0, 2, &ts), std::vector<int>({1, 1}));
    EXPECT_FALSE(ts);

    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_L2, 1), std::vector<int>({1}));
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 1), std::vector<int>({0, 1}));
    struct topo_cache c;
    ASSERT_EQ(topo_cache_info(x.t, 3, false, 1, &c), 0);
    EXPECT_EQ(c.nshared, 2u);
    ASSERT_EQ(topo_cache_info(x.t, 1, false, 1, &c), 0);  // "l1" = unified L1: a data cache
    EXPECT_EQ(c.nshared, 1u);
    EXPECT_EQ(topo_cache_info(x.t, 1, true, 1, &c), -ENOENT);
    // No NUMA level given: hwloc's single default node holds all the memory.
    EXPECT_EQ(topo_node_memory(x.t, 1), 1 * GiB);
}

TEST(Topo, FallbacksWithoutL2OrPackages)
{
    {
        Topo x("pack:1 l3:1 core:2 pu:2");  // no L2: L2 scope is the core
        ASSERT_EQ(x.rc, 0) << x.why;
        EXPECT_EQ(sharing(x.t, TOPO_SCOPE_L2, 2), std::vector<int>({2, 3}));
        EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 2), range(0, 4));
    }
    {
        Topo x("pack:1 l2:4 core:1 pu:1");  // L2 is the last level
        ASSERT_EQ(x.rc, 0) << x.why;
        EXPECT_EQ(topo_llc_level(x.t), 2);
        EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 2), std::vector<int>({2}));
        bool ts = false;
        EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 2, 1, &ts), std::vector<int>({2}));
        EXPECT_TRUE(ts);
    }
    {
        Topo x("core:3 pu:1");  // no package: package and LLC are the machine
        ASSERT_EQ(x.rc, 0) << x.why;
        EXPECT_EQ(topo_npackages(x.t), 1u);
        EXPECT_EQ(topo_ncores(x.t), 3u);
        EXPECT_EQ(sharing(x.t, TOPO_SCOPE_PACKAGE, 1), range(0, 3));
        EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 1), range(0, 3));
    }
}

TEST(Topo, XmlRoundTrip)
{
    std::string path = export_xml(kTwoSocketSmt, ".xml", [](hwloc_topology_t) {});
    Topo x(path.c_str());
    ASSERT_EQ(x.rc, 0) << x.why;
    EXPECT_FALSE(topo_is_this_machine(x.t));
    EXPECT_EQ(topo_npus(x.t), 16u);
    EXPECT_EQ(topo_ncores(x.t), 8u);
    EXPECT_EQ(topo_npackages(x.t), 2u);
    EXPECT_EQ(topo_nnuma(x.t), 2u);
    EXPECT_TRUE(topo_has_smt(x.t));
    EXPECT_EQ(topo_llc_level(x.t), 3);
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_LLC, 9), range(8, 16));
    EXPECT_EQ(topo_node_memory(x.t, 9), 2 * GiB);
    struct topo_cache c;
    ASSERT_EQ(topo_cache_info(x.t, 3, false, 9, &c), 0);
    EXPECT_EQ(c.size, 32 * MiB);
    EXPECT_EQ(c.nshared, 8u);
    ASSERT_EQ(topo_cache_info(x.t, 1, true, 9, &c), 0);
    EXPECT_EQ(c.size, 32 * KiB);
    bool ts = true;
    EXPECT_EQ(near(x.t, TOPO_SCOPE_LLC, 0, 3, &ts), std::vector<int>({1, 2, 3}));
    unlink(path.c_str());
}

TEST(Topo, XmlByAbsolutePathWithoutSuffix)
{
    std::string path = export_xml(kNoSmt, ".topo", [](hwloc_topology_t) {});
    Topo x(path.c_str());
    ASSERT_EQ(x.rc, 0) << x.why;
    EXPECT_EQ(topo_npus(x.t), 2u);
    EXPECT_EQ(topo_llc_level(x.t), 3);
    unlink(path.c_str());
}

TEST(Topo, CacheWaysAndLineMapping)
{
    // Give the caches attributes a synthetic description cannot express, then read them back from XML.
    std::string path = export_xml(kTwoSocketSmt, ".xml", [](hwloc_topology_t h) {
        for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_L3CACHE, o));) {
            o->attr->cache.associativity = 16;
            o->attr->cache.linesize = 128;
        }
        for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_L2CACHE, o));)
            o->attr->cache.associativity = -1;  // fully associative
        for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_L1CACHE, o));)
            o->attr->cache.linesize = 0;  // unknown
    });
    Topo x(path.c_str());
    ASSERT_EQ(x.rc, 0) << x.why;
    struct topo_cache c;
    ASSERT_EQ(topo_cache_info(x.t, 3, false, 0, &c), 0);
    EXPECT_EQ(c.ways, 16u);
    EXPECT_EQ(c.line, 128u);
    ASSERT_EQ(topo_cache_info(x.t, 2, false, 0, &c), 0);
    EXPECT_EQ(c.ways, 0u);
    EXPECT_EQ(c.line, 64u);
    ASSERT_EQ(topo_cache_info(x.t, 1, false, 0, &c), 0);
    EXPECT_EQ(c.ways, 0u);
    EXPECT_EQ(c.line, 64u);
    unlink(path.c_str());
}

TEST(Topo, LoadErrors)
{
    {
        Topo x("pack:2 bogus:3");
        EXPECT_EQ(x.rc, -EINVAL);
        EXPECT_EQ(x.t, nullptr);
        EXPECT_NE(strstr(x.why, "pack:2 bogus:3"), nullptr) << x.why;
    }
    {
        Topo x("");
        EXPECT_EQ(x.rc, -EINVAL);
        EXPECT_EQ(x.t, nullptr);
    }
    {
        Topo x("/nonexistent/ibench/topo.xml");
        EXPECT_EQ(x.rc, -ENOENT);
        EXPECT_EQ(x.t, nullptr);
        EXPECT_NE(strstr(x.why, "/nonexistent/ibench/topo.xml"), nullptr) << x.why;
    }
    {
        Topo x("missing-relative.xml");
        EXPECT_LT(x.rc, 0);
        EXPECT_EQ(x.t, nullptr);
        EXPECT_NE(strstr(x.why, "missing-relative.xml"), nullptr) << x.why;
    }
    {
        std::string path = temp_path(".xml");
        FILE *f = fopen(path.c_str(), "w");
        ASSERT_NE(f, nullptr);
        fputs("<?xml version=\"1.0\"?>\n<not-a-topology/>\n", f);
        fclose(f);
        Topo x(path.c_str());
        EXPECT_LT(x.rc, 0);
        EXPECT_EQ(x.t, nullptr);
        EXPECT_NE(x.why[0], '\0');
        unlink(path.c_str());
    }
    EXPECT_EQ(topo_load(nullptr, kNoSmt, nullptr, 0), -EINVAL);
    struct topo *t = (struct topo *)0x1;
    EXPECT_EQ(topo_load(&t, "pack:x", nullptr, 0), -EINVAL);  // why may be NULL
    EXPECT_EQ(t, nullptr);
    topo_destroy(nullptr);
}

TEST(Topo, QueryErrors)
{
    Topo x(kTwoSocketSmt);
    ASSERT_EQ(x.rc, 0) << x.why;
    int out[4] = {-7, -7, -7, -7};
    bool ts = true;
    EXPECT_EQ(topo_near(x.t, TOPO_SCOPE_LLC, 0, 0, out, &ts), -EINVAL);  // want == 0
    EXPECT_EQ(topo_near(x.t, TOPO_SCOPE_LLC, 16, 1, out, &ts), -EINVAL);
    EXPECT_EQ(topo_near(x.t, TOPO_SCOPE_LLC, -1, 1, out, &ts), -EINVAL);
    EXPECT_EQ(topo_near(x.t, (enum topo_scope)42, 0, 1, out, &ts), -EINVAL);
    EXPECT_EQ(topo_near(x.t, TOPO_SCOPE_LLC, 0, 1, nullptr, &ts), -EINVAL);
    EXPECT_EQ(out[0], -7);
    // Binding is only for this machine's topology.
    EXPECT_EQ(topo_bind_thread(x.t, 0), -ENOTSUP);
    EXPECT_EQ(topo_bind_thread(x.t, 16), -EINVAL);
}

TEST(Topo, ThisMachine)
{
    Topo x(nullptr);
    ASSERT_EQ(x.rc, 0) << x.why;
    EXPECT_TRUE(topo_is_this_machine(x.t));
    unsigned npus = topo_npus(x.t);
    ASSERT_GE(npus, 1u);
    EXPECT_GE(topo_ncores(x.t), 1u);
    EXPECT_LE(topo_ncores(x.t), npus);
    EXPECT_GE(topo_npackages(x.t), 1u);
    EXPECT_GE(topo_nnuma(x.t), 1u);
    int first = topo_pu_os(x.t, 0);
    ASSERT_GE(first, 0);
    EXPECT_TRUE(topo_cpu_exists(x.t, first));
    EXPECT_EQ(topo_pu_os(x.t, npus), -1);
    EXPECT_GT(topo_node_memory(x.t, first), 0u);
    EXPECT_EQ(sharing(x.t, TOPO_SCOPE_MACHINE, first).size(), (size_t)npus);

    // Same-core placement: the SMT sibling, or the target itself, time-shared, without SMT.
    int out[1] = {-7};
    bool ts = false;
    ASSERT_EQ(topo_near(x.t, TOPO_SCOPE_CORE, first, 1, out, &ts), 0);
    if (topo_has_smt(x.t)) {
        EXPECT_FALSE(ts);
        EXPECT_NE(out[0], first);
    } else {
        EXPECT_TRUE(ts);
        EXPECT_EQ(out[0], first);
    }

    // Bind a scratch thread (not the test's own) and check it runs there.
    int rc = -1, where = -1;
    std::thread th([&] {
        rc = topo_bind_thread(x.t, first);
        where = sched_getcpu();
    });
    th.join();
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(where, first);
    EXPECT_EQ(topo_bind_thread(x.t, -1), -EINVAL);
}
