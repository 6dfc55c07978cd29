// test_ramp.cpp - intensity schedules (common/ramp.h).
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "ramp.h"

namespace {

constexpr uint64_t kSec = 1000000000ULL;

std::vector<double> intensities(const ramp_sched &s)
{
    std::vector<double> v;
    for (size_t i = 0; i < s.n; i++)
        v.push_back(s.steps[i].intensity);
    return v;
}

TEST(RampLinear, DefaultZeroToHundredElevenStepsIsExact)
{
    ramp_sched s{};
    ASSERT_EQ(ramp_linear(&s, 0, 100, 11, 2 * kSec), 0);
    ASSERT_EQ(s.n, 11u);
    for (size_t i = 0; i < s.n; i++) {
        EXPECT_EQ(s.steps[i].intensity, 10.0 * (double)i) << i; // exact, not NEAR
        EXPECT_EQ(s.steps[i].dur_ns, 2 * kSec);
    }
    EXPECT_EQ(ramp_total_ns(&s), 22 * kSec);
    ramp_free(&s);
    EXPECT_EQ(s.n, 0u);
    EXPECT_EQ(s.steps, nullptr);
}

TEST(RampLinear, Descending)
{
    ramp_sched s{};
    ASSERT_EQ(ramp_linear(&s, 100, 0, 11, kSec), 0);
    const std::vector<double> want = {100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0};
    EXPECT_EQ(intensities(s), want);
    ramp_free(&s);

    ASSERT_EQ(ramp_linear(&s, 80, 20, 4, kSec), 0);
    EXPECT_EQ(intensities(s), (std::vector<double>{80, 60, 40, 20}));
    ramp_free(&s);
}

TEST(RampLinear, UnevenSpacingEndsExactlyOnTo)
{
    ramp_sched s{};
    ASSERT_EQ(ramp_linear(&s, 0, 100, 4, kSec), 0);
    ASSERT_EQ(s.n, 4u);
    EXPECT_EQ(s.steps[0].intensity, 0.0);
    EXPECT_DOUBLE_EQ(s.steps[1].intensity, 100.0 / 3);
    EXPECT_DOUBLE_EQ(s.steps[2].intensity, 200.0 / 3);
    EXPECT_EQ(s.steps[3].intensity, 100.0);
    ramp_free(&s);

    // Many steps: no cumulative error; every point is monotone and within [from,to], last exactly `to`.
    ASSERT_EQ(ramp_linear(&s, 3.3, 97.1, 1000, 1), 0);
    ASSERT_EQ(s.n, 1000u);
    EXPECT_EQ(s.steps[0].intensity, 3.3);
    EXPECT_EQ(s.steps[999].intensity, 97.1);
    for (size_t i = 1; i < s.n; i++) {
        EXPECT_GT(s.steps[i].intensity, s.steps[i - 1].intensity) << i;
        EXPECT_NEAR(s.steps[i].intensity, 3.3 + (97.1 - 3.3) * (double)i / 999.0, 1e-12) << i;
    }
    ramp_free(&s);
}

TEST(RampLinear, OneStepAndFlat)
{
    ramp_sched s{};
    ASSERT_EQ(ramp_linear(&s, 40, 90, 1, 5 * kSec), 0);
    ASSERT_EQ(s.n, 1u);
    EXPECT_EQ(s.steps[0].intensity, 40.0);
    EXPECT_EQ(s.steps[0].dur_ns, 5 * kSec);
    ramp_free(&s);

    ASSERT_EQ(ramp_linear(&s, 25, 25, 5, kSec), 0);
    EXPECT_EQ(intensities(s), (std::vector<double>(5, 25.0)));
    ramp_free(&s);
}

TEST(RampLinear, Errors)
{
    ramp_sched s{};
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(ramp_linear(&s, 0, 100, 0, kSec), -EINVAL);
    EXPECT_EQ(ramp_linear(&s, 0, 100, RAMP_MAX_STEPS + 1, kSec), -EINVAL);
    EXPECT_EQ(ramp_linear(&s, -1, 100, 11, kSec), -EINVAL);
    EXPECT_EQ(ramp_linear(&s, 0, 100.5, 11, kSec), -EINVAL);
    EXPECT_EQ(ramp_linear(&s, nan, 100, 11, kSec), -EINVAL);
    EXPECT_EQ(ramp_linear(&s, 0, nan, 11, kSec), -EINVAL);
    EXPECT_EQ(ramp_linear(&s, 0, 100, 11, 0), -EINVAL);
    EXPECT_EQ(ramp_linear(nullptr, 0, 100, 11, kSec), -EINVAL);
    EXPECT_EQ(s.n, 0u);
    EXPECT_EQ(s.steps, nullptr);

    ASSERT_EQ(ramp_linear(&s, 0, 100, RAMP_MAX_STEPS, 1), 0);
    EXPECT_EQ(s.n, (size_t)RAMP_MAX_STEPS);
    EXPECT_EQ(s.steps[RAMP_MAX_STEPS - 1].intensity, 100.0);
    EXPECT_EQ(ramp_total_ns(&s), (uint64_t)RAMP_MAX_STEPS);
    ramp_free(&s);
}

TEST(RampHold, ValuesAndErrors)
{
    ramp_sched s{};
    ASSERT_EQ(ramp_hold(&s, 37.5, 3 * kSec), 0);
    ASSERT_EQ(s.n, 1u);
    EXPECT_EQ(s.steps[0].intensity, 37.5);
    EXPECT_EQ(s.steps[0].dur_ns, 3 * kSec);
    EXPECT_EQ(ramp_total_ns(&s), 3 * kSec);
    ramp_free(&s);

    ASSERT_EQ(ramp_hold(&s, 0, 1), 0);
    ramp_free(&s);
    ASSERT_EQ(ramp_hold(&s, 100, 1), 0);
    ramp_free(&s);

    EXPECT_EQ(ramp_hold(&s, -0.1, kSec), -EINVAL);
    EXPECT_EQ(ramp_hold(&s, 100.1, kSec), -EINVAL);
    EXPECT_EQ(ramp_hold(&s, std::numeric_limits<double>::quiet_NaN(), kSec), -EINVAL);
    EXPECT_EQ(ramp_hold(&s, 50, 0), -EINVAL);
    EXPECT_EQ(s.n, 0u);
    EXPECT_EQ(s.steps, nullptr);
}

TEST(RampList, ValuesAndErrors)
{
    ramp_sched s{};
    const double xs[] = {0, 10, 50, 100, 5};
    ASSERT_EQ(ramp_list(&s, xs, 5, 250000000ULL), 0);
    EXPECT_EQ(intensities(s), (std::vector<double>{0, 10, 50, 100, 5}));
    for (size_t i = 0; i < s.n; i++)
        EXPECT_EQ(s.steps[i].dur_ns, 250000000ULL);
    EXPECT_EQ(ramp_total_ns(&s), 1250000000ULL);
    ramp_free(&s);

    const double bad[] = {10, 101};
    EXPECT_EQ(ramp_list(&s, bad, 2, kSec), -EINVAL);
    const double neg[] = {-5};
    EXPECT_EQ(ramp_list(&s, neg, 1, kSec), -EINVAL);
    EXPECT_EQ(ramp_list(&s, xs, 0, kSec), -EINVAL);
    EXPECT_EQ(ramp_list(&s, xs, 5, 0), -EINVAL);
    EXPECT_EQ(ramp_list(&s, nullptr, 5, kSec), -EINVAL);
    std::vector<double> many(RAMP_MAX_STEPS + 1, 1.0);
    EXPECT_EQ(ramp_list(&s, many.data(), many.size(), kSec), -EINVAL);
    EXPECT_EQ(s.n, 0u);
    EXPECT_EQ(s.steps, nullptr);
}

TEST(RampParseList, Good)
{
    const struct {
        const char *in;
        std::vector<double> want;
    } cases[] = {
        {"0,10,50,100", {0, 10, 50, 100}},
        {"5%,12.5,100%", {5, 12.5, 100}},
        {"42", {42}},
        {"100,0", {100, 0}},
        {"0.5,0.5", {0.5, 0.5}},
    };
    for (const auto &c : cases) {
        double *xs = nullptr;
        size_t n = 0;
        ASSERT_EQ(ramp_parse_list(c.in, &xs, &n), 0) << c.in;
        EXPECT_EQ(std::vector<double>(xs, xs + n), c.want) << c.in;
        free(xs);
    }
}

TEST(RampParseList, Bad)
{
    const char *cases[] = {"10,,20", "10,", ",10", "", ",", "abc", "10,101", "10, 20", " 10", "-1",
                           "10;20", "10,20x", "nan", "50%%", "10,,"};
    for (const char *c : cases) {
        double *xs = reinterpret_cast<double *>(0x1);
        size_t n = 7;
        EXPECT_EQ(ramp_parse_list(c, &xs, &n), -EINVAL) << "'" << c << "'";
        EXPECT_EQ(xs, nullptr) << c;
        EXPECT_EQ(n, 0u) << c;
    }
}

TEST(RampParseList, FeedsRampList)
{
    double *xs = nullptr;
    size_t n = 0;
    ASSERT_EQ(ramp_parse_list("0,25%,75,100", &xs, &n), 0);
    ramp_sched s{};
    ASSERT_EQ(ramp_list(&s, xs, n, 500000000ULL), 0);
    free(xs);
    EXPECT_EQ(intensities(s), (std::vector<double>{0, 25, 75, 100}));
    EXPECT_EQ(ramp_total_ns(&s), 2 * kSec);
    ramp_free(&s);
}

TEST(RampTotal, EmptyAndSaturating)
{
    ramp_sched s{};
    EXPECT_EQ(ramp_total_ns(&s), 0u);
    EXPECT_EQ(ramp_total_ns(nullptr), 0u);
    ASSERT_EQ(ramp_linear(&s, 0, 100, 3, UINT64_MAX / 2), 0);
    EXPECT_EQ(ramp_total_ns(&s), UINT64_MAX); // saturates instead of wrapping
    ramp_free(&s);
    ramp_free(&s); // idempotent
    ramp_free(nullptr);
}

} // namespace
