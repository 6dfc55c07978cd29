/* cmd_probe.c - `ibench probe`: independent reference and victim kernels (validation/probes.h), for benchmarks and
 * users. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "ib_err.h"
#include "machine.h"
#include "parse.h"
#include "beside.h"
#include "fsguard.h"
#include "vprobe.h"
#include "probes.h"

struct beside_opts {
    const char *soi;
    int *cpus;
    unsigned ncpus;
    double level;
    unsigned long cycles;
    uint64_t step_ns, settle_ns;
    int cached;
};

static int probe_beside(struct machine *m, const char *what, int cpu, uint64_t bytes, const struct beside_opts *bo,
                        int json)
{
    char why[256] = "";
    const struct soi_ops *ops = soi_find(bo->soi);
    if (!ops)
        return cli_fail(IB_EXIT_USAGE, "probe", "unknown SoI '%s' (ibench list shows them)", bo->soi);
    unsigned minth = ops->min_threads > 1 ? ops->min_threads : 1, n = bo->ncpus ? bo->ncpus : minth;
    if (n < minth)
        return cli_fail(IB_EXIT_USAGE, "probe", "%s needs at least %u CPUs in --soi-cpus", ops->name, minth);
    int cpus[SOI_MAX_THREADS];
    if (n > SOI_MAX_THREADS)
        return cli_fail(IB_EXIT_USAGE, "probe", "at most %d SoI CPUs", SOI_MAX_THREADS);
    unsigned npus = topo_npus(m->topo);
    for (unsigned i = 0; i < n; i++) {
        if (bo->ncpus) {
            cpus[i] = bo->cpus[i];
            if (!topo_cpu_exists(m->topo, cpus[i]))
                return cli_fail(IB_EXIT_USAGE, "probe", "CPU %d does not exist", cpus[i]);
        } else { /* the highest-numbered CPUs other than the probe's, when there are any */
            int c = topo_pu_os(m->topo, npus - 1 - i % npus);
            if (c == cpu && npus > 1)
                c = topo_pu_os(m->topo, npus - 1 - (i + 1) % npus);
            cpus[i] = c;
        }
    }
    struct soi_env env;
    soi_env_init(&env, ops, m, n, cpus, cpu, &cli_stop);
    env.cached_capacity = bo->cached;
    cli_signals_install();
    struct soi *s = NULL;
    int bad = 0;
    int rc = soi_open(ops, &env, &s, &bad, why, sizeof(why));
    if (rc < 0) {
        cli_signals_restore();
        return cli_fail(cli_exit_for(rc, bad), "probe", "%s%s", rc == -ENOTSUP ? "skipped: " : "", why);
    }
    struct beside_probe bp;
    struct probe_chase_ctx cc;
    struct vprobe vp;
    int have_vp = 0;
    if (!strcmp(what, "chase")) {
        beside_chase_probe(&bp, &cc, bytes);
    } else { /* a validation probe (vprobe.h) */
        if ((rc = vprobe_init(&vp, what, &m->calib, &m->mlim, NULL, NULL, -1, why, sizeof(why))) < 0) {
            soi_close(s);
            cli_signals_restore();
            return cli_fail(cli_exit_for(rc, 0), "probe", "%s", why);
        }
        have_vp = 1;
        bp = vp.bp;
    }
    const double levels[2] = {0, bo->level};
    struct beside_result br;
    if (isatty(2))
        fprintf(stderr, "ibench probe: chase on CPU %d beside %s on CPU %d%s, %lu cycles of 2 x %.0f ms...\n", cpu,
                ops->name, cpus[0], n > 1 ? " and more" : "", bo->cycles, (double)bo->step_ns / 1e6);
    rc = beside_run(s, levels, 2, (unsigned)bo->cycles, bo->step_ns, bo->settle_ns, cpu, &bp, &cli_stop, &br, why,
                    sizeof(why));
    if (have_vp)
        vprobe_fini(&vp);
    soi_close(s);
    cli_signals_restore();
    if (rc < 0)
        return cli_fail(cli_exit_for(rc, 0), "probe", "%s", why);
    double ratio = br.lv[0].median > 0 ? br.lv[1].median / br.lv[0].median : 0;
    if (json) {
        json_t *doc = json_pack("{s:s,s:s,s:i,s:I,s:s,s:f,s:I,s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:f,s:s}", "ibench",
                                IBENCH_VERSION, "probe", what, "cpu", cpu, "bytes", (json_int_t)bytes, "beside",
                                ops->name, "level", bo->level, "cycles", (json_int_t)bo->cycles, "step_s",
                                (double)bo->step_ns / 1e9, "solo", br.lv[0].median, "beside_median", br.lv[1].median,
                                "ratio", ratio, "noise", br.noise, "solo_samples", (json_int_t)br.lv[0].nsamples,
                                "beside_samples", (json_int_t)br.lv[1].nsamples, "soi_achieved_pct",
                                br.lv[1].achieved_pct, "unit", bp.unit);
        json_t *jc = json_array();
        for (unsigned i = 0; i < n; i++)
            json_array_append_new(jc, json_integer(cpus[i]));
        json_object_set_new(doc, "soi_cpus", jc);
        out_json(stdout, doc);
        json_decref(doc);
    } else {
        char b1[32];
        if (!strcmp(what, "chase"))
            printf("chase over %s", fmt_bytes((double)bytes, b1, sizeof(b1)));
        else
            printf("%s (%s)", what, vp.what);
        printf(" on CPU %d beside %s on CPU %d%s (%lu cycles of %.0f ms at 0 %% and %g %%)\n", cpu, ops->name,
               cpus[0], n > 1 ? " and more" : "", bo->cycles, (double)bo->step_ns / 1e6, bo->level);
        printf("  SoI at 0 %%:   %.3f %s (median of %u samples)\n", br.lv[0].median, bp.unit, br.lv[0].nsamples);
        printf("  SoI at %g %%: %.3f %s (median of %u samples; the SoI self-metered %.1f %%)\n", bo->level,
               br.lv[1].median, bp.unit, br.lv[1].nsamples, br.lv[1].achieved_pct);
        printf("  ratio %.3f (+%.1f %%), noise %.1f %% (even vs odd cycles)\n", ratio, (ratio - 1) * 100,
               br.noise * 100);
    }
    return IB_EXIT_OK;
}

static int probe_main(int argc, char **argv, int first, int cpu, int pair[2], unsigned long reps, uint64_t bytes,
                      int json, const char *sizes, const struct beside_opts *bo);

struct probe_opts {
    int cpu, pair[2], json;
    unsigned long reps;
    uint64_t bytes;
    const char *sizes;
    struct beside_opts bo;
};

/* --cpus A,B: pingpong's two CPUs */
static int set_pair(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    struct probe_opts *o = opts;
    unsigned long a, b;
    char extra;
    if (sscanf(arg, "%lu,%lu%c", &a, &b, &extra) != 2 || a > (1u << 20) || b > (1u << 20))
        return -EINVAL;
    o->pair[0] = (int)a;
    o->pair[1] = (int)b;
    return 0;
}

static int cmd_probe(void *opts, int argc, char **argv, int first)
{
    struct probe_opts *o = opts;
    const struct beside_opts *bo = &o->bo;
    if (first >= argc)
        return cli_fail(IB_EXIT_USAGE, "probe", "which probe? (triad, chase, pingpong)");
    if ((bo->soi || bo->ncpus) && (!strcmp(argv[first], "triad") || !strcmp(argv[first], "pingpong")))
        return cli_fail(IB_EXIT_USAGE, "probe", "--beside goes with chase or a validation probe (%s, ...)",
                        vprobe_names[0]);
    if (bo->ncpus && !bo->soi)
        return cli_fail(IB_EXIT_USAGE, "probe", "--soi-cpus goes with --beside");
    if (bo->settle_ns >= bo->step_ns)
        return cli_fail(IB_EXIT_USAGE, "probe", "--settle-ms must be shorter than --step-ms");
    if (o->sizes && (o->bytes || bo->soi || strcmp(argv[first], "chase")))
        return cli_fail(IB_EXIT_USAGE, "probe", "--sizes goes with chase alone (not with --bytes or --beside)");
    return probe_main(argc, argv, first, o->cpu, o->pair, o->reps, o->bytes, o->json, o->sizes, bo->soi ? bo : NULL);
}

/* The chase at each size of a comma-separated list, one line (or one JSON row) per size. */
static int probe_sizes(struct machine *m, int cpu, const char *list, unsigned long reps, int json)
{
    uint64_t sz[64];
    unsigned n = 0;
    char buf[1024], why[256];
    if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
        return cli_fail(IB_EXIT_USAGE, "probe", "--sizes is too long");
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == IB_ARRAY_SIZE(sz))
            return cli_fail(IB_EXIT_USAGE, "probe", "--sizes takes at most %zu sizes", IB_ARRAY_SIZE(sz));
        if (parse_size(tok, &sz[n]) < 0 || sz[n] < 4096)
            return cli_fail(IB_EXIT_USAGE, "probe", "--sizes: '%s' is not a size of at least 4K", tok);
        if (probe_check_bytes(&m->mlim, "chase", sz[n], why, sizeof(why)) < 0)
            return cli_fail(IB_EXIT_USAGE, "probe", "%s", why);
        n++;
    }
    if (!n)
        return cli_fail(IB_EXIT_USAGE, "probe", "--sizes names no size");
    json_t *rows = json ? json_array() : NULL;
    if (!json)
        printf("chase on CPU %d, ns per load per unit of own CPU time (%lu walks per size; median, best):\n", cpu,
               reps);
    for (unsigned i = 0; i < n; i++) {
        double med = 0, best = 0;
        int rc = probe_chase(m->topo, cpu, sz[i], (unsigned)reps, &med, &best);
        if (rc < 0) {
            json_decref(rows);
            return cli_fail(IB_EXIT_FAIL, "probe", "chase over %llu bytes failed: %s", (unsigned long long)sz[i],
                            strerror(-rc));
        }
        if (json) {
            json_array_append_new(rows, json_pack("{s:I,s:f,s:f}", "bytes", (json_int_t)sz[i], "median", med, "best",
                                                  best));
        } else {
            char b[32];
            printf("%12s  %8.2f  %8.2f\n", fmt_bytes((double)sz[i], b, sizeof(b)), med, best);
            fflush(stdout);
        }
        if (atomic_load(&cli_stop))
            break;
    }
    if (json) {
        json_t *doc = json_pack("{s:s,s:s,s:i,s:i,s:s,s:o}", "ibench", IBENCH_VERSION, "probe", "chase", "cpu", cpu,
                                "reps", (int)reps, "unit", "ns", "sizes", rows);
        out_json(stdout, doc);
        json_decref(doc);
    }
    return IB_EXIT_OK;
}

static int probe_main(int argc, char **argv, int first, int cpu, int pair[2], unsigned long reps, uint64_t bytes,
                      int json, const char *sizes, const struct beside_opts *bo)
{
    if (first >= argc)
        return cli_fail(IB_EXIT_USAGE, "probe", "which probe? (triad, chase, pingpong)");
    const char *what = argv[first];
    int is_vp = 0;
    for (int k = 0; vprobe_names[k]; k++)
        is_vp |= !strcmp(what, vprobe_names[k]);
    if (strcmp(what, "triad") && strcmp(what, "chase") && strcmp(what, "pingpong") && !is_vp)
        return cli_fail(IB_EXIT_USAGE, "probe", "unknown probe '%s' (triad, chase, pingpong, or a validation probe: "
                        "chase-l1, chase-llc, stream-dram, pagecache, disk-rand, net, ...)", what);
    if (is_vp && !bo)
        return cli_fail(IB_EXIT_USAGE, "probe", "%s runs beside an SoI: add --beside SOI", what);
    if (first + 1 < argc)
        return cli_fail(IB_EXIT_USAGE, "probe", "unexpected argument '%s'", argv[first + 1]);
    if (!strcmp(what, "triad") && bytes && bytes < IB_MIB)
        return cli_fail(IB_EXIT_USAGE, "probe", "triad arrays must be at least 1M");
    struct machine m;
    char why[256] = "";
    if (machine_open(&m, NULL, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_FAIL, "probe", "%s", why);
    cli_calib_note("probe", &m);
    if (cpu < 0)
        cpu = topo_pu_os(m.topo, 0);
    int code = IB_EXIT_OK;
    if (!topo_cpu_exists(m.topo, cpu)) {
        code = cli_fail(IB_EXIT_USAGE, "probe", "CPU %d does not exist", cpu);
        goto out;
    }
    /* a size the user gave is held to the memory the machine can spare before anything is mapped */
    if (bytes && (!strcmp(what, "triad") || !strcmp(what, "chase")) &&
        probe_check_bytes(&m.mlim, what, bytes, why, sizeof(why)) < 0) {
        code = cli_fail(IB_EXIT_USAGE, "probe", "%s", why);
        goto out;
    }
    if (bo) {
        code = probe_beside(&m, what, cpu, bytes ? bytes : 512 * IB_KIB, bo, json);
        goto out;
    }
    if (sizes) {
        cli_signals_install();
        code = probe_sizes(&m, cpu, sizes, reps, json);
        cli_signals_restore();
        goto out;
    }
    if (!strcmp(what, "pingpong")) {
        if (pair[0] < 0) {
            if (topo_npus(m.topo) < 2) {
                code = cli_fail(IB_EXIT_SKIP, "probe", "skipped: pingpong needs two CPUs, this machine has one");
                goto out;
            }
            if (topo_spread(m.topo, -1, 2, pair) < 0) {
                code = cli_fail(IB_EXIT_FAIL, "probe", "cannot pick the two CPUs farthest apart");
                goto out;
            }
        }
        for (int i = 0; i < 2; i++)
            if (!topo_cpu_exists(m.topo, pair[i])) {
                code = cli_fail(IB_EXIT_USAGE, "probe", "CPU %d does not exist", pair[i]);
                goto out;
            }
    }
    double a = 0, b = 0;
    int rc;
    const char *unit;
    if (!strcmp(what, "triad")) {
        rc = probe_triad(m.topo, cpu, bytes, (unsigned)reps, &a, &b); /* best, median */
        unit = "B/s";
    } else if (!strcmp(what, "chase")) {
        if (!bytes)
            bytes = 512 * IB_KIB;
        rc = probe_chase(m.topo, cpu, bytes, (unsigned)reps, &b, &a); /* median, best */
        unit = "ns";
    } else {
        rc = probe_pingpong(m.topo, pair[0], pair[1], (unsigned)reps, &b, &a);
        unit = "ns";
    }
    if (rc < 0) {
        code = cli_fail(IB_EXIT_FAIL, "probe", "%s failed: %s", what, strerror(-rc));
        goto out;
    }
    if (json) {
        json_t *doc = json_pack("{s:s,s:s,s:i,s:f,s:f,s:s}", "ibench", IBENCH_VERSION, "probe", what, "reps", (int)reps,
                                "best", a, "median", b, "unit", unit);
        if (!strcmp(what, "pingpong"))
            json_object_set_new(doc, "cpus", json_pack("[i,i]", pair[0], pair[1]));
        else
            json_object_set_new(doc, "cpu", json_integer(cpu));
        if (bytes)
            json_object_set_new(doc, "bytes", json_integer((json_int_t)bytes));
        out_json(stdout, doc);
        json_decref(doc);
    } else if (!strcmp(what, "triad")) {
        char b1[32], b2[32];
        printf("triad on CPU %d: best %s, median %s (%lu passes)\n", cpu, fmt_rate(a, "B/s", b1, sizeof(b1)),
               fmt_rate(b, "B/s", b2, sizeof(b2)), reps);
    } else if (!strcmp(what, "chase")) {
        char b1[32];
        printf("chase over %s on CPU %d: median %.2f ns per load, best %.2f (%lu walks, per unit of own CPU time)\n",
               fmt_bytes(bytes, b1, sizeof(b1)), cpu, b, a, reps);
    } else {
        printf("pingpong CPU %d <-> CPU %d: median %.1f ns per round trip, best %.1f (%lu windows)\n", pair[0], pair[1],
               b, a, reps);
    }
out:
    machine_close(&m);
    return code;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define PO struct probe_opts
static const struct cli_opt probe_table[] = {
    {CLI_INT("cpu", "N", PO, cpu, 0, 1 << 20, "the probe's CPU (default: the lowest-numbered)"),
     .what = "a CPU number"},
    {CLI_CUSTOM("cpus", "A,B", PO, pair, set_pair, "pingpong: the two CPUs (default: the farthest pair)"),
     .what = "two CPU numbers A,B", .sample = "0,1"},
    {CLI_ULONG("reps", "N", PO, reps, 1, 1000, "passes (triad), walks (chase) or windows (pingpong)"), .def = "10"},
    {CLI_SIZE("bytes", "SIZE", PO, bytes, 4096, INFINITY, "triad: each array's size; chase: the walk's"),
     .what = "a size of at least 4K"},
    {CLI_SIZE("array", "SIZE", PO, bytes, 4096, INFINITY, NULL), .flags = CLI_OPT_ALIAS,
     .what = "a size of at least 4K"},
    {CLI_STR("sizes", "LIST", PO, sizes, "chase: walk each size of the list in turn (1M,2M,4M), a line each")},
    {CLI_FLAG("json", PO, json, "JSON instead of text")},
    {CLI_STR("beside", "SOI", PO, bo.soi, "run the chase or a validation probe beside SOI")},
    {CLI_CPUS("soi-cpus", "LIST", PO, bo.cpus, bo.ncpus,
              "with --beside: SOI's CPUs (default: the highest-numbered CPU that is not --cpu)")},
    {CLI_PCT("level", "X", PO, bo.level, 0, 100, "with --beside: SOI's intensity in its on steps"),
     .flags = CLI_OPT_GT_MIN, .def = "100", .what = "an intensity above 0 (to 100)"},
    {CLI_ULONG("cycles", "N", PO, bo.cycles, 2, 10000, "with --beside: off/on cycles"), .def = "20"},
    {CLI_MSEC("step-ms", "D", PO, bo.step_ns, 1, 10 * IB_NS_PER_S,
              "with --beside: each step, milliseconds or with a unit"),
     .def = "50", .what = "a duration up to 10 s"},
    {CLI_MSEC("settle-ms", "D", PO, bo.settle_ns, 0, 10 * IB_NS_PER_S,
              "with --beside: what counts of a step starts this far into it"),
     .def = "5", .what = "a duration up to 10 s"},
    {CLI_FLAG("cached-capacity", PO, bo.cached, "with --beside: SOI scales against its cached peak rate")},
};
#undef PO

const struct cli_cmd cli_cmd_probe = {
    .name = "probe",
    CLI_RUN(cmd_probe, struct probe_opts),
    .preset = &(const struct probe_opts){.cpu = -1, .pair = {-1, -1}},
    .summary = "independent probes: triad, chase (also beside an SoI), pingpong",
    .usage = "usage: ibench probe triad    [--cpu N] [--reps N] [--bytes SIZE] [--json]\n"
             "       ibench probe chase    [--cpu N] [--reps N] [--bytes SIZE | --sizes LIST] [--json]\n"
             "       ibench probe pingpong [--cpus A,B] [--reps N] [--json]\n"
             "       ibench probe chase|PROBE --beside SOI [--soi-cpus LIST] [--level X] [--cycles N] [--step-ms D]\n"
             "                   [--settle-ms D] [--cached-capacity] [--cpu N] [--bytes SIZE] [--json]\n\n",
    .about =
        "Independent kernels that share no code with the SoIs, to check them from outside.\n"
        "  triad     STREAM's a = b + s*c on one CPU, three arrays of SIZE (default 4x the claimed LLC, at least\n"
        "            32 MiB each), 24 bytes counted per element as STREAM does; best and median pass, bytes/s.\n"
        "  chase     dependent loads over a random cyclic permutation of SIZE (default 512K) on one CPU; ns per\n"
        "            load per unit of the probe's own CPU time (time-sharing alone does not count); median and\n"
        "            best of --reps walks. --sizes 1M,2M,4M,6M,8M,16M walks each size in turn and prints one line\n"
        "            per size: the latency curve, independent of the calibration's sweep, to check its knees\n"
        "            against (docs/capacities.md).\n"
        "  pingpong  one cache line each way between CPU A and CPU B (default: the farthest pair), both\n"
        "            spinning; ns per round trip, median and best of --reps windows of 20 ms.\n"
        "--cpu defaults to the lowest-numbered CPU (SoIs default to the highest), --reps to 10.\n\n"
        "With --beside, the chase runs beside SOI in one process: SOI alternates between 0 % and X % (default\n"
        "100) in steps of --step-ms (50) for --cycles (20) cycles on --soi-cpus (default: the highest-numbered\n"
        "CPU that is not --cpu), while the chase samples back to back (100000 loads each). Samples that start\n"
        "--settle-ms (5) into a step and end inside it count for that step. Prints the probe's median with\n"
        "the SoI at 0 % and at X %, their ratio, and the noise: the same medians over even and odd cycles\n"
        "apart. Moments apart, with and without, so the host's slow drift cancels. PROBE may also be a\n"
        "validation probe: chase-l1, chase-l2, chase-llc, chase-dram, stream-llc, stream-dram, tlb,\n"
        "ops-int, pagecache, disk-rand, disk-seq, net (docs/validation.md).\n\n",
    CLI_OPTS(probe_table),
    .args = CLI_ARGS_ANY,
};
