/* cmd_profile.c - `ibench profile` (tolerated and caused interference of a target, written as a versioned
 * profile), `ibench show PROFILE` (a table) and `ibench plot PROFILE` (a chart). docs/profile.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ib_err.h"
#include "machine.h"
#include "output.h"
#include "parse.h"
#include "plot.h"
#include "profile.h"
#include "soi.h"
#include "target.h"

static void profile_usage(void)
{
    printf("usage: ibench profile --name NAME (--target 'CMD' | --pid PID) [--load 'LOAD CMD'] --metric KIND\n"
           "                      [--qos Q] [--sois LIST] [--target-cpus LIST] [--out FILE] [--samples N]\n"
           "                      [--baselines N] [--caused-level X] [--timeout S] [--warmup MS] [--dir DIR]\n"
           "                      [--no-reach-check]\n\n"
           "Profiles a target: for every SoI, how much interference it tolerates before its QoS breaks, and\n"
           "how much it causes. The SoI runs on CPUs that share its resource with the target (never on the\n"
           "target's), at 25, 50, 75 and 100 %%, then two bisection steps inside the first bracket that breaks\n"
           "QoS (a ramp point that breaks it is measured again, and counts only when it breaks twice);\n"
           "tolerated is the highest intensity that met it. Caused: the SoI at --caused-level (100) alone\n"
           "and then beside the working target; the share of its own work rate the target took (0-100).\n\n"
           "  --target 'CMD'     a batch job (with --metric runtime or cputime: run once per sample) or a service\n"
           "                     (started once, pinned, stopped at the end)\n"
           "  --pid PID          a running service instead (pinned when --target-cpus is given)\n"
           "  --load 'CMD'       the load generator, run once per sample; its output carries the metric\n"
           "  --metric KIND      runtime | cputime | throughput[:REGEX] | latency[:REGEX] | command:CMD |\n"
           "                     command-lower:CMD | ipc (needs a PMU). Without REGEX, throughput and latency use\n"
           "                     the load generator's adapter (memcslap); docs/profile.md has the contract\n"
           "  --qos Q            relative performance that still meets QoS (default 0.95)\n"
           "  --sois LIST        comma-separated SoIs (default: all; those this machine cannot place are\n"
           "                     skipped with the reason)\n"
           "  --target-cpus LIST where the target (and its load generator) run (default: CPU 0)\n"
           "  --out FILE         the profile (default NAME.profile.json), written atomically, only on success\n"
           "  --samples N        samples per measured point, median (default 3); --baselines N solo samples\n"
           "                     before and after (default 5)\n"
           "  --timeout S        one sample's limit in seconds (default 60); --warmup MS after starting a service\n"
           "                     (default 500)\n"
           "  --no-reach-check   ramp llc-cap, llc-bw and mem-bw even where their probe shows they do not reach the\n"
           "                     target's CPU. By default a probe on that CPU first runs beside each of them at\n"
           "                     0 / 100 %%; when it moves less than half the QoS band, the SoI is skipped with the\n"
           "                     figures (on a VM, CPUs hwloc says share a cache may not share one)\n\n"
           "Progress goes to stderr. Exit 0 with the profile written; 1 when the target or its load fails (no\n"
           "profile written); 2 on bad input; 77 when the metric cannot be read here (ipc without a PMU); 130 on\n"
           "Ctrl-C. Every SoI and child process is stopped on every exit path.\n");
}

int cmd_profile(int argc, char **argv)
{
    static const struct option lo[] = {
        {"name", required_argument, 0, 'n'},         {"target", required_argument, 0, 't'},
        {"pid", required_argument, 0, 'p'},          {"load", required_argument, 0, 'l'},
        {"metric", required_argument, 0, 'm'},       {"qos", required_argument, 0, 'q'},
        {"sois", required_argument, 0, 's'},         {"target-cpus", required_argument, 0, 'c'},
        {"out", required_argument, 0, 'o'},          {"samples", required_argument, 0, 'N'},
        {"baselines", required_argument, 0, 'B'},    {"caused-level", required_argument, 0, 'L'},
        {"timeout", required_argument, 0, 'T'},      {"warmup", required_argument, 0, 'W'},
        {"dir", required_argument, 0, 'd'},          {"help", no_argument, 0, 'h'},
        {"no-reach-check", no_argument, 0, 'R'},
        {0, 0, 0, 0}};
    struct profile_opts o = {.qos = 0.95, .samples = 3, .baselines = 5, .caused_level = 100, .timeout_s = 60,
                             .warmup_ms = 500};
    const char *metric = NULL, *out = NULL, *cpus = NULL;
    unsigned long u;
    double d;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'n': o.name = optarg; break;
        case 't': o.target_cmd = optarg; break;
        case 'p':
            if (parse_uint(optarg, 1, 4194304, &u) < 0)
                return cli_fail(IB_EXIT_USAGE, "profile", "--pid '%s' is not a process id", optarg);
            o.pid = (pid_t)u;
            break;
        case 'l': o.load_cmd = optarg; break;
        case 'm': metric = optarg; break;
        case 'q':
            if (parse_double(optarg, &d) < 0 || !(d > 0 && d <= 1))
                return cli_fail(IB_EXIT_USAGE, "profile", "--qos '%s': a fraction of the solo performance, in (0, 1]",
                                optarg);
            o.qos = d;
            break;
        case 's': o.sois = optarg; break;
        case 'c': cpus = optarg; break;
        case 'o': out = optarg; break;
        case 'N':
        case 'B':
            if (parse_uint(optarg, 1, 64, &u) < 0)
                return cli_fail(IB_EXIT_USAGE, "profile", "--%s '%s': 1 to 64", c == 'N' ? "samples" : "baselines",
                                optarg);
            *(c == 'N' ? &o.samples : &o.baselines) = (unsigned)u;
            break;
        case 'L':
            if (parse_intensity(optarg, &d) < 0 || d <= 0)
                return cli_fail(IB_EXIT_USAGE, "profile", "--caused-level '%s': an intensity in (0, 100]", optarg);
            o.caused_level = d;
            break;
        case 'T':
            if (parse_uint(optarg, 1, 3600, &u) < 0)
                return cli_fail(IB_EXIT_USAGE, "profile", "--timeout '%s': seconds, 1 to 3600", optarg);
            o.timeout_s = (unsigned)u;
            break;
        case 'W':
            if (parse_uint(optarg, 0, 600000, &u) < 0)
                return cli_fail(IB_EXIT_USAGE, "profile", "--warmup '%s': milliseconds, 0 to 600000", optarg);
            o.warmup_ms = (unsigned)u;
            break;
        case 'd': o.dir = optarg; break;
        case 'R': o.no_reach_check = 1; break;
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
    int rcode = IB_EXIT_USAGE;
    if ((o.metric.kind == MK_RUNTIME || o.metric.kind == MK_CPUTIME) && (!o.target_cmd || o.load_cmd)) {
        cli_fail(rcode, "profile", "--metric %s times one run of a batch --target (no --pid, no --load)",
                 metric_kind_name(o.metric.kind));
        goto done;
    }
    if ((o.metric.kind == MK_THROUGHPUT || o.metric.kind == MK_LATENCY) && !o.load_cmd) {
        cli_fail(rcode, "profile", "--metric %s needs --load", metric_kind_name(o.metric.kind));
        goto done;
    }
    if (o.load_cmd && o.metric.kind == MK_COMMAND) {
        cli_fail(rcode, "profile", "--load is read by throughput/latency metrics; command:CMD is its own sample");
        goto done;
    }
    if (o.sois) { /* every name must exist */
        char buf[512];
        snprintf(buf, sizeof(buf), "%s", o.sois);
        for (char *sv, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv))
            if (!soi_find(t)) {
                cli_fail(rcode, "profile", "--sois: unknown SoI '%s' (ibench list shows them)", t);
                goto done;
            }
    }
    char outbuf[1024];
    if (!out) {
        snprintf(outbuf, sizeof(outbuf), "%s.profile.json", o.name);
        out = outbuf;
    }
    { /* the output's directory must be writable before minutes of measuring */
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s", out);
        char *sl = strrchr(dir, '/');
        if (sl)
            *sl = 0;
        if (access(sl ? (dir[0] ? dir : "/") : ".", W_OK) != 0) {
            cli_fail(rcode, "profile", "--out %s: cannot write in its directory (%s)", out, strerror(errno));
            goto done;
        }
    }
    if (o.pid) {
        if (pid_check(o.pid, why, sizeof(why)) < 0) {
            cli_fail(rcode, "profile", "%s", why);
            goto done;
        }
    }
    struct machine m;
    if (machine_open(&m, NULL, why, sizeof(why)) < 0) {
        rcode = cli_fail(IB_EXIT_FAIL, "profile", "%s", why);
        goto done;
    }
    if (cpus) {
        int *list = NULL;
        unsigned n = 0;
        if (parse_cpulist(cpus, &list, &n) < 0 || n == 0 || n > SOI_MAX_THREADS) {
            free(list);
            machine_close(&m);
            cli_fail(rcode, "profile", "--target-cpus '%s' is not a CPU list", cpus);
            goto done;
        }
        for (unsigned i = 0; i < n; i++) {
            int ok = 0;
            for (unsigned k = 0; k < topo_npus(m.topo); k++)
                ok |= topo_pu_os(m.topo, k) == list[i];
            if (!ok) {
                machine_close(&m);
                cli_fail(rcode, "profile", "--target-cpus: this machine has no CPU %d", list[i]);
                free(list);
                goto done;
            }
            o.tcpus[i] = list[i];
        }
        o.ntcpus = n;
        free(list);
    } else {
        o.tcpus[0] = topo_pu_os(m.topo, 0);
        o.ntcpus = 1;
    }
    if (o.metric.kind == MK_IPC) {
        machine_close(&m);
        rcode = cli_fail(IB_EXIT_SKIP, "profile", "--metric ipc needs hardware counters; this machine has none "
                         "(/sys/bus/event_source/devices/cpu missing): use runtime, throughput, latency or command");
        goto done;
    }
    cli_signals_install();
    json_t *doc = NULL;
    int rc = profile_run(&m, &o, &cli_stop, &doc, why, sizeof(why));
    char sw[256];
    machine_save_calib(&m, sw, sizeof(sw)); /* capacities measured on the way are kept; failing to is harmless */
    if (rc == 0) {
        int wr = out_json_file_atomic(out, doc);
        if (wr < 0)
            rcode = cli_fail(IB_EXIT_FAIL, "profile", "cannot write %s: %s", out, strerror(-wr));
        else {
            fprintf(stderr, "ibench profile: wrote %s\n", out);
            rcode = IB_EXIT_OK;
        }
        json_decref(doc);
    } else if (rc == -EINTR || atomic_load(&cli_stop)) {
        rcode = cli_fail(IB_EXIT_INTR, "profile", "interrupted; no profile written");
    } else {
        rcode = cli_fail(IB_EXIT_FAIL, "profile", "%s; no profile written", why);
    }
    cli_signals_restore();
    machine_close(&m);
done:
    metric_free(&o.metric);
    return rcode;
}
