/* pl_numa.c - the NUMA locality score and its inputs (pl_numa.h). */
#define _GNU_SOURCE
#include "pl_numa.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ib_err.h"
#include "readfile.h"

#define DEFAULT_WINDOW_NS IB_NS_PER_S
#define DEFAULT_INTERVAL_NS (10 * IB_NS_PER_MS)

/* ---- Eq. 1 ------------------------------------------------------------------------------------------------------- */

int pl_numa_normalise(const double *raw, unsigned n, double *share, const char *what, char *why, size_t len)
{
    double sum = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!isfinite(raw[i]) || raw[i] < 0)
            return ib_why(why, len, -EINVAL, "%s: entry %u is not a number >= 0", what, i);
        sum += raw[i];
    }
    if (n == 0 || !(sum > 0) || !isfinite(sum))
        return ib_why(why, len, -EINVAL, "%s: %s", what, n ? "every entry is 0 (nothing to share out)" : "empty");
    for (unsigned i = 0; i < n; i++)
        share[i] = raw[i] / sum;
    return 0;
}

int pl_numa_score(const double *cpu, const double *mem, const double *dist, unsigned n, double *score, char *why,
                  size_t len)
{
    if (n == 0)
        return ib_why(why, len, -EINVAL, "no NUMA nodes");
    for (unsigned i = 0; i < n * n; i++)
        if (!isfinite(dist[i]) || dist[i] <= 0)
            return ib_why(why, len, -EINVAL, "distance [%u][%u] is not a positive number", i / n, i % n);
    double *c = malloc(2 * n * sizeof(*c));
    if (!c)
        return ib_why(why, len, -ENOMEM, "out of memory");
    double *m = c + n;
    int rc = pl_numa_normalise(cpu, n, c, "CPU use", why, len);
    if (rc == 0)
        rc = pl_numa_normalise(mem, n, m, "memory use", why, len);
    if (rc == 0) {
        double s = 0;
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = 0; j < n; j++)
                s += c[i] * m[j] * dist[i * n + i] / dist[i * n + j];
        *score = s;
    }
    free(c);
    return rc;
}

void pl_numa_range(const double *dist, unsigned n, double *lo, double *hi)
{
    *lo = 1;
    *hi = 1;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            double r = dist[i * n + i] / dist[i * n + j];
            *lo = r < *lo ? r : *lo;
        }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int pl_numa_hops(const double *dist, unsigned n, double *out)
{
    /* the distinct remote values, ascending: their rank + 1 is the hop count */
    double *v = malloc((size_t)n * n * sizeof(*v) + 1);
    double *res = malloc((size_t)n * n * sizeof(*res) + 1);
    if (!v || !res) {
        free(v);
        free(res);
        return -ENOMEM;
    }
    size_t nv = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            if (j != i && dist[i * n + j] > dist[i * n + i])
                v[nv++] = dist[i * n + j];
    qsort(v, nv, sizeof(*v), cmp_double);
    size_t nd = 0;
    for (size_t k = 0; k < nv; k++)
        if (nd == 0 || v[k] != v[nd - 1])
            v[nd++] = v[k];
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            double d = dist[i * n + j];
            if (j == i || d <= dist[i * n + i]) {
                res[i * n + j] = 10;
                continue;
            }
            size_t lo = 0, hi = nd; /* the rank of d among the distinct values */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (v[mid] < d)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            res[i * n + j] = 10.0 * (double)(lo + 2);
        }
    memcpy(out, res, (size_t)n * n * sizeof(*out));
    free(v);
    free(res);
    return 0;
}

/* ---- memory: numa_maps ------------------------------------------------------------------------------------------- */

static bool parse_u64(const char *s, const char *end, uint64_t *out)
{
    if (s == end)
        return false;
    uint64_t v = 0;
    for (; s < end; s++) {
        if (!isdigit((unsigned char)*s) || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* The token ending just before `end` within [line, end): *start set, false when none is left. */
static bool prev_token(const char *line, const char *end, const char **start, const char **tend)
{
    while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (end == line)
        return false;
    const char *s = end;
    while (s > line && s[-1] != ' ' && s[-1] != '\t')
        s--;
    *start = s;
    *tend = end;
    return true;
}

/* One line.  It is read from its end: the kernel prints the N fields and kernelpagesize_kB last, after a file name
 * that may hold spaces. */
static int maps_line(const char *line, const char *end, unsigned lineno, const unsigned *node_os, unsigned nnodes,
                     unsigned default_page_kb, uint64_t *bytes, char *why, size_t len)
{
    const char *ts, *te;
    uint64_t page_kb = default_page_kb;
    static const char kps[] = "kernelpagesize_kB=";
    if (!prev_token(line, end, &ts, &te))
        return 0;
    if ((size_t)(te - ts) > sizeof(kps) - 1 && !strncmp(ts, kps, sizeof(kps) - 1)) {
        if (!parse_u64(ts + sizeof(kps) - 1, te, &page_kb) || page_kb == 0)
            return ib_why(why, len, -EINVAL, "numa_maps line %u: bad %.*s", lineno, (int)(te - ts), ts);
        end = ts;
    }
    while (prev_token(line, end, &ts, &te) && te - ts >= 2 && ts[0] == 'N' && isdigit((unsigned char)ts[1])) {
        const char *eq = memchr(ts, '=', (size_t)(te - ts));
        uint64_t node, pages;
        if (!eq || !parse_u64(ts + 1, eq, &node) || !parse_u64(eq + 1, te, &pages))
            return ib_why(why, len, -EINVAL, "numa_maps line %u: bad field %.*s", lineno, (int)(te - ts), ts);
        unsigned k = 0;
        while (k < nnodes && node_os[k] != node)
            k++;
        if (k == nnodes)
            return ib_why(why, len, -EINVAL, "numa_maps line %u: node %llu is not in the topology", lineno,
                          (unsigned long long)node);
        if (pages > UINT64_MAX / 1024 / page_kb || bytes[k] > UINT64_MAX - pages * page_kb * 1024)
            return ib_why(why, len, -EINVAL, "numa_maps line %u: %.*s overflows", lineno, (int)(te - ts), ts);
        bytes[k] += pages * page_kb * 1024;
        end = ts;
    }
    return 0;
}

int pl_numa_maps_parse(const char *text, const unsigned *node_os, unsigned nnodes, unsigned default_page_kb,
                       uint64_t *bytes, char *why, size_t len)
{
    memset(bytes, 0, nnodes * sizeof(*bytes));
    unsigned lineno = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        int rc = maps_line(p, end, ++lineno, node_os, nnodes, default_page_kb, bytes, why, len);
        if (rc < 0)
            return rc;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

int pl_numa_maps_read(const char *proc_root, pid_t pid, const unsigned *node_os, unsigned nnodes, uint64_t *bytes,
                      char *why, size_t len)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%d/numa_maps", proc_root ? proc_root : "/proc", (int)pid);
    char *text;
    int rc = ib_read_all(path, 256 * IB_MIB, &text, NULL);
    if (rc == -ENOENT || rc == -ESRCH)
        return ib_why(why, len, -ESRCH, "no process %d (%s: %s)", (int)pid, path, strerror(-rc));
    if (rc < 0)
        return ib_why(why, len, rc, "cannot read %s: %s", path, strerror(-rc));
    long ps = sysconf(_SC_PAGESIZE);
    rc = pl_numa_maps_parse(text, node_os, nnodes, ps > 0 ? (unsigned)(ps / 1024) : 4, bytes, why, len);
    free(text);
    return rc;
}

/* ---- CPU: the nodes of the CPUs and sampling the threads --------------------------------------------------------- */

int pl_numa_cpu_nodes(const struct pl_machine *m, int **cpu_node, unsigned *ncpus, char *why, size_t len)
{
    *cpu_node = NULL;
    *ncpus = 0;
    unsigned npus = topo_npus(m->topo), n = 0;
    for (unsigned p = 0; p < npus; p++) {
        int os = topo_pu_os(m->topo, p);
        n = os >= 0 && (unsigned)os + 1 > n ? (unsigned)os + 1 : n;
    }
    int *map = malloc((n ? n : 1) * sizeof(*map));
    if (!map)
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned c = 0; c < n; c++)
        map[c] = -1;
    hwloc_topology_t t = topo_hwloc(m->topo);
    for (unsigned i = 0; i < m->nnodes; i++) {
        /* nodes are memory children in hwloc 2, not ancestors of PUs: found by cpuset */
        hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
        if (!node || !node->cpuset)
            continue;
        hwloc_obj_t pu = NULL;
        while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(t, node->cpuset, HWLOC_OBJ_PU, pu)) != NULL)
            if (pu->os_index < n && map[pu->os_index] < 0)
                map[pu->os_index] = (int)i;
    }
    *cpu_node = map;
    *ncpus = n;
    return 0;
}

struct thr {
    long tid;
    double ns;
};

static int cmp_thr(const void *a, const void *b)
{
    long x = ((const struct thr *)a)->tid, y = ((const struct thr *)b)->tid;
    return (x > y) - (x < y);
}

/* One thread's on-CPU ns and last CPU.  -ENOENT when it is gone (it exited between the listing and the read). */
static int read_thread(const char *task_dir, long tid, double *ns, int *cpu)
{
    char path[4300], *text;
    snprintf(path, sizeof(path), "%s/%ld/stat", task_dir, tid);
    int rc = ib_read_all(path, 256 * IB_MIB, &text, NULL);
    if (rc < 0)
        return rc == -ESRCH ? -ENOENT : rc;
    /* fields after the command name, which is in parentheses and may hold anything: field 3 is the first */
    const char *p = strrchr(text, ')');
    unsigned long long f[40] = {0};
    unsigned k = 3;
    for (p = p ? p + 1 : text; *p && k < 40;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char *e;
        f[k] = strtoull(p, &e, 10);
        while (*e && *e != ' ')
            e++;
        p = e;
        k++;
    }
    free(text);
    if (k < 40)
        return -EPROTO;
    *cpu = (int)f[39];
    snprintf(path, sizeof(path), "%s/%ld/schedstat", task_dir, tid);
    rc = ib_read_all(path, 256 * IB_MIB, &text, NULL);
    if (rc == 0) {
        *ns = strtod(text, NULL);
        free(text);
        return 0;
    }
    if (rc != -ENOENT)
        return rc;
    /* no schedstat (a kernel without CONFIG_SCHED_INFO): utime + stime, in clock ticks */
    long hz = sysconf(_SC_CLK_TCK);
    *ns = (double)(f[14] + f[15]) * 1e9 / (double)(hz > 0 ? hz : 100);
    return 0;
}

/* Lists and reads every thread: a sorted array of what each has run so far; the CPUs land in cpus (same order).
 * Attributes the delta since `prev` to use->ns when prev is given. */
static int sample_once(const char *task_dir, const struct thr *prev, size_t nprev, const int *cpu_node,
                       unsigned ncpus, struct pl_cpu_use *use, bool last, struct thr **out, size_t *nout)
{
    DIR *d = opendir(task_dir);
    if (!d)
        return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
    size_t cap = 64, n = 0;
    struct thr *t = malloc(cap * sizeof(*t));
    int *cpus = malloc(cap * sizeof(*cpus));
    int rc = t && cpus ? 0 : -ENOMEM;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char *endp;
        long tid = strtol(e->d_name, &endp, 10);
        if (*endp || tid <= 0)
            continue;
        if (n == cap) {
            struct thr *nt = realloc(t, cap * 2 * sizeof(*t));
            if (nt)
                t = nt;
            int *nc = nt ? realloc(cpus, cap * 2 * sizeof(*cpus)) : NULL;
            if (nc)
                cpus = nc;
            if (!nt || !nc) {
                rc = -ENOMEM;
                break;
            }
            cap *= 2;
        }
        int r = read_thread(task_dir, tid, &t[n].ns, &cpus[n]);
        if (r == -ENOENT)
            continue;
        if (r < 0) {
            rc = r;
            break;
        }
        t[n].tid = tid;
        n++;
    }
    closedir(d);
    if (rc == 0 && n == 0)
        rc = -ESRCH; /* every thread gone: the process exited */
    if (rc < 0) {
        free(t);
        free(cpus);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        int node = cpus[i] >= 0 && (unsigned)cpus[i] < ncpus ? cpu_node[cpus[i]] : -1;
        if (prev) {
            struct thr *was = bsearch(&t[i], prev, nprev, sizeof(*prev), cmp_thr);
            /* time on a CPU outside every node is not counted; a counter that went back (a reused tid) neither */
            if (was && node >= 0 && t[i].ns > was->ns)
                use->ns[node] += t[i].ns - was->ns;
        }
        if (last && node >= 0)
            use->last[node] += 1;
    }
    free(cpus); /* paired with t only until here: t is sorted for the next sample's lookups */
    qsort(t, n, sizeof(*t), cmp_thr);
    *out = t;
    *nout = n;
    return 0;
}

static void sleep_until(const struct timespec *at)
{
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, at, NULL) == EINTR)
        ;
}

int pl_numa_cpu_sample(pid_t pid, const struct pl_sample_opts *o, const int *cpu_node, unsigned ncpus,
                       unsigned nnodes, struct pl_cpu_use *use, char *why, size_t len)
{
    uint64_t window = o->window_ns ? o->window_ns : DEFAULT_WINDOW_NS;
    uint64_t interval = o->interval_ns ? o->interval_ns : DEFAULT_INTERVAL_NS;
    if (interval > window)
        interval = window;
    unsigned nsamples = (unsigned)(window / interval) + 1;
    char task_dir[4200];
    snprintf(task_dir, sizeof(task_dir), "%s/%d/task", o->proc_root ? o->proc_root : "/proc", (int)pid);
    for (unsigned i = 0; i < nnodes; i++)
        use->ns[i] = use->last[i] = 0;
    use->nthreads = use->nsamples = 0;
    struct thr *prev = NULL;
    size_t nprev = 0;
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    int rc = 0;
    for (unsigned s = 0; s < nsamples; s++) {
        if (s > 0) {
            if (o->wait) {
                o->wait(o->ctx, s, interval);
            } else {
                uint64_t ns = (uint64_t)at.tv_nsec + interval;
                at.tv_sec += (time_t)(ns / IB_NS_PER_S);
                at.tv_nsec = (long)(ns % IB_NS_PER_S);
                sleep_until(&at);
            }
        }
        if (o->stop && atomic_load(o->stop)) {
            rc = ib_why(why, len, -EINTR, "interrupted");
            break;
        }
        struct thr *cur = NULL;
        size_t ncur = 0;
        rc = sample_once(task_dir, prev, nprev, cpu_node, ncpus, use, s + 1 == nsamples, &cur, &ncur);
        if (rc == -ESRCH) {
            rc = ib_why(why, len, -ESRCH, s ? "process %d exited during the window" : "no process %d", (int)pid);
            break;
        }
        if (rc < 0) {
            rc = ib_why(why, len, rc, "cannot read the threads of %d (%s): %s", (int)pid, task_dir, strerror(-rc));
            break;
        }
        free(prev);
        prev = cur;
        nprev = ncur;
        use->nsamples = s + 1;
        use->nthreads = (unsigned)ncur;
    }
    free(prev);
    return rc;
}
