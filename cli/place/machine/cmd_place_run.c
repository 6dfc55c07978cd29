/* cmd_place_run.c - `ibench place run ... -- CMD ARGS...`: a command started on a placement (its CPUs and its memory
 * policy set before its first instruction, as numactl does), the placement chosen as place apply, place classes or
 * place map choose it.  Its exit status is the command's (docs/placement.md, "Launch on a placement"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_bind.h"
#include "pl_map.h"
#include "pl_proc.h"
#include "place.h"

#define CMD "place run"

struct run_args {
    struct place_opts po;
    const char *cpus, *class_id, *threads, *limit, *map, *corunner, *mem;
    int all, no_cpuset, dry_run, verbose;
    char **cmd; /* argv after "--", NULL-terminated */
};

/* --class, --threads and --limit are read where they are used, as place apply reads them (place_class_cpus) */
/* The command after "--", and the rules between run's options: 0, or the exit code after one line. */
static int check(int argc, char **argv, int first, struct run_args *a)
{
    if (first < argc && strcmp(argv[first - 1], "--"))
        return cli_fail(IB_EXIT_USAGE, CMD, "'%s': the command goes after -- (ibench place run --cpus 0 -- CMD)",
                        argv[first]);
    a->cmd = first < argc ? argv + first : NULL;
    if (!a->cmd && !a->dry_run)
        return cli_fail(IB_EXIT_USAGE, CMD, "no command: ibench place run ... -- CMD [ARGS...]");
    if (!!a->cpus + !!a->class_id + !!a->map != 1)
        return cli_fail(IB_EXIT_USAGE, CMD, "give one of --cpus LIST, --class ID --threads N, --map T --corunner C");
    if (a->class_id && !a->threads)
        return cli_fail(IB_EXIT_USAGE, CMD, "--class ID needs --threads N: ids number the rows of "
                                            "`ibench place classes --threads N`");
    if (!a->class_id && (a->threads || a->all || a->limit))
        return cli_fail(IB_EXIT_USAGE, CMD, "--%s goes with --class", a->all ? "all" : a->limit ? "limit" : "threads");
    if (a->limit && !a->all)
        return cli_fail(IB_EXIT_USAGE, CMD, "--limit goes with --all");
    if (!!a->map != !!a->corunner)
        return cli_fail(IB_EXIT_USAGE, CMD, "--map T and --corunner C go together (the co-runner shapes T's CPUs)");
    if (a->po.topology && strcmp(a->po.topology, "live") && !a->dry_run)
        return cli_fail(IB_EXIT_USAGE, CMD, "--topology %s: a command runs on this machine; other topologies go "
                                            "with --dry-run", a->po.topology);
    if (a->po.json && !a->dry_run)
        return cli_fail(IB_EXIT_USAGE, CMD, "--json goes with --dry-run (stdout is the command's when it runs)");
    if (place_refuse_distances(CMD, &a->po))
        return IB_EXIT_USAGE;
    return 0;
}

/* ---- --map: place map's decision, the target's CPUs ---------------------------------------------------------- */

static int map_cpus(const struct run_args *a, const struct pl_hier *h, int **cpus, unsigned *ncpus, char *line,
                    size_t llen)
{
    char why[512] = "";
    struct pl_map_chars t, co;
    struct pl_map_opts mo = {PL_MAP_SHARING_HIGH, PL_MAP_FOOTPRINT_HIGH};
    struct pl_map_decision d;
    struct pl_map_result r = {0};
    int llc, bus, e;
    if ((e = place_map_load(a->map, &t, NULL, why, sizeof why)) < 0 ||
        (e = place_map_load(a->corunner, &co, NULL, why, sizeof why)) < 0 ||
        (e = pl_map_decide(&t, &co, &mo, &d, why, sizeof why)) < 0 ||
        (e = pl_map_levels(h, &llc, &bus, why, sizeof why)) < 0)
        return cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    /* place map's rule for a file without a thread count: half the machine */
    unsigned half = h->npus / 2 ? h->npus / 2 : 1;
    if ((e = pl_map_place(h, llc, bus, t.threads ? t.threads : half, co.threads ? co.threads : half, &d, &r, why,
                          sizeof why)) < 0) {
        pl_map_result_free(&r);
        return cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    }
    *cpus = malloc((r.np ? r.np : 1) * sizeof **cpus);
    if (!*cpus) {
        pl_map_result_free(&r);
        return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
    }
    for (unsigned i = 0; i < r.np; i++)
        (*cpus)[i] = h->pu_os[r.p_pus[i]];
    *ncpus = r.np;
    snprintf(line, llen, "Algorithm 1 line %d: LLC %s, memory path %s%s%s", d.line,
             r.llc == PL_SHARED ? "shared" : "spread", r.bus == PL_SHARED ? "shared" : "spread",
             r.adjusted ? "; adjusted: " : "", r.adjusted ? r.adjust_why : "");
    pl_map_result_free(&r);
    return 0;
}

/* ---- the placement --------------------------------------------------------------------------------------------- */

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* The CPUs of the placement (OS indexes, ascending, distinct) and, for --map, how they were chosen. */
static int choose_cpus(const struct run_args *a, const struct pl_machine *m, int **cpus, unsigned *n, char *how,
                       size_t hlen)
{
    char why[512];
    struct pl_hier h;
    int rc;
    how[0] = 0;
    if (a->cpus) {
        if (pl_cpulist_parse(a->cpus, cpus, n, why, sizeof why) < 0)
            return cli_fail(IB_EXIT_USAGE, CMD, "--cpus: %s", why);
        /* every level, unchecked: --cpus needs only the PUs' OS indexes */
        rc = pl_hier_levels(m->topo, &h, why, sizeof why);
        if (rc < 0)
            rc = cli_fail(cli_exit_for(rc, rc != -ENOMEM), CMD, "%s", why);
        else if (pl_cpus_on_machine(&h, *cpus, *n, why, sizeof why) < 0)
            rc = cli_fail(IB_EXIT_USAGE, CMD, "%s", why);
        pl_hier_free(&h);
    } else {
        if ((rc = pl_hier_from_topo(m->topo, a->po.concerns, &h, why, sizeof why)) < 0)
            return cli_fail(cli_exit_for(rc, rc != -ENOMEM), CMD, "%s", why);
        if (a->class_id) {
            unsigned long nt;
            if (parse_uint(a->threads, 1, UINT_MAX, &nt) < 0)
                rc = cli_fail(IB_EXIT_USAGE, CMD, "bad --threads '%s': want a thread count of at least 1", a->threads);
            else
                rc = place_class_cpus(CMD, &h, a->class_id, nt, a->all, a->limit, cpus, n);
        } else {
            rc = map_cpus(a, &h, cpus, n, how, hlen);
        }
        pl_hier_free(&h);
    }
    if (rc) {
        free(*cpus);
        *cpus = NULL;
        return rc;
    }
    qsort(*cpus, *n, sizeof **cpus, cmp_int); /* the command gets the set: the order no longer matters */
    return 0;
}

/* ---- running the command ------------------------------------------------------------------------------------- */

/* What the child tells the parent when it fails before exec (nothing: exec succeeded, the pipe closed on it). */
struct child_err {
    int stage; /* 0 affinity, 1 memory policy, 2 exec */
    int err;   /* -errno */
    char why[512];
};

static volatile sig_atomic_t fwd_pid; /* the child, in the parent only (0 in the child: nothing forwarded) */
static const int fwd_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* A signal a process sent ibench goes on to the command; one the kernel sent for a terminal (Ctrl-C, Ctrl-\, a
 * hang-up: si_code SI_KERNEL) has reached the command already, which is in ibench's process group. */
static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (fwd_pid > 0 && (!si || si->si_code != SI_KERNEL))
        kill((pid_t)fwd_pid, sig);
}

static void child_fail(int fd, int stage, int err, const char *why)
{
    struct child_err ce = {.stage = stage, .err = err};
    snprintf(ce.why, sizeof ce.why, "%s", why);
    ssize_t w = write(fd, &ce, sizeof ce);
    (void)w;
    _exit(127);
}

static void report(const struct run_args *a, const struct pl_machine *m, const int *cpus, unsigned n,
                   const struct place_mem *pm, const char *how)
{
    char cl[4096];
    pl_cpulist_format(cpus, n, cl, sizeof cl);
    if (a->po.json) {
        json_t *doc = json_object(), *cv = json_array(), *argv = json_array();
        for (unsigned i = 0; i < n; i++)
            json_array_append_new(cv, json_integer(cpus[i]));
        for (char **p = a->cmd; p && *p; p++)
            json_array_append_new(argv, json_string(*p));
        json_object_set_new(doc, "command", json_string(CMD));
        json_object_set_new(doc, "topology", json_string(m->spec));
        json_object_set_new(doc, "source", json_string(a->cpus ? "cpus" : a->class_id ? "class" : "map"));
        json_object_set_new(doc, "how", how[0] ? json_string(how) : json_null());
        json_object_set_new(doc, "cpus", cv);
        json_object_set_new(doc, "cpus_list", json_string(cl));
        json_object_set_new(doc, "mem", json_string(pm->arg));
        json_object_set_new(doc, "policy", json_string(pm->pol.text));
        json_t *nodes = json_array(), *cn = json_array();
        for (unsigned i = 0; i < pm->pol.nnodes; i++)
            json_array_append_new(nodes, json_integer(pm->pol.nodes[i]));
        for (unsigned i = 0; i < pm->pol.ncpu_nodes; i++)
            json_array_append_new(cn, json_integer(pm->pol.cpu_nodes[i]));
        json_object_set_new(doc, "nodes", nodes);
        json_object_set_new(doc, "cpu_nodes", cn);
        json_object_set_new(doc, "argv", argv);
        json_object_set_new(doc, "ran", json_false());
        out_json(stdout, doc);
        json_decref(doc);
        return;
    }
    printf("placement  CPUs %s (%u)%s%s\nmemory     --mem %s: %s\n", cl, n, how[0] ? "; " : "", how, pm->arg,
           pm->pol.text);
    if (a->cmd) {
        printf("command   ");
        for (char **p = a->cmd; *p; p++)
            printf(" %s", *p);
        printf(" (not run: --dry-run)\n");
    }
}

static int run(const struct run_args *a, const struct pl_machine *m, const int *cpus, unsigned n,
               struct place_mem *pm)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned i = 0; i < n; i++) {
        if (cpus[i] >= CPU_SETSIZE)
            return cli_fail(IB_EXIT_USAGE, CMD, "CPU %d is beyond the %d a CPU set holds", cpus[i], CPU_SETSIZE);
        CPU_SET(cpus[i], &set);
    }
    int go[2], errp[2];
    if (pipe2(go, O_CLOEXEC) < 0)
        return cli_fail(IB_EXIT_FAIL, CMD, "pipe: %s", strerror(errno));
    if (pipe2(errp, O_CLOEXEC) < 0) {
        close(go[0]), close(go[1]);
        return cli_fail(IB_EXIT_FAIL, CMD, "pipe: %s", strerror(errno));
    }
    struct sigaction sa, old[IB_ARRAY_SIZE(fwd_sigs)];
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    fwd_pid = 0;
    for (size_t i = 0; i < IB_ARRAY_SIZE(fwd_sigs); i++)
        sigaction(fwd_sigs[i], &sa, &old[i]);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        for (size_t i = 0; i < IB_ARRAY_SIZE(fwd_sigs); i++)
            sigaction(fwd_sigs[i], &old[i], NULL);
        close(go[0]), close(go[1]), close(errp[0]), close(errp[1]);
        return cli_fail(IB_EXIT_FAIL, CMD, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        /* the child: wait for the parent's cpuset, then place itself and become CMD; exec resets the handlers */
        close(go[1]);
        close(errp[0]);
        char c, why[512];
        while (read(go[0], &c, 1) < 0 && errno == EINTR)
            ;
        if (sched_setaffinity(0, sizeof set, &set) < 0) {
            int e = errno;
            snprintf(why, sizeof why, "sched_setaffinity: %s (CPUs outside this process's cpuset?)", strerror(e));
            child_fail(errp[1], 0, -e, why);
        }
        int rc = pl_mpol_set(&pm->pol, why, sizeof why);
        /* a kernel without NUMA calls has one node, where every policy is what it does anyway */
        if (rc == -ENOSYS && m->nnodes <= 1)
            rc = 0;
        if (rc < 0)
            child_fail(errp[1], 1, rc, why);
        execvp(a->cmd[0], a->cmd);
        int e = errno;
        snprintf(why, sizeof why, "cannot run '%s': %s", a->cmd[0], strerror(e));
        child_fail(errp[1], 2, -e, why);
    }
    fwd_pid = pid;
    close(go[0]);
    close(errp[1]);
    place_mem_cpuset(pm, m, pid, cpus, n, !a->no_cpuset);
    if (a->verbose) {
        char cl[4096];
        pl_cpulist_format(cpus, n, cl, sizeof cl);
        fprintf(stderr, "ibench place run: note: %s on CPUs %s, memory %s, cpuset %s%s\n", a->cmd[0], cl,
                pm->pol.text, pm->cpuset_made ? pm->cpuset_path : "skipped: ",
                pm->cpuset_made ? "" : pm->cpuset_why);
    }
    char c = 1;
    ssize_t w = write(go[1], &c, 1);
    (void)w;
    close(go[1]);
    struct child_err ce;
    ssize_t got;
    while ((got = read(errp[0], &ce, sizeof ce)) < 0 && errno == EINTR)
        ;
    close(errp[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    fwd_pid = 0;
    for (size_t i = 0; i < IB_ARRAY_SIZE(fwd_sigs); i++)
        sigaction(fwd_sigs[i], &old[i], NULL);
    char why[512];
    if (pm->cpuset_made && pl_cpuset_remove(pm->cpuset_path, why, sizeof why) < 0)
        fprintf(stderr, "ibench %s: warning: cpuset left behind (processes of the command remain?): %s\n", CMD, why);
    if (got == (ssize_t)sizeof ce) {
        ce.why[sizeof ce.why - 1] = 0;
        int code = ce.stage == 2 ? (ce.err == -ENOENT ? 127 : 126)
                   : ce.err == -ENOSYS ? IB_EXIT_SKIP
                   : ce.err == -EINVAL ? IB_EXIT_USAGE
                                       : IB_EXIT_FAIL;
        return cli_fail(code, CMD, "%s", ce.why);
    }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return IB_EXIT_FAIL;
}

static int cmd_place_run(void *opts, int argc, char **argv, int first)
{
    struct run_args *a = opts;
    int rc = check(argc, argv, first, a);
    if (rc)
        return rc;
    struct pl_machine m;
    if ((rc = place_open("run", &a->po, &m, NULL)) != 0)
        return rc;
    int *cpus = NULL;
    unsigned n = 0;
    char how[512];
    struct place_mem pm = {0};
    rc = choose_cpus(a, &m, &cpus, &n, how, sizeof how);
    if (!rc)
        rc = place_mem_plan(CMD, a->mem, &m, cpus, n, &pm);
    if (!rc) {
        if (a->dry_run) {
            report(a, &m, cpus, n, &pm, how);
            rc = IB_EXIT_OK;
        } else {
            rc = run(a, &m, cpus, n, &pm);
        }
        place_mem_free(&pm);
    }
    free(cpus);
    pl_machine_free(&m);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define RA struct run_args
static const struct cli_opt run_table[] = {
    {CLI_STR("cpus", "LIST", RA, cpus, "CPUs by OS index, e.g. 0-3,8 (as taskset -c)")},
    {CLI_STR("class", "ID", RA, class_id,
             "the CPUs of row ID of `ibench place classes --threads N` (with the same\n"
             "--all, --limit and --concerns); `ibench place atom` answers with such a row")},
    {CLI_STR("threads", "N", RA, threads, "the thread count of that listing")},
    {CLI_FLAG("all", RA, all, "as ibench place apply")},
    {CLI_STR("limit", "K", RA, limit, "as ibench place apply")},
    {CLI_STR("map", "T[:THREADS]", RA, map, "the CPUs `ibench place map --target T --corunner C` gives the target T")},
    {CLI_STR("corunner", "C[:THREADS]", RA, corunner, "the co-runner of --map (profiles or characteristics files)")},
    PLACE_MEM_OPTS(RA),
    {CLI_FLAG("verbose", RA, verbose, "one line on stderr before CMD starts: its CPUs, memory policy and cpuset")},
    {CLI_FLAG("dry-run", RA, dry_run,
              "print the placement (a table, or --json) and run nothing; with it\n"
              "--topology may name another machine (synthetic:..., an XML file)")},
    PLACE_OPT_CONCERNS(RA, "the levels of --class's listing (as place classes)"),
    PLACE_OPT_TOPOLOGY(RA, "with --dry-run: the machine, as place topo takes it (default live)"),
    PLACE_OPT_NO_DISTANCES(RA),
    {CLI_FLAG("json", RA, po.json, "with --dry-run: the placement as JSON (docs/schema/placement-v1.schema.json)")},
};
#undef RA

const struct cli_cmd cli_cmd_place_run = {
    .name = "place run",
    CLI_RUN(cmd_place_run, struct run_args),
    .summary = "run a command on a placement from its first instruction, memory bound too (numactl)",
    .usage = "usage: ibench place run (--cpus LIST | --class ID --threads N [--all [--limit K]] [--concerns LIST]\n"
             "                         | --map T[:THREADS] --corunner C[:THREADS])\n"
             "                        [--mem MODE] [--no-cpuset] [--verbose] -- CMD [ARGS...]\n"
             "       ibench place run ... --dry-run [--topology SPEC] [--json] [-- CMD ARGS...]\n\n",
    .about = "Runs CMD on a placement from its first instruction, as numactl does: CMD and every thread and\n"
             "process it starts may run on the placement's CPUs only, and its memory policy (--mem) is set\n"
             "before it starts, so every page it touches follows it.\n\n",
    .more = "\nExit status: CMD's own when it ran (128 + N when signal N ended it, as a shell reports); when\n"
            "CMD could not be started, 127 (not found) or 126 (not executable), as env and a shell do; when\n"
            "ibench itself failed before starting CMD, its codes: 2 bad input, 1 a refusal by the kernel, 77\n"
            "no NUMA support in a kernel on a machine of several nodes.  ibench's own failures, and only they, print "
            "one line starting\n"
            "\"ibench place run:\" on stderr, and CMD did not run.  Ctrl-C and SIGTERM, SIGHUP and SIGQUIT sent to\n"
            "ibench reach CMD once (a terminal's Ctrl-C reaches both directly; ibench passes on only signals sent\n"
            "by a process); ibench waits for CMD to end.\n",
    CLI_OPTS(run_table),
    .args = CLI_ARGS_CMD,
};
