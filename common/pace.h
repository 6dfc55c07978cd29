/* pace.h - pacing controllers with sub-millisecond slices and absolute deadlines.
 *
 * Both controllers use virtual time: every unit of work done pushes a point on the time line forward by the time
 * that work is worth at the target rate.  Whenever that point is ahead of the clock the worker sleeps until it
 * (an absolute deadline, so sleeping late never accumulates drift).  A worker that fell behind (preemption, a
 * slow chunk) may catch up, but the point is never allowed to lag the clock by more than `burst`: that bounds the
 * credit a stall can bank, so it is not paid back by an unbounded catch-up burst.
 *
 *  - pace_bucket: rate-type SoIs (bytes/s, ops/s). Charge the units a quantum did; get a deadline.
 *  - pace_duty:   time-type SoIs. Charge the thread's CPU time; get a deadline so that CPU time / elapsed -> duty.
 *                 What counts is the CPU time an observer sees (top, /proc/PID/task/TID/schedstat), not only the
 *                 time inside step(): every sleep and wake-up costs CPU time too (tens of us on a VM), so the
 *                 worker charges an estimate of it before it sleeps and the thread's clock after it wakes
 *                 (pace_duty_sync). Work comes in cycles of `period` (the duty quantum): active duty x period,
 *                 then one sleep of the rest, so one wake-up is paid per period, not per step().
 */
#ifndef IB_PACE_H
#define IB_PACE_H
#include <stdint.h>
#include "clock.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pace_bucket {
    struct ib_clock *clk;
    double rate;          /* units per second; <= 0 means unlimited (never throttles) */
    uint64_t burst_ns;    /* max credit, expressed as time */
    uint64_t vt_ns;       /* virtual time: when the work charged so far is "earned" */
    uint64_t units_total; /* units charged since init/set_rate, for tests and meters */
};

/* rate in units/s (<= 0: unlimited); burst_ns bounds the credit a stall can bank (e.g. 500 us). */
int pace_bucket_init(struct pace_bucket *b, struct ib_clock *clk, double rate, uint64_t burst_ns);
/* Changes the rate from now on; resets the virtual time to now (no credit or debt carried over). */
void pace_bucket_set_rate(struct pace_bucket *b, double rate);
/* Account `units` just done. Returns the absolute deadline (ns) the caller must sleep until before more work,
 * or 0 when it may go on immediately. */
uint64_t pace_bucket_charge(struct pace_bucket *b, double units);

struct pace_duty {
    struct ib_clock *clk;
    double duty;          /* 0..1 */
    uint64_t burst_ns;    /* max credit */
    uint64_t period_ns;   /* the duty quantum: sleep only once the lead reaches (1 - duty) x period (0: whenever ahead) */
    uint64_t vt_ns;       /* virtual time */
    uint64_t active_ns;   /* CPU ns charged since init/set_duty */
};

int pace_duty_init(struct pace_duty *d, struct ib_clock *clk, double duty, uint64_t burst_ns);
void pace_duty_set(struct pace_duty *d, double duty);
/* The duty quantum (see struct pace_duty); kept across pace_duty_set. */
void pace_duty_set_period(struct pace_duty *d, uint64_t period_ns);
/* Account `active_ns` of CPU time. Returns the absolute deadline to idle until, or 0 (go on: not ahead, or ahead by
 * less than the rest of a period). duty==0 returns now+burst. */
uint64_t pace_duty_charge(struct pace_duty *d, uint64_t active_ns);
/* The CPU time really used since init/set (the thread's clock) replaces what was charged: the difference, either
 * way, moves the virtual time (an estimate too high gives the time back). Returns as pace_duty_charge. */
uint64_t pace_duty_sync(struct pace_duty *d, uint64_t used_ns);

/* The duty quantum for a sleep-and-wake-up cost of wake_ns CPU ns: the shortest period whose wake-up costs at most
 * PACE_WAKE_BUDGET of a CPU (one wake-up a period), within [PACE_PERIOD_MIN_NS, PACE_PERIOD_MAX_NS]. */
#define PACE_WAKE_BUDGET 0.02
#define PACE_PERIOD_MIN_NS 50000ULL      /* a few step() quanta: below it the period is the step itself */
#define PACE_PERIOD_MAX_NS 10000000ULL   /* a worker sleeps at most this long at once, so it parks within it */
uint64_t pace_duty_period_for(uint64_t wake_ns);

/* A duty worker: the pacer, the wake-up budget, and the duty quantum adapted to what wake-ups really cost.
 *   loop { step(); dl = pace_dw_worked(&w, ns in step()); if (dl) { sleep until dl; pace_dw_woke(&w, CPU used); } }
 * While it works a thread's CPU time is its wall time (cheap to read), so worked() charges that; a sleep costs CPU
 * time too, so worked() budgets the estimated cost before returning a deadline, and woke() puts the thread's own
 * clock (read once a period) in place of the estimates: a dearer wake-up or a preemption is corrected, either way.
 * The estimate follows what wake-ups cost (a moving average of what the clock showed beyond the work), and unless the
 * period was forced, the period follows it (pace_duty_period_for). */
struct pace_dw {
    struct pace_duty d;
    uint64_t wake_ns;        /* what a sleep and wake-up is estimated to cost (CPU ns) */
    uint64_t forced_period;  /* 0: the period follows wake_ns */
    uint64_t cpu_synced;     /* CPU time used at the last woke() (since init) */
    uint64_t worked_since;   /* ns charged by worked() since then */
    uint64_t due;            /* the deadline worked() last gave, until woke(): a sleep cut short is finished first */
    uint64_t sleeps;         /* woke() calls since init */
    uint64_t wake_sum;       /* what the clock showed beyond the work over them (CPU ns) */
};
/* wake_ns: the start-up estimate (clk_wake_cost_ns); period_ns: a forced period, or 0. -EINVAL as pace_duty_init. */
int pace_dw_init(struct pace_dw *w, struct ib_clock *clk, double duty, uint64_t burst_ns, uint64_t wake_ns,
                 uint64_t period_ns);
/* active_ns of work done: the deadline to sleep until (the sleep's own cost budgeted in), or 0: go on. */
uint64_t pace_dw_worked(struct pace_dw *w, uint64_t active_ns);
/* Woke from the sleep worked() asked for (at its deadline, not before); used_ns: the thread's CPU time since init. */
void pace_dw_woke(struct pace_dw *w, uint64_t used_ns);
uint64_t pace_dw_period(const struct pace_dw *w);
/* The worker was away for gap_ns (parked between an engine's metering steps): that time is not the pacer's, so it
 * earns no idle credit for it; the virtual time and a pending deadline move on by gap_ns. */
void pace_dw_skip(struct pace_dw *w, uint64_t gap_ns);

#ifdef __cplusplus
}
#endif
#endif
