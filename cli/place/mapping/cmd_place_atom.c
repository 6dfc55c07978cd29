/* cmd_place_atom.c - `ibench place atom`: AToM, Tang et al. ISCA'11's adaptive thread-to-core mapper, on a live process or on a
 * simulated one (--oracle).  The method is placement/mapping/pl_atom.h; this file is its two adapters: the classes of the
 * process's thread count (pl_classes), pinning (pl_proc_apply) and the metric (the profile's adapters), or the
 * oracle.  docs/placement.md, "The adaptive mapper". */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_atom.h"
#include "pl_classes.h"
#include "pl_proc.h"
#include "place.h"
#include "render.h"
#include "target.h"

#define CMD "place atom"

static void atom_about(FILE *f)
{
    fprintf(f, "AToM (Tang et al. ISCA'11 section 5.2): a learning phase runs the application in each sharing class of its thread\n"
               "count (the important placements of `ibench place classes`) for --period seconds each, as --rounds\n"
               "interleaved slices, measuring its own metric; then pins it to the winner.  A class wins clearly only "
               "when\n"
               "its mean beats every other by more than %.0f standard errors over the slices; otherwise the output says\n"
               "so and keeps the leader.  Learning takes classes x period.\n\n",
            PL_ATOM_Z);
}

/* ---- live adapter */
struct live {
    struct place_live pl;
    const struct pl_class_list *cl;
    const struct pl_hier *h;
};

static int cpus_of(const struct pl_hier *h, const struct pl_class *c, int *cpus)
{
    for (unsigned j = 0; j < c->nthreads; j++)
        cpus[j] = h->pu_os[c->pus[j]];
    return (int)c->nthreads;
}

static int live_apply(void *ctx, unsigned k, char *why, size_t len)
{
    struct live *L = ctx;
    int cpus[4096];
    unsigned n = (unsigned)cpus_of(L->h, &L->cl->v[k], cpus);
    return place_live_pin(&L->pl, cpus, n, why, len);
}

static int live_measure(void *ctx, unsigned k, double seconds, double *value, char *why, size_t len)
{
    struct live *L = ctx;
    (void)k;
    return place_live_measure(&L->pl, seconds, value, why, len);
}

static const struct pl_atom_ops live_ops = {live_apply, live_measure};

/* ---- output */
static json_t *phase_json(const struct pl_atom_result *r, const struct pl_class_list *cl, const struct pl_hier *h,
                          bool applied)
{
    json_t *cls = json_array();
    for (unsigned k = 0; k < r->nclasses; k++) {
        char note[80] = "", cpus_s[1024] = "";
        pl_class_notation(h, &cl->v[k], note, sizeof note);
        place_pus_cpulist(h, cl->v[k].pus, cl->v[k].nthreads, cpus_s, sizeof cpus_s);
        const struct pl_atom_stat *s = &r->st[k];
        json_array_append_new(cls, json_pack("{s:i,s:s,s:s,s:i,s:o,s:o}", "class", (int)k + 1, "notation", note,
                                             "cpus", cpus_s, "slices", (int)s->n,
                                             "mean", isfinite(s->mean) ? json_real(s->mean) : json_null(), "se",
                                             isfinite(s->se) ? json_real(s->se) : json_null()));
    }
    return json_pack("{s:o,s:f,s:f,s:i,s:i,s:o,s:b,s:s,s:b}", "classes", cls, "slice_s", r->slice_s, "learning_s",
                     r->learning_s, "best", r->best + 1, "rival", r->rival + 1,
                     "margin_se", isfinite(r->margin_se) ? json_real(r->margin_se) : json_null(), "clear", r->clear,
                     "why", r->why, "applied", applied);
}

static void phase_print(unsigned cycle, const struct pl_atom_result *r, const struct pl_class_list *cl,
                        const struct pl_hier *h, bool applied, const char *unit)
{
    printf("learning phase %u: %u class%s x %.3g s = %.3g s (%u slices of %.3g s)\n", cycle, r->nclasses,
           r->nclasses == 1 ? "" : "es", r->nslices ? r->learning_s / r->nclasses : 0.0, r->learning_s, r->nslices,
           r->slice_s);
    printf("  %5s  %-20s %8s %12s %10s\n", "class", "notation", "slices", "mean", "se");
    for (unsigned k = 0; k < r->nclasses; k++) {
        char note[80] = "";
        pl_class_notation(h, &cl->v[k], note, sizeof note);
        const struct pl_atom_stat *s = &r->st[k];
        printf("  %5u  %-20s %8u %12.5g %10.3g%s\n", k + 1, note[0] ? note : "-", s->n, s->mean, s->se,
               (int)k == r->best ? "  <- best" : "");
    }
    printf("  %s%s%s\n", r->why, unit[0] ? "; metric in " : "", unit);
    printf("  %s class %d\n", applied ? "applied" : "would apply (--dry-run or oracle)", r->best + 1);
}

struct atom_args {
    struct place_opts po;
    unsigned long pid, threads, rounds, cycles, seed;
    double period, relearn;
    const char *oracle, *metric;
    int dry;
};

static int cmd_place_atom(void *opts, int argc, char **argv, int first)
{
    const struct atom_args *a = opts;
    const struct place_opts po = a->po;
    unsigned long pid = a->pid, threads = a->threads, rounds = a->rounds, cycles = a->cycles, seed = a->seed;
    double period = a->period, relearn = a->relearn;
    const char *oracle = a->oracle, *mspec = a->metric;
    bool dry = a->dry;
    if (!!pid == !!oracle)
        return cli_fail(IB_EXIT_USAGE, CMD, "one of --pid and --oracle is needed");
    if (oracle && !threads)
        return cli_fail(IB_EXIT_USAGE, CMD, "--oracle needs --threads (the simulated application's thread count)");
    if (pid && threads)
        return cli_fail(IB_EXIT_USAGE, CMD, "--threads is for --oracle: a live process's threads are counted");
    if (pid && !mspec && !dry)
        return cli_fail(IB_EXIT_USAGE, CMD, "--pid needs --metric (command:CMD, command-lower:CMD or cputime)");
    if (pid && po.topology && strcmp(po.topology, "live"))
        return cli_fail(IB_EXIT_USAGE, CMD, "--pid runs on this machine: --topology must be live");
    if (cycles && relearn < 0 && cycles > 1)
        return cli_fail(IB_EXIT_USAGE, CMD, "--cycles above 1 needs --relearn");
    if (!cycles)
        cycles = relearn < 0 ? 1 : 0; /* 0: until interrupted */
    if (pid && period / rounds < 0.05)
        return cli_fail(IB_EXIT_USAGE, CMD, "slices of %.3g s are under 50 ms: raise --period or lower --rounds",
                        period / rounds);

    char why[512] = "";
    struct live L = {0};
    if (place_live_open(&L.pl, (pid_t)pid, mspec, why, sizeof why) < 0)
        return cli_fail(IB_EXIT_USAGE, CMD, "%s", why);
    struct pl_machine m;
    struct pl_hier h;
    int rc = place_open("atom", &po, &m, &h);
    if (rc) {
        place_live_close(&L.pl);
        return rc;
    }
    struct pl_atom_oracle orc = {0};
    struct pl_class_list cl = {0};
    int e = 0;
    if (pid) {
        if ((e = pid_check((pid_t)pid, why, sizeof why)) < 0)
            goto bad_input;
        struct pl_threads t;
        if ((e = pl_proc_threads((pid_t)pid, &t, why, sizeof why)) < 0)
            goto bad_input;
        threads = t.n;
        pl_threads_free(&t);
    }
    if (threads > h.npus) {
        e = ib_why(why, sizeof why, -EINVAL, "%lu threads, %u PUs: AToM maps one thread a PU", threads, h.npus);
        goto bad_input;
    }
    struct pl_classes_opts co = {.nthreads = (unsigned)threads, .all = false, .limit = PL_CLASSES_LIMIT};
    if ((e = pl_classes(&h, &co, &cl, why, sizeof why)) < 0)
        goto bad_input;
    if (cl.n == 0) { /* nothing balanced: every class competes */
        pl_class_list_free(&cl);
        co.all = true;
        if ((e = pl_classes(&h, &co, &cl, why, sizeof why)) < 0)
            goto bad_input;
    }
    if (oracle) {
        FILE *f = fopen(oracle, "r");
        char *text = NULL;
        size_t cap = 0;
        if (!f || getdelim(&text, &cap, 0, f) < 0) {
            e = ib_why(why, sizeof why, -EINVAL, "%s: %s", oracle, f ? "empty" : strerror(errno));
            if (f)
                fclose(f);
            free(text);
            goto bad_input;
        }
        fclose(f);
        e = pl_atom_oracle_parse(text, oracle, &orc, why, sizeof why);
        free(text);
        if (e < 0)
            goto bad_input;
        /* the oracle's classes, by notation, in the listing's order */
        if (orc.n != cl.n) {
            e = ib_why(why, sizeof why, -EINVAL, "%s: %u classes, but %lu threads here have %u", oracle, orc.n,
                       threads, cl.n);
            goto bad_input;
        }
        double *perf = calloc(cl.n, sizeof *perf);
        if (!perf) {
            e = -ENOMEM;
            goto bad_input;
        }
        for (unsigned k = 0; k < cl.n; k++) {
            char note[80] = "";
            pl_class_notation(&h, &cl.v[k], note, sizeof note);
            unsigned j = 0;
            while (j < orc.n && !(orc.label[j] ? !strcmp(orc.label[j], note) : j == k))
                j++;
            if (j == orc.n) {
                free(perf);
                e = ib_why(why, sizeof why, -EINVAL, "%s: no performance for class %u %s", oracle, k + 1, note);
                goto bad_input;
            }
            perf[k] = orc.perf[j];
        }
        memcpy(orc.perf, perf, cl.n * sizeof *perf);
        free(perf);
        pl_atom_oracle_seed(&orc, seed);
    }
    L.cl = &cl, L.h = &h;
    struct pl_atom_opts ao = {.period = period, .rounds = (unsigned)rounds, .z = PL_ATOM_Z,
                              .higher_better = oracle || place_live_higher_better(&L.pl)};
    const char *unit = oracle ? "" : place_live_unit(&L.pl);
    json_t *doc = json_object(), *phases = json_array();
    json_object_set_new(doc, "command", json_string(CMD));
    json_object_set_new(doc, "target", oracle ? json_pack("{s:s,s:s,s:f,s:I}", "oracle", oracle, "name", "oracle",
                                                          "noise", orc.noise, "seed", (json_int_t)seed)
                                              : json_pack("{s:i,s:s}", "pid", (int)pid, "metric", mspec ? mspec : ""));
    json_object_set_new(doc, "threads", json_integer((json_int_t)threads));
    json_object_set_new(doc, "classes", json_integer(cl.n));
    json_object_set_new(doc, "period_s", json_real(period));
    json_object_set_new(doc, "rounds", json_integer((json_int_t)rounds));
    json_object_set_new(doc, "dry_run", json_boolean(dry));
    if (dry) {
        if (!po.json) {
            printf("%lu threads: %u class%s; a learning phase takes %u x %.3g s = %.3g s (%lu slices of %.3g s "
                   "each)\n", threads, cl.n, cl.n == 1 ? "" : "es", cl.n, period, cl.n * period, cl.n * rounds,
                   period / rounds);
            for (unsigned k = 0; k < cl.n; k++) {
                char note[80] = "";
                pl_class_notation(&h, &cl.v[k], note, sizeof note);
                printf("  class %u  %s\n", k + 1, note);
            }
            printf("--dry-run: nothing pinned, nothing measured\n");
        }
        json_object_set_new(doc, "phases", phases);
        rc = po.json ? (out_json(stdout, doc) == 0 ? 0 : cli_fail(IB_EXIT_FAIL, CMD, "cannot write JSON")) : 0;
        json_decref(doc);
        goto out;
    }
    if (pid)
        cli_signals_install();
    for (unsigned long cyc = 1; !cycles || cyc <= cycles; cyc++) {
        struct pl_atom_result r;
        e = pl_atom_learn(oracle ? &pl_atom_oracle_ops : &live_ops, oracle ? (void *)&orc : (void *)&L, cl.n, &ao,
                          &r, why, sizeof why);
        if (e == 0 && pid)
            e = live_apply(&L, (unsigned)r.best, why, sizeof why);
        if (e == 0 && oracle)
            e = pl_atom_oracle_ops.apply(&orc, (unsigned)r.best, why, sizeof why);
        if (e < 0) {
            pl_atom_result_free(&r);
            break;
        }
        json_array_append_new(phases, phase_json(&r, &cl, &h, pid != 0));
        if (!po.json) {
            phase_print((unsigned)cyc, &r, &cl, &h, pid != 0, unit);
            fflush(stdout);
        }
        pl_atom_result_free(&r);
        if (cycles && cyc == cycles)
            break;
        if (pid && (e = place_live_sleep(relearn)) < 0) {
            ib_why(why, sizeof why, e, "interrupted");
            break;
        }
    }
    if (pid)
        cli_signals_restore();
    json_object_set_new(doc, "phases", phases);
    if (e == -EINTR || cli_stop) {
        json_decref(doc);
        rc = cli_fail(IB_EXIT_INTR, CMD, "interrupted");
        goto out;
    }
    if (e < 0) {
        json_decref(doc);
        rc = cli_fail(cli_exit_for(e, e == -ESRCH), CMD, "%s", why);
        goto out;
    }
    if (po.json && out_json(stdout, doc) != 0)
        rc = cli_fail(IB_EXIT_FAIL, CMD, "cannot write JSON");
    json_decref(doc);
    goto out;
bad_input:
    rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : cli_exit_for(e, e != -EPERM), CMD, "%s",
                  why[0] ? why : "out of memory");
out:
    pl_atom_oracle_free(&orc);
    pl_class_list_free(&cl);
    place_live_close(&L.pl);
    pl_hier_free(&h);
    pl_machine_free(&m);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define AA struct atom_args
static const struct cli_opt atom_table[] = {
    {CLI_ULONG("pid", "P", AA, pid, 1, 4194304,
               "the live process: every thread is pinned, one CPU each (place apply's rule)"),
     .what = "a process id"},
    {CLI_STR("metric", "SPEC", AA, metric,
             "its metric over a slice: command:CMD / command-lower:CMD (the first number CMD\n"
             "prints at the end of the slice; higher / lower is better), or cputime (the CPU\n"
             "seconds per second its threads got over the slice; higher is better)")},
    {CLI_STR("oracle", "FILE", AA, oracle,
             "a simulated application instead: performance per class and noise (JSON; the\n"
             "classes by notation; docs/placement.md); needs --threads; time is not slept")},
    {CLI_ULONG("threads", "N", AA, threads, 1, 4096, "the simulated application's threads (with --oracle)")},
    {CLI_DOUBLE("period", "S", AA, period, 0, 86400, "seconds each class runs in a learning phase"),
     .flags = CLI_OPT_GT_MIN, .def = "60", .what = "seconds in (0, 86400]"},
    {CLI_ULONG("rounds", "N", AA, rounds, 1, 100000, "slices each period is run as"),
     .def = CLI_STR_OF(PL_ATOM_ROUNDS)},
    {CLI_DOUBLE("relearn", "S", AA, relearn, 0, 86400 * 365.0, "after S seconds on the winner, compete again"),
     .what = "seconds >= 0"},
    {CLI_ULONG("cycles", "N", AA, cycles, 1, 1000000,
               "learning phases in all (default 1; with --relearn, until interrupted)")},
    {CLI_FLAG("dry-run", AA, dry, "list the classes and the schedule; pin nothing, measure nothing")},
    {CLI_ULONG("seed", "S", AA, seed, 0, 18446744073709551615.0, "the oracle's noise"), .def = "1"},
    PLACE_COMMON_OPTS(AA),
};
#undef AA

const struct cli_cmd cli_cmd_place_atom = {
    .name = "place atom",
    CLI_RUN(cmd_place_atom, struct atom_args),
    .preset = &(const struct atom_args){.relearn = -1},
    .summary = "AToM: learn a live process's best sharing class by competition, and pin it there",
    .usage = "usage: ibench place atom (--pid P --metric SPEC | --oracle FILE --threads N) [--period S] [--rounds N]\n"
             "                         [--relearn S [--cycles N]] [--dry-run] [--seed S] [--topology SPEC]\n"
             "                         [--concerns LIST] [--json]\n\n",
    .about_fn = atom_about,
    CLI_OPTS(atom_table),
};
