/* pl_provision.c - provisioning advice (pl_provision.h).  Rules, and why:
 * - pressure = max(0, caused) / 100 when caused is told apart from 0, else 0: a figure within its own noise of 0 is
 *   not a demand to provision for (it is shown with its se all the same).
 * - sensitivity = 1 - tolerated / 100: an application that breaks at 20 % of a resource's pressure needs that
 *   resource protected (or larger) as much as one that takes 80 % of it needs it larger.
 * - score = pressure + sensitivity (0-2), ranked descending, ties by name; candidates score >= 0.25 (a quarter of
 *   the resource pressed, or a tolerance of 75 % or less).  Skipped SoIs are listed, never ranked: unmeasured is not
 *   safe.
 * - A catalogue type relieves a resource when its capacity there exceeds the baseline's (factor > 1); the same work
 *   on a larger capacity is a smaller share of it (the iBench paper §V.B: triple-channel memory and a 10 GbE NIC for
 *   memcached's memory-bandwidth and network pressure), so its pressure there becomes caused / factor.  Types are
 *   ranked by how many of the top candidates they relieve, then by the product of those factors, then by cost
 *   (lower first), then by name; a type relieving none of them is not advised. */
#define _GNU_SOURCE /* qsort_r */
#include "pl_provision.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"

static int cmp_res(const void *a, const void *b)
{
    const struct pl_prov_res *x = a, *y = b;
    if (x->measured != y->measured)
        return x->measured ? -1 : 1;
    if (x->measured && x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return strcmp(x->soi, y->soi);
}

static int cmp_adv(const void *a, const void *b, void *ctx)
{
    const struct pl_catalog *g_cat = ctx;
    const struct pl_prov_advice *x = a, *y = b;
    if (x->relieved != y->relieved)
        return x->relieved > y->relieved ? -1 : 1;
    if (x->gain != y->gain)
        return x->gain > y->gain ? -1 : 1;
    double cx = g_cat->t[x->type].cost, cy = g_cat->t[y->type].cost;
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return strcmp(g_cat->t[x->type].name, g_cat->t[y->type].name);
}

double pl_catalog_factor(const struct pl_catalog_type *t, const char *soi)
{
    for (unsigned i = 0; i < t->n; i++)
        if (strcmp(t->soi[i], soi) == 0)
            return t->factor[i];
    return 1.0;
}

int pl_provision(const struct profile *p, const struct pl_catalog *cat, unsigned top, struct pl_prov *out, char *why,
                 size_t len)
{
    memset(out, 0, sizeof *out);
    if (!(out->res = calloc(p->nsois ? p->nsois : 1, sizeof *out->res)))
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < p->nsois; i++) {
        const struct profile_soi *s = &p->sois[i];
        struct pl_prov_res *r = &out->res[out->nres++];
        r->soi = s->soi;
        r->measured = s->status == PROFILE_MEASURED;
        r->reason = s->reason;
        r->caused = r->caused_se = r->tolerated = NAN;
        if (!r->measured)
            continue;
        out->nranked++;
        r->tolerated = profile_soi_safe_tolerated(s);
        if (s->have_caused)
            r->caused = s->caused.value, r->caused_se = s->caused.se;
        r->distinguishable = s->have_caused && isfinite(s->caused.value) && s->caused.distinguishable != 0;
        r->pressure = r->distinguishable ? fmax(0.0, fmin(100.0, r->caused)) / 100 : 0;
        r->sensitivity = 1 - r->tolerated / 100;
        r->score = r->pressure + r->sensitivity;
        r->candidate = r->score >= PL_PROV_THRESHOLD;
    }
    if (!out->nranked) {
        pl_prov_free(out);
        return ib_why(why, len, -EINVAL, "%s: the profile has no measured SoI", p->name ? p->name : "?");
    }
    qsort(out->res, out->nres, sizeof *out->res, cmp_res);
    unsigned ncand = 0;
    while (ncand < out->nranked && out->res[ncand].candidate)
        ncand++;
    out->top = top < ncand ? top : ncand;
    if (!cat || !out->top)
        return 0;
    if (!(out->adv = calloc(cat->n ? cat->n : 1, sizeof *out->adv))) {
        pl_prov_free(out);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned t = 0; t < cat->n; t++) {
        struct pl_prov_advice a = {t, 0, 1.0};
        for (unsigned k = 0; k < out->top; k++) {
            double f = pl_catalog_factor(&cat->t[t], out->res[k].soi);
            if (f > 1)
                a.relieved++, a.gain *= f;
        }
        if (a.relieved)
            out->adv[out->nadv++] = a;
    }
    qsort_r(out->adv, out->nadv, sizeof *out->adv, cmp_adv, (void *)cat);
    return 0;
}

void pl_prov_free(struct pl_prov *out)
{
    free(out->res);
    free(out->adv);
    memset(out, 0, sizeof *out);
}

static int bad(json_t *doc, struct pl_catalog *cat, int rc)
{
    json_decref(doc);
    pl_catalog_free(cat);
    return rc;
}

int pl_catalog_read(const char *path, struct pl_catalog *cat, char *why, size_t len)
{
    memset(cat, 0, sizeof *cat);
    json_error_t e;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!doc)
        return ib_why(why, len, e.line < 0 ? -ENOENT : -EINVAL, "%s: %s", path, e.text);
    const char *k;
    json_t *v, *types = json_object_get(doc, "types"), *base = json_object_get(doc, "baseline");
    if (!json_is_object(doc))
        return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: a JSON object expected", path));
    json_object_foreach(doc, k, v) if (strcmp(k, "version") && strcmp(k, "baseline") && strcmp(k, "types"))
        return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: unknown key '%s'", path, k));
    if (!json_is_integer(json_object_get(doc, "version")) || json_integer_value(json_object_get(doc, "version")) != 1)
        return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: version: 1 expected", path));
    if (!json_is_string(base) || !(cat->baseline = strdup(json_string_value(base))))
        return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: baseline: the baseline machine's name expected", path));
    if (!json_is_array(types) || !json_array_size(types))
        return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: types: a non-empty array expected", path));
    if (!(cat->t = calloc(json_array_size(types), sizeof *cat->t)))
        return bad(doc, cat, ib_why(why, len, -ENOMEM, "out of memory"));
    size_t i;
    json_t *t;
    json_array_foreach(types, i, t)
    {
        struct pl_catalog_type *ct = &cat->t[cat->n];
        json_t *name = json_object_get(t, "name"), *rel = json_object_get(t, "relieves"),
               *cost = json_object_get(t, "cost");
        if (!json_is_object(t))
            return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: types[%zu]: an object expected", path, i));
        json_object_foreach(t, k, v) if (strcmp(k, "name") && strcmp(k, "relieves") && strcmp(k, "cost"))
            return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: types[%zu]: unknown key '%s'", path, i, k));
        if (!json_is_string(name) || !json_string_length(name))
            return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: types[%zu].name: a name expected", path, i));
        for (unsigned j = 0; j < cat->n; j++)
            if (!strcmp(cat->t[j].name, json_string_value(name)))
                return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: types[%zu].name: '%s' named twice", path, i,
                                            json_string_value(name)));
        if (!json_is_number(cost) || !(json_number_value(cost) > 0))
            return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: types[%zu].cost: a number > 0 expected", path, i));
        if (!json_is_object(rel))
            return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: types[%zu].relieves: an object {SOI: factor} expected",
                                        path, i));
        if (!(ct->name = strdup(json_string_value(name))))
            return bad(doc, cat, ib_why(why, len, -ENOMEM, "out of memory"));
        cat->n++;
        ct->cost = json_number_value(cost);
        size_t nr = json_object_size(rel);
        ct->soi = calloc(nr ? nr : 1, sizeof *ct->soi);
        ct->factor = calloc(nr ? nr : 1, sizeof *ct->factor);
        if (!ct->soi || !ct->factor)
            return bad(doc, cat, ib_why(why, len, -ENOMEM, "out of memory"));
        json_object_foreach(rel, k, v)
        {
            if (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1e6)
                return bad(doc, cat, ib_why(why, len, -EINVAL, "%s: types[%zu].relieves.%s: a factor > 0 expected",
                                            path, i, k));
            if (!(ct->soi[ct->n] = strdup(k)))
                return bad(doc, cat, ib_why(why, len, -ENOMEM, "out of memory"));
            ct->factor[ct->n++] = json_number_value(v);
        }
    }
    json_decref(doc);
    return 0;
}

void pl_catalog_free(struct pl_catalog *cat)
{
    for (unsigned i = 0; cat->t && i < cat->n; i++) {
        for (unsigned j = 0; j < cat->t[i].n; j++)
            free(cat->t[i].soi[j]);
        free(cat->t[i].soi);
        free(cat->t[i].factor);
        free(cat->t[i].name);
    }
    free(cat->t);
    free(cat->baseline);
    memset(cat, 0, sizeof *cat);
}
