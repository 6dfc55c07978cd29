/* pl_proc.c - the threads of a live process, and pinning them (pl_proc.h). */
#define _GNU_SOURCE
#include "pl_proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ib_err.h"
#include "parse.h"
#include "readfile.h"

static int gone(int rc)
{
    return rc == -ENOENT || rc == -ESRCH;
}

/* The value of "Key:\t..." in a status file (up to the line's end) into out. */
static int status_field(const char *status, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = status; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, kl) || p[kl] != ':')
            continue;
        p += kl + 1;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\n");
        if (n >= len)
            return -E2BIG;
        memcpy(out, p, n);
        out[n] = '\0';
        return 0;
    }
    return -ENOENT;
}

/* One thread; 1 when it has exited meanwhile (skip it), 0 when read, -errno otherwise. */
static int read_thread(pid_t pid, pid_t tid, struct pl_thread *t, char *why, size_t len)
{
    char path[96], buf[8192], val[4096];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    t->last_cpu = -1;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    int rc = ib_read_small(path, t->comm, sizeof(t->comm));
    if (rc < 0)
        return gone(rc) ? 1 : ib_why(why, len, rc, "%s: %s", path, strerror(-rc));
    t->comm[strcspn(t->comm, "\n")] = '\0';

    /* stat: "tid (comm) state ppid ..."; comm may hold spaces and parentheses, so fields count from the last ')':
     * the token after it is field 3, field 39 (processor) is 36 tokens on */
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    rc = ib_read_small(path, buf, sizeof(buf));
    if (rc < 0)
        return gone(rc) ? 1 : ib_why(why, len, rc, "%s: %s", path, strerror(-rc));
    char *p = strrchr(buf, ')'), *save = NULL;
    unsigned field = 3;
    for (char *tok = p ? strtok_r(p + 1, " \n", &save) : NULL; tok; tok = strtok_r(NULL, " \n", &save), field++) {
        if (field == 39) {
            char *end;
            long cpu = strtol(tok, &end, 10);
            if (end != tok && !*end && cpu >= 0)
                t->last_cpu = (int)cpu;
            break;
        }
    }

    snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
    rc = ib_read_small(path, buf, sizeof(buf));
    if (rc < 0)
        return gone(rc) ? 1 : ib_why(why, len, rc, "%s: %s", path, strerror(-rc));
    if (status_field(buf, "Cpus_allowed_list", val, sizeof(val)) < 0 ||
        parse_cpulist(val, &t->allowed, &t->nallowed) < 0)
        return ib_why(why, len, -EIO, "%s: no readable Cpus_allowed_list", path);
    return 0;
}

static int thread_cmp(const void *a, const void *b, void *arg)
{
    pid_t pid = *(const pid_t *)arg, x = ((const struct pl_thread *)a)->tid, y = ((const struct pl_thread *)b)->tid;
    if (x == y)
        return 0;
    if (x == pid || y == pid)
        return x == pid ? -1 : 1;
    return x < y ? -1 : 1;
}

void pl_threads_sort(struct pl_threads *t)
{
    qsort_r(t->v, t->n, sizeof(*t->v), thread_cmp, &t->pid);
}

void pl_threads_free(struct pl_threads *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->n; i++)
        free(t->v[i].allowed);
    free(t->v);
    memset(t, 0, sizeof(*t));
}

/* The process itself: -ESRCH when there is none, -EINVAL when pid names a thread of another process. */
static int check_process(pid_t pid, char *why, size_t len)
{
    char path[64], buf[8192], val[32];
    if (pid <= 0)
        return ib_why(why, len, -EINVAL, "bad pid %d: a process id is a positive number", (int)pid);
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    int rc = ib_read_small(path, buf, sizeof(buf));
    if (gone(rc))
        return ib_why(why, len, -ESRCH, "no process %d", (int)pid);
    if (rc < 0)
        return ib_why(why, len, rc, "%s: %s", path, strerror(-rc));
    /* /proc/TID exists for any thread too (unlisted); its whole group would be read, but TID is not the main
     * thread, so say which process it belongs to instead of guessing */
    if (status_field(buf, "Tgid", val, sizeof(val)) == 0 && atoi(val) != (int)pid)
        return ib_why(why, len, -EINVAL, "%d is a thread of process %s, not a process (use --pid %s)", (int)pid, val,
                      val);
    return 0;
}

static int is_number(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

static int list_threads(pid_t pid, struct pl_threads *out, char *why, size_t len)
{
    char path[64];
    memset(out, 0, sizeof(*out));
    out->pid = pid;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return gone(-errno) ? ib_why(why, len, -ESRCH, "no process %d", (int)pid)
                            : ib_why(why, len, -errno, "%s: %s", path, strerror(errno));
    unsigned cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_number(e->d_name))
            continue;
        if (out->n == cap) {
            cap = cap ? 2 * cap : 16;
            struct pl_thread *v = realloc(out->v, cap * sizeof(*v));
            if (!v) {
                rc = ib_why(why, len, -ENOMEM, "out of memory listing the threads of %d", (int)pid);
                break;
            }
            out->v = v;
        }
        rc = read_thread(pid, (pid_t)atoi(e->d_name), &out->v[out->n], why, len);
        if (rc < 0) {
            free(out->v[out->n].allowed);
            break;
        }
        if (rc == 1) { /* exited meanwhile */
            free(out->v[out->n].allowed);
            rc = 0;
            continue;
        }
        out->n++;
    }
    closedir(d);
    if (rc == 0 && out->n == 0) /* every thread exited: the process is gone (or a zombie) */
        rc = ib_why(why, len, -ESRCH, "no process %d (it has exited)", (int)pid);
    if (rc < 0) {
        pl_threads_free(out);
        return rc;
    }
    pl_threads_sort(out);
    return 0;
}

int pl_proc_threads(pid_t pid, struct pl_threads *out, char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    int rc = check_process(pid, why, len);
    return rc < 0 ? rc : list_threads(pid, out, why, len);
}

/* ---- CPU lists ----------------------------------------------------------------------------------------------- */

int pl_cpulist_parse(const char *s, int **cpus, unsigned *n, char *why, size_t len)
{
    *cpus = NULL;
    *n = 0;
    /* parse_cpulist checks the syntax strictly (and sorts and merges); the same text is then read again in the
     * order written, which can no longer fail, and a CPU named twice shows as more CPUs than parse_cpulist found */
    int *uniq;
    unsigned nuniq;
    if (!s || parse_cpulist(s, &uniq, &nuniq) < 0)
        return ib_why(why, len, -EINVAL, "bad CPU list '%s': want CPU numbers and ranges such as 0-3,5",
                      s ? s : "");
    unsigned total = 0;
    for (const char *p = s; *p;) {
        char *end;
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        if (*end == '-')
            hi = strtoul(end + 1, &end, 10);
        total += (unsigned)(hi - lo + 1);
        p = *end == ',' ? end + 1 : end;
    }
    if (total != nuniq) {
        free(uniq);
        return ib_why(why, len, -EINVAL, "bad CPU list '%s': a CPU is named twice", s);
    }
    int *v = uniq; /* reuse the storage: same count */
    unsigned k = 0;
    for (const char *p = s; *p;) {
        char *end;
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        if (*end == '-')
            hi = strtoul(end + 1, &end, 10);
        for (unsigned long c = lo; c <= hi; c++)
            v[k++] = (int)c;
        p = *end == ',' ? end + 1 : end;
    }
    *cpus = v;
    *n = k;
    return 0;
}

char *pl_cpulist_format(const int *cpus, unsigned n, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (unsigned i = 0; i < n;) {
        unsigned j = i;
        while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + used, len - used, "%s%d-%d", i ? "," : "", cpus[i], cpus[j])
                      : snprintf(buf + used, len - used, "%s%d", i ? "," : "", cpus[i]);
        if (w < 0 || (size_t)w >= len - used) {
            /* truncated: end on an ellipsis rather than on half a number */
            if (len >= 4)
                strcpy(buf + len - 4, "...");
            return buf;
        }
        used += (size_t)w;
        i = j + 1;
    }
    return buf;
}

int pl_cpus_to_pus(const struct pl_hier *h, const int *cpus, unsigned n, unsigned *pus, char *why, size_t len)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned p = 0;
        while (p < h->npus && h->pu_os[p] != cpus[i])
            p++;
        if (p == h->npus) {
            int *os = malloc((h->npus ? h->npus : 1) * sizeof(*os));
            char list[256] = "";
            if (os) {
                for (unsigned q = 0; q < h->npus; q++)
                    os[q] = h->pu_os[q];
                /* pu_os is in logical order, not necessarily ascending */
                for (unsigned a = 1; a < h->npus; a++)
                    for (unsigned b = a; b > 0 && os[b - 1] > os[b]; b--) {
                        int x = os[b];
                        os[b] = os[b - 1];
                        os[b - 1] = x;
                    }
                pl_cpulist_format(os, h->npus, list, sizeof(list));
                free(os);
            }
            return ib_why(why, len, -EINVAL, "CPU %d is not on this machine (CPUs %s)", cpus[i], list);
        }
        if (pus)
            pus[i] = p;
    }
    return 0;
}

int pl_cpus_on_machine(const struct pl_hier *h, const int *cpus, unsigned n, char *why, size_t len)
{
    return pl_cpus_to_pus(h, cpus, n, NULL, why, len);
}

/* ---- pinning ----------------------------------------------------------------------------------------------------- */

void pl_apply_result_free(struct pl_apply_result *r)
{
    if (!r)
        return;
    for (unsigned i = 0; i < r->n; i++)
        free(r->v[i].before);
    free(r->v);
    memset(r, 0, sizeof(*r));
}

static int seen(const struct pl_apply_result *r, pid_t tid)
{
    for (unsigned i = 0; i < r->n; i++)
        if (r->v[i].tid == tid)
            return 1;
    return 0;
}

/* sched_setaffinity(tid) to cpus[0..n-1]: 0, 1 when the thread has exited, -errno otherwise. */
static int pin(pid_t tid, const int *cpus, unsigned n)
{
    int max = 0;
    for (unsigned i = 0; i < n; i++)
        max = cpus[i] > max ? cpus[i] : max;
    cpu_set_t *set = CPU_ALLOC((size_t)max + 1);
    if (!set)
        return -ENOMEM;
    size_t sz = CPU_ALLOC_SIZE((size_t)max + 1);
    CPU_ZERO_S(sz, set);
    for (unsigned i = 0; i < n; i++)
        CPU_SET_S((size_t)cpus[i], sz, set);
    int rc = sched_setaffinity(tid, sz, set) < 0 ? -errno : 0;
    CPU_FREE(set);
    return rc == -ESRCH ? 1 : rc;
}

int pl_proc_apply(pid_t pid, const struct pl_apply_opts *o, struct pl_apply_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof(*r));
    if (!o->cpus || !o->ncpus)
        return ib_why(why, len, -EINVAL, "no CPUs to pin to");
    int rc = check_process(pid, why, len);
    if (rc < 0)
        return rc;
    unsigned rounds = o->rounds ? o->rounds : PL_APPLY_ROUNDS, cap = 0;
    for (unsigned round = 0; round < rounds; round++) {
        struct pl_threads t;
        rc = list_threads(pid, &t, why, len);
        if (rc < 0)
            return rc == -ESRCH && round ? ib_why(why, len, -ESRCH, "process %d exited while being pinned", (int)pid)
                                         : rc;
        r->rounds = round + 1;
        if (o->on_listed)
            o->on_listed(o->hook_arg, round);
        unsigned fresh = 0;
        for (unsigned i = 0; i < t.n; i++) {
            if (seen(r, t.v[i].tid))
                continue;
            fresh++;
            if (r->n == cap) {
                cap = cap ? 2 * cap : 16;
                struct pl_applied *v = realloc(r->v, cap * sizeof(*v));
                if (!v) {
                    pl_threads_free(&t);
                    return ib_why(why, len, -ENOMEM, "out of memory pinning the threads of %d", (int)pid);
                }
                r->v = v;
            }
            struct pl_applied *a = &r->v[r->n];
            memset(a, 0, sizeof(*a));
            a->tid = t.v[i].tid;
            snprintf(a->comm, sizeof(a->comm), "%s", t.v[i].comm);
            a->pos = r->n;
            a->round = round;
            a->cpu = o->set ? -1 : o->cpus[r->n % o->ncpus];
            a->before = t.v[i].allowed; /* taken over from the listing */
            a->nbefore = t.v[i].nallowed;
            t.v[i].allowed = NULL;
            t.v[i].nallowed = 0;
            if (!o->set && r->n >= o->ncpus)
                r->wrapped = true;
            r->n++;
            rc = o->set ? pin(a->tid, o->cpus, o->ncpus) : pin(a->tid, &a->cpu, 1);
            if (rc == 1) {
                a->exited = true;
                continue;
            }
            if (rc < 0) {
                char cpus[128];
                if (o->set)
                    snprintf(cpus, sizeof(cpus), "%u CPU(s) from %d", o->ncpus, o->cpus[0]);
                else
                    snprintf(cpus, sizeof(cpus), "CPU %d", a->cpu);
                const char *hint = rc == -EPERM  ? " (another user's process needs CAP_SYS_NICE)"
                                   : rc == -EINVAL ? " (offline, or outside the process's cpuset)"
                                                   : "";
                pl_threads_free(&t);
                /* all or nothing, as far as the kernel lets us: put back the threads pinned so far */
                unsigned back = 0;
                for (unsigned k = 0; k + 1 < r->n; k++)
                    if (!r->v[k].exited && r->v[k].nbefore && pin(r->v[k].tid, r->v[k].before, r->v[k].nbefore) == 0)
                        back++;
                r->pinned -= back;
                return ib_why(why, len, rc, "thread %d of process %d: cannot pin to %s: %s%s%s", (int)a->tid, (int)pid,
                              cpus, strerror(-rc), hint, back ? "; the threads pinned before it were put back" : "");
            }
            r->pinned++;
        }
        pl_threads_free(&t);
        if (!fresh)
            return 0;
    }
    return ib_why(why, len, -EAGAIN, "process %d was still creating threads after %u passes (%u pinned)", (int)pid,
                  rounds, r->pinned);
}

int pl_proc_pin_each(pid_t pid, const pid_t *tids, const int *const *sets, const unsigned *nsets, unsigned n,
                     unsigned *skipped, char *why, size_t len)
{
    int rc = check_process(pid, why, len);
    if (rc < 0)
        return rc;
    *skipped = 0;
    for (unsigned i = 0; i < n; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task/%d", (int)pid, (int)tids[i]);
        if (access(path, F_OK) != 0) { /* exited, or never a thread of pid: not ours to pin */
            ++*skipped;
            continue;
        }
        rc = pin(tids[i], sets[i], nsets[i]);
        if (rc == 1) {
            ++*skipped;
            continue;
        }
        if (rc < 0) {
            char list[256];
            pl_cpulist_format(sets[i], nsets[i], list, sizeof list);
            return ib_why(why, len, rc, "thread %d of process %d to CPUs %s: %s", (int)tids[i], (int)pid, list,
                          strerror(-rc));
        }
    }
    return 0;
}
