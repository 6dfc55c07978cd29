/* profile.c - a real profile (profile.h): the target, its samples and its work, and each SoI through the background
 * engine, as a prof_meter for the method (profile_method.h), assembled into a struct profile. */
#define _GNU_SOURCE
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "engine.h"
#include "ib_err.h"
#include "output.h"
#include "profile_method.h"
#include "stats.h"
#include "target.h"
#include "taskcount.h"
#include "usage.h"
#include "vprobe.h"

/* ---- the target ---------------------------------------------------------------------------------------------- */

struct run {
    const struct profile_opts *o;
    const atomic_int *stop;
    struct child svc; /* a service target we started */
    int have_svc;
    /* the SoIs asked for, in order (sois_total of them), and the one of the moment with its environment and CPUs
     * (the SoI keeps pointers to both from a_open to a_close) */
    const struct soi_ops **list;
    struct soi *s;
    struct soi_env env;
    int cpus[SOI_MAX_THREADS];
    struct engine_bg *eng;
    double x;
    int unthrottled;
    /* the target's work in the background (caused) */
    struct child act;
    int act_live, act_on;
    int bad_input; /* an SoI refused the user's input (soi_open's mark): the profile stops, the command exits 2 */
    /* progress: how far, and the time left (an estimate, est_left) */
    int stage;                /* 0 baseline before, 1 the SoIs, 2 baseline after */
    unsigned sois_total, sois_done, baselines_done, nb;
    uint64_t soi_t0;
    double sample_s;          /* summed wall time of the samples that finished */
    unsigned nsamples;
    /* the SoI's caused reference (soi_ops.caused_ref), on the SoI's first CPU; opened at its first window */
    struct machine *m;
    struct vprobe ref;
    int ref_init, ref_open, ref_cpu;
    unsigned window_ms;
    int usage_err;            /* m_usage: the work failed while its usage was sampled */
    char usage_why[256];
};

static int target_alive(struct run *r, char *why, size_t len)
{
    if (r->have_svc && child_poll(&r->svc)) {
        char st[96];
        status_text(r->svc.status, st, sizeof(st));
        return ib_why(why, len, -ECHILD, "the target '%s' %s during the profile", r->o->target_cmd, st);
    }
    if (r->o->pid > 0 && kill(r->o->pid, 0) < 0)
        return ib_why(why, len, -ECHILD, "the target (pid %d) is gone", (int)r->o->pid);
    return 0;
}

/* The command one sample runs: the batch target itself, the load generator, or the metric command. ipc counts a
 * batch target's run, or a service (--target or --pid) while the load generator runs. */
static int batch(const struct profile_opts *o)
{
    return o->metric.kind == MK_RUNTIME || o->metric.kind == MK_CPUTIME ||
           (o->metric.kind == MK_IPC && !o->load_cmd);
}

/* ipc: count what the sample runs (a batch target: this thread and what it starts from now on), or the service's
 * process tree as it is now. */
static int ipc_open(const struct run *r, struct taskcount *tc, char *why, size_t len)
{
    tc_init(tc, NULL);
    if (batch(r->o))
        return tc_open_self(tc, why, len);
    return tc_open_tree(tc, r->have_svc ? r->svc.pid : r->o->pid, why, len);
}

static int ipc_value(struct taskcount *tc, double *v, char *why, size_t len)
{
    double ins = 0, cyc = 0;
    int rc = tc_read(tc, &ins, &cyc, why, len);
    tc_close(tc);
    if (rc == 0 && !(cyc > 0 && ins > 0))
        rc = ib_why(why, len, -EIO, "the target ran no counted cycles during the sample");
    if (rc == 0)
        *v = ins / cyc;
    return rc;
}

static const char *sample_cmd(const struct profile_opts *o)
{
    if (batch(o))
        return o->target_cmd;
    if (o->metric.kind == MK_COMMAND)
        return o->metric.cmd;
    return o->load_cmd;
}

static int m_wait(void *ctx, unsigned ms, char *why, size_t len);

/* A snapshot of src stamped halfway through its read. */
static int stamped_read(const struct usage_src *src, struct usage_snap *s, char *why, size_t len)
{
    const uint64_t t0 = clk_mono_ns();
    int rc = usage_src_read(src, s, why, len);
    s->t_ns = t0 + (clk_mono_ns() - t0) / 2;
    return rc;
}

/* The target's processes as the kernel counts them (harness/usage.h): the service's cgroup (a daemon it started
 * included) where it has one, else the tree of the service or the --pid, else this process's tree (a batch job's
 * work runs as ibench's child: a run that ends is folded into ibench's counters, and usage.c takes it back off).
 * *source says which, in words. */
static int target_src(const struct run *r, struct usage_src *src, const char **source, char *why, size_t len)
{
    if (r->have_svc && r->svc.cg[0]) {
        char procs[CG_PATH_MAX + 16];
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", r->svc.cg);
        *source = "the processes of the service's cgroup (/proc/PID/io, schedstat, statm)";
        return usage_src_procs_cgroup(src, NULL, procs, why, len);
    }
    const int own = !r->have_svc && r->o->pid <= 0;
    *source = own ? "the work's processes, children of ibench (/proc/PID/io, schedstat, statm)"
                  : "the target's process tree (/proc/PID/io, schedstat, statm)";
    return usage_src_procs_tree(src, NULL, r->have_svc ? r->svc.pid : own ? getpid() : r->o->pid, why, len);
}

/* io-rate: the bytes the running program read and wrote per second over the metric's period, as the kernel counts
 * them for its processes (target_src). */
static int io_rate_sample(struct run *r, double *v, char *why, size_t len)
{
    struct usage_src src = {0};
    struct usage_snap a, b;
    const char *source;
    int rc = target_src(r, &src, &source, why, len);
    if (rc < 0)
        return rc;
    if ((rc = stamped_read(&src, &a, why, len)) == 0 && !a.have_io)
        rc = ib_why(why, len, -ENOTSUP, "io-rate: the kernel counts no I/O per process here (no /proc/PID/io)");
    if (rc == 0)
        rc = m_wait(r, (unsigned)(r->o->metric.period_s * 1000 + 0.5), why, len);
    if (rc == 0 && (rc = target_alive(r, why, len)) == 0)
        rc = stamped_read(&src, &b, why, len);
    usage_src_close(&src);
    if (rc < 0)
        return rc;
    const double dt = (double)(b.t_ns - a.t_ns) / 1e9;
    const double bytes = (double)(b.read_bytes - a.read_bytes) + (double)(b.write_bytes - a.write_bytes);
    if (!(dt > 0) || !(bytes > 0))
        return ib_why(why, len, -EIO, "io-rate: the target read and wrote nothing the kernel counted in %.3g s", dt);
    *v = bytes / dt;
    r->sample_s += dt;
    r->nsamples++;
    r->baselines_done += r->stage != 1;
    return 0;
}

static int m_sample(void *ctx, double *v, char *why, size_t len)
{
    struct run *r = ctx;
    const struct profile_opts *o = r->o;
    int rc = target_alive(r, why, len);
    if (rc < 0)
        return rc;
    if (o->metric.kind == MK_IO_RATE)
        return io_rate_sample(r, v, why, len);
    char *out = NULL;
    int st = 0;
    uint64_t wall = 0;
    double cpu = 0;
    const char *cmd = sample_cmd(o);
    struct taskcount tc;
    if (o->metric.kind == MK_IPC && (rc = ipc_open(r, &tc, why, len)) < 0)
        return rc;
    rc = child_run(cmd, o->tcpus, o->ntcpus, o->timeout_s * 1000, r->stop, &out, &st, &wall, &cpu, why, len);
    if (rc == 0) {
        r->sample_s += (double)wall / 1e9;
        r->nsamples++;
        r->baselines_done += r->stage != 1;
    }
    if (o->metric.kind == MK_IPC) {
        char w2[256];
        int irc = ipc_value(&tc, v, w2, sizeof(w2));
        if (rc == 0 && irc < 0)
            rc = ib_why(why, len, irc, "%s", w2);
    }
    if (rc < 0)
        return rc;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char s[96];
        status_text(st, s, sizeof(s));
        free(out);
        return ib_why(why, len, -ECHILD, "%s '%s' %s", batch(o) ? "the target" : "the load/metric command", cmd, s);
    }
    if (o->metric.kind != MK_IPC) /* ipc: counted above */
        rc = metric_of_run(&o->metric, out, wall, cpu, v, why, len);
    free(out);
    if (rc == 0)
        rc = target_alive(r, why, len);
    return rc;
}

/* ---- the SoI, held through the background engine -------------------------------------------------------------- */

/* 0 % is the SoI's footprint released (set_intensity(0)) and the SoI stopped, no thread of it left on its CPUs:
 * solo is solo. A change of throttling restarts it. */
static int m_hold(void *ctx, double x, int unthrottled, char *why, size_t len)
{
    struct run *r = ctx;
    if (r->eng && (x <= 0 || unthrottled != r->unthrottled)) {
        char w[256] = "", ws[256] = "";
        int rc = x <= 0 ? engine_set(r->eng, 0, w, sizeof(w)) : 0;
        int sr = engine_stop(r->eng, ws, sizeof(ws));
        if (rc == 0 && sr < 0) {
            rc = sr;
            snprintf(w, sizeof(w), "%s", ws);
        }
        r->eng = NULL;
        if (rc < 0)
            return ib_why(why, len, rc, "the SoI failed: %s", w);
    }
    r->x = x;
    r->unthrottled = unthrottled;
    if (x <= 0)
        return atomic_load(r->stop) ? -EINTR : 0;
    if (r->eng)
        return engine_set(r->eng, x, why, len);
    struct engine_bg_opts eo = {.step_ns = 200 * IB_NS_PER_MS, .unthrottled = unthrottled};
    return engine_start(r->s, x, &eo, r->stop, &r->eng, why, len);
}

/* The SoI as a square wave (engine_wave): started at x when it is not running (throttled, as tolerated holds it),
 * then alternating x and 0 in the engine's control thread until the next m_hold. */
static int m_wave(void *ctx, double x, double on_s, double off_s, char *why, size_t len)
{
    struct run *r = ctx;
    int rc = m_hold(ctx, x, 0, why, len);
    if (rc < 0)
        return rc;
    return engine_wave(r->eng, x, (uint64_t)(on_s * 1e9), (uint64_t)(off_s * 1e9), why, len);
}

static int m_mark(void *ctx, char *why, size_t len)
{
    struct run *r = ctx;
    return r->eng ? engine_mark(r->eng, why, len) : 0;
}

static int m_read(void *ctx, struct prof_window *w, char *why, size_t len)
{
    struct run *r = ctx;
    *w = (struct prof_window){.achieved_pct = NAN, .rate = NAN, .rate_cpu = NAN, .cpu_share = NAN};
    if (!r->eng)
        return 0;
    struct engine_window ew;
    int rc = engine_read(r->eng, &ew, why, len);
    if (rc < 0)
        return rc;
    *w = (struct prof_window){.achieved_pct = ew.achieved_pct, .rate = ew.rate, .rate_cpu = ew.rate_cpu,
                              .cpu_share = ew.cpu_share};
    return 0;
}

/* ---- the caused reference (soi_ops.caused_ref): a validation probe on the SoI's CPU -------------------------- */

/* The probe's calibration beside the SoI (the SoI's own engine, levels alternating in cycles, paired ratios of the
 * probe's cost: validation/beside.h); rel = 1 / ratio. */
static int m_ref_curve(void *ctx, const double *levels, unsigned n, double *rel, double *rel_se, char *why,
                       size_t len)
{
    struct run *r = ctx;
    struct vprobe vp;
    char pw[256] = "";
    int rc = vprobe_init(&vp, r->s->ops->caused_ref, &r->m->calib, &r->m->mlim, r->o->dir, NULL, -1, pw, sizeof(pw));
    if (rc < 0)
        return ib_why(why, len, rc, "the %s reference: %s", r->s->ops->caused_ref, pw);
    struct beside_result br;
    rc = beside_run(r->s, levels, n, 6, 150 * IB_NS_PER_MS, 30 * IB_NS_PER_MS, r->ref_cpu, &vp.bp, r->stop, &br, pw,
                    sizeof(pw));
    vprobe_fini(&vp);
    if (rc < 0)
        return rc == -EINTR ? rc : ib_why(why, len, rc, "the %s reference beside the SoI: %s", r->s->ops->caused_ref, pw);
    for (unsigned i = 0; i < n; i++) {
        rel[i] = br.lv[i].ratio > 0 && isfinite(br.lv[i].ratio) ? 1 / br.lv[i].ratio : NAN;
        rel_se[i] = isfinite(rel[i]) ? rel[i] * br.lv[i].ratio_rse : NAN; /* 1/ratio: the same relative error */
    }
    return 0;
}

/* One window of the probe: back-to-back samples for the caused window, on the SoI's CPU (this thread is moved there
 * for the window and back); the rate is the inverse of their median cost, per second when the cost is per us/ns. */
static int m_ref_window(void *ctx, double *rate, char *why, size_t len)
{
    struct run *r = ctx;
    char pw[256] = "";
    if (!r->ref_init) {
        int rc = vprobe_init(&r->ref, r->s->ops->caused_ref, &r->m->calib, &r->m->mlim, r->o->dir, NULL, -1, pw,
                             sizeof(pw));
        if (rc < 0)
            return ib_why(why, len, rc, "the %s reference: %s", r->s->ops->caused_ref, pw);
        r->ref_init = 1;
    }
    cpu_set_t old, one;
    int moved = pthread_getaffinity_np(pthread_self(), sizeof(old), &old) == 0;
    CPU_ZERO(&one);
    CPU_SET(r->ref_cpu, &one);
    moved = moved && pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
    int rc = 0;
    if (!r->ref_open) {
        rc = r->ref.bp.open(r->ref.bp.ctx);
        if (rc < 0)
            ib_why(why, len, rc, "the %s reference could not open: %s", r->s->ops->caused_ref, strerror(-rc));
        r->ref_open = rc == 0;
    }
    double v[256];
    unsigned nv = 0, tries = 0;
    const uint64_t until = clk_mono_ns() + (uint64_t)r->window_ms * IB_NS_PER_MS;
    while (rc == 0 && nv < 256 && (nv < 3 || clk_mono_ns() < until)) {
        if (atomic_load(r->stop))
            rc = -EINTR;
        else if ((rc = r->ref.bp.sample(r->ref.bp.ctx, &v[nv])) < 0)
            ib_why(why, len, rc, "the %s reference failed: %s", r->s->ops->caused_ref, strerror(-rc));
        else if (v[nv] > 0 && isfinite(v[nv]))
            nv++;
        else if (++tries > 64) /* a probe that gives no figure: said, never waited on for ever */
            rc = ib_why(why, len, -EIO, "the %s reference gave no figure in 64 samples", r->s->ops->caused_ref);
    }
    if (moved)
        pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
    if (rc < 0)
        return rc;
    const double cost = ib_median(v, nv);
    const char *u = r->ref.unit;
    *rate = !strncmp(u, "us/", 3) ? 1e6 / cost : !strncmp(u, "ns/", 3) ? 1e9 / cost : 1 / cost;
    return 0;
}

/* The probe's unit of work per second, as m_ref_window counts it. */
static char *ref_unit(const char *unit)
{
    if (!strncmp(unit, "us/", 3) || !strncmp(unit, "ns/", 3))
        return prof_dupf("%s/s", unit + 3);
    return prof_dupf("1/(%s)", unit);
}

static void ref_end(struct run *r)
{
    if (r->ref_open && r->ref.bp.close)
        r->ref.bp.close(r->ref.bp.ctx);
    if (r->ref_init)
        vprobe_fini(&r->ref);
    r->ref_init = r->ref_open = 0;
}

/* ---- the target's work in the background: started once, paused (its cgroup frozen) and resumed -------------- */

/* A work run that finished: judged, and started again while the work is on. */
static int work_check(struct run *r, char *why, size_t len)
{
    if (!r->act_live || !child_poll(&r->act))
        return 0;
    if (!WIFEXITED(r->act.status) || WEXITSTATUS(r->act.status) != 0) {
        char st[96];
        status_text(r->act.status, st, sizeof(st));
        child_stop(&r->act, 0);
        r->act_live = 0;
        return ib_why(why, len, -ECHILD, "'%s' %s while caused was measured", sample_cmd(r->o), st);
    }
    child_stop(&r->act, 0);
    r->act_live = 0;
    if (!r->act_on)
        return 0;
    int rc = child_spawn(sample_cmd(r->o), r->o->tcpus, r->o->ntcpus, 0, 0, &r->act, why, len);
    r->act_live = rc == 0;
    return rc;
}

static int m_work(void *ctx, int on, char *why, size_t len)
{
    struct run *r = ctx;
    int rc = work_check(r, why, len);
    if (rc < 0)
        return rc;
    if ((rc = target_alive(r, why, len)) < 0)
        return rc;
    r->act_on = on;
    if (r->o->metric.kind == MK_IO_RATE) /* the program is its own work: paused through its cgroup's freezer */
        return r->have_svc ? child_pause(&r->svc, !on, NULL, why, len)
                           : ib_why(why, len, -ENOTSUP, "a --pid program's work cannot be paused (ibench pauses only "
                                    "programs it started)");
    if (!r->act_live) {
        if (!on)
            return 0;
        rc = child_spawn(sample_cmd(r->o), r->o->tcpus, r->o->ntcpus, 0, 0, &r->act, why, len);
        r->act_live = rc == 0;
        return rc;
    }
    /* the freezer where the work has a cgroup: a job process that called setsid (fio's do) is paused too */
    return child_pause(&r->act, !on, NULL, why, len);
}

static void work_end(struct run *r)
{
    if (r->o->metric.kind == MK_IO_RATE && r->have_svc) /* the program itself was the work: running again */
        child_pause(&r->svc, 0, NULL, NULL, 0);
    if (!r->act_live)
        return;
    child_pause(&r->act, 0, NULL, NULL, 0); /* a paused work acts on SIGTERM once resumed */
    child_stop(&r->act, 500);
    r->act_live = r->act_on = 0;
}

static int m_wait(void *ctx, unsigned ms, char *why, size_t len)
{
    struct run *r = ctx;
    const uint64_t until = clk_mono_ns() + (uint64_t)ms * IB_NS_PER_MS;
    for (;;) {
        if (atomic_load(r->stop))
            return -EINTR;
        int rc = work_check(r, why, len);
        if (rc == 0 && r->eng)
            rc = engine_status(r->eng, why, len);
        if (rc < 0)
            return rc;
        uint64_t now = clk_mono_ns();
        if (now >= until)
            return 0;
        uint64_t d = until - now > 20 * IB_NS_PER_MS ? 20 * IB_NS_PER_MS : until - now;
        struct timespec ts = {(time_t)(d / 1000000000ULL), (long)(d % 1000000000ULL)};
        nanosleep(&ts, NULL);
    }
}

static uint64_t m_now(void *ctx)
{
    (void)ctx;
    return clk_mono_ns();
}

/* ---- the target's usage over time (profile 1.6 "usage") ----------------------------------------------------------- */

/* Noise floors, in each metric's unit (usage.h's order): a window above its floor is active. Chosen above what an
 * idle program's counters move by in 100 ms here (a log line, /proc reads: well under 1 MiB/s and 10 op/s; a
 * sleeping process's wake-ups: under 5 % of a CPU); memory and LLC occupancy have none (a footprint is never
 * noise). Network: 1 MiB/s and 100 packet/s, above an idle host namespace's ssh and keep-alives. mem-bw: 16 MiB/s,
 * a guess (no machine here has MBM to measure an idle program's on). */
static const double usage_floor[USAGE_NMETRIC] = {1048576, 1048576, 10, 10, 0.05, 0, 1048576, 100, 0, 16777216};
#define USAGE_WINDOW_MS 100

/* The sampler's clock: its sleeps keep the work going (a batch run that ended is started again), as m_wait does. */
static uint64_t usage_now(void *ctx)
{
    (void)ctx;
    return clk_mono_ns();
}

static void usage_sleep_until(void *ctx, uint64_t t_ns)
{
    struct run *r = ctx;
    const uint64_t now = clk_mono_ns();
    if (now >= t_ns || r->usage_err)
        return;
    /* m_wait sleeps in slices, starting ended runs again; a stop (-EINTR) is the sampler's to see */
    int rc = m_wait(r, (unsigned)((t_ns - now + IB_NS_PER_MS - 1) / IB_NS_PER_MS), r->usage_why, sizeof(r->usage_why));
    r->usage_err = rc < 0 && rc != -EINTR;
}

/* The process whose network namespace the usage counts: the tree's root or the service's. */
static pid_t usage_pid(const struct run *r)
{
    return r->have_svc ? r->svc.pid : r->o->pid > 0 ? r->o->pid : getpid();
}

/* 1: pid's network namespace is ibench's own, 0: another, -1: not known (its link not readable). */
static int netns_is_ours(pid_t pid)
{
    char a[64], b[64], path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
    ssize_t na = readlink(path, a, sizeof(a) - 1), nb = readlink("/proc/self/ns/net", b, sizeof(b) - 1);
    if (na <= 0 || nb <= 0)
        return -1;
    return na == nb && !memcmp(a, b, (size_t)na);
}

/* How the usage was counted, in words: the source, what its network figures mean, and whether resctrl counted the
 * LLC and memory bandwidth (rdt_why: why not, "" when it did). */
static char *usage_source(const char *source, bool net, int ours, const char *rdt_why)
{
    char b[1024];
    snprintf(b, sizeof(b), "%s; net: %s; llc, mem-bw: %s%s%s", source,
             !net        ? "not counted (no network namespace of the target's processes could be read)"
             : ours == 1 ? "/proc/PID/net/dev of its network namespace, which is ibench's (the host's unless ibench "
                           "runs in one of its own): every program's traffic in it counts, not only the target's"
             : ours == 0 ? "/proc/PID/net/dev of its network namespace, not ibench's: the target's alone unless "
                           "other programs share that namespace"
                         : "/proc/PID/net/dev of its network namespace, perhaps the host's: then every program's "
                           "traffic counts, not only the target's",
             *rdt_why ? "not counted (" : "a resctrl monitoring group of its threads (llc_occupancy, mbm_total_bytes)",
             rdt_why, *rdt_why ? ")" : "");
    return strdup(b);
}

/* What the target pressed over o->usage_s seconds, its work running alone (the batch job in a loop, start-up
 * included; the load generator; an io-rate program by itself), counted by the kernel for its processes (target_src;
 * ibench's own threads only sleep meanwhile). */
static int m_usage(void *ctx, struct profile_usage *out, char *why, size_t len)
{
    struct run *r = ctx;
    const struct profile_opts *o = r->o;
    struct usage_src src = {0};
    struct usage_series se = {0};
    const char *source;
    char rdt_why[256] = "";
    int rc = target_src(r, &src, &source, why, len);
    if (rc < 0)
        return rc;
    /* resctrl where the machine has it: the LLC occupancy and memory bandwidth besides (its group removed on close) */
    if (usage_src_add_resctrl(&src, NULL, rdt_why, sizeof(rdt_why)) == 0)
        rdt_why[0] = '\0';
    else if (!rdt_why[0])
        snprintf(rdt_why, sizeof(rdt_why), "resctrl monitoring failed");
    out_progress("profile", "target: its usage over time, %g s%s%s", o->usage_s, rdt_why[0] ? "; llc, mem-bw: " : "",
                 rdt_why);
    r->usage_err = 0;
    if (o->metric.kind != MK_IO_RATE)
        rc = m_work(r, 1, why, len);
    struct usage_clock clk = {.now_ns = usage_now, .sleep_until = usage_sleep_until, .ctx = r};
    const unsigned nwin = (unsigned)(o->usage_s * 1000 / USAGE_WINDOW_MS + 0.5);
    if (rc == 0)
        rc = usage_sample(&src, &clk, (uint64_t)USAGE_WINDOW_MS * IB_NS_PER_MS, nwin ? nwin : 1, r->stop, &se, why,
                          len);
    if (rc == 0 && r->usage_err)
        rc = ib_why(why, len, -ECHILD, "%s", r->usage_why);
    work_end(r);
    usage_src_close(&src);
    bool net = false;
    for (unsigned i = 0; i < se.n && !net; i++)
        net = isfinite(se.v[USAGE_NET_BPS][i]);
    if (rc == 0 && !(out->source = usage_source(source, net, netns_is_ours(usage_pid(r)), rdt_why)))
        rc = -ENOMEM;
    out->window_s = USAGE_WINDOW_MS / 1e3;
    out->seconds = se.n ? (double)(se.t_ns[se.n] - se.t_ns[0]) / 1e9 : 0;
    for (unsigned k = 0; rc == 0 && k < USAGE_NMETRIC && out->nres < PROFILE_USAGE_MAX; k++) {
        /* /proc/PID/io counts read and write system calls, not device operations (and, rooted at ibench, ibench's
         * own reads of /proc): bytes say what reached the storage layer, operations are left out */
        if (k == USAGE_READ_OPS || k == USAGE_WRITE_OPS)
            continue;
        struct usage_stats st;
        if (usage_summarise(se.v[k], se.n, out->window_s, usage_floor[k], &st) == -ENODATA)
            continue; /* this source does not count it */
        struct profile_usage_res *x = &out->res[out->nres++];
        profile_usage_res_init(x);
        x->name = strdup(usage_metric_name[k]);
        x->unit = strdup(usage_metric_unit[k]);
        x->windows = malloc((se.n ? se.n : 1) * sizeof(double));
        if (!x->name || !x->unit || !x->windows) {
            rc = -ENOMEM;
            break;
        }
        memcpy(x->windows, se.v[k], se.n * sizeof(double));
        x->nwindows = se.n;
        x->floor = usage_floor[k];
        x->mean = st.mean, x->p50 = st.p50, x->p90 = st.p90, x->max = st.max, x->duty = st.duty;
        x->level = st.level, x->bursts = st.bursts, x->burst_mean_s = st.burst_mean_s;
        x->burst_max_s = st.burst_max_s, x->gap_mean_s = st.gap_mean_s;
    }
    usage_series_free(&se);
    if (rc == -ENOMEM)
        return ib_why(why, len, rc, "out of memory");
    return rc;
}

/* The usage's % of capacity, where an SoI of the profile presses that resource in its unit: written bytes of the
 * disk-write SoI's write bandwidth, read bytes of disk-bw's, memory of mem-cap's, network bytes of net-bw's, LLC
 * occupancy of llc-cap's, memory bandwidth of mem-bw's (profile_usage_soi). */
static void usage_of_capacity(struct profile *p)
{
    for (unsigned i = 0; p->have_usage && i < p->usage.nres; i++) {
        struct profile_usage_res *x = &p->usage.res[i];
        const char *soi = profile_usage_soi(x->name);
        for (unsigned j = 0; soi && !x->soi && j < p->nsois; j++) {
            const struct profile_soi *s = &p->sois[j];
            if (strcmp(s->soi, soi) || !profile_usage_unit_ok(x->unit, s->capacity_unit) || !(s->capacity > 0))
                continue;
            if (!(x->soi = strdup(s->soi)))
                return; /* out of memory: the figures stay absent */
            x->cap_mean_pct = 100 * x->mean / s->capacity;
            x->cap_level_pct = 100 * x->level / s->capacity;
        }
    }
}

/* The target's resident memory as % of the SoI's capacity: the service's group, the --pid process, the work's
 * group. */
static int m_occupancy(void *ctx, double *pct, char *why, size_t len)
{
    struct run *r = ctx;
    if (!r->s || r->s->ops->occupancy != SOI_OCC_RSS || !(r->s->capacity > 0))
        return ib_why(why, len, -ENOTSUP, "the OS shows nothing of the target's in this resource");
    double b = 0;
    if (r->have_svc)
        b += group_rss_bytes(r->svc.pid);
    if (r->o->pid > 0)
        b += group_rss_bytes(-r->o->pid);
    if (r->act_live)
        b += group_rss_bytes(r->act.pid);
    *pct = 100 * b / r->s->capacity;
    return 0;
}

/* The time left, roughly: each SoI's search takes about 6 points of (solo + beside) samples, then its caused rounds
 * and a second of settling; the baselines their samples. The mean sample so far times what is left; an SoI running
 * longer than that counts as almost done. Negative: no sample has finished yet. */
static double est_left(const struct run *r)
{
    if (!r->nsamples)
        return -1;
    const double mean = r->sample_s / r->nsamples;
    const double budget = r->o->caused_budget_s > 0 ? r->o->caused_budget_s : 4;
    const double per_soi = 6.0 * 2 * r->o->samples * mean + budget + 1.5;
    const double base = r->o->baselines * mean;
    double left = 0;
    if (r->stage == 0)
        left = (r->o->baselines > r->baselines_done ? r->o->baselines - r->baselines_done : 0) * mean +
               r->sois_total * per_soi + base;
    else if (r->stage == 1) {
        double in = (double)(clk_mono_ns() - r->soi_t0) / 1e9;
        unsigned rest = r->sois_total > r->sois_done + 1 ? r->sois_total - r->sois_done - 1 : 0;
        left = fmax(per_soi - in, 0.05 * per_soi) + rest * per_soi + base;
    } else
        left = (r->o->baselines > r->baselines_done ? r->o->baselines - r->baselines_done : 0) * mean;
    return left;
}

static void m_progress(void *ctx, const char *line)
{
    struct run *r = ctx;
    const char *name = r->s ? r->s->ops->name : "target";
    double left = est_left(r);
    if (left < 0) {
        out_progress("profile", "%s: %s (time left: known after the first sample)", name, line);
        return;
    }
    unsigned s = (unsigned)(left + 0.5);
    if (s >= 60)
        out_progress("profile", "%s: %s (about %u min %02u s left)", name, line, s / 60, s % 60);
    else
        out_progress("profile", "%s: %s (about %u s left)", name, line, s);
}

static int m_pressure(void *ctx, struct ib_pressure_snap *snap, char *why, size_t len)
{
    (void)ctx;
    return ib_pressure_read(snap, NULL, why, len);
}

/* ---- does the SoI reach the target's CPU? (profile.h, "Reach") ---------------------------------------------- */

const char *profile_reach_verdict(double effect_pct, double se_pct, double bar_pct)
{
    if (!isfinite(effect_pct) || !isfinite(se_pct) || se_pct < 0)
        return "undecided";
    return effect_pct + 2 * se_pct < bar_pct ? "does not reach" : effect_pct - 2 * se_pct > 0 ? "reaches" : "undecided";
}

static char *sdup(const char *s)
{
    return s ? strdup(s) : NULL;
}


/* 1: the SoI reaches the target, or that could not be ruled out (ramp it); 0: it does not (w says why); -EINTR.
 * e->reach gets the figures. */
static int reach_check(struct machine *m, struct run *r, struct profile_soi *e, char *w, size_t wlen)
{
    const struct soi_ops *ops = r->s->ops;
    const struct vprobe_map *vm = vprobe_map_of(ops->name);
    if (!vm || !vm->placed || !vm->probe)
        return 1;
    const char *pname = vm->probe;
    const int cpu = r->o->tcpus[0];
    struct profile_reach *re = &e->reach;
    *re = (struct profile_reach){.cpu = -1, .bar_pct = NAN, .effect_pct = NAN, .se_pct = NAN,
                                 .soi_achieved_pct = NAN};
    e->have_reach = 1;
    if (r->o->no_reach_check) {
        re->verdict = sdup("unchecked");
        re->reason = sdup("--no-reach-check");
        return 1;
    }
    char pw[256] = "";
    struct vprobe vp;
    int rc = vprobe_init(&vp, pname, &m->calib, &m->mlim, r->o->dir, NULL, -1, pw, sizeof(pw));
    struct beside_result br;
    if (rc == 0) {
        const double levels[2] = {0, 100};
        out_progress("profile", "%s: does it reach CPU %d? the %s probe there, the SoI at 0 / 100 %%", ops->name, cpu,
                     pname);
        rc = beside_run(r->s, levels, 2, 16, 60 * IB_NS_PER_MS, 8 * IB_NS_PER_MS, cpu, &vp.bp, r->stop, &br, pw,
                        sizeof(pw));
        vprobe_fini(&vp);
    }
    if (rc == -EINTR)
        return rc;
    re->probe = sdup(pname);
    if (rc < 0) { /* the check itself failed: say so and ramp the SoI as hwloc's word has it */
        re->verdict = sdup("unchecked");
        re->reason = sdup(pw);
        return 1;
    }
    const double eff = 100 * (br.lv[1].ratio - 1), se = 100 * br.lv[1].ratio_rse, bar = 50 * (1 - r->o->qos);
    const char *v = profile_reach_verdict(eff, se, bar);
    re->verdict = sdup(v);
    re->cpu = cpu;
    re->bar_pct = bar;
    re->unit = sdup(vp.unit);
    if (isfinite(eff) && isfinite(se)) {
        re->effect_pct = eff;
        re->se_pct = se;
    }
    re->soi_achieved_pct = br.lv[1].achieved_pct;
    out_progress("profile", "%s: the %s probe on CPU %d moved %+.1f +- %.1f %%: %s", ops->name, pname, cpu, eff, se,
                 v);
    if (strcmp(v, "does not reach"))
        return 1;
    snprintf(w, wlen,
             "%s at 100 %% does not reach CPU %d from where it runs: the %s probe on CPU %d moved %+.1f +- %.1f %% "
             "beside it (median of per-cycle ratios +- its robust standard error), under half the QoS band (%.1f %%) "
             "with twice that error. hwloc says these CPUs share the %s; a VM's vCPUs can sit on different physical "
             "caches or sockets. --no-reach-check ramps it anyway",
             ops->name, cpu, pname, cpu, eff, se, bar, topo_scope_name(ops->scope));
    return 0;
}

/* ---- per SoI ----------------------------------------------------------------------------------------------- */

/* CPUs for the SoI: those sharing its resource with the target's first CPU, never the target's own. */
static int soi_cpus(struct machine *m, const struct profile_opts *o, const struct soi_ops *ops, int *cpus,
                    unsigned *n, char *why, size_t len)
{
    int *set = NULL;
    unsigned ns = 0, k = 0;
    enum topo_scope scope = ops->scope;
    if (topo_sharing(m->topo, scope, o->tcpus[0], &set, &ns) < 0 || !set)
        return ib_why(why, len, -ENOTSUP, "cannot tell which CPUs share the %s with CPU %d", topo_scope_name(scope),
                      o->tcpus[0]);
    for (unsigned i = 0; i < ns && k < SOI_MAX_THREADS; i++) {
        int mine = 0;
        for (unsigned t = 0; t < o->ntcpus; t++)
            mine |= set[i] == o->tcpus[t];
        if (!mine)
            cpus[k++] = set[i];
    }
    free(set);
    unsigned want = ops->min_threads > 1 ? ops->min_threads : 1;
    if (k < want && want > 1)
        return ib_why(why, len, -ENOTSUP, "needs %u CPUs apart from the target's; %u share%s the %s with CPU %d", want,
                      k, k == 1 ? "s" : "", topo_scope_name(scope), o->tcpus[0]);
    if (k < want)
        return ib_why(why, len, -ENOTSUP, "no other CPU shares the %s with the target's CPU %d%s",
                      topo_scope_name(scope), o->tcpus[0],
                      scope == TOPO_SCOPE_CORE ? " (no SMT sibling: on its own CPU the SoI would only time-share it)"
                                               : "");
    *n = want;
    return 0;
}

static void skip(struct profile_soi *e, const char *why)
{
    e->status = PROFILE_SKIPPED;
    e->reason = sdup(why);
}

/* ---- the SoIs as the method's whole profile takes them (profile_method.h, struct prof_sois) -------------------- */

static const char *a_name(void *ctx, unsigned i)
{
    return ((struct run *)ctx)->list[i]->name;
}

static const char *a_resource(void *ctx, unsigned i)
{
    return ((struct run *)ctx)->list[i]->resource;
}

/* storage and network paths have queues and caches in front: a burst is not sustained pressure there */
static int a_buffered(void *ctx, unsigned i) { return ((struct run *)ctx)->list[i]->io != 0; }

/* SoI i opened on CPUs that share its resource with the target, and its reach checked: 1 measure it, 0 skipped (e
 * says why), -EINTR, or -errno that stops the profile (an SoI that refused the user's input: r->bad_input). */
static int a_open(void *ctx, unsigned i, struct profile_soi *e, char *why, size_t len)
{
    struct run *r = ctx;
    const struct soi_ops *ops = r->list[i];
    const struct profile_opts *o = r->o;
    int *cpus = r->cpus;
    unsigned n = 0;
    char w[768] = "";
    r->s = NULL;
    if (soi_cpus(r->m, o, ops, cpus, &n, w, sizeof(w)) < 0) {
        skip(e, w);
        return 0;
    }
    soi_env_init(&r->env, ops, r->m, n, cpus, o->tcpus[0], r->stop);
    r->env.cached_capacity = 1;
    r->env.dir = o->dir;
    out_progress("profile", "%s: opening on CPU %d", ops->name, cpus[0]);
    int bad = 0;
    int rc = soi_open(ops, &r->env, &r->s, &bad, w, sizeof(w));
    if (rc < 0) {
        r->s = NULL;
        if (rc == -EINTR)
            return rc;
        if (bad) { /* --dir and the like are the user's: refused, not skipped as if this machine could not */
            r->bad_input = 1;
            return ib_why(why, len, rc, "%s", w);
        }
        skip(e, w);
        return 0;
    }
    for (unsigned k = 0; k < n && k < PROFILE_MAX_CPUS; k++)
        e->cpus[e->ncpus++] = cpus[k];
    r->ref_cpu = cpus[0];
    e->capacity = r->s->capacity;
    e->capacity_unit = sdup(r->s->unit);
    e->capacity_source = sdup(r->s->capacity_src);
    if ((rc = reach_check(r->m, r, e, w, sizeof(w))) == 0)
        skip(e, w);
    return rc;
}

/* Caused of the open SoI: through its reference (soi.h) or its own rate. */
static int a_caused(void *ctx, const struct prof_params *pp, struct prof_meter *pm, struct profile_caused *c,
                    char *why, size_t len)
{
    struct run *r = ctx;
    const struct soi_ops *ops = r->s->ops;
    int rc;
    /* the engine's rate is step units per second: a rate SoI's own unit; the others' secondary figure, unless their
     * self-meter replaces it */
    c->unit = sdup(ops->kind == SOI_RATE         ? r->s->unit
                   : r->s->secondary_unit[0] ? r->s->secondary_unit
                                             : "step units/s");
    if (ops->occupancy == SOI_OCC_RSS)
        c->occupancy_what = sdup("resident memory");
    if (r->o->metric.kind == MK_IO_RATE && !r->have_svc) { /* nothing to pause: the rounds need alone windows */
        c->reason = sdup("not measured: a --pid program with --metric io-rate is its own work, and ibench pauses "
                         "only programs it started (profile it with --target to measure caused)");
        return c->unit && c->reason ? 0 : -ENOMEM;
    }
    /* the rounds start with the work paused (a reference's calibration too): an io-rate program is its own work,
     * running until now; work_end runs it again */
    if (r->o->metric.kind == MK_IO_RATE && (rc = child_pause(&r->svc, 1, NULL, why, len)) < 0)
        return rc;
    if (ops->caused_ref) { /* read through a reference the SoI slows (soi.h); its unit is the probe's */
        rc = prof_caused_ref(pp, pm, ops->caused_ref, c, why, len);
        if (rc == 0 && c->ref_probe) {
            free(c->unit);
            c->unit = sdup("% of the SoI (equivalent intensity)");
            c->ref_unit = ref_unit(r->ref.unit[0] ? r->ref.unit : "us/read");
        }
        ref_end(r);
    } else {
        rc = prof_caused(pp, pm, c, why, len);
    }
    /* lifted only where there was a cap: a footprint SoI's touch or read rate (m_hold's unthrottled) */
    c->unthrottled = ops->kind == SOI_FOOTPRINT && r->s->rate_cap > 0;
    return rc;
}

/* The SoI gone, its threads stopped, and the target's work. */
static int a_close(void *ctx, char *why, size_t len)
{
    struct run *r = ctx;
    char sw[256] = "";
    int rc = 0;
    work_end(r);
    if (r->eng && engine_stop(r->eng, sw, sizeof(sw)) < 0)
        rc = ib_why(why, len, -EIO, "the SoI failed: %s", sw);
    r->eng = NULL;
    soi_close(r->s);
    r->s = NULL;
    return rc;
}

/* Where the profile is, for progress (est_left). */
static void a_stage(void *ctx, int stage, unsigned i)
{
    struct run *r = ctx;
    r->stage = stage;
    if (stage == 0) {
        out_progress("profile", "baseline: %u solo samples", r->nb);
    } else if (stage == 1) {
        r->sois_done = i;
        r->soi_t0 = clk_mono_ns();
    } else {
        r->sois_done = r->sois_total;
        r->baselines_done = 0;
        out_progress("profile", "baseline again: %u solo samples", r->nb);
    }
}

/* ---- the whole profile -------------------------------------------------------------------------------------- */

static int wanted(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == n && !strncmp(p, name, n))
            return 1;
        p += l + (c ? 1 : 0);
    }
    return 0;
}

int profile_uses_llc_size(const char *sois)
{
    for (unsigned i = 0; i < soi_count(); i++)
        if (soi_at(i)->scope == TOPO_SCOPE_LLC && wanted(sois, soi_at(i)->name))
            return 1;
    return 0;
}

/* The profile's description of what was run, and of the machine. */
static void describe(struct machine *m, const struct profile_opts *o, const struct prof_params *pp, struct profile *p)
{
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    p->major = PROFILE_MAJOR;
    p->minor = PROFILE_MINOR;
    p->tool = sdup("ibench " IBENCH_VERSION);
    p->created = sdup(when);
    p->fingerprint = sdup(m->calib.fingerprint);
    p->cpu_model = sdup(m->cpu.model);
    p->machine_cpus = (int)topo_npus(m->topo);
    for (int l = 0; l < CALIB_NLEVELS && p->ncaches < 8; l++)
        if (m->calib.measured[l]) {
            p->caches[p->ncaches].name = sdup(calib_level_name((enum calib_level)l));
            p->caches[p->ncaches++].bytes = (double)m->calib.measured[l];
        }
    p->name = sdup(o->name);
    p->command = sdup(o->target_cmd);
    p->load = sdup(o->load_cmd);
    p->pid = (int)o->pid;
    for (unsigned k = 0; k < o->ntcpus && k < PROFILE_MAX_CPUS; k++)
        p->tcpus[p->ntcpus++] = o->tcpus[k];
    p->metric_kind = sdup(metric_kind_name(o->metric.kind));
    p->metric_spec = sdup(o->metric.spec);
    p->metric_unit = sdup(o->metric.unit);
    p->metric_adapter = sdup(o->metric.adapter);
    p->metric_regex = sdup(o->metric.regex);
    p->higher_is_better = o->metric.higher_better;
    p->qos = o->qos;
    p->samples_per_point = o->samples;
    p->baseline_samples = o->baselines;
    p->caused_intensity = pp->caused_level;
    p->caused_min_rounds = pp->caused_min_rounds;
    p->caused_budget_s = pp->caused_budget_s;
    p->caused_counted = pp->caused_counted;
    p->search = prof_dupf("%s25/50/75/100 %%, then %u bisection steps; a break counts when it repeats%s",
                          prof_flat_first(pp) ? "100 % first, done when it meets QoS; else " : "",
                          pp->bisect_steps,
                          pp->sequential ? "; a point stops early once 2 samples lie beyond QoS by 3 noise" : "");
    p->relative_to = sdup("solo samples taken right before each point");
}

int profile_run(struct machine *m, const struct profile_opts *o, const atomic_int *stop, struct profile **out,
                int *bad_input, char *why, size_t len)
{
    *out = NULL;
    if (bad_input)
        *bad_input = 0;
    if (o->metric.kind == MK_IPC) { /* refused only when the counters cannot be opened, saying why */
        struct taskcount tc;
        char w[256];
        tc_init(&tc, NULL);
        int rc = tc_open_self(&tc, w, sizeof(w));
        tc_close(&tc);
        if (rc < 0)
            return ib_why(why, len, rc, "--metric ipc: %s", w);
    }
    struct profile *p = calloc(1, sizeof(*p));
    if (!p)
        return ib_why(why, len, -ENOMEM, "out of memory");
    profile_init(p);
    struct run r = {.o = o, .stop = stop, .m = m};
    struct prof_meter pm = {.ctx = &r, .sample = m_sample, .soi_hold = m_hold, .soi_mark = m_mark,
                            .soi_read = m_read, .work = m_work, .wait_ms = m_wait, .now_ns = m_now,
                            .occupancy = m_occupancy, .progress = m_progress,
                            .pressure = m_pressure, .ref_curve = m_ref_curve, .ref_window = m_ref_window,
                            .usage = o->usage_s > 0 ? m_usage : NULL, .soi_wave = m_wave};
    struct prof_params pp;
    prof_params_default(&pp);
    pp.qos = o->qos;
    pp.higher_better = o->metric.higher_better;
    pp.samples = o->samples;
    pp.caused_level = o->caused_level;
    if (o->caused_rounds)
        pp.caused_min_rounds = o->caused_rounds;
    if (pp.caused_max_rounds < pp.caused_min_rounds)
        pp.caused_max_rounds = pp.caused_min_rounds;
    if (o->caused_budget_s > 0)
        pp.caused_budget_s = o->caused_budget_s;
    pp.sequential = !o->no_sequential;
    if (o->floor > 0)
        pp.floor = o->floor;
    if (o->no_depth)
        pp.floor = 0;
    pp.flat_first = !o->no_flat_first;
    if (o->nbursts) {
        pp.nburst_on = o->nbursts > PROFILE_MAX_BURSTS ? PROFILE_MAX_BURSTS : o->nbursts;
        memcpy(pp.burst_on_s, o->bursts, pp.nburst_on * sizeof(double));
    }
    if (o->no_bursts)
        pp.nburst_on = 0;
    pp.bursts_buffered = !o->bursts_all;
    pp.caused_counted = !o->caused_rounds_always;
    pp.timeout_s = o->timeout_s;
    r.window_ms = pp.caused_window_ms;
    /* a sample's relative performance is at most its wall time's: runtime itself, and the throughput or latency of a
     * load generator doing a fixed amount of work per run (as the adapters' are); not CPU time, ipc or a command's
     * own figure */
    pp.wall_bound = o->metric.kind == MK_RUNTIME || o->metric.kind == MK_THROUGHPUT || o->metric.kind == MK_LATENCY;
    int rc = 0;
    /* ibench's own threads (this one, the SoI's control thread, helpers they start) stay off the target's CPUs:
     * a batch job's wall time would count them. The SoIs' workers bind themselves to their own CPUs. */
    cpu_set_t mine, old;
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof(old), &old);
    for (unsigned k = 0; k < topo_npus(m->topo); k++) {
        int c = topo_pu_os(m->topo, k), t = 0;
        for (unsigned i = 0; i < o->ntcpus; i++)
            t |= c == o->tcpus[i];
        if (!t)
            CPU_SET(c, &mine);
    }
    int pinned = CPU_COUNT(&mine) > 0 && sched_setaffinity(0, sizeof(mine), &mine) == 0;
    struct pin_saved pin = {0}; /* a --pid service's affinity, put back as it was on every exit */
    if (o->target_cmd && !batch(o)) { /* a service: start it once */
        out_progress("profile", "starting the target");
        if ((rc = child_spawn(o->target_cmd, o->tcpus, o->ntcpus, 0, 0, &r.svc, why, len)) < 0)
            goto out;
        r.have_svc = 1;
        struct timespec ts = {(time_t)(o->warmup_ms / 1000), (long)(o->warmup_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        if ((rc = target_alive(&r, why, len)) < 0)
            goto out;
    } else if (o->pid > 0 && o->ntcpus && (rc = pid_pin(o->pid, o->tcpus, o->ntcpus, &pin, why, len)) < 0) {
        goto out;
    }
    r.nb = o->baselines > PROF_MAX_SAMPLES ? PROF_MAX_SAMPLES : o->baselines;
    if (!(r.list = calloc(soi_count() ? soi_count() : 1, sizeof(*r.list)))) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    for (unsigned i = 0; i < soi_count(); i++)
        if (wanted(o->sois, soi_at(i)->name))
            r.list[r.sois_total++] = soi_at(i);
    describe(m, o, &pp, p);
    /* a sample that times out, and a stop, are written as what they are (docs/profile.md, "A sample that times out",
     * "Interrupted"): the profile keeps what it has and is marked incomplete */
    struct prof_sois ps = {.ctx = &r, .n = r.sois_total, .name = a_name, .resource = a_resource, .open = a_open,
                           .caused = a_caused, .close = a_close, .stage = a_stage, .buffered = a_buffered};
    rc = prof_profile(&pp, &pm, &ps, r.nb, stop, p, why, len);
    usage_of_capacity(p);
    free(r.list);
out:
    out_progress_done();
    work_end(&r);
    if (r.have_svc)
        child_stop(&r.svc, 2000);
    if (pinned)
        sched_setaffinity(0, sizeof(old), &old);
    char pw[256];
    int urc = pid_unpin(&pin, pw, sizeof(pw)); /* -ESRCH: the service is gone, nothing to put back */
    if (urc < 0 && urc != -ESRCH && rc == 0)
        rc = ib_why(why, len, urc, "%s", pw); /* a service left pinned is a failure, though all was measured */
    if (rc < 0) {
        profile_free(p);
        free(p);
        if (bad_input)
            *bad_input = r.bad_input;
        return rc;
    }
    *out = p;
    return 0;
}
