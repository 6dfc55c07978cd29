/* pl_ext_verdicts.c - verdicts kept across requests (pl_ext_verdicts.h).  VC_SETS sets of VC_WAYS entries: a key
 * goes to the set its hash names, and a new verdict takes the set's least recently used entry.  The hash mixes every
 * bit of the key (the room, the pod, the tenants' addresses) into the set's index (ext_mix): the profiles' addresses
 * share their low bits, and without mixing most keys would fall in a few sets. */
#include "pl_ext_verdicts.h"

#include <stdlib.h>
#include <string.h>

#include "pl_ext_names.h"
#include "pl_extender.h"

#define VC_WAYS 4
#define VC_SETS 512 /* a power of two: 2048 verdicts, enough for the distinct tenant lists of a large cluster */

struct vcent {
    uint64_t gen, used; /* used: when last found or made (0: empty) */
    bool filter;
    unsigned nt, pod_cpus;
    double pod_mem, room[4];
    const struct profile *pod, *t[PL_SIM_MAX_TENANTS];
    struct pl_verdict v;
};

void ext_verdicts_init(struct ext_verdicts *v)
{
    memset(v, 0, sizeof *v);
    pthread_mutex_init(&v->mu, NULL);
    v->vc = calloc(VC_SETS * VC_WAYS, sizeof *v->vc);
    v->tag = calloc(VC_SETS * VC_WAYS, sizeof *v->tag);
    if (!v->vc || !v->tag)
        free(v->vc), free(v->tag), v->vc = NULL, v->tag = NULL;
}

void ext_verdicts_fini(struct ext_verdicts *v)
{
    pthread_mutex_destroy(&v->mu);
    free(v->vc);
    free(v->tag);
}

static uint64_t key_hash(const struct pl_sim_fleet *f, unsigned a, bool filter, uint64_t h)
{
    h = ext_mix(h ^ (uintptr_t)f->app[a].p);
    h = ext_mix(h ^ ((uint64_t)f->app[a].cpus << 1 | filter));
    uint64_t mem;
    memcpy(&mem, &f->app[a].mem, sizeof mem);
    return ext_mix(h ^ mem);
}

static bool same(const struct vcent *e, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                 uint64_t gen)
{
    const struct pl_sim_machine *m = &f->m[i];
    const double room[4] = {m->cpus, m->mem, m->cpu_used, m->mem_used};
    if (!e->used || e->gen != gen || e->filter != filter || e->nt != m->ntenants ||
        e->pod != f->app[a].p || e->pod_cpus != f->app[a].cpus || e->pod_mem != f->app[a].mem ||
        memcmp(e->room, room, sizeof room))
        return false;
    for (unsigned t = 0; t < m->ntenants; t++)
        if (e->t[t] != f->app[m->tenant[t]].p)
            return false;
    return true;
}

bool ext_verdict_get(struct ext_verdicts *v, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                     uint64_t h, uint64_t gen, struct pl_verdict *out)
{
    if (!v->vc)
        return false;
    h = key_hash(f, a, filter, h);
    bool hit = false;
    pthread_mutex_lock(&v->mu);
    size_t base = (h & (VC_SETS - 1)) * VC_WAYS;
    struct vcent *set = &v->vc[base];
    for (unsigned w = 0; w < VC_WAYS && !hit; w++)
        if (v->tag[base + w] == h && same(&set[w], f, i, a, filter, gen)) {
            *out = set[w].v;
            set[w].used = ++v->clock;
            hit = true;
        }
    hit ? v->hits++ : v->misses++;
    pthread_mutex_unlock(&v->mu);
    return hit;
}

void ext_verdict_put(struct ext_verdicts *v, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                     uint64_t h, uint64_t gen, const struct pl_verdict *in)
{
    const struct pl_sim_machine *m = &f->m[i];
    if (!v->vc)
        return;
    h = key_hash(f, a, filter, h);
    pthread_mutex_lock(&v->mu);
    size_t base = (h & (VC_SETS - 1)) * VC_WAYS;
    struct vcent *set = &v->vc[base], *e = &set[0];
    for (unsigned w = 1; w < VC_WAYS; w++) /* an empty entry, a void one, else the least recently used */
        if (e->used && (!set[w].used || set[w].gen != gen || (e->gen == gen && set[w].used < e->used)))
            e = &set[w];
    v->tag[base + (size_t)(e - set)] = h;
    e->used = ++v->clock, e->gen = gen, e->filter = filter, e->nt = m->ntenants;
    e->pod = f->app[a].p, e->pod_cpus = f->app[a].cpus, e->pod_mem = f->app[a].mem;
    e->room[0] = m->cpus, e->room[1] = m->mem, e->room[2] = m->cpu_used, e->room[3] = m->mem_used;
    for (unsigned t = 0; t < m->ntenants; t++)
        e->t[t] = f->app[m->tenant[t]].p;
    e->v = *in;
    pthread_mutex_unlock(&v->mu);
}

void ext_verdicts_stats(struct ext_verdicts *v, struct pl_extender_stats *s)
{
    pthread_mutex_lock(&v->mu);
    s->verdict_hits = v->hits, s->verdict_misses = v->misses;
    pthread_mutex_unlock(&v->mu);
}
