/* pl_bind.c - the node sets and memory policies of a placement, and where a cgroup v2 cpuset can be made (pl_bind.h).
 * No system call here but the cgroup files (pl_bind_os.c has the NUMA calls). */
#define _GNU_SOURCE
#include "pl_bind.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ib_err.h"
#include "pl_numa.h"
#include "pl_proc.h"
#include "readfile.h"

/* ---- --mem ------------------------------------------------------------------------------------------------------- */

static int cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* A node list: the CPU-list syntax, stored ascending (the order does not matter for a node set). */
static int node_list(const char *s, const char *opt, unsigned **nodes, unsigned *n, char *why, size_t len)
{
    int *v;
    unsigned k;
    char sub[256];
    if (pl_cpulist_parse(s, &v, &k, sub, sizeof sub) < 0 || !k) {
        if (!k)
            free(v);
        return ib_why(why, len, -EINVAL, "--mem '%s': want local, interleave, interleave:NODES, none or NODES "
                      "(node numbers and ranges such as 0,2-3)", opt);
    }
    *nodes = malloc(k * sizeof(**nodes));
    if (!*nodes) {
        free(v);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned i = 0; i < k; i++)
        (*nodes)[i] = (unsigned)v[i];
    free(v);
    qsort(*nodes, k, sizeof(**nodes), cmp_uint);
    *n = k;
    return 0;
}

int pl_mem_parse(const char *s, struct pl_mem_spec *sp, char *why, size_t len)
{
    memset(sp, 0, sizeof *sp);
    if (!s || !*s || !strcmp(s, "local")) {
        sp->kind = PL_MEM_LOCAL;
        return 0;
    }
    if (!strcmp(s, "none")) {
        sp->kind = PL_MEM_NONE;
        return 0;
    }
    if (!strcmp(s, "interleave")) {
        sp->kind = PL_MEM_INTERLEAVE;
        return 0;
    }
    if (!strncmp(s, "interleave:", 11)) {
        sp->kind = PL_MEM_INTERLEAVE;
        return node_list(s + 11, s, &sp->nodes, &sp->nnodes, why, len);
    }
    sp->kind = PL_MEM_NODES;
    return node_list(s, s, &sp->nodes, &sp->nnodes, why, len);
}

void pl_mem_spec_free(struct pl_mem_spec *sp)
{
    free(sp->nodes);
    memset(sp, 0, sizeof *sp);
}

/* ---- the policy -------------------------------------------------------------------------------------------------- */

static void nodes_text(const unsigned *nodes, unsigned n, char *buf, size_t len)
{
    int *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        snprintf(buf, len, "?");
        return;
    }
    for (unsigned i = 0; i < n; i++)
        v[i] = (int)nodes[i];
    pl_cpulist_format(v, n, buf, len);
    free(v);
}

static int node_pos(const struct pl_machine *m, unsigned os)
{
    for (unsigned i = 0; i < m->nnodes; i++)
        if (m->node_os[i] == os)
            return (int)i;
    return -1;
}

int pl_mem_resolve(const struct pl_machine *m, const struct pl_mem_spec *s, const int *cpus, unsigned ncpus,
                  struct pl_mem_policy *p, char *why, size_t len)
{
    memset(p, 0, sizeof *p);
    int *cpu_node;
    unsigned nmap;
    int rc = pl_numa_cpu_nodes(m, &cpu_node, &nmap, why, len);
    if (rc < 0)
        return rc;
    /* the CPUs' nodes, as a bitmap over node positions */
    unsigned char *used = calloc(m->nnodes ? m->nnodes : 1, 1);
    p->cpu_nodes = malloc((m->nnodes ? m->nnodes : 1) * sizeof *p->cpu_nodes);
    p->nodes = malloc((m->nnodes ? m->nnodes : 1) * sizeof *p->nodes);
    if (!used || !p->cpu_nodes || !p->nodes) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    for (unsigned i = 0; i < ncpus; i++) {
        if (cpus[i] < 0 || (unsigned)cpus[i] >= nmap || cpu_node[cpus[i]] < 0) {
            rc = ib_why(why, len, -EINVAL, "CPU %d is in no NUMA node of this topology", cpus[i]);
            goto out;
        }
        used[cpu_node[cpus[i]]] = 1;
    }
    for (unsigned i = 0; i < m->nnodes; i++)
        if (used[i])
            p->cpu_nodes[p->ncpu_nodes++] = m->node_os[i];
    qsort(p->cpu_nodes, p->ncpu_nodes, sizeof *p->cpu_nodes, cmp_uint);

    char have[128], set[128];
    nodes_text(m->node_os, m->nnodes, have, sizeof have);
    if (s->kind == PL_MEM_NONE) {
        p->mode = PL_MPOL_NONE;
        snprintf(p->text, sizeof p->text, "none");
        goto out;
    }
    if (s->nnodes) { /* the nodes given: each must be one of m's */
        for (unsigned i = 0; i < s->nnodes; i++) {
            if (node_pos(m, s->nodes[i]) < 0) {
                rc = ib_why(why, len, -EINVAL, "--mem: node %u does not exist here (nodes %s)", s->nodes[i], have);
                goto out;
            }
            p->nodes[p->nnodes++] = s->nodes[i];
        }
    } else {
        if (!p->ncpu_nodes) {
            rc = ib_why(why, len, -EINVAL, "--mem %s: no CPUs to take the nodes from",
                        s->kind == PL_MEM_LOCAL ? "local" : "interleave");
            goto out;
        }
        memcpy(p->nodes, p->cpu_nodes, p->ncpu_nodes * sizeof *p->nodes);
        p->nnodes = p->ncpu_nodes;
    }
    p->mode = s->kind == PL_MEM_INTERLEAVE ? PL_MPOL_INTERLEAVE : PL_MPOL_BIND;
    nodes_text(p->nodes, p->nnodes, set, sizeof set);
    snprintf(p->text, sizeof p->text, "%s:%s", p->mode == PL_MPOL_BIND ? "bind" : "interleave", set);
out:
    free(used);
    free(cpu_node);
    if (rc < 0)
        pl_mem_policy_free(p);
    return rc;
}

void pl_mem_policy_free(struct pl_mem_policy *p)
{
    free(p->nodes);
    free(p->cpu_nodes);
    memset(p, 0, sizeof *p);
}

int pl_nodemask(const unsigned *nodes, unsigned n, unsigned long *mask, size_t nwords, unsigned long *maxnode,
                char *why, size_t len)
{
    const unsigned bits = (unsigned)(8 * sizeof(unsigned long));
    memset(mask, 0, nwords * sizeof *mask);
    unsigned hi = 0;
    for (unsigned i = 0; i < n; i++) {
        if (nodes[i] / bits >= nwords)
            return ib_why(why, len, -ERANGE, "node %u beyond the %zu nodes a mask here holds", nodes[i],
                          nwords * bits);
        mask[nodes[i] / bits] |= 1UL << (nodes[i] % bits);
        hi = nodes[i] > hi ? nodes[i] : hi;
    }
    /* the kernel reads maxnode - 1 bits (mm/mempolicy.c get_nodes), so the highest node + 2 covers it */
    *maxnode = (unsigned long)hi + 2;
    return 0;
}

unsigned pl_nodemask_nodes(const unsigned long *mask, size_t nwords, unsigned *nodes, unsigned cap)
{
    const unsigned bits = (unsigned)(8 * sizeof(unsigned long));
    unsigned k = 0;
    for (size_t w = 0; w < nwords; w++)
        for (unsigned b = 0; b < bits; b++)
            if (mask[w] & (1UL << b)) {
                if (k < cap)
                    nodes[k] = (unsigned)(w * bits + b);
                k++;
            }
    return k;
}

unsigned pl_cpus_per_node(const struct pl_machine *m, const int *cpus, unsigned n, double *count)
{
    for (unsigned i = 0; i < m->nnodes; i++)
        count[i] = 0;
    int *cpu_node;
    unsigned nmap, outside = 0;
    if (pl_numa_cpu_nodes(m, &cpu_node, &nmap, NULL, 0) < 0)
        return n;
    for (unsigned i = 0; i < n; i++)
        if (cpus[i] >= 0 && (unsigned)cpus[i] < nmap && cpu_node[cpus[i]] >= 0)
            count[cpu_node[cpus[i]]] += 1;
        else
            outside++;
    free(cpu_node);
    return outside;
}

int pl_bind_score(const struct pl_machine *m, const double *cpu, const uint64_t *mem, double *score, char *why,
                  size_t len)
{
    double csum = 0, msum = 0;
    for (unsigned i = 0; i < m->nnodes; i++) {
        csum += cpu[i];
        msum += (double)mem[i];
    }
    if (!(msum > 0))
        return ib_why(why, len, -ENODATA, "no memory resident");
    if (!(csum > 0))
        return ib_why(why, len, -ENODATA, "no thread on a CPU of a NUMA node");
    if (m->nnodes == 1) {
        *score = 1;
        return 0;
    }
    if (!m->dist)
        return ib_why(why, len, -ENODATA, "%u NUMA nodes and no distances (%s)", m->nnodes, m->dist_source);
    double *mm = malloc(m->nnodes * sizeof *mm);
    if (!mm)
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < m->nnodes; i++)
        mm[i] = (double)mem[i];
    int rc = pl_numa_score(cpu, mm, m->dist, m->nnodes, score, why, len);
    free(mm);
    return rc;
}

uint64_t pl_mem_outside(const struct pl_machine *m, const struct pl_mem_policy *p, const uint64_t *mem)
{
    if (p->mode == PL_MPOL_NONE)
        return 0;
    uint64_t out = 0;
    for (unsigned i = 0; i < m->nnodes; i++) {
        bool in = false;
        for (unsigned j = 0; j < p->nnodes && !in; j++)
            in = p->nodes[j] == m->node_os[i];
        if (!in)
            out += mem[i];
    }
    return out;
}

int pl_numa_maps_policy(const char *line, char *pol, size_t plen)
{
    char f[160];
    if (!line || sscanf(line, "%*s %159s", f) != 1)
        return -EINVAL;
    snprintf(pol, plen, "%s", f);
    return 0;
}

/* ---- cgroup v2 ---------------------------------------------------------------------------------------------------- */

int pl_cgroup2_locate(const char *mountinfo, const char *proc_cgroup, char *mount, size_t mlen, char *group,
                      size_t glen, char *why, size_t len)
{
    bool found = false;
    /* mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
    for (const char *l = mountinfo; l && *l && !found;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        char line[4096];
        if (n < sizeof line) {
            memcpy(line, l, n);
            line[n] = 0;
            char *dash = strstr(line, " - ");
            char fstype[64] = "", mp[PATH_MAX] = "";
            if (dash && sscanf(dash + 3, "%63s", fstype) == 1 && !strcmp(fstype, "cgroup2") &&
                sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1) {
                snprintf(mount, mlen, "%s", mp);
                found = true;
            }
        }
        l = e ? e + 1 : NULL;
    }
    if (!found)
        return ib_why(why, len, -ENOENT, "no cgroup v2 file system is mounted");
    for (const char *l = proc_cgroup; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (n >= 3 && !strncmp(l, "0::", 3)) {
            size_t g = n - 3;
            if (g + 1 > glen)
                return ib_why(why, len, -ENAMETOOLONG, "cgroup path too long");
            memcpy(group, l + 3, g);
            group[g] = 0;
            return 0;
        }
        l = e ? e + 1 : NULL;
    }
    return ib_why(why, len, -ENOENT, "the process has no cgroup v2 group (no 0:: line)");
}

/* A cgroup control file's words, without the line's end. */
static int read_ctl(const char *path, char *buf, size_t cap)
{
    int rc = ib_read_small(path, buf, cap);
    size_t n = rc ? 0 : strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = 0;
    return rc;
}

static bool has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
            return true;
    return false;
}

int pl_cpuset_usable(const char *dir, char *why, size_t len)
{
    char path[PATH_MAX], ctl[512];
    snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
    int rc = read_ctl(path, ctl, sizeof ctl);
    if (rc < 0)
        return ib_why(why, len, -ENOENT, "%s is not a cgroup v2 group (%s: %s)", dir, path, strerror(-rc));
    if (!has_word(ctl, "cpuset"))
        return ib_why(why, len, -ENOTSUP, "cgroup v2 at %s offers no cpuset controller (cgroup.controllers: %s)",
                      dir, ctl[0] ? ctl : "none");
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
    if (access(path, W_OK) < 0)
        return ib_why(why, len, -EACCES, "%s: %s (the group is not delegated to this user)", path, strerror(errno));
    return 0;
}

/* O_CREAT changes nothing on cgroupfs (its files exist from mkdir on; a missing one is refused there) and lets a
 * tree of plain files stand in for it in the tests. */
static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    int e = w < 0 ? -errno : (size_t)w != n ? -EIO : 0;
    if (close(fd) < 0 && !e)
        e = -errno;
    return e;
}

int pl_cpuset_make(const char *dir, const char *name, const char *cpus, const char *mems, pid_t pid, char *made,
                   size_t mlen, char *why, size_t len)
{
    char path[PATH_MAX], ctl[512], cg[PATH_MAX];
    int rc = pl_cpuset_usable(dir, why, len);
    if (rc < 0)
        return rc;
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
    if (read_ctl(path, ctl, sizeof ctl) == 0 && !has_word(ctl, "cpuset") && (rc = write_file(path, "+cpuset")) < 0)
        return ib_why(why, len, rc, "%s: +cpuset refused: %s%s", path, strerror(-rc),
                      rc == -EBUSY ? " (the group has processes of its own; cgroup v2 enables controllers for the "
                                     "children of a group without any)" : "");
    if ((size_t)snprintf(cg, sizeof cg, "%s/%s", dir, name) >= sizeof cg)
        return ib_why(why, len, -ENAMETOOLONG, "cgroup path too long");
    if (mkdir(cg, 0755) < 0)
        return ib_why(why, len, -errno, "mkdir %s: %s", cg, strerror(errno));
    const char *files[3] = {"cpuset.cpus", "cpuset.mems", "cgroup.procs"};
    char pidtext[32];
    snprintf(pidtext, sizeof pidtext, "%d", (int)pid);
    const char *vals[3] = {cpus, mems, pidtext};
    for (int i = 0; i < 3; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s/%s", cg, files[i]) >= sizeof path)
            rc = -ENAMETOOLONG;
        else
            rc = write_file(path, vals[i]);
        if (rc < 0) {
            ib_why(why, len, rc, "%s: writing %s: %s", path, vals[i], strerror(-rc));
            rmdir(cg);
            return rc;
        }
    }
    snprintf(made, mlen, "%s", cg);
    return 0;
}

int pl_cpuset_remove(const char *made, char *why, size_t len)
{
    if (rmdir(made) < 0)
        return ib_why(why, len, -errno, "rmdir %s: %s", made, strerror(errno));
    return 0;
}
