// The placement model (placement/mapping/pl_model.h, Funston et al. ATC'18 §4-5): the strict CSV of performance vectors, k-means++ and
// the silhouette, k auto on a synthetic corpus of 7 clusters, leave-one-out prediction with the iterative method
// (Algorithm 1), its rules for a measurement outside every interval, packing on a synthetic topology, the model
// file, and `ibench place model` / `ibench place pack` through the binary.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <algorithm>
#include <iterator>
#include <vector>

#include "test_support.h"

extern "C" {
#include "pl_model.h"
}

namespace {

std::string parse_err(const std::string &text)
{
    struct pl_vectors v;
    char why[512] = "";
    int rc = pl_vectors_parse(text.c_str(), &v, why, sizeof why);
    EXPECT_NE(rc, 0) << text;
    EXPECT_EQ(strchr(why, '\n'), nullptr);
    return why;
}

TEST(PlaceModel, CsvParsesVectorsAndLabels)
{
    struct pl_vectors v;
    char why[256];
    ASSERT_EQ(pl_vectors_parse("workload, p1,p2 ,p3\r\n\nw1,1,0.8,0.7\nw2,1.0,1.25,2e-1\n", &v, why, sizeof why), 0)
        << why;
    EXPECT_EQ(v.n, 2u);
    EXPECT_EQ(v.np, 3u);
    EXPECT_STREQ(v.pid[1], "p2");
    EXPECT_STREQ(v.name[1], "w2");
    EXPECT_DOUBLE_EQ(v.v[1 * 3 + 2], 0.2);
    EXPECT_EQ(v.label, nullptr);
    pl_vectors_free(&v);
    ASSERT_EQ(pl_vectors_parse("workload,a,b,label\nx,1,2,fast\ny,1,3,slow\n", &v, why, sizeof why), 0) << why;
    EXPECT_EQ(v.np, 2u);
    ASSERT_NE(v.label, nullptr);
    EXPECT_STREQ(v.label[1], "slow");
    pl_vectors_free(&v);
}

TEST(PlaceModel, CsvRefusesBadInputWithLineAndColumn)
{
    EXPECT_EQ(parse_err(""), "empty file: no header");
    EXPECT_EQ(parse_err("\n  \n"), "empty file: no header");
    EXPECT_EQ(parse_err("workload,a,b\n"), "no workload rows after the header");
    EXPECT_EQ(parse_err("name,a,b\nw,1,2\n"), "line 1 column 1: the header must start with 'workload', not 'name'");
    EXPECT_EQ(parse_err("workload\nw\n"), "line 1: the header names no placement");
    EXPECT_EQ(parse_err("workload,a,a\nw,1,2\n"), "line 1 column 3: placement 'a' named twice");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,x2\n"), "line 2 column 3: 'x2' is not a number");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,\n"), "line 2 column 3: '' is not a number");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,nan\n"), "line 2 column 3: 'nan' is not a number");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,-1\n"), "line 2 column 3: -1 is not a positive performance");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,2\nv,1\n"), "line 3: 2 columns, the header has 3");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,2\n\nw,1,3\n"), "line 4 column 1: workload 'w' named twice");
    EXPECT_EQ(parse_err("workload,a,label\nw,1,\n"), "line 2 column 3: empty label");
}

// ---------------------------------------------------------------- the synthetic corpus

uint64_t sm64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
double u01(uint64_t *s) { return (double)(sm64(s) >> 11) * 0x1.0p-53; }

constexpr unsigned kClusters = 7, kPer = 6, kPl = 7;

// 7 centres drawn in [0.5, 1.5] per placement (baseline 1.0), redrawn until every pair is at least 0.6 apart
// (Euclidean); members = centre + uniform noise in [-0.01, 0.01] (none on the baseline).  Fixed seed.
std::string corpus_csv(std::vector<unsigned> *truth = nullptr)
{
    uint64_t s = 20170420;
    double c[kClusters][kPl];
    for (unsigned k = 0; k < kClusters; k++) {
        for (bool ok = false; !ok;) {
            c[k][0] = 1.0;
            for (unsigned p = 1; p < kPl; p++)
                c[k][p] = 0.5 + u01(&s);
            ok = true;
            for (unsigned e = 0; e < k && ok; e++) {
                double d = 0;
                for (unsigned p = 0; p < kPl; p++)
                    d += (c[k][p] - c[e][p]) * (c[k][p] - c[e][p]);
                ok = sqrt(d) >= 0.6;
            }
        }
    }
    std::string t = "workload";
    for (unsigned p = 0; p < kPl; p++)
        t += ",p" + std::to_string(p + 1);
    t += "\n";
    // members interleaved (w1 of cluster 1, w2 of cluster 2, ...) so no cluster is a block of the file
    for (unsigned i = 0; i < kClusters * kPer; i++) {
        unsigned k = i % kClusters;
        if (truth)
            truth->push_back(k);
        char b[64];
        t += "w" + std::to_string(i + 1);
        for (unsigned p = 0; p < kPl; p++) {
            snprintf(b, sizeof b, ",%.6f", p ? c[k][p] + 0.02 * (u01(&s) - 0.5) : 1.0);
            t += b;
        }
        t += "\n";
    }
    return t;
}

struct Vec {
    struct pl_vectors v;
    explicit Vec(const std::string &text)
    {
        char why[256] = "";
        EXPECT_EQ(pl_vectors_parse(text.c_str(), &v, why, sizeof why), 0) << why;
    }
    ~Vec() { pl_vectors_free(&v); }
};

double fake_measure(void *ctx, unsigned p) { return static_cast<const double *>(ctx)[p]; }

TEST(PlaceModel, SilhouetteHandComputed)
{
    // 1-D points 0, 1 | 4, 6.  Point 0: a = 1, b = (4+6)/2 = 5, s = 4/5.  Point 1: a = 1, b = (3+5)/2 = 4, s = 3/4.
    // Point 4: a = 2, b = (4+3)/2 = 3.5, s = 1.5/3.5 = 3/7.  Point 6: a = 2, b = (6+5)/2 = 5.5, s = 3.5/5.5 = 7/11.
    const double x[] = {0, 1, 4, 6};
    const unsigned a[] = {0, 0, 1, 1};
    EXPECT_NEAR(pl_silhouette(x, 4, 1, a, 2), (0.8 + 0.75 + 3.0 / 7 + 7.0 / 11) / 4, 1e-15);
    // a singleton scores 0: points 0, 1 | 5 -> (4/5 + 3/4 + 0) / 3
    const double y[] = {0, 1, 5};
    EXPECT_NEAR(pl_silhouette(y, 3, 1, a, 2), (0.8 + 0.75) / 3, 1e-15);
    // 2-D: (0,0),(0,2) | (3,0): a = 2 for both; b = 3 and sqrt(13); the singleton 0
    const double z[] = {0, 0, 0, 2, 3, 0};
    EXPECT_NEAR(pl_silhouette(z, 3, 2, a, 2), ((3.0 - 2) / 3 + (sqrt(13.0) - 2) / sqrt(13.0)) / 3, 1e-15);
    EXPECT_TRUE(std::isnan(pl_silhouette(x, 4, 1, a, 1)));
}

TEST(PlaceModel, KmeansIsDeterministicUnderASeed)
{
    Vec c(corpus_csv());
    unsigned n = c.v.n, d = c.v.np;
    for (unsigned k : {3u, 7u, 9u}) {
        std::vector<unsigned> a1(n), a2(n);
        double i1, i2;
        ASSERT_EQ(pl_kmeans(c.v.v, n, d, k, 42, a1.data(), &i1), 0);
        ASSERT_EQ(pl_kmeans(c.v.v, n, d, k, 42, a2.data(), &i2), 0);
        EXPECT_EQ(a1, a2) << "k " << k;
        EXPECT_EQ(i1, i2) << "k " << k; // bit for bit
        EXPECT_EQ(a1[0], 0u);           // renumbered by first member
        unsigned mx = 0;
        for (unsigned x : a1)
            mx = x > mx ? x : mx;
        EXPECT_EQ(mx, k - 1) << "no empty cluster";
    }
    // a structureless cloud (60 points uniform in the unit cube, k = 6) has many local optima: the seed matters
    // there (some two seeds of 1..20 give different partitions), and one seed still gives one result
    uint64_t s = 5;
    std::vector<double> cloud(60 * 3);
    for (double &x : cloud)
        x = u01(&s);
    std::vector<std::vector<unsigned>> seen;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        std::vector<unsigned> a1(60), a2(60);
        ASSERT_EQ(pl_kmeans(cloud.data(), 60, 3, 6, seed, a1.data(), nullptr), 0);
        ASSERT_EQ(pl_kmeans(cloud.data(), 60, 3, 6, seed, a2.data(), nullptr), 0);
        EXPECT_EQ(a1, a2) << "seed " << seed;
        if (std::find(seen.begin(), seen.end(), a1) == seen.end())
            seen.push_back(a1);
    }
    EXPECT_GT(seen.size(), 1u);
    std::vector<unsigned> a(n);
    EXPECT_EQ(pl_kmeans(c.v.v, n, d, 0, 1, a.data(), nullptr), -EINVAL);
    EXPECT_EQ(pl_kmeans(c.v.v, n, d, n + 1, 1, a.data(), nullptr), -EINVAL);
}

TEST(PlaceModel, KAutoFindsTheSevenClusters)
{
    std::vector<unsigned> truth;
    Vec c(corpus_csv(&truth));
    struct pl_model m;
    char why[256] = "";
    struct pl_train_opts o = {0, 1, 0};
    ASSERT_EQ(pl_model_train(&c.v, &o, &m, why, sizeof why), 0) << why;
    for (unsigned t = 0; t < m.nk; t++)
        printf("k %2u  silhouette %.4f\n", m.ks[t], m.sil[t]);
    EXPECT_EQ(m.k, 7u);
    EXPECT_EQ(m.nk, 9u); // k = 2..10
    for (unsigned cl = 0; cl < m.k; cl++) {
        EXPECT_EQ(m.c[cl].size, kPer);
        // every member of a cluster has the same true cluster: the partition is the truth
        unsigned t0 = truth[atoi(m.c[cl].members[0] + 1) - 1];
        for (unsigned i = 0; i < m.c[cl].size; i++)
            EXPECT_EQ(truth[atoi(m.c[cl].members[i] + 1) - 1], t0);
    }
    pl_model_free(&m);
}

TEST(PlaceModel, LeaveOneOutPredictsWithinFivePercent)
{
    std::vector<unsigned> truth;
    std::string all = corpus_csv(&truth);
    std::vector<std::string> lines;
    for (size_t a = 0, b; (b = all.find('\n', a)) != std::string::npos; a = b + 1)
        lines.push_back(all.substr(a, b - a));
    unsigned n = (unsigned)lines.size() - 1, within = 0, few = 0, right = 0;
    printf("%-8s %5s %9s %-10s %-22s %9s\n", "workload", "true", "predicted", "status", "tried", "max error");
    for (unsigned h = 0; h < n; h++) {
        std::string train = lines[0] + "\n";
        for (unsigned i = 0; i < n; i++)
            if (i != h)
                train += lines[i + 1] + "\n";
        Vec tv(train), hv(lines[0] + "\n" + lines[h + 1] + "\n");
        struct pl_model m;
        char why[256] = "";
        struct pl_train_opts o = {0, 1, 0};
        ASSERT_EQ(pl_model_train(&tv.v, &o, &m, why, sizeof why), 0) << why;
        struct pl_prediction pr;
        ASSERT_EQ(pl_model_predict(&m, fake_measure, hv.v.v, &pr, why, sizeof why), 0) << why;
        double err = 0;
        for (unsigned p = 0; p < kPl; p++)
            err = std::max(err, fabs(pr.vector[p] - hv.v.v[p]) / hv.v.v[p]);
        std::string tried;
        for (unsigned t = 0; t < pr.ntried; t++)
            tried += (t ? "," : "") + std::string(m.pid[pr.tried[t]]);
        bool ok = pr.cluster >= 0;
        for (unsigned i = 0; ok && i < m.c[pr.cluster].size; i++)
            ok = truth[atoi(m.c[pr.cluster].members[i] + 1) - 1] == truth[h];
        // "predicted": the true cluster of the predicted cluster's members (the model numbers clusters its own way)
        std::string pc = pr.cluster >= 0 ? std::to_string(truth[atoi(m.c[pr.cluster].members[0] + 1) - 1] + 1) : "-";
        printf("%-8s %5u %9s %-10s %-22s %8.2f%%\n", hv.v.name[0], truth[h] + 1, pc.c_str(),
               pl_predict_status_name(pr.status), tried.c_str(), 100 * err);
        within += err <= 0.05;
        few += pr.ntried - 1 <= 3;
        right += ok;
        pl_prediction_free(&pr);
        pl_model_free(&m);
    }
    printf("within 5 %%: %u/%u; at most 3 placements beyond the baseline: %u/%u; right cluster: %u/%u\n", within, n,
           few, n, right, n);
    EXPECT_GE(within * 10, n * 9);
    EXPECT_GE(few * 10, n * 9);
}

// Three clusters by label, placements b (baseline), p1, p2:
//   A: p1 [0.80, 0.90]  p2 [0.50, 0.60]
//   B: p1 [0.85, 0.95]  p2 [1.00, 1.10]
//   C: p1 [1.40, 1.50]  p2 [0.55, 0.65]
// Worst case at p1: A and B overlap (2 stay); at p2: A and C overlap (2); the tie goes to p1, the lower index.
const char *kAbc = "workload,b,p1,p2,label\n"
                   "a1,1,0.80,0.50,A\na2,1,0.90,0.60,A\n"
                   "b1,1,0.85,1.00,B\nb2,1,0.95,1.10,B\n"
                   "c1,1,1.40,0.55,C\nc2,1,1.50,0.65,C\n";

struct Pred {
    struct pl_prediction p;
    Pred(const struct pl_model *m, std::vector<double> truth)
    {
        char why[256] = "";
        EXPECT_EQ(pl_model_predict(m, fake_measure, truth.data(), &p, why, sizeof why), 0) << why;
    }
    ~Pred() { pl_prediction_free(&p); }
    std::vector<unsigned> tried() const { return std::vector<unsigned>(p.tried, p.tried + p.ntried); }
};

TEST(PlaceModel, LabelColumnGivesTheClusters)
{
    Vec c(kAbc);
    struct pl_model m;
    char why[256] = "";
    // a k that is not the number of labels is refused, never dropped in silence; the right one is honoured
    struct pl_train_opts o = {5, 9, 0};
    EXPECT_EQ(pl_model_train(&c.v, &o, &m, why, sizeof why), -EINVAL);
    EXPECT_STREQ(why, "k = 5, but the label column gives 3 clusters: drop k or the column");
    o.k = 3;
    ASSERT_EQ(pl_model_train(&c.v, &o, &m, why, sizeof why), 0) << why;
    EXPECT_TRUE(m.from_labels);
    ASSERT_EQ(m.k, 3u);
    EXPECT_STREQ(m.c[0].name, "A");
    EXPECT_STREQ(m.c[2].name, "C");
    EXPECT_STREQ(m.c[1].members[1], "b2");
    EXPECT_DOUBLE_EQ(m.c[1].centroid[1], 0.9);
    EXPECT_DOUBLE_EQ(m.c[2].lo[2], 0.55);
    EXPECT_DOUBLE_EQ(m.c[2].hi[2], 0.65);
    pl_model_free(&m);
}

TEST(PlaceModel, Algorithm1ExclusionClosestAndNoCluster)
{
    Vec c(kAbc);
    struct pl_model m;
    char why[256] = "";
    struct pl_train_opts o = {0, 1, 0};
    ASSERT_EQ(pl_model_train(&c.v, &o, &m, why, sizeof why), 0) << why;
    {   // p1 = 0.82: inside A only -> found after one placement
        Pred r(&m, {2.0, 1.64, 1.0}); // raw throughputs: divided by the baseline's 2.0
        EXPECT_EQ(r.p.status, PL_PRED_FOUND);
        EXPECT_EQ(r.p.cluster, 0);
        EXPECT_EQ(r.tried(), (std::vector<unsigned>{0, 1}));
        EXPECT_DOUBLE_EQ(r.p.vector[1], 0.82);
        EXPECT_DOUBLE_EQ(r.p.vector[2], 0.55); // A's centroid where not measured
    }
    {   // p1 = 1.2: outside every interval; the closest is C's (0.2 away; A 0.4, B 0.25) -> C
        Pred r(&m, {1, 1.2, 0.3});
        EXPECT_EQ(r.p.status, PL_PRED_CLOSEST);
        EXPECT_EQ(r.p.cluster, 2);
        EXPECT_EQ(r.tried(), (std::vector<unsigned>{0, 1}));
        EXPECT_DOUBLE_EQ(r.p.vector[2], 0.6);
    }
    {   // p1 = 0.87 keeps A, B; p2 = 0.45 is outside every interval, closest A's (0.05) -> A
        Pred r(&m, {1, 0.87, 0.45});
        EXPECT_EQ(r.p.status, PL_PRED_CLOSEST);
        EXPECT_EQ(r.p.cluster, 0);
        EXPECT_EQ(r.tried(), (std::vector<unsigned>{0, 1, 2}));
        EXPECT_EQ(r.p.remaining[1], 2u);
        EXPECT_EQ(r.p.remaining[2], 1u);
    }
    {   // p1 = 0.87 keeps A, B; p2 = 0.70 is outside every interval and the closest is C's (0.05), excluded at p1:
        // every cluster is excluded -> no cluster, and every placement is measured
        Pred r(&m, {1, 0.87, 0.70});
        EXPECT_EQ(r.p.status, PL_PRED_NONE);
        EXPECT_EQ(r.p.cluster, -1);
        EXPECT_EQ(r.p.remaining[2], 0u);
        EXPECT_DOUBLE_EQ(r.p.vector[2], 0.70);
    }
    {   // p2 = 0.63 falls inside C's interval only, C excluded at p1: no cluster
        Pred r(&m, {1, 0.87, 0.63});
        EXPECT_EQ(r.p.status, PL_PRED_NONE);
        EXPECT_EQ(r.p.ntried, 3u);
    }
    {   // p1 = 1.175 lies exactly between B's 0.95 and C's 1.40 (0.225 each, but float rounding makes C's
        // 2e-16 nearer): a tie, so the lower cluster index, B
        Pred r(&m, {1, 1.175, 1.0});
        EXPECT_EQ(r.p.status, PL_PRED_CLOSEST);
        EXPECT_EQ(r.p.cluster, 1);
        EXPECT_EQ(r.p.remaining[1], 1u);
    }
    pl_model_free(&m);
    // tolerance 0.1 widens every interval: p1 = 1.2 is then inside nothing still (C from 1.3), p1 = 1.32 inside C
    o.tolerance = 0.1;
    ASSERT_EQ(pl_model_train(&c.v, &o, &m, why, sizeof why), 0) << why;
    {
        Pred r(&m, {1, 1.32, 0.6});
        EXPECT_EQ(r.p.status, PL_PRED_FOUND);
        EXPECT_EQ(r.p.cluster, 2);
    }
    {   // the tie again between the widened ends 1.05 and 1.30
        Pred r(&m, {1, 1.175, 1.0});
        EXPECT_EQ(r.p.status, PL_PRED_CLOSEST);
        EXPECT_EQ(r.p.cluster, 1);
    }
    pl_model_free(&m);
}

TEST(PlaceModel, AmbiguousWhenEveryPlacementIsMeasured)
{
    // two clusters with the same intervals everywhere: never told apart; the nearest centroid is named
    Vec c("workload,b,p1,label\nx1,1,0.8,X\nx2,1,1.0,X\ny1,1,0.7,Y\ny2,1,1.1,Y\n");
    struct pl_model m;
    char why[256] = "";
    struct pl_train_opts o = {0, 1, 0};
    ASSERT_EQ(pl_model_train(&c.v, &o, &m, why, sizeof why), 0) << why;
    Pred r(&m, {1, 0.95});
    EXPECT_EQ(r.p.status, PL_PRED_AMBIGUOUS);
    EXPECT_EQ(r.p.cluster, 0); // X's centroid 0.9 = Y's 0.9: the tie goes to the lower index
    pl_model_free(&m);
}

TEST(PlaceModel, ModelFileRoundTripAndStrictReader)
{
    Vec c(kAbc);
    struct pl_model m, r;
    char why[256] = "";
    struct pl_train_opts o = {0, 7, 0.01};
    ASSERT_EQ(pl_model_train(&c.v, &o, &m, why, sizeof why), 0) << why;
    char *s = pl_model_dump(&m);
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(pl_model_parse(s, &r, why, sizeof why), 0) << why;
    EXPECT_EQ(r.k, 3u);
    EXPECT_EQ(r.np, 3u);
    EXPECT_DOUBLE_EQ(r.tolerance, 0.01);
    EXPECT_STREQ(r.c[1].name, "B");
    EXPECT_EQ(r.c[1].centroid[2], m.c[1].centroid[2]);
    char *s2 = pl_model_dump(&r);
    EXPECT_STREQ(s, s2);
    free(s2);
    pl_model_free(&r);
    std::string t = s;
    auto bad = [&](const std::string &doc) {
        char w[256] = "";
        EXPECT_NE(pl_model_parse(doc.c_str(), &r, w, sizeof w), 0) << doc;
        return std::string(w);
    };
    std::string v2 = t;
    v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 2");
    EXPECT_EQ(bad(v2), "\"version\" is not 1");
    std::string extra = t;
    extra.insert(extra.find("\"tolerance\""), "\"x\": 1, ");
    EXPECT_EQ(bad(extra), "model: unknown key 'x'");
    std::string cen = t;
    cen.replace(cen.find("\"centroid\": ["), 13, "\"centroid\": [9, ");
    EXPECT_EQ(bad(cen), "clusters[0].centroid: not an array of 3 numbers");
    EXPECT_EQ(bad("{"), "line 1: string or '}' expected near end of file");
    free(s);
    pl_model_free(&m);
}

TEST(PlaceModel, PackOnASyntheticTopology)
{
    // 4 NUMA nodes x 4 L2 x 2 PUs, 8 threads: important placements 1 (1 node), 2-3 (2 nodes), 4-5 (4 nodes).
    const char *names[] = {"numa", "l2"};
    const unsigned arity[] = {4, 4};
    struct pl_hier h;
    char why[256] = "";
    ASSERT_EQ(pl_hier_uniform(&h, names, arity, 2, 2, why, sizeof why), 0) << why;
    // baseline: placement 5 (4 nodes, no L2 shared); predicted 1 0.7 | 2 0.85 | 3 0.95 | 4 0.98
    Vec c("workload,5,1,2,3,4,label\n"
          "a1,1,0.68,0.84,0.94,0.97,A\na2,1,0.72,0.86,0.96,0.99,A\n"
          "z1,1,1.2,1.1,1.1,1.0,Z\n");
    struct pl_model m;
    struct pl_train_opts o = {0, 1, 0};
    ASSERT_EQ(pl_model_train(&c.v, &o, &m, why, sizeof why), 0) << why;
    struct pl_pack pk;
    ASSERT_EQ(pl_model_pack(&m, 0, 0.9, PL_PACK_CENTROID, &h, 8, &pk, why, sizeof why), 0) << why;
    EXPECT_STREQ(pk.level, "numa");
    EXPECT_EQ(pk.ninst, 4u);
    // 3 (2 nodes: 2 containers, 0.95) beats 5 and 4 (4 nodes: 1 container); 1 and 2 miss 0.9
    EXPECT_EQ(pk.choice, 3);
    EXPECT_EQ(pk.containers, 2u);
    EXPECT_EQ(pk.row[1].containers, 4u);
    EXPECT_FALSE(pk.row[1].meets);
    EXPECT_EQ(pk.row[4].units, 4u);
    pl_pack_free(&pk);
    // 0.8: 2 and 3 both fit 2 containers; 3 predicts more (0.95 > 0.85)
    ASSERT_EQ(pl_model_pack(&m, 0, 0.8, PL_PACK_CENTROID, &h, 8, &pk, why, sizeof why), 0) << why;
    EXPECT_EQ(pk.choice, 3);
    pl_pack_free(&pk);
    // 0.7: placement 1 (one node each): 4 containers; by the interval minimum (0.68) it misses, so 2 again
    ASSERT_EQ(pl_model_pack(&m, 0, 0.7, PL_PACK_CENTROID, &h, 8, &pk, why, sizeof why), 0) << why;
    EXPECT_EQ(pk.choice, 1);
    EXPECT_EQ(pk.containers, 4u);
    pl_pack_free(&pk);
    ASSERT_EQ(pl_model_pack(&m, 0, 0.7, PL_PACK_MIN, &h, 8, &pk, why, sizeof why), 0) << why;
    EXPECT_EQ(pk.choice, 3);
    EXPECT_EQ(pk.containers, 2u);
    pl_pack_free(&pk);
    // 1.01: nothing meets it
    ASSERT_EQ(pl_model_pack(&m, 0, 1.01, PL_PACK_CENTROID, &h, 8, &pk, why, sizeof why), 0) << why;
    EXPECT_EQ(pk.choice, -1);
    EXPECT_EQ(pk.containers, 0u);
    pl_pack_free(&pk);
    // Z prefers one node: 4 containers at 1.2
    ASSERT_EQ(pl_model_pack(&m, 1, 1.0, PL_PACK_CENTROID, &h, 8, &pk, why, sizeof why), 0) << why;
    EXPECT_EQ(pk.choice, 1);
    EXPECT_EQ(pk.containers, 4u);
    pl_pack_free(&pk);
    // a placement the topology does not have
    EXPECT_EQ(pl_model_pack(&m, 0, 0.9, PL_PACK_CENTROID, &h, 16, &pk, why, sizeof why), -EINVAL);
    EXPECT_STREQ(why, "placement '5' of the model is not an important placement of 16 threads here (ids 1-3, or their "
                      "notation)");
    pl_model_free(&m);
    pl_hier_free(&h);
}

// ---------------------------------------------------------------- the command

using ib_test::sh;

// Temporary files, removed when the test binary exits.
struct TempFiles {
    std::vector<std::string> v;
    ~TempFiles()
    {
        for (const std::string &f : v)
            unlink(f.c_str());
    }
} g_temp;

std::string tmpfile_with(const std::string &text, const char *suffix)
{
    g_temp.v.push_back(ib_test::temp_file_with(text, "ibench-model", suffix));
    return g_temp.v.back();
}

const std::string kExample = std::string(IBENCH_FIXTURES) + "/../../examples/placement/vectors-7x6.csv";

TEST(PlaceModel, ExampleCorpusIsTheTestsCorpus)
{
    // examples/placement/vectors-7x6.csv is corpus_csv() written out (IBENCH_WRITE_CORPUS=FILE regenerates it)
    if (const char *w = getenv("IBENCH_WRITE_CORPUS")) {
        std::ofstream(w) << corpus_csv();
    }
    std::ifstream f(kExample);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, corpus_csv());
}

TEST(PlaceModel, CommandTrainPredictPack)
{
    int rc;
    std::string bin = IBENCH_BIN, model = tmpfile_with("", ".json");
    std::string o = sh(bin + " place model train --vectors " + kExample + " --k auto --seed 1 -o " + model, &rc);
    ASSERT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("   7      0.9743  <- chosen"), std::string::npos) << o;
    o = sh(bin + " place model train --vectors " + kExample + " --seed 1 -o " + model + " --json", &rc);
    ASSERT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("\"k\": 7,"), std::string::npos) << o;
    // w1's vector, columns in another order: found after one placement beyond the baseline
    std::string all = corpus_csv();
    std::string row = all.substr(all.find('\n') + 1);
    row = row.substr(0, row.find('\n'));
    o = sh(bin + " place model predict --model " + model + " --measured " + tmpfile_with(all.substr(0, all.find('\n'))
           + "\n" + row + "\n", ".csv"), &rc);
    ASSERT_EQ(rc, 0) << o;
    EXPECT_EQ(o.find("w1: found, cluster 1; tried 2 placement(s): p1 (7 left) p"), 0u) << o;
    // pack: the model's placements must be a topology's important placements; 7 placements named p1..p7 are not
    o = sh(bin + " place pack --model " + model + " --goal 0.9 --threads 8 --cluster 1 --topology "
           "'synthetic:pack:4 [numa] l2:4 core:1 pu:2'", &rc);
    EXPECT_EQ(rc, 2);
    EXPECT_EQ(o, "ibench place pack: placement 'p1' of the model is not an important placement of 8 threads here "
                 "(ids 1-5, or their notation)\n");
    std::string vec = tmpfile_with("workload,5,1,2,3,4,label\n"
                                   "a1,1,0.68,0.84,0.94,0.97,A\na2,1,0.72,0.86,0.96,0.99,A\n"
                                   "z1,1,1.2,1.1,1.1,1.0,Z\n", ".csv");
    ASSERT_EQ(sh(bin + " place model train --vectors " + vec + " -o " + model, &rc).size() > 0, true);
    ASSERT_EQ(rc, 0);
    o = sh(bin + " place pack --model " + model + " --goal 0.9 --threads 8 --cluster A --topology "
           "'synthetic:pack:4 [numa] l2:4 core:1 pu:2'", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("\n2 container(s) in placement 3\n"), std::string::npos) << o;
    // the cluster from a measured vector: Z's
    o = sh(bin + " place pack --model " + model + " --goal 1 --threads 8 --json --measured " +
           tmpfile_with("workload,1,2,3,4,5\nnew,1.19,1.1,1.1,1.0,1\n", ".csv") +
           " --topology 'synthetic:pack:4 [numa] l2:4 core:1 pu:2'", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("\"cluster\": \"Z\""), std::string::npos) << o;
    EXPECT_NE(o.find("\"choice\": \"1\",\n  \"containers\": 4"), std::string::npos) << o;
}

TEST(PlaceModel, CommandRefusesBadInputWithOneLine)
{
    int rc;
    std::string bin = IBENCH_BIN;
    struct {
        std::string args, out;
    } cases[] = {
        {" place model train --vectors " + tmpfile_with("workload,a,b\nw,1,zz\n", ".csv") + " -o /tmp/x.json",
         "line 2 column 3: 'zz' is not a number"},
        {" place model train --vectors " + tmpfile_with("", ".csv") + " -o /tmp/x.json", "empty file: no header"},
        {" place model train --vectors " + tmpfile_with("workload,a,b\nw,1,2\nw,1,3\n", ".csv") + " -o /tmp/x.json",
         "line 3 column 1: workload 'w' named twice"},
        {" place model train --vectors " + tmpfile_with("workload,a,b\nw,1,2,3\n", ".csv") + " -o /tmp/x.json",
         "line 2: 4 columns, the header has 3"},
        {" place model train --vectors " + kExample + " --k 0 -o /tmp/x.json",
         "--k '0': auto or a whole number >= 1 expected"},
        // options a label column leaves nothing to do for are refused, not ignored
        {" place model train --vectors " + tmpfile_with(kAbc, ".csv") + " --k 2 -o /tmp/x.json",
         "k = 2, but the label column gives 3 clusters"},
        {" place model train --vectors " + tmpfile_with(kAbc, ".csv") + " --seed 3 -o /tmp/x.json",
         "has a label column, so the clusters are its labels and no k-means is seeded; drop --seed or the column"},
        {" place model predict --model /tmp/x.json --measured " + kExample + " --period 5",
         "--metric, --period and --concerns go with --pid"},
        {" place pack --model /tmp/x.json --goal 0.9 --threads 8 --cluster 1 --distances /tmp/d.json",
         "--distances has no use here"},
        {" place model predict --model " + tmpfile_with("{\"format\": \"x\"}", ".json") + " --measured " + kExample,
         "\"format\" is not \"ibench-placement-model\""},
        {" place pack --model /nonexistent.json --goal 0.9 --threads 8 --cluster 1", "/nonexistent.json"},
        {" place pack --model /tmp/x.json --goal 0.9 --threads 8", "one of --cluster C or --measured FILE.csv"},
    };
    for (auto &c : cases) {
        std::string o = sh(bin + c.args, &rc);
        EXPECT_EQ(rc, 2) << c.args << "\n" << o;
        EXPECT_NE(o.find(c.out), std::string::npos) << o;
        EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
        EXPECT_EQ(o.rfind("ibench place ", 0), 0u) << o;
    }
}

// The live form, with the classes this machine has: a 2-thread program, one placement (this machine has one class
// of 2 threads), so the method measures the baseline and stops; a model whose placements are not this machine's is
// refused with the reason.
TEST(PlaceModel, PredictLiveOnATwoThreadProgram)
{
    // ibench runs under taskset on two CPUs it may use, so that on any machine the topology it sees has 2 PUs: 2
    // threads on 2 PUs have one placement, whatever the two share, and a 7-placement model has no place there
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    std::string two;
    for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &allowed))
            two += (n++ ? "," : "") + std::to_string(c);
    if (two.find(',') == std::string::npos)
        GTEST_SKIP() << "one CPU: no second one to place a thread on";
    const std::string ib = "taskset -c " + two + " " + IBENCH_BIN;
    std::string v = tmpfile_with("workload,1,label\na,1,x\nb,1,y\n", ".csv");
    std::string m1 = tmpfile_with("", ".json"), m7 = tmpfile_with("", ".json");
    int rc;
    std::string o = sh(std::string(IBENCH_BIN) + " place model train --vectors " + v + " -o " + m1, &rc);
    ASSERT_EQ(rc, 0) << o;
    o = sh(std::string(IBENCH_BIN) + " place model train --vectors " + kExample + " -o " + m7, &rc);
    ASSERT_EQ(rc, 0) << o;
    pid_t pid = ib_test::spawn_two_thread_spinner();
    ASSERT_GT(pid, 0);
    std::string p = std::to_string(pid);
    o = sh(ib + " place model predict --model " + m1 + " --pid " + p + " --metric cputime --period 0.3", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("live: pid " + p + ", metric cputime, 0.3 s a placement"), std::string::npos) << o;
    EXPECT_NE(o.find("tried 1 placement(s): 1 (2 left)"), std::string::npos) << o;
    o = sh(ib + " place model predict --model " + m7 + " --pid " + p + " --metric cputime", &rc);
    EXPECT_EQ(rc, 2) << o;
    EXPECT_NE(o.find("is not an important placement of 2 threads here"), std::string::npos) << o;
    EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
}

} // namespace
