// test_validate.cpp - the validation method (validation/validate.h) on fakes, without the machine: the probe ramp's
// verdict and its adaptive dwell against a fake meter with seeded noise, and each overlap-claim kind on synthetic
// matrices (pass, FAIL, undecidable), with the re-measure-once rule.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "fsguard.h"
#include "test_support.h"
#include "validate.h"
#include "vprobe.h"

namespace {

// A machine of 16 GiB, 8 available, no cgroup limit.
struct mlim sixteen_gib()
{
    struct mlim m = {};
    m.mem_total = 16ULL << 30;
    m.mem_available = 8ULL << 30;
    m.cg_limit = MLIM_UNLIMITED;
    return m;
}

// Entries in a directory other than . and .. (0 when it cannot be read).
unsigned dir_entries(const std::string &dir) { return (unsigned)ib_test::dir_entries(dir).size(); }

// A probe beside an SoI whose true degradation at x % is shape(x) (%), measured with per-cycle noise: each cycle's
// ratio is the true one times (1 + sd x N(0,1)), sd = sd60 x sqrt(60 ms / dwell) (a step's median over more samples).
struct FakeRamp {
    std::mt19937_64 rng;
    double (*shape)(double x, double effect);
    double effect, sd60;
    double stall = 0; // the chance that a cycle's step stalls (the probe descheduled): its ratio x4
    double wait = NAN; // the SoI workers' run-queue wait share in every step (NAN: not measured)
    unsigned calls = 0;
    double looked_s = 0;
};

double linear(double x, double effect) { return effect * x / 100; }
double cliff(double x, double effect) { return x >= 100 ? effect : 0; }

int fake_beside(void *ctx, const char *, int, const double *levels, unsigned nl, unsigned cycles, uint64_t step_ns,
                uint64_t, struct beside_result *out, char *, size_t)
{
    FakeRamp *f = static_cast<FakeRamp *>(ctx);
    std::normal_distribution<double> g(0, 1);
    double sd = f->sd60 * std::sqrt(60e6 / (double)step_ns);
    memset(out, 0, sizeof(*out));
    for (int k = 0; k < IB_PSI_N; k++) // no PSI or steal on a fake
        out->machine.some_pct[k] = out->machine.full_pct[k] = NAN;
    out->machine.steal_pct = NAN;
    out->nlevels = nl;
    out->nsteps = nl * cycles;
    out->noise = 0.01;
    for (unsigned l = 0; l < nl; l++) {
        struct beside_level *bl = &out->lv[l];
        double truth = 1 / (1 - f->shape(levels[l], f->effect) / 100), sum = 0;
        for (unsigned c = 0; c < cycles; c++) {
            double r = l == 0 ? 1 : std::max(0.05, truth * (1 + sd * g(f->rng)));
            if (l > 0 && std::uniform_real_distribution<double>(0, 1)(f->rng) < f->stall)
                r *= 4;
            bl->cycle_ratio[c] = r;
            sum += r;
        }
        bl->level = levels[l];
        bl->ratio = sum / cycles;
        bl->median = 100 * bl->ratio;
        bl->achieved_pct = levels[l];
        bl->ncycles = cycles;
        bl->nsamples = 10 * cycles;
        bl->wait_pct = bl->wait_max_pct = f->wait;
        if (!std::isnan(f->wait)) { // 100 ms runnable per cycle, of which wait % waiting
            bl->sched.have = true;
            bl->sched.wait_ns = (uint64_t)(1e6 * f->wait) * cycles;
            bl->sched.run_ns = (uint64_t)(1e6 * (100 - f->wait)) * cycles;
        }
    }
    f->calls++;
    f->looked_s += (double)out->nsteps * (double)step_ns / 1e9;
    return 0;
}

struct val_ramp_cfg cfg_with(double budget)
{
    struct val_ramp_cfg c = {};
    c.probe = "chase-llc";
    c.step_ns = 60000000ULL;
    c.settle_ns = 8000000ULL;
    c.cycles = 16;
    c.max_step_ns = 960000000ULL;
    c.more_cycles = 8;
    c.budget_s = budget;
    return c;
}

// One ramp on the fake: its verdict, with the ramp in *r.
enum val_verdict ramp_once(FakeRamp &f, double budget, struct val_ramp *r, std::string *reason)
{
    struct val_meter m = {nullptr, nullptr, fake_beside, nullptr, &f};
    struct val_ramp_cfg c = cfg_with(budget);
    char why[256] = "", rs[640] = "";
    EXPECT_EQ(val_probe_ramp(&m, &c, r, why, sizeof(why)), 0) << why;
    enum val_verdict v = val_ramp_verdict(r, &m, nullptr, 0, 100, 0, rs, sizeof(rs), nullptr);
    *reason = rs;
    return v;
}

} // namespace

// +20 % at 100 %, with per-cycle noise (30 % at 60 ms) that 16 cycles of 60 ms resolve only now and then (se ~7.5
// points): the ramp lengthens its dwell and passes within its 100 s budget; with no budget (the first round only) a
// quarter of the runs miss it (no effect beyond the noise, or a shape the noise made non-monotone).
TEST(ValidateRamp, AdaptiveDwellFindsAnEffectThatShortStepsHide)
{
    const int runs = 100;
    int pass = 0, pass_short = 0, longer = 0;
    double worst_looked = 0;
    for (int seed = 0; seed < runs; seed++) {
        FakeRamp f{std::mt19937_64(seed), linear, 20, 0.30};
        struct val_ramp r;
        std::string why;
        enum val_verdict v = ramp_once(f, 100, &r, &why);
        pass += v == VAL_PASS;
        longer += r.dwell_ms > 60;
        worst_looked = std::max(worst_looked, r.looked_s);
        EXPECT_LE(r.looked_s, 100 + 1e-9) << "seed " << seed;
        EXPECT_NEAR(r.looked_s, f.looked_s, 1e-9);
        EXPECT_NE(why.find("looked "), std::string::npos) << why;
        if (seed == 0 || (getenv("IB_TEST_VERBOSE") && v != VAL_PASS))
            printf("seed %d: %s: %s\n", seed, val_verdict_name(v), why.c_str());
        FakeRamp s{std::mt19937_64(1000 + seed), linear, 20, 0.30};
        pass_short += ramp_once(s, 0, &r, &why) == VAL_PASS;
        EXPECT_EQ(s.calls, 1u);
        EXPECT_EQ(r.dwell_ms, 60);
    }
    printf("true +20 %%: pass %d/%d with a 100 s budget (looked at most %.0f s, longer steps in %d), %d/%d with 60 ms "
           "steps only\n", pass, runs, worst_looked, longer, pass_short, runs);
    EXPECT_GE(pass, 90);
    EXPECT_GE(longer, 70);
    EXPECT_LE(pass_short, 80);
}

// No effect, the same noise: UNCHECKED (no effect beyond the noise: the neighbour cannot confirm the SoI; only an
// outside meter can FAIL it), saying how long it looked and what noise it saw.
TEST(ValidateRamp, NoEffectIsUncheckedAndSaysHowLongItLooked)
{
    const int runs = 100;
    int fail_none = 0;
    for (int seed = 0; seed < runs; seed++) {
        FakeRamp f{std::mt19937_64(seed), linear, 0, 0.30};
        struct val_ramp r;
        std::string why;
        enum val_verdict v = ramp_once(f, 100, &r, &why);
        fail_none += v == VAL_UNCHECKED && why.find("no effect beyond the noise") != std::string::npos;
        EXPECT_LE(r.looked_s, 100 + 1e-9);
        EXPECT_NE(why.find("looked "), std::string::npos) << why;
        EXPECT_NE(why.find("noise: se "), std::string::npos) << why;
        if (seed == 0 || (getenv("IB_TEST_VERBOSE") && v != VAL_UNCHECKED))
            printf("seed %d: %s: %s\n", seed, val_verdict_name(v), why.c_str());
    }
    printf("no effect: UNCHECKED/no effect %d/%d\n", fail_none, runs);
    EXPECT_GE(fail_none, 95);
}

// One stalled step in ten (its ratio x4) does not swamp the standard error: the effect is still found.
TEST(ValidateRamp, StalledCyclesDoNotHideAnEffect)
{
    const int runs = 100;
    int pass = 0;
    for (int seed = 0; seed < runs; seed++) {
        FakeRamp f{std::mt19937_64(seed), linear, 20, 0.05};
        f.stall = 0.1;
        struct val_ramp r;
        std::string why;
        pass += ramp_once(f, 100, &r, &why) == VAL_PASS;
        if (seed == 0)
            printf("seed 0: %s\n", why.c_str());
    }
    printf("true +20 %% with stalls: pass %d/%d\n", pass, runs);
    EXPECT_GE(pass, 90);
}

// A resolved effect shaped as a cliff at 100 % passes: a neighbour's loss beside a queue is a cliff on real devices,
// so the shape is reported (where it falls fastest, R^2), not judged as a line; decided in the first round.
TEST(ValidateRamp, ACliffPassesWithItsShape)
{
    FakeRamp f{std::mt19937_64(7), cliff, 30, 0.02};
    struct val_ramp r;
    std::string why;
    EXPECT_EQ(ramp_once(f, 100, &r, &why), VAL_PASS) << why;
    EXPECT_NE(why.find("monotone within the noise, falls fastest from 75 to 100 %"), std::string::npos) << why;
    EXPECT_LT(r.r2, 0.9) << why;
    EXPECT_NE(why.find("R^2 "), std::string::npos) << why;
    EXPECT_TRUE(r.decided);
    EXPECT_EQ(f.calls, 1u);
}

// A bandwidth ramp with no effect asks whether the bandwidth is shared at all: skipped when it is not.
TEST(ValidateRamp, NoEffectOnAnUnsharedBandwidthIsSkipped)
{
    FakeRamp f{std::mt19937_64(3), linear, 0, 0.01};
    struct val_meter m = {nullptr, nullptr, fake_beside, nullptr, &f};
    m.unshared = [](void *, const char *kind, int, char *why, size_t len) {
        snprintf(why, len, "%s: both at once 98 %% of twice one", kind);
        return 1;
    };
    struct val_ramp_cfg c = cfg_with(0);
    struct val_ramp r;
    char why[256] = "", rs[640];
    ASSERT_EQ(val_probe_ramp(&m, &c, &r, why, sizeof(why)), 0);
    EXPECT_EQ(val_ramp_verdict(&r, &m, "dram", 0, 100, 1, rs, sizeof(rs), nullptr), VAL_SKIPPED) << rs;
    EXPECT_EQ(val_ramp_verdict(&r, &m, nullptr, 0, 100, 1, rs, sizeof(rs), nullptr), VAL_UNCHECKED) << rs;
}

// ---- busy is a verdict -------------------------------------------------------------------------------------------

// The rule itself, exactly (validate.h): over every step above IB_BUSY_WAIT_PCT is BUSY whatever the readings say; a
// failing or undecidable verdict with one step above it is BUSY; a pass with one busy step stands; skipped and
// interrupted stand; a share that was not measured is never busy.
TEST(ValidateBusy, TheRuleOnFakeNumbers)
{
    EXPECT_STREQ(val_verdict_name(VAL_BUSY), "BUSY");
    EXPECT_EQ(val_busy_rule(VAL_PASS, 10.0, 10.0), VAL_PASS);
    EXPECT_EQ(val_busy_rule(VAL_PASS, 10.01, 0.0), VAL_BUSY);
    EXPECT_EQ(val_busy_rule(VAL_PASS, 5.0, 50.0), VAL_PASS);
    EXPECT_EQ(val_busy_rule(VAL_FAIL, 5.0, 50.0), VAL_BUSY);
    EXPECT_EQ(val_busy_rule(VAL_FAIL, 5.0, 10.0), VAL_FAIL);
    EXPECT_EQ(val_busy_rule(VAL_FAIL, 48.0, 55.0), VAL_BUSY);
    EXPECT_EQ(val_busy_rule(VAL_UNDECIDABLE, 2.0, 11.0), VAL_BUSY);
    EXPECT_EQ(val_busy_rule(VAL_UNDECIDABLE, 2.0, 9.0), VAL_UNDECIDABLE);
    EXPECT_EQ(val_busy_rule(VAL_FAIL, NAN, NAN), VAL_FAIL);
    EXPECT_EQ(val_busy_rule(VAL_PASS, NAN, 90.0), VAL_PASS);
    EXPECT_EQ(val_busy_rule(VAL_FAIL, NAN, 90.0), VAL_BUSY);
    EXPECT_EQ(val_busy_rule(VAL_SKIPPED, 90.0, 90.0), VAL_SKIPPED);
    EXPECT_EQ(val_busy_rule(VAL_INTERRUPTED, 90.0, 90.0), VAL_INTERRUPTED);
    EXPECT_EQ(val_busy_rule(VAL_BUSY, 0.0, 0.0), VAL_BUSY);
    // no effect on a step that did not get its CPU is no finding either
    EXPECT_EQ(val_busy_rule(VAL_UNCHECKED, 5.0, 50.0), VAL_BUSY);
    EXPECT_EQ(val_busy_rule(VAL_ISOLATED, 5.0, 50.0), VAL_BUSY);
    EXPECT_EQ(val_busy_rule(VAL_UNCHECKED, 5.0, 5.0), VAL_UNCHECKED);
}

// A probe ramp whose SoI waited 48 % of its runnable time: BUSY whatever the probe read, with the figure first and
// the readings' own verdict after it; at 3 % the readings decide.
TEST(ValidateBusy, AProbeRampWhoseSoiWaitedIsBusy)
{
    struct val_ramp r;
    std::string reason;
    FakeRamp none{std::mt19937_64(5), linear, 0, 0.01};
    none.wait = 48;
    struct val_meter m = {nullptr, nullptr, fake_beside, nullptr, &none};
    struct val_ramp_cfg c = cfg_with(0);
    char why[256] = "", rs[640] = "";
    ASSERT_EQ(val_probe_ramp(&m, &c, &r, why, sizeof(why)), 0) << why;
    EXPECT_DOUBLE_EQ(r.wait_pct, 48.0);
    EXPECT_DOUBLE_EQ(r.wait_worst_pct, 48.0);
    enum val_verdict measured = VAL_PASS;
    EXPECT_EQ(val_ramp_verdict(&r, &m, nullptr, 0, 100, 0, rs, sizeof(rs), &measured), VAL_BUSY) << rs;
    EXPECT_EQ(measured, VAL_UNCHECKED);
    EXPECT_EQ(std::string(rs).rfind("the SoI's threads waited 48.0 % of their runnable time for a CPU (bound 10 %); "
                                    "the readings alone: UNCHECKED: no effect beyond the noise",
                                    0),
              0u)
        << rs;

    FakeRamp strong{std::mt19937_64(6), linear, 20, 0.01};
    strong.wait = 48; // a clear effect on half a CPU is no evidence either
    EXPECT_EQ(ramp_once(strong, 0, &r, &reason), VAL_BUSY) << reason;
    strong.wait = 3;
    EXPECT_EQ(ramp_once(strong, 0, &r, &reason), VAL_PASS) << reason;
    none.wait = 3;
    EXPECT_EQ(ramp_once(none, 0, &r, &reason), VAL_UNCHECKED) << reason;
    EXPECT_EQ(reason.find("BUSY"), std::string::npos) << reason;
}

// ---- the overlap claims ------------------------------------------------------------------------------------------

namespace {

int col(const char *probe)
{
    for (int k = 0; k < VAL_NPROBES; k++)
        if (!strcmp(val_mprobes[k], probe))
            return k;
    ADD_FAILURE() << "no probe " << probe;
    return 0;
}

struct Matrix {
    struct val_overlap ov = {};
    struct val_row *row(const char *soi)
    {
        for (unsigned i = 0; i < ov.nrows; i++)
            if (!strcmp(ov.row[i].ops->name, soi))
                return &ov.row[i];
        struct val_row *r = &ov.row[ov.nrows++];
        r->ops = soi_find(soi);
        EXPECT_NE(r->ops, nullptr) << soi;
        return r;
    }
    void set(const char *soi, const char *probe, double d, double se)
    {
        struct val_cell *c = &row(soi)->cell[col(probe)];
        c->measured = 1;
        c->d = d;
        c->se = se;
        c->soi_work_cpu_pct = 100; // the SoI did its work beside the probe: its capacity per CPU second
    }
    const struct val_check *check(const char *soi)
    {
        for (unsigned i = 0; i < ov.nchecks; i++)
            if (!strcmp(ov.check[i].claim->soi, soi))
                return &ov.check[i];
        return nullptr;
    }
};

enum val_verdict judge(Matrix &m, const char *soi)
{
    val_claims_eval(&m.ov, nullptr, nullptr, 0);
    const struct val_check *c = m.check(soi);
    EXPECT_NE(c, nullptr) << soi;
    return c ? c->verdict : VAL_INTERRUPTED;
}

} // namespace

TEST(ValidateClaims, UnderAFractionOfAnother)
{
    Matrix a, b, c;
    a.set("mem-bw", "pagecache", 0.0, 0.1);
    a.set("mem-bw", "stream-dram", 30, 3);
    EXPECT_EQ(judge(a, "mem-bw"), VAL_PASS);
    b.set("mem-bw", "pagecache", 20, 1);
    b.set("mem-bw", "stream-dram", 30, 3);
    EXPECT_EQ(judge(b, "mem-bw"), VAL_FAIL);
    c.set("mem-bw", "pagecache", 0, 0.1);
    c.set("mem-bw", "stream-dram", 2, 1.5); // the bandwidth probe not hurt: nothing to compare with
    EXPECT_EQ(judge(c, "mem-bw"), VAL_UNDECIDABLE);
}

// A check whose cells' SoI waited for a CPU beyond the bound is BUSY, whichever way it went; within it, as measured.
TEST(ValidateClaims, ACheckOnABusyCellIsBusy)
{
    Matrix a, b, c;
    b.set("mem-bw", "pagecache", 20, 1);
    b.set("mem-bw", "stream-dram", 30, 3);
    b.row("mem-bw")->cell[col("stream-dram")].wait_pct = 40;
    EXPECT_EQ(judge(b, "mem-bw"), VAL_BUSY);
    EXPECT_NE(strstr(b.check("mem-bw")->text, "BUSY, not FAIL: in a cell it rests on the SoI's threads waited 40.0 %"),
              nullptr)
        << b.check("mem-bw")->text;
    EXPECT_EQ(val_claims_eval(&b.ov, nullptr, nullptr, 0), 0) << "BUSY is not a failure";
    for (const char *p : {"chase-llc", "stream-llc", "chase-l2"})
        a.set("simd", p, 1, 1);
    a.row("simd")->cell[col("chase-l2")].wait_pct = 50; // "moves nothing" on half a CPU
    EXPECT_EQ(judge(a, "simd"), VAL_BUSY);
    c.set("mem-bw", "pagecache", 20, 1);
    c.set("mem-bw", "stream-dram", 30, 3);
    c.row("mem-bw")->cell[col("pagecache")].wait_pct = 10; // at the bound: not busy
    EXPECT_EQ(judge(c, "mem-bw"), VAL_FAIL);
}

TEST(ValidateClaims, AboveAnother)
{
    Matrix a, b, c;
    a.set("llc-cap", "chase-llc", 10, 1);
    a.set("llc-cap", "stream-dram", 2, 1);
    EXPECT_EQ(judge(a, "llc-cap"), VAL_PASS);
    b.set("llc-cap", "chase-llc", 2, 0.3);
    b.set("llc-cap", "stream-dram", 10, 1);
    EXPECT_EQ(judge(b, "llc-cap"), VAL_FAIL);
    c.set("llc-cap", "chase-llc", 0.5, 1);
    c.set("llc-cap", "stream-dram", 0.8, 1);
    EXPECT_EQ(judge(c, "llc-cap"), VAL_UNDECIDABLE);
}

TEST(ValidateClaims, SmallOnEveryProbe)
{
    Matrix a, b;
    for (const char *p : {"chase-llc", "stream-llc", "chase-l2"}) {
        a.set("simd", p, 1, 1);
        b.set("simd", p, 1, 1);
    }
    EXPECT_EQ(judge(a, "simd"), VAL_PASS);
    b.set("simd", "stream-llc", -9, 1); // a move either way counts
    EXPECT_EQ(judge(b, "simd"), VAL_FAIL);
    EXPECT_NE(strstr(b.check("simd")->text, "stream-llc"), nullptr) << b.check("simd")->text;
    // a claim whose cells were not measured is not judged
    Matrix none;
    none.set("mem-bw", "pagecache", 0, 0.1);
    EXPECT_EQ(val_claims_eval(&none.ov, nullptr, nullptr, 0), 0);
    EXPECT_EQ(none.ov.nchecks, 0u);
}

// "int moves no cache probe" is no finding when int did nothing beside them: the claim is judged only
// when the SoI's work per second of its own CPU time was within VAL_WORK_CPU_*_PCT of its capacity in every cell.
TEST(ValidateClaims, SmallIsNotJudgedBesideAnSoIThatDidNoWork)
{
    for (double w : {0.0, (double)NAN, 500000.0, 5.0}) { // nothing done; no CPU time; work counted, not done; a 20th
        Matrix m;
        for (const char *p : {"chase-llc", "stream-llc", "chase-l2"})
            m.set("int", p, 1, 1);
        m.row("int")->cell[col("stream-llc")].soi_work_cpu_pct = w;
        EXPECT_EQ(judge(m, "int"), VAL_UNDECIDABLE) << "int did " << w << " % of its peak per CPU second";
        EXPECT_NE(strstr(m.check("int")->text, "did not do its work"), nullptr) << m.check("int")->text;
        struct val_cellref bad[8];
        unsigned nbad = 0;
        val_claims_eval(&m.ov, bad, &nbad, 8);
        EXPECT_EQ(nbad, 1u) << "the cell to measure again";
    }
    for (double w : {40.0, 100.0, 1400.0}) { // a loaded host's spread (docs/validation.md): judged
        Matrix m;
        for (const char *p : {"chase-llc", "stream-llc", "chase-l2"})
            m.set("fp", p, 1, 1);
        m.row("fp")->cell[col("chase-l2")].soi_work_cpu_pct = w;
        EXPECT_EQ(judge(m, "fp"), VAL_PASS) << w;
    }
}

namespace {
// The second measurement of any cell reads `second` (d, se 0.5).
struct FakeCells {
    double second;
    unsigned opens = 0, besides = 0;
};
int fc_open(void *ctx, const struct soi_ops *, int, char *, size_t)
{
    static_cast<FakeCells *>(ctx)->opens++;
    return 0;
}
int fc_beside(void *ctx, const char *, int, const double *, unsigned nl, unsigned, uint64_t, uint64_t,
              struct beside_result *out, char *, size_t)
{
    FakeCells *f = static_cast<FakeCells *>(ctx);
    f->besides++;
    memset(out, 0, sizeof(*out));
    for (int k = 0; k < IB_PSI_N; k++) // no PSI or steal on a fake
        out->machine.some_pct[k] = out->machine.full_pct[k] = NAN;
    out->machine.steal_pct = NAN;
    out->nlevels = nl;
    out->lv[0].ratio = 1;
    out->lv[1].ratio = 1 / (1 - f->second / 100);
    out->lv[1].ratio_se = 0.005;
    return 0;
}
} // namespace

// A cell that fails a claim is measured once more and the claim judged on the second figure; never a third time.
TEST(ValidateClaims, FailingCellsAreMeasuredOnceMore)
{
    Matrix m;
    m.set("llc-cap", "chase-llc", 1, 0.3);
    m.set("llc-cap", "stream-dram", 6, 0.5);
    FakeCells f{9.0};
    struct val_meter mt = {fc_open, nullptr, fc_beside, nullptr, &f};
    EXPECT_EQ(val_claims_check(&m.ov, &mt, 0, 1, nullptr), 1); // both cells now read 9 %: 9 > 9 fails ...
    const struct val_check *c = m.check("llc-cap");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(f.besides, 2u);
    EXPECT_EQ(c->verdict, VAL_FAIL);
    EXPECT_NE(strstr(c->text, "first read +1.0 %"), nullptr) << c->text;
    const struct val_cell *cl = &m.row("llc-cap")->cell[col("chase-llc")];
    EXPECT_TRUE(cl->remeasured);
    EXPECT_NEAR(cl->first_d, 1, 1e-9);
    EXPECT_NEAR(cl->d, 9, 1e-6);
    val_claims_check(&m.ov, &mt, 0, 1, nullptr); // ... and is not measured a third time
    EXPECT_EQ(f.besides, 2u);
    EXPECT_EQ(f.opens, 2u);
}

// A validation probe's memory is held to what the machine can spare (mlim_check) before anything is mapped.
// A file probe whose file cannot be made (here: the filesystem would fall below its margin) leaves nothing behind,
// and opening it again starts afresh in its base directory: its private directories neither leak nor nest.
TEST(ValidateProbes, AFileProbeThatFailsLeavesNoDirectory)
{
    ib_test::TempDir base("vprobe");
    ASSERT_FALSE(base.path().empty());
    struct calib c = {};
    struct mlim m = sixteen_gib();
    struct vprobe vp;
    char why[256] = "";
    ASSERT_EQ(vprobe_init(&vp, "pagecache", &c, &m, base.path().c_str(), nullptr, -1, why, sizeof why), 0) << why;
    vp.bytes = 1ULL << 60; // more than any filesystem can spare
    auto entries = [&] { return dir_entries(base.path()); };
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(vp.bp.open(vp.bp.ctx), -ENOSPC) << "try " << i;
        EXPECT_EQ(entries(), 0u) << "try " << i << ": its private directory was left in " << base.path();
    }
    vprobe_fini(&vp);
    EXPECT_EQ(entries(), 0u);
}

// The disk probes measure storage: on a memory filesystem their O_DIRECT reads would read memory (tmpfs accepts
// O_DIRECT since Linux 6.6), so such a base is refused, and nothing is left in it.
TEST(ValidateProbes, ADiskProbeOnAMemoryFilesystemIsRefused)
{
    if (!fs_is_memory("/dev/shm"))
        GTEST_SKIP() << "no tmpfs at /dev/shm";
    char t[] = "/dev/shm/ibench_test_vprobe.XXXXXX";
    ASSERT_NE(mkdtemp(t), nullptr);
    std::string base = t;
    struct calib c = {};
    struct mlim m = {};
    m.mem_total = 16ULL << 30;
    m.mem_available = 8ULL << 30;
    m.cg_limit = MLIM_UNLIMITED;
    for (const char *name : {"disk-rand", "disk-seq"}) {
        SCOPED_TRACE(name);
        struct vprobe vp;
        char why[256] = "";
        ASSERT_EQ(vprobe_init(&vp, name, &c, &m, base.c_str(), nullptr, -1, why, sizeof why), 0) << why;
        vp.bytes = 4ULL << 20;  // small: a refusal must not depend on the size
        EXPECT_EQ(vp.bp.open(vp.bp.ctx), -ENOTSUP) << "a tmpfs is memory, not storage";
        EXPECT_EQ(dir_entries(base), 0u) << "nothing left in " << base;
        vprobe_fini(&vp);
    }
    EXPECT_EQ(rmdir(base.c_str()), 0) << "empty: " << strerror(errno);
}

// A file probe that fails after its file was made (here the page-cache probe's mmap) drops the file and its
// directory at once, and a second open does not take the half-built probe for a built one.
TEST(ValidateProbes, APageCacheProbeThatFailsLateLeavesNothing)
{
    ib_test::TempDir base("vprobe");
    ASSERT_FALSE(base.path().empty());
    struct calib c = {};
    struct mlim m = sixteen_gib();
    struct vprobe vp;
    char why[256] = "";
    ASSERT_EQ(vprobe_init(&vp, "pagecache", &c, &m, base.path().c_str(), nullptr, -1, why, sizeof why), 0) << why;
    vp.bytes = 0;  // the file is made and written (nothing to write), then mmap of 0 bytes fails (EINVAL)
    for (int i = 0; i < 2; i++) {
        EXPECT_LT(vp.bp.open(vp.bp.ctx), 0) << "try " << i << ": a probe without its mapping is not built";
        EXPECT_EQ(dir_entries(base.path()), 0u) << "try " << i << ": its file and directory were left in "
                                                << base.path();
    }
    vprobe_fini(&vp);
    EXPECT_EQ(dir_entries(base.path()), 0u);
}

TEST(ValidateProbes, MemoryProbesAreHeldToTheSpareMemory)
{
    struct calib c = {};
    struct mlim m = {};
    m.mem_total = 2ULL << 30;                // margin: the 512 MiB floor
    m.mem_available = (512ULL + 100) << 20;  // 100 MiB beyond it
    m.cg_limit = MLIM_UNLIMITED;
    struct vprobe vp;
    char why[256] = "";
    EXPECT_EQ(vprobe_init(&vp, "stream-dram", &c, &m, nullptr, nullptr, -1, why, sizeof why), -E2BIG);  // 256 MiB
    EXPECT_NE(strstr(why, "stream-dram"), nullptr) << why;
    EXPECT_NE(strstr(why, "can spare"), nullptr) << why;
    ASSERT_EQ(vprobe_init(&vp, "chase-dram", &c, &m, nullptr, nullptr, -1, why, sizeof why), 0) << why;  // 72 MiB
    vprobe_fini(&vp);
}
