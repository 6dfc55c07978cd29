// test_uring_kit.cpp - the io_uring drain ends whatever the device does: a read that never completes (a pipe nobody
// writes to) is waited for until the deadline, then cancelled.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <future>

#include "clock.h"
#include "uring_kit.h"

namespace {

struct Seen {
    int n = 0, cancelled = 0;
};

void count(void *arg, struct io_uring_cqe *cqe)
{
    auto *s = static_cast<Seen *>(arg);
    s->n++;
    s->cancelled += cqe->res == -ECANCELED || cqe->res == -EINTR;
}

} // namespace

TEST(UringKit, AStuckReadIsCancelledAfterTheDeadline)
{
    struct io_uring ring;
    ASSERT_EQ(io_uring_queue_init(4, &ring, 0), 0);
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    char buf[64];
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    io_uring_prep_read(sqe, p[0], buf, sizeof buf, 0);
    io_uring_sqe_set_data64(sqe, 7);
    ASSERT_EQ(io_uring_submit(&ring), 1);

    Seen seen;
    const uint64_t t0 = clk_mono_ns();
    // the drain runs in a thread: the old unbounded wait would block it for ever, and the test says so in 5 s
    auto left = std::async(std::launch::async, [&] {
        return uring_drain(&ring, 1, clk_mono_ns() + 100 * 1000000ULL, 1000 * 1000000ULL, count, &seen);
    });
    if (left.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
        ASSERT_EQ(write(p[1], "x", 1), 1); // unblock it, then fail
        left.wait();
        FAIL() << "the drain did not end within 5 s of a 100 ms deadline";
    }
    const double took_s = (double)(clk_mono_ns() - t0) / 1e9;
    EXPECT_EQ(left.get(), 0u) << "cancelled, and its completion reaped";
    EXPECT_EQ(seen.n, 1) << "the read's own completion (not the cancel's) is reported";
    EXPECT_EQ(seen.cancelled, 1);
    EXPECT_GE(took_s, 0.09);
    EXPECT_LT(took_s, 1.2);

    // without a cancel budget it gives up at the deadline and says what is left
    sqe = io_uring_get_sqe(&ring);
    io_uring_prep_read(sqe, p[0], buf, sizeof buf, 0);
    io_uring_sqe_set_data64(sqe, 8);
    ASSERT_EQ(io_uring_submit(&ring), 1);
    EXPECT_EQ(uring_drain(&ring, 1, clk_mono_ns() + 50 * 1000000ULL, 0, count, &seen), 1u);
    ASSERT_EQ(write(p[1], "y", 1), 1); // now it completes
    EXPECT_EQ(uring_drain(&ring, 1, clk_mono_ns() + 1000 * 1000000ULL, 0, count, &seen), 0u);
    EXPECT_EQ(seen.n, 2);
    io_uring_queue_exit(&ring);
    close(p[0]);
    close(p[1]);
}
