/* pl_bind_os.c - the NUMA memory-policy system calls behind pl_bind.h, through syscall(2): no libnuma needed (the
 * calls are four, their arguments a mode and a node mask). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ib_err.h"
#include "pl_bind.h"

/* 1024 nodes: the kernel's MAX_NUMNODES at its largest (NODES_SHIFT 10) */
#define MASK_WORDS (1024 / (8 * sizeof(unsigned long)))

int pl_mpol_set(const struct pl_mem_policy *p, char *why, size_t len)
{
    if (p->mode == PL_MPOL_NONE)
        return 0;
    unsigned long mask[MASK_WORDS], maxnode;
    int rc = pl_nodemask(p->nodes, p->nnodes, mask, MASK_WORDS, &maxnode, why, len);
    if (rc < 0)
        return rc;
    int mode = p->mode == PL_MPOL_BIND ? MPOL_BIND : MPOL_INTERLEAVE;
    if (syscall(SYS_set_mempolicy, mode, mask, maxnode) < 0) {
        int e = errno;
        return ib_why(why, len, -e, "set_mempolicy %s: %s%s", p->text, strerror(e),
                      e == ENOSYS ? " (this kernel has no NUMA support)" : "");
    }
    return 0;
}

int pl_mpol_get(int *mode, unsigned *nodes, unsigned cap, unsigned *n, char *why, size_t len)
{
    unsigned long mask[MASK_WORDS] = {0};
    int kmode = 0;
    if (syscall(SYS_get_mempolicy, &kmode, mask, (unsigned long)(MASK_WORDS * 8 * sizeof(unsigned long)), NULL,
                0UL) < 0) {
        int e = errno;
        return ib_why(why, len, -e, "get_mempolicy: %s", strerror(e));
    }
    kmode &= ~(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES);
    *mode = kmode == MPOL_DEFAULT ? PL_MPOL_NONE : kmode == MPOL_BIND ? PL_MPOL_BIND
            : kmode == MPOL_INTERLEAVE ? PL_MPOL_INTERLEAVE : -1;
    *n = pl_nodemask_nodes(mask, MASK_WORDS, nodes, cap);
    return 0;
}

int pl_mem_migrate(pid_t pid, const struct pl_machine *m, const struct pl_mem_policy *p, long *not_moved, char *why,
                   size_t len)
{
    *not_moved = 0;
    if (p->mode == PL_MPOL_NONE)
        return 0;
    /* from every node of the machine to the set: when the two sets differ in size the kernel leaves pages already
     * on a node of the set where they are (mm/mempolicy.c do_migrate_pages); when they are equal nothing moves */
    unsigned long from[MASK_WORDS], to[MASK_WORDS], maxf, maxt;
    int rc = pl_nodemask(m->node_os, m->nnodes, from, MASK_WORDS, &maxf, why, len);
    if (rc == 0)
        rc = pl_nodemask(p->nodes, p->nnodes, to, MASK_WORDS, &maxt, why, len);
    if (rc < 0)
        return rc;
    long r = syscall(SYS_migrate_pages, pid, maxf > maxt ? maxf : maxt, from, to);
    if (r < 0) {
        int e = errno;
        return ib_why(why, len, -e, "migrate_pages of process %d to %s: %s%s", (int)pid, p->text, strerror(e),
                      e == EPERM ? " (moving another user's pages needs CAP_SYS_NICE)" : "");
    }
    *not_moved = r;
    return 0;
}
