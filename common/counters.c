/* counters.c - hardware counters through libpfm4, optional at run time.
 *
 * Every event is opened on its own (no groups) for the calling thread (pid 0, any CPU), counting user space
 * only (exclude_kernel, exclude_hv), enabled from the start.  An event that cannot be opened keeps fd = -1 and
 * a one-line reason in `why`; pmu_open_self() itself only fails on bad arguments.
 *
 * With IBENCH_HAVE_PFM, events are encoded by libpfm4 (initialised once, thread-safely).  Without it (or if
 * pfm_initialize() fails at run time) software events are encoded by hand as PERF_TYPE_SOFTWARE and hardware
 * events are reported missing.
 */
#define _GNU_SOURCE
#include <stddef.h> /* counters.h uses size_t without including <stddef.h> */

#include "counters.h"

#include "ib_err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef IBENCH_HAVE_PFM
#include <perfmon/pfmlib_perf_event.h> /* brings its own struct perf_event_attr; do not mix with linux/ */
#include <pthread.h>
#else
#include <linux/perf_event.h>
#endif

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3)
#endif

#define PMU_SYSFS_CPU "/sys/bus/event_source/devices/cpu"

/* The standard set, in the order pmu_open_self() fills it.  type/config are the hand encoding used when
 * libpfm4 is unavailable (software events only). */
static const struct std_event {
    const char *name;
    const char *pfm;
    bool hardware;
    unsigned type;
    unsigned long long config;
} std_events[] = {
    {"cycles", "perf::PERF_COUNT_HW_CPU_CYCLES", true, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", "perf::PERF_COUNT_HW_INSTRUCTIONS", true, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"llc-misses", "perf::PERF_COUNT_HW_CACHE_MISSES", true, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"task-clock", "perf::PERF_COUNT_SW_TASK_CLOCK", false, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS", false, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
};
#define N_STD_EVENTS (sizeof(std_events) / sizeof(std_events[0]))
_Static_assert(N_STD_EVENTS <= PMU_MAX_EVENTS, "standard set larger than PMU_MAX_EVENTS");

#ifdef IBENCH_HAVE_PFM
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_ret = PFM_ERR_NOINIT;

static void pfm_init_once(void)
{
    pfm_init_ret = pfm_initialize();
}

/* PFM_SUCCESS when libpfm4 is usable. */
static int pfm_ready(void)
{
    pthread_once(&pfm_once, pfm_init_once);
    return pfm_init_ret;
}
#endif

/* A core PMU is registered with perf: "cpu" on x86, "cpu_core"/"cpu_atom" on hybrid Intel parts. */
static bool core_pmu_present(void)
{
    static const char *const dirs[] = {PMU_SYSFS_CPU, PMU_SYSFS_CPU "_core", PMU_SYSFS_CPU "_atom"};
    struct stat st;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        if (stat(dirs[i], &st) == 0)
            return true;
    return false;
}

static int read_paranoid(void)
{
    int v = -100;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -100;
        fclose(f);
    }
    return v;
}

/* One line explaining why perf_event_open() failed with `err` (positive errno). */
static void explain_open_error(const struct std_event *se, int err, char *why, size_t len)
{
    if (se->hardware && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL) &&
        !core_pmu_present()) {
        ib_why(why, len, 0, "no PMU: %s missing", PMU_SYSFS_CPU);
    } else if (err == EACCES || err == EPERM) {
        int par = read_paranoid();
        if (par != -100)
            ib_why(why, len, 0, "%s (kernel.perf_event_paranoid=%d)", strerror(err), par);
        else
            ib_why(why, len, 0, "%s", strerror(err));
    } else if (err == ENOSYS) {
        ib_why(why, len, 0, "perf_event_open not supported by this kernel");
    } else {
        ib_why(why, len, 0, "perf_event_open: %s", strerror(err));
    }
}

/* Open one event of the standard set for the calling thread. Returns the fd, or -1 with `why` filled. */
static int open_std_event(const struct std_event *se, char *why, size_t len)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));

#ifdef IBENCH_HAVE_PFM
    int pr = pfm_ready();
    if (pr == PFM_SUCCESS) {
        pfm_perf_encode_arg_t arg;
        memset(&arg, 0, sizeof(arg));
        arg.attr = &attr;
        arg.size = sizeof(arg);
        int r = pfm_get_os_event_encoding(se->pfm, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
        if (r != PFM_SUCCESS) {
            ib_why(why, len, 0, "libpfm4: %s: %s", se->pfm, pfm_strerror(r));
            return -1;
        }
    } else if (se->hardware) {
        ib_why(why, len, 0, "libpfm4 initialisation failed: %s", pfm_strerror(pr));
        return -1;
    } else {
        attr.type = se->type;
        attr.config = se->config;
    }
#else
    if (se->hardware) {
        ib_why(why, len, 0, "built without libpfm4");
        return -1;
    }
    attr.type = se->type;
    attr.config = se->config;
#endif
    attr.size = sizeof(attr);
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.disabled = 0;

    long fd = syscall(__NR_perf_event_open, &attr, 0 /* this thread */, -1 /* any cpu */, -1 /* no group */,
                      PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        explain_open_error(se, errno, why, len);
        return -1;
    }
    if (why && len)
        why[0] = '\0';
    return (int)fd;
}

bool pmu_hw_available(char *why, size_t len)
{
    char buf[sizeof(((struct pmu_event *)0)->why)];
    int fd = open_std_event(&std_events[0], buf, sizeof(buf)); /* "cycles" */
    if (fd >= 0) {
        close(fd);
        ib_why(why, len, 0, "%s", "");
        return true;
    }
    ib_why(why, len, 0, "%s", buf[0] ? buf : "cycles event cannot be opened");
    return false;
}

int pmu_open_self(struct pmu_set *p)
{
    if (!p)
        return -EINVAL;
    memset(p, 0, sizeof(*p));
    for (unsigned i = 0; i < PMU_MAX_EVENTS; i++)
        p->ev[i].fd = -1;
    p->n = (unsigned)N_STD_EVENTS;
    for (unsigned i = 0; i < p->n; i++) {
        const struct std_event *se = &std_events[i];
        struct pmu_event *ev = &p->ev[i];
        ev->name = se->name;
        ev->pfm = se->pfm;
        ev->hardware = se->hardware;
        ev->fd = open_std_event(se, ev->why, sizeof(ev->why));
    }
    return 0;
}

int pmu_read(const struct pmu_set *p, uint64_t *vals)
{
    if (!p || !vals || p->n > PMU_MAX_EVENTS)
        return -EINVAL;
    int ret = 0;
    for (unsigned i = 0; i < p->n; i++) {
        vals[i] = 0;
        if (p->ev[i].fd < 0)
            continue;
        uint64_t v;
        ssize_t r = read(p->ev[i].fd, &v, sizeof(v));
        if (r == (ssize_t)sizeof(v))
            vals[i] = v;
        else if (ret == 0)
            ret = r < 0 ? -errno : -EIO;
    }
    return ret;
}

void pmu_close(struct pmu_set *p)
{
    if (!p)
        return;
    unsigned n = p->n <= PMU_MAX_EVENTS ? p->n : PMU_MAX_EVENTS;
    for (unsigned i = 0; i < n; i++) {
        if (p->ev[i].fd >= 0) {
            close(p->ev[i].fd);
            p->ev[i].fd = -1;
            snprintf(p->ev[i].why, sizeof(p->ev[i].why), "closed");
        }
    }
}

/* Append to buf[len] at *used, truncating silently; buf stays NUL-terminated. */
static void append(char *buf, size_t len, size_t *used, const char *s, size_t slen)
{
    if (*used + 1 >= len)
        return;
    size_t room = len - 1 - *used;
    if (slen > room)
        slen = room;
    memcpy(buf + *used, s, slen);
    *used += slen;
    buf[*used] = '\0';
}

/* Events that are not open, grouped by reason in order of first appearance:
 * "cycles, instructions, llc-misses (no PMU: ...)"; several groups are separated by "; ". */
const char *pmu_missing(const struct pmu_set *p, char *buf, size_t len)
{
    if (!buf || !len)
        return "";
    buf[0] = '\0';
    if (!p)
        return buf;
    unsigned n = p->n <= PMU_MAX_EVENTS ? p->n : PMU_MAX_EVENTS;
    bool done[PMU_MAX_EVENTS] = {false};
    size_t used = 0;
    bool first_group = true;
    for (unsigned i = 0; i < n; i++) {
        if (done[i] || p->ev[i].fd >= 0)
            continue;
        const char *why = p->ev[i].why;
        size_t wlen = strnlen(why, sizeof(p->ev[i].why));
        if (!first_group)
            append(buf, len, &used, "; ", 2);
        first_group = false;
        bool first_name = true;
        for (unsigned j = i; j < n; j++) {
            if (done[j] || p->ev[j].fd >= 0)
                continue;
            const char *wj = p->ev[j].why;
            if (strnlen(wj, sizeof(p->ev[j].why)) != wlen || memcmp(wj, why, wlen) != 0)
                continue;
            done[j] = true;
            if (!first_name)
                append(buf, len, &used, ", ", 2);
            first_name = false;
            const char *name = p->ev[j].name ? p->ev[j].name : "?";
            append(buf, len, &used, name, strlen(name));
        }
        if (wlen) {
            append(buf, len, &used, " (", 2);
            append(buf, len, &used, why, wlen);
            append(buf, len, &used, ")", 1);
        }
    }
    return buf;
}
