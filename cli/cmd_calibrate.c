/* cmd_calibrate.c - `ibench calibrate`: what the SoIs scale against, measured on this machine and cached; shown as
 * `ibench topo` shows the machine (cli_machine_cmd, cmd_topo.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "calib.h"
#include "cli.h"
#include "ib_err.h"
#include "machine.h"
#include "soi.h"

/* The cache sizes, then the bandwidths of L2, LLC and DRAM on one CPU and on --cpus, then with --dir the disk-bw
 * peaks of DIR's filesystem. */
static int calibrate_measure(const char *cmd, struct machine *m, struct machine_opts *o, char *why, size_t len)
{
    int last = topo_pu_os(m->topo, topo_npus(m->topo) - 1);
    /* no calib_reset: the sweep forgets the memory bandwidths it invalidates; the peak rates and I/O paths stay */
    int rc = calib_measure_caches(&m->calib, m->topo, last, &cli_stop, cli_calib_progress, (void *)cmd, why, len);
    if (rc < 0)
        return rc;
    int all[1024];
    unsigned nall = o->ncpus;
    if (o->ncpus)
        memcpy(all, o->cpus, o->ncpus * sizeof(int));
    else
        for (unsigned i = 0; i < topo_npus(m->topo) && i < 1024; i++)
            all[nall++] = topo_pu_os(m->topo, i);
    static const char *const kinds[] = {"l2", "llc", "dram"};
    int passes = nall > 1 || all[0] != last ? 2 : 1; /* --cpus naming one other CPU is measured there too */
    for (int k = 0; k < 3; k++)
        for (int pass = 0; pass < passes; pass++) {
            double bps;
            out_progress(cmd, "%s bandwidth on %s", kinds[k], pass ? "all CPUs" : "one CPU");
            rc = calib_measure_bw(&m->calib, m->topo, &m->mlim, kinds[k], pass ? all : &last, pass ? nall : 1,
                                  &cli_stop, &bps, why, len);
            if (rc < 0)
                return rc;
        }
    /* through the SoIs themselves, at their own defaults: what `run --soi disk-bw` and `--soi disk-write` look up */
    static const char *const disk_sois[] = {"disk-bw", "disk-write"}, *const rws[] = {"read", "write"};
    for (int k = 0; o->dir && k < 2; k++) {
        const struct soi_ops *ops = soi_find(disk_sois[k]);
        if (!ops)
            continue;
        out_progress(cmd, "sequential %s bandwidth of %s", rws[k], o->dir);
        struct soi_env env;
        soi_env_init(&env, ops, m, 1, &last, -1, &cli_stop);
        env.dir = o->dir;
        struct soi *s = NULL;
        rc = soi_open(ops, &env, &s, &o->bad_input, why, len);
        if (rc < 0)
            return rc;
        soi_close(s);
    }
    return 0;
}

static int cmd_calibrate(void *opts, int argc, char **argv, int first)
{
    struct machine_opts *o = opts;
    if (o->no_measure)
        return cli_fail(IB_EXIT_USAGE, "calibrate", "--no-measure goes with ibench topo");
    return cli_machine_cmd("calibrate", o, calibrate_measure);
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt calibrate_table[] = {MACHINE_OPTS_TABLE(CLI_OPT_HIDDEN, 0)};

const struct cli_cmd cli_cmd_calibrate = {
    .name = "calibrate",
    CLI_RUN(cmd_calibrate, struct machine_opts),
    .summary = "measure capacities (cache knees, L2/LLC/DRAM bandwidth) and cache them",
    .usage = "usage: ibench calibrate [--cpus LIST] [--dir DIR] [--json | --csv]\n\n",
    .about = "Measures what the SoIs scale against and caches it for this machine (keyed by a hardware\n"
             "fingerprint): the effective size of L1d, L2 and LLC (the median knee of repeated, checked\n"
             "pointer-chase latency sweeps, next to what hwloc claims) and the streaming bandwidth of L2\n"
             "and LLC (vector reads) and DRAM (STREAM triad), with the bandwidth SoIs' own stepping, on one\n"
             "CPU and on all of --cpus (default: every CPU). Takes about 10 s. With --dir, also the\n"
             "sequential read and write bandwidth of DIR's filesystem as disk-bw and disk-write measure it\n"
             "(1 MiB blocks, reads at QD 8, writes at QD 32, O_DIRECT io_uring, a 512 MiB file in a private\n"
             "directory, removed after), which their --cached-capacity uses.\n\n",
    .more = "\nCache file: $IBENCH_CACHE_DIR, else $XDG_CACHE_HOME/ibench, else ~/.cache/ibench.\n",
    CLI_OPTS(calibrate_table),
};
