// test_core_sois.cpp - the core SoIs (int, fp, simd): their assembly kernels disassembled (each issues only its
// kind of instruction), the simd ISA selection and its forced fallbacks run through the engine, and the calibrated
// int peak against a plain C throughput loop written here (0.6-1.6, cycles interleaved: the host is shared; the
// tight 10 % comparison is validation/bench-core).
#include <gtest/gtest.h>

#include <ftw.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <regex>
#include <string>
#include <vector>

#include "calib.h"
#include "engine.h"
#include "machine.h"
#include "peak.h"
#include "ramp.h"
#include "ref_loops.h"
#include "soi.h"
#include "stats.h"
#include "test_support.h"

extern "C" {
uint64_t ib_int_kernel(uint64_t iters);
uint64_t ib_fp_kernel(uint64_t iters);
uint64_t ib_simd_avx512_kernel(uint64_t iters);
uint64_t ib_simd_avx2_kernel(uint64_t iters);
uint64_t ib_simd_sse_kernel(uint64_t iters);
}

namespace {

constexpr uint64_t kMs = 1000000ULL;

::testing::Environment *const g_cache_env = ::testing::AddGlobalTestEnvironment(new ib_test::PrivateCacheEnv("core"));

struct Insn {
    uint64_t addr;
    std::string mnem, ops;
};

// The instructions between <sym>: and <sym_end>: in `objdump -d` of the SoI library.
std::vector<Insn> disasm(const std::string &sym)
{
    std::vector<Insn> out;
    std::string cmd = std::string("objdump -d --no-show-raw-insn '") + IBENCH_SOIS_LIB + "' 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    if (!p)
        return out;
    char line[512];
    bool in = false;
    const std::string start = "<" + sym + ">:", end = "<" + sym + "_end>:";
    static const std::regex insn(R"(^\s*([0-9a-f]+):\s+(.*\S)\s*$)");
    while (fgets(line, sizeof line, p)) {
        std::string l(line);
        if (l.find(start) != std::string::npos) {
            in = true;
            continue;
        }
        if (!in)
            continue;
        if (l.find(end) != std::string::npos || (l.find(">:") != std::string::npos && l[0] != ' '))
            break;
        std::smatch mt;
        if (!std::regex_match(l, mt, insn))
            continue;
        std::string text = mt[2];
        // drop prefixes objdump prints for padding nops ("data16 cs nopw ...", "cs nopw ...")
        size_t sp;
        Insn i;
        i.addr = std::stoull(mt[1], nullptr, 16);
        for (;;) {
            sp = text.find_first_of(" \t");
            i.mnem = text.substr(0, sp);
            i.ops = sp == std::string::npos ? "" : text.substr(text.find_first_not_of(" \t", sp));
            if ((i.mnem == "data16" || i.mnem == "cs" || i.mnem == "rex.W") && sp != std::string::npos)
                text = i.ops;
            else
                break;
        }
        out.push_back(i);
    }
    pclose(p);
    return out;
}

bool has(const std::vector<Insn> &v, const std::string &mnem)
{
    for (const Insn &i : v)
        if (i.mnem == mnem)
            return true;
    return false;
}

bool is_nop(const Insn &i) { return i.mnem.find("nop") != std::string::npos || i.mnem == "xchg"; }

// ---- the kernels themselves ------------------------------------------------------------------------------------------

// The instructions of the kernel's loop: from the target of its back edge (the last conditional jump, which must
// jump backwards) to that jump, padding nops excluded. Empty when there is no such loop.
std::vector<Insn> loop_body(const std::vector<Insn> &v)
{
    for (size_t j = v.size(); j-- > 0;) {
        if (v[j].mnem != "jne" && v[j].mnem != "jnz")
            continue;
        uint64_t target = std::stoull(v[j].ops, nullptr, 16);
        std::vector<Insn> body;
        for (size_t i = 0; i <= j; i++)
            if (v[i].addr >= target && !is_nop(v[i]))
                body.push_back(v[i]);
        return target < v[j].addr ? body : std::vector<Insn>{};
    }
    return {};
}

uint64_t mono_ns()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

// A kernel's count is iters times its loop's instructions, and the loop does run iters times. The count is
// computed before the loop, so both are checked against the loop itself: the disassembled body (dec + jnz closing
// it) has as many instructions as the count per iteration, and `iters` iterations take at least the time no x86
// core can beat (kMaxIps: 8 instructions per cycle at 8 GHz, above any core; load only makes it slower).
void expect_counts_its_loop(const char *sym, uint64_t (*kernel)(uint64_t), uint64_t per_iter)
{
    SCOPED_TRACE(sym);
    EXPECT_EQ(kernel(0), 0u);
    EXPECT_EQ(kernel(1000), 1000 * per_iter);
    const std::vector<Insn> body = loop_body(disasm(sym));
    ASSERT_GE(body.size(), 2u) << "no backward loop in " << sym << " (" << IBENCH_SOIS_LIB << ")";
    EXPECT_EQ(body.size(), per_iter) << "the loop's instructions against the count per iteration";
    EXPECT_EQ(body[body.size() - 2].mnem + " " + body[body.size() - 2].ops, "dec %rdi") << "counts down iters";
    constexpr double kMaxIps = 8 * 8e9;
    constexpr uint64_t kIters = 4000000;
    uint64_t t0 = mono_ns();
    uint64_t n = kernel(kIters);
    double s = (double)(mono_ns() - t0) / 1e9;
    EXPECT_EQ(n, kIters * per_iter);
    EXPECT_GE(s, (double)n / kMaxIps) << "the loop cannot have run " << kIters << " times in " << s * 1e3 << " ms";
}

}  // namespace

TEST(CoreKernels, CountInstructions)
{
    expect_counts_its_loop("ib_int_kernel", ib_int_kernel, 18);
    expect_counts_its_loop("ib_fp_kernel", ib_fp_kernel, 26);
    expect_counts_its_loop("ib_simd_sse_kernel", ib_simd_sse_kernel, 26);
    struct cpu_info ci;
    ASSERT_EQ(cpuinfo_read(&ci), 0);
    if (ci.avx2 && ci.fma) {
        expect_counts_its_loop("ib_simd_avx2_kernel", ib_simd_avx2_kernel, 14);
    }
    if (ci.avx512f) {
        expect_counts_its_loop("ib_simd_avx512_kernel", ib_simd_avx512_kernel, 14);
    }
}

TEST(CoreKernels, IntKernelIssuesOnlyIntegerInstructions)
{
    std::vector<Insn> v = disasm("ib_int_kernel");
    ASSERT_GT(v.size(), 20u) << "cannot disassemble ib_int_kernel in " << IBENCH_SOIS_LIB;
    static const std::regex allowed("^(add|sub|xor|and|or|inc|dec|cmp|test|mov|shl|shr|lea|jne|jnz|je|jz|jmp|ret)"
                                    "[bwlq]?$");
    static const std::regex vecreg("%([xyz]mm|k)[0-9]|%st");
    int adds = 0, xors = 0;
    for (const Insn &i : v) {
        SCOPED_TRACE(i.mnem + " " + i.ops);
        EXPECT_FALSE(std::regex_search(i.ops, vecreg)) << "FP/vector register";
        if (!is_nop(i)) {
            EXPECT_TRUE(std::regex_match(i.mnem, allowed)) << "not a plain integer instruction";
        }
        adds += i.mnem == "add";
        xors += i.mnem == "xor";
    }
    EXPECT_GE(adds, 8);
    EXPECT_GE(xors, 8);
}

TEST(CoreKernels, FpKernelIsScalarOnly)
{
    std::vector<Insn> v = disasm("ib_fp_kernel");
    ASSERT_GT(v.size(), 20u);
    int addsd = 0, mulsd = 0;
    for (const Insn &i : v) {
        SCOPED_TRACE(i.mnem + " " + i.ops);
        EXPECT_EQ(i.ops.find("%ymm"), std::string::npos);
        EXPECT_EQ(i.ops.find("%zmm"), std::string::npos);
        const std::string &m = i.mnem;
        bool packed = m.size() > 2 && (m.compare(m.size() - 2, 2, "pd") == 0 || m.compare(m.size() - 2, 2, "ps") == 0);
        EXPECT_FALSE(packed) << "packed instruction";
        EXPECT_NE(m[0], 'v') << "VEX/EVEX vector instruction";
        if (m[0] == 'p') {
            EXPECT_TRUE(m == "push" || m == "pop") << "packed-integer instruction";
        }
        addsd += m == "addsd";
        mulsd += m == "mulsd";
    }
    EXPECT_GE(addsd, 8);
    EXPECT_GE(mulsd, 8);
}

TEST(CoreKernels, SimdKernelsUseTheirRegisters)
{
    std::vector<Insn> z = disasm("ib_simd_avx512_kernel"), y = disasm("ib_simd_avx2_kernel"),
                      x = disasm("ib_simd_sse_kernel");
    ASSERT_GT(z.size(), 12u);
    ASSERT_GT(y.size(), 12u);
    ASSERT_GT(x.size(), 12u);
    int nz = 0, ny = 0;
    for (const Insn &i : z)
        nz += i.mnem == "vfmadd231pd" && i.ops.find("%zmm") != std::string::npos;
    for (const Insn &i : y) {
        ny += i.mnem == "vfmadd231pd" && i.ops.find("%ymm") != std::string::npos;
        EXPECT_EQ(i.ops.find("%zmm"), std::string::npos) << i.mnem << " " << i.ops;
    }
    EXPECT_GE(nz, 8);
    EXPECT_GE(ny, 8);
    EXPECT_TRUE(has(x, "addpd"));
    EXPECT_TRUE(has(x, "mulpd"));
    for (const Insn &i : x) {
        EXPECT_NE(i.mnem[0], 'v') << "the SSE path must run without AVX: " << i.mnem;
        EXPECT_EQ(i.ops.find("%ymm"), std::string::npos);
    }
}

// ---- the SoIs on this machine ------------------------------------------------------------------------------------

class CoreSoi : public ::testing::Test {
protected:
    static struct machine *m;
    static void SetUpTestSuite()
    {
        char why[256] = "";
        m = new machine;
        ASSERT_EQ(machine_open(m, nullptr, why, sizeof why), 0) << why;
    }
    static void TearDownTestSuite()
    {
        if (m) {
            machine_close(m);
            delete m;
            m = nullptr;
        }
    }
    const int cpus[1] = {0};
    atomic_int stop{0};
    char why[512] = "";
    struct soi_env env(const soi_ops *ops, const struct cpu_info *ci, int cached)
    {
        struct soi_env e;
        soi_env_init(&e, ops, m, 1, cpus, -1, &stop);
        e.cpu = ci;
        e.cached_capacity = cached;
        return e;
    }
    // prepare -> {0, 100} % through the engine -> close; returns capacity_src
    std::string short_run(const soi_ops *ops, struct soi_env &e, double *pct100, double *on_cpu100 = nullptr)
    {
        struct soi *s = nullptr;
        int rc = soi_open(ops, &e, &s, nullptr, why, sizeof why);
        EXPECT_EQ(rc, 0) << why;
        if (rc)
            return "";
        EXPECT_GT(s->capacity, 0);
        EXPECT_STREQ(s->unit, "ops/s");
        std::string src = s->capacity_src;
        ramp_sched r = {0, nullptr};
        const double xs[] = {0, 100};
        EXPECT_EQ(ramp_list(&r, xs, 2, 40 * kMs), 0);
        struct step_result res[2];
        unsigned ndone = 0;
        EXPECT_EQ(engine_run(s, &r, &stop, nullptr, res, &ndone, why, sizeof why), 0) << why;
        EXPECT_EQ(ndone, 2u);
        if (ndone == 2) {
            EXPECT_EQ(res[0].achieved, 0.0);
            EXPECT_GT(res[1].achieved, 0.0);
            EXPECT_GT(res[1].active_frac, 0.5);
            *pct100 = res[1].achieved_pct;
            if (on_cpu100)
                *on_cpu100 = res[1].cpu_frac * 100;
        }
        ramp_free(&r);
        soi_close(s);
        return src;
    }
};
struct machine *CoreSoi::m = nullptr;

TEST_F(CoreSoi, SimdPicksTheWidestIsaAndFallsBack)
{
    ASSERT_NE(m, nullptr);
    const soi_ops *ops = soi_find("simd");
    ASSERT_NE(ops, nullptr);
    const struct cpu_info real = m->cpu;
    const char *widest = real.avx512f ? "avx512" : real.avx2 && real.fma ? "avx2" : "sse";
    printf("this CPU: avx512f=%d avx2=%d fma=%d -> simd runs %s\n", real.avx512f, real.avx2, real.fma, widest);

    // auto: the widest present, named in capacity_src
    double pct = 0;
    struct soi_env e = env(ops, &real, 0);
    std::string src = short_run(ops, e, &pct);
    EXPECT_EQ(src.rfind(widest, 0), std::string::npos);  // not a prefix ("measured now: ...")
    EXPECT_NE(src.find(std::string(widest) + " "), std::string::npos) << src;

    // forced SSE: always possible on x86-64
    e = env(ops, &real, 0);
    ASSERT_EQ(soi_opt_set(&e, "isa", "sse", why, sizeof why), 0) << why;
    src = short_run(ops, e, &pct);
    EXPECT_NE(src.find("sse addpd"), std::string::npos) << src;

    // forced AVX2 and AVX-512: run where present, refused with a reason where not
    for (int want : {2, 3}) {
        SCOPED_TRACE(want == 2 ? "isa=avx2" : "isa=avx512");
        bool present = want == 2 ? real.avx2 && real.fma : real.avx512f;
        e = env(ops, &real, 0);
        ASSERT_EQ(soi_opt_set(&e, "isa", want == 2 ? "avx2" : "avx512", why, sizeof why), 0) << why;
        if (present) {
            src = short_run(ops, e, &pct);
            EXPECT_NE(src.find(want == 2 ? "avx2 vfmadd231pd ymm" : "avx512 vfmadd231pd zmm"), std::string::npos)
                << src;
        } else {
            struct soi *s = nullptr;
            EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -ENOTSUP);
            EXPECT_NE(strstr(why, "not supported"), nullptr) << why;
        }
    }

    // a machine without AVX-512 (and one without AVX2 either): auto falls back, forcing the absent ISA is refused
    struct cpu_info no512 = real;
    no512.avx512f = no512.avx512bw = false;
    e = env(ops, &no512, 1);  // cached peaks: nothing re-measured
    if (real.avx2 && real.fma) {
        src = short_run(ops, e, &pct);
        EXPECT_NE(src.find("avx2 vfmadd231pd ymm"), std::string::npos) << src;
    }
    ASSERT_EQ(soi_opt_set(&e, "isa", "avx512", why, sizeof why), 0) << why;
    struct soi *s = nullptr;
    EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -ENOTSUP);
    EXPECT_NE(strstr(why, "avx512"), nullptr) << why;
    struct cpu_info sse_only = no512;
    sse_only.avx2 = sse_only.fma = sse_only.avx = false;
    e = env(ops, &sse_only, 1);
    src = short_run(ops, e, &pct);
    EXPECT_NE(src.find("sse addpd"), std::string::npos) << src;
}

TEST_F(CoreSoi, IntAndFpRunAndCacheTheirPeak)
{
    ASSERT_NE(m, nullptr);
    for (const char *name : {"int", "fp"}) {
        SCOPED_TRACE(name);
        const soi_ops *ops = soi_find(name);
        ASSERT_NE(ops, nullptr);
        EXPECT_EQ(ops->kind, SOI_DUTY);
        EXPECT_EQ(ops->scope, TOPO_SCOPE_CORE);
        struct soi_env e = env(ops, &m->cpu, 0);
        double pct = 0, on_cpu = 0;
        std::string src = short_run(ops, e, &pct, &on_cpu);
        EXPECT_NE(src.find("measured now"), std::string::npos) << src;
        const calib_bw *c = calib_bw_find(&m->calib, name, cpus, 1);
        ASSERT_NE(c, nullptr) << "the peak is cached under kind " << name;
        EXPECT_GT(c->bps, 0);
        // told to trust the cache: the cached figure, nothing measured
        const unsigned nbw = m->calib.nbw;
        e = env(ops, &m->cpu, 1);
        struct soi *s = nullptr;
        ASSERT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), 0) << why;
        EXPECT_EQ(s->capacity, c->bps);
        EXPECT_NE(strstr(s->capacity_src, "cached"), nullptr) << s->capacity_src;
        EXPECT_EQ(m->calib.nbw, nbw);
        soi_close(s);
        printf("%s at 100 %%: %.1f %% of its peak on %.1f %% of a CPU (>= 90 %% alone: validation/bench-core)\n",
               name, pct, on_cpu);
        // it ran flat out at 100 %: whatever share of its CPU the host gave it, it issued at about its peak while
        // on it (the peak itself was measured on a shared CPU). An absolute floor does not hold (14 % of the peak
        // once under ctest -j2); % of the peak over % of a CPU read 0.62-3.3 alone and beside other tests here
        // (docs/validation.md), so the floor is 0.25: a kernel issuing a quarter of what it counts fails.
        EXPECT_GT(on_cpu, 0.0);
        EXPECT_GT(pct, 0.25 * on_cpu);
    }
}

// ---- the calibration against a plain C loop ------------------------------------------------------------------------

namespace {

uint64_t now_ns()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

// 8 independent chains of add + xor with barriers: 18 instructions per iteration (validation/ref_loops.h)
uint64_t plain_int(uint64_t n) { return ref_int_loop(n); }

double plain_int_rate(uint64_t ns)
{
    uint64_t ops = 0, t0 = now_ns(), dt;
    do {
        ops += plain_int(20000);
        dt = now_ns() - t0;
    } while (dt < ns);
    return (double)ops / ((double)dt / 1e9);
}

}  // namespace

TEST(CoreCalibration, IntPeakMatchesAPlainLoop)
{
    struct machine mc;
    char why[256] = "";
    ASSERT_EQ(machine_open(&mc, nullptr, why, sizeof why), 0) << why;
    cpu_set_t old, one;
    ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    plain_int_rate(20 * kMs);  // warm up
    // Interleaved as validation/core_ref --interleave does: each cycle is the plain loop, the calibration (5 x 100 ms,
    // median) and the plain loop again, so each ratio compares figures taken moments apart; the median over cycles
    // drops a cycle that another process or the hypervisor disturbed.
    constexpr int kCycles = 5;
    const int cpu0[] = {0};
    const ib_test::ThreadBusy busy; // the plain loop's thread, on CPU 0 with the calibration's
    double ratio[kCycles];
    int rc = 0;
    for (int c = 0; c < kCycles && rc == 0; c++) {
        double ref1 = plain_int_rate(100 * kMs), peak = 0;
        rc = peak_measure(mc.topo, cpu0, 1, ib_int_kernel, nullptr, &peak, nullptr, why, sizeof why);
        double ref2 = plain_int_rate(100 * kMs);
        ratio[c] = peak / ((ref1 + ref2) / 2);
        printf("CPU 0 cycle %d: ib_int_kernel calibrated %.3g instr/s, plain C loop %.3g and %.3g: ratio %.3f\n", c,
               peak, ref1, ref2, ratio[c]);
    }
    sched_setaffinity(0, sizeof old, &old);
    machine_close(&mc);
    ASSERT_EQ(rc, 0) << why;
    const double med = ib_median(ratio, kCycles);
    printf("median ratio %.3f (this thread waited %.1f %% of its runnable time for CPU 0)\n", med, busy.wait_pct());
    // Same instructions, so ~1. The bound is what holds on a loaded 2-CPU guest: with other builds running, single
    // cycles ranged 0.72-1.98 and the median of 5 0.85-1.21 (docs/validation.md, "Bounds of the unit tests"). It
    // catches a peak off by 1.7x or more (a count per iteration of 8 instead of 18 gave 0.51, a mistimed window, a
    // units slip); the 10 % figure is validation/bench-core's, measured alone. Outside it on a CPU measured busy: skip.
    if (!(med > 0.6 && med < 1.6))
        IB_SKIP_IF_BUSY(busy.why("the plain loop's thread on CPU 0"));
    EXPECT_GT(med, 0.6);
    EXPECT_LT(med, 1.6);
}
