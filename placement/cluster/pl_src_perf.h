/* pl_src_perf.h - the `perf` sample source of thread clustering: a running process's memory accesses sampled by the
 * PMU through perf_event_open, with their data addresses and where they were served (docs/placement.md, "Thread
 * clustering: the sources").
 *
 * The events: on Intel the load-latency event cpu/mem-loads,ldlat=30/ (PEBS: precise_ip 2), one per thread of the
 * process; on AMD the IBS op PMU (ibs_op), one per online CPU with samples of other processes dropped, because IBS
 * counts per CPU only (the kernel refuses a per-task IBS event).  Each sample asks for TID | ADDR | WEIGHT |
 * DATA_SRC.  Where neither event exists, or opening it fails, the read returns -EOPNOTSUPP with one line naming the
 * event and the errno text (`ibench place cluster` exits 77 on it). */
#ifndef IB_PL_SRC_PERF_H
#define IB_PL_SRC_PERF_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pl_samples.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Load latency threshold of the Intel event, cycles: loads slower than an L2 hit (~14 cycles) but including LLC
 * hits and snoops from other cores (~40-70), so remote cache accesses are all kept while L1/L2 hits are not. */
#define PL_PERF_LDLAT 30
/* Sample one in this many qualifying loads (Intel) or ops (AMD IBS: the period's low 4 bits must be 0). */
#define PL_PERF_PERIOD_INTEL 1000
#define PL_PERF_PERIOD_IBS 0x10000
/* Data pages of each ring buffer (a power of two), and how often the rings are drained. */
#define PL_PERF_RING_PAGES 64
#define PL_PERF_POLL_MS 10

/* Where perf_mem_data_src says a sample was served (docs/placement.md gives the rule and its reasons), first match:
 *   1. mem_lvl REM_CCE1/REM_CCE2 (the old encoding's remote cache, HITM or not): PL_SRC_REMOTE;
 *   2. mem_lvl_num filled in (not 0, not NA): a cache (L1-L4, ANY_CACHE, LFB) is PL_SRC_REMOTE when marked
 *      mem_remote or mem_hops >= 2 (another node, socket or board), else PL_SRC_LOCAL (a HITM in this chip's LLC is
 *      another core of this chip); RAM, PMEM, CXL are PL_SRC_MEMORY; I/O is PL_SRC_UNKNOWN;
 *   3. mem_lvl with HIT: L1/LFB/L2/L3 as caches in 2; LOC_RAM/REM_RAM1/REM_RAM2 PL_SRC_MEMORY;
 *   4. anything else (0, NA, a miss without its source, I/O, uncached): PL_SRC_UNKNOWN. */
enum pl_src pl_perf_data_src(uint64_t data_src);

struct pl_perf_stats {
    uint64_t records;  /* records seen */
    uint64_t samples;  /* PERF_RECORD_SAMPLE delivered */
    uint64_t skipped;  /* other records (MMAP, COMM, THROTTLE, ...) */
    uint64_t lost;     /* samples the kernel reports lost (PERF_RECORD_LOST) */
    uint64_t filtered; /* samples of another process (per-CPU events) or without an address */
};

/* Decodes the records of a perf ring buffer's data area: `data` is the area (data_size bytes, a power of two), the
 * records run from byte offset tail to head (free-running counters as in perf_event_mmap_page: taken modulo
 * data_size, so a record may wrap around the end).  sample_type is the event's (the fields a PERF_RECORD_SAMPLE
 * holds, in the ABI's order; supported: IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD WEIGHT or WEIGHT_STRUCT
 * DATA_SRC; others give -EINVAL).  Each sample becomes (tid, addr, pl_perf_data_src(data_src)) and goes to fn,
 * unless pid > 0 and the sample's pid differs, or its addr is 0 (no address: counted as filtered).  Returns 0, fn's
 * nonzero return, or -EPROTO with one line for a record that is shorter than its header or than its sample_type
 * says, or runs past head.  Pure: no system calls.  st may be NULL. */
int pl_perf_decode(const void *data, uint64_t data_size, uint64_t tail, uint64_t head, uint64_t sample_type,
                   pid_t pid, pl_sample_fn fn, void *ctx, struct pl_perf_stats *st, char *why, size_t len);

/* Samples process pid for `seconds` and calls fn per sample.  Returns 0; fn's nonzero return; -EOPNOTSUPP with one
 * line "perf_event_open(EVENT): ERRNO TEXT: detail" when no suitable PMU event exists here or it cannot be opened;
 * -ESRCH when pid is gone (before, or all its threads during, the opening); -EPROTO with one line for a record
 * the decoder cannot read (a kernel that writes another layout); -EINVAL for pid <= 0 or seconds < 0.
 * Every fd and mapping is released on every path.  stats may be NULL. */
int pl_src_perf_read_stats(pid_t pid, double seconds, pl_sample_fn fn, void *ctx, struct pl_perf_stats *stats,
                           char *why, size_t len);
int pl_src_perf_read(pid_t pid, double seconds, pl_sample_fn fn, void *ctx, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
