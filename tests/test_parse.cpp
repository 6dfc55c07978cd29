// test_parse.cpp - strict value parsers and human formatting (common/parse.h).
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "parse.h"

namespace {

template <typename T> struct Good {
    const char *in;
    T want;
};
struct Bad {
    const char *in;
    int err; // expected negative errno
};

constexpr uint64_t KiB = 1024ULL, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

// ---------------------------------------------------------------- parse_double

TEST(ParseDouble, Good)
{
    const Good<double> cases[] = {
        {"0", 0.0},   {"1", 1.0},     {"-2.5", -2.5}, {"+3", 3.0},    {"1e3", 1000.0},
        {".5", 0.5},  {"5.", 5.0},    {"1.25E-2", 0.0125}, {"12345678.5", 12345678.5},
    };
    for (const auto &c : cases) {
        double v = -999;
        EXPECT_EQ(parse_double(c.in, &v), 0) << c.in;
        EXPECT_EQ(v, c.want) << c.in;
    }
}

TEST(ParseDouble, Bad)
{
    const Bad cases[] = {
        {"", -EINVAL},     {" 1", -EINVAL},   {"1 ", -EINVAL},   {"nan", -EINVAL},  {"inf", -EINVAL},
        {"-inf", -EINVAL}, {"0x10", -EINVAL}, {"1e", -EINVAL},   {"abc", -EINVAL},  {"1.2.3", -EINVAL},
        {"--1", -EINVAL},  {".", -EINVAL},    {"+", -EINVAL},    {"1,5", -EINVAL},  {"1e400", -ERANGE},
        {"-1e400", -ERANGE},
    };
    for (const auto &c : cases) {
        double v = 42.0;
        EXPECT_EQ(parse_double(c.in, &v), c.err) << "'" << c.in << "'";
        EXPECT_EQ(v, 42.0) << "output written on failure for '" << c.in << "'";
    }
    double v;
    EXPECT_EQ(parse_double(nullptr, &v), -EINVAL);
}

// ---------------------------------------------------------------- parse_intensity

TEST(ParseIntensity, Good)
{
    const Good<double> cases[] = {
        {"50", 50.0},   {"50%", 50.0},   {"12.5", 12.5}, {"12.5%", 12.5}, {"0", 0.0},
        {"0%", 0.0},    {"100", 100.0},  {"100%", 100.0}, {"0.5%", 0.5},  {"1e1", 10.0},
        {"100.0", 100.0},
    };
    for (const auto &c : cases) {
        double v = -1;
        EXPECT_EQ(parse_intensity(c.in, &v), 0) << c.in;
        EXPECT_EQ(v, c.want) << c.in;
    }
}

TEST(ParseIntensity, Bad)
{
    const char *cases[] = {"abc", "", "50x", "-1", "101", "nan", "inf", " 5", "5 ", "%", "50%%", "100.01",
                           "+5", "50 %", "%50", "-0", "1e3", "0x10"};
    for (const char *c : cases) {
        double v = 7.0;
        EXPECT_LT(parse_intensity(c, &v), 0) << "'" << c << "'";
        EXPECT_EQ(v, 7.0) << c;
    }
    double v;
    EXPECT_EQ(parse_intensity("101", &v), -ERANGE);
    EXPECT_EQ(parse_intensity("abc", &v), -EINVAL);
    EXPECT_EQ(parse_intensity(nullptr, &v), -EINVAL);
}

// ---------------------------------------------------------------- parse_duration_ns

TEST(ParseDuration, Good)
{
    const Good<uint64_t> cases[] = {
        {"1.5", 1500000000ULL},
        {"1", 1000000000ULL},
        {"0.001", 1000000ULL},
        {".25", 250000000ULL},
        {"250ms", 250000000ULL},
        {"2s", 2000000000ULL},
        {"0.5s", 500000000ULL},
        {"500us", 500000ULL},
        {"1.5us", 1500ULL},
        {"100ns", 100ULL},
        {"1ns", 1ULL},
        {"0.5ns", 1ULL}, // rounded to the nearest ns
        {"1m", 60000000000ULL},
        {"1.5m", 90000000000ULL},
        {"0.1", 100000000ULL},
        {"0.3", 300000000ULL},
        {"0.000000001", 1ULL},
        {"18446744073.709551615", UINT64_MAX},
        {"18446744073709551615ns", UINT64_MAX},
    };
    for (const auto &c : cases) {
        uint64_t v = 0;
        EXPECT_EQ(parse_duration_ns(c.in, 0, &v), 0) << c.in;
        EXPECT_EQ(v, c.want) << c.in;
    }
}

TEST(ParseDuration, Zero)
{
    uint64_t v = 99;
    EXPECT_EQ(parse_duration_ns("0", 0, &v), -EINVAL);
    EXPECT_EQ(parse_duration_ns("0ms", 0, &v), -EINVAL);
    EXPECT_EQ(parse_duration_ns("0.0", 0, &v), -EINVAL);
    EXPECT_EQ(v, 99u);
    EXPECT_EQ(parse_duration_ns("0", 1, &v), 0);
    EXPECT_EQ(v, 0u);
    v = 99;
    EXPECT_EQ(parse_duration_ns("0ms", 1, &v), 0);
    EXPECT_EQ(v, 0u);
    // Non-zero but below 1 ns is out of range rather than silently zero, even with allow_zero.
    EXPECT_EQ(parse_duration_ns("0.1ns", 1, &v), -ERANGE);
    EXPECT_EQ(parse_duration_ns("0.0000000001", 0, &v), -ERANGE);
}

TEST(ParseDuration, Bad)
{
    const Bad cases[] = {
        {"", -EINVAL},
        {"-1", -EINVAL},
        {"-1s", -EINVAL},
        {"+1s", -EINVAL},
        {"ms", -EINVAL},   // missing number
        {"s", -EINVAL},
        {".s", -EINVAL},
        {"10x", -EINVAL},  // unknown suffix
        {"1h", -EINVAL},
        {"1MS", -EINVAL},
        {"1sec", -EINVAL},
        {"10 ms", -EINVAL},
        {" 10ms", -EINVAL},
        {"10ms ", -EINVAL},
        {"1e3", -EINVAL},
        {"nan", -EINVAL},
        {"inf", -EINVAL},
        {"1.2.3", -EINVAL},
        {"99999999999999999999", -ERANGE},  // integer part overflows
        {"18446744074s", -ERANGE},          // > UINT64_MAX ns
        {"18446744073.709551616", -ERANGE}, // UINT64_MAX + 1 ns
        {"307445734561m", -ERANGE},
    };
    for (const auto &c : cases) {
        uint64_t v = 12345;
        EXPECT_EQ(parse_duration_ns(c.in, 1, &v), c.err) << "'" << c.in << "'";
        EXPECT_EQ(v, 12345u) << c.in;
    }
}

// ---------------------------------------------------------------- parse_size

TEST(ParseSize, Good)
{
    const Good<uint64_t> cases[] = {
        {"4096", 4096},
        {"1", 1},
        {"0", 0},
        {"4096B", 4096},
        {"64K", 64 * KiB},
        {"64k", 64 * KiB},
        {"64KB", 64 * KiB},
        {"64KiB", 64 * KiB},
        {"64kib", 64 * KiB},
        {"64kb", 64 * KiB},
        {"1.5M", 1572864},
        {"1.5MiB", 1572864},
        {"1.5G", 1610612736ULL},
        {"2G", 2 * GiB},
        {"2GiB", 2147483648ULL},
        {"2gb", 2 * GiB},
        {"1T", TiB},
        {"0.5K", 512},
        {"0.25M", 256 * KiB},
        {"0.0009765625M", 1024},
        {"16777215T", UINT64_MAX - TiB + 1},
        {"18446744073709551615", UINT64_MAX},
    };
    for (const auto &c : cases) {
        uint64_t v = 77;
        EXPECT_EQ(parse_size(c.in, &v), 0) << c.in;
        EXPECT_EQ(v, c.want) << c.in;
    }
}

TEST(ParseSize, Bad)
{
    const Bad cases[] = {
        {"", -EINVAL},
        {"-1", -EINVAL},
        {"-1K", -EINVAL},
        {"+1K", -EINVAL},
        {"1.3K", -EINVAL}, // 1331.2 bytes: not whole
        {"0.5", -EINVAL},
        {"1.0000001M", -EINVAL},
        {"0K", -EINVAL},   // zero only as plain "0"
        {"0.0", -EINVAL},
        {"00", -EINVAL},
        {"0B", -EINVAL},
        {"1X", -EINVAL},
        {"1P", -EINVAL},
        {"1KK", -EINVAL},
        {"1KiBB", -EINVAL},
        {"1Ki", -EINVAL},
        {"1iB", -EINVAL},
        {"K", -EINVAL},
        {"KiB", -EINVAL},
        {"1 K", -EINVAL},
        {" 1K", -EINVAL},
        {"1K ", -EINVAL},
        {"1e3", -EINVAL},
        {"nan", -EINVAL},
        {"0x10", -EINVAL},
        {"16777216T", -ERANGE}, // 2^64
        {"18446744073709551616", -ERANGE},
        {"99999999999999999999999K", -ERANGE},
    };
    for (const auto &c : cases) {
        uint64_t v = 55;
        EXPECT_EQ(parse_size(c.in, &v), c.err) << "'" << c.in << "'";
        EXPECT_EQ(v, 55u) << c.in;
    }
}

// ---------------------------------------------------------------- parse_uint

TEST(ParseUint, Good)
{
    unsigned long v = 0;
    EXPECT_EQ(parse_uint("0", 0, 10, &v), 0);
    EXPECT_EQ(v, 0ul);
    EXPECT_EQ(parse_uint("42", 0, 100, &v), 0);
    EXPECT_EQ(v, 42ul);
    EXPECT_EQ(parse_uint("007", 0, 100, &v), 0);
    EXPECT_EQ(v, 7ul);
    EXPECT_EQ(parse_uint("10", 10, 10, &v), 0);
    EXPECT_EQ(v, 10ul);
    EXPECT_EQ(parse_uint("18446744073709551615", 0, ~0ul, &v), 0);
    EXPECT_EQ(v, ~0ul);
}

TEST(ParseUint, Bad)
{
    struct {
        const char *in;
        unsigned long min, max;
        int err;
    } cases[] = {
        {"", 0, 10, -EINVAL},     {"-1", 0, 10, -EINVAL},  {"+1", 0, 10, -EINVAL},  {"1x", 0, 10, -EINVAL},
        {" 1", 0, 10, -EINVAL},   {"1 ", 0, 10, -EINVAL},  {"0x10", 0, 100, -EINVAL}, {"1.0", 0, 10, -EINVAL},
        {"1e2", 0, 1000, -EINVAL}, {"11", 0, 10, -ERANGE}, {"4", 5, 10, -ERANGE},
        {"18446744073709551616", 0, ~0ul, -ERANGE}, {"99999999999999999999999x", 0, ~0ul, -EINVAL},
        {"5", 10, 1, -EINVAL}, // min > max
    };
    for (const auto &c : cases) {
        unsigned long v = 3;
        EXPECT_EQ(parse_uint(c.in, c.min, c.max, &v), c.err) << "'" << c.in << "'";
        EXPECT_EQ(v, 3ul) << c.in;
    }
}

// ---------------------------------------------------------------- parse_cpulist

static std::vector<int> cpulist(const char *s, int *rc)
{
    int *cpus = reinterpret_cast<int *>(0x1);
    unsigned n = 99;
    *rc = parse_cpulist(s, &cpus, &n);
    std::vector<int> out;
    if (*rc == 0) {
        out.assign(cpus, cpus + n);
        free(cpus);
    } else {
        EXPECT_EQ(cpus, nullptr) << s;
        EXPECT_EQ(n, 0u) << s;
    }
    return out;
}

TEST(ParseCpulist, Good)
{
    const struct {
        const char *in;
        std::vector<int> want;
    } cases[] = {
        {"0-3,5", {0, 1, 2, 3, 5}},
        {"3,1,1", {1, 3}},
        {"7", {7}},
        {"0", {0}},
        {"0-0", {0}},
        {"2-4,3-6", {2, 3, 4, 5, 6}},
        {"10,2,0-1", {0, 1, 2, 10}},
        {"64-66", {64, 65, 66}},
    };
    for (const auto &c : cases) {
        int rc;
        auto got = cpulist(c.in, &rc);
        EXPECT_EQ(rc, 0) << c.in;
        EXPECT_EQ(got, c.want) << c.in;
    }
}

TEST(ParseCpulist, Bad)
{
    const Bad cases[] = {
        {"x", -EINVAL},   {"", -EINVAL},     {"-1", -EINVAL},  {"3-1", -EINVAL},  {"1,", -EINVAL},
        {",1", -EINVAL},  {"1,,2", -EINVAL}, {"0-", -EINVAL},  {"-", -EINVAL},    {"1 2", -EINVAL},
        {" 1", -EINVAL},  {"1 ", -EINVAL},   {"0x3", -EINVAL}, {"010", -EINVAL},  {"1-2-3", -EINVAL},
        {"1;2", -EINVAL}, {"+1", -EINVAL},   {"1x", -EINVAL},  {"5,3-1", -EINVAL}, {"99999999", -ERANGE},
    };
    for (const auto &c : cases) {
        int rc;
        cpulist(c.in, &rc);
        EXPECT_EQ(rc, c.err) << "'" << c.in << "'";
    }
    int *cpus;
    unsigned n;
    EXPECT_EQ(parse_cpulist(nullptr, &cpus, &n), -EINVAL);
}

// ---------------------------------------------------------------- fmt_*

TEST(FmtBytes, Values)
{
    const struct {
        double in;
        const char *want;
    } cases[] = {
        {0, "0 B"},
        {1, "1 B"},
        {512, "512 B"},
        {1023, "1023 B"},
        {1024, "1.00 KiB"},
        {1536, "1.50 KiB"},
        {10.0 * 1024, "10.0 KiB"},
        {150.0 * 1024, "150 KiB"},
        {32.0 * 1024 * 1024, "32.0 MiB"},
        {1.5 * 1024 * 1024, "1.50 MiB"},
        {1023.9 * 1024, "1.00 MiB"}, // would print "1024 KiB"
        {1024.0 * 1024 * 1024, "1.00 GiB"},
        {3.0 * 1024 * 1024 * 1024 * 1024, "3.00 TiB"},
        {9.999 * 1024, "10.0 KiB"},
        {99.96 * 1024, "100 KiB"},
    };
    for (const auto &c : cases) {
        char buf[32];
        EXPECT_STREQ(fmt_bytes(c.in, buf, sizeof(buf)), c.want) << c.in;
    }
}

TEST(FmtRate, Values)
{
    const struct {
        double in;
        const char *unit;
        const char *want;
    } cases[] = {
        {2.8e10, "B/s", "28.0 GB/s"},
        {1.2e6, "acc/s", "1.20 Macc/s"},
        {512, "B/s", "512 B/s"},
        {5, "op/s", "5.00 op/s"},
        {0, "B/s", "0.00 B/s"},
        {1000, "B/s", "1.00 kB/s"},
        {999.4e3, "B/s", "999 kB/s"},
        {999.7e3, "B/s", "1.00 MB/s"},
        {150e9, "B/s", "150 GB/s"},
        {1.5e12, "flop/s", "1.50 Tflop/s"},
    };
    for (const auto &c : cases) {
        char buf[32];
        EXPECT_STREQ(fmt_rate(c.in, c.unit, buf, sizeof(buf)), c.want) << c.in;
    }
}

// The one formatter behind fmt_bytes, fmt_rate and the tables' cells: fixed decimals move up a prefix where the
// value would print as the base at those decimals; no prefix and no unit print the number alone.
TEST(FmtScaled, FixedDecimalsAndBareNumbers)
{
    char buf[32];
    EXPECT_STREQ(fmt_scaled(1024.0 * 1023.999, 1, 2, "B", buf, sizeof buf), "1.00 MiB");
    EXPECT_STREQ(fmt_scaled(1024.0 * 1023.99, 1, 2, "B", buf, sizeof buf), "1023.99 KiB");
    EXPECT_STREQ(fmt_scaled(1023, 1, 2, "B", buf, sizeof buf), "1023 B");
    EXPECT_STREQ(fmt_scaled(3.0 * 1024 * 1024 * 1024, 1, 2, "B", buf, sizeof buf), "3.00 GiB");
    EXPECT_STREQ(fmt_scaled(999.96e6, 0, 1, nullptr, buf, sizeof buf), "1.0 G");
    EXPECT_STREQ(fmt_scaled(999.94e6, 0, 1, "B/s", buf, sizeof buf), "999.9 MB/s");
    EXPECT_STREQ(fmt_scaled(950, 0, 1, "B/s", buf, sizeof buf), "950.0 B/s");
    EXPECT_STREQ(fmt_scaled(12.34, 0, 1, nullptr, buf, sizeof buf), "12.3");
    EXPECT_STREQ(fmt_scaled(2.8e10, 0, -1, "B/s", buf, sizeof buf), fmt_rate(2.8e10, "B/s", buf + 16, 16));
    EXPECT_STREQ(fmt_scaled(1536, 1, -1, "B", buf, sizeof buf), "1.50 KiB");
}

// A rate without a unit is the number alone, not the number and a stray blank ("5.00 " before).
TEST(FmtRate, NoUnitNoTrailingBlank)
{
    char buf[32];
    EXPECT_STREQ(fmt_rate(5, "", buf, sizeof buf), "5.00");
    EXPECT_STREQ(fmt_rate(5, nullptr, buf, sizeof buf), "5.00");
    EXPECT_STREQ(fmt_rate(5000, "", buf, sizeof buf), "5.00 k");
}

TEST(Fmt, SmallBufferTruncatesSafely)
{
    char buf[6];
    std::memset(buf, 'x', sizeof(buf));
    EXPECT_EQ(fmt_bytes(1536, buf, 5), buf);
    EXPECT_STREQ(buf, "1.50");
    EXPECT_EQ(buf[5], 'x');
    EXPECT_STREQ(fmt_rate(2.8e10, "B/s", buf, 3), "28");
}

} // namespace
