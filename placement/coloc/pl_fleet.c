/* pl_fleet.c - fleet and arrivals files (pl_fleet.h).  Rules: every key is known or refused (a typo must not pass
 * as a default); numbers are whole CPUs and seconds, GiB of memory; a machine's tenants must fit it. */
#define _GNU_SOURCE
#include "pl_fleet.h"

#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"

#define GIB 1073741824.0

/* The profile at path (relative to base's directory), read once. */
static int profile_at(struct pl_fleet *fl, const char *base, const char *rel, const struct profile **out, char *why,
                      size_t len)
{
    char path[4096];
    if (rel[0] == '/') {
        snprintf(path, sizeof path, "%s", rel);
    } else {
        char *b = strdup(base);
        if (!b)
            return ib_why(why, len, -ENOMEM, "out of memory");
        snprintf(path, sizeof path, "%s/%s", dirname(b), rel);
        free(b);
    }
    for (unsigned i = 0; i < fl->nprof; i++)
        if (strcmp(fl->prof_path[i], path) == 0) {
            *out = fl->prof[i];
            return 0;
        }
    struct profile **np = realloc(fl->prof, (fl->nprof + 1) * sizeof *np);
    if (np)
        fl->prof = np;
    char **pp = np ? realloc(fl->prof_path, (fl->nprof + 1) * sizeof *pp) : NULL;
    if (pp)
        fl->prof_path = pp;
    struct profile *p = pp ? calloc(1, sizeof *p) : NULL;
    char *dup = p ? strdup(path) : NULL;
    if (!dup) {
        free(p);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    int rc = profile_read(path, p, why, len);
    if (rc < 0) {
        free(p), free(dup);
        return rc;
    }
    fl->prof[fl->nprof] = p, fl->prof_path[fl->nprof++] = dup;
    *out = p;
    return 0;
}

static int add_app(struct pl_fleet *fl, const struct profile *p, unsigned cpus, double mem, unsigned arrival,
                   unsigned work, unsigned *idx, char *why, size_t len)
{
    struct pl_sim_app *a = realloc(fl->f.app, (fl->f.napps + 1) * sizeof *a);
    if (!a)
        return ib_why(why, len, -ENOMEM, "out of memory");
    fl->f.app = a;
    struct pl_sim_app *ap = &a[fl->f.napps];
    memset(ap, 0, sizeof *ap);
    ap->p = p, ap->cpus = cpus, ap->mem = mem, ap->arrival = arrival, ap->duration = work;
    ap->qos = isfinite(p->qos) && p->qos > 0 ? p->qos : 0.9;
    ap->machine = -1, ap->rate = 1, ap->worst = 1;
    if (idx)
        *idx = fl->f.napps;
    fl->f.napps++;
    return 0;
}

int pl_fleet_add(struct pl_fleet *fl, const char *profile_path, unsigned cpus, double mem_bytes, unsigned arrival,
                 unsigned work_s, unsigned *idx, char *why, size_t len)
{
    const struct profile *p;
    int rc = profile_at(fl, "./x", profile_path, &p, why, len);
    return rc < 0 ? rc : add_app(fl, p, cpus, mem_bytes, arrival, work_s, idx, why, len);
}

/* Refuses keys outside `known` (NULL-terminated). */
static int only_keys(json_t *o, const char *const *known, const char *file, const char *where, char *why, size_t len)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        unsigned i = 0;
        while (known[i] && strcmp(known[i], k) != 0)
            i++;
        if (!known[i])
            return ib_why(why, len, -EINVAL, "%s: %s: unknown key '%s'", file, where, k);
    }
    return 0;
}

/* A whole number in [lo, hi] at o[key]; required. */
static int get_uint(json_t *o, const char *key, unsigned lo, unsigned hi, unsigned *out, const char *file,
                    const char *where, char *why, size_t len)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return ib_why(why, len, -EINVAL, "%s: %s.%s: a whole number in %u-%u expected", file, where, key, lo, hi);
    *out = (unsigned)json_integer_value(v);
    return 0;
}

static int get_gib(json_t *o, const char *key, double *bytes, const char *file, const char *where, char *why,
                   size_t len)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1e6)
        return ib_why(why, len, -EINVAL, "%s: %s.%s: a number of GiB > 0 expected", file, where, key);
    *bytes = json_number_value(v) * GIB;
    return 0;
}

static json_t *load(const char *path, const char *list, const char *const *top, char *why, size_t len, int *rc)
{
    json_error_t e;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!doc) {
        *rc = ib_why(why, len, -EINVAL, "%s: %s (line %d)", path, e.text, e.line);
        return NULL;
    }
    json_t *ver = json_object_get(doc, "version");
    if (!json_is_object(doc) || (*rc = only_keys(doc, top, path, "top level", why, len)) < 0) {
        if (!json_is_object(doc))
            *rc = ib_why(why, len, -EINVAL, "%s: a JSON object expected", path);
    } else if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        *rc = ib_why(why, len, -EINVAL, "%s: version: 1 expected", path);
    } else if (!json_is_array(json_object_get(doc, list)) || json_array_size(json_object_get(doc, list)) == 0) {
        *rc = ib_why(why, len, -EINVAL, "%s: %s: a non-empty array expected", path, list);
    } else {
        return doc;
    }
    json_decref(doc);
    return NULL;
}

int pl_fleet_read(const char *path, struct pl_fleet *fl, char *why, size_t len)
{
    memset(fl, 0, sizeof *fl);
    static const char *const top[] = {"version", "machines", NULL};
    static const char *const mkeys[] = {"name", "cpus", "memory_gib", "topology", "tenants", NULL};
    static const char *const tkeys[] = {"profile", "cpus", "memory_gib", NULL};
    int rc = 0;
    json_t *doc = load(path, "machines", top, why, len, &rc);
    if (!doc)
        return rc;
    json_t *ms = json_object_get(doc, "machines");
    size_t nm = json_array_size(ms);
    if (!(fl->f.m = calloc(nm, sizeof *fl->f.m))) {
        json_decref(doc);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    size_t i;
    json_t *m;
    json_array_foreach(ms, i, m)
    {
        char where[64];
        snprintf(where, sizeof where, "machines[%zu]", i);
        struct pl_sim_machine *pm = &fl->f.m[i];
        json_t *name = json_object_get(m, "name"), *topo = json_object_get(m, "topology");
        unsigned cpus = 0;
        if (!json_is_object(m))
            rc = ib_why(why, len, -EINVAL, "%s: %s: an object expected", path, where);
        else if ((rc = only_keys(m, mkeys, path, where, why, len)) < 0)
            break;
        else if (!json_is_string(name) || !json_string_length(name) || json_string_length(name) >= sizeof pm->name)
            rc = ib_why(why, len, -EINVAL, "%s: %s.name: a name of 1-%zu characters expected", path, where,
                        sizeof pm->name - 1);
        else if (topo && !json_is_string(topo))
            rc = ib_why(why, len, -EINVAL, "%s: %s.topology: a string expected", path, where);
        else if ((rc = get_uint(m, "cpus", 1, 65536, &cpus, path, where, why, len)) == 0)
            rc = get_gib(m, "memory_gib", &pm->mem, path, where, why, len);
        if (rc < 0)
            break;
        snprintf(pm->name, sizeof pm->name, "%s", json_string_value(name));
        pm->cpus = cpus;
        for (size_t k = 0; k < i && rc == 0; k++)
            if (strcmp(fl->f.m[k].name, pm->name) == 0)
                rc = ib_why(why, len, -EINVAL, "%s: %s.name: '%s' names machines[%zu] too", path, where, pm->name, k);
        fl->f.nm++;
        json_t *ts = json_object_get(m, "tenants");
        if (rc == 0 && ts && !json_is_array(ts))
            rc = ib_why(why, len, -EINVAL, "%s: %s.tenants: an array expected", path, where);
        size_t j;
        json_t *t;
        json_array_foreach(ts, j, t)
        {
            if (rc < 0)
                break;
            char tw[96];
            snprintf(tw, sizeof tw, "%s.tenants[%zu]", where, j);
            json_t *pf = json_object_get(t, "profile");
            unsigned tc = 0, idx = 0;
            double mem = 0;
            const struct profile *p = NULL;
            if (!json_is_object(t))
                rc = ib_why(why, len, -EINVAL, "%s: %s: an object expected", path, tw);
            else if ((rc = only_keys(t, tkeys, path, tw, why, len)) < 0)
                break;
            else if (!json_is_string(pf))
                rc = ib_why(why, len, -EINVAL, "%s: %s.profile: a path expected", path, tw);
            else if ((rc = get_uint(t, "cpus", 1, 65536, &tc, path, tw, why, len)) == 0 &&
                     (rc = get_gib(t, "memory_gib", &mem, path, tw, why, len)) == 0 &&
                     (rc = profile_at(fl, path, json_string_value(pf), &p, why, len)) == 0)
                rc = add_app(fl, p, tc, mem, 0, 1, &idx, why, len);
            if (rc < 0)
                break;
            if (pm->ntenants == PL_SIM_MAX_TENANTS || pm->cpu_used + tc > pm->cpus || pm->mem_used + mem > pm->mem) {
                rc = ib_why(why, len, -EINVAL, "%s: %s: the tenants need more than %s's %u CPUs and %.0f GiB", path,
                            tw, pm->name, pm->cpus, pm->mem / GIB);
                break;
            }
            pm->tenant[pm->ntenants++] = idx;
            pm->cpu_used += tc, pm->mem_used += mem;
            fl->f.app[idx].machine = (int)i;
            fl->ntenants++;
        }
        if (rc < 0)
            break;
    }
    json_decref(doc);
    if (rc < 0)
        pl_fleet_free(fl);
    return rc;
}

int pl_fleet_read_arrivals(const char *path, struct pl_fleet *fl, char *why, size_t len)
{
    static const char *const top[] = {"version", "applications", NULL};
    static const char *const akeys[] = {"profile", "arrival", "work_s", "cpus", "memory_gib", NULL};
    int rc = 0;
    json_t *doc = load(path, "applications", top, why, len, &rc);
    if (!doc)
        return rc;
    size_t i;
    json_t *a;
    unsigned last = 0;
    json_array_foreach(json_object_get(doc, "applications"), i, a)
    {
        char where[64];
        snprintf(where, sizeof where, "applications[%zu]", i);
        json_t *pf = json_object_get(a, "profile");
        unsigned arrival = 0, work = 0, cpus = 0;
        double mem = 0;
        const struct profile *p = NULL;
        if (!json_is_object(a))
            rc = ib_why(why, len, -EINVAL, "%s: %s: an object expected", path, where);
        else if ((rc = only_keys(a, akeys, path, where, why, len)) < 0)
            break;
        else if (!json_is_string(pf))
            rc = ib_why(why, len, -EINVAL, "%s: %s.profile: a path expected", path, where);
        else if ((rc = get_uint(a, "arrival", 0, 100000000, &arrival, path, where, why, len)) == 0 &&
                 (rc = get_uint(a, "work_s", 1, 100000000, &work, path, where, why, len)) == 0 &&
                 (rc = get_uint(a, "cpus", 1, 65536, &cpus, path, where, why, len)) == 0 &&
                 (rc = get_gib(a, "memory_gib", &mem, path, where, why, len)) == 0) {
            if (arrival < last)
                rc = ib_why(why, len, -EINVAL, "%s: %s.arrival: %u is before the one above (%u): sort by arrival",
                            path, where, arrival, last);
            else if ((rc = profile_at(fl, path, json_string_value(pf), &p, why, len)) == 0)
                rc = add_app(fl, p, cpus, mem, arrival, work, NULL, why, len);
        }
        if (rc < 0)
            break;
        last = arrival;
    }
    json_decref(doc);
    return rc;
}

void pl_fleet_free(struct pl_fleet *fl)
{
    for (unsigned i = 0; i < fl->nprof; i++) {
        profile_free(fl->prof[i]);
        free(fl->prof[i]);
        free(fl->prof_path[i]);
    }
    free(fl->prof);
    free(fl->prof_path);
    free(fl->f.m);
    free(fl->f.app);
    memset(fl, 0, sizeof *fl);
}
