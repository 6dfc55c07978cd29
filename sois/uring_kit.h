/* uring_kit.h - what the io_uring SoIs share: a drain that always ends. */
#ifndef IB_URING_KIT_H
#define IB_URING_KIT_H
#include <liburing.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reaps completions until `inflight` requests are all back or CLOCK_MONOTONIC passes deadline_ns; then cancels what
 * is left and reaps the cancellations for up to cancel_ns more, so a stuck device cannot hold a teardown (or Ctrl-C)
 * for ever. on_cqe(arg, cqe) sees every completion (a cancelled one has res -ECANCELED). Returns how many requests
 * are still in flight: 0 when drained; otherwise the ring must not be reused (closing it is safe: the kernel ends them
 * in the background, and buffers under O_DIRECT stay pinned until then). */
unsigned uring_drain(struct io_uring *ring, unsigned inflight, uint64_t deadline_ns, uint64_t cancel_ns,
                     void (*on_cqe)(void *arg, struct io_uring_cqe *cqe), void *arg);

#ifdef __cplusplus
}
#endif
#endif
