/* cmd_show.c - `ibench show PROFILE`: a profile as a table. docs/profile.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "output.h"
#include "opts.h"
#include "parse.h"
#include "profile_fmt.h"
#include "profile_method.h"

/* A number as the file has it, "-" when absent (NAN): show never invents a 0. b: a char array. */
#define NUM(b, fmt, v) (isfinite(v) && snprintf(b, sizeof(b), fmt, v) >= 0 ? (const char *)(b) : "-")

/* A string from the file: "-" when absent, control characters escaped (render.h, tty_text). */
#define STR(s) ((s) && *(s) ? TTY_TEXT(s) : "-")

/* The caused cell: the raw figure clamped to 0-100 for display, its standard error when known, "n.d." when it is
 * within 2 se of 0. */
static void caused_cell(const struct profile_soi *s, char *b, size_t n)
{
    const struct profile_caused *c = &s->caused;
    if (!s->have_caused || !isfinite(c->value)) {
        snprintf(b, n, "-");
        return;
    }
    double v = c->value < 0 ? 0 : c->value > 100 ? 100 : c->value;
    int k = snprintf(b, n, "%.1f", v);
    if (isfinite(c->se) && k > 0 && (size_t)k < n)
        k += snprintf(b + k, n - (size_t)k, " +- %.1f", c->se);
    if (c->distinguishable == 0 && k > 0 && (size_t)k < n)
        snprintf(b + k, n - (size_t)k, " n.d.");
}

struct show_opts {
    int json;
};

static int cmd_show(void *opts, int argc, char **argv, int first)
{
    struct profile p;
    const char *path = NULL;
    int json = ((const struct show_opts *)opts)->json;
    int rc = cli_profile_load("show", argc, argv, first, &p, &path);
    if (rc != 0)
        return rc;
    if (json) { /* the profile as this ibench writes it (the current version), nothing else */
        char *text = profile_dumps(&p);
        profile_free(&p);
        if (!text)
            return cli_fail(IB_EXIT_FAIL, "show", "out of memory");
        printf("%s\n", text);
        free(text);
        return IB_EXIT_OK;
    }
    char b1[32], b2[32], b3[32], b4[32];
    printf("profile   %s (%d.%d, %s)\n", STR(p.name), p.major, p.minor, STR(p.created));
    if (!p.complete)
        printf("INCOMPLETE %u item%s missing (below); ibench profile exits 1 writing it, 130 when interrupted\n",
               p.nmissing, p.nmissing == 1 ? "" : "s");
    if (p.command)
        printf("target    %s\n", STR(p.command));
    else if (p.pid > 0)
        printf("target    pid %d\n", p.pid);
    else
        printf("target    -\n");
    if (p.load)
        printf("load      %s\n", STR(p.load));
    printf("metric    %s (%s, %s is better); QoS: %.0f %% of solo\n", STR(p.metric_spec), STR(p.metric_unit),
           p.higher_is_better ? "higher" : "lower", 100 * p.qos);
    printf("baseline  %s before, %s after (drift %s %%, spread %s %%); confidence %s\n",
           NUM(b1, "%.4g", p.before_median), NUM(b2, "%.4g", p.after_median),
           NUM(b3, "%+.1f", p.drift_pct), NUM(b4, "%.1f", p.noise_pct), STR(p.confidence));
    printf("machine   %s\n\n", STR(p.cpu_model));
    /* the caused column is as wide as its widest cell (1.0/1.1: 7, as before) */
    char (*cells)[48] = calloc(p.nsois ? p.nsois : 1, sizeof(*cells));
    if (!cells) {
        profile_free(&p);
        return cli_fail(IB_EXIT_FAIL, "show", "out of memory");
    }
    int cw = 7, nd = 0;
    for (unsigned i = 0; i < p.nsois; i++) {
        caused_cell(&p.sois[i], cells[i], sizeof(cells[i]));
        cw = (int)strlen(cells[i]) > cw ? (int)strlen(cells[i]) : cw;
        nd |= p.sois[i].status == PROFILE_MEASURED && p.sois[i].caused.distinguishable == 0 &&
              isfinite(p.sois[i].caused.value);
    }
    printf("%-13s %9s %13s %*s  %s\n", "SoI", "tolerated", "bracket", cw, "caused", "curve (intensity: relative perf)");
    for (unsigned i = 0; i < p.nsois; i++) {
        const struct profile_soi *s = &p.sois[i];
        printf("%-13s", STR(s->soi));
        if (s->status != PROFILE_MEASURED) {
            printf(" %s: %s", s->status == PROFILE_SKIPPED ? "skipped" : "INCOMPLETE", STR(s->reason));
            for (unsigned k = 0; k < s->ncurve; k++) /* the points measured before it was cut short */
                printf("%s%s:%s%s%s", k ? " " : "; measured ", NUM(b2, "%g", s->curve[k].intensity),
                       s->curve[k].timed_out ? "<=" : "", NUM(b1, "%.2f", s->curve[k].relative),
                       s->curve[k].meets_qos ? "" : "x");
            printf("\n");
            continue;
        }
        char bb[80];
        snprintf(bb, sizeof(bb), "[%s, %s]", NUM(b1, "%g", s->bracket[0]),
                 NUM(b2, "%g", s->bracket[1]));
        printf(" %9s %13s %*s ", NUM(b3, "%.1f", s->tolerated), bb, cw, cells[i]);
        for (unsigned k = 0; k < s->ncurve; k++) {
            const struct profile_point *pt = &s->curve[k];
            const char *le = pt->timed_out ? "<=" : ""; /* a bound: the sample ran out of time */
            if (pt->again)
                printf(" again:%s%s%s", le, NUM(b1, "%.2f", pt->relative), pt->meets_qos ? "" : "x");
            else
                printf(" %s:%s%s%s", NUM(b2, "%g", pt->intensity), le, NUM(b1, "%.2f", pt->relative),
                       pt->meets_qos ? "" : "x");
        }
        printf("\n");
    }
    free(cells);
    int hdr = 0; /* curves measured while the target's own solo speed moved (profile_soi_solo_stray) */
    for (unsigned i = 0; i < p.nsois; i++) {
        const struct profile_soi *s = &p.sois[i];
        const double f = s->status == PROFILE_MEASURED ? profile_soi_solo_stray(&p, s) : NAN;
        if (!(f > PROFILE_SOLO_STRAY_MAX))
            continue;
        double lo = INFINITY, hi = 0;
        for (unsigned k = 0; k < s->ncurve; k++)
            if (s->curve[k].solo > 0)
                lo = fmin(lo, s->curve[k].solo), hi = fmax(hi, s->curve[k].solo);
        if (!hdr++)
            printf("\nSTRAYED: curves measured while the target's own solo speed moved more than %g-fold outside its\n"
                   "baseline (the machine or the target was in another state; the placement model reads them in its\n"
                   "pessimistic bound only, docs/placement.md):\n", PROFILE_SOLO_STRAY_MAX);
        printf("  %-12s the points' solo baselines %.4g-%.4g, %.1f-fold outside the baseline samples' range\n",
               STR(s->soi), lo, hi, f);
    }
    hdr = 0; /* capacities measured while the resource was slower (profile_soi_full_achieved) */
    for (unsigned i = 0; i < p.nsois; i++) {
        const struct profile_soi *s = &p.sois[i];
        const double a = s->status == PROFILE_MEASURED ? profile_soi_full_achieved(s) : NAN;
        if (!(a > PROFILE_CAPACITY_LOW_PCT))
            continue;
        if (!hdr++)
            printf("\nCAPACITY LOW: SoIs whose point at 100 %% (unthrottled) achieved more than %g %% of the capacity\n"
                   "their lower points were paced against: that capacity was measured while the resource was slower\n"
                   "(ibench calibrate measures it again); the curve's 100 %% point lies far beyond its others:\n",
                   PROFILE_CAPACITY_LOW_PCT);
        printf("  %-12s %.0f %% of %s %s (%s)\n", STR(s->soi), a, NUM(b1, "%.4g", s->capacity), STR(s->capacity_unit),
               TTY_TEXT(STR(s->capacity_source)));
    }
    hdr = 0; /* the reach checks of the SoIs that were ramped (a skipped one says it in its reason) */
    for (unsigned i = 0; i < p.nsois; i++) {
        const struct profile_soi *s = &p.sois[i];
        if (!s->have_reach || s->status != PROFILE_MEASURED)
            continue;
        if (!hdr++)
            printf("\nreach (a probe on the target's CPU beside the SoI at 0 / 100 %%):\n");
        printf("  %-12s %s", STR(s->soi), STR(s->reach.verdict));
        if (isfinite(s->reach.effect_pct) && isfinite(s->reach.se_pct))
            printf(": %s %+.1f +- %.1f %%", STR(s->reach.probe), s->reach.effect_pct, s->reach.se_pct);
        else if (s->reach.reason)
            printf(": %s", STR(s->reach.reason));
        printf("\n");
    }
    if (p.have_usage) { /* 1.6: what the target pressed over time */
        const struct profile_usage *u = &p.usage;
        printf("\nusage over time (%.3g s in %.0f ms windows, counted for %s):\n", u->seconds, u->window_s * 1e3,
               TTY_TEXT(u->source ? u->source : "-"));
        printf("  %-10s %-5s %10s %10s %10s %6s %10s %7s %9s %9s  %s\n", "resource", "unit", "mean", "p90", "max",
               "duty", "level", "bursts", "burst s", "gap s", "of capacity (mean / level)");
        for (unsigned i = 0; i < u->nres; i++) {
            const struct profile_usage_res *x = &u->res[i];
            char b5[32], b6[32], b7[32], b9[96];
            if (x->soi)
                snprintf(b9, sizeof(b9), "%.1f / %.1f %% of %s", x->cap_mean_pct, x->cap_level_pct, TTY_TEXT(x->soi));
            else
                snprintf(b9, sizeof(b9), "-");
            /* names from a file: escaped, as every string show prints from one */
            printf("  %-10s %-5s %10s %10s %10s %6s %10s %7u %9s %9s  %s\n", TTY_TEXT(STR(x->name)),
                   TTY_TEXT(STR(x->unit)), NUM(b1, "%.4g", x->mean), NUM(b2, "%.4g", x->p90), NUM(b3, "%.4g", x->max),
                   NUM(b4, "%.2f", x->duty), NUM(b5, "%.4g", x->level), x->bursts, NUM(b6, "%.2f", x->burst_mean_s),
                   NUM(b7, "%.2f", x->gap_mean_s), b9);
        }
    }
    hdr = 0; /* 1.6: how deep each curve falls */
    for (unsigned i = 0; i < p.nsois; i++) {
        const struct profile_soi *s = &p.sois[i];
        if (!s->have_depth || s->status != PROFILE_MEASURED)
            continue;
        if (!hdr++)
            printf("\ndepth (each curve followed down to its floor):\n");
        printf("  %-12s %s at 100 %%", STR(s->soi), NUM(b1, "%.3f", s->depth.relative_100));
        if (isfinite(s->depth.below_floor_at))
            printf(", below %s from %s %%", NUM(b2, "%g", s->depth.floor), NUM(b3, "%.1f", s->depth.below_floor_at));
        else
            printf(", not below %s up to 100 %%", NUM(b2, "%g", s->depth.floor));
        printf(" (%u point%s, %s s)\n", s->depth.points, s->depth.points == 1 ? "" : "s",
               NUM(b4, "%.1f", s->depth.seconds));
    }
    hdr = 0; /* 1.7: the target beside the SoI in bursts, a small table per SoI that has them */
    for (unsigned i = 0; i < p.nsois; i++) {
        const struct profile_soi *s = &p.sois[i];
        if (!s->nbursts)
            continue;
        if (!hdr++)
            printf("\nbursts (the SoI on for on s, then idle for off s; relative over whole periods, on: while on):\n");
        printf("  %s\n  %8s %8s %7s %9s %7s %7s %8s %9s\n", TTY_TEXT(STR(s->soi)), "on s", "off s", "level",
               "relative", "se", "on", "samples", "seconds");
        for (unsigned k = 0; k < s->nbursts && k < PROFILE_MAX_BURSTS; k++) {
            const struct profile_burst *b = &s->bursts[k];
            char c5[32], c6[32], c7[32];
            printf("  %8s %8s %7s %8s%s %7s %7s %8u %9s\n", NUM(b1, "%g", b->on_s), NUM(b2, "%g", b->off_s),
                   NUM(b3, "%g", b->level), NUM(b4, "%.3f", b->relative), b->timed_out ? "<" : " ",
                   NUM(c5, "%.3f", b->relative_se), NUM(c6, "%.3f", b->on_relative), b->samples,
                   NUM(c7, "%.1f", b->seconds));
        }
    }
    if (!hdr && p.bursts_off)
        printf("\nbursts: %s\n", TTY_TEXT(p.bursts_off));
    hdr = 0; /* caused, in detail: CPU time the SoI lost to the target, and what the target occupies */
    for (unsigned i = 0; i < p.nsois; i++) {
        const struct profile_soi *s = &p.sois[i];
        const struct profile_caused *c = &s->caused;
        if (!s->have_caused || (!isfinite(c->cpu_lost_pct) && !c->occupancy_what && !c->ref_probe && !c->counted_res))
            continue;
        if (!hdr++)
            printf("\ncaused, in detail:\n");
        printf("  %-12s", STR(s->soi));
        const char *sep = " ";
        if (isfinite(c->cpu_lost_pct)) {
            printf("%scpu lost %.1f", sep, c->cpu_lost_pct);
            if (isfinite(c->cpu_lost_se))
                printf(" +- %.1f", c->cpu_lost_se);
            printf(" %%");
            sep = "; ";
        }
        if (c->occupancy_what) {
            printf("%starget's %s %s %% of capacity", sep, STR(c->occupancy_what),
                   NUM(b1, "%.1f", c->occupancy_pct));
            sep = "; ";
        }
        if (c->unthrottled == 1)
            printf("%sran without its rate cap", sep);
        if (c->ref_probe) { /* 1.5: read through a reference probe (the SoI's equivalent intensity) */
            printf("%sthrough the %s reference: %s %s alone, %s beside the target; its calibration", sep,
                   STR(c->ref_probe), NUM(b1, "%.0f", c->alone), STR(c->ref_unit), NUM(b2, "%.0f", c->beside));
            for (unsigned k = 0; k < c->nref; k++)
                printf(" %.2f@%g", c->ref_rel[k], c->ref_levels[k]);
            printf(" %%");
            sep = "; ";
        }
        if (c->counted_res) { /* 1.8: the kernel counted the target leaving the resource alone; no rounds */
            char ct[160];
            printf("%scounted, no rounds: %s", sep, prof_counted_text(c, ct, sizeof(ct)));
        }
        printf("\n");
    }
    if (p.nmissing)
        printf("\nmissing (the profile is incomplete):\n");
    for (unsigned i = 0; i < p.nmissing; i++) {
        const struct profile_missing *m = &p.missing[i];
        printf("  %s", STR(m->phase));
        if (m->soi)
            printf(" of %s", STR(m->soi));
        if (isfinite(m->intensity))
            printf(" at %g %%", m->intensity);
        printf(": %s\n", STR(m->reason));
    }
    int ndist = 0;
    if (p.nphases)
        printf("\npressure per phase (%% of its wall time: PSI some/full, steal; -: not available here):\n"
               "  %-26s %7s %7s %7s %7s %7s %7s  %s\n", "phase", "wall s", "cpu", "io", "io full", "memory", "steal",
               "disturbed");
    for (unsigned i = 0; i < p.nphases; i++) {
        const struct profile_phase *ph = &p.phases[i];
        char name[96], by[160], b5[32], b6[32], b7[200];
        snprintf(name, sizeof(name), "%s%s%s", ph->phase ? ph->phase : "-", ph->soi ? " " : "", ph->soi ? ph->soi : "");
        int d = profile_phase_disturbed(ph, by, sizeof(by));
        ndist += d;
        printf("  %-26s %7s %7s %7s %7s %7s %7s  %s\n", TTY_TEXT(name), NUM(b1, "%.1f", ph->wall_s),
               NUM(b2, "%.1f", ph->cpu_some), NUM(b3, "%.1f", ph->io_some), NUM(b4, "%.1f", ph->io_full),
               NUM(b5, "%.1f", ph->memory_some), NUM(b6, "%.1f", ph->steal),
               d ? (snprintf(b7, sizeof(b7), "YES: %s", by), b7) : "no");
    }
    if (ndist)
        printf("%d phase%s disturbed: the machine was under pressure its figures may show (docs/profile.md, \"Pressure\n"
               "during the profile\")\n", ndist, ndist == 1 ? "" : "s");
    printf("\ntolerated: the highest intensity that kept the metric within QoS (100: never broke); bracket: last\n"
           "intensity that met QoS and first that broke it; caused: the share of an SoI's own work rate the target\n"
           "took at the reference intensity, shown within 0-100 (+- its standard error when measured; -: not\n"
           "measurable, the profile says why). curve: x marks a point that broke QoS; again: the same point measured\n"
           "once more after it broke (the ramp goes by the second); <=: a bound, the sample ran out of time.\n");
    if (nd)
        printf("n.d.: not distinguishable from 0 (within twice its standard error).\n");
    profile_free(&p);
    return IB_EXIT_OK;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt show_table[] = {
    {CLI_FLAG("json", struct show_opts, json, "the profile as JSON, as this ibench writes it, instead of the table")},
};

const struct cli_cmd cli_cmd_show = {
    .name = "show",
    CLI_RUN(cmd_show, struct show_opts),
    .summary = "print a profile as a table",
    .usage = "usage: ibench show PROFILE [--json]\n\n",
    .about = "Prints a profile as a table: per SoI, tolerated and caused interference, the bracket and confidence.\n",
    CLI_OPTS(show_table),
    .args = CLI_ARGS_ANY,
};
