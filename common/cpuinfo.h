/* cpuinfo.h - what cpuid says: vendor, model, ISA extensions, and the data-TLB geometry hwloc does not report. */
#ifndef IB_CPUINFO_H
#define IB_CPUINFO_H
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tlb_info {
    unsigned l1d_entries;   /* L1 data TLB, 4 KiB pages */
    unsigned l2_entries;    /* L2 (shared/unified) TLB, 4 KiB pages */
    unsigned l1d_ways, l2_ways; /* 0 = fully associative or unknown */
    bool known;
    char source[64];        /* e.g. "cpuid 0x80000005/0x80000006" or "default (cpuid has none)" */
};

struct cpu_info {
    char vendor[16];        /* "AuthenticAMD", "GenuineIntel" */
    char model[64];         /* brand string, trimmed */
    unsigned family, model_id, stepping;
    bool sse2, avx, avx2, fma, avx512f, avx512bw;
    bool hypervisor;        /* running in a VM */
    struct tlb_info tlb;
};

/* Fills ci from cpuid on this CPU. Never fails on x86-64; returns 0. */
int cpuinfo_read(struct cpu_info *ci);

/* Decoders, separated from the cpuid instruction so tests can feed recorded register values. */
/* AMD: leaf 0x80000005 EBX (L1 4K TLB), 0x80000006 EBX (L2 4K TLB). */
void cpuinfo_decode_amd_tlb(uint32_t l1_ebx, uint32_t l2_ebx, struct tlb_info *tlb);
/* Intel: subleaves of leaf 0x18 (deterministic address translation). regs[i] = {eax,ebx,ecx,edx} of subleaf i. */
void cpuinfo_decode_intel_tlb(const uint32_t (*regs)[4], unsigned nsub, struct tlb_info *tlb);

#ifdef __cplusplus
}
#endif
#endif
