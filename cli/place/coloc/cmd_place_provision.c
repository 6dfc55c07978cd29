/* cmd_place_provision.c - `ibench place provision`: which resources an application presses hardest and tolerates
 * least, and which machine types of a catalogue would relieve them (placement/coloc/pl_provision.h; docs/placement.md,
 * "Provisioning advice"). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_provision.h"
#include "place.h"
#include "render.h"

#define CMD "place provision"

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

struct provision_args {
    struct place_opts po;
    const char *catalog;
    unsigned long top;
};

static int cmd_place_provision(void *opts, int argc, char **argv, int first)
{
    const struct provision_args *args = opts;
    const char *catalog = args->catalog;
    unsigned long top = args->top;
    int json = args->po.json;
    if (argc - first != 1)
        return cli_fail(IB_EXIT_USAGE, CMD, "one profile expected, got %d", argc - first);
    const char *path = argv[first];
    char why[512];
    struct profile p;
    int e = profile_read(path, &p, why, sizeof why);
    if (e < 0)
        return cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    cli_profile_warn(CMD, &p);
    struct pl_catalog cat = {0};
    if (catalog && (e = pl_catalog_read(catalog, &cat, why, sizeof why)) < 0) {
        profile_free(&p);
        return cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    }
    struct pl_prov pr;
    int rc = 0;
    e = pl_provision(&p, catalog ? &cat : NULL, (unsigned)top, &pr, why, sizeof why);
    if (e < 0) {
        rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
        goto out;
    }
    json_t *doc = json_object(), *res = json_array(), *adv = json_array(), *skipped = json_array();
    json_object_set_new(doc, "command", json_string(CMD));
    json_object_set_new(doc, "application", json_pack("{s:s,s:s}", "name", p.name ? p.name : "?", "file", path));
    json_object_set_new(doc, "threshold", json_real(PL_PROV_THRESHOLD));
    for (unsigned i = 0; i < pr.nres; i++) {
        const struct pl_prov_res *r = &pr.res[i];
        if (!r->measured) {
            json_array_append_new(skipped, json_pack("{s:s,s:s}", "soi", r->soi, "reason", r->reason ? r->reason : ""));
            continue;
        }
        json_array_append_new(res, json_pack("{s:i,s:s,s:o,s:o,s:b,s:f,s:f,s:f,s:f,s:b}", "rank", (int)i + 1, "soi",
                                             r->soi, "caused", num(r->caused), "caused_se", num(r->caused_se),
                                             "distinguishable", r->distinguishable, "tolerated", r->tolerated,
                                             "pressure", r->pressure, "sensitivity", r->sensitivity, "score",
                                             r->score, "candidate", r->candidate));
    }
    for (unsigned a = 0; a < pr.nadv; a++) {
        const struct pl_catalog_type *t = &cat.t[pr.adv[a].type];
        json_t *rel = json_array();
        for (unsigned k = 0; k < pr.top; k++) {
            double f = pl_catalog_factor(t, pr.res[k].soi);
            if (f > 1)
                json_array_append_new(rel, json_pack("{s:s,s:f,s:f}", "soi", pr.res[k].soi, "factor", f,
                                                     "pressure_after", pr.res[k].pressure * 100 / f));
        }
        json_array_append_new(adv, json_pack("{s:s,s:f,s:i,s:f,s:o}", "type", t->name, "cost", t->cost, "relieved",
                                             (int)pr.adv[a].relieved, "gain", pr.adv[a].gain, "relieves", rel));
    }
    json_object_set_new(doc, "resources", res);
    json_object_set_new(doc, "not_measured", skipped);
    json_object_set_new(doc, "top", json_integer(pr.top));
    json_object_set_new(doc, "catalog", catalog ? json_pack("{s:s,s:s}", "file", catalog, "baseline", cat.baseline)
                                                : json_null());
    json_object_set_new(doc, "advice", adv);
    if (json) {
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, CMD, "cannot write JSON");
    } else {
        printf("%s: resources ranked by pressure + sensitivity (candidates for relief score >= %.2f)\n\n",
               p.name ? TTY_TEXT(p.name) : "?", PL_PROV_THRESHOLD);
        printf("%4s  %-12s %16s %10s %6s  %s\n", "rank", "resource", "caused", "tolerated", "score", "");
        printf("%4s  %-12s %16s %10s %6s\n", "----", "--------", "------", "---------", "-----");
        for (unsigned i = 0; i < pr.nranked; i++) {
            const struct pl_prov_res *r = &pr.res[i];
            char cs[48];
            if (isfinite(r->caused))
                snprintf(cs, sizeof cs, "%.1f%s%.1f%s", r->caused, isfinite(r->caused_se) ? " +- " : "",
                         isfinite(r->caused_se) ? r->caused_se : 0.0, r->distinguishable ? "" : " n.d.");
            else
                snprintf(cs, sizeof cs, "-");
            if (!isfinite(r->caused_se) && isfinite(r->caused))
                snprintf(cs, sizeof cs, "%.1f", r->caused);
            printf("%4u  %-12s %16s %10.1f %6.2f  %s\n", i + 1, TTY_TEXT(r->soi), cs, r->tolerated, r->score,
                   r->candidate ? (i < pr.top ? "top candidate" : "candidate") : "");
        }
        if (pr.nranked < pr.nres) {
            printf("\nnot measured:");
            for (unsigned i = pr.nranked; i < pr.nres; i++)
                printf("%s %s", i > pr.nranked ? "," : "", TTY_TEXT(pr.res[i].soi));
            printf("\n");
        }
        if (!catalog) {
            printf("\n(--catalog FILE: the machine types that would relieve the top candidates)\n");
        } else if (!pr.nadv) {
            printf("\nno type of %s relieves the top %u candidate(s)\n", catalog, pr.top);
        } else {
            printf("\nmachine types of %s (against %s) that relieve the top %u candidate(s), best first:\n", catalog,
                   TTY_TEXT(cat.baseline), pr.top);
            for (unsigned a = 0; a < pr.nadv; a++) {
                const struct pl_catalog_type *t = &cat.t[pr.adv[a].type];
                printf("  %u. %s (cost %.2f): relieves %u:", a + 1, TTY_TEXT(t->name), t->cost, pr.adv[a].relieved);
                for (unsigned k = 0, n = 0; k < pr.top; k++) {
                    double f = pl_catalog_factor(t, pr.res[k].soi);
                    if (f > 1)
                        printf("%s %s x%.3g (pressure %.1f -> %.1f)", n++ ? "," : "", TTY_TEXT(pr.res[k].soi), f,
                               pr.res[k].pressure * 100, pr.res[k].pressure * 100 / f);
                }
                printf("\n");
            }
        }
    }
    json_decref(doc);
    pl_prov_free(&pr);
out:
    pl_catalog_free(&cat);
    profile_free(&p);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt provision_table[] = {
    {CLI_STR("catalog", "FILE", struct provision_args, catalog,
             "machine types (docs/placement.md, \"Provisioning advice\"; examples/catalog.json)")},
    {CLI_ULONG("top", "N", struct provision_args, top, 1, 64, "how many candidates the advice is for"), .def = "3"},
    PLACE_OPT_JSON(struct provision_args),
};

const struct cli_cmd cli_cmd_place_provision = {
    .name = "place provision",
    CLI_RUN(cmd_place_provision, struct provision_args),
    .summary = "the resources a profile presses and tolerates least, and machine types to relieve",
    .usage = "usage: ibench place provision PROFILE [--catalog FILE] [--top N] [--json]\n\n",
    .about = "The resources (SoIs) the application presses hardest and tolerates least, ranked by score = pressure\n"
             "(caused / 100, 0 when not told apart from 0) + sensitivity (1 - tolerated / 100); those scoring\n"
             CLI_STR_OF(PL_PROV_THRESHOLD) " or more are candidates for relief.  With a catalogue, the machine types "
             "that relieve the top N\n"
             "candidates (capacity above the baseline's), best first, with the pressure each would leave.\n\n",
    CLI_OPTS(provision_table),
    .args = CLI_ARGS_ANY,
};
