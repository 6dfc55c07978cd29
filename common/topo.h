/* topo.h - the machine's topology through hwloc, as an opaque handle (init -> load -> query -> destroy).
 *
 * Loads this machine, an hwloc synthetic description ("pack:2 l3:1 l2:4 core:1 pu:2") or an XML export, so
 * placement logic is tested on machines we do not have.  CPU numbers are OS indices (as `taskset` uses).
 */
#ifndef IB_TOPO_H
#define IB_TOPO_H
#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct topo;

/* Which shared resource a placement is about: a thread placed "near" a target shares this object with it. */
enum topo_scope {
    TOPO_SCOPE_PU = 0,   /* the same hardware thread (time-shared) */
    TOPO_SCOPE_CORE,     /* same core: SMT siblings; private L1/L2 */
    TOPO_SCOPE_L2,       /* the L2 cache object containing the target */
    TOPO_SCOPE_LLC,      /* the last-level cache containing the target */
    TOPO_SCOPE_NUMA,     /* the NUMA node */
    TOPO_SCOPE_PACKAGE,  /* the socket */
    TOPO_SCOPE_MACHINE,  /* anywhere */
};
const char *topo_scope_name(enum topo_scope s);

struct topo_cache {
    int level;          /* 1, 2, 3, ... */
    bool instruction;   /* L1i */
    uint64_t size;      /* bytes (hwloc's claim) */
    unsigned ways;      /* 0 if unknown; UINT_MAX-like (-1 in hwloc) is reported as 0 */
    unsigned line;      /* bytes; 64 if hwloc does not say */
    unsigned nshared;   /* number of PUs sharing this cache object */
};

/* Load this machine (spec == NULL), a synthetic description, or (spec starting with '/' or ending in ".xml") an
 * XML file. Returns 0 or -errno; why gets one line on failure. */
int topo_load(struct topo **out, const char *spec, char *why, size_t len);
void topo_destroy(struct topo *t);
hwloc_topology_t topo_hwloc(const struct topo *t);
bool topo_is_this_machine(const struct topo *t);

unsigned topo_npus(const struct topo *t);
unsigned topo_ncores(const struct topo *t);
unsigned topo_npackages(const struct topo *t);
unsigned topo_nnuma(const struct topo *t);
bool topo_has_smt(const struct topo *t);
/* OS index of the i-th PU in logical order; -1 if out of range. */
int topo_pu_os(const struct topo *t, unsigned i);
bool topo_cpu_exists(const struct topo *t, int cpu);
/* The largest cache level present (e.g. 3); 0 when there are no caches. */
int topo_llc_level(const struct topo *t);
/* Data (or unified) cache of `level` (instruction=true: L1i) covering `cpu` (cpu < 0: the first PU).
 * -ENOENT if the machine has no such cache. */
int topo_cache_info(const struct topo *t, int level, bool instruction, int cpu, struct topo_cache *out);
/* Every PU (OS indices, sorted) in the `scope` object that contains `cpu`. Caller frees *cpus. */
int topo_sharing(const struct topo *t, enum topo_scope scope, int cpu, int **cpus, unsigned *n);
/* SMT siblings of cpu (other PUs of its core), caller frees. n == 0 when none. */
int topo_siblings(const struct topo *t, int cpu, int **cpus, unsigned *n);

/* Place `want` threads near `target` so they share `scope` with it.  Picks PUs inside the scope object other than
 * the target, closest first (same core, then same L2, then same LLC, ...), at most one thread per PU while PUs
 * last, then wraps around.  When the scope holds no PU but the target (e.g. same-core on a machine without SMT),
 * places on the target itself and sets *time_shared (the SoI then time-shares the target's CPU). */
int topo_near(const struct topo *t, enum topo_scope scope, int target, unsigned want, int *cpus_out,
              bool *time_shared);

/* Spread `want` threads as far apart as the machine allows, for SoIs whose pressure is traffic between CPUs.
 * cpus_out[0] is `lead` (the hub; lead < 0: the highest-numbered PU); each next one is the PU farthest from the lead
 * (other package, then other LLC / NUMA node / L2, then other core, then an SMT sibling), ties broken by being
 * farthest from the ones already picked, then by logical order. Once every PU is used the order repeats.
 * 0 or -EINVAL. */
int topo_spread(const struct topo *t, int lead, unsigned want, int *cpus_out);
/* What CPUs a and b do not share: the type of the largest object that holds a but not b ("Package", "L3", "L2",
 * "Core", "PU"), or "" when a == b. 0 or -EINVAL. */
int topo_apart(const struct topo *t, int a, int b, char *buf, size_t len);

/* Bind the calling thread to one PU (OS index). 0 or -errno. Only valid on this machine's topology. */
int topo_bind_thread(const struct topo *t, int cpu);

/* Memory of the NUMA node holding cpu (bytes), or total memory when there is one node. */
uint64_t topo_node_memory(const struct topo *t, int cpu);

#ifdef __cplusplus
}
#endif
#endif
