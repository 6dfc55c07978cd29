/* uring_kit.c - what the io_uring SoIs share (uring_kit.h). */
#include "uring_kit.h"

#include <errno.h>

#include "clock.h"

#define TAG_CANCEL UINT64_MAX /* user data of the cancel request itself: its completion is not one of the requests */

/* Reap until nothing is out (requests and a cancel) or `until`. */
static void reap_until(struct io_uring *ring, unsigned *inflight, unsigned *cancels, uint64_t until,
                       void (*on_cqe)(void *, struct io_uring_cqe *), void *arg)
{
    while (*inflight + *cancels) {
        uint64_t now = clk_mono_ns();
        if (now >= until)
            return;
        uint64_t w = until - now;
        struct __kernel_timespec ts = {.tv_sec = (long long)(w / 1000000000ULL),
                                       .tv_nsec = (long long)(w % 1000000000ULL)};
        struct io_uring_cqe *cqe;
        int rc = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
        if (rc == -EINTR || rc == -ETIME)
            continue;
        if (rc < 0)
            return;
        if (io_uring_cqe_get_data64(cqe) == TAG_CANCEL) {
            (*cancels)--;
        } else {
            if (on_cqe)
                on_cqe(arg, cqe);
            (*inflight)--;
        }
        io_uring_cqe_seen(ring, cqe);
    }
}

unsigned uring_drain(struct io_uring *ring, unsigned inflight, uint64_t deadline_ns, uint64_t cancel_ns,
                     void (*on_cqe)(void *arg, struct io_uring_cqe *cqe), void *arg)
{
    unsigned cancels = 0;
    reap_until(ring, &inflight, &cancels, deadline_ns, on_cqe, arg);
    if (!inflight || !cancel_ns)
        return inflight;
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    if (!sqe)
        return inflight;
    io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
    io_uring_sqe_set_data64(sqe, TAG_CANCEL);
    if (io_uring_submit(ring) < 1)
        return inflight;
    cancels = 1;
    reap_until(ring, &inflight, &cancels, clk_mono_ns() + cancel_ns, on_cqe, arg);
    return inflight;
}
