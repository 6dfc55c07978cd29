/* taskcount.h - two event counts of other tasks, for the ipc metric: instructions and cycles of a target.
 *
 * perf_event_open on each task (every thread of a process tree, or the calling thread), user space only, with
 * inherit, so tasks those start later are counted too (a child's counts are folded into its parent's counter when it
 * exits). Each count is scaled for multiplexing: count x time enabled / time running. No libpfm4 is needed for these
 * generic events. Where the PMU is missing (a VM without one) opening fails, and the reason names the event and the
 * kernel's error. */
#ifndef IB_TASKCOUNT_H
#define IB_TASKCOUNT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TC_MAX_TASKS 256 /* two descriptors each: well under the usual limit of 1024 open files */

struct tc_event {
    uint32_t type;   /* PERF_TYPE_* */
    uint64_t config; /* PERF_COUNT_* */
    const char *name;
};

struct taskcount {
    struct tc_event ev[2];
    unsigned n;                 /* tasks with both counters open */
    int fd[TC_MAX_TASKS][2];
};

/* ev: the two events (NULL: instructions and cycles, PERF_TYPE_HARDWARE); a test may count software events. */
void tc_init(struct taskcount *t, const struct tc_event *ev);
/* Count the calling thread and every task it starts from now on. 0 or -errno with why (naming the event). */
int tc_open_self(struct taskcount *t, char *why, size_t len);
/* Count every thread of pid and of all its descendants as they are now, and what they start from now on. 0, or
 * -errno with why (-ESRCH: pid is gone; -E2BIG: more than TC_MAX_TASKS threads). */
int tc_open_tree(struct taskcount *t, pid_t pid, char *why, size_t len);
/* The two totals over every task, each scaled for multiplexing. -ENODATA with why when a counter never ran. */
int tc_read(const struct taskcount *t, double *v0, double *v1, char *why, size_t len);
void tc_close(struct taskcount *t);
/* value x enabled / running: a count that ran part of the time, stretched to the whole (NAN when it never ran). */
double tc_scale(uint64_t value, uint64_t enabled, uint64_t running);

#ifdef __cplusplus
}
#endif
#endif
