/* pl_machine.h - the machine as the placement engine sees it: a topology (this machine, an hwloc XML export or an
 * hwloc synthetic description), its shared levels as a hierarchy of PU partitions, and NUMA distances.
 *
 * PUs are numbered by hwloc's logical index (0..npus-1, the tree's order), so a result does not depend on how the
 * firmware numbered the CPUs; pu_os[] gives the OS index `taskset` uses.  Instances of a level are numbered by the
 * first PU they hold, for the same reason.  NUMA nodes keep their OS index (inst_os) because distance and bandwidth
 * files, numactl and /proc name them by it.
 */
#ifndef IB_PL_MACHINE_H
#define IB_PL_MACHINE_H
#include <stddef.h>
#include <stdint.h>

#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_MAX_LEVELS 12
#define PL_NAME_LEN 64

/* One shared level: a partition of (some of) the PUs into instances. */
struct pl_level {
    char name[PL_NAME_LEN]; /* "package", "numa", "l3", ...; levels with the same partition merge: "package+numa" */
    unsigned ninst;         /* instances */
    unsigned *inst;         /* npus entries: the instance (0..ninst-1) holding each PU, by logical index */
    unsigned *inst_os;      /* ninst entries: the instance's OS index (numa: the node number), else its logical index */
    unsigned *inst_npus;    /* ninst entries: PUs in each instance */
    uint64_t size;          /* bytes of one instance's cache (or NUMA memory); 0 when unknown or none */
};

/* The levels, coarse to fine: every instance of level k+1 lies inside one instance of level k (a laminar family;
 * levels that cross, e.g. an L3 spanning part of two NUMA nodes, are refused).  Every PU is in one instance of
 * every level. */
struct pl_hier {
    unsigned npus;
    int *pu_os; /* npus entries: OS index of each PU */
    unsigned nlevels;
    struct pl_level lv[PL_MAX_LEVELS];
};

/* The level names --concerns takes (aliases: pack = package, node = numa). */
extern const char *const pl_level_names[];

/* The hierarchy of `t` for a comma-separated list of concerns (NULL or "": the default, every level that has
 * more than one instance and more than one PU per instance; levels with equal partitions merged).  -EINVAL (bad
 * input) for an unknown name, a level this topology lacks, or levels that cross. */
int pl_hier_from_topo(const struct topo *t, const char *concerns, struct pl_hier *h, char *why, size_t len);
/* A symmetric hierarchy without hwloc (for tests and fakes): level k has arity[k] instances per instance of level
 * k-1 (level 0: arity[0] instances in all), the finest level's instances hold `pus_per_leaf` PUs each; PU os index =
 * logical index. */
int pl_hier_uniform(struct pl_hier *h, const char *const *names, const unsigned *arity, unsigned nlevels,
                    unsigned pus_per_leaf, char *why, size_t len);
/* Every level t has (pl_level_names order), unmerged and unfiltered, for display: no laminarity check. */
int pl_hier_levels(const struct topo *t, struct pl_hier *h, char *why, size_t len);
/* The level called `name` (or one of whose merged names is `name`), or -1. */
int pl_hier_find(const struct pl_hier *h, const char *name);
void pl_hier_free(struct pl_hier *h);

/* A loaded machine: the topology and its NUMA distances. */
struct pl_machine {
    struct topo *topo;
    char spec[256];        /* as given: "live", a path, "synthetic:..." */
    const char *kind;      /* "live", "xml", "synthetic" */
    unsigned nnodes;       /* NUMA nodes */
    unsigned *node_os;     /* nnodes entries, ascending by logical index */
    double *dist;          /* nnodes x nnodes, row-major, by node logical index; NULL when nothing says */
    char dist_source[160]; /* "hwloc NUMALatency", "file F", or why there are none */
};

/* Loads `spec` ("live" or NULL: this machine; "synthetic:STRING"; otherwise the path of an hwloc XML file) and the
 * distances: from `dist_file` when given (pl_distances_load), else the topology's (hwloc's NUMALatency matrix).
 * -EINVAL/-ENOENT with one line for bad input. */
int pl_machine_load(struct pl_machine *m, const char *spec, const char *dist_file, char *why, size_t len);
void pl_machine_free(struct pl_machine *m);

/* A distances file: JSON, either an n x n array of positive numbers or an object whose "matrix" is one (what
 * `ibench place topo --json` prints under "distances").  Each row's diagonal entry must be its smallest.  *d is
 * malloc'd, row-major.  -EINVAL with one line (naming the row/column) for anything else. */
int pl_distances_parse(const char *text, double **d, unsigned *n, char *why, size_t len);
int pl_distances_load(const char *path, double **d, unsigned *n, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
