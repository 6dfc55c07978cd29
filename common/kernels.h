/* kernels.h - the memory-hierarchy inner loops SoIs and calibration share.
 *
 * chase: a random cyclic permutation of cache lines split into `nchains` independent chains (memory-level
 * parallelism: the paper's SSA trick).  One pass of all chains touches every line once, in an order the
 * prefetchers cannot follow.
 * stream: sequential reads (or writes) with the widest vector ISA present (AVX-512 > AVX2 > SSE2), runtime-picked.
 */
#ifndef IB_KERNELS_H
#define IB_KERNELS_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHASE_MAX_CHAINS 16

struct chase {
    void *base;
    size_t nlines;       /* lines in the cycle */
    size_t stride;       /* bytes between slots (64 for lines; page size + offset for TLB) */
    unsigned nchains;
    void *head[CHASE_MAX_CHAINS];
};

/* Build a random cycle over `nslots` slots of `stride` bytes each in `base` (which must hold nslots*stride bytes)
 * and split it into nchains chains. `offset_fn` spreads slot offsets for page-strided chases: the pointer of slot i
 * lives at base + i*stride + ((i * slot_skew) % stride & ~63).  slot_skew 0: offset 0. */
int chase_build(struct chase *c, void *base, size_t nslots, size_t stride, size_t slot_skew, unsigned nchains,
                uint64_t seed);
/* Advance every chain `steps` times (total accesses = steps * nchains). */
void chase_run(struct chase *c, uint64_t steps);
/* Average dependent-load latency (ns) of a single chain over `bytes` of `buf` (64-byte slots), median of `reps`
 * timed runs of `iters` loads each, after one warm pass; timed on the thread's own CPU time, so a wait for the CPU
 * does not read as latency. */
double chase_latency_ns(void *buf, size_t bytes, uint64_t iters, unsigned reps, uint64_t seed);

enum stream_op { STREAM_READ = 0, STREAM_WRITE, STREAM_COPY, STREAM_TRIAD };
/* Stream over [buf, buf+bytes) (bytes a multiple of 256, buf 64-aligned). Returns a value folded from the data so
 * the loads cannot be dropped. For COPY the second half is written from the first. */
uint64_t stream_pass(void *buf, size_t bytes, enum stream_op op);
/* Which ISA stream_pass uses: "avx512", "avx2" or "sse2". stream_force_isa() lets tests force a fallback. */
const char *stream_isa(void);
int stream_force_isa(const char *isa); /* NULL: auto. -EINVAL unknown, -ENOTSUP not present */

/* One triad pass over n doubles of three arrays (the mem-bw kernel). */
void stream_triad(double *a, const double *b, const double *c, size_t n);
/* The streaming SoIs' and calibration's common step: `op` over [pos, pos+len) of a working set of ws bytes.
 * READ/WRITE: that byte range. TRIAD: the working set is three equal arrays a|b|c of stream_span(ws, op) bytes and
 * the range is within each array.  Returns the bytes counted (TRIAD: 3*len, as STREAM counts). */
uint64_t stream_chunk(void *buf, size_t ws, size_t pos, size_t len, enum stream_op op);
/* The length `pos` runs over: ws, or one array for TRIAD. */
size_t stream_span(size_t ws, enum stream_op op);
/* One streaming step: `chunk` bytes of `op` (TRIAD: chunk/3 of each array) from *pos on, wrapping around the
 * working set as often as needed. The bandwidth SoIs and their calibration both stream through this, so they
 * share one access pattern. Returns the bytes counted. */
uint64_t stream_step(void *buf, size_t ws, size_t *pos, size_t chunk, enum stream_op op);


/* Anonymous memory for SoIs: mmap'd, 2 MiB aligned, THP advised, counted in a live-bytes gauge so tests (and the
 * CLI after Ctrl-C) can verify that everything was released.  NULL for 0 bytes; NULL with errno set on failure,
 * including a length so large that rounding it would wrap (ENOMEM): never a pointer to less than `bytes`. */
void *ib_map(size_t bytes, int hugepages);
void ib_unmap(void *p, size_t bytes);
uint64_t ib_map_live_bytes(void);

/* Fast per-thread PRNG (xorshift64*). */
static inline uint64_t ib_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#ifdef __cplusplus
}
#endif
#endif
