// test_place_check_skill.cpp - does the model have skill, and are the decisions right (placement/coloc/pl_check.h,
// `place predict --check`): the truth at the QoS line, the decision table, the per-group baseline fitted on the other
// half, the paired bootstrap exactly on hand-made cases and against brute force, and the command on the committed
// corpus (docs/data/corpus).
#include <math.h>
#include <unistd.h>

#include "test_support.h"

#include <algorithm>
#include <string>
#include <vector>

extern "C" {
#include "pl_check.h"
#include "pl_coloc.h"
#include "profile_fmt.h"
}

namespace {

std::string corpus() { return std::string(IBENCH_FIXTURES) + "/../../docs/data/corpus"; }

// The profile set the corpus is scored with (docs/data/README.md).
const char *const kSet = "/profiles-a";

// The records A--B.json whose programs both have a profile in the set (every record, for a complete set).
std::vector<std::string> corpus_records(const std::string &set = kSet)
{
    std::vector<std::string> out;
    const std::string dir = corpus() + "/records";
    auto has = [&](const std::string &name) { return access((corpus() + set + "/" + name + ".json").c_str(), R_OK) == 0; };
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d)) {
            std::string n = e->d_name;
            const size_t sep = n.find("--");
            if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0 && sep != std::string::npos &&
                has(n.substr(0, sep)) && has(n.substr(sep + 2, n.size() - 5 - sep - 2)))
                out.push_back(dir + "/" + n);
        }
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

void run(ib_test::Proc &p, const std::vector<std::string> &args)
{
    ASSERT_TRUE(p.start(args, {}));
    ASSERT_TRUE(p.finish(30)) << "hung";
}

} // namespace

// Binary-exact figures, so the boundaries are the rule's and not rounding's: qos 0.75, se 0.125.
TEST(PlaceCheckSkill, TruthIsABreakOrSafeOnlyBeyondTwoStandardErrors)
{
    EXPECT_EQ(PL_TRUTH_BREAK, pl_check_truth(0.25, 0.125, 0.75)); // 0.5 < 0.75
    EXPECT_EQ(PL_TRUTH_UNCLEAR, pl_check_truth(0.5, 0.125, 0.75)) << "0.75 is not below the line";
    EXPECT_EQ(PL_TRUTH_SAFE, pl_check_truth(1.0, 0.125, 0.75)) << "0.75 reaches the line: safe";
    EXPECT_EQ(PL_TRUTH_UNCLEAR, pl_check_truth(0.875, 0.125, 0.75));
    EXPECT_EQ(PL_TRUTH_UNCLEAR, pl_check_truth(0.25, NAN, 0.75)) << "no standard error: nothing established";
    EXPECT_EQ(PL_TRUTH_BREAK, pl_check_truth(0.5, 0, 0.75));
    EXPECT_STREQ("break", pl_truth_name(PL_TRUTH_BREAK));
    EXPECT_STREQ("unclear", pl_truth_name(PL_TRUTH_UNCLEAR));
}

TEST(PlaceCheckSkill, DecisionTableCountsEachTruthByDecision)
{
    // measured, se at qos 0.75: three breaks, two safe, one unclear (predicted is not read)
    const pl_check_case c[] = {{0, 0.25, 0.125}, {0, 0.25, 0.125}, {0, 0.25, 0.125},
                               {0, 1.0, 0.125},  {0, 1.0, 0.125},  {0, 0.75, 0.125}};
    const pl_coloc_verdict d[] = {PL_COLOC_UNSAFE, PL_COLOC_UNCERTAIN, PL_COLOC_SAFE,
                                  PL_COLOC_UNCERTAIN, PL_COLOC_SAFE, PL_COLOC_UNSAFE};
    pl_check_dec t;
    pl_check_decisions(c, d, 6, 0.75, &t);
    EXPECT_EQ(3u, t.breaks);
    EXPECT_EQ(2u, t.safe);
    EXPECT_EQ(1u, t.unclear);
    EXPECT_EQ(1u, t.n[PL_TRUTH_BREAK][PL_COLOC_UNSAFE]);
    EXPECT_EQ(1u, t.n[PL_TRUTH_BREAK][PL_COLOC_UNCERTAIN]);
    EXPECT_EQ(1u, t.n[PL_TRUTH_BREAK][PL_COLOC_SAFE]);
    EXPECT_EQ(0u, t.n[PL_TRUTH_SAFE][PL_COLOC_UNSAFE]);
    EXPECT_EQ(1u, t.n[PL_TRUTH_SAFE][PL_COLOC_UNCERTAIN]);
    EXPECT_EQ(1u, t.n[PL_TRUTH_UNCLEAR][PL_COLOC_UNSAFE]);
    EXPECT_DOUBLE_EQ(1.0 / 3, t.recall_kept) << "uncertain kept: only the refused break is found";
    EXPECT_DOUBLE_EQ(2.0 / 3, t.recall_refused);
    EXPECT_DOUBLE_EQ(0.0, t.false_kept);
    EXPECT_DOUBLE_EQ(0.5, t.false_refused) << "the uncertain safe pair is a false refusal once uncertain refuses";
    // a baseline's decision: refused below the line; with no break and no safe record there is no rate
    EXPECT_EQ(PL_COLOC_UNSAFE, pl_check_decision_of(0.74, 0.75));
    EXPECT_EQ(PL_COLOC_SAFE, pl_check_decision_of(0.75, 0.75));
    pl_check_decisions(c + 5, d + 5, 1, 0.75, &t);
    EXPECT_TRUE(isnan(t.recall_kept) && isnan(t.recall_refused) && isnan(t.false_kept) && isnan(t.false_refused));
}

// Binary-exact figures, so each boundary is the rule's: a bound reached is inside, a record without a standard error
// is not widened, and a case without bounds is not counted.
TEST(PlaceCheckSkill, BoundsHoldAFigureOnTheirEdgeAndWidenByTwoStandardErrors)
{
    const pl_check_case c[] = {{0, 0.5, 0.125},  // on lo: inside
                               {0, 0.75, 0.125}, // on hi: inside
                               {0, 0.25, 0.125}, // 0.25 under lo 0.5, but lo - 2 se = 0.25: inside_2se
                               {0, 1.0, 0.0625}, // hi + 2 se = 0.875: outside both
                               {0, 0.25, NAN},   // no se: not widened, outside both
                               {0, 0.5, 0.125}}; // no bounds: not counted
    const double lo[] = {0.5, 0.5, 0.5, 0.5, 0.5, NAN}, hi[] = {0.75, 0.75, 0.75, 0.75, 0.75, 0.75};
    pl_check_coverage v;
    pl_check_cover(c, lo, hi, 6, &v);
    EXPECT_EQ(5u, v.n);
    EXPECT_EQ(2u, v.inside);
    EXPECT_EQ(3u, v.inside_2se);
    pl_check_cover(c, lo, hi, 0, &v);
    EXPECT_EQ(0u, v.n + v.inside + v.inside_2se);
}

// The decision is place pair's own verdict (pl_coloc_check with the front ends' defaults) on every pair of the
// corpus's profiles, and "uncertain counts as refused" is exactly --refuse uncertain.
TEST(PlaceCheckSkill, DecisionIsPlacePairsVerdictAndUncertainRefusedIsRefuseUncertain)
{
    const char *names[] = {"fio-randread", "fio-seqwrite", "gzip", "memcached", "redis",
                           "sqlite-fsync", "stress-hdd", "stress-stream", "xz"};
    std::vector<profile> p(9);
    for (unsigned i = 0; i < 9; i++) {
        char why[512];
        ASSERT_EQ(0, profile_read((corpus() + "/profiles/" + names[i] + ".json").c_str(), &p[i], why, sizeof why))
            << why;
    }
    const pl_coloc_opts est = {PL_COLOC_MARGIN, true, false, true, PL_DECIDE_MODEL, PL_WM_PRODUCT, false},
                       every = {PL_COLOC_MARGIN, true, false, false, PL_DECIDE_MODEL, PL_WM_PRODUCT, false};
    unsigned seen[3] = {0, 0, 0};
    for (unsigned i = 0; i < 9; i++)
        for (unsigned j = 0; j < 9; j++) {
            if (i == j)
                continue;
            const profile *g[2] = {&p[i], &p[j]};
            pl_coloc_result r;
            char why[512];
            ASSERT_EQ(0, pl_coloc_check(g, 2, &est, &r, why, sizeof why)) << why;
            const pl_coloc_verdict v = pl_check_decision(&p[i], &p[j], &est);
            EXPECT_EQ(r.verdict, v) << names[i] << " with " << names[j];
            pl_coloc_result_free(&r);
            seen[v]++;
            EXPECT_EQ(v != PL_COLOC_SAFE, pl_check_decision(&p[i], &p[j], &every) == PL_COLOC_UNSAFE)
                << names[i] << " with " << names[j];
        }
    EXPECT_EQ(72u, seen[0] + seen[1] + seen[2]);
    for (auto &x : p)
        profile_free(&x);
}

// B's group from its own profile: the largest PSI io some of the solo baselines (phases of no SoI), >= 5 %.
TEST(PlaceCheckSkill, IoBoundReadsTheSoloBaselinesOfBsProfile)
{
    profile p;
    profile_init(&p);
    EXPECT_EQ(0, pl_check_io_bound(&p)) << "no phases (before 1.4): no I/O shown";
    profile_phase f{};
    f.io_some = 80; // an SoI's phase: the SoI's own pressure, not the program's
    ASSERT_EQ(0, profile_add_phase(&p, "tolerated", "disk-bw", &f));
    f.io_some = 4.9;
    ASSERT_EQ(0, profile_add_phase(&p, "baseline before", nullptr, &f));
    f.io_some = NAN;
    ASSERT_EQ(0, profile_add_phase(&p, "baseline after", nullptr, &f));
    EXPECT_EQ(0, pl_check_io_bound(&p));
    f.io_some = PL_CHECK_IO_SOME_PCT;
    ASSERT_EQ(0, profile_add_phase(&p, "baseline after", nullptr, &f));
    EXPECT_EQ(1, pl_check_io_bound(&p));
    profile_free(&p);
    // the corpus: the four disk programs are I/O-bound, the five compute ones are not
    for (const char *n : {"fio-randread", "fio-seqwrite", "sqlite-fsync", "stress-hdd", "gzip", "memcached", "redis",
                          "stress-stream", "xz"}) {
        profile q;
        char why[512];
        ASSERT_EQ(0, profile_read((corpus() + "/profiles/" + n + ".json").c_str(), &q, why, sizeof why)) << why;
        const bool disk = !strncmp(n, "fio", 3) || !strcmp(n, "sqlite-fsync") || !strcmp(n, "stress-hdd");
        EXPECT_EQ(disk ? 1 : 0, pl_check_io_bound(&q)) << n;
        profile_free(&q);
    }
}

TEST(PlaceCheckSkill, PerGroupBaselineIsFittedOnTheOtherHalfOnly)
{
    //                       half A           | half B
    const double meas[] = {0.5, 0.7, 1.0, 0.8, 0.9, 1.1};
    const int group[] = {1, 1, 0, 1, 0, 0}, half[] = {0, 0, 0, 1, 1, 1};
    double pred[6], mean[2][2];
    unsigned count[2][2];
    pl_check_group_fit(meas, group, half, 6, pred, mean, count);
    const double want[] = {0.8, 0.8, 1.0, 0.6, 1.0, 1.0}; // A from B's group means, B from A's
    for (int i = 0; i < 6; i++)
        EXPECT_NEAR(want[i], pred[i], 1e-12) << i;
    EXPECT_NEAR(0.6, mean[0][1], 1e-12);
    EXPECT_NEAR(1.0, mean[1][0], 1e-12);
    EXPECT_EQ(2u, count[0][1]);
    EXPECT_EQ(2u, count[1][0]);
    // no record is predicted from itself or its own half: moving any measurement leaves its half's predictions
    for (int i = 0; i < 6; i++) {
        double m2[6], p2[6];
        std::copy(meas, meas + 6, m2);
        m2[i] += 0.3;
        pl_check_group_fit(m2, group, half, 6, p2, nullptr, nullptr);
        for (int j = 0; j < 6; j++) {
            if (half[j] == half[i]) {
                EXPECT_DOUBLE_EQ(pred[j], p2[j]) << "record " << j << " moved with record " << i;
            }
        }
    }
    // a group empty in the other half takes that half's mean; an empty other half, the constant 1.0
    const double m3[] = {0.5, 0.7, 0.9};
    const int g3[] = {1, 1, 0}, h3[] = {0, 0, 1};
    pl_check_group_fit(m3, g3, h3, 3, pred, mean, count);
    EXPECT_NEAR(0.9, pred[0], 1e-12) << "B has no I/O-bound record: its mean";
    EXPECT_NEAR(0.6, pred[2], 1e-12) << "A has no other record: its mean";
    EXPECT_TRUE(isnan(mean[0][0]));
    const int h4[] = {0, 0, 0};
    pl_check_group_fit(m3, g3, h4, 3, pred, nullptr, nullptr);
    EXPECT_DOUBLE_EQ(1.0, pred[0]);
}

namespace {

// The exact bootstrap distribution by brute force: every one of the n^n ordered resamples, equally likely; the
// quantile at q is the smallest mean whose share at or below it reaches q.
std::pair<double, double> exact_interval(const std::vector<double> &d, double qlo, double qhi)
{
    const size_t n = d.size();
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total *= n;
    std::vector<double> means;
    std::vector<size_t> idx(n, 0);
    for (size_t t = 0; t < total; t++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += d[idx[i]];
        means.push_back(s / n);
        for (size_t i = 0; i < n && ++idx[i] == n; i++)
            idx[i] = 0;
    }
    std::sort(means.begin(), means.end());
    auto at = [&](double q) { return means[(size_t)std::ceil(q * total - 1e-9) - 1]; };
    return {at(qlo), at(qhi)};
}

} // namespace

TEST(PlaceCheckSkill, BootstrapOfIdenticalPredictorsIsZero)
{
    const double meas[] = {0.9, 0.7, 1.2, 0.95}, model[] = {1.0, 0.8, 1.0, 0.9};
    pl_boot b;
    ASSERT_EQ(0, pl_check_bootstrap(meas, model, model, 4, PL_BOOT_RESAMPLES, PL_BOOT_SEED, &b));
    EXPECT_EQ(0.0, b.gain);
    EXPECT_EQ(0.0, b.lo);
    EXPECT_EQ(0.0, b.hi);
    EXPECT_EQ(-EINVAL, pl_check_bootstrap(meas, model, model, 0, PL_BOOT_RESAMPLES, 1, &b));
    EXPECT_EQ(-EINVAL, pl_check_bootstrap(meas, model, model, 4, 0, 1, &b));
}

TEST(PlaceCheckSkill, BootstrapOfAPredictorBetterOnEveryCaseLiesAboveZero)
{
    const double meas[] = {0.6, 0.8, 1.0, 0.7, 0.9}, model[] = {0.65, 0.78, 0.99, 0.72, 0.95};
    const double one[] = {1, 1, 1, 1, 1};
    pl_boot b;
    ASSERT_EQ(0, pl_check_bootstrap(meas, model, one, 5, PL_BOOT_RESAMPLES, 7, &b));
    const double gain = ((0.4 - 0.05) + (0.2 - 0.02) + (0.0 - 0.01) + (0.3 - 0.02) + (0.1 - 0.05)) / 5;
    EXPECT_NEAR(gain, b.gain, 1e-12);
    // the constant is better on one case (1.0 measured): every d but one is > 0, so most resamples are
    const double m2[] = {0.6, 0.8, 0.7, 0.9}, p2[] = {0.65, 0.78, 0.72, 0.95};
    ASSERT_EQ(0, pl_check_bootstrap(m2, p2, one, 4, PL_BOOT_RESAMPLES, 7, &b));
    EXPECT_GT(b.lo, 0.0) << "[" << b.lo << ", " << b.hi << "]";
    EXPECT_LE(b.lo, b.gain);
    EXPECT_GE(b.hi, b.gain);
    // and the other way round: a baseline better everywhere gives an interval below 0
    ASSERT_EQ(0, pl_check_bootstrap(m2, one, p2, 4, PL_BOOT_RESAMPLES, 7, &b));
    EXPECT_LT(b.hi, 0.0);
}

TEST(PlaceCheckSkill, BootstrapMatchesTheExactDistributionByBruteForce)
{
    // n = 2 and 3: the extreme resamples weigh 1/4 and 1/27, above 2.5 %, so the interval is exactly the exact
    // distribution's quantiles (its smallest and largest means) for any seed that draws them 50 times in 2000
    const std::vector<std::vector<double>> small = {{0.1, -0.05}, {0.3, -0.2, 0.05}};
    for (const auto &d : small) {
        const unsigned n = d.size();
        std::vector<double> meas(n, 1.0), model(n), base(n);
        for (unsigned i = 0; i < n; i++) { // per case |base - meas| - |model - meas| = d[i]
            model[i] = d[i] >= 0 ? 1.0 : 1.0 - d[i];
            base[i] = d[i] >= 0 ? 1.0 + d[i] : 1.0;
        }
        auto ex = exact_interval(d, 0.025, 0.975);
        for (uint64_t seed : {1ull, 2ull, 12345ull}) {
            pl_boot b;
            ASSERT_EQ(0, pl_check_bootstrap(meas.data(), model.data(), base.data(), n, PL_BOOT_RESAMPLES, seed, &b));
            EXPECT_NEAR(ex.first, b.lo, 1e-12) << "n " << n << " seed " << seed;
            EXPECT_NEAR(ex.second, b.hi, 1e-12) << "n " << n << " seed " << seed;
        }
    }
    // n = 6 (46656 resamples enumerated): 2000 draws land within a point and a half of the exact 2.5 % and 97.5 %
    const std::vector<double> d = {0.12, -0.04, 0.3, 0.01, -0.2, 0.07};
    const unsigned n = d.size();
    std::vector<double> meas(n, 1.0), model(n), base(n);
    for (unsigned i = 0; i < n; i++) {
        model[i] = d[i] >= 0 ? 1.0 : 1.0 - d[i];
        base[i] = d[i] >= 0 ? 1.0 + d[i] : 1.0;
    }
    auto inner = exact_interval(d, 0.04, 0.96), outer = exact_interval(d, 0.01, 0.99);
    pl_boot b;
    ASSERT_EQ(0, pl_check_bootstrap(meas.data(), model.data(), base.data(), n, PL_BOOT_RESAMPLES, PL_BOOT_SEED, &b));
    EXPECT_GE(b.lo, outer.first);
    EXPECT_LE(b.lo, inner.first);
    EXPECT_GE(b.hi, inner.second);
    EXPECT_LE(b.hi, outer.second);
    double mean = 0;
    for (double x : d)
        mean += x / n;
    EXPECT_NEAR(mean, b.gain, 1e-12);
}

TEST(PlaceCheckSkill, BootstrapIsReproducibleBySeed)
{
    // 20 cases of distinct gains, so that two draws of 2000 resamples share no quantile by chance
    std::vector<double> meas(20), model(20), one(20, 1.0);
    for (int i = 0; i < 20; i++) {
        meas[i] = 0.6 + 0.4 * fabs(sin(i + 1.0));
        model[i] = meas[i] + 0.1 * cos(3.0 * i);
    }
    pl_boot a, b, c;
    ASSERT_EQ(0, pl_check_bootstrap(meas.data(), model.data(), one.data(), 20, PL_BOOT_RESAMPLES, 42, &a));
    ASSERT_EQ(0, pl_check_bootstrap(meas.data(), model.data(), one.data(), 20, PL_BOOT_RESAMPLES, 42, &b));
    ASSERT_EQ(0, pl_check_bootstrap(meas.data(), model.data(), one.data(), 20, PL_BOOT_RESAMPLES, 43, &c));
    EXPECT_EQ(a.lo, b.lo);
    EXPECT_EQ(a.hi, b.hi);
    EXPECT_EQ(a.gain, c.gain) << "the point estimate reads no draw";
    EXPECT_TRUE(a.lo != c.lo && a.hi != c.hi) << "another seed, another draw";
}

// The committed corpus end to end: the new fields are there and agree with the records and with each other.
TEST(PlaceCheckSkill, CommandOnTheCommittedCorpus)
{
    const std::vector<std::string> recs = corpus_records();
    const unsigned N = (unsigned)recs.size();
    ASSERT_EQ(175u, N) << "every record of the corpus has both its programs' profiles in " << kSet;
    std::vector<std::string> args = {"place", "predict", "--check"};
    args.insert(args.end(), recs.begin(), recs.end());
    args.insert(args.end(), {"--profiles", corpus() + kSet, "--json"});
    ib_test::Proc p;
    run(p, args);
    ASSERT_EQ(0, p.exit_code()) << p.err;
    json_error_t e;
    json_t *d = json_loads(p.out.c_str(), 0, &e);
    ASSERT_NE(nullptr, d) << e.text;
    json_t *rr = json_object_get(d, "records");
    ASSERT_EQ(N, json_array_size(rr));
    // recount the decision table from the records' own truth and decision
    unsigned count[3][3] = {}, nb = 0, likely[3] = {}; // likely: refused by the default reading, by truth
    std::vector<double> meas, grp, model;
    std::vector<int> group, half;
    size_t i;
    json_t *r;
    const char *truths[] = {"breaks", "safe", "unclear"}, *decs[] = {"kept", "uncertain", "refused"};
    json_array_foreach(rr, i, r)
    {
        const char *t = json_string_value(json_object_get(r, "truth")),
                   *c = json_string_value(json_object_get(r, "decision_established")),
                   *l = json_string_value(json_object_get(r, "decision"));
        ASSERT_TRUE(t && c && l) << i;
        const double m = json_number_value(json_object_get(r, "measured")), se = json_number_value(json_object_get(r, "se"));
        EXPECT_STREQ(pl_truth_name(pl_check_truth(m, se, 0.95)), t) << i;
        int ti = !strcmp(t, "break") ? 0 : !strcmp(t, "safe") ? 1 : 2;
        int ci = !strcmp(c, "kept") ? 0 : !strcmp(c, "uncertain") ? 1 : 2;
        count[ti][ci]++;
        likely[ti] += !strcmp(l, "refused");
        EXPECT_TRUE(!strcmp(l, c) || (!strcmp(c, "uncertain") && !strcmp(l, "refused")))
            << i << ": the default reading refuses some uncertain pairs, and changes nothing else";
        meas.push_back(m);
        model.push_back(json_number_value(json_object_get(r, "predicted")));
        grp.push_back(json_number_value(json_object_get(r, "per_group")));
        group.push_back(json_is_true(json_object_get(r, "b_io_bound")));
        half.push_back(!strcmp(json_string_value(json_object_get(r, "half")), "B"));
        nb += half.back();
    }
    // the bounds: each record's hold its prediction, and their coverage is recounted from the records
    pl_check_coverage cov = {};
    json_array_foreach(rr, i, r)
    {
        const double lo = json_number_value(json_object_get(r, "lo")), hi = json_number_value(json_object_get(r, "hi")),
                     pr = json_number_value(json_object_get(r, "predicted"));
        ASSERT_TRUE(json_is_number(json_object_get(r, "lo")) && json_is_number(json_object_get(r, "hi"))) << i;
        EXPECT_TRUE(lo <= pr && pr <= hi) << i << ": " << lo << " " << pr << " " << hi;
        const pl_check_case one = {pr, json_number_value(json_object_get(r, "measured")),
                                   json_number_value(json_object_get(r, "se"))};
        pl_check_coverage v;
        pl_check_cover(&one, &lo, &hi, 1, &v);
        cov.n += v.n, cov.inside += v.inside, cov.inside_2se += v.inside_2se;
    }
    json_t *bj = json_object_get(d, "bounds");
    EXPECT_EQ((json_int_t)N, json_integer_value(json_object_get(bj, "n")));
    EXPECT_EQ((json_int_t)cov.inside, json_integer_value(json_object_get(bj, "inside")));
    EXPECT_EQ((json_int_t)cov.inside_2se, json_integer_value(json_object_get(bj, "inside_2se")));
    EXPECT_LT(cov.inside, cov.inside_2se) << "the measurement's noise widens the bounds";
    json_t *dec = json_object_get(json_object_get(d, "decisions"), "place_pair");
    ASSERT_NE(nullptr, dec);
    EXPECT_STREQ("likely", json_string_value(json_object_get(json_object_get(d, "decisions"), "default")));
    unsigned breaks = 0;
    for (int t = 0; t < 3; t++)
        for (int c = 0; c < 3; c++) {
            EXPECT_EQ((json_int_t)count[t][c], json_integer_value(json_object_get(json_object_get(dec, truths[t]), decs[c])))
                << truths[t] << " " << decs[c];
            breaks += t == 0 ? count[t][c] : 0;
        }
    ASSERT_GT(breaks, 0u) << "the corpus has breaks";
    // breaks = the recall's denominator, in both readings
    EXPECT_NEAR((double)count[0][2] / breaks,
                json_number_value(json_object_get(json_object_get(dec, "recall"), "uncertain_kept")), 1e-12);
    EXPECT_NEAR((double)(count[0][2] + count[0][1]) / breaks,
                json_number_value(json_object_get(json_object_get(dec, "recall"), "uncertain_refused")), 1e-12);
    EXPECT_NEAR((double)likely[0] / breaks, json_number_value(json_object_get(json_object_get(dec, "recall"), "likely")),
                1e-12);
    const unsigned safe = count[1][0] + count[1][1] + count[1][2];
    if (safe) {
        EXPECT_NEAR((double)likely[1] / safe,
                    json_number_value(json_object_get(json_object_get(dec, "false_refusals"), "likely")), 1e-12);
    }
    json_t *k = json_object_get(json_object_get(d, "decisions"), "constant");
    EXPECT_EQ(0, json_integer_value(json_object_get(json_object_get(k, "breaks"), "refused"))) << "never refuses";
    EXPECT_EQ((json_int_t)breaks, json_integer_value(json_object_get(json_object_get(k, "breaks"), "kept")));
    // the per-group predictions are the library's cross-fit of the records' own groups and halves
    std::vector<double> want(N);
    pl_check_group_fit(meas.data(), group.data(), half.data(), N, want.data(), nullptr, nullptr);
    for (unsigned j = 0; j < N; j++)
        EXPECT_DOUBLE_EQ(want[j], grp[j]) << j;
    // the bootstrap: the held-out half B, then all; each gain the difference of the two MAEs on those records
    json_t *rows = json_object_get(json_object_get(d, "bootstrap"), "rows");
    ASSERT_EQ(2u, json_array_size(rows));
    EXPECT_STREQ("half B (held out)", json_string_value(json_object_get(json_array_get(rows, 0), "records")));
    EXPECT_EQ((json_int_t)nb, json_integer_value(json_object_get(json_array_get(rows, 0), "n")));
    EXPECT_EQ((json_int_t)N, json_integer_value(json_object_get(json_array_get(rows, 1), "n")));
    json_t *all = json_array_get(rows, 1);
    double gk = json_number_value(json_object_get(json_object_get(all, "constant"), "gain"));
    EXPECT_NEAR(json_number_value(json_object_get(json_object_get(d, "constant"), "mae")) -
                    json_number_value(json_object_get(json_object_get(d, "model"), "mae")),
                gk, 1e-12);
    double gg = json_number_value(json_object_get(json_object_get(all, "per_group"), "gain"));
    EXPECT_NEAR(json_number_value(json_object_get(json_object_get(json_object_get(d, "per_group"), "stats"), "mae")) -
                    json_number_value(json_object_get(json_object_get(d, "model"), "mae")),
                gg, 1e-12);
    pl_boot b;
    ASSERT_EQ(0, pl_check_bootstrap(meas.data(), model.data(), grp.data(), N, PL_BOOT_RESAMPLES, PL_BOOT_SEED, &b));
    EXPECT_DOUBLE_EQ(b.lo, json_number_value(json_object_get(json_object_get(all, "per_group"), "lo")));
    EXPECT_DOUBLE_EQ(b.hi, json_number_value(json_object_get(json_object_get(all, "per_group"), "hi")));
    EXPECT_EQ(PL_BOOT_SEED, json_integer_value(json_object_get(json_object_get(d, "bootstrap"), "seed")));
    json_decref(d);

    // two profile sets, the corpus's second taken at another time: one report each, in the order given
    std::vector<std::string> two = args;
    two.insert(two.end() - 1, {"--profiles", corpus() + "/profiles-b", "--seed", "9"});
    ib_test::Proc q;
    run(q, two);
    ASSERT_EQ(0, q.exit_code()) << q.err;
    d = json_loads(q.out.c_str(), 0, &e);
    ASSERT_NE(nullptr, d) << e.text;
    ASSERT_EQ(2u, json_array_size(json_object_get(d, "sets")));
    EXPECT_EQ(9, json_integer_value(
                     json_object_get(json_object_get(json_array_get(json_object_get(d, "sets"), 1), "bootstrap"), "seed")));
    json_decref(d);

    // the table: the new sections, each set headed by its profiles
    two.pop_back();
    ib_test::Proc t;
    run(t, two);
    ASSERT_EQ(0, t.exit_code()) << t.err;
    for (const char *s : {"(set 1 of 2)", "(set 2 of 2)", "per group", "The model's bounds", "recall of breaks, by its point (default)",
                          "false refusals, uncertain refused", "half B (held out)", "seed 9"})
        EXPECT_NE(std::string::npos, t.out.find(s)) << s << "\n" << t.out;
}

TEST(PlaceCheckSkill, SeedAndProfileSetsRefusedWhereTheyDoNotApply)
{
    const std::string rec = corpus() + "/records/gzip--xz.json", prof = corpus() + "/profiles";
    const std::vector<std::vector<std::string>> bad = {
        {"place", "predict", prof + "/xz.json", "--beside", prof + "/gzip.json", "--seed", "3"},
        {"place", "predict", "--check", rec, "--profiles", prof, "--seed", "-1"},
        // a later set that cannot be read: no report of the first (records of docs/data/corun warn about nothing)
        {"place", "predict", "--check", std::string(IBENCH_FIXTURES) + "/corun/xz-dram.json", "--profiles",
         corpus() + "/../corun", "--profiles", "/nonexistent"},
    };
    for (const auto &a : bad) {
        ib_test::Proc p;
        run(p, a);
        const std::string line = ib_test::words(a);
        EXPECT_EQ(2, p.exit_code()) << line << "\n" << p.err;
        EXPECT_EQ(1, std::count(p.err.begin(), p.err.end(), '\n')) << line << "\none line: " << p.err;
        EXPECT_TRUE(p.out.empty()) << line << ": no partial report\n" << p.out;
    }
}
