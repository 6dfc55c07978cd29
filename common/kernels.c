/* kernels.c - pointer chase, streaming and triad loops shared by the memory-hierarchy SoIs and calibration. */
#define _GNU_SOURCE
#include "kernels.h"

#include <errno.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "ib_err.h"
#include "stats.h"

/* ---- chase ---------------------------------------------------------------------------------------------- */

static inline void **slot_ptr(void *base, size_t i, size_t stride, size_t skew)
{
    size_t off = skew ? ((i * skew) % stride) & ~(size_t)63 : 0;
    return (void **)((char *)base + i * stride + off);
}

int chase_build(struct chase *c, void *base, size_t nslots, size_t stride, size_t slot_skew, unsigned nchains,
                uint64_t seed)
{
    if (!c || !base || nslots == 0 || stride < sizeof(void *) || nchains == 0 || nchains > CHASE_MAX_CHAINS)
        return -EINVAL;
    if (nchains > nslots)
        nchains = (unsigned)nslots;
    size_t *perm = malloc(nslots * sizeof(*perm));
    if (!perm)
        return -ENOMEM;
    for (size_t i = 0; i < nslots; i++)
        perm[i] = i;
    uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;
    for (size_t i = nslots - 1; i > 0; i--) { /* Fisher-Yates: a uniformly random order of the slots */
        size_t j = (size_t)(ib_rand(&s) % (i + 1));
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    /* One cycle through every slot; chain k starts at position k*n/nchains, so one pass of all chains touches
     * each slot exactly once and the chains never share a slot within a pass. */
    for (size_t i = 0; i < nslots; i++)
        *slot_ptr(base, perm[i], stride, slot_skew) = slot_ptr(base, perm[(i + 1) % nslots], stride, slot_skew);
    c->base = base;
    c->nlines = nslots;
    c->stride = stride;
    c->nchains = nchains;
    for (unsigned k = 0; k < nchains; k++)
        c->head[k] = slot_ptr(base, perm[(size_t)k * nslots / nchains], stride, slot_skew);
    free(perm);
    return 0;
}

void chase_run(struct chase *c, uint64_t steps)
{
    if (c->nchains == 8) { /* the common case: eight independent loads in flight, kept in registers */
        void *p0 = c->head[0], *p1 = c->head[1], *p2 = c->head[2], *p3 = c->head[3];
        void *p4 = c->head[4], *p5 = c->head[5], *p6 = c->head[6], *p7 = c->head[7];
        for (uint64_t i = 0; i < steps; i++) {
            p0 = *(void **)p0; p1 = *(void **)p1; p2 = *(void **)p2; p3 = *(void **)p3;
            p4 = *(void **)p4; p5 = *(void **)p5; p6 = *(void **)p6; p7 = *(void **)p7;
        }
        c->head[0] = p0; c->head[1] = p1; c->head[2] = p2; c->head[3] = p3;
        c->head[4] = p4; c->head[5] = p5; c->head[6] = p6; c->head[7] = p7;
        return;
    }
    if (c->nchains == 1) {
        void *p = c->head[0];
        for (uint64_t i = 0; i < steps; i++)
            p = *(void **)p;
        c->head[0] = p;
        return;
    }
    void *h[CHASE_MAX_CHAINS];
    unsigned n = c->nchains;
    memcpy(h, c->head, n * sizeof(void *));
    for (uint64_t i = 0; i < steps; i++)
        for (unsigned k = 0; k < n; k++)
            h[k] = *(void **)h[k];
    memcpy(c->head, h, n * sizeof(void *));
}

double chase_latency_ns(void *buf, size_t bytes, uint64_t iters, unsigned reps, uint64_t seed)
{
    struct chase c;
    size_t nslots = bytes / 64;
    if (reps == 0 || reps > 31 || iters == 0 || chase_build(&c, buf, nslots, 64, 0, 1, seed) < 0)
        return -1.0;
    chase_run(&c, nslots < iters ? nslots : iters); /* warm: bring the set in (bounded for huge sets) */
    double t[32];
    for (unsigned r = 0; r < reps; r++) { /* on the thread's own CPU time: a wait for the CPU is no load's latency */
        uint64_t t0 = clk_thread_cpu_ns();
        chase_run(&c, iters);
        t[r] = (double)(clk_thread_cpu_ns() - t0) / (double)iters;
    }
    return ib_median(t, reps);
}

/* ---- stream ---------------------------------------------------------------------------------------------- */

typedef uint64_t (*stream_fn)(void *buf, size_t bytes, enum stream_op op);

/* READ folds every 64-bit word of the data (XOR), the same value whichever ISA streamed it. */
static inline uint64_t fold128(__m128i v)
{
    return (uint64_t)_mm_cvtsi128_si64(v) ^ (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
}

__attribute__((target("avx512f"))) static uint64_t stream_avx512(void *buf, size_t bytes, enum stream_op op)
{
    char *b = buf;
    if (op == STREAM_READ) {
        __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t i = 0; i < bytes; i += 256) {
            a0 = _mm512_xor_si512(a0, _mm512_load_si512((const void *)(b + i)));
            a1 = _mm512_xor_si512(a1, _mm512_load_si512((const void *)(b + i + 64)));
            a2 = _mm512_xor_si512(a2, _mm512_load_si512((const void *)(b + i + 128)));
            a3 = _mm512_xor_si512(a3, _mm512_load_si512((const void *)(b + i + 192)));
        }
        a0 = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
        __m256i h = _mm256_xor_si256(_mm512_castsi512_si256(a0), _mm512_extracti64x4_epi64(a0, 1));
        return fold128(_mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
    }
    if (op == STREAM_WRITE) {
        __m512i v = _mm512_set1_epi64((long long)bytes);
        for (size_t i = 0; i < bytes; i += 256) {
            _mm512_store_si512((void *)(b + i), v);
            _mm512_store_si512((void *)(b + i + 64), v);
            _mm512_store_si512((void *)(b + i + 128), v);
            _mm512_store_si512((void *)(b + i + 192), v);
        }
        return bytes;
    }
    size_t half = bytes / 2 & ~(size_t)255;
    for (size_t i = 0; i < half; i += 256)
        for (size_t k = 0; k < 256; k += 64)
            _mm512_store_si512((void *)(b + half + i + k), _mm512_load_si512((const void *)(b + i + k)));
    return half;
}

__attribute__((target("avx2"))) static uint64_t stream_avx2(void *buf, size_t bytes, enum stream_op op)
{
    char *b = buf;
    if (op == STREAM_READ) {
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t i = 0; i < bytes; i += 128) {
            a0 = _mm256_xor_si256(a0, _mm256_load_si256((const __m256i *)(b + i)));
            a1 = _mm256_xor_si256(a1, _mm256_load_si256((const __m256i *)(b + i + 32)));
            a2 = _mm256_xor_si256(a2, _mm256_load_si256((const __m256i *)(b + i + 64)));
            a3 = _mm256_xor_si256(a3, _mm256_load_si256((const __m256i *)(b + i + 96)));
        }
        a0 = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
        return fold128(_mm_xor_si128(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1)));
    }
    if (op == STREAM_WRITE) {
        __m256i v = _mm256_set1_epi64x((long long)bytes);
        for (size_t i = 0; i < bytes; i += 128)
            for (size_t k = 0; k < 128; k += 32)
                _mm256_store_si256((__m256i *)(b + i + k), v);
        return bytes;
    }
    size_t half = bytes / 2 & ~(size_t)255;
    for (size_t i = 0; i < half; i += 128)
        for (size_t k = 0; k < 128; k += 32)
            _mm256_store_si256((__m256i *)(b + half + i + k), _mm256_load_si256((const __m256i *)(b + i + k)));
    return half;
}

static uint64_t stream_sse2(void *buf, size_t bytes, enum stream_op op)
{
    char *b = buf;
    if (op == STREAM_READ) {
        __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t i = 0; i < bytes; i += 64) {
            a0 = _mm_xor_si128(a0, _mm_load_si128((const __m128i *)(b + i)));
            a1 = _mm_xor_si128(a1, _mm_load_si128((const __m128i *)(b + i + 16)));
            a2 = _mm_xor_si128(a2, _mm_load_si128((const __m128i *)(b + i + 32)));
            a3 = _mm_xor_si128(a3, _mm_load_si128((const __m128i *)(b + i + 48)));
        }
        a0 = _mm_xor_si128(_mm_xor_si128(a0, a1), _mm_xor_si128(a2, a3));
        return fold128(a0);
    }
    if (op == STREAM_WRITE) {
        __m128i v = _mm_set1_epi64x((long long)bytes);
        for (size_t i = 0; i < bytes; i += 64)
            for (size_t k = 0; k < 64; k += 16)
                _mm_store_si128((__m128i *)(b + i + k), v);
        return bytes;
    }
    size_t half = bytes / 2 & ~(size_t)255;
    for (size_t i = 0; i < half; i += 64)
        for (size_t k = 0; k < 64; k += 16)
            _mm_store_si128((__m128i *)(b + half + i + k), _mm_load_si128((const __m128i *)(b + i + k)));
    return half;
}

static _Atomic(stream_fn) g_stream;      /* resolved on first use */
static const char *_Atomic g_stream_isa;

static void stream_pick(const char *isa)
{
    stream_fn f = stream_sse2;
    const char *name = "sse2";
    __builtin_cpu_init();
    if (isa ? !strcmp(isa, "avx512") : __builtin_cpu_supports("avx512f")) {
        f = stream_avx512;
        name = "avx512";
    } else if (isa ? !strcmp(isa, "avx2") : __builtin_cpu_supports("avx2")) {
        f = stream_avx2;
        name = "avx2";
    }
    atomic_store(&g_stream_isa, name);
    atomic_store(&g_stream, f);
}

int stream_force_isa(const char *isa)
{
    __builtin_cpu_init();
    if (isa && strcmp(isa, "avx512") && strcmp(isa, "avx2") && strcmp(isa, "sse2"))
        return -EINVAL;
    if (isa && ((!strcmp(isa, "avx512") && !__builtin_cpu_supports("avx512f")) ||
                (!strcmp(isa, "avx2") && !__builtin_cpu_supports("avx2"))))
        return -ENOTSUP;
    stream_pick(isa);
    return 0;
}

const char *stream_isa(void)
{
    if (!atomic_load(&g_stream))
        stream_pick(NULL);
    return atomic_load(&g_stream_isa);
}

uint64_t stream_pass(void *buf, size_t bytes, enum stream_op op)
{
    if (op == STREAM_TRIAD) /* three arrays, not one range: stream_chunk knows the layout */
        return stream_chunk(buf, bytes, 0, stream_span(bytes, op), op);
    stream_fn f = atomic_load(&g_stream);
    if (!f) {
        stream_pick(NULL);
        f = atomic_load(&g_stream);
    }
    return f(buf, bytes & ~(size_t)255, op);
}

__attribute__((optimize("O3"))) void stream_triad(double *restrict a, const double *restrict b,
                                                   const double *restrict c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + 3.0 * c[i];
}

size_t stream_span(size_t ws, enum stream_op op)
{
    return op == STREAM_TRIAD ? (ws / 3) & ~(size_t)4095 : ws & ~(size_t)255;
}

uint64_t stream_chunk(void *buf, size_t ws, size_t pos, size_t len, enum stream_op op)
{
    static volatile uint64_t sink;
    if (op == STREAM_TRIAD) {
        size_t arr = stream_span(ws, op);
        char *b = buf;
        len &= ~(size_t)63;
        stream_triad((double *)(b + pos), (const double *)(b + arr + pos), (const double *)(b + 2 * arr + pos),
                     len / sizeof(double));
        return 3 * (uint64_t)len;
    }
    sink += stream_pass((char *)buf + pos, len, op);
    return len & ~(size_t)255;
}

uint64_t stream_step(void *buf, size_t ws, size_t *pos, size_t chunk, enum stream_op op)
{
    /* whole 256-byte blocks only, so *pos (and every array address) stays vector-aligned */
    size_t span = stream_span(ws, op), left = (op == STREAM_TRIAD ? chunk / 3 : chunk) & ~(size_t)255;
    uint64_t bytes = 0;
    while (left >= 256) {
        size_t len = span - *pos < left ? span - *pos : left;
        bytes += stream_chunk(buf, ws, *pos, len, op);
        *pos += len;
        if (*pos >= span)
            *pos = 0;
        left -= len;
    }
    return bytes;
}

/* ---- memory ---------------------------------------------------------------------------------------------- */

static atomic_uint_fast64_t g_live_bytes;

#define HUGE_ALIGN (2ULL * 1024 * 1024)

static size_t map_len(size_t bytes) { return (bytes + HUGE_ALIGN - 1) & ~(size_t)(HUGE_ALIGN - 1); }

/* Rounding to 2 MiB and over-mapping by 2 MiB more must not wrap: beyond this no length can be mapped anyway. */
#define MAP_MAX_BYTES (SIZE_MAX - 2 * HUGE_ALIGN)

void *ib_map(size_t bytes, int hugepages)
{
    if (bytes == 0)
        return NULL;
    if (bytes > MAP_MAX_BYTES) {
        errno = ENOMEM;
        return NULL;
    }
    size_t len = map_len(bytes);
    /* Over-map by 2 MiB and trim, so the region is 2 MiB aligned and THP can back it from the first byte. */
    char *raw = mmap(NULL, len + HUGE_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)raw + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
    size_t head = start - (uintptr_t)raw, tail = HUGE_ALIGN - head;
    if (head)
        munmap(raw, head);
    if (tail)
        munmap((char *)start + len, tail);
    madvise((void *)start, len, hugepages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    atomic_fetch_add(&g_live_bytes, len);
    return (void *)start;
}

void ib_unmap(void *p, size_t bytes)
{
    if (!p || bytes == 0 || bytes > MAP_MAX_BYTES)
        return;
    size_t len = map_len(bytes);
    munmap(p, len);
    atomic_fetch_sub(&g_live_bytes, len);
}

uint64_t ib_map_live_bytes(void) { return atomic_load(&g_live_bytes); }
