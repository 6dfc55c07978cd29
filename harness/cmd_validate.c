/* cmd_validate.c - `ibench validate`: every SoI measured from outside, by an independent probe running where the
 * SoI catalogue says it shares the resource, and the overlap matrix (each SoI at 100 % against every probe).
 *
 * Ramp: the SoI runs through the engine on the highest-numbered CPU, cycling through 0, 25, 50, 75, 100 % in
 * 60 ms steps (400 ms for disk and network paths, where a probe's request can wait 100 ms behind a saturating SoI),
 * while its probe samples back to back on a CPU that shares the resource (beside_run). Per level the probe's median
 * cost gives the degradation d(x) = 1 - cost(0) / cost(x): the share of its solo performance the probe lost
 * (0-100 %, the same scale for every probe); noise is the solo level's even/odd-cycle difference. Verdict: pass when d fits x with R^2 >= 0.9, rises monotonically within the noise, and d(100) is above
 * twice the noise; otherwise FAIL with the reason; `skipped: <reason>` when this machine cannot place the probe.
 * Overlap: each SoI at 0/100 % against every probe, same method; the degradation at 100 %, and normalised by what
 * the probe's own SoI does to it.
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

/* Which probe checks which SoI, and what the probe must share with the SoI (SOIS.md, "independent probe"). */
struct vmap {
    const char *soi;
    const char *probe; /* NULL: no probe yet */
    enum topo_scope where;
};
static const struct vmap vmaps[] = {
    {"mem-cap", "pagecache", TOPO_SCOPE_NUMA},   {"mem-bw", "stream-dram", TOPO_SCOPE_NUMA},
    {"llc-cap", "chase-llc", TOPO_SCOPE_LLC},    {"llc-bw", "stream-llc", TOPO_SCOPE_LLC},
    {"l2-cap", "chase-l2", TOPO_SCOPE_L2},       {"l2-bw", "chase-l2", TOPO_SCOPE_L2},
    {"l1d", "chase-l1", TOPO_SCOPE_CORE},        {"tlb", "tlb", TOPO_SCOPE_CORE},
    {"int", "ops-int", TOPO_SCOPE_CORE},         {"fp", NULL, TOPO_SCOPE_CORE},
    {"simd", NULL, TOPO_SCOPE_CORE},             {"l1i", NULL, TOPO_SCOPE_CORE},
    {"prefetch", "stream-llc", TOPO_SCOPE_CORE}, {"interconnect", NULL, TOPO_SCOPE_MACHINE},
    {"disk-cap", "disk-rand", TOPO_SCOPE_MACHINE}, {"disk-bw", "disk-seq", TOPO_SCOPE_MACHINE},
    {"net-bw", "net", TOPO_SCOPE_MACHINE},
};
/* The probes of the overlap matrix: those that can run on another CPU than the SoI's. */
static const char *const mprobes[] = {"pagecache", "stream-dram", "chase-dram", "chase-llc", "stream-llc",
                                      "chase-l2",  "ops-int",     "disk-rand",  "disk-seq",  "net"};
#define NMPROBES (sizeof(mprobes) / sizeof(mprobes[0]))

static const struct vmap *vmap_of(const char *soi)
{
    for (size_t i = 0; i < sizeof(vmaps) / sizeof(vmaps[0]); i++)
        if (!strcmp(vmaps[i].soi, soi))
            return &vmaps[i];
    return NULL;
}

struct vopts {
    const char *soi;   /* NULL or "all" */
    int quick, json, overlap;
    const char *plotdir;
    const char *dir;
};

static void validate_usage(void)
{
    printf("usage: ibench validate [--soi NAME|all] [--quick] [--no-overlap] [--json] [--plot DIR] [--dir DIR]\n\n"
           "Measures every SoI from outside. For each SoI, its probe (docs/validation.md) runs on a CPU that shares\n"
           "the SoI's resource while the SoI cycles through 0, 25, 50, 75 and 100 %% in 60 ms steps, in one\n"
           "process; per level the probe's degradation against 0 %%, a least-squares fit, monotonicity, the\n"
           "noise of the solo probe, and a verdict: pass, FAIL with the reason, or skipped with the reason\n"
           "(never pass) when this machine cannot place the probe. Then the overlap matrix: every SoI at 100 %%\n"
           "against every probe that can run beside it. --quick: fewer cycles, mem-cap left out (its footprint\n"
           "takes seconds to grow); about 3 min here. --plot DIR: one chart per SoI and the overlap heat-map\n"
           "(PNG). --dir: where the disk SoIs and probes make their files (default $TMPDIR or /var/tmp).\n"
           "Exit 0 when no verdict is FAIL, 1 otherwise, 2 on bad input, 130 on Ctrl-C.\n");
}

/* least squares of y on x; r2 */
static void fit(const double *x, const double *y, unsigned n, double *slope, double *icpt, double *r2)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
    for (unsigned i = 0; i < n; i++) {
        mx += x[i] / n;
        my += y[i] / n;
    }
    for (unsigned i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    *slope = sxx > 0 ? sxy / sxx : 0;
    *icpt = my - *slope * mx;
    double ssr = 0;
    for (unsigned i = 0; i < n; i++) {
        double e = y[i] - (*icpt + *slope * x[i]);
        ssr += e * e;
    }
    *r2 = syy > 0 ? 1 - ssr / syy : 0;
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
        int rc = vprobe_init(&c->probes[i], name, &c->m.calib, c->o->dir, NULL, c->other_cpu, c->probe_why[i],
                             sizeof(c->probe_why[i]));
        c->probe_ok[i] = rc < 0 ? -1 : 1;
    }
    if (c->probe_ok[i] < 0) {
        snprintf(why, len, "%s", c->probe_why[i]);
        return NULL;
    }
    return &c->probes[i];
}

/* Open an SoI for validation on soi_cpu, with settings that keep it quick and safe. */
static int open_soi(struct ctx *c, const struct soi_ops *ops, int *cpus, struct soi **s, struct soi_env *env,
                    char *why, size_t len)
{
    unsigned n = ops->min_threads > 1 ? ops->min_threads : 1;
    if (ops->placement == SOI_PLACE_SPREAD)
        topo_spread(c->m.topo, c->soi_cpu, n, cpus);
    else
        for (unsigned i = 0; i < n; i++)
            cpus[i] = c->soi_cpu;
    *env = (struct soi_env){.topo = c->m.topo, .cpu = &c->m.cpu, .calib = &c->m.calib, .mlim = &c->m.mlim,
                            .nthreads = n, .cpus = cpus, .target_cpu = c->other_cpu, .stop = &cli_stop,
                            .cached_capacity = 1, .dir = c->o->dir};
    soi_param_defaults(ops, env->param);
    int k;
    if ((k = soi_param_index(ops, "file-size")) >= 0)
        env->param[k] = 256.0 * IB_MIB;
    if (!strcmp(ops->name, "disk-cap") && (k = soi_param_index(ops, "max-bytes")) >= 0)
        env->param[k] = 2.0 * IB_GIB;
    return soi_open(ops, env, s, why, len);
}

/* Where the probe for this SoI must run; -1 with why when this machine has no such CPU. */
static int probe_cpu_for(struct ctx *c, const struct soi_ops *ops, const struct vmap *vm, char *why, size_t len)
{
    if (!vm || !vm->probe) {
        if (!strcmp(ops->name, "interconnect"))
            return topo_npus(c->m.topo) >= 4 ? -2 : (ib_why(why, len, -ENOTSUP, "needs 4 CPUs (2 for the SoI, 2 for a "
                                                           "ping-pong probe); this machine has %u",
                                                           topo_npus(c->m.topo)), -1);
        ib_why(why, len, -ENOTSUP, "no independent probe for %s yet (docs/validation.md)", ops->name);
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
    if (cpu < 0)
        ib_why(why, len, -ENOTSUP, "the %s probe must share the %s with CPU %d, and no other CPU does here%s",
               vm->probe, topo_scope_name(vm->where), c->soi_cpu,
               vm->where == TOPO_SCOPE_CORE ? " (no SMT): on the same CPU the two would only time-share it" : "");
    return cpu;
}

static json_t *ramp_one(struct ctx *c, const struct soi_ops *ops, int *failed)
{
    const struct vopts *o = c->o;
    const struct vmap *vm = vmap_of(ops->name);
    json_t *r = json_pack("{s:s,s:s}", "soi", ops->name, "resource", ops->resource);
    char why[512] = "";
    static const double levels[] = {0, 25, 50, 75, 100};
    const unsigned nl = 5, cycles = o->quick ? 4 : 8;
    /* I/O paths need longer steps: a probe's request waits behind the SoI's queue for tens of ms */
    const int io = ops->io != 0;
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
    int rc = open_soi(c, ops, cpus, &s, &env, why[0] && pcpu < 0 ? why + strlen(why) : why,
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
    if (pcpu < 0) { /* no probe here: the self-meter ramp alone, then the reason */
        char ywhy[512];
        snprintf(ywhy, sizeof(ywhy), "%s", why);
        double xs[5];
        memcpy(xs, levels, sizeof(xs));
        struct ramp_sched sc = {0, NULL};
        struct step_result res[5];
        unsigned nd = 0;
        ramp_list(&sc, xs, nl, 2 * step);
        out_progress("validate", "%s: self-meter ramp (no probe: %s)", ops->name, "skipped");
        rc = engine_run(s, &sc, &cli_stop, NULL, res, &nd, why, sizeof(why));
        ramp_free(&sc);
        for (unsigned i = 0; i < nd; i++) {
            x[i] = levels[i];
            a[i] = res[i].achieved_pct;
            json_array_append_new(lv, json_pack("{s:f,s:f}", "level", levels[i], "achieved_pct", a[i]));
        }
        json_object_set_new(r, "levels", lv);
        if (nd == nl) {
            double sl, ic, r2;
            fit(x, a, nl, &sl, &ic, &r2);
            json_object_set_new(r, "self_meter", json_pack("{s:f,s:f}", "slope", sl, "r2", r2));
        }
        json_object_set_new(r, "verdict", json_string(rc == -EINTR ? "interrupted" : "skipped"));
        json_object_set_new(r, "reason", json_string(ywhy));
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
    double base = br.lv[0].median;
    for (unsigned i = 0; i < nl; i++) {
        x[i] = levels[i];
        d[i] = br.lv[i].median > 0 ? (1 - base / br.lv[i].median) * 100 : 0; /* share of its solo rate it lost */
        a[i] = br.lv[i].achieved_pct;
        json_array_append_new(lv, json_pack("{s:f,s:f,s:f,s:f,s:i}", "level", levels[i], "achieved_pct", a[i],
                                            "probe_cost", br.lv[i].median, "degradation_pct", d[i], "samples",
                                            (int)br.lv[i].nsamples));
    }
    json_object_set_new(r, "levels", lv);
    double sl, ic, r2, asl, aic, ar2;
    fit(x, d, nl, &sl, &ic, &r2);
    fit(x, a, nl, &asl, &aic, &ar2);
    double noise = br.noise * 100;
    int mono = 1;
    for (unsigned i = 1; i < nl; i++)
        if (d[i] < d[i - 1] - noise - 0.5)
            mono = 0;
    json_object_set_new(r, "probe", json_pack("{s:s,s:s,s:s,s:i}", "name", p->name, "unit", p->unit, "what", p->what,
                                              "cpu", pcpu));
    json_object_set_new(r, "fit", json_pack("{s:f,s:f,s:f}", "slope_pct_per_pct", sl, "intercept_pct", ic, "r2", r2));
    json_object_set_new(r, "self_meter", json_pack("{s:f,s:f}", "slope", asl, "r2", ar2));
    json_object_set_new(r, "noise_pct", json_real(noise));
    json_object_set_new(r, "monotone", json_boolean(mono));
    char reason[256];
    const char *v;
    if (d[nl - 1] <= 2 * noise || d[nl - 1] < 1.0) {
        v = "FAIL";
        snprintf(reason, sizeof(reason), "no effect beyond the noise: %.1f %% at 100 %% (noise %.1f %%)", d[nl - 1],
                 noise);
    } else if (r2 < 0.9) {
        v = "FAIL";
        snprintf(reason, sizeof(reason), "degradation not linear in x: R^2 %.3f", r2);
    } else if (!mono) {
        v = "FAIL";
        snprintf(reason, sizeof(reason), "degradation falls between levels by more than the noise (%.1f %%)", noise);
    } else {
        v = "pass";
        snprintf(reason, sizeof(reason), "+%.1f %% at 100 %%, R^2 %.3f, monotone within %.1f %% noise", d[nl - 1], r2,
                 noise);
    }
    *failed |= !strcmp(v, "FAIL");
    json_object_set_new(r, "verdict", json_string(v));
    json_object_set_new(r, "reason", json_string(reason));
    return r;
}

static json_t *overlap(struct ctx *c, json_t *sois_done)
{
    const struct vopts *o = c->o;
    json_t *rows = json_array();
    static const double levels[] = {0, 100};
    const unsigned cycles = o->quick ? 4 : 8;
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
        if (open_soi(c, ops, cpus, &s, &env, why, sizeof(why)) < 0) {
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
            char pwhy[256] = "";
            struct vprobe *p = get_probe(c, mprobes[k], pwhy, sizeof(pwhy));
            if (!p) {
                json_object_set_new(cells, mprobes[k], json_pack("{s:s}", "skipped", pwhy));
                continue;
            }
            out_progress("validate", "overlap: %s at 100 %% against %s", ops->name, mprobes[k]);
            struct beside_result br;
            const int io = ops->io != 0 || !strncmp(mprobes[k], "disk", 4) || !strcmp(mprobes[k], "net");
            int rc = beside_run(s, levels, 2, cycles, (io ? 400 : 60) * IB_NS_PER_MS, (io ? 20 : 8) * IB_NS_PER_MS,
                                pcpu, &p->bp, &cli_stop, &br, why, sizeof(why));
            if (rc < 0) {
                json_object_set_new(cells, mprobes[k], json_pack("{s:s}", "skipped", why));
                continue;
            }
            double d = br.lv[1].median > 0 ? (1 - br.lv[0].median / br.lv[1].median) * 100 : 0;
            json_object_set_new(cells, mprobes[k], json_pack("{s:f,s:f}", "degradation_pct", d, "noise_pct",
                                                             br.noise * 100));
        }
        soi_close(s);
    }
    (void)sois_done;
    /* normalise each probe column by what the probe's own SoI does to it */
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        json_t *cells = json_object_get(row, "cells");
        if (!cells)
            continue;
        for (unsigned k = 0; k < NMPROBES; k++) {
            const char *own = NULL;
            for (size_t m = 0; m < sizeof(vmaps) / sizeof(vmaps[0]); m++)
                if (vmaps[m].probe && !strcmp(vmaps[m].probe, mprobes[k]) && !own)
                    own = vmaps[m].soi;
            json_t *cell = json_object_get(cells, mprobes[k]);
            if (!own || !json_is_number(json_object_get(cell, "degradation_pct")))
                continue;
            size_t j;
            json_t *r2;
            json_array_foreach(rows, j, r2)
            {
                if (strcmp(json_string_value(json_object_get(r2, "soi")), own))
                    continue;
                json_t *oc = json_object_get(json_object_get(r2, "cells"), mprobes[k]);
                double od = json_number_value(json_object_get(oc, "degradation_pct"));
                if (json_is_number(json_object_get(oc, "degradation_pct")) && od > 0.5)
                    json_object_set_new(cell, "normalised",
                                        json_real(json_number_value(json_object_get(cell, "degradation_pct")) / od));
            }
        }
    }
    return rows;
}

static double cell_d(json_t *rows, const char *soi, const char *probe, int *ok)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "soi")), soi))
            continue;
        json_t *v = json_object_get(json_object_get(json_object_get(row, "cells"), probe), "degradation_pct");
        if (json_is_number(v)) {
            *ok = 1;
            return json_number_value(v);
        }
    }
    *ok = 0;
    return 0;
}

/* The catalogue's overlap claims, checked on the matrix. */
static json_t *overlap_checks(json_t *rows, int *failed)
{
    json_t *out = json_array();
    int ok1, ok2;
    char msg[256];
    double cap = cell_d(rows, "mem-bw", "pagecache", &ok1), bw = cell_d(rows, "mem-bw", "stream-dram", &ok2);
    if (ok1 && ok2) {
        int pass = cap < 0.5 * bw;
        snprintf(msg, sizeof(msg), "mem-bw at 100 %%: memory-capacity probe %+.1f %% vs bandwidth probe %+.1f %% "
                 "(must be under half)", cap, bw);
        json_array_append_new(out, json_pack("{s:s,s:s}", "check", msg, "verdict", pass ? "pass" : "FAIL"));
        *failed |= !pass;
    }
    double ch = cell_d(rows, "llc-cap", "chase-llc", &ok1), st = cell_d(rows, "llc-cap", "stream-dram", &ok2);
    if (ok1 && ok2) {
        int pass = ch > st;
        snprintf(msg, sizeof(msg), "llc-cap at 100 %%: half-LLC chase %+.1f %% vs streaming-bandwidth probe %+.1f %% "
                 "(must be larger)", ch, st);
        json_array_append_new(out, json_pack("{s:s,s:s}", "check", msg, "verdict", pass ? "pass" : "FAIL"));
        *failed |= !pass;
    }
    static const char *const comp[] = {"int", "fp", "simd"};
    static const char *const cache[] = {"chase-llc", "stream-llc", "chase-l2"};
    for (int a = 0; a < 3; a++) {
        double worst = 0;
        int any = 0;
        for (int b = 0; b < 3; b++) {
            int ok;
            double v = cell_d(rows, comp[a], cache[b], &ok);
            if (ok) {
                any = 1;
                worst = fabs(v) > fabs(worst) ? v : worst;
            }
        }
        if (!any)
            continue;
        int pass = fabs(worst) < 5.0;
        snprintf(msg, sizeof(msg), "%s at 100 %%: cache probes move at most %+.1f %% (bar: under 5 %%)", comp[a],
                 worst);
        json_array_append_new(out, json_pack("{s:s,s:s}", "check", msg, "verdict", pass ? "pass" : "FAIL"));
        *failed |= !pass;
    }
    return out;
}

static void print_table(json_t *doc)
{
    json_t *sois = json_object_get(doc, "sois");
    size_t i;
    json_t *r;
    printf("%-12s %-11s %9s %9s %9s %9s %9s %7s %6s  %s\n", "SoI", "probe", "d@25%", "d@50%", "d@75%", "d@100%",
           "noise", "R2", "self", "verdict");
    json_array_foreach(sois, i, r)
    {
        const char *v = json_string_value(json_object_get(r, "verdict"));
        json_t *lv = json_object_get(r, "levels");
        json_t *pr = json_object_get(r, "probe");
        json_t *sm = json_object_get(r, "self_meter");
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
        if (json_is_number(nz))
            printf(" %8.1f%%", json_number_value(nz));
        else
            printf(" %9s", "-");
        if (json_is_number(fr))
            printf(" %7.3f", json_number_value(fr));
        else
            printf(" %7s", "-");
        if (sm)
            printf(" %6.3f", json_number_value(json_object_get(sm, "r2")));
        else
            printf(" %6s", "-");
        printf("  %s: %s\n", v, json_string_value(json_object_get(r, "reason")));
    }
    printf("\nd@x: the probe's cost at x %% against 0 %% (its degradation); noise: the solo probe's even/odd-cycle\n"
           "difference; R2: the degradation's fit against x; self: R2 of the SoI's self-meter over the same steps.\n");
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
        json_object_set_new(doc, "overlap_checks", overlap_checks(ov, &failed));
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
            char path[4200];
            snprintf(path, sizeof(path), "%s/%s.png", o.plotdir, json_string_value(json_object_get(r, "soi")));
            if (plot_validate_ramp(path, r, why, sizeof(why)) < 0)
                fprintf(stderr, "ibench validate: warning: %s\n", why);
        }
        if (json_object_get(doc, "overlap")) {
            char path[4200];
            snprintf(path, sizeof(path), "%s/overlap.png", o.plotdir);
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
