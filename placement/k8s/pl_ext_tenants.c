/* pl_ext_tenants.c - the extender's assumed tenants (pl_ext_tenants.h).  Rules: a pod asked about again is not its
 * own neighbour (its new answer replaces the old assumption).  An assumption is confirmed, and dropped, when the
 * node's list holds as many tenants of its profile as were listed plus assumed when it was made: the lists carry
 * names, not pods, so a count is what can be compared.  It is dropped unconfirmed after ttl_s (kube-scheduler chose
 * another node, or the pod left).  Both errors are on the safe side but one: another scheduler's pod of the same
 * profile landing there confirms it early. */
#define _GNU_SOURCE
#include "pl_ext_tenants.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pl_extender.h"

void ext_assumed_init(struct ext_assumed *a, unsigned ttl_s)
{
    memset(a, 0, sizeof *a);
    a->ttl_s = ttl_s;
    pthread_mutex_init(&a->mu, NULL);
}

static void drop(struct ext_assumed *a, unsigned i) /* under a->mu */
{
    free(a->as[i].key), free(a->as[i].node), free(a->as[i].profile);
    memmove(&a->as[i], &a->as[i + 1], (a->n - i - 1) * sizeof *a->as);
    a->n--;
}

void ext_assumed_fini(struct ext_assumed *a)
{
    while (a->n)
        drop(a, a->n - 1);
    free(a->as);
    pthread_mutex_destroy(&a->mu);
}

void ext_uses_free(struct ext_use *use, unsigned nuse)
{
    for (unsigned u = 0; u < nuse; u++)
        free(use[u].profile);
    free(use);
}

int ext_assumed_uses(struct ext_assumed *a, double now, const char *key,
                     int (*find)(void *ctx, const char *node, const char *profile, unsigned *listed), void *ctx,
                     struct ext_use **use, unsigned *nuse)
{
    *use = NULL, *nuse = 0;
    int rc = 0;
    pthread_mutex_lock(&a->mu);
    for (unsigned i = 0; i < a->n;)
        if (now - a->as[i].t >= a->ttl_s)
            drop(a, i), a->expired++;
        else
            i++;
    if (a->n && !(*use = calloc(a->n, sizeof **use)))
        rc = -ENOMEM;
    for (unsigned i = 0; !rc && i < a->n;) {
        struct assumed *as = &a->as[i];
        unsigned listed = 0;
        int ni = find(ctx, as->node, as->profile, &listed);
        if (ni < 0) {
            i++;
            continue;
        }
        if (listed >= as->expect) {
            drop(a, i);
            a->confirmed++;
            continue;
        }
        if (!(key && !strcmp(as->key, key))) { /* a pod is not its own neighbour */
            (*use)[*nuse].node = (unsigned)ni;
            if (!((*use)[(*nuse)++].profile = strdup(as->profile)))
                rc = -ENOMEM;
        }
        i++;
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int ext_assumed_take(struct ext_assumed *a, double now, const char *key, const char *node, const char *profile,
                     unsigned listed)
{
    int rc = 0;
    pthread_mutex_lock(&a->mu);
    for (unsigned i = 0; i < a->n;)
        if (!strcmp(a->as[i].key, key))
            drop(a, i);
        else
            i++;
    unsigned pending = 0;
    for (unsigned i = 0; i < a->n; i++)
        pending += !strcmp(a->as[i].node, node) && !strcmp(a->as[i].profile, profile);
    if (a->n == PL_EXT_MAX_ASSUMED)
        drop(a, 0), a->expired++;
    if (a->n == a->cap) {
        unsigned nc = a->cap ? 2 * a->cap : 16;
        struct assumed *na = realloc(a->as, nc * sizeof *na);
        if (na)
            a->as = na, a->cap = nc;
    }
    if (a->n < a->cap) {
        struct assumed *as = &a->as[a->n];
        as->key = strdup(key), as->node = strdup(node), as->profile = strdup(profile);
        as->expect = listed + pending + 1, as->t = now;
        if (as->key && as->node && as->profile) {
            a->n++, a->total++;
        } else {
            free(as->key), free(as->node), free(as->profile);
            rc = -ENOMEM;
        }
    } else {
        rc = -ENOMEM;
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

void ext_assumed_stats(struct ext_assumed *a, struct pl_extender_stats *s)
{
    pthread_mutex_lock(&a->mu);
    s->assumed = a->n, s->assumed_total = a->total, s->assumed_confirmed = a->confirmed;
    s->assumed_expired = a->expired;
    pthread_mutex_unlock(&a->mu);
}
