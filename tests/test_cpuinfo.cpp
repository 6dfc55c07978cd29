// test_cpuinfo.cpp - TLB decoders on recorded / hand-built register values, and a sanity check of this CPU.
#include "cpuinfo.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace {

// 0x80000005 EBX: [31:24] L1 DTLB 4K assoc, [23:16] L1 DTLB 4K entries (low half: ITLB, ignored).
constexpr uint32_t amd_l1(uint32_t assoc, uint32_t entries) { return assoc << 24 | entries << 16 | 0xFF40; }
// 0x80000006 EBX: [31:28] L2 DTLB 4K assoc code, [27:16] L2 DTLB 4K entries (low half: ITLB, ignored).
constexpr uint32_t amd_l2(uint32_t code, uint32_t entries) { return code << 28 | entries << 16 | 0x4200; }

// Leaf 0x18 EDX: [4:0] type, [7:5] level, [8] fully associative.
constexpr uint32_t tlb_edx(uint32_t type, uint32_t level, bool fully = false)
{
    return type | level << 5 | (fully ? 1u << 8 : 0u);
}
// Leaf 0x18 EBX: [0] 4K, [1] 2M, [2] 4M, [3] 1G pages, [31:16] ways.
constexpr uint32_t tlb_ebx(uint32_t ways, uint32_t page_bits) { return ways << 16 | page_bits; }

}  // namespace

// Recorded on this project's AMD EPYC (Zen 4, KVM): 72-entry fully associative L1 DTLB, 3072-entry L2 DTLB
// with code 6 (8 ways).
TEST(CpuinfoAmd, RecordedZen4)
{
    struct tlb_info t;
    cpuinfo_decode_amd_tlb(0xFF48FF40u, 0x6C004200u, &t);
    EXPECT_TRUE(t.known);
    EXPECT_EQ(t.l1d_entries, 72u);
    EXPECT_EQ(t.l1d_ways, 0u);  // 0xFF: fully associative
    EXPECT_EQ(t.l2_entries, 3072u);
    EXPECT_EQ(t.l2_ways, 8u);
    EXPECT_STREQ(t.source, "cpuid 0x80000005/0x80000006");
}

TEST(CpuinfoAmd, SetAssociativeL1AndFullyAssociativeL2)
{
    struct tlb_info t;
    cpuinfo_decode_amd_tlb(amd_l1(4, 64), amd_l2(0xF, 2048), &t);
    EXPECT_TRUE(t.known);
    EXPECT_EQ(t.l1d_entries, 64u);
    EXPECT_EQ(t.l1d_ways, 4u);
    EXPECT_EQ(t.l2_entries, 2048u);
    EXPECT_EQ(t.l2_ways, 0u);
}

// Every code of AMD's L2 associativity table; reserved codes give "unknown" ways but keep the entries.
TEST(CpuinfoAmd, L2AssociativityCodes)
{
    const struct {
        uint32_t code;
        unsigned ways;
    } table[] = {
        {0x1, 1}, {0x2, 2},  {0x3, 3},  {0x4, 4},  {0x5, 6},  {0x6, 8},   {0x7, 0}, {0x8, 16},
        {0x9, 0}, {0xA, 32}, {0xB, 48}, {0xC, 64}, {0xD, 96}, {0xE, 128}, {0xF, 0},
    };
    for (const auto &row : table) {
        struct tlb_info t;
        cpuinfo_decode_amd_tlb(amd_l1(0xFF, 72), amd_l2(row.code, 3072), &t);
        EXPECT_EQ(t.l2_entries, 3072u) << "code " << row.code;
        EXPECT_EQ(t.l2_ways, row.ways) << "code " << row.code;
    }
    // The widest entry field (12 bits).
    struct tlb_info t;
    cpuinfo_decode_amd_tlb(amd_l1(0xFF, 255), amd_l2(0x6, 0xFFF), &t);
    EXPECT_EQ(t.l1d_entries, 255u);
    EXPECT_EQ(t.l2_entries, 4095u);
}

// Code 0 means the L2 TLB is disabled / not reported: the L1 is known, the L2 falls back to the default.
TEST(CpuinfoAmd, L2DisabledUsesDefault)
{
    struct tlb_info t;
    cpuinfo_decode_amd_tlb(amd_l1(0xFF, 48), amd_l2(0x0, 1024), &t);
    EXPECT_TRUE(t.known);
    EXPECT_EQ(t.l1d_entries, 48u);
    EXPECT_EQ(t.l2_entries, 1536u);
    EXPECT_EQ(t.l2_ways, 0u);
    EXPECT_STREQ(t.source, "cpuid 0x80000005/0x80000006 (L2 default)");
}

TEST(CpuinfoAmd, AllZeroIsDefault)
{
    struct tlb_info t;
    cpuinfo_decode_amd_tlb(0, 0, &t);
    EXPECT_FALSE(t.known);
    EXPECT_EQ(t.l1d_entries, 64u);
    EXPECT_EQ(t.l2_entries, 1536u);
    EXPECT_EQ(t.l1d_ways, 0u);
    EXPECT_EQ(t.l2_ways, 0u);
    EXPECT_STREQ(t.source, "default (cpuid reports no TLB geometry)");
}

// Leaf 0x18 in the style of a Skylake-class core: an instruction TLB (ignored), a 64-entry 4-way L1 DTLB,
// a 2M/4M-only L1 DTLB (ignored: no 4K pages), a 2048-entry 16-way unified STLB, and a trailing null subleaf.
TEST(CpuinfoIntel, DataAndUnifiedLevels)
{
    const uint32_t regs[][4] = {
        // eax (subleaf 0: max subleaf), ebx, ecx = sets, edx
        {4, tlb_ebx(8, 0x1), 16, tlb_edx(2, 1)},           // L1 ITLB 128 entries: ignored
        {0, tlb_ebx(4, 0x1), 16, tlb_edx(1, 1)},           // L1 DTLB 4K: 4 ways x 16 sets = 64
        {0, tlb_ebx(32, 0x6), 1, tlb_edx(1, 1, true)},     // L1 DTLB 2M/4M only: ignored
        {0, tlb_ebx(16, 0x3), 128, tlb_edx(3, 2)},         // L2 STLB 4K+2M: 16 ways x 128 sets = 2048
        {0, 0, 0, 0},                                      // null subleaf
    };
    struct tlb_info t;
    cpuinfo_decode_intel_tlb(regs, 5, &t);
    EXPECT_TRUE(t.known);
    EXPECT_EQ(t.l1d_entries, 64u);
    EXPECT_EQ(t.l1d_ways, 4u);
    EXPECT_EQ(t.l2_entries, 2048u);
    EXPECT_EQ(t.l2_ways, 16u);
    EXPECT_STREQ(t.source, "cpuid 0x18");
}

// Two data TLBs at level 1 that both hold 4K pages are summed; the associativity is then not a single number.
TEST(CpuinfoIntel, SeveralStructuresPerLevelAreSummed)
{
    const uint32_t regs[][4] = {
        {2, tlb_ebx(4, 0x1), 16, tlb_edx(1, 1)},           // 64 entries, 4K only
        {0, tlb_ebx(32, 0x7), 1, tlb_edx(1, 1, true)},     // 32 entries fully assoc, 4K/2M/4M
        {0, tlb_ebx(12, 0x1), 128, tlb_edx(3, 2)},         // 1536 entries, 12-way
    };
    struct tlb_info t;
    cpuinfo_decode_intel_tlb(regs, 3, &t);
    EXPECT_TRUE(t.known);
    EXPECT_EQ(t.l1d_entries, 96u);
    EXPECT_EQ(t.l1d_ways, 0u);
    EXPECT_EQ(t.l2_entries, 1536u);
    EXPECT_EQ(t.l2_ways, 12u);
}

// Split load/store L1 TLBs (types 4 and 5): with no plain data TLB at that level, the load-only one is used.
TEST(CpuinfoIntel, LoadOnlyTlbStandsInForData)
{
    const uint32_t regs[][4] = {
        {2, tlb_ebx(6, 0x1), 16, tlb_edx(4, 1)},           // load-only: 96 entries, 6-way
        {0, tlb_ebx(16, 0x1), 1, tlb_edx(5, 1, true)},     // store-only: ignored
        {0, tlb_ebx(8, 0x1), 256, tlb_edx(3, 2)},          // unified 2048, 8-way
    };
    struct tlb_info t;
    cpuinfo_decode_intel_tlb(regs, 3, &t);
    EXPECT_EQ(t.l1d_entries, 96u);
    EXPECT_EQ(t.l1d_ways, 6u);
    EXPECT_EQ(t.l2_entries, 2048u);
    EXPECT_EQ(t.l2_ways, 8u);
}

TEST(CpuinfoIntel, NoSubleavesIsDefault)
{
    struct tlb_info t;
    cpuinfo_decode_intel_tlb(nullptr, 0, &t);
    EXPECT_FALSE(t.known);
    EXPECT_EQ(t.l1d_entries, 64u);
    EXPECT_EQ(t.l2_entries, 1536u);
    EXPECT_STREQ(t.source, "default (cpuid reports no TLB geometry)");

    // Only an instruction TLB: still nothing about data.
    const uint32_t itlb[][4] = {{0, tlb_ebx(8, 0x1), 16, tlb_edx(2, 1)}};
    cpuinfo_decode_intel_tlb(itlb, 1, &t);
    EXPECT_FALSE(t.known);
    EXPECT_EQ(t.l1d_entries, 64u);
}

TEST(Cpuinfo, LiveRead)
{
    struct cpu_info ci;
    ASSERT_EQ(cpuinfo_read(&ci), 0);
    EXPECT_GT(std::strlen(ci.vendor), 0u);
    EXPECT_GT(std::strlen(ci.tlb.source), 0u);
    EXPECT_GT(ci.tlb.l1d_entries, 0u);
    EXPECT_GT(ci.tlb.l2_entries, 0u);
#if defined(__x86_64__)
    EXPECT_TRUE(ci.sse2);
    EXPECT_GE(ci.family, 6u);
#endif
    // The brand string is trimmed.
    size_t n = std::strlen(ci.model);
    if (n > 0) {
        EXPECT_NE(ci.model[0], ' ');
        EXPECT_NE(ci.model[n - 1], ' ');
    }
    // Usable AVX-512 implies usable AVX2 implies usable AVX.
    if (ci.avx512f || ci.avx512bw) {
        EXPECT_TRUE(ci.avx2);
    }
    if (ci.avx2) {
        EXPECT_TRUE(ci.avx);
    }
    if (std::strcmp(ci.vendor, "AuthenticAMD") == 0 && ci.tlb.known) {
        EXPECT_STREQ(ci.tlb.source, "cpuid 0x80000005/0x80000006");
    }
}
