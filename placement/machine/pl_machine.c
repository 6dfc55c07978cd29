/* pl_machine.c - the machine as the placement engine sees it (pl_machine.h). */
#define _GNU_SOURCE
#include "pl_machine.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ib_err.h"

/* Coarse to fine as machines are usually built; the hierarchy is ordered by instance count anyway. */
const char *const pl_level_names[] = {"package", "die", "numa", "l3", "l2", "l1", "core", NULL};
static const hwloc_obj_type_t level_types[] = {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_DIE,     HWLOC_OBJ_NUMANODE,
                                               HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE,
                                               HWLOC_OBJ_CORE};
#define NKNOWN (sizeof(level_types) / sizeof(level_types[0]))

static const char *canonical_name(const char *s)
{
    if (!strcmp(s, "pack") || !strcmp(s, "socket"))
        return "package";
    if (!strcmp(s, "node"))
        return "numa";
    for (unsigned i = 0; pl_level_names[i]; i++)
        if (!strcmp(s, pl_level_names[i]))
            return pl_level_names[i];
    return NULL;
}

static void level_free(struct pl_level *l)
{
    free(l->inst);
    free(l->inst_os);
    free(l->inst_npus);
    memset(l, 0, sizeof(*l));
}

void pl_hier_free(struct pl_hier *h)
{
    if (!h)
        return;
    for (unsigned k = 0; k < h->nlevels; k++)
        level_free(&h->lv[k]);
    free(h->pu_os);
    memset(h, 0, sizeof(*h));
}

int pl_hier_find(const struct pl_hier *h, const char *name)
{
    const char *want = canonical_name(name);
    if (!want)
        want = name;
    size_t n = strlen(want);
    for (unsigned k = 0; k < h->nlevels; k++) {
        /* the name, or one part of a merged name ("package+numa") */
        for (const char *p = h->lv[k].name; p && *p;) {
            const char *end = strchr(p, '+');
            size_t m = end ? (size_t)(end - p) : strlen(p);
            if (m == n && !strncmp(p, want, n))
                return (int)k;
            p = end ? end + 1 : NULL;
        }
    }
    return -1;
}

/* Renumbers a level's instances by the first PU (logical order) they hold and fills inst_npus; raw[] holds any
 * numbering < nraw, raw_os the OS index of each raw instance. */
static int level_normalise(struct pl_level *l, unsigned npus, const unsigned *raw, const unsigned *raw_os,
                           unsigned nraw)
{
    unsigned *map = malloc(nraw * sizeof(*map));
    l->inst = malloc(npus * sizeof(*l->inst));
    l->inst_os = malloc(nraw * sizeof(*l->inst_os));
    l->inst_npus = calloc(nraw, sizeof(*l->inst_npus));
    if (!map || !l->inst || !l->inst_os || !l->inst_npus) {
        free(map);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < nraw; i++)
        map[i] = UINT32_MAX;
    unsigned n = 0;
    for (unsigned p = 0; p < npus; p++) {
        unsigned r = raw[p];
        if (map[r] == UINT32_MAX) {
            map[r] = n;
            l->inst_os[n] = raw_os ? raw_os[r] : n;
            n++;
        }
        l->inst[p] = map[r];
        l->inst_npus[map[r]]++;
    }
    l->ninst = n;
    free(map);
    return 0;
}

int pl_hier_uniform(struct pl_hier *h, const char *const *names, const unsigned *arity, unsigned nlevels,
                    unsigned pus_per_leaf, char *why, size_t len)
{
    memset(h, 0, sizeof(*h));
    if (nlevels == 0 || nlevels > PL_MAX_LEVELS || pus_per_leaf == 0)
        return ib_why(why, len, -EINVAL, "a hierarchy needs 1-%d levels and at least one PU per instance",
                      PL_MAX_LEVELS);
    uint64_t leaves = 1;
    for (unsigned k = 0; k < nlevels; k++) {
        if (arity[k] == 0)
            return ib_why(why, len, -EINVAL, "level %s has arity 0", names[k]);
        leaves *= arity[k];
        if (leaves * pus_per_leaf > 65536)
            return ib_why(why, len, -E2BIG, "more than 65536 PUs");
    }
    h->npus = (unsigned)(leaves * pus_per_leaf);
    h->pu_os = malloc(h->npus * sizeof(*h->pu_os));
    unsigned *raw = malloc(h->npus * sizeof(*raw));
    if (!h->pu_os || !raw) {
        free(raw);
        pl_hier_free(h);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned p = 0; p < h->npus; p++)
        h->pu_os[p] = (int)p;
    uint64_t per = leaves * pus_per_leaf; /* PUs per instance of the level above level 0: the whole machine */
    for (unsigned k = 0; k < nlevels; k++) {
        per /= arity[k];
        for (unsigned p = 0; p < h->npus; p++)
            raw[p] = (unsigned)(p / per);
        struct pl_level *l = &h->lv[k];
        snprintf(l->name, sizeof(l->name), "%s", names[k]);
        h->nlevels = k + 1;
        if (level_normalise(l, h->npus, raw, NULL, (unsigned)(h->npus / per)) < 0) {
            free(raw);
            pl_hier_free(h);
            return ib_why(why, len, -ENOMEM, "out of memory");
        }
    }
    free(raw);
    return 0;
}

/* ---- from hwloc ------------------------------------------------------------------------------------------------ */

/* A NUMA node without CPUs of its own (memory only: HBM, CXL, NVDIMM) or with the same CPUs as an earlier node
 * (KNL's MCDRAM beside DDR): for thread placement it is not a separate instance. */
static bool numa_alias(hwloc_topology_t t, hwloc_obj_t o, int i)
{
    if (hwloc_bitmap_iszero(o->cpuset))
        return true;
    for (int j = 0; j < i; j++)
        if (hwloc_bitmap_isequal(hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)j)->cpuset, o->cpuset))
            return true;
    return false;
}

/* One known level of t as a partition of the PUs; -ENOENT when t has none of that type, -EINVAL when its objects
 * do not cover every PU exactly once. */
static int level_from_topo(hwloc_topology_t t, unsigned npus, unsigned which, struct pl_level *l, char *why,
                           size_t len)
{
    memset(l, 0, sizeof(*l));
    int nobj = hwloc_get_nbobjs_by_type(t, level_types[which]);
    if (nobj <= 0)
        return -ENOENT;
    unsigned *raw = malloc(npus * sizeof(*raw));
    unsigned *raw_os = malloc((size_t)nobj * sizeof(*raw_os));
    if (!raw || !raw_os) {
        free(raw);
        free(raw_os);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned p = 0; p < npus; p++)
        raw[p] = UINT32_MAX;
    int rc = 0;
    uint64_t size = 0;
    for (int i = 0; i < nobj && rc == 0; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t, level_types[which], (unsigned)i);
        raw_os[i] = level_types[which] == HWLOC_OBJ_NUMANODE ? o->os_index : (unsigned)i;
        if (level_types[which] == HWLOC_OBJ_NUMANODE && numa_alias(t, o, i))
            continue; /* CPU placement cannot tell it from the first node with these CPUs */
        if (level_types[which] == HWLOC_OBJ_NUMANODE)
            size = size ? size : o->attr->numanode.local_memory;
        else if (hwloc_obj_type_is_cache(level_types[which]))
            size = size ? size : o->attr->cache.size;
        hwloc_obj_t pu = NULL;
        while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(t, o->cpuset, HWLOC_OBJ_PU, pu)) != NULL) {
            if (pu->logical_index >= npus)
                continue;
            if (raw[pu->logical_index] != UINT32_MAX) {
                rc = ib_why(why, len, -EINVAL, "PU %u is in two %s objects", pu->os_index, pl_level_names[which]);
                break;
            }
            raw[pu->logical_index] = (unsigned)i;
        }
    }
    for (unsigned p = 0; p < npus && rc == 0; p++)
        if (raw[p] == UINT32_MAX)
            rc = ib_why(why, len, -EINVAL, "PU %d is in no %s: that level does not cover the machine",
                        hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, p)->os_index, pl_level_names[which]);
    if (rc == 0) {
        snprintf(l->name, sizeof(l->name), "%s", pl_level_names[which]);
        l->size = size;
        if (level_normalise(l, npus, raw, raw_os, (unsigned)nobj) < 0)
            rc = ib_why(why, len, -ENOMEM, "out of memory");
    }
    free(raw);
    free(raw_os);
    if (rc < 0)
        level_free(l);
    return rc;
}

static bool same_partition(const struct pl_level *a, const struct pl_level *b, unsigned npus)
{
    return a->ninst == b->ninst && !memcmp(a->inst, b->inst, npus * sizeof(*a->inst));
}

static unsigned max_npus(const struct pl_level *l)
{
    unsigned m = 0;
    for (unsigned i = 0; i < l->ninst; i++)
        m = l->inst_npus[i] > m ? l->inst_npus[i] : m;
    return m;
}

/* Every instance of `fine` inside one instance of `coarse`. */
static bool nested(const struct pl_level *coarse, const struct pl_level *fine, unsigned npus)
{
    unsigned *parent = malloc(fine->ninst * sizeof(*parent));
    if (!parent)
        return false;
    for (unsigned i = 0; i < fine->ninst; i++)
        parent[i] = UINT32_MAX;
    bool ok = true;
    for (unsigned p = 0; p < npus && ok; p++) {
        unsigned *slot = &parent[fine->inst[p]];
        if (*slot == UINT32_MAX)
            *slot = coarse->inst[p];
        else if (*slot != coarse->inst[p])
            ok = false;
    }
    free(parent);
    return ok;
}

/* The levels of t: the known ones named in `want` (want[i] true), each as a partition, unmerged, in known order. */
static int collect(hwloc_topology_t t, unsigned npus, const bool *want, struct pl_level *out, unsigned *nout,
                   char *why, size_t len)
{
    *nout = 0;
    for (unsigned i = 0; i < NKNOWN; i++) {
        if (!want[i])
            continue;
        int rc = level_from_topo(t, npus, i, &out[*nout], why, len);
        if (rc == -ENOENT)
            continue;
        if (rc < 0) {
            for (unsigned k = 0; k < *nout; k++)
                level_free(&out[k]);
            *nout = 0;
            return rc;
        }
        (*nout)++;
    }
    return 0;
}

static int pus_of(const struct topo *t, struct pl_hier *h, char *why, size_t len)
{
    h->npus = topo_npus(t);
    h->pu_os = malloc(h->npus * sizeof(*h->pu_os));
    if (!h->pu_os)
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned p = 0; p < h->npus; p++)
        h->pu_os[p] = topo_pu_os(t, p);
    return 0;
}

int pl_hier_from_topo(const struct topo *t, const char *concerns, struct pl_hier *h, char *why, size_t len)
{
    memset(h, 0, sizeof(*h));
    bool want[NKNOWN] = {false};
    bool by_default = !concerns || !*concerns;
    if (by_default) {
        for (unsigned i = 0; i < NKNOWN; i++)
            want[i] = true;
    } else {
        char buf[512];
        if (strlen(concerns) >= sizeof(buf))
            return ib_why(why, len, -EINVAL, "--concerns is too long");
        snprintf(buf, sizeof(buf), "%s", concerns);
        char *save = NULL;
        unsigned named = 0;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), named++) {
            const char *name = canonical_name(tok);
            if (!name)
                return ib_why(why, len, -EINVAL, "unknown concern '%s' (known: package, die, numa, l3, l2, l1, core)",
                              tok);
            for (unsigned i = 0; i < NKNOWN; i++)
                if (!strcmp(name, pl_level_names[i]))
                    want[i] = true;
        }
        if (!named)
            return ib_why(why, len, -EINVAL, "--concerns '%s' names no level", concerns);
    }
    hwloc_topology_t ht = topo_hwloc(t);
    int rc = pus_of(t, h, why, len);
    if (rc < 0)
        return rc;
    struct pl_level lv[NKNOWN];
    unsigned n = 0;
    rc = collect(ht, h->npus, want, lv, &n, why, len);
    if (rc < 0) {
        pl_hier_free(h);
        return rc;
    }
    if (!by_default)
        for (unsigned i = 0; i < NKNOWN; i++) {
            bool found = false;
            for (unsigned k = 0; k < n; k++)
                found |= !strcmp(lv[k].name, pl_level_names[i]);
            if (want[i] && !found) {
                for (unsigned k = 0; k < n; k++)
                    level_free(&lv[k]);
                pl_hier_free(h);
                return ib_why(why, len, -EINVAL, "this topology has no %s level (drop it from --concerns)",
                              pl_level_names[i]);
            }
        }
    /* merge equal partitions into the first; by default drop levels that share nothing or have one instance */
    bool keep[NKNOWN];
    for (unsigned k = 0; k < n; k++) {
        keep[k] = !by_default || (lv[k].ninst > 1 && max_npus(&lv[k]) > 1);
        for (unsigned j = 0; j < k && keep[k]; j++)
            if (keep[j] && same_partition(&lv[j], &lv[k], h->npus)) {
                size_t used = strlen(lv[j].name);
                snprintf(lv[j].name + used, sizeof(lv[j].name) - used, "+%s", lv[k].name);
                if (!lv[j].size)
                    lv[j].size = lv[k].size;
                keep[k] = false;
            }
    }
    /* coarse to fine: fewer instances first (a stable insertion sort keeps the known order among equals) */
    for (unsigned k = 0; k < n; k++) {
        if (!keep[k]) {
            level_free(&lv[k]);
            continue;
        }
        unsigned pos = h->nlevels;
        while (pos > 0 && h->lv[pos - 1].ninst > lv[k].ninst) {
            h->lv[pos] = h->lv[pos - 1];
            pos--;
        }
        h->lv[pos] = lv[k];
        h->nlevels++;
    }
    for (unsigned k = 1; k < h->nlevels; k++)
        if (!nested(&h->lv[k - 1], &h->lv[k], h->npus)) {
            rc = ib_why(why, len, -EINVAL, "levels %s and %s cross (an instance of one spans two of the other): "
                        "leave one out of --concerns", h->lv[k - 1].name, h->lv[k].name);
            pl_hier_free(h);
            return rc;
        }
    return 0;
}

int pl_hier_levels(const struct topo *t, struct pl_hier *h, char *why, size_t len)
{
    memset(h, 0, sizeof(*h));
    bool want[NKNOWN];
    for (unsigned i = 0; i < NKNOWN; i++)
        want[i] = true;
    int rc = pus_of(t, h, why, len);
    if (rc == 0)
        rc = collect(topo_hwloc(t), h->npus, want, h->lv, &h->nlevels, why, len);
    if (rc < 0)
        pl_hier_free(h);
    return rc;
}

/* ---- distances -------------------------------------------------------------------------------------------------- */

int pl_distances_parse(const char *text, double **d, unsigned *n, char *why, size_t len)
{
    *d = NULL;
    *n = 0;
    json_error_t jerr;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc)
        return ib_why(why, len, -EINVAL, "not JSON (line %d: %s)", jerr.line, jerr.text);
    json_t *m = json_is_object(doc) ? json_object_get(doc, "matrix") : doc;
    int rc = 0;
    size_t rows = json_is_array(m) ? json_array_size(m) : 0;
    if (!json_is_array(m) || rows == 0 || rows > 1024) {
        rc = ib_why(why, len, -EINVAL,
                    "want a square matrix of 1-1024 rows (an array of arrays, or {\"matrix\": ...})");
        goto out;
    }
    double *v = malloc(rows * rows * sizeof(*v));
    if (!v) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < rows && rc == 0; i++) {
        json_t *row = json_array_get(m, i);
        if (!json_is_array(row) || json_array_size(row) != rows) {
            rc = ib_why(why, len, -EINVAL, "row %zu has %zu entries, want %zu (a square matrix)", i,
                        json_is_array(row) ? json_array_size(row) : 0, rows);
            break;
        }
        for (size_t j = 0; j < rows; j++) {
            json_t *x = json_array_get(row, j);
            double val = json_is_number(x) ? json_number_value(x) : NAN;
            if (!isfinite(val) || val <= 0) {
                rc = ib_why(why, len, -EINVAL, "entry [%zu][%zu] is not a positive number", i, j);
                break;
            }
            v[i * rows + j] = val;
        }
    }
    for (size_t i = 0; i < rows && rc == 0; i++)
        for (size_t j = 0; j < rows; j++)
            if (v[i * rows + j] < v[i * rows + i]) {
                rc = ib_why(why, len, -EINVAL, "entry [%zu][%zu] = %g is below the diagonal's %g: a node is nearest "
                            "to itself", i, j, v[i * rows + j], v[i * rows + i]);
                break;
            }
    if (rc < 0) {
        free(v);
    } else {
        *d = v;
        *n = (unsigned)rows;
    }
out:
    json_decref(doc);
    return rc;
}

int pl_distances_load(const char *path, double **d, unsigned *n, char *why, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return ib_why(why, len, -EINVAL, "cannot read distances file %s: %s", path, strerror(errno));
    char *text = NULL;
    size_t cap = 0, used = 0;
    int rc = 0;
    for (;;) {
        if (used + 4096 + 1 > cap) {
            if (cap >= 16 * IB_MIB) {
                rc = ib_why(why, len, -EINVAL, "distances file %s is larger than 16 MiB", path);
                break;
            }
            char *nt = realloc(text, cap ? cap * 2 : 8192);
            if (!nt) {
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                break;
            }
            text = nt;
            cap = cap ? cap * 2 : 8192;
        }
        size_t got = fread(text + used, 1, cap - used - 1, f);
        used += got;
        if (got == 0)
            break;
    }
    if (rc == 0 && ferror(f))
        rc = ib_why(why, len, -EIO, "cannot read distances file %s", path);
    fclose(f);
    if (rc == 0) {
        text[used] = 0;
        char inner[256];
        rc = pl_distances_parse(text, d, n, inner, sizeof(inner));
        if (rc < 0)
            ib_why(why, len, rc, "distances file %s: %s", path, inner);
    }
    free(text);
    return rc;
}

/* ---- the machine ------------------------------------------------------------------------------------------------ */

void pl_machine_free(struct pl_machine *m)
{
    if (!m)
        return;
    topo_destroy(m->topo);
    free(m->node_os);
    free(m->dist);
    memset(m, 0, sizeof(*m));
}

/* hwloc's latency matrix between NUMA nodes, by node logical index; none is not an error. */
static int topo_distances(struct pl_machine *m, char *why, size_t len)
{
    hwloc_topology_t t = topo_hwloc(m->topo);
    unsigned nr = 1;
    struct hwloc_distances_s *hd = NULL;
    if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &hd, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
        nr == 0) {
        snprintf(m->dist_source, sizeof(m->dist_source), "none: the topology has no NUMA distance matrix");
        return 0;
    }
    int rc = 0;
    if (hd->nbobjs != m->nnodes) {
        snprintf(m->dist_source, sizeof(m->dist_source), "none: hwloc's matrix covers %u of %u nodes", hd->nbobjs,
                 m->nnodes);
    } else if (!(m->dist = malloc((size_t)m->nnodes * m->nnodes * sizeof(*m->dist)))) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
    } else {
        for (unsigned i = 0; i < hd->nbobjs; i++)
            for (unsigned j = 0; j < hd->nbobjs; j++)
                m->dist[hd->objs[i]->logical_index * m->nnodes + hd->objs[j]->logical_index] =
                    (double)hd->values[i * hd->nbobjs + j];
        const char *name = hwloc_distances_get_name(t, hd);
        snprintf(m->dist_source, sizeof(m->dist_source), "hwloc %s", name ? name : "latency matrix");
    }
    hwloc_distances_release(t, hd);
    return rc;
}

int pl_machine_load(struct pl_machine *m, const char *spec, const char *dist_file, char *why, size_t len)
{
    memset(m, 0, sizeof(*m));
    if (!spec)
        spec = "live";
    if (strlen(spec) >= sizeof(m->spec))
        return ib_why(why, len, -EINVAL, "--topology is too long");
    snprintf(m->spec, sizeof(m->spec), "%s", spec);
    const char *arg;
    char path[4096];
    int rc;
    if (!strcmp(spec, "live")) {
        m->kind = "live";
        arg = NULL;
    } else if (!strncmp(spec, "synthetic:", 10)) {
        m->kind = "synthetic";
        arg = spec + 10;
        if (!*arg)
            return ib_why(why, len, -EINVAL, "empty synthetic description (e.g. synthetic:'pack:2 core:4 pu:2')");
    } else {
        m->kind = "xml";
        struct stat st;
        if (stat(spec, &st) != 0 || !S_ISREG(st.st_mode))
            return ib_why(why, len, -EINVAL, "--topology %s: no such file (want live, an hwloc XML file or "
                          "synthetic:STRING)", spec);
        if (!realpath(spec, path)) /* topo_load takes a path starting with '/' as XML, whatever its name */
            return ib_why(why, len, -EINVAL, "--topology %s: %s", spec, strerror(errno));
        arg = path;
    }
    char inner[256];
    rc = topo_load(&m->topo, arg, inner, sizeof(inner));
    if (rc < 0) {
        ib_why(why, len, rc == -ENOMEM ? rc : -EINVAL, "%s", inner);
        pl_machine_free(m);
        return rc == -ENOMEM ? rc : -EINVAL;
    }
    hwloc_topology_t t = topo_hwloc(m->topo);
    int nn = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    m->nnodes = nn > 0 ? (unsigned)nn : 0;
    m->node_os = calloc(m->nnodes ? m->nnodes : 1, sizeof(*m->node_os));
    if (!m->node_os) {
        pl_machine_free(m);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned i = 0; i < m->nnodes; i++)
        m->node_os[i] = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i)->os_index;
    if (dist_file) {
        unsigned n = 0;
        rc = pl_distances_load(dist_file, &m->dist, &n, why, len);
        if (rc == 0 && n != m->nnodes)
            rc = ib_why(why, len, -EINVAL, "distances file %s has %u rows but the topology has %u NUMA node(s)",
                        dist_file, n, m->nnodes);
        if (rc == 0)
            snprintf(m->dist_source, sizeof(m->dist_source), "file %s", dist_file);
    } else {
        rc = topo_distances(m, why, len);
    }
    if (rc < 0)
        pl_machine_free(m);
    return rc;
}
