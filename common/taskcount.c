/* taskcount.c - two event counts of other tasks (taskcount.h). */
#define _GNU_SOURCE
#include "taskcount.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ib_err.h"

static const struct tc_event ipc_events[2] = {
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
};

void tc_init(struct taskcount *t, const struct tc_event *ev)
{
    memset(t, 0, sizeof(*t));
    memcpy(t->ev, ev ? ev : ipc_events, sizeof(t->ev));
}

double tc_scale(uint64_t value, uint64_t enabled, uint64_t running)
{
    if (running == 0)
        return NAN;
    return (double)value * ((double)enabled / (double)running);
}

/* Both counters on task tid (0: the calling thread). */
static int open_task(struct taskcount *t, pid_t tid, char *why, size_t len)
{
    if (t->n >= TC_MAX_TASKS)
        return ib_why(why, len, -E2BIG, "more than %d threads to count", TC_MAX_TASKS);
    int fd[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.type = t->ev[k].type;
        a.config = t->ev[k].config;
        a.inherit = 1;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        fd[k] = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd[k] < 0) {
            int e = errno;
            if (k)
                close(fd[0]);
            struct stat st;
            const char *hint = a.type == PERF_TYPE_HARDWARE && stat("/sys/bus/event_source/devices/cpu", &st) != 0
                                   ? " (no hardware PMU: /sys/bus/event_source/devices/cpu missing)"
                                   : e == EACCES || e == EPERM ? " (see /proc/sys/kernel/perf_event_paranoid)" : "";
            char who[32] = "";
            if (tid)
                snprintf(who, sizeof(who), " of task %d", (int)tid);
            /* no such event, no PMU, not allowed: it cannot be counted here; anything else is a run-time error */
            int rc = e == ESRCH ? -ESRCH
                     : e == ENOENT || e == EOPNOTSUPP || e == ENODEV || e == EACCES || e == EPERM || e == EINVAL
                         ? -ENOTSUP
                         : -e;
            return ib_why(why, len, rc, "cannot count %s%s: perf_event_open: %s%s", t->ev[k].name, who, strerror(e),
                          hint);
        }
    }
    t->fd[t->n][0] = fd[0];
    t->fd[t->n][1] = fd[1];
    t->n++;
    return 0;
}

int tc_open_self(struct taskcount *t, char *why, size_t len) { return open_task(t, 0, why, len); }

/* Every thread of pid, then the same for each child of each thread (/proc/PID/task/TID/children). */
static int open_tree(struct taskcount *t, pid_t pid, unsigned depth, char *why, size_t len)
{
    if (depth > 64)
        return ib_why(why, len, -ELOOP, "the process tree under %d is deeper than 64", (int)pid);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return ib_why(why, len, -ESRCH, "process %d is gone", (int)pid);
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        rc = open_task(t, tid, why, len);
        if (rc == -ESRCH) /* a thread that ended meanwhile */
            rc = 0;
        char cpath[96];
        snprintf(cpath, sizeof(cpath), "/proc/%d/task/%d/children", (int)pid, (int)tid);
        FILE *f = rc == 0 ? fopen(cpath, "re") : NULL;
        int child;
        while (f && rc == 0 && fscanf(f, "%d", &child) == 1) {
            rc = open_tree(t, (pid_t)child, depth + 1, why, len);
            if (rc == -ESRCH)
                rc = 0;
        }
        if (f)
            fclose(f);
    }
    closedir(d);
    return rc;
}

int tc_open_tree(struct taskcount *t, pid_t pid, char *why, size_t len)
{
    int rc = open_tree(t, pid, 0, why, len);
    if (rc == 0 && t->n == 0)
        rc = ib_why(why, len, -ESRCH, "process %d is gone", (int)pid);
    return rc;
}

int tc_read(const struct taskcount *t, double *v0, double *v1, char *why, size_t len)
{
    double v[2] = {0, 0};
    for (unsigned i = 0; i < t->n; i++)
        for (int k = 0; k < 2; k++) {
            uint64_t r[3]; /* value, time enabled, time running */
            if (read(t->fd[i][k], r, sizeof(r)) != (ssize_t)sizeof(r))
                return ib_why(why, len, -EIO, "cannot read the %s counter: %s", t->ev[k].name, strerror(errno));
            double s = tc_scale(r[0], r[1], r[2]);
            if (isnan(s)) {
                if (r[1] == 0)
                    continue; /* a task that never ran since the counter opened: nothing to add */
                return ib_why(why, len, -ENODATA, "the %s counter never ran (%llu ns enabled): the PMU had no room "
                              "for it", t->ev[k].name, (unsigned long long)r[1]);
            }
            v[k] += s;
        }
    *v0 = v[0];
    *v1 = v[1];
    return 0;
}

void tc_close(struct taskcount *t)
{
    for (unsigned i = 0; i < t->n; i++)
        for (int k = 0; k < 2; k++)
            if (t->fd[i][k] >= 0)
                close(t->fd[i][k]);
    t->n = 0;
}
