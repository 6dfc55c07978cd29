/* pl_proc.h - the threads of a live process: where each runs and may run, and pinning them (`ibench place apply`,
 * `ibench place show`).
 *
 * CPUs here are OS indexes (what taskset, sched_setaffinity and /proc use), not pl_hier's logical PU indexes; the
 * pl_cpus_* helpers translate through pl_hier.pu_os.
 *
 * A process's threads come and go while they are read or pinned: a thread that exits in between is skipped, never
 * an error; threads created while pinning are caught by listing again until a pass finds no new thread.
 */
#ifndef IB_PL_PROC_H
#define IB_PL_PROC_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "pl_machine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_COMM_LEN 64
/* Listing passes pl_proc_apply makes at most (the first included) before it gives up on a process that keeps
 * creating threads. */
#define PL_APPLY_ROUNDS 16

struct pl_thread {
    pid_t tid;
    char comm[PL_COMM_LEN]; /* /proc/PID/task/TID/comm */
    int last_cpu;           /* the CPU it last ran on (stat field 39), -1 when unknown */
    int *allowed;           /* the CPUs it may run on (Cpus_allowed_list), ascending */
    unsigned nallowed;
};

struct pl_threads {
    pid_t pid;
    unsigned n;
    struct pl_thread *v; /* the main thread (tid == pid) first, then by ascending TID */
};

/* The threads of process `pid` as they are now.  -ESRCH ("no process P") when there is no such process, -EINVAL for
 * pid <= 0; threads that exit while being read are left out. */
int pl_proc_threads(pid_t pid, struct pl_threads *out, char *why, size_t len);
void pl_threads_free(struct pl_threads *t);
/* Puts t->v in pl_proc_threads order: the main thread (tid == t->pid) first, then ascending TID.  The main thread
 * has the smallest TID unless pids wrapped, so the rule is spelled out rather than left to the numbers. */
void pl_threads_sort(struct pl_threads *t);

/* A CPU list in hwloc list syntax ("2,0-1") kept in the order written (ranges ascending): *cpus malloc'd.  -EINVAL
 * with one line for bad syntax or a CPU named twice. */
int pl_cpulist_parse(const char *s, int **cpus, unsigned *n, char *why, size_t len);
/* cpus (ascending, distinct) as a list "0-3,5" into buf; "" for none.  Returns buf. */
char *pl_cpulist_format(const int *cpus, unsigned n, char *buf, size_t len);

/* Checks that every CPU (OS index) is a PU of h: -EINVAL "CPU 999 is not on this machine (CPUs 0-1)" otherwise. */
int pl_cpus_on_machine(const struct pl_hier *h, const int *cpus, unsigned n, char *why, size_t len);
/* The logical PU index of each CPU (OS index) into pus[n]; -EINVAL as pl_cpus_on_machine for a CPU not in h. */
int pl_cpus_to_pus(const struct pl_hier *h, const int *cpus, unsigned n, unsigned *pus, char *why, size_t len);

struct pl_apply_opts {
    const int *cpus; /* OS indexes, in the order they are handed out */
    unsigned ncpus;
    bool set;        /* every thread gets all of cpus (taskset -a); else one CPU each, see pl_proc_apply */
    unsigned rounds; /* listing passes at most; 0: PL_APPLY_ROUNDS */
    /* Test hook: called after each listing, before that pass pins anything (round 0 first); NULL in use. */
    void (*on_listed)(void *arg, unsigned round);
    void *hook_arg;
};

struct pl_applied {
    pid_t tid;
    char comm[PL_COMM_LEN];
    unsigned pos;   /* its place in the order threads were handed CPUs (0: the main thread) */
    int cpu;        /* the CPU it was pinned to; -1 with set (all of cpus) */
    unsigned round; /* the pass that found it */
    bool exited;    /* it exited before it could be pinned (skipped) */
    int *before;    /* the CPUs it was allowed before (as listed), ascending */
    unsigned nbefore;
};

struct pl_apply_result {
    unsigned n;
    struct pl_applied *v; /* in the order threads were handed CPUs */
    unsigned pinned;      /* threads pinned (n minus the exited ones) */
    unsigned rounds;      /* listing passes made */
    bool wrapped;         /* more threads than CPUs: CPUs were handed out again from the start of the list */
};

/* Pins every thread of `pid`.  The rule: threads in pl_proc_threads order (the main thread first, then ascending
 * TID) get one CPU of o->cpus each, in list order, wrapping to the start when there are more threads than CPUs;
 * threads a later pass finds continue the count in their own TID order.  With o->set every thread gets all of
 * o->cpus.  Passes repeat until one finds no new thread.  *r is filled (pl_apply_result_free) whatever the result:
 * 0; -ESRCH when the process is gone; -EAGAIN when threads were still appearing after o->rounds passes; another
 * -errno (-EPERM, -EINVAL: a CPU the cpuset forbids) with the thread and CPU named, after putting the threads
 * already pinned back on the CPUs they had (best effort), so a refusal does not leave half a placement. */
int pl_proc_apply(pid_t pid, const struct pl_apply_opts *o, struct pl_apply_result *r, char *why, size_t len);
void pl_apply_result_free(struct pl_apply_result *r);

/* Pins thread tids[i] of process pid to the CPU set sets[i] (nsets[i] CPUs, OS indexes, ascending), for i < n.  A
 * thread that has exited or is not pid's is skipped (*skipped counts them).  0; -ESRCH when the process is gone; or
 * -errno with the thread and CPUs named (the threads pinned before it stay pinned). */
int pl_proc_pin_each(pid_t pid, const pid_t *tids, const int *const *sets, const unsigned *nsets, unsigned n,
                     unsigned *skipped, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
