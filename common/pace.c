/* pace.c - virtual-time pacing with bounded credit (see pace.h).
 *
 * Precision: vt_ns is an integer, so adding a rounded per-charge increment would drift (a million 1-byte charges
 * at 3 GB/s are 0.33 ns each).  Instead the increment of a charge is F(total after) - F(total before), where
 * total is units_total (active_ns for the duty pacer) since init/set and F(x) = round(x * ns-per-unit).  The
 * increments telescope, so the virtual time earned since init/set is always within 1 ns of exact no matter how
 * the work is split into charges.  Flooring vt at now - burst only moves vt forward and does not disturb this.
 *
 * pace_bucket counts whole units (units_total is an integer): an integral charge is exact as above; a
 * fractional charge advances vt by its exact share (to within 1 ns) and adds round(units) to units_total.
 */
#include "pace.h"

#include <errno.h>
#include <math.h>

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* round(x) as uint64, saturating; x >= 0. */
static uint64_t ld_to_u64(long double x)
{
    if (!(x > 0.0L))
        return 0;
    if (x >= 18446744073709551615.0L)
        return UINT64_MAX;
    return (uint64_t)(x + 0.5L);
}

/* vt := max(vt, now - burst): credit is bounded by burst. */
static uint64_t bound_credit(uint64_t vt, uint64_t now, uint64_t burst)
{
    if (now > burst && vt < now - burst)
        return now - burst;
    return vt;
}

int pace_bucket_init(struct pace_bucket *b, struct ib_clock *clk, double rate, uint64_t burst_ns)
{
    if (!b || !clk || !clk->now_ns || isnan(rate))
        return -EINVAL;
    b->clk = clk;
    b->rate = rate;
    b->burst_ns = burst_ns;
    b->vt_ns = clk->now_ns(clk);
    b->units_total = 0;
    return 0;
}

/* A NaN rate is treated as unlimited, like any rate <= 0. */
void pace_bucket_set_rate(struct pace_bucket *b, double rate)
{
    b->rate = isnan(rate) ? 0.0 : rate;
    b->vt_ns = b->clk->now_ns(b->clk);
    b->units_total = 0;
}

uint64_t pace_bucket_charge(struct pace_bucket *b, double units)
{
    if (!(units > 0.0))
        units = 0.0; /* negative or NaN charges count as nothing */
    uint64_t u0 = b->units_total;
    uint64_t whole = ld_to_u64((long double)units);
    b->units_total = sat_add(u0, whole);
    if (!(b->rate > 0.0))
        return 0; /* unlimited */

    uint64_t now = b->clk->now_ns(b->clk);
    long double rate = (long double)b->rate;
    long double after = ((long double)whole == (long double)units) ? (long double)b->units_total
                                                                   : (long double)u0 + (long double)units;
    uint64_t inc = ld_to_u64(after * 1e9L / rate) - ld_to_u64((long double)u0 * 1e9L / rate);

    b->vt_ns = sat_add(bound_credit(b->vt_ns, now, b->burst_ns), inc);
    return b->vt_ns > now ? b->vt_ns : 0;
}

int pace_duty_init(struct pace_duty *d, struct ib_clock *clk, double duty, uint64_t burst_ns)
{
    if (!d || !clk || !clk->now_ns || !(duty >= 0.0 && duty <= 1.0))
        return -EINVAL;
    d->clk = clk;
    d->duty = duty;
    d->burst_ns = burst_ns;
    d->period_ns = 0;
    d->vt_ns = clk->now_ns(clk);
    d->active_ns = 0;
    return 0;
}

/* Clamps duty to [0,1] (NaN -> 0); resets virtual time to now (no credit or debt carried over). */
void pace_duty_set(struct pace_duty *d, double duty)
{
    if (!(duty >= 0.0))
        duty = 0.0;
    if (duty > 1.0)
        duty = 1.0;
    d->duty = duty;
    d->vt_ns = d->clk->now_ns(d->clk);
    d->active_ns = 0;
}

void pace_duty_set_period(struct pace_duty *d, uint64_t period_ns) { d->period_ns = period_ns; }

/* The charged total becomes a1 (either way): vt moves by F(a1) - F(a0), F(x) = round(x / duty). A sleep is due once
 * the lead plus `extra` (the lead the sleep's own cost will add) reaches the rest of a period. */
static uint64_t duty_account(struct pace_duty *d, uint64_t a1, uint64_t extra)
{
    uint64_t now = d->clk->now_ns(d->clk);
    uint64_t a0 = d->active_ns;
    d->active_ns = a1;

    if (!(d->duty > 0.0)) {
        /* idle: come back after one burst. Never 0, which would mean "go on". */
        uint64_t dl = sat_add(now, d->burst_ns);
        return dl ? dl : 1;
    }
    if (d->duty >= 1.0) {
        d->vt_ns = now;
        return 0;
    }
    long double duty = (long double)d->duty;
    uint64_t f1 = ld_to_u64((long double)a1 / duty), f0 = ld_to_u64((long double)a0 / duty);
    uint64_t vt = bound_credit(d->vt_ns, now, d->burst_ns);
    d->vt_ns = f1 >= f0 ? sat_add(vt, f1 - f0) : (vt > f0 - f1 ? vt - (f0 - f1) : 0);
    if (d->vt_ns <= now)
        return 0;
    /* ahead: sleep only once a whole period's rest is due, so a period holds one sleep (and one wake-up) */
    uint64_t gate = ld_to_u64((1.0L - duty) * (long double)d->period_ns);
    return sat_add(d->vt_ns - now, extra) >= gate ? d->vt_ns : 0;
}

uint64_t pace_duty_charge(struct pace_duty *d, uint64_t active_ns)
{
    return duty_account(d, sat_add(d->active_ns, active_ns), 0);
}

uint64_t pace_duty_sync(struct pace_duty *d, uint64_t used_ns) { return duty_account(d, used_ns, 0); }

uint64_t pace_duty_period_for(uint64_t wake_ns)
{
    long double p = (long double)wake_ns / PACE_WAKE_BUDGET;
    if (p < (long double)PACE_PERIOD_MIN_NS)
        return PACE_PERIOD_MIN_NS;
    if (p > (long double)PACE_PERIOD_MAX_NS)
        return PACE_PERIOD_MAX_NS;
    return (uint64_t)ceill(p);
}

int pace_dw_init(struct pace_dw *w, struct ib_clock *clk, double duty, uint64_t burst_ns, uint64_t wake_ns,
                 uint64_t period_ns)
{
    if (!w)
        return -EINVAL;
    *w = (struct pace_dw){.wake_ns = wake_ns, .forced_period = period_ns};
    uint64_t p = period_ns ? period_ns : pace_duty_period_for(wake_ns);
    /* credit of at least a period: a period's sleep that overshoots is made up, not lost */
    int rc = pace_duty_init(&w->d, clk, duty, burst_ns > p ? burst_ns : p);
    if (rc == 0)
        pace_duty_set_period(&w->d, p);
    return rc;
}

uint64_t pace_dw_worked(struct pace_dw *w, uint64_t active_ns)
{
    w->worked_since = sat_add(w->worked_since, active_ns);
    int paced = w->d.duty > 0.0 && w->d.duty < 1.0;
    /* due counting the sleep's cost, so a cycle of work, sleep and wake-up lasts one period */
    uint64_t extra = paced ? ld_to_u64((long double)w->wake_ns / (long double)w->d.duty) : 0;
    uint64_t dl = duty_account(&w->d, sat_add(w->d.active_ns, active_ns), extra);
    if (!dl || !paced)
        return dl;
    uint64_t later = pace_duty_charge(&w->d, w->wake_ns); /* the sleep's own CPU time, budgeted before it */
    w->due = later > dl ? later : dl;
    return w->due;
}

void pace_dw_woke(struct pace_dw *w, uint64_t used_ns)
{
    uint64_t beyond = used_ns > w->cpu_synced + w->worked_since ? used_ns - w->cpu_synced - w->worked_since : 0;
    w->cpu_synced = used_ns;
    w->worked_since = 0;
    w->due = 0;
    w->sleeps++;
    w->wake_sum = sat_add(w->wake_sum, beyond);
    pace_duty_sync(&w->d, used_ns);
    /* follow the cost, a quarter of the way per wake-up: one slow wake-up does not double the period */
    w->wake_ns = (3 * w->wake_ns + beyond) / 4;
    if (!w->forced_period) {
        uint64_t p = pace_duty_period_for(w->wake_ns);
        pace_duty_set_period(&w->d, p);
        if (w->d.burst_ns < p)
            w->d.burst_ns = p;
    }
}

uint64_t pace_dw_period(const struct pace_dw *w) { return w->d.period_ns; }

void pace_dw_skip(struct pace_dw *w, uint64_t gap_ns)
{
    w->d.vt_ns = sat_add(w->d.vt_ns, gap_ns);
    if (w->due)
        w->due = sat_add(w->due, gap_ns);
}
