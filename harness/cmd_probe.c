/* cmd_probe.c - `ibench probe`: independent reference and victim kernels (validation/probes.h), for benchmarks and
 * users. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "ib_err.h"
#include "machine.h"
#include "parse.h"
#include "probes.h"

static void probe_usage(void)
{
    printf("usage: ibench probe triad    [--cpu N] [--reps N] [--bytes SIZE] [--json]\n"
           "       ibench probe chase    [--cpu N] [--reps N] [--bytes SIZE] [--json]\n"
           "       ibench probe pingpong [--cpus A,B] [--reps N] [--json]\n\n"
           "Independent kernels that share no code with the SoIs, to check them from outside.\n"
           "  triad     STREAM's a = b + s*c on one CPU, three arrays of SIZE (default 4x the claimed LLC, at least\n"
           "            32 MiB each), 24 bytes counted per element as STREAM does; best and median pass, bytes/s.\n"
           "  chase     dependent loads over a random cyclic permutation of SIZE (default 512K) on one CPU; ns per\n"
           "            load per unit of the probe's own CPU time (time-sharing alone does not count); median and\n"
           "            best of --reps walks.\n"
           "  pingpong  one cache line each way between CPU A and CPU B (default: the farthest pair), both\n"
           "            spinning; ns per round trip, median and best of --reps windows of 20 ms.\n"
           "--cpu defaults to the lowest-numbered CPU (SoIs default to the highest), --reps to 10.\n");
}

int cmd_probe(int argc, char **argv)
{
    static const struct option lo[] = {
        {"cpu", required_argument, 0, 'c'},   {"cpus", required_argument, 0, 'C'}, {"reps", required_argument, 0, 'r'},
        {"bytes", required_argument, 0, 'a'}, {"array", required_argument, 0, 'a'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    int c, json = 0, cpu = -1, pair[2] = {-1, -1};
    unsigned long reps = 10, u;
    uint64_t bytes = 0;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (parse_uint(optarg, 0, 1u << 20, &u) < 0)
                return cli_fail(IB_EXIT_USAGE, "probe", "--cpu '%s' is not a CPU number", optarg);
            cpu = (int)u;
            break;
        case 'C': {
            unsigned long a, b;
            char extra;
            if (sscanf(optarg, "%lu,%lu%c", &a, &b, &extra) != 2 || a > (1u << 20) || b > (1u << 20))
                return cli_fail(IB_EXIT_USAGE, "probe", "--cpus '%s' is not two CPU numbers A,B", optarg);
            pair[0] = (int)a;
            pair[1] = (int)b;
            break;
        }
        case 'r':
            if (parse_uint(optarg, 1, 1000, &reps) < 0)
                return cli_fail(IB_EXIT_USAGE, "probe", "--reps '%s' is not 1-1000", optarg);
            break;
        case 'a':
            if (parse_size(optarg, &bytes) < 0 || bytes < 4096)
                return cli_fail(IB_EXIT_USAGE, "probe", "--bytes '%s' is not a size of at least 4K", optarg);
            break;
        case 'j': json = 1; break;
        case 'h': probe_usage(); return IB_EXIT_OK;
        default: return cli_fail(IB_EXIT_USAGE, "probe", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_fail(IB_EXIT_USAGE, "probe", "which probe? (triad, chase, pingpong)");
    const char *what = argv[optind];
    if (strcmp(what, "triad") && strcmp(what, "chase") && strcmp(what, "pingpong"))
        return cli_fail(IB_EXIT_USAGE, "probe", "unknown probe '%s' (triad, chase, pingpong)", what);
    if (optind + 1 < argc)
        return cli_fail(IB_EXIT_USAGE, "probe", "unexpected argument '%s'", argv[optind + 1]);
    if (!strcmp(what, "triad") && bytes && bytes < IB_MIB)
        return cli_fail(IB_EXIT_USAGE, "probe", "triad arrays must be at least 1M");
    struct machine m;
    char why[256] = "";
    if (machine_open(&m, NULL, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_FAIL, "probe", "%s", why);
    if (cpu < 0)
        cpu = topo_pu_os(m.topo, 0);
    int code = IB_EXIT_OK;
    if (!topo_cpu_exists(m.topo, cpu)) {
        code = cli_fail(IB_EXIT_USAGE, "probe", "CPU %d does not exist", cpu);
        goto out;
    }
    if (!strcmp(what, "pingpong")) {
        if (pair[0] < 0) {
            if (topo_npus(m.topo) < 2) {
                code = cli_fail(IB_EXIT_SKIP, "probe", "skipped: pingpong needs two CPUs, this machine has one");
                goto out;
            }
            topo_spread(m.topo, -1, 2, pair);
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
