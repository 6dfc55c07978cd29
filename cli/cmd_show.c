/* cmd_show.c - `ibench show PROFILE` (a table) and `ibench plot PROFILE` (a chart). docs/profile.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "output.h"
#include "plot.h"
#include "profile.h"

/* ---- show and plot ------------------------------------------------------------------------------------------ */

static int load_arg(const char *cmd, int argc, char **argv, json_t **doc, const char **path, const char **plot_out,
                    int *json)
{
    static const struct option lo[] = {{"json", no_argument, 0, 'j'}, {"out", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'j':
            if (!json)
                return cli_fail(IB_EXIT_USAGE, cmd, "unknown option '--json'");
            *json = 1;
            break;
        case 'o':
            if (!plot_out)
                return cli_fail(IB_EXIT_USAGE, cmd, "unknown option '--out'");
            *plot_out = optarg;
            break;
        case 'h':
            printf(plot_out ? "usage: ibench plot PROFILE [--out FILE.png|FILE.svg]\n\nDraws tolerated and caused "
                              "interference per SoI (default: PROFILE with .png instead of .json).\n"
                            : "usage: ibench show PROFILE [--json]\n\nPrints a profile as a table: per SoI, "
                              "tolerated and caused interference, the bracket and confidence.\n");
            return -1;
        default: return cli_fail(IB_EXIT_USAGE, cmd, "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_fail(IB_EXIT_USAGE, cmd, "give one profile file");
    *path = argv[optind];
    char why[512];
    int rc = profile_load(*path, doc, why, sizeof(why));
    if (rc < 0)
        return cli_fail(IB_EXIT_USAGE, cmd, "%s", why);
    return 0;
}

int cmd_show(int argc, char **argv)
{
    json_t *doc = NULL;
    const char *path = NULL;
    int json = 0;
    int rc = load_arg("show", argc, argv, &doc, &path, NULL, &json);
    if (rc != 0)
        return rc < 0 ? IB_EXIT_OK : rc;
    if (json) {
        out_json(stdout, doc);
        json_decref(doc);
        return IB_EXIT_OK;
    }
    json_t *t = json_object_get(doc, "target"), *mt = json_object_get(doc, "metric"), *b = json_object_get(doc, "baseline");
    printf("profile   %s (%s, %s)\n", json_string_value(json_object_get(t, "name")),
           json_string_value(json_object_get(doc, "version")), json_string_value(json_object_get(doc, "created")));
    if (json_string_value(json_object_get(t, "command")))
        printf("target    %s\n", json_string_value(json_object_get(t, "command")));
    else
        printf("target    pid %d\n", (int)json_integer_value(json_object_get(t, "pid")));
    if (json_string_value(json_object_get(t, "load")))
        printf("load      %s\n", json_string_value(json_object_get(t, "load")));
    printf("metric    %s (%s, %s is better); QoS: %.0f %% of solo\n", json_string_value(json_object_get(mt, "spec")),
           json_string_value(json_object_get(mt, "unit")),
           json_is_true(json_object_get(mt, "higher_is_better")) ? "higher" : "lower",
           100 * json_number_value(json_object_get(doc, "qos")));
    printf("baseline  %.4g before, %.4g after (drift %+.1f %%, spread %.1f %%); confidence %s\n",
           json_number_value(json_object_get(json_object_get(b, "before"), "median")),
           json_number_value(json_object_get(json_object_get(b, "after"), "median")),
           json_number_value(json_object_get(b, "drift_pct")), json_number_value(json_object_get(b, "noise_pct")),
           json_string_value(json_object_get(b, "confidence")));
    printf("machine   %s\n\n", json_string_value(json_object_get(json_object_get(doc, "machine"), "cpu_model")));
    printf("%-13s %9s %13s %7s  %s\n", "SoI", "tolerated", "bracket", "caused", "curve (intensity: relative perf)");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "sois"), i, e)
    {
        const char *st = json_string_value(json_object_get(e, "status"));
        printf("%-13s", json_string_value(json_object_get(e, "soi")));
        if (!st || strcmp(st, "measured")) {
            printf(" skipped: %s\n", json_string_value(json_object_get(e, "reason")));
            continue;
        }
        json_t *br = json_object_get(e, "tolerated_bracket");
        char bb[32];
        snprintf(bb, sizeof(bb), "[%g, %g]", json_number_value(json_array_get(br, 0)),
                 json_number_value(json_array_get(br, 1)));
        json_t *cz = json_object_get(e, "caused");
        printf(" %9.1f %13s", json_number_value(json_object_get(e, "tolerated")), bb);
        if (json_is_number(cz))
            printf(" %7.1f ", json_number_value(cz));
        else
            printf(" %7s ", "-");
        size_t k;
        json_t *p;
        json_array_foreach(json_object_get(e, "curve"), k, p)
        {
            if (json_is_true(json_object_get(p, "again")))
                printf(" again:%.2f%s", json_number_value(json_object_get(p, "relative")),
                       json_is_true(json_object_get(p, "meets_qos")) ? "" : "x");
            else
                printf(" %g:%.2f%s", json_number_value(json_object_get(p, "intensity")),
                       json_number_value(json_object_get(p, "relative")),
                       json_is_true(json_object_get(p, "meets_qos")) ? "" : "x");
        }
        printf("\n");
    }
    int reach_hdr = 0; /* the reach checks of the SoIs that were ramped (a skipped one says it in its reason) */
    json_array_foreach(json_object_get(doc, "sois"), i, e)
    {
        json_t *r = json_object_get(e, "reach");
        const char *st = json_string_value(json_object_get(e, "status"));
        if (!json_is_object(r) || !st || strcmp(st, "measured"))
            continue;
        if (!reach_hdr++)
            printf("\nreach (a probe on the target's CPU beside the SoI at 0 / 100 %%):\n");
        json_t *ef = json_object_get(r, "effect_pct"), *se = json_object_get(r, "se_pct");
        printf("  %-12s %s", json_string_value(json_object_get(e, "soi")),
               json_string_value(json_object_get(r, "verdict")));
        if (json_is_number(ef) && json_is_number(se))
            printf(": %s %+.1f +- %.1f %%", json_string_value(json_object_get(r, "probe")), json_number_value(ef),
                   json_number_value(se));
        else if (json_is_string(json_object_get(r, "reason")))
            printf(": %s", json_string_value(json_object_get(r, "reason")));
        printf("\n");
    }
    printf("\ntolerated: the highest intensity that kept the metric within QoS (100: never broke); bracket: last\n"
           "intensity that met QoS and first that broke it; caused: the share of an SoI's own work rate the target\n"
           "took at the reference intensity (-: not measurable, the profile says why). curve: x marks a point that\n"
           "broke QoS; again: the same point measured once more after it broke (the ramp goes by the second).\n");
    json_decref(doc);
    return IB_EXIT_OK;
}

int cmd_plot(int argc, char **argv)
{
    json_t *doc = NULL;
    const char *path = NULL, *out = NULL;
    int rc = load_arg("plot", argc, argv, &doc, &path, &out, NULL);
    if (rc != 0)
        return rc < 0 ? IB_EXIT_OK : rc;
    char def[1100];
    if (!out) {
        snprintf(def, sizeof(def), "%s", path);
        char *dot = strrchr(def, '.');
        if (dot && !strcmp(dot, ".json"))
            *dot = 0;
        strncat(def, ".png", sizeof(def) - strlen(def) - 1);
        out = def;
    }
    char why[512];
    rc = plot_profile(out, doc, why, sizeof(why));
    json_decref(doc);
    if (rc < 0)
        return cli_fail(rc == -EINVAL ? IB_EXIT_USAGE : IB_EXIT_FAIL, "plot", "%s", why);
    fprintf(stderr, "ibench plot: wrote %s\n", out);
    return IB_EXIT_OK;
}
