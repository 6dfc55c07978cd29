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
