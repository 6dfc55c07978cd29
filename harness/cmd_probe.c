/* cmd_probe.c - `ibench probe`: independent reference kernels (validation/probes.h), for benchmarks and users. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "ib_err.h"
#include "machine.h"
#include "parse.h"
#include "probes.h"

int cmd_probe(int argc, char **argv)
{
    static const struct option lo[] = {{"cpu", required_argument, 0, 'c'}, {"reps", required_argument, 0, 'r'},
                                       {"array", required_argument, 0, 'a'}, {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},      {0, 0, 0, 0}};
    int c, json = 0, cpu = -1;
    unsigned long reps = 10, u;
    uint64_t array = 0;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (parse_uint(optarg, 0, 1u << 20, &u) < 0)
                return cli_fail(IB_EXIT_USAGE, "probe", "--cpu '%s' is not a CPU number", optarg);
            cpu = (int)u;
            break;
        case 'r':
            if (parse_uint(optarg, 1, 1000, &reps) < 0)
                return cli_fail(IB_EXIT_USAGE, "probe", "--reps '%s' is not 1-1000", optarg);
            break;
        case 'a':
            if (parse_size(optarg, &array) < 0 || array < IB_MIB)
                return cli_fail(IB_EXIT_USAGE, "probe", "--array '%s' is not a size of at least 1M", optarg);
            break;
        case 'j': json = 1; break;
        case 'h':
            printf("usage: ibench probe triad [--cpu N] [--reps N] [--array SIZE] [--json]\n\n"
                   "Independent reference kernels. triad: STREAM's a = b + s*c on one CPU with three arrays of\n"
                   "SIZE (default 4x the claimed LLC, at least 32 MiB each), best of --reps, 24 bytes counted per\n"
                   "element as STREAM does. Prints the best pass (STREAM's convention) and the median, in bytes/s.\n");
            return IB_EXIT_OK;
        default: return cli_fail(IB_EXIT_USAGE, "probe", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_fail(IB_EXIT_USAGE, "probe", "which probe? (triad)");
    if (strcmp(argv[optind], "triad"))
        return cli_fail(IB_EXIT_USAGE, "probe", "unknown probe '%s' (triad)", argv[optind]);
    if (optind + 1 < argc)
        return cli_fail(IB_EXIT_USAGE, "probe", "unexpected argument '%s'", argv[optind + 1]);
    struct machine m;
    char why[256] = "";
    if (machine_open(&m, NULL, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_FAIL, "probe", "%s", why);
    if (cpu < 0)
        cpu = topo_pu_os(m.topo, topo_npus(m.topo) - 1);
    if (!topo_cpu_exists(m.topo, cpu)) {
        machine_close(&m);
        return cli_fail(IB_EXIT_USAGE, "probe", "CPU %d does not exist", cpu);
    }
    double bps = 0, med = 0;
    int rc = probe_triad(m.topo, cpu, array, (unsigned)reps, &bps, &med);
    machine_close(&m);
    if (rc < 0)
        return cli_fail(IB_EXIT_FAIL, "probe", "triad failed: %s", strerror(-rc));
    if (json) {
        json_t *doc = json_pack("{s:s,s:s,s:i,s:i,s:f,s:f}", "ibench", IBENCH_VERSION, "probe", "triad", "cpu", cpu,
                                "reps", (int)reps, "best_bps", bps, "median_bps", med);
        out_json(stdout, doc);
        json_decref(doc);
    } else {
        char b[32], c2[32];
        printf("triad on CPU %d: best %s, median %s (%lu passes)\n", cpu, fmt_rate(bps, "B/s", b, sizeof(b)),
               fmt_rate(med, "B/s", c2, sizeof(c2)), reps);
    }
    return IB_EXIT_OK;
}
