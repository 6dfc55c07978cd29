/* pl_src_perf.c - sampled memory accesses through perf_event_open (pl_src_perf.h).  Rules, and why:
 * - The event by vendor (/proc/cpuinfo vendor_id): Intel's PEBS load-latency event cpu/mem-loads/ (its encoding read
 *   from sysfs, ldlat raised to PL_PERF_LDLAT) gives a load's data address and data source; AMD's IBS op PMU gives
 *   the same for sampled ops.  Another vendor tries mem-loads, then ibs_op.  No fallback to an event without data
 *   addresses: clustering needs the address of every sample.
 * - Intel events are per thread (pid = TID, cpu = -1, inherit off): threads listed once at the start, the ones that
 *   start later are not followed (documented; the CLI reads again on its next round).  IBS is per CPU only, so on
 *   AMD one event per online CPU (pid -1) and samples of other processes are dropped by the decoder.
 * - Any failure to open is -EOPNOTSUPP naming the event and the errno text, except a thread that exited meanwhile
 *   (ESRCH: skipped; all of them gone: -ESRCH). */
#define _GNU_SOURCE
#include "pl_src_perf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ib_err.h"
#include "pl_proc.h"

/* mem_hops (Linux 5.17) may be missing from older headers */
#ifndef PERF_MEM_HOPS_SHIFT
#define PERF_MEM_HOPS_SHIFT 43
#endif
#ifndef PERF_MEM_HOPS_1
#define PERF_MEM_HOPS_1 0x02 /* remote node, same socket */
#endif
#ifndef PERF_SAMPLE_WEIGHT_STRUCT
#define PERF_SAMPLE_WEIGHT_STRUCT (1U << 24)
#endif

#define SYSFS_PMU "/sys/bus/event_source/devices"

enum pl_src pl_perf_data_src(uint64_t d)
{
    uint64_t lvl = (d >> PERF_MEM_LVL_SHIFT) & 0x3fff;
    unsigned num = (unsigned)((d >> PERF_MEM_LVLNUM_SHIFT) & 0xf);
    unsigned remote = (unsigned)((d >> PERF_MEM_REMOTE_SHIFT) & 0x1);
    unsigned hops = (unsigned)((d >> PERF_MEM_HOPS_SHIFT) & 0x7);
    /* 0 is "nothing filled in" (the union's every field 0, not even NA): unknown */
    if (d == 0)
        return PL_SRC_UNKNOWN;
    int far = remote || hops >= PERF_MEM_HOPS_1;
    /* 1. the old encoding names a remote cache outright (Intel: a load served by another socket's cache) */
    if (lvl & (PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2))
        return PL_SRC_REMOTE;
    /* 2. the level number, where filled in (AMD IBS, recent Intel kernels), with its remote marks */
    if (num != 0 && num != PERF_MEM_LVLNUM_NA) {
        if (num == PERF_MEM_LVLNUM_L1 || num == PERF_MEM_LVLNUM_L2 || num == PERF_MEM_LVLNUM_L3 ||
            num == PERF_MEM_LVLNUM_L4 || num == PERF_MEM_LVLNUM_ANY_CACHE || num == PERF_MEM_LVLNUM_LFB)
            return far ? PL_SRC_REMOTE : PL_SRC_LOCAL;
        if (num == PERF_MEM_LVLNUM_RAM || num == PERF_MEM_LVLNUM_PMEM || num == PERF_MEM_LVLNUM_CXL)
            return PL_SRC_MEMORY;
        return PL_SRC_UNKNOWN; /* I/O */
    }
    /* 3. the old encoding's levels, a hit only: "L3 miss" alone does not say where the line came from */
    if (lvl & PERF_MEM_LVL_HIT) {
        if (lvl & (PERF_MEM_LVL_L1 | PERF_MEM_LVL_LFB | PERF_MEM_LVL_L2 | PERF_MEM_LVL_L3))
            return far ? PL_SRC_REMOTE : PL_SRC_LOCAL;
        if (lvl & (PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2))
            return PL_SRC_MEMORY;
    }
    return PL_SRC_UNKNOWN;
}

/* Copies n bytes at free-running offset off of the ring (wrapping at size). */
static void ring_copy(const unsigned char *data, uint64_t size, uint64_t off, void *dst, size_t n)
{
    uint64_t at = off & (size - 1);
    size_t first = (size_t)(size - at) < n ? (size_t)(size - at) : n;
    memcpy(dst, data + at, first);
    if (first < n)
        memcpy((unsigned char *)dst + first, data, n - first);
}

static const uint64_t decode_known = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                     PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                                     PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT |
                                     PERF_SAMPLE_DATA_SRC;

int pl_perf_decode(const void *data, uint64_t data_size, uint64_t tail, uint64_t head, uint64_t sample_type,
                   pid_t pid, pl_sample_fn fn, void *ctx, struct pl_perf_stats *st, char *why, size_t len)
{
    struct pl_perf_stats dummy;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof *st);
    if (data_size == 0 || (data_size & (data_size - 1)) != 0)
        return ib_why(why, len, -EINVAL, "ring of %llu bytes is not a power of two", (unsigned long long)data_size);
    if (sample_type & ~decode_known)
        return ib_why(why, len, -EINVAL, "sample_type 0x%llx has fields this decoder does not know",
                      (unsigned long long)sample_type);
    if (head - tail > data_size)
        return ib_why(why, len, -EPROTO, "%llu bytes pending in a ring of %llu", (unsigned long long)(head - tail),
                      (unsigned long long)data_size);
    unsigned char rec[65536]; /* a record's size is 16 bits */
    while (tail < head) {
        struct perf_event_header eh;
        if (head - tail < sizeof eh)
            return ib_why(why, len, -EPROTO, "%llu bytes left at offset %llu, less than a record header",
                          (unsigned long long)(head - tail), (unsigned long long)tail);
        ring_copy(data, data_size, tail, &eh, sizeof eh);
        if (eh.size < sizeof eh || eh.size > head - tail)
            return ib_why(why, len, -EPROTO, "record of type %u at offset %llu has size %u (%llu bytes left)",
                          eh.type, (unsigned long long)tail, eh.size, (unsigned long long)(head - tail));
        ring_copy(data, data_size, tail, rec, eh.size);
        tail += eh.size;
        st->records++;
        if (eh.type == PERF_RECORD_LOST) {
            /* { header; u64 id; u64 lost; } */
            uint64_t lost = 0;
            if (eh.size >= sizeof eh + 16)
                memcpy(&lost, rec + sizeof eh + 8, 8);
            st->lost += lost;
            continue;
        }
        if (eh.type != PERF_RECORD_SAMPLE) {
            st->skipped++;
            continue;
        }
        /* the fields in the ABI's order (linux/perf_event.h, PERF_RECORD_SAMPLE) */
        size_t at = sizeof eh, end = eh.size;
        uint32_t spid = 0, stid = 0;
        uint64_t addr = 0, dsrc = 0;
#define TAKE(var)                                                                                                   \
    do {                                                                                                            \
        if (at + 8 > end)                                                                                           \
            return ib_why(why, len, -EPROTO, "sample at offset %llu: %zu bytes, shorter than its sample_type 0x%llx", \
                          (unsigned long long)(tail - eh.size), end, (unsigned long long)sample_type);              \
        memcpy(&(var), rec + at, 8);                                                                                \
        at += 8;                                                                                                    \
    } while (0)
        uint64_t skip;
        if (sample_type & PERF_SAMPLE_IDENTIFIER)
            TAKE(skip);
        if (sample_type & PERF_SAMPLE_IP)
            TAKE(skip);
        if (sample_type & PERF_SAMPLE_TID) {
            uint64_t pt;
            TAKE(pt);
            memcpy(&spid, &pt, 4);
            memcpy(&stid, (unsigned char *)&pt + 4, 4);
        }
        if (sample_type & PERF_SAMPLE_TIME)
            TAKE(skip);
        if (sample_type & PERF_SAMPLE_ADDR)
            TAKE(addr);
        if (sample_type & PERF_SAMPLE_ID)
            TAKE(skip);
        if (sample_type & PERF_SAMPLE_STREAM_ID)
            TAKE(skip);
        if (sample_type & PERF_SAMPLE_CPU)
            TAKE(skip);
        if (sample_type & PERF_SAMPLE_PERIOD)
            TAKE(skip);
        if (sample_type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
            TAKE(skip);
        if (sample_type & PERF_SAMPLE_DATA_SRC)
            TAKE(dsrc);
#undef TAKE
        (void)skip;
        if ((pid > 0 && (pid_t)spid != pid) || addr == 0) {
            st->filtered++;
            continue;
        }
        struct pl_sample s = {.tid = stid, .addr = addr, .src = pl_perf_data_src(dsrc)};
        st->samples++;
        int rc = fn(ctx, &s);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- the live reader ---- */

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    char *ok = fgets(buf, (int)len, f);
    fclose(f);
    if (!ok)
        return -EIO;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* "AuthenticAMD", "GenuineIntel", ... from /proc/cpuinfo ("" when not found). */
static void cpu_vendor(char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "vendor_id", 9) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                c += strspn(c, " \t");
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

/* Sets the bits a sysfs format term ("config:0-7", "config1:0-15", "config:21") names to value. */
static int apply_format(const char *pmu, const char *term, uint64_t value, struct perf_event_attr *a)
{
    char path[256], fmt[128];
    snprintf(path, sizeof path, SYSFS_PMU "/%s/format/%s", pmu, term);
    int rc = read_line(path, fmt, sizeof fmt);
    if (rc < 0)
        return rc;
    __u64 *cfg = strncmp(fmt, "config1:", 8) == 0 ? &a->config1
                    : strncmp(fmt, "config2:", 8) == 0 ? &a->config2
                    : strncmp(fmt, "config:", 7) == 0 ? &a->config
                                                       : NULL;
    if (!cfg)
        return -EINVAL;
    unsigned lo, hi;
    const char *bits = strchr(fmt, ':') + 1;
    int n = sscanf(bits, "%u-%u", &lo, &hi);
    if (n == 1)
        hi = lo;
    else if (n != 2 || hi < lo || hi > 63)
        return -EINVAL;
    unsigned w = hi - lo + 1;
    uint64_t mask = w == 64 ? ~0ull : ((1ull << w) - 1);
    *cfg = (*cfg & ~(mask << lo)) | ((value & mask) << lo);
    return 0;
}

/* Encodes PMU pmu's named event (sysfs events/NAME: "event=0xcd,umask=0x1,ldlat=3") into a, with ldlat overridden
 * when ldlat >= 0.  -errno when a file is missing or a term unknown. */
static int encode_event(const char *pmu, const char *name, int ldlat, struct perf_event_attr *a)
{
    char path[256], ev[256], tp[32];
    snprintf(path, sizeof path, SYSFS_PMU "/%s/type", pmu);
    int rc = read_line(path, tp, sizeof tp);
    if (rc < 0)
        return rc;
    a->type = (uint32_t)strtoul(tp, NULL, 10);
    snprintf(path, sizeof path, SYSFS_PMU "/%s/events/%s", pmu, name);
    if ((rc = read_line(path, ev, sizeof ev)) < 0)
        return rc;
    int have_ldlat = 0;
    for (char *save = NULL, *t = strtok_r(ev, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        uint64_t v = 1;
        if (eq) {
            *eq = '\0';
            v = strtoull(eq + 1, NULL, 0);
        }
        if (strcmp(t, "ldlat") == 0) {
            have_ldlat = 1;
            if (ldlat >= 0)
                v = (uint64_t)ldlat;
        }
        if ((rc = apply_format(pmu, t, v, a)) < 0)
            return rc;
    }
    if (ldlat >= 0 && !have_ldlat && (rc = apply_format(pmu, "ldlat", (uint64_t)ldlat, a)) < 0)
        return rc;
    return 0;
}

struct ev {
    int fd;
    void *map;
    size_t map_size;
};

struct perf_run {
    struct ev *v;
    unsigned n;
    char event[96]; /* "cpu/mem-loads,ldlat=30/" or "ibs_op//" */
    int per_cpu;
    struct perf_event_attr attr;
};

static void run_close(struct perf_run *r)
{
    for (unsigned i = 0; i < r->n; i++) {
        if (r->v[i].map)
            munmap(r->v[i].map, r->v[i].map_size);
        if (r->v[i].fd >= 0)
            close(r->v[i].fd);
    }
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

/* Chooses the event: 0, or -EOPNOTSUPP with the reason. */
static int choose_event(struct perf_run *r, char *why, size_t len)
{
    char vendor[64], path[256];
    cpu_vendor(vendor, sizeof vendor);
    int amd = strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0;
    int intel = strcmp(vendor, "GenuineIntel") == 0;
    memset(&r->attr, 0, sizeof r->attr);
    r->attr.size = sizeof r->attr;
    if (!amd) {
        /* the core PMU is "cpu", or "cpu_core" on hybrid parts (the E-cores have no load-latency PEBS) */
        static const char *pmus[] = {"cpu", "cpu_core"};
        int rc = -ENOENT;
        for (unsigned i = 0; i < 2 && rc < 0; i++) {
            snprintf(r->event, sizeof r->event, "%s/mem-loads,ldlat=%d/", pmus[i], PL_PERF_LDLAT);
            memset(&r->attr, 0, sizeof r->attr);
            r->attr.size = sizeof r->attr;
            rc = encode_event(pmus[i], "mem-loads", PL_PERF_LDLAT, &r->attr);
        }
        if (rc == 0) {
            r->attr.sample_period = PL_PERF_PERIOD_INTEL;
            r->attr.precise_ip = 2;
            r->per_cpu = 0;
            return 0;
        }
        if (intel) {
            snprintf(r->event, sizeof r->event, "cpu/mem-loads,ldlat=%d/", PL_PERF_LDLAT);
            return ib_why(why, len, -EOPNOTSUPP, "perf_event_open(%s): %s: %s/cpu/events/mem-loads is missing (no PMU "
                          "here)", r->event, strerror(-rc), SYSFS_PMU);
        }
    }
    snprintf(r->event, sizeof r->event, "ibs_op//");
    char tp[32];
    snprintf(path, sizeof path, SYSFS_PMU "/ibs_op/type");
    int rc = read_line(path, tp, sizeof tp);
    if (rc < 0) {
        if (amd)
            return ib_why(why, len, -EOPNOTSUPP, "perf_event_open(%s): %s: %s is missing (no PMU here)", r->event,
                          strerror(-rc), path);
        return ib_why(why, len, -EOPNOTSUPP,
                      "perf_event_open(cpu/mem-loads,ldlat=%d/ or ibs_op//): %s: neither event exists (no PMU here)",
                      PL_PERF_LDLAT, strerror(-rc));
    }
    r->attr.type = (uint32_t)strtoul(tp, NULL, 10);
    r->attr.config = 0; /* count cycles (cnt_ctl 0): an op every period cycles, loads and stores alike */
    r->attr.sample_period = PL_PERF_PERIOD_IBS;
    r->per_cpu = 1;
    return 0;
}

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
    return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Opens and maps one event. */
static int open_one(struct perf_run *r, pid_t pid, int cpu, char *why, size_t len)
{
    struct ev *e = &r->v[r->n];
    e->fd = -1;
    e->map = NULL;
    long fd = perf_open(&r->attr, pid, cpu);
    /* PEBS depth differs by part (precise_ip 1-3): step down on EINVAL, as perf's :P does, to 1 at least (0 would
     * lose the precise data address) */
    while (fd < 0 && errno == EINVAL && r->attr.precise_ip > 1) {
        r->attr.precise_ip--;
        fd = perf_open(&r->attr, pid, cpu);
    }
    if (fd < 0) {
        int err = errno;
        if (err == ESRCH)
            return -ESRCH;
        return ib_why(why, len, -EOPNOTSUPP, "perf_event_open(%s): %s: cannot sample %s %d%s", r->event,
                      strerror(err), pid >= 0 ? "thread" : "CPU", pid >= 0 ? (int)pid : cpu,
                      err == EACCES || err == EPERM ? " (perf_event_paranoid or CAP_PERFMON)" : "");
    }
    e->fd = (int)fd;
    r->n++;
    long page = sysconf(_SC_PAGESIZE);
    e->map_size = (size_t)page * (1 + PL_PERF_RING_PAGES);
    void *m = mmap(NULL, e->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
    if (m == MAP_FAILED)
        return ib_why(why, len, -EOPNOTSUPP, "perf_event_open(%s): mmap of its ring: %s", r->event, strerror(errno));
    e->map = m;
    return 0;
}

static int drain(struct perf_run *r, pid_t pid, pl_sample_fn fn, void *ctx, struct pl_perf_stats *tot, char *why,
                 size_t len)
{
    for (unsigned i = 0; i < r->n; i++) {
        struct perf_event_mmap_page *mp = r->v[i].map;
        uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = mp->data_tail;
        if (head == tail)
            continue;
        struct pl_perf_stats st;
        int rc = pl_perf_decode((const char *)mp + mp->data_offset, mp->data_size, tail, head, r->attr.sample_type,
                                r->per_cpu ? pid : 0, fn, ctx, &st, why, len);
        __atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
        tot->records += st.records;
        tot->samples += st.samples;
        tot->skipped += st.skipped;
        tot->lost += st.lost;
        tot->filtered += st.filtered;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static unsigned online_cpus(int **out)
{
    char buf[1024];
    int *cpus = NULL;
    unsigned n = 0;
    if (read_line("/sys/devices/system/cpu/online", buf, sizeof buf) == 0 &&
        pl_cpulist_parse(buf, &cpus, &n, NULL, 0) == 0) {
        *out = cpus;
        return n;
    }
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c > 0 ? (unsigned)c : 1;
    cpus = malloc(n * sizeof *cpus);
    for (unsigned i = 0; cpus && i < n; i++)
        cpus[i] = (int)i;
    *out = cpus;
    return cpus ? n : 0;
}

int pl_src_perf_read_stats(pid_t pid, double seconds, pl_sample_fn fn, void *ctx, struct pl_perf_stats *stats,
                           char *why, size_t len)
{
    struct pl_perf_stats tot_local;
    struct pl_perf_stats *tot = stats ? stats : &tot_local;
    memset(tot, 0, sizeof *tot);
    if (pid <= 0)
        return ib_why(why, len, -EINVAL, "bad pid %d", (int)pid);
    if (!(seconds >= 0))
        return ib_why(why, len, -EINVAL, "bad duration %g s", seconds);
    struct pl_threads th = {0};
    int rc = pl_proc_threads(pid, &th, why, len);
    if (rc < 0)
        return rc;
    struct perf_run r = {0};
    rc = choose_event(&r, why, len);
    if (rc < 0) {
        pl_threads_free(&th);
        return rc;
    }
    r.attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
    r.attr.disabled = 1;
    r.attr.exclude_kernel = 1;
    r.attr.exclude_hv = 1;
    r.attr.wakeup_events = 1;
    int *cpus = NULL;
    unsigned ncpu = r.per_cpu ? online_cpus(&cpus) : 0;
    if (r.per_cpu && ncpu == 0) {
        rc = ib_why(why, len, -ENOMEM, "out of memory listing the online CPUs");
        goto out;
    }
    unsigned want = r.per_cpu ? ncpu : th.n;
    r.v = calloc(want ? want : 1, sizeof *r.v);
    if (!r.v) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    unsigned opened_threads = 0;
    for (unsigned i = 0; i < want; i++) {
        rc = r.per_cpu ? open_one(&r, -1, cpus[i], why, len) : open_one(&r, th.v[i].tid, -1, why, len);
        if (rc == -ESRCH) { /* that thread exited meanwhile */
            rc = 0;
            continue;
        }
        if (rc < 0)
            goto out;
        opened_threads++;
    }
    if (!r.per_cpu && opened_threads == 0) {
        rc = ib_why(why, len, -ESRCH, "no process %d (its threads exited)", (int)pid);
        goto out;
    }
    for (unsigned i = 0; i < r.n; i++)
        ioctl(r.v[i].fd, PERF_EVENT_IOC_ENABLE, 0);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        int last = el >= seconds;
        if (!last) {
            struct timespec nap = {0, PL_PERF_POLL_MS * 1000000L};
            nanosleep(&nap, NULL);
        }
        if ((rc = drain(&r, pid, fn, ctx, tot, why, len)) != 0 || last)
            break;
    }
    for (unsigned i = 0; i < r.n; i++)
        ioctl(r.v[i].fd, PERF_EVENT_IOC_DISABLE, 0);
out:
    run_close(&r);
    free(cpus);
    pl_threads_free(&th);
    return rc;
}

int pl_src_perf_read(pid_t pid, double seconds, pl_sample_fn fn, void *ctx, char *why, size_t len)
{
    return pl_src_perf_read_stats(pid, seconds, fn, ctx, NULL, why, len);
}
