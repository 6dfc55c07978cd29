/* watchdog.c - cleans up after an ibench that died without doing so (watchdog.h). */
#define _GNU_SOURCE
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calib.h"
#include "cgroup.h"
#include "fsguard.h"
#include "ib_err.h"
#include "target.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int wd_fd = -1;    /* ibench's end of the socket */
static pid_t wd_pid = -1;

/* A message: '+' or '-', the kind ('C' cgroup, 'D' directory, 'A' a thread's CPU affinity to put back), the path or
 * entry; one datagram each (SOCK_SEQPACKET). "=" alone: ibench ends cleanly. */
#define MSG_MAX 4200

struct list {
    char **v;
    size_t n, cap;
};

static void list_add(struct list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **nv = realloc(l->v, cap * sizeof(*nv));
        if (!nv)
            return;
        l->v = nv;
        l->cap = cap;
    }
    char *d = strdup(s);
    if (d)
        l->v[l->n++] = d;
}

static void list_del(struct list *l, const char *s)
{
    for (size_t i = l->n; i-- > 0;)
        if (!strcmp(l->v[i], s)) {
            free(l->v[i]);
            l->v[i] = l->v[--l->n];
            return;
        }
}

/* Where the watchdog says what it cleaned up after an ibench that died, and what it could not: the system log
 * (LOG_USER, tag "ibench-watch") and one line each appended to $IBENCH_WATCHDOG_LOG, else <cache dir>/watchdog.log
 * (calib_dir). Chosen before the fork: the watchdog reads no environment of its own. */
static char log_path[4200];

static void wd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void wd_log(const char *fmt, ...)
{
    char line[4600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    syslog(LOG_WARNING, "%s", line);
    if (!log_path[0])
        return;
    char dir[sizeof(log_path)];
    snprintf(dir, sizeof(dir), "%s", log_path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) { /* its directory, made as the calibration cache's is */
        *slash = 0;
        calib_dir_make(dir);
    }
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char stamp[64];
    time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", localtime_r(&now, &tm));
    dprintf(fd, "%s ibench-watch[%d]: %s\n", stamp, (int)getpid(), line);
    close(fd);
}

/* '-A<pid>/' ends every affinity entry of that process */
static void list_del_prefix(struct list *l, const char *prefix)
{
    size_t n = strlen(prefix);
    for (size_t i = l->n; i-- > 0;)
        if (!strncmp(l->v[i], prefix, n)) {
            free(l->v[i]);
            l->v[i] = l->v[--l->n];
        }
}

/* Puts back the affinities listed ("<pid>/<tid> <start> <hex mask>", pin_saved_entry) of each process, and says
 * what it put back and what it could not. */
static void restore_affinities(struct list *aff, pid_t ibench)
{
    while (aff->n) {
        struct pin_saved s = {0};
        pid_t pid = (pid_t)atoi(aff->v[0]);
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "%d/", (int)pid);
        for (size_t i = 0; i < aff->n; i++)
            if (!strncmp(aff->v[i], prefix, strlen(prefix)))
                pin_saved_parse(&s, aff->v[i]);
        char why[256] = "";
        int rc = pin_restore(&s, why, sizeof(why));
        if (rc < 0 && rc != -ESRCH) {
            wd_log("ibench %d died; could not restore the CPU affinity of pid %d: %s", (int)ibench, (int)pid, why);
        } else if (rc == 0) {
            wd_log("ibench %d died; restored the CPU affinity of pid %d (%u threads)", (int)ibench, (int)pid, s.n);
        }
        pin_saved_free(&s);
        list_del_prefix(aff, prefix);
    }
}

/* 1 when ibench is gone: its pidfd readable, or (no pidfd) the watchdog reparented */
static int ibench_gone(int pidfd, pid_t ibench)
{
    if (pidfd >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        return poll(&p, 1, 0) > 0;
    }
    return getppid() != ibench;
}

/* The watchdog itself: reads ibench's messages until it ends, then cleans up what is still listed. ibench's end is
 * seen on either of two signs, whichever comes first: end-of-file on the socket (every holder of ibench's end
 * closed it) or ibench's process gone (its pidfd, else a changed parent). The second is needed because a child
 * forked by ibench holds that end until it execs, and one frozen by the freezer before its exec would hold it for
 * ever. Never returns. */
static void watch(int fd, pid_t ibench)
{
    /* only the socket (as fd 3): it must hold nothing of ibench's open (a pipe ibench's caller waits on, a lock) */
    if (fd != 3) {
        dup2(fd, 3);
        fd = 3;
    }
    if (syscall(SYS_close_range, 4U, ~0U, 0U) != 0)
        for (int i = 4; i < 65536; i++)
            close(i);
    close(0);
    close(1);
    close(2);
    int dn = open("/dev/null", O_RDWR);
    if (dn >= 0) {
        dup2(dn, 0);
        dup2(dn, 1);
        dup2(dn, 2);
        if (dn > 2)
            close(dn);
    }
    /* the terminal's signals reach ibench's whole process group; ibench handles them, the watchdog waits for it */
    static const int ign[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
    for (size_t i = 0; i < IB_ARRAY_SIZE(ign); i++)
        signal(ign[i], SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_NAME, "ibench-watch");
    openlog("ibench-watch", LOG_PID | LOG_NDELAY, LOG_USER);
    int pidfd = (int)syscall(SYS_pidfd_open, ibench, 0); /* -1 before Linux 5.3: the parent is polled instead */
    struct list cgs = {0}, dirs = {0}, aff = {0};
    int clean_end = 0;
    char buf[MSG_MAX + 1];
    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
        int pr = poll(p, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 250);
        if (pr < 0 && errno != EINTR)
            break;
        /* what ibench said before it ended is still queued: read it all before cleaning up */
        int gone = ibench_gone(pidfd, ibench);
        ssize_t n = recv(fd, buf, MSG_MAX, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            if (gone)
                break;
            continue;
        }
        if (n <= 0)
            break;
        buf[n] = 0;
        if (n == 1 && buf[0] == '=') { /* a clean end: what is still listed is cleaned up all the same */
            clean_end = 1;
            continue;
        }
        if (n < 3 || (buf[0] != '+' && buf[0] != '-'))
            continue;
        struct list *l = buf[1] == 'C' ? &cgs : buf[1] == 'D' ? &dirs : buf[1] == 'A' ? &aff : NULL;
        if (!l)
            continue;
        if (buf[0] == '+')
            list_add(l, buf + 2);
        else if (l == &aff)
            list_del_prefix(l, buf + 2);
        else
            list_del(l, buf + 2);
    }
    /* the processes first: they may be writing in the directories. Each cgroup is thawed before anything waits on
     * it (a frozen process acts on no signal, SIGKILL included, in a v1 freezer); cg_remove is bounded. */
    for (size_t i = 0; i < cgs.n; i++) {
        struct stat st;
        if (stat(cgs.v[i], &st) != 0) /* told of before it was made: ibench died before making it */
            continue;
        cg_freeze(cgs.v[i], 0);
        int rc = cg_remove(cgs.v[i]);
        if (rc < 0)
            wd_log("ibench %d ended; could not remove cgroup %s: %s (its processes: %s/cgroup.procs)", (int)ibench,
                   cgs.v[i], strerror(-rc), cgs.v[i]);
        else if (!clean_end)
            wd_log("ibench %d died; killed and removed cgroup %s", (int)ibench, cgs.v[i]);
    }
    restore_affinities(&aff, ibench);
    for (size_t i = 0; i < dirs.n; i++) {
        int rc = fs_remove_private_dir(dirs.v[i]);
        if (rc < 0 && rc != -ENOENT)
            wd_log("ibench %d ended; could not remove %s: %s", (int)ibench, dirs.v[i], strerror(-rc));
        else if (rc == 0 && !clean_end)
            wd_log("ibench %d died; removed %s", (int)ibench, dirs.v[i]);
    }
    _exit(0);
}

static void dir_hook(int made, const char *path)
{
    watchdog_note('D', made, path);
}

static void cg_hook(int made, const char *path)
{
    watchdog_note('C', made, path);
}

int watchdog_start(char *why, size_t len)
{
    pthread_mutex_lock(&mu);
    if (wd_fd >= 0) {
        pthread_mutex_unlock(&mu);
        return 0;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        int e = errno;
        pthread_mutex_unlock(&mu);
        return ib_why(why, len, -e, "watchdog: socketpair: %s", strerror(e));
    }
    const char *lp = getenv("IBENCH_WATCHDOG_LOG");
    char cd[4096];
    snprintf(log_path, sizeof(log_path), "%s", lp && *lp ? lp : "");
    if (!log_path[0] && snprintf(log_path, sizeof(log_path), "%s/watchdog.log", calib_dir(cd, sizeof(cd))) < 0)
        log_path[0] = 0;
    pid_t ibench = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        pthread_mutex_unlock(&mu);
        return ib_why(why, len, -e, "watchdog: fork: %s", strerror(e));
    }
    if (pid == 0)
        watch(sv[1], ibench); /* closes sv[0] with the rest */
    close(sv[1]);
    wd_fd = sv[0];
    wd_pid = pid;
    pthread_mutex_unlock(&mu);
    fs_set_dir_hook(dir_hook);
    cg_set_make_hook(cg_hook);
    return 0;
}

void watchdog_stop(void)
{
    fs_set_dir_hook(NULL);
    cg_set_make_hook(NULL);
    pthread_mutex_lock(&mu);
    if (wd_fd >= 0) {
        send(wd_fd, "=", 1, MSG_NOSIGNAL); /* a clean end, even while a child forked before its exec holds the socket */
        close(wd_fd);
    }
    wd_fd = -1;
    pid_t pid = wd_pid;
    wd_pid = -1;
    pthread_mutex_unlock(&mu);
    if (pid <= 0)
        return;
    for (int i = 0; i < 400; i++) { /* it exits as soon as it reads end-of-file; bounded all the same */
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

void watchdog_note(char kind, int made, const char *path)
{
    char msg[MSG_MAX];
    size_t n = path ? strlen(path) : 0;
    if (!n || n + 2 > sizeof(msg))
        return;
    msg[0] = made ? '+' : '-';
    msg[1] = kind;
    memcpy(msg + 2, path, n);
    pthread_mutex_lock(&mu);
    if (wd_fd >= 0)
        send(wd_fd, msg, n + 2, MSG_NOSIGNAL);
    pthread_mutex_unlock(&mu);
}

pid_t watchdog_pid(void)
{
    pthread_mutex_lock(&mu);
    pid_t p = wd_pid;
    pthread_mutex_unlock(&mu);
    return p;
}
