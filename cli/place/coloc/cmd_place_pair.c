/* cmd_place_pair.c - `ibench place pair`: may these applications share a machine (placement/coloc/pl_coloc.h: decided
 * by the model, pl_wmodel.h, unless --decide headroom), and `ibench place predict`: how one would fare beside others,
 * by a prediction rule (the model's windows by default; product-flat-dist, the fleet simulator's truth, pl_sim.h, on
 * request), and with --check how well a rule predicts measured co-runs (cmd_place_check.c).  docs/placement.md,
 * "Co-location on profiles", "One model that predicts and decides", "The simulator's ground truth". */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "corun.h"
#include "parse.h"
#include "pl_check.h"
#include "pl_coloc.h"
#include "pl_sim.h"
#include "pl_wmodel.h"
#include "place.h"
#include "render.h"

/* Reads n profile files; 0, or an exit code after one line (the profile library's reason). */
static int read_profiles(const char *cmd, char *const *paths, unsigned n, struct profile **out)
{
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    for (unsigned i = 0; i < n; i++) {
        char why[512];
        int rc = profile_read(paths[i], &(*out)[i], why, sizeof why);
        if (rc < 0) {
            for (unsigned k = 0; k < i; k++)
                profile_free(&(*out)[k]);
            free(*out);
            *out = NULL;
            return cli_fail(rc == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, cmd, "%s", why);
        }
        cli_profile_warn(cmd, &(*out)[i]);
    }
    return 0;
}

static void free_profiles(struct profile *p, unsigned n)
{
    for (unsigned i = 0; p && i < n; i++)
        profile_free(&p[i]);
    free(p);
}

static const char *name_of(const struct profile *p) { return p->name ? p->name : "?"; }

/* ---- place pair -------------------------------------------------------------------------------------------------- */

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* A member's decision as the check made it (pl_coloc_member_decision). */
static const char *member_decision(const struct pl_wm_pred *m, const struct profile *p, const struct pl_coloc_opts *o)
{
    return pl_wm_decision_name(pl_coloc_member_decision(m, pl_wm_qos(p), o));
}

static json_t *pair_doc(char *const *paths, const struct profile *p, const struct pl_coloc_result *r,
                        const struct pl_coloc_opts *o)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "command", json_string("place pair"));
    json_object_set_new(doc, "margin", json_real(o->margin));
    json_object_set_new(doc, "unknown", json_string(o->pessimistic ? "pessimistic" : "optimistic"));
    json_object_set_new(doc, "refuse", json_string(o->likely ? "likely" : o->established ? "established" : "uncertain"));
    json_object_set_new(doc, "decide", json_string(pl_coloc_decide_name(o->decide)));
    json_t *apps = json_array();
    for (unsigned a = 0; a < r->napps; a++)
        json_array_append_new(apps, json_pack("{s:s,s:s,s:o}", "name", name_of(&p[a]), "file", paths[a], "qos",
                                              num_or_null(p[a].qos)));
    json_object_set_new(doc, "applications", apps);
    json_t *res = json_array(), *deciding = json_array();
    for (unsigned k = 0; k < r->nres; k++) {
        json_t *cells = json_array();
        for (unsigned a = 0; a < r->napps; a++) {
            const struct pl_coloc_cell *c = &r->cell[a * r->nres + k];
            json_t *cj = json_pack("{s:s,s:f,s:f,s:f,s:b,s:b,s:b,s:b}", "application", name_of(&p[a]), "tolerated",
                                   c->tolerated, "others", c->others, "headroom", c->headroom, "unknown_tolerated",
                                   c->unknown_tol, "unknown_others", c->unknown_oth, "judged", c->judged, "uncertain",
                                   c->uncertain);
            if (o->established && c->headroom < 0) {
                json_object_set_new(cj, "others_established", json_real(c->others_lo));
                json_object_set_new(cj, "tolerated_high", json_real(c->tol_hi));
            }
            json_array_append_new(cells, cj);
            if (!r->pred && c->headroom < 0 && !c->uncertain)
                json_array_append_new(deciding, json_pack("{s:s,s:s,s:f}", "resource", r->res[k], "application",
                                                          name_of(&p[a]), "headroom", c->headroom));
        }
        json_array_append_new(res, json_pack("{s:s,s:o}", "name", r->res[k], "cells", cells));
    }
    json_object_set_new(doc, "resources", res);
    json_t *preds = json_array(); /* decide model: each member beside all the others */
    for (unsigned a = 0; r->pred && a < r->napps; a++) {
        const struct pl_wm_pred *m = &r->pred[a];
        if (!strcmp(member_decision(m, &p[a], o), "refused")) /* deciding: the refused members' resources */
            for (unsigned k = 0; k < r->nres; k++)
                if (!strcmp(r->res[k], m->deciding))
                    json_array_append_new(deciding, json_pack("{s:s,s:s,s:f}", "resource", r->res[k], "application",
                                                              name_of(&p[a]), "headroom",
                                                              r->cell[a * r->nres + k].headroom));
        json_array_append_new(preds, json_pack("{s:s,s:f,s:f,s:f,s:f,s:s,s:s,s:s,s:i,s:o}", "application",
                                               name_of(&p[a]), "relative", m->rel, "lo", m->lo, "hi", m->hi, "qos",
                                               pl_wm_qos(&p[a]), "decision", member_decision(m, &p[a], o),
                                               "resource", m->deciding, "why", m->why, "windows", (int)m->nwindows,
                                               "window_s", num_or_null(m->window_s)));
    }
    json_object_set_new(doc, "predictions", preds);
    json_object_set_new(doc, "verdict", json_string(pl_coloc_verdict_name(r->verdict)));
    json_object_set_new(doc, "deciding", deciding);
    json_object_set_new(doc, "why", r->deciding ? json_string(r->deciding) : json_null());
    json_object_set_new(doc, "uncertain", r->uncertain ? json_string(r->uncertain) : json_null());
    json_object_set_new(doc, "fit", r->safe ? json_real(r->fit) : json_null());
    json_t *w = json_array();
    for (unsigned i = 0; i < r->nwarnings; i++)
        json_array_append_new(w, json_string(r->warnings[i]));
    json_object_set_new(doc, "warnings", w);
    return doc;
}

static void pair_table(const struct profile *p, const struct pl_coloc_result *r, const struct pl_coloc_opts *o)
{
    const bool model = r->pred != NULL;
    if (model) {
        printf("%u applications, deciding by the model (each beside all the others: predicted relative performance\n"
               "[pessimistic, optimistic] against its QoS line), refusing %s\n\n", r->napps,
               o->established ? "established breaks only (the optimistic bound under the line)"
                              : "uncertain too (the pessimistic bound under the line)");
        printf("%-20s %9s %15s %6s %10s  %s\n", "application", "predicted", "bounds", "QoS", "decision", "why");
        printf("%-20s %9s %15s %6s %10s  %s\n", "-----------", "---------", "------", "---", "--------", "---");
        for (unsigned a = 0; a < r->napps; a++) {
            const struct pl_wm_pred *m = &r->pred[a];
            char label[40], b[32];
            snprintf(label, sizeof label, "%u %s", a + 1, TTY_TEXT(name_of(&p[a])));
            snprintf(b, sizeof b, "[%.3f, %.3f]", m->lo, m->hi);
            printf("%-20.20s %9.3f %15s %6.2f %10s  %s\n", label, m->rel, b, pl_wm_qos(&p[a]),
                   member_decision(m, &p[a], o), TTY_TEXT(m->why));
        }
        printf("\nthe headroom rule's cells (explanation; the rule before 1.7, --decide headroom), margin %g points,\n"
               "unknowns %s:\n\n", o->margin, o->pessimistic ? "pessimistic" : "optimistic");
    } else {
        printf("%u applications, deciding by the headroom rule (--decide headroom, the rule before 1.7), margin %g "
               "points, unknowns %s, refusing %s\n\n", r->napps, o->margin,
               o->pessimistic ? "pessimistic" : "optimistic",
               o->established ? "established breaks only" : "every negative headroom");
    }
    printf("%-14s %-20s %10s %13s %9s\n", "resource", "application", "tolerates", "others cause", "headroom");
    printf("%-14s %-20s %10s %13s %9s\n", "--------", "-----------", "---------", "------------", "--------");
    bool marks = false, unjudged = false;
    char *none = NULL; /* resources nobody's cell is judged on: one line, not n rows of dashes */
    size_t nlen = 0;
    FILE *nf = open_memstream(&none, &nlen);
    for (unsigned k = 0; k < r->nres; k++) {
        bool any = false;
        for (unsigned a = 0; a < r->napps; a++)
            any |= r->cell[a * r->nres + k].judged;
        if (!any) {
            if (nf)
                fprintf(nf, "%s%s", ftell(nf) ? ", " : "", TTY_TEXT(r->res[k]));
            continue;
        }
        for (unsigned a = 0; a < r->napps; a++) {
            const struct pl_coloc_cell *c = &r->cell[a * r->nres + k];
            char label[40];
            snprintf(label, sizeof label, "%u %s", a + 1, TTY_TEXT(name_of(&p[a])));
            if (!c->judged) {
                printf("%-14s %-20.20s %10s %13s %9s\n", TTY_TEXT(r->res[k]), label, "-", "-", "-");
                unjudged = true;
                continue;
            }
            char t[32], oth[32];
            snprintf(t, sizeof t, "%.1f%s", c->tolerated, c->unknown_tol ? "?" : "");
            snprintf(oth, sizeof oth, "%.1f%s", c->others, c->unknown_oth ? "?" : "");
            marks |= c->unknown_tol || c->unknown_oth;
            printf("%-14s %-20.20s %10s %13s %9.1f%s\n", TTY_TEXT(r->res[k]), label, t, oth, c->headroom,
                   c->uncertain ? "  uncertain" : c->headroom < 0 ? (model ? "  negative" : "  breaks") : "");
        }
    }
    if (nf)
        fclose(nf);
    if (marks || unjudged || (none && *none))
        printf("\n");
    if (marks)
        printf("?: not measured; the %s rule's value\n", o->pessimistic ? "pessimistic" : "optimistic");
    if (unjudged)
        printf("-: not judged: neither side measured it (counted safe, left out of the fit)\n");
    if (none && *none)
        printf("not judged (measured by no one): %s\n", none);
    free(none);
    if (model && r->verdict == PL_COLOC_UNCERTAIN)
        printf("\nverdict: uncertain (not refused: no break established beyond the profiles' uncertainty), fit %.3f: "
               "%s\n", r->fit, TTY_TEXT(r->uncertain));
    else if (model && r->safe)
        printf("\nverdict: safe, fit %.3f (the lowest member prediction): every member's pessimistic bound meets its "
               "QoS\n", r->fit);
    else if (model)
        printf("\nverdict: unsafe: %s\n", TTY_TEXT(r->deciding));
    else if (r->verdict == PL_COLOC_UNCERTAIN)
        printf("\nverdict: uncertain (not refused: no break established beyond the profiles' uncertainty), fit %.1f: "
               "%s\n", r->fit, TTY_TEXT(r->uncertain));
    else if (r->safe)
        printf("\nverdict: safe, fit %.1f (slack kept by the binding members, summed over resources)\n", r->fit);
    else
        printf("\nverdict: unsafe: %s\n", TTY_TEXT(r->deciding));
    for (unsigned i = 0; i < r->nwarnings; i++)
        printf("warning: %s\n", TTY_TEXT(r->warnings[i]));
}

struct pair_args {
    struct place_opts po;
    struct place_coloc_args ck;
};

static int cmd_place_pair(void *opts, int argc, char **argv, int first)
{
    static const char cmd[] = "place pair";
    const struct pair_args *args = opts;
    struct pl_coloc_opts o = {0};
    place_coloc_opts(&args->ck, &o);
    int json = args->po.json;
    unsigned n = (unsigned)(argc - first);
    if (n < 2 || n > PL_COLOC_MAX_APPS)
        return cli_fail(IB_EXIT_USAGE, cmd, "2 to %d profiles expected, got %u", PL_COLOC_MAX_APPS, n);
    struct profile *p;
    int rc = read_profiles(cmd, argv + first, n, &p);
    if (rc)
        return rc;
    const struct profile *g[PL_COLOC_MAX_APPS];
    for (unsigned a = 0; a < n; a++)
        g[a] = &p[a];
    struct pl_coloc_result r;
    char why[512];
    int e = pl_coloc_check(g, n, &o, &r, why, sizeof why);
    if (e < 0) {
        rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, cmd, "%s", why);
    } else {
        if (json) {
            json_t *doc = pair_doc(argv + first, p, &r, &o);
            rc = doc && out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, cmd, "cannot write JSON");
            json_decref(doc);
        } else {
            pair_table(p, &r, &o);
        }
        pl_coloc_result_free(&r);
    }
    free_profiles(p, n);
    return rc;
}

/* ---- place predict ----------------------------------------------------------------------------------------------- */

struct predict_args {
    struct place_opts po;
    const char *beside[PL_COLOC_MAX_APPS - 1];
    unsigned nbeside;
    const char *profiles[16]; /* --check: profile sets, one report each */
    unsigned nprofiles;
    const char *half;
    const struct pl_pred_rule *rule;
    double qos;
    unsigned long seed;
    int check, fit, have_qos, have_half, have_rule, have_seed;
};

/* --rule RULE: one of the rules pl_check.h knows */
static int set_rule(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    if ((((struct predict_args *)opts)->rule = pl_pred_rule_find(arg)))
        return 0;
    char known[512] = "";
    for (unsigned k = 0; k < pl_pred_nrules; k++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", pl_pred_rules[k].name);
    return ib_why(why, len, -EINVAL, "--rule '%s': unknown (known: %s)", arg, known);
}

static const char *const predict_halves[] = {"A", "B", "all", NULL};

static int cmd_place_predict(void *opts, int argc, char **argv, int first)
{
    static const char cmd[] = "place predict";
    const struct predict_args *a = opts;
    char *paths[PL_COLOC_MAX_APPS];
    unsigned n = 1 + a->nbeside; /* paths[0]: the application */
    for (unsigned i = 0; i < a->nbeside; i++)
        paths[1 + i] = (char *)a->beside[i];
    int json = a->po.json, check = a->check, fit = a->fit;
    int half = !strcmp(a->half, "all") ? -1 : !strcmp(a->half, "B");
    const struct pl_pred_rule *rule = a->rule;
    if (check) {
        if (n > 1)
            return cli_fail(IB_EXIT_USAGE, cmd, "--check reads co-run records: --beside does not apply");
        if (!a->nprofiles)
            return cli_fail(IB_EXIT_USAGE, cmd, "--check needs --profiles DIR (the records' programs' profiles)");
        if (first >= argc)
            return cli_fail(IB_EXIT_USAGE, cmd, "--check: one or more co-run records expected");
        if (fit && a->have_rule)
            return cli_fail(IB_EXIT_USAGE, cmd, "--fit selects the rule: --rule does not apply with it");
        const struct place_check_args ca = {.dirs = a->profiles, .ndirs = a->nprofiles, .qos = a->qos, .json = json,
                                            .fit = fit, .half = half, .rule = fit ? NULL : rule, .seed = a->seed};
        return place_predict_check(cmd, &ca, argv + first, (unsigned)(argc - first));
    }
    if (a->nprofiles || a->have_qos || a->have_half || fit || a->have_seed)
        return cli_fail(IB_EXIT_USAGE, cmd, "--%s applies only with --check",
                        a->nprofiles ? "profiles"
                        : a->have_qos ? "qos"
                        : a->have_half ? "half"
                        : fit          ? "fit"
                                       : "seed");
    if (argc - first != 1)
        return cli_fail(IB_EXIT_USAGE, cmd, "one application profile expected, got %d", argc - first);
    if (n < 2)
        return cli_fail(IB_EXIT_USAGE, cmd, "--beside FILE expected (a co-runner's profile)");
    paths[0] = argv[first];
    struct profile *p;
    int rc = read_profiles(cmd, paths, n, &p);
    if (rc)
        return rc;
    const struct profile *others[PL_COLOC_MAX_APPS];
    for (unsigned i = 1; i < n; i++)
        others[i - 1] = &p[i];
    double rel = pl_predict(&p[0], others, n - 1, rule, NULL);
    struct pl_wm_pred wm = {0}; /* the model's bounds and why (rule windows) */
    if (rule->windows && pl_wm_predict(&p[0], others, n - 1, rule->min ? PL_WM_MIN : PL_WM_PRODUCT, NULL, &wm) < 0) {
        free_profiles(p, n);
        return cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    }
    json_t *doc = json_object(), *res = json_array(), *beside = json_array();
    for (unsigned i = 1; i < n; i++)
        json_array_append_new(beside, json_pack("{s:s,s:s}", "name", name_of(&p[i]), "file", paths[i]));
    for (unsigned i = 0; i < p[0].nsois; i++) {
        const struct profile_soi *s = &p[0].sois[i];
        if (s->status != PROFILE_MEASURED)
            continue;
        /* the windows rule's pressure varies by window: no one figure (its why says what pressed) */
        const double x = rule->windows ? NAN : pl_pred_pressure(others, n - 1, s->soi, rule);
        json_array_append_new(res, json_pack("{s:s,s:o,s:f}", "name", s->soi, "pressure", num_or_null(x), "relative",
                                             pl_predict(&p[0], others, n - 1, rule, s->soi)));
    }
    json_object_set_new(doc, "command", json_string(cmd));
    json_object_set_new(doc, "application", json_pack("{s:s,s:s,s:o}", "name", name_of(&p[0]), "file", paths[0],
                                                      "qos", num_or_null(p[0].qos)));
    json_object_set_new(doc, "beside", beside);
    json_object_set_new(doc, "resources", res);
    json_object_set_new(doc, "rule", json_string(rule->name));
    json_object_set_new(doc, "relative", json_real(rel));
    if (rule->windows) {
        json_object_set_new(doc, "lo", json_real(wm.lo));
        json_object_set_new(doc, "hi", json_real(wm.hi));
        json_object_set_new(doc, "decision", json_string(pl_wm_decision_name(pl_wm_decide(&wm, pl_wm_qos(&p[0])))));
        json_object_set_new(doc, "why", json_string(wm.why));
    }
    json_object_set_new(doc, "meets_qos", isfinite(p[0].qos) ? json_boolean(rel >= p[0].qos) : json_null());
    if (json) {
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, cmd, "cannot write JSON");
    } else {
        printf("%s beside", TTY_TEXT(name_of(&p[0])));
        for (unsigned i = 1; i < n; i++)
            printf("%s %s", i > 1 ? "," : "", TTY_TEXT(name_of(&p[i])));
        printf("\n\n%-14s %9s %9s\n%-14s %9s %9s\n", "resource", "pressure", "relative", "--------", "--------",
               "--------");
        size_t k;
        json_t *row;
        json_array_foreach(res, k, row)
        {
            const json_t *pr = json_object_get(row, "pressure");
            char pb[16];
            snprintf(pb, sizeof pb, json_is_number(pr) ? "%.1f" : "-", json_number_value(pr));
            printf("%-14s %9s %9.3f\n", TTY_TEXT(json_string_value(json_object_get(row, "name"))), pb,
                   json_real_value(json_object_get(row, "relative")));
        }
        printf("\npredicted relative performance %.3f", rel);
        if (rule->windows)
            printf(" [%.3f, %.3f]", wm.lo, wm.hi);
        if (isfinite(p[0].qos))
            printf(" (%s its QoS %.2f)", rel >= p[0].qos ? "meets" : "under", p[0].qos);
        printf("\n");
        if (rule->windows)
            printf("decision: %s; %s\n", pl_wm_decision_name(pl_wm_decide(&wm, pl_wm_qos(&p[0]))), TTY_TEXT(wm.why));
    }
    json_decref(doc);
    free_profiles(p, n);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt pair_opts[] = {PLACE_COLOC_OPTS(struct pair_args), PLACE_OPT_JSON(struct pair_args)};

const struct cli_cmd cli_cmd_place_pair = {
    .name = "place pair",
    CLI_RUN(cmd_place_pair, struct pair_args),
    .summary = "may these applications share a machine: per-resource safety both ways, on profiles",
    .usage = "usage: ibench place pair A.json B.json [C.json ...] [--margin M] [--unknown pessimistic|optimistic]\n"
             "                         [--refuse likely|established|uncertain] [--decide model|headroom] [--json]\n\n",
    .about = "May these applications share a machine?  Each member's relative performance beside all the others is\n"
             "predicted by the model (the co-runners' pressure window by window, the member's curves and burst\n"
             "response, the mean over windows) with a pessimistic and an optimistic bound.  Unsafe when a member's\n"
             "optimistic bound is under its QoS line (a break established beyond the profiles' uncertainty); safe\n"
             "when every pessimistic bound meets it; else uncertain: not refused, ranked after safe groups, and said\n"
             "why.  The fit (the lowest member prediction) ranks groups: larger is better.  The headroom rule's\n"
             "cells (per resource: tolerated - margin - the others' caused) are shown as explanation; --decide\n"
             "headroom decides by them, the rule before 1.7 (docs/placement.md).\n\n",
    .more = "\nExit 0 safe, uncertain or unsafe alike (the verdict is the answer), 2 bad input.\n",
    CLI_OPTS(pair_opts),
    .args = CLI_ARGS_ANY,
};

#define PA struct predict_args
static const struct cli_opt predict_table[] = {
    {CLI_LIST("beside", "FILE", PA, beside, nbeside, "a co-runner's profile (repeat for several)")},
    {CLI_CUSTOM("rule", "RULE", PA, rule, set_rule,
                "windows (the model that decides, by window; windows-min: the worst resource\n"
                "of a window), or product|min (over resources), flat|extend (beyond a curve's\n"
                "last point), dist|any (caused figures counted: distinguishable from 0 only, or\n"
                "every one), joined by '-', e.g. min-extend-dist (product-flat-dist: before 1.7)"),
     .def = PL_PRED_DEFAULT, .have = CLI_HAVE(PA, have_rule)},
    {CLI_FLAG("check", PA, check, "the arguments are co-run records")},
    {CLI_LIST("profiles", "DIR", PA, profiles, nprofiles,
              "where the records' programs' profiles are (NAME.json); repeat for several\n"
              "profile sets of the same programs: one report per set")},
    {CLI_DOUBLE("qos", "Q", PA, qos, 0, 1, "the QoS line for safe/unsafe (0.95: at most 5 % slower)"),
     .flags = CLI_OPT_GT_MIN, .def = "0.95", .have = CLI_HAVE(PA, have_qos)},
    {CLI_CHOICE("half", "H", PA, half, predict_halves,
                "only the records of half A or B of the held-out split (the 32-bit FNV-1a hash\n"
                "of \"A--B\", the programs' names: even A, odd B), or all"),
     .def = "all", .have = CLI_HAVE(PA, have_half)},
    {CLI_FLAG("fit", PA, fit,
              "score every rule on these records and report the one of lowest mean absolute\n"
              "error (fit on one half, then --rule it on the other: docs/placement.md)")},
    {CLI_ULONG("seed", "S", PA, seed, 0, 9223372036854775807.0,
               "the seed of the paired bootstrap of the gain in mean absolute error over\n"
               "each baseline (" CLI_STR_OF(PL_BOOT_RESAMPLES) " resamples)"),
     .def = CLI_STR_OF(PL_BOOT_SEED), .have = CLI_HAVE(PA, have_seed)},
    PLACE_OPT_JSON(PA),
};
#undef PA

const struct cli_cmd cli_cmd_place_predict = {
    .name = "place predict",
    CLI_RUN(cmd_place_predict, struct predict_args),
    .summary = "an application's relative performance beside others, by the model (--check: against co-runs)",
    .usage = "usage: ibench place predict A.json --beside B.json [--beside C.json ...] [--rule RULE] [--json]\n"
             "       ibench place predict --check RECORD.json... --profiles DIR [--profiles DIR2 ...] [--qos Q]\n"
             "                            [--half A|B|all] [--rule RULE | --fit] [--seed S] [--json]\n\n",
    .about = "A's relative performance beside co-runners, from the profiles.  The default rule (" PL_PRED_DEFAULT ") is "
             "the model\n"
             "place pair decides by: the co-runners' pressure window by window (their usage over time as a share of\n"
             "A's capacity, else their caused figures distinguishable from 0), A's curve and burst response per\n"
             "resource, the product over resources, the mean over windows, with pessimistic and optimistic bounds.\n"
             PL_PRED_TRUTH " is the fleet simulator's truth model (the default before 1.7): the product over A's\n"
             "measured SoIs of its curve at the co-runners' summed caused figures.  1.0 = as fast as alone.\n\n"
             "With --check: do profiles predict on this machine?  Each co-run record (ibench corun --out) is predicted\n"
             "from DIR/<A's name>.json beside DIR/<B's name>.json and set against what was measured; overall, the\n"
             "rule and the constant predictor 1.0 (\"no interference\") are scored alike: mean absolute error, rank\n"
             "correlation, the share within 2 standard errors of the measurement, and the confusion matrix at the QoS\n"
             "line with precision and recall for \"unsafe\", and how often the model's bounds hold the\n"
             "measurement; then each resource alone, beside the constant; a second baseline, the mean measured\n"
             "per group (B I/O-bound or not), each half of the split fitted on the other; the decisions place pair\n"
             "makes on each pair against the measured truth (break, safe, unclear), beside the baselines'; and the\n"
             "gain in mean absolute error over each baseline with its paired bootstrap interval (95 %), on the\n"
             "held-out half B and on all records.  One report per --profiles set.\n\n",
    CLI_OPTS(predict_table),
    .args = CLI_ARGS_ANY,
};
