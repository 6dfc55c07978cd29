/* cmd_validate.c - `ibench validate`: every SoI measured from outside, by an independent probe running where the
 * SoI catalogue says it shares the resource, and the overlap matrix (each SoI at 100 % against every probe).
 *
 * Per SoI, on the highest-numbered CPU, with peak rates measured now:
 *  1. Self-meter alone (self_ramp): does the achieved pressure track the requested intensity?
 *  2. Ramp beside the probe (beside_run): the SoI cycles through 0, 25, 50, 75, 100 % in 60 ms steps (400 ms for
 *     disk and network paths, where a probe's request can wait 100 ms behind a saturating SoI) while its probe
 *     samples back to back on a CPU that shares the resource. Per level and cycle the probe's median cost over its
 *     median cost at 0 % in the same cycle; the median of those ratios gives the degradation d(x) = 1 - 1/ratio,
 *     the share of its solo rate the probe lost (0-100 %, one scale for every probe), and their spread its
 *     standard error. Verdict: pass when d(100) exceeds twice its standard error, d fits x with R^2 >= 0.9 and
 *     never falls between levels by more than twice the standard error of the difference; otherwise FAIL with
 *     the reason; `skipped: <reason>` when this machine cannot place the probe, or when a bandwidth ramp showed
 *     no effect and a measurement right after finds the two CPUs share no bottleneck in that bandwidth.
 * Overlap: each SoI at 0/100 % against every probe, same method; d(100), its standard error, and d(100) normalised
 * by what the probe's own SoI does to it; then the catalogue's overlap claims.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beside.h"
#include "cli.h"
#include "config.h"
#include "engine.h"
#include "ib_err.h"
#include "machine.h"
#include "output.h"
#include "parse.h"
#include "plot.h"
#include "soi.h"
#include "vprobe.h"

/* The probes of the overlap matrix: those that can run on another CPU than the SoI's. */
static const char *const mprobes[] = {"pagecache", "stream-dram", "chase-dram", "chase-llc", "stream-llc",
                                      "chase-l2",  "ops-int",     "disk-rand",  "disk-seq",  "net"};
#define NMPROBES (sizeof(mprobes) / sizeof(mprobes[0]))

struct vopts {
    const char *soi;   /* NULL or "all" */
    int quick, json, overlap;
    const char *plotdir;
    const char *dir;
};

static void validate_usage(void)
{
    printf("usage: ibench validate [--soi NAME|all] [--quick] [--no-overlap] [--json] [--plot DIR] [--dir DIR]\n\n"
           "Measures every SoI from outside (docs/validation.md). For each SoI: its self-meter alone, 0-100 %%\n"
           "(does the achieved pressure track the requested intensity?); then its probe runs on a CPU that\n"
           "shares the SoI's resource while the SoI cycles through 0, 25, 50, 75 and 100 %% in 60 ms steps, in\n"
           "one process: per level the share of its solo rate the probe lost, paired with 0 %% in the same cycle,\n"
           "with its standard error over the cycles; a least-squares fit; monotonicity; and a verdict: pass,\n"
           "FAIL with the reason, or skipped with the reason (never pass) when this machine cannot place the\n"
           "probe or measures no shared bottleneck. Then the overlap matrix: every SoI at 100 %% against every\n"
           "probe that can run beside it, and the catalogue's overlap claims. --quick: fewer cycles, shorter\n"
           "I/O cells, mem-cap left out (its footprint takes seconds to grow); under 4 min here.\n"
           "--plot DIR: one chart per SoI and the overlap heat-map, PNG and SVG. --dir: where the disk SoIs and\n"
           "probes make their files (default $TMPDIR or /var/tmp).\n"
           "Exit 0 when no verdict is FAIL, 1 otherwise, 2 on bad input, 130 on Ctrl-C.\n");
}

/* least squares of y on x (linfit_compute), R^2 */
static void fit(const double *x, const double *y, unsigned n, double *slope, double *icpt, double *r2)
{
    struct linfit lf = {0};
    linfit_compute(x, y, n, &lf);
    *slope = lf.slope;
    *icpt = lf.intercept;
    *r2 = lf.r2;
}

struct ctx {
    struct machine m;
    int soi_cpu, other_cpu;
    const struct vopts *o;
    struct vprobe probes[NMPROBES];
    int probe_ok[NMPROBES];
    char probe_why[NMPROBES][160];
};

static int probe_index(const char *name)
{
    for (unsigned i = 0; i < NMPROBES; i++)
        if (!strcmp(mprobes[i], name))
            return (int)i;
    return -1;
}

/* The probe, initialised once (its data is built on first use and kept until the end). */
static struct vprobe *get_probe(struct ctx *c, const char *name, char *why, size_t len)
{
    int i = probe_index(name);
    if (i < 0) {
        ib_why(why, len, -ENOENT, "no probe %s", name);
        return NULL;
    }
    if (c->probe_ok[i] == 0) {
        int rc = vprobe_init(&c->probes[i], name, &c->m.calib, &c->m.mlim, c->o->dir, NULL, c->other_cpu, c->probe_why[i],
                             sizeof(c->probe_why[i]));
        c->probe_ok[i] = rc < 0 ? -1 : 1;
    }
    if (c->probe_ok[i] < 0) {
        snprintf(why, len, "%s", c->probe_why[i]);
        return NULL;
    }
    return &c->probes[i];
}

/* Open an SoI for validation on soi_cpu, with settings that keep it quick and safe. fresh: measure peak rates now
 * (the ramps, whose self-meter is judged against them) rather than take the cached ones (the overlap matrix). */
static int open_soi(struct ctx *c, const struct soi_ops *ops, int fresh, int *cpus, struct soi **s,
                    struct soi_env *env, char *why, size_t len)
{
    unsigned n = ops->min_threads > 1 ? ops->min_threads : 1;
    if (ops->placement == SOI_PLACE_SPREAD)
        topo_spread(c->m.topo, c->soi_cpu, n, cpus);
    else
        for (unsigned i = 0; i < n; i++)
            cpus[i] = c->soi_cpu;
    *env = (struct soi_env){.topo = c->m.topo, .cpu = &c->m.cpu, .calib = &c->m.calib, .mlim = &c->m.mlim,
                            .nthreads = n, .cpus = cpus, .target_cpu = c->other_cpu, .stop = &cli_stop,
                            .cached_capacity = !fresh, .dir = c->o->dir};
    soi_param_defaults(ops, env->param);
    int k;
    if ((k = soi_param_index(ops, "file-size")) >= 0)
        env->param[k] = 256.0 * IB_MIB;
    if (!strcmp(ops->name, "disk-cap") && (k = soi_param_index(ops, "max-bytes")) >= 0)
        env->param[k] = 2.0 * IB_GIB;
    return soi_open(ops, env, s, why, len);
}

/* Where the probe for this SoI must run; -1 with why when this machine has no such CPU. */
static int probe_cpu_for(struct ctx *c, const struct soi_ops *ops, const struct vprobe_map *vm, char *why, size_t len)
{
    if (!vm || !vm->probe) {
        if (!strcmp(ops->name, "interconnect"))
            return topo_npus(c->m.topo) >= 4 ? -2 : (ib_why(why, len, -ENOTSUP, "needs 4 CPUs (2 for the SoI, 2 for a "
                                                           "ping-pong probe); this machine has %u",
                                                           topo_npus(c->m.topo)), -1);
        ib_why(why, len, -ENOTSUP, "no independent probe for %s yet (docs/validation.md)", ops->name);
        return -1;
    }
    if (!strcmp(ops->name, "net-bw") && topo_npus(c->m.topo) < 4) {
        ib_why(why, len, -ENOTSUP, "with %u CPUs, net-bw, its sink, the probe and the probe's sink all share them: "
               "the probe measures CPU sharing and vCPU wake-ups, not the path (it ran faster beside net-bw here); "
               "needs 4 CPUs", topo_npus(c->m.topo));
        return -1;
    }
    if (vm->where == TOPO_SCOPE_MACHINE)
        return c->other_cpu >= 0 ? c->other_cpu : c->soi_cpu;
    int *set = NULL;
    unsigned n = 0, i;
    topo_sharing(c->m.topo, vm->where, c->soi_cpu, &set, &n);
    int cpu = -1;
    for (i = 0; i < n && cpu < 0; i++)
        if (set[i] != c->soi_cpu)
            cpu = set[i];
    free(set);
    if (cpu < 0) {
        ib_why(why, len, -ENOTSUP, "the %s probe must share the %s with CPU %d, and no other CPU does here%s",
               vm->probe, topo_scope_name(vm->where), c->soi_cpu,
               vm->where == TOPO_SCOPE_CORE ? " (no SMT): on the same CPU the two would only time-share it" : "");
        return -1;
    }
    return cpu;
}

/* A level's degradation from its paired ratio r (cost at the level over cost at 0 % in the same cycle, beside.h):
 * d = 1 - 1/r, the share of its solo rate the probe lost (0-100 %; a starved probe is 100 %), and its standard
 * error (propagated: se(r) / r^2). */
static void deg_of(const struct beside_level *bl, double *d, double *se)
{
    if (isinf(bl->ratio) || isinf(bl->median)) {
        *d = 100;
        *se = 0;
    } else if (bl->ratio > 0 && isfinite(bl->ratio)) {
        *d = (1 - 1 / bl->ratio) * 100;
        *se = bl->ratio_se / (bl->ratio * bl->ratio) * 100;
    } else {
        *d = 0;
        *se = 0;
    }
}

/* How far a degradation may fall from one level to the next and still count as monotone: twice the standard error
 * of the difference, and half a point. */
static double mono_tol(double se_a, double se_b)
{
    return 2 * sqrt(se_a * se_a + se_b * se_b) + 0.5;
}

/* The SoI alone, before its probe joins: does its self-meter track the requested intensity?
 *
 * Footprint SoIs climb 0..100 % and come back down: two readings per level. Rate and duty SoIs (CPU and I/O rates,
 * which this shared host moves by tens of % within a second) visit every level between two 100 % windows
 * (100, 0, 100, 25, 100, 50, 100, 75, 100, twice), so the capacity of the moment is known next to every reading.
 * Readings are achieved % of the capacity measured when the SoI opened. A paced level (25-75 %) must read x: a
 * rate SoI is paced to x % of that capacity. A duty SoI (int, fp, simd: active x % of the time, at whatever rate
 * the core gives) must read x % of what its neighbouring 100 % windows did. A reading whose neighbouring 100 % windows fell below x + 5 % could not
 * reach its target (the host took the capacity away) and is left out; a level left with no reading makes the
 * verdict "undecidable". 100 % is unpaced: what it reads is how far the capacity moved since the SoI opened
 * (calib_pct, calib_range_pct), reported, not judged. Noise: the largest gap between a level's two readings.
 * Verdict: pass when every paced level is within 5 points + the noise of x and the fit has R^2 >= 0.98 (over the
 * five levels; for a rate SoI over 0-75 %, since its 100 % is unpaced). When a level's readings disagree by more
 * than 5 points, R^2 measures the host more than the SoI: it is reported, and the tracking bound decides. */
#define SELF_LEVELS 5
static json_t *self_ramp(struct ctx *c, struct soi *s, const struct soi_ops *ops, int *failed)
{
    static const double lv[SELF_LEVELS] = {0, 25, 50, 75, 100};
    const int ref = ops->kind != SOI_FOOTPRINT, duty = ops->kind == SOI_DUTY;
    const int io = ops->io != 0;
    const uint64_t step = (io ? 200 : c->o->quick ? 80 : 150) * IB_NS_PER_MS;
    double xs[2 * 9];
    unsigned n = 0;
    for (unsigned cy = 0; cy < 2; cy++) {
        if (ref) {
            for (unsigned i = 0; i < SELF_LEVELS - 1; i++) {
                xs[n++] = 100;
                xs[n++] = lv[i];
            }
            xs[n++] = 100;
        } else {
            for (unsigned i = 0; i < SELF_LEVELS; i++)
                xs[n++] = cy ? lv[SELF_LEVELS - 1 - i] : lv[i];
        }
    }
    struct ramp_sched sc = {0, NULL};
    struct step_result res[2 * 9];
    unsigned nd = 0;
    char why[256] = "";
    json_t *o = json_pack("{s:s,s:f}", "method", duty  ? "levels between 100 % windows, as % of them"
                                                 : ref ? "levels between 100 % windows"
                                                       : "climb and descend",
                          "step_ms", (double)step / IB_NS_PER_MS);
    int rc = ramp_list(&sc, xs, n, step);
    if (rc == 0) {
        out_progress("validate", "%s: self-meter ramp, alone", ops->name);
        rc = engine_run(s, &sc, &cli_stop, NULL, res, &nd, why, sizeof(why));
    }
    ramp_free(&sc);
    if (rc < 0 || nd != n) {
        json_object_set_new(o, "verdict", json_string(rc == -EINTR ? "interrupted" : "FAIL"));
        json_object_set_new(o, "reason", json_string(why[0] ? why : strerror(rc < 0 ? -rc : EIO)));
        *failed |= rc != -EINTR;
        return o;
    }
    double rd[SELF_LEVELS][4], lo100 = INFINITY, hi100 = 0, sum100 = 0;
    unsigned k[SELF_LEVELS] = {0}, n100 = 0, limited = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned l = (unsigned)(xs[i] / 25);
        double v = res[i].achieved_pct;
        if (xs[i] == 100) {
            lo100 = fmin(lo100, v);
            hi100 = fmax(hi100, v);
            sum100 += v;
            n100++;
            if (duty)
                continue;
        } else if (duty && xs[i] > 0) { /* active x % of the time: x % of what 100 % did next to it */
            double m = 0.5 * (res[i - 1].achieved_pct + res[i + 1].achieved_pct);
            v = m > 0 ? 100 * v / m : 0;
        } else if (ref && xs[i] > 0 && 0.5 * (res[i - 1].achieved_pct + res[i + 1].achieved_pct) < xs[i] + 5) {
            limited++; /* the capacity of the moment was below the target */
            continue;
        }
        if (k[l] < 4)
            rd[l][k[l]++] = v;
    }
    double x[SELF_LEVELS], y[SELF_LEVELS], noise = 0, worst = 0;
    int missing = 0;
    json_t *lvj = json_array();
    for (unsigned l = 0; l < SELF_LEVELS; l++) {
        x[l] = lv[l];
        y[l] = 0;
        for (unsigned j = 0; j < k[l]; j++)
            y[l] += rd[l][j] / k[l];
        if (l < SELF_LEVELS - 1 && k[l] >= 2)
            noise = fmax(noise, fabs(rd[l][0] - rd[l][1]));
        if (l > 0 && l < SELF_LEVELS - 1)
            worst = fmax(worst, fabs(y[l] - x[l]));
        missing |= k[l] == 0 && l < SELF_LEVELS - 1; /* 100 % has its own windows */
        /* a level left with no reading has no figure (null), not 0 */
        json_array_append_new(lvj, json_pack("{s:f,s:o,s:i}", "level", lv[l], "achieved_pct",
                                             k[l] || l == SELF_LEVELS - 1 ? json_real(y[l]) : json_null(), "readings",
                                             (int)k[l]));
    }
    double calib = n100 ? sum100 / n100 : 0;
    y[SELF_LEVELS - 1] = duty ? 100 : calib; /* every 100 % window (a duty SoI's own reference) */
    json_object_set_new(json_array_get(lvj, SELF_LEVELS - 1), "achieved_pct", json_real(y[SELF_LEVELS - 1]));
    json_object_set_new(json_array_get(lvj, SELF_LEVELS - 1), "readings", json_integer(n100));
    /* a rate SoI's 100 % is unpaced (where the host's capacity is now): the fit is over the levels it paces */
    const unsigned nfit = ref && !duty ? SELF_LEVELS - 1 : SELF_LEVELS;
    struct linfit lf = {0};
    linfit_compute(x, y, nfit, &lf);
    json_object_set_new(o, "fit_levels", json_integer(nfit));
    json_object_set_new(o, "levels", lvj);
    json_object_set_new(o, "slope", json_real(lf.slope));
    json_object_set_new(o, "r2", json_real(lf.r2));
    json_object_set_new(o, "worst_pts", json_real(worst));
    json_object_set_new(o, "noise_pts", json_real(noise));
    json_object_set_new(o, "capacity_limited", json_integer(limited));
    json_object_set_new(o, "calib_pct", json_real(calib));
    json_object_set_new(o, "calib_range_pct", json_pack("[f,f]", lo100, hi100));
    char reason[320];
    const char *v;
    if (missing) {
        v = "undecidable";
        snprintf(reason, sizeof(reason), "the host took the capacity below the targets: 100 %% windows read %.0f-%.0f "
                 "%% of the calibration, %u readings could not reach theirs", lo100, hi100, limited);
    } else if ((lf.r2 < 0.98 && noise <= 5) || worst > 5 + noise) {
        v = "FAIL";
        snprintf(reason, sizeof(reason), "a paced level is %.1f points from x, R^2 %.3f (bar: <= %.1f, R^2 >= 0.98)",
                 worst, lf.r2, 5 + noise);
        *failed = 1;
    } else {
        v = "pass";
        snprintf(reason, sizeof(reason), "paced levels within %.1f points of x (noise %.1f), R^2 %.4f; 100 %% read "
                 "%.0f-%.0f %% of the calibration", worst, noise, lf.r2, lo100, hi100);
    }
    json_object_set_new(o, "verdict", json_string(v));
    json_object_set_new(o, "reason", json_string(reason));
    return o;
}

/* Is this bandwidth a shared bottleneck of the two CPUs at all? Both streaming at once against one alone, measured
 * now, back to back. 1 with why filled when two CPUs get at least 90 % of twice one (nothing for a probe to feel),
 * 0 when they do not, -1 when it could not be measured. The host moves this within minutes (the same two vCPUs
 * measured 75 % and 96 % here), so it only explains a ramp that showed no effect; it never replaces one. */
static int bw_unshared(struct ctx *c, const char *kind, int pcpu, char *why, size_t len)
{
    int one[1] = {c->soi_cpu}, two[2] = {pcpu, c->soi_cpu};
    double b1 = 0, b2 = 0;
    char w[256];
    out_progress("validate", "is %s bandwidth shared by CPUs %d and %d?", kind, pcpu, c->soi_cpu);
    if (calib_measure_bw(&c->m.calib, c->m.topo, &c->m.mlim, kind, one, 1, &cli_stop, &b1, w, sizeof(w)) < 0 ||
        calib_measure_bw(&c->m.calib, c->m.topo, &c->m.mlim, kind, two, 2, &cli_stop, &b2, w, sizeof(w)) < 0 || b1 <= 0)
        return -1;
    snprintf(why, len, "%s bandwidth is no shared bottleneck of CPUs %d and %d now: both at once stream %.1f GB/s, "
             "%.0f %% of twice one (%.1f GB/s)", kind, pcpu, c->soi_cpu, b2 / 1e9, 100 * b2 / (2 * b1), b1 / 1e9);
    return b2 >= 0.9 * 2 * b1;
}

static json_t *ramp_one(struct ctx *c, const struct soi_ops *ops, int *failed)
{
    const struct vopts *o = c->o;
    const struct vprobe_map *vm = vprobe_map_of(ops->name);
    json_t *r = json_pack("{s:s,s:s}", "soi", ops->name, "resource", ops->resource);
    char why[512] = "";
    static const double levels[] = {0, 25, 50, 75, 100};
    const unsigned nl = 5;
    const int io = ops->io != 0;
    const unsigned cycles = io ? (o->quick ? 4 : 8) : (o->quick ? 8 : 16);
    /* I/O paths need longer steps: a probe's request waits behind the SoI's queue for tens of ms */
    const uint64_t step = (io ? 400 : 60) * IB_NS_PER_MS, settle = (io ? 20 : 8) * IB_NS_PER_MS;
    if (o->quick && !strcmp(ops->name, "mem-cap")) {
        json_object_set_new(r, "verdict", json_string("skipped"));
        json_object_set_new(r, "reason", json_string("--quick: mem-cap's footprint (all the memory the machine can "
                                                     "spare) takes seconds to grow and shrink at every step"));
        return r;
    }
    int pcpu = probe_cpu_for(c, ops, vm, why, sizeof(why));
    int cpus[SOI_MAX_THREADS];
    struct soi_env env;
    struct soi *s = NULL;
    out_progress("validate", "%s: opening", ops->name);
    int rc = open_soi(c, ops, 1, cpus, &s, &env, why[0] && pcpu < 0 ? why + strlen(why) : why,
                      why[0] && pcpu < 0 ? sizeof(why) - strlen(why) : sizeof(why));
    if (rc < 0) {
        json_object_set_new(r, "verdict", json_string(rc == -EINTR ? "interrupted" : "skipped"));
        json_object_set_new(r, "reason", json_string(why));
        return r;
    }
    json_object_set_new(r, "soi_cpus", json_pack("[i]", cpus[0]));
    json_object_set_new(r, "capacity", json_pack("{s:f,s:s,s:s}", "value", s->capacity, "unit", s->unit, "source",
                                                 s->capacity_src));
    json_t *lv = json_array();
    double x[5], d[5], a[5];
    json_object_set_new(r, "self", self_ramp(c, s, ops, failed));
    if (pcpu < 0) { /* no probe here: the self-meter ramp alone, then the reason */
        json_object_set_new(r, "verdict", json_string(atomic_load(&cli_stop) ? "interrupted" : "skipped"));
        json_object_set_new(r, "reason", json_string(why));
        json_decref(lv);
        soi_close(s);
        return r;
    }
    char pwhy[256] = "";
    struct vprobe *p = get_probe(c, vm->probe, pwhy, sizeof(pwhy));
    if (!p) {
        json_object_set_new(r, "verdict", json_string("skipped"));
        json_object_set_new(r, "reason", json_string(pwhy));
        json_decref(lv);
        soi_close(s);
        return r;
    }
    struct beside_result br;
    out_progress("validate", "%s: ramp beside the %s probe on CPU %d", ops->name, p->name, pcpu);
    rc = beside_run(s, levels, nl, cycles, step, settle, pcpu, &p->bp, &cli_stop, &br, why, sizeof(why));
    soi_close(s);
    if (rc < 0) {
        json_object_set_new(r, "verdict", json_string(rc == -EINTR ? "interrupted" : "FAIL"));
        json_object_set_new(r, "reason", json_string(why));
        json_decref(lv);
        *failed |= rc != -EINTR;
        return r;
    }
    double se[5];
    for (unsigned i = 0; i < nl; i++) {
        x[i] = levels[i];
        deg_of(&br.lv[i], &d[i], &se[i]);
        a[i] = br.lv[i].achieved_pct;
        json_array_append_new(lv, json_pack("{s:f,s:f,s:f,s:f,s:f,s:i,s:i}", "level", levels[i], "achieved_pct", a[i],
                                            "probe_cost", br.lv[i].median, "degradation_pct", d[i],
                                            "degradation_se_pct", se[i], "samples", (int)br.lv[i].nsamples,
                                            "cycles", (int)br.lv[i].ncycles));
    }
    json_object_set_new(r, "levels", lv);
    double sl, ic, r2, asl, aic, ar2;
    fit(x, d, nl, &sl, &ic, &r2);
    fit(x, a, nl, &asl, &aic, &ar2);
    double noise = br.noise * 100;
    int mono = 1;
    for (unsigned i = 1; i < nl; i++)
        if (d[i] < d[i - 1] - mono_tol(se[i], se[i - 1]))
            mono = 0;
    json_object_set_new(r, "probe", json_pack("{s:s,s:s,s:s,s:i}", "name", p->name, "unit", p->unit, "what", p->what,
                                              "cpu", pcpu));
    json_object_set_new(r, "fit", json_pack("{s:f,s:f,s:f}", "slope_pct_per_pct", sl, "intercept_pct", ic, "r2", r2));
    /* the same against the pressure the SoI achieved beside the probe: where the two contend for one bandwidth, the
     * SoI falls short of its targets at the top (contention is mutual), and d follows what it achieved */
    double psl, pic, pr2;
    fit(a, d, nl, &psl, &pic, &pr2);
    json_object_set_new(r, "fit_vs_achieved", json_pack("{s:f,s:f,s:f}", "slope_pct_per_pct", psl, "intercept_pct",
                                                        pic, "r2", pr2));
    json_object_set_new(r, "self_meter_beside", json_pack("{s:f,s:f}", "slope", asl, "r2", ar2));
    json_object_set_new(r, "noise_pct", json_real(noise));
    json_object_set_new(r, "monotone", json_boolean(mono));
    char reason[400];
    const char *v;
    /* contention is mutual: did the probe slow the SoI down at 100 %? (its self-meter beside the probe against
     * alone, moments before) */
    double alone = json_number_value(json_object_get(json_object_get(r, "self"), "calib_pct"));
    json_object_set_new(r, "soi_at_100_pct", json_pack("{s:f,s:f}", "alone", alone, "beside", a[nl - 1]));
    char bwhy[256] = "";
    if ((d[nl - 1] <= 2 * se[nl - 1] || d[nl - 1] < 1.0) && vm->bwkind &&
        bw_unshared(c, vm->bwkind, pcpu, bwhy, sizeof(bwhy)) == 1) {
        v = "skipped";
        snprintf(reason, sizeof(reason), "no effect (%.1f +- %.1f %% at 100 %%), and no shared bottleneck to feel: %s",
                 d[nl - 1], se[nl - 1], bwhy);
    } else if (d[nl - 1] <= 2 * se[nl - 1] || d[nl - 1] < 1.0) {
        v = "FAIL";
        snprintf(reason, sizeof(reason), "no effect beyond the noise: %.1f +- %.1f %% at 100 %%%s", d[nl - 1],
                 se[nl - 1], alone > 0 && a[nl - 1] >= 0.95 * alone && ops->kind != SOI_FOOTPRINT
                     ? "; the probe did not slow the SoI either (100 % read as much beside it as alone): they "
                       "shared no bottleneck during this ramp"
                     : "");
    } else if (r2 < 0.9) {
        v = "FAIL";
        snprintf(reason, sizeof(reason), "degradation not linear in x: R^2 %.3f", r2);
    } else if (!mono) {
        v = "FAIL";
        snprintf(reason, sizeof(reason), "degradation falls between levels by more than twice their standard error");
    } else {
        v = "pass";
        snprintf(reason, sizeof(reason), "+%.1f +- %.1f %% at 100 %%, R^2 %.3f, monotone within the noise", d[nl - 1],
                 se[nl - 1], r2);
    }
    *failed |= !strcmp(v, "FAIL");
    json_object_set_new(r, "verdict", json_string(v));
    json_object_set_new(r, "reason", json_string(reason));
    return r;
}

static json_t *row_of(json_t *rows, const char *soi)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
        if (!strcmp(json_string_value(json_object_get(row, "soi")), soi))
            return row;
    return NULL;
}

static json_t *cell_of(json_t *rows, const char *soi, const char *probe)
{
    return json_object_get(json_object_get(row_of(rows, soi), "cells"), probe);
}

/* A cell's degradation (*ok: whether it has one) and its standard error. */
static double cell_d(json_t *rows, const char *soi, const char *probe, int *ok)
{
    json_t *v = json_object_get(cell_of(rows, soi, probe), "degradation_pct");
    *ok = json_is_number(v);
    return *ok ? json_number_value(v) : 0;
}

static double cell_se(json_t *rows, const char *soi, const char *probe)
{
    return json_number_value(json_object_get(cell_of(rows, soi, probe), "se_pct"));
}

/* Measure the cell again (a check failed on it): the first figures are kept in the cell as "first_*". */
/* One overlap cell: the SoI at 0/100 % beside the probe (the matrix's method). 0, or -errno with why. */
static int measure_cell(struct ctx *c, struct soi *s, const struct soi_ops *ops, const char *probe, json_t *cells,
                        char *why, size_t len)
{
    char pwhy[256] = "";
    struct vprobe *p = get_probe(c, probe, pwhy, sizeof(pwhy));
    if (!p)
        return ib_why(why, len, -ENOTSUP, "%s", pwhy);
    static const double levels[] = {0, 100};
    const unsigned cycles = c->o->quick ? 4 : 8;
    /* I/O cells need longer steps (a probe's request waits behind the SoI's queue); --quick halves them: the
     * matrix is 17 x 10 cells, a third of them I/O */
    const int io = ops->io != 0 || !strncmp(probe, "disk", 4) || !strcmp(probe, "net");
    const uint64_t step = (io ? (c->o->quick ? 200 : 400) : 60) * IB_NS_PER_MS;
    struct beside_result br;
    out_progress("validate", "overlap: %s at 100 %% against %s", ops->name, probe);
    int rc = beside_run(s, levels, 2, cycles, step, (io ? 20 : 8) * IB_NS_PER_MS, c->other_cpu, &p->bp, &cli_stop,
                        &br, why, len);
    if (rc < 0)
        return rc;
    double d, se;
    deg_of(&br.lv[1], &d, &se);
    json_object_set_new(cells, probe, json_pack("{s:f,s:f,s:f}", "degradation_pct", d, "se_pct", se, "noise_pct",
                                                br.noise * 100));
    return 0;
}

static json_t *overlap(struct ctx *c, json_t *sois_done)
{
    const struct vopts *o = c->o;
    json_t *rows = json_array();
    for (unsigned i = 0; i < soi_count() && !atomic_load(&cli_stop); i++) {
        const struct soi_ops *ops = soi_at(i);
        if (o->soi && strcmp(o->soi, "all") && strcmp(o->soi, ops->name))
            continue;
        json_t *row = json_pack("{s:s}", "soi", ops->name);
        json_array_append_new(rows, row);
        if (o->quick && !strcmp(ops->name, "mem-cap")) {
            json_object_set_new(row, "skipped", json_string("--quick: mem-cap's footprint takes seconds to grow"));
            continue;
        }
        int cpus[SOI_MAX_THREADS];
        struct soi_env env;
        struct soi *s = NULL;
        char why[512] = "";
        if (open_soi(c, ops, 0, cpus, &s, &env, why, sizeof(why)) < 0) {
            json_object_set_new(row, "skipped", json_string(why));
            continue;
        }
        json_t *cells = json_object();
        json_object_set_new(row, "cells", cells);
        for (unsigned k = 0; k < NMPROBES && !atomic_load(&cli_stop); k++) {
            int pcpu = c->other_cpu;
            int used = 0;
            for (unsigned t = 0; t < env.nthreads; t++)
                used |= cpus[t] == pcpu;
            if (pcpu < 0 || used) {
                json_object_set_new(cells, mprobes[k], json_pack("{s:s}", "skipped", "the SoI uses every CPU"));
                continue;
            }
            if (measure_cell(c, s, ops, mprobes[k], cells, why, sizeof(why)) < 0)
                json_object_set_new(cells, mprobes[k], json_pack("{s:s}", "skipped", why));
        }
        soi_close(s);
    }
    (void)sois_done;
    /* normalise each probe column by what the probe's own SoI does to it */
    for (unsigned k = 0; k < NMPROBES; k++) {
        const char *own = NULL;
        for (size_t m = 0; m < vprobe_nmaps && !own; m++)
            if (vprobe_maps[m].probe && !strcmp(vprobe_maps[m].probe, mprobes[k]))
                own = vprobe_maps[m].soi;
        int ok;
        double od = own ? cell_d(rows, own, mprobes[k], &ok) : 0;
        if (!own || !ok || od <= 0.5)
            continue;
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row)
        {
            double d = cell_d(rows, json_string_value(json_object_get(row, "soi")), mprobes[k], &ok);
            if (ok)
                json_object_set_new(cell_of(rows, json_string_value(json_object_get(row, "soi")), mprobes[k]),
                                    "normalised", json_real(d / od));
        }
    }
    return rows;
}

static void remeasure_cell(struct ctx *c, json_t *rows, const char *soi, const char *probe)
{
    json_t *cells = json_object_get(row_of(rows, soi), "cells"), *old = json_object_get(cells, probe);
    const struct soi_ops *ops = soi_find(soi);
    if (!old || !ops || json_object_get(old, "first_degradation_pct"))
        return;
    json_t *d0 = json_incref(json_object_get(old, "degradation_pct")), *se0 = json_incref(json_object_get(old, "se_pct"));
    int cpus[SOI_MAX_THREADS];
    struct soi_env env;
    struct soi *s = NULL;
    char why[512] = "";
    if (open_soi(c, ops, 0, cpus, &s, &env, why, sizeof(why)) == 0) {
        if (measure_cell(c, s, ops, probe, cells, why, sizeof(why)) == 0) { /* replaced the cell */
            json_t *now = json_object_get(cells, probe);
            json_object_set(now, "first_degradation_pct", d0);
            json_object_set(now, "first_se_pct", se0);
        }
        soi_close(s);
    }
    json_decref(d0);
    json_decref(se0);
}

/* "; SOI x PROBE first read D %" appended to msg when that cell was measured twice. */
static void note_first(json_t *rows, const char *soi, const char *probe, char *msg, size_t size)
{
    json_t *f = json_object_get(cell_of(rows, soi, probe), "first_degradation_pct");
    if (json_is_number(f))
        snprintf(msg + strlen(msg), size - strlen(msg), "; %s x %s first read %+.1f %%", soi, probe,
                 json_number_value(f));
}

/* The catalogue's overlap claims on the matrix. Each check is pass, FAIL, or undecidable when the effect it
 * compares against did not show in this run (the host had the two vCPUs share no memory path or L3 then). A cell
 * that fails a check is measured once more, and the check is judged on the second figure (both are printed): the
 * host changes how the vCPUs share a core's neighbourhood within seconds, and a claim should fail on what repeats. */
static int eval_checks(json_t *rows, json_t *out, const char **bad, unsigned *nbad)
{
    int failed = 0, ok1, ok2;
    char msg[320];
    *nbad = 0;
    double cap = cell_d(rows, "mem-bw", "pagecache", &ok1), bw = cell_d(rows, "mem-bw", "stream-dram", &ok2);
    if (ok1 && ok2) {
        double bse = cell_se(rows, "mem-bw", "stream-dram");
        const char *v = bw <= 2 * bse + 1 ? "undecidable" : cap < 0.5 * bw ? "pass" : "FAIL";
        snprintf(msg, sizeof(msg), "mem-bw at 100 %%: memory-capacity probe %+.1f %% vs bandwidth probe %+.1f +- %.1f "
                 "%% (must be under half)%s", cap, bw, bse,
                 *v == 'u' ? ": the bandwidth probe was not hurt in this run" : "");
        note_first(rows, "mem-bw", "stream-dram", msg, sizeof(msg));
        json_array_append_new(out, json_pack("{s:s,s:s}", "check", msg, "verdict", v));
        if (*v == 'F' || *v == 'u') {
            bad[(*nbad)++] = "mem-bw";
            bad[(*nbad)++] = "stream-dram";
        }
        failed |= *v == 'F';
    }
    double ch = cell_d(rows, "llc-cap", "chase-llc", &ok1), st = cell_d(rows, "llc-cap", "stream-dram", &ok2);
    if (ok1 && ok2) {
        double cse = cell_se(rows, "llc-cap", "chase-llc");
        const char *v = ch <= 2 * cse + 1 && st <= 2 * cell_se(rows, "llc-cap", "stream-dram") + 1 ? "undecidable"
                        : ch > st                                                                  ? "pass"
                                                                                                   : "FAIL";
        snprintf(msg, sizeof(msg), "llc-cap at 100 %%: half-LLC chase %+.1f +- %.1f %% vs streaming-bandwidth probe "
                 "%+.1f %% (must be larger)%s", ch, cse, st,
                 *v == 'u' ? ": neither probe was hurt in this run" : "");
        note_first(rows, "llc-cap", "chase-llc", msg, sizeof(msg));
        json_array_append_new(out, json_pack("{s:s,s:s}", "check", msg, "verdict", v));
        if (*v == 'F' || *v == 'u') {
            bad[(*nbad)++] = "llc-cap";
            bad[(*nbad)++] = "chase-llc";
            bad[(*nbad)++] = "llc-cap";
            bad[(*nbad)++] = "stream-dram";
        }
        failed |= *v == 'F';
    }
    static const char *const comp[] = {"int", "fp", "simd"};
    static const char *const cache[] = {"chase-llc", "stream-llc", "chase-l2"};
    for (int a = 0; a < 3; a++) {
        double worst = 0, wse = 0;
        int any = 0, pass = 1;
        const char *wp = NULL;
        for (int b = 0; b < 3; b++) {
            int ok;
            double v = cell_d(rows, comp[a], cache[b], &ok), se = cell_se(rows, comp[a], cache[b]);
            if (!ok)
                continue;
            any = 1;
            if (fabs(v) >= 5.0 + 2 * se) {
                pass = 0;
                bad[(*nbad)++] = comp[a];
                bad[(*nbad)++] = cache[b];
            }
            if (fabs(v) > fabs(worst)) {
                worst = v;
                wse = se;
                wp = cache[b];
            }
        }
        if (!any)
            continue;
        snprintf(msg, sizeof(msg), "%s at 100 %%: cache probes move at most %+.1f +- %.1f %% (%s; bar: under 5 %% + "
                 "twice the standard error)", comp[a], worst, wse, wp ? wp : "-");
        for (int b = 0; b < 3; b++)
            note_first(rows, comp[a], cache[b], msg, sizeof(msg));
        json_array_append_new(out, json_pack("{s:s,s:s}", "check", msg, "verdict", pass ? "pass" : "FAIL"));
        failed |= !pass;
    }
    return failed;
}

static json_t *overlap_checks(struct ctx *c, json_t *rows, int *failed)
{
    const char *bad[32];
    unsigned nbad = 0;
    json_t *out = json_array();
    eval_checks(rows, out, bad, &nbad);
    if (nbad && !atomic_load(&cli_stop)) { /* confirm on a second measurement */
        for (unsigned i = 0; i + 1 < nbad && !atomic_load(&cli_stop); i += 2)
            remeasure_cell(c, rows, bad[i], bad[i + 1]);
        json_array_clear(out);
        eval_checks(rows, out, bad, &nbad);
    }
    size_t i;
    json_t *ch;
    json_array_foreach(out, i, ch)
        *failed |= !strcmp(json_string_value(json_object_get(ch, "verdict")), "FAIL");
    return out;
}

static void print_table(json_t *doc)
{
    json_t *sois = json_object_get(doc, "sois");
    size_t i;
    json_t *r;
    printf("self-meter, each SoI alone (achieved %% at each requested level)\n");
    printf("%-12s %-6s %7s %7s %7s %7s %7s %7s %6s %6s %7s  %s\n", "SoI", "method", "a@0%", "a@25%", "a@50%", "a@75%",
           "a@100%", "R2", "worst", "noise", "calib", "verdict");
    json_array_foreach(sois, i, r)
    {
        json_t *sf = json_object_get(r, "self");
        if (!sf)
            continue;
        json_t *lv = json_object_get(sf, "levels");
        printf("%-12s %-6s", json_string_value(json_object_get(r, "soi")),
               strstr(json_string_value(json_object_get(sf, "method")), "as % of") ? "duty"
               : strstr(json_string_value(json_object_get(sf, "method")), "between") ? "ref"
                                                                                     : "climb");
        for (unsigned k = 0; k < 5; k++) {
            json_t *a = json_object_get(json_array_get(lv, k), "achieved_pct");
            if (json_is_number(a))
                printf(" %7.1f", json_number_value(a));
            else
                printf(" %7s", "-");
        }
        if (json_is_number(json_object_get(sf, "r2")))
            printf(" %7.4f %6.1f %6.1f %6.0f%%", json_number_value(json_object_get(sf, "r2")),
                   json_number_value(json_object_get(sf, "worst_pts")),
                   json_number_value(json_object_get(sf, "noise_pts")),
                   json_number_value(json_object_get(sf, "calib_pct")));
        else
            printf(" %7s %6s %6s %7s", "-", "-", "-", "-");
        printf("  %s: %s\n", json_string_value(json_object_get(sf, "verdict")),
               json_string_value(json_object_get(sf, "reason")));
    }
    printf("\nmethod: climb = 0..100 %% and back; ref = every level between two 100 %% windows (the host moves CPU\n"
           "and I/O rates within a second); duty = the same, each level as %% of its neighbouring 100 %% windows\n"
           "(the SoI is active x %% of the time). a@x: achieved %% of the capacity measured when the SoI opened.\n"
           "worst: the paced level (25-75 %%) furthest from x, points; noise: the largest gap between a level's\n"
           "readings; calib: what 100 %% read against the capacity measured when the SoI opened.\n\n");
    printf("%-12s %-11s %9s %9s %9s %9s %7s %7s %7s %7s %6s  %s\n", "SoI", "probe", "d@25%", "d@50%", "d@75%",
           "d@100%", "se@100", "noise", "R2", "R2(a)", "self", "verdict");
    json_array_foreach(sois, i, r)
    {
        const char *v = json_string_value(json_object_get(r, "verdict"));
        json_t *lv = json_object_get(r, "levels");
        json_t *pr = json_object_get(r, "probe");
        json_t *sm = json_object_get(r, "self_meter_beside");
        printf("%-12s %-11s", json_string_value(json_object_get(r, "soi")),
               pr ? json_string_value(json_object_get(pr, "name")) : "-");
        for (int k = 1; k <= 4; k++) {
            json_t *d = json_object_get(json_array_get(lv, (size_t)k), "degradation_pct");
            if (json_is_number(d))
                printf(" %+8.1f%%", json_number_value(d));
            else
                printf(" %9s", "-");
        }
        json_t *nz = json_object_get(r, "noise_pct"), *fr = json_object_get(json_object_get(r, "fit"), "r2");
        json_t *se = json_object_get(json_array_get(lv, 4), "degradation_se_pct");
        if (json_is_number(se) && json_is_number(nz))
            printf(" %6.1f%% %6.1f%%", json_number_value(se), json_number_value(nz));
        else
            printf(" %7s %7s", "-", "-");
        json_t *fa = json_object_get(json_object_get(r, "fit_vs_achieved"), "r2");
        if (json_is_number(fr) && json_is_number(fa))
            printf(" %7.3f %7.3f", json_number_value(fr), json_number_value(fa));
        else
            printf(" %7s %7s", "-", "-");
        if (sm)
            printf(" %6.3f", json_number_value(json_object_get(sm, "r2")));
        else
            printf(" %6s", "-");
        printf("  %s: %s\n", v, json_string_value(json_object_get(r, "reason")));
    }
    printf("\nd@x: the share of its solo rate the probe lost at x %% (from its cost at x %% over its cost at 0 %% in the\n"
           "same cycle, median over cycles); se@100: standard error of d@100 over the cycles; noise: the solo\n"
           "probe's even/odd-cycle difference; R2: the degradation's fit against x; R2(a): against the pressure\n"
           "the SoI achieved beside the probe (the verdict uses R2); self: R2 of the SoI's\n"
           "self-meter over the same steps, beside the probe (a bandwidth probe competes for the resource).\n");
    json_t *ov = json_object_get(doc, "overlap");
    if (json_array_size(ov)) {
        printf("\noverlap: probe degradation (%%) with each SoI at 100 %% on CPU %d, probe on CPU %d\n",
               (int)json_integer_value(json_object_get(doc, "soi_cpu")),
               (int)json_integer_value(json_object_get(doc, "probe_cpu")));
        printf("%-12s", "SoI");
        for (unsigned k = 0; k < NMPROBES; k++)
            printf(" %11s", mprobes[k]);
        printf("\n");
        json_array_foreach(ov, i, r)
        {
            printf("%-12s", json_string_value(json_object_get(r, "soi")));
            json_t *cells = json_object_get(r, "cells");
            if (!cells) {
                printf(" skipped: %s\n", json_string_value(json_object_get(r, "skipped")));
                continue;
            }
            for (unsigned k = 0; k < NMPROBES; k++) {
                json_t *d = json_object_get(json_object_get(cells, mprobes[k]), "degradation_pct");
                if (json_is_number(d))
                    printf(" %+10.1f%%", json_number_value(d));
                else
                    printf(" %11s", "-");
            }
            printf("\n");
        }
        json_t *ch = json_object_get(doc, "overlap_checks");
        json_array_foreach(ch, i, r)
            printf("%s -> %s\n", json_string_value(json_object_get(r, "check")),
                   json_string_value(json_object_get(r, "verdict")));
    }
}

int cmd_validate(int argc, char **argv)
{
    static const struct option lo[] = {{"soi", required_argument, 0, 's'},  {"quick", no_argument, 0, 'q'},
                                       {"json", no_argument, 0, 'j'},       {"plot", required_argument, 0, 'p'},
                                       {"no-overlap", no_argument, 0, 'n'}, {"dir", required_argument, 0, 'd'},
                                       {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
    struct vopts o = {.overlap = 1};
    int c2;
    optind = 0;
    opterr = 0;
    while ((c2 = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c2) {
        case 's': o.soi = optarg; break;
        case 'q': o.quick = 1; break;
        case 'j': o.json = 1; break;
        case 'p': o.plotdir = optarg; break;
        case 'n': o.overlap = 0; break;
        case 'd': o.dir = optarg; break;
        case 'h': validate_usage(); return IB_EXIT_OK;
        default: return cli_fail(IB_EXIT_USAGE, "validate", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_fail(IB_EXIT_USAGE, "validate", "unexpected argument '%s'", argv[optind]);
    if (o.soi && strcmp(o.soi, "all") && !soi_find(o.soi))
        return cli_fail(IB_EXIT_USAGE, "validate", "unknown SoI '%s' (ibench list shows them)", o.soi);
    if (o.plotdir) {
        struct stat st;
        if (stat(o.plotdir, &st) != 0 || !S_ISDIR(st.st_mode) || access(o.plotdir, W_OK) != 0)
            return cli_fail(IB_EXIT_USAGE, "validate", "--plot %s is not a writable directory", o.plotdir);
        char why[256];
        char probe[4200];
        snprintf(probe, sizeof(probe), "%s/check.png", o.plotdir);
        if (plot_check(probe, why, sizeof(why)) < 0)
            return cli_fail(IB_EXIT_USAGE, "validate", "%s", why);
    }
    struct ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return cli_fail(IB_EXIT_FAIL, "validate", "out of memory");
    c->o = &o;
    char why[512] = "";
    if (machine_open(&c->m, NULL, why, sizeof(why)) < 0) {
        free(c);
        return cli_fail(IB_EXIT_FAIL, "validate", "%s", why);
    }
    unsigned npus = topo_npus(c->m.topo);
    c->soi_cpu = topo_pu_os(c->m.topo, npus - 1);
    c->other_cpu = npus > 1 ? topo_pu_os(c->m.topo, 0) : -1;
    cli_signals_install();
    if (!c->m.calib.have_caches) {
        out_progress("validate", "measuring this machine's caches once");
        calib_measure_caches(&c->m.calib, c->m.topo, c->soi_cpu, &cli_stop, NULL, NULL, why, sizeof(why));
    }
    int failed = 0;
    json_t *doc = json_pack("{s:s,s:s,s:b,s:i,s:i}", "ibench", IBENCH_VERSION, "validate", "v1", "quick", o.quick,
                            "soi_cpu", c->soi_cpu, "probe_cpu", c->other_cpu);
    json_t *sois = json_array();
    json_object_set_new(doc, "sois", sois);
    for (unsigned i = 0; i < soi_count() && !atomic_load(&cli_stop); i++) {
        const struct soi_ops *ops = soi_at(i);
        if (o.soi && strcmp(o.soi, "all") && strcmp(o.soi, ops->name))
            continue;
        json_array_append_new(sois, ramp_one(c, ops, &failed));
    }
    if (o.overlap && !atomic_load(&cli_stop)) {
        json_t *ov = overlap(c, sois);
        json_object_set_new(doc, "overlap", ov);
        json_object_set_new(doc, "overlap_checks", overlap_checks(c, ov, &failed));
    }
    out_progress_done();
    int intr = atomic_load(&cli_stop);
    for (unsigned k = 0; k < NMPROBES; k++)
        if (c->probe_ok[k] > 0)
            vprobe_fini(&c->probes[k]);
    machine_save_calib(&c->m, why, sizeof(why));
    if (o.plotdir && !intr) {
        size_t i;
        json_t *r;
        json_array_foreach(sois, i, r)
        {
            if (!json_object_get(r, "probe"))
                continue;
            for (int svg = 0; svg < 2; svg++) {
                char path[4200];
                snprintf(path, sizeof(path), "%s/%s.%s", o.plotdir, json_string_value(json_object_get(r, "soi")),
                         svg ? "svg" : "png");
                if (plot_validate_ramp(path, r, why, sizeof(why)) < 0)
                    fprintf(stderr, "ibench validate: warning: %s\n", why);
            }
        }
        for (int svg = 0; svg < 2 && json_object_get(doc, "overlap"); svg++) {
            char path[4200];
            snprintf(path, sizeof(path), "%s/overlap.%s", o.plotdir, svg ? "svg" : "png");
            if (plot_heatmap(path, json_object_get(doc, "overlap"), mprobes, NMPROBES, why, sizeof(why)) < 0)
                fprintf(stderr, "ibench validate: warning: %s\n", why);
        }
        fprintf(stderr, "ibench validate: charts written to %s\n", o.plotdir);
    }
    if (o.json)
        out_json(stdout, doc);
    else
        print_table(doc);
    json_decref(doc);
    cli_signals_restore();
    machine_close(&c->m);
    free(c);
    if (intr)
        return IB_EXIT_INTR;
    return failed ? IB_EXIT_FAIL : IB_EXIT_OK;
}
