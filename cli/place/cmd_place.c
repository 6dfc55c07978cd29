/* cmd_place.c - `ibench place ...`: the subcommand table, the options every place command shares, and
 * `ibench place topo` (what the placement engine sees of a topology).  docs/placement.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "place.h"
#include "pl_coloc.h"
#include "pl_proc.h"

const char place_help_topology[] = "live (this machine, the default), an hwloc XML file (lstopo --of xml), or\n"
                                   "synthetic:STRING, an hwloc synthetic description such as\n"
                                   "synthetic:'pack:2 l2:2(size=4MiB) core:2 pu:1'";
const char place_help_distances[] = "NUMA distances as a JSON matrix (default: the topology's)";
const char place_help_concerns[] = "the shared levels that matter, coarse or fine in any order, from\n"
                                   "package,die,numa,l3,l2,l1,core (default: every level with more than one instance\n"
                                   "and more than one PU per instance; levels with the same instances merge)";
const char place_help_json[] = "JSON (docs/schema/placement-v1.schema.json) instead of a table";

const char place_help_margin[] = "points kept free under every measured tolerance below 100";
const char place_help_unknown[] =
    "(the headroom rule's cells; the model counts no evidence as no pressure)\n"
    "what a skipped SoI, an unmeasurable caused figure or a resource missing from a\n"
    "profile counts as: pessimistic (caused 100, tolerated 0, a caused figure\n"
    "within 2 se of 0 as value + 2 se) or optimistic (caused 0, tolerated 100)";
const char place_help_refuse[] = "likely: refuse a break beyond the profiles' uncertainty, and a pair the bounds\n"
                                 "leave open whose predicted relative performance is under the QoS line with a\n"
                                 "harm told from none (optimistic bound under 1; the model; the headroom rule:\n"
                                 "as established); established: refuse only a break beyond the uncertainty\n"
                                 "(the model's optimistic bound under the QoS line);\n"
                                 "uncertain: also refuse what the bounds leave open (headroom: every negative\n"
                                 "headroom) (docs/placement.md, \"The uncertain case\")";
const char place_help_decide[] = "model: each member's predicted relative performance beside the others, with\n"
                                 "its bounds, against its QoS line (the default); headroom: tolerated - margin -\n"
                                 "others' caused per resource, the rule before 1.7, for comparison";
const char *const place_unknown_modes[] = {"pessimistic", "optimistic", NULL};
const char *const place_refuse_rules[] = {"likely", "established", "uncertain", NULL};
const char *const place_decide_modes[] = {"model", "headroom", NULL};

void place_coloc_opts(const struct place_coloc_args *a, struct pl_coloc_opts *o)
{
    o->margin = a->margin;
    o->pessimistic = !strcmp(a->unknown, "pessimistic");
    o->established = strcmp(a->refuse, "uncertain") != 0;
    o->likely = !strcmp(a->refuse, "likely");
    o->decide = place_decide(a->decide);
}

enum pl_coloc_decide place_decide(const char *mode)
{
    return mode && !strcmp(mode, "headroom") ? PL_DECIDE_HEADROOM : PL_DECIDE_MODEL;
}

int place_refuse_distances(const char *cmd, const struct place_opts *o)
{
    return o->distances ? cli_fail(IB_EXIT_USAGE, cmd, "--distances has no use here (ibench place score takes it)")
                        : 0;
}

int place_open(const char *cmd, const struct place_opts *o, struct pl_machine *m, struct pl_hier *h)
{
    char why[512], name[64];
    snprintf(name, sizeof(name), "place %s", cmd);
    /* "hops" is not a file: it turns the loaded distances into hop counts (score) */
    const char *dist = o->distances && strcmp(o->distances, "hops") ? o->distances : NULL;
    int rc = pl_machine_load(m, o->topology, dist, why, sizeof(why));
    if (rc < 0)
        return cli_fail(cli_exit_for(rc, rc != -ENOMEM), name, "%s", why);
    if (h) {
        rc = pl_hier_from_topo(m->topo, o->concerns, h, why, sizeof(why));
        if (rc < 0) {
            pl_machine_free(m);
            return cli_fail(cli_exit_for(rc, rc != -ENOMEM), name, "%s", why);
        }
    }
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

char *place_pus_cpulist(const struct pl_hier *h, const unsigned *pus, unsigned n, char *buf, size_t len)
{
    int *cpus = malloc((n ? n : 1) * sizeof *cpus);
    if (!cpus)
        return NULL;
    for (unsigned j = 0; j < n; j++)
        cpus[j] = h->pu_os[pus[j]];
    qsort(cpus, n, sizeof *cpus, cmp_int); /* OS indexes need not ascend with logical ones */
    pl_cpulist_format(cpus, n, buf, len);
    free(cpus);
    return buf;
}

/* ---- place topo ------------------------------------------------------------------------------------------------ */

static void pus_range(const struct pl_level *l, unsigned *lo, unsigned *hi)
{
    *lo = UINT32_MAX;
    *hi = 0;
    for (unsigned i = 0; i < l->ninst; i++) {
        *lo = l->inst_npus[i] < *lo ? l->inst_npus[i] : *lo;
        *hi = l->inst_npus[i] > *hi ? l->inst_npus[i] : *hi;
    }
}

static json_t *level_rows(const struct pl_hier *h)
{
    json_t *rows = json_array();
    for (unsigned k = 0; k < h->nlevels; k++) {
        const struct pl_level *l = &h->lv[k];
        unsigned lo, hi;
        pus_range(l, &lo, &hi);
        json_t *row = json_pack("{s:s,s:i,s:i,s:i}", "name", l->name, "instances", (int)l->ninst,
                                "pus_per_instance_min", (int)lo, "pus_per_instance_max", (int)hi);
        json_object_set_new(row, "size", l->size ? json_integer((json_int_t)l->size) : json_null());
        if (!strcmp(l->name, "numa")) {
            json_t *os = json_array();
            for (unsigned i = 0; i < l->ninst; i++)
                json_array_append_new(os, json_integer(l->inst_os[i]));
            json_object_set_new(row, "os_indexes", os);
        }
        json_array_append_new(rows, row);
    }
    return rows;
}

static json_t *topo_doc(const struct pl_machine *m, const struct pl_hier *all, const struct pl_hier *conc)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "command", json_string("place topo"));
    json_t *pus = json_array();
    for (unsigned p = 0; p < all->npus; p++)
        json_array_append_new(pus, json_integer(all->pu_os[p]));
    json_object_set_new(doc, "topology", json_pack("{s:s,s:s,s:i,s:o}", "spec", m->spec, "kind", m->kind, "pus",
                                                   (int)all->npus, "pu_os", pus));
    json_object_set_new(doc, "levels", level_rows(all));
    json_t *cn = json_array();
    for (unsigned k = 0; k < conc->nlevels; k++)
        json_array_append_new(cn, json_string(conc->lv[k].name));
    json_object_set_new(doc, "concerns", cn);
    json_t *nodes = json_array();
    for (unsigned i = 0; i < m->nnodes; i++)
        json_array_append_new(nodes, json_integer(m->node_os[i]));
    json_t *matrix = json_null();
    if (m->dist) {
        matrix = json_array();
        for (unsigned i = 0; i < m->nnodes; i++) {
            json_t *row = json_array();
            for (unsigned j = 0; j < m->nnodes; j++)
                json_array_append_new(row, json_real(m->dist[i * m->nnodes + j]));
            json_array_append_new(matrix, row);
        }
    }
    json_object_set_new(doc, "distances",
                        json_pack("{s:s,s:o,s:o}", "source", m->dist_source, "nodes", nodes, "matrix", matrix));
    return doc;
}

static void print_topo(const struct pl_machine *m, const struct pl_hier *all, const struct pl_hier *conc)
{
    printf("topology  %s (%s): %u PUs, %u NUMA node(s)\n", m->spec, m->kind, all->npus, m->nnodes);
    printf("\n%-10s %9s %10s %10s\n", "level", "instances", "PUs each", "size");
    printf("%-10s %9s %10s %10s\n", "-----", "---------", "--------", "----");
    for (unsigned k = 0; k < all->nlevels; k++) {
        const struct pl_level *l = &all->lv[k];
        unsigned lo, hi;
        pus_range(l, &lo, &hi);
        char each[32], size[32];
        if (lo == hi)
            snprintf(each, sizeof(each), "%u", lo);
        else
            snprintf(each, sizeof(each), "%u-%u", lo, hi);
        printf("%-10s %9u %10s %10s\n", l->name, l->ninst, each,
               l->size ? fmt_bytes((double)l->size, size, sizeof(size)) : "-");
    }
    printf("%-10s %9u %10s %10s\n", "pu", all->npus, "1", "-");
    printf("\nconcerns  ");
    if (!conc->nlevels)
        printf("none: no level has more than one instance sharing more than one PU (every placement is alike)");
    for (unsigned k = 0; k < conc->nlevels; k++)
        printf("%s%s", k ? ", " : "", conc->lv[k].name);
    printf("\ndistances %s\n", m->dist_source);
    if (m->dist) {
        printf("%8s", "node");
        for (unsigned j = 0; j < m->nnodes; j++)
            printf(" %6u", m->node_os[j]);
        printf("\n");
        for (unsigned i = 0; i < m->nnodes; i++) {
            printf("%8u", m->node_os[i]);
            for (unsigned j = 0; j < m->nnodes; j++)
                printf(" %6.4g", m->dist[i * m->nnodes + j]);
            printf("\n");
        }
    }
}

struct topo_opts {
    struct place_opts po;
};

static int cmd_place_topo(void *opts, int argc, char **argv, int first)
{
    const struct place_opts o = ((const struct topo_opts *)opts)->po;
    struct pl_machine m;
    struct pl_hier conc;
    int rc = place_open("topo", &o, &m, &conc);
    if (rc)
        return rc;
    struct pl_hier all;
    char why[256];
    rc = pl_hier_levels(m.topo, &all, why, sizeof(why));
    if (rc < 0) {
        pl_hier_free(&conc);
        pl_machine_free(&m);
        return cli_fail(cli_exit_for(rc, rc != -ENOMEM), "place topo", "%s", why);
    }
    if (o.json) {
        json_t *doc = topo_doc(&m, &all, &conc);
        rc = out_json(stdout, doc) < 0 ? IB_EXIT_FAIL : IB_EXIT_OK;
        json_decref(doc);
    } else {
        print_topo(&m, &all, &conc);
        rc = IB_EXIT_OK;
    }
    pl_hier_free(&all);
    pl_hier_free(&conc);
    pl_machine_free(&m);
    return rc;
}

/* ---- the table --------------------------------------------------------------------------------------------------- */


/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt topo_table[] = {PLACE_COMMON_OPTS(struct topo_opts)};

const struct cli_cmd cli_cmd_place_topo = {
    .name = "place topo",
    CLI_RUN(cmd_place_topo, struct topo_opts),
    .summary = "what placement sees of a topology: levels, counts, sizes, distances",
    .usage = "usage: ibench place topo [--topology SPEC] [--distances FILE] [--concerns LIST] [--json]\n\n",
    .about = "What the placement engine sees of a topology: every shared level with its instances, PUs\n"
             "per instance and size, the concerns placement commands use, and the NUMA distances.\n\n",
    CLI_OPTS(topo_table),
};

static const struct cli_cmd *const place_cmds[] = {
    &cli_cmd_place_topo,     &cli_cmd_place_classes,  &cli_cmd_place_apply,  &cli_cmd_place_run,
    &cli_cmd_place_show,     &cli_cmd_place_score,    &cli_cmd_place_pair,   &cli_cmd_place_predict,
    &cli_cmd_place_colocate, &cli_cmd_place_provision, &cli_cmd_place_simulate, &cli_cmd_place_map,
    &cli_cmd_place_atom,     &cli_cmd_place_hetero,   &cli_cmd_place_model,  &cli_cmd_place_pack,
    &cli_cmd_place_cluster,
};

const struct cli_cmd cli_cmd_place = {
    .name = "place",
    .summary = "placement: topology, sharing classes, apply/show/run a placement, NUMA locality score",
    .usage = "usage: ibench place <command> [options]\n\n",
    .about = "The placement engine: which placements of threads on a machine really differ, and how local a "
             "process's memory is.\n\ncommands:\n",
    .more = "\nibench place <command> --help for its options; docs/placement.md for the methods.\n",
    CLI_SUB(place_cmds),
};
