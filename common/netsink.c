/* netsink.c - the ibench sink and the client handshake (netsink.h). */
#define _GNU_SOURCE
#include "netsink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* tcp_info with tcpi_bytes_acked (glibc's netinet/tcp.h lacks it) */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "ib_err.h"

int sink_parse_addr(const char *s, int def_port, struct sockaddr_storage *sa, unsigned *salen, char *why, size_t len)
{
    char host[256], port[16];
    if (!s || !*s || strlen(s) >= sizeof(host))
        return ib_why(why, len, -EINVAL, "empty or overlong address");
    const char *p;
    if (s[0] == '[') { /* [v6]:port */
        const char *e = strchr(s, ']');
        if (!e)
            return ib_why(why, len, -EINVAL, "address '%s': missing ']'", s);
        snprintf(host, sizeof(host), "%.*s", (int)(e - s - 1), s + 1);
        p = e[1] == ':' ? e + 2 : (e[1] ? NULL : "");
        if (!p)
            return ib_why(why, len, -EINVAL, "address '%s': expected [ADDR]:PORT", s);
    } else {
        const char *c = strrchr(s, ':');
        if (c && strchr(s, ':') != c) /* bare IPv6 without brackets: no port */
            c = NULL;
        snprintf(host, sizeof(host), "%.*s", c ? (int)(c - s) : (int)strlen(s), s);
        p = c ? c + 1 : "";
    }
    if (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (*end || v < 0 || v > 65535)
            return ib_why(why, len, -EINVAL, "address '%s': bad port '%s'", s, p);
        snprintf(port, sizeof(port), "%ld", v);
    } else {
        snprintf(port, sizeof(port), "%d", def_port);
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc || !res)
        return ib_why(why, len, -EINVAL, "address '%s': '%s' is not a numeric IP address (nothing is resolved)", s,
                      host);
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    *salen = (unsigned)res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static void addr_str(const struct sockaddr_storage *sa, char *buf, size_t len)
{
    char h[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, h, sizeof(h));
        port = ntohs(a->sin_port);
        snprintf(buf, len, "%s:%d", h, port);
    } else {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, h, sizeof(h));
        port = ntohs(a->sin6_port);
        snprintf(buf, len, "[%s]:%d", h, port);
    }
}

/* ---- the sink ------------------------------------------------------------------------------------------------
 * Teardown is bounded whatever the peers do: every thread's only waits are polls that also watch the stop pipe
 * (the handshake's read too), the listening socket is non-blocking and the one write (the handshake's answer) never
 * blocks, so sink_stop's joins return as soon as each thread sees the pipe close. */

struct sink_conn {
    struct sink *s;
    int fd;
    pthread_t th;
    int used, done;
};

struct sink {
    int lfd;
    int cpu;            /* bind the threads here when >= 0 */
    int wake[2];        /* a pipe: closing the write end wakes every poll */
    struct sink_report rep; /* rep.closed NULL: nobody to tell */
    pthread_t acc;
    char addr[80];
    pthread_mutex_t mu;
    uint64_t bytes;
    unsigned nconn, active;
    struct sink_conn conn[SINK_MAX_CONN];
};

/* One line from fd within timeout_ms. wake >= 0: a stop pipe watched too (-ECANCELED once it fires), so that a peer
 * silent in the handshake cannot hold the sink's teardown. */
static int read_line(int fd, int wake, char *buf, size_t len, int timeout_ms)
{
    size_t n = 0;
    uint64_t end = clk_mono_ns() + (uint64_t)timeout_ms * IB_NS_PER_MS;
    while (n + 1 < len) {
        uint64_t now = clk_mono_ns();
        if (now >= end)
            return -ETIMEDOUT;
        struct pollfd p[2] = {{fd, POLLIN, 0}, {wake, POLLIN, 0}};
        int r = poll(p, wake >= 0 ? 2 : 1, (int)((end - now) / IB_NS_PER_MS) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -ETIMEDOUT;
        if (wake >= 0 && p[1].revents)
            return -ECANCELED;
        ssize_t k = read(fd, buf + n, 1);
        if (k == 0)
            return -ECONNRESET;
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (buf[n++] == '\n')
            break;
    }
    buf[n] = 0;
    return (int)n;
}

static void bind_here(int cpu)
{
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *conn_main(void *arg)
{
    struct sink_conn *c = arg;
    struct sink *s = c->s;
    bind_here(s->cpu);
    char line[64];
    uint64_t got = 0, t0 = clk_mono_ns();
    int rc = read_line(c->fd, s->wake[0], line, sizeof(line), 2000);
    /* the answer fits any socket's send buffer: it never waits on the peer (nor raises SIGPIPE if it left) */
    if (rc > 0 && !strcmp(line, SINK_HELLO) &&
        send(c->fd, SINK_OK, strlen(SINK_OK), MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)strlen(SINK_OK)) {
        size_t bl = 1 << 20;
        char *buf = malloc(bl);
        while (buf) {
            struct pollfd p[2] = {{c->fd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
            if (poll(p, 2, -1) < 0 && errno != EINTR)
                break;
            if (p[1].revents)
                break;
            if (!p[0].revents)
                continue;
            ssize_t k = recv(c->fd, buf, bl, 0);
            if (k <= 0) {
                if (k < 0 && errno == EINTR)
                    continue;
                break;
            }
            got += (uint64_t)k;
            pthread_mutex_lock(&s->mu);
            s->bytes += (uint64_t)k;
            pthread_mutex_unlock(&s->mu);
        }
        free(buf);
    }
    double secs = (double)(clk_mono_ns() - t0) / 1e9;
    if (s->rep.closed)
        s->rep.closed(s->rep.arg, got, secs);
    close(c->fd);
    pthread_mutex_lock(&s->mu);
    s->active--;
    c->done = 1;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void reap(struct sink *s, int all)
{
    for (int i = 0; i < SINK_MAX_CONN; i++) {
        struct sink_conn *c = &s->conn[i];
        pthread_mutex_lock(&s->mu);
        int join = c->used && (c->done || all);
        pthread_mutex_unlock(&s->mu);
        if (join) {
            pthread_join(c->th, NULL);
            c->used = c->done = 0;
        }
    }
}

static void *accept_main(void *arg)
{
    struct sink *s = arg;
    bind_here(s->cpu);
    for (;;) {
        struct pollfd p[2] = {{s->lfd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
        if (poll(p, 2, 500) < 0 && errno != EINTR)
            break;
        if (p[1].revents)
            break;
        reap(s, 0);
        if (!(p[0].revents & POLLIN))
            continue;
        int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int slot = -1;
        for (int i = 0; i < SINK_MAX_CONN && slot < 0; i++)
            if (!s->conn[i].used)
                slot = i;
        if (slot < 0) { /* full: refuse */
            close(fd);
            continue;
        }
        struct sink_conn *c = &s->conn[slot];
        *c = (struct sink_conn){.s = s, .fd = fd, .used = 1};
        pthread_mutex_lock(&s->mu);
        s->nconn++;
        s->active++;
        pthread_mutex_unlock(&s->mu);
        if (pthread_create(&c->th, NULL, conn_main, c)) {
            close(fd);
            pthread_mutex_lock(&s->mu);
            s->active--;
            pthread_mutex_unlock(&s->mu);
            c->used = 0;
        }
    }
    return NULL;
}

int sink_start(const char *addr, int cpu, const struct sink_report *rep, struct sink **out, char *why, size_t len)
{
    struct sockaddr_storage sa;
    unsigned salen = 0;
    int rc = sink_parse_addr(addr, SINK_DEFAULT_PORT, &sa, &salen, why, len);
    if (rc < 0)
        return rc;
    struct sink *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    if (rep)
        s->rep = *rep;
    s->cpu = cpu;
    s->wake[0] = s->wake[1] = -1;
    pthread_mutex_init(&s->mu, NULL);
    /* non-blocking: accept never waits for a connection that went away between poll and accept */
    s->lfd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (s->lfd < 0) {
        rc = ib_why(why, len, -errno, "sink: socket: %s", strerror(errno));
        goto fail;
    }
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s->lfd, (struct sockaddr *)&sa, salen) != 0) {
        rc = ib_why(why, len, -errno, "sink: cannot listen on %s: %s", addr, strerror(errno));
        goto fail;
    }
    if (listen(s->lfd, 16) != 0 || pipe2(s->wake, O_CLOEXEC) != 0) {
        rc = ib_why(why, len, -errno, "sink: listen: %s", strerror(errno));
        goto fail;
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof(bound);
    getsockname(s->lfd, (struct sockaddr *)&bound, &bl);
    addr_str(&bound, s->addr, sizeof(s->addr));
    if (pthread_create(&s->acc, NULL, accept_main, s)) {
        rc = ib_why(why, len, -EAGAIN, "sink: cannot start its thread");
        goto fail;
    }
    *out = s;
    return 0;
fail:
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->wake[0] >= 0)
        close(s->wake[0]);
    if (s->wake[1] >= 0)
        close(s->wake[1]);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return rc;
}

const char *sink_address(const struct sink *s) { return s->addr; }

void sink_get_stats(struct sink *s, struct sink_stats *st)
{
    pthread_mutex_lock(&s->mu);
    st->bytes = s->bytes;
    st->connections = s->nconn;
    st->active = s->active;
    pthread_mutex_unlock(&s->mu);
}

void sink_stop(struct sink *s)
{
    if (!s)
        return;
    close(s->wake[1]); /* every poll on wake[0] now sees POLLHUP */
    s->wake[1] = -1;
    pthread_join(s->acc, NULL);
    reap(s, 1);
    close(s->lfd);
    close(s->wake[0]);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- the client ---------------------------------------------------------------------------------------------- */

int sink_connect(const char *target, int timeout_ms, int *fdp, char *why, size_t len)
{
    struct sockaddr_storage sa;
    unsigned salen = 0;
    int rc = sink_parse_addr(target, SINK_DEFAULT_PORT, &sa, &salen, why, len);
    if (rc < 0)
        return rc;
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return ib_why(why, len, -errno, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, salen) != 0 && errno != EINPROGRESS) {
        rc = -errno;
        close(fd);
        return ib_why(why, len, rc, "cannot connect to the sink at %s: %s", target, strerror(-rc));
    }
    struct pollfd p = {fd, POLLOUT, 0};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    int err = 0;
    socklen_t el = sizeof(err);
    if (r == 0) {
        close(fd);
        return ib_why(why, len, -ETIMEDOUT, "cannot connect to the sink at %s: no answer within %d ms", target,
                      timeout_ms);
    }
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
    if (r < 0 || err) {
        rc = r < 0 ? -errno : -err;
        close(fd);
        return ib_why(why, len, rc, "cannot connect to the sink at %s: %s", target, strerror(-rc));
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    char line[64];
    if (write(fd, SINK_HELLO, strlen(SINK_HELLO)) != (ssize_t)strlen(SINK_HELLO) ||
        (rc = read_line(fd, -1, line, sizeof(line), timeout_ms)) <= 0 || strcmp(line, SINK_OK) != 0) {
        close(fd);
        return ib_why(why, len, -EPROTO, "%s did not answer as an ibench sink (start one there with: ibench sink "
                                         "--listen %s)", target, target);
    }
    *fdp = fd;
    return 0;
}

uint64_t sink_bytes_acked(int fd)
{
    struct tcp_info ti;
    socklen_t l = sizeof(ti);
    memset(&ti, 0, sizeof(ti));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) != 0)
        return 0;
    return ti.tcpi_bytes_acked;
}
