/* clock.h - a clock the pacers can be tested against without sleeping.
 *
 * The real clock reads CLOCK_MONOTONIC and sleeps with clock_nanosleep(TIMER_ABSTIME).  The fake clock's time
 * only moves when the test (or a sleep on it) moves it, so controllers can be checked exactly and instantly.
 */
#ifndef IB_CLOCK_H
#define IB_CLOCK_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ib_clock {
    uint64_t (*now_ns)(struct ib_clock *c);
    /* Block until the clock reads >= deadline_ns (absolute). The fake clock jumps there. */
    void (*sleep_until_ns)(struct ib_clock *c, uint64_t deadline_ns);
    uint64_t fake_ns;       /* fake clock: current time */
    uint64_t fake_slept_ns; /* fake clock: total time spent in sleep_until_ns */
};

/* CLOCK_MONOTONIC in ns. */
uint64_t clk_mono_ns(void);
/* CLOCK_THREAD_CPUTIME_ID in ns (CPU time of the calling thread). */
uint64_t clk_thread_cpu_ns(void);

/* The CPU time (the calling thread's clock) one short absolute sleep and its wake-up cost the thread: the median over
 * 3 batches of 8 sleeps of 100 us. An observer (top, schedstat) counts it as the thread's, beside its work; on a VM
 * it is tens of microseconds. Takes about 4 ms; set the thread's timer slack first. */
uint64_t clk_wake_cost_ns(void);

void clk_init_monotonic(struct ib_clock *c);
void clk_init_fake(struct ib_clock *c, uint64_t start_ns);
void clk_fake_advance(struct ib_clock *c, uint64_t ns);

#ifdef __cplusplus
}
#endif
#endif
