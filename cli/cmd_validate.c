/* cmd_validate.c - `ibench validate`: arguments, then the validation library's structs (validation/validate.h)
 * rendered as a table, as JSON (--json) and as charts (--plot). The method is docs/validation.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "config.h"
#include "ib_err.h"
#include "junit.h"
#include "output.h"
#include "parse.h"
#include "plot.h"
#include "validate.h"

static void validate_about(FILE *f)
{
    fprintf(f,
            "Measures every SoI from outside (docs/validation.md): its self-meter alone, 0-100 %%; then its probe on\n"
            "a CPU that shares the SoI's resource while the SoI cycles through 0, 25, 50, 75 and 100 %%: per level\n"
            "the share of its solo rate the probe lost, with its standard error over the cycles, a fit, monotonicity\n"
            "and a verdict (pass, FAIL or skipped, with the reason). Steps start at 60 ms (400 ms for I/O); while\n"
            "the effect is within the noise the ramp looks longer (4x longer steps up to ~1 s, then more cycles)\n"
            "within --budget S seconds per SoI (default 100; --quick: the first round only), and says how long it\n"
            "looked. Then the overlap matrix (every SoI at 100 %% against every probe) and the catalogue's claims.\n"
            "--quick: fewer cycles, 200 ms I/O steps, mem-cap left out, and only the overlap rows the claims read,\n"
            "on their side of the CPU / I/O divide. --plot DIR: charts (PNG, SVG). --dir: where disk\n"
            "SoIs and probes make their files (default $TMPDIR or /var/tmp).\n"
            "A verdict is BUSY, not pass or FAIL, when the SoI's threads waited more than %.0f %% of their runnable\n"
            "time for a CPU (their run-queue delay; the wait column): the machine, not the SoI, decided the figures.\n\n",
            IB_BUSY_WAIT_PCT);
}

/* a number, or null when there is none (jansson takes no NAN or infinity) */
static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Did the SoI get its CPU? (validate.h, busy rule): the figures behind a BUSY verdict, and what the readings alone
 * said. busy_steps < 0: not counted. */
static json_t *busy_json(double all, double worst, double worst_level, int busy_steps, const struct ib_pressure *p,
                         enum val_verdict measured, double per_run_us)
{
    const int judged = val_busy_judged(per_run_us);
    json_t *o = json_pack("{s:f,s:o,s:o,s:o,s:o,s:o,s:s}", "bound_pct", IB_BUSY_WAIT_PCT, "wait_pct", num(all),
                          "worst_step_wait_pct", num(worst), "worst_step_level", num(worst_level), "psi_cpu_some_pct",
                          num(p->some_pct[IB_PSI_CPU]), "steal_pct", num(p->steal_pct), "measured_verdict",
                          val_verdict_name(measured));
    if (busy_steps >= 0)
        json_object_set_new(o, "busy_steps", json_integer(busy_steps));
    json_object_set_new(o, "wait_per_run_us", num(per_run_us));
    json_object_set_new(o, "judged", json_boolean(judged)); /* false: waits of wake-ups, reported only */
    return o;
}

static json_t *self_json(const struct val_self *s, const struct soi_ops *ops)
{
    json_t *o = json_pack("{s:s,s:f}", "method", s->method, "step_ms", s->step_ms);
    if (s->judged) {
        json_t *lv = json_array();
        for (unsigned l = 0; l < VAL_LEVELS; l++)
            json_array_append_new(lv, json_pack("{s:f,s:o,s:i,s:o,s:o}", "level", s->level[l], "achieved_pct",
                                                num(s->achieved[l]), "readings", (int)s->readings[l], "on_cpu_pct",
                                                num(s->on_cpu[l]), "work_per_cpu_pct", num(s->work_cpu[l])));
        json_object_set_new(o, "fit_levels", json_integer(s->fit_levels));
        for (unsigned l = 0; l < VAL_LEVELS; l++)
            json_object_set_new(json_array_get(lv, l), "wait_pct", num(s->wait[l]));
        json_object_set_new(o, "levels", lv);
        json_object_update_new(o, json_pack("{s:f,s:f,s:f,s:f,s:i,s:f,s:[o,o]}", "slope", s->slope, "r2", s->r2,
                                            "worst_pts", s->worst_pts, "noise_pts", s->noise_pts, "capacity_limited",
                                            (int)s->capacity_limited, "calib_pct", s->calib_pct, "calib_range_pct",
                                            num(s->calib_lo), num(s->calib_hi)));
    }
    if (s->judged)
        json_object_set_new(o, "busy", busy_json(s->wait_pct, s->wait_worst_pct, s->wait_worst_level, s->busy_steps,
                                                 &s->machine, s->measured, s->wait_run_us));
    json_object_update_new(o, json_pack("{s:s,s:s}", "verdict", val_verdict_name(s->verdict), "reason", s->reason));
    return o;
}

static json_t *meter_json(const struct val_soi *v)
{
    const struct val_xcheck *x = &v->meter;
    json_t *o = json_pack("{s:s,s:s,s:s}", "kind", val_xmeter_kind_text(v->meter_kind), "verdict",
                          val_verdict_name(x->verdict), "reason", x->reason);
    if (!x->ran)
        return o;
    json_t *lv = json_array();
    for (unsigned l = 0; l < VAL_XLEVELS; l++)
        json_array_append_new(lv, json_pack("{s:f,s:o,s:o,s:i}", "level", x->level[l], "pct", num(x->pct[l]),
                                            "value", num(x->value[l]), "readings", (int)x->readings[l]));
    json_object_update_new(o, json_pack("{s:s,s:s,s:b,s:o,s:o,s:i,s:o,s:o,s:o,s:o,s:o,s:i,s:s}", "what", x->what,
                                        "unit", x->unit, "rate", x->rate, "levels", lv, "background",
                                        num(x->background), "fit_levels", (int)x->fit_levels, "slope", num(x->slope),
                                        "r2", num(x->r2), "worst_pts", num(x->worst_pts), "noise_pts",
                                        num(x->noise_pts), "of_self_meter", num(x->self_ratio), "capacity_limited",
                                        (int)x->capacity_limited, "measured_verdict", val_verdict_name(x->measured)));
    return o;
}

/* The SoI's checks, one element each, for a CI system (JUnit: one test case per SoI and check). */
static json_t *checks_json(const struct val_soi *v)
{
    json_t *a = json_array();
    if (v->self.ran)
        json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "check", "self-meter", "verdict",
                                           val_verdict_name(v->self.verdict), "reason", v->self.reason));
    json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "check", "outside meter", "verdict",
                                       val_verdict_name(v->meter.verdict), "reason", v->meter.reason));
    json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "check", "neighbour", "verdict",
                                       val_verdict_name(v->neighbour), "reason", v->neighbour_reason));
    return a;
}

static json_t *soi_json(const struct val_soi *v)
{
    json_t *r = json_pack("{s:s,s:s,s:s,s:b}", "soi", v->ops->name, "resource", v->ops->resource, "kind",
                          soi_kind_name(v->ops->kind), "io", v->ops->io != 0);
    if (v->opened)
        json_object_update_new(r, json_pack("{s:[i],s:{s:f,s:s,s:s}}", "soi_cpus", v->soi_cpu, "capacity", "value",
                                            v->capacity, "unit", v->unit, "source", v->capacity_src));
    if (v->self.ran)
        json_object_set_new(r, "self", self_json(&v->self, v->ops));
    if (v->have_probe) {
        const struct val_ramp *p = &v->ramp;
        json_t *lv = json_array(), *rounds = json_array();
        for (unsigned l = 0; l < p->nlevels; l++)
            json_array_append_new(lv, json_pack("{s:f,s:f,s:o,s:f,s:f,s:i,s:i,s:f,s:o}", "level", p->lv[l].level,
                                                "achieved_pct", p->lv[l].achieved_pct, "probe_cost",
                                                num(p->lv[l].probe_cost), "degradation_pct", p->lv[l].d,
                                                "degradation_se_pct", p->lv[l].se, "samples", (int)p->lv[l].samples,
                                                "cycles", (int)p->lv[l].cycles, "on_cpu_pct", p->lv[l].on_cpu_pct,
                                                "work_per_cpu_pct", num(p->lv[l].work_cpu_pct)));
        for (unsigned l = 0; l < p->nlevels; l++)
            json_object_set_new(json_array_get(lv, l), "wait_pct", num(p->lv[l].wait_pct));
        for (unsigned k = 0; k < p->nrounds; k++)
            json_array_append_new(rounds, json_pack("{s:f,s:i,s:f,s:f}", "dwell_ms", p->round[k].dwell_ms, "cycles",
                                                    (int)p->round[k].cycles, "d100_pct", p->round[k].d100,
                                                    "se100_pct", p->round[k].se100));
        json_object_update_new(r, json_pack(
            "{s:o,s:{s:s,s:s,s:s,s:i},s:{s:f,s:f,s:f},s:{s:f,s:f,s:f},s:{s:f,s:f},s:f,s:b,s:{s:f,s:f}}", "levels", lv,
            "probe", "name", v->probe, "unit", v->probe_unit, "what", v->probe_what, "cpu", v->probe_cpu, "fit",
            "slope_pct_per_pct", p->slope, "intercept_pct", p->icpt, "r2", p->r2, "fit_vs_achieved",
            "slope_pct_per_pct", p->a_slope, "intercept_pct", p->a_icpt, "r2", p->a_r2, "self_meter_beside", "slope",
            p->self_slope, "r2", p->self_r2, "noise_pct", p->noise_pct, "monotone", p->monotone, "soi_at_100_pct",
            "alone", v->alone_100, "beside", v->beside_100));
        json_object_set_new(r, "looked", json_pack("{s:f,s:f,s:i,s:f,s:b,s:f,s:f,s:o}", "seconds", p->looked_s,
                                                   "dwell_ms", p->dwell_ms, "cycles", (int)p->cycles, "budget_s",
                                                   p->budget_s, "decided", p->decided, "se100_pct",
                                                   p->lv[p->nlevels - 1].se, "cycle_sd_pct", p->cycle_sd_pct,
                                                   "rounds", rounds));
        json_object_set_new(r, "busy", busy_json(p->wait_pct, p->wait_worst_pct, p->wait_worst_level, -1, &p->machine,
                                                 v->measured, p->wait_run_us));
        char shape[200];
        val_ramp_shape(p, shape, sizeof(shape));
        json_object_set_new(r, "shape", json_string(shape));
    }
    json_object_set_new(r, "meter", meter_json(v));
    json_object_set_new(r, "neighbour", json_pack("{s:s,s:s}", "verdict", val_verdict_name(v->neighbour), "reason",
                                                  v->neighbour_reason));
    json_object_set_new(r, "checks", checks_json(v));
    json_object_update_new(r, json_pack("{s:s,s:s}", "verdict", val_verdict_name(v->verdict), "reason", v->reason));
    return r;
}

static json_t *overlap_json(const struct val_overlap *ov, json_t **checks)
{
    json_t *rows = json_array();
    for (unsigned i = 0; i < ov->nrows; i++) {
        const struct val_row *w = &ov->row[i];
        json_t *cells = json_object(), *r = w->skipped ? json_pack("{s:s,s:s}", "soi", w->ops->name, "skipped", w->why)
                                                       : json_pack("{s:s,s:O}", "soi", w->ops->name, "cells", cells);
        json_decref(cells);
        for (unsigned k = 0; k < VAL_NPROBES && !w->skipped; k++) {
            const struct val_cell *c = &w->cell[k];
            json_t *o = c->measured ? json_pack("{s:f,s:f,s:f,s:{s:f,s:f,s:o}}", "degradation_pct", c->d, "se_pct",
                                                c->se, "noise_pct", c->noise, "soi", "achieved_pct", c->soi_pct,
                                                "on_cpu_pct", c->soi_on_cpu_pct, "work_per_cpu_pct",
                                                num(c->soi_work_cpu_pct))
                        : c->why[0] ? json_pack("{s:s}", "skipped", c->why) : NULL;
            if (o && c->has_norm)
                json_object_set_new(o, "normalised", json_real(c->normalised));
            if (o && c->measured)
                json_object_set_new(o, "wait_pct", num(c->wait_pct));
            if (o && c->remeasured)
                json_object_update_new(o, json_pack("{s:f,s:f}", "first_degradation_pct", c->first_d,
                                                    "first_se_pct", c->first_se));
            if (o)
                json_object_set_new(cells, val_mprobes[k], o);
        }
        json_array_append_new(rows, r);
    }
    *checks = json_array();
    for (unsigned i = 0; i < ov->nchecks; i++)
        json_array_append_new(*checks, json_pack("{s:s,s:s}", "check", ov->check[i].text, "verdict",
                                                 val_verdict_name(ov->check[i].verdict)));
    return rows;
}

static void print_table(const struct val_soi *v, unsigned n, const struct val_overlap *ov, int soi_cpu, int pcpu)
{
    printf("self-meter, each SoI alone (achieved %% at each requested level)\n%-12s %-6s %7s %7s %7s %7s %7s %7s %6s "
           "%6s %7s %6s  %s\n", "SoI", "method", "a@0%", "a@25%", "a@50%", "a@75%", "a@100%", "R2", "worst", "noise",
           "calib", "wait", "verdict");
    for (unsigned i = 0; i < n; i++) {
        const struct val_self *s = &v[i].self;
        if (!s->ran)
            continue;
        printf("%-12s %-6s", v[i].ops->name, s->tag);
        for (unsigned k = 0; k < VAL_LEVELS; k++)
            if (s->judged && isfinite(s->achieved[k]))
                printf(" %7.1f", s->achieved[k]);
            else
                printf(" %7s", "-");
        if (s->judged)
            printf(" %7.4f %6.1f %6.1f %6.0f%%", s->r2, s->worst_pts, s->noise_pts, s->calib_pct);
        else
            printf(" %7s %6s %6s %7s", "-", "-", "-", "-");
        if (s->judged && isfinite(s->wait_pct))
            printf(" %5.1f%%", s->wait_pct);
        else
            printf(" %6s", "-");
        printf("  %s: %s\n", val_verdict_name(s->verdict), s->reason);
    }
    printf("\nmethod: climb = 0..100 %% and back; ref = each level between 100 %% windows; duty = the same, read as\n"
           "on-CPU %%. a@x: achieved %% of the capacity measured at open (duty: the workers' on-CPU %%, their own\n"
           "CPU time); worst: the paced level furthest from x; noise: the largest gap between a level's readings;\n"
           "calib: what the 100 %% windows read; wait: the share of the SoI's threads' runnable time spent waiting\n"
           "for a CPU (schedstat), over every step: above %.0f %% (or in one step of a failing ramp) the verdict\n"
           "is BUSY: the machine, not the SoI, decided the figures.\n\n", IB_BUSY_WAIT_PCT);
    printf("outside meter: a counter the kernel keeps, read over the same steps (%% of the capacity, its 0 %% reading "
           "taken off)\n%-12s %7s %7s %7s %7s %7s %6s %6s %7s  %s\n", "SoI", "m@25%", "m@50%", "m@75%", "m@100%", "R2",
           "worst", "noise", "of-self", "verdict");
    for (unsigned i = 0; i < n; i++) {
        const struct val_xcheck *x = &v[i].meter;
        printf("%-12s", v[i].ops->name);
        if (x->ran) {
            for (unsigned k = 1; k < VAL_XLEVELS; k++)
                isfinite(x->pct[k]) ? printf(" %7.1f", x->pct[k]) : printf(" %7s", "-");
            printf(" %7.4f %6.1f %6.1f %7.2f", x->r2, x->worst_pts, x->noise_pts, x->self_ratio);
        } else {
            printf(" %7s %7s %7s %7s %7s %6s %6s %7s", "-", "-", "-", "-", "-", "-", "-", "-");
        }
        printf("  %s: %s%s%s\n", val_verdict_name(x->verdict), x->ran ? x->what : "", x->ran ? "; " : "", x->reason);
    }
    printf("\nm@x: the meter's reading at x %% (a rate: its count's growth over the step's wall time), less its 0 %%\n"
           "reading, as %% of the SoI's capacity; of-self: the meter over the self-meter at 25-75 %% (1: they agree).\n"
           "A rate SoI's 100 %% is unpaced and reads where the host's capacity is now: not judged.\n\n");
    printf("the neighbour's view: a probe on a CPU that shares the resource, beside the SoI at each level\n");
    printf("%-12s %-11s %9s %9s %9s %9s %7s %7s %7s %7s %6s %7s %6s  %s\n", "SoI", "probe", "d@25%", "d@50%",
           "d@75%", "d@100%", "se@100", "noise", "R2", "R2(a)", "self", "looked", "wait", "verdict");
    for (unsigned i = 0; i < n; i++) {
        const struct val_ramp *p = &v[i].ramp;
        printf("%-12s %-11s", v[i].ops->name, v[i].have_probe ? v[i].probe : "-");
        if (v[i].have_probe)
            printf(" %+8.1f%% %+8.1f%% %+8.1f%% %+8.1f%% %6.1f%% %6.1f%% %7.3f %7.3f %6.3f %6.0fs", p->lv[1].d,
                   p->lv[2].d, p->lv[3].d, p->lv[4].d, p->lv[4].se, p->noise_pct, p->r2, p->a_r2, p->self_r2,
                   p->looked_s);
        else
            printf(" %9s %9s %9s %9s %7s %7s %7s %7s %6s %7s", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-");
        if (v[i].have_probe && isfinite(p->wait_pct))
            printf(" %5.1f%%", p->wait_pct);
        else
            printf(" %6s", "-");
        printf("  %s: %s\n", val_verdict_name(v[i].neighbour), v[i].neighbour_reason);
    }
    printf("\nd@x: the share of its solo rate the probe lost at x %% (paired with 0 %% in the same cycle, median over\n"
           "cycles); se@100: its standard error; noise: the solo probe's even/odd-cycle difference; R2: d against\n"
           "x (reported, not judged: a neighbour's loss is a cliff on many real paths); R2(a): against the pressure\n"
           "achieved; self: R2 of the SoI's self-meter beside the probe; looked: how long the ramp measured (longer\n"
           "while undecided); wait: as above, the SoI's threads beside the probe. docs/validation.md says more.\n");
    printf("\nverdicts\n");
    for (unsigned i = 0; i < n; i++)
        printf("%-12s %-11s %s\n", v[i].ops->name, val_verdict_name(v[i].verdict), v[i].reason);
    if (!ov || !ov->nrows)
        return;
    printf("\noverlap: probe degradation (%%) with each SoI at 100 %% on CPU %d, probe on CPU %d\n%-12s", soi_cpu, pcpu,
           "SoI");
    for (unsigned k = 0; k < VAL_NPROBES; k++)
        printf(" %11s", val_mprobes[k]);
    for (unsigned i = 0; i < ov->nrows; i++) {
        printf("\n%-12s", ov->row[i].ops->name);
        if (ov->row[i].skipped)
            printf(" skipped: %s", ov->row[i].why);
        for (unsigned k = 0; k < VAL_NPROBES && !ov->row[i].skipped; k++)
            if (ov->row[i].cell[k].measured)
                printf(" %+10.1f%%", ov->row[i].cell[k].d);
            else
                printf(" %11s", "-");
    }
    printf("\n");
    for (unsigned i = 0; i < ov->nchecks; i++)
        printf("%s -> %s\n", ov->check[i].text, val_verdict_name(ov->check[i].verdict));
}

static void plots(const char *dir, json_t *sois, json_t *ov)
{
    char path[4200], why[256];
    size_t i;
    json_t *r;
    json_array_foreach(sois, i, r)
        for (int svg = 0; svg < 2 && json_object_get(r, "probe"); svg++) {
            snprintf(path, sizeof(path), "%s/%s.%s", dir, json_string_value(json_object_get(r, "soi")),
                     svg ? "svg" : "png");
            if (plot_validate_ramp(path, r, why, sizeof(why)) < 0)
                fprintf(stderr, "ibench validate: warning: %s\n", why);
        }
    for (int svg = 0; svg < 2 && ov; svg++) {
        snprintf(path, sizeof(path), "%s/overlap.%s", dir, svg ? "svg" : "png");
        if (plot_heatmap(path, ov, val_mprobes, VAL_NPROBES, why, sizeof(why)) < 0)
            fprintf(stderr, "ibench validate: warning: %s\n", why);
    }
    fprintf(stderr, "ibench validate: charts written to %s\n", dir);
}

struct validate_opts {
    const char *soi, *plot, *fail_on, *junit;
    int json, no_overlap;
    struct val_opts vo;
};

static int cmd_validate(void *opts, int argc, char **argv, int first)
{
    const struct validate_opts *vopt = opts;
    struct val_opts o = vopt->vo;
    const char *soi = vopt->soi, *plotdir = vopt->plot;
    int json = vopt->json, overlap = !vopt->no_overlap;
    const struct soi_ops *only = soi && strcmp(soi, "all") ? soi_find(soi) : NULL;
    if (soi && strcmp(soi, "all") && !only)
        return cli_fail(IB_EXIT_USAGE, "validate", "unknown SoI '%s' (ibench list shows them)", soi);
    char why[512] = "";
    unsigned mask = 0; /* the verdicts besides FAIL that fail the run (junit.h: one rule for the exit and the report) */
    if (vopt->fail_on && junit_fail_on_parse(vopt->fail_on, &mask, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_USAGE, "validate", "%s", why);
    int rc0;
    if (vopt->junit && (rc0 = cli_check_out("validate", "--junit", vopt->junit)) != 0)
        return rc0;
    const uint64_t t_start = clk_mono_ns();
    if (plotdir) {
        struct stat st;
        char probe[4200];
        if (stat(plotdir, &st) != 0 || !S_ISDIR(st.st_mode) || access(plotdir, W_OK) != 0)
            return cli_fail(IB_EXIT_USAGE, "validate", "--plot %s is not a writable directory", plotdir);
        snprintf(probe, sizeof(probe), "%s/check.png", plotdir);
        if (plot_check(probe, why, sizeof(why)) < 0)
            return cli_fail(IB_EXIT_USAGE, "validate", "%s", why);
    }
    struct machine m;
    struct val_ctx *vc = NULL;
    struct val_soi *v = calloc(VAL_MAX_SOIS, sizeof(*v));
    struct val_overlap *ov = calloc(1, sizeof(*ov));
    int rc = v && ov ? machine_open(&m, NULL, why, sizeof(why)) : ib_why(why, sizeof(why), -ENOMEM, "out of memory");
    if (rc == 0 && (rc = val_open(&vc, &m, &o, why, sizeof(why))) < 0)
        machine_close(&m);
    if (rc < 0) {
        free(v);
        free(ov);
        return cli_fail(IB_EXIT_FAIL, "validate", "%s", why);
    }
    cli_calib_note("validate", &m);
    cli_signals_install();
    int failed = 0, nverd[3] = {0};
    unsigned n = 0;
    const struct val_soi *refused = NULL; /* an SoI refused the user's input: the command stops, exit 2 */
    for (unsigned i = 0; i < soi_count() && n < VAL_MAX_SOIS && !atomic_load(&cli_stop) && !refused; i++)
        if (!only || soi_at(i) == only) {
            val_soi_run(vc, soi_at(i), &v[n]);
            /* the SoI's verdict and each of its checks, as the JUnit report reads them (one test case each) */
            failed |= junit_verdict_fails(val_verdict_name(v[n].verdict), mask) ||
                      (v[n].self.ran && junit_verdict_fails(val_verdict_name(v[n].self.verdict), mask)) ||
                      junit_verdict_fails(val_verdict_name(v[n].meter.verdict), mask) ||
                      junit_verdict_fails(val_verdict_name(v[n].neighbour), mask);
            for (int k = 0; k < 3; k++) /* BUSY, ISOLATED, UNCHECKED SoIs, said on stderr */
                nverd[k] += v[n].verdict == (k == 0 ? VAL_BUSY : k == 1 ? VAL_ISOLATED : VAL_UNCHECKED);
            if (v[n].bad_input)
                refused = &v[n];
            n++;
        }
    if (refused) {
        int code = cli_fail(cli_exit_for(refused->open_rc, 1), "validate", "%s: %s", refused->ops->name,
                            refused->reason);
        cli_signals_restore();
        val_close(vc);
        machine_close(&m);
        free(v);
        free(ov);
        return code;
    }
    if (overlap && !atomic_load(&cli_stop))
        failed |= val_overlap_run(vc, only, ov) > 0;
    for (unsigned i = 0; i < ov->nchecks; i++) {
        failed |= junit_verdict_fails(val_verdict_name(ov->check[i].verdict), mask);
        nverd[0] += ov->check[i].verdict == VAL_BUSY;
    }
    out_progress_done();
    int intr = atomic_load(&cli_stop);
    json_t *doc = json_pack("{s:s,s:s,s:b,s:i,s:i}", "ibench", IBENCH_VERSION, "validate", "v1", "quick", o.quick,
                            "soi_cpu", val_soi_cpu(vc), "probe_cpu", val_probe_cpu(vc));
    json_t *sois = json_array(), *checks = NULL, *ovj = ov->nrows ? overlap_json(ov, &checks) : NULL;
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(sois, soi_json(&v[i]));
    json_object_set_new(doc, "sois", sois);
    json_object_set_new(doc, "seconds", json_real((double)(clk_mono_ns() - t_start) / 1e9));
    if (ovj) {
        json_object_set_new(doc, "overlap", ovj);
        json_object_set_new(doc, "overlap_checks", checks);
    }
    machine_save_calib(&m, why, sizeof(why));
    if (plotdir && !intr)
        plots(plotdir, sois, ovj);
    if (vopt->junit && !intr) { /* one test case per SoI and check (docs/ci.md), written whole or not at all */
        char *xml = NULL;
        int jrc = junit_from_validate(doc, mask, &xml, why, sizeof(why));
        if (jrc == 0 && (jrc = out_text_file_atomic(vopt->junit, xml, strlen(xml))) < 0)
            snprintf(why, sizeof(why), "cannot write %s: %s", vopt->junit, strerror(-jrc));
        free(xml);
        if (jrc < 0) {
            fprintf(stderr, "ibench validate: --junit: %s\n", why);
            failed = 1;
        }
    }
    if (json)
        out_json(stdout, doc);
    else
        print_table(v, n, ovj ? ov : NULL, val_soi_cpu(vc), val_probe_cpu(vc));
    json_decref(doc);
    cli_signals_restore();
    val_close(vc);
    machine_close(&m);
    free(v);
    free(ov);
    /* BUSY, ISOLATED and UNCHECKED are no failure of an SoI: this host, now, could not show it (docs/ci.md);
     * --fail-on makes them one */
    if (!intr && (nverd[0] || nverd[1] || nverd[2]))
        fprintf(stderr, "ibench validate: not shown here: %d BUSY (the machine took the CPU: run again on an idle "
                "one), %d ISOLATED (the meter saw the pressure, the neighbour nothing), %d UNCHECKED (no meter here, "
                "no effect on the neighbour)%s\n", nverd[0], nverd[1], nverd[2],
                mask ? "; --fail-on counts some of them as failures" : "; not failures without --fail-on");
    return intr ? IB_EXIT_INTR : failed ? IB_EXIT_FAIL : IB_EXIT_OK;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define VO struct validate_opts
static const struct cli_opt validate_table[] = {
    {CLI_STR("soi", "NAME|all", VO, soi, "one SoI, or all of them (the default)")},
    {CLI_FLAG("quick", VO, vo.quick,
              "fewer cycles, shorter I/O steps, mem-cap left out, the overlap rows the claims read")},
    {CLI_DOUBLE("budget", "S", VO, vo.budget_s, 0, 86400,
                "seconds per SoI a ramp may look longer while its effect is within the noise\n"
                "(default 100; with --quick, the first round only)")},
    {CLI_FLAG("no-overlap", VO, no_overlap, "no overlap matrix")},
    {CLI_FLAG("json", VO, json, "JSON instead of the table")},
    {CLI_STR("plot", "DIR", VO, plot, "charts (PNG and SVG) into DIR")},
    {CLI_STR("dir", "DIR", VO, vo.dir, "where disk SoIs and probes make their files (default $TMPDIR or /var/tmp)")},
    {CLI_STR("fail-on", "LIST", VO, fail_on,
             "busy,isolated,unchecked or all: these verdicts fail the run too (exit 1)")},
    {CLI_STR("junit", "FILE", VO, junit, "a JUnit XML report too: one test case per SoI and check (docs/ci.md)")},
};
#undef VO

const struct cli_cmd cli_cmd_validate = {
    .name = "validate",
    CLI_RUN(cmd_validate, struct validate_opts),
    .preset = &(const struct validate_opts){.vo = {.budget_s = -1, .stop = &cli_stop}},
    .summary = "every SoI measured from outside by a probe, and the overlap matrix",
    .usage = "usage: ibench validate [--soi NAME|all] [--quick] [--budget S] [--no-overlap] [--json] [--plot DIR]\n"
             "                       [--dir DIR] [--fail-on busy,isolated,unchecked|all] [--junit FILE]\n\n",
    .about_fn = validate_about,
    .more = "\nExit 0 when no verdict is FAIL (BUSY, ISOLATED, UNCHECKED, skipped and undecidable say what this host\n"
            "could not show, with why), 1 when some verdict is FAIL or one --fail-on names, 2 on bad input, 130 on\n"
            "Ctrl-C. docs/ci.md: a CI job.\n",
    CLI_OPTS(validate_table),
};
