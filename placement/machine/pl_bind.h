/* pl_bind.h - memory follows the placement: which NUMA nodes a placement's memory belongs on (`--mem`), the kernel
 * memory policy that says so, what moving a running process's pages achieved, and whether a cgroup v2 cpuset can
 * keep its later threads inside (docs/placement.md, "Memory follows the placement").
 *
 * The decisions here are data in, data out (a struct pl_machine, CPU lists, numa_maps byte counts, the text of
 * /proc files), so the tests run them on synthetic and XML topologies of machines this one is not.  The system calls
 * that act on them (set_mempolicy, get_mempolicy, migrate_pages, the cgroup files) are in pl_bind_os.c, declared at
 * the end.  Nodes are named by OS index throughout (numactl, /proc and the kernel's node masks do).
 */
#ifndef IB_PL_BIND_H
#define IB_PL_BIND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What --mem asked for. */
enum pl_mem_kind {
    PL_MEM_LOCAL,      /* "local" (the default): bound to the NUMA nodes of the placement's CPUs */
    PL_MEM_INTERLEAVE, /* "interleave": interleaved over those nodes; "interleave:NODES": over NODES */
    PL_MEM_NODES,      /* "NODES" (e.g. "0,2-3"): bound to those nodes, wherever the CPUs are */
    PL_MEM_NONE,       /* "none": memory is left as it is (threads only, the behaviour before --mem) */
};

struct pl_mem_spec {
    enum pl_mem_kind kind;
    unsigned *nodes; /* PL_MEM_NODES and "interleave:NODES": ascending, distinct; NULL otherwise */
    unsigned nnodes;
};

/* "local", "interleave", "interleave:NODES", "none" or NODES (a list in the CPU-list syntax).  NULL or "": local.
 * -EINVAL with one line naming the text otherwise (the nodes' existence is checked by pl_mem_resolve, which knows
 * the machine).  Free with pl_mem_spec_free. */
int pl_mem_parse(const char *s, struct pl_mem_spec *sp, char *why, size_t len);
void pl_mem_spec_free(struct pl_mem_spec *sp);

/* The kernel policy (set_mempolicy(2) modes). */
enum pl_mpol { PL_MPOL_NONE = 0, PL_MPOL_BIND, PL_MPOL_INTERLEAVE };

struct pl_mem_policy {
    enum pl_mpol mode;   /* PL_MPOL_NONE for --mem none */
    unsigned *nodes;     /* the policy's nodes, ascending; none for PL_MPOL_NONE */
    unsigned nnodes;
    unsigned *cpu_nodes; /* the nodes holding the placement's CPUs, ascending (reported whatever the mode) */
    unsigned ncpu_nodes;
    char text[160];      /* as /proc/PID/numa_maps writes it: "bind:0-1", "interleave:0-1", "none" */
};

/* The policy for CPUs cpus[ncpus] (OS indexes) on machine m under spec s.  local: MPOL_BIND on the CPUs' nodes (the
 * kernel then allocates on the nearest node of the set to the CPU asking, so a placement on two nodes keeps each
 * thread's memory on its own node while it has room); interleave: MPOL_INTERLEAVE on them (or on the given nodes);
 * NODES: MPOL_BIND on NODES.  -EINVAL with one line for a CPU in no NUMA node of m, a node m does not have ("node 3
 * does not exist here (nodes 0-1)"), or ncpus == 0 where the nodes come from the CPUs.  Free with
 * pl_mem_policy_free. */
int pl_mem_resolve(const struct pl_machine *m, const struct pl_mem_spec *s, const int *cpus, unsigned ncpus,
                  struct pl_mem_policy *p, char *why, size_t len);
void pl_mem_policy_free(struct pl_mem_policy *p);

/* nodes[n] as a kernel node mask: bit k of mask[] for node k.  *maxnode is what set_mempolicy/mbind/migrate_pages
 * take (they read maxnode - 1 bits: the highest node + 2).  -ERANGE when a node does not fit nwords words. */
int pl_nodemask(const unsigned *nodes, unsigned n, unsigned long *mask, size_t nwords, unsigned long *maxnode,
                char *why, size_t len);
/* The nodes of a node mask (the inverse), ascending, into nodes[cap]; the count (more than cap: truncated). */
unsigned pl_nodemask_nodes(const unsigned long *mask, size_t nwords, unsigned *nodes, unsigned cap);

/* Threads per node: count[i] (i a node position of m, nnodes entries, zeroed first) is how many of cpus[n] lie in
 * node i.  A CPU outside every node (-1) is not counted; the count of those is returned. */
unsigned pl_cpus_per_node(const struct pl_machine *m, const int *cpus, unsigned n, double *count);

/* The locality score (pl_numa_score, Tang et al. HPCA'13 Eq. 1) of CPU use cpu[] and memory bytes mem[] (node positions of m).
 * One node: 1.  -ENODATA with one line when it cannot be told: no memory resident, no CPU counted, or several nodes
 * and no distance matrix. */
int pl_bind_score(const struct pl_machine *m, const double *cpu, const uint64_t *mem, double *score, char *why,
                  size_t len);

/* Bytes on nodes outside the policy's set (mem[] by node position of m); 0 with PL_MPOL_NONE. */
uint64_t pl_mem_outside(const struct pl_machine *m, const struct pl_mem_policy *p, const uint64_t *mem);

/* The memory policy field of a /proc/PID/numa_maps line ("default", "bind:0-1", "interleave:0-1", "prefer:1", ...:
 * the VMA's own policy, else the process's) into pol[plen].  -EINVAL when the line has no second field. */
int pl_numa_maps_policy(const char *line, char *pol, size_t plen);

/* ---- cgroup v2 cpuset ------------------------------------------------------------------------------------------ */

/* Where a process's cgroup v2 is: the cgroup2 mount point from the text of /proc/PID/mountinfo (the first line whose
 * file system type is cgroup2) and the process's group from the text of /proc/PID/cgroup (its "0::/PATH" line).
 * -ENOENT with one line when there is no cgroup2 mount or no v2 line. */
int pl_cgroup2_locate(const char *mountinfo, const char *proc_cgroup, char *mount, size_t mlen, char *group,
                      size_t glen, char *why, size_t len);

/* Whether a cpuset can be made below directory `dir` (the process's group in the mounted cgroup2 file system, or
 * any tree of files laid out as one): its cgroup.controllers must list "cpuset" and its cgroup.subtree_control must
 * be writable.  0 when both hold; -ENOTSUP with the controllers it has ("cgroup v2 at DIR offers no cpuset
 * controller (cgroup.controllers: hugetlb)"), -EACCES when not writable, -ENOENT when dir is not a cgroup. */
int pl_cpuset_usable(const char *dir, char *why, size_t len);

/* Makes cgroup DIR/NAME with cpuset.cpus = cpus and cpuset.mems = mems (lists as "0-3"), enabling the cpuset
 * controller for DIR's children first when it is not yet, then moves process pid into it (cgroup.procs).  Linux
 * allows enabling a controller for a cgroup's children only when that cgroup has no processes of its own (the root
 * excepted), so this fails (-EBUSY, the kernel's refusal named) where ibench's caller shares the group; nothing is
 * left behind on failure.  The cgroup's path into made[mlen]. */
int pl_cpuset_make(const char *dir, const char *name, const char *cpus, const char *mems, pid_t pid, char *made,
                   size_t mlen, char *why, size_t len);
/* Removes a cgroup made by pl_cpuset_make (it must be empty: -EBUSY while a process is still in it). */
int pl_cpuset_remove(const char *made, char *why, size_t len);

/* ---- system calls (pl_bind_os.c) ------------------------------------------------------------------------------- */

/* Sets the calling thread's policy (set_mempolicy(2); a process's later threads and exec'd programs inherit it).
 * PL_MPOL_NONE: nothing.  -ENOSYS when the kernel has no NUMA policy support, else the kernel's -errno. */
int pl_mpol_set(const struct pl_mem_policy *p, char *why, size_t len);
/* The calling thread's policy (get_mempolicy(2)): *mode as PL_MPOL_* (-1 for another kernel mode, e.g. preferred),
 * its nodes into nodes[cap], the count into *n. */
int pl_mpol_get(int *mode, unsigned *nodes, unsigned cap, unsigned *n, char *why, size_t len);
/* Moves process pid's pages from every node of m outside the policy's set onto it (migrate_pages(2); pages already
 * on the set's nodes stay).  *not_moved: pages the kernel could not move.  PL_MPOL_NONE: nothing (0). */
int pl_mem_migrate(pid_t pid, const struct pl_machine *m, const struct pl_mem_policy *p, long *not_moved, char *why,
                   size_t len);

#ifdef __cplusplus
}
#endif
#endif
