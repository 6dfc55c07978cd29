/* ext_server.h - the HTTP front end of the scheduler extender (`ibench extender`, docs/extender.md): routes, body
 * and time limits, TLS, over libmicrohttpd.  The decisions are a handler called with the verb and the whole body
 * (pl_extender_handle in the command; a fake in the tests).  Prints nothing: failures come back as -errno with one
 * line in why. */
#ifndef IB_EXT_SERVER_H
#define IB_EXT_SERVER_H
#include <stddef.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Answers one POST: verb "filter" or "prioritize", body len bytes (not NUL-terminated).  0 with *out a malloc'd JSON
 * answer and *status its HTTP status, or -errno (the server answers 500).  Called concurrently from the pool. */
typedef int (*ext_handler_fn)(void *ctx, const char *verb, const char *body, size_t len, char **out, int *status);

/* Connections open at once by default. Each may hold a body of up to max_body while it arrives, so this bounds the
 * memory held for arriving bodies (64 x 4 MiB); kube-scheduler keeps a few keep-alive connections an extender. */
#define EXT_DEFAULT_CONNS 64u

struct ext_server_opts {
    const struct sockaddr *addr; /* where to listen (port 0: a free one, see ext_server_port) */
    socklen_t addrlen;
    unsigned threads;            /* the pool (>= 1) */
    unsigned max_conns;          /* connections open at once; more wait in the backlog (0: the default) */
    size_t max_body;             /* bodies above it: 413 */
    unsigned timeout_s;          /* idle connections closed after it; a body must arrive within it (408) */
    const char *tls_cert;        /* PEM contents, both or neither: HTTPS */
    const char *tls_key;
    ext_handler_fn handler;
    void *ctx;
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
