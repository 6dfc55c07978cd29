/* http_server.c - ibench's HTTP server over libmicrohttpd (http_server.h, docs/extender.md).
 *
 * Rules, each against a client that could hurt the server or starve kube-scheduler:
 * - routes: POST /filter and /prioritize go to the handler; GET (or HEAD) /healthz answers 200 "ok" (alive),
 *   /readyz 200 "ok" or 503 with the ready hook's reason, /metrics the Prometheus text of the server and of the
 *   metrics hook; a known path with another method 405 (with Allow), anything else 404; every error we answer is a
 *   one-line {"Error": "..."} (libmicrohttpd 0.9's own refusals, 431 and 400 for a malformed request line, are its
 *   fixed HTML: it has no hook to replace them);
 * - body size: a Content-Length above max_body is refused with 413 before a byte of the body is read; a body
 *   without one (chunked) is counted as it arrives and refused the moment it passes the limit;
 * - body memory: the buffers of bodies arriving on all connections together stay under body_memory; a body that
 *   would pass it is refused (503), so memory does not grow with the number of connections;
 * - time: a connection idle for timeout_s is closed (MHD_OPTION_CONNECTION_TIMEOUT); a body that trickles in must be
 *   complete within timeout_s of its headers (408).  timeout_s is below kube-scheduler's httpTimeout, so whatever a
 *   stalled client holds is free again before the scheduler gives up;
 * - admission (on_accept): the pool polls (epoll): an idle socket costs a slot, never a thread.  At most max_conns
 *   connections, at most per_address from one address.  When a new connection would pass either limit, the
 *   connection idle the longest (no request in progress: keep-alive between requests, or headers not complete)
 *   among those of that limit is shut down to make room; only when every one is in the middle of a request is the
 *   new one refused (closed at once, never left waiting in the backlog).  So idle sockets, from anywhere, can never
 *   keep a client out: the 9.71 s stall came from 8 slots held by 8 idle sockets.  libmicrohttpd's own
 *   per-IP limit only refuses, so we count addresses ourselves;
 * - we bind the socket ourselves (not MHD) so that a port in use is reported with its errno, and port 0 works. */
#define _GNU_SOURCE
#include "http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ib_err.h"

/* The routes, for the metrics and the log. */
enum route { R_FILTER, R_PRIORITIZE, R_HEALTHZ, R_READYZ, R_METRICS, R_OTHER, R_N };
static const char *const route_name[R_N] = {"filter", "prioritize", "healthz", "readyz", "metrics", "other"};

/* Latency histogram buckets, seconds: 0.5 ms to kube-scheduler's 5 s httpTimeout. */
static const double bucket_le[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
#define NB (sizeof bucket_le / sizeof bucket_le[0])

/* One admitted connection (a slot of the admission table). */
struct slot {
    int fd;           /* -1: free */
    unsigned gen;     /* bumped when freed: a request's reference to a slot reused since is stale */
    int busy;         /* a request's headers are in and it is not finished: never evicted */
    int evicted;      /* shut down by us; closing */
    int fam;          /* the peer's address, compared for per_address */
    unsigned char ip[16];
    char peer[INET6_ADDRSTRLEN];
    double idle_since;
};

struct http_server {
    struct http_server_opts o;
    struct MHD_Daemon *d;
    int fd;
    int port;
    atomic_int started;
    char log[256]; /* libmicrohttpd's last message while starting: the reason a start fails */
    pthread_mutex_t mu; /* the admission table */
    struct slot *slot;
    unsigned nslot;
    atomic_size_t body_held;
    /* metrics */
    atomic_ullong req[R_N][600];     /* by route and status */
    atomic_ullong aborted[R_N];      /* ended without an answer (client gone, timed out, cut off mid-body) */
    atomic_ullong hist[R_N][NB + 1]; /* non-cumulative; the last is +Inf */
    atomic_ullong sum_ns[R_N];
    atomic_ullong evicted, refused, body_refused;
};

/* One request's state between the access handler's calls. */
struct req {
    enum route route;
    const char *verb; /* the handler's verb; NULL: answered on the first call */
    char *buf;
    size_t len, cap, clen;
    struct timespec t0;
    int answered;
    unsigned status; /* the status queued, 0: none */
    size_t bytes_out;
    struct slot *sl;
    unsigned gen;
    char peer[INET6_ADDRSTRLEN];
    json_t *fields; /* the log hook's */
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
    struct http_server *s = cls;
    if (atomic_load(&s->started)) /* a client's failure while serving: not ours to print */
        return;
    vsnprintf(s->log, sizeof(s->log), fmt, ap);
    s->log[strcspn(s->log, "\n")] = 0;
}

/* ---- the log: one JSON object a line; a line is written by one call, so lines of threads do not interleave */
static void log_line(struct http_server *s, json_t *line, const char *level)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    struct tm tm;
    gmtime_r(&t.tv_sec, &tm);
    char ts[40], stamp[64];
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp, sizeof stamp, "%.40s.%03dZ", ts, (int)(t.tv_nsec / 1000000) % 1000);
    json_t *head = json_pack("{s:s,s:s}", "ts", stamp, "level", level);
    if (head && line)
        json_object_update(head, line);
    char *text = head ? json_dumps(head, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
    if (text) {
        FILE *f = s->o.log ? s->o.log : stderr;
        fprintf(f, "%s\n", text);
        fflush(f);
    }
    free(text);
    json_decref(head);
}

static void log_conn(struct http_server *s, const char *event, const char *peer)
{
    if (s->o.log_level < HTTP_LOG_DEBUG)
        return;
    json_t *l = json_pack("{s:s,s:s}", "event", event, "peer", peer);
    log_line(s, l, "debug");
    json_decref(l);
}

/* ---- admission */
static void addr_of(const struct sockaddr *a, int *fam, unsigned char ip[16], char *text)
{
    memset(ip, 0, 16);
    *fam = a->sa_family;
    if (*fam == AF_INET)
        memcpy(ip, &((const struct sockaddr_in *)a)->sin_addr, 4);
    else if (*fam == AF_INET6)
        memcpy(ip, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
    if (text && !inet_ntop(*fam, ip, text, INET6_ADDRSTRLEN))
        strcpy(text, "?");
}

/* The connection idle the longest among the live ones (of one address when fam is set); NULL when all are busy. */
static struct slot *oldest_idle(struct http_server *s, int fam, const unsigned char *ip)
{
    struct slot *v = NULL;
    for (unsigned i = 0; i < s->nslot; i++) {
        struct slot *x = &s->slot[i];
        if (x->fd < 0 || x->evicted || x->busy || (fam && (x->fam != fam || memcmp(x->ip, ip, 16))))
            continue;
        if (!v || x->idle_since < v->idle_since)
            v = x;
    }
    return v;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *a, socklen_t alen)
{
    (void)alen;
    struct http_server *s = cls;
    int fam;
    unsigned char ip[16];
    char peer[INET6_ADDRSTRLEN];
    addr_of(a, &fam, ip, peer);
    pthread_mutex_lock(&s->mu);
    unsigned total = 0, mine = 0;
    for (unsigned i = 0; i < s->nslot; i++) {
        struct slot *x = &s->slot[i];
        if (x->fd < 0 || x->evicted)
            continue;
        total++;
        mine += x->fam == fam && !memcmp(x->ip, ip, 16);
    }
    enum MHD_Result ok = MHD_YES;
    struct slot *v = NULL;
    if (mine >= s->o.per_address) /* room made among this address's own: it cannot push others out */
        v = oldest_idle(s, fam, ip);
    else if (total >= s->o.max_conns)
        v = oldest_idle(s, 0, NULL);
    if (v) {
        shutdown(v->fd, SHUT_RDWR); /* its poll wakes up and libmicrohttpd closes it; the fd stays ours till then */
        v->evicted = 1;
        atomic_fetch_add(&s->evicted, 1);
    } else if (mine >= s->o.per_address || total >= s->o.max_conns) {
        ok = MHD_NO;
        atomic_fetch_add(&s->refused, 1);
    }
    char vpeer[INET6_ADDRSTRLEN];
    if (v)
        snprintf(vpeer, sizeof vpeer, "%s", v->peer);
    pthread_mutex_unlock(&s->mu);
    if (v)
        log_conn(s, "evicted idle connection", vpeer);
    if (ok == MHD_NO)
        log_conn(s, "refused connection: every slot busy", peer);
    return ok;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        *socket_context = NULL;
        if (!fi || !ai || !ai->client_addr)
            return;
        pthread_mutex_lock(&s->mu);
        for (unsigned i = 0; i < s->nslot; i++)
            if (s->slot[i].fd < 0) {
                struct slot *x = &s->slot[i];
                x->fd = fi->connect_fd;
                x->busy = x->evicted = 0;
                x->idle_since = now_s();
                addr_of(ai->client_addr, &x->fam, x->ip, x->peer);
                *socket_context = x;
                break;
            }
        pthread_mutex_unlock(&s->mu);
    } else if (*socket_context) { /* closed: libmicrohttpd closes the fd after this returns */
        struct slot *x = *socket_context;
        pthread_mutex_lock(&s->mu);
        x->fd = -1;
        x->gen++;
        pthread_mutex_unlock(&s->mu);
        *socket_context = NULL;
    }
}

/* ---- answers */
static enum MHD_Result queue(struct MHD_Connection *c, struct req *q, unsigned status, struct MHD_Response *r,
                             size_t len)
{
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    if (q && ret == MHD_YES)
        q->status = status, q->bytes_out = len;
    return ret;
}

/* Queues a constant answer (status, one-line JSON or text). */
static enum MHD_Result answer_const(struct MHD_Connection *c, struct req *q, unsigned status, const char *body,
                                    const char *type, const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    return queue(c, q, status, r, strlen(body));
}

/* Queues a malloc'd answer (freed by libmicrohttpd, or here when it cannot be queued). */
static enum MHD_Result answer_owned(struct MHD_Connection *c, struct req *q, unsigned status, char *body,
                                    const char *type)
{
    size_t n = strlen(body);
    struct MHD_Response *r = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    return queue(c, q, status, r, n);
}

#define JSON "application/json"
#define TEXT "text/plain; charset=utf-8"
#define PROM "text/plain; version=0.0.4; charset=utf-8"
#define E404 "{\"Error\": \"no such path (POST /filter, POST /prioritize, GET /healthz, /readyz, /metrics)\"}\n"
#define E405 "{\"Error\": \"method not allowed on this path\"}\n"
#define E413 "{\"Error\": \"request body too large\"}\n"
#define E408 "{\"Error\": \"request body too slow\"}\n"
#define E500 "{\"Error\": \"out of memory\"}\n"
#define E503 "{\"Error\": \"server busy: the request bodies arriving fill its body memory; retry\"}\n"

/* The Prometheus text of the server, then the hook's. */
static char *metrics_text(struct http_server *s)
{
    char *b = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&b, &n);
    if (!f)
        return NULL;
    fprintf(f, "# HELP ibench_extender_http_requests_total Requests answered, by route and status.\n"
               "# TYPE ibench_extender_http_requests_total counter\n");
    for (int r = 0; r < R_N; r++)
        for (int c = 0; c < 600; c++) {
            unsigned long long v = atomic_load(&s->req[r][c]);
            if (v)
                fprintf(f, "ibench_extender_http_requests_total{verb=\"%s\",code=\"%d\"} %llu\n", route_name[r], c, v);
        }
    fprintf(f, "# HELP ibench_extender_http_requests_aborted_total Requests that ended without an answer (client "
               "gone, timed out, cut off mid-body).\n# TYPE ibench_extender_http_requests_aborted_total counter\n");
    for (int r = 0; r < R_N; r++)
        fprintf(f, "ibench_extender_http_requests_aborted_total{verb=\"%s\"} %llu\n", route_name[r],
                (unsigned long long)atomic_load(&s->aborted[r]));
    fprintf(f, "# HELP ibench_extender_http_request_duration_seconds From a request's headers to its answer sent.\n"
               "# TYPE ibench_extender_http_request_duration_seconds histogram\n");
    for (int r = 0; r < R_N; r++) {
        unsigned long long cum = 0;
        for (size_t k = 0; k <= NB; k++) {
            cum += atomic_load(&s->hist[r][k]);
            if (k < NB)
                fprintf(f, "ibench_extender_http_request_duration_seconds_bucket{verb=\"%s\",le=\"%g\"} %llu\n",
                        route_name[r], bucket_le[k], cum);
            else
                fprintf(f, "ibench_extender_http_request_duration_seconds_bucket{verb=\"%s\",le=\"+Inf\"} %llu\n",
                        route_name[r], cum);
        }
        fprintf(f, "ibench_extender_http_request_duration_seconds_sum{verb=\"%s\"} %.9f\n", route_name[r],
                (double)atomic_load(&s->sum_ns[r]) * 1e-9);
        fprintf(f, "ibench_extender_http_request_duration_seconds_count{verb=\"%s\"} %llu\n", route_name[r], cum);
    }
    unsigned open = 0;
    pthread_mutex_lock(&s->mu);
    for (unsigned i = 0; i < s->nslot; i++)
        open += s->slot[i].fd >= 0 && !s->slot[i].evicted;
    pthread_mutex_unlock(&s->mu);
    fprintf(f,
            "# HELP ibench_extender_http_connections_open Connections admitted and open.\n"
            "# TYPE ibench_extender_http_connections_open gauge\nibench_extender_http_connections_open %u\n"
            "# HELP ibench_extender_http_connections_limit The admission limits.\n"
            "# TYPE ibench_extender_http_connections_limit gauge\n"
            "ibench_extender_http_connections_limit{scope=\"total\"} %u\n"
            "ibench_extender_http_connections_limit{scope=\"address\"} %u\n"
            "# HELP ibench_extender_http_connections_evicted_total Idle connections shut down to admit a new one.\n"
            "# TYPE ibench_extender_http_connections_evicted_total counter\n"
            "ibench_extender_http_connections_evicted_total %llu\n"
            "# HELP ibench_extender_http_connections_refused_total New connections refused: every slot busy.\n"
            "# TYPE ibench_extender_http_connections_refused_total counter\n"
            "ibench_extender_http_connections_refused_total %llu\n"
            "# HELP ibench_extender_http_body_bytes_held Buffers of request bodies arriving, all connections.\n"
            "# TYPE ibench_extender_http_body_bytes_held gauge\nibench_extender_http_body_bytes_held %zu\n"
            "# HELP ibench_extender_http_body_memory_refused_total Bodies refused: the body memory was full.\n"
            "# TYPE ibench_extender_http_body_memory_refused_total counter\n"
            "ibench_extender_http_body_memory_refused_total %llu\n",
            open, s->o.max_conns, s->o.per_address, (unsigned long long)atomic_load(&s->evicted),
            (unsigned long long)atomic_load(&s->refused), atomic_load(&s->body_held),
            (unsigned long long)atomic_load(&s->body_refused));
    char *extra = NULL;
    if (s->o.metrics && s->o.metrics(s->o.ctx, &extra) == 0 && extra)
        fputs(extra, f);
    free(extra);
    if (fclose(f) != 0) {
        free(b);
        return NULL;
    }
    return b;
}

/* A GET route: /healthz, /readyz, /metrics. */
static enum MHD_Result answer_get(struct http_server *s, struct MHD_Connection *c, struct req *q, enum route r)
{
    if (r == R_HEALTHZ)
        return answer_const(c, q, MHD_HTTP_OK, "ok\n", TEXT, NULL);
    if (r == R_READYZ) {
        char why[256] = "";
        if (!s->o.ready || s->o.ready(s->o.ctx, why, sizeof why))
            return answer_const(c, q, MHD_HTTP_OK, "ok\n", TEXT, NULL);
        why[strcspn(why, "\n")] = 0;
        json_t *e = json_pack("{s:s+}", "Error", "not ready: ", why);
        char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
        json_decref(e);
        char *body = t ? malloc(strlen(t) + 2) : NULL;
        if (body)
            sprintf(body, "%s\n", t);
        free(t);
        return body ? answer_owned(c, q, MHD_HTTP_SERVICE_UNAVAILABLE, body, JSON)
                    : answer_const(c, q, MHD_HTTP_INTERNAL_SERVER_ERROR, E500, JSON, NULL);
    }
    char *m = metrics_text(s);
    return m ? answer_owned(c, q, MHD_HTTP_OK, m, PROM)
             : answer_const(c, q, MHD_HTTP_INTERNAL_SERVER_ERROR, E500, JSON, NULL);
}

/* The first call for a request: route it; a handler route waits for its body. */
static enum MHD_Result first_call(struct http_server *s, struct MHD_Connection *c, const char *url, const char *method,
                                  void **con_cls)
{
    enum route r = R_OTHER;
    for (int i = 0; i < R_OTHER; i++)
        if (url[0] == '/' && !strcmp(url + 1, route_name[i]))
            r = (enum route)i;
    struct req *q = calloc(1, sizeof(*q));
    if (!q)
        return answer_const(c, NULL, MHD_HTTP_INTERNAL_SERVER_ERROR, E500, JSON, NULL);
    q->route = r;
    clock_gettime(CLOCK_MONOTONIC, &q->t0);
    strcpy(q->peer, "?");
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ci && ci->socket_context) {
        pthread_mutex_lock(&s->mu);
        q->sl = ci->socket_context;
        q->gen = q->sl->gen;
        q->sl->busy = 1;
        snprintf(q->peer, sizeof q->peer, "%s", q->sl->peer);
        pthread_mutex_unlock(&s->mu);
    }
    *con_cls = q;
    if (r == R_OTHER)
        return answer_const(c, q, MHD_HTTP_NOT_FOUND, E404, JSON, NULL);
    if (r != R_FILTER && r != R_PRIORITIZE) {
        if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
            return answer_const(c, q, MHD_HTTP_METHOD_NOT_ALLOWED, E405, JSON, "GET, HEAD");
        return answer_get(s, c, q, r);
    }
    if (strcmp(method, MHD_HTTP_METHOD_POST))
        return answer_const(c, q, MHD_HTTP_METHOD_NOT_ALLOWED, E405, JSON, "POST");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) { /* refused before the body is read: MHD then closes the connection */
        errno = 0;
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (errno || end == cl || n > s->o.max_body)
            return answer_const(c, q, MHD_HTTP_CONTENT_TOO_LARGE, E413, JSON, NULL);
        q->clen = (size_t)n;
    }
    q->verb = route_name[r];
    return MHD_YES;
}

/* Stops taking a body: its buffer is given back; the answer is queued now if MHD lets us, else the connection is
 * closed (MHD 0.9 queues no answer while a body is arriving). */
static enum MHD_Result cut_off(struct http_server *s, struct MHD_Connection *c, struct req *q, unsigned status,
                               const char *body)
{
    q->answered = 1;
    atomic_fetch_sub(&s->body_held, q->cap);
    free(q->buf);
    q->buf = NULL;
    q->cap = 0;
    return answer_const(c, q, status, body, JSON, NULL) == MHD_YES ? MHD_YES : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    struct http_server *s = cls;
    struct req *q = *con_cls;
    if (!q)
        return first_call(s, c, url, method, con_cls);
    if (q->answered || !q->verb) { /* refused mid-body, or answered on the first call: drop what still arrives */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (q->len + n > s->o.max_body || q->len + n < q->len)
            return cut_off(s, c, q, MHD_HTTP_CONTENT_TOO_LARGE, E413);
        if (since(&q->t0) > s->o.timeout_s)
            return cut_off(s, c, q, MHD_HTTP_REQUEST_TIMEOUT, E408);
        if (q->len + n > q->cap) {
            /* doubling with what arrives, never past the announced length: a client holds memory only for bytes it
             * has sent, not for a Content-Length it announces and never sends */
            size_t cap = q->cap ? q->cap : 16384;
            while (cap < q->len + n)
                cap *= 2;
            if (q->clen >= q->len + n && cap > q->clen)
                cap = q->clen;
            if (cap > s->o.max_body)
                cap = s->o.max_body;
            size_t grow = cap - q->cap;
            if (atomic_fetch_add(&s->body_held, grow) + grow > s->o.body_memory) {
                atomic_fetch_sub(&s->body_held, grow);
                atomic_fetch_add(&s->body_refused, 1);
                return cut_off(s, c, q, MHD_HTTP_SERVICE_UNAVAILABLE, E503);
            }
            char *b = realloc(q->buf, cap);
            if (!b) {
                atomic_fetch_sub(&s->body_held, grow);
                return cut_off(s, c, q, MHD_HTTP_INTERNAL_SERVER_ERROR, E500);
            }
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
        return answer_const(c, q, MHD_HTTP_INTERNAL_SERVER_ERROR, E500, JSON, NULL);
    }
    if (s->o.log_fields && s->o.log_level >= (status >= 500 ? HTTP_LOG_ERROR : HTTP_LOG_INFO) &&
        (q->fields = json_object()))
        s->o.log_fields(s->o.ctx, q->verb, q->buf ? q->buf : "", q->len, out, q->fields);
    /* the body is decided: its buffer goes back to the body memory now, not when the answer is sent */
    atomic_fetch_sub(&s->body_held, q->cap);
    free(q->buf);
    q->buf = NULL;
    q->cap = 0;
    return answer_owned(c, q, (unsigned)status, out, JSON);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)c;
    struct http_server *s = cls;
    struct req *q = *con_cls;
    if (!q)
        return;
    double dur = since(&q->t0);
    if (q->sl) {
        pthread_mutex_lock(&s->mu);
        if (q->sl->gen == q->gen && q->sl->fd >= 0) {
            q->sl->busy = 0;
            q->sl->idle_since = now_s();
        }
        pthread_mutex_unlock(&s->mu);
    }
    bool done = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && q->status;
    if (done && q->status < 600)
        atomic_fetch_add(&s->req[q->route][q->status], 1);
    else
        atomic_fetch_add(&s->aborted[q->route], 1);
    size_t k = 0;
    while (k < NB && dur > bucket_le[k])
        k++;
    atomic_fetch_add(&s->hist[q->route][k], 1);
    atomic_fetch_add(&s->sum_ns[q->route], (unsigned long long)(dur * 1e9));
    bool err = !done || q->status >= 500;
    if (s->o.log_level >= (err ? HTTP_LOG_ERROR : HTTP_LOG_INFO)) {
        static const char *const end[] = {"ok", "error", "timeout", "shutdown", "read error", "client gone"};
        json_t *l = json_pack("{s:s,s:i,s:f,s:I,s:I,s:s}", "verb", route_name[q->route], "status", (int)q->status,
                              "duration_ms", dur * 1e3, "bytes_in", (json_int_t)q->len, "bytes_out",
                              (json_int_t)q->bytes_out, "peer", q->peer);
        if (l && !done)
            json_object_set_new(l, "end", json_string((unsigned)toe < 6 ? end[toe] : "?"));
        if (l && q->fields)
            json_object_update(l, q->fields);
        log_line(s, l, err ? "error" : "info");
        json_decref(l);
    }
    json_decref(q->fields);
    atomic_fetch_sub(&s->body_held, q->cap);
    free(q->buf);
    free(q);
    *con_cls = NULL;
}

int http_server_start(const struct http_server_opts *o, struct http_server **out, char *why, size_t len)
{
    *out = NULL;
    if (!o->handler || !o->addr || o->threads < 1 || !o->max_body || !o->timeout_s || !o->tls_cert != !o->tls_key)
        return ib_why(why, len, -EINVAL, "bad server options");
    if (o->tls_cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return ib_why(why, len, -ENOTSUP, "this libmicrohttpd was built without TLS");
    struct http_server *s = calloc(1, sizeof(*s));
    if (!s)
        return ib_why(why, len, -ENOMEM, "out of memory");
    s->o = *o;
    if (!s->o.max_conns)
        s->o.max_conns = HTTP_DEFAULT_CONNS;
    if (!s->o.per_address)
        s->o.per_address = HTTP_DEFAULT_PER_ADDRESS;
    if (s->o.per_address > s->o.max_conns)
        s->o.per_address = s->o.max_conns;
    if (!s->o.body_memory)
        s->o.body_memory = HTTP_DEFAULT_BODY_MEMORY;
    if (s->o.body_memory < s->o.max_body) /* one body of the largest size must fit */
        s->o.body_memory = s->o.max_body;
    /* libmicrohttpd's own limit leaves room for the evicted connections still closing, and splits it among the
     * pool's threads: each gets its share of it, at least one more than its share of ours */
    unsigned hard = s->o.max_conns + (s->o.max_conns / 4 > 16 ? s->o.max_conns / 4 : 16) + 2 * o->threads;
    s->nslot = hard;
    s->slot = calloc(hard, sizeof *s->slot);
    if (!s->slot) {
        free(s);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned i = 0; i < hard; i++)
        s->slot[i].fd = -1;
    pthread_mutex_init(&s->mu, NULL);
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
        pthread_mutex_destroy(&s->mu);
        free(s->slot);
        free(s);
        return ib_why(why, len, -e, "cannot listen on %s: %s", host, strerror(e));
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(s->fd, (struct sockaddr *)&ss, &sl);
    s->port = ntohs(fam == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
    /* MHD_USE_AUTO picks epoll on Linux: the pool's threads poll their connections, none is held by one */
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
    s->d = MHD_start_daemon(flags, 0, on_accept, s, on_request, s, MHD_OPTION_LISTEN_SOCKET, s->fd,
                            MHD_OPTION_EXTERNAL_LOGGER, on_log, s, MHD_OPTION_THREAD_POOL_SIZE, o->threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_s, MHD_OPTION_CONNECTION_LIMIT, hard,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
                            on_connection, s, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!s->d) {
        close(s->fd);
        int rc = ib_why(why, len, -EINVAL, "libmicrohttpd did not start: %s",
                        s->log[0] ? s->log : (o->tls_cert ? "a bad certificate or key?" : "no reason given"));
        pthread_mutex_destroy(&s->mu);
        free(s->slot);
        free(s);
        return rc;
    }
    atomic_store(&s->started, 1);
    *out = s;
    return 0;
}

int http_server_port(const struct http_server *s) { return s->port; }

void http_server_stop(struct http_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->d); /* closes the listening socket too */
    pthread_mutex_destroy(&s->mu);
    free(s->slot);
    free(s);
}
