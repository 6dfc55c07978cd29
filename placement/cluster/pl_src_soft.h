/* pl_src_soft.h - the `soft` sample source of thread clustering: the shipped workload `ibench-share` reports its own
 * sampled accesses through a shared-memory channel, and pl_src_soft_read reads them (docs/placement.md, "Thread
 * clustering: the sources").
 *
 * The channel is the file /dev/shm/ibench-share.<pid>, made by the workload before its threads start and removed when
 * it exits (atexit, and after SIGTERM/SIGINT).  A SIGKILLed run leaves the file behind; the reader ignores it when
 * its pid is gone or now belongs to another process (the header names the pid and its start time).
 *
 * Layout (little-endian, what the host writes; all offsets in bytes):
 *   header (64): magic "IBSHARE1", version, header size, slot count, records per slot (a power of two), record size,
 *                line size, pid, the process's start time (/proc/PID/stat field 22, clock ticks since boot)
 *   slots: one per worker thread, each a 64-byte slot header (records written so far, ever: `head`; the thread's
 *          TID, 0 until it has started; its group) followed by a ring of `ring` records of 16 bytes:
 *          (data address, (TID << 32) | pl_src).
 * Each slot has one writer (its thread): it stores record number `head` into ring[head % ring], then publishes
 * head + 1 (release).  A reader keeps its own tail per slot and never writes: any number of readers may read at
 * once.  Records are stored and loaded word by word with relaxed atomics, and a reader re-reads `head` after copying
 * (acquire fence) to drop records the writer may have overwritten meanwhile: the seqlock rule, so a torn record is
 * never delivered, only counted as lost.  Why a ring and not an append-only file: the channel stays a fixed size
 * however long the workload runs (30 s at millions of samples a second would fill /dev/shm), and a writer never
 * blocks on a reader. */
#ifndef IB_PL_SRC_SOFT_H
#define IB_PL_SRC_SOFT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pl_samples.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_SHARE_MAGIC "IBSHARE1"
#define PL_SHARE_VERSION 1u
#define PL_SHARE_DIR "/dev/shm"
#define PL_SHARE_PREFIX "ibench-share."
/* Records per thread's ring (16 B each: 256 KiB a thread).  The reader polls every PL_SHARE_POLL_MS, so a thread
 * would have to report more than 16 M samples a second before records are lost between two polls. */
#define PL_SHARE_RING 16384u
#define PL_SHARE_POLL_MS 1

struct pl_share_hdr {
    char magic[8];
    uint32_t version;
    uint32_t hdr_size;  /* sizeof(struct pl_share_hdr) = 64 */
    uint32_t nslots;
    uint32_t ring;      /* records per slot, a power of two */
    uint32_t rec_size;  /* sizeof(struct pl_share_rec) = 16 */
    uint32_t line_size; /* the cache line the workload aligns its data to, bytes */
    int32_t pid;
    uint32_t pad0;
    uint64_t starttime; /* /proc/PID/stat field 22 of the writer */
    uint8_t pad[16];
};

struct pl_share_slot {
    uint64_t head;  /* records written so far (atomic: release by the writer, acquire by readers) */
    uint32_t tid;   /* the thread's TID, 0 until it has started (atomic) */
    uint32_t group; /* its group (the workload's truth, for tests and humans) */
    uint8_t pad[48];
};

struct pl_share_rec {
    uint64_t addr;
    uint64_t tid_src; /* (TID << 32) | enum pl_src */
};

/* Bytes of a channel with nslots slots of `ring` records. */
size_t pl_share_size(uint32_t nslots, uint32_t ring);
/* The channel's path for pid into buf. */
char *pl_share_path(pid_t pid, char *buf, size_t len);
/* /proc/PID/stat field 22 (the process's start time, clock ticks since boot): 0, or -ESRCH when there is no such
 * process, -EIO when the line cannot be parsed. */
int pl_share_starttime(pid_t pid, uint64_t *t);

/* The writer's side, for ibench-share: creates /dev/shm/ibench-share.<getpid()> (mode 0600, replacing a leftover of
 * an earlier process with this pid) sized for nslots threads, fills the header, and maps it read-write at *map.
 * -errno with one line. */
int pl_share_create(uint32_t nslots, uint32_t line_size, void **map, size_t *size, char *why, size_t len);
/* The slot i of a mapped channel. */
struct pl_share_slot *pl_share_slot_at(void *map, uint32_t i);
/* Appends one record to a slot (its single writer only). */
void pl_share_put(struct pl_share_slot *s, uint32_t ring, uint64_t addr, uint32_t tid, enum pl_src src);

struct pl_soft_stats {
    uint64_t samples; /* delivered to fn */
    uint64_t lost;    /* overwritten before this reader got to them */
    uint32_t threads; /* slots whose thread had started */
};

/* Reads the samples ibench-share (process pid) reports for `seconds`, calling fn for each, from the moment of the
 * call on (what the workload reported before is not delivered: a reader wants what happens in its window, and the
 * ring holds only the latest records anyway).  Returns 0; fn's nonzero return (the read stops); -ENOENT with one line
 * when pid is running but has no channel (not ibench-share, or a stale channel of an earlier process with that pid);
 * -ESRCH when pid is gone, before or during the read (the samples delivered before stand); -EPROTO for a channel of
 * another version or a malformed one; -EINVAL for pid <= 0 or seconds < 0.  stats may be NULL. */
int pl_src_soft_read_stats(pid_t pid, double seconds, pl_sample_fn fn, void *ctx, struct pl_soft_stats *stats,
                           char *why, size_t len);
int pl_src_soft_read(pid_t pid, double seconds, pl_sample_fn fn, void *ctx, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
