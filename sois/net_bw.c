/* net_bw.c - SoI5, network bandwidth: requests streamed over TCP to an ibench sink at x % of the bandwidth
 * measured on that path.
 *
 * Each worker opens its own connection to --target (an `ibench sink`; numeric ADDR:PORT, nothing is resolved) and
 * checks the sink's handshake before sending anything.  Without --target the SoI starts a sink of its own on
 * 127.0.0.1 (loopback) and says so.  As the paper describes, request size and frequency both grow with x: a request
 * is max-request x sqrt(x/100) bytes (at least 4 KiB), and the engine's token bucket sends them as often as x % of
 * the peak allows, so the frequency grows as sqrt(x) too.  The peak is measured now on the same path (every thread
 * unthrottled with max-request requests, 5 x 200 ms, median) unless --cached-capacity.
 * Self-meter: bytes the sink acknowledged (TCP_INFO tcpi_bytes_acked), per second, as % of the peak; the secondary
 * figure is requests per second.  A sink that goes away fails the run (exit 1) with the reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "ib_err.h"
#include "kernels.h"
#include "memlimit.h"
#include "netsink.h"
#include "parse.h"
#include "peak.h"
#include "soikit.h"
#include "soi_opts.h"

static const struct soi_opt nbw_opts[] = {
    {SOI_OPT("max-request", SOI_O_SIZE, struct nbw_opts, max_request, 4096, 64 << 20, 1 << 20,
     "request size at 100 %; at x % requests are max-request x sqrt(x/100) (at least 4 KiB)")},
    {0},
};


struct nbw_thread {
    int fd;
    uint64_t acked0;     /* tcpi_bytes_acked at the start of the step */
    uint64_t reqs;       /* requests sent this step */
    char pad[40];
};

struct nbw {
    unsigned n;
    struct sink *own;    /* our own loopback sink, when no --target */
    int own_cpu;         /* where its threads run (-1: anywhere) */
    char target[128];    /* host:port; a longer one is refused, never cut */
    uint64_t maxreq, req;
    uint8_t *buf;        /* maxreq bytes, sent over and over */
    struct nbw_thread *t;
};

static void nbw_teardown(struct soi *s)
{
    struct nbw *p = s->priv;
    if (!p)
        return;
    for (unsigned i = 0; p->t && i < p->n; i++)
        if (p->t[i].fd >= 0)
            close(p->t[i].fd);
    if (p->own)
        sink_stop(p->own);
    if (p->buf)
        ib_unmap(p->buf, p->maxreq);
    free(p->t);
    free(p);
    s->priv = NULL;
}

/* Send one request of `req` bytes. 0, or -errno (the sink went away: EPIPE, ECONNRESET; stalled: EAGAIN). */
static int nbw_send(struct nbw *p, int fd, uint64_t req)
{
    uint64_t left = req;
    while (left) {
        ssize_t k = send(fd, p->buf + (req - left), left, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        left -= (uint64_t)k;
    }
    return 0;
}

static int nbw_window(void *arg, unsigned tid, uint64_t ns, double *rate)
{
    struct nbw *p = arg;
    int fd = p->t[tid].fd;
    uint64_t a0 = sink_bytes_acked(fd), s0 = clk_mono_ns(), d;
    int rc;
    do {
        rc = nbw_send(p, fd, p->maxreq);
        d = clk_mono_ns() - s0;
    } while (rc == 0 && d < ns);
    *rate = (double)(sink_bytes_acked(fd) - a0) / ((double)d / 1e9);
    return rc;
}

static int nbw_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    struct nbw *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    s->priv = p;
    p->n = env->nthreads;
    p->maxreq = ((const struct nbw_opts *)soi_opts(env))->max_request;
    p->req = p->maxreq;
    int rc;
    if ((rc = mlim_check(env->mlim, 1, p->maxreq, "net-bw: max-request", why, len)) < 0)
        goto fail; /* the one buffer every request is sent from, touched in full: held to what can be spared */
    p->t = calloc(p->n, sizeof(*p->t));
    p->buf = ib_map(p->maxreq, 0);
    if (!p->t || !p->buf) {
        rc = ib_why(why, len, -ENOMEM, "net-bw: out of memory");
        goto fail;
    }
    for (unsigned i = 0; i < p->n; i++)
        p->t[i].fd = -1;
    memset(p->buf, 0x5a, p->maxreq);
    if (env->target) {
        if (snprintf(p->target, sizeof(p->target), "%s", env->target) >= (int)sizeof(p->target)) {
            /* a cut target would be another address, and another key in the cache */
            rc = soi_bad_input(s, ib_why(why, len, -ENAMETOOLONG, "net-bw: target '%.40s...' is longer than %zu "
                                         "characters", env->target, sizeof(p->target) - 1));
            goto fail;
        }
    } else {
        /* the sink's threads go on the lowest CPU that neither the SoI nor its target (--near, a profiled program)
         * uses; with none left, beside the SoI, whose traffic it is, rather than on the target's CPU */
        int scpu = -1;
        for (unsigned k = 0; scpu < 0 && k < topo_npus(env->topo); k++) {
            int c = topo_pu_os(env->topo, k), used = c == env->target_cpu;
            for (unsigned i = 0; i < p->n; i++)
                used |= env->cpus[i] == c;
            if (!used)
                scpu = c;
        }
        if (scpu < 0 && env->target_cpu >= 0)
            scpu = env->cpus[0];
        if (!topo_is_this_machine(env->topo))
            scpu = -1;
        if ((rc = sink_start("127.0.0.1:0", scpu, 0, &p->own, why, len)) < 0)
            goto fail;
        p->own_cpu = scpu;
        snprintf(p->target, sizeof(p->target), "%s", sink_address(p->own));
    }
    for (unsigned i = 0; i < p->n; i++)
        if ((rc = sink_connect(p->target, 3000, &p->t[i].fd, why, len)) < 0) {
            if (env->target && rc != -EINTR) /* a --target that is not a reachable sink is the user's input */
                soi_bad_input(s, rc);
            goto fail;
        }
    char kind[CALIB_KIND_LEN]; /* the whole target: two targets must never share a cached peak */
    snprintf(kind, sizeof(kind), "n%s/%u", env->target ? p->target : "loopback-own", (unsigned)(p->maxreq >> 10));
    double peak = 0, old = 0;
    if ((rc = peak_need_threads(env, kind, p->n, nbw_window, p, 2 * PEAK_REP_NS, &peak, &old, why, len)) < 0) {
        if (rc != -EINTR)
            ib_why(why, len, rc, "net-bw: measuring the path to %s failed: %s", p->target, strerror(-rc));
        goto fail;
    }
    s->capacity = peak;
    s->pace_burst_ns = 25 * IB_NS_PER_MS; /* the path stalls for tens of ms: let the bucket make that up */
    char b1[32], b2[32], b3[40]; /* "; cached 123.45 GB/s" */
    kit_rate_units(s, "B/s", old, b3, sizeof(b3));
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "req/s");
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s TCP to the sink at %s, %u connection(s), %s requests, "
             "acknowledged bytes: %s%s", env->cached_capacity && old > 0 ? "cached" : "measured now:", p->target, p->n,
             fmt_bytes((double)p->maxreq, b1, sizeof(b1)), fmt_rate(peak, "B/s", b2, sizeof(b2)), b3);
    snprintf(s->note, sizeof(s->note), "%s%s", env->target ? "sending only to the sink at " : "no --target: sending to "
             "a sink of its own at ", p->target);
    if (!env->target && p->own_cpu >= 0)
        snprintf(s->note + strlen(s->note), sizeof(s->note) - strlen(s->note), " (loopback; the sink on CPU %d)",
                 p->own_cpu);
    else if (!env->target)
        snprintf(s->note + strlen(s->note), sizeof(s->note) - strlen(s->note), " (loopback; the sink shares the "
                 "SoI's CPUs)");
    return 0;
fail:
    nbw_teardown(s);
    return rc;
}

/* Wait (at most 1 s) until the sink has acknowledged everything written on fd. */
static void nbw_drain(int fd)
{
    uint64_t end = clk_mono_ns() + IB_NS_PER_S;
    int q = 0;
    while (ioctl(fd, SIOCOUTQ, &q) == 0 && q > 0 && clk_mono_ns() < end) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

static int nbw_set_intensity(struct soi *s, double x, char *why, size_t len)
{
    (void)why;
    (void)len;
    struct nbw *p = s->priv;
    double r = (double)p->maxreq * sqrt(x / 100.0);
    uint64_t req = (uint64_t)r / 4096 * 4096;
    p->req = req < 4096 ? 4096 : (req > p->maxreq ? p->maxreq : req);
    for (unsigned i = 0; i < p->n; i++) { /* a step starts with nothing in flight (the peak's tail included) */
        nbw_drain(p->t[i].fd);
        p->t[i].acked0 = sink_bytes_acked(p->t[i].fd);
        p->t[i].reqs = 0;
    }
    return 0;
}

static int nbw_step(struct soi *s, unsigned tid, uint64_t *units)
{
    /* one request per step: the engine's bucket then spaces requests out, so their frequency is rate / size */
    struct nbw *p = s->priv;
    struct nbw_thread *t = &p->t[tid];
    int rc = nbw_send(p, t->fd, p->req);
    if (rc < 0)
        return rc == -EAGAIN ? -ETIMEDOUT : rc; /* SO_SNDTIMEO: the sink stopped reading for 2 s */
    t->reqs++;
    *units = p->req;
    return 0;
}

static int nbw_measure(struct soi *s, struct soi_meter *m)
{
    struct nbw *p = s->priv;
    uint64_t acked = 0, reqs = 0, t0 = clk_mono_ns();
    for (unsigned i = 0; i < p->n; i++) {
        nbw_drain(p->t[i].fd); /* what the step sent and the sink has not acknowledged yet belongs to this step */
        uint64_t a = sink_bytes_acked(p->t[i].fd);
        acked += a - p->t[i].acked0;
        p->t[i].acked0 = a;
        reqs += p->t[i].reqs;
        p->t[i].reqs = 0;
    }
    double secs = (double)(m->wall_ns + (clk_mono_ns() - t0)) / 1e9;
    m->achieved = secs > 0 ? (double)acked / secs : 0;
    m->secondary = secs > 0 ? (double)reqs / secs : 0;
    return 0;
}

const struct soi_ops soi_net_bw = {
    .version = SOI_OPS_VERSION,
    .name = "net-bw",
    .resource = "network bandwidth",
    .summary = "TCP requests to an ibench sink, size and frequency growing with x, at x % of the path's bandwidth",
    .paper = "SoI5",
    .scope = TOPO_SCOPE_MACHINE,
    .kind = SOI_RATE,
    .opts = nbw_opts,
    .opts_size = sizeof(struct nbw_opts),
    .prepare = nbw_prepare,
    .set_intensity = nbw_set_intensity,
    .step = nbw_step,
    .measure = nbw_measure,
    .teardown = nbw_teardown,
    .io = SOI_IO_TARGET,
};
