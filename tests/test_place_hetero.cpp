// Heterogeneous cores (placement/coloc/pl_hetero.h): the Hungarian solver against brute force on seeded random matrices
// (square and rectangular), its tie-break against the lexicographically first optimum, a case greedy gets wrong, the
// model's costs on hand-made profiles (exact numbers), 16 applications on 16 cores in time, and `ibench place hetero`
// through the binary.
#include <gtest/gtest.h>
#include <jansson.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "ib_rand.h"
#include "pl_hetero.h"
}
#include "test_support.h"

namespace {

// splitmix64 (ib_rand.h): seeded, the same sequence everywhere
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next() { return ib_splitmix64(&s); }
    unsigned below(unsigned n) { return (unsigned)(next() % n); }
    double unit() { return (double)(next() >> 11) / 9007199254740992.0; }
};

// Every injective map of n rows into m columns, in lexicographic order: the minimum total (summed in row order, as the
// solver sums) and the first assignment reaching it.
void brute(const std::vector<double> &c, unsigned n, unsigned m, unsigned i, std::vector<unsigned> &cur,
           std::vector<bool> &used, double sum, double &best, std::vector<unsigned> &arg)
{
    if (i == n) {
        if (sum < best)
            best = sum, arg = cur;
        return;
    }
    for (unsigned j = 0; j < m; j++) {
        if (used[j])
            continue;
        used[j] = true, cur[i] = j;
        brute(c, n, m, i + 1, cur, used, sum + c[i * m + j], best, arg);
        used[j] = false;
    }
}

double brute_min(const std::vector<double> &c, unsigned n, unsigned m, std::vector<unsigned> *arg = nullptr)
{
    std::vector<unsigned> cur(n), a(n);
    std::vector<bool> used(m);
    double best = INFINITY;
    brute(c, n, m, 0, cur, used, 0.0, best, a);
    if (arg)
        *arg = a;
    return best;
}

TEST(PlaceHetero, HungarianEqualsBruteForce)
{
    Rng rng(4);
    unsigned rect = 0;
    for (int k = 0; k < 500; k++) {
        unsigned m = 1 + rng.below(8), n = 1 + rng.below(m);
        rect += n < m;
        bool ints = k % 2; // half small integers (many ties), half real numbers
        std::vector<double> c(n * m);
        for (double &x : c)
            x = ints ? (double)rng.below(10) : rng.unit() * 100;
        std::vector<unsigned> a(n), arg;
        double total = NAN;
        ASSERT_EQ(pl_hungarian(c.data(), n, m, a.data(), &total), 0);
        double best = brute_min(c, n, m, &arg);
        ASSERT_EQ(total, best) << "matrix " << k << ": " << n << "x" << m;
        std::vector<bool> seen(m);
        double sum = 0;
        for (unsigned i = 0; i < n; i++) {
            ASSERT_LT(a[i], m);
            ASSERT_FALSE(seen[a[i]]) << "column used twice";
            seen[a[i]] = true;
            sum += c[i * m + a[i]];
        }
        ASSERT_EQ(sum, total);
        if (ints) { // the tie-break: the lexicographically first optimum, exactly
            std::vector<unsigned> l(n);
            double lt = NAN;
            ASSERT_EQ(pl_assign_lexmin(c.data(), n, m, l.data(), &lt), 0);
            ASSERT_EQ(lt, best) << "matrix " << k;
            ASSERT_EQ(l, arg) << "matrix " << k << ": not the first optimum";
        }
    }
    EXPECT_GT(rect, 200u) << "rectangular cases drawn";
}

TEST(PlaceHetero, HungarianRefusesBadInput)
{
    double c[4] = {1, 2, 3, 4}, t;
    unsigned a[2];
    EXPECT_EQ(pl_hungarian(c, 0, 2, a, &t), -EINVAL);
    EXPECT_EQ(pl_hungarian(c, 2, 1, a, &t), -EINVAL);
    c[3] = NAN;
    EXPECT_EQ(pl_hungarian(c, 2, 2, a, &t), -EINVAL);
}

// A profile with the given shared-resource figures (every SoI measured, caused told apart from 0).
struct S {
    const char *soi;
    double tolerated, caused;
};
struct Prof {
    struct profile p;
    Prof(const char *name, const std::vector<S> &sois)
    {
        profile_init(&p);
        p.name = strdup(name);
        p.sois = static_cast<struct profile_soi *>(calloc(sois.size() + 1, sizeof *p.sois));
        for (const S &d : sois) {
            struct profile_soi *s = &p.sois[p.nsois++];
            profile_soi_init(s);
            s->soi = strdup(d.soi);
            s->status = PROFILE_MEASURED;
            s->tolerated = d.tolerated;
            s->have_caused = 1;
            s->caused.value = d.caused;
            s->caused.se = 0.5;
            s->caused.distinguishable = 1;
        }
    }
    ~Prof() { profile_free(&p); }
    Prof(const Prof &) = delete;
    Prof &operator=(const Prof &) = delete;
};

const char *const kMemBw[] = {"mem-bw"};

// Greedy (each application in turn to its best free core) loses here; the exact assignment is found, with exact
// figures.  One shared resource, mem-bw; big:1, little:1.
//   A: tolerates 35 on big, 30 on little; causes 30 on both.       B: tolerates 80 on big, 20 on little; causes 40.
//   A's others = B's 40: cost 5 on big, 10 on little.               B's others = A's 30: cost 0 on big, 10 on little.
//   Greedy: A takes big (5), B gets little (10): 15.  Exact: A little (10), B big (0): 10, average 5.
TEST(PlaceHetero, ExactBeatsGreedy)
{
    Prof ab("A", {{"mem-bw", 35, 30}}), al("A", {{"mem-bw", 30, 30}});
    Prof bb("B", {{"mem-bw", 80, 40}}), bl("B", {{"mem-bw", 20, 40}});
    const struct profile *pa[] = {&ab.p, &al.p}, *pb[] = {&bb.p, &bl.p};
    struct pl_hetero_app apps[] = {{"A", pa}, {"B", pb}};
    const char *types[] = {"big", "little"};
    unsigned count[] = {1, 1};
    struct pl_hetero_machine m = {types, count, 2};
    struct pl_hetero_opts o = {kMemBw, 1, true};
    struct pl_hetero_result r;
    char why[256];
    ASSERT_EQ(pl_hetero_assign(apps, 2, &m, &o, &r, why, sizeof why), 0) << why;
    EXPECT_EQ(r.cost[0], 5.0);
    EXPECT_EQ(r.cost[1], 10.0);
    EXPECT_EQ(r.cost[2], 0.0);
    EXPECT_EQ(r.cost[3], 10.0);
    EXPECT_EQ(r.core[0], 1u);
    EXPECT_EQ(r.core[1], 0u);
    EXPECT_EQ(r.type[0], 1u);
    EXPECT_EQ(r.total, 10.0);
    EXPECT_EQ(r.average, 5.0);
    EXPECT_EQ(r.greedy_core[0], 0u);
    EXPECT_EQ(r.greedy_total, 15.0);
    // A on little: others cause 40 (B on big), A tolerates 30: 10 points over, the why of its cost
    const struct pl_hetero_cell *c = &r.cell[(0 * 2 + 1) * 1 + 0];
    EXPECT_EQ(c->others, 40.0);
    EXPECT_EQ(c->tolerated, 30.0);
    EXPECT_EQ(c->excess, 10.0);
    EXPECT_EQ(r.placed_total, 10.0) << "B's caused is 40 on both types: the bound is what the profiles predict";
    pl_hetero_result_free(&r);
}

// The objective counts a co-runner at its largest caused figure over the core types (the bound); "placed" takes it on
// the type it was given.  B causes 40 on little but 20 on big, where it goes: A then suffers nothing.
TEST(PlaceHetero, PlacedTakesCoRunnersOnTheirOwnType)
{
    Prof ab("A", {{"mem-bw", 35, 30}}), al("A", {{"mem-bw", 30, 30}});
    Prof bb("B", {{"mem-bw", 80, 20}}), bl("B", {{"mem-bw", 20, 40}});
    const struct profile *pa[] = {&ab.p, &al.p}, *pb[] = {&bb.p, &bl.p};
    struct pl_hetero_app apps[] = {{"A", pa}, {"B", pb}};
    const char *types[] = {"big", "little"};
    unsigned count[] = {1, 1};
    struct pl_hetero_machine m = {types, count, 2};
    struct pl_hetero_opts o = {kMemBw, 1, true};
    struct pl_hetero_result r;
    char why[256];
    ASSERT_EQ(pl_hetero_assign(apps, 2, &m, &o, &r, why, sizeof why), 0) << why;
    EXPECT_EQ(r.total, 10.0);
    EXPECT_EQ(r.core[1], 0u);
    EXPECT_EQ(r.placed[0], 0.0) << "B presses 20 on big, A tolerates 30 on little";
    EXPECT_EQ(r.placed_total, 0.0);
    pl_hetero_result_free(&r);
}

// Ties: the first application gets the lowest-numbered core any optimal assignment gives it, then the next.
TEST(PlaceHetero, TiesBrokenLexicographically)
{
    // every cost 0 (everything tolerated): applications fill the cores in order, whatever their names
    Prof q("Q", {{"mem-bw", 100, 10}});
    const struct profile *pq[] = {&q.p, &q.p};
    struct pl_hetero_app apps[] = {{"d", pq}, {"c", pq}, {"b", pq}};
    const char *types[] = {"little", "big"};
    unsigned count[] = {2, 2};
    struct pl_hetero_machine m = {types, count, 2};
    struct pl_hetero_opts o = {kMemBw, 1, true};
    struct pl_hetero_result r;
    char why[256];
    ASSERT_EQ(pl_hetero_assign(apps, 3, &m, &o, &r, why, sizeof why), 0) << why;
    EXPECT_EQ(r.core[0], 0u);
    EXPECT_EQ(r.core[1], 1u);
    EXPECT_EQ(r.core[2], 2u);
    EXPECT_EQ(r.type[2], 1u) << "core 2 is the first big core";
    pl_hetero_result_free(&r);
    // a real tie between two optima: {3,3,1} for both rows; (0,2) and (2,0) both total 4: (0,2) is taken
    double c[] = {3, 3, 1, 3, 3, 1};
    unsigned a[2];
    double t;
    ASSERT_EQ(pl_assign_lexmin(c, 2, 3, a, &t), 0);
    EXPECT_EQ(t, 4.0);
    EXPECT_EQ(a[0], 0u);
    EXPECT_EQ(a[1], 2u);
}

// 16 applications on 16 cores of 4 types, random seeded profiles: under 100 ms, and (on 2 types of 8, where every
// split of the mix can be tried: C(16,8) = 12870) the optimum equals the best split.
TEST(PlaceHetero, SixteenOnSixteenInTime)
{
    const char *res[] = {"mem-cap", "mem-bw", "llc-cap", "llc-bw"};
    for (unsigned ntypes : {4u, 2u}) {
        Rng rng(16 + ntypes);
        std::vector<std::unique_ptr<Prof>> profs;
        std::vector<std::vector<const struct profile *>> per(16);
        for (unsigned a = 0; a < 16; a++)
            for (unsigned t = 0; t < ntypes; t++) {
                std::vector<S> s;
                for (const char *r : res)
                    s.push_back({r, 6.25 * rng.below(17), 0.1 * rng.below(150)});
                profs.emplace_back(new Prof("app", s));
                per[a].push_back(&profs.back()->p);
            }
        std::vector<struct pl_hetero_app> apps(16);
        for (unsigned a = 0; a < 16; a++)
            apps[a] = {"app", per[a].data()};
        const char *types[] = {"t0", "t1", "t2", "t3"};
        unsigned count[4] = {16 / ntypes, 16 / ntypes, 16 / ntypes, 16 / ntypes};
        struct pl_hetero_machine m = {types, count, ntypes};
        struct pl_hetero_opts o = {res, 4, true};
        struct pl_hetero_result r;
        char why[256];
        auto t0 = std::chrono::steady_clock::now();
        ASSERT_EQ(pl_hetero_assign(apps.data(), 16, &m, &o, &r, why, sizeof why), 0) << why;
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_LT(ms, 100.0) << ntypes << " types";
        printf("16 applications, %u core types: %.3f ms\n", ntypes, ms);
        if (ntypes == 2) {
            double best = INFINITY;
            for (unsigned mask = 0; mask < (1u << 16); mask++) {
                if (__builtin_popcount(mask) != 8)
                    continue;
                double sum = 0;
                for (unsigned a = 0; a < 16; a++)
                    sum += r.cost[a * 2 + ((mask >> a) & 1)] * 1e6;
                best = std::min(best, sum);
            }
            EXPECT_EQ(r.total * 1e6, best);
        }
        pl_hetero_result_free(&r);
    }
}

TEST(PlaceHetero, RefusesBadInput)
{
    Prof q("Q", {{"mem-bw", 100, 10}});
    const struct profile *pq[] = {&q.p};
    struct pl_hetero_app apps[] = {{"a", pq}, {"b", pq}};
    const char *types[] = {"big"};
    unsigned count[] = {1};
    struct pl_hetero_machine m = {types, count, 1};
    struct pl_hetero_opts o = {nullptr, 0, true};
    struct pl_hetero_result r;
    char why[256];
    EXPECT_EQ(pl_hetero_assign(apps, 2, &m, &o, &r, why, sizeof why), -EINVAL);
    EXPECT_STREQ(why, "2 applications for 1 cores: one application per core");
}

// ---- the command ---------------------------------------------------------------------------------------------------

using ib_test::sh;

const std::string kCorun = IBENCH_FIXTURES "/../../docs/data/corun/";
const std::string kLittle = IBENCH_FIXTURES "/../../examples/hetero/";

std::string app_arg(const char *a)
{
    return std::string(" --app ") + a + "=big:" + kCorun + a + ".json,little:" + kLittle + a + "-little.json";
}

// The example of docs/placement.md: the table, and --json whose figures are the library's on the same files.
TEST(PlaceHeteroCli, TableAndJson)
{
    const char *names[] = {"disk", "dram", "llc", "memcached", "redis", "xz"};
    std::string cmd = std::string(IBENCH_BIN) + " place hetero --cores big:2,little:4";
    for (const char *a : names)
        cmd += app_arg(a);
    int rc;
    std::string o = sh(cmd, &rc);
    ASSERT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("6 application(s) on 6 cores (big:2, little:4); shared: mem-cap, mem-bw, llc-cap, llc-bw"),
              std::string::npos) << o;
    EXPECT_NE(o.find("average interference"), std::string::npos) << o;
    // the library on the same profiles
    std::vector<struct profile> p(12);
    std::vector<const struct profile *> pp(12);
    std::vector<struct pl_hetero_app> apps(6);
    char why[512];
    for (unsigned a = 0; a < 6; a++) {
        ASSERT_EQ(profile_read((kCorun + names[a] + ".json").c_str(), &p[2 * a], why, sizeof why), 0) << why;
        ASSERT_EQ(profile_read((kLittle + names[a] + "-little.json").c_str(), &p[2 * a + 1], why, sizeof why), 0)
            << why;
        pp[2 * a] = &p[2 * a], pp[2 * a + 1] = &p[2 * a + 1];
        apps[a] = {names[a], &pp[2 * a]};
    }
    const char *types[] = {"big", "little"};
    unsigned count[] = {2, 4};
    struct pl_hetero_machine m = {types, count, 2};
    struct pl_hetero_opts opt = {nullptr, 0, true};
    struct pl_hetero_result r;
    ASSERT_EQ(pl_hetero_assign(apps.data(), 6, &m, &opt, &r, why, sizeof why), 0) << why;
    char line[128];
    snprintf(line, sizeof line, "average interference %.2f points (total %.2f), exact", r.average, r.total);
    EXPECT_NE(o.find(line), std::string::npos) << line << "\n" << o;
    o = sh(cmd + " --json", &rc);
    ASSERT_EQ(rc, 0) << o;
    json_error_t e;
    json_t *doc = json_loads(o.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text;
    EXPECT_STREQ(json_string_value(json_object_get(doc, "command")), "place hetero");
    EXPECT_EQ(json_real_value(json_object_get(doc, "total")), r.total);
    EXPECT_EQ(json_real_value(json_object_get(json_object_get(doc, "greedy"), "total")), r.greedy_total);
    json_t *arr = json_object_get(doc, "applications");
    ASSERT_EQ(json_array_size(arr), 6u);
    for (unsigned a = 0; a < 6; a++) {
        json_t *x = json_array_get(arr, a);
        EXPECT_EQ(json_integer_value(json_object_get(x, "core")), (json_int_t)r.core[a]) << names[a];
        EXPECT_STREQ(json_string_value(json_object_get(x, "type")), types[r.type[a]]) << names[a];
    }
    json_decref(doc);
    pl_hetero_result_free(&r);
    for (auto &x : p)
        profile_free(&x);
}

// Bad input: exit 2 and exactly one line.
TEST(PlaceHeteroCli, BadInputOneLine)
{
    const std::string bin = std::string(IBENCH_BIN) + " place hetero";
    const std::string big = kCorun + "xz.json", little = kLittle + "xz-little.json";
    struct {
        std::string args, says;
    } cases[] = {
        {" --cores big:1,little:1 --app xz=big:" + big + ",medium:" + little, "unknown core type 'medium'"},
        {" --cores big:1,little:1 --app xz=big:" + big, "--app xz: no profile for core type little"},
        {" --cores big:1 --app a=big:" + big + " --app b=big:" + big, "2 applications for 1 cores"},
        {" --cores big:1 --app xz=big:" IBENCH_FIXTURES "/profile-invalid-tolerated.json", "sois[0].tolerated"},
        {" --cores big:x --app xz=big:" + big, "--cores 'big:x'"},
        {" --cores big:1,big:1 --app xz=big:" + big, "named twice"},
        {" --app xz=big:" + big, "--cores TYPE:N"},
    };
    for (const auto &c : cases) {
        int rc;
        std::string o = sh(bin + c.args, &rc);
        EXPECT_EQ(rc, 2) << c.args << ": " << o;
        EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
        EXPECT_EQ(o.rfind("ibench place hetero: ", 0), 0u) << o;
        EXPECT_NE(o.find(c.says), std::string::npos) << c.says << " in: " << o;
    }
}

} // namespace
