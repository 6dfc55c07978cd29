// The model that predicts and decides (placement/coloc/pl_wmodel.h) on hand-built profiles, exact: the sustained
// curve under a sustained writer, short bursts the victim shrugs off, a 50 % duty cycle, two co-runners' windows
// summed, a caused-only co-runner, the bounds' order, k(L)'s interpolation; and pl_coloc_check deciding by it (the
// acceptance test: a wide tolerated bracket the headroom rule calls uncertain is refused when the counted pressure
// predicts a break beyond the uncertainty; a co-runner whose only pressure is noise is kept).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "pl_check.h"
#include "pl_coloc.h"
#include "pl_sim.h"
#include "pl_wmodel.h"
#include "profile_fmt.h"
}

namespace {

constexpr double kCap = 2.7e9; // disk-write's capacity, B/s

struct Pt {
    double x, rel, se;
    double solo = 0; // the point's solo baseline; 0: not recorded
};
struct Burst {
    double on_s, off_s, level, on_relative, se;
};
struct Soi {
    const char *name;
    std::vector<Pt> curve = {};
    double caused = NAN, caused_se = NAN;
    int dist = -1;
    std::vector<Burst> bursts = {};
    double tolerated = 100, b0 = NAN, b1 = NAN;
    double capacity = kCap;
    const char *unit = "B/s";
};
struct Use {
    const char *name; // "write", "read", "memory"
    std::vector<double> windows;
    double floor = 0;
    const char *unit = "B/s";
};

struct Prof {
    struct profile p;
    Prof(const char *name, const std::vector<Soi> &sois, const std::vector<Use> &use = {}, double window_s = 0.5,
         double qos = 0.95)
    {
        profile_init(&p);
        p.name = strdup(name);
        p.cpu_model = strdup("CPU X");
        p.machine_cpus = 2;
        p.qos = qos;
        p.sois = static_cast<struct profile_soi *>(calloc(sois.size() + 1, sizeof *p.sois));
        for (const Soi &d : sois) {
            struct profile_soi *s = &p.sois[p.nsois++];
            profile_soi_init(s);
            s->soi = strdup(d.name);
            s->status = PROFILE_MEASURED;
            s->capacity = d.capacity;
            s->capacity_unit = strdup(d.unit);
            s->tolerated = d.tolerated, s->bracket[0] = d.b0, s->bracket[1] = d.b1;
            s->curve = static_cast<struct profile_point *>(calloc(d.curve.size() + 1, sizeof *s->curve));
            for (const Pt &c : d.curve) {
                struct profile_point *q = &s->curve[s->ncurve++];
                q->intensity = c.x, q->relative = c.rel, q->relative_se = c.se, q->solo = c.solo;
            }
            s->have_caused = 1;
            s->caused.value = d.caused, s->caused.se = d.caused_se, s->caused.distinguishable = d.dist;
            for (const Burst &b : d.bursts) {
                struct profile_burst *u = &s->bursts[s->nbursts++];
                u->on_s = b.on_s, u->off_s = b.off_s, u->level = b.level, u->on_relative = b.on_relative;
                u->relative_se = b.se, u->relative = NAN;
            }
        }
        if (use.empty())
            return;
        p.have_usage = 1;
        p.usage.window_s = window_s;
        for (const Use &u : use) {
            struct profile_usage_res *x = &p.usage.res[p.usage.nres++];
            profile_usage_res_init(x);
            x->name = strdup(u.name);
            x->unit = strdup(u.unit);
            x->floor = u.floor;
            x->windows = static_cast<double *>(calloc(u.windows.size() + 1, sizeof(double)));
            for (double w : u.windows)
                x->windows[x->nwindows++] = w;
        }
    }
    void baseline(const std::vector<double> &before, const std::vector<double> &after)
    {
        p.before = static_cast<double *>(calloc(before.size() + 1, sizeof(double)));
        p.after = static_cast<double *>(calloc(after.size() + 1, sizeof(double)));
        for (double v : before)
            p.before[p.nbefore++] = v;
        for (double v : after)
            p.after[p.nafter++] = v;
    }
    ~Prof() { profile_free(&p); }
    Prof(const Prof &) = delete;
    Prof &operator=(const Prof &) = delete;
};

pl_wm_pred predict(const Prof &a, std::vector<const Prof *> others, pl_wm_combine c = PL_WM_PRODUCT)
{
    std::vector<const profile *> o;
    for (const Prof *x : others)
        o.push_back(&x->p);
    pl_wm_pred r;
    EXPECT_EQ(0, pl_wm_predict(&a.p, o.data(), static_cast<unsigned>(o.size()), c, nullptr, &r));
    return r;
}

// A victim whose disk-write curve falls to 0.09 at 100 %; its bursts: 0.25 s does nothing, 1 s half the harm.
Soi victim_disk(std::vector<Burst> bursts = {})
{
    Soi s{"disk-write", {{25, 0.8, 0.01}, {50, 0.5, 0.01}, {100, 0.09, 0.01}}};
    s.bursts = bursts;
    return s;
}

std::vector<double> repeat(std::vector<double> pattern, unsigned times)
{
    std::vector<double> v;
    for (unsigned i = 0; i < times; i++)
        v.insert(v.end(), pattern.begin(), pattern.end());
    return v;
}

} // namespace

TEST(PlWmodel, CurveIsPlSimCurveAndItsBoundsMoveEachPointByTwoSe)
{
    Prof a("a", {victim_disk()});
    const profile_soi *s = &a.p.sois[0];
    for (double x : {0.0, 10.0, 25.0, 37.5, 50.0, 99.0, 100.0, 120.0})
        EXPECT_DOUBLE_EQ(pl_sim_curve(s, x), pl_wm_curve(s, x, PL_WM_CENTRAL)) << x;
    EXPECT_NEAR(0.07, pl_wm_curve(s, 100, PL_WM_PESSIMISTIC), 1e-12);
    EXPECT_NEAR(0.11, pl_wm_curve(s, 100, PL_WM_OPTIMISTIC), 1e-12);
    EXPECT_DOUBLE_EQ(1.0, pl_wm_curve(s, 0, PL_WM_PESSIMISTIC)) << "1 at 0 in every reading";
    Prof hi("hi", {Soi{"disk-write", {{50, 0.99, 0.02}}}});
    EXPECT_DOUBLE_EQ(1.0, pl_wm_curve(&hi.p.sois[0], 50, PL_WM_OPTIMISTIC)) << "capped at 1";
}

TEST(PlWmodel, BurstShareInterpolatesInLogLength)
{
    // k = (1 - on_relative) / (1 - y(level)); y(100) = 0.09, so 1 - y = 0.91
    Prof a("a", {victim_disk({{0.25, 0.75, 100, 1 - 0.2 * 0.91, 0}, {1.0, 1.0, 100, 1 - 0.6 * 0.91, 0}})});
    const profile_soi *s = &a.p.sois[0];
    EXPECT_NEAR(0.2, pl_wm_burst_share(s, 0.25, PL_WM_CENTRAL), 1e-12);
    EXPECT_NEAR(0.4, pl_wm_burst_share(s, 0.5, PL_WM_CENTRAL), 1e-12) << "0.5 s: half way in log from 0.25 to 1";
    EXPECT_NEAR(0.1, pl_wm_burst_share(s, 0.125, PL_WM_CENTRAL), 1e-12) << "below the shortest: k_min L / L_min";
    EXPECT_NEAR(0.6, pl_wm_burst_share(s, 4.0, PL_WM_CENTRAL), 1e-12) << "above the longest: k at the longest";
    EXPECT_DOUBLE_EQ(1.0, pl_wm_burst_share(s, INFINITY, PL_WM_CENTRAL)) << "sustained";
    Prof none("none", {victim_disk()});
    EXPECT_DOUBLE_EQ(1.0, pl_wm_burst_share(&none.p.sois[0], 0.25, PL_WM_CENTRAL)) << "no burst measured";
}

TEST(PlWmodel, SustainedWriterReadsTheSustainedCurve)
{
    // the writer presses 100 % in every one of 30 windows: one open run, sustained, k 1 whatever the bursts say
    Prof a("reader", {victim_disk({{0.25, 0.25, 100, 1.0, 0}})});
    Prof b("fio", {}, {{"write", std::vector<double>(30, kCap)}});
    pl_wm_pred r = predict(a, {&b});
    EXPECT_NEAR(0.09, r.rel, 1e-12);
    EXPECT_NEAR(0.07, r.lo, 1e-12);
    EXPECT_NEAR(0.11, r.hi, 1e-12);
    EXPECT_EQ(30u, r.nwindows);
    EXPECT_STREQ("disk-write", r.deciding);
    EXPECT_NE(nullptr, strstr(r.why, "fio's write 2.7 GB/s (100 % of capacity)")) << r.why;
    EXPECT_NE(nullptr, strstr(r.why, "active 100 % of 30 windows, sustained")) << r.why;
}

TEST(PlWmodel, ShortBurstsTheVictimShrugsOffPredictOne)
{
    // 0.25 s on, 0.25 s off, 20 times: every burst 0.25 s (the first one, cut, takes the closed runs' mean); the
    // victim's k(0.25 s) = 0: nothing lost
    Prof a("reader", {victim_disk({{0.25, 0.25, 100, 1.0, 0}, {1.0, 1.0, 100, 0.09, 0}})});
    Prof b("loop", {}, {{"write", repeat({kCap, 0}, 20)}}, 0.25);
    pl_wm_pred r = predict(a, {&b});
    EXPECT_DOUBLE_EQ(1.0, r.rel);
    EXPECT_NE(nullptr, strstr(r.why, "bursts of 0.25 s (k 0.00)")) << r.why;
}

TEST(PlWmodel, HalfDutyWithNothingDoneWhileOnPredictsHalf)
{
    Prof a("reader", {Soi{"disk-write", {{100, 0.0, 0}}, NAN, NAN, -1, {{0.5, 0.5, 100, 0.0, 0}}}});
    Prof b("loop", {}, {{"write", repeat({kCap, 0}, 15)}}, 0.5);
    pl_wm_pred r = predict(a, {&b});
    EXPECT_DOUBLE_EQ(0.5, r.rel);
    EXPECT_DOUBLE_EQ(0.5, r.lo);
    EXPECT_DOUBLE_EQ(0.5, r.hi);
}

TEST(PlWmodel, TwoCoRunnersWindowsSumAlignedAtTheirStarts)
{
    // y(x) = 1 - x / 100; no bursts measured: k 1.  B1 [40 0 40 0], B2 [0 40] repeating: [40 40 40 40]?  No:
    // B2 at w mod 2 gives [0 40 0 40]; the sum [40 40 40 40] -> 0.6 everywhere
    Prof a("a", {Soi{"disk-write", {{100, 0.0, 0}}}});
    Prof b1("b1", {}, {{"write", {0.4 * kCap, 0, 0.4 * kCap, 0}}});
    Prof b2("b2", {}, {{"write", {0, 0.4 * kCap}}});
    EXPECT_NEAR(0.6, predict(a, {&b1, &b2}).rel, 1e-12);
    // B3 [40 40 0 0] with B1: [80 40 40 0] -> (0.2 + 0.6 + 0.6 + 1) / 4
    Prof b3("b3", {}, {{"write", {0.4 * kCap, 0.4 * kCap, 0, 0}}});
    EXPECT_NEAR((0.2 + 0.6 + 0.6 + 1) / 4, predict(a, {&b1, &b3}).rel, 1e-12);
    // capped at 100: [80 + 80, ...]
    Prof b4("b4", {}, {{"write", {0.8 * kCap}}});
    EXPECT_NEAR(0.0, predict(a, {&b4, &b4}).rel, 1e-12);
}

TEST(PlWmodel, CausedOnlyCoRunnerCountsItsFigureSustainedWithItsBounds)
{
    Prof a("a", {Soi{"disk-write", {{100, 0.0, 0}}}});
    Soi c{"disk-write", {}, 40, 5, 1};
    Prof b("b", {c});
    pl_wm_pred r = predict(a, {&b});
    EXPECT_NEAR(0.6, r.rel, 1e-12);
    EXPECT_NEAR(0.5, r.lo, 1e-12) << "value + 2 se";
    EXPECT_NEAR(0.7, r.hi, 1e-12) << "value - 2 se";
    EXPECT_EQ(1u, r.nwindows);
    EXPECT_NE(nullptr, strstr(r.why, "b's caused 40.0 +- 5.0 %")) << r.why;
    // within 2 se of 0: no pressure in any reading
    Soi n{"disk-write", {}, 3, 2, 0};
    Prof nb("noise", {n});
    pl_wm_pred z = predict(a, {&nb});
    EXPECT_DOUBLE_EQ(1.0, z.lo);
    EXPECT_DOUBLE_EQ(1.0, z.hi);
    EXPECT_STREQ("", z.deciding);
}

TEST(PlWmodel, BoundsAreOrderedAndMinCombinesTheWorstResource)
{
    Prof a("a", {victim_disk({{0.25, 0.25, 100, 0.8, 0.05}, {1.0, 1.0, 100, 0.3, 0.05}}),
                 Soi{"mem-bw", {{50, 0.7, 0.05}, {100, 0.4, 0.05}}, NAN, NAN, -1, {}, 100, NAN, NAN, 1e10}});
    Soi mb{"mem-bw", {}, 30, 4, 1, {}, 100, NAN, NAN, 1e10};
    Prof b("b", {mb}, {{"write", {kCap, 0, 0, kCap, kCap, 0, 0.3 * kCap, 0.2 * kCap}}}, 0.25);
    for (pl_wm_combine c : {PL_WM_PRODUCT, PL_WM_MIN}) {
        pl_wm_pred r = predict(a, {&b}, c);
        EXPECT_LE(r.lo, r.rel);
        EXPECT_LE(r.rel, r.hi);
        EXPECT_LT(r.lo, r.hi);
    }
    EXPECT_LE(predict(a, {&b}, PL_WM_PRODUCT).rel, predict(a, {&b}, PL_WM_MIN).rel);
}

TEST(PlWmodel, UsageUnderTheFloorIsNoPressureAndUnitsMustAgree)
{
    Prof a("a", {victim_disk()});
    Prof quiet("quiet", {}, {{"write", std::vector<double>(10, 1e6), 2e6}});
    EXPECT_DOUBLE_EQ(1.0, predict(a, {&quiet}).rel);
    // a unit A's capacity cannot convert: B's caused counts instead (here none)
    Prof other("other", {}, {{"write", std::vector<double>(10, kCap), 0, "ops/s"}});
    EXPECT_DOUBLE_EQ(1.0, predict(a, {&other}).rel);
}

TEST(PlWmodel, AcceptanceWideBracketRefusedOnCountedPressureNoiseKept)
{
    // the victim tolerates disk-write 0.8, its bracket 0-90: the headroom rule cannot establish a break (the
    // others' caused lower bound must exceed 90 - margin)
    Soi v = victim_disk();
    v.tolerated = 0.8, v.b0 = 0, v.b1 = 90;
    Prof victim("reader", {v});
    // a writer whose counted usage presses 100 % sustained; its caused figure is 60 +- 10
    Soi w{"disk-write", {}, 60, 10, 1};
    Prof writer("fio", {w}, {{"write", std::vector<double>(20, kCap)}});
    // a co-runner whose only pressure is noise: usage windows under the floor (10 % of the capacity under a floor of
    // 15 %: counted, they would break the victim), caused within 2 se of 0
    Soi nz{"disk-write", {}, 3, 2, 0};
    Prof noise("quiet", {nz}, {{"write", std::vector<double>(20, 0.1 * kCap), 0.15 * kCap}});

    const profile *g1[2] = {&victim.p, &writer.p}, *g2[2] = {&victim.p, &noise.p};
    pl_coloc_opts model = {PL_COLOC_MARGIN, true, false, true, PL_DECIDE_MODEL, PL_WM_PRODUCT, false};
    pl_coloc_opts head = model;
    head.decide = PL_DECIDE_HEADROOM;
    pl_coloc_result r;
    char why[256];
    ASSERT_EQ(0, pl_coloc_check(g1, 2, &head, &r, why, sizeof why));
    EXPECT_EQ(PL_COLOC_UNCERTAIN, r.verdict) << "the headroom rule: 40 established < 90 - 5";
    pl_coloc_result_free(&r);
    ASSERT_EQ(0, pl_coloc_check(g1, 2, &model, &r, why, sizeof why));
    EXPECT_EQ(PL_COLOC_UNSAFE, r.verdict);
    EXPECT_FALSE(r.safe);
    ASSERT_NE(nullptr, r.pred);
    EXPECT_LT(r.pred[0].hi, 0.95);
    ASSERT_NE(nullptr, r.deciding);
    EXPECT_NE(nullptr, strstr(r.deciding, "reader predicted 0.09 [0.07, 0.11]")) << r.deciding;
    EXPECT_NE(nullptr, strstr(r.deciding, "disk-write")) << r.deciding;
    EXPECT_DOUBLE_EQ(0 - PL_COLOC_MARGIN - 60, r.cell[0].headroom) << "the cells stay filled as explanation";
    pl_coloc_result_free(&r);
    ASSERT_EQ(0, pl_coloc_check(g2, 2, &model, &r, why, sizeof why));
    EXPECT_EQ(PL_COLOC_SAFE, r.verdict);
    EXPECT_DOUBLE_EQ(1.0, r.fit);
    pl_coloc_result_free(&r);
    EXPECT_EQ(PL_COLOC_UNSAFE, pl_check_decision(&victim.p, &writer.p, &model));
    EXPECT_EQ(PL_COLOC_SAFE, pl_check_decision(&victim.p, &noise.p, &model));
}

TEST(PlWmodel, UncertainIsKeptWhenEstablishedAndRefusedOtherwise)
{
    // caused 6 +- 2.5 on a linear curve: 0.94 [0.89, 0.99] straddles 0.95
    Prof a("a", {Soi{"disk-write", {{100, 0.0, 0}}}});
    Soi c{"disk-write", {}, 6, 2.5, 1};
    Prof b("b", {c}, {}, 0.5, 0.5);
    const profile *g[2] = {&a.p, &b.p};
    pl_coloc_opts o = {PL_COLOC_MARGIN, true, false, true, PL_DECIDE_MODEL, PL_WM_PRODUCT, false};
    pl_coloc_result r;
    char why[256];
    ASSERT_EQ(0, pl_coloc_check(g, 2, &o, &r, why, sizeof why));
    EXPECT_EQ(PL_COLOC_UNCERTAIN, r.verdict);
    EXPECT_TRUE(r.safe);
    EXPECT_NEAR(0.94, r.fit, 1e-12) << "the smallest member prediction";
    ASSERT_NE(nullptr, r.uncertain);
    EXPECT_NE(nullptr, strstr(r.uncertain, "straddles QoS 0.95")) << r.uncertain;
    pl_coloc_result_free(&r);
    o.established = false;
    ASSERT_EQ(0, pl_coloc_check(g, 2, &o, &r, why, sizeof why));
    EXPECT_EQ(PL_COLOC_UNSAFE, r.verdict);
    pl_coloc_result_free(&r);
    // likely (--refuse likely, the front ends' default): the uncertain pair whose point 0.94 is under 0.95 is
    // refused; one whose point 0.96 is over it (caused 4 +- 1.9: [0.92, 1.00]) stays uncertain
    o.established = true;
    o.likely = true;
    ASSERT_EQ(0, pl_coloc_check(g, 2, &o, &r, why, sizeof why));
    EXPECT_EQ(PL_COLOC_UNSAFE, r.verdict);
    ASSERT_NE(nullptr, r.deciding);
    EXPECT_NE(nullptr, strstr(r.deciding, "straddles, its point under QoS 0.95")) << r.deciding;
    pl_coloc_result_free(&r);
    pl_wm_pred m = {};
    m.rel = 0.94, m.lo = 0.89, m.hi = 0.99;
    EXPECT_EQ(PL_WM_REFUSED, pl_coloc_member_decision(&m, 0.95, &o));
    m.rel = 0.95;
    EXPECT_EQ(PL_WM_UNCERTAIN, pl_coloc_member_decision(&m, 0.95, &o)) << "a point on the line is not under it";
    // a point under the line whose optimistic bound reaches 1 is a harm not told from none: uncertain, not refused
    m.rel = 0.94, m.hi = 1.0;
    EXPECT_EQ(PL_WM_UNCERTAIN, pl_coloc_member_decision(&m, 0.95, &o)) << "likely refuses no harm it cannot tell";
    m.hi = 0.9999;
    EXPECT_EQ(PL_WM_REFUSED, pl_coloc_member_decision(&m, 0.95, &o));
    // the same through the check: a victim whose curve at 100 reads 0 +- 0.5 cannot tell its harm from none
    // anywhere (its optimistic bound 1 at every pressure): beside caused 6 +- 2.5 it reads 0.94, uncertain
    Prof av("av", {Soi{"disk-write", {{100, 0.0, 0.5}}}});
    const profile *g6[2] = {&av.p, &b.p};
    ASSERT_EQ(0, pl_coloc_check(g6, 2, &o, &r, why, sizeof why));
    EXPECT_EQ(PL_COLOC_UNCERTAIN, r.verdict);
    ASSERT_NE(nullptr, r.pred);
    EXPECT_NEAR(0.94, r.pred[0].rel, 1e-12);
    EXPECT_GE(r.pred[0].hi, 1.0);
    pl_coloc_result_free(&r);
    Soi c4{"disk-write", {}, 4, 1.9, 1};
    Prof b4("b4", {c4}, {}, 0.5, 0.5);
    const profile *g4[2] = {&a.p, &b4.p};
    ASSERT_EQ(0, pl_coloc_check(g4, 2, &o, &r, why, sizeof why));
    EXPECT_EQ(PL_COLOC_UNCERTAIN, r.verdict);
    EXPECT_NEAR(0.96, r.fit, 1e-12);
    pl_coloc_result_free(&r);
}

TEST(PlWmodel, FitNeverFallsWithLessPressure)
{
    Prof a("a", {victim_disk()});
    double last = -1;
    for (double c : {80.0, 60.0, 40.0, 20.0, 0.0}) {
        Soi s{"disk-write", {{100, 1.0, 0}}, c, 1, 1};
        Prof b("b", {s});
        const profile *g[2] = {&a.p, &b.p};
        pl_coloc_opts o = {PL_COLOC_MARGIN, true, true, true, PL_DECIDE_MODEL, PL_WM_PRODUCT, false};
        pl_coloc_result r;
        char why[256];
        ASSERT_EQ(0, pl_coloc_check(g, 2, &o, &r, why, sizeof why));
        EXPECT_GE(r.fit, last) << c;
        last = r.fit;
        pl_coloc_result_free(&r);
    }
}

TEST(PlWmodel, WindowsRuleIsTheDefaultPredictor)
{
    EXPECT_STREQ("windows", PL_PRED_DEFAULT);
    const pl_pred_rule *w = pl_pred_rule_find("windows"), *wm = pl_pred_rule_find("windows-min");
    ASSERT_NE(nullptr, w);
    ASSERT_NE(nullptr, wm);
    Prof a("reader", {victim_disk()});
    Prof b("fio", {}, {{"write", std::vector<double>(30, kCap)}});
    const profile *o[1] = {&b.p};
    EXPECT_NEAR(0.09, pl_predict(&a.p, o, 1, w, nullptr), 1e-12);
    EXPECT_NEAR(0.09, pl_predict(&a.p, o, 1, wm, "disk-write"), 1e-12);
    EXPECT_DOUBLE_EQ(1.0, pl_predict(&a.p, o, 1, w, "mem-bw")) << "a resource A did not measure";
    EXPECT_DOUBLE_EQ(1.0, pl_predict(&a.p, o, 1, pl_pred_rule_find(PL_PRED_TRUTH), nullptr))
        << "the rule before 1.7 reads caused figures only";
}

// A curve whose points' solo baselines strayed more than PROFILE_SOLO_STRAY_MAX (4) times outside the target's own
// baseline samples was measured while the machine or the target was in another state: the point and the optimistic
// bound read no harm from it, the pessimistic bound reads the curve; the decision says uncertain and why.  Within
// the factor the curve is read as it is.
TEST(PlWmodel, CurveMeasuredWhileTheTargetsSoloStrayedIsReadOnlyByThePessimisticBound)
{
    Soi c{"llc-cap", {}, 40, 5, 1};
    Prof b("b", {c});
    auto victim = [](double solo) {
        auto *a = new Prof("a", {Soi{"llc-cap", {{6.25, 0.1, 0.01, 1.05}, {100, 0.1, 0.01, solo}}}});
        a->baseline({1.0, 1.1}, {1.2});
        return a;
    };
    Prof *steady = victim(4.7); // 4.7 / 1.2 = 3.92: within the factor
    EXPECT_DOUBLE_EQ(4.7 / 1.2, profile_soi_solo_stray(&steady->p, &steady->p.sois[0]));
    EXPECT_FALSE(pl_wm_curve_stray(&steady->p, &steady->p.sois[0]));
    pl_wm_pred r = predict(*steady, {&b});
    EXPECT_NEAR(0.1, r.rel, 1e-12);
    EXPECT_EQ(PL_WM_REFUSED, pl_wm_decide(&r, 0.95));
    EXPECT_EQ(nullptr, strstr(r.why, "not read")) << r.why;
    delete steady;

    Prof *moved = victim(5.0); // 5.0 / 1.2 = 4.17
    EXPECT_TRUE(pl_wm_curve_stray(&moved->p, &moved->p.sois[0]));
    r = predict(*moved, {&b});
    EXPECT_DOUBLE_EQ(1.0, r.rel);
    EXPECT_DOUBLE_EQ(1.0, r.hi);
    EXPECT_NEAR(0.08, r.lo, 1e-12) << "the pessimistic bound reads the curve 2 se lower";
    EXPECT_EQ(PL_WM_UNCERTAIN, pl_wm_decide(&r, 0.95));
    EXPECT_NE(nullptr, strstr(r.why, "llc-cap not read: measured while a's own solo speed moved 4.2-fold")) << r.why;
    // a solo under the range strays as far: 1.0 / 0.2 = 5
    moved->p.sois[0].curve[1].solo = 0.2;
    EXPECT_DOUBLE_EQ(5.0, profile_soi_solo_stray(&moved->p, &moved->p.sois[0]));
    delete moved;

    // nothing recorded to compare with: NAN, and the curve is read
    Prof none("n", {Soi{"llc-cap", {{100, 0.1, 0.01, 9.0}}}});
    EXPECT_TRUE(std::isnan(profile_soi_solo_stray(&none.p, &none.p.sois[0])));
    EXPECT_NEAR(1 - 0.9 * 0.4, predict(none, {&b}).rel, 1e-12) << "1 at 0, 0.1 at 100, read at 40";
}
