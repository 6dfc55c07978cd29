/* interconnect.c - SoI14, the core-to-core / socket interconnect: cache-line messages between CPUs placed as far
 * apart as the machine allows, at x % of the message rate measured on those CPUs.
 *
 * Worker 0 is the hub; workers 1..n-1 are responders, placed by topo_spread (other package > other LLC > other
 * core).  One round: the hub stores (sequence, fan-out) into its ping line; each of the first `fan-out` responders
 * sees the new sequence and echoes it into its own ack line; the hub waits for every echo.  Each round moves 2 x
 * fan-out cache lines between CPUs (ping to each responder, each ack back): those are the messages counted.  With two
 * threads this is ping-pong; with more it is one-to-many fan-out.  Fan-out grows with x (ceil(x % of the
 * responders)) and the message rate is x % of the peak, measured unthrottled at full fan-out on the same CPUs: the
 * engine paces the hub only (token bucket on messages, waiting out its deadlines by spinning); responders poll
 * their line and answer (a pause-spin).  Every CPU of the SoI is therefore busy whenever it is above 0 %, by
 * design: on a VM a vCPU that idles halts, and the hypervisor may run it elsewhere when it wakes, which changed
 * this SoI's round trip on the 2-vCPU development guest between ~60, ~105 and ~450 ns (and up to 4 us right after
 * a wake-up).
 * Self-meter: messages per second counted by the hub, as % of the measured peak; load_ns: ns per round trip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "ib_atomic.h"
#include "ib_err.h"
#include "kernels.h"
#include "measure.h"
#include "parse.h"
#include "peak.h"
#include "soikit.h"

#define IC_LINE 64
#define IC_QUANTUM_NS 20000.0          /* one hub step() */
#define IC_WAIT_NS (1 * IB_NS_PER_MS)  /* a hub gives up on a round after this (a responder descheduled) */
#define IC_SERVE_NS 50000              /* a responder's step() polls this long */
#define IC_FANOUT_BITS 16

struct ic_line {
    atomic_uint_fast64_t v;
    char pad[IC_LINE - sizeof(atomic_uint_fast64_t)];
};

struct ic {
    size_t bytes;             /* of this mapping */
    unsigned n;               /* threads: hub + n-1 responders */
    unsigned fanout;          /* responders in a round, set by set_intensity */
    struct ic_line *ping;     /* hub -> responders: seq << 16 | fanout */
    struct ic_line *ack;      /* ack[i]: responder i's echo (ack[0] unused) */
    /* hub-private state, on its own line */
    struct {
        uint64_t seq;
        uint64_t rounds_per_step;
        uint64_t rounds, round_ns; /* this step: completed rounds and the time they took */
        uint64_t timeouts;
    } *hub;
    uint64_t *seen;           /* per responder, one line each: the last sequence it answered */
};

static inline void cpu_relax(void) { __builtin_ia32_pause(); }

unsigned ic_fanout(unsigned responders, double x); /* exported for tests */
unsigned ic_fanout(unsigned responders, double x)
{
    unsigned f = (unsigned)((double)responders * x / 100.0 + 0.999999);
    return f < 1 ? 1 : (f > responders ? responders : f);
}

/* One round at fan-out f. Returns 1 when every responder answered, 0 after IC_WAIT_NS without all answers. */
static int hub_round(struct ic *p, unsigned f)
{
    uint64_t seq = ++p->hub->seq;
    atomic_store_explicit(&p->ping->v, seq << IC_FANOUT_BITS | f, memory_order_release);
    for (unsigned i = 1; i <= f; i++) {
        unsigned spins = 0;
        uint64_t t0 = 0;
        while (atomic_load_explicit(&p->ack[i].v, memory_order_acquire) != seq) {
            cpu_relax();
            if ((++spins & 1023) == 0) {
                uint64_t now = clk_mono_ns();
                if (!t0)
                    t0 = now;
                else if (now - t0 > IC_WAIT_NS)
                    return 0;
            }
        }
    }
    return 1;
}

/* Responder tid: answer every new sequence addressed to it for up to budget_ns (or until *quit). Returns answers. */
static uint64_t serve(struct ic *p, unsigned tid, uint64_t budget_ns, const atomic_int *quit)
{
    uint64_t *seen = &p->seen[tid * (IC_LINE / sizeof(uint64_t))];
    uint64_t n = 0, t0 = clk_mono_ns();
    unsigned spins = 0;
    for (;;) {
        uint64_t v = atomic_load_explicit(&p->ping->v, memory_order_acquire);
        uint64_t seq = v >> IC_FANOUT_BITS;
        if (seq != *seen) {
            *seen = seq;
            if (tid <= (v & ((1u << IC_FANOUT_BITS) - 1))) {
                atomic_store_explicit(&p->ack[tid].v, seq, memory_order_release);
                n++;
            }
            continue;
        }
        cpu_relax();
        if ((++spins & 255) == 0) {
            if (quit && atomic_load(quit))
                break;
            if (budget_ns && clk_mono_ns() - t0 > budget_ns)
                break;
        }
    }
    return n;
}

/* ---- peak: unthrottled rounds at full fan-out, hub and responders on their own threads ------------------------ */

/* The hub (thread 0) measures; the responders (1..n-1) serve until it is done. */
static int ic_cal_window(void *arg, unsigned tid, int rep, uint64_t ns, double *rate)
{
    (void)tid;
    struct ic *p = arg;
    unsigned f = p->n - 1;
    uint64_t s = clk_mono_ns();
    if (rep < 0) { /* warm up: every responder running */
        while (clk_mono_ns() - s < ns)
            hub_round(p, f);
        return 0;
    }
    uint64_t rounds = 0, d;
    do {
        for (int k = 0; k < 64; k++)
            rounds += (uint64_t)hub_round(p, f);
        d = clk_mono_ns() - s;
    } while (d < ns);
    *rate = 2.0 * f * (double)rounds / ((double)d / 1e9);
    return 0;
}

static int ic_cal_serve(void *arg, unsigned tid, const atomic_int *done)
{
    serve(arg, tid, 0, done);
    return 0;
}

static int ic_measure_peak(struct soi *s, double *peak, double *spread, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    struct ic *p = s->priv;
    struct meas_spec sp = {.what = "interconnect: measuring the peak", .n = p->n, .cpus = env->cpus,
                           .topo = topo_is_this_machine(env->topo) ? env->topo : NULL, .stop = env->stop, .arg = p,
                           .nmeasure = 1, .warmups = 1, .warm_ns = 30 * IB_NS_PER_MS, .windows = PEAK_REPS,
                           .window_ns = PEAK_REP_NS, .window = ic_cal_window, .serve = ic_cal_serve};
    struct meas_out o = {0};
    int rc = meas_run(&sp, &o, why, len);
    if (rc < 0)
        return rc;
    *peak = o.median;
    *spread = o.spread;
    if (!(*peak > 0))
        return ib_why(why, len, -EIO, "interconnect: no round completed while measuring the peak (a responder "
                                      "never ran: are its CPUs available?)");
    return 0;
}

/* ---- ops ------------------------------------------------------------------------------------------------------- */

static int ic_supported(const struct soi_env *env, char *why, size_t len)
{
    if (env->nthreads < 2)
        return ib_why(why, len, -EINVAL, "interconnect needs at least 2 threads (a hub and a responder), got %u",
                      env->nthreads);
    if (env->nthreads - 1 >= (1u << IC_FANOUT_BITS))
        return ib_why(why, len, -EINVAL, "interconnect: at most %u threads", 1u << IC_FANOUT_BITS);
    return 0;
}

static void ic_teardown(struct soi *s)
{
    struct ic *p = s->priv;
    if (!p)
        return;
    ib_unmap(p, p->bytes);
    s->priv = NULL;
}

static int ic_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    unsigned n = env->nthreads;
    /* layout: struct ic, then one line each: ping, hub state, n acks, n responder 'seen' words */
    size_t off_ping = IC_LINE, off_hub = 2 * IC_LINE, off_ack = 3 * IC_LINE, off_seen = off_ack + (size_t)n * IC_LINE;
    size_t bytes = off_seen + (size_t)n * IC_LINE;
    uint8_t *m = ib_map(bytes, 0);
    if (!m)
        return ib_why(why, len, -ENOMEM, "interconnect: cannot map %zu bytes", bytes);
    struct ic *p = (struct ic *)m;
    p->bytes = bytes;
    p->n = n;
    p->ping = (struct ic_line *)(m + off_ping);
    p->hub = (void *)(m + off_hub);
    p->ack = (struct ic_line *)(m + off_ack);
    p->seen = (uint64_t *)(m + off_seen);
    p->fanout = n - 1;
    p->hub->rounds_per_step = 100;
    s->priv = p;

    int same = 0;
    for (unsigned i = 1; i < n; i++)
        same |= env->cpus[i] == env->cpus[0];
    const struct calib_bw *e = calib_bw_find(env->calib, "interconnect", env->cpus, n);
    double peak = 0, spread = 0, old = e ? e->bps : 0;
    int rc;
    if (env->cached_capacity && old > 0) {
        peak = old;
    } else if ((rc = ic_measure_peak(s, &peak, &spread, why, len)) < 0) {
        ic_teardown(s);
        return rc;
    } else {
        peak_store(env->calib, "interconnect", env->cpus, n, peak, spread);
    }
    s->capacity = peak;
    s->pace_lead_only = 1;
    s->pace_spin = 1; /* the responders spin anyway; a hub that slept would let its vCPU halt and be moved */
    /* A hub or responder that another task preempts stalls the rounds for a scheduler slice, several ms: with the
     * engine's 2 ms of credit that time was lost for good and paced levels fell a quarter short under contention
     * (docs/sois.md). 25 ms of credit lets the hub make it up, as the I/O SoIs do with their stalls. */
    s->pace_burst_ns = 25 * IB_NS_PER_MS;
    snprintf(s->load_meaning, sizeof(s->load_meaning), "ns per round trip (hub -> responders -> hub)");
    char b1[32], b2[48], apart[32] = "";
    kit_rate_units(s, "msg/s", old, b2, sizeof(b2));
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s peak of 64 B cache-line messages, hub + %u responder(s): %s%s",
             env->cached_capacity && old > 0 ? "cached" : "measured now:", n - 1, fmt_rate(peak, "msg/s", b1, sizeof(b1)),
             b2);
    topo_apart(env->topo, env->cpus[0], env->cpus[1], apart, sizeof(apart));
    char unstable[96] = "";
    if (spread > 0.25)
        snprintf(unstable, sizeof(unstable), "; UNSTABLE: the peak moved by %.0f %% across %d windows of 100 ms "
                 "(the host moves these CPUs?)", spread * 100, PEAK_REPS);
    if (same)
        snprintf(s->note, sizeof(s->note), "hub and a responder share CPU %d: their messages stay in one core and "
                 "they time-share it%s", env->cpus[0], unstable);
    else
        snprintf(s->note, sizeof(s->note), "hub on CPU %d; its nearest responder is in another %s%s", env->cpus[0],
                 *apart ? apart : "PU", unstable);
    return 0;
}

static int ic_set_intensity(struct soi *s, double x, char *why, size_t len)
{
    (void)why;
    (void)len;
    struct ic *p = s->priv;
    p->fanout = ic_fanout(p->n - 1, x);
    p->hub->rounds = p->hub->round_ns = 0;
    return 0;
}

static int ic_step(struct soi *s, unsigned tid, uint64_t *units)
{
    struct ic *p = s->priv;
    if (tid) {
        serve(p, tid, IC_SERVE_NS, s->env->stop);
        *units = 0; /* the hub counts every message of a round */
        return 0;
    }
    uint64_t q = p->hub->rounds_per_step, done = 0, t0 = clk_mono_ns();
    for (uint64_t r = 0; r < q; r++) {
        if (!hub_round(p, p->fanout)) {
            p->hub->timeouts++;
            break;
        }
        done++;
    }
    uint64_t ns = clk_mono_ns() - t0;
    p->hub->rounds += done;
    p->hub->round_ns += ns;
    *units = 2ull * p->fanout * done;
    if (done == q && ns > 0) { /* adapt the quantum to ~20 us, gently */
        double nq = 0.5 * (double)q + 0.5 * (double)q * IC_QUANTUM_NS / (double)ns;
        p->hub->rounds_per_step = nq < 1 ? 1 : (nq > 1e6 ? 1000000 : (uint64_t)nq);
    }
    return 0;
}

static int ic_measure(struct soi *s, struct soi_meter *m)
{
    struct ic *p = s->priv;
    m->achieved = m->secondary; /* messages per second, counted by the hub */
    m->load_ns = p->hub->rounds ? (double)p->hub->round_ns / (double)p->hub->rounds : 0;
    return 0;
}

const struct soi_ops soi_interconnect = {
    .version = SOI_OPS_VERSION,
    .name = "interconnect",
    .resource = "core-to-core / socket interconnect",
    .summary = "cache-line ping-pong and fan-out between the farthest CPUs at x % of the measured message rate",
    .paper = "SoI14",
    .scope = TOPO_SCOPE_MACHINE,
    .kind = SOI_RATE,
    .supported = ic_supported,
    .prepare = ic_prepare,
    .set_intensity = ic_set_intensity,
    .step = ic_step,
    .measure = ic_measure,
    .teardown = ic_teardown,
    .min_threads = 2,
    .placement = SOI_PLACE_SPREAD,
};
