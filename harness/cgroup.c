/* cgroup.c - a cgroup per child, killed as a whole (cgroup.h). */
#define _GNU_SOURCE
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "fsguard.h"
#include "ib_err.h"

/* a + "/" + b into buf, 0 or -ENAMETOOLONG; async-signal-safe (no stdio) */
static int join(char *buf, size_t len, const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na + 1 + nb + 1 > len)
        return -ENAMETOOLONG;
    memcpy(buf, a, na);
    buf[na] = '/';
    memcpy(buf + na + 1, b, nb + 1);
    return 0;
}

static int write_file(const char *cg, const char *file, const char *text)
{
    char p[CG_PATH_MAX + 32];
    if (join(p, sizeof(p), cg, file) < 0)
        return -ENAMETOOLONG;
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = n < 0 ? -errno : 0;
    close(fd);
    return e;
}

static int exists(const char *cg, const char *file)
{
    char p[CG_PATH_MAX + 32];
    return join(p, sizeof(p), cg, file) == 0 && access(p, F_OK) == 0;
}

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* SIGKILL to every pid listed in cg/cgroup.procs; the number listed, or -errno. Parsed by hand: no stdio. */
static int kill_listed(const char *cg)
{
    char p[CG_PATH_MAX + 32];
    if (join(p, sizeof(p), cg, "cgroup.procs") < 0)
        return -ENAMETOOLONG;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    char buf[4096];
    long pid = 0;
    int digits = 0, n = 0;
    ssize_t r;
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (buf[i] - '0');
                digits = 1;
            } else {
                if (digits && pid > 0) {
                    kill((pid_t)pid, SIGKILL);
                    n++;
                }
                pid = 0;
                digits = 0;
            }
        }
    if (digits && pid > 0) {
        kill((pid_t)pid, SIGKILL);
        n++;
    }
    close(fd);
    return n;
}

int cg_enter(const char *cg)
{
    return write_file(cg, "cgroup.procs", "0");
}

int cg_add(const char *cg, pid_t pid)
{
    char num[24];
    snprintf(num, sizeof(num), "%d", (int)pid);
    return write_file(cg, "cgroup.procs", num);
}

int cg_kill(const char *cg)
{
    if (!cg || !*cg)
        return -EINVAL;
    /* v2: the kernel kills the whole cgroup, forks in flight included */
    int v2 = write_file(cg, "cgroup.kill", "1") == 0;
    /* v1: a frozen cgroup cannot fork while its members are being killed; they die once thawed */
    int frz = !v2 && exists(cg, "freezer.state") && write_file(cg, "freezer.state", "FROZEN") == 0;
    int n = 0;
    for (int i = 0; i < 200; i++) { /* 200 x 5 ms: bounded, a fork bomb under pids.max included */
        n = kill_listed(cg);
        if (frz && i == 0)
            write_file(cg, "freezer.state", "THAWED");
        if (n <= 0)
            break;
        nap_ms(5);
    }
    /* thawed whatever happened above: a member frozen by child_pause (v1) acts on no signal until then, and none
     * may be left paused (v2's cgroup.kill reaches frozen members, the thaw is for one that raced it) */
    if (exists(cg, "freezer.state"))
        write_file(cg, "freezer.state", "THAWED");
    if (v2)
        write_file(cg, "cgroup.freeze", "0");
    return n;
}

/* Read a small file of cg into buf; 0 or -errno. */
static int read_file(const char *cg, const char *file, char *buf, size_t n)
{
    char p[CG_PATH_MAX + 32];
    if (join(p, sizeof(p), cg, file) < 0)
        return -ENAMETOOLONG;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t r = read(fd, buf, n - 1);
    int e = r < 0 ? -errno : 0;
    close(fd);
    buf[r > 0 ? r : 0] = 0;
    return e;
}

int cg_freeze(const char *cg, int frozen)
{
    if (!cg || !*cg)
        return -EINVAL;
    const int v2 = exists(cg, "cgroup.freeze");
    if (!v2 && !exists(cg, "freezer.state"))
        return -ENOTSUP;
    int rc = v2 ? write_file(cg, "cgroup.freeze", frozen ? "1" : "0")
                : write_file(cg, "freezer.state", frozen ? "FROZEN" : "THAWED");
    if (rc < 0)
        return rc;
    /* the state is reached once every member has stopped (or left the refrigerator): v2 says "frozen 1" in
     * cgroup.events, v1 reads FROZEN (FREEZING while under way). A member inside a system call that sleeps
     * uninterruptibly (disk I/O) freezes only when it leaves it, which can take longer than any wait here; it runs
     * no code of its own meanwhile, so a freeze still under way after the wait counts as done (seen under ctest -j2:
     * FREEZING for over 1 s). A thaw is immediate. */
    for (int i = 0; i < 200; i++) {
        char buf[512];
        if ((rc = read_file(cg, v2 ? "cgroup.events" : "freezer.state", buf, sizeof(buf))) < 0)
            return rc;
        int done = v2 ? strstr(buf, frozen ? "frozen 1" : "frozen 0") != NULL
                      : strncmp(buf, frozen ? "FROZEN" : "THAWED", 6) == 0;
        if (done)
            return 0;
        nap_ms(5);
    }
    return frozen ? 0 : -ETIMEDOUT;
}

int cg_remove(const char *cg)
{
    cg_kill(cg);
    for (int i = 0; i < 200; i++) { /* the killed members may take a moment to leave */
        if (rmdir(cg) == 0 || errno == ENOENT)
            return 0;
        if (errno != EBUSY)
            return -errno;
        nap_ms(5);
    }
    return -EBUSY;
}

/* <hierarchy>/ibench made (0755) and writable: 0 or -errno */
static int prepare(struct cg_root *r, enum cg_kind kind, const char *hier, char *why, size_t len)
{
    r->kind = CG_NONE;
    int n = snprintf(r->dir, sizeof(r->dir), "%s/ibench", hier);
    if (n < 0 || (size_t)n >= sizeof(r->dir))
        return ib_why(why, len, -ENAMETOOLONG, "%s: path too long", hier);
    if (mkdir(r->dir, 0755) != 0 && errno != EEXIST)
        return ib_why(why, len, -errno, "cannot make %s: %s", r->dir, strerror(errno));
    if (access(r->dir, W_OK) != 0)
        return ib_why(why, len, -errno, "%s: %s", r->dir, strerror(errno));
    r->kind = kind;
    return 0;
}

int cg_root_at(struct cg_root *r, enum cg_kind kind, const char *hierarchy, char *why, size_t len)
{
    if (kind == CG_NONE || !hierarchy || !*hierarchy)
        return ib_why(why, len, -EINVAL, "no cgroup hierarchy given");
    return prepare(r, kind, hierarchy, why, len);
}

static int is_fs(const char *path, long magic)
{
    struct statfs f;
    return statfs(path, &f) == 0 && (long)f.f_type == magic;
}

/* v2 before Linux 5.14 has no cgroup.kill (a root cgroup never has one; its children do): not used then */
static int has_kill(struct cg_root *r, char *why, size_t len)
{
    char k[CG_PATH_MAX + 16];
    snprintf(k, sizeof(k), "%s/cgroup.kill", r->dir);
    if (access(k, F_OK) == 0)
        return 1;
    snprintf(why, len, "%s has no cgroup.kill", r->dir);
    r->kind = CG_NONE;
    return 0;
}

int cg_root_find(struct cg_root *r, char *why, size_t len)
{
    *r = (struct cg_root){.kind = CG_NONE};
    static const struct {
        enum cg_kind kind;
        const char *path;
        long magic;
    } cand[] = {
        {CG_V2, "/sys/fs/cgroup", CGROUP2_SUPER_MAGIC},
        {CG_V1, "/sys/fs/cgroup/freezer", CGROUP_SUPER_MAGIC},
        {CG_V1, "/sys/fs/cgroup/pids", CGROUP_SUPER_MAGIC},
        {CG_V2, "/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC},
    };
    char last[CG_PATH_MAX + 64] = "no cgroup hierarchy mounted under /sys/fs/cgroup";
    /* v2: first under ibench's own cgroup (delegated to a user, or a service's), so that the children stay within
     * its limits; a cgroup with processes has no domain controllers enabled below it, so this is always allowed */
    char own[CG_PATH_MAX + 300] = "";
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (f) {
        char line[CG_PATH_MAX + 8];
        while (fgets(line, sizeof(line), f))
            if (!strncmp(line, "0::/", 4) && line[4] != '\n') {
                line[strcspn(line, "\n")] = 0;
                snprintf(own, sizeof(own), "/sys/fs/cgroup%s", line + 3);
            }
        fclose(f);
    }
    for (size_t i = 0; i < IB_ARRAY_SIZE(cand); i++) {
        if (!is_fs(cand[i].path, cand[i].magic))
            continue;
        if (i == 0 && own[0]) { /* pure v2: its own cgroup, else the root */
            if (prepare(r, CG_V2, own, last, sizeof(last)) == 0 && has_kill(r, last, sizeof(last)))
                return 0;
        }
        if (prepare(r, cand[i].kind, cand[i].path, last, sizeof(last)) < 0)
            continue;
        if (cand[i].kind == CG_V2 && !has_kill(r, last, sizeof(last)))
            continue;
        return 0;
    }
    return ib_why(why, len, -ENOTSUP, "%s", last);
}

static void (*_Atomic make_hook)(int made, const char *path);

void cg_set_make_hook(void (*hook)(int made, const char *path))
{
    atomic_store(&make_hook, hook);
}

int cg_make(const struct cg_root *r, char *out, size_t outlen, char *why, size_t len)
{
    static atomic_uint seq;
    void (*hook)(int, const char *) = atomic_load(&make_hook);
    if (r->kind == CG_NONE)
        return ib_why(why, len, -ENOTSUP, "no cgroup hierarchy");
    for (int tries = 0; tries < 100; tries++) {
        unsigned n = atomic_fetch_add(&seq, 1);
        int w = snprintf(out, outlen, "%s/%d-%u", r->dir, (int)getpid(), n);
        if (w < 0 || (size_t)w >= outlen)
            return ib_why(why, len, -ENAMETOOLONG, "%s: path too long", r->dir);
        const int rc = fs_mkdir_told(out, 0755, hook);
        if (rc == 0)
            return 0;
        if (rc != -EEXIST)
            return ib_why(why, len, rc, "cannot make cgroup %s: %s", out, strerror(-rc));
    }
    return ib_why(why, len, -EEXIST, "cannot make a cgroup in %s", r->dir);
}

int cg_sweep_stale(const struct cg_root *r)
{
    if (r->kind == CG_NONE)
        return 0;
    DIR *d = opendir(r->dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '-' || pid <= 0)
            continue; /* not <pid>-<n>: not ours */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* its ibench is alive */
        char p[CG_PATH_MAX + 260];
        snprintf(p, sizeof(p), "%s/%s", r->dir, e->d_name);
        if (cg_remove(p) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

const char *cg_kind_name(enum cg_kind k)
{
    return k == CG_V2 ? "cgroup v2" : k == CG_V1 ? "cgroup v1" : "no cgroup";
}
