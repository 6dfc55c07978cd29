// test_place_check.cpp - predictions against measured co-runs (placement/coloc/pl_check.h) and `place predict --check`:
// the statistics exactly on hand-made cases, and the command on recorded co-runs beside the constant predictor.
#include <math.h>

#include "test_support.h"

#include <string>
#include <vector>

extern "C" {
#include "pl_check.h"
#include "pl_sim.h"
#include "profile_fmt.h"
}

TEST(PlaceCheck, SpearmanOnKnownOrders)
{
    const double x[] = {1, 2, 3, 4, 5};
    const double up[] = {10, 20, 30, 40, 50}, down[] = {5, 4, 3, 2, 1}, flat[] = {7, 7, 7, 7, 7};
    EXPECT_DOUBLE_EQ(1.0, pl_spearman(x, up, 5));
    EXPECT_DOUBLE_EQ(-1.0, pl_spearman(x, down, 5));
    EXPECT_TRUE(isnan(pl_spearman(x, flat, 5))) << "a constant side has no rank correlation";
    EXPECT_TRUE(isnan(pl_spearman(x, up, 1)));
    // ties take their mean rank: y ranks 1.5 1.5 3 4 5 against 1..5
    const double tied[] = {1, 1, 2, 3, 4};
    double mr = 3, sxy = 0, sxx = 0, syy = 0, ry[] = {1.5, 1.5, 3, 4, 5};
    for (int i = 0; i < 5; i++) {
        sxy += (i + 1 - mr) * (ry[i] - mr);
        sxx += (i + 1 - mr) * (i + 1 - mr);
        syy += (ry[i] - mr) * (ry[i] - mr);
    }
    EXPECT_NEAR(sxy / sqrt(sxx * syy), pl_spearman(x, tied, 5), 1e-12);
}

TEST(PlaceCheck, ModelAndConstantScoredAlikeOnTheSameCases)
{
    // predicted, measured, se; the QoS line at 0.95
    const pl_check_case c[] = {
        {0.90, 0.88, 0.02}, // both unsafe: a true positive; error 0.02, within 2 se
        {0.93, 0.99, 0.01}, // predicted unsafe, was fine: a false positive; error 0.06
        {1.00, 0.80, 0.05}, // missed: a false negative; error 0.20
        {0.98, 1.00, 0.015}, // both safe: a true negative; error 0.02, within 2 se
    };
    pl_check_stats m, k;
    pl_check_eval(c, 4, 0.95, 0, 0, &m);
    EXPECT_EQ(4u, m.n);
    EXPECT_NEAR((0.02 + 0.06 + 0.20 + 0.02) / 4, m.mae, 1e-12);
    EXPECT_EQ(2u, m.within_2se);
    EXPECT_EQ(1u, m.tp);
    EXPECT_EQ(1u, m.fp);
    EXPECT_EQ(1u, m.fn);
    EXPECT_EQ(1u, m.tn);
    EXPECT_DOUBLE_EQ(0.5, m.precision);
    EXPECT_DOUBLE_EQ(0.5, m.recall);
    // the constant 1.0: never says unsafe (no precision), misses both unsafe cases, no rank correlation
    pl_check_eval(c, 4, 0.95, 1, 1.0, &k);
    EXPECT_NEAR((0.12 + 0.01 + 0.20 + 0.00) / 4, k.mae, 1e-12);
    EXPECT_EQ(2u, k.within_2se); // 1.00 against 0.99 +- 0.02 and 1.00 +- 0.03
    EXPECT_EQ(0u, k.tp + k.fp);
    EXPECT_EQ(2u, k.fn);
    EXPECT_TRUE(isnan(k.precision));
    EXPECT_DOUBLE_EQ(0.0, k.recall);
    EXPECT_TRUE(isnan(k.rank_corr));
    // no case: nothing to say
    pl_check_eval(c, 0, 0.95, 0, 0, &m);
    EXPECT_TRUE(isnan(m.mae));
}

namespace {

std::string records() { return std::string(IBENCH_FIXTURES) + "/corun"; }
std::string profiles() { return std::string(IBENCH_FIXTURES) + "/../../docs/data/corun"; }

void run(ib_test::Proc &p, const std::vector<std::string> &args)
{
    ASSERT_TRUE(p.start(args, {}));
    ASSERT_TRUE(p.finish(30)) << "hung";
}

} // namespace

TEST(PlaceCheck, CommandScoresRecordsBesideTheConstant)
{
    ib_test::Proc p;
    run(p, {"place", "predict", "--check", records() + "/xz-dram.json", records() + "/redis-xz.json",
            records() + "/disk-memcached.json", records() + "/llc-xz.json", "--profiles", profiles(), "--json"});
    ASSERT_EQ(0, p.exit_code()) << p.err;
    json_error_t e;
    json_t *d = json_loads(p.out.c_str(), 0, &e);
    ASSERT_NE(nullptr, d) << e.text;
    json_t *recs = json_object_get(d, "records");
    ASSERT_EQ(4u, json_array_size(recs));
    // the library's figures from the printed cases: the command adds nothing of its own
    std::vector<pl_check_case> c;
    size_t i;
    json_t *r;
    json_array_foreach(recs, i, r)
    {
        c.push_back({json_number_value(json_object_get(r, "predicted")),
                     json_number_value(json_object_get(r, "measured")), json_number_value(json_object_get(r, "se"))});
        EXPECT_GT(json_number_value(json_object_get(r, "measured")), 0);
    }
    pl_check_stats m, k;
    pl_check_eval(c.data(), 4, 0.95, 0, 0, &m);
    pl_check_eval(c.data(), 4, 0.95, 1, 1.0, &k);
    EXPECT_DOUBLE_EQ(m.mae, json_number_value(json_object_get(json_object_get(d, "model"), "mae")));
    EXPECT_DOUBLE_EQ(k.mae, json_number_value(json_object_get(json_object_get(d, "constant"), "mae")));
    // two of these four were measured unsafe (xz beside dram 0.882, redis beside xz 0.927); the constant finds none
    json_t *kc = json_object_get(json_object_get(d, "constant"), "confusion");
    EXPECT_EQ(2, json_integer_value(json_object_get(kc, "fn")));
    EXPECT_EQ(0u, json_array_size(json_object_get(d, "warnings")));
    json_decref(d);
    // the table says which predictor is better, in words
    ib_test::Proc t;
    run(t, {"place", "predict", "--check", records() + "/xz-dram.json", records() + "/redis-xz.json",
            "--profiles", profiles()});
    ASSERT_EQ(0, t.exit_code()) << t.err;
    EXPECT_NE(std::string::npos, t.out.find("constant 1.0")) << t.out;
    EXPECT_NE(std::string::npos, t.out.find("The model's mean absolute error is")) << t.out;
}

TEST(PlaceCheck, ARecordOfAnotherMachineIsWarnedAbout)
{
    ib_test::Proc p;
    run(p, {"place", "predict", "--check", records() + "/other-machine.json", "--profiles", profiles()});
    ASSERT_EQ(0, p.exit_code()) << p.err;
    EXPECT_NE(std::string::npos, p.err.find("warning: ")) << p.err;
    EXPECT_NE(std::string::npos, p.err.find("intel-6-85-4cpu")) << p.err;
}

TEST(PlaceCheck, BadInputExitsTwoWithOneLine)
{
    const std::string ok = records() + "/xz-dram.json";
    const std::vector<std::vector<std::string>> bad = {
        {"place", "predict", "--check", ok},                                                  // no --profiles
        {"place", "predict", "--check", "--profiles", profiles()},                           // no record
        {"place", "predict", "--check", ok, "--beside", ok, "--profiles", profiles()},        // mixed
        {"place", "predict", "--check", ok, "--profiles", "/nonexistent"},                   // no profile there
        {"place", "predict", "--check", profiles() + "/xz.json", "--profiles", profiles()},   // a profile, no record
        {"place", "predict", "--check", ok, "--profiles", profiles(), "--qos", "2"},
        {"place", "predict", profiles() + "/xz.json", "--beside", profiles() + "/xz.json", "--qos", "0.9"},
    };
    for (const auto &a : bad) {
        ib_test::Proc p;
        run(p, a);
        const std::string line = ib_test::words(a);
        EXPECT_EQ(2, p.exit_code()) << line << "\n" << p.err;
        EXPECT_EQ(1, std::count(p.err.begin(), p.err.end(), '\n')) << line << "\none line: " << p.err;
    }
}

// The held-out split reads only the programs' names: FNV-1a 32 against its published test vectors, then the parity.
TEST(PlaceCheck, HalvesByTheFnvHashOfTheNames)
{
    EXPECT_EQ(0x811c9dc5u, pl_fnv1a32(""));
    EXPECT_EQ(0xe40c292cu, pl_fnv1a32("a"));
    EXPECT_EQ(0xbf9cf968u, pl_fnv1a32("foobar"));
    EXPECT_EQ(1, pl_check_half("xz", "dram"));   // 0x4d4c2d75
    EXPECT_EQ(0, pl_check_half("redis", "xz"));  // 0x0b74c53c
    EXPECT_EQ(1, pl_check_half("disk", "memcached"));
    EXPECT_EQ(0, pl_check_half("llc", "xz"));
    EXPECT_NE(pl_check_half("xz", "dram"), pl_check_half("dram", "xz") + 2) << "ordered: A--B";
}

namespace {
// A profile with one SoI: its curve points (intensity, relative) and its caused figure.
struct OneSoi {
    profile p;
    OneSoi(const char *soi, std::vector<std::pair<double, double>> curve, double caused, int dist)
    {
        profile_init(&p);
        p.name = strdup("x");
        p.sois = static_cast<profile_soi *>(calloc(1, sizeof *p.sois));
        p.nsois = 1;
        profile_soi *s = &p.sois[0];
        profile_soi_init(s);
        s->soi = strdup(soi);
        s->status = PROFILE_MEASURED;
        s->curve = static_cast<profile_point *>(calloc(curve.size() + 1, sizeof *s->curve));
        for (auto &c : curve) {
            profile_point *pt = &s->curve[s->ncurve++];
            pt->intensity = c.first;
            pt->relative = c.second;
        }
        s->have_caused = 1;
        s->caused.value = caused;
        s->caused.se = 5;
        s->caused.distinguishable = dist;
    }
    ~OneSoi() { profile_free(&p); }
};
} // namespace

// Each rule's reading, exactly: the default is the simulator's truth model; extend goes on along the last segment
// (never up, never below 0); min takes the worst resource; any counts an indistinguishable figure.
TEST(PlaceCheck, RulesReadCurvesAndPressuresAsDocumented)
{
    const pl_pred_rule *dflt = pl_pred_rule_find(PL_PRED_DEFAULT), *ext = pl_pred_rule_find("product-extend-dist"),
                       *any = pl_pred_rule_find("product-flat-any"), *mn = pl_pred_rule_find("min-flat-dist");
    ASSERT_TRUE(dflt && ext && any && mn);
    EXPECT_EQ(nullptr, pl_pred_rule_find("product"));
    OneSoi victim("disk-write", {{25, 0.90}, {12.5, 0.97}}, 0, 1);
    OneSoi writer("disk-write", {{100, 1.0}}, 50, 1), faint("disk-write", {{100, 1.0}}, 50, 0);
    const profile *w[1] = {&writer.p}, *f[1] = {&faint.p};
    EXPECT_DOUBLE_EQ(pl_sim_truth(&victim.p, w, 1), pl_predict(&victim.p, w, 1, dflt, nullptr));
    EXPECT_DOUBLE_EQ(0.90, pl_predict(&victim.p, w, 1, dflt, nullptr)); // flat beyond 25
    // extend: slope (0.90 - 0.97) / 12.5 per point from 25 to 50
    EXPECT_NEAR(0.90 - 0.07 / 12.5 * 25, pl_predict(&victim.p, w, 1, ext, nullptr), 1e-12);
    EXPECT_DOUBLE_EQ(1.0, pl_predict(&victim.p, f, 1, dflt, nullptr)); // not distinguishable: no pressure
    EXPECT_DOUBLE_EQ(0.90, pl_predict(&victim.p, f, 1, any, nullptr));
    EXPECT_DOUBLE_EQ(50, pl_pred_pressure(f, 1, "disk-write", any));
    EXPECT_DOUBLE_EQ(0, pl_pred_pressure(f, 1, "disk-write", dflt));
    OneSoi steep("disk-write", {{25, 0.5}}, 0, 1); // one point: the segment from (0, 1); at 50: 0.0, never below
    EXPECT_DOUBLE_EQ(0.0, pl_predict(&steep.p, w, 1, ext, nullptr));
    OneSoi rising("disk-write", {{12.5, 0.8}, {25, 0.9}}, 0, 1); // rising last segment: flat, not up
    EXPECT_DOUBLE_EQ(0.9, pl_predict(&rising.p, w, 1, ext, nullptr));
    EXPECT_DOUBLE_EQ(1.0, pl_predict(&victim.p, w, 1, dflt, "mem-bw")) << "a resource A did not measure";
}

// --fit scores every rule and selects the lowest MAE; --half keeps one half; --rule applies one; bad values exit 2.
TEST(PlaceCheck, FitHalfAndRuleThroughTheCommand)
{
    std::vector<std::string> recs;
    for (const char *r : {"xz-dram", "redis-xz", "disk-memcached", "llc-xz"})
        recs.push_back(records() + "/" + r + ".json");
    ib_test::Proc p;
    std::vector<std::string> a = {"place", "predict", "--check"};
    a.insert(a.end(), recs.begin(), recs.end());
    std::vector<std::string> fit = a;
    fit.insert(fit.end(), {"--profiles", profiles(), "--fit", "--json"});
    run(p, fit);
    ASSERT_EQ(0, p.exit_code()) << p.err;
    json_error_t e;
    json_t *d = json_loads(p.out.c_str(), 0, &e);
    ASSERT_NE(nullptr, d) << e.text;
    json_t *fits = json_object_get(d, "fit");
    ASSERT_EQ((size_t)pl_pred_nrules, json_array_size(fits));
    double best = INFINITY;
    std::string best_rule;
    size_t i;
    json_t *f;
    json_array_foreach(fits, i, f)
    {
        double m = json_number_value(json_object_get(f, "mae"));
        if (m < best)
            best = m, best_rule = json_string_value(json_object_get(f, "rule"));
    }
    EXPECT_EQ(best_rule, json_string_value(json_object_get(d, "rule")));
    EXPECT_DOUBLE_EQ(best, json_number_value(json_object_get(json_object_get(d, "model"), "mae")));
    EXPECT_GT(json_array_size(json_object_get(d, "resources")), 0u);
    json_decref(d);

    ib_test::Proc h;
    std::vector<std::string> half = a;
    half.insert(half.end(), {"--profiles", profiles(), "--half", "B", "--json"});
    run(h, half);
    ASSERT_EQ(0, h.exit_code()) << h.err;
    d = json_loads(h.out.c_str(), 0, &e);
    ASSERT_NE(nullptr, d) << e.text;
    json_t *rr = json_object_get(d, "records");
    ASSERT_EQ(2u, json_array_size(rr)); // xz--dram and disk--memcached hash odd
    EXPECT_STREQ("xz", json_string_value(json_object_get(json_array_get(rr, 0), "a")));
    EXPECT_STREQ("disk", json_string_value(json_object_get(json_array_get(rr, 1), "a")));
    EXPECT_STREQ("B", json_string_value(json_object_get(d, "half")));
    EXPECT_STREQ(PL_PRED_DEFAULT, json_string_value(json_object_get(d, "rule")));
    json_decref(d);

    for (auto bad : std::vector<std::vector<std::string>>{{"--half", "C"}, {"--rule", "product"},
                                                         {"--fit", "--rule", "min-flat-dist"}}) {
        ib_test::Proc b;
        std::vector<std::string> x = a;
        x.insert(x.end(), {"--profiles", profiles()});
        x.insert(x.end(), bad.begin(), bad.end());
        run(b, x);
        EXPECT_EQ(2, b.exit_code()) << bad[0] << ": " << b.err;
        EXPECT_EQ(1, std::count(b.err.begin(), b.err.end(), '\n')) << b.err;
    }
    ib_test::Proc only;
    run(only, {"place", "predict", "--check", records() + "/redis-xz.json", "--profiles", profiles(), "--half", "B"});
    EXPECT_EQ(2, only.exit_code()) << only.err;
    EXPECT_NE(std::string::npos, only.err.find("no record in half B (1 in the other)")) << only.err;
}
