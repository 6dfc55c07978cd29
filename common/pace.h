/* pace.h - pacing controllers with sub-millisecond slices and absolute deadlines.
 *
 * Both controllers use virtual time: every unit of work done pushes a point on the time line forward by the time
 * that work is worth at the target rate.  Whenever that point is ahead of the clock the worker sleeps until it
 * (an absolute deadline, so sleeping late never accumulates drift).  A worker that fell behind (preemption, a
 * slow chunk) may catch up, but the point is never allowed to lag the clock by more than `burst`: that bounds the
 * credit a stall can bank, so it is not paid back by an unbounded catch-up burst.
 *
 *  - pace_bucket: rate-type SoIs (bytes/s, ops/s). Charge the units a quantum did; get a deadline.
 *  - pace_duty:   time-type SoIs. Charge the ns a quantum was active; get a deadline so that
 *                 active / elapsed -> duty.
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
    uint64_t vt_ns;       /* virtual time */
    uint64_t active_ns;   /* active ns charged since init/set_duty */
};

int pace_duty_init(struct pace_duty *d, struct ib_clock *clk, double duty, uint64_t burst_ns);
void pace_duty_set(struct pace_duty *d, double duty);
/* Account `active_ns` of work. Returns the absolute deadline to idle until, or 0. duty==0 returns now+burst. */
uint64_t pace_duty_charge(struct pace_duty *d, uint64_t active_ns);

#ifdef __cplusplus
}
#endif
#endif
