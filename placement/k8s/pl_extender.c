/* pl_extender.c - the scheduler extender's decisions (pl_extender.h).  Rules, and why:
 *
 * - The request: an ExtenderArgs, keys matched case-insensitively as Go's encoding/json does ("Pod", "Nodes",
 *   "NodeNames"; kube-scheduler sends them capitalised).  Anything else (not an object, no pod, Nodes without items,
 *   a node without a name, a wrong type, over PL_EXT_MAX_NODES nodes) is a 400 with {"Error": one line}.
 * - The pod's profile: annotation PL_EXT_ANN_PROFILE, a name of the store ([A-Za-z0-9._-], no path).  No annotation:
 *   filter passes every node and says so in "Note" (a field Go's decoder ignores), prioritize scores every node 0
 *   (neutral).  A name the store does not hold: 200 with "Error" set, which kube-scheduler treats as the extender's
 *   failure (ignorable: the pod schedules without us; else it waits): not knowing the pod is not a licence to place it.
 * - Each node: tenants from PL_EXT_ANN_TENANTS (a JSON array of store names; absent: none), room from
 *   status.allocatable (cpu, memory; absent: unbounded, kube-scheduler checks resources itself), the pod's demand
 *   from its containers' requests (absent: 0).  A tenants annotation that does not parse, or a tenant the store does
 *   not hold, fails that node with the reason: what runs there cannot be judged, and unknown is not safe.  With
 *   names only, the node's state is the one held from the node state directory (read when it changes).
 * - Assumed tenants (opts.assume_ttl_s > 0): prioritize's top node gets the pod as an assumed tenant, keyed by the
 *   pod (metadata.uid, else namespace/name; a pod with neither is not kept).  Later requests count it beside the
 *   node's listed tenants, except for the pod itself (a pod asked about again is not its own neighbour; its new
 *   answer replaces the old assumption).  It is confirmed, and dropped, when the node's list holds as many tenants
 *   of its profile as there were listed plus assumed when it was made (the lists carry names, not pods: a count is
 *   what can be compared); it is dropped unconfirmed after assume_ttl_s (kube-scheduler chose another node, or the
 *   pod left).  Both errors are on the safe side but one: another scheduler's pod of the same profile landing there
 *   confirms it early.
 * - The verdict is pl_verdict_of with the interference rule, the margin, the unknown rule and the refusal rule
 *   of the options: place colocate's.  filter keeps "fits" (no tenant), "safe" and "uncertain" nodes (a negative
 *   headroom not established beyond the profiles' uncertainty: pl_coloc.h); the others go to FailedNodes with the
 *   verdict's reason, which names the resource, the figures and their se.
 * - prioritize ranks the nodes that filter would keep: uncertain ones after all others, else in the interference
 *   policy's order (pl_sim_safe_before: shared before empty, the fullest, the best fit, less loaded, name) and
 *   scores them 10, 9, ... 1, 0, 0...: the
 *   node place colocate would choose gets the one top score, so the extender alone reproduces colocate's choice;
 *   nodes filter would drop score 0.
 * - The profile cache: a hash table of at most cache_cap entries in least-recently-used order, under one mutex held
 *   only for the lookup (a profile is read from its file outside it).  Absences are entries too, forgotten after
 *   PL_EXT_MISS_TTL_MS (a profile added to the store is seen within that time even where the directory's change
 *   is not).  Entries are reference-counted: a request pins the profiles it uses, so an eviction or a store
 *   change never frees one under a request.
 * - The store's change: a stat of the profile and node directories and of their `..data` symlinks (a ConfigMap
 *   volume's atomic swap) at most every PL_EXT_STORE_CHECK_MS; the node state is an immutable snapshot, replaced
 *   whole and reference-counted like the profiles. */
#define _GNU_SOURCE
#include "pl_extender.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ib_err.h"
#include "pl_coloc.h"
#include "pl_jscan.h"
#include "pl_verdict.h"
#include "profile_fmt.h"

/* ---- the profile cache */
struct centry {
    char *name;
    uint64_t h;
    struct profile *p;     /* NULL: not in the store */
    char why[256];         /* p NULL: the reason */
    double expires;        /* p NULL: forgotten from then on (clock seconds) */
    unsigned refs;         /* 1 while in the table, +1 for each request using p */
    struct centry *hnext;  /* hash chain */
    struct centry *prev, *next; /* LRU list: head the most recent */
};

/* ---- the node state: one node as the decisions need it */
struct ninfo {
    char *name;
    uint64_t h;
    const char **ten; /* the tenants annotation's elements, interned (one pointer a distinct name); NULL: not a
                       * string */
    unsigned nten;    /* 0: none (no annotation, or an empty list) */
    char *fail;      /* non-NULL: the node fails with this (its state unreadable) */
    char *badq;      /* non-NULL: an allocatable that is not a quantity ("status.allocatable.cpu: 'abc' is not a
                      * quantity"): a 400 in a request's Node, the node's failure in the node state (fail) */
    double cpu, mem; /* allocatable; < 0: not given (or badq) */
    struct ninfo *hnext;
};

/* Interned strings: the tenant names of many nodes, one copy each, so that equal names are equal pointers. */
struct strtab {
    char **s;
    unsigned n, nb;
};

static void strtab_free(struct strtab *t)
{
    for (unsigned i = 0; i < t->nb; i++)
        free(t->s[i]);
    free(t->s);
    memset(t, 0, sizeof *t);
}

struct nsnap {
    unsigned refs; /* under x->smu */
    struct strtab names;
    struct ninfo *node;
    unsigned n;
    struct ninfo **b;
    unsigned nb;
};

struct dsig {
    struct timespec m, c, lm;
    ino_t ino, lino;
    dev_t dev;
    char link[128];
    int err;
};

struct assumed {
    char *key, *node, *profile;
    unsigned expect; /* confirmed when the node lists this many tenants of profile */
    double t;
};

struct refusal {
    char name[64];
    unsigned long n;
};

/* A verdict kept across requests: the same pod profile beside the same tenants on the same room gets the same one
 * (a Deployment's replicas, prioritize after filter...).  Keyed by the profiles' addresses, valid while none of the
 * cache's profiles has been freed since (pgen): an address is never reused under a verdict. */
#define VC_SLOTS 2048
struct vcent {
    uint64_t h, gen;
    bool used, filter;
    unsigned nt, pod_cpus;
    double pod_mem, room[4];
    const struct profile *pod, *t[PL_SIM_MAX_TENANTS];
    struct pl_verdict v;
};

struct pl_extender {
    struct pl_extender_opts o;
    char *dir, *ndir;
    unsigned cap;
    /* the cache */
    pthread_mutex_t mu;
    struct centry **b, lru; /* lru: the list's sentinel */
    unsigned nb, n;
    unsigned long hits, misses, evictions, expired;
    /* the store */
    pthread_mutex_t reload_mu, smu;
    atomic_llong next_check_ns;
    struct dsig psig, nsig;
    struct nsnap *snap;    /* under smu */
    bool loaded;           /* under smu */
    char load_why[256];    /* under smu */
    atomic_ulong reloads;
    /* assumed tenants */
    pthread_mutex_t amu;
    struct assumed *as;
    unsigned nas, cas;
    unsigned long as_total, as_confirmed, as_expired;
    /* verdicts across requests (under vmu) */
    pthread_mutex_t vmu;
    struct vcent *vc;
    atomic_ullong pgen; /* +1 whenever a cached profile is freed */
    /* figures */
    atomic_ulong decisions[2];
    atomic_ulong nodes_read[2]; /* Node objects' state read: [0] from the scanned spans, [1] through jansson */
    pthread_mutex_t fmu;
    struct refusal *ref;
    unsigned nref;
};

static double now_s(struct pl_extender *x)
{
    if (x->o.clock)
        return x->o.clock(x->o.clock_ctx);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *intern(struct strtab *t, const char *s)
{
    if (2 * (t->n + 1) > t->nb) {
        unsigned nb = t->nb ? 2 * t->nb : 64;
        char **ns = calloc(nb, sizeof *ns);
        if (!ns)
            return NULL;
        for (unsigned i = 0; i < t->nb; i++)
            if (t->s[i]) {
                unsigned h = (unsigned)hash(t->s[i]) & (nb - 1);
                while (ns[h])
                    h = (h + 1) & (nb - 1);
                ns[h] = t->s[i];
            }
        free(t->s);
        t->s = ns, t->nb = nb;
    }
    unsigned h = (unsigned)hash(s) & (t->nb - 1);
    for (; t->s[h]; h = (h + 1) & (t->nb - 1))
        if (!strcmp(t->s[h], s))
            return t->s[h];
    if (!(t->s[h] = strdup(s)))
        return NULL;
    t->n++;
    return t->s[h];
}

static bool good_name(const char *s)
{
    if (!*s || strlen(s) > PL_EXT_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(s);
}

static void centry_put(struct pl_extender *x, struct centry *e) /* under x->mu */
{
    if (--e->refs)
        return;
    if (e->p) {
        atomic_fetch_add(&x->pgen, 1); /* verdicts keyed by its address are void from now on */
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

static void lru_front(struct pl_extender *x, struct centry *e)
{
    e->next = x->lru.next, e->prev = &x->lru;
    x->lru.next->prev = e, x->lru.next = e;
}

static struct centry *cache_find(struct pl_extender *x, const char *name, uint64_t h)
{
    for (struct centry *e = x->b[h & (x->nb - 1)]; e; e = e->hnext)
        if (e->h == h && !strcmp(e->name, name))
            return e;
    return NULL;
}

static void cache_remove(struct pl_extender *x, struct centry *e) /* under x->mu */
{
    struct centry **pp = &x->b[e->h & (x->nb - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(e);
    x->n--;
    centry_put(x, e);
}

static void cache_flush(struct pl_extender *x)
{
    pthread_mutex_lock(&x->mu);
    while (x->lru.next != &x->lru)
        cache_remove(x, x->lru.next);
    pthread_mutex_unlock(&x->mu);
}

/* The profiles a request uses, pinned until it ends. */
struct pins {
    struct centry **e;
    unsigned n, cap;
};

static void pins_release(struct pl_extender *x, struct pins *pn)
{
    if (!pn->n) {
        free(pn->e);
        return;
    }
    pthread_mutex_lock(&x->mu);
    for (unsigned i = 0; i < pn->n; i++)
        centry_put(x, pn->e[i]);
    pthread_mutex_unlock(&x->mu);
    free(pn->e);
}

static bool pin(struct pins *pn, struct centry *e) /* under x->mu */
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
static struct profile *profile_load(struct pl_extender *x, const char *name, char *why, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", x->dir, name);
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

/* The store's profile NAME, pinned in pn; NULL with why. */
static const struct profile *profile_of(struct pl_extender *x, const char *name, struct pins *pn, char *why,
                                        size_t len)
{
    if (x->o.lookup) {
        if (!good_name(name)) {
            snprintf(why, len, "'%.64s' is not a profile name ([A-Za-z0-9._-])", name);
            return NULL;
        }
        const struct profile *p = x->o.lookup(x->o.lookup_ctx, name);
        if (!p)
            snprintf(why, len, "%.64s is not in the store", name);
        return p;
    }
    /* a name in the cache was a good name when it went in: the check is for the others */
    uint64_t h = hash(name);
    pthread_mutex_lock(&x->mu);
    struct centry *e = cache_find(x, name, h);
    if (e && !e->p && now_s(x) >= e->expires) {
        cache_remove(x, e);
        x->expired++;
        e = NULL;
    }
    if (e) {
        x->hits++;
        lru_unlink(e);
        lru_front(x, e);
        const struct profile *p = e->p;
        if (!p)
            snprintf(why, len, "%s", e->why);
        else if (!pin(pn, e))
            snprintf(why, len, "out of memory"), p = NULL;
        pthread_mutex_unlock(&x->mu);
        return p;
    }
    pthread_mutex_unlock(&x->mu);
    if (!good_name(name)) {
        snprintf(why, len, "'%.64s' is not a profile name ([A-Za-z0-9._-])", name);
        return NULL;
    }
    double now = now_s(x);
    pthread_mutex_lock(&x->mu);
    x->misses++;
    pthread_mutex_unlock(&x->mu);
    /* read outside the lock: other requests go on meanwhile */
    struct centry *ne = calloc(1, sizeof *ne);
    if (!ne || !(ne->name = strdup(name))) {
        free(ne);
        snprintf(why, len, "out of memory");
        return NULL;
    }
    ne->h = h, ne->refs = 1;
    ne->p = profile_load(x, name, ne->why, sizeof ne->why);
    ne->expires = now + PL_EXT_MISS_TTL_MS / 1000.0;
    pthread_mutex_lock(&x->mu);
    if ((e = cache_find(x, name, h))) { /* another request read it meanwhile: theirs is kept */
        centry_put(x, ne);
    } else {
        e = ne;
        e->hnext = x->b[h & (x->nb - 1)], x->b[h & (x->nb - 1)] = e;
        lru_front(x, e);
        x->n++;
        while (x->n > x->cap) {
            cache_remove(x, x->lru.prev);
            x->evictions++;
        }
    }
    const struct profile *p = e->p;
    if (!p)
        snprintf(why, len, "%s", e->why);
    else if (!pin(pn, e))
        snprintf(why, len, "out of memory"), p = NULL;
    pthread_mutex_unlock(&x->mu);
    return p;
}
/* ---- JSON helpers: Go's decoder matches keys case-insensitively */
static json_t *ci_get(json_t *o, const char *key)
{
    if (!json_is_object(o))
        return NULL;
    json_t *v = json_object_get(o, key);
    if (v)
        return v;
    const char *k;
    json_object_foreach(o, k, v) if (!strcasecmp(k, key)) return v;
    return NULL;
}

static const char *annotation(json_t *obj, const char *key)
{
    json_t *a = ci_get(ci_get(obj, "metadata"), "annotations");
    if (!a)
        a = json_object_get(obj, "annotations"); /* the store's nodes/NAME.json */
    json_t *v = json_object_get(a, key); /* annotation keys are case-sensitive */
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A Kubernetes quantity in base units (resource.Quantity's grammar: an unsigned decimal number, then a binary suffix
 * Ki..Ei, a decimal one m, k, M..E, or an exponent e3 / E-3): "500m", "2", "4Gi", "1e3", ".5".  -1 when it is not
 * one, is negative or is not finite ("abc", "-3", "1e400", "inf", "0x10", " 1"): a 400, never 0 or unlimited. */
static double quantity(const char *s)
{
    static const char dig[] = "0123456789";
    const char *p = s + (*s == '+');
    size_t ip = strspn(p, dig), fp = 0, n = ip;
    if (p[n] == '.')
        fp = strspn(p + n + 1, dig), n += 1 + fp;
    if ((!ip && !fp) || n > 64)
        return -1;
    static const struct {
        const char *suf;
        double mul;
    } u[] = {{"Ki", 0x1p10}, {"Mi", 0x1p20}, {"Gi", 0x1p30}, {"Ti", 0x1p40}, {"Pi", 0x1p50}, {"Ei", 0x1p60},
             {"m", 1e-3},    {"", 1},       {"k", 1e3},     {"M", 1e6},     {"G", 1e9},     {"T", 1e12},
             {"P", 1e15},    {"E", 1e18}};
    const char *suf = p + n;
    double mul = -1;
    for (size_t i = 0; i < sizeof u / sizeof u[0] && mul < 0; i++)
        if (!strcmp(suf, u[i].suf))
            mul = u[i].mul;
    if (mul < 0 && (*suf == 'e' || *suf == 'E')) { /* an exponent: [eE][+-]?digits */
        const char *x = suf + 1 + (suf[1] == '+' || suf[1] == '-');
        size_t xd = strspn(x, dig);
        if (xd && !x[xd] && xd <= 6)
            mul = pow(10.0, strtod(suf + 1, NULL));
    }
    if (mul < 0)
        return -1;
    char num[72];
    memcpy(num, p, n);
    num[n] = 0;
    double v = strtod(num, NULL) * mul;
    return isfinite(v) && v >= 0 ? v : -1;
}

/* o[key] as a quantity: 1 with *v, 0 when absent (or null), -1 when present and not a quantity (*bad: its text). */
static int qty_of(json_t *o, const char *key, double *v, char *bad, size_t len)
{
    json_t *j = json_object_get(o, key);
    *v = -1;
    if (!j || json_is_null(j))
        return 0;
    if (json_is_string(j))
        *v = quantity(json_string_value(j));
    else if (json_is_number(j) && isfinite(json_number_value(j)) && json_number_value(j) >= 0)
        *v = json_number_value(j);
    if (*v >= 0)
        return 1;
    if (json_is_string(j))
        snprintf(bad, len, "'%.40s'", json_string_value(j));
    else
        snprintf(bad, len, "a JSON %s", json_is_number(j) ? "negative number" : "value of the wrong type");
    return -1;
}

/* One line of UTF-8: control characters (a newline in a parser's excerpt of the body, in a node's name) become '?',
 * and so does each byte of a sequence that is not UTF-8 (a name cut at a byte count inside a character): jansson
 * takes no string that is not UTF-8. */
static char *one_line(char *s)
{
    const unsigned char *end = (const unsigned char *)s + strlen(s);
    for (char *c = s; *c;) {
        unsigned char ch = (unsigned char)*c;
        size_t n = ch >= 0x80 ? jscan_utf8_len((const unsigned char *)c, end) : 1;
        if (ch < 0x20 || ch == 0x7f || !n)
            *c = '?', n = 1;
        c += n;
    }
    return s;
}

/* ---- the answer */
static int answer(json_t *doc, int status, char **out, int *st)
{
    *out = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    *st = status;
    return *out ? 0 : -ENOMEM;
}

static int bad_request(char **out, int *st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad_request(char **out, int *st, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return answer(json_pack("{s:s}", "Error", one_line(msg)), 400, out, st);
}

/* ---- the node state */
static void ninfo_clear(struct ninfo *ni)
{
    free(ni->ten);
    free(ni->fail);
    free(ni->badq);
    free(ni->name);
    memset(ni, 0, sizeof *ni);
}

/* What the decisions need of one node object (a Node, or the node state's NAME.json), its tenant names interned in
 * st.  0 or -ENOMEM. */
static int ninfo_from(json_t *obj, struct ninfo *ni, struct strtab *st)
{
    json_t *alloc = ci_get(ci_get(obj, "status"), "allocatable");
    for (int k = 0; k < 2 && !ni->badq; k++) {
        char bad[64];
        if (qty_of(alloc, k ? "memory" : "cpu", k ? &ni->mem : &ni->cpu, bad, sizeof bad) < 0 &&
            asprintf(&ni->badq, "status.allocatable.%s: %s is not a quantity", k ? "memory" : "cpu", bad) < 0) {
            ni->badq = NULL;
            return -ENOMEM;
        }
    }
    if (ni->badq)
        ni->cpu = ni->mem = -1;
    const char *ten = annotation(obj, PL_EXT_ANN_TENANTS);
    if (!ten)
        return 0;
    json_error_t je;
    json_t *arr = json_loads(ten, 0, &je);
    if (json_is_array(arr)) {
        size_t n = json_array_size(arr);
        if (n && !(ni->ten = calloc(n, sizeof *ni->ten))) {
            json_decref(arr);
            return -ENOMEM;
        }
        ni->nten = (unsigned)n;
        for (unsigned k = 0; k < ni->nten; k++) {
            json_t *t = json_array_get(arr, k);
            if (json_is_string(t) && !(ni->ten[k] = intern(st, json_string_value(t)))) {
                json_decref(arr);
                return -ENOMEM;
            }
        }
        json_decref(arr);
        return 0;
    }
    json_decref(arr);
    return (ni->fail = strdup("annotation " PL_EXT_ANN_TENANTS " is not a JSON array of profile names")) ? 0 : -ENOMEM;
}

static void snap_free(struct nsnap *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->n; i++)
        ninfo_clear(&s->node[i]);
    free(s->node);
    free(s->b);
    strtab_free(&s->names);
    free(s);
}

static void snap_put(struct pl_extender *x, struct nsnap *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&x->smu);
    bool last = --s->refs == 0;
    pthread_mutex_unlock(&x->smu);
    if (last)
        snap_free(s);
}

static struct nsnap *snap_get(struct pl_extender *x)
{
    pthread_mutex_lock(&x->smu);
    struct nsnap *s = x->snap;
    if (s)
        s->refs++;
    pthread_mutex_unlock(&x->smu);
    return s;
}

static const struct ninfo *snap_find(const struct nsnap *s, const char *name)
{
    if (!s || !s->nb)
        return NULL;
    uint64_t h = hash(name);
    for (const struct ninfo *ni = s->b[h & (s->nb - 1)]; ni; ni = ni->hnext)
        if (ni->h == h && !strcmp(ni->name, name))
            return ni;
    return NULL;
}

/* Reads the node state directory whole: 0 with *out (a directory that does not exist: no node), or -errno with why.
 * A file that does not parse is left out: its node is then "not in the store", as before it was written. */
static int snap_load(const char *dir, struct nsnap **out, char *why, size_t len)
{
    struct nsnap *s = calloc(1, sizeof *s);
    if (!s)
        return ib_why(why, len, -ENOMEM, "out of memory");
    s->refs = 1;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) {
            *out = s;
            return 0;
        }
        int e = errno;
        free(s);
        return ib_why(why, len, -e, "node state %s: %s", dir, strerror(e));
    }
    unsigned cap = 0;
    int rc = 0;
    for (struct dirent *de; rc == 0 && (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l <= 5 || strcmp(de->d_name + l - 5, ".json") || de->d_name[0] == '.')
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(l - 5), de->d_name);
        if (!good_name(name))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        json_error_t je;
        json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(doc)) {
            json_decref(doc);
            continue;
        }
        if (s->n == cap) {
            unsigned nc = cap ? 2 * cap : 64;
            struct ninfo *nn = realloc(s->node, nc * sizeof *nn);
            if (!nn) {
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                json_decref(doc);
                break;
            }
            s->node = nn, cap = nc;
        }
        struct ninfo *ni = &s->node[s->n];
        memset(ni, 0, sizeof *ni);
        if (!(ni->name = strdup(name)) || ninfo_from(doc, ni, &s->names) < 0)
            rc = ib_why(why, len, -ENOMEM, "out of memory");
        else if (ni->badq) { /* that node cannot be judged: it fails with the reason */
            free(ni->fail);
            if (asprintf(&ni->fail, "nodes/%.200s.json: %s", name, ni->badq) < 0) {
                ni->fail = NULL;
                rc = ib_why(why, len, -ENOMEM, "out of memory");
            }
        }
        ni->h = hash(name);
        s->n++;
        json_decref(doc);
    }
    closedir(d);
    for (s->nb = 16; s->nb < 2 * s->n; s->nb *= 2)
        ;
    if (rc == 0 && !(s->b = calloc(s->nb, sizeof *s->b)))
        rc = ib_why(why, len, -ENOMEM, "out of memory");
    if (rc < 0) {
        snap_free(s);
        return rc;
    }
    for (unsigned i = 0; i < s->n; i++) {
        struct ninfo *ni = &s->node[i];
        ni->hnext = s->b[ni->h & (s->nb - 1)], s->b[ni->h & (s->nb - 1)] = ni;
    }
    *out = s;
    return 0;
}

/* What says that a directory changed: its own times and inode, and those of a ConfigMap volume's `..data` symlink
 * and its target (the kubelet writes a new timestamped directory and renames `..data` over to it). */
static void dir_sig(const char *dir, struct dsig *g)
{
    memset(g, 0, sizeof *g);
    struct stat st;
    if (stat(dir, &st) < 0) {
        g->err = errno;
        return;
    }
    g->m = st.st_mtim, g->c = st.st_ctim, g->ino = st.st_ino, g->dev = st.st_dev;
    char p[4096];
    snprintf(p, sizeof p, "%s/..data", dir);
    if (lstat(p, &st) == 0) {
        g->lm = st.st_mtim, g->lino = st.st_ino;
        ssize_t n = readlink(p, g->link, sizeof g->link - 1);
        g->link[n > 0 ? n : 0] = 0;
    }
}

static bool sig_eq(const struct dsig *a, const struct dsig *b)
{
    return a->err == b->err && a->ino == b->ino && a->dev == b->dev && a->lino == b->lino &&
           !memcmp(&a->m, &b->m, sizeof a->m) && !memcmp(&a->c, &b->c, sizeof a->c) &&
           !memcmp(&a->lm, &b->lm, sizeof a->lm) && !strcmp(a->link, b->link);
}

/* Reads the node state again (under reload_mu): the new snapshot replaces the old whole. */
static void nodes_reload(struct pl_extender *x)
{
    struct nsnap *s = NULL;
    char why[256] = "";
    int rc = snap_load(x->ndir, &s, why, sizeof why);
    pthread_mutex_lock(&x->smu);
    struct nsnap *old = NULL;
    if (rc == 0) {
        old = x->snap, x->snap = s;
        x->loaded = true;
        x->load_why[0] = 0;
    } else {
        snprintf(x->load_why, sizeof x->load_why, "%s", why); /* the last good state is kept */
        if (!x->snap)
            x->loaded = false;
    }
    pthread_mutex_unlock(&x->smu);
    snap_put(x, old);
}

/* The store checked for a change, at most every PL_EXT_STORE_CHECK_MS; one request does it, the others go on. */
static void store_check(struct pl_extender *x, bool force)
{
    long long now = (long long)(now_s(x) * 1e9);
    if (!force && now < atomic_load(&x->next_check_ns))
        return;
    if (force)
        pthread_mutex_lock(&x->reload_mu);
    else if (pthread_mutex_trylock(&x->reload_mu))
        return;
    atomic_store(&x->next_check_ns, now + PL_EXT_STORE_CHECK_MS * 1000000ll);
    struct dsig p, n;
    dir_sig(x->dir, &p);
    dir_sig(x->ndir, &n);
    bool first = !x->psig.ino && !x->psig.err;
    if (!sig_eq(&p, &x->psig)) {
        x->psig = p;
        if (!x->o.lookup && !first)
            cache_flush(x);
        if (!first)
            atomic_fetch_add(&x->reloads, 1);
    }
    bool nfirst = !x->nsig.ino && !x->nsig.err;
    if (!sig_eq(&n, &x->nsig) || force) {
        bool changed = !sig_eq(&n, &x->nsig);
        x->nsig = n;
        nodes_reload(x);
        if (changed && !nfirst)
            atomic_fetch_add(&x->reloads, 1);
    }
    pthread_mutex_unlock(&x->reload_mu);
}

/* ---- assumed tenants (under amu) */
static void assumed_drop(struct pl_extender *x, unsigned i)
{
    free(x->as[i].key), free(x->as[i].node), free(x->as[i].profile);
    memmove(&x->as[i], &x->as[i + 1], (x->nas - i - 1) * sizeof *x->as);
    x->nas--;
}

static void assumed_expire(struct pl_extender *x, double now)
{
    for (unsigned i = 0; i < x->nas;)
        if (now - x->as[i].t >= x->o.assume_ttl_s)
            assumed_drop(x, i), x->as_expired++;
        else
            i++;
}

/* ---- figures */
static void count_refusal(struct pl_extender *x, const char *res, size_t l, unsigned long times)
{
    char name[64];
    if (!l || l >= sizeof name || strspn(res, "abcdefghijklmnopqrstuvwxyz0123456789._-") < l)
        res = "other", l = 5;
    snprintf(name, sizeof name, "%.*s", (int)l, res);
    pthread_mutex_lock(&x->fmu);
    unsigned i = 0;
    while (i < x->nref && strcmp(x->ref[i].name, name))
        i++;
    if (i == x->nref && x->nref < 256) {
        struct refusal *nr = realloc(x->ref, (x->nref + 1) * sizeof *nr);
        if (nr) {
            x->ref = nr;
            snprintf(x->ref[x->nref].name, sizeof x->ref[x->nref].name, "%s", name);
            x->ref[x->nref++].n = 0;
        }
    }
    if (i < x->nref)
        x->ref[i].n += times;
    pthread_mutex_unlock(&x->fmu);
}

/* An unsafe verdict's reason is the check's "deciding" list, "RES (who breaks whom ...), RES (...)": each RES at the
 * top level counts once. */
static void count_refusals(struct pl_extender *x, const char *why, unsigned long times)
{
    int depth = 0;
    const char *tok = why;
    for (const char *c = why; *c; c++) {
        if (*c == '(') {
            if (depth++ == 0) {
                const char *a = tok, *b = c;
                while (a < b && *a == ' ')
                    a++;
                while (b > a && b[-1] == ' ')
                    b--;
                count_refusal(x, a, (size_t)(b - a), times);
            }
        } else if (*c == ')') {
            depth -= depth > 0;
        } else if (*c == ',' && depth == 0) {
            tok = c + 1;
        }
    }
}

/* ---- life */
int pl_extender_new(const struct pl_extender_opts *o, struct pl_extender **out, char *why, size_t len)
{
    struct pl_extender *x = calloc(1, sizeof *x);
    if (!x)
        return ib_why(why, len, -ENOMEM, "out of memory");
    x->o = *o;
    x->cap = o->cache_cap ? o->cache_cap : PL_EXT_CACHE_CAP;
    for (x->nb = 16; x->nb < 2 * x->cap; x->nb *= 2)
        ;
    x->dir = strdup(o->profiles ? o->profiles : ".");
    if (o->nodes)
        x->ndir = strdup(o->nodes);
    else if (x->dir && asprintf(&x->ndir, "%s/nodes", x->dir) < 0)
        x->ndir = NULL;
    x->b = calloc(x->nb, sizeof *x->b);
    if (!x->dir || !x->ndir || !x->b) {
        free(x->dir), free(x->ndir), free(x->b), free(x);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    x->lru.next = x->lru.prev = &x->lru;
    pthread_mutex_init(&x->mu, NULL);
    pthread_mutex_init(&x->reload_mu, NULL);
    pthread_mutex_init(&x->smu, NULL);
    pthread_mutex_init(&x->amu, NULL);
    pthread_mutex_init(&x->fmu, NULL);
    pthread_mutex_init(&x->vmu, NULL);
    x->vc = calloc(VC_SLOTS, sizeof *x->vc); /* NULL: no verdict kept across requests, nothing else lost */
    store_check(x, true); /* the node state, read once now; readiness says whether it could be */
    *out = x;
    return 0;
}

void pl_extender_free(struct pl_extender *x)
{
    if (!x)
        return;
    cache_flush(x);
    snap_put(x, x->snap);
    while (x->nas)
        assumed_drop(x, x->nas - 1);
    free(x->as);
    free(x->ref);
    free(x->b);
    free(x->dir);
    free(x->ndir);
    pthread_mutex_destroy(&x->mu);
    pthread_mutex_destroy(&x->reload_mu);
    pthread_mutex_destroy(&x->smu);
    pthread_mutex_destroy(&x->amu);
    pthread_mutex_destroy(&x->fmu);
    pthread_mutex_destroy(&x->vmu);
    free(x->vc);
    free(x);
}

void pl_extender_get_stats(struct pl_extender *x, struct pl_extender_stats *s)
{
    memset(s, 0, sizeof *s);
    s->decisions[0] = atomic_load(&x->decisions[0]), s->decisions[1] = atomic_load(&x->decisions[1]);
    pthread_mutex_lock(&x->mu);
    s->hits = x->hits, s->misses = x->misses, s->evictions = x->evictions, s->expired = x->expired;
    s->entries = x->n, s->capacity = x->cap;
    s->profiles_freed = (unsigned long)atomic_load(&x->pgen);
    pthread_mutex_unlock(&x->mu);
    s->reloads = atomic_load(&x->reloads);
    s->nodes_read[0] = atomic_load(&x->nodes_read[0]), s->nodes_read[1] = atomic_load(&x->nodes_read[1]);
    pthread_mutex_lock(&x->smu);
    s->nodes = x->snap ? x->snap->n : 0;
    pthread_mutex_unlock(&x->smu);
    pthread_mutex_lock(&x->amu);
    s->assumed = x->nas, s->assumed_total = x->as_total, s->assumed_confirmed = x->as_confirmed;
    s->assumed_expired = x->as_expired;
    pthread_mutex_unlock(&x->amu);
}

struct buf {
    char *s;
    size_t n, cap;
    bool oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
    for (int tries = 0; !b->oom && tries < 2; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = true;
            return;
        }
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = 2 * (b->cap + (size_t)k) + 256;
        char *ns = realloc(b->s, nc);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns, b->cap = nc;
    }
}

static void put_raw(struct buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = 2 * (b->cap + n) + 256;
        char *ns = realloc(b->s, nc);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns, b->cap = nc;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
    put(b, "# HELP ibench_extender_%s %s\n# TYPE ibench_extender_%s %s\n", name, help, name, type);
}

int pl_extender_metrics(struct pl_extender *x, char **text)
{
    struct pl_extender_stats s;
    pl_extender_get_stats(x, &s);
    struct buf b = {0};
    family(&b, "decisions_total", "counter", "Requests decided (a pod with a profile of the store), by verb.");
    put(&b, "ibench_extender_decisions_total{verb=\"filter\"} %lu\n", s.decisions[0]);
    put(&b, "ibench_extender_decisions_total{verb=\"prioritize\"} %lu\n", s.decisions[1]);
    family(&b, "refusals_total", "counter",
           "Nodes filter refused, by the resource that broke (no-room: requests; unjudged: state unreadable).");
    pthread_mutex_lock(&x->fmu);
    for (unsigned i = 0; i < x->nref; i++)
        put(&b, "ibench_extender_refusals_total{resource=\"%s\"} %lu\n", x->ref[i].name, x->ref[i].n);
    pthread_mutex_unlock(&x->fmu);
    family(&b, "nodes_read_total", "counter",
           "Node objects whose state a request carried, by how it was read (scanned: from the text; parsed: an "
           "unusual one, through jansson).");
    put(&b, "ibench_extender_nodes_read_total{path=\"scanned\"} %lu\n", s.nodes_read[0]);
    put(&b, "ibench_extender_nodes_read_total{path=\"parsed\"} %lu\n", s.nodes_read[1]);
    family(&b, "cache_hits_total", "counter", "Profile lookups answered by the cache.");
    put(&b, "ibench_extender_cache_hits_total %lu\n", s.hits);
    family(&b, "cache_misses_total", "counter", "Profile lookups that read the store.");
    put(&b, "ibench_extender_cache_misses_total %lu\n", s.misses);
    family(&b, "cache_evictions_total", "counter", "Profiles dropped from the full cache, least recently used.");
    put(&b, "ibench_extender_cache_evictions_total %lu\n", s.evictions);
    family(&b, "cache_expired_total", "counter", "Absences (not in the store) forgotten after their time.");
    put(&b, "ibench_extender_cache_expired_total %lu\n", s.expired);
    family(&b, "cache_entries", "gauge", "Profiles and absences cached now.");
    put(&b, "ibench_extender_cache_entries %lu\n", s.entries);
    family(&b, "cache_capacity", "gauge", "Entries the cache holds at most.");
    put(&b, "ibench_extender_cache_capacity %lu\n", s.capacity);
    family(&b, "store_reloads_total", "counter", "Store changes seen (profile cache emptied, node state read again).");
    put(&b, "ibench_extender_store_reloads_total %lu\n", s.reloads);
    family(&b, "store_nodes", "gauge", "Nodes in the node state held.");
    put(&b, "ibench_extender_store_nodes %lu\n", s.nodes);
    family(&b, "assumed_tenants", "gauge", "Pods recommended and not yet listed by their node.");
    put(&b, "ibench_extender_assumed_tenants %lu\n", s.assumed);
    family(&b, "assumed_total", "counter", "Pods taken as assumed tenants of prioritize's top node.");
    put(&b, "ibench_extender_assumed_total %lu\n", s.assumed_total);
    family(&b, "assumed_confirmed_total", "counter", "Assumed tenants dropped because their node lists them.");
    put(&b, "ibench_extender_assumed_confirmed_total %lu\n", s.assumed_confirmed);
    family(&b, "assumed_expired_total", "counter", "Assumed tenants dropped unconfirmed after their time.");
    put(&b, "ibench_extender_assumed_expired_total %lu\n", s.assumed_expired);
    if (b.oom || !b.s) {
        free(b.s);
        return -ENOMEM;
    }
    *text = b.s;
    return 0;
}

bool pl_extender_ready(struct pl_extender *x, char *why, size_t len)
{
    struct stat st;
    if (stat(x->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, len, "the profile store %s is not a readable directory", x->dir);
        return false;
    }
    pthread_mutex_lock(&x->smu);
    bool ok = x->loaded;
    if (ok)
        snprintf(why, len, "the store is loaded: %u nodes", x->snap ? x->snap->n : 0);
    else
        snprintf(why, len, "the node state is not loaded: %s", x->load_why);
    pthread_mutex_unlock(&x->smu);
    return ok;
}

/* ---- a request with whole Node objects, read without building the tree of what is not used (pl_jscan.h) */
struct span {
    const char *p;
    size_t n;
};

struct fitem {
    struct span raw;                    /* the Node object as sent: echoed verbatim by filter */
    struct span name, annotations, allocatable; /* n 0: absent */
    bool object;
};

struct fast {
    struct span raw;      /* the whole Nodes value; p NULL: no Nodes object (the slow path, or names) */
    bool items;           /* Nodes.items was an array */
    struct fitem *it;
    unsigned n, cap;
    struct span kind, api;
};

static int fast_node(struct jscan *s, struct fitem *it)
{
    it->object = true;
    it->raw.p = s->p;
    bool first = true;
    const char *k;
    size_t kl;
    int r;
    s->p++; /* '{' */
    while ((r = jscan_member(s, &first, &k, &kl)) == 1) {
        bool md = jscan_key_is(k, kl, "metadata"), st = !md && jscan_key_is(k, kl, "status");
        if ((md || st) && jscan_peek(s) == '{') {
            s->p++;
            bool f2 = true;
            while ((r = jscan_member(s, &f2, &k, &kl)) == 1) {
                struct span *want = md && jscan_key_is(k, kl, "name")          ? &it->name
                                    : md && jscan_key_is(k, kl, "annotations") ? &it->annotations
                                    : st && jscan_key_is(k, kl, "allocatable") ? &it->allocatable
                                                                               : NULL;
                const char *v = s->p;
                if (jscan_value(s, 3) < 0)
                    return -1;
                if (want)
                    want->p = v, want->n = (size_t)(s->p - v);
            }
            if (r < 0)
                return -1;
        } else if (jscan_value(s, 2) < 0) {
            return -1;
        }
    }
    if (r < 0)
        return -1;
    it->raw.n = (size_t)(s->p - it->raw.p);
    return 0;
}

/* The Nodes object: its items' spans, kind and apiVersion. */
static int fast_nodes(struct jscan *s, struct fast *fa)
{
    fa->raw.p = s->p;
    bool first = true;
    const char *k;
    size_t kl;
    int r;
    s->p++; /* '{' */
    while ((r = jscan_member(s, &first, &k, &kl)) == 1) {
        if (jscan_key_is(k, kl, "items") && jscan_peek(s) == '[') {
            fa->items = true;
            s->p++;
            bool f2 = true;
            while ((r = jscan_element(s, &f2)) == 1) {
                if (fa->n == fa->cap) {
                    unsigned nc = fa->cap ? 2 * fa->cap : 64;
                    struct fitem *ni = realloc(fa->it, nc * sizeof *ni);
                    if (!ni)
                        return -ENOMEM;
                    fa->it = ni, fa->cap = nc;
                }
                struct fitem *it = &fa->it[fa->n++];
                memset(it, 0, sizeof *it);
                if (jscan_peek(s) == '{' ? fast_node(s, it) < 0 : jscan_value(s, 2) < 0)
                    return -1;
            }
            if (r < 0)
                return -1;
            continue;
        }
        struct span *want = jscan_key_is(k, kl, "kind") ? &fa->kind : jscan_key_is(k, kl, "apiVersion") ? &fa->api
                                                                                                        : NULL;
        const char *v = s->p;
        if (jscan_value(s, 1) < 0)
            return -1;
        if (want && !want->p)
            want->p = v, want->n = (size_t)(s->p - v);
    }
    if (r < 0)
        return -1;
    fa->raw.n = (size_t)(s->p - fa->raw.p);
    return 0;
}

/* ---- a Node object's state without jansson: the common case read straight from the scanned spans (1000 small
 * parses with their trees cost a third of a request at 1000 nodes).  Anything unusual (an escape in a key or a
 * name, a \u escape, a value of another type than a string, many keys) goes to the general path, which parses the
 * spans with jansson and so decides exactly as before: fast_ninfo only takes what it reads the same way. */

/* The text of a checked JSON string (between its quotes) without its two-character escapes, malloc'd; NULL with
 * *slow for a \u escape, NULL without it when out of memory. */
static char *unescape(const char *p, size_t n, bool *slow)
{
    char *o = malloc(n + 1), *q = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\\') {
            *q++ = p[i];
            continue;
        }
        switch (p[++i]) { /* the scanner checked it is one of these */
        case 'b': *q++ = '\b'; break;
        case 'f': *q++ = '\f'; break;
        case 'n': *q++ = '\n'; break;
        case 'r': *q++ = '\r'; break;
        case 't': *q++ = '\t'; break;
        case 'u': free(o); *slow = true; return NULL;
        default: *q++ = p[i]; /* " \ / */
        }
    }
    *q = 0;
    return o;
}

#define FAST_KEYS 32 /* keys of one object checked for duplicates here; more: the general path */

/* The members of a checked object span whose values are all strings and whose keys have no escape and no
 * duplicate: want[k]'s value (a span with its quotes; n 0: absent).  0, or 1: not that simple. */
static int simple_object(struct span sp, const char *const *want, struct span *got, unsigned nwant)
{
    struct jscan s;
    jscan_init(&s, sp.p, sp.n);
    if (jscan_open(&s, '{') < 0)
        return 1;
    const char *k, *seen[FAST_KEYS];
    size_t kl, seenl[FAST_KEYS];
    unsigned ns = 0;
    bool first = true;
    int r;
    while ((r = jscan_member(&s, &first, &k, &kl)) == 1) {
        if (ns == FAST_KEYS || memchr(k, '\\', kl) || jscan_peek(&s) != '"')
            return 1;
        for (unsigned i = 0; i < ns; i++)
            if (seenl[i] == kl && !memcmp(seen[i], k, kl))
                return 1; /* a duplicate: jansson's 400 */
        seen[ns] = k, seenl[ns++] = kl;
        const char *v = s.p;
        if (jscan_value(&s, 1) < 0)
            return 1;
        for (unsigned w = 0; w < nwant; w++)
            if (strlen(want[w]) == kl && !memcmp(want[w], k, kl))
                got[w].p = v, got[w].n = (size_t)(s.p - v);
    }
    return r < 0;
}

/* The tenants annotation's text, a JSON array of names without escapes, interned into ni.  0, 1 (not that simple),
 * or -ENOMEM. */
static int simple_tenants(const char *text, struct ninfo *ni, struct strtab *st)
{
    struct jscan s;
    jscan_init(&s, text, strlen(text));
    if (jscan_open(&s, '[') < 0)
        return 1;
    const char *el[PL_SIM_MAX_TENANTS];
    size_t ell[PL_SIM_MAX_TENANTS];
    unsigned n = 0;
    bool first = true;
    int r;
    while ((r = jscan_element(&s, &first)) == 1) {
        const char *v = s.p + 1;
        if (n == PL_SIM_MAX_TENANTS || jscan_peek(&s) != '"' || jscan_value(&s, 1) < 0 ||
            memchr(v, '\\', (size_t)(s.p - 1 - v)))
            return 1;
        el[n] = v, ell[n++] = (size_t)(s.p - 1 - v);
    }
    if (r < 0 || jscan_finish(&s) < 0)
        return 1;
    if (n && !(ni->ten = calloc(n, sizeof *ni->ten)))
        return -ENOMEM;
    ni->nten = n;
    for (unsigned k = 0; k < n; k++) {
        char name[256];
        if (ell[k] >= sizeof name)
            return 1;
        memcpy(name, el[k], ell[k]);
        name[ell[k]] = 0;
        if (!(ni->ten[k] = intern(st, name)))
            return -ENOMEM;
    }
    return 0;
}

/* ni from a scanned Node's spans, as ninfo_from reads the same Node parsed.  0, 1 (the general path; ni holds what
 * ninfo_clear releases), or -ENOMEM. */
static int fast_ninfo(const struct fitem *it, struct ninfo *ni, struct strtab *st)
{
    bool slow = false;
    if (!it->object || it->name.n < 2 || it->name.p[0] != '"' || memchr(it->name.p, '\\', it->name.n))
        return 1;
    if (!(ni->name = strndup(it->name.p + 1, it->name.n - 2)))
        return -ENOMEM;
    static const char *const room[] = {"cpu", "memory"};
    struct span q[2] = {{0}};
    if (it->allocatable.n && simple_object(it->allocatable, room, q, 2))
        return 1;
    for (int k = 0; k < 2 && !ni->badq; k++) {
        double *v = k ? &ni->mem : &ni->cpu;
        *v = -1;
        if (!q[k].n)
            continue;
        char *t = unescape(q[k].p + 1, q[k].n - 2, &slow);
        if (!t)
            return slow ? 1 : -ENOMEM;
        *v = quantity(t);
        if (*v < 0 && asprintf(&ni->badq, "status.allocatable.%s: '%.40s' is not a quantity", room[k], t) < 0) {
            ni->badq = NULL;
            free(t);
            return -ENOMEM;
        }
        free(t);
    }
    if (ni->badq)
        ni->cpu = ni->mem = -1;
    static const char *const ann[] = {PL_EXT_ANN_TENANTS};
    struct span ts = {0};
    if (!it->annotations.n)
        return 0;
    if (simple_object(it->annotations, ann, &ts, 1))
        return 1;
    if (!ts.n)
        return 0;
    char *text = unescape(ts.p + 1, ts.n - 2, &slow);
    if (!text)
        return slow ? 1 : -ENOMEM;
    int r = simple_tenants(text, ni, st);
    free(text);
    return r;
}

/* The ExtenderArgs: a Nodes object is scanned (fa), everything else goes to jansson (*req, duplicates refused).
 * 0; 1 with a one-line reason in why (not JSON: a 400); -ENOMEM. */
static int parse_request(const char *body, size_t len, json_t **req, struct fast *fa, char *why, size_t wlen)
{
    json_error_t je;
    struct jscan s;
    jscan_init(&s, body, len);
    if (jscan_peek(&s) != '{') { /* not an object: jansson says what it is */
        if (!(*req = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je))) {
            snprintf(why, wlen, "the body is not JSON: line %d: %s", je.line, je.text);
            return 1;
        }
        return 0;
    }
    /* the rest: "{" and the members other than Nodes, as they were */
    char *rest = malloc(len + 2);
    if (!rest)
        return -ENOMEM;
    size_t rn = 0;
    rest[rn++] = '{';
    bool first = true;
    const char *k;
    size_t kl;
    int r;
    s.p++;
    while ((r = jscan_member(&s, &first, &k, &kl)) == 1) {
        if (jscan_key_is(k, kl, "Nodes") && jscan_peek(&s) == '{') {
            if (fa->raw.p) {
                free(rest);
                snprintf(why, wlen, "Nodes given twice");
                return 1;
            }
            if ((r = fast_nodes(&s, fa)) < 0)
                break;
            continue;
        }
        const char *m = k - 1;
        if (jscan_value(&s, 1) < 0) {
            r = -1;
            break;
        }
        if (rn > 1)
            rest[rn++] = ',';
        memcpy(rest + rn, m, (size_t)(s.p - m));
        rn += (size_t)(s.p - m);
    }
    if (r == -ENOMEM) {
        free(rest);
        return -ENOMEM;
    }
    if (r < 0 || jscan_finish(&s) < 0) {
        free(rest);
        snprintf(why, wlen, "the body is not JSON: at byte %zu: %s", (size_t)(s.p - body), s.err ? s.err : "?");
        return 1;
    }
    rest[rn++] = '}';
    *req = json_loadb(rest, rn, JSON_REJECT_DUPLICATES, &je);
    free(rest);
    if (!*req) {
        snprintf(why, wlen, "the body is not JSON: %s", je.text);
        return 1;
    }
    return 0;
}

/* A checked span parsed (small: a name, annotations, allocatable); NULL when jansson refuses it (a duplicate). */
static json_t *span_json(struct span sp, json_error_t *je)
{
    return json_loadb(sp.p, sp.n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, je);
}

/* One candidate node of a request. */
struct node {
    const char *name;
    json_t *obj;             /* the Node object (Nodes form); NULL with names only */
    const struct ninfo *ni;  /* its state: &own (Nodes form) or the snapshot's (names); NULL: not in the store */
    struct ninfo own;
    char *fail;              /* non-NULL: fails before any verdict (its state or a tenant cannot be judged) */
    unsigned v;              /* its verdict: an index into the request's distinct verdicts */
};

static int set_fail(struct node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_fail(struct node *n, const char *fmt, ...)
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

/* The pod's key for assumed tenants: metadata.uid, else namespace/name; false when it has neither. */
static bool pod_key(json_t *pod, char *key, size_t len)
{
    json_t *md = ci_get(pod, "metadata"), *uid = ci_get(md, "uid"), *ns = ci_get(md, "namespace"),
           *nm = ci_get(md, "name");
    if (json_is_string(uid) && *json_string_value(uid))
        return (size_t)snprintf(key, len, "uid:%s", json_string_value(uid)) < len;
    if (json_is_string(nm) && *json_string_value(nm))
        return (size_t)snprintf(key, len, "%s/%s", json_is_string(ns) ? json_string_value(ns) : "",
                                json_string_value(nm)) < len;
    return false;
}

static unsigned count_of(const struct ninfo *ni, const char *profile)
{
    unsigned c = 0;
    for (unsigned k = 0; k < ni->nten; k++)
        c += ni->ten[k] && !strcmp(ni->ten[k], profile);
    return c;
}

/* The request's nodes by name, for the assumed tenants: an open-addressed table of indices + 1. */
static unsigned *name_index(const struct node *nodes, unsigned nn, unsigned *nb)
{
    for (*nb = 16; *nb < 2 * nn; *nb *= 2)
        ;
    unsigned *t = calloc(*nb, sizeof *t);
    for (unsigned i = 0; t && i < nn; i++) {
        unsigned h = (unsigned)hash(nodes[i].name) & (*nb - 1);
        while (t[h])
            h = (h + 1) & (*nb - 1);
        t[h] = i + 1;
    }
    return t;
}

static int node_at(const unsigned *t, unsigned nb, const struct node *nodes, const char *name)
{
    for (unsigned h = (unsigned)hash(name) & (nb - 1); t[h]; h = (h + 1) & (nb - 1))
        if (!strcmp(nodes[t[h] - 1].name, name))
            return (int)t[h] - 1;
    return -1;
}

/* One tenant more on node i of the fleet: 0 (or the node's fail set), or -ENOMEM. */
static int add_tenant(struct pl_sim_fleet *f, unsigned *cap_apps, struct node *n, unsigned i, const struct profile *tp)
{
    struct pl_sim_machine *m = &f->m[i];
    if (m->ntenants >= PL_SIM_MAX_TENANTS - 1)
        return set_fail(n, "more than %u tenants", PL_SIM_MAX_TENANTS - 1);
    if (f->napps + 1 >= *cap_apps) {
        struct pl_sim_app *na = realloc(f->app, 2 * *cap_apps * sizeof *na);
        if (!na)
            return -ENOMEM;
        memset(na + *cap_apps, 0, *cap_apps * sizeof *na);
        f->app = na, *cap_apps *= 2;
    }
    struct pl_sim_app *ap = &f->app[f->napps];
    ap->p = tp, ap->machine = (int)i;
    m->tenant[m->ntenants++] = f->napps++;
    return 0;
}

/* The profiles a request has looked up, by name: a request names a handful of profiles thousands of times. */
struct seen {
    const char *name[64];
    const struct profile *p[64];
    unsigned n;
};

static const struct profile *tenant_profile(struct pl_extender *x, struct seen *sn, const char *name,
                                            struct pins *pn, char *why, size_t len)
{
    for (unsigned k = 0; k < sn->n; k++) /* interned: the same name is the same pointer */
        if (sn->name[k] == name)
            return sn->p[k];
    const struct profile *p = profile_of(x, name, pn, why, len);
    if (p && sn->n < 64)
        sn->name[sn->n] = name, sn->p[sn->n++] = p;
    return p;
}

/* An assumed tenant copied out of the table for one request. */
struct use {
    unsigned node;
    char *profile;
};

/* prioritize's order: an uncertain node after every safe and empty one, else the interference policy's order */
static bool before(const struct pl_sim_fleet *f, const struct node *nodes, const struct pl_verdict *uv, unsigned i,
                   unsigned j)
{
    const struct pl_verdict *vi = &uv[nodes[i].v], *vj = &uv[nodes[j].v];
    bool ui = vi->kind == PL_V_UNCERTAIN, uj = vj->kind == PL_V_UNCERTAIN;
    if (ui != uj)
        return uj;
    return pl_sim_safe_before(f, i, vi->fit, j, vj->fit);
}

/* Stable merge sort of idx[0..n) by prioritize's order (before: uncertain last, else pl_sim_safe_before), fit from
 * the verdicts. */
static void sort_by_policy(const struct pl_sim_fleet *f, const struct node *nodes, const struct pl_verdict *uv,
                           unsigned *idx, unsigned *tmp, unsigned n)
{
    if (n < 2)
        return;
    unsigned h = n / 2;
    sort_by_policy(f, nodes, uv, idx, tmp, h);
    sort_by_policy(f, nodes, uv, idx + h, tmp, n - h);
    unsigned i = 0, j = h, k = 0;
    while (i < h && j < n) /* the right one first only when strictly before: stable */
        tmp[k++] = before(f, nodes, uv, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

/* ---- verdicts across requests */
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

static bool vc_get(struct pl_extender *x, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                   uint64_t h, struct pl_verdict *v)
{
    if (!x->vc)
        return false;
    h = vc_hash(f, a, filter, h);
    pthread_mutex_lock(&x->vmu);
    const struct vcent *e = &x->vc[h % VC_SLOTS];
    bool hit = vc_same(e, f, i, a, filter, h, atomic_load(&x->pgen));
    if (hit)
        *v = e->v;
    pthread_mutex_unlock(&x->vmu);
    return hit;
}

static void vc_put(struct pl_extender *x, const struct pl_sim_fleet *f, unsigned i, unsigned a, bool filter,
                   uint64_t h, const struct pl_verdict *v)
{
    const struct pl_sim_machine *m = &f->m[i];
    if (!x->vc)
        return;
    h = vc_hash(f, a, filter, h);
    pthread_mutex_lock(&x->vmu);
    struct vcent *e = &x->vc[h % VC_SLOTS]; /* the slot's last verdict makes way */
    e->used = true, e->h = h, e->gen = atomic_load(&x->pgen), e->filter = filter, e->nt = m->ntenants;
    e->pod = f->app[a].p, e->pod_cpus = f->app[a].cpus, e->pod_mem = f->app[a].mem;
    e->room[0] = m->cpus, e->room[1] = m->mem, e->room[2] = m->cpu_used, e->room[3] = m->mem_used;
    for (unsigned t = 0; t < m->ntenants; t++)
        e->t[t] = f->app[m->tenant[t]].p;
    e->v = *v;
    pthread_mutex_unlock(&x->vmu);
}

/* ---- the answer, written directly (jansson's tree of a 1000-node answer costs more than the decisions) */
/* s as a JSON string.  A sequence that is not UTF-8 becomes U+FFFD: a reason cuts a name at a byte count (%.200s),
 * which may fall inside a character, and the answer must stay JSON. */
static void put_str(struct buf *b, const char *s)
{
    put_raw(b, "\"", 1);
    const unsigned char *end = (const unsigned char *)s + strlen(s);
    for (const char *c = s; *c;) {
        size_t run = 0; /* printable ASCII but the quote and the backslash: as it is */
        while ((unsigned char)c[run] >= 0x20 && (unsigned char)c[run] < 0x80 && c[run] != '"' && c[run] != '\\')
            run++;
        put_raw(b, c, run);
        c += run;
        if (!*c)
            break;
        unsigned char ch = (unsigned char)*c;
        if (ch >= 0x80) {
            size_t n = jscan_utf8_len((const unsigned char *)c, end);
            if (n)
                put_raw(b, c, n);
            else
                put_raw(b, "\xef\xbf\xbd", 3); /* U+FFFD */
            c += n ? n : 1;
            continue;
        }
        c++;
        switch (ch) {
        case '"': put(b, "\\\""); break;
        case '\\': put(b, "\\\\"); break;
        case '\b': put(b, "\\b"); break;
        case '\f': put(b, "\\f"); break;
        case '\n': put(b, "\\n"); break;
        case '\r': put(b, "\\r"); break;
        case '\t': put(b, "\\t"); break;
        default: put(b, "\\u%04X", ch);
        }
    }
    put_raw(b, "\"", 1);
}

static int answer_buf(struct buf *b, char **out, int *st)
{
    if (b->oom || !b->s) {
        free(b->s);
        return -ENOMEM;
    }
    *out = b->s;
    *st = 200;
    return 0;
}

int pl_extender_handle(struct pl_extender *x, const char *verb, const char *body, size_t len, char **out, int *status)
{
    bool filter = !strcmp(verb, PL_EXT_VERB_FILTER);
    if (!filter && strcmp(verb, PL_EXT_VERB_PRIORITIZE))
        return bad_request(out, status, "unknown verb '%.32s' (filter, prioritize)", verb);
    json_error_t je;
    json_t *req = NULL;
    struct fast fa = {0};
    char perr[300];
    int pr = parse_request(body, len, &req, &fa, perr, sizeof perr);
    if (pr) {
        free(fa.it);
        return pr < 0 ? pr : bad_request(out, status, "%s", perr);
    }
    store_check(x, false);
    int rc = 0;
    struct node *nodes = NULL;
    unsigned nn = 0, nuse = 0, *nidx = NULL, nbidx = 0, nuv = 0, *order = NULL, *memo = NULL;
    struct pl_verdict *uv = NULL;
    char **uwhy = NULL;
    unsigned long *vcount = NULL;
    uint64_t *mkey = NULL;
    struct use *use = NULL;
    struct pl_sim_fleet f = {0};
    struct pins pn = {0};
    struct seen sn = {.n = 0};
    struct strtab rnames = {0}; /* the tenant names of a request's Node objects */
    struct nsnap *snap = NULL;
    json_t *pod = ci_get(req, "Pod"), *jnodes = ci_get(req, "Nodes"), *jnames = ci_get(req, "NodeNames");
    json_t *items = jnodes && !json_is_null(jnodes) ? ci_get(jnodes, "items") : NULL;
    bool fast = fa.raw.p != NULL, by_name = !items && !fast;
    if (!json_is_object(req)) {
        rc = bad_request(out, status, "an ExtenderArgs object expected");
        goto done;
    }
    if (!json_is_object(pod)) {
        rc = bad_request(out, status, "no Pod in the request (an ExtenderArgs needs one)");
        goto done;
    }
    if ((fast && !fa.items) || (!fast && jnodes && !json_is_null(jnodes) && !json_is_array(items))) {
        rc = bad_request(out, status, "Nodes: a NodeList with items expected");
        goto done;
    }
    if (by_name && !json_is_array(jnames)) {
        rc = bad_request(out, status, "neither Nodes.items nor NodeNames in the request");
        goto done;
    }
    json_t *list = by_name ? jnames : items;
    size_t nlist = fast ? fa.n : json_array_size(list);
    nn = (unsigned)nlist;
    if (nlist > PL_EXT_MAX_NODES) {
        rc = bad_request(out, status, "%zu nodes: at most %u in one request", nlist, PL_EXT_MAX_NODES);
        goto done;
    }
    nodes = calloc(nn ? nn : 1, sizeof *nodes);
    if (!nodes) {
        rc = -ENOMEM;
        goto done;
    }
    if (by_name)
        snap = snap_get(x);
    for (unsigned i = 0; i < nn; i++) {
        json_t *e = fast ? NULL : json_array_get(list, i);
        int fr = fast && !x->o.general_only ? fast_ninfo(&fa.it[i], &nodes[i].own, &rnames) : 1;
        if (fast && fr >= 0)
            atomic_fetch_add(&x->nodes_read[fr ? 1 : 0], 1);
        if (fr < 0) {
            rc = -ENOMEM;
            goto done;
        }
        if (fr == 0) {
            nodes[i].name = nodes[i].own.name;
            nodes[i].ni = &nodes[i].own;
        } else if (fast) {
            /* the three things read of a Node object, parsed alone: {"metadata": {"name", "annotations"},
             * "status": {"allocatable"}} */
            ninfo_clear(&nodes[i].own);
            struct fitem *it = &fa.it[i];
            json_t *nm = it->name.n ? span_json(it->name, &je) : NULL;
            if (!it->object || !json_is_string(nm)) {
                json_decref(nm);
                rc = bad_request(out, status, "Nodes.items[%u]: a Node with metadata.name expected", i);
                goto done;
            }
            json_t *md = json_object(), *st = json_object(), *obj = json_object();
            json_object_set_new(md, "name", nm);
            json_object_set_new(obj, "metadata", md);
            json_object_set_new(obj, "status", st);
            nodes[i].obj = obj; /* owned: freed at the end */
            nodes[i].name = json_string_value(nm);
            struct {
                struct span sp;
                json_t *in;
                const char *key;
            } parts[] = {{it->annotations, md, "annotations"}, {it->allocatable, st, "allocatable"}};
            for (unsigned k = 0; k < 2; k++) {
                if (!parts[k].sp.n)
                    continue;
                json_t *v = span_json(parts[k].sp, &je);
                if (!v) {
                    rc = bad_request(out, status, "Nodes.items[%u]: %s: %s", i, parts[k].key, je.text);
                    goto done;
                }
                json_object_set_new(parts[k].in, parts[k].key, v);
            }
            if (ninfo_from(obj, &nodes[i].own, &rnames) < 0) {
                rc = -ENOMEM;
                goto done;
            }
            nodes[i].ni = &nodes[i].own;
        } else if (by_name) {
            if (!json_is_string(e)) {
                rc = bad_request(out, status, "NodeNames[%u]: a string expected", i);
                goto done;
            }
            nodes[i].name = json_string_value(e);
            nodes[i].ni = snap_find(snap, nodes[i].name); /* the snapshot holds good names only */
            if (!nodes[i].ni && set_fail(&nodes[i], "node %.200s is not in the store (nodes/%.200s.json): its "
                                         "tenants cannot be judged", nodes[i].name, nodes[i].name) < 0) {
                rc = -ENOMEM;
                goto done;
            }
        } else {
            json_t *nm = ci_get(ci_get(e, "metadata"), "name");
            if (!json_is_object(e) || !json_is_string(nm)) {
                rc = bad_request(out, status, "Nodes.items[%u]: a Node with metadata.name expected", i);
                goto done;
            }
            nodes[i].name = json_string_value(nm);
            nodes[i].obj = e;
            if (ninfo_from(e, &nodes[i].own, &rnames) < 0) {
                rc = -ENOMEM;
                goto done;
            }
            nodes[i].ni = &nodes[i].own;
        }
        if (nodes[i].ni && nodes[i].ni->fail && set_fail(&nodes[i], "%s", nodes[i].ni->fail) < 0) {
            rc = -ENOMEM;
            goto done;
        }
    }
    /* the pod */
    const char *pname = annotation(pod, PL_EXT_ANN_PROFILE);
    if (!pname) {
        json_t *doc;
        if (filter && fast) { /* the Nodes as they came */
            struct buf b = {0};
            put_raw(&b, "{\"Nodes\":", 9);
            put_raw(&b, fa.raw.p, fa.raw.n);
            put(&b, ",\"FailedNodes\":{},\"Error\":\"\",\"Note\":\"the pod has no " PL_EXT_ANN_PROFILE
                    " annotation: every node passes unchanged\"}");
            rc = answer_buf(&b, out, status);
            goto done;
        }
        if (filter) {
            doc = json_object();
            json_object_set(doc, by_name ? "NodeNames" : "Nodes", by_name ? jnames : jnodes);
            json_object_set_new(doc, "FailedNodes", json_object());
            json_object_set_new(doc, "Error", json_string(""));
            json_object_set_new(doc, "Note", json_string("the pod has no " PL_EXT_ANN_PROFILE
                                                         " annotation: every node passes unchanged"));
        } else {
            doc = json_array();
            for (unsigned i = 0; i < nn; i++)
                json_array_append_new(doc, json_pack("{s:s,s:i}", "Host", nodes[i].name, "Score", 0));
        }
        rc = answer(doc, 200, out, status);
        goto done;
    }
    char why[512];
    const struct profile *pp = profile_of(x, pname, &pn, why, sizeof why);
    if (!pp) {
        char msg[700];
        snprintf(msg, sizeof msg, "the pod's profile '%.64s' is not in the store: %s", pname, why);
        json_t *doc = filter ? json_pack("{s:o,s:o,s:s}", "NodeNames", json_array(), "FailedNodes", json_object(),
                                         "Error", one_line(msg))
                             : json_array();
        rc = answer(doc, 200, out, status);
        goto done;
    }
    atomic_fetch_add(&x->decisions[filter ? 0 : 1], 1);
    char key[300];
    bool keyed = x->o.assume_ttl_s && pod_key(pod, key, sizeof key);
    /* the fleet: one machine a node; apps: every node's tenants, then the pod */
    f.nm = nn;
    f.m = calloc(nn ? nn : 1, sizeof *f.m);
    unsigned cap_apps = 1 + nn * 4;
    f.app = calloc(cap_apps, sizeof *f.app);
    if (!f.m || !f.app) {
        rc = -ENOMEM;
        goto done;
    }
    double pod_cpu = 0, pod_mem = 0;
    json_t *ctrs = ci_get(ci_get(pod, "spec"), "containers"), *ct;
    size_t ci;
    json_array_foreach(ctrs, ci, ct)
    {
        json_t *rq = ci_get(ci_get(ct, "resources"), "requests");
        double c, m;
        char bad[64];
        for (int k = 0; k < 2; k++)
            if (qty_of(rq, k ? "memory" : "cpu", k ? &m : &c, bad, sizeof bad) < 0) {
                rc = bad_request(out, status, "Pod: containers[%zu].resources.requests.%s: %s is not a quantity", ci,
                                 k ? "memory" : "cpu", bad);
                goto done;
            }
        pod_cpu += c > 0 ? c : 0, pod_mem += m > 0 ? m : 0;
    }
    for (unsigned i = 0; i < nn && rc == 0; i++) {
        struct pl_sim_machine *m = &f.m[i];
        size_t nl = strlen(nodes[i].name);
        nl = nl < sizeof m->name - 1 ? nl : sizeof m->name - 1;
        memcpy(m->name, nodes[i].name, nl);
        m->name[nl] = 0;
        const struct ninfo *ni = nodes[i].ni;
        if (!by_name && ni->badq) { /* the request's Node: malformed (the node state's: failed when read) */
            rc = bad_request(out, status, "node %.200s: %s", nodes[i].name, ni->badq);
            goto done;
        }
        double c = ni ? ni->cpu : -1, mem = ni ? ni->mem : -1;
        m->cpus = c >= 0 ? (unsigned)floor(c) : 1u << 30; /* whole CPUs: the capacity rounded down, demand up */
        m->mem = mem > 0 ? mem : 1e30;
        if (nodes[i].fail || !ni->nten)
            continue;
        for (unsigned k = 0; k < ni->nten; k++) {
            const char *t = ni->ten[k];
            const struct profile *tp = t ? tenant_profile(x, &sn, t, &pn, why, sizeof why) : NULL;
            if (!tp) {
                rc = set_fail(&nodes[i], "tenant %.64s cannot be judged: %.300s", t ? t : "(not a string)",
                              t ? why : "");
                break;
            }
            if ((rc = add_tenant(&f, &cap_apps, &nodes[i], i, tp)) < 0 || nodes[i].fail)
                break;
        }
    }
    if (rc)
        goto done;
    /* the assumed tenants of these nodes: confirmed ones dropped, expired ones dropped, the rest counted */
    if (x->o.assume_ttl_s) {
        double now = now_s(x);
        pthread_mutex_lock(&x->amu);
        assumed_expire(x, now);
        if (x->nas && !(nidx = name_index(nodes, nn, &nbidx)))
            rc = -ENOMEM;
        if (x->nas && !rc && !(use = calloc(x->nas, sizeof *use)))
            rc = -ENOMEM;
        for (unsigned i = 0; !rc && i < x->nas;) {
            struct assumed *a = &x->as[i];
            int ni = node_at(nidx, nbidx, nodes, a->node);
            if (ni < 0 || nodes[ni].fail) {
                i++;
                continue;
            }
            if (count_of(nodes[ni].ni, a->profile) >= a->expect) {
                assumed_drop(x, i);
                x->as_confirmed++;
                continue;
            }
            if (!(keyed && !strcmp(a->key, key))) { /* a pod is not its own neighbour */
                use[nuse].node = (unsigned)ni;
                if (!(use[nuse++].profile = strdup(a->profile)))
                    rc = -ENOMEM;
            }
            i++;
        }
        pthread_mutex_unlock(&x->amu);
        for (unsigned u = 0; !rc && u < nuse; u++) {
            unsigned i = use[u].node;
            if (nodes[i].fail)
                continue;
            const struct profile *tp = profile_of(x, use[u].profile, &pn, why, sizeof why);
            if (tp) /* else gone from the store since: a tenant not listed yet is not judged by what is missing */
                rc = add_tenant(&f, &cap_apps, &nodes[i], i, tp);
        }
        if (rc)
            goto done;
    }
    unsigned a = f.napps++;
    f.app[a].p = pp, f.app[a].cpus = (unsigned)ceil(pod_cpu), f.app[a].mem = pod_mem, f.app[a].machine = -1;
    /* the options are the extender's, the same for every verdict kept (x->vc is per extender) */
    struct pl_coloc_opts co = {.margin = x->o.margin, .pessimistic = x->o.pessimistic,
                               .established = x->o.established};
    /* nodes alike (the same tenants in the same order, the same room) get the same verdict: it is made once a
     * request (a cluster's nodes repeat a few tenant lists: the DaemonSet writes them sorted).  uv: the distinct
     * verdicts; uv[0] is the one of every node that fails before any (its reason is its own) */
    unsigned nmemo = 16;
    while (nmemo < 2 * nn)
        nmemo *= 2;
    memo = calloc(nmemo, sizeof *memo); /* index + 1 of the first node of a verdict */
    mkey = malloc((nn ? nn : 1) * sizeof *mkey);
    uv = malloc((nn + 1) * sizeof *uv);
    order = malloc(2 * (nn ? nn : 1) * sizeof *order);
    if (!memo || !mkey || !uv || !order) {
        rc = -ENOMEM;
        goto done;
    }
    unsigned nok = 0;
    uv[0].kind = PL_V_UNSAFE, uv[0].why[0] = 0, uv[0].fit = NAN;
    nuv = 1;
    struct pl_coloc_opts terse = co;
    terse.terse = true;
    for (unsigned i = 0; i < nn; i++) {
        if (nodes[i].fail) {
            nodes[i].v = 0;
            continue;
        }
        const struct pl_sim_machine *m = &f.m[i];
        uint64_t h = 1469598103934665603ull;
        const double room[4] = {m->cpus, m->mem, m->cpu_used, m->mem_used};
        const unsigned char *rb = (const unsigned char *)room;
        for (size_t k = 0; k < sizeof room; k++)
            h = (h ^ rb[k]) * 1099511628211ull;
        for (unsigned t = 0; t < m->ntenants; t++)
            h = (h ^ (uintptr_t)f.app[m->tenant[t]].p) * 1099511628211ull;
        mkey[i] = h;
        unsigned slot = (unsigned)h & (nmemo - 1), same = 0;
        for (; memo[slot]; slot = (slot + 1) & (nmemo - 1)) {
            const struct pl_sim_machine *o = &f.m[memo[slot] - 1];
            if (mkey[memo[slot] - 1] != h || o->ntenants != m->ntenants || o->cpus != m->cpus || o->mem != m->mem ||
                o->cpu_used != m->cpu_used || o->mem_used != m->mem_used)
                continue;
            unsigned t = 0;
            while (t < m->ntenants && f.app[o->tenant[t]].p == f.app[m->tenant[t]].p)
                t++;
            if (t == m->ntenants) {
                same = memo[slot];
                break;
            }
        }
        if (same) {
            nodes[i].v = nodes[same - 1].v;
        } else {
            memo[slot] = i + 1;
            /* filter answers an unsafe node with its reason: the check in full, once; prioritize wants a verdict
             * and a fit, no text: terse (it stops at the first broken resource) */
            if (!vc_get(x, &f, i, a, filter, h, &uv[nuv])) {
                pl_verdict_of(&f, i, a, true, filter ? &co : &terse, &uv[nuv]);
                vc_put(x, &f, i, a, filter, h, &uv[nuv]);
            }
            nodes[i].v = nuv++;
        }
        enum pl_verdict_kind k = uv[nodes[i].v].kind;
        if (k == PL_V_FITS || k == PL_V_SAFE || k == PL_V_UNCERTAIN)
            order[nok++] = i;
    }
    struct buf b = {0};
    if (filter) {
        /* each distinct refusal's text once (escaped when written) */
        uwhy = calloc(nuv, sizeof *uwhy);
        if (!uwhy) {
            rc = -ENOMEM;
            goto done;
        }
        for (unsigned u = 1; u < nuv; u++) {
            const struct pl_verdict *v = &uv[u];
            if (v->kind == PL_V_FITS || v->kind == PL_V_SAFE || v->kind == PL_V_UNCERTAIN)
                continue;
            int r = v->kind == PL_V_NO_ROOM ? asprintf(&uwhy[u], "ibench: %s", v->why) /* "no room: ..." */
                                           : asprintf(&uwhy[u], "ibench: %s: %s", pl_verdict_name(v->kind), v->why);
            if (r < 0) {
                uwhy[u] = NULL;
                rc = -ENOMEM;
                goto done;
            }
            struct buf e = {0}; /* escaped once, written for each of its nodes */
            put_str(&e, one_line(uwhy[u]));
            free(uwhy[u]);
            if (e.oom || !e.s) {
                free(e.s);
                uwhy[u] = NULL;
                rc = -ENOMEM;
                goto done;
            }
            uwhy[u] = e.s;
        }
        if (by_name) {
            put(&b, "{\"NodeNames\":[");
            unsigned w = 0;
            for (unsigned r = 0; r < nok; r++) {
                if (w++)
                    put_raw(&b, ",", 1);
                put_str(&b, nodes[order[r]].name);
            }
            put(&b, "]");
        } else if (fast) { /* the kept Node objects as they came */
            put_raw(&b, "{\"Nodes\":{\"items\":[", 19);
            for (unsigned r = 0; r < nok; r++) {
                if (r)
                    put_raw(&b, ",", 1);
                put_raw(&b, fa.it[order[r]].raw.p, fa.it[order[r]].raw.n);
            }
            put_raw(&b, "]", 1);
            if (fa.kind.p) {
                put_raw(&b, ",\"kind\":", 8);
                put_raw(&b, fa.kind.p, fa.kind.n);
            }
            if (fa.api.p) {
                put_raw(&b, ",\"apiVersion\":", 14);
                put_raw(&b, fa.api.p, fa.api.n);
            }
            put_raw(&b, "}", 1);
        } else {
            json_t *kept = json_object(), *kept_items = json_array();
            for (unsigned r = 0; r < nok; r++)
                json_array_append(kept_items, nodes[order[r]].obj);
            json_object_set_new(kept, "items", kept_items);
            json_t *kind = ci_get(jnodes, "kind"), *api = ci_get(jnodes, "apiVersion");
            if (kind)
                json_object_set(kept, "kind", kind);
            if (api)
                json_object_set(kept, "apiVersion", api);
            char *k = json_dumps(kept, JSON_COMPACT | JSON_PRESERVE_ORDER);
            json_decref(kept);
            if (!k) {
                rc = -ENOMEM;
                goto done;
            }
            put(&b, "{\"Nodes\":%s", k);
            free(k);
        }
        put(&b, ",\"FailedNodes\":{");
        unsigned w = 0;
        unsigned long unjudged = 0;
        vcount = calloc(nuv, sizeof *vcount);
        if (!vcount) {
            free(b.s);
            rc = -ENOMEM;
            goto done;
        }
        for (unsigned i = 0; i < nn; i++) {
            const struct pl_verdict *v = &uv[nodes[i].v];
            if (!nodes[i].fail && (v->kind == PL_V_FITS || v->kind == PL_V_SAFE || v->kind == PL_V_UNCERTAIN))
                continue;
            if (w++)
                put_raw(&b, ",", 1);
            put_str(&b, nodes[i].name);
            put_raw(&b, ":", 1);
            if (nodes[i].fail) {
                char *msg = NULL;
                if (asprintf(&msg, "ibench: cannot judge: %.500s", nodes[i].fail) < 0) {
                    rc = -ENOMEM;
                    free(b.s);
                    goto done;
                }
                put_str(&b, one_line(msg));
                free(msg);
                unjudged++;
            } else {
                put_raw(&b, uwhy[nodes[i].v], strlen(uwhy[nodes[i].v]));
                vcount[nodes[i].v]++;
            }
        }
        /* the figures: each distinct refusal's resources once, times its nodes */
        if (unjudged)
            count_refusal(x, "unjudged", 8, unjudged);
        for (unsigned u = 1; u < nuv; u++)
            if (vcount[u] && uv[u].kind == PL_V_NO_ROOM)
                count_refusal(x, "no-room", 7, vcount[u]);
            else if (vcount[u])
                count_refusals(x, uv[u].why, vcount[u]);
        put(&b, "},\"Error\":\"\"}");
    } else {
        sort_by_policy(&f, nodes, uv, order, order + nn, nok);
        int *score = calloc(nn ? nn : 1, sizeof *score);
        if (!score) {
            rc = -ENOMEM;
            goto done;
        }
        for (unsigned r = 0; r < nok; r++)
            score[order[r]] = r < PL_EXT_MAX_PRIORITY ? PL_EXT_MAX_PRIORITY - (int)r : 0;
        put(&b, "[");
        for (unsigned i = 0; i < nn; i++) {
            static const char host[] = ",{\"Host\":";
            put_raw(&b, host + !i, sizeof host - 1 - !i);
            put_str(&b, nodes[i].name);
            char sc[32];
            put_raw(&b, sc, (size_t)snprintf(sc, sizeof sc, ",\"Score\":%d}", score[i]));
        }
        put(&b, "]");
        free(score);
        /* the top node takes the pod as an assumed tenant until its list shows it; the pod's earlier one goes */
        if (keyed && nok) {
            const char *top = nodes[order[0]].name;
            unsigned listed = count_of(nodes[order[0]].ni, pname);
            pthread_mutex_lock(&x->amu);
            for (unsigned i = 0; i < x->nas;)
                if (!strcmp(x->as[i].key, key))
                    assumed_drop(x, i);
                else
                    i++;
            unsigned pending = 0;
            for (unsigned i = 0; i < x->nas; i++)
                pending += !strcmp(x->as[i].node, top) && !strcmp(x->as[i].profile, pname);
            if (x->nas == PL_EXT_MAX_ASSUMED)
                assumed_drop(x, 0), x->as_expired++;
            if (x->nas == x->cas) {
                unsigned nc = x->cas ? 2 * x->cas : 16;
                struct assumed *na = realloc(x->as, nc * sizeof *na);
                if (na)
                    x->as = na, x->cas = nc;
            }
            if (x->nas < x->cas) {
                struct assumed *as = &x->as[x->nas];
                as->key = strdup(key), as->node = strdup(top), as->profile = strdup(pname);
                as->expect = listed + pending + 1, as->t = now_s(x);
                if (as->key && as->node && as->profile) {
                    x->nas++, x->as_total++;
                } else {
                    free(as->key), free(as->node), free(as->profile);
                    rc = -ENOMEM;
                }
            } else {
                rc = -ENOMEM;
            }
            pthread_mutex_unlock(&x->amu);
            if (rc) {
                free(b.s);
                goto done;
            }
        }
    }
    rc = answer_buf(&b, out, status);
done:
    for (unsigned i = 0; nodes && i < nn; i++) {
        if (!by_name)
            ninfo_clear(&nodes[i].own);
        if (fast)
            json_decref(nodes[i].obj);
        free(nodes[i].fail);
    }
    free(fa.it);
    for (unsigned u = 0; u < nuse; u++)
        free(use[u].profile);
    for (unsigned u = 0; uwhy && u < nuv; u++)
        free(uwhy[u]);
    free(uwhy);
    free(vcount);
    free(use);
    free(nidx);
    free(memo), free(mkey), free(uv), free(order);
    free(nodes);
    free(f.m);
    free(f.app);
    pins_release(x, &pn);
    snap_put(x, snap);
    strtab_free(&rnames);
    json_decref(req);
    return rc;
}
