/* topo.c - the machine's topology through hwloc (see topo.h).
 *
 * Everything is answered from one loaded hwloc topology: this machine, a synthetic description or an XML export.
 * CPU numbers in and out are OS indices (hwloc's PU os_index).  I/O objects are filtered out so loading is fast;
 * instruction caches are kept so that topo_cache_info(level 1, instruction=true) can find L1i.
 */
#include "topo.h"

#include "ib_err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct topo {
    hwloc_topology_t h;
    bool this_machine;
};

/* Data/unified cache types by level (index 0 = L1). */
static const hwloc_obj_type_t data_cache_types[] = {
    HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
};
/* Instruction cache types by level (index 0 = L1i). */
static const hwloc_obj_type_t icache_types[] = {
    HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3ICACHE,
};

const char *topo_scope_name(enum topo_scope s)
{
    switch (s) {
    case TOPO_SCOPE_PU: return "pu";
    case TOPO_SCOPE_CORE: return "core";
    case TOPO_SCOPE_L2: return "l2";
    case TOPO_SCOPE_LLC: return "llc";
    case TOPO_SCOPE_NUMA: return "numa";
    case TOPO_SCOPE_PACKAGE: return "package";
    case TOPO_SCOPE_MACHINE: return "machine";
    }
    return "?";
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int neg_errno(int fallback)
{
    return errno > 0 ? -errno : fallback;
}

int topo_load(struct topo **out, const char *spec, char *why, size_t len)
{
    if (!out)
        return ib_why(why, len, -EINVAL, "topo_load: no output pointer");
    *out = NULL;

    struct topo *t = calloc(1, sizeof(*t));
    if (!t)
        return ib_why(why, len, -ENOMEM, "topo_load: out of memory");

    if (hwloc_topology_init(&t->h) != 0) {
        int err = neg_errno(-ENOMEM);
        free(t);
        return ib_why(why, len, err, "hwloc_topology_init failed: %s", strerror(-err));
    }
    /* No PCI/OS devices: not needed and slow to discover. Keep instruction caches for topo_cache_info(..., true). */
    hwloc_topology_set_io_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_ALL);

    int err = 0;
    if (!spec) {
        t->this_machine = true;
    } else if (spec[0] == '/' || ends_with(spec, ".xml")) {
        errno = 0;
        if (hwloc_topology_set_xml(t->h, spec) != 0) {
            err = neg_errno(-EINVAL);
            ib_why(why, len, err, "cannot use hwloc XML topology '%s': %s", spec, strerror(-err));
            goto fail;
        }
    } else {
        errno = 0;
        if (hwloc_topology_set_synthetic(t->h, spec) != 0) {
            err = -EINVAL; /* hwloc sets EINVAL for a malformed description */
            ib_why(why, len, err, "invalid hwloc synthetic topology '%s'", spec);
            goto fail;
        }
    }

    errno = 0;
    if (hwloc_topology_load(t->h) != 0) {
        err = neg_errno(-EIO);
        ib_why(why, len, err, "cannot load topology %s%s%s: %s", spec ? "'" : "", spec ? spec : "of this machine",
               spec ? "'" : "", strerror(-err));
        goto fail;
    }
    if (hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_PU) <= 0) {
        err = -ENODEV;
        ib_why(why, len, err, "topology %s has no PU", spec ? spec : "of this machine");
        goto fail;
    }
    *out = t;
    return 0;

fail:
    hwloc_topology_destroy(t->h);
    free(t);
    return err;
}

void topo_destroy(struct topo *t)
{
    if (!t)
        return;
    hwloc_topology_destroy(t->h);
    free(t);
}

hwloc_topology_t topo_hwloc(const struct topo *t)
{
    return t ? t->h : NULL;
}

bool topo_is_this_machine(const struct topo *t)
{
    return t && t->this_machine;
}

static unsigned count_type(const struct topo *t, hwloc_obj_type_t type)
{
    if (!t)
        return 0;
    int n = hwloc_get_nbobjs_by_type(t->h, type);
    return n > 0 ? (unsigned)n : 0;
}

unsigned topo_npus(const struct topo *t)
{
    return count_type(t, HWLOC_OBJ_PU);
}

/* A topology without Core objects (possible in synthetic/XML input) counts every PU as a core. */
unsigned topo_ncores(const struct topo *t)
{
    unsigned n = count_type(t, HWLOC_OBJ_CORE);
    return n ? n : topo_npus(t);
}

/* A topology without Package objects counts the machine as one package. */
unsigned topo_npackages(const struct topo *t)
{
    unsigned n = count_type(t, HWLOC_OBJ_PACKAGE);
    return n ? n : (topo_npus(t) ? 1 : 0);
}

unsigned topo_nnuma(const struct topo *t)
{
    unsigned n = count_type(t, HWLOC_OBJ_NUMANODE);
    return n ? n : (topo_npus(t) ? 1 : 0);
}

bool topo_has_smt(const struct topo *t)
{
    if (!t)
        return false;
    hwloc_obj_t core = NULL;
    while ((core = hwloc_get_next_obj_by_type(t->h, HWLOC_OBJ_CORE, core)) != NULL)
        if (core->cpuset && hwloc_bitmap_weight(core->cpuset) > 1)
            return true;
    return false;
}

int topo_pu_os(const struct topo *t, unsigned i)
{
    if (!t)
        return -1;
    hwloc_obj_t pu = hwloc_get_obj_by_type(t->h, HWLOC_OBJ_PU, i);
    return pu ? (int)pu->os_index : -1;
}

static hwloc_obj_t pu_obj(const struct topo *t, int cpu)
{
    if (!t || cpu < 0)
        return NULL;
    return hwloc_get_pu_obj_by_os_index(t->h, (unsigned)cpu);
}

bool topo_cpu_exists(const struct topo *t, int cpu)
{
    return pu_obj(t, cpu) != NULL;
}

int topo_llc_level(const struct topo *t)
{
    if (!t)
        return 0;
    for (int i = (int)IB_ARRAY_SIZE(data_cache_types) - 1; i >= 0; i--)
        if (hwloc_get_nbobjs_by_type(t->h, data_cache_types[i]) > 0)
            return i + 1;
    return 0;
}

int topo_cache_info(const struct topo *t, int level, bool instruction, int cpu, struct topo_cache *out)
{
    if (!t || !out || level < 1)
        return -EINVAL;
    hwloc_obj_t pu = cpu < 0 ? hwloc_get_obj_by_type(t->h, HWLOC_OBJ_PU, 0) : pu_obj(t, cpu);
    if (!pu)
        return -EINVAL;
    size_t ntypes = instruction ? IB_ARRAY_SIZE(icache_types) : IB_ARRAY_SIZE(data_cache_types);
    if ((size_t)level > ntypes)
        return -ENOENT;
    hwloc_obj_type_t type = instruction ? icache_types[level - 1] : data_cache_types[level - 1];
    hwloc_obj_t c = hwloc_get_ancestor_obj_by_type(t->h, type, pu);
    if (!c || !c->attr)
        return -ENOENT;

    memset(out, 0, sizeof(*out));
    out->level = level;
    out->instruction = instruction;
    out->size = c->attr->cache.size;
    out->ways = c->attr->cache.associativity > 0 ? (unsigned)c->attr->cache.associativity : 0;
    out->line = c->attr->cache.linesize ? c->attr->cache.linesize : 64;
    int w = c->cpuset ? hwloc_bitmap_weight(c->cpuset) : 0;
    out->nshared = w > 0 ? (unsigned)w : 0;
    return 0;
}

/* The first NUMA node (logical order) whose cpuset contains the PU; NULL if none does. In hwloc 2 NUMA nodes are
 * memory children, not ancestors of PUs, so they are found by cpuset. */
static hwloc_obj_t numa_of(const struct topo *t, hwloc_obj_t pu)
{
    hwloc_obj_t node = NULL;
    while ((node = hwloc_get_next_obj_by_type(t->h, HWLOC_OBJ_NUMANODE, node)) != NULL)
        if (node->cpuset && hwloc_bitmap_isset(node->cpuset, pu->os_index))
            return node;
    return NULL;
}

/* The cpuset of the `scope` object containing pu (with the fallbacks documented in topo_sharing), or NULL for an
 * unknown scope.  The returned bitmap belongs to the topology. */
static hwloc_const_cpuset_t scope_cpuset(const struct topo *t, enum topo_scope scope, hwloc_obj_t pu)
{
    hwloc_obj_t root = hwloc_get_root_obj(t->h);
    hwloc_obj_t o = NULL;
    int llc;

    switch (scope) {
    case TOPO_SCOPE_PU:
        o = pu;
        break;
    case TOPO_SCOPE_CORE:
        o = hwloc_get_ancestor_obj_by_type(t->h, HWLOC_OBJ_CORE, pu);
        if (!o)
            o = pu;
        break;
    case TOPO_SCOPE_L2:
        o = hwloc_get_ancestor_obj_by_type(t->h, HWLOC_OBJ_L2CACHE, pu);
        if (!o)
            o = hwloc_get_ancestor_obj_by_type(t->h, HWLOC_OBJ_CORE, pu);
        if (!o)
            o = pu;
        break;
    case TOPO_SCOPE_LLC:
        llc = topo_llc_level(t);
        if (llc > 0)
            o = hwloc_get_ancestor_obj_by_type(t->h, data_cache_types[llc - 1], pu);
        if (!o)
            o = hwloc_get_ancestor_obj_by_type(t->h, HWLOC_OBJ_PACKAGE, pu);
        if (!o)
            o = root;
        break;
    case TOPO_SCOPE_NUMA:
        o = numa_of(t, pu);
        if (!o)
            o = root;
        break;
    case TOPO_SCOPE_PACKAGE:
        o = hwloc_get_ancestor_obj_by_type(t->h, HWLOC_OBJ_PACKAGE, pu);
        if (!o)
            o = root;
        break;
    case TOPO_SCOPE_MACHINE:
        o = root;
        break;
    default:
        return NULL;
    }
    return o ? o->cpuset : NULL;
}

/* OS indices of the PUs of set (that exist in the topology), ascending, minus `skip` (-1: none). The array is
 * never NULL on success (at least one slot is allocated). */
static int cpuset_to_array(const struct topo *t, hwloc_const_cpuset_t set, int skip, int **cpus, unsigned *n)
{
    int w = hwloc_bitmap_weight(set);
    if (w < 0) /* infinite set: cannot happen for an object's cpuset */
        return -EINVAL;
    int *a = malloc(sizeof(*a) * ((size_t)w + 1));
    if (!a)
        return -ENOMEM;
    unsigned k = 0;
    unsigned id;
    hwloc_bitmap_foreach_begin(id, set) {
        if ((int)id != skip && hwloc_get_pu_obj_by_os_index(t->h, id) && k < (unsigned)w)
            a[k++] = (int)id;
    }
    hwloc_bitmap_foreach_end();
    *cpus = a;
    *n = k;
    return 0;
}

int topo_sharing(const struct topo *t, enum topo_scope scope, int cpu, int **cpus, unsigned *n)
{
    if (!cpus || !n)
        return -EINVAL;
    *cpus = NULL;
    *n = 0;
    hwloc_obj_t pu = pu_obj(t, cpu);
    if (!pu)
        return -EINVAL;
    hwloc_const_cpuset_t set = scope_cpuset(t, scope, pu);
    if (!set)
        return -EINVAL;
    return cpuset_to_array(t, set, -1, cpus, n);
}

int topo_siblings(const struct topo *t, int cpu, int **cpus, unsigned *n)
{
    if (!cpus || !n)
        return -EINVAL;
    *cpus = NULL;
    *n = 0;
    hwloc_obj_t pu = pu_obj(t, cpu);
    if (!pu)
        return -EINVAL;
    hwloc_const_cpuset_t set = scope_cpuset(t, TOPO_SCOPE_CORE, pu);
    return cpuset_to_array(t, set, cpu, cpus, n);
}

struct cand {
    int depth; /* depth of the common ancestor with the target: deeper = closer */
    int os;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->depth != y->depth)
        return x->depth > y->depth ? -1 : 1;
    return (x->os > y->os) - (x->os < y->os);
}

int topo_near(const struct topo *t, enum topo_scope scope, int target, unsigned want, int *cpus_out,
              bool *time_shared)
{
    if (time_shared)
        *time_shared = false;
    hwloc_obj_t tpu = pu_obj(t, target);
    if (!tpu || want == 0 || !cpus_out)
        return -EINVAL;
    hwloc_const_cpuset_t set = scope_cpuset(t, scope, tpu);
    if (!set)
        return -EINVAL;

    int *ids;
    unsigned n;
    int err = cpuset_to_array(t, set, target, &ids, &n);
    if (err)
        return err;

    if (n == 0) {
        free(ids);
        for (unsigned i = 0; i < want; i++)
            cpus_out[i] = target;
        if (time_shared)
            *time_shared = true;
        return 0;
    }

    struct cand *c = malloc(sizeof(*c) * n);
    if (!c) {
        free(ids);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < n; i++) {
        hwloc_obj_t p = hwloc_get_pu_obj_by_os_index(t->h, (unsigned)ids[i]);
        hwloc_obj_t anc = hwloc_get_common_ancestor_obj(t->h, tpu, p);
        c[i].depth = anc ? anc->depth : 0;
        c[i].os = ids[i];
    }
    free(ids);
    qsort(c, n, sizeof(*c), cand_cmp);
    for (unsigned i = 0; i < want; i++)
        cpus_out[i] = c[i % n].os;
    free(c);
    return 0;
}

/* depth of the deepest object holding both PUs (deeper = closer) */
static int common_depth(const struct topo *t, hwloc_obj_t a, hwloc_obj_t b)
{
    hwloc_obj_t anc = hwloc_get_common_ancestor_obj(t->h, a, b);
    return anc ? anc->depth : 0;
}

int topo_spread(const struct topo *t, int lead, unsigned want, int *cpus_out)
{
    unsigned n = topo_npus(t);
    if (want == 0 || !cpus_out || n == 0)
        return -EINVAL;
    hwloc_obj_t hub = lead < 0 ? hwloc_get_obj_by_type(t->h, HWLOC_OBJ_PU, n - 1) : pu_obj(t, lead);
    if (!hub)
        return -EINVAL;
    bool *used = calloc(n, sizeof(*used));
    hwloc_obj_t *picked = calloc(n, sizeof(*picked));
    if (!used || !picked) {
        free(used);
        free(picked);
        return -ENOMEM;
    }
    picked[0] = hub;
    used[hub->logical_index] = true;
    unsigned np = 1;
    while (np < n) {
        int best = -1, bk1 = 0, bk2 = 0;
        for (unsigned i = 0; i < n; i++) {
            if (used[i])
                continue;
            hwloc_obj_t p = hwloc_get_obj_by_type(t->h, HWLOC_OBJ_PU, i);
            int k1 = common_depth(t, hub, p), k2 = 0;
            for (unsigned j = 1; j < np; j++) {
                int d = common_depth(t, picked[j], p);
                k2 = d > k2 ? d : k2;
            }
            if (best < 0 || k1 < bk1 || (k1 == bk1 && k2 < bk2)) {
                best = (int)i;
                bk1 = k1;
                bk2 = k2;
            }
        }
        used[best] = true;
        picked[np++] = hwloc_get_obj_by_type(t->h, HWLOC_OBJ_PU, (unsigned)best);
    }
    for (unsigned i = 0; i < want; i++)
        cpus_out[i] = (int)picked[i % n]->os_index;
    free(used);
    free(picked);
    return 0;
}

int topo_apart(const struct topo *t, int a, int b, char *buf, size_t len)
{
    hwloc_obj_t pa = pu_obj(t, a), pb = pu_obj(t, b);
    if (!pa || !pb || !buf || !len)
        return -EINVAL;
    buf[0] = 0;
    if (pa == pb)
        return 0;
    hwloc_obj_t anc = hwloc_get_common_ancestor_obj(t->h, pa, pb);
    /* the largest object holding a but not b: the child of the common ancestor on a's side, skipping the groups
     * and caches that merely wrap a single child of the same extent */
    hwloc_obj_t o = pa;
    while (o->parent && o->parent != anc)
        o = o->parent;
    while (o->type == HWLOC_OBJ_GROUP && o->arity == 1)
        o = o->children[0];
    hwloc_obj_type_snprintf(buf, len, o, 0);
    return 0;
}

int topo_bind_thread(const struct topo *t, int cpu)
{
    hwloc_obj_t pu = pu_obj(t, cpu);
    if (!pu)
        return -EINVAL;
    if (!t->this_machine)
        return -ENOTSUP;
    errno = 0;
    if (hwloc_set_cpubind(t->h, pu->cpuset, HWLOC_CPUBIND_THREAD) != 0)
        return neg_errno(-EPERM);
    return 0;
}

/* Bytes of the first NUMA node containing cpu; the machine's total memory when that node does not say (or there
 * is no node containing cpu); 0 when cpu does not exist. */
uint64_t topo_node_memory(const struct topo *t, int cpu)
{
    hwloc_obj_t pu = pu_obj(t, cpu);
    if (!pu)
        return 0;
    hwloc_obj_t node = numa_of(t, pu);
    if (node && node->attr && node->attr->numanode.local_memory)
        return node->attr->numanode.local_memory;
    return hwloc_get_root_obj(t->h)->total_memory;
}
