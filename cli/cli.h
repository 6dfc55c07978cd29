/* cli.h - the ibench command layer: the only code that prints and maps results to exit codes. */
#ifndef IB_CLI_H
#define IB_CLI_H
#include <stdint.h>
#include <stdio.h>

#include "ib_atomic.h"
#include "opts.h"
#include "output.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RUN_MAX_PARAMS 16

struct run_opts {
    const char *soi;
    int have_intensity;
    double intensity;
    int ramp;
    int have_from, have_to, have_steps, have_step;
    double from, to;
    unsigned steps;
    uint64_t step_ns;
    double *levels; /* --levels LIST (malloc'd) */
    unsigned nlevels;
    int have_duration;
    uint64_t duration_ns;
    int *cpus;      /* --cpus LIST (malloc'd) */
    unsigned ncpus;
    int have_near;
    int near;
    int have_threads;
    unsigned threads;
    enum out_fmt fmt;
    int have_fmt;
    int json, csv, table; /* --json, --csv, --table as given (fmt: the one of them) */
    const char *pname[RUN_MAX_PARAMS], *pvalue[RUN_MAX_PARAMS];
    char pbuf[RUN_MAX_PARAMS][128];
    unsigned nparams;
    const char *topology; /* hidden: a synthetic/XML topology instead of this machine */
    int cached_capacity;  /* rate SoIs: trust the cached peak */
    uint64_t quantum_ns;  /* duty SoIs: --quantum, one on/off cycle (0: chosen from the measured wake-up cost) */
    const char *plot;     /* --plot FILE (.png/.svg) */
    const char *dir;      /* disk SoIs: --dir DIR */
    const char *device;   /* disk-bw: --device PATH (with --force) */
    int force;
    const char *target;   /* net-bw: --target ADDR:PORT */
    int help;
};

/* Parses `ibench run` arguments (argv[0] = "run"). 0, or -EINVAL with a one-line reason. Checks everything that
 * needs no machine: numbers, ranges, contradictions. */
int cli_parse_run(int argc, char **argv, struct run_opts *o, char *why, size_t len);
void cli_free_run(struct run_opts *o);

/* The exit code for a lower layer's 0 or -errno, the one convention every command uses: -EINTR interrupted (130); a
 * failure the lower layer marked as the user's input (bad_input: soi_open's mark, passed on by the harness and
 * validation) bad input (2) whatever its errno; -EINVAL, -ERANGE, -E2BIG and -ENAMETOOLONG bad input (2); -ENOTSUP
 * cannot run here (77); any other error a run-time failure (1). */
int cli_exit_for(int rc, int bad_input);

/* The commands, each with its option table (opts.h), in the top table of cli.c. */
extern const struct cli_cmd cli_cmd_run, cli_cmd_list, cli_cmd_topo, cli_cmd_calibrate, cli_cmd_probe, cli_cmd_sink,
    cli_cmd_validate, cli_cmd_profile, cli_cmd_corun, cli_cmd_show, cli_cmd_plot, cli_cmd_k8s, cli_cmd_place, cli_cmd_extender;

/* The machine commands, topo (cmd_topo.c) and calibrate (cmd_calibrate.c): one option struct and one table, each
 * command hiding the options that are the other's (given, they are refused as going with it). */
struct machine;
struct machine_opts {
    int json, csv, no_measure;
    const char *topology, *dir;
    int *cpus;
    unsigned ncpus;
    int bad_input; /* set by a measure that found the user's input at fault (soi_open's mark) */
};
#define MACHINE_OPTS_TABLE(topo_only, calibrate_only)                                                              \
    {CLI_FLAG("json", struct machine_opts, json, "JSON instead of the table")},                                    \
        {CLI_FLAG("csv", struct machine_opts, csv, "the caches table alone, as CSV")},                             \
        {CLI_FLAG("no-measure", struct machine_opts, no_measure, "measure nothing: show what is cached"),          \
         .flags = (topo_only)},                                                                                    \
        {CLI_CPUS("cpus", "LIST", struct machine_opts, cpus, ncpus,                                                \
                  "the CPUs the bandwidths are measured on together (default: every CPU)"),                        \
         .flags = (calibrate_only)},                                                                               \
        {CLI_STR("dir", "DIR", struct machine_opts, dir,                                                           \
                 "also the sequential read and write bandwidth of DIR's filesystem, as disk-bw measures it"),        \
         .flags = (calibrate_only)},                                                                               \
        {CLI_STR("topology", "SPEC", struct machine_opts, topology, "a synthetic or XML topology instead of this " \
                                                                    "machine"),                                    \
         .flags = CLI_OPT_HIDDEN}
/* What a machine command measures (0, or -errno with why); o->bad_input marks the user's fault. */
typedef int (*cli_machine_measure)(const char *cmd, struct machine *m, struct machine_opts *o, char *why, size_t len);
/* Opens the machine (o->topology), checks o's CPUs, runs measure under the stop signals, saves what the cache
 * gained and shows the machine (a table, --json or --csv).  The exit code. */
int cli_machine_cmd(const char *cmd, struct machine_opts *o, cli_machine_measure measure);
/* A calibration's progress line (calib.h's callback; arg: the command's name). */
void cli_calib_progress(void *arg, const char *what, double frac);

/* The stop flag raised by SIGINT, SIGTERM, SIGHUP and SIGQUIT (reset with cli_signals_install); a second SIGINT
 * (Ctrl-C twice) also SIGKILLs the children (child_kill_all). cli_signals_restore restores only what
 * cli_signals_install installed. */
extern atomic_int cli_stop;
void cli_signals_install(void);
/* Puts back the handlers install replaced; a no-op unless installed (every exit path may call it). */
void cli_signals_restore(void);

/* Entry point (cli/main.c). */
int ibench_main(int argc, char **argv);

/* Before minutes of measuring: can a file be written at path (--out)? 0, or IB_EXIT_USAGE after one line naming the
 * option: too long a path, or a directory that does not take it. */
int cli_check_out(const char *cmd, const char *opt, const char *path);
/* "ibench <cmd>: <msg>" on stderr, one line. Returns code. */
int cli_fail(int code, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct machine;
/* Before a run: check the cached LLC size on cpu (calib_recheck, tens of ms) and print one line on stderr saying it
 * held, or that it failed and what was measured instead.  Nothing when no measured size is cached or the topology
 * is not this machine's.  A failure to check is a warning, never the end of the command. */
void cli_calib_recheck(const char *cmd, struct machine *m, int cpu);
/* After machine_open: when the calibration cache cannot be used (an unsafe directory), say so once on stderr; the
 * command goes on, measuring what it needs without the cache. */
struct machine;
void cli_calib_note(const char *cmd, const struct machine *m);
struct profile;
/* --OPT ARG, a CPU list of at most max CPUs, every one of them this machine's, into cpus (in the list's order) and *n:
 * 0, or the usage exit code after one line "ibench CMD: --OPT ..." on stderr. */
int cli_cpus_here(const char *cmd, const char *opt, const char *arg, const struct machine *m, unsigned max, int *cpus,
                  unsigned *n);
/* The operands of show and plot: exactly one, a profile, read (profile_read) into *p, its path in *path.  0, or the
 * exit code after one line on stderr (a bad file: 2, with the reader's line). */
int cli_profile_load(const char *cmd, int argc, char **argv, int first, struct profile *p, const char **path);
/* After profile_read: the reader's warning (an SoI of a newer version it does not know), once on stderr. */
struct profile;
void cli_profile_warn(const char *cmd, const struct profile *p);

#ifdef __cplusplus
}
#endif
#endif
