/* cmd_run.c - `ibench run`: one SoI, held at an intensity or ramped, every step self-metered. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "cli.h"
#include "config.h"
#include "counters.h"
#include "engine.h"
#include "ib_err.h"
#include "opts.h"
#include "kernels.h"
#include "machine.h"
#include "parse.h"
#include "plot.h"
#include "pressure.h"
#include "ramp.h"
#include "validate.h"
#include "soi.h"

/* --quantum: a step() quantum of the core SoIs is ~20 us; a worker sleeps at most one quantum at once, so the longest
 * bounds how late it parks */
#define QUANTUM_MIN_NS (20 * IB_NS_PER_US)
#define QUANTUM_MAX_NS (100 * IB_NS_PER_MS)

static int add_param(struct run_opts *o, const char *name, size_t nlen, const char *value, char *why, size_t len)
{
    if (o->nparams >= RUN_MAX_PARAMS)
        return ib_why(why, len, -EINVAL, "too many --param options");
    if (nlen == 0 || nlen >= 64 || strlen(value) >= 64 || !*value)
        return ib_why(why, len, -EINVAL, "--param wants NAME=VALUE");
    char *b = o->pbuf[o->nparams];
    memcpy(b, name, nlen);
    b[nlen] = 0;
    strcpy(b + 64, value);
    o->pname[o->nparams] = b;
    o->pvalue[o->nparams] = b + 64;
    o->nparams++;
    return 0;
}

/* --param NAME=VALUE */
static int set_param(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    const char *eq = strchr(arg, '=');
    return eq ? add_param(opts, arg, (size_t)(eq - arg), eq + 1, why, len)
              : ib_why(why, len, -EINVAL, "--param '%s' wants NAME=VALUE", arg);
}

/* --max-bytes, --rw, --bs, --qd: spellings of --param NAME=VALUE under the option's own name (the SoI's table checks
 * the value) */
static int set_named_param(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    return add_param(opts, op->name, strlen(op->name), arg, why, len);
}

static int set_levels(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    struct run_opts *o = opts;
    size_t n = 0;
    int rc = ramp_parse_list(arg, &o->levels, &n);
    o->nlevels = (unsigned)n;
    return rc < 0 ? -EINVAL : 0;
}

/* What the options start from, under the table's defaults: threads and the CPU --near not given. */
static const struct run_opts run_preset = {.threads = 1, .near = -1};

/* The rules between run's options: everything that needs no machine.  0, or -EINVAL with a one-line reason. */
static int run_rules(struct run_opts *o, char *why, size_t len)
{
    if (o->json + o->csv + o->table > 1)
        return ib_why(why, len, -EINVAL, "--json, --csv and --table exclude each other");
    o->have_fmt = o->json + o->csv + o->table;
    o->fmt = o->json ? OUT_JSON : o->csv ? OUT_CSV : OUT_TABLE;
    if (o->device && o->dir)
        return ib_why(why, len, -EINVAL, "--device and --dir exclude each other");
    if (o->device && !o->force)
        return ib_why(why, len, -EINVAL, "--device %s reads a raw block device: add --force if you mean it",
                      o->device);
    if (!o->soi)
        return ib_why(why, len, -EINVAL, "--soi NAME is required (ibench list shows them)");
    int modes = o->have_intensity + o->ramp + !!o->levels;
    if (modes == 0)
        return ib_why(why, len, -EINVAL, "say --intensity X, --ramp or --levels LIST");
    if (modes > 1)
        return ib_why(why, len, -EINVAL, "--intensity, --ramp and --levels exclude each other");
    if (!o->ramp && (o->have_from || o->have_to || o->have_steps))
        return ib_why(why, len, -EINVAL, "--from, --to and --steps go with --ramp");
    if (o->have_intensity && o->have_step)
        return ib_why(why, len, -EINVAL, "--step-ms goes with --ramp or --levels; a hold uses --duration");
    if (!o->have_intensity && o->have_duration)
        return ib_why(why, len, -EINVAL, "--duration goes with --intensity; ramp steps use --step-ms");
    if (o->ncpus && o->have_near)
        return ib_why(why, len, -EINVAL, "--cpus and --near exclude each other");
    if (o->ramp && o->from == o->to && o->steps > 1)
        return ib_why(why, len, -EINVAL, "--from equals --to: use --intensity for a hold");
    return 0;
}

int cli_parse_run(int argc, char **argv, struct run_opts *o, char *why, size_t len)
{
    *o = run_preset;
    int first, help;
    int rc = cli_opts_parse(&cli_cmd_run, argc, argv, o, &first, &help, why, len);
    o->help = help;
    return rc < 0 || o->help ? rc : run_rules(o, why, len);
}

void cli_free_run(struct run_opts *o)
{
    free(o->levels);
    free(o->cpus);
    o->levels = NULL;
    o->cpus = NULL;
}

static void run_done(void *o) { cli_free_run(o); }

/* ---- output --------------------------------------------------------------------------------------------- */

struct run_ctx {
    const struct soi *s;
    enum out_fmt fmt;
};

static void on_step(void *arg, const struct step_result *r, unsigned nsteps)
{
    struct run_ctx *c = arg;
    char a[40];
    if (!strcmp(c->s->unit, "B"))
        fmt_bytes(r->achieved, a, sizeof(a));
    else
        fmt_rate(r->achieved, c->s->unit, a, sizeof(a));
    out_progress(c->s->ops->name, "step %u/%u: %.0f %% requested, %s = %.1f %% achieved", r->index + 1, nsteps,
                 r->requested, a, r->achieved_pct);
}

/* a number, or null when there is none (jansson takes no NAN) */
static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *step_json(const struct soi *s, const struct step_result *r)
{
    json_t *o = json_pack("{s:i,s:f,s:f,s:f,s:s,s:f,s:f,s:s,s:f,s:f,s:f,s:f}", "step", (int)r->index + 1,
                          "requested_pct", r->requested, "target", r->target, "achieved", r->achieved, "unit",
                          s->unit, "achieved_pct", r->achieved_pct, "rate", r->secondary, "rate_unit",
                          s->secondary_unit, "active_pct", r->active_frac * 100.0, "on_cpu_pct",
                          r->cpu_frac * 100.0, "wall_s", (double)r->wall_ns / 1e9, "settle_s",
                          (double)r->settle_ns / 1e9);
    json_object_set_new(o, "load_ns", r->load_ns > 0 ? json_real(r->load_ns) : json_null());
    /* duty SoIs: the quantum the workers ended the step with, and what their wake-ups cost meanwhile */
    json_object_set_new(o, "quantum_s", r->period_ns ? json_real((double)r->period_ns / 1e9) : json_null());
    json_object_set_new(o, "wake_cpu_s", r->wake_ns > 0 ? json_real(r->wake_ns / 1e9) : json_null());
    /* did the SoI get its CPU? its workers' run-queue delay (BUSY above IB_BUSY_WAIT_PCT), PSI and steal */
    json_object_set_new(o, "wait_pct", num_or_null(r->wait_pct));
    json_object_set_new(o, "psi_cpu_some_pct", num_or_null(r->machine.some_pct[IB_PSI_CPU]));
    json_object_set_new(o, "steal_pct", num_or_null(r->machine.steal_pct));
    const double per_run = ib_sched_wait_per_run_us(&r->sched);
    json_object_set_new(o, "wait_per_run_us", num_or_null(per_run));
    json_object_set_new(o, "busy", isnan(r->wait_pct) || !val_busy_judged(per_run)
                                       ? json_null()
                                       : json_boolean(r->requested > 0 && ib_busy(r->wait_pct)));
    return o;
}

/* The run's busy verdict (docs/validation.md, "Busy is a verdict"): BUSY when some step's workers waited more than
 * IB_BUSY_WAIT_PCT of their runnable time for a CPU: that step's figures describe the host, not the SoI. Steps at 0 %
 * ask for no CPU and are not judged (validate.h). */
static json_t *busy_json(const struct step_result *res, unsigned n)
{
    int worst = -1, nbusy = 0, nmeas = 0;
    struct ib_sched all = {0};
    for (unsigned i = 0; i < n; i++) {
        if (isnan(res[i].wait_pct) || res[i].requested <= 0) /* a 0 % step asks for no CPU: not judged */
            continue;
        nmeas++;
        nbusy += ib_busy(res[i].wait_pct);
        ib_sched_add(&all, &res[i].sched);
        if (worst < 0 || res[i].wait_pct > res[worst].wait_pct)
            worst = (int)i;
    }
    char fig[256], text[400];
    const double per_run = ib_sched_wait_per_run_us(&all);
    if (worst >= 0 && !val_busy_judged(per_run)) {
        snprintf(text, sizeof(text), "its threads waited %.0f us before a run on the mean, a wake-up's latency, not "
                 "another task's slice (bound %.0f us): their own I/O woke them (at most %.1f %% of their runnable "
                 "time, step %d)", per_run, IB_BUSY_WAIT_RUN_US, res[worst].wait_pct, worst + 1);
        return json_pack("{s:s,s:f,s:o,s:f,s:i,s:i,s:s}", "verdict", "not judged", "bound_pct", IB_BUSY_WAIT_PCT,
                         "wait_pct", num_or_null(ib_sched_share(&all)), "worst_wait_pct", res[worst].wait_pct,
                         "worst_step", worst + 1, "busy_steps", 0, "reason", text);
    }
    if (worst < 0) {
        return json_pack("{s:s,s:f,s:n,s:n,s:n,s:i,s:s}", "verdict", "unmeasured", "bound_pct", IB_BUSY_WAIT_PCT,
                         "wait_pct", "worst_wait_pct", "worst_step", "busy_steps", 0, "reason",
                         "no step had its workers' run-queue delay measured (no schedstat, or never runnable)");
    }
    ib_busy_text(res[worst].wait_pct, &res[worst].machine, fig, sizeof(fig));
    if (nbusy)
        snprintf(text, sizeof(text), "step %d: %s; %d of %d steps above the bound: their figures describe the host, "
                 "not the SoI", worst + 1, fig, nbusy, nmeas);
    else
        snprintf(text, sizeof(text), "at most %.1f %% (step %d) of the SoI's threads' runnable time waited for a CPU "
                 "(bound %.0f %%)", res[worst].wait_pct, worst + 1, IB_BUSY_WAIT_PCT);
    return json_pack("{s:s,s:f,s:o,s:f,s:i,s:i,s:s}", "verdict", nbusy ? "BUSY" : "ok", "bound_pct",
                     IB_BUSY_WAIT_PCT, "wait_pct", num_or_null(ib_sched_share(&all)), "worst_wait_pct",
                     res[worst].wait_pct, "worst_step", worst + 1, "busy_steps", nbusy, "reason", text);
}

static void print_table(const struct soi *s, json_t *doc, json_t *steps)
{
    enum out_kind k = !strcmp(s->unit, "B") ? OUT_K_BYTES : !strcmp(s->unit, "B/s") ? OUT_K_RATE : OUT_K_NUM;
    struct out_col cols[] = {
        {"step", "step", OUT_K_INT, 0, NULL},
        {"requested_pct", "requested %", OUT_K_NUM, 1, NULL},
        {"target", "target", k, 0, s->unit},
        {"achieved", "achieved", k, 0, s->unit},
        {"achieved_pct", "achieved %", OUT_K_NUM, 1, NULL},
        {"rate", "rate", OUT_K_RATE, 0, s->secondary_unit},
        {"active_pct", "active %", OUT_K_NUM, 1, NULL},
        {"on_cpu_pct", "on-CPU %", OUT_K_NUM, 1, NULL},
        {"load_ns", "ns/load", OUT_K_NUM, 1, NULL},
        {"wait_pct", "wait %", OUT_K_NUM, 1, NULL},
        {"wall_s", "time s", OUT_K_NUM, 2, NULL},
    };
    json_t *pl = json_object_get(doc, "placement");
    char cpus[128] = "";
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(pl, "cpus"), i, v)
    {
        size_t l = strlen(cpus);
        snprintf(cpus + l, sizeof(cpus) - l, "%s%lld", i ? "," : "", (long long)json_integer_value(v));
    }
    printf("SoI       %s (%s, %s; %s)\n", s->ops->name, s->ops->resource, s->ops->paper, soi_kind_name(s->ops->kind));
    printf("placement %u thread(s) on CPU %s%s\n", s->env->nthreads, cpus,
           json_is_true(json_object_get(pl, "time_shared")) ? " (time-shared with the target: no other CPU "
                                                              "shares this resource)"
                                                            : "");
    char cap[40];
    if (!strcmp(s->unit, "B"))
        fmt_bytes(s->capacity, cap, sizeof(cap));
    else if (!strcmp(s->unit, "B/s"))
        fmt_rate(s->capacity, "B/s", cap, sizeof(cap));
    else
        snprintf(cap, sizeof(cap), "%.0f %s", s->capacity, s->unit);
    printf("capacity  %s = %s\n", cap, s->capacity_src);
    json_t *pc = json_object_get(doc, "pacing");
    if (json_is_object(pc)) {
        printf("pacing    duty quantum %.2f ms (%s): a sleep and wake-up cost %.1f us of CPU at start, %.1f %% of "
               "a CPU\n",
               json_real_value(json_object_get(pc, "quantum_s")) * 1e3,
               json_string_value(json_object_get(pc, "quantum_from")),
               json_real_value(json_object_get(pc, "wake_cpu_s")) * 1e6, json_real_value(json_object_get(pc, "wake_pct")));
        json_t *run = json_object_get(pc, "running_wake_cpu_s");
        double qlo = json_real_value(json_object_get(pc, "running_quantum_min_s")) * 1e3,
               qhi = json_real_value(json_object_get(pc, "running_quantum_max_s")) * 1e3;
        char q[48];
        if (qhi - qlo < 0.005)
            snprintf(q, sizeof(q), "%.2f ms", qhi);
        else
            snprintf(q, sizeof(q), "%.2f-%.2f ms", qlo, qhi);
        if (json_is_real(run))
            printf("          while running they cost %.1f us on average (the quantum follows: %s at the steps' "
                   "ends)\n", json_real_value(run) * 1e6, q);
    }
    if (*s->note)
        printf("note      %s\n", s->note);
    const char *missing = json_string_value(json_object_get(json_object_get(doc, "counters"), "missing"));
    if (missing && *missing)
        printf("counters  not used: %s\n", missing);
    printf("\n");
    out_rows(stdout, OUT_TABLE, steps, cols, IB_ARRAY_SIZE(cols));
    const struct calib *cb = s->env->calib;
    int any_load = 0;
    for (size_t st = 0; st < json_array_size(steps); st++)
        any_load |= json_is_real(json_object_get(json_array_get(steps, st), "load_ns"));
    if (any_load && *s->load_meaning)
        printf("\nns/load is %s.\n", s->load_meaning);
    else if (any_load && cb->have_caches)
        printf("\nns/load is the latency of the SoI's own dependent loads: where its footprint lives. Calibrated "
               "here:\nL1 %.1f ns, L2 %.1f ns, LLC %.1f ns, DRAM %.1f ns.\n",
               cb->plateau_ns[CALIB_L1], cb->plateau_ns[CALIB_L2], cb->plateau_ns[CALIB_LLC],
               cb->plateau_ns[CALIB_NLEVELS]);
    printf("\nwait %% is the share of the SoI's threads' runnable time spent waiting for a CPU (their run-queue "
           "delay,\nschedstat); above %.0f %% a step did not get the CPU it asked for.\n", IB_BUSY_WAIT_PCT);
    json_t *busy = json_object_get(doc, "busy");
    printf("verdict   %s: %s\n", json_string_value(json_object_get(busy, "verdict")),
           json_string_value(json_object_get(busy, "reason")));
    json_t *lin = json_object_get(doc, "linearity");
    if (json_is_object(lin))
        printf("\nlinearity R^2 %.4f, slope %.3f, intercept %.2f; worst step %.2f points from ideal, %.2f from "
               "the fit\n",
               json_real_value(json_object_get(lin, "r2")), json_real_value(json_object_get(lin, "slope")),
               json_real_value(json_object_get(lin, "intercept")),
               json_real_value(json_object_get(lin, "worst_dev_ideal")),
               json_real_value(json_object_get(lin, "worst_dev_fit")));
}

/* ---- the command ---------------------------------------------------------------------------------------- */

static int cmd_run(void *opts, int argc, char **argv, int first)
{
    struct run_opts *o = opts;
    char why[512] = "";
    int rc = run_rules(o, why, sizeof(why));
    if (rc < 0)
        return cli_fail(IB_EXIT_USAGE, "run", "%s", why);
    int code = IB_EXIT_OK;
    struct machine m = {0};
    struct ramp_sched sched = {0};
    struct soi *s = NULL;
    struct step_result *res = NULL;
    json_t *doc = NULL;
    struct soi_env env = {0};
    int cpus[SOI_MAX_THREADS];
    bool time_shared = false;

    if (o->plot && plot_check(o->plot, why, sizeof(why)) < 0) {
        code = cli_fail(IB_EXIT_USAGE, "run", "%s", why);
        goto out;
    }
    const struct soi_ops *ops = soi_find(o->soi);
    if (!ops) {
        code = cli_fail(IB_EXIT_USAGE, "run", "unknown SoI '%s' (ibench list shows them)", o->soi);
        goto out;
    }
    if ((o->dir && !(ops->io & SOI_IO_DIR)) || (o->device && !(ops->io & SOI_IO_DEVICE)) ||
        (o->target && !(ops->io & SOI_IO_TARGET))) {
        code = cli_fail(IB_EXIT_USAGE, "run", "%s takes no %s", ops->name,
                        o->dir && !(ops->io & SOI_IO_DIR) ? "--dir" : o->device && !(ops->io & SOI_IO_DEVICE) ? "--device"
                                                                                                      : "--target");
        goto out;
    }
    if (o->quantum_ns && ops->kind != SOI_DUTY) {
        code = cli_fail(IB_EXIT_USAGE, "run", "--quantum paces duty SoIs; %s is a %s SoI", ops->name,
                        soi_kind_name(ops->kind));
        goto out;
    }
    soi_env_init(&env, ops, NULL, 0, NULL, -1, NULL); /* the options, checked before anything is measured */
    for (unsigned i = 0; i < o->nparams; i++)
        if (soi_opt_set(&env, o->pname[i], o->pvalue[i], why, sizeof(why)) < 0) {
            code = cli_fail(IB_EXIT_USAGE, "run", "%s", why);
            goto out;
        }
    if ((rc = machine_open(&m, o->topology, why, sizeof(why))) < 0) {
        code = cli_fail(o->topology ? IB_EXIT_USAGE : IB_EXIT_FAIL, "run", "%s", why);
        goto out;
    }
    cli_calib_note("run", &m);
    /* placement */
    unsigned npus = topo_npus(m.topo), minth = ops->min_threads > 1 ? ops->min_threads : 1;
    unsigned n = o->have_threads ? o->threads : (o->ncpus ? o->ncpus : minth);
    if (n < minth) {
        code = cli_fail(IB_EXIT_USAGE, "run", "%s needs at least %u threads (got %u)", ops->name, minth, n);
        goto out;
    }
    char range[64];
    snprintf(range, sizeof(range), "%d-%d", topo_pu_os(m.topo, 0), topo_pu_os(m.topo, npus - 1));
    rc = 0;
    if (o->ncpus) {
        for (unsigned i = 0; i < o->ncpus; i++)
            if (!topo_cpu_exists(m.topo, o->cpus[i])) {
                code = cli_fail(IB_EXIT_USAGE, "run", "CPU %d does not exist (this machine has CPUs %s)", o->cpus[i],
                                range);
                goto out;
            }
        for (unsigned i = 0; i < n; i++)
            cpus[i] = o->cpus[i % o->ncpus];
    } else if (o->have_near) {
        if (!topo_cpu_exists(m.topo, o->near)) {
            code = cli_fail(IB_EXIT_USAGE, "run", "--near CPU %d does not exist (this machine has CPUs %s)", o->near,
                            range);
            goto out;
        }
        if (ops->placement == SOI_PLACE_SPREAD)
            rc = topo_spread(m.topo, o->near, n, cpus); /* the hub on the target, the rest as far from it as possible */
        else
            rc = topo_near(m.topo, ops->scope, o->near, n, cpus, &time_shared);
    } else if (ops->placement == SOI_PLACE_SPREAD) {
        rc = topo_spread(m.topo, -1, n, cpus);
    } else {
        for (unsigned i = 0; i < n; i++)
            cpus[i] = topo_pu_os(m.topo, npus - 1 - i % npus);
    }
    if (rc < 0) { /* cpus[] holds nothing to run on */
        code = cli_fail(IB_EXIT_FAIL, "run", "cannot place %u thread(s) of %s: %s", n, ops->name, strerror(-rc));
        goto out;
    }
    /* schedule */
    if (o->have_intensity)
        rc = ramp_hold(&sched, o->intensity, o->duration_ns);
    else if (o->ramp)
        rc = ramp_linear(&sched, o->from, o->to, o->steps, o->step_ns);
    else
        rc = ramp_list(&sched, o->levels, o->nlevels, o->step_ns);
    if (rc < 0) {
        code = cli_fail(IB_EXIT_USAGE, "run", "cannot build the schedule");
        goto out;
    }
    res = calloc(sched.n, sizeof(*res));
    if (!res) {
        code = cli_fail(IB_EXIT_FAIL, "run", "out of memory");
        goto out;
    }
    cli_signals_install();
    struct soi_env checked = env;
    soi_env_init(&env, ops, &m, n, cpus, o->have_near ? o->near : -1, &cli_stop);
    env.opts = checked.opts;
    env.cached_capacity = o->cached_capacity;
    env.dir = o->dir;
    env.device = o->device;
    env.force = o->force;
    env.target = o->target;
    env.duty_period_ns = o->quantum_ns;
    if (ops->scope == TOPO_SCOPE_LLC && !o->cached_capacity) /* a cached LLC size is checked before it is used */
        cli_calib_recheck("run", &m, cpus[0]);
    if (!m.calib.have_caches && isatty(2))
        fprintf(stderr, "ibench run: measuring this machine's capacities once (cached for later runs)...\n");
    int bad = 0;
    if ((rc = soi_open(ops, &env, &s, &bad, why, sizeof(why))) < 0) {
        code = cli_exit_for(rc, bad);
        if (code == IB_EXIT_SKIP)
            cli_fail(code, "run", "skipped: %s", why);
        else
            cli_fail(code, "run", "%s", *why ? why : strerror(-rc));
        goto out;
    }
    machine_save_calib(&m, why, sizeof(why)); /* keep what was measured, even if the run is interrupted */

    struct run_ctx ctx = {.s = s, .fmt = o->have_fmt ? o->fmt : OUT_TABLE};
    struct engine_cb cb = {.on_step = on_step, .arg = &ctx};
    unsigned ndone = 0;
    why[0] = 0;
    rc = engine_run(s, &sched, &cli_stop, &cb, res, &ndone, why, sizeof(why));
    out_progress_done();
    if (rc < 0 && rc != -EINTR) {
        code = cli_fail(IB_EXIT_FAIL, "run", "%s", why);
        goto out;
    }

    /* result document */
    doc = json_object();
    json_object_set_new(doc, "ibench", json_string(IBENCH_VERSION));
    json_object_set_new(doc, "command", json_string("run"));
    json_object_set_new(doc, "machine", json_pack("{s:s,s:s,s:i}", "fingerprint", m.fp, "cpu_model", m.cpu.model,
                                                  "pus", (int)npus));
    json_object_set_new(doc, "soi", json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", ops->name, "resource", ops->resource,
                                              "paper", ops->paper, "kind", soi_kind_name(ops->kind), "scope",
                                              topo_scope_name(ops->scope)));
    json_t *params = json_object();
    for (unsigned i = 0; i < soi_nopts(ops); i++) { /* a choice by its name, the rest as numbers */
        const struct soi_opt *so = &ops->opts[i];
        double v = soi_opt_get(&env, so);
        char t[64];
        json_object_set_new(params, so->name, so->type == SOI_O_CHOICE ? json_string(soi_opt_text(so, v, t, sizeof(t)))
                                                                       : json_real(v));
    }
    json_object_set_new(doc, "params", params);
    json_t *jc = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(jc, json_integer(cpus[i]));
    json_object_set_new(doc, "placement", json_pack("{s:o,s:i,s:o,s:b}", "cpus", jc, "threads", (int)n, "near",
                                                    o->have_near ? json_integer(o->near) : json_null(),
                                                    "time_shared", time_shared));
    json_object_set_new(doc, "capacity", json_pack("{s:f,s:s,s:s}", "value", s->capacity, "unit", s->unit,
                                                   "source", s->capacity_src));
    if (m.calib.have_caches) /* the latency plateaus to read load_ns against */
        json_object_set_new(doc, "latency_plateaus_ns",
                            json_pack("{s:f,s:f,s:f,s:f}", "l1d", m.calib.plateau_ns[CALIB_L1], "l2",
                                      m.calib.plateau_ns[CALIB_L2], "llc", m.calib.plateau_ns[CALIB_LLC], "dram",
                                      m.calib.plateau_ns[CALIB_NLEVELS]));
    if (ops->kind == SOI_DUTY && s->duty_period_ns) { /* the on/off cycle and what one wake-up costs, this host */
        json_t *pc = json_pack("{s:f,s:f,s:f,s:s}", "quantum_s", (double)s->duty_period_ns / 1e9, "wake_cpu_s",
                               (double)s->duty_wake_ns / 1e9, "wake_pct",
                               100.0 * (double)s->duty_wake_ns / (double)s->duty_period_ns, "quantum_from",
                               o->quantum_ns ? "--quantum" : "the shortest under 2 % of a CPU");
        double wsum = 0, qlo = INFINITY, qhi = 0;
        unsigned nw = 0;
        for (unsigned i = 0; i < ndone; i++)
            if (res[i].wake_ns > 0) {
                wsum += res[i].wake_ns;
                nw++;
                qlo = fmin(qlo, (double)res[i].period_ns);
                qhi = fmax(qhi, (double)res[i].period_ns);
            }
        json_object_set_new(pc, "running_wake_cpu_s", nw ? json_real(wsum / nw / 1e9) : json_null());
        json_object_set_new(pc, "running_quantum_min_s", nw ? json_real(qlo / 1e9) : json_null());
        json_object_set_new(pc, "running_quantum_max_s", nw ? json_real(qhi / 1e9) : json_null());
        json_object_set_new(doc, "pacing", pc);
    } else
        json_object_set_new(doc, "pacing", json_null());
    if (*s->note)
        json_object_set_new(doc, "note", json_string(s->note));
    if (*s->load_meaning)
        json_object_set_new(doc, "load_meaning", json_string(s->load_meaning));
    char miss[256] = "";
    struct pmu_set ps;
    pmu_open_self(&ps);
    pmu_missing(&ps, miss, sizeof(miss));
    pmu_close(&ps);
    char hwwhy[160] = "";
    json_object_set_new(doc, "counters", json_pack("{s:b,s:s}", "hardware", pmu_hw_available(hwwhy, sizeof(hwwhy)),
                                                   "missing", miss));
    json_t *steps = json_array();
    double xs[RAMP_MAX_STEPS], ys[RAMP_MAX_STEPS];
    for (unsigned i = 0; i < ndone; i++) {
        json_array_append_new(steps, step_json(s, &res[i]));
        xs[i] = res[i].requested;
        ys[i] = res[i].achieved_pct;
    }
    json_object_set_new(doc, "steps", steps);
    json_object_set_new(doc, "busy", busy_json(res, ndone));
    struct linfit lf;
    if (ndone >= 3 && linfit_compute(xs, ys, ndone, &lf) == 0)
        json_object_set_new(doc, "linearity",
                            json_pack("{s:f,s:f,s:f,s:f,s:f,s:i}", "r2", lf.r2, "slope", lf.slope, "intercept",
                                      lf.intercept, "worst_dev_ideal", lf.worst_dev_ideal, "worst_dev_fit",
                                      lf.worst_dev_fit, "n", (int)lf.n));
    else
        json_object_set_new(doc, "linearity", json_null());
    json_object_set_new(doc, "planned_steps", json_integer((json_int_t)sched.n));
    json_object_set_new(doc, "completed_steps", json_integer(ndone));
    json_object_set_new(doc, "interrupted", json_boolean(rc == -EINTR));

    if (ctx.fmt == OUT_JSON) {
        out_json(stdout, doc);
    } else if (ctx.fmt == OUT_CSV) {
        struct out_col cols[] = {
            {"step", "step", OUT_K_INT, 0, NULL},         {"requested_pct", "", OUT_K_NUM, 6, NULL},
            {"target", "", OUT_K_NUM, 6, NULL},           {"achieved", "", OUT_K_NUM, 6, NULL},
            {"unit", "", OUT_K_STR, 0, NULL},             {"achieved_pct", "", OUT_K_NUM, 6, NULL},
            {"rate", "", OUT_K_NUM, 6, NULL},             {"rate_unit", "", OUT_K_STR, 0, NULL},
            {"active_pct", "", OUT_K_NUM, 6, NULL},       {"on_cpu_pct", "", OUT_K_NUM, 6, NULL},
            {"load_ns", "", OUT_K_NUM, 6, NULL},
            {"wall_s", "", OUT_K_NUM, 6, NULL},           {"wait_pct", "", OUT_K_NUM, 6, NULL},
        };
        out_rows(stdout, OUT_CSV, steps, cols, IB_ARRAY_SIZE(cols));
    } else {
        print_table(s, doc, steps);
    }
    fflush(stdout);
    if (o->plot) {
        char pwhy[256] = "";
        if (plot_run(o->plot, doc, pwhy, sizeof(pwhy)) < 0) {
            cli_fail(IB_EXIT_FAIL, "run", "%s", pwhy);
            code = IB_EXIT_FAIL;
        } else {
            fprintf(stderr, "ibench run: chart written to %s\n", o->plot);
        }
    }
    if (rc == -EINTR)
        code = IB_EXIT_INTR;
out:
    if (s)
        soi_close(s);
    cli_signals_restore();
    if (code == IB_EXIT_INTR)
        fprintf(stderr,
                "ibench run: interrupted after %u of %zu steps; threads joined, %llu bytes of SoI memory still "
                "mapped\n",
                doc ? (unsigned)json_integer_value(json_object_get(doc, "completed_steps")) : 0, sched.n,
                (unsigned long long)ib_map_live_bytes());
    json_decref(doc);
    free(res);
    ramp_free(&sched);
    machine_close(&m);
    return code;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define RO struct run_opts
static const struct cli_opt run_opts_table[] = {
    {CLI_STR("soi", "NAME", RO, soi, "the SoI (ibench list)"), .shortopt = 's'},
    {CLI_PCT("intensity", "X", RO, intensity, 0, 100, "hold X % (0-100) for --duration"), .shortopt = 'i',
     .have = CLI_HAVE(RO, have_intensity)},
    {CLI_FLAG("ramp", RO, ramp, "ramp --from to --to in --steps steps of --step-ms"), .shortopt = 'r'},
    {CLI_PCT("from", "X", RO, from, 0, 100, "the ramp's first intensity"), .def = "0", .have = CLI_HAVE(RO, have_from)},
    {CLI_PCT("to", "X", RO, to, 0, 100, "the ramp's last intensity"), .def = "100", .have = CLI_HAVE(RO, have_to)},
    {CLI_UINT("steps", "N", RO, steps, 1, RAMP_MAX_STEPS, "the ramp's steps"), .def = "11",
     .have = CLI_HAVE(RO, have_steps)},
    {CLI_CUSTOM("levels", "LIST", RO, levels, set_levels, "run these intensities in order, e.g. 0,50,100"),
     .what = "a list of intensities 0-100", .sample = "0,100"},
    {CLI_DURATION("duration", "D", RO, duration_ns, 1, INFINITY, "hold time: seconds (1.5) or with a unit (500ms, 2s)"),
     .shortopt = 'd', .def = "2s", .have = CLI_HAVE(RO, have_duration),
     .what = "a positive duration (2, 1.5s, 500ms)"},
    {CLI_MSEC("step-ms", "D", RO, step_ns, 1, 1e15,
              "time per ramp step: milliseconds (300) or with a unit (0.5s)"),
     .def = "300", .have = CLI_HAVE(RO, have_step), .what = "a positive duration (300, 0.5s)"},
    {CLI_CPUS("cpus", "LIST", RO, cpus, ncpus,
              "run the SoI's threads on these CPUs (0-3,5); threads default to one per CPU"),
     .shortopt = 'c'},
    {CLI_INT("near", "CPU", RO, near, 0, 1 << 20,
             "place threads on CPUs that share the SoI's resource with CPU (same core,\n"
             "L2, LLC or node); without SMT a same-core SoI time-shares CPU itself"),
     .shortopt = 'n', .have = CLI_HAVE(RO, have_near), .what = "a CPU number"},
    {CLI_UINT("threads", "N", RO, threads, 1, SOI_MAX_THREADS,
              "number of SoI threads (default 1, interconnect 2, or one per --cpus entry)"),
     .shortopt = 't', .have = CLI_HAVE(RO, have_threads)},
    {CLI_CUSTOM("param", "NAME=V", RO, pbuf, set_param, "set an SoI parameter (ibench list --soi NAME shows them)"),
     .shortopt = 'P', .flags = CLI_OPT_REPEAT, .sample = "chains=4"},
    {CLI_CUSTOM("max-bytes", "SIZE", RO, pbuf, set_named_param,
                "shorthand for --param max-bytes=SIZE (K/M/G suffixes)"),
     .sample = "64M"},
    {CLI_FLAG("cached-capacity", RO, cached_capacity,
              "SoIs with a measured peak rate (bandwidth, int, fp, simd): scale against the\n"
              "cached peak instead of measuring it now")},
    {CLI_STR("dir", "DIR", RO, dir,
             "disk SoIs: make their files in a private directory inside DIR (default\n"
             "$TMPDIR or /var/tmp), removed on every exit")},
    {CLI_CUSTOM("rw", "MODE", RO, pbuf, set_named_param, "disk-bw: read (default), write or mix"), .sample = "read"},
    {CLI_CUSTOM("bs", "SIZE", RO, pbuf, set_named_param, "disk-bw: the block size (1M)"), .sample = "1M"},
    {CLI_CUSTOM("qd", "N", RO, pbuf, set_named_param, "disk SoIs: requests in flight (disk-bw 8, disk-write 32)"),
     .sample = "8"},
    {CLI_STR("device", "PATH", RO, device, "disk-bw: read a raw block device instead (reads only; with --force)")},
    {CLI_FLAG("force", RO, force, "disk-bw: yes, read the raw --device")},
    {CLI_STR("target", "ADDR:PORT",  RO, target,
             "net-bw: the ibench sink to send to (default: a sink of its own on\n"
             "127.0.0.1); numeric addresses only, nothing else is contacted")},
    {CLI_DURATION("quantum", "D", RO, quantum_ns, QUANTUM_MIN_NS, QUANTUM_MAX_NS,
                  "duty SoIs (int, fp, simd, prefetch): one on/off cycle of the pacer, e.g. 2ms\n"
                  "(default: the shortest whose sleep and wake-up cost under 2 % of a CPU,\n"
                  "measured at start; the header shows both)")},
    {CLI_FLAG("json", RO, json, "machine-readable output instead of the table: JSON")},
    {CLI_FLAG("csv", RO, csv, "machine-readable output instead of the table: CSV, a row per step")},
    {CLI_FLAG("table", RO, table, "the table (the default)")},
    {CLI_STR("plot", "FILE", RO, plot, "also draw the ramp with gnuplot (FILE ends in .png or .svg)")},
    {CLI_STR("topology", "SPEC", RO, topology, "a synthetic or XML topology instead of this machine"),
     .flags = CLI_OPT_HIDDEN},
};
#undef RO

const struct cli_cmd cli_cmd_run = {
    .name = "run",
    CLI_RUN(cmd_run, struct run_opts),
    .preset = &run_preset,
    .done = run_done,
    .summary = "run one SoI at an intensity or through a ramp, self-metered",
    .usage = "usage: ibench run --soi NAME (--intensity X | --ramp [--from X] [--to X] [--steps N] [--step-ms D]\n"
             "                  | --levels LIST [--step-ms D]) [--duration D] [--cpus LIST | --near CPU]\n"
             "                  [--threads N] [--param NAME=VALUE]... [--max-bytes SIZE] [--json | --csv]\n"
             "                  [--dir DIR] [--rw read|write|mix] [--bs SIZE] [--qd N] [--device PATH --force]\n"
             "                  [--target ADDR:PORT] [--quantum D]\n\n",
    .about = "Runs one SoI and reports, for every step, the requested intensity, the pressure achieved in the\n"
             "resource's own units, and that pressure as % of the capacity measured on this machine.\n\n",
    .more = "\nWithout --cpus/--near the SoI runs on the highest-numbered CPUs; interconnect spreads its threads\n"
            "as far apart as the machine allows (--near CPU puts its hub on CPU). Cache sizes are measured once and\n"
            "cached (ibench calibrate refreshes them); peak rates are re-measured at the start of each run,\n"
            "because they drift on shared hosts. Ctrl-C stops at once, prints the completed steps, and\n"
            "exits 130. Exit codes: 0 ok, 1 run-time failure, 2 bad input, 77 cannot run here.\n",
    CLI_OPTS(run_opts_table),
};
