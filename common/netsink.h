/* netsink.h - the ibench sink (a TCP server that discards what it receives) and the client side of its handshake.
 *
 * Protocol: the client connects and sends "IBENCH-SINK 1\n"; the sink answers "IBENCH-SINK 1 OK\n" and from then on
 * reads and discards everything. The handshake makes net-bw refuse to stream at anything that is not an ibench sink.
 * Addresses are numeric only ("127.0.0.1:5301", "[::1]:5301"): nothing is resolved, so traffic goes exactly where
 * --target says.
 */
#ifndef IB_NETSINK_H
#define IB_NETSINK_H
#include <stddef.h>
#include <stdint.h>

#include "ib_atomic.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SINK_HELLO "IBENCH-SINK 1\n"
#define SINK_OK "IBENCH-SINK 1 OK\n"
#define SINK_DEFAULT_PORT 5301
#define SINK_MAX_CONN 64

/* "ADDR:PORT", "[v6]:PORT" or "ADDR" (port def_port) into a sockaddr; numeric only. 0 or -EINVAL with a reason. */
struct sockaddr_storage;
int sink_parse_addr(const char *s, int def_port, struct sockaddr_storage *sa, unsigned *salen, char *why, size_t len);

struct sink;
struct sink_stats {
    uint64_t bytes;        /* received over all connections since start */
    unsigned connections;  /* accepted since start */
    unsigned active;       /* open now */
};

/* Told of every closed connection: what it carried and for how long (called from the sink's threads). */
struct sink_report {
    void (*closed)(void *arg, uint64_t bytes, double secs);
    void *arg;
};
/* Listen on addr (port 0: any free one) and serve in background threads, bound to CPU `cpu` when cpu >= 0 (so a
 * sink in the same process as its sender stays off the sender's CPUs). rep (NULL: none) hears of each closed
 * connection. 0 or -errno with why. */
int sink_start(const char *addr, int cpu, const struct sink_report *rep, struct sink **out, char *why, size_t len);
/* The bound address as "ADDR:PORT". */
const char *sink_address(const struct sink *s);
void sink_get_stats(struct sink *s, struct sink_stats *st);
/* Stops accepting, closes every connection, joins the threads, frees. Returns at once whatever the peers do (silent
 * in the handshake, never reading, never closing): no sink thread waits on a peer without also watching for stop. */
void sink_stop(struct sink *s);

/* Connect to an ibench sink at target within timeout_ms and do the handshake. *fd: a blocking TCP socket with
 * TCP_NODELAY off and send timeout 2 s. 0, or -ECONNREFUSED/-ETIMEDOUT/-EPROTO (not a sink)/... with why. */
int sink_connect(const char *target, int timeout_ms, int *fd, char *why, size_t len);
/* Bytes the peer has acknowledged on a TCP socket (TCP_INFO tcpi_bytes_acked); 0 when unknown. */
uint64_t sink_bytes_acked(int fd);

#ifdef __cplusplus
}
#endif
#endif
