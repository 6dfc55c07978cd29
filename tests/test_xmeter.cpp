// test_xmeter.cpp - the outside meter's verdict (validation/xmeter.h) and the SoI's verdict from its three checks
// (val_soi_verdict), on fake readings, exactly: no machine.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "test_support.h"
#include "validate.h"

namespace {

// The self-meter ramp's order for a rate SoI (validate.c): every level between 100 % windows, twice.
std::vector<double> rate_xs()
{
    std::vector<double> xs;
    for (int cy = 0; cy < 2; cy++) {
        for (double l : {0.0, 25.0, 50.0, 75.0}) {
            xs.push_back(100);
            xs.push_back(l);
        }
        xs.push_back(100);
    }
    return xs;
}

// ... and a footprint's: climb, then descend.
std::vector<double> climb_xs() { return {0, 25, 50, 75, 100, 100, 75, 50, 25, 0}; }

// A meter that reads `gain` x the requested pressure of a capacity of 1e9, plus a background, with seeded noise of
// sd points of the capacity.
std::vector<double> readings(const std::vector<double> &xs, double gain, double background, double sd,
                             unsigned seed)
{
    std::mt19937_64 g(seed);
    std::normal_distribution<double> n(0, sd);
    std::vector<double> v;
    for (double x : xs)
        v.push_back(background + (gain * x + (sd > 0 ? n(g) : 0)) / 100 * 1e9);
    return v;
}

} // namespace

// A rate SoI that presses what it says, over a background another program wrote meanwhile: pass, the background
// read off at 0 % and reported.
TEST(Xmeter, ARateSoiThatPressesAsItSaysPasses)
{
    auto xs = rate_xs();
    auto v = readings(xs, 1.0, 3e7, 0, 0);
    struct val_xcheck c = {};
    EXPECT_EQ(val_xmeter_judge(1, xs.data(), v.data(), nullptr, xs.size(), 1e9, &c), VAL_PASS) << c.reason;
    EXPECT_NEAR(c.background, 3e7, 1);
    EXPECT_NEAR(c.pct[1], 25, 1e-9);
    EXPECT_NEAR(c.pct[3], 75, 1e-9);
    EXPECT_NEAR(c.r2, 1, 1e-12);
    EXPECT_EQ(c.fit_levels, 4u);
    EXPECT_EQ(c.verdict, VAL_PASS);
}

// The SoI of the issue: it presses half of what it claims (its own count says x, the kernel's x / 2): FAIL, with the
// meter's figures, and the meter reads half the self-meter.
TEST(Xmeter, HalfThePressureFails)
{
    auto xs = rate_xs();
    auto v = readings(xs, 0.5, 0, 0.5, 1);
    std::vector<double> self(xs.begin(), xs.end()); // the self-meter reads x
    struct val_xcheck c = {};
    // at 100 % the meter reads 50 % of the claimed capacity and the self-meter 100 %: no reading is out of reach
    // (the SoI's own windows say the capacity was there), and 75 % reads 37.5
    EXPECT_EQ(val_xmeter_judge(1, xs.data(), v.data(), self.data(), xs.size(), 1e9, &c), VAL_FAIL) << c.reason;
    EXPECT_EQ(c.capacity_limited, 0u);
    EXPECT_NEAR(c.worst_pts, 37.5, 1.5) << c.reason;
    EXPECT_NEAR(c.self_ratio, 0.5, 0.02);
    // read against the meter's own windows instead, every paced level above 25 % would be excused: undecidable
    struct val_xcheck m = {};
    EXPECT_EQ(val_xmeter_judge(1, xs.data(), v.data(), nullptr, xs.size(), 1e9, &m), VAL_UNDECIDABLE) << m.reason;
    // as a footprint (every level paced, nothing left out): FAIL, a paced level 50 points from x at 100 %
    auto cx = climb_xs();
    auto cv = readings(cx, 0.5, 0, 0, 2);
    std::vector<double> cself(cx.begin(), cx.end());
    struct val_xcheck f = {};
    EXPECT_EQ(val_xmeter_judge(0, cx.data(), cv.data(), cself.data(), cx.size(), 1e9, &f), VAL_FAIL) << f.reason;
    EXPECT_NEAR(f.worst_pts, 50, 1e-9);
    EXPECT_NEAR(f.self_ratio, 0.5, 1e-9);
    EXPECT_NE(std::string(f.reason).find("does not press as it says"), std::string::npos) << f.reason;
}

// A rate SoI whose meter reads half at the paced levels while its 100 % windows read full: FAIL on the paced levels,
// 37.5 points from x at 75 %.
TEST(Xmeter, PacedLevelsAtHalfFailEvenWhenTheTopReadsFull)
{
    auto xs = rate_xs();
    std::vector<double> v;
    for (double x : xs)
        v.push_back((x == 100 ? 1.0 : 0.5) * x / 100 * 1e9);
    std::vector<double> self(xs.begin(), xs.end());
    struct val_xcheck c = {};
    EXPECT_EQ(val_xmeter_judge(1, xs.data(), v.data(), self.data(), xs.size(), 1e9, &c), VAL_FAIL) << c.reason;
    EXPECT_NEAR(c.worst_pts, 37.5, 1e-9);
    EXPECT_NEAR(c.self_ratio, 0.5, 1e-9);
    EXPECT_EQ(c.capacity_limited, 0u);
}

// The host took the capacity: a paced reading whose neighbouring 100 % windows the meter read below x + 5 is left
// out; a level left with none is undecidable, not FAIL.
TEST(Xmeter, OutOfReachReadingsAreLeftOutAndALevelWithNoneIsUndecidable)
{
    auto xs = rate_xs();
    auto v = readings(xs, 1.0, 0, 0, 0);
    // the host's capacity fell to 60 % around both 75 % readings (steps 7 and 16: windows 6, 8, 15, 17), as the
    // SoI's own meter and the kernel's both saw
    std::vector<double> self(xs.begin(), xs.end());
    for (size_t i : {6u, 8u, 15u, 17u}) {
        v[i] = 0.6e9;
        self[i] = 60;
    }
    v[7] = v[16] = 0.6e9;
    self[7] = self[16] = 60;
    struct val_xcheck c = {};
    EXPECT_EQ(val_xmeter_judge(1, xs.data(), v.data(), self.data(), xs.size(), 1e9, &c), VAL_UNDECIDABLE)
        << c.reason;
    EXPECT_EQ(c.capacity_limited, 2u) << c.reason;
    EXPECT_EQ(c.readings[3], 0u);
    EXPECT_EQ(c.readings[2], 2u); // 50 % between windows of 100 and 60 %: within reach, kept
}

// A footprint read as a level (bytes held), over a baseline the process already held: pass.
TEST(Xmeter, AFootprintReadAsALevelPasses)
{
    auto xs = climb_xs();
    auto v = readings(xs, 1.0, 5e8, 0.3, 4);
    struct val_xcheck c = {};
    EXPECT_EQ(val_xmeter_judge(0, xs.data(), v.data(), nullptr, xs.size(), 1e9, &c), VAL_PASS) << c.reason;
    EXPECT_EQ(c.fit_levels, 5u);
    EXPECT_NEAR(c.pct[4], 100, 1.5);
}

// ---- the SoI's verdict from its three checks ---------------------------------------------------------------------

namespace {
struct val_soi soi_with(enum val_verdict self, enum val_verdict meter, enum val_verdict neighbour)
{
    struct val_soi v = {};
    v.self.ran = 1;
    v.self.verdict = self;
    snprintf(v.self.reason, sizeof v.self.reason, "self says");
    v.meter.verdict = meter;
    snprintf(v.meter.reason, sizeof v.meter.reason, "meter says");
    v.neighbour = neighbour;
    snprintf(v.neighbour_reason, sizeof v.neighbour_reason, "neighbour says");
    return v;
}
enum val_verdict verdict_of(enum val_verdict self, enum val_verdict meter, enum val_verdict neighbour,
                            std::string *reason = nullptr)
{
    struct val_soi v = soi_with(self, meter, neighbour);
    val_soi_verdict(&v);
    if (reason)
        *reason = v.reason;
    return v.verdict;
}
} // namespace

TEST(SoiVerdict, EveryCombinationThatMatters)
{
    const enum val_verdict P = VAL_PASS, F = VAL_FAIL, B = VAL_BUSY, I = VAL_ISOLATED, U = VAL_UNCHECKED,
                           S = VAL_SKIPPED, D = VAL_UNDECIDABLE, X = VAL_INTERRUPTED;
    struct row {
        enum val_verdict self, meter, neighbour, want;
        const char *reason; // "": not checked
    };
    const row rows[] = {
        // FAIL only on a meter (outside or the SoI's own), whatever the neighbour felt
        {P, F, P, F, "outside meter: meter says"},
        {F, P, P, F, "self-meter: self says"},
        // the machine took the CPU in any check: BUSY, unless a meter FAILed
        {B, B, P, B, ""},
        {P, P, B, B, "neighbour: neighbour says"},
        {B, F, P, F, ""},
        // the meter saw it: pass; the neighbour felt nothing: ISOLATED; no probe here or a non-monotone one: pass
        {P, P, P, P, ""},
        {P, P, I, I, "the meter saw the pressure, the neighbour nothing: neighbour says"},
        {P, P, S, P, ""},
        {P, P, U, P, ""},
        // no meter here: the neighbour decides between pass and UNCHECKED, never FAIL
        {P, U, P, P, ""},
        {P, U, U, U, ""},
        {P, U, S, U, "no outside meter here, and the neighbour could not be measured: neighbour says"},
        // the host took the capacity below the targets, or Ctrl-C: they stand
        {D, P, P, D, ""},
        {P, D, P, D, ""},
        {P, P, X, X, ""},
    };
    for (const row &r : rows) {
        std::string reason;
        EXPECT_EQ(verdict_of(r.self, r.meter, r.neighbour, &reason), r.want)
            << val_verdict_name(r.self) << " / " << val_verdict_name(r.meter) << " / " << val_verdict_name(r.neighbour);
        if (r.reason[0]) {
            EXPECT_EQ(reason, r.reason);
        }
    }
}

// ---- the resctrl meter, on a fixture root (this machine has no resctrl) ------------------------------------------

// llc-cap's and mem-bw's counters where resctrl monitors: a group holding the calling thread (the engine's workers,
// made by it, inherit it), read as occupancy (a level) or memory traffic (a count); no resctrl: -ENOTSUP with why,
// nothing made. On tests/fixtures/usage/resctrl, the recorded shape of a two-domain L3.
TEST(Xmeter, ResctrlOnAFixtureRoot)
{
    ib_test::TempDir d("xmeter_rdt");
    ASSERT_FALSE(d.path().empty());
    const std::string fx = std::string(IBENCH_FIXTURES) + "/usage/resctrl", root = d.path() + "/resctrl";
    char why[640] = "";
    struct val_xmeter xm;
    // not mounted: UNCHECKED's reason
    EXPECT_EQ(-ENOTSUP, val_xmeter_open(VPM_LLC_OCCUPANCY, nullptr, root.c_str(), &xm, why, sizeof why));
    EXPECT_NE(std::string(why).find("not mounted"), std::string::npos) << why;
    val_xmeter_close(&xm);
    std::filesystem::copy(fx, root, std::filesystem::copy_options::recursive);
    std::filesystem::create_directories(root + "/mon_groups");
    for (enum vprobe_meter k : {VPM_LLC_OCCUPANCY, VPM_MEM_BW}) {
        ASSERT_EQ(0, val_xmeter_open(k, nullptr, root.c_str(), &xm, why, sizeof why)) << why;
        const std::string group = xm.mon.dir;
        EXPECT_EQ(std::to_string((long)syscall(SYS_gettid)) + "\n", ib_test::file_text(group + "/tasks"));
        EXPECT_EQ(xm.rate, k == VPM_MEM_BW);
        EXPECT_STREQ(xm.unit, k == VPM_MEM_BW ? "B/s" : "B");
        std::filesystem::copy(root + "/mon_data", group + "/mon_data", std::filesystem::copy_options::recursive);
        double v = 0;
        ASSERT_EQ(0, xm.read(&xm, &v, why, sizeof why)) << why;
        EXPECT_EQ(v, k == VPM_LLC_OCCUPANCY ? 1048576.0 + 524288.0 : 6815744.0 + 2097152.0);
        std::filesystem::remove_all(group + "/mon_data"); // what the kernel takes away at rmdir
        std::filesystem::remove(group + "/tasks");
        val_xmeter_close(&xm);
        EXPECT_FALSE(std::filesystem::exists(group)) << "the group is removed";
    }
}
