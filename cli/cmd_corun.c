/* cmd_corun.c - `ibench corun`: A's performance beside B against A alone, interleaved, as a record
 * (harness/corun.h; docs/corun.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "corun.h"
#include "ib_err.h"
#include "machine.h"
#include "opts.h"
#include "parse.h"
#include "render.h"
#include "target.h"
#include "topo.h"

/* The command's options, as given: corun_opts (harness/corun.h) is made of them after the rules between them. */
struct corun_cmd_opts {
    const char *a, *a_load, *a_metric, *b, *b_load, *a_name, *b_name, *cpus_a, *cpus_b, *out;
    struct corun_params pp;
    unsigned timeout_s, warmup_ms;
    int json;
};

/* The first word of cmd, at most 63 characters, into buf. */
static char *first_word(const char *cmd, char *buf, size_t len)
{
    while (*cmd == ' ' || *cmd == '\t')
        cmd++;
    size_t n = strcspn(cmd, " \t\n");
    const char *slash = memrchr(cmd, '/', n);
    if (slash) {
        n -= (size_t)(slash + 1 - cmd);
        cmd = slash + 1;
    }
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), cmd);
    return buf;
}

static void progress(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "ibench corun: %s\n", line);
}

/* One side: its name, command, load and CPUs; the user's text escaped for the terminal. */
static void print_side(const char *label, const struct corun_side *sd)
{
    printf("%s  %s: '%s'", label, TTY_TEXT(sd->name), TTY_TEXT(sd->command));
    if (sd->load)
        printf(" with load '%s'", TTY_TEXT(sd->load));
    printf(" on CPU");
    for (unsigned i = 0; i < sd->ncpus; i++)
        printf("%s%d", i ? "," : " ", sd->cpus[i]);
    printf("\n");
}

static void print_table(const struct corun_record *rec)
{
    print_side("A", &rec->a);
    print_side("B", &rec->b);
    printf("metric %s (%s, %s is better); B paused by %s\n", TTY_TEXT(rec->metric_spec), rec->metric_unit,
           rec->higher_is_better ? "higher" : "lower", rec->pause);
    if (!rec->complete)
        printf("INCOMPLETE: %s\n", rec->reason ? rec->reason : "stopped");
    printf("\n");
    printf("%4s  %14s  %14s  %9s\n", "rep", "A alone", "A beside B", "relative");
    for (unsigned i = 0; i < rec->r.n; i++)
        printf("%4u  %14.6g  %14.6g  %9.4f\n", i + 1, rec->r.s[i].solo, rec->r.s[i].beside, rec->r.s[i].relative);
    printf("\nrelative %.4f", rec->r.relative);
    if (isfinite(rec->r.se))
        printf(" +- %.4f (standard error, %u repetitions)", rec->r.se, rec->r.n);
    printf(": A beside B runs at %.1f %% of its performance alone", 100 * rec->r.relative);
    if (isfinite(rec->r.se))
        printf("%s", fabs(rec->r.relative - 1) <= 2 * rec->r.se ? " (within 2 se of no effect)" : "");
    printf("\n");
    if (!strcmp(rec->pause, "signals"))
        printf("note: no cgroup freezer here: B was paused by SIGSTOP to its process group, which misses a process "
               "of B that called setsid\n");
}

static int cmd_corun(void *opts, int argc, char **argv, int first)
{
    (void)argc, (void)argv, (void)first;
    const struct corun_cmd_opts *co = opts;
    /* the library's sides hold the user's strings, borrowed (char *, as argv's) */
    struct corun_opts o = {.a = {.command = (char *)co->a, .load = (char *)co->a_load, .name = (char *)co->a_name},
                           .b = {.command = (char *)co->b, .load = (char *)co->b_load, .name = (char *)co->b_name},
                           .pp = co->pp, .timeout_s = co->timeout_s, .warmup_ms = co->warmup_ms,
                           .progress = progress};
    const char *metric = co->a_metric, *out = co->out, *cpus_a = co->cpus_a, *cpus_b = co->cpus_b;
    int json = co->json, rc;
    if (!o.a.command || !*o.a.command || !o.b.command || !*o.b.command)
        return cli_fail(IB_EXIT_USAGE, "corun", "--a 'CMD' and --b 'CMD' are required");
    if (!metric)
        return cli_fail(IB_EXIT_USAGE, "corun", "--a-metric KIND is required (runtime, throughput, ...)");
    char why[512] = "";
    if (metric_parse(&o.metric, metric, o.a.load, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_USAGE, "corun", "%s", why);
    rc = 0;
    if (o.metric.kind == MK_IPC || o.metric.kind == MK_IO_RATE)
        rc = cli_fail(IB_EXIT_USAGE, "corun", "--a-metric %s is not offered by corun (profile measures it)",
                      metric_kind_name(o.metric.kind));
    else if ((o.metric.kind == MK_RUNTIME || o.metric.kind == MK_CPUTIME) && o.a.load)
        rc = cli_fail(IB_EXIT_USAGE, "corun", "--a-metric %s times one run of a batch --a (no --a-load)",
                      metric_kind_name(o.metric.kind));
    else if (o.metric.kind == MK_COMMAND && o.a.load)
        rc = cli_fail(IB_EXIT_USAGE, "corun", "--a-load is read by throughput/latency metrics; command:CMD is its "
                      "own sample");
    char name_a[64], name_b[64];
    if (!o.a.name)
        o.a.name = first_word(o.a.command, name_a, sizeof(name_a));
    if (!o.b.name)
        o.b.name = first_word(o.b.command, name_b, sizeof(name_b));
    if (rc == 0 && out) /* the directory must take the file before minutes of measuring */
        rc = cli_check_out("corun", "--out", out);
    if (rc) {
        metric_free(&o.metric);
        return rc;
    }
    struct machine m;
    if (machine_open(&m, NULL, why, sizeof(why)) < 0) {
        metric_free(&o.metric);
        return cli_fail(IB_EXIT_FAIL, "corun", "%s", why);
    }
    unsigned npus = topo_npus(m.topo);
    if (npus < 2 && !(cpus_a && cpus_b))
        rc = cli_fail(IB_EXIT_SKIP, "corun", "this machine has one CPU: a co-run needs two (one program each)");
    if (rc == 0) {
        if (cpus_a)
            rc = cli_cpus_here("corun", "cpus-a", cpus_a, &m, CORUN_MAX_CPUS, o.a.cpus, &o.a.ncpus);
        else {
            o.a.cpus[0] = topo_pu_os(m.topo, 0);
            o.a.ncpus = 1;
        }
    }
    if (rc == 0) {
        if (cpus_b)
            rc = cli_cpus_here("corun", "cpus-b", cpus_b, &m, CORUN_MAX_CPUS, o.b.cpus, &o.b.ncpus);
        else {
            o.b.cpus[0] = topo_pu_os(m.topo, npus - 1);
            o.b.ncpus = 1;
        }
    }
    for (unsigned i = 0; rc == 0 && i < o.a.ncpus; i++)
        for (unsigned k = 0; k < o.b.ncpus; k++)
            if (o.a.cpus[i] == o.b.cpus[k]) {
                fprintf(stderr, "ibench corun: warning: A and B share CPU %d: they time-share it, which is not the "
                        "interference of a shared cache, memory path or disk\n", o.a.cpus[i]);
                i = o.a.ncpus;
                break;
            }
    struct corun_record rec;
    memset(&rec, 0, sizeof(rec));
    if (rc == 0) {
        cli_signals_install();
        int was = 0;
        prctl(PR_GET_CHILD_SUBREAPER, &was);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        int crc = corun_run(&o, &cli_stop, &rec, why, sizeof(why));
        prctl(PR_SET_CHILD_SUBREAPER, was);
        rec.fingerprint = strdup(m.calib.fingerprint);
        rec.cpu_model = strdup(m.cpu.model);
        rec.machine_cpus = (int)npus;
        /* stopped (corun_run says so for a failure while stopping too): the repetitions finished are kept, marked
         * incomplete, as a profile's are; none finished, nothing to keep */
        const int intr = crc == -EINTR;
        if (intr && rec.r.n == 0)
            rc = cli_fail(IB_EXIT_INTR, "corun", "interrupted before the first repetition finished; no record written");
        else if (crc < 0 && !intr)
            rc = cli_fail(cli_exit_for(crc, 0), "corun", "%s; no record written", why);
        else if (out && corun_write(out, &rec, why, sizeof(why)) < 0)
            rc = cli_fail(IB_EXIT_FAIL, "corun", "%s", why);
        else {
            if (json) {
                json_t *d = corun_json(&rec);
                char *t = d ? json_dumps(d, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
                if (t)
                    printf("%s\n", t);
                free(t);
                json_decref(d);
            } else {
                print_table(&rec);
            }
            if (intr && out)
                rc = cli_fail(IB_EXIT_INTR, "corun", "interrupted; wrote %s, incomplete: %u of %u repetitions", out,
                              rec.r.n, rec.reps_planned);
            else if (intr)
                rc = cli_fail(IB_EXIT_INTR, "corun", "interrupted; incomplete: %u of %u repetitions", rec.r.n,
                              rec.reps_planned);
            else
                rc = IB_EXIT_OK;
            if (!intr && out)
                fprintf(stderr, "ibench corun: wrote %s\n", out);
        }
        cli_signals_restore();
    }
    corun_free(&rec);
    machine_close(&m);
    metric_free(&o.metric);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define CO struct corun_cmd_opts
static const struct cli_opt corun_table[] = {
    {CLI_STR("a", "CMD", CO, a, "A: a batch job run once per sample, or with --a-load a service left running")},
    {CLI_STR("a-load", "CMD", CO, a_load, "A's load generator, run once per sample (throughput/latency metrics)")},
    {CLI_STR("a-metric", "KIND", CO, a_metric,
             "runtime, cputime, throughput[:REGEX], latency[:REGEX], command:CMD,\n"
             "command-lower:CMD (as ibench profile --metric; ipc is not offered here)")},
    {CLI_STR("b", "CMD", CO, b,
             "B: run again and again (a failing run ends the co-run), or with --b-load a\n"
             "service left running while its load generator runs again and again")},
    {CLI_STR("b-load", "CMD", CO, b_load, "B's load generator, run again and again beside the service --b")},
    {CLI_STR("a-name", "NAME", CO, a_name, "a short label for A in the record (default: its command's first word)")},
    {CLI_STR("b-name", "NAME", CO, b_name, "a short label for B in the record (default: its command's first word)")},
    {CLI_STR("cpus-a", "LIST", CO, cpus_a, "A's CPUs (default: the first)")},
    {CLI_STR("cpus-b", "LIST", CO, cpus_b, "B's CPUs (default: the last)")},
    {CLI_UINT("reps", "N", CO, pp.reps, 3, CORUN_MAX_REPS, "repetitions, 3 to " CLI_STR_OF(CORUN_MAX_REPS)),
     .def = "7"},
    {CLI_UINT("settle-solo", "MS", CO, pp.settle_solo_ms, 0, 60000, "after pausing B, before A's solo sample"),
     .def = "200"},
    {CLI_UINT("settle-beside", "MS", CO, pp.settle_beside_ms, 0, 60000,
              "after resuming B, before A's beside sample; for a B that works in\n"
              "cycles (a batch job in a loop), a few of its cycles (docs/corun.md)"),
     .def = "300"},
    {CLI_UINT("timeout", "S", CO, timeout_s, 1, 3600, "one sample of A, in seconds"), .def = "60"},
    {CLI_UINT("warmup", "MS", CO, warmup_ms, 0, 600000, "after starting a service (A's or B's)"), .def = "500"},
    {CLI_STR("out", "FILE", CO, out,
             "write the record there (JSON, docs/schema/corun-v1.schema.json), atomically")},
    {CLI_FLAG("json", CO, json, "print the record on stdout instead of the table")},
};
#undef CO

const struct cli_cmd cli_cmd_corun = {
    .name = "corun",
    CLI_RUN(cmd_corun, struct corun_cmd_opts),
    .summary = "measure what one program does to another sharing this machine (A beside B vs alone)",
    .usage = "usage: ibench corun --a 'CMD' [--a-load 'CMD'] --a-metric KIND --b 'CMD' [--b-load 'CMD']\n"
             "                    [--a-name NAME] [--b-name NAME] [--cpus-a LIST] [--cpus-b LIST] [--reps N]\n"
             "                    [--settle-solo MS] [--settle-beside MS] [--timeout S] [--warmup MS]\n"
             "                    [--out FILE] [--json]\n\n",
    .about = "Measures what program B really does to program A on this machine. B runs continuously on its CPUs;\n"
             "each repetition pauses B (its cgroup frozen, so a process of it that left its group is paused too),\n"
             "samples A alone, resumes B and samples A beside it. relative = A beside / A alone (1 = unharmed),\n"
             "the median over repetitions, with its standard error.\n\n",
    .more = "\nProgress goes to stderr. Exit 0 with the co-run measured; 1 when A or B fails (no record written);\n"
            "2 on bad input; 77 on a machine with one CPU; 130 on Ctrl-C or SIGTERM: the repetitions finished are\n"
            "written and shown, marked incomplete (none finished: nothing). Every child is stopped on every path.\n",
    CLI_OPTS(corun_table),
};
