/* target.c - children of a profile: spawned in their own process group and cgroup, pinned, always taken down
 * (target.h). */
#define _GNU_SOURCE
#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ib_err.h"
#include "readfile.h"
#include "watchdog.h"

extern char **environ;

static pthread_mutex_t cont_mu = PTHREAD_MUTEX_INITIALIZER;
static int cont_known;
static struct cg_root cont_root;
static char cont_why[256];

/* The live children, for child_kill_all in a signal handler: a slot's cgroup is written before its pid is published
 * and the pid cleared before the slot is reused. */
#define KILL_SLOTS 64
static struct {
    atomic_int pid;
    char cg[CG_PATH_MAX];
} slots[KILL_SLOTS];

static void cont_find_locked(void)
{
    if (cont_known)
        return;
    cont_known = 1;
    if (cg_root_find(&cont_root, cont_why, sizeof(cont_why)) == 0)
        cg_sweep_stale(&cont_root); /* left by an ibench that died before its watchdog could act */
}

enum cg_kind child_containment(char *desc, size_t len)
{
    pthread_mutex_lock(&cont_mu);
    cont_find_locked();
    enum cg_kind k = cont_root.kind;
    if (desc && len) {
        if (k != CG_NONE)
            snprintf(desc, len, "%s (%s)", cg_kind_name(k), cont_root.dir);
        else
            snprintf(desc, len, "process group + PR_SET_PDEATHSIG (no cgroup: %s)", cont_why);
    }
    pthread_mutex_unlock(&cont_mu);
    return k;
}

void child_containment_set(const struct cg_root *r)
{
    pthread_mutex_lock(&cont_mu);
    cont_known = 1;
    if (r) {
        cont_root = *r;
    } else {
        cont_root = (struct cg_root){.kind = CG_NONE};
        snprintf(cont_why, sizeof(cont_why), "turned off");
    }
    pthread_mutex_unlock(&cont_mu);
}

void child_kill_all(void)
{
    for (int i = 0; i < KILL_SLOTS; i++) {
        int pid = atomic_load(&slots[i].pid);
        if (pid <= 0)
            continue;
        kill(-pid, SIGKILL);
        if (slots[i].cg[0])
            cg_kill(slots[i].cg);
    }
}

/* A slot for c (-1 when all are taken: then only child_stop reaches it) */
static int slot_take(const struct child *c)
{
    for (int i = 0; i < KILL_SLOTS; i++) {
        int z = 0;
        if (atomic_compare_exchange_strong(&slots[i].pid, &z, -1)) {
            memcpy(slots[i].cg, c->cg, sizeof(slots[i].cg));
            atomic_store(&slots[i].pid, (int)c->pid);
            return i;
        }
    }
    return -1;
}

static void slot_free(struct child *c)
{
    if (c->slot >= 0)
        atomic_store(&slots[c->slot].pid, 0);
    c->slot = -1;
}

/* SIGKILL to everything left in c's cgroup, reaping those that came back to ibench (a subreaper) as orphans, and
 * the cgroup removed. */
static void cg_drop(struct child *c)
{
    if (!c->cg[0])
        return;
    pid_t pids[256];
    int n = 0;
    char p[CG_PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/cgroup.procs", c->cg);
    FILE *f = fopen(p, "re");
    if (f) {
        int v;
        while (n < (int)IB_ARRAY_SIZE(pids) && fscanf(f, "%d", &v) == 1)
            pids[n++] = v;
        fclose(f);
    }
    cg_remove(c->cg);
    for (int i = 0; i < n; i++) {
        int st;
        for (int k = 0; k < 100 && waitpid(pids[i], &st, WNOHANG) == 0; k++) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    watchdog_note('C', 0, c->cg);
    c->cg[0] = 0;
}

/* dup2(from, to), where from == to (stdin was closed, so open() returned 0) also clears FD_CLOEXEC */
static void fd_to(int from, int to)
{
    if (from == to)
        fcntl(to, F_SETFD, 0);
    else
        dup2(from, to);
}

int child_spawn(const char *cmd, const int *cpus, unsigned ncpus, int capture, int show_err, struct child *c,
                char *why, size_t len)
{
    *c = (struct child){.pid = -1, .out_fd = -1, .slot = -1};
    if (!cmd || !*cmd)
        return ib_why(why, len, -EINVAL, "empty command");
    pthread_mutex_lock(&cont_mu);
    cont_find_locked();
    struct cg_root root = cont_root;
    pthread_mutex_unlock(&cont_mu);
    char cw[256];
    /* no cgroup for this one (cannot make it): it is still contained as where there are none */
    if (root.kind != CG_NONE && cg_make(&root, c->cg, sizeof(c->cg), cw, sizeof(cw)) < 0)
        c->cg[0] = 0; /* (the watchdog was told of the name by cg_make's hook, before it was made) */
    int pfd[2] = {-1, -1};
    if (capture && pipe2(pfd, O_CLOEXEC) < 0) {
        int e = errno;
        cg_drop(c);
        return ib_why(why, len, -e, "pipe: %s", strerror(e));
    }
    /* closed by the child's exec (or exit): child_spawn returns only then, so that a child is never paused (frozen)
     * while it is still a copy of ibench, holding ibench's descriptors (the watchdog's socket, a caller's pipe) */
    int xfd[2];
    if (pipe2(xfd, O_CLOEXEC) < 0) {
        int e = errno;
        if (capture) {
            close(pfd[0]);
            close(pfd[1]);
        }
        cg_drop(c);
        return ib_why(why, len, -e, "pipe: %s", strerror(e));
    }
    pid_t parent = getpid();
    /* fork rather than posix_spawn: the child pins itself and makes its own group before exec */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        if (capture) {
            close(pfd[0]);
            close(pfd[1]);
        }
        close(xfd[0]);
        close(xfd[1]);
        cg_drop(c);
        return ib_why(why, len, -e, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(xfd[0]);
        setpgid(0, 0);
        /* in its cgroup before exec, so that nothing it starts is outside it */
        if (c->cg[0])
            cg_enter(c->cg);
        /* dies with ibench even where no cgroup holds it (spawned from the main thread: the signal follows the
         * thread that forked); ibench may already be gone */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(125);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        if (ncpus) {
            cpu_set_t set;
            CPU_ZERO(&set);
            for (unsigned i = 0; i < ncpus; i++)
                CPU_SET(cpus[i], &set);
            if (sched_setaffinity(0, sizeof(set), &set) < 0)
                _exit(126);
        }
        /* O_CLOEXEC: the target gets /dev/null as 0-2, not a stray copy of it; dup2 clears the flag on 0-2 */
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (dn >= 0) {
            fd_to(dn, 0);
            if (!capture)
                fd_to(dn, 1);
            if (!show_err)
                fd_to(dn, 2);
        }
        if (capture)
            fd_to(pfd[1], 1);
        execle("/bin/sh", "sh", "-c", cmd, (char *)NULL, environ);
        _exit(127);
    }
    setpgid(pid, pid); /* both sides, so no race with an early signal */
    if (c->cg[0])
        cg_add(c->cg, pid);
    close(xfd[1]);
    char b;
    while (read(xfd[0], &b, 1) < 0 && errno == EINTR)
        ; /* end-of-file: exec'd, or exited before it (the status says so when it is reaped) */
    close(xfd[0]);
    c->pid = pid;
    c->slot = slot_take(c);
    c->t0_ns = clk_mono_ns();
    if (capture) {
        close(pfd[1]);
        c->out_fd = pfd[0];
    }
    return 0;
}

int child_poll(struct child *c)
{
    if (c->pid < 0 || c->exited)
        return 1;
    int st;
    struct rusage ru;
    pid_t r = wait4(c->pid, &st, WNOHANG, &ru);
    if (r == c->pid) {
        c->exited = 1;
        c->status = st;
        /* wait4 counts the child and the descendants it waited for: sh -c and the program it ran */
        c->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                   (double)ru.ru_stime.tv_usec / 1e6;
        return 1;
    }
    return 0;
}

int child_pause(struct child *c, int paused, const char **how, char *why, size_t len)
{
    if (c->pid <= 0 || c->exited)
        return ib_why(why, len, -ESRCH, "no running child to %s", paused ? "pause" : "resume");
    int rc = c->cg[0] ? cg_freeze(c->cg, paused) : -ENOTSUP;
    if (rc == 0) {
        c->frozen = paused;
        if (how)
            *how = "freezer";
        return 0;
    }
    if (rc != -ENOTSUP)
        return ib_why(why, len, rc, "cannot %s %s: %s", paused ? "freeze" : "thaw", c->cg, strerror(-rc));
    /* no freezer: the process group, which a process that called setsid has left */
    if (kill(-c->pid, paused ? SIGSTOP : SIGCONT) < 0 && errno != ESRCH)
        return ib_why(why, len, -errno, "cannot signal process group %d: %s", (int)c->pid, strerror(errno));
    if (how)
        *how = "signals";
    return 0;
}

void child_stop(struct child *c, unsigned grace_ms)
{
    if (c->frozen) { /* a frozen process acts on no signal, SIGKILL included (v1), until it is thawed */
        cg_freeze(c->cg, 0);
        c->frozen = 0;
    }
    if (c->pid > 0) {
        if (!child_poll(c))
            kill(-c->pid, SIGTERM);
        uint64_t until = clk_mono_ns() + (uint64_t)grace_ms * 1000000ULL;
        while (!child_poll(c) && clk_mono_ns() < until) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
        if (!c->exited) {
            kill(-c->pid, SIGKILL);
            int st;
            if (waitpid(c->pid, &st, 0) == c->pid) {
                c->exited = 1;
                c->status = st;
            }
        }
        kill(-c->pid, SIGKILL); /* whatever of its group is left (the leader is gone: ESRCH is fine) */
        /* with ibench a subreaper (cmd_profile sets it around profile_run), the group's orphans are ours to reap:
         * no zombie outlives it */
        int st;
        for (int i = 0; i < 1000 && waitpid(-c->pid, &st, WNOHANG) > 0; i++)
            ;
        slot_free(c);
    }
    cg_drop(c); /* what left the group (setsid, a daemon) is still in the cgroup */
    if (c->out_fd >= 0)
        close(c->out_fd);
    c->out_fd = -1;
}

int child_run(const char *cmd, const int *cpus, unsigned ncpus, unsigned timeout_ms, const atomic_int *stop,
              char **out, int *status, uint64_t *wall_ns, double *cpu_s, char *why, size_t len)
{
    *out = NULL;
    struct child c;
    int rc = child_spawn(cmd, cpus, ncpus, 1, 0, &c, why, len);
    if (rc < 0)
        return rc;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        child_stop(&c, 100);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    uint64_t deadline = c.t0_ns + (uint64_t)timeout_ms * 1000000ULL;
    int eof = 0;
    rc = 0;
    while (!eof || !child_poll(&c)) {
        if (stop && atomic_load(stop)) {
            rc = -EINTR;
            break;
        }
        if (clk_mono_ns() > deadline) {
            rc = ib_why(why, len, -ETIMEDOUT, "'%s' did not finish within %u s", cmd, timeout_ms / 1000);
            break;
        }
        if (eof) { /* output closed, process still running: wait for it */
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd p = {.fd = c.out_fd, .events = POLLIN};
        int pr = poll(&p, 1, 20);
        if (pr < 0 && errno != EINTR) {
            rc = ib_why(why, len, -errno, "poll: %s", strerror(errno));
            break;
        }
        if (pr <= 0)
            continue;
        if (n + 1 >= cap && cap < (1u << 20)) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                break;
            }
            buf = nb;
            cap *= 2;
        }
        char sink[4096];
        char *dst = n + 1 < cap ? buf + n : sink; /* beyond 1 MiB: read and drop */
        size_t room = n + 1 < cap ? cap - n - 1 : sizeof(sink);
        ssize_t r = read(c.out_fd, dst, room);
        if (r > 0 && dst == buf + n)
            n += (size_t)r;
        else if (r == 0)
            eof = 1;
        else if (r < 0 && errno != EINTR && errno != EAGAIN)
            eof = 1;
    }
    *wall_ns = clk_mono_ns() - c.t0_ns;
    if (rc < 0) {
        child_stop(&c, 200);
        free(buf);
        return rc;
    }
    child_stop(&c, 0); /* reaped already; closes the pipe and clears its group */
    buf[n] = 0;
    *out = buf;
    *status = c.status;
    if (cpu_s)
        *cpu_s = c.cpu_s;
    return 0;
}

int pid_check(pid_t pid, char *why, size_t len)
{
    if (pid <= 0)
        return ib_why(why, len, -EINVAL, "--pid %d is not a process id", (int)pid);
    if (kill(pid, 0) < 0)
        return ib_why(why, len, -errno, "--pid %d: %s", (int)pid,
                      errno == ESRCH ? "no such process" : strerror(errno));
    return 0;
}

/* /proc/<pid>/stat field 22, the start time in clock ticks; 0 when unreadable */
static unsigned long long start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (ib_read_small(path, buf, sizeof(buf)) < 0)
        return 0;
    char *p = strrchr(buf, ')'); /* comm may hold spaces: count fields after it (field 3 is the first) */
    if (!p)
        return 0;
    p++;
    for (int field = 2; field < 21 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

static void mask_from_set(uint64_t *m, const cpu_set_t *set)
{
    memset(m, 0, PIN_MASK_WORDS * sizeof(*m));
    for (int c = 0; c < PIN_MASK_WORDS * 64 && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            m[c / 64] |= 1ULL << (c % 64);
}

static void set_from_mask(cpu_set_t *set, const uint64_t *m)
{
    CPU_ZERO(set);
    for (int c = 0; c < PIN_MASK_WORDS * 64 && c < CPU_SETSIZE; c++)
        if (m[c / 64] >> (c % 64) & 1)
            CPU_SET(c, set);
}

static int saved_add(struct pin_saved *s, pid_t tid, const uint64_t *mask)
{
    pid_t *nt = realloc(s->tid, (s->n + 1) * sizeof(*nt));
    if (!nt)
        return -ENOMEM;
    s->tid = nt;
    uint64_t(*nm)[PIN_MASK_WORDS] = realloc(s->mask, (s->n + 1) * sizeof(*nm));
    if (!nm)
        return -ENOMEM;
    s->mask = nm;
    s->tid[s->n] = tid;
    memcpy(s->mask[s->n], mask, sizeof(*nm));
    s->n++;
    return 0;
}

void pin_saved_free(struct pin_saved *s)
{
    free(s->tid);
    free(s->mask);
    *s = (struct pin_saved){0};
}

int pin_saved_entry(const struct pin_saved *s, unsigned i, char *out, size_t len)
{
    if (i >= s->n)
        return -EINVAL;
    int w = snprintf(out, len, "%d/%d %llu ", (int)s->pid, (int)s->tid[i], s->start);
    for (int k = PIN_MASK_WORDS; k-- > 0 && w > 0 && (size_t)w < len;)
        w += snprintf(out + w, len - (size_t)w, "%016llx", (unsigned long long)s->mask[i][k]);
    return w > 0 && (size_t)w < len ? 0 : -ENAMETOOLONG;
}

int pin_saved_parse(struct pin_saved *s, const char *entry)
{
    int pid = 0, tid = 0;
    unsigned long long start = 0;
    int used = 0;
    if (sscanf(entry, "%d/%d %llu %n", &pid, &tid, &start, &used) != 3 || pid <= 0 || tid <= 0 ||
        (s->pid && s->pid != pid) || strlen(entry + used) != PIN_MASK_WORDS * 16)
        return -EINVAL;
    uint64_t m[PIN_MASK_WORDS];
    for (int k = 0; k < PIN_MASK_WORDS; k++) {
        char word[17];
        memcpy(word, entry + used + (PIN_MASK_WORDS - 1 - k) * 16, 16);
        word[16] = 0;
        char *end;
        m[k] = strtoull(word, &end, 16);
        if (*end)
            return -EINVAL;
    }
    s->pid = pid;
    s->start = start;
    return saved_add(s, tid, m);
}

int pin_restore(const struct pin_saved *s, char *why, size_t len)
{
    if (!s->pid || !s->n)
        return 0;
    if (s->start && start_time(s->pid) != s->start) /* gone, or its pid now another process's */
        return ib_why(why, len, -ESRCH, "pid %d is gone", (int)s->pid);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)s->pid);
    DIR *d = opendir(path);
    if (!d) /* no such directory: the process is gone */
        return ib_why(why, len, errno == ENOENT ? -ESRCH : -errno, "%s: %s", path, strerror(errno));
    /* a thread started since the pin inherited the pinned set: it gets the main thread's (else the first saved) */
    const uint64_t *fallback = s->mask[0];
    for (unsigned i = 0; i < s->n; i++)
        if (s->tid[i] == s->pid)
            fallback = s->mask[i];
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        const uint64_t *m = fallback;
        for (unsigned i = 0; i < s->n; i++)
            if (s->tid[i] == tid)
                m = s->mask[i];
        cpu_set_t set;
        set_from_mask(&set, m);
        if (sched_setaffinity(tid, sizeof(set), &set) < 0 && errno != ESRCH && rc == 0)
            rc = ib_why(why, len, -errno, "cannot put back the affinity of thread %d of %d: %s", (int)tid,
                        (int)s->pid, strerror(errno));
    }
    closedir(d);
    return rc;
}

int pid_unpin(struct pin_saved *saved, char *why, size_t len)
{
    if (!saved || !saved->pid)
        return 0;
    int rc = pin_restore(saved, why, len);
    char key[32];
    snprintf(key, sizeof(key), "%d/", (int)saved->pid);
    watchdog_note('A', 0, key);
    pin_saved_free(saved);
    return rc;
}

int pid_pin(pid_t pid, const int *cpus, unsigned ncpus, struct pin_saved *saved, char *why, size_t len)
{
    struct pin_saved *s = saved;
    *s = (struct pin_saved){.pid = pid, .start = start_time(pid)};
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) {
        int e = errno;
        *s = (struct pin_saved){0};
        return ib_why(why, len, -e, "%s: %s", path, strerror(e));
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned i = 0; i < ncpus; i++)
        CPU_SET(cpus[i], &set);
    struct dirent *e;
    int rc = 0, n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        cpu_set_t was;
        if (sched_getaffinity(tid, sizeof(was), &was) < 0) {
            if (errno == ESRCH)
                continue;
            rc = ib_why(why, len, -errno, "cannot read the affinity of thread %d of %d: %s", (int)tid, (int)pid,
                        strerror(errno));
            break;
        }
        uint64_t m[PIN_MASK_WORDS];
        mask_from_set(m, &was);
        if (saved_add(s, tid, m) < 0) {
            rc = ib_why(why, len, -ENOMEM, "out of memory");
            break;
        }
        /* told to the watchdog before the change, so that a SIGKILL right after it is undone too */
        char entry[64 + PIN_MASK_WORDS * 16];
        if (pin_saved_entry(s, s->n - 1, entry, sizeof(entry)) == 0)
            watchdog_note('A', 1, entry);
        if (sched_setaffinity(tid, sizeof(set), &set) < 0 && errno != ESRCH) {
            rc = ib_why(why, len, -errno, "cannot pin thread %d of %d: %s", (int)tid, (int)pid, strerror(errno));
            break;
        }
        n++;
    }
    closedir(d);
    if (rc == 0 && n == 0)
        rc = ib_why(why, len, -ESRCH, "--pid %d has no threads left", (int)pid);
    if (rc < 0) { /* put back what was pinned */
        pin_restore(s, NULL, 0);
        char key[32];
        snprintf(key, sizeof(key), "%d/", (int)pid);
        watchdog_note('A', 0, key);
        pin_saved_free(s);
    }
    return rc;
}

void status_text(int status, char *buf, size_t len)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 65)
        /* sh -c reports a program it ran that died of signal N as status 128 + N */
        snprintf(buf, len, "exited with status %d (killed by signal %d: %s, as the shell reports it)",
                 WEXITSTATUS(status), WEXITSTATUS(status) - 128, strsignal(WEXITSTATUS(status) - 128));
    else if (WIFEXITED(status))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "ended with wait status %#x", status);
}

/* /proc/PID/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses, so parse after the last
 * ')'. statm's second field is resident pages. */
static double rss_of(const char *pid, pid_t pgid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *rp = strrchr(buf, ')');
    int ppid = 0, pgrp = 0;
    char st = 0;
    if (!rp || sscanf(rp + 1, " %c %d %d", &st, &ppid, &pgrp) != 3)
        return 0;
    if (pgid > 0 && pgrp != pgid)
        return 0;
    snprintf(path, sizeof(path), "/proc/%s/statm", pid);
    if (!(f = fopen(path, "re")))
        return 0;
    unsigned long size = 0, res = 0;
    int ok = fscanf(f, "%lu %lu", &size, &res) == 2;
    fclose(f);
    return ok ? (double)res * (double)sysconf(_SC_PAGESIZE) : 0;
}

double group_rss_bytes(pid_t pgid)
{
    if (pgid < 0) {
        char p[32];
        snprintf(p, sizeof(p), "%d", (int)-pgid);
        return rss_of(p, 0);
    }
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    double sum = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
            sum += rss_of(e->d_name, pgid);
    closedir(d);
    return sum;
}
