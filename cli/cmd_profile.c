/* cmd_profile.c - `ibench profile`: parses the options, runs the profile (harness/profile.h), writes it
 * (harness/profile_fmt.h). docs/profile.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "ib_err.h"
#include "machine.h"
#include "opts.h"
#include "output.h"
#include "parse.h"
#include "profile.h"
#include "profile_method.h"
#include "soi.h"
#include "target.h"

/* The command's options: the profile's own (harness/profile.h), and what the command reads or writes itself. */
struct profile_cmd_opts {
    struct profile_opts po;
    const char *metric, *out, *cpus;
    int json;
    int floor_given, bursts_given; /* given on the command line, not the table's default */
};

/* --bursts LIST: on-lengths in seconds, comma separated, each in [PROF_BURST_MIN_S, PROF_BURST_MAX_S], at most
 * PROFILE_MAX_BURSTS, none twice. */
static int set_bursts(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    (void)op;
    struct profile_cmd_opts *o = opts;
    char buf[256];
    if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
        return ib_why(why, len, -EINVAL, "--bursts: a list of at most %d lengths in seconds expected",
                      PROFILE_MAX_BURSTS);
    o->po.nbursts = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        double x;
        if (parse_double(t, &x) < 0 || !(x >= PROF_BURST_MIN_S && x <= PROF_BURST_MAX_S))
            return ib_why(why, len, -EINVAL, "--bursts: '%s' is not a length in seconds in [%g, %g]", t,
                          PROF_BURST_MIN_S, PROF_BURST_MAX_S);
        if (o->po.nbursts >= PROFILE_MAX_BURSTS)
            return ib_why(why, len, -EINVAL, "--bursts: at most %d lengths", PROFILE_MAX_BURSTS);
        for (unsigned i = 0; i < o->po.nbursts; i++)
            if (o->po.bursts[i] == x)
                return ib_why(why, len, -EINVAL, "--bursts: %g s is listed twice", x);
        o->po.bursts[o->po.nbursts++] = x;
    }
    if (!o->po.nbursts)
        return ib_why(why, len, -EINVAL, "--bursts: a list of lengths in seconds expected, e.g. 0.25,1,4");
    return 0;
}

/* Everything that can be checked before minutes of measuring. 0 or the exit code (message printed). */
static int check(struct profile_opts *o, struct machine *m, const char *cpus, const char *out)
{
    if (o->metric.kind == MK_IO_RATE && o->load_cmd)
        return cli_fail(IB_EXIT_USAGE, "profile", "--metric io-rate reads the program's own I/O; --load would not be "
                        "read (drop it, or use a throughput metric)");
    if (o->metric.kind == MK_RUNTIME || o->metric.kind == MK_CPUTIME) {
        if (!o->target_cmd || o->load_cmd)
            return cli_fail(IB_EXIT_USAGE, "profile", "--metric %s times one run of a batch --target (no --pid, no "
                            "--load)", metric_kind_name(o->metric.kind));
    } else if ((o->metric.kind == MK_THROUGHPUT || o->metric.kind == MK_LATENCY) && !o->load_cmd) {
        return cli_fail(IB_EXIT_USAGE, "profile", "--metric %s needs --load", metric_kind_name(o->metric.kind));
    } else if (o->metric.kind == MK_IPC && !o->target_cmd && !(o->pid > 0 && o->load_cmd)) {
        return cli_fail(IB_EXIT_USAGE, "profile", "--metric ipc counts a batch --target's run, or a service (--target "
                        "or --pid) while --load runs");
    } else if (o->load_cmd && o->metric.kind == MK_COMMAND) {
        return cli_fail(IB_EXIT_USAGE, "profile", "--load is read by throughput/latency metrics; command:CMD is its "
                        "own sample");
    }
    if (o->sois) { /* every name must exist (a copy of its own: a fixed buffer would cut a long list) */
        char *buf = strdup(o->sois);
        if (!buf)
            return cli_fail(IB_EXIT_FAIL, "profile", "out of memory");
        for (char *sv, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv))
            if (!soi_find(t)) {
                int code = cli_fail(IB_EXIT_USAGE, "profile", "--sois: unknown SoI '%s' (ibench list shows them)", t);
                free(buf);
                return code;
            }
        free(buf);
    }
    int orc = cli_check_out("profile", "--out", out);
    if (orc)
        return orc;
    char why[512];
    if (o->pid && pid_check(o->pid, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_USAGE, "profile", "%s", why);
    if (!cpus) {
        o->tcpus[0] = topo_pu_os(m->topo, 0);
        o->ntcpus = 1;
        return 0;
    }
    return cli_cpus_here("profile", "target-cpus", cpus, m, SOI_MAX_THREADS, o->tcpus, &o->ntcpus);
}

static int cmd_profile(void *opts, int argc, char **argv, int first)
{
    (void)argc, (void)argv, (void)first;
    const struct profile_cmd_opts *co = opts;
    struct profile_opts o = co->po;
    const char *metric = co->metric, *out = co->out, *cpus = co->cpus;
    int json = co->json, rc;
    if (!o.name || !*o.name || strchr(o.name, '/'))
        return cli_fail(IB_EXIT_USAGE, "profile", "--name NAME is required (no '/')");
    if (!!o.target_cmd == !!o.pid)
        return cli_fail(IB_EXIT_USAGE, "profile", "give exactly one of --target 'CMD' and --pid PID");
    if (o.no_bursts && o.bursts_all)
        return cli_fail(IB_EXIT_USAGE, "profile", "--bursts-all and --no-bursts exclude each other");
    if (o.no_bursts && co->bursts_given) /* never ignored in silence */
        return cli_fail(IB_EXIT_USAGE, "profile", "--bursts and --no-bursts exclude each other");
    if (o.no_depth && co->floor_given) /* never ignored in silence */
        return cli_fail(IB_EXIT_USAGE, "profile", "--floor goes with the depth, which --no-depth turns off");
    if (o.no_depth && o.no_flat_first)
        return cli_fail(IB_EXIT_USAGE, "profile", "--no-flat-first goes with the depth, which --no-depth turns off "
                                                  "(without it the search ramps from 25 %% already)");
    char why[512] = "";
    if (metric_parse(&o.metric, metric, o.load_cmd, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_USAGE, "profile", "%s", why);
    char outbuf[1024];
    if (!out) {
        snprintf(outbuf, sizeof(outbuf), "%s.profile.json", o.name);
        out = outbuf;
    }
    struct machine m;
    if (machine_open(&m, NULL, why, sizeof(why)) < 0) {
        metric_free(&o.metric);
        return cli_fail(IB_EXIT_FAIL, "profile", "%s", why);
    }
    cli_calib_note("profile", &m);
    render_progress_lines(); /* a profile takes minutes: off a terminal too, a line per sample says where it is */
    if ((rc = check(&o, &m, cpus, out)) == 0) {
        /* a cached LLC size is checked before minutes are spent against it (llc-cap skipped as "does not reach" on
         * a size measured while the machine was busy), as `run` does: when an SoI sized by the LLC is
         * profiled (a disk-only profile does not spend seconds re-measuring a cache); the SoIs run on other CPUs
         * than the target's */
        if (profile_uses_llc_size(o.sois))
            cli_calib_recheck("profile", &m, topo_pu_os(m.topo, topo_npus(m.topo) - 1));
        cli_signals_install();
        char cw[512];
        if (child_containment(cw, sizeof(cw)) == CG_NONE)
            fprintf(stderr, "ibench profile: note: children contained by %s: a daemon the target starts outlives "
                    "it\n", cw);
        /* orphans of the target's shell come back to ibench, so that stopping a child reaps them too */
        int was = 0;
        prctl(PR_GET_CHILD_SUBREAPER, &was);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        struct profile *p = NULL;
        int bad = 0;
        int prc = profile_run(&m, &o, &cli_stop, &p, &bad, why, sizeof(why));
        prctl(PR_SET_CHILD_SUBREAPER, was);
        char sw[256];
        machine_save_calib(&m, sw, sizeof(sw)); /* capacities measured on the way are kept; failing to is harmless */
        if (prc == 0) {
            int wr = profile_write(out, p, why, sizeof(why));
            if (wr < 0) {
                rc = cli_fail(IB_EXIT_FAIL, "profile", "%s", why);
            } else {
                char *txt = json ? profile_dumps(p) : NULL;
                if (txt)
                    printf("%s\n", txt);
                free(txt);
                if (p->complete) {
                    fprintf(stderr, "ibench profile: wrote %s (ibench show %s prints it)\n", out, out);
                    rc = IB_EXIT_OK;
                } else if (p->interrupted) { /* what was measured before the stop, kept; the exit says the stop */
                    rc = cli_fail(IB_EXIT_INTR, "profile", "interrupted; wrote %s, incomplete: %u item%s missing "
                                  "(ibench show %s lists them)", out, p->nmissing, p->nmissing == 1 ? "" : "s", out);
                } else { /* written with everything measured, and a run-time failure all the same */
                    rc = cli_fail(IB_EXIT_FAIL, "profile", "wrote %s, incomplete: %u item%s missing, the first: %s%s%s: "
                                  "%s (ibench show %s lists them)", out, p->nmissing, p->nmissing == 1 ? "" : "s",
                                  p->nmissing ? p->missing[0].phase : "?",
                                  p->nmissing && p->missing[0].soi ? " of " : "",
                                  p->nmissing && p->missing[0].soi ? p->missing[0].soi : "",
                                  p->nmissing ? p->missing[0].reason : "?", out);
                }
            }
            profile_free(p);
            free(p);
        } else if (prc == -EINTR || atomic_load(&cli_stop)) { /* a file of nothing would replace what --out held */
            rc = cli_fail(IB_EXIT_INTR, "profile", "interrupted before the first sample finished; no profile written");
        } else { /* -ENOTSUP: the metric cannot be read here (ipc without counters) */
            rc = cli_fail(cli_exit_for(prc, bad), "profile", "%s; no profile written", why);
        }
        cli_signals_restore();
    }
    machine_close(&m);
    metric_free(&o.metric);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define PO struct profile_cmd_opts
static const struct cli_opt profile_table[] = {
    {CLI_STR("name", "NAME", PO, po.name, "the target's name, in the profile and its default --out (required; no '/')")},
    {CLI_STR("target", "'CMD'", PO, po.target_cmd,
             "a batch job (with --metric runtime or cputime: run once per sample) or a service\n"
             "(started once, pinned, stopped at the end)")},
    {CLI_INT("pid", "PID", PO, po.pid, 1, 4194304, "a running service instead (pinned when --target-cpus is given)")},
    {CLI_STR("load", "'CMD'", PO, po.load_cmd,
             "the load generator, run once per sample; its output carries the metric")},
    {CLI_STR("metric", "KIND", PO, metric,
             "runtime | cputime | throughput[:REGEX] | latency[:REGEX] | command:CMD |\n"
             "command-lower:CMD | ipc (needs a PMU) | io-rate[:S] (a running program's own\n"
             "bytes read and written per second, over S (1) seconds a sample); docs/profile.md")},
    {CLI_DOUBLE("qos", "Q", PO, po.qos, 0, 1, "relative performance that still meets QoS"), .flags = CLI_OPT_GT_MIN,
     .def = "0.95"},
    {CLI_STR("sois", "LIST", PO, po.sois,
             "comma-separated SoIs (default: all; those this machine cannot place are skipped\n"
             "with the reason)")},
    {CLI_STR("target-cpus", "LIST", PO, cpus,
             "where the target (and its load generator) run (default: the first CPU)")},
    {CLI_STR("out", "FILE", PO, out,
             "the profile (default NAME.profile.json), written atomically once measured,\n"
             "incomplete or not (never after a failure)")},
    {CLI_FLAG("json", PO, json, "also print the profile on stdout")},
    {CLI_UINT("samples", "N", PO, po.samples, 1, 64,
              "samples per side of a point, at most; a point whose first 2 samples lie far\n"
              "beyond QoS stops early unless --no-sequential"),
     .def = "3"},
    {CLI_UINT("baselines", "N", PO, po.baselines, 1, 64, "solo samples before and after"), .def = "5"},
    {CLI_DOUBLE("caused-level", "X", PO, po.caused_level, 0, 100,
                "the SoI's intensity (unthrottled) while caused is measured"),
     .flags = CLI_OPT_GT_MIN, .def = "100"},
    {CLI_UINT("caused-rounds", "N", PO, po.caused_rounds, 3, 64,
              "at least N alone/beside rounds (3-64, default 3; more while the standard\n"
              "error is above 5 points, within --caused-budget)")},
    {CLI_DOUBLE("caused-budget", "S", PO, po.caused_budget_s, 0, 3600,
                "seconds within which more caused rounds may run (default 4)"),
     .flags = CLI_OPT_GT_MIN},
    {CLI_UINT("timeout", "S", PO, po.timeout_s, 1, 3600, "one sample's limit in seconds"), .def = "60"},
    {CLI_UINT("warmup", "MS", PO, po.warmup_ms, 0, 600000, "milliseconds after starting a service"), .def = "500"},
    {CLI_STR("dir", "DIR", PO, po.dir, "disk SoIs make their files in DIR")},
    {CLI_FLAG("no-reach-check", PO, po.no_reach_check,
              "ramp llc-cap, llc-bw and mem-bw even where their probe on the target's CPU does\n"
              "not move (on a VM, CPUs hwloc says share a cache may not share one)")},
    {CLI_FLAG("no-sequential", PO, po.no_sequential, "every point takes all its --samples: none stops early")},
    {CLI_DOUBLE("floor", "F", PO, po.floor, 0, 1,
                "after the search, follow each curve down: measure 100 % and, when it reads below F,\n"
                "where the curve first falls below F (2 more points at most)"),
     .flags = CLI_OPT_GT_MIN, .def = "0.5", .have = CLI_HAVE(PO, floor_given)},
    {CLI_FLAG("no-depth", PO, po.no_depth, "the tolerated search only: no point at 100 % or below the --floor")},
    {CLI_FLAG("no-flat-first", PO, po.no_flat_first,
              "with the depth, ramp from 25 % as without it (default: 100 % first, and a point there\n"
              "that meets QoS beyond its noise ends the search: a flat curve in one point)")},
    {CLI_CUSTOM("bursts", "LIST", PO, po.bursts, set_bursts,
                "where the SoI at 100 % breaks QoS, the target beside it in bursts: 100 % for each\n"
                "length (s, 0.05-60, comma separated, at most " CLI_STR_OF(PROFILE_MAX_BURSTS) "), then idle as long"),
     .def = "0.25,1,4", .have = CLI_HAVE(PO, bursts_given)},
    {CLI_FLAG("no-bursts", PO, po.no_bursts, "no bursts")},
    {CLI_FLAG("bursts-all", PO, po.bursts_all,
              "bursts on every SoI whose 100 % breaks QoS (default: the storage and network ones, whose queues\n"
              "and caches can answer a burst otherwise than sustained pressure)")},
    {CLI_FLAG("caused-rounds-always", PO, po.caused_rounds_always,
              "measure caused by alternating rounds on every SoI (default: not where the usage,\n"
              "counted by the kernel, saw the target leave the SoI's resource alone: caused counted)")},
    {CLI_DOUBLE("usage-seconds", "S", PO, po.usage_s, 0, 600,
                "after the first baseline, what the target presses over time, counted by the\n"
                "kernel for its processes in 100 ms windows while its work runs alone (0: not)"),
     .def = "3"},
};
#undef PO

const struct cli_cmd cli_cmd_profile = {
    .name = "profile",
    CLI_RUN(cmd_profile, struct profile_cmd_opts),
    .summary = "a target's tolerated and caused interference per SoI, as a versioned profile",
    .usage = "usage: ibench profile --name NAME (--target 'CMD' | --pid PID) [--load 'LOAD CMD'] --metric KIND\n"
             "                      [--qos Q] [--sois LIST] [--target-cpus LIST] [--out FILE] [--json]\n"
             "                      [--samples N] [--baselines N] [--caused-level X] [--caused-rounds N]\n"
             "                      [--caused-budget S] [--timeout S] [--warmup MS] [--dir DIR]\n"
             "                      [--no-reach-check] [--no-sequential] [--floor F | --no-depth] [--no-flat-first]\n"
             "                      [--bursts LIST | --no-bursts] [--usage-seconds S] [--caused-rounds-always]\n\n",
    .about = "Profiles a target: for every SoI, how much interference it tolerates before its QoS breaks, and\n"
             "how much it causes (docs/profile.md). Tolerated: the SoI, on CPUs that share its resource with the\n"
             "target (never the target's), held at 25, 50, 75 and 100 %, then two bisection steps inside the first\n"
             "bracket that breaks QoS; a point that breaks it is measured again and counts only when it breaks twice.\n"
             "Then the depth: 100 % when the search stopped short of it and, when it reads below --floor (0.5),\n"
             "where the curve first falls below the floor, so a prediction never extends a point that met QoS.\n"
             "Then, where 100 % broke QoS, bursts: the SoI at 100 % for each --bursts length, then idle as long, over\n"
             "3 whole periods and --samples samples at least: the target's relative speed, and while on.\n"
             "Caused: the SoI at --caused-level (100), unthrottled, in windows alternating alone and beside the\n"
             "target's running work; per round the share of its work per second of its own CPU time that the\n"
             "target took; the median over the rounds with its standard error, 'distinguishable' when beyond twice\n"
             "that error; CPU time the target took from the SoI is reported apart (cpu lost). Where the usage\n"
             "(--usage-seconds, over one run of the work at least) counted no window of the SoI's resource above\n"
             "its noise floor (storage bytes, network bytes), caused is that count, and for a footprint (resident\n"
             "memory) its counted occupancy, with no rounds.\n\n",
    .more = "\nProgress goes to stderr: the phase, the SoI, the point and the time left, a refreshing line on a\n"
            "terminal, else one line per sample (IBENCH_PROGRESS=0: none). A sample that does not finish within\n"
            "--timeout is written as what it is (a QoS break by at least that much, or where the measuring stopped)\n"
            "and the profile is written incomplete, with what is missing and why; so is a profile stopped by Ctrl-C\n"
            "or SIGTERM once a sample has finished. The machine's pressure (PSI, steal) is recorded per phase.\n"
            "Exit 0 with the profile written; 1 when it is incomplete after a timeout, or when the target or its\n"
            "load fails (no profile written); 2 on bad input; 77 when the metric cannot be read here (ipc without a\n"
            "PMU); 130 when interrupted (an incomplete profile written, or none before the first sample finished).\n"
            "Every SoI and child process is stopped on every exit path.\n",
    CLI_OPTS(profile_table),
};
