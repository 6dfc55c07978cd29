/* pl_ext_verdicts.c - verdicts kept across requests (pl_ext_verdicts.h): VC_SLOTS slots, the latest verdict made
 * takes its slot. */
#include "pl_ext_verdicts.h"

#include <stdlib.h>
#include <string.h>

#define VC_SLOTS 2048
struct vcent {
    uint64_t h, gen;
    bool used, filter;
    unsigned nt, pod_cpus;
    double pod_mem, room[4];
    const struct profile *pod, *t[PL_SIM_MAX_TENANTS];
    struct pl_verdict v;
};

void ext_verdicts_init(struct ext_verdicts *v)
{
    pthread_mutex_init(&v->mu, NULL);
    v->vc = calloc(VC_SLOTS, sizeof *v->vc);
}

void ext_verdicts_fini(struct ext_verdicts *v)
{
    pthread_mutex_destroy(&v->mu);
    free(v->vc);
}

static bool vc_same(const struct vcent *e, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                    uint64_t h, uint64_t gen)
{
    const struct pl_sim_machine *m = &f->m[i];
    const double room[4] = {m->cpus, m->mem, m->cpu_used, m->mem_used};
    if (!e->used || e->h != h || e->gen != gen || e->filter != filter || e->nt != m->ntenants ||
        e->pod != f->app[a].p || e->pod_cpus != f->app[a].cpus || e->pod_mem != f->app[a].mem ||
        memcmp(e->room, room, sizeof room))
        return false;
    for (unsigned t = 0; t < m->ntenants; t++)
        if (e->t[t] != f->app[m->tenant[t]].p)
            return false;
    return true;
}

static uint64_t vc_hash(const struct pl_sim_fleet *f, unsigned a, bool filter, uint64_t h)
{
    h = (h ^ (uintptr_t)f->app[a].p) * 1099511628211ull;
    h = (h ^ f->app[a].cpus) * 1099511628211ull;
    return (h ^ (uint64_t)filter) * 1099511628211ull;
}

bool ext_verdict_get(struct ext_verdicts *v, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                     uint64_t h, uint64_t gen, struct pl_verdict *out)
{
    if (!v->vc)
        return false;
    h = vc_hash(f, a, filter, h);
    pthread_mutex_lock(&v->mu);
    const struct vcent *e = &v->vc[h % VC_SLOTS];
    bool hit = vc_same(e, f, i, a, filter, h, gen);
    if (hit)
        *out = e->v;
    pthread_mutex_unlock(&v->mu);
    return hit;
}

void ext_verdict_put(struct ext_verdicts *v, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                     uint64_t h, uint64_t gen, const struct pl_verdict *in)
{
    const struct pl_sim_machine *m = &f->m[i];
    if (!v->vc)
        return;
    h = vc_hash(f, a, filter, h);
    pthread_mutex_lock(&v->mu);
    struct vcent *e = &v->vc[h % VC_SLOTS]; /* the slot's last verdict makes way */
    e->used = true, e->h = h, e->gen = gen, e->filter = filter, e->nt = m->ntenants;
    e->pod = f->app[a].p, e->pod_cpus = f->app[a].cpus, e->pod_mem = f->app[a].mem;
    e->room[0] = m->cpus, e->room[1] = m->mem, e->room[2] = m->cpu_used, e->room[3] = m->mem_used;
    for (unsigned t = 0; t < m->ntenants; t++)
        e->t[t] = f->app[m->tenant[t]].p;
    e->v = *in;
    pthread_mutex_unlock(&v->mu);
}
