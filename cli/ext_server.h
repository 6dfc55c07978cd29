/* ext_server.h - the HTTP front end of the scheduler extender (`ibench extender`, docs/extender.md): routes, body
 * and time limits, admission of connections, metrics, request logs and TLS, over libmicrohttpd.  The decisions are a
 * handler called with the verb and the whole body (pl_extender_handle in the command; a fake in the tests); what is
 * specific to them (readiness, their metrics, the fields of a log line) comes through optional hooks, so the server
 * knows nothing of Kubernetes.  Failures to start come back as -errno with one line in why; the only output is the
 * request log, to opts.log. */
#ifndef IB_EXT_SERVER_H
#define IB_EXT_SERVER_H
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
typedef int (*ext_handler_fn)(void *ctx, const char *verb, const char *body, size_t len, char **out, int *status);

/* Defaults (docs/kubernetes.md, "Never stalled", gives the rule they follow). */
#define EXT_DEFAULT_CONNS 256u        /* connections admitted at once */
#define EXT_DEFAULT_PER_ADDRESS 32u   /* of them from one client address */
#define EXT_DEFAULT_TIMEOUT_S 3u      /* idle, and a whole body: below kube-scheduler's httpTimeout of 5 s */
#define EXT_DEFAULT_BODY_MEMORY (64u << 20) /* bytes of arriving bodies held at once, all connections together */

enum ext_log_level { EXT_LOG_OFF, EXT_LOG_ERROR, EXT_LOG_INFO, EXT_LOG_DEBUG };

struct ext_server_opts {
    const struct sockaddr *addr; /* where to listen (port 0: a free one, see ext_server_port) */
    socklen_t addrlen;
    unsigned threads;            /* the pool (>= 1) */
    unsigned max_conns;          /* connections admitted at once (0: the default) */
    unsigned per_address;        /* of them from one address (0: the default) */
    size_t max_body;             /* bodies above it: 413 */
    size_t body_memory;          /* arriving bodies held at once above it: 503 (0: the default) */
    unsigned timeout_s;          /* idle connections closed after it; a body must arrive within it (408) */
    const char *tls_cert;        /* PEM contents, both or neither: HTTPS */
    const char *tls_key;
    ext_handler_fn handler;
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
    enum ext_log_level log_level; /* one JSON line per request at info (5xx at error); connections at debug */
    FILE *log;                    /* NULL: stderr */
};

struct ext_server;

/* Binds, listens and starts the pool.  0; -EADDRINUSE, -EACCES, ... when the address cannot be bound; -ENOTSUP when
 * TLS is asked of a libmicrohttpd without it; -EINVAL when libmicrohttpd refuses (a bad certificate or key). */
int ext_server_start(const struct ext_server_opts *o, struct ext_server **out, char *why, size_t len);
/* The bound port (the chosen one after port 0). */
int ext_server_port(const struct ext_server *s);
/* Stops the pool (requests in progress end) and closes the socket. */
void ext_server_stop(struct ext_server *s);

#ifdef __cplusplus
}
#endif
#endif
