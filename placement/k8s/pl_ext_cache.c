/* pl_ext_cache.c - the extender's profile cache (pl_ext_cache.h).  A hash table of entries in least-recently-used
 * order under one mutex; a profile is read from its file outside it, and when two requests read the same one at once
 * the first to come back is kept. */
#define _GNU_SOURCE
#include "pl_ext_cache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_ext_names.h"
#include "pl_extender.h"
#include "profile_fmt.h"

struct centry {
    char *name;
    uint64_t h;
    struct profile *p;          /* NULL: not in the store */
    char why[256];              /* p NULL: the reason */
    double expires;             /* p NULL: forgotten from then on (clock seconds) */
    unsigned refs;              /* 1 while in the table, +1 for each request using p */
    struct centry *hnext;       /* hash chain */
    struct centry *prev, *next; /* LRU list: head the most recent */
};

int ext_cache_init(struct ext_cache *c, const char *dir, unsigned cap,
                   const struct profile *(*lookup)(void *ctx, const char *name), void *lookup_ctx)
{
    memset(c, 0, sizeof *c);
    c->cap = cap ? cap : PL_EXT_CACHE_CAP;
    for (c->nb = 16; c->nb < 2 * c->cap; c->nb *= 2)
        ;
    c->b = calloc(c->nb, sizeof *c->b);
    c->lru = calloc(1, sizeof *c->lru);
    if (!c->b || !c->lru) {
        free(c->b), free(c->lru);
        return -ENOMEM;
    }
    c->lru->next = c->lru->prev = c->lru;
    c->dir = dir, c->lookup = lookup, c->lookup_ctx = lookup_ctx;
    pthread_mutex_init(&c->mu, NULL);
    return 0;
}

static void centry_put(struct ext_cache *c, struct centry *e) /* under c->mu */
{
    if (--e->refs)
        return;
    if (e->p) {
        atomic_fetch_add(&c->freed, 1); /* what was keyed by its address is void from now on */
        profile_free(e->p);
    }
    free(e->p);
    free(e->name);
    free(e);
}

static void lru_unlink(struct centry *e)
{
    e->prev->next = e->next, e->next->prev = e->prev;
}

static void lru_front(struct ext_cache *c, struct centry *e)
{
    e->next = c->lru->next, e->prev = c->lru;
    c->lru->next->prev = e, c->lru->next = e;
}

static struct centry *cache_find(struct ext_cache *c, const char *name, uint64_t h)
{
    for (struct centry *e = c->b[h & (c->nb - 1)]; e; e = e->hnext)
        if (e->h == h && !strcmp(e->name, name))
            return e;
    return NULL;
}

static void cache_remove(struct ext_cache *c, struct centry *e) /* under c->mu */
{
    struct centry **pp = &c->b[e->h & (c->nb - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(e);
    c->n--;
    centry_put(c, e);
}

void ext_cache_flush(struct ext_cache *c)
{
    pthread_mutex_lock(&c->mu);
    while (c->lru->next != c->lru)
        cache_remove(c, c->lru->next);
    pthread_mutex_unlock(&c->mu);
}

void ext_cache_fini(struct ext_cache *c)
{
    if (!c->b)
        return;
    ext_cache_flush(c);
    pthread_mutex_destroy(&c->mu);
    free(c->b), free(c->lru);
    memset(c, 0, sizeof *c);
}

void ext_pins_release(struct ext_cache *c, struct ext_pins *pn)
{
    if (pn->n) {
        pthread_mutex_lock(&c->mu);
        for (unsigned i = 0; i < pn->n; i++)
            centry_put(c, pn->e[i]);
        pthread_mutex_unlock(&c->mu);
    }
    free(pn->e);
    memset(pn, 0, sizeof *pn);
}

static bool pin(struct ext_pins *pn, struct centry *e) /* under c->mu */
{
    if (pn->n == pn->cap) {
        unsigned nc = pn->cap ? 2 * pn->cap : 16;
        struct centry **ne = realloc(pn->e, nc * sizeof *ne);
        if (!ne)
            return false;
        pn->e = ne, pn->cap = nc;
    }
    e->refs++;
    pn->e[pn->n++] = e;
    return true;
}

/* Reads the store's profile NAME: the profile, or NULL with why (absent or invalid). */
static struct profile *profile_load(const char *dir, const char *name, char *why, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    struct profile *np = malloc(sizeof *np);
    if (!np) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    if (access(path, F_OK) != 0) {
        snprintf(why, len, "%s is not in the store", name);
        free(np);
        return NULL;
    }
    char w[512];
    if (profile_read(path, np, w, sizeof w) < 0) {
        /* the reader names the file by its path: the store's name is enough, and keeps answers host-independent */
        const char *rest = strstr(w, ".json: ");
        snprintf(why, len, "%.48s.json in the store: %.180s", name, rest ? rest + 7 : w);
        free(np);
        return NULL;
    }
    return np;
}

/* e's profile pinned in pn (under c->mu); NULL with why. */
static const struct profile *pinned(struct centry *e, struct ext_pins *pn, char *why, size_t len)
{
    const struct profile *p = e->p;
    if (!p)
        snprintf(why, len, "%s", e->why);
    else if (!pin(pn, e))
        snprintf(why, len, "out of memory"), p = NULL;
    return p;
}

const struct profile *ext_cache_get(struct ext_cache *c, const char *name, double now, struct ext_pins *pn,
                                    char *why, size_t len)
{
    if (c->lookup) {
        if (!ext_good_name(name)) {
            snprintf(why, len, "'%.64s' is not a profile name ([A-Za-z0-9._-])", name);
            return NULL;
        }
        const struct profile *p = c->lookup(c->lookup_ctx, name);
        if (!p)
            snprintf(why, len, "%.64s is not in the store", name);
        return p;
    }
    /* a name in the cache was a good name when it went in: the check is for the others */
    uint64_t h = ext_hash(name);
    pthread_mutex_lock(&c->mu);
    struct centry *e = cache_find(c, name, h);
    if (e && !e->p && now >= e->expires) {
        cache_remove(c, e);
        c->expired++;
        e = NULL;
    }
    if (e) {
        c->hits++;
        lru_unlink(e);
        lru_front(c, e);
        const struct profile *p = pinned(e, pn, why, len);
        pthread_mutex_unlock(&c->mu);
        return p;
    }
    pthread_mutex_unlock(&c->mu);
    if (!ext_good_name(name)) {
        snprintf(why, len, "'%.64s' is not a profile name ([A-Za-z0-9._-])", name);
        return NULL;
    }
    pthread_mutex_lock(&c->mu);
    c->misses++;
    pthread_mutex_unlock(&c->mu);
    /* read outside the lock: other requests go on meanwhile */
    struct centry *ne = calloc(1, sizeof *ne);
    if (!ne || !(ne->name = strdup(name))) {
        free(ne);
        snprintf(why, len, "out of memory");
        return NULL;
    }
    ne->h = h, ne->refs = 1;
    ne->p = profile_load(c->dir, name, ne->why, sizeof ne->why);
    ne->expires = now + PL_EXT_MISS_TTL_MS / 1000.0;
    pthread_mutex_lock(&c->mu);
    if ((e = cache_find(c, name, h))) { /* another request read it meanwhile: theirs is kept */
        centry_put(c, ne);
    } else {
        e = ne;
        e->hnext = c->b[h & (c->nb - 1)], c->b[h & (c->nb - 1)] = e;
        lru_front(c, e);
        c->n++;
        while (c->n > c->cap) {
            cache_remove(c, c->lru->prev);
            c->evictions++;
        }
    }
    const struct profile *p = pinned(e, pn, why, len);
    pthread_mutex_unlock(&c->mu);
    return p;
}

void ext_cache_stats(struct ext_cache *c, struct pl_extender_stats *s)
{
    pthread_mutex_lock(&c->mu);
    s->hits = c->hits, s->misses = c->misses, s->evictions = c->evictions, s->expired = c->expired;
    s->entries = c->n, s->capacity = c->cap;
    s->profiles_freed = (unsigned long)atomic_load(&c->freed);
    pthread_mutex_unlock(&c->mu);
}
