/* cmd_place_classes.c - `ibench place classes`: the sharing classes of N-thread placements, or the important ones
 * (placement/machine/pl_classes.h; docs/placement.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <gmp.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_classes.h"
#include "pl_proc.h"
#include "place.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The representative's CPUs (OS indexes, ascending) as "0-3,8". */
static void cpu_list(const struct pl_hier *h, const struct pl_class *c, char *buf, size_t len)
{
    int *os = malloc((c->nthreads ? c->nthreads : 1) * sizeof(*os));
    buf[0] = 0;
    if (!os)
        return;
    for (unsigned j = 0; j < c->nthreads; j++)
        os[j] = h->pu_os[c->pus[j]];
    qsort(os, c->nthreads, sizeof(*os), cmp_int);
    pl_cpulist_format(os, c->nthreads, buf, len);
    free(os);
}

/* The exact count, and "(1.2e22)" too when it is long. */
static void count_str(const char *dec, char *buf, size_t len)
{
    if (strlen(dec) > 12)
        snprintf(buf, len, "%s (%.2g)", dec, strtod(dec, NULL));
    else
        snprintf(buf, len, "%s", dec);
}

/* Every level's usage, coarse first: "2,2 / 1x4". */
static void usage_str(const struct pl_hier *h, const struct pl_class *c, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (unsigned k = 0; k < h->nlevels && o < len; k++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", k ? " / " : "", c->usage[k]);
}

static json_t *class_json(const struct pl_hier *h, const struct pl_class *c)
{
    json_t *sc = json_object(), *us = json_object(), *cpus = json_array(), *pus = json_array(), *nodes = json_array();
    for (unsigned k = 0; k < h->nlevels; k++) {
        json_object_set_new(sc, h->lv[k].name, json_integer(c->score[k]));
        json_object_set_new(us, h->lv[k].name, json_string(c->usage[k]));
    }
    for (unsigned j = 0; j < c->nthreads; j++) {
        json_array_append_new(cpus, json_integer(h->pu_os[c->pus[j]]));
        json_array_append_new(pus, json_integer(c->pus[j]));
    }
    for (unsigned i = 0; i < 64; i++)
        if (c->nodes >> i & 1)
            json_array_append_new(nodes, json_integer(i));
    char nota[80];
    json_t *nj = pl_class_notation(h, c, nota, sizeof(nota)) == 0 ? json_string(nota) : json_null();
    return json_pack("{s:i,s:o,s:o,s:s,s:f,s:o,s:o,s:o,s:s,s:o,s:o,s:o}", "id", (int)c->id, "scores", sc, "usage", us,
                     "orbit_size", c->orbit, "orbit_fraction", c->orbit_frac, "cpus", cpus, "pus", pus, "notation",
                     nj, "key", c->key, "bandwidth", isnan(c->bandwidth) ? json_null() : json_real(c->bandwidth),
                     "nodes", nodes, "why", c->why ? json_string(c->why) : json_null());
}

static void print_table(const struct pl_machine *m, const struct pl_hier *h, const struct pl_class_list *l,
                        unsigned n, bool all, const struct pl_bandwidth *bw)
{
    char tot[128];
    count_str(l->total, tot, sizeof(tot));
    printf("topology  %s (%s): %u PUs\n", m->spec, m->kind, h->npus);
    printf("%u threads, concerns ", n);
    if (!h->nlevels)
        printf("none");
    for (unsigned k = 0; k < h->nlevels; k++)
        printf("%s%s", k ? "," : "", h->lv[k].name);
    printf(": %u %s of C(%u,%u) = %s placements\n", l->n, all ? "classes" : "important placements", h->npus, n, tot);
    printf("%s\n\n", all ? "all classes" : "important placements: balanced, feasible (Funston et al. ATC'18 §3)");
    /* column widths from the rows */
    int uw = 5, ow = 10;
    for (unsigned i = 0; i < l->n; i++) {
        char usage[256], orbit[128];
        usage_str(h, &l->v[i], usage, sizeof(usage));
        count_str(l->v[i].orbit, orbit, sizeof(orbit));
        uw = (int)strlen(usage) > uw ? (int)strlen(usage) : uw;
        ow = (int)strlen(orbit) > ow ? (int)strlen(orbit) : ow;
    }
    printf("%4s", "id");
    for (unsigned k = 0; k < h->nlevels; k++)
        printf(" %8s", h->lv[k].name);
    printf("  %-*s  %-*s %9s", uw, "usage", ow, "orbit size", "share");
    if (h->npus <= 64)
        printf("  %-*s", h->npus + 2 > 8 ? (int)h->npus + 2 : 8, "notation");
    printf("  %s", "cpus");
    if (bw)
        printf("  bandwidth (%s)  why", bw->unit);
    printf("\n");
    for (unsigned i = 0; i < l->n; i++) {
        const struct pl_class *c = &l->v[i];
        printf("%4u", c->id);
        for (unsigned k = 0; k < h->nlevels; k++)
            printf(" %*u", strlen(h->lv[k].name) > 8 ? (int)strlen(h->lv[k].name) : 8, c->score[k]);
        char usage[256], orbit[128], cpus[1024], nota[80], share[32];
        usage_str(h, c, usage, sizeof(usage));
        count_str(c->orbit, orbit, sizeof(orbit));
        cpu_list(h, c, cpus, sizeof(cpus));
        if (c->orbit_frac >= 0.0001 || c->orbit_frac == 0)
            snprintf(share, sizeof(share), "%.2f%%", 100.0 * c->orbit_frac);
        else
            snprintf(share, sizeof(share), "%.1e%%", 100.0 * c->orbit_frac);
        printf("  %-*s  %-*s %9s", uw, usage, ow, orbit, share);
        if (pl_class_notation(h, c, nota, sizeof(nota)) == 0)
            printf("  %-*s", h->npus + 2 > 8 ? (int)h->npus + 2 : 8, nota);
        printf("  %s", cpus);
        if (bw)
            printf("  %g  %s", c->bandwidth, c->why ? c->why : "");
        printf("\n");
    }
}

struct classes_opts {
    struct place_opts po;
    unsigned threads;
    int all, have_limit;
    unsigned long limit;
    const char *bandwidth;
};

_Static_assert(PL_CLASSES_LIMIT == 10000, "the default of --limit below says 10000");

static int cmd_place_classes(void *opts, int argc, char **argv, int first)
{
    const struct classes_opts *a = opts;
    const struct place_opts o = a->po;
    struct pl_classes_opts co = {.nthreads = a->threads, .all = a->all, .limit = a->limit};
    const char *bwfile = a->bandwidth;
    bool limit_given = a->have_limit;
    if (!co.nthreads)
        return cli_fail(IB_EXIT_USAGE, "place classes", "--threads N is required");
    if (bwfile && co.all)
        return cli_fail(IB_EXIT_USAGE, "place classes", "--bandwidth applies to the important placements, not --all");
    if (place_refuse_distances("place classes", &o))
        return IB_EXIT_USAGE;
    if (limit_given && !co.all)
        return cli_fail(IB_EXIT_USAGE, "place classes", "--limit applies to --all (the important placements are few)");
    struct pl_machine m;
    struct pl_hier h;
    int rc = place_open("classes", &o, &m, &h);
    if (rc)
        return rc;
    char why[512];
    struct pl_bandwidth bw = {0};
    if (bwfile) {
        rc = pl_bandwidth_load(bwfile, &bw, why, sizeof(why));
        if (rc < 0) {
            pl_hier_free(&h);
            pl_machine_free(&m);
            return cli_fail(cli_exit_for(rc, rc != -ENOMEM), "place classes", "%s", why);
        }
        co.bw = &bw;
    }
    struct pl_class_list l;
    rc = pl_classes(&h, &co, &l, why, sizeof(why));
    if (rc < 0) {
        pl_bandwidth_free(&bw);
        pl_hier_free(&h);
        pl_machine_free(&m);
        return cli_fail(cli_exit_for(rc, rc != -ENOMEM), "place classes", "%s", why);
    }
    if (o.json) {
        json_t *cn = json_array(), *rows = json_array();
        for (unsigned k = 0; k < h.nlevels; k++)
            json_array_append_new(cn, json_string(h.lv[k].name));
        for (unsigned i = 0; i < l.n; i++)
            json_array_append_new(rows, class_json(&h, &l.v[i]));
        json_t *doc = json_pack("{s:s,s:{s:s,s:s,s:i},s:i,s:o,s:s,s:s,s:o}", "command", "place classes", "topology",
                                "spec", m.spec, "kind", m.kind, "pus", (int)h.npus, "threads", (int)co.nthreads,
                                "concerns", cn, "mode", co.all ? "all" : "important", "total_placements", l.total,
                                "classes", rows);
        rc = !doc || out_json(stdout, doc) < 0 ? IB_EXIT_FAIL : IB_EXIT_OK;
        json_decref(doc);
    } else {
        print_table(&m, &h, &l, co.nthreads, co.all, bwfile ? &bw : NULL);
        rc = IB_EXIT_OK;
    }
    pl_class_list_free(&l);
    pl_bandwidth_free(&bw);
    pl_hier_free(&h);
    pl_machine_free(&m);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define CO struct classes_opts
static const struct cli_opt classes_table[] = {
    {CLI_UINT("threads", "N", CO, threads, 1, 1 << 20, "threads to place, 1 to the PUs"), .shortopt = 't'},
    {CLI_FLAG("all", CO, all, "every class, not only the important placements")},
    {CLI_ULONG("limit", "K", CO, limit, 1, 100000000, "with --all, refuse when there are more than K classes"),
     .def = "10000", .have = CLI_HAVE(CO, have_limit)},
    {CLI_STR("bandwidth", "FILE", CO, bandwidth,
             "NUMA node sets' bandwidth, JSON\n"
             "({\"unit\",\"sets\":[{\"nodes\",\"bandwidth\"}]}):\n"
             "keep the best node sets of each important placement (needs numa)")},
    PLACE_OPT_TOPOLOGY(CO, place_help_topology),
    PLACE_OPT_DISTANCES(CO, "refused: classes do not depend on distances"),
    PLACE_OPT_CONCERNS(CO, place_help_concerns),
    PLACE_OPT_JSON(CO),
};
#undef CO

const struct cli_cmd cli_cmd_place_classes = {
    .name = "place classes",
    CLI_RUN(cmd_place_classes, struct classes_opts),
    .summary = "the sharing classes of N-thread placements, or the important ones",
    .usage = "usage: ibench place classes --threads N [--all] [--limit K] [--bandwidth FILE] [--topology SPEC]\n"
             "                            [--concerns LIST] [--json]\n\n",
    .about = "The sharing classes of N-thread placements (one thread per PU): placements a symmetry of the\n"
             "concerned levels maps onto each other form one class.  By default the important ones (Funston et al. ATC'18\n"
             "§3: balanced and feasible); --all lists every class.\n\n",
    CLI_OPTS(classes_table),
};
