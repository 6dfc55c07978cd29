/* cmd_place_hetero.c - `ibench place hetero`: assign the applications of a mix to the cores of a heterogeneous
 * machine from profiles measured per core type, exactly (placement/coloc/pl_hetero.h; docs/placement.md, "Heterogeneous
 * cores: place hetero"). */
#define _GNU_SOURCE /* strndup */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_hetero.h"
#include "place.h"
#include "render.h"

#define CMD "place hetero"

_Static_assert(PL_HETERO_MAX_CORES == 256, "the help of --cores below says 256");

struct spec {
    char *type[PL_HETERO_MAX_TYPES];
    unsigned count[PL_HETERO_MAX_TYPES], ntypes, ncores;
};

static bool type_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 32)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '-' || s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z')))
            return false;
    return true;
}

static int type_index(const struct spec *s, const char *name, size_t n)
{
    for (unsigned t = 0; t < s->ntypes; t++)
        if (strlen(s->type[t]) == n && strncmp(s->type[t], name, n) == 0)
            return (int)t;
    return -1;
}

/* "big:4,little:4" -> spec; 0 or an exit code after one line. */
static int parse_cores(const char *arg, struct spec *s)
{
    const char *p = arg;
    while (*p) {
        const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (!colon || !type_name_ok(p, (size_t)(colon - p)))
            return cli_fail(IB_EXIT_USAGE, CMD, "--cores '%s': TYPE:N[,TYPE:N...] expected (a type is letters, "
                            "digits, - or _)", arg);
        if (type_index(s, p, (size_t)(colon - p)) >= 0)
            return cli_fail(IB_EXIT_USAGE, CMD, "--cores '%s': core type '%.*s' named twice", arg,
                            (int)(colon - p), p);
        if (s->ntypes == PL_HETERO_MAX_TYPES)
            return cli_fail(IB_EXIT_USAGE, CMD, "--cores '%s': at most %d core types", arg, PL_HETERO_MAX_TYPES);
        char num[16];
        size_t nl = (size_t)(end - colon - 1);
        unsigned long n = 0;
        if (nl == 0 || nl >= sizeof num)
            return cli_fail(IB_EXIT_USAGE, CMD, "--cores '%s': a count of cores 1-%d expected after '%.*s:'", arg,
                            PL_HETERO_MAX_CORES, (int)(colon - p), p);
        memcpy(num, colon + 1, nl);
        num[nl] = 0;
        if (parse_uint(num, 1, PL_HETERO_MAX_CORES, &n) < 0)
            return cli_fail(IB_EXIT_USAGE, CMD, "--cores '%s': a count of cores 1-%d expected after '%.*s:'", arg,
                            PL_HETERO_MAX_CORES, (int)(colon - p), p);
        if (!(s->type[s->ntypes] = strndup(p, (size_t)(colon - p))))
            return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
        s->count[s->ntypes++] = (unsigned)n;
        s->ncores += (unsigned)n;
        if (s->ncores > PL_HETERO_MAX_CORES)
            return cli_fail(IB_EXIT_USAGE, CMD, "--cores '%s': at most %d cores", arg, PL_HETERO_MAX_CORES);
        p = comma ? comma + 1 : end;
        if (comma && !*p)
            return cli_fail(IB_EXIT_USAGE, CMD, "--cores '%s': a core type expected after the last ','", arg);
    }
    if (!s->ntypes)
        return cli_fail(IB_EXIT_USAGE, CMD, "--cores: TYPE:N[,TYPE:N...] expected");
    return 0;
}

struct app {
    char *name;
    const char *file[PL_HETERO_MAX_TYPES];  /* into arg */
    char *arg;                              /* a copy of the --app value, cut at the commas */
    struct profile prof[PL_HETERO_MAX_TYPES];
    const struct profile *pp[PL_HETERO_MAX_TYPES];
    bool read[PL_HETERO_MAX_TYPES];
};

/* "NAME=TYPE:FILE,TYPE:FILE" against the machine's types; 0 or an exit code after one line. */
static int parse_app(const char *arg, const struct spec *s, struct app *a)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return cli_fail(IB_EXIT_USAGE, CMD, "--app '%s': NAME=TYPE:PROFILE[,TYPE:PROFILE...] expected", arg);
    if (!(a->name = strndup(arg, (size_t)(eq - arg))) || !(a->arg = strdup(eq + 1)))
        return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
    char *save = NULL;
    for (char *tok = strtok_r(a->arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon || colon == tok || !colon[1])
            return cli_fail(IB_EXIT_USAGE, CMD, "--app %s: '%s': TYPE:PROFILE expected", a->name, tok);
        int t = type_index(s, tok, (size_t)(colon - tok));
        if (t < 0) {
            char known[512] = "";
            for (unsigned k = 0; k < s->ntypes; k++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", s->type[k]);
            return cli_fail(IB_EXIT_USAGE, CMD, "--app %s: unknown core type '%.*s' (the machine has %s)", a->name,
                            (int)(colon - tok), tok, known);
        }
        if (a->file[t])
            return cli_fail(IB_EXIT_USAGE, CMD, "--app %s: two profiles for core type %s", a->name, s->type[t]);
        a->file[t] = colon + 1;
    }
    for (unsigned t = 0; t < s->ntypes; t++)
        if (!a->file[t])
            return cli_fail(IB_EXIT_USAGE, CMD, "--app %s: no profile for core type %s (one per core type of the "
                            "machine)", a->name, s->type[t]);
    return 0;
}

static void free_apps(struct app *apps, unsigned n, unsigned ntypes)
{
    for (unsigned i = 0; apps && i < n; i++) {
        for (unsigned t = 0; t < ntypes; t++)
            if (apps[i].read[t])
                profile_free(&apps[i].prof[t]);
        free(apps[i].name);
        free(apps[i].arg);
    }
    free(apps);
}

static json_t *cells_json(const struct pl_hetero_result *r, unsigned a, unsigned t)
{
    json_t *arr = json_array();
    for (unsigned k = 0; k < r->nres; k++) {
        const struct pl_hetero_cell *c = &r->cell[((size_t)a * r->ntypes + t) * r->nres + k];
        json_array_append_new(arr, json_pack("{s:s,s:f,s:f,s:f,s:b,s:b,s:b}", "soi", r->res[k], "tolerated",
                                             c->tolerated, "others", c->others, "excess", c->excess, "judged",
                                             c->judged, "unknown_tolerated", c->unknown_tol, "unknown_others",
                                             c->unknown_oth));
    }
    return arr;
}

static json_t *result_json(const struct spec *s, const struct app *apps, const struct pl_hetero_result *r,
                           bool pessimistic)
{
    json_t *doc = json_object(), *cores = json_array(), *shared = json_array(), *arr = json_array(),
           *greedy = json_array();
    json_object_set_new(doc, "command", json_string(CMD));
    for (unsigned t = 0, first = 0; t < s->ntypes; first += s->count[t], t++)
        json_array_append_new(cores, json_pack("{s:s,s:i,s:i}", "type", s->type[t], "count", (int)s->count[t],
                                               "first", (int)first));
    json_object_set_new(doc, "cores", cores);
    for (unsigned k = 0; k < r->nres; k++)
        json_array_append_new(shared, json_string(r->res[k]));
    json_object_set_new(doc, "shared", shared);
    json_object_set_new(doc, "unknown", json_string(pessimistic ? "pessimistic" : "optimistic"));
    json_object_set_new(doc, "tie_break", json_string("lexicographic"));
    for (unsigned a = 0; a < r->napps; a++) {
        json_t *by = json_array(), *files = json_array();
        for (unsigned t = 0; t < r->ntypes; t++) {
            json_array_append_new(by, json_pack("{s:s,s:f}", "type", s->type[t], "cost", r->cost[a * r->ntypes + t]));
            json_array_append_new(files, json_pack("{s:s,s:s}", "type", s->type[t], "file", apps[a].file[t]));
        }
        json_array_append_new(arr, json_pack("{s:s,s:i,s:s,s:f,s:f,s:o,s:o,s:o}", "name", apps[a].name, "core",
                                             (int)r->core[a], "type", s->type[r->type[a]], "cost",
                                             r->cost[a * r->ntypes + r->type[a]], "placed", r->placed[a],
                                             "cost_by_type", by, "resources", cells_json(r, a, r->type[a]),
                                             "profiles", files));
        json_array_append_new(greedy, json_integer(r->greedy_core[a]));
    }
    json_object_set_new(doc, "applications", arr);
    json_object_set_new(doc, "total", json_real(r->total));
    json_object_set_new(doc, "average", json_real(r->average));
    json_object_set_new(doc, "placed_total", json_real(r->placed_total));
    json_object_set_new(doc, "placed_average", json_real(r->placed_average));
    json_object_set_new(doc, "greedy", json_pack("{s:f,s:f,s:o}", "total", r->greedy_total, "average",
                                                 r->greedy_total / r->napps, "cores", greedy));
    return doc;
}

static void result_table(const struct spec *s, const struct app *apps, const struct pl_hetero_result *r,
                         bool pessimistic)
{
    printf("%u application(s) on %u cores (", r->napps, r->ncores);
    for (unsigned t = 0; t < s->ntypes; t++)
        printf("%s%s:%u", t ? ", " : "", TTY_TEXT(s->type[t]), s->count[t]);
    printf("); shared: ");
    for (unsigned k = 0; k < r->nres; k++)
        printf("%s%s", k ? ", " : "", TTY_TEXT(r->res[k]));
    printf("; unknowns %s\n\n", pessimistic ? "pessimistic" : "optimistic");
    printf("%-16s %4s %-10s %8s %8s  %-28s %s\n", "application", "core", "type", "cost", "placed", "cost by type",
           "suffers on its core (others > tolerated)");
    printf("%-16s %4s %-10s %8s %8s  %-28s %s\n", "-----------", "----", "----", "----", "------", "------------",
           "----------------------------------------");
    for (unsigned a = 0; a < r->napps; a++) {
        char by[256] = "", why[512] = "";
        for (unsigned t = 0; t < r->ntypes; t++)
            snprintf(by + strlen(by), sizeof by - strlen(by), "%s%s %.1f", t ? ", " : "", TTY_TEXT(s->type[t]),
                     r->cost[a * r->ntypes + t]);
        for (unsigned k = 0; k < r->nres; k++) {
            const struct pl_hetero_cell *c = &r->cell[((size_t)a * r->ntypes + r->type[a]) * r->nres + k];
            if (c->excess > 0)
                snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s %.1f%s > %.1f%s", *why ? ", " : "",
                         TTY_TEXT(r->res[k]), c->others, c->unknown_oth ? "?" : "", c->tolerated, c->unknown_tol ? "?" : "");
        }
        printf("%-16.16s %4u %-10.10s %8.1f %8.1f  %-28s %s\n", TTY_TEXT(apps[a].name), r->core[a],
               TTY_TEXT(s->type[r->type[a]]),
               r->cost[a * r->ntypes + r->type[a]], r->placed[a], by, *why ? why : "-");
    }
    printf("\naverage interference %.2f points (total %.2f), exact; as placed (co-runners' caused on their own core "
           "types) %.2f (total %.2f)\n", r->average, r->total, r->placed_average, r->placed_total);
    printf("greedy (each application in turn to its cheapest free core): average %.2f (total %.2f)\n",
           r->greedy_total / r->napps, r->greedy_total);
    printf("cost: points over tolerance summed over the shared resources, the co-runners at their largest caused "
           "figure over the core types; ?: not measured, the %s rule's value\n",
           pessimistic ? "pessimistic" : "optimistic");
}

struct hetero_args {
    struct place_opts po;
    const char *cores, *shared, *unknown;
    const char *apps[PL_HETERO_MAX_CORES];
    unsigned napps;
};

static int cmd_place_hetero(void *opts, int argc, char **argv, int first)
{
    const struct hetero_args *args = opts;
    int rc = 0;
    const char *cores = args->cores, *shared = args->shared;
    const char *const *app_args = args->apps;
    unsigned napps = args->napps;
    bool pessimistic = !strcmp(args->unknown, "pessimistic");
    int json = args->po.json;
    struct spec s = {0};
    struct app *apps = NULL;
    char *shared_copy = NULL;
    const char *shared_list[64];
    unsigned nshared = 0;
    if (!cores) {
        rc = cli_fail(IB_EXIT_USAGE, CMD, "--cores TYPE:N[,TYPE:N...] is required");
        goto out;
    }
    if ((rc = parse_cores(cores, &s)))
        goto out;
    if (!napps) {
        rc = cli_fail(IB_EXIT_USAGE, CMD, "no application: --app NAME=TYPE:PROFILE[,...] expected");
        goto out;
    }
    if (napps > s.ncores) {
        rc = cli_fail(IB_EXIT_USAGE, CMD, "%u applications for %u cores: one application per core", napps, s.ncores);
        goto out;
    }
    if (shared) {
        char *save = NULL;
        if (!(shared_copy = strdup(shared))) {
            rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
            goto out;
        }
        for (char *tok = strtok_r(shared_copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (nshared == IB_ARRAY_SIZE(shared_list)) {
                rc = cli_fail(IB_EXIT_USAGE, CMD, "--shared: at most %zu SoIs", IB_ARRAY_SIZE(shared_list));
                goto out;
            }
            shared_list[nshared++] = tok;
        }
        if (!nshared) {
            rc = cli_fail(IB_EXIT_USAGE, CMD, "--shared '%s': a comma-separated list of SoIs expected", shared);
            goto out;
        }
    }
    if (!(apps = calloc(napps, sizeof *apps))) {
        rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
        goto out;
    }
    for (unsigned a = 0; a < napps; a++) {
        if ((rc = parse_app(app_args[a], &s, &apps[a])))
            goto out;
        for (unsigned b = 0; b < a; b++)
            if (!strcmp(apps[a].name, apps[b].name)) {
                rc = cli_fail(IB_EXIT_USAGE, CMD, "--app %s: named twice", apps[a].name);
                goto out;
            }
    }
    char why[512];
    for (unsigned a = 0; a < napps; a++)
        for (unsigned t = 0; t < s.ntypes; t++) {
            int e = profile_read(apps[a].file[t], &apps[a].prof[t], why, sizeof why);
            if (e < 0) {
                rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
                goto out;
            }
            cli_profile_warn(CMD, &apps[a].prof[t]);
            apps[a].read[t] = true;
            apps[a].pp[t] = &apps[a].prof[t];
        }
    struct pl_hetero_app *ha = calloc(napps, sizeof *ha);
    if (!ha) {
        rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
        goto out;
    }
    for (unsigned a = 0; a < napps; a++)
        ha[a].name = apps[a].name, ha[a].prof = apps[a].pp;
    struct pl_hetero_machine m = {(const char *const *)s.type, s.count, s.ntypes};
    struct pl_hetero_opts o = {shared ? shared_list : NULL, nshared, pessimistic};
    struct pl_hetero_result r;
    int e = pl_hetero_assign(ha, napps, &m, &o, &r, why, sizeof why);
    free(ha);
    if (e < 0) {
        rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
        goto out;
    }
    if (json) {
        json_t *doc = result_json(&s, apps, &r, pessimistic);
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, CMD, "cannot write JSON");
        json_decref(doc);
    } else {
        result_table(&s, apps, &r, pessimistic);
    }
    pl_hetero_result_free(&r);
out:
    free_apps(apps, napps, s.ntypes);
    for (unsigned t = 0; t < s.ntypes; t++)
        free(s.type[t]);
    free(shared_copy);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define HA struct hetero_args
static const struct cli_opt hetero_table[] = {
    {CLI_STR("cores", "SPEC", HA, cores,
             "the machine: core types and how many of each, e.g. big:4,little:4 (at most 256 cores)")},
    {CLI_LIST("app", "NAME=LIST", HA, apps, napps,
              "an application and its profile on every core type, e.g.\n"
              "mcf=big:mcf-big.json,little:mcf-little.json (a path may not hold a comma)")},
    {CLI_STR("shared", "LIST", HA, shared, "the SoIs all cores share (default " PL_HETERO_SHARED ")")},
    {CLI_CHOICE("unknown", "MODE", HA, unknown, place_unknown_modes,
                "what a skipped SoI or an unmeasurable caused figure counts as: pessimistic\n"
                "(caused 100, tolerated 0) or optimistic (caused 0, tolerated 100)"),
     .def = "pessimistic"},
    PLACE_OPT_JSON(HA),
};
#undef HA

const struct cli_cmd cli_cmd_place_hetero = {
    .name = "place hetero",
    CLI_RUN(cmd_place_hetero, struct hetero_args),
    .summary = "assign a mix to heterogeneous cores from per-core-type profiles, exactly",
    .usage = "usage: ibench place hetero --cores TYPE:N[,TYPE:N...] --app NAME=TYPE:PROFILE[,TYPE:PROFILE...]\n"
             "                           [--app ...] [--shared LIST] [--unknown pessimistic|optimistic] [--json]\n\n",
    .about = "Assigns each application to a core of a heterogeneous machine, one per core, to minimise the average\n"
             "interference: exactly (the Hungarian algorithm), not greedily.  An application's interference on a core\n"
             "type is the sum over the shared resources of what the others cause there (each its largest figure over\n"
             "the core types, summed, capped at 100) beyond what it tolerates on that type's profile, in points.\n"
             "Equal totals: the first application gets the lowest-numbered core an optimal assignment gives it, then\n"
             "the next, and so on (cores are numbered type by type in --cores order).\n\n",
    .more = "\nExit 0, 2 bad input (a core type an application lacks or the machine lacks, more applications than\n"
            "cores, a profile that does not parse).\n",
    CLI_OPTS(hetero_table),
};
