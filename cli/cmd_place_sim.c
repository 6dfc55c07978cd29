/* cmd_place_sim.c - `ibench place simulate`: the fleet simulator (placement/pl_sim.h) on a built-in scenario.
 * --profiles DIR adds every profile DIR holds (*.json, by name: a fixed order keeps a run deterministic) to the
 * scenario's pool of recorded profiles; one that does not parse is bad input (exit 2).  --fleet/--arrivals files
 * are not implemented yet (exit 2 says so). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "pl_sim.h"
#include "place.h"

#define CMD "place simulate"

enum { OPT_SCENARIO = 1, OPT_FLEET, OPT_ARRIVALS, OPT_PROFILES, OPT_POLICY, OPT_SEED };

static int usage(void)
{
    printf("usage: ibench place simulate --scenario NAME --policy least-loaded|interference --seed S\n"
           "                             [--profiles DIR] [--json]\n"
           "  a fleet of machines receives applications with profiles; a policy places them and a ground truth\n"
           "  (the profiles' sensitivity curves under the co-runners' summed caused pressure) says how each fares\n"
           "  --scenario NAME   ibench-200x40: 200 applications, 40 machines, one arrival a second\n"
           "  --profiles DIR    recorded profiles (*.json) mixed into the pool with synthetic ones, instead of\n"
           "                    the built-in ones (recorded on the development machine, docs/data/corun)\n"
           "  --seed S          the run is a function of the seed alone\n"
           "  --json            the result as JSON\n");
    return IB_EXIT_OK;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Reads DIR's *.json profiles, sorted by name.  0, or an exit code after printing one line. */
static int read_dir(const char *dir, struct profile **out, unsigned *n)
{
    *out = NULL, *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return cli_fail(IB_EXIT_USAGE, CMD, "--profiles %s: %s", dir, strerror(errno));
    char **names = NULL;
    unsigned nn = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char **t = realloc(names, (nn + 1) * sizeof *t);
        if (!t || !(t[nn] = strdup(e->d_name))) {
            names = t ? t : names;
            rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
            break;
        }
        names = t, nn++;
    }
    closedir(d);
    if (!rc && nn) {
        qsort(names, nn, sizeof *names, cmp_str);
        *out = calloc(nn, sizeof **out);
        if (!*out)
            rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
    }
    for (unsigned i = 0; !rc && i < nn; i++) {
        char path[4096], why[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int r = profile_read(path, &(*out)[i], why, sizeof why);
        if (r < 0)
            rc = cli_fail(r == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
        else
            (*n)++;
    }
    for (unsigned i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    if (rc) {
        for (unsigned i = 0; i < *n; i++)
            profile_free(&(*out)[i]);
        free(*out);
        *out = NULL, *n = 0;
    }
    return rc;
}

int cmd_place_simulate(int argc, char **argv)
{
    static const struct option lo[] = {{"scenario", required_argument, 0, OPT_SCENARIO},
                                       {"fleet", required_argument, 0, OPT_FLEET},
                                       {"arrivals", required_argument, 0, OPT_ARRIVALS},
                                       {"profiles", required_argument, 0, OPT_PROFILES},
                                       {"policy", required_argument, 0, OPT_POLICY},
                                       {"seed", required_argument, 0, OPT_SEED},
                                       {"json", no_argument, 0, PLACE_OPT_JSON},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *scenario = NULL, *fleet = NULL, *arrivals = NULL, *dir = NULL, *policy = NULL, *seed_arg = NULL;
    int json = 0, c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'h': return usage();
        case OPT_SCENARIO: scenario = optarg; break;
        case OPT_FLEET: fleet = optarg; break;
        case OPT_ARRIVALS: arrivals = optarg; break;
        case OPT_PROFILES: dir = optarg; break;
        case OPT_POLICY: policy = optarg; break;
        case OPT_SEED: seed_arg = optarg; break;
        case PLACE_OPT_JSON: json = 1; break;
        default: return cli_fail(IB_EXIT_USAGE, CMD, "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc)
        return cli_fail(IB_EXIT_USAGE, CMD, "unexpected argument '%s'", argv[optind]);
    if (fleet || arrivals)
        return cli_fail(IB_EXIT_USAGE, CMD, "--fleet/--arrivals: not implemented yet; use --scenario");
    if (!scenario)
        return cli_fail(IB_EXIT_USAGE, CMD, "--scenario NAME expected (known: ibench-200x40)");
    if (!policy)
        return cli_fail(IB_EXIT_USAGE, CMD, "--policy least-loaded|interference expected");
    const struct pl_sim_policy *pol = pl_sim_policy_find(policy);
    if (!pol)
        return cli_fail(IB_EXIT_USAGE, CMD, "unknown policy '%s' (known: least-loaded, interference)", policy);
    char *end;
    errno = 0;
    unsigned long long seed = seed_arg ? strtoull(seed_arg, &end, 10) : 0;
    if (!seed_arg || errno || end == seed_arg || *end || seed_arg[0] == '-')
        return cli_fail(IB_EXIT_USAGE, CMD, "--seed: a non-negative integer expected");
    struct profile *rec = NULL;
    unsigned nrec = 0;
    int rc = dir ? read_dir(dir, &rec, &nrec) : 0;
    if (rc)
        return rc;
    const struct profile **rp = calloc(nrec ? nrec : 1, sizeof *rp);
    struct pl_sim_scenario s;
    struct pl_sim_result r = {0};
    char why[512];
    if (!rp) {
        rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
        goto out;
    }
    for (unsigned i = 0; i < nrec; i++)
        rp[i] = &rec[i];
    int e = pl_sim_scenario_make(scenario, seed, dir ? rp : NULL, nrec, &s, why, sizeof why); /* NULL: built-in pool */
    if (e < 0) {
        rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
        goto out;
    }
    e = pl_sim_run(&s.f, pol, seed, &r, why, sizeof why);
    if (e < 0) {
        rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    } else if (json) {
        char *j = pl_sim_json(scenario, policy, seed, &r);
        if (!j || fputs(j, stdout) == EOF)
            rc = cli_fail(IB_EXIT_FAIL, CMD, "cannot write the result");
        free(j);
    } else {
        printf("scenario %s, policy %s, seed %llu: %u applications on %u machines\n", scenario, policy, seed,
               r.napps, r.nmachines);
        printf("  QoS violations      %u (applications ever under their QoS in the truth)\n"
               "  adaptive moves      %u\n  machines closed     %u\n"
               "  waited on arrival   %u (mean wait %.1f s)\n"
               "  relative perf       mean %.3f, worst %.3f (each application's lowest)\n"
               "  performance         mean %.3f (run time alone / run time)\n"
               "  machine time        %.0f machine-seconds; mean %.2f machines while busy, peak %u; last left at %u s\n"
               "  utilization         %.3f of used machines' CPUs held, %.3f doing work (rate-weighted)\n",
               r.violations, r.moves, r.closures, r.waited, r.mean_wait, r.mean_rel, r.worst_rel, r.mean_perf,
               r.machine_seconds, r.mean_used, r.peak_used, r.makespan, r.utilization, r.useful);
    }
    pl_sim_result_free(&r);
    pl_sim_scenario_free(&s);
out:
    free(rp);
    for (unsigned i = 0; i < nrec; i++)
        profile_free(&rec[i]);
    free(rec);
    return rc;
}
