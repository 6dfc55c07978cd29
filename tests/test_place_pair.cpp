// The co-location check on profiles (placement/coloc/pl_coloc.h) on hand-made profiles: safety both ways, the deciding
// resource, additive pressure, the unknown rule, the margin, the fit's monotonicity (a co-runner that causes nothing
// never ranks below one that causes something), shape warnings; `ibench place pair` and `place predict` through
// the binary.
#include <gtest/gtest.h>
#include <jansson.h>
#include <unistd.h>

#include <cmath>
#include <memory>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "pl_coloc.h"
#include "pl_sim.h"
#include "profile_fmt.h"
}
#include "test_support.h"

namespace {

constexpr double kNan = NAN;

// One SoI of a hand-made profile: measured (tolerated, caused, se, distinguishable) or skipped.
struct S {
    const char *name;
    double tolerated = 100, caused = 0, se = 1;
    int dist = 1;
    bool skipped = false;
};
S skip(const char *name)
{
    S s{name};
    s.skipped = true;
    return s;
}

struct Prof {
    struct profile p;
    Prof(const char *name, const std::vector<S> &sois, const char *model = "CPU X", int cpus = 2)
    {
        profile_init(&p);
        p.name = strdup(name);
        p.cpu_model = strdup(model);
        p.machine_cpus = cpus;
        p.qos = 0.9;
        p.sois = static_cast<struct profile_soi *>(calloc(sois.size() + 1, sizeof *p.sois));
        for (const S &d : sois) {
            struct profile_soi *s = &p.sois[p.nsois++];
            profile_soi_init(s);
            s->soi = strdup(d.name);
            if (d.skipped) {
                s->status = PROFILE_SKIPPED;
                s->reason = strdup("no other CPU shares it");
                continue;
            }
            s->status = PROFILE_MEASURED;
            s->tolerated = d.tolerated;
            s->have_caused = 1;
            s->caused.value = d.caused;
            s->caused.se = d.se;
            s->caused.distinguishable = d.dist;
        }
    }
    ~Prof() { profile_free(&p); }
    Prof(const Prof &) = delete;
    Prof &operator=(const Prof &) = delete;
};

struct Check {
    struct pl_coloc_result r {};
    int rc;
    char why[256] = "";
    Check(std::vector<const Prof *> apps, double margin = PL_COLOC_MARGIN, bool pessimistic = true,
          bool terse = false, bool established = false)
    {
        std::vector<const struct profile *> g;
        for (auto *a : apps)
            g.push_back(&a->p);
        // the headroom rule (before 1.7, --decide headroom): these profiles carry tolerated figures, not curves
        struct pl_coloc_opts o = {margin, pessimistic, terse, established, PL_DECIDE_HEADROOM, PL_WM_PRODUCT, false};
        rc = pl_coloc_check(g.data(), (unsigned)g.size(), &o, &r, why, sizeof why);
    }
    ~Check() { pl_coloc_result_free(&r); }
    const struct pl_coloc_cell &cell(unsigned app, const char *res) const
    {
        for (unsigned k = 0; k < r.nres; k++)
            if (!strcmp(r.res[k], res))
                return r.cell[app * r.nres + k];
        ADD_FAILURE() << "no resource " << res;
        return r.cell[0];
    }
    std::string deciding() const { return r.deciding ? r.deciding : ""; }
    std::string uncertain() const { return r.uncertain ? r.uncertain : ""; }
};

// --refuse established (the front ends' default): a group is refused only when a break is established beyond the
// profiles' uncertainty; a figure that cannot be told from 0 makes it uncertain, never refused.
TEST(PlacePair, EstablishedRefusesOnlyBeyondTheUncertainty)
{
    // the case of memcached's disk-cap 20.7 +- 54.9 (not distinguishable) against a tenant tolerating 95 [95, 100]
    Prof tenant("tenant", {{"disk-cap", 95, 0}});
    tenant.p.sois[0].bracket[0] = 95;
    tenant.p.sois[0].bracket[1] = 100;
    Prof mc("memcached", {{"disk-cap", 100, 20.7, 54.9, 0}});
    {
        Check old({&tenant, &mc}, PL_COLOC_MARGIN, true, false, false);
        ASSERT_EQ(old.rc, 0) << old.why;
        EXPECT_FALSE(old.r.safe); // pessimistic: 20.7 + 2 x 54.9 counted, over 95 - 5
        EXPECT_EQ(old.r.verdict, PL_COLOC_UNSAFE);
    }
    Check est({&tenant, &mc}, PL_COLOC_MARGIN, true, false, true);
    ASSERT_EQ(est.rc, 0) << est.why;
    EXPECT_TRUE(est.r.safe);
    EXPECT_EQ(est.r.verdict, PL_COLOC_UNCERTAIN);
    EXPECT_EQ(est.deciding(), "");
    EXPECT_TRUE(est.cell(0, "disk-cap").uncertain);
    EXPECT_DOUBLE_EQ(est.cell(0, "disk-cap").others_lo, 0.0);
    EXPECT_NE(est.uncertain().find("disk-cap (tenant: 100.0 caused as counted > 95.0 tolerated - 5 margin, but 0.0 "
                                   "established"), std::string::npos) << est.uncertain();

    // an established break: 60 +- 5 (at least 50) against a victim tolerating 25 [25, 37.5]: 50 > 37.5 - 5
    Prof victim("victim", {{"disk-write", 25, 0}});
    victim.p.sois[0].bracket[0] = 25;
    victim.p.sois[0].bracket[1] = 37.5;
    Prof writer("writer", {{"disk-write", 100, 60, 5, 1}});
    Check brk({&victim, &writer}, PL_COLOC_MARGIN, true, false, true);
    ASSERT_EQ(brk.rc, 0) << brk.why;
    EXPECT_FALSE(brk.r.safe);
    EXPECT_EQ(brk.r.verdict, PL_COLOC_UNSAFE);
    EXPECT_NE(brk.deciding().find("disk-write (writer breaks victim: caused writer 60.0 +- 5.0, at least 50.0 beyond 2 "
                                  "se > 37.5 tolerated at most"), std::string::npos) << brk.deciding();

    // the boundary: at least 32.5 is not above 37.5 - 5 (uncertain); at least 32.6 is (refused)
    Prof w1("w1", {{"disk-write", 100, 42.5, 5, 1}}), w2("w2", {{"disk-write", 100, 42.6, 5, 1}});
    Check b1({&victim, &w1}, PL_COLOC_MARGIN, true, false, true), b2({&victim, &w2}, PL_COLOC_MARGIN, true, false, true);
    EXPECT_EQ(b1.r.verdict, PL_COLOC_UNCERTAIN) << b1.deciding();
    EXPECT_EQ(b2.r.verdict, PL_COLOC_UNSAFE) << b2.uncertain();

    // an unknown tolerance (a skipped SoI) with pessimistic unknowns: uncertain, not refused
    Prof sk("skipped", {skip("disk-write"), {"mem-bw", 100, 0}});
    Check u({&sk, &writer}, PL_COLOC_MARGIN, true, false, true);
    EXPECT_EQ(u.r.verdict, PL_COLOC_UNCERTAIN) << u.deciding();
    Check u0({&sk, &writer}, PL_COLOC_MARGIN, true, false, false);
    EXPECT_EQ(u0.r.verdict, PL_COLOC_UNSAFE);
}

// With exact figures (se 0, no bracket) the established rule decides exactly as the reading it refines: 2000 random
// pairs and triples, both unknown rules.
TEST(PlacePair, EstablishedDecidesAsBeforeOnExactFigures)
{
    std::mt19937 g(28);
    std::uniform_real_distribution<double> u(0, 100);
    const char *res[] = {"mem-bw", "llc-cap", "disk-write"};
    int unsafe = 0;
    for (int i = 0; i < 2000; i++) {
        std::vector<std::unique_ptr<Prof>> ps;
        unsigned n = 2 + (unsigned)(i % 2);
        for (unsigned k = 0; k < n; k++) {
            std::vector<S> ss;
            for (const char *r : res)
                ss.push_back({r, std::round(u(g) / 5) * 5, std::round(u(g) / 2) * 0.5, 0, 1});
            ps.push_back(std::make_unique<Prof>(("P" + std::to_string(k)).c_str(), ss));
        }
        std::vector<const Prof *> v;
        for (auto &p : ps)
            v.push_back(p.get());
        for (bool pess : {true, false}) {
            Check a(v, PL_COLOC_MARGIN, pess, false, false), b(v, PL_COLOC_MARGIN, pess, false, true);
            ASSERT_EQ(a.r.safe, b.r.safe) << i;
            EXPECT_NE(b.r.verdict, PL_COLOC_UNCERTAIN) << i << ": " << b.uncertain();
            unsafe += !a.r.safe;
        }
    }
    EXPECT_GT(unsafe, 400); // both kinds of answer were exercised
    EXPECT_LT(unsafe, 3600);
}

TEST(PlacePair, SafeRanksBeforeUncertainWhateverTheFit)
{
    EXPECT_TRUE(pl_coloc_better(PL_COLOC_SAFE, -50, PL_COLOC_UNCERTAIN, 80));
    EXPECT_FALSE(pl_coloc_better(PL_COLOC_UNCERTAIN, 80, PL_COLOC_SAFE, -50));
    EXPECT_TRUE(pl_coloc_better(PL_COLOC_UNCERTAIN, 3, PL_COLOC_UNCERTAIN, 2));
    EXPECT_FALSE(pl_coloc_better(PL_COLOC_SAFE, 2, PL_COLOC_SAFE, 2));
    EXPECT_STREQ(pl_coloc_verdict_name(PL_COLOC_UNCERTAIN), "uncertain");
}

TEST(PlacePair, OneResourceOverToleranceIsUnsafeAndNamed)
{
    Prof a("A", {{"mem-bw", 30, 10}, {"llc-cap", 80, 5}});
    Prof b("B", {{"mem-bw", 90, 40}, {"llc-cap", 90, 5}});
    Check c({&a, &b});
    ASSERT_EQ(c.rc, 0) << c.why;
    EXPECT_FALSE(c.r.safe);
    EXPECT_DOUBLE_EQ(c.cell(0, "mem-bw").headroom, 30 - 5 - 40);
    EXPECT_DOUBLE_EQ(c.cell(1, "mem-bw").headroom, 90 - 5 - 10);
    EXPECT_DOUBLE_EQ(c.cell(0, "llc-cap").headroom, 80 - 5 - 5);
    // only mem-bw decides, and in B -> A's direction
    EXPECT_NE(c.deciding().find("mem-bw (B breaks A: 40.0 caused > 30.0 tolerated - 5 margin)"), std::string::npos)
        << c.deciding();
    EXPECT_EQ(c.deciding().find("llc-cap"), std::string::npos) << c.deciding();
}

// A 1.4 profile states tolerated as an estimate with a bracket; decisions read the bracket's safe end. The victim's
// estimate is 40 in [30, 50]: 30 caused is over 30 - 5 margin, though under 40 - 5.
TEST(PlacePair, DecisionsReadTheSafeEndOfTheBracket)
{
    Prof victim("victim", {{"mem-bw", 40, 0}});
    victim.p.sois[0].bracket[0] = 30;
    victim.p.sois[0].bracket[1] = 50;
    Prof hog("hog", {{"mem-bw", 100, 30}});
    Check c({&victim, &hog});
    ASSERT_EQ(c.rc, 0) << c.why;
    EXPECT_FALSE(c.r.safe);
    ASSERT_NE(c.r.deciding, nullptr);
    EXPECT_NE(strstr(c.r.deciding, "30.0 caused > 30.0 tolerated"), nullptr) << c.r.deciding;
    EXPECT_DOUBLE_EQ(profile_soi_safe_tolerated(&victim.p.sois[0]), 30);
    // no valid bracket (a hand-made entry, or one outside it): tolerated itself
    victim.p.sois[0].bracket[0] = victim.p.sois[0].bracket[1] = 0;
    EXPECT_DOUBLE_EQ(profile_soi_safe_tolerated(&victim.p.sois[0]), 40);
    Check d({&victim, &hog});
    EXPECT_TRUE(d.r.safe) << (d.r.deciding ? d.r.deciding : "");
}

TEST(PlacePair, TheReverseDirectionIsCheckedToo)
{
    // A tolerates everything B causes, but A presses B's weak spot: the one-way reading (only the newcomer's
    // tolerance) would call it safe
    Prof a("A", {{"mem-bw", 100, 45}, {"disk-bw", 100, 0}});
    Prof b("B", {{"mem-bw", 35, 0}, {"disk-bw", 100, 20}});
    for (bool swapped : {false, true}) {
        Check c(swapped ? std::vector<const Prof *>{&b, &a} : std::vector<const Prof *>{&a, &b});
        ASSERT_EQ(c.rc, 0) << c.why;
        EXPECT_FALSE(c.r.safe) << "swapped " << swapped;
        EXPECT_NE(c.deciding().find("mem-bw (A breaks B"), std::string::npos) << c.deciding();
        EXPECT_EQ(c.deciding().find("B breaks A"), std::string::npos) << c.deciding();
    }
    // B's pressure on A's disk-bw (tolerated 100, no margin) is no reason
    Prof b2("B", {{"mem-bw", 60, 0}, {"disk-bw", 100, 20}});
    Check ok({&a, &b2});
    EXPECT_TRUE(ok.r.safe) << ok.deciding();
}

TEST(PlacePair, PressuresOfSeveralCorunnersAddUpCappedAt100)
{
    Prof a("A", {{"llc-cap", 50, 0}});
    Prof b("B", {{"llc-cap", 100, 25}});
    Prof c3("C", {{"llc-cap", 100, 25}});
    Check three({&a, &b, &c3});
    ASSERT_EQ(three.rc, 0) << three.why;
    EXPECT_DOUBLE_EQ(three.cell(0, "llc-cap").others, 50);
    EXPECT_FALSE(three.r.safe); // 50 - 5 - 50 < 0
    EXPECT_NE(three.deciding().find("llc-cap (B+C break A"), std::string::npos) << three.deciding();
    Check nomargin({&a, &b, &c3}, 0);
    EXPECT_TRUE(nomargin.r.safe); // exactly at the tolerance: 50 - 0 - 50 = 0
    Check pair({&a, &b});
    EXPECT_TRUE(pair.r.safe);     // one of them alone: 50 - 5 - 25 >= 0
    Prof d("D", {{"llc-cap", 100, 70}});
    Check capped({&a, &d, &b, &c3});
    EXPECT_DOUBLE_EQ(capped.cell(0, "llc-cap").others, 100); // 120 capped
    EXPECT_DOUBLE_EQ(capped.cell(1, "llc-cap").others, 50);
}

TEST(PlacePair, AZeroCauserNeverRanksBelowACauser)
{
    // The paper's literal objective, min ||tolerated - caused||_1, prefers C (causes exactly what X tolerates
    // less the margin) to Z (causes nothing): the check must not.
    Prof x("X", {{"mem-bw", 40, 0}, {"llc-cap", 60, 0}});
    Prof cz("C", {{"mem-bw", 100, 35}, {"llc-cap", 100, 55}});
    Prof z("Z", {{"mem-bw", 100, 0}, {"llc-cap", 100, 0}});
    Check withc({&x, &cz}), withz({&x, &z});
    ASSERT_TRUE(withc.r.safe) << withc.deciding();
    ASSERT_TRUE(withz.r.safe);
    double l1c = fabs(40 - 35) + fabs(60 - 55), l1z = 40 + 60;
    EXPECT_LT(l1c, l1z);             // what the literal rule would pick
    EXPECT_GT(withz.r.fit, withc.r.fit); // what the check ranks first

    // Seeded property: for random X and a random co-runner C, Z = C with its caused figures zeroed is safe when C
    // is, and fits at least as well.
    std::mt19937 g(16);
    std::uniform_real_distribution<double> u(0, 100);
    const char *names[] = {"mem-bw", "llc-cap", "disk-bw", "net-bw"};
    int both = 0;
    for (int t = 0; t < 2000; t++) {
        std::vector<S> xs, cs, zs;
        for (const char *n : names) {
            xs.push_back({n, std::floor(u(g)), u(g) / 3});
            S c{n, std::floor(u(g)), u(g) / 2};
            cs.push_back(c);
            c.caused = 0;
            zs.push_back(c);
        }
        Prof px("X", xs), pc("C", cs), pz("Z", zs);
        Check kc({&px, &pc}), kz({&px, &pz}), terse({&px, &pc}, PL_COLOC_MARGIN, true, true);
        ASSERT_EQ(kc.rc, 0);
        ASSERT_EQ(kz.rc, 0);
        ASSERT_EQ(terse.r.safe, kc.r.safe) << "trial " << t; // the scheduler's terse check decides the same
        ASSERT_EQ(terse.r.deciding, nullptr);
        if (kc.r.safe) {
            ASSERT_TRUE(kz.r.safe) << "trial " << t;
            ASSERT_GE(kz.r.fit, kc.r.fit) << "trial " << t;
            both++;
        }
    }
    EXPECT_GT(both, 20); // the property was exercised on safe pairs, not vacuously
}

TEST(PlacePair, UnknownsPessimisticAndOptimistic)
{
    Prof a("A", {{"mem-bw", 60, 10}, {"llc-cap", 70, 10}});
    Prof b("B", {skip("mem-bw"), {"llc-cap", 100, 1, 3, 0}}); // mem-bw skipped; llc-cap 1 +- 3, not distinguishable
    Check pes({&a, &b}, 5, true), opt({&a, &b}, 5, false);
    ASSERT_EQ(pes.rc, 0) << pes.why;
    // B's unknown caused on mem-bw: 100 pessimistic, 0 optimistic; A's is known (10), so the cells are judged
    EXPECT_DOUBLE_EQ(pes.cell(0, "mem-bw").others, 100);
    EXPECT_TRUE(pes.cell(0, "mem-bw").unknown_oth);
    EXPECT_DOUBLE_EQ(opt.cell(0, "mem-bw").others, 0);
    // B's unknown tolerance on mem-bw against A's known 10: 0 (no margin) pessimistic, 100 optimistic
    EXPECT_DOUBLE_EQ(pes.cell(1, "mem-bw").headroom, -10);
    EXPECT_TRUE(pes.cell(1, "mem-bw").unknown_tol);
    EXPECT_DOUBLE_EQ(opt.cell(1, "mem-bw").headroom, 90);
    // not distinguishable from 0: value + 2 se pessimistic, 0 optimistic
    EXPECT_DOUBLE_EQ(pes.cell(0, "llc-cap").others, 7);
    EXPECT_DOUBLE_EQ(opt.cell(0, "llc-cap").others, 0);
    EXPECT_FALSE(pes.r.safe);
    EXPECT_NE(pes.deciding().find("mem-bw"), std::string::npos);
    EXPECT_TRUE(opt.r.safe) << opt.deciding();

    // neither side measured a resource: not judged, safe in both modes, outside the fit
    Prof c("C", {{"llc-cap", 50, 0}, skip("int")});
    Prof d("D", {{"llc-cap", 50, 0}, skip("int")});
    Check nj({&c, &d}, 5, true);
    ASSERT_EQ(nj.rc, 0);
    EXPECT_FALSE(nj.cell(0, "int").judged);
    EXPECT_TRUE(nj.r.safe);
    EXPECT_DOUBLE_EQ(nj.r.fit, 45); // llc-cap alone
    // a resource absent from one profile is an unknown like a skipped one
    Prof e("E", {{"llc-cap", 50, 0}});
    Prof f("F", {{"llc-cap", 50, 0}, {"net-bw", 30, 20}});
    Check ab({&e, &f}, 5, true);
    EXPECT_TRUE(ab.cell(0, "net-bw").unknown_tol);
    EXPECT_FALSE(ab.r.safe); // E's tolerance of net-bw is unknown and F presses it
}

TEST(PlacePair, MembersOfTheSameNameAreToldApart)
{
    Prof x1("X", {{"mem-bw", 50, 60}}), x2("X", {{"mem-bw", 50, 60}});
    Check c({&x1, &x2});
    EXPECT_FALSE(c.r.safe);
    EXPECT_NE(c.deciding().find("mem-bw (X#2 breaks X#1"), std::string::npos) << c.deciding();
    EXPECT_NE(c.deciding().find("mem-bw (X#1 breaks X#2"), std::string::npos) << c.deciding();
}

TEST(PlacePair, AMeasured100TakesNoMargin)
{
    Prof a("A", {{"mem-bw", 100, 0}});
    Prof b("B", {{"mem-bw", 100, 100}});
    Check c({&a, &b});
    EXPECT_TRUE(c.r.safe) << c.deciding();
    EXPECT_DOUBLE_EQ(c.cell(0, "mem-bw").headroom, 0);
    Prof a2("A", {{"mem-bw", 99, 0}});
    Check c2({&a2, &b});
    EXPECT_FALSE(c2.r.safe);
}

TEST(PlacePair, ShapeAndConfidenceWarnings)
{
    Prof a("A", {{"mem-bw", 50, 0}}, "AMD EPYC", 2);
    Prof b("B", {{"mem-bw", 50, 0}}, "Intel Xeon", 64);
    Check c({&a, &b});
    ASSERT_EQ(c.r.nwarnings, 1u);
    EXPECT_NE(strstr(c.r.warnings[0], "A was profiled on AMD EPYC (2 CPUs), B on Intel Xeon (64 CPUs)"), nullptr)
        << c.r.warnings[0];
    Prof b2("B", {{"mem-bw", 50, 0}}, "AMD EPYC", 2);
    b2.p.confidence = strdup("low");
    Check c2({&a, &b2});
    ASSERT_EQ(c2.r.nwarnings, 1u);
    EXPECT_NE(strstr(c2.r.warnings[0], "B's profile has low confidence"), nullptr) << c2.r.warnings[0];
}

TEST(PlacePair, BadInput)
{
    Prof a("A", {{"mem-bw", 50, 0}});
    Prof none("N", {skip("mem-bw")});
    Check one({&a});
    EXPECT_EQ(one.rc, -EINVAL);
    EXPECT_STREQ(one.why, "a co-location check takes 2 to 64 applications, not 1");
    Check margin({&a, &a}, 101);
    EXPECT_EQ(margin.rc, -EINVAL);
    EXPECT_STREQ(margin.why, "margin 101: a number of points in 0-100 expected");
    Check nan({&a, &a}, kNan);
    EXPECT_EQ(nan.rc, -EINVAL);
    Check empty({&a, &none});
    EXPECT_EQ(empty.rc, -EINVAL);
    EXPECT_STREQ(empty.why, "N: the profile has no measured SoI");
}

// ---- the binary ---------------------------------------------------------------------------------------------------

struct CliRun {
    int code = -1;
    std::string out, err;
};

CliRun ibench(const std::vector<std::string> &args)
{
    ib_test::Proc p;
    CliRun r;
    std::vector<std::string> a = {"place"};
    a.insert(a.end(), args.begin(), args.end());
    EXPECT_TRUE(p.start(a, {}));
    EXPECT_TRUE(p.finish(30)) << "ibench place hung";
    r.code = p.exit_code();
    r.out = p.out;
    r.err = p.err;
    return r;
}

// The memcached fixture with one SoI's caused value changed, written to a temporary file.
struct TmpProfile {
    std::string path;
    TmpProfile(const char *soi, double caused, const char *name)
    {
        json_error_t e;
        json_t *doc = json_load_file(IBENCH_FIXTURES "/profile-memcached.json", 0, &e);
        EXPECT_NE(doc, nullptr) << e.text;
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(doc, "sois"), i, s)
        {
            if (strcmp(json_string_value(json_object_get(s, "soi")), soi) != 0)
                continue;
            if (json_is_object(json_object_get(s, "caused"))) // 1.2: {"value": ...}; 1.1 (the fixture): a number
                json_object_set_new(json_object_get(s, "caused"), "value", json_real(caused));
            else
                json_object_set_new(s, "caused", json_real(caused));
        }
        json_object_set_new(json_object_get(doc, "target"), "name", json_string(name));
        char tmpl[] = "/tmp/ibench-pair-XXXXXX";
        int fd = mkstemp(tmpl);
        EXPECT_GE(fd, 0);
        close(fd);
        path = tmpl;
        EXPECT_EQ(json_dump_file(doc, path.c_str(), 0), 0);
        json_decref(doc);
    }
    ~TmpProfile() { unlink(path.c_str()); }
};

TEST(PlacePairCli, TableJsonAndBadInput)
{
    std::string mc = IBENCH_FIXTURES "/profile-memcached.json";
    CliRun r = ibench({"pair", mc, mc});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("verdict: safe, fit "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not judged (measured by no one): fp, int,"), std::string::npos) << r.out;

    TmpProfile hog("mem-bw", 60, "hog"); // memcached tolerates mem-bw 12.5
    r = ibench({"pair", mc, hog.path, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_error_t e;
    json_t *doc = json_loads(r.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text << r.out;
    EXPECT_STREQ(json_string_value(json_object_get(doc, "verdict")), "unsafe");
    EXPECT_TRUE(json_is_null(json_object_get(doc, "fit")));
    json_t *dec = json_object_get(doc, "deciding");
    ASSERT_EQ(json_array_size(dec), 1u) << r.out;
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(dec, 0), "resource")), "mem-bw");
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(dec, 0), "application")), "memcached");
    // the model decides (1.7): memcached's curve at hog's 60 % on mem-bw, exact figures (se 0), under its QoS
    EXPECT_NE(strstr(json_string_value(json_object_get(doc, "why")), "memcached predicted 0.75 [0.75, 0.75] < (even "
                                                                      "optimistic) QoS 0.95: mem-bw: 0.79"),
              nullptr)
        << json_string_value(json_object_get(doc, "why"));
    EXPECT_STREQ(json_string_value(json_object_get(doc, "decide")), "model");
    json_t *pm = json_array_get(json_object_get(doc, "predictions"), 0);
    EXPECT_STREQ(json_string_value(json_object_get(pm, "decision")), "refused");
    EXPECT_STREQ(json_string_value(json_object_get(pm, "resource")), "mem-bw");
    json_decref(doc);
    r = ibench({"pair", mc, hog.path, "--json", "--decide", "headroom"}); // the rule before 1.7
    ASSERT_EQ(r.code, 0) << r.err;
    doc = json_loads(r.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text << r.out;
    EXPECT_STREQ(json_string_value(json_object_get(doc, "verdict")), "unsafe");
    EXPECT_NE(strstr(json_string_value(json_object_get(doc, "why")), "hog breaks memcached"), nullptr);
    EXPECT_EQ(json_array_size(json_object_get(doc, "predictions")), 0u);
    json_decref(doc);

    r = ibench({"pair", mc});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibench place pair: 2 to 64 profiles expected, got 1\n");
    r = ibench({"pair", mc, mc, "--margin", "-1"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibench place pair: --margin '-1': a number of points in 0-100 expected\n");
    r = ibench({"pair", mc, mc, "--unknown", "maybe"});
    EXPECT_EQ(r.code, 2);
    r = ibench({"pair", mc, IBENCH_FIXTURES "/profile-invalid-tolerated.json"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("tolerated"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(PlacePairCli, PredictIsTheTruthWithoutNoise)
{
    std::string mc = IBENCH_FIXTURES "/profile-memcached.json";
    CliRun r = ibench({"predict", mc, "--beside", mc, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_error_t e;
    json_t *doc = json_loads(r.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text;
    struct profile p;
    char why[256];
    ASSERT_EQ(profile_read(mc.c_str(), &p, why, sizeof why), 0) << why;
    const struct profile *o[] = {&p};
    EXPECT_DOUBLE_EQ(json_real_value(json_object_get(doc, "relative")), pl_sim_truth(&p, o, 1));
    EXPECT_LT(json_real_value(json_object_get(doc, "relative")), 1.0); // llc-cap: 19.3 % pressure costs memcached
    profile_free(&p);
    json_decref(doc);
    r = ibench({"predict", mc});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibench place predict: --beside FILE expected (a co-runner's profile)\n");
}

} // namespace
