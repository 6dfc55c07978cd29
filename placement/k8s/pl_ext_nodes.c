/* pl_ext_nodes.c - the extender's node store (pl_ext_nodes.h).  A node state file that does not parse is left out:
 * its node is then "not in the store", as before it was written.  One whose allocatable holds a quantity that is not
 * one fails that node with the reason, where the same in a request's Node is the request's 400: the state is the
 * DaemonSet's, not the scheduler's.  A reload that fails keeps the last good state. */
#define _GNU_SOURCE
#include "pl_ext_nodes.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ib_err.h"
#include "pl_ext_cache.h"
#include "pl_extender.h"

int ext_nodes_init(struct ext_nodes *n, const char *profiles, const char *nodes)
{
    memset(n, 0, sizeof *n);
    n->dir = strdup(profiles ? profiles : ".");
    if (nodes)
        n->ndir = strdup(nodes);
    else if (n->dir && asprintf(&n->ndir, "%s/nodes", n->dir) < 0)
        n->ndir = NULL;
    if (!n->dir || !n->ndir) {
        free(n->dir), free(n->ndir);
        return -ENOMEM;
    }
    pthread_mutex_init(&n->reload_mu, NULL);
    pthread_mutex_init(&n->smu, NULL);
    return 0;
}

static void snap_free(struct nsnap *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->n; i++)
        ninfo_clear(&s->node[i]);
    free(s->node), free(s->b);
    strtab_free(&s->names);
    free(s);
}

void ext_nodes_put(struct ext_nodes *n, struct nsnap *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&n->smu);
    bool last = --s->refs == 0;
    pthread_mutex_unlock(&n->smu);
    if (last)
        snap_free(s);
}

void ext_nodes_fini(struct ext_nodes *n)
{
    if (!n->dir)
        return;
    ext_nodes_put(n, n->snap);
    pthread_mutex_destroy(&n->reload_mu);
    pthread_mutex_destroy(&n->smu);
    free(n->dir), free(n->ndir);
    memset(n, 0, sizeof *n);
}

struct nsnap *ext_nodes_get(struct ext_nodes *n)
{
    pthread_mutex_lock(&n->smu);
    struct nsnap *s = n->snap;
    if (s)
        s->refs++;
    pthread_mutex_unlock(&n->smu);
    return s;
}

const struct ninfo *nsnap_find(const struct nsnap *s, const char *name, size_t len)
{
    if (!s || !s->nb)
        return NULL;
    uint64_t h = ext_hash_n(name, len);
    for (const struct ninfo *ni = s->b[h & (s->nb - 1)]; ni; ni = ni->hnext)
        if (ni->h == h && ni->jlen == len + 2 && !memcmp(ni->name, name, len)) /* jlen: the name and its quotes */
            return ni;
    return NULL;
}

/* One node state file into ni (its name set).  0, or -ENOMEM; a file that does not parse: 1 (left out). */
static int node_file(const char *path, struct ninfo *ni, struct strtab *names)
{
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return 1;
    }
    int rc = ninfo_from_json(doc, ni, names);
    json_decref(doc);
    if (rc == 0 && ni->badq) { /* that node cannot be judged: it fails with the reason */
        free(ni->fail);
        if (asprintf(&ni->fail, "nodes/%.200s.json: %s", ni->name, ni->badq) < 0) {
            ni->fail = NULL;
            rc = -ENOMEM;
        }
    }
    return rc;
}

/* Reads the node state directory whole: 0 with *out (a directory that does not exist: no node), or -errno with why. */
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
        if (!ext_good_name(name))
            continue;
        if (s->n == cap) {
            unsigned nc = cap ? 2 * cap : 64;
            struct ninfo *nn = realloc(s->node, nc * sizeof *nn);
            if (!nn) {
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                break;
            }
            s->node = nn, cap = nc;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct ninfo *ni = &s->node[s->n];
        memset(ni, 0, sizeof *ni);
        int fr = (ni->name = strdup(name)) ? node_file(path, ni, &s->names) : -ENOMEM;
        if (fr > 0) {
            ninfo_clear(ni);
            continue;
        }
        ni->h = ext_hash(name), ni->sh = ninfo_state_hash(ni);
        s->n++;
        int jl = fr < 0 ? -1 : asprintf(&ni->json, "\"%s\"", name); /* a good name needs no escape */
        if (jl < 0) {
            ni->json = NULL;
            rc = ib_why(why, len, -ENOMEM, "out of memory");
        }
        ni->jlen = jl < 0 ? 0 : (size_t)jl;
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

/* A directory's own times and inode, and those of a ConfigMap volume's `..data` symlink and its target (the kubelet
 * writes a new timestamped directory and renames `..data` over to it). */
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
        ssize_t k = readlink(p, g->link, sizeof g->link - 1);
        g->link[k > 0 ? k : 0] = 0;
    }
}

static bool sig_eq(const struct dsig *a, const struct dsig *b)
{
    return a->err == b->err && a->ino == b->ino && a->dev == b->dev && a->lino == b->lino &&
           !memcmp(&a->m, &b->m, sizeof a->m) && !memcmp(&a->c, &b->c, sizeof a->c) &&
           !memcmp(&a->lm, &b->lm, sizeof a->lm) && !strcmp(a->link, b->link);
}

/* Reads the node state again (under reload_mu): the new snapshot replaces the old whole. */
static void nodes_reload(struct ext_nodes *n)
{
    struct nsnap *s = NULL;
    char why[256] = "";
    int rc = snap_load(n->ndir, &s, why, sizeof why);
    pthread_mutex_lock(&n->smu);
    struct nsnap *old = NULL;
    if (rc == 0) {
        old = n->snap, n->snap = s;
        n->loaded = true;
        n->load_why[0] = 0;
    } else {
        snprintf(n->load_why, sizeof n->load_why, "%s", why); /* the last good state is kept */
        if (!n->snap)
            n->loaded = false;
    }
    pthread_mutex_unlock(&n->smu);
    ext_nodes_put(n, old);
}

void ext_nodes_check(struct ext_nodes *n, struct ext_cache *cache, double now_s, bool force)
{
    long long now = (long long)(now_s * 1e9);
    if (!force && now < atomic_load(&n->next_check_ns))
        return;
    if (force)
        pthread_mutex_lock(&n->reload_mu);
    else if (pthread_mutex_trylock(&n->reload_mu))
        return;
    atomic_store(&n->next_check_ns, now + PL_EXT_STORE_CHECK_MS * 1000000ll);
    struct dsig p, ns;
    dir_sig(n->dir, &p);
    dir_sig(n->ndir, &ns);
    bool first = !n->psig.ino && !n->psig.err;
    if (!sig_eq(&p, &n->psig)) {
        n->psig = p;
        if (cache && !first)
            ext_cache_flush(cache);
        if (!first)
            atomic_fetch_add(&n->reloads, 1);
    }
    bool nfirst = !n->nsig.ino && !n->nsig.err;
    if (!sig_eq(&ns, &n->nsig) || force) {
        bool changed = !sig_eq(&ns, &n->nsig);
        n->nsig = ns;
        nodes_reload(n);
        if (changed && !nfirst)
            atomic_fetch_add(&n->reloads, 1);
    }
    pthread_mutex_unlock(&n->reload_mu);
}

unsigned long ext_nodes_count(struct ext_nodes *n)
{
    pthread_mutex_lock(&n->smu);
    unsigned long c = n->snap ? n->snap->n : 0;
    pthread_mutex_unlock(&n->smu);
    return c;
}

bool ext_nodes_ready(struct ext_nodes *n, char *why, size_t len)
{
    struct stat st;
    if (stat(n->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, len, "the profile store %s is not a readable directory", n->dir);
        return false;
    }
    pthread_mutex_lock(&n->smu);
    bool ok = n->loaded;
    if (ok)
        snprintf(why, len, "the store is loaded: %u nodes", n->snap ? n->snap->n : 0);
    else
        snprintf(why, len, "the node state is not loaded: %s", n->load_why);
    pthread_mutex_unlock(&n->smu);
    return ok;
}
