/* cmd_profile.c - `ibench profile`: parses the options, runs the profile (harness/profile.h), writes it
 * (harness/profile_fmt.h). docs/profile.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "ib_err.h"
#include "machine.h"
#include "output.h"
#include "parse.h"
#include "profile.h"
#include "soi.h"
#include "target.h"

static void profile_usage(void)
{
    printf("usage: ibench profile --name NAME (--target 'CMD' | --pid PID) [--load 'LOAD CMD'] --metric KIND\n"
           "                      [--qos Q] [--sois LIST] [--target-cpus LIST] [--out FILE] [--json]\n"
           "                      [--samples N] [--baselines N] [--caused-level X] [--caused-rounds N]\n"
           "                      [--caused-budget S] [--timeout S] [--warmup MS] [--dir DIR]\n"
           "                      [--no-reach-check] [--no-sequential]\n\n"
           "Profiles a target: for every SoI, how much interference it tolerates before its QoS breaks, and\n"
           "how much it causes (docs/profile.md). Tolerated: the SoI, on CPUs that share its resource with the\n"
           "target (never the target's), held at 25, 50, 75 and 100 %%, then two bisection steps inside the first\n"
           "bracket that breaks QoS; a point that breaks it is measured again and counts only when it breaks twice.\n"
           "Caused: the SoI at --caused-level (100), unthrottled, in windows alternating alone and beside the\n"
           "target's running work; per round the share of its work per second of its own CPU time that the\n"
           "target took; the median over the rounds with its standard error, 'distinguishable' when beyond twice\n"
           "that error; CPU time the target took from the SoI is reported apart (cpu lost).\n\n"
           "  --target 'CMD'       a batch job (with --metric runtime or cputime: run once per sample) or a service\n"
           "                       (started once, pinned, stopped at the end)\n"
           "  --pid PID            a running service instead (pinned when --target-cpus is given)\n"
           "  --load 'CMD'         the load generator, run once per sample; its output carries the metric\n"
           "  --metric KIND        runtime | cputime | throughput[:REGEX] | latency[:REGEX] | command:CMD |\n"
           "                       command-lower:CMD | ipc (needs a PMU); docs/profile.md has the contract\n"
           "  --qos Q              relative performance that still meets QoS (default 0.95)\n"
           "  --sois LIST          comma-separated SoIs (default: all; those this machine cannot place are skipped\n"
           "                       with the reason)\n"
           "  --target-cpus LIST   where the target (and its load generator) run (default: the first CPU)\n"
           "  --out FILE           the profile (default NAME.profile.json), written atomically once measured,\n"
           "                       incomplete or not (never after a failure); --json also prints it on stdout\n"
           "  --samples N          samples per side of a point, at most (default 3; a point whose first 2 samples\n"
           "                       lie far beyond QoS stops early unless --no-sequential); --baselines N solo\n"
           "                       samples before and after (default 5)\n"
           "  --caused-rounds N    at least N alone/beside rounds (3-64, default 3; more while the standard error is\n"
           "                       above 5 points, within --caused-budget S seconds, default 4)\n"
           "  --timeout S          one sample's limit in seconds (default 60); --warmup MS after starting a service\n"
           "                       (default 500)\n"
           "  --no-reach-check     ramp llc-cap, llc-bw and mem-bw even where their probe on the target's CPU does\n"
           "                       not move (on a VM, CPUs hwloc says share a cache may not share one)\n\n"
           "Progress goes to stderr: the phase, the SoI, the point and the time left, a refreshing line on a\n"
           "terminal, else one line per sample (IBENCH_PROGRESS=0: none). A sample that does not finish within\n"
           "--timeout is written as what it is (a QoS break by at least that much, or where the measuring stopped)\n"
           "and the profile is written incomplete, with what is missing and why; so is a profile stopped by Ctrl-C\n"
           "or SIGTERM once a sample has finished. The machine's pressure (PSI, steal) is recorded per phase.\n"
           "Exit 0 with the profile written; 1 when it is incomplete after a timeout, or when the target or its\n"
           "load fails (no profile written); 2 on bad input; 77 when the metric cannot be read here (ipc without a\n"
           "PMU); 130 when interrupted (an incomplete profile written, or none before the first sample finished).\n"
           "Every SoI and child process is stopped on every exit path.\n");
}

/* The options that take a number: where it goes, its range, its message. */
struct num_opt {
    int key;
    const char *name;
    double min, max;
    int integer;
    size_t off;
};
#define OPT_OFF(f) offsetof(struct profile_opts, f)
static const struct num_opt nums[] = {
    {'p', "pid", 1, 4194304, 1, OPT_OFF(pid)},
    {'q', "qos", 0, 1, 0, OPT_OFF(qos)},
    {'N', "samples", 1, 64, 1, OPT_OFF(samples)},
    {'B', "baselines", 1, 64, 1, OPT_OFF(baselines)},
    {'L', "caused-level", 0, 100, 0, OPT_OFF(caused_level)},
    {'r', "caused-rounds", 3, 64, 1, OPT_OFF(caused_rounds)},
    {'b', "caused-budget", 0, 3600, 0, OPT_OFF(caused_budget_s)},
    {'T', "timeout", 1, 3600, 1, OPT_OFF(timeout_s)},
    {'W', "warmup", 0, 600000, 1, OPT_OFF(warmup_ms)},
};

/* A number option into o: 0, or the usage exit code with the message printed. Fractions are in (min, max]. */
static int set_num(struct profile_opts *o, const struct num_opt *n, const char *arg)
{
    char *p = (char *)o + n->off;
    if (n->integer) {
        unsigned long u;
        if (parse_uint(arg, (unsigned long)n->min, (unsigned long)n->max, &u) < 0)
            return cli_fail(IB_EXIT_USAGE, "profile", "--%s '%s': a whole number, %g to %g", n->name, arg, n->min,
                            n->max);
        if (n->off == OPT_OFF(pid))
            *(pid_t *)p = (pid_t)u;
        else
            *(unsigned *)p = (unsigned)u;
        return 0;
    }
    double d;
    if (parse_double(arg, &d) < 0 || !(d > n->min && d <= n->max))
        return cli_fail(IB_EXIT_USAGE, "profile", "--%s '%s': a number in (%g, %g]", n->name, arg, n->min, n->max);
    *(double *)p = d;
    return 0;
}

/* Everything that can be checked before minutes of measuring. 0 or the exit code (message printed). */
static int check(struct profile_opts *o, struct machine *m, const char *cpus, const char *out)
{
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
    int *list = NULL;
    unsigned n = 0;
    if (parse_cpulist(cpus, &list, &n) < 0 || n == 0 || n > SOI_MAX_THREADS) {
        free(list);
        return cli_fail(IB_EXIT_USAGE, "profile", "--target-cpus '%s' is not a CPU list", cpus);
    }
    for (unsigned i = 0; i < n; i++) {
        int ok = 0;
        for (unsigned k = 0; k < topo_npus(m->topo); k++)
            ok |= topo_pu_os(m->topo, k) == list[i];
        if (!ok) {
            int c = list[i];
            free(list);
            return cli_fail(IB_EXIT_USAGE, "profile", "--target-cpus: this machine has no CPU %d", c);
        }
        o->tcpus[i] = list[i];
    }
    o->ntcpus = n;
    free(list);
    return 0;
}

int cmd_profile(int argc, char **argv)
{
    static const struct option lo[] = {
        {"name", required_argument, 0, 'n'},          {"target", required_argument, 0, 't'},
        {"pid", required_argument, 0, 'p'},           {"load", required_argument, 0, 'l'},
        {"metric", required_argument, 0, 'm'},        {"qos", required_argument, 0, 'q'},
        {"sois", required_argument, 0, 's'},          {"target-cpus", required_argument, 0, 'c'},
        {"out", required_argument, 0, 'o'},           {"samples", required_argument, 0, 'N'},
        {"baselines", required_argument, 0, 'B'},     {"caused-level", required_argument, 0, 'L'},
        {"caused-rounds", required_argument, 0, 'r'}, {"caused-budget", required_argument, 0, 'b'},
        {"timeout", required_argument, 0, 'T'},       {"warmup", required_argument, 0, 'W'},
        {"dir", required_argument, 0, 'd'},           {"help", no_argument, 0, 'h'},
        {"no-reach-check", no_argument, 0, 'R'},      {"no-sequential", no_argument, 0, 'S'},
        {"json", no_argument, 0, 'j'},                {0, 0, 0, 0}};
    struct profile_opts o = {.qos = 0.95, .samples = 3, .baselines = 5, .caused_level = 100, .timeout_s = 60,
                             .warmup_ms = 500};
    const char *metric = NULL, *out = NULL, *cpus = NULL;
    int c, json = 0, rc;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        const struct num_opt *n = NULL;
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
            n = nums[i].key == c ? &nums[i] : n;
        if (n) {
            if ((rc = set_num(&o, n, optarg)) != 0)
                return rc;
            continue;
        }
        switch (c) {
        case 'n': o.name = optarg; break;
        case 't': o.target_cmd = optarg; break;
        case 'l': o.load_cmd = optarg; break;
        case 'm': metric = optarg; break;
        case 's': o.sois = optarg; break;
        case 'c': cpus = optarg; break;
        case 'o': out = optarg; break;
        case 'd': o.dir = optarg; break;
        case 'R': o.no_reach_check = 1; break;
        case 'S': o.no_sequential = 1; break;
        case 'j': json = 1; break;
        case 'h': profile_usage(); return IB_EXIT_OK;
        default: return cli_fail(IB_EXIT_USAGE, "profile", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_fail(IB_EXIT_USAGE, "profile", "unexpected argument '%s'", argv[optind]);
    if (!o.name || !*o.name || strchr(o.name, '/'))
        return cli_fail(IB_EXIT_USAGE, "profile", "--name NAME is required (no '/')");
    if (!!o.target_cmd == !!o.pid)
        return cli_fail(IB_EXIT_USAGE, "profile", "give exactly one of --target 'CMD' and --pid PID");
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
    if ((rc = check(&o, &m, cpus, out)) != 0) {
    } else {
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
