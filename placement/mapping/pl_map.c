/* pl_map.c - the characteristics heuristic (pl_map.h).  Rules, and why:
 *
 * - Algorithm 1 as Tang et al. ISCA'11 §5.1 gives it.  "Shared" LLC or bus means P's threads share it among themselves;
 *   "spread" (the paper's "distributed") that they use as many instances as they can, so each shares it with C's
 *   threads instead.  Comparisons are on the characteristics as given (the paper's are per thread with 4 threads
 *   each; for equal thread counts whole-application figures order the same way).  A tie in "P < C" is not less.
 * - "high": at or above a threshold (options; the paper gives none).  Unknown data sharing counts as not high (the
 *   algorithm's else branch needs no sharing figure); an unknown figure the taken branch needs is refused.
 * - Levels, generalised from Clovertown's L2 and FSB: the LLC is the coarsest cache level of the hierarchy, the
 *   memory path the coarsest non-cache level (package, die or NUMA node).  Where they are one level (one L3 per
 *   package), the two decisions act on the same instances.
 * - "Shared" at a level takes the fewest instances a balanced (important, Funston et al. ATC'18 §3) placement of P's threads uses
 *   there, "spread" the most; so on Clovertown 4 threads give {XXXX....} (1 bus, 2 LLCs), {XX..XX..} (2, 2) and
 *   {X.X.X.X.} (2, 4), Table 2's three.  Machines where no placement is balanced use every class.
 * - Infeasible pairs (e.g. spread LLC on a shared bus for 4 threads on 4-core Clovertown sockets: one socket holds 4
 *   threads only on its 2 LLCs): the decision the branch takes first stands (the LLC for high data sharing, line 2;
 *   the bus otherwise, lines 10 and 17-20), and the other takes the class closest to what was asked (fewest, or most,
 *   instances), ties by the class listing's order.  Why: Algorithm 1 refines its first decision with the second, so
 *   the first is the one it ranks higher.
 * - C takes nc of the PUs P left, one at a time, away from P first.  Where the hierarchy has a core level (the
 *   default concerns have it whenever a core has 2+ PUs): a PU on a core with no P thread before any SMT sibling of
 *   a P thread, whatever the LLC; then PUs whose LLC holds no P thread, then whose memory path holds none; then a
 *   core holding fewer of C's threads (whole cores before C's own siblings); then logical order.  Why: the
 *   algorithm puts P first; an SMT sibling shares P's core, its L1 and L2 and its issue slots, more than any level
 *   Algorithm 1 decides on, and keeping C off P's instances is what the decision bought.
 * - The answer says when the decision is not what was placed (`adjusted`, and why): the pair is infeasible (above),
 *   or every balanced placement uses as many instances of a level as every other, so "spread" or "shared" there
 *   cannot be chosen (3 threads on two 6-core packages: only 3 + 0 is balanced, and line 20's spread becomes one
 *   package).  Placed "shared" means P's threads use the fewest instances any balanced placement uses, "spread" the
 *   most; where these are equal, "shared" when P's threads are in one instance, "spread" when in all, else as
 *   decided. */
#include "pl_map.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "pl_classes.h"

/* ---- characteristics */
static int num_field(json_t *doc, const char *key, bool required, double lo, double hi, double *out, const char *file,
                     char *why, size_t len)
{
    json_t *v = json_object_get(doc, key);
    if (!v || json_is_null(v)) {
        if (required)
            return ib_why(why, len, -EINVAL, "%s: %s: a number expected, got nothing", file, key);
        *out = NAN;
        return 0;
    }
    if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi)
        return ib_why(why, len, -EINVAL, "%s: %s: a number in [%g, %g] expected", file, key, lo, hi);
    *out = json_number_value(v);
    return 0;
}

int pl_map_chars_parse(const char *text, const char *file, struct pl_map_chars *c, char *why, size_t len)
{
    memset(c, 0, sizeof *c);
    json_error_t e;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    if (!doc)
        return ib_why(why, len, -EINVAL, "%s: line %d: %s", file, e.line, e.text);
    int rc = 0;
    const char *known[] = {"name", "threads", "bus_usage", "llc_footprint", "data_sharing", "note"};
    const char *key;
    json_t *v;
    if (!json_is_object(doc)) {
        rc = ib_why(why, len, -EINVAL, "%s: a JSON object expected", file);
        goto out;
    }
    json_object_foreach(doc, key, v) {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(known[k], key))
            k++;
        if (k == sizeof known / sizeof known[0]) {
            rc = ib_why(why, len, -EINVAL, "%s: unknown key '%s' (a characteristics file has name, threads, "
                        "bus_usage, llc_footprint, data_sharing, note)", file, key);
            goto out;
        }
    }
    v = json_object_get(doc, "name");
    if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) >= sizeof c->name) {
        rc = ib_why(why, len, -EINVAL, "%s: name: a string of 1-%zu characters expected", file, sizeof c->name - 1);
        goto out;
    }
    snprintf(c->name, sizeof c->name, "%s", json_string_value(v));
    v = json_object_get(doc, "threads");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 4096)) {
        rc = ib_why(why, len, -EINVAL, "%s: threads: an integer in [1, 4096] expected", file);
        goto out;
    }
    c->threads = v ? (unsigned)json_integer_value(v) : 0;
    if ((rc = num_field(doc, "bus_usage", true, 0, 1e4, &c->bus_usage, file, why, len)) < 0 ||
        (rc = num_field(doc, "llc_footprint", true, 0, 1e4, &c->llc_footprint, file, why, len)) < 0 ||
        (rc = num_field(doc, "data_sharing", false, 0, 1, &c->data_sharing, file, why, len)) < 0)
        goto out;
    snprintf(c->src[0], sizeof c->src[0], "declared in %s", file);
    snprintf(c->src[1], sizeof c->src[1], "declared in %s", file);
    snprintf(c->src[2], sizeof c->src[2], isnan(c->data_sharing) ? "unknown" : "declared in %s", file);
out:
    json_decref(doc);
    return rc;
}

static const struct profile_soi *soi_of(const struct profile *p, const char *name)
{
    for (unsigned i = 0; i < p->nsois; i++)
        if (!strcmp(p->sois[i].soi, name) && p->sois[i].status == PROFILE_MEASURED && p->sois[i].have_caused &&
            isfinite(p->sois[i].caused.value))
            return &p->sois[i];
    return NULL;
}

static void from_soi(const struct profile_soi *s, double *v, char *src, size_t n)
{
    if (!s) {
        *v = NAN;
        snprintf(src, n, "unknown (not measured)");
        return;
    }
    *v = fmax(0, s->caused.value);
    snprintf(src, n, "caused %s %.1f%s", s->soi, s->caused.value,
             s->caused.distinguishable == 0 ? " (within 2 se of 0)" : "");
}

int pl_map_chars_from_profile(const struct profile *p, struct pl_map_chars *c, char *why, size_t len)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", p->name ? p->name : "?");
    const struct profile_soi *bw = soi_of(p, "mem-bw"), *cap = soi_of(p, "llc-cap");
    if (!bw && !cap)
        return ib_why(why, len, -EINVAL, "profile %s measured neither mem-bw nor llc-cap caused", c->name);
    from_soi(bw, &c->bus_usage, c->src[0], sizeof c->src[0]);
    from_soi(cap, &c->llc_footprint, c->src[1], sizeof c->src[1]);
    c->data_sharing = p->data_sharing; /* 1.3: written by place cluster --profile */
    snprintf(c->src[2], sizeof c->src[2], "%s", isnan(p->data_sharing) ? "unknown (not in the profile)"
                                               : p->data_sharing_source ? p->data_sharing_source : "the profile");
    return 0;
}

/* ---- Algorithm 1 */
static const char *word(enum pl_share s) { return s == PL_SHARED ? "shared" : "spread"; }

int pl_map_decide(const struct pl_map_chars *p, const struct pl_map_chars *c, const struct pl_map_opts *o,
                  struct pl_map_decision *d, char *why, size_t len)
{
    memset(d, 0, sizeof *d);
    if (isnan(p->bus_usage) || isnan(c->bus_usage))
        return ib_why(why, len, -EINVAL, "%s's bus usage is unknown: Algorithm 1 compares it with %s's",
                      isnan(p->bus_usage) ? p->name : c->name, isnan(p->bus_usage) ? c->name : p->name);
    char sh[128];
    bool high = !isnan(p->data_sharing) && p->data_sharing >= o->sharing_high;
    if (isnan(p->data_sharing))
        snprintf(sh, sizeof sh, "%s's data sharing unknown: not high", p->name);
    else
        snprintf(sh, sizeof sh, "%s's data sharing %.2f %s %.2f: %s", p->name, p->data_sharing, high ? ">=" : "<",
                 o->sharing_high, high ? "high" : "not high");
    bool less = p->bus_usage < c->bus_usage;
    char bus[128];
    snprintf(bus, sizeof bus, "bus %.1f %s %s's %.1f", p->bus_usage, less ? "<" : ">=", c->name, c->bus_usage);
    if (high) {
        d->llc = PL_SHARED;
        d->bus = less ? PL_SHARED : PL_SPREAD;
        d->line = less ? 4 : 6;
        d->bus_first = false;
        snprintf(d->why, sizeof d->why, "%s, LLC shared (line 2); %s: bus %s (line %d)", sh, bus, word(d->bus),
                 d->line);
        return 0;
    }
    d->bus_first = true;
    if (less) {
        d->bus = PL_SHARED;
        if (isnan(p->llc_footprint))
            return ib_why(why, len, -EINVAL, "%s's LLC footprint is unknown: line 11 of Algorithm 1 needs it",
                          p->name);
        bool fhigh = p->llc_footprint >= o->footprint_high;
        d->llc = fhigh ? PL_SPREAD : PL_SHARED;
        d->line = fhigh ? 12 : 14;
        snprintf(d->why, sizeof d->why, "%s; %s: bus shared (line 10); LLC footprint %.1f %s %.1f: %s, LLC %s "
                 "(line %d)", sh, bus, p->llc_footprint, fhigh ? ">=" : "<", o->footprint_high,
                 fhigh ? "high" : "not high", word(d->llc), d->line);
        return 0;
    }
    d->bus = PL_SPREAD;
    if (isnan(p->llc_footprint) || isnan(c->llc_footprint))
        return ib_why(why, len, -EINVAL, "%s's LLC footprint is unknown: line 17 of Algorithm 1 compares them",
                      isnan(p->llc_footprint) ? p->name : c->name);
    bool fless = p->llc_footprint < c->llc_footprint;
    d->llc = fless ? PL_SHARED : PL_SPREAD;
    d->line = fless ? 18 : 20;
    snprintf(d->why, sizeof d->why, "%s; %s: bus spread; LLC footprint %.1f %s %s's %.1f: LLC %s (line %d)", sh, bus,
             p->llc_footprint, fless ? "<" : ">=", c->name, c->llc_footprint, word(d->llc), d->line);
    return 0;
}

/* ---- the machine */
static bool has_token(const char *name, const char *const *tokens)
{
    char buf[PL_NAME_LEN];
    snprintf(buf, sizeof buf, "%s", name);
    for (char *save = NULL, *t = strtok_r(buf, "+", &save); t; t = strtok_r(NULL, "+", &save))
        for (unsigned k = 0; tokens[k]; k++)
            if (!strcmp(t, tokens[k]))
                return true;
    return false;
}

int pl_map_levels(const struct pl_hier *h, int *llc, int *bus, char *why, size_t len)
{
    static const char *const caches[] = {"l3", "l2", "l1", NULL}, *const paths[] = {"package", "die", "numa", NULL};
    *llc = *bus = -1;
    if (h->nlevels == 0)
        return 0; /* nothing some PUs share and others do not: pl_map_place says so */
    for (unsigned k = 0; k < h->nlevels; k++) { /* coarse to fine: the first found is the coarsest */
        if (*bus < 0 && has_token(h->lv[k].name, paths))
            *bus = (int)k;
        if (*llc < 0 && has_token(h->lv[k].name, caches))
            *llc = (int)k;
    }
    if (*bus < 0)
        *bus = 0;
    if (*llc < 0)
        *llc = (int)h->nlevels - 1;
    if (*llc < *bus)
        *llc = *bus; /* a cache coarser than the memory path (one L3 over two nodes) is shared through it anyway */
    return 0;
}

void pl_map_result_free(struct pl_map_result *r)
{
    free(r->p_pus);
    free(r->c_pus);
    memset(r, 0, sizeof *r);
}

static void fill_notation(const struct pl_hier *h, struct pl_map_result *r)
{
    if (h->npus > 64)
        return;
    char *n = r->notation;
    n[0] = '{';
    for (unsigned pu = 0; pu < h->npus; pu++)
        n[1 + pu] = '.';
    for (unsigned j = 0; j < r->np; j++)
        n[1 + r->p_pus[j]] = 'X';
    for (unsigned j = 0; j < r->nc; j++)
        n[1 + r->c_pus[j]] = '*';
    n[1 + h->npus] = '}', n[2 + h->npus] = 0;
}

static unsigned dist(unsigned a, unsigned b) { return a > b ? a - b : b - a; }

int pl_map_place(const struct pl_hier *h, int llc, int bus, unsigned np, unsigned nc, const struct pl_map_decision *d,
                 struct pl_map_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    if (np == 0 || nc == 0)
        return ib_why(why, len, -EINVAL, "each application needs at least one thread (%u and %u given)", np, nc);
    if (np + nc > h->npus)
        return ib_why(why, len, -EINVAL, "%u + %u threads do not fit %u PUs, one thread a PU", np, nc, h->npus);
    if (h->nlevels == 0 && llc < 0 && bus < 0) { /* every placement is the same: P first, C next */
        r->llc = d->llc, r->bus = d->bus, r->np = np, r->nc = nc, r->adjusted = true;
        snprintf(r->adjust_why, sizeof r->adjust_why, "this machine has no level some of its PUs share and others "
                 "do not (concerns): every placement is the same here");
        r->p_pus = malloc(np * sizeof *r->p_pus);
        r->c_pus = malloc(nc * sizeof *r->c_pus);
        if (!r->p_pus || !r->c_pus) {
            pl_map_result_free(r);
            return ib_why(why, len, -ENOMEM, "out of memory");
        }
        for (unsigned j = 0; j < np; j++)
            r->p_pus[j] = j;
        for (unsigned j = 0; j < nc; j++)
            r->c_pus[j] = np + j;
        fill_notation(h, r);
        return 0;
    }
    if (llc < 0 || bus < 0 || (unsigned)llc >= h->nlevels || (unsigned)bus >= h->nlevels)
        return ib_why(why, len, -EINVAL, "no LLC or memory-path level");
    struct pl_class_list l;
    struct pl_classes_opts co = {.nthreads = np, .all = false, .limit = PL_CLASSES_LIMIT, .bw = NULL};
    int rc = pl_classes(h, &co, &l, why, len);
    bool balanced = true;
    if (rc == 0 && l.n == 0) { /* nothing balanced (e.g. 3 threads on pairs of PUs): every class */
        pl_class_list_free(&l);
        balanced = false;
        co.all = true;
        rc = pl_classes(h, &co, &l, why, len);
    }
    if (rc < 0)
        return rc;
    unsigned lo[2] = {UINT32_MAX, UINT32_MAX}, hi[2] = {0, 0}; /* [0] llc, [1] bus */
    for (unsigned i = 0; i < l.n; i++) {
        unsigned s[2] = {l.v[i].score[llc], l.v[i].score[bus]};
        for (int k = 0; k < 2; k++)
            lo[k] = s[k] < lo[k] ? s[k] : lo[k], hi[k] = s[k] > hi[k] ? s[k] : hi[k];
    }
    unsigned want[2] = {d->llc == PL_SHARED ? lo[0] : hi[0], d->bus == PL_SHARED ? lo[1] : hi[1]};
    int pick = -1;
    for (unsigned i = 0; i < l.n && pick < 0; i++)
        if (l.v[i].score[llc] == want[0] && l.v[i].score[bus] == want[1])
            pick = (int)i;
    if (pick < 0) { /* the first decision stands; the other takes the closest */
        int fixed = d->bus_first ? 1 : 0, other = 1 - fixed, lvl[2] = {llc, bus};
        unsigned best = UINT32_MAX;
        for (unsigned i = 0; i < l.n; i++) {
            if (l.v[i].score[lvl[fixed]] != want[fixed])
                continue;
            unsigned dd = dist(l.v[i].score[lvl[other]], want[other]);
            if (dd < best)
                best = dd, pick = (int)i;
        }
        r->adjusted = true;
        const char *nm[2] = {"LLC", "bus"};
        enum pl_share ws[2] = {d->llc, d->bus};
        snprintf(r->adjust_why, sizeof r->adjust_why,
                 "LLC %s with the bus %s is not possible for %u threads here: the branch's first decision (%s %s) "
                 "stands, the %s takes %u of its %u-%u instances",
                 word(d->llc), word(d->bus), np, nm[fixed], word(ws[fixed]), nm[other],
                 pick >= 0 ? l.v[pick].score[lvl[other]] : 0, lo[other], hi[other]);
    }
    if (pick < 0) { /* cannot happen: want[fixed] is some class's score */
        pl_class_list_free(&l);
        return ib_why(why, len, -EINVAL, "no placement of %u threads matches", np);
    }
    const struct pl_class *c = &l.v[pick];
    r->llc_used = c->score[llc], r->bus_used = c->score[bus];
    int lvl[2] = {llc, bus};
    enum pl_share asked[2] = {d->llc, d->bus}, placed[2];
    unsigned used[2] = {r->llc_used, r->bus_used};
    for (int k = 0; k < 2; k++)
        placed[k] = lo[k] != hi[k] ? (used[k] == lo[k] ? PL_SHARED : PL_SPREAD)
                    : used[k] == 1 ? PL_SHARED : used[k] == h->lv[lvl[k]].ninst ? PL_SPREAD : asked[k];
    r->llc = placed[0], r->bus = placed[1];
    if (!r->adjusted && (placed[0] != asked[0] || placed[1] != asked[1])) {
        int k = placed[0] != asked[0] ? 0 : 1;
        r->adjusted = true;
        snprintf(r->adjust_why, sizeof r->adjust_why,
                 "%s %s (line %d) is not possible for %u threads here: every %splacement uses %u of the %u "
                 "%s instances, so it is %s",
                 k ? "bus" : "LLC", word(asked[k]), d->line, np, balanced ? "balanced " : "", used[k], h->lv[lvl[k]].ninst, h->lv[lvl[k]].name,
                 word(placed[k]));
    }
    r->np = np, r->nc = nc;
    r->p_pus = malloc(np * sizeof *r->p_pus);
    r->c_pus = malloc(nc * sizeof *r->c_pus);
    bool *in_p = calloc(h->npus, sizeof *in_p), *llc_p = calloc(h->lv[llc].ninst, sizeof *llc_p),
         *bus_p = calloc(h->lv[bus].ninst, sizeof *bus_p);
    if (!r->p_pus || !r->c_pus || !in_p || !llc_p || !bus_p) {
        free(in_p), free(llc_p), free(bus_p);
        pl_class_list_free(&l);
        pl_map_result_free(r);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    memcpy(r->p_pus, c->pus, np * sizeof *r->p_pus);
    pl_class_list_free(&l);
    for (unsigned j = 0; j < np; j++) {
        unsigned pu = r->p_pus[j];
        in_p[pu] = true, llc_p[h->lv[llc].inst[pu]] = true, bus_p[h->lv[bus].inst[pu]] = true;
    }
    /* C: one PU at a time, the least by (a P thread on its core, away from P's LLC and memory path, threads
     * already on its core, logical index) */
    int core = pl_hier_find(h, "core");
    unsigned *on_core = core >= 0 ? calloc(h->lv[core].ninst, sizeof *on_core) : NULL;
    bool *p_core = core >= 0 ? calloc(h->lv[core].ninst, sizeof *p_core) : NULL, *taken = calloc(h->npus, 1);
    if ((core >= 0 && (!on_core || !p_core)) || !taken) {
        free(on_core), free(p_core), free(taken), free(in_p), free(llc_p), free(bus_p);
        pl_map_result_free(r);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned j = 0; core >= 0 && j < np; j++)
        p_core[h->lv[core].inst[r->p_pus[j]]] = true;
    for (unsigned k = 0; k < nc; k++) {
        unsigned best = UINT32_MAX;
        uint64_t bkey = UINT64_MAX;
        for (unsigned pu = 0; pu < h->npus; pu++) {
            if (in_p[pu] || taken[pu])
                continue;
            unsigned ci = core >= 0 ? h->lv[core].inst[pu] : 0;
            uint64_t cls = llc_p[h->lv[llc].inst[pu]] ? 2 : bus_p[h->lv[bus].inst[pu]] ? 1 : 0;
            uint64_t key = ((uint64_t)(core >= 0 && p_core[ci]) << 62) | (cls << 60) |
                           ((uint64_t)(core >= 0 ? on_core[ci] : 0) << 32) | pu;
            if (key < bkey)
                bkey = key, best = pu;
        }
        taken[best] = true;
        r->c_pus[k] = best;
        if (core >= 0)
            on_core[h->lv[core].inst[best]]++;
    }
    free(on_core), free(p_core), free(taken);
    /* ascending */
    for (unsigned i = 1; i < nc; i++)
        for (unsigned j = i; j > 0 && r->c_pus[j - 1] > r->c_pus[j]; j--) {
            unsigned t = r->c_pus[j];
            r->c_pus[j] = r->c_pus[j - 1], r->c_pus[j - 1] = t;
        }
    fill_notation(h, r);
    free(in_p), free(llc_p), free(bus_p);
    return 0;
}
