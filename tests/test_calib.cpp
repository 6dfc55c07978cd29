// test_calib.cpp - common/calib.c: cache knees on a recorded latency sweep of the build machine, the JSON cache
// round trip (in a private IBENCH_CACHE_DIR), bandwidth working-set rules and the cache look-ups, on synthetic values
// and topologies; the cache's keys, locking and merging (two processes), range checks and directory rules.  One test
// runs a real latency sweep (~2 s) to see what it keeps.
#include <gtest/gtest.h>
#include <jansson.h>

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "calib.h"
#include "cpuinfo.h"
#include "machine.h"
#include "memlimit.h"
#include "peak.h"
#include "pressure.h"
#include "topo.h"
#include "test_support.h"

namespace {

constexpr uint64_t KiB = 1024ULL;
constexpr uint64_t MiB = 1024ULL * KiB;
constexpr uint64_t GiB = 1024ULL * MiB;

// The build machine (AMD EPYC KVM guest, hwloc claims L1d 32 KiB, L2 1 MiB, L3 32 MiB): a pointer-chase sweep,
// (KiB, ns per load).  It has the real thing's warts: a lone spike at 2453 KiB and a noisy point at 724 KiB, and
// an effective LLC near 3.5 MiB, far below the claimed 32 MiB.
const double kSweep[][2] = {
    {16, 1.11},     {19, 1.10},     {23, 1.12},     {27, 1.11},     {32, 3.02},     {38, 3.88},     {45, 3.87},
    {54, 3.99},     {64, 4.16},     {76, 4.13},     {91, 4.09},     {108, 4.18},    {128, 4.16},    {152, 4.32},
    {181, 4.29},    {215, 4.28},    {256, 4.56},    {304, 4.29},    {362, 4.58},    {431, 5.94},    {512, 6.29},
    {609, 6.73},    {724, 10.02},   {861, 7.56},    {1024, 9.19},   {1218, 9.9},    {1448, 11.8},   {1722, 12.9},
    {2048, 14.1},   {2435, 16.4},   {2453, 80.0},   {2653, 21.3},   {2869, 17.8},   {2896, 16.9},   {3102, 20.4},
    {3355, 21.3},   {3444, 16.8},   {3629, 103.1},  {3924, 121.8},  {4096, 139.1},  {4244, 147.0},  {4590, 136.0},
    {4871, 137.2},  {5793, 140.3},  {6889, 138.3},  {8192, 142.5},  {9742, 144.5},  {11585, 147.5}, {13777, 153.9},
    {16384, 153.9}, {19484, 158.9}, {23170, 159.8}, {27554, 165.1}, {32768, 164.9}, {38968, 167.8}, {46341, 168.8},
    {55109, 168.4}, {65536, 172.0}, {77936, 170.8}, {92682, 171.2}, {110218, 173.2}, {131072, 180.4},
};

std::vector<calib_point> recorded()
{
    std::vector<calib_point> v;
    for (const auto &p : kSweep)
        v.push_back({(uint64_t)(p[0] * 1024), p[1]});
    return v;
}

// Insert a point keeping the sweep sorted by size.
void insert_point(std::vector<calib_point> &v, uint64_t bytes, double ns)
{
    auto it = v.begin();
    while (it != v.end() && it->bytes < bytes)
        ++it;
    v.insert(it, {bytes, ns});
}

double mib(uint64_t b) { return (double)b / (double)MiB; }
double kib(uint64_t b) { return (double)b / (double)KiB; }

// A private cache directory in IBENCH_CACHE_DIR for the lifetime of the object.
struct CacheDir {
    ib_test::TempDir dir{"calib"};
    const std::string &path = dir.path();
    std::string old;
    bool had_old = false;
    CacheDir()
    {
        const char *o = getenv("IBENCH_CACHE_DIR");
        if (o) {
            had_old = true;
            old = o;
        }
        setenv("IBENCH_CACHE_DIR", path.c_str(), 1);
    }
    ~CacheDir()
    {
        if (had_old)
            setenv("IBENCH_CACHE_DIR", old.c_str(), 1);
        else
            unsetenv("IBENCH_CACHE_DIR");
    }
};

struct Topo {
    struct topo *t = nullptr;
    explicit Topo(const char *spec)
    {
        char why[256] = "";
        EXPECT_EQ(topo_load(&t, spec, why, sizeof why), 0) << why;
    }
    ~Topo()
    {
        if (t)
            topo_destroy(t);
    }
};

}  // namespace

// ---- knees on the recorded sweep -------------------------------------------------------------------------------

TEST(CalibKnee, RecordedSweepLlc)
{
    auto v = recorded();
    uint64_t knee = 0;
    double lo = 0, hi = 0;
    ASSERT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 3 * MiB, 64 * MiB, &knee, &lo, &hi), 0);
    EXPECT_GT(mib(knee), 3.3);
    EXPECT_LT(mib(knee), 3.7);
    EXPECT_EQ(knee % 64, 0u);
    // plateaus: median of [1.5, 3] MiB (7 points, the 80 ns spike among them) and of [64, 128] MiB
    EXPECT_NEAR(lo, 16.9, 1e-9);
    EXPECT_NEAR(hi, 172.0, 1e-9);
}

TEST(CalibKnee, RecordedSweepL2)
{
    auto v = recorded();
    uint64_t knee = 0;
    double lo = 0, hi = 0;
    ASSERT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 512 * KiB, 2 * MiB, &knee, &lo, &hi), 0);
    EXPECT_GT(mib(knee), 0.8);
    EXPECT_LT(mib(knee), 1.4);
    EXPECT_NEAR(lo, 4.58, 1e-9);                 // median of [256, 512] KiB
    EXPECT_NEAR(hi, (20.4 + 21.3) / 2, 1e-9);    // median of [2, 4] MiB: 12 points
    // The 10.02 ns point at 724 KiB is followed by a lower one: the knee is not there.
    EXPECT_GT(kib(knee), 1024.0);
}

TEST(CalibKnee, RecordedSweepL1)
{
    auto v = recorded();
    uint64_t knee = 0;
    double lo = 0, hi = 0;
    ASSERT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 16 * KiB, 64 * KiB, &knee, &lo, &hi), 0);
    EXPECT_GT(kib(knee), 28.0);
    EXPECT_LT(kib(knee), 40.0);
    EXPECT_NEAR(lo, 1.11, 1e-9);
    EXPECT_NEAR(hi, 4.16, 1e-9);
}

// lo_ns/hi_ns are optional.
TEST(CalibKnee, OptionalPlateauOutputs)
{
    auto v = recorded();
    uint64_t a = 0, b = 0;
    ASSERT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 3 * MiB, 64 * MiB, &a, nullptr, nullptr), 0);
    double lo, hi;
    ASSERT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 3 * MiB, 64 * MiB, &b, &lo, &hi), 0);
    EXPECT_EQ(a, b);
}

TEST(CalibKnee, LoneSpikeInsidePlateauDoesNotCount)
{
    auto base = recorded();
    uint64_t k0 = 0, k1 = 0;
    ASSERT_EQ(calib_find_knee(base.data(), (unsigned)base.size(), 3 * MiB, 64 * MiB, &k0, nullptr, nullptr), 0);

    // A 150 ns spike at 3200 KiB, inside the LLC plateau above lo_bytes: the next point is back at 21 ns.
    auto v = base;
    insert_point(v, 3200 * KiB, 150.0);
    ASSERT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 3 * MiB, 64 * MiB, &k1, nullptr, nullptr), 0);
    EXPECT_EQ(k1, k0);

    // A spike inside the L1 plateau (between 19 and 23 KiB) leaves the L1 knee alone too.
    auto w = base;
    uint64_t l0 = 0, l1 = 0;
    ASSERT_EQ(calib_find_knee(w.data(), (unsigned)w.size(), 16 * KiB, 64 * KiB, &l0, nullptr, nullptr), 0);
    insert_point(w, 21 * KiB, 9.0);
    ASSERT_EQ(calib_find_knee(w.data(), (unsigned)w.size(), 16 * KiB, 64 * KiB, &l1, nullptr, nullptr), 0);
    EXPECT_EQ(l1, l0);

    // Two high points in a row are a level change, not a spike: the knee moves down to them.
    auto x = base;
    insert_point(x, 3200 * KiB, 150.0);
    insert_point(x, 3210 * KiB, 150.0);
    uint64_t k2 = 0;
    ASSERT_EQ(calib_find_knee(x.data(), (unsigned)x.size(), 3 * MiB, 64 * MiB, &k2, nullptr, nullptr), 0);
    EXPECT_LT(k2, k0);
    EXPECT_GT(kib(k2), 3102.0);
    EXPECT_LE(kib(k2), 3200.0);
}

// A clean step: 1 ns up to 32 KiB, 4 ns from 64 KiB.  The threshold is sqrt(1*4) = 2 ns, halfway in log-latency
// between the 32 KiB and 64 KiB points, so the knee is halfway in log-size: 32 KiB * sqrt(2), rounded down to 64 B.
TEST(CalibKnee, InterpolatesInLogSize)
{
    std::vector<calib_point> v = {{8 * KiB, 1.0},  {16 * KiB, 1.0},  {32 * KiB, 1.0},
                                  {64 * KiB, 4.0}, {128 * KiB, 4.0}, {256 * KiB, 4.0}};
    uint64_t knee = 0;
    double lo = 0, hi = 0;
    ASSERT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 32 * KiB, 64 * KiB, &knee, &lo, &hi), 0);
    EXPECT_EQ(knee, 46336u);  // 46341 & ~63
    EXPECT_EQ(lo, 1.0);
    EXPECT_EQ(hi, 4.0);
}

TEST(CalibKnee, FlatCurveHasNoKnee)
{
    std::vector<calib_point> v;
    for (uint64_t b = 16 * KiB; b <= 128 * MiB; b *= 2)
        v.push_back({b, 5.0 + (double)(v.size() % 3) * 0.1});  // within noise of flat
    uint64_t knee = 12345;
    EXPECT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 3 * MiB, 64 * MiB, &knee, nullptr, nullptr), -ENOENT);
    EXPECT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 16 * KiB, 64 * KiB, &knee, nullptr, nullptr), -ENOENT);
    EXPECT_EQ(knee, 12345u) << "untouched on failure";

    // A rise of less than 15 % is not a cache boundary either.
    std::vector<calib_point> w = {{1 * MiB, 10.0}, {2 * MiB, 10.0}, {4 * MiB, 11.0}, {8 * MiB, 11.0}};
    EXPECT_EQ(calib_find_knee(w.data(), 4, 2 * MiB, 4 * MiB, &knee, nullptr, nullptr), -ENOENT);
    // No points in the low window at all.
    auto r = recorded();
    EXPECT_EQ(calib_find_knee(r.data(), (unsigned)r.size(), 4 * KiB, 64 * KiB, &knee, nullptr, nullptr), -ENOENT);
}

TEST(CalibKnee, BadArguments)
{
    auto v = recorded();
    uint64_t knee;
    EXPECT_EQ(calib_find_knee(nullptr, 10, 1 * MiB, 2 * MiB, &knee, nullptr, nullptr), -EINVAL);
    EXPECT_EQ(calib_find_knee(v.data(), 2, 1 * MiB, 2 * MiB, &knee, nullptr, nullptr), -EINVAL);
    EXPECT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 0, 2 * MiB, &knee, nullptr, nullptr), -EINVAL);
    EXPECT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 2 * MiB, 2 * MiB, &knee, nullptr, nullptr), -EINVAL);
    EXPECT_EQ(calib_find_knee(v.data(), (unsigned)v.size(), 4 * MiB, 2 * MiB, &knee, nullptr, nullptr), -EINVAL);
}

TEST(Calib, EffectivePrefersMeasured)
{
    struct calib c;
    memset(&c, 0, sizeof c);
    c.claimed[CALIB_LLC] = 32 * MiB;
    EXPECT_EQ(calib_effective(&c, CALIB_LLC), 32 * MiB);
    c.measured[CALIB_LLC] = 3 * MiB + 512 * KiB;
    EXPECT_EQ(calib_effective(&c, CALIB_LLC), 3 * MiB + 512 * KiB);
    EXPECT_EQ(calib_effective(&c, CALIB_L2), 0u);
    EXPECT_EQ(calib_effective(&c, CALIB_NLEVELS), 0u);
    EXPECT_STREQ(calib_level_name(CALIB_L1), "l1d");
    EXPECT_STREQ(calib_level_name(CALIB_L2), "l2");
    EXPECT_STREQ(calib_level_name(CALIB_LLC), "llc");
}

// ---- the cache file ----------------------------------------------------------------------------------------------

namespace {

void fill(struct calib &c)
{
    c.have_caches = 1;
    c.sweep_cpu = 1;
    c.caches_when = 1700000000;
    c.claimed[CALIB_L1] = 32 * KiB;
    c.claimed[CALIB_L2] = 1 * MiB;
    c.claimed[CALIB_LLC] = 32 * MiB;
    c.measured[CALIB_L1] = 30 * KiB + 64;
    c.measured[CALIB_L2] = 1180 * KiB;
    c.measured[CALIB_LLC] = 3562 * KiB;
    c.plateau_ns[CALIB_L1] = 1.11;
    c.plateau_ns[CALIB_L2] = 4.58;
    c.plateau_ns[CALIB_LLC] = 16.9;
    c.plateau_ns[CALIB_NLEVELS] = 172.0;
    auto v = recorded();
    c.nsweep = (unsigned)v.size();
    for (unsigned i = 0; i < c.nsweep; i++)
        c.sweep[i] = v[i];
    c.nbw = 3;
    const char *kinds[] = {"l2", "llc", "dram"};
    const char *cpus[] = {"1", "0-1", "0"};
    for (unsigned i = 0; i < 3; i++) {
        snprintf(c.bw[i].kind, sizeof c.bw[i].kind, "%s", kinds[i]);
        snprintf(c.bw[i].cpus, sizeof c.bw[i].cpus, "%s", cpus[i]);
        c.bw[i].ws_bytes = (i + 1) * 4096 * 100;
        c.bw[i].bps = 1.0e11 / (i + 1) + 0.123456789;
        c.bw[i].spread = 0.01 * (i + 1);
        c.bw[i].when = 1700000000 + i;
    }
    c.dirty = 1;
}

json_t *load(const std::string &path)
{
    json_error_t e;
    json_t *doc = json_load_file(path.c_str(), 0, &e);
    EXPECT_NE(doc, nullptr) << path << ": " << e.text;
    return doc;
}

}  // namespace

TEST(CalibCache, SaveOpenRoundTrip)
{
    CacheDir dir;
    ASSERT_FALSE(dir.path.empty());
    char why[256] = "";
    struct calib c;
    ASSERT_EQ(calib_open(&c, "test-fp-1", why, sizeof why), 0) << why;
    EXPECT_EQ(std::string(c.path), dir.path + "/calib-test-fp-1.json");
    EXPECT_STREQ(c.fingerprint, "test-fp-1");
    EXPECT_EQ(c.have_caches, 0) << "no file yet: empty";
    EXPECT_EQ(c.nbw, 0u);
    fill(c);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;

    // The file is valid JSON with the format and fingerprint at the top.
    json_t *doc = load(c.path);
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(json_integer_value(json_object_get(doc, "format")), CALIB_FORMAT);
    EXPECT_STREQ(json_string_value(json_object_get(doc, "fingerprint")), "test-fp-1");
    EXPECT_EQ(json_array_size(json_object_get(json_object_get(doc, "caches"), "sweep")), c.nsweep);
    EXPECT_EQ(json_array_size(json_object_get(doc, "bandwidth")), 3u);
    json_decref(doc);

    struct calib d;
    ASSERT_EQ(calib_open(&d, "test-fp-1", why, sizeof why), 0) << why;
    EXPECT_STREQ(d.fingerprint, "test-fp-1");
    EXPECT_EQ(d.have_caches, 1);
    EXPECT_EQ(d.sweep_cpu, 1);
    EXPECT_EQ(d.caches_when, 1700000000);
    EXPECT_EQ(d.dirty, 0);
    for (int l = 0; l < CALIB_NLEVELS; l++) {
        EXPECT_EQ(d.claimed[l], c.claimed[l]) << l;
        EXPECT_EQ(d.measured[l], c.measured[l]) << l;
    }
    for (int l = 0; l <= CALIB_NLEVELS; l++)
        EXPECT_DOUBLE_EQ(d.plateau_ns[l], c.plateau_ns[l]) << l;
    ASSERT_EQ(d.nsweep, c.nsweep);
    for (unsigned i = 0; i < d.nsweep; i++) {
        EXPECT_EQ(d.sweep[i].bytes, c.sweep[i].bytes) << i;
        EXPECT_DOUBLE_EQ(d.sweep[i].ns, c.sweep[i].ns) << i;
    }
    ASSERT_EQ(d.nbw, 3u);
    for (unsigned i = 0; i < 3; i++) {
        EXPECT_STREQ(d.bw[i].kind, c.bw[i].kind);
        EXPECT_STREQ(d.bw[i].cpus, c.bw[i].cpus);
        EXPECT_EQ(d.bw[i].ws_bytes, c.bw[i].ws_bytes);
        EXPECT_DOUBLE_EQ(d.bw[i].bps, c.bw[i].bps);
        EXPECT_DOUBLE_EQ(d.bw[i].spread, c.bw[i].spread);
        EXPECT_EQ(d.bw[i].when, c.bw[i].when);
    }
    // The knee found on the reloaded sweep is the one found on the original.
    uint64_t k1 = 0, k2 = 0;
    ASSERT_EQ(calib_find_knee(c.sweep, c.nsweep, 3 * MiB, 64 * MiB, &k1, nullptr, nullptr), 0);
    ASSERT_EQ(calib_find_knee(d.sweep, d.nsweep, 3 * MiB, 64 * MiB, &k2, nullptr, nullptr), 0);
    EXPECT_EQ(k1, k2);
}

TEST(CalibCache, SavingCreatesMissingDirectories)
{
    CacheDir dir;
    std::string deep = dir.path + "/a/b/c";
    setenv("IBENCH_CACHE_DIR", deep.c_str(), 1);
    char why[256] = "";
    struct calib c;
    ASSERT_EQ(calib_open(&c, "fp-deep", why, sizeof why), 0) << why;
    fill(c);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;
    EXPECT_EQ(access((deep + "/calib-fp-deep.json").c_str(), R_OK), 0);
    struct calib d;
    ASSERT_EQ(calib_open(&d, "fp-deep", why, sizeof why), 0) << why;
    EXPECT_EQ(d.have_caches, 1);
}

TEST(CalibCache, StaleFormatOrForeignFingerprintIsIgnored)
{
    CacheDir dir;
    char why[256] = "";
    struct calib c;
    ASSERT_EQ(calib_open(&c, "fp-a", why, sizeof why), 0);
    fill(c);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;

    // 1. the same file, but claiming another format
    json_t *doc = load(c.path);
    ASSERT_NE(doc, nullptr);
    json_object_set_new(doc, "format", json_integer(CALIB_FORMAT + 1));
    ASSERT_EQ(json_dump_file(doc, c.path, 0), 0);
    struct calib d;
    ASSERT_EQ(calib_open(&d, "fp-a", why, sizeof why), 0);
    EXPECT_EQ(d.have_caches, 0);
    EXPECT_EQ(d.nsweep, 0u);
    EXPECT_EQ(d.nbw, 0u);
    EXPECT_EQ(d.measured[CALIB_LLC], 0u);
    EXPECT_STREQ(d.fingerprint, "fp-a");

    // 2. a valid file for fp-a copied where fp-b's cache lives: its fingerprint does not match
    json_object_set_new(doc, "format", json_integer(CALIB_FORMAT));
    std::string other = dir.path + "/calib-fp-b.json";
    ASSERT_EQ(json_dump_file(doc, other.c_str(), 0), 0);
    ASSERT_EQ(json_dump_file(doc, c.path, 0), 0);
    json_decref(doc);
    ASSERT_EQ(calib_open(&d, "fp-b", why, sizeof why), 0);
    EXPECT_EQ(d.have_caches, 0);
    EXPECT_EQ(d.nbw, 0u);
    ASSERT_EQ(calib_open(&d, "fp-a", why, sizeof why), 0);  // the restored original still loads
    EXPECT_EQ(d.have_caches, 1);
    EXPECT_EQ(d.nbw, 3u);

    // 3. garbage: empty, not an error
    FILE *f = fopen(c.path, "w");
    ASSERT_NE(f, nullptr);
    fputs("{ this is not json", f);
    fclose(f);
    ASSERT_EQ(calib_open(&d, "fp-a", why, sizeof why), 0);
    EXPECT_EQ(d.have_caches, 0);
}

TEST(CalibCache, ResetKeepsIdentity)
{
    CacheDir dir;
    char why[256] = "";
    struct calib c;
    ASSERT_EQ(calib_open(&c, "fp-r", why, sizeof why), 0);
    fill(c);
    std::string path = c.path;
    calib_reset(&c);
    EXPECT_STREQ(c.fingerprint, "fp-r");
    EXPECT_EQ(std::string(c.path), path);
    EXPECT_EQ(c.have_caches, 0);
    EXPECT_EQ(c.nsweep, 0u);
    EXPECT_EQ(c.nbw, 0u);
    EXPECT_EQ(c.measured[CALIB_LLC], 0u);
}

TEST(CalibCache, DirectoryPrecedence)
{
    CacheDir dir;  // restores IBENCH_CACHE_DIR
    const char *xdg = getenv("XDG_CACHE_HOME");
    std::string old_xdg = xdg ? xdg : "";
    char buf[1024];
    EXPECT_EQ(std::string(calib_dir(buf, sizeof buf)), dir.path);
    unsetenv("IBENCH_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/xdg/here", 1);
    EXPECT_STREQ(calib_dir(buf, sizeof buf), "/xdg/here/ibench");
    setenv("IBENCH_CACHE_DIR", "", 1);  // empty counts as unset
    EXPECT_STREQ(calib_dir(buf, sizeof buf), "/xdg/here/ibench");
    unsetenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (home && *home) {
        EXPECT_EQ(std::string(calib_dir(buf, sizeof buf)), std::string(home) + "/.cache/ibench");
    }
    if (xdg)
        setenv("XDG_CACHE_HOME", old_xdg.c_str(), 1);
}

// ---- fingerprint ----------------------------------------------------------------------------------------------

// The CPU both fingerprint tests describe: an AMD EPYC, family 19h model 11h.
static struct cpu_info epyc_cpu()
{
    struct cpu_info ci;
    memset(&ci, 0, sizeof ci);
    snprintf(ci.vendor, sizeof ci.vendor, "AuthenticAMD");
    snprintf(ci.model, sizeof ci.model, "AMD EPYC");
    ci.family = 0x19;
    ci.model_id = 0x11;
    ci.stepping = 1;
    return ci;
}

TEST(Calib, FingerprintNamesTheMachineAndChangesWithIt)
{
    Topo t("pack:2 l3:1(size=8MiB) l2:4(size=1MiB) l1:1(size=32KiB) core:1 pu:2");
    ASSERT_NE(t.t, nullptr);
    struct cpu_info ci = epyc_cpu();
    struct mlim m;
    memset(&m, 0, sizeof m);
    m.mem_total = 24 * GiB;
    char a[96], b[96], c[96];
    ASSERT_EQ(calib_fingerprint(t.t, &ci, &m, a, sizeof a), 0);
    ASSERT_EQ(calib_fingerprint(t.t, &ci, &m, b, sizeof b), 0);
    EXPECT_STREQ(a, b) << "deterministic";
    EXPECT_EQ(std::string(a).rfind("amd-19-11-16cpu-", 0), 0u) << a;
    m.mem_total = 48 * GiB;
    ASSERT_EQ(calib_fingerprint(t.t, &ci, &m, c, sizeof c), 0);
    EXPECT_STRNE(a, c) << "more memory, another machine";
    m.mem_total = 24 * GiB + 100 * MiB;  // same GiB count
    ASSERT_EQ(calib_fingerprint(t.t, &ci, &m, c, sizeof c), 0);
    EXPECT_STREQ(a, c);
    snprintf(ci.vendor, sizeof ci.vendor, "GenuineIntel");
    ASSERT_EQ(calib_fingerprint(t.t, &ci, &m, c, sizeof c), 0);
    EXPECT_EQ(std::string(c).rfind("intel-19-11-16cpu-", 0), 0u) << c;
    EXPECT_EQ(calib_fingerprint(t.t, &ci, &m, c, 8), -ENAMETOOLONG);
}

// Machines of the same PU count, CPU and caches, told apart by the kernel's view of their topology alone: packages,
// NUMA nodes, cores per package, SMT; and by their memory.
TEST(Calib, FingerprintTellsTopologiesAndMemoryApart)
{
    struct cpu_info ci = epyc_cpu();
    struct mlim m;
    memset(&m, 0, sizeof m);
    m.mem_total = 16 * GiB;
    const char *const specs[] = {
        "pack:1 core:2 pu:1",          // one socket, two cores
        "pack:2 core:1 pu:1",          // two sockets, one NUMA node
        "pack:1 core:1 pu:2",          // one core, two SMT threads
        "pack:2 numa:1 core:1 pu:1",   // two sockets, a NUMA node each ...
        "pack:1 numa:2 core:1 pu:1",   // ... and one socket split in two NUMA nodes
    };
    std::vector<std::string> fps;
    for (const char *spec : specs) {
        Topo t(spec);
        ASSERT_NE(t.t, nullptr) << spec;
        ASSERT_EQ(topo_npus(t.t), 2u) << spec;
        char fp[96];
        ASSERT_EQ(calib_fingerprint(t.t, &ci, &m, fp, sizeof fp), 0) << spec;
        EXPECT_EQ(std::string(fp).rfind("amd-19-11-2cpu-", 0), 0u) << spec << ": " << fp;
        for (size_t i = 0; i < fps.size(); i++)
            EXPECT_NE(fps[i], fp) << spec << " reads as " << specs[i];
        fps.push_back(fp);
    }
    // the same topology loaded again: the same machine
    Topo again(specs[1]);
    ASSERT_NE(again.t, nullptr);
    char fp[96];
    ASSERT_EQ(calib_fingerprint(again.t, &ci, &m, fp, sizeof fp), 0);
    EXPECT_EQ(fps[1], fp);
    // more memory: another machine; a few MiB more, the same GiB: the same one
    m.mem_total = 17 * GiB;
    ASSERT_EQ(calib_fingerprint(again.t, &ci, &m, fp, sizeof fp), 0);
    EXPECT_NE(fps[1], fp);
    m.mem_total = 16 * GiB + 5 * MiB;
    ASSERT_EQ(calib_fingerprint(again.t, &ci, &m, fp, sizeof fp), 0);
    EXPECT_EQ(fps[1], fp);
}

// ---- a format bump -------------------------------------------------------------------------------------------
// calib_fp_next (tests/calib_fp_probe.c) is common/calib.c built at CALIB_FORMAT + 1, as the next bump builds it.
// The fingerprint must not move with the format (profiles and co-run records carry it: one machine's must match
// across a bump), while the cache file, which keeps its name, must be refused by the other format and measured again.

namespace {

std::string next_probe(const std::string &args)
{
    int rc = -1;
    std::string out = ib_test::sh(std::string(IBENCH_CALIB_FP_NEXT) + " " + args, &rc);
    EXPECT_EQ(rc, 0) << args << ": " << out;
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

struct FpCase {
    const char *topo, *vendor, *brand;
    unsigned family, model, stepping, mem_gib;
};

const FpCase kFpCases[] = {
    {"pack:2 l3:1(size=8MiB) l2:4(size=1MiB) l1:1(size=32KiB) core:1 pu:2", "AuthenticAMD", "AMD EPYC", 0x19, 0x11, 1,
     24},
    {"pack:1 core:2 pu:1", "GenuineIntel", "Intel Xeon", 6, 0x55, 4, 16},
    {"pack:1 numa:2 l3:1(size=16MiB) core:4 pu:2", "AuthenticAMD", "AMD EPYC 7763", 0x19, 0x01, 1, 256},
};

std::string fp_here(const FpCase &k)
{
    Topo t(k.topo);
    if (!t.t)
        return "";
    struct cpu_info ci;
    memset(&ci, 0, sizeof ci);
    snprintf(ci.vendor, sizeof ci.vendor, "%s", k.vendor);
    snprintf(ci.model, sizeof ci.model, "%s", k.brand);
    ci.family = k.family;
    ci.model_id = k.model;
    ci.stepping = k.stepping;
    struct mlim m;
    memset(&m, 0, sizeof m);
    m.mem_total = (uint64_t)k.mem_gib * GiB;
    char fp[96];
    EXPECT_EQ(calib_fingerprint(t.t, &ci, &m, fp, sizeof fp), 0);
    return fp;
}

std::string fp_next(const FpCase &k)
{
    return next_probe("fingerprint '" + std::string(k.topo) + "' '" + k.vendor + "' '" + k.brand + "' " +
                      std::to_string(k.family) + " " + std::to_string(k.model) + " " + std::to_string(k.stepping) +
                      " " + std::to_string(k.mem_gib));
}

}  // namespace

TEST(CalibFormatBump, FingerprintIsTheSame)
{
    ASSERT_EQ(next_probe("format"), std::to_string(CALIB_FORMAT + 1)) << "the probe is not at the next format";
    for (const FpCase &k : kFpCases) {
        std::string here = fp_here(k);
        ASSERT_FALSE(here.empty()) << k.topo;
        EXPECT_EQ(fp_next(k), here) << k.topo;
    }
}

TEST(CalibFormatBump, TheOtherFormatsCacheIsRefused)
{
    CacheDir dir;
    const std::string fp = fp_here(kFpCases[0]);
    ASSERT_FALSE(fp.empty());
    ASSERT_EQ(fp_next(kFpCases[0]), fp);  // one file name for both formats
    char why[256] = "";

    // this format's file: read here, refused by the next format
    struct calib c;
    ASSERT_EQ(calib_open(&c, fp.c_str(), why, sizeof why), 0) << why;
    fill(c);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;
    struct calib d;
    ASSERT_EQ(calib_open(&d, fp.c_str(), why, sizeof why), 0) << why;
    EXPECT_EQ(d.have_caches, 1);
    EXPECT_EQ(d.nbw, 3u);
    EXPECT_EQ(next_probe("open " + fp), "caches 0 entries 0");

    // the next format saves over it (it merges nothing from a file it refuses) ...
    next_probe("save " + fp);
    json_t *doc = load(c.path);
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(json_integer_value(json_object_get(doc, "format")), CALIB_FORMAT + 1);
    EXPECT_EQ(json_string_value(json_object_get(doc, "fingerprint")) ?: std::string(), fp);
    EXPECT_EQ(json_array_size(json_object_get(doc, "bandwidth")), 1u);
    json_decref(doc);
    EXPECT_EQ(next_probe("open " + fp), "caches 0 entries 1");

    // ... and this format refuses that file: nothing read, measured again on need
    ASSERT_EQ(calib_open(&d, fp.c_str(), why, sizeof why), 0) << why;
    EXPECT_EQ(d.have_caches, 0);
    EXPECT_EQ(d.nbw, 0u);
    EXPECT_EQ(d.measured[CALIB_LLC], 0u);
}

// ---- bandwidth working sets and look-ups ----------------------------------------------------------------------------

namespace {

// One socket, a claimed 32 MiB L3 over 4 cores with a private 1 MiB L2 each.
const char *const kBwTopo = "pack:1 l3:1(size=32MiB) l2:4(size=1MiB) l1:1(size=32KiB) core:1 pu:1";

struct calib synthetic_calib(uint64_t l2, uint64_t llc_measured)
{
    struct calib c;
    memset(&c, 0, sizeof c);
    c.have_caches = 1;
    c.claimed[CALIB_L1] = 32 * KiB;
    c.claimed[CALIB_L2] = 1 * MiB;
    c.claimed[CALIB_LLC] = 32 * MiB;
    c.measured[CALIB_L2] = l2;
    c.measured[CALIB_LLC] = llc_measured;
    return c;
}

}  // namespace

TEST(CalibBw, WorkingSetRules)
{
    Topo t(kBwTopo);
    ASSERT_NE(t.t, nullptr);
    struct mlim m;
    memset(&m, 0, sizeof m);
    m.mem_total = 16 * GiB;
    m.cg_limit = MLIM_UNLIMITED;
    // measured: L2 768 KiB (claimed 1 MiB), LLC 8 MiB (claimed 32 MiB)
    const uint64_t l2 = 768 * KiB, llc = 8 * MiB;
    struct calib c = synthetic_calib(l2, llc);
    ASSERT_EQ(calib_effective(&c, CALIB_L2), l2);
    ASSERT_EQ(calib_effective(&c, CALIB_LLC), llc);

    for (unsigned n : {1u, 2u, 4u, 6u}) {
        SCOPED_TRACE("threads " + std::to_string(n));
        uint64_t w2 = calib_bw_ws(&c, t.t, &m, "l2", n);
        EXPECT_GT(w2, 0u);
        EXPECT_LT(w2, l2) << "l2: inside the L2";
        EXPECT_GT(w2, c.claimed[CALIB_L1]) << "l2: beyond the L1";
        EXPECT_EQ(w2 % 4096, 0u);

        uint64_t wl = calib_bw_ws(&c, t.t, &m, "llc", n);
        EXPECT_EQ(wl % 4096, 0u);
        EXPECT_LE(wl * n, llc / 10 * 8) << "llc: never more than 80 % of the effective LLC in all";
        if (n <= 4) {  // while 1.5 L2 per thread fits in 80 % of the LLC
            EXPECT_GE(wl, l2 + l2 / 2) << "llc: at least 1.5x an L2 per thread";
        }

        uint64_t wd = calib_bw_ws(&c, t.t, &m, "dram", n);
        EXPECT_EQ(wd % 4096, 0u);
        EXPECT_GE(wd * n + 4096 * n, 4 * 32 * MiB) << "dram: 4x the larger of claimed (32 MiB) and effective LLC";
        EXPECT_LE(wd * n, m.mem_total / 10);
    }
    // exact values
    EXPECT_EQ(calib_bw_ws(&c, t.t, &m, "l2", 1), 384 * KiB);         // half the L2
    EXPECT_EQ(calib_bw_ws(&c, t.t, &m, "llc", 1), 4 * MiB);          // half the LLC
    EXPECT_EQ(calib_bw_ws(&c, t.t, &m, "llc", 2), 2 * MiB);          // half the LLC shared out
    EXPECT_EQ(calib_bw_ws(&c, t.t, &m, "llc", 4), 1152 * KiB);       // 1 MiB each < 1.5 L2: raised to 1.5 L2
    EXPECT_EQ(calib_bw_ws(&c, t.t, &m, "llc", 6), (8 * MiB / 10 * 8 / 6) & ~4095ULL);  // 6 x 1.5 L2 > 80 %: cut
    EXPECT_EQ(calib_bw_ws(&c, t.t, &m, "dram", 1), 128 * MiB);       // 4 x the claimed 32 MiB
    EXPECT_EQ(calib_bw_ws(&c, t.t, &m, "dram", 4), 32 * MiB);
    EXPECT_EQ(calib_bw_ws(&c, t.t, &m, "dram", 0), 128 * MiB);       // 0 threads counts as 1

    // An effective LLC bigger than the topology's claim (this calibration's own claim says 64 MiB, no knee) sets
    // the DRAM size.
    struct calib big = synthetic_calib(l2, 0);
    big.claimed[CALIB_LLC] = 64 * MiB;
    ASSERT_EQ(calib_effective(&big, CALIB_LLC), 64 * MiB);
    EXPECT_EQ(calib_bw_ws(&big, t.t, &m, "dram", 1), 256 * MiB);

    // Little memory: 10 % of it caps the DRAM working set below the 4x rule.
    m.mem_total = 512 * MiB;
    uint64_t wd = calib_bw_ws(&c, t.t, &m, "dram", 1);
    EXPECT_LE(wd, 512 * MiB / 10);
    EXPECT_GT(wd, 512 * MiB / 10 - 4096);

    // Nothing known about the L2: a fixed 128 KiB.
    struct calib none;
    memset(&none, 0, sizeof none);
    none.claimed[CALIB_LLC] = 32 * MiB;
    EXPECT_EQ(calib_bw_ws(&none, t.t, &m, "l2", 1), 128 * KiB);
}

TEST(CalibBw, FindByKindAndCpuSet)
{
    struct calib c;
    memset(&c, 0, sizeof c);
    fill(c);
    const int one[] = {1}, both[] = {1, 0}, zero[] = {0};
    const calib_bw *e = calib_bw_find(&c, "l2", one, 1);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e, &c.bw[0]);
    e = calib_bw_find(&c, "llc", both, 2);  // order does not matter: "0-1"
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e, &c.bw[1]);
    EXPECT_EQ(calib_bw_find(&c, "llc", zero, 1), nullptr);   // other CPUs
    EXPECT_EQ(calib_bw_find(&c, "l2", zero, 1), nullptr);
    EXPECT_EQ(calib_bw_find(&c, "dram", one, 1), nullptr);
    EXPECT_NE(calib_bw_find(&c, "dram", zero, 1), nullptr);
    EXPECT_EQ(calib_bw_find(&c, "l3", one, 1), nullptr);     // unknown kind
}

// A cached entry whose working set still matches is used as is; on a synthetic topology nothing can be measured, so
// a success here proves nothing was.
TEST(CalibBw, NeedUsesAMatchingCacheEntryAndNeverMeasuresSynthetic)
{
    Topo t(kBwTopo);
    ASSERT_NE(t.t, nullptr);
    struct mlim m;
    memset(&m, 0, sizeof m);
    m.mem_total = 16 * GiB;
    struct calib c = synthetic_calib(768 * KiB, 4 * MiB);
    const int cpus[] = {0, 1};
    c.nbw = 1;
    snprintf(c.bw[0].kind, sizeof c.bw[0].kind, "llc");
    snprintf(c.bw[0].cpus, sizeof c.bw[0].cpus, "0-1");
    c.bw[0].ws_bytes = calib_bw_ws(&c, t.t, &m, "llc", 2);
    c.bw[0].bps = 123e9;
    double bps = 0;
    char why[256] = "";
    ASSERT_EQ(calib_need_bw(&c, t.t, &m, "llc", cpus, 2, nullptr, &bps, why, sizeof why), 0) << why;
    EXPECT_EQ(bps, 123e9);

    // The knees moved since (another working set): the entry is stale and a measurement is needed.
    c.bw[0].ws_bytes += 4096;
    why[0] = 0;
    EXPECT_EQ(calib_need_bw(&c, t.t, &m, "llc", cpus, 2, nullptr, &bps, why, sizeof why), -ENOTSUP);
    EXPECT_NE(strstr(why, "this machine"), nullptr) << why;
    why[0] = 0;
    EXPECT_EQ(calib_measure_bw(&c, t.t, &m, "l3", cpus, 2, nullptr, &bps, why, sizeof why), -EINVAL);
    EXPECT_NE(strstr(why, "l3"), nullptr) << why;
    EXPECT_EQ(calib_measure_bw(&c, t.t, &m, "llc", cpus, 0, nullptr, &bps, why, sizeof why), -EINVAL);
}

TEST(CalibBw, KernelPerKind)
{
    EXPECT_EQ(calib_bw_op("dram"), STREAM_TRIAD);
    EXPECT_EQ(calib_bw_op("llc"), STREAM_READ);
    EXPECT_EQ(calib_bw_op("l2"), STREAM_READ);
}

// ---- keys, concurrency, trust ---------------------------------------------------------------------

namespace {

std::vector<int> evens(unsigned n)
{
    std::vector<int> v;
    for (unsigned i = 0; i < n; i++)
        v.push_back((int)(2 * i));
    return v;
}

const calib_bw *find(const struct calib &c, const char *kind, const std::vector<int> &cpus)
{
    return calib_bw_find(&c, kind, cpus.data(), (unsigned)cpus.size());
}

}  // namespace

// Two CPU sets whose lists agree on their first 63 characters are two keys, in memory and through the file.
TEST(CalibKey, LongCpuSetsAreKeyedWhole)
{
    CacheDir dir;
    std::vector<int> a = evens(50), b = a;  // "0,2,4,...,98": 139 characters
    b.back() = 99;
    char why[256] = "";
    static struct calib c, d;
    ASSERT_EQ(calib_open(&c, "fp-long", why, sizeof why), 0) << why;
    peak_store(&c, "int", a.data(), (unsigned)a.size(), 1e9, 0.01);
    ASSERT_NE(find(c, "int", a), nullptr);
    EXPECT_EQ(find(c, "int", b), nullptr) << "a set differing only at its end read the other's peak: "
                                          << find(c, "int", b)->cpus;
    peak_store(&c, "int", b.data(), (unsigned)b.size(), 2e9, 0.01);
    EXPECT_EQ(c.nbw, 2u);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;
    ASSERT_EQ(calib_open(&d, "fp-long", why, sizeof why), 0) << why;
    ASSERT_EQ(d.nbw, 2u);
    ASSERT_NE(find(d, "int", a), nullptr);
    ASSERT_NE(find(d, "int", b), nullptr);
    EXPECT_EQ(find(d, "int", a)->bps, 1e9);
    EXPECT_EQ(find(d, "int", b)->bps, 2e9);
    EXPECT_GT(strlen(find(d, "int", b)->cpus), 63u);
    // A 512-CPU machine's whole set is a short key.
    std::vector<int> all;
    for (int i = 0; i < 512; i++)
        all.push_back(i);
    peak_store(&d, "fp", all.data(), (unsigned)all.size(), 3e9, 0);
    ASSERT_NE(find(d, "fp", all), nullptr);
    EXPECT_STREQ(find(d, "fp", all)->cpus, "0-511");
}

// A set too scattered for the key's field is measured every time, never stored under a cut key that another set
// could match.
TEST(CalibKey, TooLongACpuListIsNotCachedRatherThanCut)
{
    static struct calib c;
    memset(&c, 0, sizeof c);
    std::vector<int> a = evens(2000), b = a;  // ~9000 characters
    b.back() = 3999;
    peak_store(&c, "int", a.data(), (unsigned)a.size(), 1e9, 0.01);
    EXPECT_EQ(find(c, "int", b), nullptr) << "found under a cut key: " << c.bw[0].cpus;
    EXPECT_EQ(find(c, "int", a), nullptr);
    EXPECT_EQ(c.nbw, 0u);
    char key[64];
    EXPECT_EQ(calib_cpus_key(a.data(), 4, key, sizeof key), 0);
    EXPECT_STREQ(key, "0,2,4,6");
    EXPECT_EQ(calib_cpus_key(a.data(), 50, key, sizeof key), -ENAMETOOLONG);
    EXPECT_STREQ(key, "") << "never a cut key";
    const int neg[] = {-1};
    EXPECT_EQ(calib_cpus_key(neg, 1, key, sizeof key), -EINVAL);
    EXPECT_EQ(calib_cpus_key(neg, 0, key, sizeof key), -EINVAL);
}

// Kinds naming a whole net target (a host name up to 253 characters) or filesystem are keyed whole.
TEST(CalibKey, LongKindsAreKeyedWhole)
{
    static struct calib c;
    memset(&c, 0, sizeof c);
    std::string host(240, 'h');
    std::string ka = "n" + host + ".example:5301/1024", kb = "n" + host + ".example:5302/1024";
    const int cpu0[] = {0};
    peak_store(&c, ka.c_str(), cpu0, 1, 1e9, 0);
    const calib_bw *e = calib_bw_find(&c, ka.c_str(), cpu0, 1);
    ASSERT_NE(e, nullptr) << "a long target's peak is not found under its own key";
    EXPECT_EQ(std::string(e->kind), ka);
    EXPECT_EQ(calib_bw_find(&c, kb.c_str(), cpu0, 1), nullptr);
}

// Two processes that opened the cache before either saved: each saves its own measurement; the file keeps both
// (and what was there before).  Without the lock and the merge the second save overwrote the first.
TEST(CalibCache, TwoProcessesKeepEachOthersMeasurements)
{
    CacheDir dir;
    char why[256] = "";
    static struct calib c;
    ASSERT_EQ(calib_open(&c, "fp-conc", why, sizeof why), 0) << why;
    fill(c);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;
    int opened[2], go[2];
    ASSERT_EQ(pipe(opened), 0);
    ASSERT_EQ(pipe(go), 0);
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        ASSERT_GE(kids[k], 0);
        if (kids[k] == 0) {  // the child: open, wait until both have, store a fake peak of its CPU, save
            static struct calib m;
            char w[256] = "", b = 0;
            int rc = calib_open(&m, "fp-conc", w, sizeof w);
            if (write(opened[1], "o", 1) != 1 || read(go[0], &b, 1) != 1)
                _exit(3);
            const int cpu[] = {k};
            peak_store(&m, "int", cpu, 1, 1e9 * (k + 1), 0.01);
            if (rc == 0)
                rc = calib_save(&m, w, sizeof w);
            _exit(rc == 0 ? 0 : 4);
        }
    }
    char b;
    for (int k = 0; k < 2; k++)
        ASSERT_EQ(read(opened[0], &b, 1), 1);
    ASSERT_EQ(write(go[1], "gg", 2), 2);
    for (int k = 0; k < 2; k++) {
        int st = 0;
        ASSERT_EQ(waitpid(kids[k], &st, 0), kids[k]);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child " << k << " status " << st;
    }
    for (int fd : {opened[0], opened[1], go[0], go[1]})
        close(fd);
    static struct calib d;
    ASSERT_EQ(calib_open(&d, "fp-conc", why, sizeof why), 0) << why;
    const std::vector<int> cpu0 = {0}, cpu1 = {1};
    const calib_bw *e0 = find(d, "int", cpu0), *e1 = find(d, "int", cpu1);
    EXPECT_NE(e0, nullptr) << "the first process's measurement was lost";
    EXPECT_NE(e1, nullptr) << "the second process's measurement was lost";
    if (e0 && e1) {
        EXPECT_EQ(e0->bps, 1e9);
        EXPECT_EQ(e1->bps, 2e9);
    }
    EXPECT_EQ(d.nbw, 5u) << "fill()'s three bandwidths and the two peaks";
    EXPECT_EQ(d.have_caches, 1);
    // The merge leaves no temporary file behind; the lock file stays (private).
    std::string lock = dir.path + "/calib-fp-conc.lock";
    struct stat st;
    ASSERT_EQ(stat(lock.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// On save, the newer of each entry wins, whichever process holds it.
TEST(CalibCache, SaveKeepsTheNewerOfEachEntry)
{
    CacheDir dir;
    char why[256] = "";
    static struct calib a, b, d;
    ASSERT_EQ(calib_open(&a, "fp-new", why, sizeof why), 0) << why;
    ASSERT_EQ(calib_open(&b, "fp-new", why, sizeof why), 0) << why;
    const int cpu0[] = {0};
    peak_store(&a, "int", cpu0, 1, 1e9, 0);
    peak_store(&b, "int", cpu0, 1, 2e9, 0);
    a.bw[0].when = 1000;  // a's is the older measurement, though saved last
    b.bw[0].when = 2000;
    ASSERT_EQ(calib_save(&b, why, sizeof why), 0) << why;
    ASSERT_EQ(calib_save(&a, why, sizeof why), 0) << why;
    EXPECT_EQ(calib_bw_find(&a, "int", cpu0, 1)->bps, 2e9) << "the saving process sees the merged cache";
    ASSERT_EQ(calib_open(&d, "fp-new", why, sizeof why), 0) << why;
    ASSERT_NE(calib_bw_find(&d, "int", cpu0, 1), nullptr);
    EXPECT_EQ(calib_bw_find(&d, "int", cpu0, 1)->bps, 2e9);
}

// A new latency sweep forgets the memory bandwidths (their working sets derive from the knees) and keeps every rate
// that does not depend on cache sizes.  Runs a real sweep on this machine.
TEST(CalibCache, SweepKeepsRatesThatDoNotDependOnCacheSizes)
{
    Topo t(nullptr);
    ASSERT_NE(t.t, nullptr);
    static struct calib c;
    memset(&c, 0, sizeof c);
    const int cpu0[] = {0};
    const char *keep[] = {"int", "fp", "simd-avx2", "interconnect", "dr254:0/1024/8", "n127.0.0.1:5301/1024"};
    for (const char *k : keep)
        peak_store(&c, k, cpu0, 1, 1e9, 0.01);
    for (const char *k : {"l2", "llc", "dram"})
        peak_store(&c, k, cpu0, 1, 1e10, 0.01);
    char why[256] = "";
    int cpu = topo_pu_os(t.t, topo_npus(t.t) - 1);
    ASSERT_EQ(calib_measure_caches(&c, t.t, cpu, nullptr, nullptr, nullptr, why, sizeof why), 0) << why;
    for (const char *k : keep)
        EXPECT_NE(calib_bw_find(&c, k, cpu0, 1), nullptr) << k << " was thrown away by the sweep";
    for (const char *k : {"l2", "llc", "dram"})
        EXPECT_EQ(calib_bw_find(&c, k, cpu0, 1), nullptr) << k << " was measured against the old knees";
    EXPECT_EQ(c.nbw, 6u);
}

// Values read back are range-checked: an entry holding a negative, absurd or mistyped value is dropped (measured
// again), and a sweep with one bad point is measured again whole.
TEST(CalibCache, ImplausibleValuesAreDroppedNotTrusted)
{
    CacheDir dir;
    char why[256] = "";
    static struct calib c, d;
    ASSERT_EQ(calib_open(&c, "fp-bad", why, sizeof why), 0) << why;
    fill(c);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;
    json_t *doc = load(c.path);
    ASSERT_NE(doc, nullptr);
    json_t *bw = json_array();
    auto entry = [&](const char *kind, const char *cpus, json_t *ws, json_t *bps, json_t *spread, json_t *when) {
        json_array_append_new(bw, json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "kind", kind, "cpus", cpus, "ws_bytes", ws,
                                            "bps", bps, "spread", spread, "when", when));
    };
    entry("int", "0", json_integer(0), json_real(1e9), json_real(0.01), json_integer(1700000000));  // the good one
    entry("fp", "0", json_integer(0), json_real(-5), json_real(0.01), json_integer(1));
    entry("simd-sse", "0", json_integer(0), json_real(1e300), json_real(0.01), json_integer(1));
    entry("simd-avx2", "0", json_integer(0), json_string("fast"), json_real(0.01), json_integer(1));
    entry("l2", "0", json_integer(-4096), json_real(1e10), json_real(0.01), json_integer(1));
    entry("llc", "0", json_real(1e30), json_real(1e10), json_real(0.01), json_integer(1));
    entry("dram", "0", json_integer(4096), json_real(1e10), json_real(-1), json_integer(1));
    entry("dram", "1", json_integer(4096), json_real(1e10), json_real(0.01), json_integer(-5));
    entry("interconnect", "garbage", json_integer(0), json_real(1e6), json_real(0.01), json_integer(1));
    entry("interconnect", "", json_integer(0), json_real(1e6), json_real(0.01), json_integer(1));
    entry("interconnect", "-3", json_integer(0), json_real(1e6), json_real(0.01), json_integer(1));
    entry("interconnect", "3-1", json_integer(0), json_real(1e6), json_real(0.01), json_integer(1));
    entry("interconnect", "0,,1", json_integer(0), json_real(1e6), json_real(0.01), json_integer(1));
    entry("interconnect", "0-99999999", json_integer(0), json_real(1e6), json_real(0.01), json_integer(1));
    json_object_set_new(doc, "bandwidth", bw);
    json_t *sweep = json_object_get(json_object_get(doc, "caches"), "sweep");
    json_array_set_new(json_array_get(sweep, 5), 1, json_real(-3.0));  // one negative latency
    ASSERT_EQ(json_dump_file(doc, c.path, 0), 0);
    ASSERT_EQ(calib_open(&d, "fp-bad", why, sizeof why), 0) << why;
    EXPECT_EQ(d.nbw, 1u);
    for (unsigned i = 0; i < d.nbw; i++)
        EXPECT_STREQ(d.bw[i].kind, "int") << "trusted: " << d.bw[i].kind << " on " << d.bw[i].cpus;
    EXPECT_EQ(d.have_caches, 0) << "a sweep with a negative latency was trusted";
    EXPECT_EQ(d.nsweep, 0u);

    // A knee of 1e20 bytes, otherwise a good sweep: not trusted either.
    json_array_set_new(json_array_get(sweep, 5), 1, json_real(4.0));
    json_object_set_new(json_object_get(json_object_get(doc, "caches"), "measured"), "llc", json_real(1e20));
    ASSERT_EQ(json_dump_file(doc, c.path, 0), 0);
    ASSERT_EQ(calib_open(&d, "fp-bad", why, sizeof why), 0) << why;
    EXPECT_EQ(d.have_caches, 0) << "an LLC of " << d.measured[CALIB_LLC] << " bytes was trusted";
    EXPECT_EQ(d.measured[CALIB_LLC], 0u);
    // ... and with the knee restored, the sweep is read again.
    json_object_set_new(json_object_get(json_object_get(doc, "caches"), "measured"), "llc",
                        json_integer(3562 * 1024));
    ASSERT_EQ(json_dump_file(doc, c.path, 0), 0);
    ASSERT_EQ(calib_open(&d, "fp-bad", why, sizeof why), 0) << why;
    EXPECT_EQ(d.have_caches, 1);
    EXPECT_EQ(d.nsweep, c.nsweep);
    json_decref(doc);
}

TEST(CalibCache, DirectoryIsCreatedPrivate)
{
    CacheDir dir;
    std::string deep = dir.path + "/made/here";
    setenv("IBENCH_CACHE_DIR", deep.c_str(), 1);
    char why[256] = "";
    static struct calib c;
    ASSERT_EQ(calib_open(&c, "fp-priv", why, sizeof why), 0) << why;
    fill(c);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;
    for (const std::string &p : {dir.path + "/made", deep}) {
        struct stat st;
        ASSERT_EQ(stat(p.c_str(), &st), 0) << p;
        EXPECT_EQ(st.st_mode & 0777, 0700u) << p;
    }
}

// A cache directory another user owns, or that group or others can write to, is neither read nor written: the
// caller measures without it (c.nocache says why).
TEST(CalibCache, ForeignOrOpenDirectoryIsRefused)
{
    CacheDir dir;
    char why[256] = "";
    static struct calib c, d;
    ASSERT_EQ(calib_open(&c, "fp-foreign", why, sizeof why), 0) << why;
    fill(c);
    ASSERT_EQ(calib_save(&c, why, sizeof why), 0) << why;
    ASSERT_EQ(chmod(dir.path.c_str(), 0777), 0);
    ASSERT_EQ(calib_open(&d, "fp-foreign", why, sizeof why), 0) << why;
    EXPECT_EQ(d.nbw, 0u) << "read from a world-writable directory";
    EXPECT_EQ(d.have_caches, 0);
    EXPECT_EQ(d.nocache, 1);
    EXPECT_NE(strstr(d.nocache_why, "writable by others"), nullptr) << d.nocache_why;
    fill(d);
    why[0] = 0;
    EXPECT_EQ(calib_save(&d, why, sizeof why), -EPERM) << "written into a world-writable directory";
    EXPECT_NE(strstr(why, dir.path.c_str()), nullptr) << why;
    ASSERT_EQ(chmod(dir.path.c_str(), 0720), 0);
    ASSERT_EQ(calib_open(&d, "fp-foreign", why, sizeof why), 0) << why;
    EXPECT_EQ(d.nbw, 0u) << "read from a group-writable directory";
    EXPECT_NE(strstr(d.nocache_why, "writable by its group"), nullptr) << d.nocache_why;
    ASSERT_EQ(chmod(dir.path.c_str(), 0700), 0);
    if (geteuid() == 0) {  // only root can give a directory away
        ASSERT_EQ(chown(dir.path.c_str(), 12345, (gid_t)-1), 0);
        ASSERT_EQ(calib_open(&d, "fp-foreign", why, sizeof why), 0) << why;
        EXPECT_EQ(d.nbw, 0u) << "read from another user's directory";
        EXPECT_NE(strstr(d.nocache_why, "uid 12345"), nullptr) << d.nocache_why;
        ASSERT_EQ(chown(dir.path.c_str(), 0, (gid_t)-1), 0);
    }
    ASSERT_EQ(calib_open(&d, "fp-foreign", why, sizeof why), 0) << why;
    EXPECT_EQ(d.nocache, 0);
    EXPECT_EQ(d.nbw, 3u) << "the file is intact and read again once the directory is private";
}

// The command line says so once, and goes on without the cache (exit 0).
TEST(CalibCache, CliWarnsOnceAboutAnUnsafeDirectory)
{
    ib_test::TempDir dir("calibcli");
    ASSERT_FALSE(dir.path().empty());
    ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
    ib_test::Proc p;
    ASSERT_TRUE(p.start({"topo", "--no-measure", "--json"}, {"IBENCH_CACHE_DIR=" + dir.path()}));
    ASSERT_TRUE(p.finish(60));
    EXPECT_EQ(p.exit_code(), 0) << p.err;
    size_t at = p.err.find("writable by others");
    EXPECT_NE(at, std::string::npos) << p.err;
    EXPECT_EQ(p.err.find("writable by others", at + 1), std::string::npos) << "said more than once: " << p.err;
    EXPECT_NE(p.err.find("without the calibration cache"), std::string::npos) << p.err;
    DIR *d = opendir(dir.path().c_str());
    ASSERT_NE(d, nullptr);
    std::vector<std::string> names;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            names.push_back(e->d_name);
    closedir(d);
    EXPECT_TRUE(names.empty()) << "wrote " << names[0] << " into the unsafe directory";
}

// net-bw caches its peak under the whole target: an IPv6 address written out in full fills the first 40 characters,
// so a peak seeded under the 40-character cut of the target (the old key) must not be taken for this target's.
TEST(CalibKey, NetBwKeysTheWholeTarget)
{
    CacheDir dir;
    ib_test::Proc sink;
    ASSERT_TRUE(sink.start({"sink", "--listen", "[::1]:0", "--quiet"}, {}));
    std::string port;
    sink.pump_until(
        [&] {
            size_t at = sink.err.find("]:");
            size_t nl = at == std::string::npos ? at : sink.err.find('\n', at);
            if (nl != std::string::npos)
                port = sink.err.substr(at + 2, nl - at - 2);
            return !port.empty();
        },
        10);
    if (port.empty())
        GTEST_SKIP() << "no IPv6 loopback sink here: " << sink.err;
    const std::string target = "[0000:0000:0000:0000:0000:0000:0000:0001]:" + port;
    const std::string cut = "n" + target.substr(0, 40) + "/1024";  // what the old key kept
    {
        static struct machine m;
        char why[256] = "";
        ASSERT_EQ(machine_open(&m, nullptr, why, sizeof why), 0) << why;
        const int cpu0[] = {0};
        peak_store(&m.calib, cut.c_str(), cpu0, 1, 1234.0, 0);  // 1.23 kB/s: nobody's real peak
        ASSERT_EQ(calib_save(&m.calib, why, sizeof why), 0) << why;
        machine_close(&m);
    }
    ib_test::Proc run;
    ASSERT_TRUE(run.start({"run", "--soi", "net-bw", "--target", target, "--cpus", "0", "--intensity", "10",
                           "--duration", "0.3s", "--cached-capacity"},
                          {"IBENCH_CACHE_DIR=" + dir.path}));
    ASSERT_TRUE(run.finish(120));
    kill(sink.pid, SIGTERM);
    sink.finish(10);
    EXPECT_EQ(run.exit_code(), 0) << run.err;
    EXPECT_EQ(run.out.find("cached TCP"), std::string::npos) << "read the peak cached for another target:\n"
                                                             << run.out;
    EXPECT_NE(run.out.find("measured now: TCP to the sink at " + target), std::string::npos) << run.out;
    // ... and the peak measured now is cached under the whole target.
    char why[256] = "";
    static struct machine m;
    ASSERT_EQ(machine_open(&m, nullptr, why, sizeof why), 0) << why;
    const int cpu0[] = {0};
    EXPECT_NE(calib_bw_find(&m.calib, ("n" + target + "/1024").c_str(), cpu0, 1), nullptr);
    machine_close(&m);
}

// A target too long to hold is refused as bad input, not cut into another address (and another cache key).
TEST(CalibKey, NetBwRefusesATargetTooLongToKeep)
{
    CacheDir dir;
    ib_test::Proc run;
    const std::string target = std::string(150, 'h') + ":5301";
    ASSERT_TRUE(run.start({"run", "--soi", "net-bw", "--target", target, "--cpus", "0", "--intensity", "10",
                           "--duration", "0.3s"},
                          {"IBENCH_CACHE_DIR=" + dir.path}));
    ASSERT_TRUE(run.finish(60));
    EXPECT_EQ(run.exit_code(), 2) << run.err;
    EXPECT_NE(run.err.find("longer than 127 characters"), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

// The kinds the SoIs cache their peaks under, told apart in one place (ibench topo's tables and units use it).
TEST(CalibKinds, ClassAndUnit)
{
    struct {
        const char *kind;
        enum calib_kind_class cls;
        const char *unit;
    } const cases[] = {
        {"l2", CALIB_CLASS_MEMORY, "B/s"},          {"llc", CALIB_CLASS_MEMORY, "B/s"},
        {"dram", CALIB_CLASS_MEMORY, "B/s"},        {"dr254:0/1024/8", CALIB_CLASS_IO, "B/s"},
        {"dw8:16/4/1", CALIB_CLASS_IO, "B/s"},      {"dm254:0/64/32", CALIB_CLASS_IO, "B/s"},
        {"n127.0.0.1:5301/1024", CALIB_CLASS_IO, "B/s"}, {"nloopback-own/64", CALIB_CLASS_IO, "B/s"},
        {"int", CALIB_CLASS_OPS, "ops/s"},          {"fp", CALIB_CLASS_OPS, "ops/s"},
        {"simd-avx2", CALIB_CLASS_OPS, "ops/s"},    {"interconnect", CALIB_CLASS_OPS, "msg/s"},
        {"dx", CALIB_CLASS_OPS, "ops/s"},           {"dr", CALIB_CLASS_OPS, "ops/s"},
    };
    for (const auto &c : cases) {
        EXPECT_EQ(calib_kind_class(c.kind), c.cls) << c.kind;
        EXPECT_STREQ(calib_kind_unit(c.kind), c.unit) << c.kind;
    }
}

// ---- repeated sweeps and their consistency checks ------------------------------------------------------

namespace {

using Sweeps = std::vector<std::vector<calib_point>>;

// A fixture of tests/fixtures/calib: "sweep" lines start a sweep, "bytes ns" lines are its points, # comments.
Sweeps read_sweeps(const char *name)
{
    std::string path = std::string(IBENCH_FIXTURES) + "/calib/" + name;
    FILE *f = fopen(path.c_str(), "r");
    EXPECT_NE(f, nullptr) << path;
    Sweeps out;
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long b;
        double ns;
        if (!strncmp(line, "sweep", 5))
            out.emplace_back();
        else if (line[0] != '#' && sscanf(line, "%llu %lf", &b, &ns) == 2 && !out.empty())
            out.back().push_back({(uint64_t)b, ns});
    }
    if (f)
        fclose(f);
    return out;
}

const uint64_t kClaimed[CALIB_NLEVELS] = {32 * KiB, 1 * MiB, 32 * MiB};  // the development host's hwloc claims

calib_sweep_sum summarise(const std::vector<calib_point> &v, double wait_pct = NAN)
{
    calib_sweep_sum s;
    memset(&s, 0, sizeof s);
    calib_sweep_knees(v.data(), (unsigned)v.size(), kClaimed, &s);
    s.wait_pct = wait_pct;
    return s;
}

// The issue's first ramp, rebuilt from its description: right after the install and build, LLC "2.32 MiB" at
// 53.9 ns, and an L2 knee of about 1.9 MiB above the 1 MiB claim: the other CPU's build held the LLC, so the sweep
// read L3 hits as 54 ns and lost the LLC at 2.3 MiB.
std::vector<calib_point> issue_sweep()
{
    std::vector<calib_point> v;
    const double pts[][2] = {
        {16, 1.1},    {32, 1.2},    {38, 3.8},    {64, 3.9},    {128, 3.9},   {256, 4.2},   {384, 4.4},   {512, 4.5},
        {768, 4.6},   {1024, 6.0},  {1216, 8.0},  {1448, 10.0}, {1536, 12.0}, {1720, 15.0}, {2048, 53.0},
        {2250, 53.9}, {2440, 110},  {2660, 150},  {2900, 165},  {3300, 170},  {4096, 172},  {8192, 172},
        {16384, 172}, {32768, 172}, {65536, 172}, {98304, 172}, {131072, 172},
    };
    for (const auto &p : pts)
        v.push_back({(uint64_t)(p[0] * 1024), p[1]});
    return v;
}

}  // namespace

TEST(CalibSweeps, FixturesHoldWhatTheirHeadersSay)
{
    auto q = read_sweeps("epyc-quiet-3.txt"), b = read_sweeps("epyc-busy-5.txt");
    ASSERT_EQ(q.size(), 3u);
    ASSERT_EQ(b.size(), 5u);
    for (const auto &s : q)
        EXPECT_GT(s.size(), 50u);
    // main's single sweep: the first busy one read the LLC at 3.48 MiB and 46.7 ns, the L2 knee at 2.16 MiB
    auto s = summarise(b[0]);
    EXPECT_NEAR(mib(s.knee[CALIB_LLC]), 3.48, 0.01);
    EXPECT_NEAR(mib(s.knee[CALIB_L2]), 2.16, 0.01);
    EXPECT_NEAR(s.plateau_ns[CALIB_LLC], 46.66, 0.01);
}

// The issue's shape is what one sweep finds (main used it as is), and the checks reject it twice over.
TEST(CalibSweeps, IssueShapeIsRejected)
{
    auto v = issue_sweep();
    calib_sweep_sum s = summarise(v);
    EXPECT_NEAR(mib(s.knee[CALIB_LLC]), 2.32, 0.05);
    EXPECT_NEAR(s.plateau_ns[CALIB_LLC], 53.9, 1e-9);
    EXPECT_GT(mib(s.knee[CALIB_L2]), 1.7);
    calib_verdict v1;
    EXPECT_EQ(calib_judge(&s, 1, kClaimed, &v1), 0u);
    EXPECT_NE(strstr(s.reject, "l2 knee"), nullptr) << s.reject;
    EXPECT_EQ(v1.knee[CALIB_LLC], 0u) << "nothing kept, no median";
    EXPECT_FALSE(v1.agree);

    // Without the L2 bleed, the LLC knee still lies inside the window its 53.9 ns was read from ([1.5, 3] MiB).
    calib_sweep_sum t = s;
    t.knee[CALIB_L2] = 1 * MiB;
    EXPECT_EQ(calib_judge(&t, 1, kClaimed, &v1), 0u);
    EXPECT_NE(strstr(t.reject, "inside the window"), nullptr) << t.reject;
}

// Recorded: five sweeps while the host was busy, three while it was quieter, judged as one calibration.  Every busy
// sweep gives way (L2 bleeding past its claim, or an LLC latency far above the quietest sweep's), and the size is
// the quiet sweeps' median.  main's calibration was one sweep: the first busy one, 3.48 MiB at 46.7 ns.
TEST(CalibSweeps, RecordedBusySweepsGiveWayToQuietOnes)
{
    auto b = read_sweeps("epyc-busy-5.txt"), q = read_sweeps("epyc-quiet-3.txt");
    std::vector<calib_sweep_sum> s;
    for (const auto &w : b)
        s.push_back(summarise(w));
    for (const auto &w : q)
        s.push_back(summarise(w));
    calib_verdict v;
    unsigned kept = calib_judge(s.data(), (unsigned)s.size(), kClaimed, &v);
    for (unsigned i = 0; i < b.size(); i++)
        EXPECT_NE(s[i].reject[0], 0) << "busy sweep " << i << " kept: LLC " << mib(s[i].knee[CALIB_LLC]) << " MiB at "
                                     << s[i].plateau_ns[CALIB_LLC] << " ns";
    EXPECT_EQ(kept, 2u);
    EXPECT_NE(strstr(s[5].reject, "l2 knee 1.32 MiB above its claim"), nullptr) << s[5].reject;
    EXPECT_GE(mib(v.knee[CALIB_LLC]), 4.5);
    EXPECT_LE(mib(v.knee[CALIB_LLC]), 6.5);
    EXPECT_LT(v.plateau_ns[CALIB_LLC], 16.0);
    EXPECT_LT(mib(v.knee[CALIB_L2]), 1.25);
    EXPECT_FALSE(v.agree) << "two kept are fewer than CALIB_MIN_SWEEPS";
}

TEST(CalibSweeps, ThreadThatWaitedForACpuIsRejected)
{
    auto q = read_sweeps("epyc-quiet-3.txt");
    std::vector<calib_sweep_sum> s = {summarise(q[1], 0.5), summarise(q[2], IB_BUSY_WAIT_PCT + 20),
                                      summarise(q[2], NAN)};
    calib_verdict v;
    EXPECT_EQ(calib_judge(s.data(), 3, kClaimed, &v), 2u);
    EXPECT_EQ(s[0].reject[0], 0);
    EXPECT_NE(strstr(s[1].reject, "waited 30 %"), nullptr) << s[1].reject;
    EXPECT_EQ(s[2].reject[0], 0) << "an unknown wait is no reason to reject";
}

// The LLC plateau moves: the same sweep read 40 % slower (another program in the LLC) gives way to the quiet one.
TEST(CalibSweeps, PlateauThatMovesIsRejected)
{
    auto q = read_sweeps("epyc-quiet-3.txt");
    calib_sweep_sum a = summarise(q[1]);
    calib_sweep_sum b = a, c = a;
    b.plateau_ns[CALIB_LLC] *= 1.4;
    b.knee[CALIB_LLC] /= 2;
    c.plateau_ns[CALIB_LLC] *= 1.2;  // within 25 %: kept
    std::vector<calib_sweep_sum> s = {b, a, c};
    calib_verdict v;
    EXPECT_EQ(calib_judge(s.data(), 3, kClaimed, &v), 2u);
    EXPECT_NE(strstr(s[0].reject, "above the quietest"), nullptr) << s[0].reject;
    EXPECT_EQ(v.knee[CALIB_LLC], a.knee[CALIB_LLC] & ~63ULL);
}

TEST(CalibSweeps, DramLikeLlcAndMissingKneeAreRejected)
{
    auto q = read_sweeps("epyc-quiet-3.txt");
    calib_sweep_sum a = summarise(q[1]), b = a, c = a;
    b.plateau_ns[CALIB_LLC] = b.plateau_ns[CALIB_NLEVELS] * 0.6;
    c.knee[CALIB_LLC] = 0;
    std::vector<calib_sweep_sum> s = {a, b, c};
    calib_verdict v;
    EXPECT_EQ(calib_judge(s.data(), 3, kClaimed, &v), 1u);
    EXPECT_NE(strstr(s[1].reject, "DRAM-like"), nullptr) << s[1].reject;
    EXPECT_NE(strstr(s[2].reject, "no LLC knee"), nullptr) << s[2].reject;
}

// Median and spread of the kept knees, and the agreement bound: 3 kept within CALIB_AGREE_SPREAD agree.
TEST(CalibSweeps, MedianSpreadAndAgreement)
{
    auto q = read_sweeps("epyc-quiet-3.txt");
    calib_sweep_sum base = summarise(q[1]);
    auto with_llc = [&](std::initializer_list<double> mibs) {
        std::vector<calib_sweep_sum> s;
        for (double m : mibs) {
            s.push_back(base);
            s.back().knee[CALIB_LLC] = (uint64_t)(m * (double)MiB);
        }
        return s;
    };
    calib_verdict v;
    auto s = with_llc({6.0, 5.0, 5.5});
    EXPECT_EQ(calib_judge(s.data(), 3, kClaimed, &v), 3u);
    EXPECT_EQ(v.knee[CALIB_LLC], (uint64_t)(5.5 * (double)MiB) & ~63ULL);
    EXPECT_EQ(v.knee_lo[CALIB_LLC], 5 * MiB);
    EXPECT_EQ(v.knee_hi[CALIB_LLC], 6 * MiB);
    EXPECT_NEAR(v.spread[CALIB_LLC], 1.0 / 5.5, 1e-3);
    EXPECT_TRUE(v.agree);
    s = with_llc({4.0, 6.0, 5.0, 8.0});  // even count: the lower middle, the one more surely inside the cache
    EXPECT_EQ(calib_judge(s.data(), 4, kClaimed, &v), 4u);
    EXPECT_EQ(v.knee[CALIB_LLC], 5 * MiB);
    EXPECT_NEAR(v.spread[CALIB_LLC], 4.0 / 5.0, 1e-3);
    EXPECT_FALSE(v.agree) << "spread 80 % is over the bound";
    s = with_llc({5.0, 5.2});
    calib_judge(s.data(), 2, kClaimed, &v);
    EXPECT_FALSE(v.agree) << "two sweeps are too few";
}

TEST(CalibCheck, InsideLlcLikeOutsideNot)
{
    char why[160];
    // the development host's figures: LLC 14 ns, DRAM 155 ns; threshold sqrt(14 * 155) = 46.6 ns
    EXPECT_EQ(calib_check_judge(14, 155, 20, 130, why, sizeof why), 1);
    EXPECT_STREQ(why, "");
    EXPECT_EQ(calib_check_judge(14, 155, 98, 130, why, sizeof why), 0);
    EXPECT_STREQ(why, "inside 98 ns, DRAM-like");
    EXPECT_EQ(calib_check_judge(14, 155, 15, 16, why, sizeof why), 0);
    EXPECT_STREQ(why, "outside 16 ns, still LLC-like");
    EXPECT_EQ(calib_check_judge(0, 155, 15, 160, why, sizeof why), 0);
    EXPECT_EQ(calib_check_judge(14, 14, 15, 160, why, sizeof why), 0);
}

// On this machine: a cached "LLC" of 64 KiB cannot pass (a chase over 102 KiB reads nowhere near DRAM on any
// machine), the check costs well under a second, and with the stop flag up nothing is measured again.
TEST(CalibCheck, WrongCachedSizeFailsItsCheckCheaply)
{
    char why[256] = "";
    struct topo *t = nullptr;
    ASSERT_EQ(topo_load(&t, nullptr, why, sizeof why), 0) << why;
    auto c = std::make_unique<struct calib>();
    memset(c.get(), 0, sizeof(*c));
    c->have_caches = 1;
    c->claimed[CALIB_LLC] = 32 * MiB;
    c->measured[CALIB_LLC] = 64 * KiB;
    c->plateau_ns[CALIB_LLC] = 14;
    c->plateau_ns[CALIB_NLEVELS] = 155;
    atomic_int stop{1};
    struct calib_check r;
    EXPECT_EQ(calib_recheck(c.get(), t, topo_pu_os(t, 0), &stop, &r, why, sizeof why), -EINTR);
    EXPECT_EQ(r.size, 64 * KiB);
    EXPECT_EQ(r.held, 0);
    EXPECT_EQ(r.remeasured, 0);
    EXPECT_NE(strstr(r.why, "still LLC-like"), nullptr) << r.why;
    EXPECT_GT(r.inside_ns, 0);
    EXPECT_LT(r.cost_s, 1.0);
    EXPECT_EQ(c->measured[CALIB_LLC], 64 * KiB) << "not measured again";
    // nothing measured to check: -ENOENT, nothing done
    c->measured[CALIB_LLC] = 0;
    EXPECT_EQ(calib_recheck(c.get(), t, topo_pu_os(t, 0), nullptr, &r, why, sizeof why), -ENOENT);
    topo_destroy(t);
}

TEST(CalibCache, SweepSummariesRoundTrip)
{
    CacheDir dir;
    char why[256] = "";
    auto c = std::make_unique<struct calib>(), d = std::make_unique<struct calib>();
    ASSERT_EQ(calib_open(c.get(), "test-fp-sweeps", why, sizeof why), 0) << why;
    fill(*c);
    c->spread[CALIB_LLC] = 0.25;
    c->knee_lo[CALIB_LLC] = 3 * MiB;
    c->knee_hi[CALIB_LLC] = 4 * MiB;
    c->nsweeps = 2;
    c->sweeps[0] = summarise(recorded(), 1.5);
    c->sweeps[1] = summarise(issue_sweep(), NAN);
    snprintf(c->sweeps[1].reject, sizeof c->sweeps[1].reject, "l2 knee 1.8 MiB above its claim of 1 MiB");
    snprintf(c->caches_note, sizeof c->caches_note, "1 of 2 sweeps passed their checks");
    ASSERT_EQ(calib_save(c.get(), why, sizeof why), 0) << why;
    ASSERT_EQ(calib_open(d.get(), "test-fp-sweeps", why, sizeof why), 0) << why;
    ASSERT_EQ(d->have_caches, 1);
    EXPECT_DOUBLE_EQ(d->spread[CALIB_LLC], 0.25);
    EXPECT_EQ(d->knee_lo[CALIB_LLC], 3 * MiB);
    EXPECT_EQ(d->knee_hi[CALIB_LLC], 4 * MiB);
    ASSERT_EQ(d->nsweeps, 2u);
    for (unsigned i = 0; i < 2; i++)
        for (int l = 0; l < CALIB_NLEVELS; l++)
            EXPECT_EQ(d->sweeps[i].knee[l], c->sweeps[i].knee[l]) << i << " " << l;
    EXPECT_DOUBLE_EQ(d->sweeps[0].wait_pct, 1.5);
    EXPECT_TRUE(std::isnan(d->sweeps[1].wait_pct));
    EXPECT_STREQ(d->sweeps[1].reject, c->sweeps[1].reject);
    EXPECT_STREQ(d->caches_note, c->caches_note);
    // An implausible spread drops the whole caches section: it is measured again, never trusted.
    json_t *doc = load(c->path);
    json_object_set_new(json_object_get(json_object_get(doc, "caches"), "spread"), "llc", json_real(-1));
    ASSERT_EQ(json_dump_file(doc, c->path, 0), 0);
    json_decref(doc);
    ASSERT_EQ(calib_open(d.get(), "test-fp-sweeps", why, sizeof why), 0) << why;
    EXPECT_EQ(d->have_caches, 0);
}

// When sweeping stops: what is used, and the note that says what fell short.
TEST(CalibSweeps, SettleSaysWhatFellShort)
{
    auto q = read_sweeps("epyc-quiet-3.txt"), b = read_sweeps("epyc-busy-5.txt");
    char note[256];
    calib_verdict v;
    // the three quiet sweeps, every one of whose threads waited: the two consistent apart from that are used
    std::vector<calib_sweep_sum> s;
    for (const auto &w : q)
        s.push_back(summarise(w, 40.0));
    calib_settle(s.data(), 3, kClaimed, &v, note, sizeof note);
    EXPECT_EQ(v.nkept, 2u);
    EXPECT_GE(mib(v.knee[CALIB_LLC]), 4.5);
    EXPECT_LE(mib(v.knee[CALIB_LLC]), 6.5);
    EXPECT_NE(strstr(note, "every sweep of 3 was rejected, some waited for a CPU (40-40 %"), nullptr) << note;
    EXPECT_NE(strstr(s[0].reject, "waited 40 %"), nullptr) << "each sweep keeps its own verdict: " << s[0].reject;
    // the five busy ones: one passes alone (its LLC at 128 ns is not over half its own DRAM's 378 ns), marked
    s.clear();
    for (const auto &w : b)
        s.push_back(summarise(w));
    calib_settle(s.data(), 5, kClaimed, &v, note, sizeof note);
    EXPECT_EQ(v.nkept, 1u);
    EXPECT_EQ(s[1].reject[0], 0);
    EXPECT_STREQ(note, "only 1 of 5 sweeps passed their checks: their median is used");
    // without it none is consistent even apart from waiting: the median of all, said to be unchecked
    s.erase(s.begin() + 1);
    calib_settle(s.data(), 4, kClaimed, &v, note, sizeof note);
    EXPECT_EQ(v.nkept, 4u);
    EXPECT_FALSE(v.agree);
    EXPECT_NEAR(mib(v.knee[CALIB_LLC]), 3.21, 0.01) << "the lower middle of 3.11, 3.21, 3.48 and 3.92 MiB";
    EXPECT_NE(strstr(note, "no sweep of 4 passed its checks (first: l2 knee 2.16 MiB above"), nullptr) << note;
    // too few kept, and kept but spread: their median, said so; kept and agreeing: no note
    s.clear();
    for (const auto &w : q)
        s.push_back(summarise(w));
    calib_settle(s.data(), 3, kClaimed, &v, note, sizeof note);
    EXPECT_STREQ(note, "only 2 of 3 sweeps passed their checks: their median is used");
    calib_sweep_sum k = summarise(q[1]);
    std::vector<calib_sweep_sum> t = {k, k, k};
    t[1].knee[CALIB_LLC] = 4 * MiB;
    t[2].knee[CALIB_LLC] = 9 * MiB;
    calib_settle(t.data(), 3, kClaimed, &v, note, sizeof note);
    EXPECT_NE(strstr(note, "3 of 3 sweeps passed their checks and their LLC knees spread"), nullptr) << note;
    t[1].knee[CALIB_LLC] = k.knee[CALIB_LLC] + 64 * KiB;
    t[2].knee[CALIB_LLC] = k.knee[CALIB_LLC] - 64 * KiB;
    calib_settle(t.data(), 3, kClaimed, &v, note, sizeof note);
    EXPECT_STREQ(note, "");
    EXPECT_TRUE(v.agree);
}
