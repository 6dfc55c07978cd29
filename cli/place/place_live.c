/* place_live.c - a live process for the place commands that measure one (place atom, place model predict --pid):
 * pinning its threads (pl_proc_apply's rule) and its metric over a slice of time (place.h states the metrics). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ib_err.h"
#include "pl_proc.h"
#include "place.h"
#include "target.h"

int place_live_open(struct place_live *L, pid_t pid, const char *mspec, char *why, size_t len)
{
    memset(L, 0, sizeof *L);
    L->pid = pid;
    if (!mspec)
        return 0;
    if (!strcmp(mspec, "cputime")) {
        L->cputime = true;
        return 0;
    }
    int e = metric_parse(&L->metric, mspec, NULL, why, len);
    if (e < 0)
        return e;
    L->have_metric = true;
    if (L->metric.kind != MK_COMMAND) {
        place_live_close(L);
        return ib_why(why, len, -EINVAL, "--metric '%s': a live process is measured by command:CMD, "
                      "command-lower:CMD or cputime (it has no run to time and no load of ours)", mspec);
    }
    return 0;
}

void place_live_close(struct place_live *L)
{
    if (L->have_metric)
        metric_free(&L->metric);
    L->have_metric = false;
}

bool place_live_higher_better(const struct place_live *L) { return L->cputime || L->metric.higher_better; }

const char *place_live_unit(const struct place_live *L) { return L->cputime ? "CPU-s/s" : L->metric.unit; }

int place_live_sleep(double s)
{
    while (s > 0 && !cli_stop) {
        double d = s < 0.05 ? s : 0.05;
        struct timespec ts = {(time_t)d, (long)((d - (time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
        s -= d;
    }
    return cli_stop ? -EINTR : 0;
}

int place_live_pin(struct place_live *L, const int *cpus, unsigned n, char *why, size_t len)
{
    struct pl_apply_opts ao = {.cpus = cpus, .ncpus = n};
    struct pl_apply_result r;
    int rc = pl_proc_apply(L->pid, &ao, &r, why, len);
    pl_apply_result_free(&r);
    return rc;
}

/* utime + stime of the whole process (every thread), in seconds */
static int cpu_seconds(pid_t pid, double *s, char *why, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return ib_why(why, len, -ESRCH, "process %d is gone", (int)pid);
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    /* after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return ib_why(why, len, -EBADMSG, "%s: cannot read utime and stime", path);
    *s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    return 0;
}

int place_live_measure(struct place_live *L, double seconds, double *value, char *why, size_t len)
{
    double c0 = 0, c1 = 0;
    int rc;
    if (L->cputime && (rc = cpu_seconds(L->pid, &c0, why, len)) < 0)
        return rc;
    if ((rc = place_live_sleep(seconds)) < 0)
        return ib_why(why, len, rc, "interrupted");
    if (L->cputime) {
        if ((rc = cpu_seconds(L->pid, &c1, why, len)) < 0)
            return rc;
        *value = (c1 - c0) / seconds;
        return 0;
    }
    char *out = NULL;
    int status;
    uint64_t wall;
    rc = child_run(L->metric.cmd, NULL, 0, 60000, &cli_stop, &out, &status, &wall, NULL, why, len);
    if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        rc = ib_why(why, len, -EBADMSG, "the metric command failed (%s)",
                    WIFEXITED(status) ? "non-zero exit" : "killed");
    if (rc == 0)
        rc = metric_read(&L->metric, out, value, why, len);
    free(out);
    return rc;
}
