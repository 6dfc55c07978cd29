/* ref_loops.h - the plain C integer reference loop, independent of the SoIs' assembly kernels: validation/core_ref.c
 * (validation/bench-core) and tests/test_core_sois.cpp (IntPeakMatchesAPlainLoop) time it against the int SoI. */
#ifndef IB_REF_LOOPS_H
#define IB_REF_LOOPS_H
#include <stdint.h>

/* 8 independent chains of add + xor, kept apart by empty asm barriers so the compiler can neither fold nor
 * vectorise them: 16 ALU instructions + the loop's decrement and branch = 18 per iteration, returned for n. */
__attribute__((noinline, unused)) static uint64_t ref_int_loop(uint64_t n)
{
#define IB_REF_B(x) __asm__ volatile("" : "+r"(x))
    uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
    for (uint64_t i = n; i; i--) {
        a += 1; b += 3; c += 5; d += 7; e += 9; f += 11; g += 13; h += 15;
        IB_REF_B(a); IB_REF_B(b); IB_REF_B(c); IB_REF_B(d); IB_REF_B(e); IB_REF_B(f); IB_REF_B(g); IB_REF_B(h);
        a ^= 0x55; b ^= 0x66; c ^= 0x77; d ^= 0x11; e ^= 0x22; f ^= 0x33; g ^= 0x44; h ^= 0x5a;
        IB_REF_B(a); IB_REF_B(b); IB_REF_B(c); IB_REF_B(d); IB_REF_B(e); IB_REF_B(f); IB_REF_B(g); IB_REF_B(h);
    }
#undef IB_REF_B
    volatile uint64_t sink = a + b + c + d + e + f + g + h;
    (void)sink;
    return n * 18;
}

#endif
