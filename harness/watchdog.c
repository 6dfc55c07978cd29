/* watchdog.c - cleans up after an ibench that died without doing so (watchdog.h). */
#define _GNU_SOURCE
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "fsguard.h"
#include "ib_err.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int wd_fd = -1;    /* ibench's end of the socket */
static pid_t wd_pid = -1;

/* A message: '+' or '-', the kind ('C' cgroup, 'D' directory), the path; one datagram each (SOCK_SEQPACKET). */
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

/* The watchdog itself: reads until end-of-file, then cleans up what is still listed. Never returns. */
static void watch(int fd)
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
    struct list cgs = {0}, dirs = {0};
    char buf[MSG_MAX + 1];
    for (;;) {
        ssize_t n = recv(fd, buf, MSG_MAX, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        buf[n] = 0;
        if (n < 3 || (buf[0] != '+' && buf[0] != '-'))
            continue;
        struct list *l = buf[1] == 'C' ? &cgs : buf[1] == 'D' ? &dirs : NULL;
        if (!l)
            continue;
        if (buf[0] == '+')
            list_add(l, buf + 2);
        else
            list_del(l, buf + 2);
    }
    /* the processes first: they may be writing in the directories */
    for (size_t i = 0; i < cgs.n; i++)
        cg_remove(cgs.v[i]);
    for (size_t i = 0; i < dirs.n; i++)
        fs_remove_private_dir(dirs.v[i]);
    _exit(0);
}

static void dir_hook(int made, const char *path)
{
    watchdog_note('D', made, path);
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
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        pthread_mutex_unlock(&mu);
        return ib_why(why, len, -e, "watchdog: fork: %s", strerror(e));
    }
    if (pid == 0)
        watch(sv[1]); /* closes sv[0] with the rest */
    close(sv[1]);
    wd_fd = sv[0];
    wd_pid = pid;
    pthread_mutex_unlock(&mu);
    fs_set_dir_hook(dir_hook);
    return 0;
}

void watchdog_stop(void)
{
    fs_set_dir_hook(NULL);
    pthread_mutex_lock(&mu);
    if (wd_fd >= 0)
        close(wd_fd);
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
