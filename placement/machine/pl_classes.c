/* pl_classes.c - sharing classes of N-thread placements and the important ones (pl_classes.h; seeds 000 §2.1,
 * 002 §3).
 *
 * The tree: the machine (root) -> level-0 instances -> ... -> the finest level's instances -> PUs.  A subtree's
 * shape is the canonical key of its children's shapes (grouped, so asymmetric machines work: children are grouped
 * by shape, never assumed uniform).  A class of n threads at a node is, for each group of same-shape children, a
 * multiset of the children's classes (the empty one included) whose thread counts sum to n; its orbit (placements
 * it stands for) is prod over groups of k!/prod(m_c!) * prod orbit(c)^m_c, exact (GMP).  Classes are memoised per
 * (shape, n); PU subsets are never enumerated.
 *
 * Important placements (the default) are generated directly: a chain t_0 | N, t_1 | t_0, ... (threads per used
 * instance of each level) with t_k at most an instance's PUs, and the classes whose used children all hold t_k.
 *
 * Representative: at each node the classes go to the children of their shape in logical order, the largest (most
 * threads, then key order) first; in an instance of the finest level the threads take its first PUs.
 *
 * Order (ids are row numbers): by score vector, coarse level first, ascending (fewest instances first, the cheapest),
 * then by key; with a bandwidth file, then by bandwidth descending, then node set (sorted OS indexes, lexicographic).
 *
 * Interconnect rule (a bandwidth file; needs a numa level): a balanced class using k nodes is realised on node sets
 * (k-sets of nodes some placement of the class uses exactly); a realisation's score is the file's bandwidth of its
 * set (a realisable set the file lacks: -EINVAL naming it).  Kept per class: (a) the set with the highest bandwidth
 * (ties: smallest sorted OS indexes); (b) the best set of the nodes (a) leaves, when k remain - a second container
 * packs beside the first; (c) the sets of the best packing: the family of floor(nodes/k) disjoint k-sets with the
 * highest mean bandwidth, searched exhaustively when there are at most 1e6 families, else skipped and said in (a)'s
 * why.  Rows with the same set merge; each says why it is kept.
 *
 * Here: the tree, its shapes, the classes and their representatives; the class of one placement and the listings are
 * pl_classes_list.c's, bandwidth files pl_classes_parse.c's.
 */
#define _GNU_SOURCE
#include "pl_classes.h"

#include <errno.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ib_err.h"
#include "output.h"
#include "pl_classes_int.h"

/* ---- small helpers ------------------------------------------------------------------------------------------ */

double cls_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Whether a progress line is due: the work has run PROGRESS_FIRST s and the last line was PROGRESS_EVERY s ago.
 * force: read the clock now (each step of the phase is slow); else once per PROGRESS_TICKS calls. */
bool cls_progress_due(struct ctx *c, bool force)
{
    if (!force && ++c->ticks % PROGRESS_TICKS)
        return false;
    double now = cls_mono_now();
    if (now < c->next)
        return false;
    c->next = now + c->every;
    c->shown = true;
    return true;
}

int cls_fail(struct ctx *c, int err, const char *msg)
{
    if (!c->err) {
        c->err = err;
        ib_why(c->why, c->len, err, "%s", msg);
    }
    return err;
}

static char *xstrdup(struct ctx *c, const char *s)
{
    char *r = strdup(s);
    if (!r)
        cls_fail(c, -ENOMEM, "out of memory");
    return r;
}

static struct cent *cent_new(struct ctx *c)
{
    if (c->narena == c->carena) {
        size_t nc = c->carena ? c->carena * 2 : 256;
        struct cent **a = realloc(c->arena, nc * sizeof(*a));
        if (!a) {
            cls_fail(c, -ENOMEM, "out of memory");
            return NULL;
        }
        c->arena = a;
        c->carena = nc;
    }
    struct cent *e = calloc(1, sizeof(*e));
    if (!e) {
        cls_fail(c, -ENOMEM, "out of memory");
        return NULL;
    }
    mpz_init_set_ui(e->orbit, 1);
    c->arena[c->narena++] = e;
    return e;
}

void cls_ctx_free(struct ctx *c)
{
    for (size_t i = 0; i < c->narena; i++) {
        free(c->arena[i]->key);
        free(c->arena[i]->ch);
        free(c->arena[i]->gn);
        mpz_clear(c->arena[i]->orbit);
        free(c->arena[i]);
    }
    free(c->arena);
    if (c->memo) {
        for (unsigned s = 0; s < c->nshapes; s++) {
            if (c->memo[s])
                for (unsigned n = 0; n <= c->s[s].npus; n++)
                    if (c->memo[s][n].v)
                        free(c->memo[s][n].v);
            free(c->memo[s]);
        }
        free(c->memo);
    }
    for (unsigned s = 0; s < c->nshapes; s++) {
        free(c->s[s].key);
        free(c->s[s].gshape);
        free(c->s[s].gcount);
    }
    free(c->s);
    for (unsigned i = 0; i < c->ntn; i++)
        free(c->t[i].ch);
    free(c->t);
    memset(c, 0, sizeof(*c));
}

/* ---- the tree and its shapes -------------------------------------------------------------------------------- */

static int cmp_shape_key(const void *a, const void *b, void *arg)
{
    const struct ctx *c = arg;
    return strcmp(c->s[*(const unsigned *)a].key, c->s[*(const unsigned *)b].key);
}

/* Interns the shape of node i (children done first). */
static int shape_of(struct ctx *c, unsigned i)
{
    struct tnode *t = &c->t[i];
    struct shape sh = {0};
    sh.level = t->level;
    if (t->nch == 0) {
        sh.key = xstrdup(c, "p");
        sh.npus = 1;
    } else {
        unsigned *cs = malloc(t->nch * sizeof(*cs));
        sh.gshape = malloc(t->nch * sizeof(*sh.gshape));
        sh.gcount = malloc(t->nch * sizeof(*sh.gcount));
        if (!cs || !sh.gshape || !sh.gcount) {
            free(cs);
            free(sh.gshape);
            free(sh.gcount);
            return cls_fail(c, -ENOMEM, "out of memory");
        }
        for (unsigned j = 0; j < t->nch; j++) {
            cs[j] = c->t[t->ch[j]].shape;
            sh.npus += c->s[cs[j]].npus;
        }
        qsort_r(cs, t->nch, sizeof(*cs), cmp_shape_key, c);
        size_t klen = 3;
        for (unsigned j = 0; j < t->nch; j++) {
            if (sh.ngroups && sh.gshape[sh.ngroups - 1] == cs[j]) {
                sh.gcount[sh.ngroups - 1]++;
                continue;
            }
            sh.gshape[sh.ngroups] = cs[j];
            sh.gcount[sh.ngroups++] = 1;
            klen += strlen(c->s[cs[j]].key) + 16;
        }
        free(cs);
        sh.key = malloc(klen);
        if (!sh.key) {
            free(sh.gshape);
            free(sh.gcount);
            return cls_fail(c, -ENOMEM, "out of memory");
        }
        size_t o = 0;
        sh.key[o++] = '(';
        for (unsigned g = 0; g < sh.ngroups; g++)
            o += (size_t)sprintf(sh.key + o, "%s%s*%u", g ? "," : "", c->s[sh.gshape[g]].key, sh.gcount[g]);
        sprintf(sh.key + o, ")");
    }
    if (!sh.key)
        return c->err;
    for (unsigned s = 0; s < c->nshapes; s++)
        if (c->s[s].level == sh.level && !strcmp(c->s[s].key, sh.key)) {
            free(sh.key);
            free(sh.gshape);
            free(sh.gcount);
            t->shape = s;
            return 0;
        }
    if (c->nshapes == c->capshapes) {
        unsigned nc = c->capshapes ? c->capshapes * 2 : 16;
        struct shape *ns = realloc(c->s, nc * sizeof(*ns));
        if (!ns) {
            free(sh.key);
            free(sh.gshape);
            free(sh.gcount);
            return cls_fail(c, -ENOMEM, "out of memory");
        }
        c->s = ns;
        c->capshapes = nc;
    }
    c->s[c->nshapes] = sh;
    t->shape = c->nshapes++;
    return 0;
}

int cls_ctx_init(struct ctx *c, const struct pl_hier *h, char *why, size_t len)
{
    memset(c, 0, sizeof(*c));
    c->h = h;
    c->why = why;
    c->len = len;
    c->numa = pl_hier_find(h, "numa");
    /* nodes: root, every level's instances, PUs */
    unsigned base[PL_MAX_LEVELS + 2];
    unsigned n = 1;
    for (unsigned k = 0; k < h->nlevels; k++) {
        base[k] = n;
        n += h->lv[k].ninst;
    }
    base[h->nlevels] = n;
    n += h->npus;
    c->ntn = n;
    c->t = calloc(n, sizeof(*c->t));
    if (!c->t)
        return cls_fail(c, -ENOMEM, "out of memory");
    c->t[0].level = -1;
    unsigned *cnt = calloc(n, sizeof(*cnt));
    if (!cnt)
        return cls_fail(c, -ENOMEM, "out of memory");
    /* parent of each node: the instance of the level above that holds its first PU */
    unsigned *parent = calloc(n, sizeof(*parent));
    if (!parent) {
        free(cnt);
        return cls_fail(c, -ENOMEM, "out of memory");
    }
    for (unsigned k = 0; k <= h->nlevels; k++) {
        unsigned ninst = k < h->nlevels ? h->lv[k].ninst : h->npus;
        for (unsigned i = 0; i < ninst; i++) {
            unsigned id = base[k] + i;
            c->t[id].level = (int)k;
            c->t[id].inst = i;
            parent[id] = 0;
        }
        for (unsigned p = 0; p < h->npus; p++) {
            unsigned id = base[k] + (k < h->nlevels ? h->lv[k].inst[p] : p);
            parent[id] = k == 0 ? 0 : base[k - 1] + h->lv[k - 1].inst[p];
        }
        for (unsigned i = 0; i < ninst; i++)
            cnt[parent[base[k] + i]]++;
    }
    for (unsigned i = 0; i < n; i++) {
        if (cnt[i]) {
            c->t[i].ch = malloc(cnt[i] * sizeof(unsigned));
            if (!c->t[i].ch) {
                free(cnt);
                free(parent);
                return cls_fail(c, -ENOMEM, "out of memory");
            }
        }
    }
    /* instances are numbered by their first PU, so ascending ids are logical order */
    for (unsigned i = 1; i < n; i++) {
        struct tnode *pt = &c->t[parent[i]];
        pt->ch[pt->nch++] = i;
    }
    free(cnt);
    free(parent);
    if (c->numa >= 0)
        for (unsigned p = 0; p < h->npus; p++) {
            unsigned os = h->lv[c->numa].inst_os[h->lv[c->numa].inst[p]];
            uint64_t bit = os < 64 ? 1ULL << os : 0;
            unsigned id = base[h->nlevels] + p;
            c->t[id].nodes |= bit;
            c->t[0].nodes |= bit;
            for (unsigned k = 0; k < h->nlevels; k++)
                c->t[base[k] + h->lv[k].inst[p]].nodes |= bit;
        }
    /* shapes bottom-up: ids grow downwards, so walk them backwards */
    for (unsigned i = n; i-- > 0;)
        if (shape_of(c, i) < 0)
            return c->err;
    c->memo = calloc(c->nshapes, sizeof(*c->memo));
    c->empty = cent_new(c);
    c->one = cent_new(c);
    if (!c->memo || !c->empty || !c->one)
        return cls_fail(c, -ENOMEM, "out of memory");
    c->empty->key = xstrdup(c, "0");
    c->one->key = xstrdup(c, "1");
    c->one->n = 1;
    return c->err;
}

void cls_memo_reset(struct ctx *c)
{
    for (unsigned s = 0; s < c->nshapes; s++) {
        if (c->memo[s])
            for (unsigned n = 0; n <= c->s[s].npus; n++)
                free(c->memo[s][n].v);
        free(c->memo[s]);
        c->memo[s] = NULL;
    }
}

/* ---- classes ------------------------------------------------------------------------------------------------ */

/* Canonical order of children's classes: most threads first, then key. */
int cls_cent_cmp(const struct cent *a, const struct cent *b)
{
    if (a->n != b->n)
        return a->n > b->n ? -1 : 1;
    return strcmp(a->key, b->key);
}

/* A class from its children (canonical order within each group): key and orbit. */
struct cent *cls_cent_make(struct ctx *c, const struct shape *sh, struct cent *const *ch, const unsigned *gn)
{
    unsigned nch = 0, n = 0;
    for (unsigned g = 0; g < sh->ngroups; g++)
        nch += gn[g];
    for (unsigned j = 0; j < nch; j++)
        n += ch[j]->n;
    if (n == 0)
        return c->empty;
    struct cent *e = cent_new(c);
    if (!e)
        return NULL;
    e->n = n;
    e->nch = nch;
    e->ch = malloc(nch * sizeof(*e->ch));
    e->gn = malloc(sh->ngroups * sizeof(*e->gn));
    if (!e->ch || !e->gn) {
        cls_fail(c, -ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(e->ch, ch, nch * sizeof(*ch));
    memcpy(e->gn, gn, sh->ngroups * sizeof(*gn));
    bool leafy = sh->ngroups == 1 && c->s[sh->gshape[0]].npus == 1 && c->s[sh->gshape[0]].ngroups == 0;
    if (leafy) {
        /* an instance of the finest level: the count says it all */
        char buf[16];
        snprintf(buf, sizeof(buf), "%u", n);
        e->key = xstrdup(c, buf);
    } else {
        size_t klen = 3 + sh->ngroups;
        for (unsigned j = 0; j < nch; j++)
            klen += strlen(ch[j]->key) + 1;
        e->key = malloc(klen);
        if (!e->key) {
            cls_fail(c, -ENOMEM, "out of memory");
            return NULL;
        }
        size_t o = 0;
        e->key[o++] = '(';
        unsigned j = 0;
        for (unsigned g = 0; g < sh->ngroups; g++) {
            if (g)
                e->key[o++] = '|';
            for (unsigned i = 0; i < gn[g]; i++, j++)
                o += (size_t)sprintf(e->key + o, "%s%s", i ? "," : "", ch[j]->key);
        }
        e->key[o++] = ')';
        e->key[o] = 0;
    }
    if (!e->key)
        return NULL;
    /* orbit: per group k!/(prod m_c! * (k - used)!) * prod orbit(c) */
    mpz_t f;
    mpz_init(f);
    unsigned j = 0;
    for (unsigned g = 0; g < sh->ngroups; g++) {
        mpz_fac_ui(f, sh->gcount[g]);
        mpz_mul(e->orbit, e->orbit, f);
        mpz_fac_ui(f, sh->gcount[g] - gn[g]);
        mpz_divexact(e->orbit, e->orbit, f);
        unsigned run = 0;
        for (unsigned i = 0; i < gn[g]; i++, j++) {
            mpz_mul(e->orbit, e->orbit, ch[j]->orbit);
            run = i && !strcmp(ch[j]->key, ch[j - 1]->key) ? run + 1 : 1;
            mpz_divexact_ui(e->orbit, e->orbit, run); /* builds m_c! one factor at a time */
        }
    }
    mpz_clear(f);
    return e;
}

static int list_add(struct ctx *c, struct clist *l, struct cent *e)
{
    if (l->n == l->cap) {
        unsigned nc = l->cap ? l->cap * 2 : 8;
        struct cent **v = realloc(l->v, nc * sizeof(*v));
        if (!v)
            return cls_fail(c, -ENOMEM, "out of memory");
        l->v = v;
        l->cap = nc;
    }
    l->v[l->n++] = e;
    return 0;
}


struct gen {
    struct ctx *c;
    unsigned s;
    struct clist *out;
    struct cent **picks;
    unsigned npick;
    unsigned *gn;
};

static void gen_group(struct gen *gs, unsigned g, unsigned rem);

/* Multisets of nonempty classes from cand[start..] (n descending) with at most `slots` members and `left` threads. */
static void gen_multi(struct gen *gs, unsigned g, unsigned rem, struct cent **cand, unsigned ncand, unsigned start,
                      unsigned slots, unsigned left, unsigned used, unsigned t)
{
    if (gs->c->err)
        return;
    if (left == 0) {
        gs->gn[g] = used;
        gen_group(gs, g + 1, rem - t);
        return;
    }
    if (slots == 0)
        return;
    for (unsigned i = start; i < ncand && !gs->c->err; i++) {
        struct cent *e = cand[i];
        if (e->n > left)
            continue;
        if ((unsigned long)e->n * slots < left)
            break;
        gs->picks[gs->npick++] = e;
        gen_multi(gs, g, rem, cand, ncand, i, slots - 1, left - e->n, used + 1, t);
        gs->npick--;
    }
}

static bool allowed(const struct ctx *c, int child_level, unsigned m)
{
    if (!c->chain || child_level >= (int)c->h->nlevels)
        return true;
    return m == c->chain[child_level];
}

static void gen_group(struct gen *gs, unsigned g, unsigned rem)
{
    struct ctx *c = gs->c;
    const struct shape *sh = &c->s[gs->s];
    if (c->err)
        return;
    if (g == sh->ngroups) {
        if (rem)
            return;
        struct cent *e = cls_cent_make(c, sh, gs->picks, gs->gn);
        c->made++;
        c->root_made += gs->s == c->t[0].shape;
        if (cls_progress_due(c, false))
            out_progress("place classes", "enumerating: %llu classes of the whole machine, %llu of its parts, %.0f s",
                         (unsigned long long)c->root_made, (unsigned long long)(c->made - c->root_made),
                         cls_mono_now() - c->t0);
        if (e && list_add(c, gs->out, e) == 0 && c->limit && gs->out->n > c->limit) {
            char msg[160];
            snprintf(msg, sizeof(msg), "more than %lu classes", c->limit);
            cls_fail(c, -E2BIG, msg);
        }
        return;
    }
    unsigned cs = sh->gshape[g], k = sh->gcount[g], cpus = c->s[cs].npus;
    unsigned long restcap = 0;
    for (unsigned h = g + 1; h < sh->ngroups; h++)
        restcap += (unsigned long)sh->gcount[h] * c->s[sh->gshape[h]].npus;
    unsigned long cap = (unsigned long)k * cpus;
    unsigned hi = (unsigned)(rem < cap ? rem : cap);
    unsigned lo = rem > restcap ? (unsigned)(rem - restcap) : 0;
    for (unsigned t = hi + 1; t-- > lo && !c->err;) {
        /* candidates: the child shape's nonempty classes of at most t threads, n descending then key */
        /* a child with m threads leaves t - m to its k - 1 siblings: m >= t - (k-1)*cpus.  Every list computed then
         * extends to a root class, so a list over the limit means the root is over it too */
        unsigned long others = (unsigned long)(k - 1) * cpus;
        unsigned ncand = 0, top = t < cpus ? t : cpus, bottom = t > others ? (unsigned)(t - others) : 1;
        for (unsigned m = top; m >= bottom && m >= 1; m--)
            if (allowed(c, c->s[cs].level, m)) {
                const struct clist *l = cls_classes(c, cs, m);
                if (!l)
                    return;
                ncand += l->n;
            }
        struct cent **cand = ncand ? malloc(ncand * sizeof(*cand)) : NULL;
        if (ncand && !cand) {
            cls_fail(c, -ENOMEM, "out of memory");
            return;
        }
        unsigned o = 0;
        for (unsigned m = top; m >= bottom && m >= 1; m--)
            if (allowed(c, c->s[cs].level, m)) {
                const struct clist *l = cls_classes(c, cs, m);
                if (l->n) /* cand is NULL when there are none: memcpy(NULL, ...) is undefined even for 0 bytes */
                    memcpy(cand + o, l->v, l->n * sizeof(*cand));
                o += l->n;
            }
        gen_multi(gs, g, rem, cand, ncand, 0, k, t, 0, t);
        free(cand);
    }
}

static int cmp_cent_key(const void *a, const void *b)
{
    return strcmp((*(struct cent *const *)a)->key, (*(struct cent *const *)b)->key);
}

/* The classes of n threads in a subtree of shape s, sorted by key (memoised). NULL on error (c->err). */
const struct clist *cls_classes(struct ctx *c, unsigned s, unsigned n)
{
    const struct shape *sh = &c->s[s];
    static const struct clist none = {0, 0, NULL};
    if (c->err)
        return NULL;
    if (n > sh->npus)
        return &none;
    if (!c->memo[s]) {
        c->memo[s] = calloc(sh->npus + 1, sizeof(struct clist));
        if (!c->memo[s]) {
            cls_fail(c, -ENOMEM, "out of memory");
            return NULL;
        }
    }
    struct clist *l = &c->memo[s][n];
    if (l->v)
        return l;
    if (n == 0)
        list_add(c, l, c->empty);
    else if (sh->ngroups == 0)
        list_add(c, l, c->one);
    else {
        struct gen gs = {c, s, l, NULL, 0, NULL};
        gs.picks = malloc(sh->npus * sizeof(*gs.picks));
        gs.gn = calloc(sh->ngroups, sizeof(*gs.gn));
        if (!gs.picks || !gs.gn)
            cls_fail(c, -ENOMEM, "out of memory");
        else
            gen_group(&gs, 0, n);
        free(gs.picks);
        free(gs.gn);
        if (!l->v && !c->err)
            l->v = malloc(sizeof(*l->v)); /* computed, none: mark it */
        if (!c->err && l->n > 1)
            qsort(l->v, l->n, sizeof(*l->v), cmp_cent_key);
    }
    return c->err ? NULL : l;
}

/* ---- representatives ---------------------------------------------------------------------------------------- */

/* Places class e in node i: PUs appended to out[*cnt].  With `cons`, the NUMA nodes used must be exactly `set`
 * (children are tried in logical order, classes largest first, backtracking).  False when it cannot. */
bool cls_realise(const struct ctx *c, unsigned i, const struct cent *e, bool cons, uint64_t set, unsigned *out,
                 unsigned *cnt)
{
    const struct tnode *t = &c->t[i];
    if (cons && c->numa >= 0 && t->level == c->numa) {
        if ((e->n > 0) != ((t->nodes & set) != 0))
            return false;
        cons = false;
    }
    if (cons && !(t->nodes & set))
        return e->n == 0;
    if (e->n == 0)
        return true;
    if (t->nch == 0) {
        out[(*cnt)++] = t->inst;
        return true;
    }
    const struct shape *sh = &c->s[t->shape];
    /* the children of each group, logical order */
    bool *used = calloc(t->nch, sizeof(*used));
    if (!used)
        return false;
    unsigned j0 = 0;
    bool ok = true;
    for (unsigned g = 0; g < sh->ngroups && ok; j0 += e->gn[g], g++) {
        /* greedy with backtracking over the children of group g */
        unsigned ng = e->gn[g];
        unsigned *at = malloc((ng + 1) * sizeof(*at));
        unsigned *mark = malloc((ng + 1) * sizeof(*mark));
        if (!at || !mark) {
            free(at);
            free(mark);
            ok = false;
            break;
        }
        unsigned q = 0;
        at[0] = 0;
        while (true) {
            bool back; /* nothing fits at position q: undo position q-1 and try its next child */
            if (q == ng) {
                /* every child of the group with a node of the set must be used */
                back = false;
                for (unsigned x = 0; cons && x < t->nch; x++)
                    if (!used[x] && c->t[t->ch[x]].shape == sh->gshape[g] && (c->t[t->ch[x]].nodes & set))
                        back = true;
                if (!back)
                    break;
            } else {
                unsigned x = at[q];
                while (x < t->nch && (used[x] || c->t[t->ch[x]].shape != sh->gshape[g]))
                    x++;
                back = x >= t->nch;
                if (!back) {
                    mark[q] = *cnt;
                    if (cls_realise(c, t->ch[x], e->ch[j0 + q], cons, set, out, cnt)) {
                        at[q] = x;
                        used[x] = true;
                        q++;
                        at[q] = 0;
                    } else {
                        *cnt = mark[q];
                        at[q] = x + 1;
                    }
                    continue;
                }
            }
            if (q == 0) {
                ok = false;
                break;
            }
            q--;
            used[at[q]] = false;
            *cnt = mark[q];
            at[q]++;
        }
        free(at);
        free(mark);
    }
    free(used);
    return ok;
}

int cls_cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

static int cls_cmp_uint_desc(const void *a, const void *b)
{
    return -cls_cmp_uint(a, b);
}

/* Fills a pl_class (but id and why) from class e realised with the given node constraint. */
int cls_fill_class(struct ctx *c, const struct cent *e, bool cons, uint64_t set, const mpz_t total,
                   struct pl_class *out)
{
    const struct pl_hier *h = c->h;
    memset(out, 0, sizeof(*out));
    out->nthreads = e->n;
    out->bandwidth = NAN;
    out->pus = malloc((e->n ? e->n : 1) * sizeof(*out->pus));
    out->key = strdup(e->key);
    out->orbit = mpz_get_str(NULL, 10, e->orbit);
    if (!out->pus || !out->key || !out->orbit)
        return cls_fail(c, -ENOMEM, "out of memory");
    unsigned cnt = 0;
    if (!cls_realise(c, 0, e, cons, set, out->pus, &cnt) || cnt != e->n)
        return cls_fail(c, -EINVAL, "a class cannot be realised on its node set");
    qsort(out->pus, cnt, sizeof(*out->pus), cls_cmp_uint);
    mpq_t q;
    mpq_init(q);
    mpq_set_num(q, e->orbit);
    mpq_set_den(q, total);
    mpq_canonicalize(q);
    out->orbit_frac = mpq_get_d(q);
    mpq_clear(q);
    out->balanced = true;
    for (unsigned k = 0; k < h->nlevels; k++) {
        const struct pl_level *l = &h->lv[k];
        unsigned *per = calloc(l->ninst, sizeof(*per));
        if (!per)
            return cls_fail(c, -ENOMEM, "out of memory");
        for (unsigned j = 0; j < cnt; j++)
            per[l->inst[out->pus[j]]]++;
        qsort(per, l->ninst, sizeof(*per), cls_cmp_uint_desc);
        unsigned s = 0;
        while (s < l->ninst && per[s])
            s++;
        out->score[k] = s;
        if (e->n % s || per[0] != e->n / s || per[s - 1] != e->n / s)
            out->balanced = false;
        if (k == (unsigned)c->numa)
            for (unsigned j = 0; j < cnt; j++) {
                unsigned os = l->inst_os[l->inst[out->pus[j]]];
                out->nodes |= os < 64 ? 1ULL << os : 0;
            }
        /* usage: runs longer than two compress as "2x12" */
        size_t cap = 16 * (size_t)s + 8, o = 0;
        out->usage[k] = malloc(cap);
        if (!out->usage[k]) {
            free(per);
            return cls_fail(c, -ENOMEM, "out of memory");
        }
        out->usage[k][0] = 0;
        for (unsigned a = 0; a < s;) {
            unsigned b = a;
            while (b < s && per[b] == per[a])
                b++;
            if (b - a > 2)
                o += (size_t)snprintf(out->usage[k] + o, cap - o, "%s%ux%u", a ? "," : "", per[a], b - a);
            else
                for (unsigned x = a; x < b; x++)
                    o += (size_t)snprintf(out->usage[k] + o, cap - o, "%s%u", x ? "," : "", per[a]);
            a = b;
        }
        free(per);
    }
    return 0;
}

void pl_class_free(struct pl_class *c)
{
    if (!c)
        return;
    for (unsigned k = 0; k < PL_MAX_LEVELS; k++)
        free(c->usage[k]);
    free(c->pus);
    free(c->orbit);
    free(c->key);
    free(c->why);
    memset(c, 0, sizeof(*c));
}

void pl_class_list_free(struct pl_class_list *l)
{
    if (!l)
        return;
    for (unsigned i = 0; i < l->n; i++)
        pl_class_free(&l->v[i]);
    free(l->v);
    free(l->total);
    memset(l, 0, sizeof(*l));
}

const struct pl_class *pl_class_find(const struct pl_class_list *l, const struct pl_class *c)
{
    for (unsigned i = 0; l && c && c->key && i < l->n; i++)
        if (!strcmp(l->v[i].key, c->key))
            return &l->v[i];
    return NULL;
}
