/* clock.c - the real monotonic clock and a fake clock for testing the pacers without sleeping. */
#include "clock.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static uint64_t ts_to_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

uint64_t clk_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail for a valid clock id and pointer */
    return ts_to_ns(&ts);
}

uint64_t clk_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return ts_to_ns(&ts);
}

uint64_t clk_wake_cost_ns(void)
{
    enum { BATCHES = 3, SLEEPS = 8 };
    const uint64_t nap = 100000;
    uint64_t cost[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        uint64_t c0 = clk_thread_cpu_ns();
        for (int i = 0; i < SLEEPS; i++) {
            uint64_t dl = clk_mono_ns() + nap;
            struct timespec ts = {.tv_sec = (time_t)(dl / 1000000000ULL), .tv_nsec = (long)(dl % 1000000000ULL)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        }
        cost[b] = (clk_thread_cpu_ns() - c0) / SLEEPS;
    }
    /* median of three */
    uint64_t lo = cost[0] < cost[1] ? cost[0] : cost[1], hi = cost[0] < cost[1] ? cost[1] : cost[0];
    return cost[2] < lo ? lo : cost[2] > hi ? hi : cost[2];
}

static uint64_t mono_now(struct ib_clock *c)
{
    (void)c;
    return clk_mono_ns();
}

static void mono_sleep_until(struct ib_clock *c, uint64_t deadline_ns)
{
    struct timespec ts;
    (void)c;
    ts.tv_sec = (time_t)(deadline_ns / 1000000000ULL);
    ts.tv_nsec = (long)(deadline_ns % 1000000000ULL);
    /* Absolute deadline: restarting after a signal neither drifts nor sleeps short. clock_nanosleep returns the
     * error number instead of setting errno. */
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static uint64_t fake_now(struct ib_clock *c)
{
    return c->fake_ns;
}

static void fake_sleep_until(struct ib_clock *c, uint64_t deadline_ns)
{
    if (deadline_ns > c->fake_ns) { /* never backwards */
        c->fake_slept_ns += deadline_ns - c->fake_ns;
        c->fake_ns = deadline_ns;
    }
}

void clk_init_monotonic(struct ib_clock *c)
{
    memset(c, 0, sizeof(*c));
    c->now_ns = mono_now;
    c->sleep_until_ns = mono_sleep_until;
}

void clk_init_fake(struct ib_clock *c, uint64_t start_ns)
{
    memset(c, 0, sizeof(*c));
    c->now_ns = fake_now;
    c->sleep_until_ns = fake_sleep_until;
    c->fake_ns = start_ns;
}

/* Moves the fake clock forward by ns (time spent working: not counted in fake_slept_ns). Saturates. */
void clk_fake_advance(struct ib_clock *c, uint64_t ns)
{
    c->fake_ns = (c->fake_ns > UINT64_MAX - ns) ? UINT64_MAX : c->fake_ns + ns;
}
