/* pl_ext_state.c - one node's state (pl_ext_state.h).  Rules: room from status.allocatable (cpu, memory; absent:
 * unbounded, kube-scheduler checks resources itself), a quantity that is not one is said, never taken as 0 or
 * unlimited; tenants from the annotation PL_EXT_ANN_TENANTS, a JSON array of store names (absent: none), and an
 * annotation that is not one fails the node: what runs there cannot be judged.
 *
 * The scanned path (ninfo_scan) exists because 1000 small parses with their trees cost a third of a request at 1000
 * nodes.  It takes only what it reads exactly as jansson would: no escape in a key or a name, no \u escape, every
 * value of the objects it reads a string, no duplicate key, at most FAST_KEYS keys; anything else is ninfo_parse's. */
#define _GNU_SOURCE
#include "pl_ext_state.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pl_extender.h"
#include "pl_jscan.h"
#include "pl_sim.h"

json_t *ext_ci_get(json_t *o, const char *key)
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

const char *ext_annotation(json_t *obj, const char *key)
{
    json_t *a = ext_ci_get(ext_ci_get(obj, "metadata"), "annotations");
    if (!a)
        a = json_object_get(obj, "annotations"); /* the store's nodes/NAME.json */
    json_t *v = json_object_get(a, key); /* annotation keys are case-sensitive */
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* resource.Quantity's grammar: an unsigned decimal number, then a binary suffix Ki..Ei, a decimal one m, k, M..E,
 * or an exponent e3 / E-3.  Negative or not finite ("-3", "1e400", "inf", "0x10", " 1") is not one: a 400. */
double ext_quantity(const char *s)
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

int ext_qty_of(json_t *o, const char *key, double *v, char *bad, size_t len)
{
    json_t *j = json_object_get(o, key);
    *v = -1;
    if (!j || json_is_null(j))
        return 0;
    if (json_is_string(j))
        *v = ext_quantity(json_string_value(j));
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

void ninfo_clear(struct ninfo *ni)
{
    free(ni->json), free(ni->ten), free(ni->fail), free(ni->badq), free(ni->name);
    memset(ni, 0, sizeof *ni);
}

uint64_t ninfo_state_hash(const struct ninfo *ni)
{
    uint64_t h = ext_hash_n((const char *)&ni->cpu, sizeof ni->cpu);
    h = (h ^ ext_hash_n((const char *)&ni->mem, sizeof ni->mem)) * 1099511628211ull;
    for (unsigned k = 0; k < ni->nten; k++)
        h = (h ^ (uintptr_t)ni->ten[k]) * 1099511628211ull;
    return ext_mix(h ^ ni->nten);
}

bool ninfo_same_state(const struct ninfo *a, const struct ninfo *b)
{
    return a->nten == b->nten && a->cpu == b->cpu && a->mem == b->mem &&
           (!a->nten || !memcmp(a->ten, b->ten, a->nten * sizeof *a->ten));
}

int ninfo_from_json(json_t *obj, struct ninfo *ni, struct strtab *st)
{
    json_t *alloc = ext_ci_get(ext_ci_get(obj, "status"), "allocatable");
    for (int k = 0; k < 2 && !ni->badq; k++) {
        char bad[64];
        if (ext_qty_of(alloc, k ? "memory" : "cpu", k ? &ni->mem : &ni->cpu, bad, sizeof bad) < 0 &&
            asprintf(&ni->badq, "status.allocatable.%s: %s is not a quantity", k ? "memory" : "cpu", bad) < 0) {
            ni->badq = NULL;
            return -ENOMEM;
        }
    }
    if (ni->badq)
        ni->cpu = ni->mem = -1;
    const char *ten = ext_annotation(obj, PL_EXT_ANN_TENANTS);
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
            if (json_is_string(t) && !(ni->ten[k] = strtab_intern(st, json_string_value(t)))) {
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

/* ---- the scanned path */

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
        if (!(ni->ten[k] = strtab_intern(st, name)))
            return -ENOMEM;
    }
    return 0;
}

int ninfo_scan(const struct nspans *it, struct ninfo *ni, struct strtab *st)
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
        *v = ext_quantity(t);
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

/* A checked span parsed (small: a name, annotations, allocatable); NULL when jansson refuses it (a duplicate). */
static json_t *span_json(struct span sp, json_error_t *je)
{
    return json_loadb(sp.p, sp.n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, je);
}

int ninfo_parse(const struct nspans *it, unsigned i, struct ninfo *ni, struct strtab *st, char *why, size_t len)
{
    /* the three things read of a Node object, parsed alone: {"metadata": {"name", "annotations"}, "status":
     * {"allocatable"}} */
    ninfo_clear(ni);
    json_error_t je;
    json_t *nm = it->name.n ? span_json(it->name, &je) : NULL;
    if (!it->object || !json_is_string(nm)) {
        json_decref(nm);
        snprintf(why, len, "Nodes.items[%u]: a Node with metadata.name expected", i);
        return 1;
    }
    json_t *md = json_object(), *sto = json_object(), *obj = json_object();
    json_object_set_new(md, "name", nm);
    json_object_set_new(obj, "metadata", md);
    json_object_set_new(obj, "status", sto);
    struct {
        struct span sp;
        json_t *in;
        const char *key;
    } parts[] = {{it->annotations, md, "annotations"}, {it->allocatable, sto, "allocatable"}};
    int rc = 0;
    for (unsigned k = 0; k < 2 && rc == 0; k++) {
        if (!parts[k].sp.n)
            continue;
        json_t *v = span_json(parts[k].sp, &je);
        if (!v) {
            snprintf(why, len, "Nodes.items[%u]: %s: %s", i, parts[k].key, je.text);
            rc = 1;
        } else {
            json_object_set_new(parts[k].in, parts[k].key, v);
        }
    }
    if (rc == 0 && (!(ni->name = strdup(json_string_value(nm))) || ninfo_from_json(obj, ni, st) < 0))
        rc = -ENOMEM;
    json_decref(obj);
    return rc;
}
