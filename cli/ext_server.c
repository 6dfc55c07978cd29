/* ext_server.c - the extender's HTTP server over libmicrohttpd (ext_server.h, docs/extender.md).
 *
 * Rules, each against a client that could hurt the server:
 * - routes: POST /filter and /prioritize go to the handler; GET (or HEAD) /healthz answers 200 "ok"; a known path
 *   with another method 405 (with Allow), anything else 404; every error a one-line {"Error": "..."};
 * - body size: a Content-Length above max_body is refused with 413 before a byte of the body is read; a body
 *   without one (chunked) is counted as it arrives and refused the moment it passes the limit, so the server never
 *   holds more than max_body of one request;
 * - time: a connection idle for timeout_s is closed (MHD_OPTION_CONNECTION_TIMEOUT: a client that sends half a
 *   request and stalls); a body that trickles in must still be complete within timeout_s of its headers (408), so a
 *   byte every few seconds cannot hold a connection forever;
 * - connections: at most max_conns at once (MHD_OPTION_CONNECTION_LIMIT); at the limit libmicrohttpd stops accepting,
 *   so further clients wait in the kernel's backlog, and answers carry "Connection: close" to free a slot. Memory held
 *   for arriving bodies is so bounded by max_conns x max_body;
 * - we bind the socket ourselves (not MHD) so that a port in use is reported with its errno, and port 0 works. */
#define _GNU_SOURCE
#include "ext_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ib_err.h"

struct ext_server {
    struct ext_server_opts o;
    struct MHD_Daemon *d;
    int fd;
    int port;
    atomic_int started;
    char log[256]; /* libmicrohttpd's last message while starting: the reason a start fails */
};

/* One request's state between the access handler's calls. */
struct req {
    const char *verb; /* NULL: not a handler route (the answer was queued on the first call) */
    char *buf;
    size_t len, cap;
    struct timespec t0;
    int answered;
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
    struct ext_server *s = cls;
    if (atomic_load(&s->started)) /* a client's failure while serving: not ours to print */
        return;
    vsnprintf(s->log, sizeof(s->log), fmt, ap);
    s->log[strcspn(s->log, "\n")] = 0;
}

/* Queues a constant answer (status, one-line JSON or text). */
static enum MHD_Result answer_const(struct MHD_Connection *c, unsigned status, const char *body, const char *type,
                                    const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

#define JSON "application/json"
#define E404 "{\"Error\": \"no such path (POST /filter, POST /prioritize, GET /healthz)\"}\n"
#define E405 "{\"Error\": \"method not allowed on this path\"}\n"
#define E413 "{\"Error\": \"request body too large\"}\n"
#define E408 "{\"Error\": \"request body too slow\"}\n"
#define E500 "{\"Error\": \"out of memory\"}\n"

/* The first call for a request: route it; a handler route gets a struct req and waits for its body. */
static enum MHD_Result first_call(struct ext_server *s, struct MHD_Connection *c, const char *url, const char *method,
                                  void **con_cls)
{
    const char *verb = NULL;
    if (!strcmp(url, "/filter"))
        verb = "filter";
    else if (!strcmp(url, "/prioritize"))
        verb = "prioritize";
    else if (!strcmp(url, "/healthz")) {
        if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
            return answer_const(c, MHD_HTTP_METHOD_NOT_ALLOWED, E405, JSON, "GET, HEAD");
        return answer_const(c, MHD_HTTP_OK, "ok\n", "text/plain", NULL);
    } else
        return answer_const(c, MHD_HTTP_NOT_FOUND, E404, JSON, NULL);
    if (strcmp(method, MHD_HTTP_METHOD_POST))
        return answer_const(c, MHD_HTTP_METHOD_NOT_ALLOWED, E405, JSON, "POST");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) { /* refused before the body is read: MHD then closes the connection */
        errno = 0;
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (errno || end == cl || n > s->o.max_body)
            return answer_const(c, MHD_HTTP_CONTENT_TOO_LARGE, E413, JSON, NULL);
    }
    struct req *q = calloc(1, sizeof(*q));
    if (!q)
        return answer_const(c, MHD_HTTP_INTERNAL_SERVER_ERROR, E500, JSON, NULL);
    q->verb = verb;
    clock_gettime(CLOCK_MONOTONIC, &q->t0);
    *con_cls = q;
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    struct ext_server *s = cls;
    struct req *q = *con_cls;
    if (!q)
        return first_call(s, c, url, method, con_cls);
    if (q->answered) { /* refused mid-body: drop what still arrives */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (q->len + n > s->o.max_body || q->len + n < q->len) {
            q->answered = 1; /* queued now when MHD lets us, else at the end; the body is not kept either way */
            free(q->buf);
            q->buf = NULL;
            /* MHD 0.9 queues no answer while a body is arriving: close the connection instead of reading on */
            return answer_const(c, MHD_HTTP_CONTENT_TOO_LARGE, E413, JSON, NULL) == MHD_YES ? MHD_YES : MHD_NO;
        }
        if (since(&q->t0) > s->o.timeout_s) {
            q->answered = 1;
            free(q->buf);
            q->buf = NULL;
            return answer_const(c, MHD_HTTP_REQUEST_TIMEOUT, E408, JSON, NULL) == MHD_YES ? MHD_YES : MHD_NO;
        }
        if (q->len + n > q->cap) {
            size_t cap = q->cap ? q->cap : 16384;
            while (cap < q->len + n)
                cap *= 2;
            if (cap > s->o.max_body)
                cap = s->o.max_body;
            char *b = realloc(q->buf, cap);
            if (!b)
                return MHD_NO;
            q->buf = b;
            q->cap = cap;
        }
        memcpy(q->buf + q->len, upload, n);
        q->len += n;
        return MHD_YES;
    }
    /* the whole body is here */
    q->answered = 1;
    char *out = NULL;
    int status = 500;
    int rc = s->o.handler(s->o.ctx, q->verb, q->buf ? q->buf : "", q->len, &out, &status);
    if (rc < 0 || !out) {
        free(out);
        return answer_const(c, MHD_HTTP_INTERNAL_SERVER_ERROR, E500, JSON, NULL);
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(out), out, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(out);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, JSON);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    struct req *q = *con_cls;
    if (q) {
        free(q->buf);
        free(q);
        *con_cls = NULL;
    }
}

int ext_server_start(const struct ext_server_opts *o, struct ext_server **out, char *why, size_t len)
{
    *out = NULL;
    if (!o->handler || !o->addr || o->threads < 1 || !o->max_body || !o->timeout_s || !o->tls_cert != !o->tls_key)
        return ib_why(why, len, -EINVAL, "bad server options");
    if (o->tls_cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return ib_why(why, len, -ENOTSUP, "this libmicrohttpd was built without TLS");
    struct ext_server *s = calloc(1, sizeof(*s));
    if (!s)
        return ib_why(why, len, -ENOMEM, "out of memory");
    s->o = *o;
    char host[INET6_ADDRSTRLEN] = "?";
    int fam = o->addr->sa_family;
    if (fam == AF_INET)
        inet_ntop(fam, &((const struct sockaddr_in *)o->addr)->sin_addr, host, sizeof(host));
    else if (fam == AF_INET6)
        inet_ntop(fam, &((const struct sockaddr_in6 *)o->addr)->sin6_addr, host, sizeof(host));
    s->fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        (fam == AF_INET6 && setsockopt(s->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
        bind(s->fd, o->addr, o->addrlen) < 0 || listen(s->fd, 128) < 0) {
        int e = errno;
        if (s->fd >= 0)
            close(s->fd);
        free(s);
        return ib_why(why, len, -e, "cannot listen on %s: %s", host, strerror(e));
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(s->fd, (struct sockaddr *)&ss, &sl);
    s->port = ntohs(fam == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
    unsigned flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (fam == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (o->tls_cert)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls[] = {
        {o->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)o->tls_cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, s->fd,
                            MHD_OPTION_EXTERNAL_LOGGER, on_log, s, MHD_OPTION_THREAD_POOL_SIZE, o->threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_s,
                            MHD_OPTION_CONNECTION_LIMIT, o->max_conns ? o->max_conns : EXT_DEFAULT_CONNS,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!s->d) {
        close(s->fd);
        int rc = ib_why(why, len, -EINVAL, "libmicrohttpd did not start: %s",
                        s->log[0] ? s->log : (o->tls_cert ? "a bad certificate or key?" : "no reason given"));
        free(s);
        return rc;
    }
    atomic_store(&s->started, 1);
    *out = s;
    return 0;
}

int ext_server_port(const struct ext_server *s) { return s->port; }

void ext_server_stop(struct ext_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->d); /* closes the listening socket too */
    free(s);
}
