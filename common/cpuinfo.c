/* cpuinfo.c - what cpuid says: vendor, model, ISA extensions, and the data-TLB geometry.
 *
 * The TLB decoders take raw register values and execute no cpuid, so tests can feed recorded values from
 * machines we do not have.  cpuinfo_read() is the only function that executes cpuid / xgetbv.
 */
#include "cpuinfo.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define IB_HAVE_CPUID 1
#endif

/* Used when cpuid gives no TLB geometry: typical of recent x86 cores (L1 DTLB 64, L2 STLB 1536). */
#define TLB_DEFAULT_L1D 64u
#define TLB_DEFAULT_L2 1536u
#define TLB_SOURCE_DEFAULT "default (cpuid reports no TLB geometry)"

static void tlb_set_defaults(struct tlb_info *tlb)
{
    memset(tlb, 0, sizeof *tlb);
    tlb->l1d_entries = TLB_DEFAULT_L1D;
    tlb->l2_entries = TLB_DEFAULT_L2;
    tlb->known = false;
    snprintf(tlb->source, sizeof tlb->source, "%s", TLB_SOURCE_DEFAULT);
}

/* Common tail of both decoders: nothing found -> defaults; only one level found -> default for the other,
 * and the source says so. */
static void tlb_finish(struct tlb_info *tlb, const char *source)
{
    if (tlb->l1d_entries == 0 && tlb->l2_entries == 0) {
        tlb_set_defaults(tlb);
        return;
    }
    tlb->known = true;
    const char *note = "";
    if (tlb->l1d_entries == 0) {
        tlb->l1d_entries = TLB_DEFAULT_L1D;
        tlb->l1d_ways = 0;
        note = " (L1 default)";
    } else if (tlb->l2_entries == 0) {
        tlb->l2_entries = TLB_DEFAULT_L2;
        tlb->l2_ways = 0;
        note = " (L2 default)";
    }
    snprintf(tlb->source, sizeof tlb->source, "%s%s", source, note);
}

/* AMD's associativity code for the L2 TLB / L2 / L3 fields of 0x80000006 -> ways; 0 for fully associative,
 * reserved or "disabled" codes. */
static unsigned amd_l2_assoc_ways(unsigned code)
{
    static const unsigned ways[16] = {
        [0x1] = 1, [0x2] = 2, [0x3] = 3, [0x4] = 4, [0x5] = 6, [0x6] = 8, [0x8] = 16,
        [0xA] = 32, [0xB] = 48, [0xC] = 64, [0xD] = 96, [0xE] = 128, /* 0xF: fully associative */
    };
    return ways[code & 0xF];
}

void cpuinfo_decode_amd_tlb(uint32_t l1_ebx, uint32_t l2_ebx, struct tlb_info *tlb)
{
    memset(tlb, 0, sizeof *tlb);

    /* 0x80000005 EBX: [31:24] L1 DTLB 4K assoc (0xFF fully, else #ways), [23:16] L1 DTLB 4K entries. */
    unsigned l1_assoc = (l1_ebx >> 24) & 0xFF;
    tlb->l1d_entries = (l1_ebx >> 16) & 0xFF;
    tlb->l1d_ways = l1_assoc == 0xFF ? 0 : l1_assoc;

    /* 0x80000006 EBX: [31:28] L2 DTLB 4K assoc code, [27:16] L2 DTLB 4K entries.  Code 0 means the TLB is
     * disabled / not reported, so its entry count is not trusted either. */
    unsigned l2_code = (l2_ebx >> 28) & 0xF;
    tlb->l2_entries = l2_code == 0 ? 0 : (l2_ebx >> 16) & 0xFFF;
    tlb->l2_ways = amd_l2_assoc_ways(l2_code);

    tlb_finish(tlb, "cpuid 0x80000005/0x80000006");
}

/* Leaf 0x18 EDX[4:0] translation-cache types. */
enum {
    INTEL_TLB_NULL = 0,
    INTEL_TLB_DATA = 1,
    INTEL_TLB_INSTR = 2,
    INTEL_TLB_UNIFIED = 3,
    INTEL_TLB_LOAD = 4,  /* load-only data TLB (split load/store designs) */
    INTEL_TLB_STORE = 5, /* store-only data TLB */
};

void cpuinfo_decode_intel_tlb(const uint32_t (*regs)[4], unsigned nsub, struct tlb_info *tlb)
{
    memset(tlb, 0, sizeof *tlb);

    /* Per level (index 1, 2): summed 4K entries of data + unified TLBs, how many structures contributed,
     * and the ways of the last one (only reported when it is the only one).  Load-only TLBs are kept apart
     * and used only at a level that has no data/unified TLB. */
    unsigned entries[3] = {0}, nstruct[3] = {0}, ways[3] = {0};
    unsigned load_entries[3] = {0}, load_n[3] = {0}, load_ways[3] = {0};

    for (unsigned i = 0; regs && i < nsub; i++) {
        uint32_t ebx = regs[i][1], ecx = regs[i][2], edx = regs[i][3];
        unsigned type = edx & 0x1F;
        unsigned level = (edx >> 5) & 0x7;
        bool fully = (edx >> 8) & 1;
        bool has_4k = ebx & 1;
        unsigned w = (ebx >> 16) & 0xFFFF;
        unsigned long long n = (unsigned long long)w * ecx; /* ways * sets */

        if (!has_4k || level < 1 || level > 2 || n == 0 || n > 0xFFFFFFFFull)
            continue;
        if (type == INTEL_TLB_DATA || type == INTEL_TLB_UNIFIED) {
            entries[level] += (unsigned)n;
            nstruct[level]++;
            ways[level] = fully ? 0 : w;
        } else if (type == INTEL_TLB_LOAD) {
            load_entries[level] += (unsigned)n;
            load_n[level]++;
            load_ways[level] = fully ? 0 : w;
        }
        /* instruction and store-only TLBs do not bound a load-driven working set: ignored */
    }

    for (unsigned lv = 1; lv <= 2; lv++) {
        if (nstruct[lv] == 0 && load_n[lv] != 0) {
            entries[lv] = load_entries[lv];
            nstruct[lv] = load_n[lv];
            ways[lv] = load_ways[lv];
        }
        if (nstruct[lv] != 1)
            ways[lv] = 0; /* several structures summed: no single associativity */
    }

    tlb->l1d_entries = entries[1];
    tlb->l1d_ways = ways[1];
    tlb->l2_entries = entries[2];
    tlb->l2_ways = ways[2];
    tlb_finish(tlb, "cpuid 0x18");
}

#ifdef IB_HAVE_CPUID

/* XCR0 (enabled state components); only call when CPUID.1:ECX.OSXSAVE is set. */
static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Copy in, trimming leading and trailing spaces (Intel pads brand strings on the left). */
static void copy_trimmed(char *dst, size_t len, const char *src)
{
    while (*src == ' ')
        src++;
    size_t n = strlen(src);
    while (n > 0 && src[n - 1] == ' ')
        n--;
    snprintf(dst, len, "%.*s", (int)n, src);
}

#define XCR0_SSE_AVX 0x06u          /* XMM | YMM */
#define XCR0_AVX512 0xE6u           /* XMM | YMM | opmask | ZMM_Hi256 | Hi16_ZMM */
#define INTEL_TLB_MAX_SUBLEAVES 64u /* leaf 0x18 has a handful in practice */

/* The max-leaf checks are done by the caller, so the leaves are read with the unchecked __cpuid macros. */
static void read_tlb(struct cpu_info *ci, unsigned max_leaf, unsigned max_ext)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    bool amd = strcmp(ci->vendor, "AuthenticAMD") == 0 || strcmp(ci->vendor, "HygonGenuine") == 0;
    bool intel = strcmp(ci->vendor, "GenuineIntel") == 0;

    if (amd && max_ext >= 0x80000006) {
        unsigned l1_ebx = 0, l2_ebx = 0;
        __cpuid(0x80000005, a, l1_ebx, c, d);
        __cpuid(0x80000006, a, l2_ebx, c, d);
        cpuinfo_decode_amd_tlb(l1_ebx, l2_ebx, &ci->tlb);
        return;
    }
    if (intel && max_leaf >= 0x18) {
        uint32_t regs[INTEL_TLB_MAX_SUBLEAVES][4];
        __cpuid_count(0x18, 0, a, b, c, d);
        unsigned nsub = a + 1 < INTEL_TLB_MAX_SUBLEAVES ? a + 1 : INTEL_TLB_MAX_SUBLEAVES;
        for (unsigned i = 0; i < nsub; i++) {
            __cpuid_count(0x18, i, a, b, c, d);
            regs[i][0] = a, regs[i][1] = b, regs[i][2] = c, regs[i][3] = d;
        }
        cpuinfo_decode_intel_tlb((const uint32_t(*)[4])regs, nsub, &ci->tlb);
        return;
    }
    /* Older Intel (leaf 2 descriptors) and other vendors: not decoded. */
    tlb_set_defaults(&ci->tlb);
}

int cpuinfo_read(struct cpu_info *ci)
{
    unsigned a, b, c, d;
    memset(ci, 0, sizeof *ci);

    /* Leaf 0: highest standard leaf and the vendor string (EBX, EDX, ECX order). */
    unsigned max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf == 0) {
        snprintf(ci->vendor, sizeof ci->vendor, "unknown");
        tlb_set_defaults(&ci->tlb);
        return 0;
    }
    __cpuid(0, a, b, c, d);
    memcpy(ci->vendor + 0, &b, 4);
    memcpy(ci->vendor + 4, &d, 4);
    memcpy(ci->vendor + 8, &c, 4);
    ci->vendor[12] = '\0';

    /* Brand string: 48 bytes from leaves 0x80000002..4. */
    unsigned max_ext = __get_cpuid_max(0x80000000, NULL);
    if (max_ext >= 0x80000004) {
        char brand[49];
        for (unsigned i = 0; i < 3; i++) {
            __cpuid(0x80000002 + i, a, b, c, d);
            memcpy(brand + 16 * i + 0, &a, 4);
            memcpy(brand + 16 * i + 4, &b, 4);
            memcpy(brand + 16 * i + 8, &c, 4);
            memcpy(brand + 16 * i + 12, &d, 4);
        }
        brand[48] = '\0';
        copy_trimmed(ci->model, sizeof ci->model, brand);
    }

    /* Leaf 1: signature and feature bits. */
    __cpuid(1, a, b, c, d);
    unsigned base_family = (a >> 8) & 0xF, base_model = (a >> 4) & 0xF;
    ci->stepping = a & 0xF;
    ci->family = base_family;
    if (base_family == 0xF)
        ci->family += (a >> 20) & 0xFF;
    ci->model_id = base_model;
    if (base_family == 0x6 || base_family == 0xF)
        ci->model_id |= ((a >> 16) & 0xF) << 4;

    ci->sse2 = (d >> 26) & 1;
    ci->hypervisor = (c >> 31) & 1;
    bool osxsave = (c >> 27) & 1;
    uint64_t xcr0 = osxsave ? read_xcr0() : 0;
    bool os_ymm = (xcr0 & XCR0_SSE_AVX) == XCR0_SSE_AVX;
    bool os_zmm = (xcr0 & XCR0_AVX512) == XCR0_AVX512;

    /* AVX, FMA (VEX-encoded, so also needs YMM state enabled), AVX2 and AVX-512 need the OS to save the state. */
    ci->avx = os_ymm && ((c >> 28) & 1);
    ci->fma = os_ymm && ((c >> 12) & 1);
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        ci->avx2 = os_ymm && ((b >> 5) & 1);
        ci->avx512f = os_zmm && ((b >> 16) & 1);
        ci->avx512bw = os_zmm && ((b >> 30) & 1);
    }

    read_tlb(ci, max_leaf, max_ext);
    return 0;
}

#else /* !IB_HAVE_CPUID */

int cpuinfo_read(struct cpu_info *ci)
{
    memset(ci, 0, sizeof *ci);
    snprintf(ci->vendor, sizeof ci->vendor, "unknown");
    tlb_set_defaults(&ci->tlb);
    return 0;
}

#endif
