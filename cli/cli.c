/* cli.c - `ibench` entry point and subcommand table (perf style: name -> function, with help for each). */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fsguard.h"
#include "ib_err.h"
#include "machine.h"
#include "parse.h"
#include "place.h"
#include "profile_fmt.h"
#include "target.h"
#include "topo.h"
#include "watchdog.h"

atomic_int cli_stop;
/* SIGHUP (the terminal closed) and SIGQUIT end a run as SIGTERM does: every child stopped, every file removed */
static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static struct sigaction old_sa[IB_ARRAY_SIZE(stop_sigs)];
static int installed;

static void on_signal(int sig)
{
    /* Ctrl-C again while stopping: the children may be what does not stop */
    if (atomic_exchange(&cli_stop, 1) && sig == SIGINT)
        child_kill_all();
}

void cli_signals_install(void)
{
    atomic_store(&cli_stop, 0);
    if (installed) /* installed twice: the first install's saved handlers stay the ones to restore */
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < IB_ARRAY_SIZE(stop_sigs); i++)
        sigaction(stop_sigs[i], &sa, &old_sa[i]);
    installed = 1;
}

void cli_signals_restore(void)
{
    if (!installed)
        return;
    for (size_t i = 0; i < IB_ARRAY_SIZE(stop_sigs); i++)
        sigaction(stop_sigs[i], &old_sa[i], NULL);
    installed = 0;
}

int cli_exit_for(int rc, int bad_input)
{
    if (rc < 0 && rc != -EINTR && bad_input)
        return IB_EXIT_USAGE; /* the lower layer said so; rc is the real error, for the message */
    switch (rc) {
    case 0: return IB_EXIT_OK;
    case -ENOTSUP: return IB_EXIT_SKIP;
    case -EINTR: return IB_EXIT_INTR;
    case -EINVAL:
    case -ERANGE:
    case -E2BIG:
    case -ENAMETOOLONG: return IB_EXIT_USAGE;
    default: return rc > 0 ? rc : IB_EXIT_FAIL;
    }
}

int cli_fail(int code, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    out_progress_done();
    char *msg = NULL;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    /* one line, whatever a file put in the names and reasons it quotes */
    char *safe = msg ? malloc(4 * strlen(msg) + 8) : NULL;
    fprintf(stderr, "ibench %s: %s\n", cmd, safe ? tty_text(msg, safe, 4 * strlen(msg) + 8) : msg ? "?" : "out of memory");
    free(safe);
    free(msg);
    return code;
}

void cli_calib_note(const char *cmd, const struct machine *m)
{
    if (m->calib.nocache)
        fprintf(stderr, "ibench %s: warning: %s: measuring without the calibration cache, saving nothing\n", cmd,
                m->calib.nocache_why);
}

int cli_cpus_here(const char *cmd, const char *opt, const char *arg, const struct machine *m, unsigned max, int *cpus,
                  unsigned *n)
{
    int *list = NULL;
    unsigned k = 0;
    if (parse_cpulist(arg, &list, &k) < 0 || k == 0 || k > max) {
        free(list);
        return cli_fail(IB_EXIT_USAGE, cmd, "--%s '%s' is not a CPU list", opt, arg);
    }
    for (unsigned i = 0; i < k; i++) {
        int ok = 0;
        for (unsigned j = 0; j < topo_npus(m->topo); j++)
            ok |= topo_pu_os(m->topo, j) == list[i];
        if (!ok) {
            int c = list[i];
            free(list);
            return cli_fail(IB_EXIT_USAGE, cmd, "--%s: this machine has no CPU %d", opt, c);
        }
        cpus[i] = list[i];
    }
    *n = k;
    free(list);
    return 0;
}

int cli_profile_load(const char *cmd, int argc, char **argv, int first, struct profile *p, const char **path)
{
    if (argc - first != 1)
        return cli_fail(IB_EXIT_USAGE, cmd, "give one profile file");
    *path = argv[first];
    char why[512];
    int rc = profile_read(*path, p, why, sizeof(why));
    if (rc < 0) /* all but -ENOMEM is the file named (profile_read): bad input, with the reader's real errno */
        return cli_fail(cli_exit_for(rc, rc != -ENOMEM), cmd, "%s", why);
    cli_profile_warn(cmd, p);
    return 0;
}

void cli_profile_warn(const char *cmd, const struct profile *p)
{
    if (p && p->warning)
        fprintf(stderr, "ibench %s: warning: %s\n", cmd, TTY_TEXT(p->warning));
}

/* The one table of commands (perf's cmd_struct): dispatch, `ibench help`, and the tests that walk every command's
 * options all read it. */
static const struct cli_cmd *const commands[] = {
    &cli_cmd_run,   &cli_cmd_list, &cli_cmd_topo, &cli_cmd_calibrate, &cli_cmd_probe, &cli_cmd_sink, &cli_cmd_validate,
    &cli_cmd_profile, &cli_cmd_corun, &cli_cmd_show, &cli_cmd_plot, &cli_cmd_place, &cli_cmd_k8s, &cli_cmd_extender,
};

const struct cli_cmd *const *cli_commands(unsigned *n)
{
    *n = IB_ARRAY_SIZE(commands);
    return commands;
}

static const struct cli_cmd top = {
    .name = "ibench",
    .usage = "usage: ibench <command> [options]\n\n",
    .about = "ibench quantifies interference between co-located programs: each SoI (source of interference)\n"
             "presses one shared resource at an intensity 0-100 % of its measured capacity.\n\ncommands:\n",
    .more = "  help       help for a command: ibench help run\n"
            "  version    print the version\n\n"
            "example: ibench run --soi llc-cap --ramp\n"
            "exit codes: 0 ok, 1 run-time failure, 2 bad input, 77 cannot run here, 130 interrupted\n",
    CLI_SUB(commands),
};

static void usage(FILE *f) { cli_help(f, &top); }

int ibench_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return IB_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
        usage(stdout);
        return IB_EXIT_OK;
    }
    if (!strcmp(name, "version") || !strcmp(name, "--version")) {
        printf("ibench %s\n", IBENCH_VERSION);
        return IB_EXIT_OK;
    }
    if (!strcmp(name, "help")) {
        if (argc < 3) {
            usage(stdout);
            return IB_EXIT_OK;
        }
        const struct cli_cmd *c = cli_sub_find(&top, argv[2]);
        if (!c)
            return cli_fail(IB_EXIT_USAGE, "help", "unknown command '%s'", argv[2]);
        char *av[] = {argv[2], (char *)"--help", NULL};
        return cli_call(c, 2, av);
    }
    render_progress_install(); /* the lower layers report progress through it; they never print */
    const struct cli_cmd *c = cli_sub_find(&top, name);
    if (c) {
        /* what a killed ibench left in the scratch dir goes; what this one leaves if killed, its watchdog removes
         * (without a watchdog, the next ibench's sweep does) */
        fs_remove_stale_dirs(fs_default_dir());
        char why[256];
        watchdog_start(why, sizeof(why));
        int rc = cli_call(c, argc - 1, argv + 1);
        watchdog_stop();
        return rc;
    }
    fprintf(stderr, "ibench: unknown command '%s' (ibench --help lists them)\n", name);
    return IB_EXIT_USAGE;
}

void cli_calib_recheck(const char *cmd, struct machine *m, int cpu)
{
    struct calib_check r;
    char why[256] = "", a[32], b[32];
    if (!m->calib.have_caches || !topo_is_this_machine(m->topo))
        return;
    int rc = calib_recheck(&m->calib, m->topo, cpu, &cli_stop, &r, why, sizeof(why));
    if (rc == -ENOENT)
        return;
    if (rc < 0 && !r.inside_ns)
        fprintf(stderr, "ibench %s: warning: the cached LLC size could not be checked: %s\n", cmd, why);
    else if (r.held)
        fprintf(stderr, "capacity: cached LLC %s holds (inside %.0f ns, outside %.0f ns; checked in %.2f s)\n",
                fmt_bytes((double)r.size, a, sizeof(a)), r.inside_ns, r.outside_ns, r.cost_s);
    else if (rc < 0)
        fprintf(stderr, "capacity: cached LLC %s failed its check (%s): measuring again failed: %s\n",
                fmt_bytes((double)r.size, a, sizeof(a)), r.why, why);
    else
        fprintf(stderr, "capacity: cached LLC %s failed its check (%s): measured again: %s%s%s\n",
                fmt_bytes((double)r.size, a, sizeof(a)), r.why, fmt_bytes((double)r.new_size, b, sizeof(b)),
                *m->calib.caches_note ? "; " : "", m->calib.caches_note);
}

int cli_check_out(const char *cmd, const char *opt, const char *path)
{
    char dir[PATH_MAX];
    if (strlen(path) >= sizeof(dir)) /* cut, it would name another directory */
        return cli_fail(IB_EXIT_USAGE, cmd, "%s is too long (%zu characters, at most %zu)", opt, strlen(path),
                        sizeof(dir) - 1);
    snprintf(dir, sizeof(dir), "%s", path);
    char *sl = strrchr(dir, '/');
    if (sl)
        *sl = 0;
    if (access(sl ? (dir[0] ? dir : "/") : ".", W_OK) != 0)
        return cli_fail(IB_EXIT_USAGE, cmd, "%s %s: cannot write in its directory (%s)", opt, path, strerror(errno));
    return 0;
}
