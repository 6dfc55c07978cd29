/* prefetch.c - SoI13, hardware prefetchers and branch predictor: x % of the time active running an access and
 * branch pattern that neither can learn.
 *
 * Each worker owns a 256 KiB buffer (fits the L2, so the pressure is on the predictors, not on memory bandwidth)
 * and a xorshift64* PRNG.  Every access:
 *   - picks a line at a random offset inside a 32-line window, and the window itself jumps forward by a random
 *     0..127 lines after every access (wrapping around the buffer).  Consecutive addresses therefore differ by a
 *     stride that changes every time (roughly -31..+158 lines) and never repeat a direction/stride long enough for
 *     the stride (IP-based) prefetcher to lock on, nor run over ascending/descending lines for the stream
 *     prefetcher to confirm a stream; the adjacent-line / next-page prefetchers fetch lines that are mostly unused.
 *     The prefetchers still train (and evict their own state for other code on the core) on every access.
 *   - takes two data-dependent branches on independent PRNG bits (each 50/50, no history correlation): one arm
 *     loads and accumulates, the other stores; one arm multiplies, the other shifts and xors behind a compiler
 *     barrier.  The arms have different shapes (and the barrier forbids if-conversion), so they stay conditional
 *     jumps (tests/test_l1i_prefetch.cpp checks pf_kernel's disassembly) and the direction predictor is wrong about
 *     half the time, flushing and polluting its tables and the BTB.
 * The engine's duty-cycle pacing keeps a worker on its CPU x % of the time (its own CPU time, wake-ups included); the
 * self-meter is that share (the engine's), with accesses per second as the secondary figure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ib_err.h"
#include "soikit.h"

#define PF_BUF (256 * 1024)
#define PF_LINES (PF_BUF / 64)
#define PF_WINDOW 32
#define PF_STEP_NS 20000.0 /* ~20 us per step() */

struct pf_thread {
    uint8_t *buf;
    uint64_t rng;
    uint64_t win;      /* first line of the current window */
    uint64_t quantum;  /* accesses per step(), adapted to PF_STEP_NS */
    uint64_t sink;     /* keeps the loads live */
};

struct pf {
    unsigned n;
    struct pf_thread *t;
};

/* The kernel: n accesses; returns a value folded from the data. Not inlined so tests can find it by name. */
__attribute__((noinline)) uint64_t pf_kernel(uint8_t *buf, uint64_t *rng, uint64_t *win, uint64_t n);
__attribute__((noinline)) uint64_t pf_kernel(uint8_t *buf, uint64_t *rng, uint64_t *win, uint64_t n)
{
    uint64_t s = *rng, w = *win, acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = ib_rand(&s);
        uint64_t line = (w + (r & (PF_WINDOW - 1))) & (PF_LINES - 1);
        uint64_t *p = (uint64_t *)(buf + line * 64 + ((r >> 5) & 7) * 8);
        if ((r >> 17) & 1) {
            acc += *p;
        } else {
            *p = acc ^ r;
            __asm__ volatile("" ::: "memory");
        }
        if ((r >> 29) & 1) {
            acc = acc * 0x9e3779b97f4a7c15ULL + (r >> 40);
        } else {
            __asm__ volatile("" ::: "memory");
            acc ^= acc >> 7;
        }
        w = (w + ((r >> 48) & 127)) & (PF_LINES - 1);
    }
    *rng = s;
    *win = w;
    return acc;
}

static void pf_teardown(struct soi *s)
{
    struct pf *p = s->priv;
    if (!p)
        return;
    for (unsigned i = 0; p->t && i < p->n; i++)
        if (p->t[i].buf)
            ib_unmap(p->t[i].buf, PF_BUF);
    free(p->t);
    free(p);
    s->priv = NULL;
}

static int pf_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    struct pf *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    s->priv = p;
    p->t = calloc(env->nthreads, sizeof(*p->t));
    if (!p->t) {
        pf_teardown(s);
        return -ENOMEM;
    }
    p->n = env->nthreads;
    for (unsigned i = 0; i < p->n; i++) {
        struct pf_thread *t = &p->t[i];
        t->buf = ib_map(PF_BUF, 0);
        if (!t->buf) {
            pf_teardown(s);
            return ib_why(why, len, -ENOMEM, "prefetch: cannot map its %d KiB buffer", PF_BUF / 1024);
        }
        memset(t->buf, (int)i + 1, PF_BUF);
        t->rng = (0x2545f4914f6cdd1dULL * (i + 1)) ^ (uint64_t)env->cpus[i] ^ 0x5bd1e995;
        t->quantum = 1000;
    }
    s->capacity = 1.0;
    snprintf(s->unit, sizeof(s->unit), "on-CPU");
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "acc/s");
    snprintf(s->capacity_src, sizeof(s->capacity_src),
             "duty cycle: share of the CPU held, as its own CPU time (random-stride accesses over %d KiB, "
             "random branches)",
             PF_BUF / 1024);
    return 0;
}

static int pf_step(struct soi *s, unsigned tid, uint64_t *units)
{
    struct pf_thread *t = &((struct pf *)s->priv)->t[tid];
    uint64_t t0 = clk_mono_ns();
    t->sink += pf_kernel(t->buf, &t->rng, &t->win, t->quantum);
    uint64_t ns = clk_mono_ns() - t0;
    *units = t->quantum;
    /* adapt the quantum to ~20 us, gently, within sane bounds */
    if (ns > 0) {
        double q = (double)t->quantum * PF_STEP_NS / (double)ns;
        q = 0.5 * (double)t->quantum + 0.5 * q;
        if (q < 64)
            q = 64;
        if (q > 1e6)
            q = 1e6;
        t->quantum = (uint64_t)q;
    }
    return 0;
}

static int pf_measure(struct soi *s, struct soi_meter *m)
{
    /* achieved: the engine's active fraction; secondary: the engine's accesses per second. */
    (void)s;
    (void)m;
    return 0;
}

const struct soi_ops soi_prefetch = {
    .version = SOI_OPS_VERSION,
    .name = "prefetch",
    .resource = "prefetchers and branch predictor",
    .summary = "x % of the time: random-stride accesses and random branches the predictors cannot learn",
    .paper = "SoI13",
    .scope = TOPO_SCOPE_CORE,
    .kind = SOI_DUTY,
    .prepare = pf_prepare,
    .step = pf_step,
    .measure = pf_measure,
    .teardown = pf_teardown,
};
