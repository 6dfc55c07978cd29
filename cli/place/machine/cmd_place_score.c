/* cmd_place_score.c - `ibench place score`: the NUMA locality score (Tang et al. HPCA'13, Eq. 1) of a live process or of given
 * per-node usage (placement/machine/pl_numa.h, docs/placement.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_numa.h"
#include "place.h"

#define CMD "place score"
#define MAX_NODES 1024
#define ONE_NODE "one NUMA node: every access is local"

struct score_in {
    struct place_opts po;
    const char *pid_arg, *window_arg, *cpu_arg, *mem_arg;
    int hops;
};

/* What the score was computed from and what came out. */
struct score_out {
    unsigned n;
    unsigned *nodes;    /* OS indexes */
    double *cpu, *mem;  /* raw, then shares */
    uint64_t *bytes;    /* live: memory per node; else NULL */
    double *dist;       /* n x n, NULL when there is none (one node) */
    char source[256];
    bool hops;
    double score, lo, hi;
    const char *why;    /* NULL unless the score has a reason to state */
    long pid;           /* -1 offline */
    double window_s;
    unsigned nsamples, nthreads;
    struct pl_machine m; /* loaded when a topology is used (live, --topology) */
};

static void out_free(struct score_out *s)
{
    free(s->nodes);
    free(s->cpu);
    free(s->mem);
    free(s->bytes);
    free(s->dist);
    pl_machine_free(&s->m);
}

/* "0.5,0.5" into a malloc'd array. */
static int parse_list(const char *s, const char *what, double **out, unsigned *n, char *why, size_t len)
{
    *out = NULL;
    *n = 0;
    size_t slen = strlen(s);
    char *buf = strdup(s);
    double *v = malloc((slen + 1) * sizeof(*v)); /* at most one entry per character */
    if (!buf || !v) {
        free(buf);
        free(v);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    int rc = 0;
    unsigned k = 0;
    char *p = buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        if (k == MAX_NODES) {
            rc = ib_why(why, len, -EINVAL, "%s: more than %d entries", what, MAX_NODES);
            break;
        }
        if (parse_double(p, &v[k]) < 0 || v[k] < 0) {
            rc = ib_why(why, len, -EINVAL, "%s: entry %u '%s' is not a number >= 0 (want a list such as 0.5,0.5)",
                        what, k, p);
            break;
        }
        k++;
        if (!comma)
            break;
        p = comma + 1;
    }
    free(buf);
    if (rc < 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return 0;
}

/* The matrix, its source and the nodes: from the topology (live or --topology), else from a --distances file, else
 * none (then the usage lists say how many nodes there are). */
static int load_distances(const struct score_in *in, unsigned nlist, struct score_out *s)
{
    char why[512];
    bool topology = in->pid_arg || in->po.topology;
    bool file = in->po.distances && strcmp(in->po.distances, "hops");
    s->hops = in->hops || (in->po.distances && !strcmp(in->po.distances, "hops"));
    if (topology) {
        int rc = place_open("score", &in->po, &s->m, NULL);
        if (rc)
            return rc;
        s->n = s->m.nnodes;
        s->nodes = malloc((s->n ? s->n : 1) * sizeof(*s->nodes));
        if (s->nodes)
            memcpy(s->nodes, s->m.node_os, s->n * sizeof(*s->nodes));
        s->dist = s->m.dist; /* s owns it now */
        s->m.dist = NULL;
        snprintf(s->source, sizeof(s->source), "%s", s->m.dist_source);
        if (!s->nodes)
            return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
        const char *none = !strncmp(s->source, "none: ", 6) ? s->source + 6 : s->source;
        if (!s->dist && s->n > 1)
            return cli_fail(IB_EXIT_USAGE, CMD, "%u NUMA nodes but no distances (%s): give --distances FILE", s->n,
                            none);
        return 0;
    }
    if (file) {
        int rc = pl_distances_load(in->po.distances, &s->dist, &s->n, why, sizeof(why));
        if (rc < 0)
            return cli_fail(cli_exit_for(rc, rc != -ENOMEM), CMD, "%s", why);
        snprintf(s->source, sizeof(s->source), "file %s", in->po.distances);
    } else {
        /* the lists alone: their length is the number of nodes */
        s->n = nlist;
        snprintf(s->source, sizeof(s->source), "none");
        if (s->n > 1)
            return cli_fail(IB_EXIT_USAGE, CMD, "no distances for %u nodes: give --distances FILE, or a --topology "
                            "that has them%s", s->n, s->hops ? " (--distances hops converts the topology's)" : "");
    }
    s->nodes = malloc(s->n * sizeof(*s->nodes));
    if (!s->nodes)
        return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
    for (unsigned i = 0; i < s->n; i++)
        s->nodes[i] = i;
    return 0;
}

/* The live inputs: memory from numa_maps, CPU use sampled over the window. */
static int measure(pid_t pid, uint64_t window_ns, struct score_out *s)
{
    char why[512];
    int rc;
    int *cpu_node = NULL;
    unsigned ncpus = 0;
    s->bytes = calloc(s->n, sizeof(*s->bytes));
    double *last = calloc(s->n, sizeof(*last));
    rc = s->bytes && last ? 0 : ib_why(why, sizeof(why), -ENOMEM, "out of memory");
    if (rc == 0)
        rc = pl_numa_cpu_nodes(&s->m, &cpu_node, &ncpus, why, sizeof(why));
    if (rc == 0)
        rc = pl_numa_maps_read(NULL, pid, s->nodes, s->n, s->bytes, why, sizeof(why));
    if (rc == 0) {
        uint64_t total = 0;
        for (unsigned i = 0; i < s->n; i++) {
            s->mem[i] = (double)s->bytes[i];
            total += s->bytes[i];
        }
        if (total == 0)
            rc = ib_why(why, sizeof(why), -ENODATA, "process %d has no resident memory (a kernel thread?)", (int)pid);
    }
    if (rc == 0) {
        struct pl_sample_opts so = {.window_ns = window_ns, .stop = &cli_stop};
        struct pl_cpu_use use = {.ns = s->cpu, .last = last};
        cli_signals_install();
        rc = pl_numa_cpu_sample(pid, &so, cpu_node, ncpus, s->n, &use, why, sizeof(why));
        cli_signals_restore();
        s->nsamples = use.nsamples;
        s->nthreads = use.nthreads;
    }
    if (rc == 0) {
        double busy = 0;
        for (unsigned i = 0; i < s->n; i++)
            busy += s->cpu[i];
        if (!(busy > 0)) {
            /* a process that did not run in the window: where its threads wait is where they will run */
            memcpy(s->cpu, last, s->n * sizeof(*last));
            s->why = "no CPU time in the window: each thread counted on the node of the CPU it last ran on";
        }
    }
    free(last);
    free(cpu_node);
    if (rc == -EINTR)
        return cli_fail(IB_EXIT_INTR, CMD, "interrupted");
    if (rc < 0)
        return cli_fail(cli_exit_for(rc, 0), CMD, "%s", why);
    return 0;
}

static json_t *doubles(const double *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

static json_t *score_doc(const struct score_out *s)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "command", json_string(CMD));
    json_object_set_new(doc, "pid", s->pid >= 0 ? json_integer(s->pid) : json_null());
    json_object_set_new(doc, "window_s", s->pid >= 0 ? json_real(s->window_s) : json_null());
    json_t *nodes = json_array(), *bytes = s->bytes ? json_array() : json_null();
    for (unsigned i = 0; i < s->n; i++) {
        json_array_append_new(nodes, json_integer(s->nodes[i]));
        if (s->bytes)
            json_array_append_new(bytes, json_integer((json_int_t)s->bytes[i]));
    }
    json_object_set_new(doc, "nodes", nodes);
    json_object_set_new(doc, "cpu", doubles(s->cpu, s->n));
    json_object_set_new(doc, "memory", doubles(s->mem, s->n));
    json_object_set_new(doc, "memory_bytes", bytes);
    json_t *matrix = json_null();
    if (s->dist) {
        matrix = json_array();
        for (unsigned i = 0; i < s->n; i++)
            json_array_append_new(matrix, doubles(s->dist + (size_t)i * s->n, s->n));
    }
    json_object_set_new(doc, "distances", json_pack("{s:s,s:b,s:o}", "source", s->source, "hops", s->hops,
                                                    "matrix", matrix));
    json_object_set_new(doc, "score", json_real(s->score));
    json_object_set_new(doc, "range", json_pack("{s:f,s:f}", "min", s->lo, "max", s->hi));
    json_object_set_new(doc, "why", s->why ? json_string(s->why) : json_null());
    return doc;
}

static void print_score(const struct score_out *s)
{
    if (s->pid >= 0)
        printf("process   %ld: memory from numa_maps, CPU use of %u thread(s) over %.3g s (%u samples)\n", s->pid,
               s->nthreads, s->window_s, s->nsamples);
    else
        printf("usage     given (shares of each list's sum)\n");
    printf("\n%6s %10s %13s", "node", "CPU share", "memory share");
    if (s->bytes)
        printf(" %12s", "memory");
    printf("\n%6s %10s %13s", "----", "---------", "------------");
    if (s->bytes)
        printf(" %12s", "------");
    printf("\n");
    for (unsigned i = 0; i < s->n; i++) {
        char b[32];
        printf("%6u %10.3f %13.3f", s->nodes[i], s->cpu[i], s->mem[i]);
        if (s->bytes)
            printf(" %12s", fmt_bytes((double)s->bytes[i], b, sizeof(b)));
        printf("\n");
    }
    printf("\nscore     %.3f", s->score);
    if (s->lo < s->hi)
        printf("  (%.3f all memory farthest .. 1 all local, on these distances)", s->lo);
    printf("\n");
    if (s->why)
        printf("why       %s\n", s->why);
    printf("distances %s%s\n", s->hops ? "hops (10 local, 10 (1 + k) at the k-th nearest remote distance) from " : "",
           s->source);
    if (s->dist) {
        printf("%8s", "node");
        for (unsigned j = 0; j < s->n; j++)
            printf(" %6u", s->nodes[j]);
        printf("\n");
        for (unsigned i = 0; i < s->n; i++) {
            printf("%8u", s->nodes[i]);
            for (unsigned j = 0; j < s->n; j++)
                printf(" %6.4g", s->dist[(size_t)i * s->n + j]);
            printf("\n");
        }
    }
}

static int check_input(const struct score_in *in, long *pid, uint64_t *window_ns)
{
    if (in->po.concerns)
        return cli_fail(IB_EXIT_USAGE, CMD, "--concerns does not apply to the score");
    if (in->pid_arg && (in->cpu_arg || in->mem_arg))
        return cli_fail(IB_EXIT_USAGE, CMD, "give --pid (live) or --cpu-usage and --memory (offline), not both");
    if (!in->pid_arg && !in->cpu_arg && !in->mem_arg)
        return cli_fail(IB_EXIT_USAGE, CMD, "give --pid P, or --cpu-usage LIST and --memory LIST");
    if (!in->pid_arg && (!in->cpu_arg || !in->mem_arg))
        return cli_fail(IB_EXIT_USAGE, CMD, "offline, give both --cpu-usage LIST and --memory LIST");
    if (in->window_arg && !in->pid_arg)
        return cli_fail(IB_EXIT_USAGE, CMD, "--window applies to --pid only");
    *pid = -1;
    *window_ns = IB_NS_PER_S;
    if (!in->pid_arg)
        return 0;
    if (in->po.topology && strcmp(in->po.topology, "live"))
        return cli_fail(IB_EXIT_USAGE, CMD, "--pid measures this machine: --topology must be live");
    unsigned long v;
    if (parse_uint(in->pid_arg, 1, 0x7fffffff, &v) < 0)
        return cli_fail(IB_EXIT_USAGE, CMD, "--pid '%s' is not a process id", in->pid_arg);
    char path[64];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%lu", v);
    if (stat(path, &st) != 0)
        return cli_fail(IB_EXIT_USAGE, CMD, "no process %lu", v);
    *pid = (long)v;
    if (in->window_arg &&
        (parse_duration_ns(in->window_arg, 0, window_ns) < 0 || *window_ns < 10 * IB_NS_PER_MS ||
         *window_ns > 3600 * IB_NS_PER_S))
        return cli_fail(IB_EXIT_USAGE, CMD, "--window '%s': want a duration from 10ms to 1h (e.g. 500ms, 2s)",
                        in->window_arg);
    return 0;
}

static int run(const struct score_in *in, struct score_out *s)
{
    char why[512];
    uint64_t window_ns;
    int rc = check_input(in, &s->pid, &window_ns);
    if (rc)
        return rc;
    double *cpu = NULL, *mem = NULL;
    unsigned ncpu = 0, nmem = 0;
    if (in->cpu_arg) {
        if (parse_list(in->cpu_arg, "--cpu-usage", &cpu, &ncpu, why, sizeof(why)) < 0 ||
            parse_list(in->mem_arg, "--memory", &mem, &nmem, why, sizeof(why)) < 0) {
            free(cpu);
            return cli_fail(IB_EXIT_USAGE, CMD, "%s", why);
        }
        if (ncpu != nmem) {
            free(cpu);
            free(mem);
            return cli_fail(IB_EXIT_USAGE, CMD, "--cpu-usage has %u entries and --memory %u: give one per node",
                            ncpu, nmem);
        }
    }
    s->cpu = cpu;
    s->mem = mem;
    rc = load_distances(in, ncpu, s);
    if (rc)
        return rc;
    if (cpu && ncpu != s->n)
        return cli_fail(IB_EXIT_USAGE, CMD, "--cpu-usage and --memory have %u entries but the %s has %u NUMA "
                        "node(s)", ncpu, in->po.topology ? "topology" : "distances file", s->n);
    if (s->pid >= 0) {
        s->window_s = (double)window_ns / 1e9;
        s->cpu = calloc(s->n, sizeof(*s->cpu));
        s->mem = calloc(s->n, sizeof(*s->mem));
        if (!s->cpu || !s->mem)
            return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
        rc = measure((pid_t)s->pid, window_ns, s);
        if (rc)
            return rc;
    }
    if (s->dist && s->hops && pl_numa_hops(s->dist, s->n, s->dist) < 0)
        return cli_fail(IB_EXIT_FAIL, CMD, "out of memory");
    bool live = s->pid >= 0;
    rc = pl_numa_normalise(s->cpu, s->n, s->cpu, live ? "CPU use" : "--cpu-usage", why, sizeof(why));
    if (rc == 0)
        rc = pl_numa_normalise(s->mem, s->n, s->mem, live ? "memory" : "--memory", why, sizeof(why));
    if (rc < 0) /* live, both sums were checked above: this is only a CPU share that came out empty */
        return cli_fail(live ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    if (s->n == 1) {
        s->score = s->lo = s->hi = 1;
        s->why = ONE_NODE;
        return 0;
    }
    rc = pl_numa_score(s->cpu, s->mem, s->dist, s->n, &s->score, why, sizeof(why));
    if (rc < 0)
        return cli_fail(cli_exit_for(rc, rc != -ENOMEM), CMD, "%s", why);
    pl_numa_range(s->dist, s->n, &s->lo, &s->hi);
    return 0;
}

/* --pid and --window are read in check_input (its refusals name them) */
static int cmd_place_score(void *opts, int argc, char **argv, int first)
{
    const struct score_in *in = opts;
    struct score_out s = {.pid = -1};
    int rc = run(in, &s);
    if (rc == 0) {
        if (in->po.json) {
            json_t *doc = score_doc(&s);
            rc = out_json(stdout, doc) < 0 ? IB_EXIT_FAIL : IB_EXIT_OK;
            json_decref(doc);
        } else {
            print_score(&s);
        }
    }
    out_free(&s);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define SI struct score_in
static const struct cli_opt score_table[] = {
    {CLI_STR("pid", "P", SI, pid_arg,
             "a live process: memory per node from /proc/P/numa_maps (bytes, huge pages\n"
             "included), CPU use of its threads sampled every 10 ms over the window")},
    {CLI_STR("window", "D", SI, window_arg, "the sampling window (default 1s; e.g. 500ms, 2s)")},
    {CLI_STR("cpu-usage", "LIST", SI, cpu_arg, "per-node CPU use, comma-separated, any scale (e.g. 0.5,0.5)")},
    {CLI_STR("memory", "LIST", SI, mem_arg, "per-node memory use, the same length")},
    PLACE_OPT_DISTANCES(SI, "a JSON distance matrix instead of the topology's (raw SLIT); offline without\n"
                            "--topology it alone says how many nodes there are; hops: the topology's matrix\n"
                            "as hops: local 10, the k-th nearest remote distance 10 (1 + k)"),
    {CLI_FLAG("hops", SI, hops, "the same hop rule on whichever matrix is used (e.g. --distances FILE --hops)")},
    PLACE_OPT_TOPOLOGY(SI, "whose distances and nodes (offline only; --pid needs live, the default)"),
    {CLI_STR("concerns", "LIST", SI, po.concerns, NULL), .flags = CLI_OPT_HIDDEN}, /* refused: no use here */
    {CLI_FLAG("json", SI, po.json, "JSON instead of a table")},
};
#undef SI

const struct cli_cmd cli_cmd_place_score = {
    .name = "place score",
    CLI_RUN(cmd_place_score, struct score_in),
    .summary = "the NUMA locality score (CPU-memory locality) of a process or of given usage",
    .usage = "usage: ibench place score --pid P [--window D] [--distances FILE|hops] [--hops] [--json]\n"
             "       ibench place score --cpu-usage LIST --memory LIST [--distances FILE|hops] [--hops]\n"
             "                          [--topology SPEC] [--json]\n\n",
    .about = "The NUMA locality score (Eq. 1): sum over nodes i, j of C[i] M[j] D(i,i)/D(i,j), C and M the per-node\n"
             "CPU and memory use normalised to sum 1, D the distances.  1 when every access is local.\n\n",
    CLI_OPTS(score_table),
};
