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
 *   place colocate would choose gets the one top score, so the extender alone reproduces colocate's choice.
 * - Nodes of one state (the same tenants, the same room) are one group and one machine of the fleet: their tenants
 *   are looked up once and their verdict made (or found among those kept across requests) once, so a node is a
 *   lookup of its group.  A node with assumed tenants has a group of its own. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_ext.h"
#include "pl_ext_writer.h"

static int answered(int rc) { return rc < 0 ? rc : 1; }

const char *ext_node_fail(const struct ext_req *r, const struct ext_node *n)
{
    return n->fail ? n->fail : n->ni && r->gr ? r->gr[n->g].fail : NULL;
}

/* A new group (machine g of the fleet) of ni's room, without tenants: 0 or -ENOMEM. */
static int new_group(struct ext_req *r, const struct ninfo *ni, unsigned *g)
{
    if (r->ng == r->gcap) {
        unsigned nc = r->gcap ? 2 * r->gcap : 64;
        struct ext_group *ng = realloc(r->gr, nc * sizeof *ng);
        if (ng)
            r->gr = ng;
        struct pl_sim_machine *nm = realloc(r->f.m, nc * sizeof *nm);
        if (nm)
            r->f.m = nm;
        if (!ng || !nm)
            return -ENOMEM;
        r->gcap = nc;
    }
    *g = r->ng++;
    r->f.nm = r->ng;
    memset(&r->gr[*g], 0, sizeof r->gr[*g]);
    r->gr[*g].ni = ni;
    struct pl_sim_machine *m = &r->f.m[*g];
    memset(m, 0, offsetof(struct pl_sim_machine, tenant));
    m->cpu_used = m->mem_used = 0, m->closed = false;
    double c = ni ? ni->cpu : -1, mem = ni ? ni->mem : -1;
    m->cpus = c >= 0 ? (unsigned)floor(c) : 1u << 30; /* whole CPUs: the capacity rounded down, demand up */
    m->mem = mem > 0 ? mem : 1e30;
    return 0;
}

/* Room for one application more in the fleet: 0 or -ENOMEM. */
static int app_room(struct ext_req *r)
{
    struct pl_sim_fleet *f = &r->f;
    if (f->napps < r->cap_apps)
        return 0;
    unsigned nc = r->cap_apps ? 2 * r->cap_apps : 64;
    struct pl_sim_app *na = realloc(f->app, nc * sizeof *na);
    if (!na)
        return -ENOMEM;
    memset(na + r->cap_apps, 0, (nc - r->cap_apps) * sizeof *na);
    f->app = na, r->cap_apps = nc;
    return 0;
}

/* One tenant more in group g: 0 (or the group's fail set), or -ENOMEM. */
static int add_tenant(struct ext_req *r, unsigned g, const struct profile *tp)
{
    struct pl_sim_fleet *f = &r->f;
    struct pl_sim_machine *m = &f->m[g];
    if (m->ntenants >= PL_SIM_MAX_TENANTS - 1)
        return ext_set_text(&r->gr[g].fail, "more than %u tenants", PL_SIM_MAX_TENANTS - 1);
    if (app_room(r) < 0)
        return -ENOMEM;
    struct pl_sim_app *ap = &f->app[f->napps];
    ap->p = tp, ap->machine = (int)g;
    m->tenant[m->ntenants++] = f->napps++;
    return 0;
}

/* The profile of tenant name (interned), memoised for the request; *memo false when this lookup was not. */
static const struct profile *tenant_profile(struct pl_extender *x, struct ext_req *r, const char *name, bool *memo,
                                            char *why, size_t len)
{
    struct ext_seen *sn = &r->sn;
    for (unsigned k = 0; k < sn->n; k++) /* interned: the same name is the same pointer */
        if (sn->name[k] == name)
            return sn->p[k];
    const struct profile *p = ext_cache_get(&x->cache, name, r->now, &r->pn, why, len);
    if (p && sn->n < 64)
        sn->name[sn->n] = name, sn->p[sn->n++] = p;
    else
        *memo = false;
    return p;
}

/* Group g's tenants, ni's list in order, looked up; the first that cannot be judged fails the group. */
static int group_tenants(struct pl_extender *x, struct ext_req *r, unsigned g, const struct ninfo *ni)
{
    char why[512];
    bool memo = true;
    for (unsigned k = 0; k < ni->nten && !r->gr[g].fail; k++) {
        const char *t = ni->ten[k];
        const struct profile *tp = t ? tenant_profile(x, r, t, &memo, why, sizeof why) : NULL;
        int rc = tp ? add_tenant(r, g, tp)
                    : ext_set_text(&r->gr[g].fail, "tenant %.64s cannot be judged: %.300s",
                                   t ? t : "(not a string)", t ? why : "");
        if (rc < 0)
            return rc;
    }
    r->gr[g].relook = !memo;
    return 0;
}

/* A node joining group g looks its tenants up as the group's first node did (only when a lookup was not
 * memoised): the profile cache's figures count a request's lookups node by node, however its nodes are grouped. */
static void relook(struct pl_extender *x, struct ext_req *r, const struct ninfo *ni)
{
    char why[512];
    bool memo = true;
    for (unsigned k = 0; k < ni->nten && k < PL_SIM_MAX_TENANTS - 1; k++)
        if (!ni->ten[k] || !tenant_profile(x, r, ni->ten[k], &memo, why, sizeof why))
            break;
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

static uint64_t name_hash(const struct ext_node *n) { return n->ni ? n->ni->h : ext_hash(n->name); }

static int find_node(void *ctx, const char *node, const char *profile, unsigned *listed)
{
    struct by_name *bn = ctx;
    struct ext_req *r = bn->r;
    if (!bn->t && !bn->oom) {
        for (bn->nb = 16; bn->nb < 2 * r->nn; bn->nb *= 2)
            ;
        bn->t = calloc(bn->nb, sizeof *bn->t);
        for (unsigned i = 0; bn->t && i < r->nn; i++) {
            unsigned h = (unsigned)name_hash(&r->nodes[i]) & (bn->nb - 1);
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
            if (ext_node_fail(r, n))
                return -1;
            *listed = count_of(n->ni, profile);
            return (int)bn->t[h] - 1;
        }
    }
    return -1;
}

/* The assumed tenants of these nodes: confirmed ones dropped, expired ones dropped, the rest each on a group of
 * its node's own. */
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
        struct ext_node *n = &r->nodes[use[u].node];
        if (ext_node_fail(r, n))
            continue;
        const struct profile *tp = ext_cache_get(&x->cache, use[u].profile, r->now, &r->pn, why, sizeof why);
        if (!tp) /* gone from the store since: a tenant not listed yet is not judged by what is missing */
            continue;
        unsigned g = n->g, e;
        if (!r->gr[g].extended) { /* the node's own group: its group's tenants, then its assumed ones */
            if ((rc = new_group(r, n->ni, &e)) < 0)
                break;
            const struct pl_sim_machine base = r->f.m[g];
            r->f.m[e] = base;
            r->gr[e].extended = true;
            n->g = g = e;
        }
        rc = add_tenant(r, g, tp);
    }
    ext_uses_free(use, nuse);
    return rc;
}

/* The group of a node's state, found or made. */
static int group_of(struct pl_extender *x, struct ext_req *r, unsigned *tab, unsigned nb, struct ext_node *n)
{
    const struct ninfo *ni = n->ni;
    unsigned slot = (unsigned)ni->sh & (nb - 1);
    for (; tab[slot]; slot = (slot + 1) & (nb - 1)) {
        const struct ninfo *o = r->gr[tab[slot] - 1].ni;
        if (o->sh == ni->sh && ninfo_same_state(o, ni)) {
            n->g = tab[slot] - 1;
            if (r->gr[n->g].relook)
                relook(x, r, ni);
            return 0;
        }
    }
    int rc = new_group(r, ni, &n->g);
    if (rc == 0)
        tab[slot] = n->g + 1;
    return rc ? rc : group_tenants(x, r, n->g, ni);
}

int ext_fleet(struct pl_extender *x, struct ext_req *r)
{
    unsigned nb = 16;
    while (nb < 2 * r->nn)
        nb *= 2;
    unsigned *tab = calloc(nb, sizeof *tab); /* groups by state: index + 1 */
    if (!tab)
        return -ENOMEM;
    int rc = 0;
    for (unsigned i = 0; i < r->nn && rc == 0; i++) {
        struct ext_node *n = &r->nodes[i];
        if (!r->by_name && n->ni->badq) /* the request's Node: malformed (the node state's: failed when read) */
            rc = answered(ext_bad_request(&r->out, &r->status, "node %.200s: %s", n->name, n->ni->badq));
        else if (!n->fail)
            rc = group_of(x, r, tab, nb, n);
    }
    free(tab);
    if (rc == 0 && x->o.assume_ttl_s)
        rc = assumed_tenants(x, r);
    if (rc == 0)
        rc = app_room(r);
    if (rc)
        return rc;
    struct pl_sim_app *pod = &r->f.app[r->a = r->f.napps++]; /* the pod */
    pod->p = r->pp, pod->cpus = (unsigned)ceil(r->pod_cpu), pod->mem = r->pod_mem, pod->machine = -1;
    return 0;
}

static bool kept(enum pl_verdict_kind k) { return k == PL_V_FITS || k == PL_V_SAFE || k == PL_V_UNCERTAIN; }

/* Machine g's hash: its room and its tenants' profiles. */
static uint64_t machine_hash(const struct pl_sim_fleet *f, unsigned g)
{
    const struct pl_sim_machine *m = &f->m[g];
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

/* Group g's verdict: the one of an alike machine of this request, else one kept across requests, else made.
 * filter answers an unsafe node with its reason: the check in full; prioritize wants a verdict and a fit, no text:
 * terse (it stops at the first broken resource). */
static void group_verdict(struct pl_extender *x, struct ext_req *r, unsigned g, unsigned *memo, uint64_t *mkey,
                          unsigned nmemo)
{
    uint64_t h = mkey[g] = machine_hash(&r->f, g);
    unsigned slot = (unsigned)ext_mix(h) & (nmemo - 1);
    for (; memo[slot]; slot = (slot + 1) & (nmemo - 1))
        if (mkey[memo[slot] - 1] == h && machines_alike(&r->f, memo[slot] - 1, g)) {
            r->gr[g].v = r->gr[memo[slot] - 1].v;
            return;
        }
    memo[slot] = g + 1;
    struct pl_coloc_opts co = {.margin = x->o.margin, .pessimistic = x->o.pessimistic,
                               .established = x->o.established, .likely = x->o.likely, .terse = !r->filter,
                               .decide = x->o.decide_headroom ? PL_DECIDE_HEADROOM : PL_DECIDE_MODEL};
    struct pl_verdict *v = &r->uv[r->nuv];
    if (!ext_verdict_get(&x->verdicts, &r->f, g, r->a, r->filter, h, ext_cache_freed(&x->cache), v)) {
        pl_verdict_of(&r->f, g, r->a, true, &co, v);
        ext_verdict_put(&x->verdicts, &r->f, g, r->a, r->filter, h, ext_cache_freed(&x->cache), v);
    }
    r->gr[g].v = r->nuv++;
}

int ext_decide(struct pl_extender *x, struct ext_req *r)
{
    unsigned nmemo = 16;
    while (nmemo < 2 * r->ng)
        nmemo *= 2;
    unsigned *memo = calloc(nmemo, sizeof *memo); /* groups by machine: index + 1 */
    uint64_t *mkey = malloc((r->ng ? r->ng : 1) * sizeof *mkey);
    r->uv = malloc((r->ng + 1) * sizeof *r->uv);
    r->order = malloc((r->nn ? r->nn : 1) * sizeof *r->order);
    if (!memo || !mkey || !r->uv || !r->order) {
        free(memo), free(mkey);
        return -ENOMEM;
    }
    r->uv[0].kind = PL_V_UNSAFE, r->uv[0].why[0] = 0, r->uv[0].fit = NAN;
    r->nuv = 1;
    /* verdicts numbered in the order of their first node */
    for (unsigned i = 0; i < r->nn; i++) {
        struct ext_node *n = &r->nodes[i];
        if (ext_node_fail(r, n)) {
            n->v = 0;
            continue;
        }
        if (!r->gr[n->g].v)
            group_verdict(x, r, n->g, memo, mkey, nmemo);
        n->v = r->gr[n->g].v;
        if (kept(r->uv[n->v].kind))
            r->order[r->nok++] = i;
    }
    free(memo), free(mkey);
    return 0;
}

/* prioritize's order: an uncertain node after every safe and empty one, else the interference policy's order */
static bool before(const struct ext_req *r, unsigned i, unsigned j)
{
    const struct ext_node *a = &r->nodes[i], *b = &r->nodes[j];
    const struct pl_verdict *vi = &r->uv[a->v], *vj = &r->uv[b->v];
    bool ui = vi->kind == PL_V_UNCERTAIN, uj = vj->kind == PL_V_UNCERTAIN;
    if (ui != uj)
        return uj;
    return pl_sim_machine_safe_before(&r->f.m[a->g], a->name, vi->fit, &r->f.m[b->g], b->name, vj->fit);
}

/* Only the first PL_EXT_MAX_PRIORITY are scored, so only they are ordered: selected in the order a stable sort would
 * give them (a node goes after every one not strictly after it). */
void ext_rank(struct ext_req *r)
{
    unsigned top[PL_EXT_MAX_PRIORITY], k = 0;
    for (unsigned o = 0; o < r->nok; o++) {
        unsigned i = r->order[o];
        if (k == PL_EXT_MAX_PRIORITY && !before(r, i, top[k - 1]))
            continue;
        unsigned p = 0;
        while (p < k && !before(r, i, top[p]))
            p++;
        if (k < PL_EXT_MAX_PRIORITY)
            k++;
        memmove(&top[p + 1], &top[p], (k - 1 - p) * sizeof *top);
        top[p] = i;
    }
    memcpy(r->order, top, k * sizeof *top);
}

int ext_assume_top(struct pl_extender *x, struct ext_req *r)
{
    if (!r->keyed || !r->nok)
        return 0;
    const struct ext_node *top = &r->nodes[r->order[0]];
    return ext_assumed_take(&x->assumed, r->now, r->key, top->name, r->pname, count_of(top->ni, r->pname));
}
