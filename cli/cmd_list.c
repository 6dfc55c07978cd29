/* cmd_list.c - `ibench list [--soi NAME] [--json|--csv]`: the registry, and one SoI's parameters. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "soi.h"

static json_t *soi_json(const struct soi_ops *ops)
{
    json_t *params = json_array();
    for (unsigned i = 0; i < soi_nopts(ops); i++) {
        const struct soi_opt *p = &ops->opts[i];
        char dv[32], mn[32], mx[32], values[160] = "";
        soi_opt_text(p, p->def, dv, sizeof(dv));
        json_t *row = json_pack("{s:s,s:s,s:s,s:s}", "name", p->name, "type", soi_otype_name(p->type), "help",
                                p->help, "default_text", dv);
        if (p->type == SOI_O_CHOICE) { /* the names it takes; a choice's default is its name */
            json_t *names = json_array();
            size_t at = 0;
            for (unsigned k = 0; p->choices[k]; k++) {
                json_array_append_new(names, json_string(p->choices[k]));
                int w = snprintf(values + at, sizeof(values) - at, "%s%s", k ? "|" : "", p->choices[k]);
                at = w < 0 || (size_t)w >= sizeof(values) - at ? sizeof(values) - 1 : at + (size_t)w;
            }
            json_object_set_new(row, "choices", names);
            json_object_set_new(row, "default", json_string(dv));
        } else { /* numbers, and the range as text a user could type back ("4K..16M", "off|on") */
            snprintf(values, sizeof(values), "%s%s%s", soi_opt_text(p, p->min, mn, sizeof(mn)),
                     p->type == SOI_O_BOOL ? "|" : "..", soi_opt_text(p, p->max, mx, sizeof(mx)));
            json_object_set_new(row, "min", json_real(p->min));
            json_object_set_new(row, "max", json_real(p->max));
            json_object_set_new(row, "default", json_real(p->def));
        }
        json_object_set_new(row, "values", json_string(values));
        if (p->has_quick) /* what ibench validate sets it to, to stay short and safe */
            json_object_set_new(row, "quick", json_string(soi_opt_text(p, p->quick, dv, sizeof(dv))));
        json_array_append_new(params, row);
    }
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "name", ops->name, "paper", ops->paper ? ops->paper : "",
                     "resource", ops->resource, "kind", soi_kind_name(ops->kind), "scope",
                     topo_scope_name(ops->scope), "summary", ops->summary, "params", params);
}

struct list_opts {
    const char *soi;
    int json, csv;
};

static int cmd_list(void *opts, int argc, char **argv, int first)
{
    const struct list_opts *o = opts;
    if (o->json && o->csv)
        return cli_fail(IB_EXIT_USAGE, "list", "--json and --csv exclude each other");
    enum out_fmt fmt = o->json ? OUT_JSON : o->csv ? OUT_CSV : OUT_TABLE;
    const char *one = o->soi;
    json_t *rows = json_array();
    for (unsigned i = 0; i < soi_count(); i++)
        if (!one || !strcmp(one, soi_at(i)->name))
            json_array_append_new(rows, soi_json(soi_at(i)));
    if (one && json_array_size(rows) == 0) {
        json_decref(rows);
        return cli_fail(IB_EXIT_USAGE, "list", "unknown SoI '%s'", one);
    }
    static const struct out_col cols[] = {
        {"name", "name", OUT_K_STR, 0, NULL},     {"paper", "paper", OUT_K_STR, 0, NULL},
        {"resource", "resource", OUT_K_STR, 0, NULL}, {"kind", "kind", OUT_K_STR, 0, NULL},
        {"scope", "scope", OUT_K_STR, 0, NULL},   {"summary", "what x % means", OUT_K_STR, 0, NULL},
    };
    if (fmt == OUT_JSON) {
        json_t *doc = json_pack("{s:o}", "sois", rows);
        out_json(stdout, doc);
        json_decref(doc);
        return IB_EXIT_OK;
    }
    out_rows(stdout, fmt, rows, cols, IB_ARRAY_SIZE(cols));
    if (one && fmt == OUT_TABLE) {
        json_t *params = json_object_get(json_array_get(rows, 0), "params");
        static const struct out_col pc[] = {
            {"name", "parameter", OUT_K_STR, 0, NULL},       {"type", "type", OUT_K_STR, 0, NULL},
            {"default_text", "default", OUT_K_STR, 0, NULL}, {"values", "values", OUT_K_STR, 0, NULL},
            {"help", "meaning", OUT_K_STR, 0, NULL},
        };
        printf("\n");
        if (json_array_size(params))
            out_rows(stdout, OUT_TABLE, params, pc, IB_ARRAY_SIZE(pc));
        else
            printf("(no parameters)\n");
    }
    json_decref(rows);
    return IB_EXIT_OK;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt list_table[] = {
    {CLI_STR("soi", "NAME", struct list_opts, soi, "that SoI alone, and its parameters"), .shortopt = 's'},
    {CLI_FLAG("json", struct list_opts, json, "JSON instead of the table")},
    {CLI_FLAG("csv", struct list_opts, csv, "CSV instead of the table")},
};

const struct cli_cmd cli_cmd_list = {
    .name = "list",
    CLI_RUN(cmd_list, struct list_opts),
    .summary = "list the SoIs (and one SoI's parameters)",
    .usage = "usage: ibench list [--soi NAME] [--json | --csv]\n\n",
    .about = "Lists every SoI: its name, the paper's number, the resource it presses, how intensity maps to\n"
             "pressure (footprint, rate or duty), and the scope a --near placement shares with the target.\n"
             "With --soi, also that SoI's parameters (set them with ibench run --param NAME=VALUE).\n\n",
    CLI_OPTS(list_table),
};
