/* core_ref.c - independent reference loops for the core SoIs (int, fp, simd), built only as the `core_ref` program
 * (tests/CMakeLists.txt compiles it with IBENCH_CORE_REF_MAIN; in the validation library it is empty).
 *
 * Plain C loops, not the SoIs' assembly: independent chains kept apart by empty asm barriers so the compiler can
 * neither fold nor vectorise them, counted as the SoI kernels count (the chain instructions plus the loop's
 * decrement and branch: 2 per iteration).  Prints the median instructions/s over 3 repeats on one CPU.
 *
 *   core_ref int|fp|simd-sse|simd-avx2|simd-avx512 CPU [ms-per-repeat]
 *   core_ref KIND CPU MS --interleave N
 *       N cycles of: this loop for MS, the SoI's calibration (peak_measure on CPU with the SoI's kernel, exactly as
 *       `ibench run` calibrates: 5 x 100 ms, median), this loop for MS again.  Prints per cycle the peak, the two
 *       reference rates and peak / mean(references), then the median ratio: the comparison made moments apart,
 *       so the host's drift (tens of % within minutes on a shared host: docs/sois.md, int) cancels.
 */
#ifdef IBENCH_CORE_REF_MAIN
#define _GNU_SOURCE
#include <immintrin.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define B(x) __asm__ volatile("" : "+r"(x))
#define BX(x) __asm__ volatile("" : "+x"(x))
#define BV(x) __asm__ volatile("" : "+v"(x))

#include "ib_atomic.h"
#include "peak.h"
#include "ref_loops.h"
#include "stats.h"
#include "topo.h"
uint64_t ib_int_kernel(uint64_t iters);
uint64_t ib_fp_kernel(uint64_t iters);
uint64_t ib_simd_sse_kernel(uint64_t iters);
uint64_t ib_simd_avx2_kernel(uint64_t iters);
uint64_t ib_simd_avx512_kernel(uint64_t iters);
static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* 8 chains of add + xor: 16 ALU + 2 loop = 18 per iteration (ref_loops.h, shared with the unit test) */
static uint64_t ref_int(uint64_t n) { return ref_int_loop(n); }

/* 12 chains of scalar double add + mul: 24 + 2 per iteration */
static uint64_t ref_fp(uint64_t n)
{
    double x[12], z = 0.0, o = 1.0;
    BX(z);
    BX(o);
    for (int k = 0; k < 12; k++)
        x[k] = 1.0;
    double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4], x5 = x[5], x6 = x[6], x7 = x[7], x8 = x[8],
           x9 = x[9], x10 = x[10], x11 = x[11];
    for (uint64_t i = n; i; i--) {
        x0 += z; x1 += z; x2 += z; x3 += z; x4 += z; x5 += z; x6 += z; x7 += z; x8 += z; x9 += z; x10 += z; x11 += z;
        BX(x0); BX(x1); BX(x2); BX(x3); BX(x4); BX(x5); BX(x6); BX(x7); BX(x8); BX(x9); BX(x10); BX(x11);
        x0 *= o; x1 *= o; x2 *= o; x3 *= o; x4 *= o; x5 *= o; x6 *= o; x7 *= o; x8 *= o; x9 *= o; x10 *= o; x11 *= o;
        BX(x0); BX(x1); BX(x2); BX(x3); BX(x4); BX(x5); BX(x6); BX(x7); BX(x8); BX(x9); BX(x10); BX(x11);
    }
    volatile double sink = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;
    (void)sink;
    return n * 26;
}

/* packed: 12 chains in registers; SSE add + mul (24 + 2), AVX2/AVX-512 FMA (12 + 2) */
static uint64_t ref_sse(uint64_t n)
{
    __m128d z = _mm_setzero_pd(), o = _mm_set1_pd(1.0);
    BV(z);
    BV(o);
    __m128d a0 = o, a1 = o, a2 = o, a3 = o, a4 = o, a5 = o, a6 = o, a7 = o, a8 = o, a9 = o, a10 = o, a11 = o;
    for (uint64_t i = n; i; i--) {
        a0 = _mm_add_pd(a0, z); BX(a0);
        a1 = _mm_add_pd(a1, z); BX(a1);
        a2 = _mm_add_pd(a2, z); BX(a2);
        a3 = _mm_add_pd(a3, z); BX(a3);
        a4 = _mm_add_pd(a4, z); BX(a4);
        a5 = _mm_add_pd(a5, z); BX(a5);
        a6 = _mm_add_pd(a6, z); BX(a6);
        a7 = _mm_add_pd(a7, z); BX(a7);
        a8 = _mm_add_pd(a8, z); BX(a8);
        a9 = _mm_add_pd(a9, z); BX(a9);
        a10 = _mm_add_pd(a10, z); BX(a10);
        a11 = _mm_add_pd(a11, z); BX(a11);
        a0 = _mm_mul_pd(a0, o); BX(a0);
        a1 = _mm_mul_pd(a1, o); BX(a1);
        a2 = _mm_mul_pd(a2, o); BX(a2);
        a3 = _mm_mul_pd(a3, o); BX(a3);
        a4 = _mm_mul_pd(a4, o); BX(a4);
        a5 = _mm_mul_pd(a5, o); BX(a5);
        a6 = _mm_mul_pd(a6, o); BX(a6);
        a7 = _mm_mul_pd(a7, o); BX(a7);
        a8 = _mm_mul_pd(a8, o); BX(a8);
        a9 = _mm_mul_pd(a9, o); BX(a9);
        a10 = _mm_mul_pd(a10, o); BX(a10);
        a11 = _mm_mul_pd(a11, o); BX(a11);
    }
    volatile double sink = _mm_cvtsd_f64(a0) + _mm_cvtsd_f64(a5) + _mm_cvtsd_f64(a11);
    (void)sink;
    volatile double sink2 = _mm_cvtsd_f64(a1) + _mm_cvtsd_f64(a2) + _mm_cvtsd_f64(a3) + _mm_cvtsd_f64(a4) + _mm_cvtsd_f64(a6) + _mm_cvtsd_f64(a7) + _mm_cvtsd_f64(a8) + _mm_cvtsd_f64(a9) + _mm_cvtsd_f64(a10);
    (void)sink2;
    return n * 26;
}

/* The same FMA loop at two widths (C has no generic over vector types): T, its zero and broadcast, its FMA and the
 * low lane's read. */
#define REF_FMA(name, isa, T, setzero, set1, fmadd, low)                                                               \
    __attribute__((target(isa))) static uint64_t name(uint64_t n)                                                     \
    {                                                                                                                  \
        T z = setzero(), o = set1(1.0);                                                                                \
        BV(z);                                                                                                         \
        BV(o);                                                                                                         \
        T a0 = o, a1 = o, a2 = o, a3 = o, a4 = o, a5 = o, a6 = o, a7 = o, a8 = o, a9 = o, a10 = o, a11 = o;           \
        for (uint64_t i = n; i; i--) {                                                                                 \
            a0 = fmadd(o, z, a0); BV(a0);                                                                              \
            a1 = fmadd(o, z, a1); BV(a1);                                                                              \
            a2 = fmadd(o, z, a2); BV(a2);                                                                              \
            a3 = fmadd(o, z, a3); BV(a3);                                                                              \
            a4 = fmadd(o, z, a4); BV(a4);                                                                              \
            a5 = fmadd(o, z, a5); BV(a5);                                                                              \
            a6 = fmadd(o, z, a6); BV(a6);                                                                              \
            a7 = fmadd(o, z, a7); BV(a7);                                                                              \
            a8 = fmadd(o, z, a8); BV(a8);                                                                              \
            a9 = fmadd(o, z, a9); BV(a9);                                                                              \
            a10 = fmadd(o, z, a10); BV(a10);                                                                           \
            a11 = fmadd(o, z, a11); BV(a11);                                                                           \
        }                                                                                                              \
        volatile double sink = low(a0) + low(a5) + low(a11);                                                           \
        (void)sink;                                                                                                    \
        volatile double sink2 = low(a1) + low(a2) + low(a3) + low(a4) + low(a6) + low(a7) + low(a8) + low(a9) +       \
                                low(a10);                                                                              \
        (void)sink2;                                                                                                   \
        _mm256_zeroupper();                                                                                            \
        return n * 14;                                                                                                 \
    }
REF_FMA(ref_avx2, "avx2,fma", __m256d, _mm256_setzero_pd, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_cvtsd_f64)
REF_FMA(ref_avx512, "avx512f", __m512d, _mm512_setzero_pd, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_cvtsd_f64)

/* instructions/s of f over one window of rep_ns, in chunks of `it` iterations */
static double ref_window(uint64_t (*f)(uint64_t), uint64_t it, uint64_t rep_ns)
{
    uint64_t ops = 0, t0 = now_ns(), dt;
    do {
        ops += f(it);
        dt = now_ns() - t0;
    } while (dt < rep_ns);
    return (double)ops / ((double)dt / 1e9);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: core_ref int|fp|simd-sse|simd-avx2|simd-avx512 CPU [ms]\n");
        return 2;
    }
    uint64_t (*f)(uint64_t) = NULL, (*soi_k)(uint64_t) = NULL;
    const char *k = argv[1];
    __builtin_cpu_init();
    if (!strcmp(k, "int")) {
        f = ref_int;
        soi_k = ib_int_kernel;
    } else if (!strcmp(k, "fp")) {
        f = ref_fp;
        soi_k = ib_fp_kernel;
    } else if (!strcmp(k, "simd-sse")) {
        f = ref_sse;
        soi_k = ib_simd_sse_kernel;
    } else if (!strcmp(k, "simd-avx2") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        f = ref_avx2;
        soi_k = ib_simd_avx2_kernel;
    } else if (!strcmp(k, "simd-avx512") && __builtin_cpu_supports("avx512f")) {
        f = ref_avx512;
        soi_k = ib_simd_avx512_kernel;
    }
    if (!f) {
        fprintf(stderr, "core_ref: unknown or unsupported kind %s\n", k);
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[2]), &set);
    if (sched_setaffinity(0, sizeof(set), &set)) {
        perror("core_ref: sched_setaffinity");
        return 1;
    }
    uint64_t rep_ns = (argc > 3 ? strtoull(argv[3], NULL, 10) : 200) * 1000000ULL;
    uint64_t it = 1000;
    for (uint64_t t0 = now_ns(); now_ns() - t0 < 30000000ULL;) /* warm up, size a ~1 ms chunk */
    {
        uint64_t a = now_ns();
        f(it);
        if (now_ns() - a < 1000000ULL)
            it *= 2;
    }
    if (argc > 5 && !strcmp(argv[4], "--interleave")) {
        int cycles = atoi(argv[5]), cpu = atoi(argv[2]);
        struct topo *t = NULL;
        char why[256] = "";
        if (cycles < 1 || topo_load(&t, NULL, why, sizeof(why)) < 0) {
            fprintf(stderr, "core_ref: %s\n", cycles < 1 ? "--interleave needs N >= 1" : why);
            return 2;
        }
        double *ratio = calloc((size_t)cycles, sizeof(double));
        printf("%5s %12s %12s %12s %8s\n", "cycle", "ref before", "peak", "ref after", "ratio");
        for (int c = 0; c < cycles; c++) {
            double a = ref_window(f, it, rep_ns), peak = 0, spread = 0;
            if (peak_measure(t, &cpu, 1, soi_k, NULL, &peak, &spread, why, sizeof(why)) < 0) {
                fprintf(stderr, "core_ref: %s\n", why);
                free(ratio);
                topo_destroy(t);
                return 1;
            }
            double b = ref_window(f, it, rep_ns);
            ratio[c] = peak / ((a + b) / 2);
            printf("%5d %12.4e %12.4e %12.4e %8.3f\n", c + 1, a, peak, b, ratio[c]);
        }
        printf("median peak/reference %.3f\n", ib_median(ratio, (size_t)cycles));
        free(ratio);
        topo_destroy(t);
        return 0;
    }
    double r[3];
    for (int i = 0; i < 3; i++)
        r[i] = ref_window(f, it, rep_ns);
    printf("%.6e\n", ib_median(r, 3));
    return 0;
}
#endif
