/* pl_numa.h - the NUMA locality score of Tang et al. HPCA'13 (Eq. 1) and where its inputs come from: per-node memory of a
 * process from /proc/PID/numa_maps, per-node CPU use of its threads sampled over a window (docs/placement.md).
 *
 *   Score = sum_i sum_j C[i] M[j] D(i,i) / D(i,j)
 *
 * C and M are a process's CPU and memory use per NUMA node, each normalised to sum 1; D is the distance matrix.  The
 * score is 1 when every access is local and falls towards min_i D(i,i)/max_j D(i,j) as memory moves away.  Arrays
 * of n entries are by node position (the order of pl_machine's node_os); nodes are named by OS index only for
 * display.
 */
#ifndef IB_PL_NUMA_H
#define IB_PL_NUMA_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ib_atomic.h"
#include "pl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* share[i] = raw[i] / sum(raw).  -EINVAL with one line naming `what` ("--cpu-usage", "memory") when an entry is
 * negative, NaN or infinite, or all are zero. */
int pl_numa_normalise(const double *raw, unsigned n, double *share, const char *what, char *why, size_t len);

/* Eq. 1 on raw usage (normalised here).  n == 0, a bad entry or a matrix entry that is not positive: -EINVAL.
 * The result lies in (0, 1] when every row's diagonal is its smallest entry (pl_distances_parse's rule). */
int pl_numa_score(const double *cpu, const double *mem, const double *dist, unsigned n, double *score, char *why,
                  size_t len);

/* The score's range on this matrix: from min_i D(i,i)/max_j D(i,j) (all of some node's CPU use, all memory on the
 * node farthest from it) to 1 (all local). */
void pl_numa_range(const double *dist, unsigned n, double *lo, double *hi);

/* The paper's idealised distances (local 10, one hop 20, two hops 30, ...) from any matrix: an entry no larger than
 * its row's diagonal is local (10); the distinct other values, ranked ascending, count as 1, 2, ... hops, and k hops
 * is 10 (1 + k).  A SLIT of 10/21/31 becomes 10/20/30, one of 10/16/22/28 becomes 10/20/30/40.  out may be dist.
 * 0, or -ENOMEM. */
int pl_numa_hops(const double *dist, unsigned n, double *out);

/* Per-node memory in bytes from the text of /proc/PID/numa_maps: every line's N<node>=<pages> times that line's
 * kernelpagesize_kB (a hugetlb line counts huge pages of 2048 or 1048576 kB; a transparent huge page is counted in
 * base pages by the kernel, so either way pages x page size is bytes).  A line without kernelpagesize_kB takes
 * default_page_kb.  Lines without N fields (nothing resident) add nothing.  node_os[nnodes] names the nodes;
 * bytes[nnodes] is zeroed first.  An N field for a node not in node_os or a malformed one: -EINVAL with the line. */
int pl_numa_maps_parse(const char *text, const unsigned *node_os, unsigned nnodes, unsigned default_page_kb,
                       uint64_t *bytes, char *why, size_t len);
/* The same on PROC_ROOT/PID/numa_maps (proc_root NULL: "/proc").  -ESRCH when there is no such process. */
int pl_numa_maps_read(const char *proc_root, pid_t pid, const unsigned *node_os, unsigned nnodes, uint64_t *bytes,
                      char *why, size_t len);

/* The node position of every CPU by OS index: *cpu_node[cpu] is the position in m->node_os of the NUMA node whose
 * cpuset holds that PU, -1 for a CPU in none (or not in the topology).  *ncpus = highest PU OS index + 1. */
int pl_numa_cpu_nodes(const struct pl_machine *m, int **cpu_node, unsigned *ncpus, char *why, size_t len);

/* How to sample a process's threads. */
struct pl_sample_opts {
    const char *proc_root; /* NULL: "/proc" */
    uint64_t window_ns;    /* 0: 1 s */
    uint64_t interval_ns;  /* 0: 10 ms */
    /* Called between samples instead of sleeping interval_ns (tests advance a fixture tree here); NULL: sleep. */
    void (*wait)(void *ctx, unsigned sample, uint64_t ns);
    void *ctx;
    const atomic_int *stop; /* may be NULL; when raised the sampling ends with -EINTR */
};

/* What sampling saw, per node position. */
struct pl_cpu_use {
    double *ns;        /* nnodes entries: on-CPU ns attributed to each node over the window */
    double *last;      /* nnodes entries: threads whose last CPU, at the last sample, is in the node */
    unsigned nthreads; /* threads seen in the last sample */
    unsigned nsamples; /* samples taken (window / interval + 1) */
};

/* Samples every thread of `pid` (PROC_ROOT/PID/task/TID/schedstat, first field: ns on CPU; .../stat field 39: the
 * CPU it last ran on) every interval for the window and attributes each thread's on-CPU delta between two samples
 * to the node of the CPU it was seen on at the second.  An approximation: a thread that moved between nodes inside
 * one interval has that interval's time counted on the node it ended on; a thread's time before its first sample
 * and after its last is not counted.  Without schedstat, stat's utime + stime (clock ticks) stands in.
 * use->ns and use->last must hold nnodes entries.  -ESRCH: no such process (or it exited); -EINTR: stopped. */
int pl_numa_cpu_sample(pid_t pid, const struct pl_sample_opts *o, const int *cpu_node, unsigned ncpus,
                       unsigned nnodes, struct pl_cpu_use *use, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
