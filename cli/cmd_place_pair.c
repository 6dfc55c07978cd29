/* cmd_place_pair.c - `ibench place pair`: may these applications share a machine (placement/pl_coloc.h), and
 * `ibench place predict`: how one would fare beside others by the fleet simulator's truth model (pl_sim.h).
 * docs/placement.md, "Co-location on profiles". */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
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
#include "place.h"
#include "render.h"

enum { OPT_MARGIN = 1, OPT_UNKNOWN, OPT_BESIDE, OPT_CHECK, OPT_PROFILES, OPT_QOS, OPT_REFUSE };

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

static int pair_usage(void)
{
    printf("usage: ibench place pair A.json B.json [C.json ...] [--margin M] [--unknown pessimistic|optimistic]\n"
           "                         [--refuse established|uncertain] [--json]\n\n"
           "May these applications share a machine?  Per resource (SoI), what each tolerates, what the others cause\n"
           "together (summed, capped at 100 %%), and the headroom = tolerated - margin - others.  Safe when every\n"
           "headroom is >= 0, in every direction.  Unsafe only when a break is established beyond the profiles'\n"
           "uncertainty (the others' caused at value - 2 se against the tolerated bracket's high end); a negative\n"
           "headroom that is not established is uncertain: not refused, ranked after safe groups, and said why.\n"
           "The fit (the slack the binding members keep, summed over resources) ranks groups: larger is better.\n\n"
           "  --margin M         points kept free under every measured tolerance below 100 (default %g)\n"
           "  --unknown MODE     what a skipped SoI, an unmeasurable caused figure or a resource missing from a\n"
           "                     profile counts as: pessimistic (default: caused 100, tolerated 0, a caused figure\n"
           "                     within 2 se of 0 as value + 2 se) or optimistic (caused 0, tolerated 100)\n"
           "  --refuse RULE      established (default): refuse only a break beyond the profiles' uncertainty;\n"
           "                     uncertain: refuse every negative headroom, as before (docs/placement.md)\n"
           "  --json             JSON (docs/schema/placement-v1.schema.json) instead of a table\n\n"
           "Exit 0 safe, uncertain or unsafe alike (the verdict is the answer), 2 bad input.\n",
           PL_COLOC_MARGIN);
    return IB_EXIT_OK;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *pair_doc(char *const *paths, const struct profile *p, const struct pl_coloc_result *r,
                        const struct pl_coloc_opts *o)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "command", json_string("place pair"));
    json_object_set_new(doc, "margin", json_real(o->margin));
    json_object_set_new(doc, "unknown", json_string(o->pessimistic ? "pessimistic" : "optimistic"));
    json_object_set_new(doc, "refuse", json_string(o->established ? "established" : "uncertain"));
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
            if (c->headroom < 0 && !c->uncertain)
                json_array_append_new(deciding, json_pack("{s:s,s:s,s:f}", "resource", r->res[k], "application",
                                                          name_of(&p[a]), "headroom", c->headroom));
        }
        json_array_append_new(res, json_pack("{s:s,s:o}", "name", r->res[k], "cells", cells));
    }
    json_object_set_new(doc, "resources", res);
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
    printf("%u applications, margin %g points, unknowns %s, refusing %s\n\n", r->napps, o->margin,
           o->pessimistic ? "pessimistic" : "optimistic",
           o->established ? "established breaks only" : "every negative headroom");
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
                   c->uncertain ? "  uncertain" : c->headroom < 0 ? "  breaks" : "");
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
    if (r->verdict == PL_COLOC_UNCERTAIN)
        printf("\nverdict: uncertain (not refused: no break established beyond the profiles' uncertainty), fit %.1f: "
               "%s\n", r->fit, TTY_TEXT(r->uncertain));
    else if (r->safe)
        printf("\nverdict: safe, fit %.1f (slack kept by the binding members, summed over resources)\n", r->fit);
    else
        printf("\nverdict: unsafe: %s\n", TTY_TEXT(r->deciding));
    for (unsigned i = 0; i < r->nwarnings; i++)
        printf("warning: %s\n", TTY_TEXT(r->warnings[i]));
}

int cmd_place_pair(int argc, char **argv)
{
    static const char cmd[] = "place pair";
    static const struct option lo[] = {{"margin", required_argument, 0, OPT_MARGIN},
                                       {"unknown", required_argument, 0, OPT_UNKNOWN},
                                       {"refuse", required_argument, 0, OPT_REFUSE},
                                       {"json", no_argument, 0, PLACE_OPT_JSON},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    struct pl_coloc_opts o = {.margin = PL_COLOC_MARGIN, .pessimistic = true, .established = true};
    int json = 0, c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'h': return pair_usage();
        case OPT_MARGIN:
            if (parse_double(optarg, &o.margin) < 0 || !(o.margin >= 0 && o.margin <= 100))
                return cli_fail(IB_EXIT_USAGE, cmd, "--margin '%s': a number of points in 0-100 expected", optarg);
            break;
        case OPT_UNKNOWN:
            if (strcmp(optarg, "pessimistic") && strcmp(optarg, "optimistic"))
                return cli_fail(IB_EXIT_USAGE, cmd, "--unknown '%s': pessimistic or optimistic expected", optarg);
            o.pessimistic = !strcmp(optarg, "pessimistic");
            break;
        case OPT_REFUSE:
            if (place_parse_refuse(optarg, &o.established) < 0)
                return cli_fail(IB_EXIT_USAGE, cmd, "--refuse '%s': established or uncertain expected", optarg);
            break;
        case PLACE_OPT_JSON: json = 1; break;
        default: return cli_fail(IB_EXIT_USAGE, cmd, "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    unsigned n = (unsigned)(argc - optind);
    if (n < 2 || n > PL_COLOC_MAX_APPS)
        return cli_fail(IB_EXIT_USAGE, cmd, "2 to %d profiles expected, got %u", PL_COLOC_MAX_APPS, n);
    struct profile *p;
    int rc = read_profiles(cmd, argv + optind, n, &p);
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
            json_t *doc = pair_doc(argv + optind, p, &r, &o);
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

static int predict_usage(void)
{
    printf("usage: ibench place predict A.json --beside B.json [--beside C.json ...] [--json]\n"
           "       ibench place predict --check RECORD.json... --profiles DIR [--qos Q] [--json]\n\n"
           "A's relative performance beside co-runners by the fleet simulator's truth model, without its noise:\n"
           "the product over A's measured SoIs of A's sensitivity curve at the pressure the co-runners cause\n"
           "together there (their known, positive caused figures summed, capped at 100).  1.0 = as fast as alone.\n\n"
           "With --check: do profiles predict on this machine?  Each co-run record (ibench corun --out) is predicted\n"
           "from DIR/<A's name>.json beside DIR/<B's name>.json and set against what was measured; overall, the\n"
           "model and the constant predictor 1.0 (\"no interference\") are scored alike: mean absolute error, rank\n"
           "correlation, the share within 2 standard errors of the measurement, and the confusion matrix at the QoS\n"
           "line with precision and recall for \"unsafe\".\n\n"
           "  --beside FILE      a co-runner's profile (repeat for several)\n"
           "  --check            the arguments are co-run records\n"
           "  --profiles DIR     where the records' programs' profiles are (NAME.json)\n"
           "  --qos Q            the QoS line for safe/unsafe (default 0.95: at most 5 %% slower)\n"
           "  --json             JSON (docs/schema/placement-v1.schema.json) instead of a table\n");
    return IB_EXIT_OK;
}

/* One profile of DIR/NAME.json: 0, or an exit code after one line. */
static int profile_of(const char *cmd, const char *dir, const char *name, struct profile *p, char *path, size_t plen)
{
    if (!name[0] || strchr(name, '/') || snprintf(path, plen, "%s/%s.json", dir, name) >= (int)plen)
        return cli_fail(IB_EXIT_USAGE, cmd, "no profile can be named for program '%s' in %s", name, dir);
    char why[512];
    int rc = profile_read(path, p, why, sizeof why);
    if (rc < 0)
        return cli_fail(rc == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, cmd, "%s", why);
    cli_profile_warn(cmd, p);
    return 0;
}

static json_t *stats_json(const struct pl_check_stats *s)
{
    return json_pack("{s:i,s:o,s:o,s:i,s:{s:i,s:i,s:i,s:i},s:o,s:o}", "n", (int)s->n, "mae", num_or_null(s->mae),
                     "rank_corr", num_or_null(s->rank_corr), "within_2se", (int)s->within_2se, "confusion", "tp",
                     (int)s->tp, "fp", (int)s->fp, "fn", (int)s->fn, "tn", (int)s->tn, "precision",
                     num_or_null(s->precision), "recall", num_or_null(s->recall));
}

static void fmt3(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.3f", v);
    else
        snprintf(b, n, "-");
}

static void check_table(json_t *doc, const struct pl_check_stats *m, const struct pl_check_stats *k, double qos)
{
    printf("%-28s %-12s %-12s %9s %9s %7s %8s\n", "record", "A", "B", "predicted", "measured", "se", "error");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "records"), i, r)
    {
        double pr = json_real_value(json_object_get(r, "predicted")),
               me = json_real_value(json_object_get(r, "measured")), se = json_number_value(json_object_get(r, "se"));
        char sb[16];
        fmt3(sb, sizeof sb, json_is_number(json_object_get(r, "se")) ? se : NAN);
        const char *file = json_string_value(json_object_get(r, "file"));
        const char *base = strrchr(file, '/');
        printf("%-28.28s %-12.12s %-12.12s %9.3f %9.3f %7s %+8.3f%s\n", TTY_TEXT(base ? base + 1 : file),
               TTY_TEXT(json_string_value(json_object_get(r, "a"))),
               TTY_TEXT(json_string_value(json_object_get(r, "b"))), pr, me, sb, pr - me, me < qos ? "  unsafe" : "");
    }
    char a[16], b[16];
    printf("\n%u records; \"unsafe\" = relative below %.2f (measured: %u)\n\n%-30s %12s %14s\n", m->n, qos,
           m->tp + m->fn, "", "model", "constant 1.0");
    fmt3(a, sizeof a, m->mae), fmt3(b, sizeof b, k->mae);
    printf("%-30s %12s %14s\n", "mean absolute error", a, b);
    fmt3(a, sizeof a, m->rank_corr), fmt3(b, sizeof b, k->rank_corr);
    printf("%-30s %12s %14s\n", "rank correlation", a, b);
    snprintf(a, sizeof a, "%u/%u", m->within_2se, m->n), snprintf(b, sizeof b, "%u/%u", k->within_2se, k->n);
    printf("%-30s %12s %14s\n", "within 2 se of the measurement", a, b);
    snprintf(a, sizeof a, "%u/%u", m->tp, m->tp + m->fp), snprintf(b, sizeof b, "%u/%u", k->tp, k->tp + k->fp);
    printf("%-30s %12s %14s\n", "precision (unsafe)", a, b);
    snprintf(a, sizeof a, "%u/%u", m->tp, m->tp + m->fn), snprintf(b, sizeof b, "%u/%u", k->tp, k->tp + k->fn);
    printf("%-30s %12s %14s\n", "recall (unsafe)", a, b);
    printf("%-30s %12s %14s\n", "confusion tp fp fn tn", "", "");
    snprintf(a, sizeof a, "%u %u %u %u", m->tp, m->fp, m->fn, m->tn);
    snprintf(b, sizeof b, "%u %u %u %u", k->tp, k->fp, k->fn, k->tn);
    printf("%-30s %12s %14s\n", "", a, b);
    if (isfinite(m->mae) && isfinite(k->mae))
        printf("\nThe model's mean absolute error is %s the constant's on these records.\n",
               m->mae < k->mae ? "below" : m->mae > k->mae ? "ABOVE" : "equal to");
}

/* place predict --check: every record predicted and scored beside the constant predictor. */
static int predict_check(const char *cmd, char **recs, unsigned n, const char *dir, double qos, int json)
{
    struct pl_check_case *cases = calloc(n, sizeof *cases);
    json_t *doc = json_object(), *arr = json_array(), *warn = json_array();
    int rc = cases && doc ? 0 : cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    for (unsigned i = 0; rc == 0 && i < n; i++) {
        struct corun_record rec;
        char why[512], pa[4096], pb[4096];
        if (corun_read(recs[i], &rec, why, sizeof why) < 0) {
            rc = cli_fail(IB_EXIT_USAGE, cmd, "%s", why);
            break;
        }
        struct profile p[2];
        if ((rc = profile_of(cmd, dir, rec.a.name, &p[0], pa, sizeof pa)) == 0 &&
            (rc = profile_of(cmd, dir, rec.b.name, &p[1], pb, sizeof pb)) != 0)
            profile_free(&p[0]);
        if (rc == 0) {
            const struct profile *others[1] = {&p[1]};
            cases[i] = (struct pl_check_case){pl_sim_truth(&p[0], others, 1), rec.r.relative, rec.r.se};
            for (int k = 0; k < 2; k++) /* a prediction from another machine's profile is no test of this one */
                if (p[k].fingerprint && rec.fingerprint && strcmp(p[k].fingerprint, rec.fingerprint) != 0) {
                    char w[9300];
                    snprintf(w, sizeof w, "%s was measured on machine %s, %s profiled on %s", recs[i],
                             rec.fingerprint, k ? pb : pa, p[k].fingerprint);
                    json_array_append_new(warn, json_string(w));
                    if (!json)
                        fprintf(stderr, "ibench %s: warning: %s\n", cmd, TTY_TEXT(w));
                }
            json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:o}", "file", recs[i], "a",
                                                 rec.a.name, "b", rec.b.name, "a_profile", pa, "b_profile", pb,
                                                 "predicted", cases[i].predicted, "measured", cases[i].measured, "se",
                                                 num_or_null(cases[i].se)));
            profile_free(&p[0]);
            profile_free(&p[1]);
        }
        corun_free(&rec);
    }
    if (rc == 0) {
        struct pl_check_stats model, constant;
        pl_check_eval(cases, n, qos, 0, 0, &model);
        pl_check_eval(cases, n, qos, 1, 1.0, &constant);
        json_object_set_new(doc, "command", json_string("place predict --check"));
        json_object_set_new(doc, "qos", json_real(qos));
        json_object_set_new(doc, "records", arr);
        arr = NULL;
        json_object_set_new(doc, "model", stats_json(&model));
        json_object_set_new(doc, "constant", stats_json(&constant));
        json_object_set_new(doc, "warnings", warn);
        warn = NULL;
        if (json)
            rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, cmd, "cannot write JSON");
        else
            check_table(doc, &model, &constant, qos);
    }
    json_decref(arr);
    json_decref(warn);
    json_decref(doc);
    free(cases);
    return rc;
}

int cmd_place_predict(int argc, char **argv)
{
    static const char cmd[] = "place predict";
    static const struct option lo[] = {{"beside", required_argument, 0, OPT_BESIDE},
                                       {"json", no_argument, 0, PLACE_OPT_JSON},
                                       {"check", no_argument, 0, OPT_CHECK},
                                       {"profiles", required_argument, 0, OPT_PROFILES},
                                       {"qos", required_argument, 0, OPT_QOS},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    char *paths[PL_COLOC_MAX_APPS];
    unsigned n = 1; /* paths[0]: the application */
    int json = 0, c, check = 0;
    const char *dir = NULL, *qos_arg = NULL;
    double qos = 0.95;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'h': return predict_usage();
        case OPT_BESIDE:
            if (n == PL_COLOC_MAX_APPS)
                return cli_fail(IB_EXIT_USAGE, cmd, "at most %d co-runners", PL_COLOC_MAX_APPS - 1);
            paths[n++] = optarg;
            break;
        case PLACE_OPT_JSON: json = 1; break;
        case OPT_CHECK: check = 1; break;
        case OPT_PROFILES: dir = optarg; break;
        case OPT_QOS:
            qos_arg = optarg;
            if (parse_double(optarg, &qos) < 0 || !(qos > 0 && qos <= 1))
                return cli_fail(IB_EXIT_USAGE, cmd, "--qos '%s': a number in (0, 1]", optarg);
            break;
        default: return cli_fail(IB_EXIT_USAGE, cmd, "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (check) {
        if (n > 1)
            return cli_fail(IB_EXIT_USAGE, cmd, "--check reads co-run records: --beside does not apply");
        if (!dir)
            return cli_fail(IB_EXIT_USAGE, cmd, "--check needs --profiles DIR (the records' programs' profiles)");
        if (optind >= argc)
            return cli_fail(IB_EXIT_USAGE, cmd, "--check: one or more co-run records expected");
        return predict_check(cmd, argv + optind, (unsigned)(argc - optind), dir, qos, json);
    }
    if (dir || qos_arg)
        return cli_fail(IB_EXIT_USAGE, cmd, "--%s applies only with --check", dir ? "profiles" : "qos");
    if (argc - optind != 1)
        return cli_fail(IB_EXIT_USAGE, cmd, "one application profile expected, got %d", argc - optind);
    if (n < 2)
        return cli_fail(IB_EXIT_USAGE, cmd, "--beside FILE expected (a co-runner's profile)");
    paths[0] = argv[optind];
    struct profile *p;
    int rc = read_profiles(cmd, paths, n, &p);
    if (rc)
        return rc;
    const struct profile *others[PL_COLOC_MAX_APPS];
    for (unsigned i = 1; i < n; i++)
        others[i - 1] = &p[i];
    double rel = pl_sim_truth(&p[0], others, n - 1);
    json_t *doc = json_object(), *res = json_array(), *beside = json_array();
    for (unsigned i = 1; i < n; i++)
        json_array_append_new(beside, json_pack("{s:s,s:s}", "name", name_of(&p[i]), "file", paths[i]));
    for (unsigned i = 0; i < p[0].nsois; i++) {
        const struct profile_soi *s = &p[0].sois[i];
        if (s->status != PROFILE_MEASURED)
            continue;
        double x = pl_sim_pressure(others, n - 1, s->soi);
        json_array_append_new(res, json_pack("{s:s,s:f,s:f}", "name", s->soi, "pressure", x, "relative",
                                             pl_sim_curve(s, x)));
    }
    json_object_set_new(doc, "command", json_string(cmd));
    json_object_set_new(doc, "application", json_pack("{s:s,s:s,s:o}", "name", name_of(&p[0]), "file", paths[0],
                                                      "qos", num_or_null(p[0].qos)));
    json_object_set_new(doc, "beside", beside);
    json_object_set_new(doc, "resources", res);
    json_object_set_new(doc, "relative", json_real(rel));
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
            printf("%-14s %9.1f %9.3f\n", TTY_TEXT(json_string_value(json_object_get(row, "name"))),
                   json_real_value(json_object_get(row, "pressure")), json_real_value(json_object_get(row, "relative")));
        }
        printf("\npredicted relative performance %.3f", rel);
        if (isfinite(p[0].qos))
            printf(" (%s its QoS %.2f)", rel >= p[0].qos ? "meets" : "under", p[0].qos);
        printf("\n");
    }
    json_decref(doc);
    free_profiles(p, n);
    return rc;
}
