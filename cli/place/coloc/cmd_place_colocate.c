/* cmd_place_colocate.c - `ibench place colocate`: a stream of applications placed on a fleet with tenants, one
 * after another, by a policy of the fleet simulator (pl_sim.h), each decision with its reason (docs/placement.md,
 * "Placing a stream of applications"). */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_coloc.h"
#include "pl_fleet.h"
#include "pl_sim.h"
#include "pl_verdict.h"
#include "place.h"
#include "render.h"

#define CMD "place colocate"
#define GIB 1073741824.0

/* FILE[:CPUS[:GIB]] */
static int parse_app(const char *arg, char **file, unsigned *cpus, double *gib)
{
    *file = strdup(arg);
    if (!*file)
        return -ENOMEM;
    char *c = strrchr(*file, ':');
    if (!c)
        return 0;
    char *c2 = c;
    *c = 0;
    char *c1 = strrchr(*file, ':');
    unsigned long n;
    if (c1) { /* FILE:CPUS:GIB */
        *c1 = 0;
        if (parse_uint(c1 + 1, 1, 65536, &n) < 0 || parse_double(c2 + 1, gib) < 0 || !(*gib > 0))
            return -EINVAL;
    } else if (parse_uint(c2 + 1, 1, 65536, &n) < 0) {
        return -EINVAL;
    }
    *cpus = (unsigned)n;
    return 0;
}

/* Why machine mi does or does not take app a (pl_verdict_of): {"machine", "verdict", "why", "fit"?}. */
static json_t *machine_reason(const struct pl_sim_fleet *f, unsigned mi, unsigned a, bool interference,
                              const struct pl_coloc_opts *o)
{
    struct pl_verdict v;
    pl_verdict_of(f, mi, a, interference, o, &v);
    json_t *j = json_pack("{s:s,s:s,s:s}", "machine", f->m[mi].name, "verdict", pl_verdict_name(v.kind), "why", v.why);
    if (v.kind == PL_V_SAFE || v.kind == PL_V_UNCERTAIN)
        json_object_set_new(j, "fit", json_real(v.fit));
    return j;
}

struct colocate_args {
    struct place_opts po;
    struct place_coloc_args ck;
    const char *fleet, *policy;
    const char *profiles[1024];
    unsigned nprofiles;
    unsigned long cpus;
    double gib;
};

static int cmd_place_colocate(void *opts, int argc, char **argv, int opnd)
{
    const struct colocate_args *args = opts;
    char **apps = calloc((size_t)argc + 1, sizeof *apps);
    if (!apps)
        return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
    int rc = 0;
    const char *fleet = args->fleet, *policy = args->policy;
    struct pl_coloc_opts o = {0};
    place_coloc_opts(&args->ck, &o);
    unsigned long dcpus = args->cpus;
    double dgib = args->gib;
    int json = args->po.json;
    unsigned napps = 0;
    for (unsigned i = 0; i < args->nprofiles; i++)
        apps[napps++] = (char *)args->profiles[i];
    while (opnd < argc) /* --profiles A B C: the files after the first are operands */
        apps[napps++] = argv[opnd++];
    bool interference = !strcmp(policy, "interference");
    const struct pl_sim_policy *pol = pl_sim_policy_find(policy);
    if (rc == 0 && !pol)
        rc = cli_fail(IB_EXIT_USAGE, CMD, "unknown policy '%s' (known: interference, least-loaded)", policy);
    if (rc == 0 && !fleet)
        rc = cli_fail(IB_EXIT_USAGE, CMD, "--fleet FILE expected");
    if (rc == 0 && !napps)
        rc = cli_fail(IB_EXIT_USAGE, CMD, "--profiles FILE... expected (the applications to place)");
    if (rc) {
        free(apps);
        return rc;
    }
    struct pl_fleet fl;
    char why[512];
    int e = pl_fleet_read(fleet, &fl, why, sizeof why);
    if (e < 0) {
        free(apps);
        return cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    }
    unsigned first = fl.f.napps;
    for (unsigned i = 0; i < napps && rc == 0; i++) {
        char *file = NULL;
        unsigned cpus = (unsigned)dcpus;
        double gib = dgib;
        e = parse_app(apps[i], &file, &cpus, &gib);
        if (e == -ENOMEM)
            rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
        else if (e < 0)
            rc = cli_fail(IB_EXIT_USAGE, CMD, "'%s': FILE, FILE:CPUS or FILE:CPUS:GIB expected", apps[i]);
        else if ((e = pl_fleet_add(&fl, file, cpus, gib * GIB, 0, 1, NULL, why, sizeof why)) < 0)
            rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
        free(file);
    }
    free(apps);
    if (rc) {
        pl_fleet_free(&fl);
        return rc;
    }
    json_t *doc = json_object(), *decisions = json_array();
    json_object_set_new(doc, "command", json_string(CMD));
    json_object_set_new(doc, "fleet", json_string(fleet));
    json_object_set_new(doc, "policy", json_string(policy));
    json_object_set_new(doc, "margin", json_real(o.margin));
    json_object_set_new(doc, "unknown", json_string(o.pessimistic ? "pessimistic" : "optimistic"));
    json_object_set_new(doc, "refuse", json_string(o.likely ? "likely" : o.established ? "established" : "uncertain"));
    json_object_set_new(doc, "decide", json_string(pl_coloc_decide_name(o.decide)));
    unsigned placed = 0;
    for (unsigned a = first; a < fl.f.napps; a++) {
        struct pl_sim_app *ap = &fl.f.app[a];
        json_t *cand = json_array();
        for (unsigned mi = 0; mi < fl.f.nm; mi++)
            json_array_append_new(cand, machine_reason(&fl.f, mi, a, interference, &o));
        int mi = interference ? pl_sim_choose_safe(&fl.f, a, -1, &o) : pol->choose(&fl.f, a, -1);
        const char *name = ap->p->name ? ap->p->name : "?";
        json_t *d = json_pack("{s:s,s:i,s:f}", "application", name, "cpus", (int)ap->cpus, "memory_gib", ap->mem / GIB);
        if (mi >= 0) {
            struct pl_sim_machine *m = &fl.f.m[mi];
            m->tenant[m->ntenants++] = a;
            m->cpu_used += ap->cpus, m->mem_used += ap->mem;
            ap->machine = mi;
            placed++;
            json_object_set_new(d, "machine", json_string(m->name));
        } else {
            json_object_set_new(d, "machine", json_null());
        }
        json_object_set_new(d, "candidates", cand);
        json_array_append_new(decisions, d);
    }
    json_object_set_new(doc, "decisions", decisions);
    json_object_set_new(doc, "placed", json_integer(placed));
    json_object_set_new(doc, "waiting", json_integer(fl.f.napps - first - placed));
    if (json) {
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, CMD, "cannot write JSON");
    } else {
        /* the interference policy's check as it decided: the model reads no unknown rule (no evidence is no
         * pressure), so its header names none */
        bool headroom = o.decide == PL_DECIDE_HEADROOM;
        const char *how = !interference ? ""
                          : headroom    ? (o.pessimistic ? ", deciding by the headroom rule, unknowns pessimistic"
                                                         : ", deciding by the headroom rule, unknowns optimistic")
                                        : ", deciding by the model";
        const char *refusing = !interference   ? ""
                               : o.likely && !headroom ? ", refusing established and likely breaks"
                               : o.established ? ", refusing established breaks only"
                               : headroom      ? ", refusing any negative headroom"
                                               : ", refusing uncertain too";
        printf("%u applications on %u machines (%s policy%s%s): %u placed, %u wait\n", fl.f.napps - first, fl.f.nm,
               policy, how, refusing, placed, fl.f.napps - first - placed);
        size_t i;
        json_t *d;
        json_array_foreach(decisions, i, d)
        {
            json_t *m = json_object_get(d, "machine");
            printf("\n%s (%d CPUs, %.1f GiB): %s%s\n", TTY_TEXT(json_string_value(json_object_get(d, "application"))),
                   (int)json_integer_value(json_object_get(d, "cpus")),
                   json_real_value(json_object_get(d, "memory_gib")), json_is_string(m) ? "-> " : "waits",
                   TTY_TEXT(json_string_value(m)));
            size_t k;
            json_t *cd;
            json_array_foreach(json_object_get(d, "candidates"), k, cd)
            {
                json_t *fit = json_object_get(cd, "fit");
                printf("  %-10s %-8s %s", TTY_TEXT(json_string_value(json_object_get(cd, "machine"))),
                       json_string_value(json_object_get(cd, "verdict")),
                       TTY_TEXT(json_string_value(json_object_get(cd, "why"))));
                if (fit)
                    printf(", fit %.1f", json_real_value(fit));
                printf("\n");
            }
        }
    }
    json_decref(doc);
    pl_fleet_free(&fl);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define CA struct colocate_args
static const struct cli_opt colocate_table[] = {
    {CLI_STR("fleet", "FILE", CA, fleet, "machines and their tenants (docs/placement.md, \"Fleet and arrivals files\")")},
    {CLI_LIST("profiles", "FILE...", CA, profiles, nprofiles,
              "the applications' profiles; FILE:CPUS:GIB gives one its own demand")},
    {CLI_STR("policy", "P", CA, policy,
             "interference (the co-location check, both ways, on every machine where\n"
             "CPU and memory fit) or least-loaded (CPU and memory only)"),
     .def = "interference"},
    {CLI_ULONG("cpus", "N", CA, cpus, 1, 65536, "the CPUs of an application that does not give its own"), .def = "1"},
    {CLI_DOUBLE("memory-gib", "G", CA, gib, 0, INFINITY, "the memory of an application that does not give its own"),
     .flags = CLI_OPT_GT_MIN, .def = "1"},
    PLACE_COLOC_OPTS(CA),
    PLACE_OPT_JSON(CA),
};
#undef CA

const struct cli_cmd cli_cmd_place_colocate = {
    .name = "place colocate",
    CLI_RUN(cmd_place_colocate, struct colocate_args),
    .summary = "place a stream of applications on a fleet with tenants, each with its reason",
    .usage = "usage: ibench place colocate --fleet FLEET.json --profiles FILE[:CPUS[:GIB]] [FILE...]\n"
             "                             [--policy interference|least-loaded] [--cpus N] [--memory-gib G]\n"
             "                             [--margin M] [--unknown pessimistic|optimistic]\n"
             "                             [--refuse likely|established|uncertain] [--decide model|headroom] [--json]\n\n",
    .about = "Places applications (one per profile, in the order given) on a fleet whose machines may already hold\n"
             "tenants, one after another, and says for each where it goes, or that it waits, and why.  The\n"
             "interference policy decides as place pair does: by the model (--decide model, the default: each\n"
             "member's prediction and bounds against its QoS line) or by the headroom rule before 1.7 (--decide\n"
             "headroom).  --margin, --unknown, --refuse and --decide are the co-location check's (ibench place pair\n"
             "--help; --margin and --unknown shape the headroom rule only): a machine whose check is uncertain takes\n"
             "the application only when no safe or empty machine does.\n\n",
    CLI_OPTS(colocate_table),
    .args = CLI_ARGS_ANY,
};
