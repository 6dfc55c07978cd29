/* cmd_list.c - `ibench list [--soi NAME] [--json|--csv]`: the registry, and one SoI's parameters. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "soi.h"

static const char *ptype_name(enum soi_ptype t)
{
    switch (t) {
    case SOI_P_SIZE: return "size";
    case SOI_P_UINT: return "uint";
    case SOI_P_BOOL: return "bool";
    default: return "number";
    }
}

static json_t *soi_json(const struct soi_ops *ops)
{
    json_t *params = json_array();
    for (unsigned i = 0; i < soi_nparams(ops); i++) {
        const struct soi_param *p = &ops->params[i];
        char dv[32], mn[32], mx[32];
        snprintf(dv, sizeof(dv), "%g", p->def);
        snprintf(mn, sizeof(mn), "%g", p->min);
        snprintf(mx, sizeof(mx), "%g", p->max);
        json_array_append_new(params, json_pack("{s:s,s:s,s:f,s:f,s:f,s:s,s:s,s:s,s:s}", "name", p->name, "type",
                                                ptype_name(p->type), "min", p->min, "max", p->max, "default", p->def,
                                                "help", p->help, "default_text", dv, "min_text", mn, "max_text",
                                                mx));
    }
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "name", ops->name, "paper", ops->paper ? ops->paper : "",
                     "resource", ops->resource, "kind", soi_kind_name(ops->kind), "scope",
                     topo_scope_name(ops->scope), "summary", ops->summary, "params", params);
}

int cmd_list(int argc, char **argv)
{
    static const struct option lo[] = {{"soi", required_argument, 0, 's'}, {"json", no_argument, 0, 'j'},
                                       {"csv", no_argument, 0, 'v'},       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    enum out_fmt fmt = OUT_TABLE;
    const char *one = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:h", lo, NULL)) != -1) {
        switch (c) {
        case 's': one = optarg; break;
        case 'j': fmt = OUT_JSON; break;
        case 'v': fmt = OUT_CSV; break;
        case 'h':
            printf("usage: ibench list [--soi NAME] [--json | --csv]\n\n"
                   "Lists every SoI: its name, the paper's number, the resource it presses, how intensity maps to\n"
                   "pressure (footprint, rate or duty), and the scope a --near placement shares with the target.\n"
                   "With --soi, also that SoI's parameters (set them with ibench run --param NAME=VALUE).\n");
            return IB_EXIT_OK;
        default: return cli_fail(IB_EXIT_USAGE, "list", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_fail(IB_EXIT_USAGE, "list", "unexpected argument '%s'", argv[optind]);
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
            {"name", "parameter", OUT_K_STR, 0, NULL}, {"type", "type", OUT_K_STR, 0, NULL},
            {"default_text", "default", OUT_K_STR, 0, NULL}, {"min_text", "min", OUT_K_STR, 0, NULL},
            {"max_text", "max", OUT_K_STR, 0, NULL},         {"help", "meaning", OUT_K_STR, 0, NULL},
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
