/* pl_ext_decide.c - a request's decisions (pl_ext.h).  Rules:
 * - Each node: its tenants (a tenant the store does not hold fails that node with the reason: what runs there
 *   cannot be judged, and unknown is not safe), its room (allocatable; absent: unbounded), plus its assumed tenants
 *   but the pod itself (pl_ext_tenants.h), and the pod's demand from its containers' requests.
 * - The verdict is pl_verdict_of with the interference rule, the margin, the unknown rule and the refusal rule of
 *   the options: place colocate's.  filter keeps "fits" (no tenant), "safe" and "uncertain" nodes (a negative
 *   headroom not established beyond the profiles' uncertainty: pl_coloc.h); the others fail with the verdict's
 *   reason, which names the resource, the figures and their se.
 * - prioritize ranks the nodes filter would keep: uncertain ones after all others, else in the interference
 *   policy's order (pl_sim_safe_before: shared before empty, the fullest, the best fit, less loaded, name); the node
 *   place colocate would choose gets the one top score, so the extender alone reproduces colocate's choice. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_ext.h"
#include "pl_ext_writer.h"

static int answered(int rc) { return rc < 0 ? rc : 1; }

static int set_fail(struct ext_node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_fail(struct ext_node *n, const char *fmt, ...)
{
    free(n->fail);
    va_list ap;
    va_start(ap, fmt);
    int k = vasprintf(&n->fail, fmt, ap);
    va_end(ap);
    if (k < 0) {
        n->fail = NULL;
        return -ENOMEM;
    }
    return 0;
}

/* One tenant more on node i of the fleet: 0 (or the node's fail set), or -ENOMEM. */
static int add_tenant(struct ext_req *r, unsigned i, const struct profile *tp)
{
    struct pl_sim_fleet *f = &r->f;
    struct pl_sim_machine *m = &f->m[i];
    if (m->ntenants >= PL_SIM_MAX_TENANTS - 1)
        return set_fail(&r->nodes[i], "more than %u tenants", PL_SIM_MAX_TENANTS - 1);
    if (f->napps + 1 >= r->cap_apps) {
        struct pl_sim_app *na = realloc(f->app, 2 * r->cap_apps * sizeof *na);
        if (!na)
            return -ENOMEM;
        memset(na + r->cap_apps, 0, r->cap_apps * sizeof *na);
        f->app = na, r->cap_apps *= 2;
    }
    struct pl_sim_app *ap = &f->app[f->napps];
    ap->p = tp, ap->machine = (int)i;
    m->tenant[m->ntenants++] = f->napps++;
    return 0;
}

static const struct profile *tenant_profile(struct pl_extender *x, struct ext_req *r, const char *name, char *why,
                                            size_t len)
{
    struct ext_seen *sn = &r->sn;
    for (unsigned k = 0; k < sn->n; k++) /* interned: the same name is the same pointer */
        if (sn->name[k] == name)
            return sn->p[k];
    const struct profile *p = ext_cache_get(&x->cache, name, r->now, &r->pn, why, len);
    if (p && sn->n < 64)
        sn->name[sn->n] = name, sn->p[sn->n++] = p;
    return p;
}

static unsigned count_of(const struct ninfo *ni, const char *profile)
{
    unsigned c = 0;
    for (unsigned k = 0; k < ni->nten; k++)
        c += ni->ten[k] && !strcmp(ni->ten[k], profile);
    return c;
}

/* The request's nodes by name, for the assumed tenants: an open-addressed table of indices + 1, made when first
 * asked. */
struct by_name {
    struct ext_req *r;
    unsigned *t, nb;
    bool oom;
};

static int find_node(void *ctx, const char *node, const char *profile, unsigned *listed)
{
    struct by_name *bn = ctx;
    struct ext_req *r = bn->r;
    if (!bn->t && !bn->oom) {
        for (bn->nb = 16; bn->nb < 2 * r->nn; bn->nb *= 2)
            ;
        bn->t = calloc(bn->nb, sizeof *bn->t);
        for (unsigned i = 0; bn->t && i < r->nn; i++) {
            unsigned h = (unsigned)ext_hash(r->nodes[i].name) & (bn->nb - 1);
            while (bn->t[h])
                h = (h + 1) & (bn->nb - 1);
            bn->t[h] = i + 1;
        }
        bn->oom = !bn->t;
    }
    if (!bn->t)
        return -1;
    for (unsigned h = (unsigned)ext_hash(node) & (bn->nb - 1); bn->t[h]; h = (h + 1) & (bn->nb - 1)) {
        const struct ext_node *n = &r->nodes[bn->t[h] - 1];
        if (!strcmp(n->name, node)) {
            if (n->fail)
                return -1;
            *listed = count_of(n->ni, profile);
            return (int)bn->t[h] - 1;
        }
    }
    return -1;
}

/* The assumed tenants of these nodes: confirmed ones dropped, expired ones dropped, the rest counted. */
static int assumed_tenants(struct pl_extender *x, struct ext_req *r)
{
    struct by_name bn = {.r = r};
    struct ext_use *use;
    unsigned nuse;
    int rc = ext_assumed_uses(&x->assumed, r->now, r->keyed ? r->key : NULL, find_node, &bn, &use, &nuse);
    if (bn.oom)
        rc = -ENOMEM;
    free(bn.t);
    char why[512];
    for (unsigned u = 0; !rc && u < nuse; u++) {
        unsigned i = use[u].node;
        if (r->nodes[i].fail)
            continue;
        const struct profile *tp = ext_cache_get(&x->cache, use[u].profile, r->now, &r->pn, why, sizeof why);
        if (tp) /* else gone from the store since: a tenant not listed yet is not judged by what is missing */
            rc = add_tenant(r, i, tp);
    }
    ext_uses_free(use, nuse);
    return rc;
}

int ext_fleet(struct pl_extender *x, struct ext_req *r)
{
    struct pl_sim_fleet *f = &r->f;
    f->nm = r->nn;
    f->m = calloc(r->nn ? r->nn : 1, sizeof *f->m);
    r->cap_apps = 1 + r->nn * 4;
    f->app = calloc(r->cap_apps, sizeof *f->app);
    if (!f->m || !f->app)
        return -ENOMEM;
    char why[512];
    for (unsigned i = 0; i < r->nn; i++) {
        struct ext_node *n = &r->nodes[i];
        struct pl_sim_machine *m = &f->m[i];
        size_t nl = strlen(n->name);
        nl = nl < sizeof m->name - 1 ? nl : sizeof m->name - 1;
        memcpy(m->name, n->name, nl);
        m->name[nl] = 0;
        const struct ninfo *ni = n->ni;
        if (!r->by_name && ni->badq) /* the request's Node: malformed (the node state's: failed when read) */
            return answered(ext_bad_request(&r->out, &r->status, "node %.200s: %s", n->name, ni->badq));
        double c = ni ? ni->cpu : -1, mem = ni ? ni->mem : -1;
        m->cpus = c >= 0 ? (unsigned)floor(c) : 1u << 30; /* whole CPUs: the capacity rounded down, demand up */
        m->mem = mem > 0 ? mem : 1e30;
        if (n->fail || !ni->nten)
            continue;
        for (unsigned k = 0; k < ni->nten; k++) {
            const char *t = ni->ten[k];
            const struct profile *tp = t ? tenant_profile(x, r, t, why, sizeof why) : NULL;
            int rc = tp ? add_tenant(r, i, tp)
                        : set_fail(n, "tenant %.64s cannot be judged: %.300s", t ? t : "(not a string)", t ? why : "");
            if (rc < 0)
                return rc;
            if (n->fail)
                break;
        }
    }
    if (x->o.assume_ttl_s) {
        int rc = assumed_tenants(x, r);
        if (rc)
            return rc;
    }
    r->a = f->napps++;
    f->app[r->a].p = r->pp, f->app[r->a].cpus = (unsigned)ceil(r->pod_cpu), f->app[r->a].mem = r->pod_mem;
    f->app[r->a].machine = -1;
    return 0;
}

static bool kept(enum pl_verdict_kind k) { return k == PL_V_FITS || k == PL_V_SAFE || k == PL_V_UNCERTAIN; }

/* Machine i's hash: its room and its tenants' profiles. */
static uint64_t machine_hash(const struct pl_sim_fleet *f, unsigned i)
{
    const struct pl_sim_machine *m = &f->m[i];
    uint64_t h = 1469598103934665603ull;
    const double room[4] = {m->cpus, m->mem, m->cpu_used, m->mem_used};
    const unsigned char *rb = (const unsigned char *)room;
    for (size_t k = 0; k < sizeof room; k++)
        h = (h ^ rb[k]) * 1099511628211ull;
    for (unsigned t = 0; t < m->ntenants; t++)
        h = (h ^ (uintptr_t)f->app[m->tenant[t]].p) * 1099511628211ull;
    return h;
}

static bool machines_alike(const struct pl_sim_fleet *f, unsigned i, unsigned j)
{
    const struct pl_sim_machine *m = &f->m[i], *o = &f->m[j];
    if (o->ntenants != m->ntenants || o->cpus != m->cpus || o->mem != m->mem || o->cpu_used != m->cpu_used ||
        o->mem_used != m->mem_used)
        return false;
    for (unsigned t = 0; t < m->ntenants; t++)
        if (f->app[o->tenant[t]].p != f->app[m->tenant[t]].p)
            return false;
    return true;
}

int ext_decide(struct pl_extender *x, struct ext_req *r)
{
    /* the options are the extender's, the same for every verdict kept (the kept verdicts are per extender) */
    struct pl_coloc_opts co = {.margin = x->o.margin, .pessimistic = x->o.pessimistic,
                               .established = x->o.established};
    struct pl_coloc_opts terse = co;
    terse.terse = true;
    /* nodes alike (the same tenants in the same order, the same room) get the same verdict: it is made once a
     * request (a cluster's nodes repeat a few tenant lists: the DaemonSet writes them sorted) */
    unsigned nn = r->nn, nmemo = 16;
    while (nmemo < 2 * nn)
        nmemo *= 2;
    unsigned *memo = calloc(nmemo, sizeof *memo); /* index + 1 of the first node of a verdict */
    uint64_t *mkey = malloc((nn ? nn : 1) * sizeof *mkey);
    r->uv = malloc((nn + 1) * sizeof *r->uv);
    r->order = malloc(2 * (nn ? nn : 1) * sizeof *r->order);
    if (!memo || !mkey || !r->uv || !r->order) {
        free(memo), free(mkey);
        return -ENOMEM;
    }
    r->uv[0].kind = PL_V_UNSAFE, r->uv[0].why[0] = 0, r->uv[0].fit = NAN;
    r->nuv = 1;
    for (unsigned i = 0; i < nn; i++) {
        if (r->nodes[i].fail) {
            r->nodes[i].v = 0;
            continue;
        }
        uint64_t h = mkey[i] = machine_hash(&r->f, i);
        unsigned slot = (unsigned)h & (nmemo - 1), same = 0;
        for (; memo[slot]; slot = (slot + 1) & (nmemo - 1))
            if (mkey[memo[slot] - 1] == h && machines_alike(&r->f, memo[slot] - 1, i)) {
                same = memo[slot];
                break;
            }
        if (same) {
            r->nodes[i].v = r->nodes[same - 1].v;
        } else {
            memo[slot] = i + 1;
            /* filter answers an unsafe node with its reason: the check in full, once; prioritize wants a verdict
             * and a fit, no text: terse (it stops at the first broken resource) */
            struct pl_verdict *v = &r->uv[r->nuv];
            if (!ext_verdict_get(&x->verdicts, &r->f, i, r->a, r->filter, h, ext_cache_freed(&x->cache), v)) {
                pl_verdict_of(&r->f, i, r->a, true, r->filter ? &co : &terse, v);
                ext_verdict_put(&x->verdicts, &r->f, i, r->a, r->filter, h, ext_cache_freed(&x->cache), v);
            }
            r->nodes[i].v = r->nuv++;
        }
        if (kept(r->uv[r->nodes[i].v].kind))
            r->order[r->nok++] = i;
    }
    free(memo), free(mkey);
    return 0;
}

/* prioritize's order: an uncertain node after every safe and empty one, else the interference policy's order */
static bool before(const struct ext_req *r, unsigned i, unsigned j)
{
    const struct pl_verdict *vi = &r->uv[r->nodes[i].v], *vj = &r->uv[r->nodes[j].v];
    bool ui = vi->kind == PL_V_UNCERTAIN, uj = vj->kind == PL_V_UNCERTAIN;
    if (ui != uj)
        return uj;
    return pl_sim_safe_before(&r->f, i, vi->fit, j, vj->fit);
}

/* Stable merge sort of idx[0..n) by before. */
static void sort_by_policy(const struct ext_req *r, unsigned *idx, unsigned *tmp, unsigned n)
{
    if (n < 2)
        return;
    unsigned h = n / 2;
    sort_by_policy(r, idx, tmp, h);
    sort_by_policy(r, idx + h, tmp, n - h);
    unsigned i = 0, j = h, k = 0;
    while (i < h && j < n) /* the right one first only when strictly before: stable */
        tmp[k++] = before(r, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

void ext_rank(struct ext_req *r)
{
    sort_by_policy(r, r->order, r->order + r->nn, r->nok);
}

int ext_assume_top(struct pl_extender *x, struct ext_req *r)
{
    if (!r->keyed || !r->nok)
        return 0;
    const struct ext_node *top = &r->nodes[r->order[0]];
    return ext_assumed_take(&x->assumed, r->now, r->key, top->name, r->pname, count_of(top->ni, r->pname));
}
