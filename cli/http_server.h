/* http_server.h - ibench's HTTP server over libmicrohttpd (served by `ibench extender`, docs/extender.md): POST
 * routes to one handler, GET routes for health, readiness and metrics, body and time limits, admission of
 * connections, request logs and TLS.  What is served is a handler called with the route's verb and the whole body
 * (pl_extender_handle in the extender; a fake in the tests); what is specific to it (readiness, its metrics, the
 * fields of a log line) comes through optional hooks, so the server knows nothing of what it serves.  Failures to
 * start come back as -errno with one line in why; the only output is the request log, to opts.log. */
#ifndef IB_HTTP_SERVER_H
#define IB_HTTP_SERVER_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Answers one POST: verb "filter" or "prioritize", body len bytes (not NUL-terminated).  0 with *out a malloc'd JSON
 * answer and *status its HTTP status, or -errno (the server answers 500).  Called concurrently from the pool. */
typedef int (*http_handler_fn)(void *ctx, const char *verb, const char *body, size_t len, char **out, int *status);

/* Defaults (docs/kubernetes.md, "Never stalled", gives the rule they follow). */
#define HTTP_DEFAULT_CONNS 256u        /* connections admitted at once */
#define HTTP_DEFAULT_PER_ADDRESS 32u   /* of them from one client address */
#define HTTP_DEFAULT_TIMEOUT_S 3u      /* idle, and a whole body: below kube-scheduler's httpTimeout of 5 s */
#define HTTP_DEFAULT_BODY_MEMORY (64u << 20) /* bytes of arriving bodies held at once, all connections together */

enum http_log_level { HTTP_LOG_OFF, HTTP_LOG_ERROR, HTTP_LOG_INFO, HTTP_LOG_DEBUG };

struct http_server_opts {
    const struct sockaddr *addr; /* where to listen (port 0: a free one, see http_server_port) */
    socklen_t addrlen;
    unsigned threads;            /* the pool (>= 1) */
    unsigned max_conns;          /* connections admitted at once (0: the default) */
    unsigned per_address;        /* of them from one address (0: the default) */
    size_t max_body;             /* bodies above it: 413 */
    size_t body_memory;          /* arriving bodies held at once above it: 503 (0: the default) */
    unsigned timeout_s;          /* idle connections closed after it; a body must arrive within it (408) */
    const char *tls_cert;        /* PEM contents, both or neither: HTTPS */
    const char *tls_key;
    http_handler_fn handler;
    void *ctx;
    /* Optional hooks, each called with ctx, concurrently: */
    /* GET /readyz: true when ready; false with a one-line reason in why (503).  NULL: always ready. */
    bool (*ready)(void *ctx, char *why, size_t len);
    /* GET /metrics: 0 with *text malloc'd Prometheus text lines, appended after the server's own; or -errno (the
     * server's lines are still served).  NULL: the server's lines only. */
    int (*metrics)(void *ctx, char **text);
    /* One request's log line (a JSON object): add fields of the decision to line (the pod, nodes in and out).
     * Called after the handler, only when the line will be written. */
    void (*log_fields)(void *ctx, const char *verb, const char *body, size_t len, const char *answer, json_t *line);
    enum http_log_level log_level; /* one JSON line per request at info (5xx at error); connections at debug */
    FILE *log;                    /* NULL: stderr */
};

struct http_server;

/* Binds, listens and starts the pool.  0; -EADDRINUSE, -EACCES, ... when the address cannot be bound; -ENOTSUP when
 * TLS is asked of a libmicrohttpd without it; -EINVAL when libmicrohttpd refuses (a bad certificate or key). */
int http_server_start(const struct http_server_opts *o, struct http_server **out, char *why, size_t len);
/* The bound port (the chosen one after port 0). */
int http_server_port(const struct http_server *s);
/* Stops the pool (requests in progress end) and closes the socket. */
void http_server_stop(struct http_server *s);

#ifdef __cplusplus
}
#endif
#endif
