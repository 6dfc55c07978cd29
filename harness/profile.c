/* profile.c - tolerated and caused interference of a target, per SoI (profile.h). */
#define _GNU_SOURCE
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "engine.h"
#include "ib_err.h"
#include "output.h"
#include "ramp.h"
#include "stats.h"
#include "target.h"
#include "vprobe.h"

/* ---- the target and its samples ------------------------------------------------------------------------------ */

struct run {
    const struct profile_opts *o;
    const atomic_int *stop;
    struct child svc; /* a service target we started */
    int have_svc;
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

/* The command one sample runs: the batch target itself, the load generator, or the metric command. */
static int batch(const struct profile_opts *o)
{
    return o->metric.kind == MK_RUNTIME || o->metric.kind == MK_CPUTIME;
}

static const char *sample_cmd(const struct profile_opts *o)
{
    if (batch(o))
        return o->target_cmd;
    if (o->metric.kind == MK_COMMAND)
        return o->metric.cmd;
    return o->load_cmd;
}

/* One sample of the metric. */
static int sample(struct run *r, double *v, char *why, size_t len)
{
    const struct profile_opts *o = r->o;
    int rc = target_alive(r, why, len);
    if (rc < 0)
        return rc;
    char *out = NULL;
    int st = 0;
    uint64_t wall = 0;
    double cpu = 0;
    const char *cmd = sample_cmd(o);
    rc = child_run(cmd, o->tcpus, o->ntcpus, o->timeout_s * 1000, r->stop, &out, &st, &wall, &cpu, why, len);
    if (rc < 0)
        return rc;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char s[96];
        status_text(st, s, sizeof(s));
        free(out);
        return ib_why(why, len, -ECHILD, "%s '%s' %s", batch(o) ? "the target" : "the load/metric command", cmd, s);
    }
    if (o->metric.kind == MK_RUNTIME) {
        *v = (double)wall / 1e9;
    } else if (o->metric.kind == MK_CPUTIME) {
        *v = cpu > 0 ? cpu : 1e-6; /* a run too short to be charged a tick still counts, as almost nothing */
    } else {
        rc = metric_read(&o->metric, out, v, why, len);
    }
    free(out);
    if (rc == 0)
        rc = target_alive(r, why, len);
    return rc;
}

/* n samples; their median in *med and the raw values appended to arr (when not NULL). */
static int samples(struct run *r, unsigned n, double *med, json_t *arr, char *why, size_t len)
{
    double v[64];
    n = n > 64 ? 64 : n;
    for (unsigned i = 0; i < n; i++) {
        int rc = sample(r, &v[i], why, len);
        if (rc < 0)
            return rc;
        if (arr)
            json_array_append_new(arr, json_real(v[i]));
    }
    *med = ib_median(v, n);
    return 0;
}

/* ---- an SoI held at one intensity in the background --------------------------------------------------------- */

#define HOLD_STEP_MS 200
#define HOLD_MAX_STEPS 3000 /* 10 minutes */

struct hold {
    struct soi *s;
    pthread_t th;
    atomic_int stop;
    const atomic_int *outer;
    struct ramp_sched sched;
    struct step_result *res;
    unsigned ndone;
    atomic_uint steps; /* completed steps, counted as they complete (ndone is only final on return) */
    atomic_int finished; /* engine_run returned */
    int rc;
    char why[256];
    int running;
};

static void hold_on_step(void *arg, const struct step_result *r, unsigned nsteps)
{
    (void)r;
    (void)nsteps;
    atomic_fetch_add(&((struct hold *)arg)->steps, 1);
}

static void nap_ms(unsigned ms, const atomic_int *stop);

static void *hold_thread(void *arg)
{
    struct hold *h = arg;
    struct engine_cb cb = {.on_step = hold_on_step, .arg = h};
    h->rc = engine_run(h->s, &h->sched, &h->stop, &cb, h->res, &h->ndone, h->why, sizeof(h->why));
    atomic_store(&h->finished, 1);
    return NULL;
}

static int hold_start(struct hold *h, struct soi *s, double x, char *why, size_t len)
{
    memset(h, 0, sizeof(*h));
    h->s = s;
    double *xs = malloc(HOLD_MAX_STEPS * sizeof(double));
    h->res = calloc(HOLD_MAX_STEPS, sizeof(*h->res));
    if (!xs || !h->res) {
        free(xs);
        free(h->res);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned i = 0; i < HOLD_MAX_STEPS; i++)
        xs[i] = x;
    int rc = ramp_list(&h->sched, xs, HOLD_MAX_STEPS, (uint64_t)HOLD_STEP_MS * IB_NS_PER_MS);
    free(xs);
    if (rc < 0) {
        free(h->res);
        return ib_why(why, len, rc, "ramp: %s", strerror(-rc));
    }
    if (pthread_create(&h->th, NULL, hold_thread, h)) {
        ramp_free(&h->sched);
        free(h->res);
        return ib_why(why, len, -EAGAIN, "cannot start the SoI's thread");
    }
    h->running = 1;
    return 0;
}

/* Stop it; 0, or the engine's error with why. Medians over the completed steps from step `from` on. */
static int hold_stop(struct hold *h, unsigned from, double *achieved_pct, double *rate, char *why, size_t len)
{
    if (!h->running)
        return 0;
    atomic_store(&h->stop, 1);
    pthread_join(h->th, NULL);
    h->running = 0;
    int rc = h->rc == -EINTR ? 0 : h->rc;
    if (rc < 0)
        snprintf(why, len, "%s", h->why);
    double a[64], q[64];
    unsigned n = 0;
    for (unsigned i = from; i < h->ndone && n < 64; i++, n++) {
        a[n] = h->res[i].achieved_pct;
        q[n] = h->res[i].secondary;
    }
    if (achieved_pct)
        *achieved_pct = ib_median(a, n);
    if (rate)
        *rate = ib_median(q, n);
    ramp_free(&h->sched);
    free(h->res);
    h->res = NULL;
    return rc;
}

static void nap_ms(unsigned ms, const atomic_int *stop)
{
    for (unsigned i = 0; i < ms / 10 && !(stop && atomic_load(stop)); i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

/* Wait until the hold has completed `steps` steps (or stopped, or failed). */
static void hold_wait_steps(struct hold *h, unsigned steps, const atomic_int *stop)
{
    uint64_t until = clk_mono_ns() + (uint64_t)(steps + 20) * HOLD_STEP_MS * IB_NS_PER_MS + 30ULL * 1000000000ULL;
    while (atomic_load(&h->steps) < steps && !(stop && atomic_load(stop)) && clk_mono_ns() < until &&
           !atomic_load(&h->finished))
        nap_ms(20, stop);
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

struct point {
    double x, value, solo, rel, achieved;
    int ok;
    int again; /* a second measurement of a ramp point that broke QoS */
};

/* One point: solo samples right before (the local baseline: the host drifts by more than a QoS band over a
 * profile here), then the same number with the SoI held at x; relative performance = median at x against the
 * local baseline. */
static int measure_point(struct run *r, struct soi *s, double x, double base, struct point *p, char *why, size_t len)
{
    int rc = samples(r, r->o->samples, &p->solo, NULL, why, len);
    if (rc < 0)
        return rc;
    if (isfinite(p->solo) && p->solo > 0)
        base = p->solo;
    struct hold h;
    rc = hold_start(&h, s, x, why, len);
    if (rc < 0)
        return rc;
    hold_wait_steps(&h, 1, r->stop); /* the footprint is grown and one step ran before sampling */
    double v = NAN;
    rc = samples(r, r->o->samples, &v, NULL, why, len);
    char hw[256] = "";
    int hr = hold_stop(&h, 1, &p->achieved, NULL, hw, sizeof(hw));
    if (rc == 0 && hr < 0)
        rc = ib_why(why, len, hr, "the SoI failed: %s", hw);
    if (rc < 0)
        return rc;
    p->x = x;
    p->value = v;
    p->rel = metric_rel(&r->o->metric, v, base);
    p->ok = p->rel >= r->o->qos;
    return 0;
}

static json_t *point_json(const struct point *p)
{
    json_t *j = json_pack("{s:f,s:f,s:f,s:f,s:b,s:f}", "intensity", p->x, "value", p->value, "solo", p->solo,
                          "relative", p->rel, "meets_qos", p->ok, "achieved_pct",
                          isfinite(p->achieved) ? p->achieved : 0.0);
    if (p->again)
        json_object_set_new(j, "again", json_true());
    return j;
}

/* ---- does the SoI reach the target's CPU? (profile.h, "Reach") ---------------------------------------------- */

const char *profile_reach_verdict(double effect_pct, double se_pct, double bar_pct)
{
    if (!isfinite(effect_pct) || !isfinite(se_pct) || se_pct < 0)
        return "undecided";
    return effect_pct + 2 * se_pct < bar_pct ? "does not reach" : effect_pct - 2 * se_pct > 0 ? "reaches" : "undecided";
}

/* 1: the SoI reaches the target, or that could not be ruled out (ramp it); 0: it does not (w says why); -EINTR.
 * e gets a "reach" object with the figures. */
static int reach_check(struct machine *m, struct run *r, struct soi *s, const struct soi_ops *ops, json_t *e,
                       char *w, size_t wlen)
{
    const struct vprobe_map *vm = vprobe_map_of(ops->name);
    if (!vm || !vm->placed || !vm->probe)
        return 1;
    const char *pname = vm->probe;
    const int cpu = r->o->tcpus[0];
    char pw[256] = "";
    if (r->o->no_reach_check) {
        json_object_set_new(e, "reach", json_pack("{s:s,s:s}", "verdict", "unchecked", "reason", "--no-reach-check"));
        return 1;
    }
    struct vprobe vp;
    int rc = vprobe_init(&vp, pname, &m->calib, &m->mlim, r->o->dir, NULL, -1, pw, sizeof(pw));
    struct beside_result br;
    if (rc == 0) {
        const double levels[2] = {0, 100};
        out_progress("profile", "%s: does it reach CPU %d? the %s probe there, the SoI at 0 / 100 %%", ops->name, cpu,
                     pname);
        rc = beside_run(s, levels, 2, 16, 60 * IB_NS_PER_MS, 8 * IB_NS_PER_MS, cpu, &vp.bp, r->stop, &br, pw,
                        sizeof(pw));
        vprobe_fini(&vp);
    }
    if (rc == -EINTR)
        return rc;
    if (rc < 0) { /* the check itself failed: say so and ramp the SoI as hwloc's word has it */
        json_object_set_new(e, "reach", json_pack("{s:s,s:s,s:s}", "verdict", "unchecked", "probe", pname, "reason",
                                                  pw));
        return 1;
    }
    const double eff = 100 * (br.lv[1].ratio - 1), se = 100 * br.lv[1].ratio_rse, bar = 50 * (1 - r->o->qos);
    const int known = isfinite(eff) && isfinite(se);
    const char *v = profile_reach_verdict(eff, se, bar);
    json_t *j = json_pack("{s:s,s:s,s:i,s:f,s:s}", "verdict", v, "probe", pname, "cpu", cpu, "bar_pct", bar, "unit",
                          vp.unit);
    if (known) {
        json_object_set_new(j, "effect_pct", json_real(eff));
        json_object_set_new(j, "se_pct", json_real(se));
    }
    if (isfinite(br.lv[1].achieved_pct))
        json_object_set_new(j, "soi_achieved_pct", json_real(br.lv[1].achieved_pct));
    json_object_set_new(e, "reach", j);
    out_progress("profile", "%s: the %s probe on CPU %d moved %+.1f +- %.1f %%: %s", ops->name, pname, cpu, eff, se,
                 v);
    if (strcmp(v, "does not reach"))
        return 1;
    snprintf(w, wlen,
             "%s at 100 %% does not reach CPU %d from where it runs: the %s probe on CPU %d moved %+.1f +- %.1f %% "
             "beside it (median of per-cycle ratios +- its robust standard error), under half the QoS band (%.1f %%) "
             "with twice that error. hwloc says these CPUs "
             "share the %s; a VM's vCPUs can sit on different physical caches or sockets. --no-reach-check ramps it "
             "anyway",
             ops->name, cpu, pname, cpu, eff, se, bar, topo_scope_name(ops->scope));
    return 0;
}

/* The target working in the background while caused is measured: its batch job or load generator rerun. */
static int caused(struct run *r, struct soi *s, double *alone, double *beside, char *why, size_t len)
{
    const unsigned steps = 5; /* 1 s */
    struct hold h;
    int rc = hold_start(&h, s, r->o->caused_level, why, len);
    if (rc < 0)
        return rc;
    hold_wait_steps(&h, steps + 1, r->stop);
    char hw[256] = "";
    rc = hold_stop(&h, 1, NULL, alone, hw, sizeof(hw));
    if (rc < 0)
        return ib_why(why, len, rc, "the SoI failed: %s", hw);
    if ((rc = target_alive(r, why, len)) < 0)
        return rc;
    struct child act;
    const char *cmd = sample_cmd(r->o);
    if ((rc = child_spawn(cmd, r->o->tcpus, r->o->ntcpus, 0, 0, &act, why, len)) < 0)
        return rc;
    nap_ms(100, r->stop); /* let it get going */
    if ((rc = hold_start(&h, s, r->o->caused_level, why, len)) < 0) {
        child_stop(&act, 500);
        return rc;
    }
    unsigned respawns = 0;
    while (atomic_load(&h.steps) < steps + 1 && !atomic_load(r->stop) && !atomic_load(&h.finished)) {
        nap_ms(20, r->stop);
        if (child_poll(&act)) { /* finished: judge it, start it again */
            if (!WIFEXITED(act.status) || WEXITSTATUS(act.status) != 0) {
                char st[96];
                status_text(act.status, st, sizeof(st));
                child_stop(&act, 0);
                hold_stop(&h, 0, NULL, NULL, hw, sizeof(hw));
                return ib_why(why, len, -ECHILD, "'%s' %s while caused was measured", cmd, st);
            }
            child_stop(&act, 0);
            if (++respawns > 1000 ||
                (rc = child_spawn(cmd, r->o->tcpus, r->o->ntcpus, 0, 0, &act, why, len)) < 0) {
                hold_stop(&h, 0, NULL, NULL, hw, sizeof(hw));
                return rc < 0 ? rc : ib_why(why, len, -EIO, "'%s' keeps finishing at once", cmd);
            }
        }
    }
    rc = hold_stop(&h, 1, NULL, beside, hw, sizeof(hw));
    child_stop(&act, 500);
    if (rc < 0)
        return ib_why(why, len, rc, "the SoI failed: %s", hw);
    if (atomic_load(r->stop))
        return -EINTR;
    /* alone once more: the reference is the mean of the runs before and after, moments apart */
    double again = NAN;
    if ((rc = hold_start(&h, s, r->o->caused_level, why, len)) < 0)
        return rc;
    hold_wait_steps(&h, steps + 1, r->stop);
    if ((rc = hold_stop(&h, 1, NULL, &again, hw, sizeof(hw))) < 0)
        return ib_why(why, len, rc, "the SoI failed: %s", hw);
    if (isfinite(again) && isfinite(*alone))
        *alone = 0.5 * (*alone + again);
    if (atomic_load(r->stop))
        return -EINTR;
    return target_alive(r, why, len);
}

/* Tolerated and caused for one SoI; the entry is filled (status measured or skipped); -EINTR or a fatal error
 * about the target aborts the profile. */
static int profile_soi(struct machine *m, struct run *r, const struct soi_ops *ops, double base, json_t *e,
                       char *why, size_t len)
{
    const struct profile_opts *o = r->o;
    int cpus[SOI_MAX_THREADS];
    unsigned n = 0;
    char w[512] = "";
    if (soi_cpus(m, o, ops, cpus, &n, w, sizeof(w)) < 0) {
        json_object_set_new(e, "status", json_string("skipped"));
        json_object_set_new(e, "reason", json_string(w));
        return 0;
    }
    struct soi_env env = {.topo = m->topo, .cpu = &m->cpu, .calib = &m->calib, .mlim = &m->mlim, .nthreads = n,
                          .cpus = cpus, .target_cpu = o->tcpus[0], .stop = r->stop, .cached_capacity = 1,
                          .dir = o->dir};
    soi_param_defaults(ops, env.param);
    struct soi *s = NULL;
    out_progress("profile", "%s: opening on CPU %d", ops->name, cpus[0]);
    int rc = soi_open(ops, &env, &s, w, sizeof(w));
    if (rc < 0) {
        if (rc == -EINTR)
            return rc;
        json_object_set_new(e, "status", json_string("skipped"));
        json_object_set_new(e, "reason", json_string(w));
        return 0;
    }
    json_t *cj = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(cj, json_integer(cpus[i]));
    json_object_set_new(e, "cpus", cj);
    json_object_set_new(e, "capacity", json_pack("{s:f,s:s,s:s}", "value", s->capacity, "unit", s->unit, "source",
                                                 s->capacity_src));
    if ((rc = reach_check(m, r, s, ops, e, w, sizeof(w))) <= 0) {
        soi_close(s);
        if (rc < 0)
            return rc;
        json_object_set_new(e, "status", json_string("skipped"));
        json_object_set_new(e, "reason", json_string(w));
        return 0;
    }
    rc = 0;
    /* tolerated: 25, 50, 75, 100, then two bisection steps inside the first bracket that broke QoS */
    json_t *curve = json_array();
    json_object_set_new(e, "curve", curve);
    double lo = 0, hi = -1;
    for (double x = 25; x <= 100 && rc == 0; x += 25) {
        struct point p = {0};
        out_progress("profile", "%s: tolerated, %g %%", ops->name, x);
        if ((rc = measure_point(r, s, x, base, &p, why, len)) < 0)
            break;
        json_array_append_new(curve, point_json(&p));
        if (!p.ok) { /* once more: one noisy set of samples must not end the ramp */
            out_progress("profile", "%s: tolerated, %g %% again (%.3f of solo)", ops->name, x, p.rel);
            if ((rc = measure_point(r, s, x, base, &p, why, len)) < 0)
                break;
            p.again = 1;
            json_array_append_new(curve, point_json(&p));
        }
        if (!p.ok) {
            hi = x;
            break;
        }
        lo = x;
    }
    for (int b = 0; b < 2 && rc == 0 && hi > 0; b++) {
        struct point p = {0};
        double x = 0.5 * (lo + hi);
        out_progress("profile", "%s: tolerated, bisecting at %g %%", ops->name, x);
        if ((rc = measure_point(r, s, x, base, &p, why, len)) < 0)
            break;
        json_array_append_new(curve, point_json(&p));
        if (p.ok)
            lo = x;
        else
            hi = x;
    }
    double alone = NAN, beside = NAN;
    char unit[32];
    snprintf(unit, sizeof(unit), "%s", s->secondary_unit[0] ? s->secondary_unit : "step units/s");
    if (rc == 0) {
        out_progress("profile", "%s: caused, %g %% alone and beside the target", ops->name, o->caused_level);
        rc = caused(r, s, &alone, &beside, why, len);
    }
    soi_close(s);
    if (rc < 0)
        return rc;
    double tol = hi < 0 ? 100 : lo;
    json_object_set_new(e, "status", json_string("measured"));
    json_object_set_new(e, "tolerated", json_real(tol));
    json_object_set_new(e, "tolerated_bracket", json_pack("[f,f]", lo, hi < 0 ? 100.0 : hi));
    json_t *cd = json_pack("{s:f,s:s}", "intensity", o->caused_level, "unit", unit);
    if (alone > 0 && isfinite(alone) && isfinite(beside)) {
        double cz = 100 * (1 - beside / alone);
        cz = cz < 0 ? 0 : cz > 100 ? 100 : cz;
        json_object_set_new(e, "caused", json_real(cz));
        json_object_set_new(cd, "alone", json_real(alone));
        json_object_set_new(cd, "beside", json_real(beside));
    } else { /* no completed step to read a work rate from: no figure rather than a made-up one */
        json_object_set_new(e, "caused", json_null());
        json_object_set_new(cd, "reason", json_string("the SoI completed no whole step at the reference intensity "
                                                      "to read its work rate from"));
    }
    json_object_set_new(e, "caused_detail", cd);
    return 0;
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

static double spread_pct(json_t *arr, double med)
{
    double lo = INFINITY, hi = -INFINITY;
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        lo = fmin(lo, json_number_value(v));
        hi = fmax(hi, json_number_value(v));
    }
    return med > 0 && isfinite(lo) ? 100 * (hi - lo) / med : 0;
}

int profile_run(struct machine *m, const struct profile_opts *o, const atomic_int *stop, json_t **doc, char *why,
                size_t len)
{
    *doc = NULL;
    struct run r = {.o = o, .stop = stop};
    int rc = 0;
    if (o->metric.kind == MK_IPC)
        return ib_why(why, len, -ENOTSUP, "--metric ipc needs hardware counters, and this machine has none (%s)",
                      "/sys/bus/event_source/devices/cpu missing");
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
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* orphans of the target's shell come back to us (child_stop reaps them) */
    if (o->target_cmd && !batch(o)) { /* a service: start it once */
        out_progress("profile", "starting the target");
        if ((rc = child_spawn(o->target_cmd, o->tcpus, o->ntcpus, 0, 0, &r.svc, why, len)) < 0)
            goto out;
        r.have_svc = 1;
        nap_ms(o->warmup_ms, stop);
        if ((rc = target_alive(&r, why, len)) < 0)
            goto out;
    } else if (o->pid > 0 && o->ntcpus && (rc = pid_pin(o->pid, o->tcpus, o->ntcpus, why, len)) < 0) {
        goto out;
    }
    json_t *before = json_array(), *after = json_array();
    double b0 = NAN, b1 = NAN;
    out_progress("profile", "baseline: %u solo samples", o->baselines);
    rc = samples(&r, o->baselines, &b0, before, why, len);
    json_t *list = json_array();
    for (unsigned i = 0; rc == 0 && i < soi_count(); i++) {
        const struct soi_ops *ops = soi_at(i);
        if (!wanted(o->sois, ops->name))
            continue;
        json_t *e = json_pack("{s:s,s:s}", "soi", ops->name, "resource", ops->resource);
        json_array_append_new(list, e);
        rc = profile_soi(m, &r, ops, b0, e, why, len);
        if (rc == 0 && atomic_load(stop))
            rc = -EINTR;
    }
    if (rc == 0) {
        out_progress("profile", "baseline again: %u solo samples", o->baselines);
        rc = samples(&r, o->baselines, &b1, after, why, len);
    }
    out_progress_done();
    if (rc < 0) {
        json_decref(before);
        json_decref(after);
        json_decref(list);
        goto out;
    }
    double noise = fmax(spread_pct(before, b0), spread_pct(after, b1));
    double drift = 100 * (metric_rel(&o->metric, b1, b0) - 1);
    const char *conf = fabs(drift) > 100 * (1 - o->qos) ? "low: the solo baseline moved by more than the QoS band"
                       : noise > 50 * (1 - o->qos)     ? "low: solo samples spread by more than half the QoS band"
                                                       : "high";
    /* the resolution of each entry: bisection brackets, and whether the noise is small against the QoS band */
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "status")), "measured"))
            continue;
        json_t *br = json_object_get(e, "tolerated_bracket");
        double w = json_number_value(json_array_get(br, 1)) - json_number_value(json_array_get(br, 0));
        json_object_set_new(e, "confidence", json_pack("{s:f,s:f,s:s}", "tolerated_pts", w > 0 ? w : 0.0,
                                                       "noise_pct", noise, "level", conf));
    }
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_t *tc = json_array();
    for (unsigned k = 0; k < o->ntcpus; k++)
        json_array_append_new(tc, json_integer(o->tcpus[k]));
    json_t *caps = json_object();
    for (int l = 0; l < CALIB_NLEVELS; l++)
        if (m->calib.measured[l])
            json_object_set_new(caps, calib_level_name((enum calib_level)l), json_integer((json_int_t)m->calib.measured[l]));
    char ver[16];
    snprintf(ver, sizeof(ver), "%d.%d", PROFILE_MAJOR, PROFILE_MINOR);
    *doc = json_pack("{s:s,s:s,s:s,s:s}", "format", PROFILE_FORMAT, "version", ver, "tool", "ibench " IBENCH_VERSION,
                     "created", when);
    json_object_set_new(*doc, "machine", json_pack("{s:s,s:s,s:i,s:o}", "fingerprint", m->calib.fingerprint,
                                                   "cpu_model", m->cpu.model, "cpus", (int)topo_npus(m->topo),
                                                   "caches_measured_bytes", caps));
    json_object_set_new(*doc, "target", json_pack("{s:s,s:s?,s:i,s:s?,s:o}", "name", o->name, "command",
                                                  o->target_cmd, "pid", (int)o->pid, "load", o->load_cmd, "cpus", tc));
    json_object_set_new(*doc, "metric", json_pack("{s:s,s:s,s:s,s:b,s:s,s:s}", "kind", metric_kind_name(o->metric.kind),
                                                  "spec", o->metric.spec, "unit", o->metric.unit, "higher_is_better",
                                                  o->metric.higher_better, "adapter", o->metric.adapter, "regex",
                                                  o->metric.regex));
    json_object_set_new(*doc, "qos", json_real(o->qos));
    json_object_set_new(*doc, "method", json_pack("{s:i,s:i,s:f,s:s,s:s}", "samples_per_point", (int)o->samples,
                                                  "baseline_samples", (int)o->baselines, "caused_intensity",
                                                  o->caused_level, "search", "25/50/75/100 %, then 2 bisection steps",
                                                  "relative_to", "solo samples taken right before each point"));
    json_object_set_new(*doc, "baseline", json_pack("{s:{s:f,s:o},s:{s:f,s:o},s:f,s:f,s:s}", "before", "median", b0,
                                                    "samples", before, "after", "median", b1, "samples", after,
                                                    "drift_pct", drift, "noise_pct", noise, "confidence", conf));
    json_object_set_new(*doc, "sois", list);
out:
    if (r.have_svc)
        child_stop(&r.svc, 2000);
    if (pinned)
        sched_setaffinity(0, sizeof(old), &old);
    out_progress_done();
    return rc;
}

int profile_load(const char *path, json_t **doc, char *why, size_t len)
{
    *doc = NULL;
    json_error_t e;
    json_t *d = json_load_file(path, 0, &e);
    if (!d) {
        if (e.line <= 0 && access(path, R_OK) != 0)
            return ib_why(why, len, -errno, "%s: %s", path, strerror(errno));
        return ib_why(why, len, -EINVAL, "%s: not valid JSON (line %d: %s)", path, e.line, e.text);
    }
    const char *f = json_string_value(json_object_get(d, "format"));
    const char *v = json_string_value(json_object_get(d, "version"));
    if (!f || strcmp(f, PROFILE_FORMAT)) {
        json_decref(d);
        return ib_why(why, len, -EINVAL, "%s: not an ibench profile (no \"format\": \"%s\")", path, PROFILE_FORMAT);
    }
    char ver[32];
    snprintf(ver, sizeof(ver), "%s", v ? v : "(missing)");
    int major = v ? atoi(v) : 0;
    if (!v || major != PROFILE_MAJOR) {
        json_decref(d);
        return ib_why(why, len, -EINVAL, "%s: profile version %s; this ibench reads version %d.x only", path, ver,
                      PROFILE_MAJOR);
    }
    if (!json_is_array(json_object_get(d, "sois")) || !json_is_object(json_object_get(d, "target"))) {
        json_decref(d);
        return ib_why(why, len, -EINVAL, "%s: a version-%s profile without its \"sois\" or \"target\"", path, ver);
    }
    *doc = d;
    return 0;
}
