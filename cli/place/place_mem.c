/* place_mem.c - memory follows the placement of a live process (place apply, place cluster --apply): the --mem
 * policy resolved on the machine, the pages moved onto it, the locality score before and after, and a cgroup v2
 * cpuset where one can be made (place.h; the decisions are placement/machine/pl_bind.h's). */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_bind.h"
#include "pl_numa.h"
#include "pl_proc.h"
#include "place.h"

const char place_help_mem[] = "where the process's memory goes (default local):\n"
                              "  local       bound to the NUMA nodes of the chosen CPUs\n"
                              "  interleave  interleaved over those nodes (interleave:NODES: over NODES)\n"
                              "  NODES       bound to these nodes, e.g. 0 or 0,2-3 (as numactl --membind)\n"
                              "  none        memory left alone (threads only)";
const char place_help_no_cpuset[] =
    "do not make a cgroup v2 cpuset (made by default where the machine has the\n"
    "controller and ibench may use it; otherwise the output says why it was skipped)";

int place_mem_plan(const char *cmd, const char *arg, const struct pl_machine *m, const int *cpus, unsigned n,
                   struct place_mem *pm)
{
    char why[512];
    struct pl_mem_spec s;
    pm->arg = arg ? arg : "local";
    int rc = pl_mem_parse(arg, &s, why, sizeof why);
    if (rc == 0) {
        rc = pl_mem_resolve(m, &s, cpus, n, &pm->pol, why, sizeof why);
        pl_mem_spec_free(&s);
    }
    if (rc < 0)
        return cli_fail(cli_exit_for(rc, rc != -ENOMEM), cmd, "%s", why);
    pm->nnodes = m->nnodes;
    pm->before = calloc(m->nnodes ? m->nnodes : 1, sizeof *pm->before);
    pm->after = calloc(m->nnodes ? m->nnodes : 1, sizeof *pm->after);
    pm->cpu_before = calloc(m->nnodes ? m->nnodes : 1, sizeof *pm->cpu_before);
    pm->cpu_after = calloc(m->nnodes ? m->nnodes : 1, sizeof *pm->cpu_after);
    if (!pm->before || !pm->after || !pm->cpu_before || !pm->cpu_after) {
        place_mem_free(pm);
        return cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    }
    return 0;
}

int place_mem_replan(struct place_mem *pm, const struct pl_machine *m, const int *cpus, unsigned n, char *why,
                     size_t len)
{
    struct pl_mem_spec s;
    struct pl_mem_policy pol;
    int rc = pl_mem_parse(pm->arg, &s, why, len);
    if (rc < 0)
        return rc;
    rc = pl_mem_resolve(m, &s, cpus, n, &pol, why, len);
    pl_mem_spec_free(&s);
    if (rc < 0)
        return rc;
    pl_mem_policy_free(&pm->pol);
    pm->pol = pol;
    return 0;
}

void place_mem_free(struct place_mem *pm)
{
    pl_mem_policy_free(&pm->pol);
    free(pm->before);
    free(pm->after);
    free(pm->cpu_before);
    free(pm->cpu_after);
    pm->before = pm->after = NULL;
    pm->cpu_before = pm->cpu_after = NULL;
}

/* The policy field of the first line of /proc/PID/numa_maps (the process's own policy, unless that mapping has
 * one): "" when it cannot be read. */
/* A whole /proc file (its size is not known before reading): malloc'd text, NULL when unreadable. */
static char *read_proc(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 8192, n = 0;
    char *b = malloc(cap);
    for (size_t r; b && (r = fread(b + n, 1, cap - n - 1, f)) > 0;) {
        n += r;
        if (n + 1 == cap) {
            char *nb = cap < (64u << 20) ? realloc(b, cap * 2) : NULL;
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb, cap *= 2;
        }
    }
    if (b)
        b[n] = 0;
    fclose(f);
    return b;
}

static void process_policy(pid_t pid, char *pol, size_t len)
{
    char path[64], line[512];
    pol[0] = 0;
    snprintf(path, sizeof path, "/proc/%d/numa_maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (f && fgets(line, sizeof line, f))
        pl_numa_maps_policy(line, pol, len);
    if (f)
        fclose(f);
}

void place_mem_before(struct place_mem *pm, const struct pl_machine *m, pid_t pid, const struct pl_threads *t)
{
    char why[256];
    pm->have_before = pl_numa_maps_read(NULL, pid, m->node_os, m->nnodes, pm->before, why, sizeof why) == 0;
    int *last = malloc((t->n ? t->n : 1) * sizeof *last);
    unsigned k = 0;
    for (unsigned i = 0; last && i < t->n; i++)
        if (t->v[i].last_cpu >= 0)
            last[k++] = t->v[i].last_cpu;
    if (last)
        pl_cpus_per_node(m, last, k, pm->cpu_before);
    free(last);
    pm->have_score_before =
        pm->have_before && pl_bind_score(m, pm->cpu_before, pm->before, &pm->score_before, why, sizeof why) == 0;
    if (!pm->have_score_before)
        snprintf(pm->score_why, sizeof pm->score_why, "%.250s", pm->have_before ? why : "numa_maps not readable");
}

void place_mem_cpuset(struct place_mem *pm, const struct pl_machine *m, pid_t pid, const int *cpus, unsigned n,
                       bool want)
{
    char mount[PATH_MAX], group[PATH_MAX], dir[PATH_MAX], why[512], path[64];
    pm->cpuset_made = false;
    pm->cpuset_path[0] = 0;
    if (!want) {
        snprintf(pm->cpuset_why, sizeof pm->cpuset_why, "--no-cpuset");
        return;
    }
    /* mount points as ibench sees them (its mount namespace is the one whose paths it writes) */
    char *mi = read_proc("/proc/self/mountinfo");
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    char *cg = read_proc(path);
    int rc = pl_cgroup2_locate(mi ? mi : "", cg ? cg : "", mount, sizeof mount, group, sizeof group, why, sizeof why);
    free(mi);
    free(cg);
    if (rc == 0) {
        if ((size_t)snprintf(dir, sizeof dir, "%s%s", mount, strcmp(group, "/") ? group : "") >= sizeof dir)
            rc = ib_why(why, sizeof why, -ENAMETOOLONG, "cgroup path too long");
        else
            rc = pl_cpuset_usable(dir, why, sizeof why);
    }
    if (rc == 0) {
        int *sorted = malloc((n ? n : 1) * sizeof *sorted);
        char cl[4096], ml[256], name[64];
        if (!sorted) {
            snprintf(pm->cpuset_why, sizeof pm->cpuset_why, "out of memory");
            return;
        }
        for (unsigned i = 0; i < n; i++)
            sorted[i] = cpus[i];
        for (unsigned i = 1; i < n; i++) /* insertion sort: a CPU list is short */
            for (unsigned j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                int x = sorted[j];
                sorted[j] = sorted[j - 1];
                sorted[j - 1] = x;
            }
        unsigned k = 0;
        for (unsigned i = 0; i < n; i++)
            if (!k || sorted[k - 1] != sorted[i])
                sorted[k++] = sorted[i];
        pl_cpulist_format(sorted, k, cl, sizeof cl);
        free(sorted);
        /* cpuset.mems: the policy's nodes; with --mem none every node (memory left alone) */
        const unsigned *mn = pm->pol.mode == PL_MPOL_NONE ? m->node_os : pm->pol.nodes;
        unsigned nm = pm->pol.mode == PL_MPOL_NONE ? m->nnodes : pm->pol.nnodes;
        int mv[256];
        for (unsigned i = 0; i < nm && i < 256; i++)
            mv[i] = (int)mn[i];
        pl_cpulist_format(mv, nm < 256 ? nm : 256, ml, sizeof ml);
        snprintf(name, sizeof name, "ibench-place-%d", (int)pid);
        rc = pl_cpuset_make(dir, name, cl, ml, pid, pm->cpuset_path, sizeof pm->cpuset_path, why, sizeof why);
    }
    pm->cpuset_made = rc == 0;
    snprintf(pm->cpuset_why, sizeof pm->cpuset_why, "%s", rc == 0 ? "" : why);
}

int place_mem_follow(struct place_mem *pm, const struct pl_machine *m, pid_t pid, const int *cpus, unsigned n,
                     bool cpuset)
{
    char why[512];
    pm->page_size = sysconf(_SC_PAGESIZE);
    int rc = 0;
    if (pm->pol.mode != PL_MPOL_NONE) {
        rc = pl_mem_migrate(pid, m, &pm->pol, &pm->not_moved, pm->err_why, sizeof pm->err_why);
        pm->migrated = rc == 0;
        /* a kernel without NUMA calls has one node: there was nothing to move, which is no failure */
        if (rc == -ENOSYS && m->nnodes <= 1)
            rc = 0;
    }
    pm->have_after = pl_numa_maps_read(NULL, pid, m->node_os, m->nnodes, pm->after, why, sizeof why) == 0;
    pl_cpus_per_node(m, cpus, n, pm->cpu_after);
    pm->have_score_after =
        pm->have_after && pl_bind_score(m, pm->cpu_after, pm->after, &pm->score_after, why, sizeof why) == 0;
    if (!pm->have_score_after && !pm->score_why[0])
        snprintf(pm->score_why, sizeof pm->score_why, "%.250s", pm->have_after ? why : "numa_maps not readable");
    process_policy(pid, pm->process_policy, sizeof pm->process_policy);
    place_mem_cpuset(pm, m, pid, cpus, n, cpuset);
    return rc;
}

/* Bytes that left the nodes outside the set between the two readings (what migrate_pages moved, less what the
 * process allocated there meanwhile); -1 when either reading is missing. */
static long long moved_bytes(const struct place_mem *pm, const struct pl_machine *m)
{
    if (!pm->have_before || !pm->have_after || pm->pol.mode == PL_MPOL_NONE)
        return -1;
    uint64_t b = pl_mem_outside(m, &pm->pol, pm->before), a = pl_mem_outside(m, &pm->pol, pm->after);
    return b > a ? (long long)(b - a) : 0;
}

static json_t *u64s(const uint64_t *v, unsigned n, bool have)
{
    if (!have)
        return json_null();
    json_t *a = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

static json_t *uints(const unsigned *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static const char *later_rule(const struct place_mem *pm)
{
    if (pm->pol.mode == PL_MPOL_NONE)
        return "memory left alone (--mem none)";
    if (pm->cpuset_made)
        return "the cpuset's mems hold later allocations to the set";
    if (pm->pol.mode == PL_MPOL_INTERLEAVE)
        return "Linux cannot set another process's policy: later allocations follow the process's own, not "
               "interleaved (start it under the policy: ibench place run --mem interleave)";
    return "Linux cannot set another process's policy: later allocations follow the process's own (the default "
           "allocates on the node of the CPU asking, now the placement's)";
}

json_t *place_mem_json(const struct place_mem *pm, const struct pl_machine *m)
{
    long long mb = moved_bytes(pm, m);
    json_t *o = json_object();
    json_object_set_new(o, "mem", json_string(pm->arg));
    json_object_set_new(o, "policy", json_string(pm->pol.text));
    json_object_set_new(o, "nodes", uints(pm->pol.nodes, pm->pol.nnodes));
    json_object_set_new(o, "cpu_nodes", uints(pm->pol.cpu_nodes, pm->pol.ncpu_nodes));
    json_object_set_new(o, "machine_nodes", uints(m->node_os, m->nnodes));
    json_object_set_new(o, "migrated", json_boolean(pm->migrated));
    json_object_set_new(o, "error", pm->err_why[0] ? json_string(pm->err_why) : json_null());
    json_object_set_new(o, "not_moved_pages", pm->migrated ? json_integer(pm->not_moved) : json_null());
    json_object_set_new(o, "moved_bytes", mb >= 0 ? json_integer(mb) : json_null());
    json_object_set_new(o, "moved_pages",
                        mb >= 0 && pm->page_size > 0 ? json_integer(mb / pm->page_size) : json_null());
    json_object_set_new(o, "bytes_before", u64s(pm->before, m->nnodes, pm->have_before));
    json_object_set_new(o, "bytes_after", u64s(pm->after, m->nnodes, pm->have_after));
    json_object_set_new(o, "score_before", pm->have_score_before ? json_real(pm->score_before) : json_null());
    json_object_set_new(o, "score_after", pm->have_score_after ? json_real(pm->score_after) : json_null());
    json_object_set_new(o, "score_why", pm->score_why[0] ? json_string(pm->score_why) : json_null());
    json_object_set_new(o, "process_policy", pm->process_policy[0] ? json_string(pm->process_policy) : json_null());
    json_object_set_new(o, "later", json_string(later_rule(pm)));
    json_object_set_new(o, "cpuset", json_pack("{s:b,s:o,s:o}", "made", pm->cpuset_made, "path",
                                               pm->cpuset_made ? json_string(pm->cpuset_path) : json_null(),
                                               "skipped", pm->cpuset_made ? json_null()
                                                                          : json_string(pm->cpuset_why)));
    return o;
}

static void print_bytes(const char *label, const uint64_t *v, const struct pl_machine *m, bool have)
{
    char b[32];
    printf("%-15s", label);
    if (!have) {
        printf(" (numa_maps not readable)\n");
        return;
    }
    for (unsigned i = 0; i < m->nnodes; i++)
        printf(" node %u %s%s", m->node_os[i], fmt_bytes((double)v[i], b, sizeof b),
               i + 1 < m->nnodes ? "," : "");
    printf("\n");
}

void place_mem_print(const struct place_mem *pm, const struct pl_machine *m)
{
    char nodes[128];
    int v[128];
    for (unsigned i = 0; i < pm->pol.ncpu_nodes && i < 128; i++)
        v[i] = (int)pm->pol.cpu_nodes[i];
    pl_cpulist_format(v, pm->pol.ncpu_nodes < 128 ? pm->pol.ncpu_nodes : 128, nodes, sizeof nodes);
    printf("\nmemory          --mem %s: %s (the CPUs are on node(s) %s)\n", pm->arg, pm->pol.text, nodes);
    if (pm->pol.mode != PL_MPOL_NONE) {
        long long mb = moved_bytes(pm, m);
        char b[32];
        if (pm->migrated)
            printf("moved           %s (%lld pages) off nodes outside %s; %ld page(s) the kernel could not move\n",
                   mb >= 0 ? fmt_bytes((double)mb, b, sizeof b) : "?", mb >= 0 && pm->page_size > 0
                   ? mb / pm->page_size : -1, pm->pol.text, pm->not_moved);
        else
            printf("moved           nothing: %s\n", pm->err_why);
    }
    print_bytes("resident before", pm->before, m, pm->have_before);
    print_bytes("resident after", pm->after, m, pm->have_after);
    if (pm->have_score_before || pm->have_score_after) {
        char sb[16] = "-", sa[16] = "-";
        if (pm->have_score_before)
            snprintf(sb, sizeof sb, "%.3f", pm->score_before);
        if (pm->have_score_after)
            snprintf(sa, sizeof sa, "%.3f", pm->score_after);
        printf("locality score  %s before, %s after%s%s\n", sb, sa, pm->score_why[0] ? "; " : "", pm->score_why);
    } else {
        printf("locality score  not told: %s\n", pm->score_why);
    }
    printf("process policy  %s (numa_maps)\nlater           %s\n", pm->process_policy[0] ? pm->process_policy : "?",
           later_rule(pm));
    if (pm->cpuset_made)
        printf("cpuset          %s\n", pm->cpuset_path);
    else
        printf("cpuset          skipped: %s\n", pm->cpuset_why);
}
