/* cmd_place_colocate.c - `ibench place colocate`: a stream of applications placed on a fleet with tenants, one
 * after another, by a policy of the fleet simulator (pl_sim.h), each decision with its reason (docs/placement.md,
 * "Placing a stream of applications"). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
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

enum { OPT_FLEET = 1, OPT_PROFILES, OPT_POLICY, OPT_MARGIN, OPT_UNKNOWN, OPT_CPUS, OPT_MEM, OPT_REFUSE };

static int usage(void)
{
    printf("usage: ibench place colocate --fleet FLEET.json --profiles FILE[:CPUS[:GIB]] [FILE...]\n"
           "                             [--policy interference|least-loaded] [--cpus N] [--memory-gib G]\n"
           "                             [--margin M] [--unknown pessimistic|optimistic]\n"
           "                             [--refuse established|uncertain] [--json]\n\n"
           "Places applications (one per profile, in the order given) on a fleet whose machines may already hold\n"
           "tenants, one after another, and says for each where it goes, or that it waits, and why.\n\n"
           "  --fleet FILE       machines and their tenants (docs/placement.md, \"Fleet and arrivals files\")\n"
           "  --profiles FILE... the applications' profiles; FILE:CPUS:GIB gives one its own demand\n"
           "  --policy P         interference (default: the co-location check, both ways, on every machine where\n"
           "                     CPU and memory fit) or least-loaded (CPU and memory only)\n"
           "  --cpus N, --memory-gib G   the demand of an application that does not give its own (default 1, 1)\n"
           "  --margin M, --unknown MODE, --refuse RULE  the co-location check's (ibench place pair --help; default\n"
           "                     5, pessimistic, established): a machine whose check is uncertain takes the\n"
           "                     application only when no safe or empty machine does\n"
           "  --json             JSON (docs/schema/placement-v1.schema.json) instead of a table\n");
    return IB_EXIT_OK;
}

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

int cmd_place_colocate(int argc, char **argv)
{
    static const struct option lo[] = {{"fleet", required_argument, 0, OPT_FLEET},
                                       {"profiles", required_argument, 0, OPT_PROFILES},
                                       {"policy", required_argument, 0, OPT_POLICY},
                                       {"margin", required_argument, 0, OPT_MARGIN},
                                       {"unknown", required_argument, 0, OPT_UNKNOWN},
                                       {"refuse", required_argument, 0, OPT_REFUSE},
                                       {"cpus", required_argument, 0, OPT_CPUS},
                                       {"memory-gib", required_argument, 0, OPT_MEM},
                                       {"json", no_argument, 0, PLACE_OPT_JSON},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *fleet = NULL, *policy = "interference";
    struct pl_coloc_opts o = {.margin = PL_COLOC_MARGIN, .pessimistic = true, .established = true};
    unsigned long dcpus = 1;
    double dgib = 1;
    int json = 0, c;
    char **apps = calloc((size_t)argc + 1, sizeof *apps);
    unsigned napps = 0;
    if (!apps)
        return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
    optind = 0;
    opterr = 0;
    int rc = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'h': free(apps); return usage();
        case OPT_FLEET: fleet = optarg; break;
        case OPT_PROFILES: apps[napps++] = optarg; break;
        case OPT_POLICY: policy = optarg; break;
        case OPT_MARGIN:
            if (parse_double(optarg, &o.margin) < 0 || !(o.margin >= 0 && o.margin <= 100))
                rc = cli_fail(IB_EXIT_USAGE, CMD, "--margin '%s': a number of points in 0-100 expected", optarg);
            break;
        case OPT_UNKNOWN:
            if (strcmp(optarg, "pessimistic") && strcmp(optarg, "optimistic"))
                rc = cli_fail(IB_EXIT_USAGE, CMD, "--unknown '%s': pessimistic or optimistic expected", optarg);
            o.pessimistic = !strcmp(optarg, "pessimistic");
            break;
        case OPT_REFUSE:
            if (place_parse_refuse(optarg, &o.established) < 0)
                rc = cli_fail(IB_EXIT_USAGE, CMD, "--refuse '%s': established or uncertain expected", optarg);
            break;
        case OPT_CPUS:
            if (parse_uint(optarg, 1, 65536, &dcpus) < 0)
                rc = cli_fail(IB_EXIT_USAGE, CMD, "--cpus '%s': a whole number in 1-65536 expected", optarg);
            break;
        case OPT_MEM:
            if (parse_double(optarg, &dgib) < 0 || !(dgib > 0))
                rc = cli_fail(IB_EXIT_USAGE, CMD, "--memory-gib '%s': a number > 0 expected", optarg);
            break;
        case PLACE_OPT_JSON: json = 1; break;
        default: rc = cli_fail(IB_EXIT_USAGE, CMD, "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    while (rc == 0 && optind < argc) /* --profiles A B C: the files after the first are operands */
        apps[napps++] = argv[optind++];
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
    json_object_set_new(doc, "refuse", json_string(o.established ? "established" : "uncertain"));
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
        printf("%u applications on %u machines (%s policy%s%s): %u placed, %u wait\n", fl.f.napps - first, fl.f.nm,
               policy, interference ? (o.pessimistic ? ", unknowns pessimistic" : ", unknowns optimistic") : "",
               interference ? (o.established ? ", refusing established breaks only" : ", refusing any negative headroom")
                            : "",
               placed, fl.f.napps - first - placed);
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
