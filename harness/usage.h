/* usage.h - what a target presses, window by window: the rates of its I/O and CPU and its memory, read from kernel
 * counters where the kernel keeps them (its cgroup, or its processes in /proc), so a program that saturates the disk
 * for a fraction of a second can be told from one that presses it steadily.
 *
 * A source gives snapshots of cumulative counters; the sampler reads one every window (~100 ms) and turns each pair
 * into rates over the time measured between them; a summary gives, per resource, the mean, percentiles, the duty
 * (share of windows above a noise floor), the level while active and the bursts.
 *
 * Three sources, and what each counts:
 *   - a cgroup v2 directory: io.stat (every device summed: rbytes, wbytes, rios, wios: bytes and operations that
 *     reached the block layer), cpu.stat usage_usec, memory.current (anonymous and page-cache memory charged to the
 *     cgroup). io.stat is there only when the io controller is enabled for the cgroup (its parent's
 *     cgroup.subtree_control), memory.current only with the memory controller: absent files leave have_io/have_mem
 *     false. Buffered writes are charged to the cgroup that dirtied the pages when the memory and io controllers are
 *     both enabled and the filesystem supports cgroup writeback (ext4, xfs, btrfs), and they show when written back
 *     (the flusher, seconds after the write() calls), not when written;
 *   - cgroup v1 directories, each optional: blkio (blkio.throttle.io_service_bytes and .io_serviced: Read and Write
 *     summed over devices), cpuacct (cpuacct.usage, ns), memory (memory.usage_in_bytes). Blind spot: v1 has no
 *     writeback attribution, so buffered writes written back by the flusher are charged to the root cgroup and never
 *     appear here; only what the target's own tasks submit shows (reads, O_DIRECT writes, the writeback an fsync
 *     or sync_file_range of theirs starts). A writer that leaves its data to the flusher reads as no writes;
 *   - a process set read from /proc (the pids of a cgroup.procs file, or one pid and its descendants):
 *     /proc/PID/io read_bytes and write_bytes (bytes read from storage; bytes of pages dirtied, counted when
 *     dirtied, so buffered writes show at write() time; cancelled_write_bytes, pages dirtied then truncated, is not
 *     subtracted), syscr and syscw as the operation counts: read and write SYSTEM CALLS (pipes and sockets
 *     included), not device operations; CPU from the first field of every thread's /proc/PID/task/TID/schedstat
 *     (on-CPU ns; /proc/PID/schedstat is the main thread's only); memory from /proc/PID/statm resident pages x the
 *     page size, summed over the processes (a page shared by two processes counts twice).
 *     The source keeps each process's and thread's last counters and adds up their increases, so its totals never
 *     go backwards: a process that exits contributes nothing more (never a negative), one that appears counts from
 *     0 (it is taken as new: a process moved into the cgroup brings its past counters into one window). LOSS: what
 *     a process (or thread) did between the last read and its exit is lost; the cgroup sources have no such loss.
 *     When a parent reaps a child, the kernel adds the child's I/O counters to the parent's /proc/PID/io; the
 *     source subtracts the child's last counters from the parent's next increases (for two reads), so the child is
 *     counted once, and the child's last window is then recovered through the parent. A parent that lets its
 *     children be reaped without wait() (SIGCHLD ignored) folds nothing in, and then the parent's own I/O in those
 *     two reads is understated by up to the child's counters.
 *
 * Two more resources, each where the kernel or the hardware counts it:
 *   - network, counted for the target's NETWORK NAMESPACE (the procs source only; the cgroup sources have no
 *     network counters, have_net false): /proc/PID/net/dev of each distinct namespace of the set's processes (told
 *     apart by their /proc/PID/ns/net link; a process whose link cannot be read adds no namespace), summed over
 *     its interfaces: bytes and packets received plus transmitted on every interface but lo, and only
 *     transmitted on lo (a loopback byte is sent and received in the same namespace: counted once). Received
 *     bytes count because a program that only downloads or serves uploads presses the network too. A namespace
 *     first seen counts from its first reading (never its past), one no longer seen is forgotten, and a sum that
 *     goes down (an interface removed) adds nothing for that read. BLIND SPOT: these are the namespace's
 *     counters, not the target's sockets': in the host's namespace (the usual case) every program's traffic
 *     counts, ssh, the package manager and other tenants' included; the figure is the target's alone only when
 *     the target runs in a network namespace of its own (a container, ip netns exec, unshare -n). Also counted:
 *     traffic forwarded or bridged through the namespace (it crosses two interfaces: counted twice), and on a
 *     full-duplex link both directions add up, so the sum may exceed one direction's capacity;
 *   - LLC occupancy and memory bandwidth from resctrl monitoring (Intel RDT CMT/MBM, AMD PQoS), where the machine
 *     has it: usage_src_add_resctrl puts the set's threads into a monitoring group of their own and reads its
 *     llc_occupancy (bytes in the L3 now) and mbm_total_bytes (cumulative bytes to and from memory), summed over
 *     the L3 domains.
 *
 * Every reader takes the path it reads under (a cgroup directory, a procfs root), so tests point it at fixture trees.
 * Library code: never prints or exits; 0 or -errno, with a one-line reason in why. */
#ifndef IB_USAGE_H
#define IB_USAGE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ib_atomic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One reading of a source: cumulative counters (meaningful as differences) and the memory in use now. */
struct usage_snap {
    uint64_t t_ns; /* the sampler's clock, halfway through the read */
    bool have_io, have_cpu, have_mem, have_net, have_llc, have_mbw;
    uint64_t read_bytes, write_bytes, read_ops, write_ops;
    uint64_t cpu_ns;
    uint64_t mem_bytes;
    uint64_t net_bytes, net_packets; /* cumulative, the namespaces' (see above) */
    uint64_t llc_bytes;              /* resctrl llc_occupancy now */
    uint64_t mbw_bytes;              /* resctrl mbm_total_bytes, cumulative */
};

/* The network part of a snapshot, as usage_parse_net_dev gives it: received plus transmitted on every interface but
 * lo, transmitted on lo. */
struct usage_net {
    uint64_t bytes, packets;
};

/* The I/O part of a snapshot, as one parser gives it. */
struct usage_io {
    uint64_t read_bytes, write_bytes, read_ops, write_ops;
};

/* ---- parsers: the text of one file (tests feed recorded ones); 0, or -EINVAL with why naming the line or field */

/* cgroup v2 io.stat: lines "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N ...", summed over the lines.
 * The four r/w keys are required on every line, other keys are ignored (io.latency and io.cost add their own); an
 * empty file (no I/O yet) is zeros. */
int usage_parse_io_stat(const char *text, struct usage_io *io, char *why, size_t len);
/* cgroup v1 blkio.throttle.io_service_bytes (bytes) or blkio.throttle.io_serviced (operations): lines
 * "MAJ:MIN Read N", "MAJ:MIN Write N" (summed over devices into *rd and *wr), "MAJ:MIN Sync|Async|Discard|Total N"
 * and a last "Total N" (checked, ignored). */
int usage_parse_blkio(const char *text, uint64_t *rd, uint64_t *wr, char *why, size_t len);
/* /proc/PID/io: "name: N" lines; read_bytes, write_bytes, syscr, syscw required (syscr/syscw into the ops). */
int usage_parse_proc_io(const char *text, struct usage_io *io, char *why, size_t len);
/* cgroup v2 cpu.stat: "name N" lines; usage_usec required, returned in ns. */
int usage_parse_cpu_stat(const char *text, uint64_t *cpu_ns, char *why, size_t len);
/* A file holding one decimal number and a newline: v1 cpuacct.usage (ns), v2 memory.current and v1
 * memory.usage_in_bytes (bytes). name is what why calls the file. */
int usage_parse_number(const char *text, const char *name, uint64_t *v, char *why, size_t len);
/* /proc/PID/schedstat or /proc/PID/task/TID/schedstat, "on-CPU-ns wait-ns slices": the first field. */
int usage_parse_schedstat(const char *text, uint64_t *run_ns, char *why, size_t len);
/* /proc/PID/statm, "size resident shared text lib data dt" in pages: resident x page_size. */
int usage_parse_statm(const char *text, uint64_t page_size, uint64_t *rss_bytes, char *why, size_t len);

/* /proc/PID/net/dev: two header lines ("Inter-|   Receive ..." and " face |bytes    packets ..."), then one line per
 * interface, "NAME: rx_bytes rx_packets errs drop fifo frame compressed multicast tx_bytes tx_packets errs drop
 * fifo colls carrier compressed" (16 numbers): summed as struct usage_net says. */
int usage_parse_net_dev(const char *text, struct usage_net *net, char *why, size_t len);

/* ---- sources */

struct usage_src_ops {
    const char *name; /* "cgroup-v2", "cgroup-v1", "procs" */
    /* Fill s's counters and have_* (not t_ns). 0, or -errno with why; after a failure the source can be read again,
     * but what happened since its last good read may be lost (the process set's CPU time). */
    int (*read)(void *ctx, struct usage_snap *s, char *why, size_t len);
    void (*close)(void *ctx);
};

struct usage_src {
    const struct usage_src_ops *ops;
    void *ctx;
};

/* A cgroup v2 directory (cpu.stat must be there; io.stat and memory.current are optional, see above). A file that
 * was there at open and is gone at a read is -ENOENT (the cgroup was removed). 0, or -errno with why. */
int usage_src_cgroup_v2(struct usage_src *src, const char *dir, char *why, size_t len);
/* cgroup v1 directories of one target; NULL leaves that part absent (have_* false). A directory given without its
 * file(s) is -ENOENT. 0, or -errno with why. */
int usage_src_cgroup_v1(struct usage_src *src, const char *blkio_dir, const char *cpuacct_dir, const char *memory_dir,
                        char *why, size_t len);
/* The processes listed in procs_file (a cgroup.procs), read under proc_root (NULL: "/proc"). The first read is the
 * baseline (totals 0); an empty list reads as nothing pressed. 0, or -errno with why. */
int usage_src_procs_cgroup(struct usage_src *src, const char *proc_root, const char *procs_file, char *why,
                           size_t len);
/* Process pid and its descendants as each read finds them (PID/task/TID/children, CONFIG_PROC_CHILDREN). A read
 * after pid is gone is -ESRCH. 0 (pid was there at open), or -errno with why. */
int usage_src_procs_tree(struct usage_src *src, const char *proc_root, pid_t pid, char *why, size_t len);
/* resctrl monitoring added to an open procs source (an add-on: src then reads both, and closing it removes the
 * group). Makes the monitoring group RESCTRL_ROOT/mon_groups/ibench-<ibench's pid> (resctrl_root NULL:
 * "/sys/fs/resctrl"), writes every thread of the set's processes now to its tasks file (threads and children
 * they create later inherit the group; a process that joins the set otherwise, as one moved into a service's
 * cgroup, is not in it), and every read adds llc_occupancy (have_llc) and mbm_total_bytes (have_mbw) of
 * mon_data/mon_L3_* (a domain reading "Unavailable" leaves that figure absent for the read). Only what
 * info/L3_MON/mon_features lists is read. The group is under the default control group: a thread in another
 * control group is refused by the kernel (its allocation is never changed), and then the whole add-on is.
 * 0 (src now counts llc and mem-bw); or, src left as it was: -ENOTSUP with why "no resctrl monitoring: ... is not
 * mounted", "... the CPU has no llc_occupancy or mbm_total_bytes", -EINVAL for a source that is not a process
 * set, or -errno with why (not root: -EACCES; no free RMID: -ENOSPC). Every failure after the group was made
 * removes it. */
int usage_src_add_resctrl(struct usage_src *src, const char *resctrl_root, char *why, size_t len);
/* src->ops->read; -EINVAL when src is not open. */
int usage_src_read(const struct usage_src *src, struct usage_snap *s, char *why, size_t len);
/* Close and zero; safe on a zeroed or closed source. */
void usage_src_close(struct usage_src *src);

/* ---- the sampler */

/* A clock the sampler can be tested on: now_ns() reads it, sleep_until() returns at t_ns or later, or earlier when a
 * signal interrupts it (the sampler checks its stop flag and sleeps again). */
struct usage_clock {
    uint64_t (*now_ns)(void *ctx);
    void (*sleep_until)(void *ctx, uint64_t t_ns);
    void *ctx;
};
/* CLOCK_MONOTONIC and an absolute clock_nanosleep. */
void usage_clock_mono(struct usage_clock *c);

enum usage_metric {
    USAGE_READ_BPS,   /* bytes read per second */
    USAGE_WRITE_BPS,  /* bytes written per second */
    USAGE_READ_OPS,   /* read operations per second (procs: read system calls) */
    USAGE_WRITE_OPS,  /* write operations per second (procs: write system calls) */
    USAGE_CPU,        /* CPU-seconds per second (2.0: two CPUs busy) */
    USAGE_MEM_BYTES,  /* memory in use at the window's end, bytes */
    USAGE_NET_BPS,    /* network bytes per second, the namespace's (see above) */
    USAGE_NET_PPS,    /* network packets per second, the same way */
    USAGE_LLC_BYTES,  /* LLC occupancy at the window's end, bytes (resctrl) */
    USAGE_MEMBW_BPS,  /* memory bandwidth, bytes per second (resctrl MBM total) */
    USAGE_NMETRIC
};
/* "read", "write", "read-ops", "write-ops", "cpu", "memory", "net", "net-packets", "llc", "mem-bw" */
extern const char *const usage_metric_name[USAGE_NMETRIC];
/* "B/s", "B/s", "op/s", "op/s", "CPU", "B", "B/s", "packet/s", "B", "B/s" */
extern const char *const usage_metric_unit[USAGE_NMETRIC];

/* Window i runs from t_ns[i] to t_ns[i + 1] (measured); v[m][i] is metric m over it, NAN where the source did not
 * have it or a counter went backwards (a cgroup removed and made again under the same path). */
struct usage_series {
    unsigned n;            /* complete windows */
    uint64_t *t_ns;        /* n + 1 snapshot times */
    double *v[USAGE_NMETRIC];
};

/* Read src now and then every window_ns after, nwin windows, into *out (allocated here; free it with
 * usage_series_free, also after a failure). The deadlines lie on a grid from the first read; a read that ends less
 * than half a window before the next point moves the grid to one window after that read. Rates use the times
 * measured between the reads, not the nominal window. Stops early when *stop is set (stop may be NULL): the complete
 * windows are kept, the one under way dropped, and the result is -EINTR. A failed read ends the sampling the same
 * way with the source's error. 0, or -errno with why. */
int usage_sample(const struct usage_src *src, const struct usage_clock *clk, uint64_t window_ns, unsigned nwin,
                 const atomic_int *stop, struct usage_series *out, char *why, size_t len);
void usage_series_free(struct usage_series *s);

/* ---- summaries */

struct usage_stats {
    unsigned n;          /* finite windows (NANs are left out of everything below) */
    double mean, p50, p90, max;
    double duty;         /* share of the finite windows above the floor, 0..1 */
    double level;        /* p90 of the windows above the floor: the pressure while active; 0 when none is */
    unsigned bursts;     /* runs of consecutive active windows (NAN windows removed first) */
    double burst_mean_s, burst_max_s; /* their lengths, windows x window_s; 0 without a burst */
    double gap_mean_s;   /* mean idle run between two bursts; NAN with fewer than two bursts */
};

/* Summarise the n windows x[] of one metric. noise_floor: the caller's noise floor, in the metric's unit; a window
 * is active when x > noise_floor. Percentiles interpolate linearly between order statistics (Hyndman and Fan's
 * type 7, the default of R and numpy): p of sorted y[0..k-1] is y[j] + (h - j) (y[j+1] - y[j]) with h = (k - 1) p,
 * j = floor h.
 * 0; -ENODATA when no window is finite (o->n 0, the figures NAN, duty NAN, level and bursts 0); -EINVAL for
 * window_s <= 0 or a noise_floor that is not finite; -ENOMEM. */
int usage_summarise(const double *x, unsigned n, double window_s, double noise_floor, struct usage_stats *o);
/* The percentile as above of y[0..k-1] sorted ascending (k >= 1, 0 <= p <= 1). */
double usage_percentile_sorted(const double *y, unsigned k, double p);

#ifdef __cplusplus
}
#endif
#endif
