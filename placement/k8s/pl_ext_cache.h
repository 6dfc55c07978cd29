/* pl_ext_cache.h - the extender's profile cache (pl_extender.h): the store's profiles by name, at most cap of them,
 * the least recently used going first; absences ("not in the store") are entries too, believed PL_EXT_MISS_TTL_MS.
 * Entries are reference-counted and a request pins the profiles it uses (ext_pins), so neither an eviction nor a
 * change of the store frees a profile under a request.  Thread-safe: one mutex, held only for the table, never while
 * a profile is read from its file. */
#ifndef IB_PL_EXT_CACHE_H
#define IB_PL_EXT_CACHE_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct pl_extender_stats;

struct centry;

struct ext_cache {
    pthread_mutex_t mu;
    struct centry **b; /* hash chains, nb a power of two */
    struct centry *lru; /* the LRU list's sentinel: next the most recent */
    unsigned nb, n, cap;
    unsigned long hits, misses, evictions, expired;
    atomic_ullong freed; /* profiles freed so far: what was made of a cached profile's address is void once it moves */
    const char *dir;     /* the store (not owned) */
    /* profiles by name from memory instead of the store (pl_extender_opts.lookup): no cache then */
    const struct profile *(*lookup)(void *ctx, const char *name);
    void *lookup_ctx;
};

/* The profiles a request uses, pinned until it ends (ext_pins_release). */
struct ext_pins {
    struct centry **e;
    unsigned n, cap;
};

/* 0 or -ENOMEM. */
int ext_cache_init(struct ext_cache *c, const char *dir, unsigned cap,
                   const struct profile *(*lookup)(void *ctx, const char *name), void *lookup_ctx);
void ext_cache_fini(struct ext_cache *c);
/* Every entry dropped (the store changed); pinned profiles live on until their requests end. */
void ext_cache_flush(struct ext_cache *c);
/* The store's profile name at time now (seconds), pinned in pn; NULL with a one-line reason in why. */
const struct profile *ext_cache_get(struct ext_cache *c, const char *name, double now, struct ext_pins *pn,
                                    char *why, size_t len);
void ext_pins_release(struct ext_cache *c, struct ext_pins *pn);
/* How many cached profiles have been freed so far. */
static inline uint64_t ext_cache_freed(struct ext_cache *c) { return atomic_load(&c->freed); }
/* The cache's figures into s (hits, misses, evictions, expired, entries, capacity, profiles_freed). */
void ext_cache_stats(struct ext_cache *c, struct pl_extender_stats *s);

#endif
