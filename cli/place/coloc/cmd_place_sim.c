/* cmd_place_sim.c - `ibench place simulate`: the fleet simulator (placement/coloc/pl_sim.h) on a built-in scenario or on
 * fleet and arrivals files (pl_fleet.h).  --profiles DIR replaces the built-in scenario's pool of recorded profiles
 * with every profile DIR holds (*.json, by name: a fixed order keeps a run deterministic); one that does not parse
 * is bad input (exit 2).  --policy both runs the two policies on the same inputs, side by side; --plot charts the
 * machines used over time of every policy run. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "corun.h"
#include "ib_err.h"
#include "pl_fleet.h"
#include "pl_sim.h"
#include "place.h"
#include "plot.h"

#define CMD "place simulate"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names of DIR's *.json files, sorted (the order a run depends on: never readdir's).  0, or an exit code after
 * printing one line naming opt; *names (malloc'd, each malloc'd) holds what was listed either way. */
static int json_names(const char *opt, const char *dir, char ***names, unsigned *nn)
{
    *names = NULL, *nn = 0;
    DIR *d = opendir(dir);
    if (!d)
        return cli_fail(IB_EXIT_USAGE, CMD, "%s %s: %s", opt, dir, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char **t = realloc(*names, (*nn + 1) * sizeof *t);
        if (!t || !(t[*nn] = strdup(e->d_name))) {
            *names = t ? t : *names;
            rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
            break;
        }
        *names = t, (*nn)++;
    }
    closedir(d);
    if (*nn)
        qsort(*names, *nn, sizeof **names, cmp_str);
    return rc;
}

/* Reads DIR's *.json profiles, sorted by name.  0, or an exit code after printing one line. */
static int read_dir(const char *dir, struct profile **out, unsigned *n)
{
    *out = NULL, *n = 0;
    char **names = NULL;
    unsigned nn = 0;
    int rc = json_names("--profiles", dir, &names, &nn);
    if (!rc && nn) {
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
        else {
            cli_profile_warn(CMD, &(*out)[i]);
            (*n)++;
        }
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

/* Reads DIR's *.json co-run records into the recorded truth's pairs.  0, or an exit code after printing one line. */
static int read_records(const char *dir, struct pl_sim_records *out)
{
    struct corun_record *recs = NULL;
    unsigned n = 0;
    char **names = NULL;
    unsigned nn = 0;
    int rc = json_names("--records", dir, &names, &nn);
    if (rc == 0 && nn == 0)
        rc = cli_fail(IB_EXIT_USAGE, CMD, "--records %s: no co-run record (*.json) there", dir);
    if (rc == 0 && !(recs = calloc(nn, sizeof *recs)))
        rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
    for (unsigned i = 0; rc == 0 && i < nn; i++) {
        char path[4096], why[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int r = corun_read(path, &recs[n], why, sizeof why);
        if (r < 0) {
            rc = cli_fail(r == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
        } else if (!recs[n].complete) { /* stopped part way (docs/corun.md, "Interrupted"): not the measurement it
                                         * meant to be; skipped, said, as place predict --check does */
            fprintf(stderr, "ibench %s: warning: %s skipped: an incomplete record (%s)\n", CMD, TTY_TEXT(path),
                    recs[n].reason ? TTY_TEXT(recs[n].reason) : "");
            corun_free(&recs[n]);
        } else {
            n++;
        }
    }
    if (rc == 0 && n == 0)
        rc = cli_fail(IB_EXIT_USAGE, CMD, "--records %s: no complete co-run record there", dir);
    if (rc == 0) {
        char why[256];
        if (pl_sim_records_make(recs, n, out, why, sizeof why) < 0)
            rc = cli_fail(IB_EXIT_FAIL, CMD, "%s", why);
    }
    for (unsigned i = 0; i < n; i++)
        corun_free(&recs[i]);
    free(recs);
    for (unsigned i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    return rc;
}

static void print_result(const char *name, const char *policy, unsigned long long seed, const struct pl_sim_result *r)
{
    printf("%s, policy %s%s%s%s, seed %llu: %u applications on %u machines\n", name, policy,
           r->decide ? " (decide " : "", r->decide ? r->decide : "", r->decide ? ")" : "", seed, r->napps,
           r->nmachines);
    printf("  QoS violations      %u (applications ever under their QoS in the truth)\n"
           "  adaptive moves      %u\n  machines closed     %u\n"
           "  waited on arrival   %u (mean wait %.1f s)\n"
           "  relative perf       mean %.3f, worst %.3f (each application's lowest)\n"
           "  performance         mean %.3f (run time alone / run time)\n"
           "  machine time        %.0f machine-seconds; mean %.2f machines while busy, peak %u; last left at %u s\n"
           "  utilization         %.3f of used machines' CPUs held, %.3f doing work (rate-weighted)\n",
           r->violations, r->moves, r->closures, r->waited, r->mean_wait, r->mean_rel, r->worst_rel, r->mean_perf,
           r->machine_seconds, r->mean_used, r->peak_used, r->makespan, r->utilization, r->useful);
    unsigned long all = r->truth_recorded + r->truth_model;
    if (all)
        printf("  truth               recorded: %lu of %lu co-runner pairs evaluated drew from records (%.1f %%), "
               "%lu went through the model (no record)\n",
               r->truth_recorded, all, 100.0 * r->truth_recorded / all, r->truth_model);
}

struct simulate_args {
    struct place_opts po;
    const char *scenario, *fleet, *arrivals, *profiles, *policy, *seed, *plot, *truth, *records, *decide;
};

/* --seed is read with the other checks (its refusal names no value), as --policy and --truth are */
static int cmd_place_simulate(void *opts, int argc, char **argv, int first)
{
    const struct simulate_args *a = opts;
    const char *scenario = a->scenario, *fleet = a->fleet, *arrivals = a->arrivals, *dir = a->profiles;
    const char *policy = a->policy, *seed_arg = a->seed, *plot = a->plot, *truth = a->truth, *records = a->records;
    int json = a->po.json;
    if (!scenario == !(fleet || arrivals))
        return cli_fail(IB_EXIT_USAGE, CMD, "--scenario NAME (known: ibench-200x40, ibench-200x40-recorded) or --fleet and --arrivals expected");
    if (!scenario && (!fleet || !arrivals))
        return cli_fail(IB_EXIT_USAGE, CMD, "--fleet and --arrivals go together");
    if (!scenario && dir)
        return cli_fail(IB_EXIT_USAGE, CMD, "--profiles DIR is the scenario's pool: the arrivals file names profiles");
    if (!policy)
        return cli_fail(IB_EXIT_USAGE, CMD, "--policy least-loaded|interference|both expected");
    if (strcmp(truth, "model") != 0 && strcmp(truth, "recorded") != 0)
        return cli_fail(IB_EXIT_USAGE, CMD, "--truth '%s': model or recorded", truth);
    if (!strcmp(truth, "recorded") != !!records)
        return cli_fail(IB_EXIT_USAGE, CMD, "--truth recorded and --records DIR go together");
    const struct pl_sim_policy *pols[2] = {NULL, NULL};
    unsigned npol = 1;
    if (!strcmp(policy, "both"))
        pols[0] = pl_sim_policy_find("least-loaded"), pols[1] = pl_sim_policy_find("interference"), npol = 2;
    else if (!(pols[0] = pl_sim_policy_find(policy)))
        return cli_fail(IB_EXIT_USAGE, CMD, "unknown policy '%s' (known: least-loaded, interference, both)", policy);
    if (json && npol > 1)
        return cli_fail(IB_EXIT_USAGE, CMD, "--json takes one policy (run it once per policy)");
    char *end;
    errno = 0;
    unsigned long long seed = seed_arg ? strtoull(seed_arg, &end, 10) : 0;
    if (!seed_arg || errno || end == seed_arg || *end || seed_arg[0] == '-')
        return cli_fail(IB_EXIT_USAGE, CMD, "--seed: a non-negative integer expected");
    char why[512];
    if (plot && plot_check(plot, why, sizeof why) < 0)
        return cli_fail(IB_EXIT_USAGE, CMD, "--plot: %s", why);
    struct profile *rec = NULL;
    unsigned nrec = 0;
    struct pl_sim_records recorded = {0};
    int rc = records ? read_records(records, &recorded) : 0;
    if (rc == 0 && dir)
        rc = read_dir(dir, &rec, &nrec);
    if (rc) {
        pl_sim_records_free(&recorded);
        return rc;
    }
    const struct profile **rp = calloc(nrec ? nrec : 1, sizeof *rp);
    struct pl_sim_scenario s = {0};
    struct pl_fleet fl = {0};
    struct pl_sim_fleet *f = NULL;
    struct pl_sim_result r[2] = {{0}, {0}};
    const char *name = scenario ? scenario : fleet;
    if (!rp) {
        rc = cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
        goto out;
    }
    for (unsigned i = 0; i < nrec; i++)
        rp[i] = &rec[i];
    int e = scenario ? pl_sim_scenario_make(scenario, seed, dir ? rp : NULL, nrec, &s, why, sizeof why) /* NULL: built-in pool */
                     : pl_fleet_read(fleet, &fl, why, sizeof why);
    if (e == 0 && !scenario && fl.ntenants)
        e = ib_why(why, sizeof why, -EINVAL, "%s: simulate starts from empty machines (tenants are for place colocate)",
                   fleet);
    if (e == 0 && !scenario)
        e = pl_fleet_read_arrivals(arrivals, &fl, why, sizeof why);
    if (e < 0) {
        rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
        goto out;
    }
    f = scenario ? &s.f : &fl.f;
    f->records = records ? &recorded : NULL;
    f->decide = place_decide(a->decide);
    for (unsigned k = 0; k < npol && rc == 0; k++) {
        e = pl_sim_run(f, pols[k], seed, &r[k], why, sizeof why);
        if (e < 0)
            rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    }
    if (rc == 0 && json) {
        char *j = pl_sim_json(name, pols[0]->name, seed, truth, &r[0]);
        if (!j || fputs(j, stdout) == EOF)
            rc = cli_fail(IB_EXIT_FAIL, CMD, "cannot write the result");
        free(j);
    } else if (rc == 0) {
        for (unsigned k = 0; k < npol; k++) {
            if (k)
                printf("\n");
            print_result(name, pols[k]->name, seed, &r[k]);
        }
    }
    if (rc == 0 && plot) {
        const char *labels[2] = {pols[0]->name, npol > 1 ? pols[1]->name : NULL};
        unsigned *series[2] = {r[0].used, r[1].used}, n[2] = {r[0].nseries, r[1].nseries};
        char title[256];
        snprintf(title, sizeof title, "ibench place simulate: %s, seed %llu", name, seed);
        if (plot_machines(plot, title, labels, series, n, npol, why, sizeof why) < 0)
            rc = cli_fail(IB_EXIT_FAIL, CMD, "--plot: %s", why);
        else
            fprintf(stderr, "ibench %s: wrote %s\n", CMD, plot);
    }
out:
    for (unsigned k = 0; k < 2; k++)
        pl_sim_result_free(&r[k]);
    pl_sim_records_free(&recorded);
    pl_sim_scenario_free(&s);
    pl_fleet_free(&fl);
    free(rp);
    for (unsigned i = 0; i < nrec; i++)
        profile_free(&rec[i]);
    free(rec);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define SA struct simulate_args
static const struct cli_opt simulate_table[] = {
    {CLI_STR("scenario", "NAME", SA, scenario,
             "ibench-200x40: 200 applications, 40 machines, one arrival a second, one in four\n"
             "a recorded profile; ibench-200x40-recorded: the same, every one recorded")},
    {CLI_STR("profiles", "DIR", SA, profiles,
             "recorded profiles (*.json) mixed into the pool with synthetic ones, instead of\n"
             "the built-in ones (recorded on the development machine, docs/data/corun)")},
    {CLI_STR("fleet", "FILE", SA, fleet, "machines (no tenants), with --arrivals, instead of a scenario")},
    {CLI_STR("arrivals", "FILE", SA, arrivals, "the applications, with --fleet")},
    {CLI_STR("policy", "P", SA, policy, "least-loaded, interference, or both (side by side; not with --json)")},
    {CLI_STR("seed", "S", SA, seed, "the run is a function of the seed alone"), .sample = "1"},
    PLACE_OPT_JSON(SA),
    {CLI_STR("plot", "FILE", SA, plot, "machines used over time, a line per policy (.png or .svg, through gnuplot)")},
    {CLI_STR("truth", "T", SA, truth,
             "model: the truth above; recorded: for a co-runner B of A with a co-run\n"
             "record of (A, B) in --records DIR, a repetition drawn from the records instead,\n"
             "the other co-runners through the model; the share from records is reported"),
     .def = "model"},
    {CLI_STR("records", "DIR", SA, records, "co-run records (ibench corun --out, *.json) for --truth recorded")},
    PLACE_OPT_DECIDE(SA, decide,
                     "what decides in the interference policy: model (each member's prediction and\n"
                     "bounds against its QoS line) or headroom (tolerated - 5 margin - others'\n"
                     "caused, unknowns optimistic: the rule before 1.7); uncertain is refused in both\n"
                     "(docs/placement.md)"),
};
#undef SA

const struct cli_cmd cli_cmd_place_simulate = {
    .name = "place simulate",
    CLI_RUN(cmd_place_simulate, struct simulate_args),
    .summary = "a fleet simulator: co-location policies on profiles against a ground truth",
    .usage = "usage: ibench place simulate (--scenario NAME [--profiles DIR] | --fleet FILE --arrivals FILE)\n"
             "                             --policy least-loaded|interference|both --seed S [--json] [--plot FILE]\n"
             "                             [--truth model|recorded --records DIR] [--decide model|headroom]\n\n",
    .about = "A fleet of machines receives applications with profiles; a policy places them, and a ground truth (the\n"
             "profiles' sensitivity curves under the co-runners' summed caused pressure, times 2 % noise) says how\n"
             "each fares and how fast it does its work (docs/placement.md, \"A fleet simulator\").  The interference\n"
             "policy places where the co-location check does not refuse, decided by the model (--decide model, the\n"
             "default) or by the headroom rule before 1.7 (--decide headroom); a group the check calls uncertain is\n"
             "refused: a simulator that packs must not count what the profiles cannot clear as safe.\n\n",
    CLI_OPTS(simulate_table),
};
