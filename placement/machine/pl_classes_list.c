/* pl_classes_list.c - the class of one placement, and the listings of sharing classes (pl_classes.h): the classes
 * of N threads, ordered by their scores, each with a representative, and with a bandwidth file the interconnect
 * rule's rows (pl_classes.c's top comment has the rules). */
#define _GNU_SOURCE
#include "pl_classes.h"

#include <errno.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "output.h"
#include "pl_classes_int.h"

/* ---- the class of one placement ----------------------------------------------------------------------------- */

static struct cent *cent_of(struct ctx *c, unsigned i, const bool *on)
{
    const struct tnode *t = &c->t[i];
    if (t->nch == 0)
        return on[t->inst] ? c->one : c->empty;
    const struct shape *sh = &c->s[t->shape];
    struct cent **ch = malloc(t->nch * sizeof(*ch));
    unsigned *gn = calloc(sh->ngroups, sizeof(*gn));
    if (!ch || !gn) {
        free(ch);
        free(gn);
        cls_fail(c, -ENOMEM, "out of memory");
        return NULL;
    }
    unsigned o = 0;
    for (unsigned g = 0; g < sh->ngroups; g++) {
        unsigned start = o;
        for (unsigned j = 0; j < t->nch; j++) {
            if (c->t[t->ch[j]].shape != sh->gshape[g])
                continue;
            struct cent *e = cent_of(c, t->ch[j], on);
            if (!e) {
                free(ch);
                free(gn);
                return NULL;
            }
            if (e->n == 0)
                continue;
            /* insertion in canonical order */
            unsigned x = o++;
            while (x > start && cls_cent_cmp(e, ch[x - 1]) < 0) {
                ch[x] = ch[x - 1];
                x--;
            }
            ch[x] = e;
        }
        gn[g] = o - start;
    }
    struct cent *e = cls_cent_make(c, sh, ch, gn);
    free(ch);
    free(gn);
    return e;
}

int pl_class_of(const struct pl_hier *h, const unsigned *pus, unsigned n, struct pl_class *out, char *why,
                size_t len)
{
    memset(out, 0, sizeof(*out));
    if (n == 0 || n > h->npus)
        return ib_why(why, len, -EINVAL, "a placement needs 1 to %u PUs, not %u", h->npus, n);
    bool *on = calloc(h->npus, sizeof(*on));
    if (!on)
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned j = 0; j < n; j++) {
        if (pus[j] >= h->npus || on[pus[j]]) {
            free(on);
            return ib_why(why, len, -EINVAL, "PU %u is %s", pus[j], pus[j] >= h->npus ? "not on this machine"
                                                                                        : "given twice");
        }
        on[pus[j]] = true;
    }
    struct ctx c;
    int rc = cls_ctx_init(&c, h, why, len);
    if (rc == 0) {
        struct cent *e = cent_of(&c, 0, on);
        mpz_t total;
        mpz_init(total);
        mpz_bin_uiui(total, h->npus, n);
        if (e)
            rc = cls_fill_class(&c, e, false, 0, total, out);
        mpz_clear(total);
        rc = c.err ? c.err : rc;
    }
    free(on);
    cls_ctx_free(&c);
    if (rc < 0)
        pl_class_free(out);
    return rc;
}

int pl_class_notation(const struct pl_hier *h, const struct pl_class *c, char *buf, size_t len)
{
    if (h->npus > 64)
        return -E2BIG;
    if (len < h->npus + 3)
        return -ENOSPC;
    buf[0] = '{';
    for (unsigned p = 0; p < h->npus; p++)
        buf[1 + p] = '.';
    for (unsigned j = 0; j < c->nthreads; j++)
        buf[1 + c->pus[j]] = 'X';
    buf[1 + h->npus] = '}';
    buf[2 + h->npus] = 0;
    return 0;
}

/* ---- listings ----------------------------------------------------------------------------------------------- */

static int cmp_class(const void *a, const void *b, void *arg)
{
    const struct pl_class *x = a, *y = b;
    unsigned nl = *(const unsigned *)arg;
    for (unsigned k = 0; k < nl; k++)
        if (x->score[k] != y->score[k])
            return x->score[k] < y->score[k] ? -1 : 1;
    int r = strcmp(x->key, y->key);
    if (r)
        return r;
    if (!isnan(x->bandwidth) && !isnan(y->bandwidth) && x->bandwidth != y->bandwidth)
        return x->bandwidth > y->bandwidth ? -1 : 1;
    if (x->nodes != y->nodes) {
        uint64_t d = x->nodes ^ y->nodes;
        return (d & -d & x->nodes) ? -1 : 1; /* the set holding the lowest differing node sorts first */
    }
    return 0;
}

struct outv {
    unsigned n, cap;
    struct pl_class *v;
};

static struct pl_class *outv_new(struct ctx *c, struct outv *o)
{
    if (o->n == o->cap) {
        unsigned nc = o->cap ? o->cap * 2 : 16;
        struct pl_class *v = realloc(o->v, nc * sizeof(*v));
        if (!v) {
            cls_fail(c, -ENOMEM, "out of memory");
            return NULL;
        }
        o->v = v;
        o->cap = nc;
    }
    memset(&o->v[o->n], 0, sizeof(o->v[0]));
    return &o->v[o->n++];
}

static int set_why(struct ctx *c, struct pl_class *p, const char *w)
{
    if (!p->why) {
        p->why = strdup(w);
    } else {
        char *n = NULL;
        if (asprintf(&n, "%s; %s", p->why, w) < 0)
            n = NULL;
        free(p->why);
        p->why = n;
    }
    return p->why ? 0 : cls_fail(c, -ENOMEM, "out of memory");
}

static void set_str(uint64_t m, char *buf, size_t len)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, len - o, "{");
    for (unsigned i = 0, f = 1; i < 64 && o < len; i++)
        if (m >> i & 1) {
            o += (size_t)snprintf(buf + o, len - o, "%s%u", f ? "" : ",", i);
            f = 0;
        }
    if (o < len)
        snprintf(buf + o, len - o, "}");
}

struct rset {
    uint64_t m;
    double bw;
};

static int bw_of(struct ctx *c, const struct pl_bandwidth *b, uint64_t m, double *bw)
{
    for (unsigned i = 0; i < b->n; i++)
        if (b->v[i].nodes == m) {
            *bw = b->v[i].bw;
            return 0;
        }
    char s[256], msg[320];
    set_str(m, s, sizeof(s));
    snprintf(msg, sizeof(msg), "the bandwidth file has no set %s", s);
    return cls_fail(c, -EINVAL, msg);
}

struct pack {
    const struct rset *r;
    unsigned nr, f;
    unsigned cur[64], best[64];
    double sum, bestsum;
    bool found;
};

static void pack_search(struct pack *p, unsigned start, unsigned depth, uint64_t used)
{
    if (depth == p->f) {
        if (!p->found || p->sum > p->bestsum) {
            p->found = true;
            p->bestsum = p->sum;
            memcpy(p->best, p->cur, sizeof(p->cur));
        }
        return;
    }
    for (unsigned i = start; i < p->nr; i++) {
        if (p->r[i].m & used)
            continue;
        p->cur[depth] = i;
        p->sum += p->r[i].bw;
        pack_search(p, i + 1, depth + 1, used | p->r[i].m);
        p->sum -= p->r[i].bw;
    }
}

/* The interconnect rows of balanced class e (module comment). */
static int interconnect_rows(struct ctx *c, const struct cent *e, const struct pl_bandwidth *b, const mpz_t total,
                             struct outv *o)
{
    const struct pl_level *nl = &c->h->lv[c->numa];
    unsigned nn = nl->ninst;
    /* k: nodes the class uses */
    struct pl_class probe;
    if (cls_fill_class(c, e, false, 0, total, &probe) < 0) {
        pl_class_free(&probe);
        return c->err;
    }
    unsigned k = probe.score[c->numa];
    pl_class_free(&probe);
    double nsets = 1;
    for (unsigned i = 0; i < k; i++)
        nsets = nsets * (nn - i) / (i + 1);
    if (nsets > MAX_NODE_SETS)
        return cls_fail(c, -EINVAL, "too many node sets to score (more than 1e6)");
    unsigned os[64];
    for (unsigned i = 0; i < nn; i++) {
        if (nl->inst_os[i] >= 64)
            return cls_fail(c, -EINVAL, "a NUMA node's OS index is 64 or more");
        os[i] = nl->inst_os[i];
    }
    qsort(os, nn, sizeof(*os), cls_cmp_uint);
    struct rset *r = malloc((size_t)nsets * sizeof(*r));
    unsigned *buf = malloc((e->n ? e->n : 1) * sizeof(*buf));
    if (!r || !buf) {
        free(r);
        free(buf);
        return cls_fail(c, -ENOMEM, "out of memory");
    }
    unsigned nr = 0, idx[64];
    for (unsigned i = 0; i < k; i++)
        idx[i] = i;
    /* k-sets in lexicographic order of their sorted OS indexes */
    while (true) {
        uint64_t m = 0;
        for (unsigned i = 0; i < k; i++)
            m |= 1ULL << os[idx[i]];
        unsigned cnt = 0;
        if (cls_realise(c, 0, e, true, m, buf, &cnt) && cnt == e->n) {
            r[nr].m = m;
            if (bw_of(c, b, m, &r[nr].bw) < 0)
                break;
            nr++;
        }
        int i = (int)k - 1;
        while (i >= 0 && idx[i] == nn - k + (unsigned)i)
            i--;
        if (i < 0)
            break;
        idx[i]++;
        for (unsigned j = (unsigned)i + 1; j < k; j++)
            idx[j] = idx[j - 1] + 1;
    }
    free(buf);
    if (c->err || nr == 0) {
        free(r);
        return c->err;
    }
    struct {
        uint64_t m;
        char why[160];
    } keep[66];
    unsigned nk = 0;
    unsigned a = 0;
    for (unsigned i = 1; i < nr; i++)
        if (r[i].bw > r[a].bw)
            a = i;
    keep[nk].m = r[a].m;
    snprintf(keep[nk++].why, sizeof(keep[0].why), "best %u-node bandwidth", k);
    int bsel = -1;
    for (unsigned i = 0; i < nr; i++)
        if (!(r[i].m & r[a].m) && (bsel < 0 || r[i].bw > r[bsel].bw))
            bsel = (int)i;
    if (bsel >= 0) {
        keep[nk].m = r[bsel].m;
        snprintf(keep[nk++].why, sizeof(keep[0].why), "beside the best: best %u-node set of the nodes it leaves", k);
    }
    unsigned f = nn / k;
    double fam = 1; /* families of f disjoint k-sets: nn! / ((k!)^f f! (nn-fk)!) */
    for (unsigned i = 0; i < f; i++) {
        double w = 1;
        for (unsigned j = 0; j < k; j++)
            w = w * (nn - i * k - j) / (j + 1);
        fam = fam * w / (i + 1);
    }
    char skipped[160] = "";
    if (f >= 2 && fam <= MAX_FAMILIES) {
        struct pack p = {r, nr, f, {0}, {0}, 0, 0, false};
        pack_search(&p, 0, 0, 0);
        for (unsigned i = 0; p.found && i < f; i++) {
            keep[nk].m = r[p.best[i]].m;
            snprintf(keep[nk++].why, sizeof(keep[0].why), "best packing: %u disjoint %u-node sets, mean %.4g", f, k,
                     p.bestsum / f);
        }
    } else if (f >= 2) {
        snprintf(skipped, sizeof(skipped), "packing not searched (%.3g families, more than 1e6)", fam);
    }
    free(r);
    unsigned first = o->n;
    for (unsigned i = 0; i < nk && !c->err; i++) {
        struct pl_class *p = NULL;
        for (unsigned j = first; j < o->n; j++)
            if (o->v[j].nodes == keep[i].m)
                p = &o->v[j];
        if (!p) {
            p = outv_new(c, o);
            if (!p || cls_fill_class(c, e, true, keep[i].m, total, p) < 0)
                break;
            p->nodes = keep[i].m;
            bw_of(c, b, keep[i].m, &p->bandwidth);
        }
        set_why(c, p, keep[i].why);
        if (i == 0 && skipped[0])
            set_why(c, p, skipped);
    }
    return c->err;
}

static unsigned max_inst_pus(const struct pl_level *l)
{
    unsigned m = 0;
    for (unsigned i = 0; i < l->ninst; i++)
        m = l->inst_npus[i] > m ? l->inst_npus[i] : m;
    return m;
}

/* Emits the root classes of the current mode (all, or one chain) into o. */
static int emit(struct ctx *c, unsigned n, const struct pl_bandwidth *bw, const mpz_t total, struct outv *o)
{
    const struct clist *l = cls_classes(c, c->t[0].shape, n);
    if (!l)
        return c->err;
    for (unsigned i = 0; i < l->n && !c->err; i++) {
        if (c->chain && bw) {
            interconnect_rows(c, l->v[i], bw, total, o);
            continue;
        }
        struct pl_class *p = outv_new(c, o);
        if (!p || cls_fill_class(c, l->v[i], false, 0, total, p) < 0)
            break;
        if (i % 64 == 63 && cls_progress_due(c, true))
            out_progress("place classes", "representatives: %u of %u classes, %.0f s", i + 1, l->n,
                         cls_mono_now() - c->t0);
        if (c->chain)
            set_why(c, p, "balanced");
    }
    return c->err;
}

/* Threads-per-used-instance chains t_0 | N, t_1 | t_0, ... with t_k at most the largest instance of level k. */
static void chains(struct ctx *c, unsigned k, unsigned prev, unsigned n, unsigned *chain,
                   const struct pl_bandwidth *bw, const mpz_t total, struct outv *o)
{
    const struct pl_hier *h = c->h;
    if (c->err)
        return;
    if (k == h->nlevels) {
        c->chain = chain;
        cls_memo_reset(c);
        emit(c, n, bw, total, o);
        return;
    }
    unsigned top = max_inst_pus(&h->lv[k]);
    for (unsigned t = 1; t <= prev && t <= top; t++)
        if (prev % t == 0) {
            chain[k] = t;
            chains(c, k + 1, t, n, chain, bw, total, o);
        }
}

int pl_classes(const struct pl_hier *h, const struct pl_classes_opts *opt, struct pl_class_list *out, char *why,
               size_t len)
{
    memset(out, 0, sizeof(*out));
    unsigned n = opt->nthreads;
    if (n == 0 || n > h->npus)
        return ib_why(why, len, -EINVAL, "the thread count must be 1 to %u (the PUs), not %u", h->npus, n);
    if (opt->bw && opt->all)
        return ib_why(why, len, -EINVAL, "a bandwidth file applies to the important placements, not to every class");
    if (opt->bw && pl_hier_find(h, "numa") < 0)
        return ib_why(why, len, -EINVAL, "a bandwidth file needs numa among the concerns");
    struct ctx c;
    int rc = cls_ctx_init(&c, h, why, len);
    c.t0 = cls_mono_now();
    c.next = c.t0 + (opt->progress_after > 0 ? opt->progress_after : PROGRESS_FIRST);
    c.every = opt->progress_every > 0 ? opt->progress_every : PROGRESS_EVERY;
    mpz_t total;
    mpz_init(total);
    mpz_bin_uiui(total, h->npus, n);
    struct outv o = {0};
    if (rc == 0) {
        if (opt->all) {
            c.limit = opt->limit;
            emit(&c, n, NULL, total, &o);
            if (c.err == -E2BIG)
                ib_why(why, len, -E2BIG, "more than %lu classes of %u-thread placements: list the important ones "
                       "(drop --all) or raise --limit", opt->limit, n);
        } else {
            unsigned chain[PL_MAX_LEVELS];
            chains(&c, 0, n, n, chain, opt->bw, total, &o);
        }
        rc = c.err;
    }
    if (rc == 0) {
        unsigned nl = h->nlevels;
        if (o.n > 1000 && cls_progress_due(&c, true))
            out_progress("place classes", "sorting %u classes, %.0f s", o.n, cls_mono_now() - c.t0);
        if (o.n) /* o.v is NULL with no class: qsort_r(NULL, 0, ...) is undefined */
            qsort_r(o.v, o.n, sizeof(*o.v), cmp_class, &nl);
        for (unsigned i = 0; i < o.n; i++)
            o.v[i].id = i + 1;
        out->n = o.n;
        out->v = o.v;
        out->total = mpz_get_str(NULL, 10, total);
        if (!out->total)
            rc = ib_why(why, len, -ENOMEM, "out of memory");
    } else {
        for (unsigned i = 0; i < o.n; i++)
            pl_class_free(&o.v[i]);
        free(o.v);
    }
    mpz_clear(total);
    if (c.shown)
        out_progress_done();
    cls_ctx_free(&c);
    if (rc < 0)
        pl_class_list_free(out);
    return rc;
}
