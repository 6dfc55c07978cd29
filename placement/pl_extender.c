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
 *   not hold, fails that node with the reason: what runs there cannot be judged, and unknown is not safe.
 * - The verdict is pl_fleet_verdict with the interference rule, the margin, the unknown rule and the refusal rule
 *   of the options: place colocate's.  filter keeps "fits" (no tenant), "safe" and "uncertain" nodes (a negative
 *   headroom not established beyond the profiles' uncertainty: pl_coloc.h); the others go to FailedNodes with the
 *   verdict's reason, which names the resource, the figures and their se.
 * - prioritize ranks the nodes that filter would keep: uncertain ones after all others, else in the interference
 *   policy's order (pl_sim_safe_before: shared before empty, the fullest, the best fit, less loaded, name) and
 *   scores them 10, 9, ... 1, 0, 0...: the
 *   node place colocate would choose gets the one top score, so the extender alone reproduces colocate's choice;
 *   nodes filter would drop score 0.
 * - Stateless: everything comes from the request and the store, so a restart loses nothing.  Profiles are read once
 *   (strictly, through the profile library) and cached under a mutex; handle() may run on many threads. */
#define _GNU_SOURCE
#include "pl_extender.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ib_err.h"
#include "pl_coloc.h"
#include "pl_fleet.h"
#include "profile_fmt.h"

struct cached {
    char *name;
    struct profile *p; /* NULL: not in the store (remembered too) */
    char why[256];
};

struct pl_extender {
    struct pl_extender_opts o;
    char *dir;
    pthread_mutex_t mu;
    struct cached *c;
    unsigned n, cap;
};

int pl_extender_new(const struct pl_extender_opts *o, struct pl_extender **out, char *why, size_t len)
{
    struct pl_extender *x = calloc(1, sizeof *x);
    if (!x || !(x->dir = strdup(o->profiles ? o->profiles : "."))) {
        free(x);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    x->o = *o;
    pthread_mutex_init(&x->mu, NULL);
    *out = x;
    return 0;
}

void pl_extender_free(struct pl_extender *x)
{
    if (!x)
        return;
    for (unsigned i = 0; i < x->n; i++) {
        free(x->c[i].name);
        if (x->c[i].p)
            profile_free(x->c[i].p);
        free(x->c[i].p);
    }
    free(x->c);
    free(x->dir);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

static bool good_name(const char *s)
{
    if (!*s || strlen(s) > PL_EXT_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(s);
}

/* The store's profile NAME (read once, cached, also when absent); NULL with why. */
static const struct profile *profile_of(struct pl_extender *x, const char *name, char *why, size_t len)
{
    if (!good_name(name)) {
        snprintf(why, len, "'%.64s' is not a profile name ([A-Za-z0-9._-])", name);
        return NULL;
    }
    if (x->o.lookup) {
        const struct profile *p = x->o.lookup(x->o.lookup_ctx, name);
        if (!p)
            snprintf(why, len, "%.64s is not in the store", name);
        return p;
    }
    pthread_mutex_lock(&x->mu);
    const struct profile *p = NULL;
    for (unsigned i = 0; i < x->n; i++)
        if (!strcmp(x->c[i].name, name)) {
            p = x->c[i].p;
            if (!p)
                snprintf(why, len, "%s", x->c[i].why);
            pthread_mutex_unlock(&x->mu);
            return p;
        }
    if (x->n == x->cap) {
        unsigned nc = x->cap ? 2 * x->cap : 16;
        struct cached *c = realloc(x->c, nc * sizeof *c);
        if (!c) {
            pthread_mutex_unlock(&x->mu);
            snprintf(why, len, "out of memory");
            return NULL;
        }
        x->c = c, x->cap = nc;
    }
    struct cached *e = &x->c[x->n];
    memset(e, 0, sizeof *e);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", x->dir, name);
    struct profile *np = malloc(sizeof *np);
    if (!(e->name = strdup(name)) || !np) {
        free(e->name), free(np);
        pthread_mutex_unlock(&x->mu);
        snprintf(why, len, "out of memory");
        return NULL;
    }
    if (access(path, F_OK) != 0) {
        snprintf(e->why, sizeof e->why, "%s is not in the store", name);
        free(np);
        np = NULL;
    } else if (profile_read(path, np, e->why, sizeof e->why) < 0) {
        /* the reader names the file by its path: the store's name is enough, and keeps answers host-independent */
        char w[sizeof e->why + 256];
        const char *rest = strstr(e->why, ".json: ");
        snprintf(w, sizeof w, "%.200s.json in the store: %s", name, rest ? rest + 7 : e->why);
        snprintf(e->why, sizeof e->why, "%.250s", w);
        free(np);
        np = NULL;
    }
    e->p = np;
    x->n++;
    if (!np)
        snprintf(why, len, "%s", e->why);
    pthread_mutex_unlock(&x->mu);
    return np;
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

/* One line: control characters (a newline in a parser's excerpt of the body, in a node's name) become '?'. */
static char *one_line(char *s)
{
    for (char *c = s; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
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

/* One candidate node, as the request gives it. */
struct node {
    const char *name;
    json_t *obj;             /* the Node object (Nodes form), or the store's nodes/NAME.json document */
    bool owned;              /* obj loaded from the store */
    char fail[512];          /* non-empty: fails before any verdict (tenants unreadable) */
};

/* prioritize's order: an uncertain node after every safe and empty one, else the interference policy's order */
static bool before(const struct pl_sim_fleet *f, const struct pl_verdict *v, unsigned i, unsigned j)
{
    bool ui = v[i].kind == PL_V_UNCERTAIN, uj = v[j].kind == PL_V_UNCERTAIN;
    if (ui != uj)
        return uj;
    return pl_sim_safe_before(f, i, v[i].fit, j, v[j].fit);
}

int pl_extender_handle(struct pl_extender *x, const char *verb, const char *body, size_t len, char **out, int *status)
{
    bool filter = !strcmp(verb, PL_EXT_VERB_FILTER);
    if (!filter && strcmp(verb, PL_EXT_VERB_PRIORITIZE))
        return bad_request(out, status, "unknown verb '%.32s' (filter, prioritize)", verb);
    json_error_t je;
    json_t *req = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!req)
        return bad_request(out, status, "the body is not JSON: line %d: %s", je.line, je.text);
    int rc = 0;
    struct node *nodes = NULL;
    unsigned nn = 0;
    struct pl_sim_fleet f = {0};
    json_t *pod = ci_get(req, "Pod"), *jnodes = ci_get(req, "Nodes"), *jnames = ci_get(req, "NodeNames");
    json_t *items = jnodes && !json_is_null(jnodes) ? ci_get(jnodes, "items") : NULL;
    bool by_name = !items;
    if (!json_is_object(req)) {
        rc = bad_request(out, status, "an ExtenderArgs object expected");
        goto done;
    }
    if (!json_is_object(pod)) {
        rc = bad_request(out, status, "no Pod in the request (an ExtenderArgs needs one)");
        goto done;
    }
    if (jnodes && !json_is_null(jnodes) && !json_is_array(items)) {
        rc = bad_request(out, status, "Nodes: a NodeList with items expected");
        goto done;
    }
    if (by_name && !json_is_array(jnames)) {
        rc = bad_request(out, status, "neither Nodes.items nor NodeNames in the request");
        goto done;
    }
    json_t *list = by_name ? jnames : items;
    nn = (unsigned)json_array_size(list);
    if (json_array_size(list) > PL_EXT_MAX_NODES) {
        rc = bad_request(out, status, "%zu nodes: at most %u in one request", json_array_size(list),
                         PL_EXT_MAX_NODES);
        goto done;
    }
    nodes = calloc(nn ? nn : 1, sizeof *nodes);
    if (!nodes) {
        rc = -ENOMEM;
        goto done;
    }
    for (unsigned i = 0; i < nn; i++) {
        json_t *e = json_array_get(list, i);
        if (by_name) {
            if (!json_is_string(e)) {
                rc = bad_request(out, status, "NodeNames[%u]: a string expected", i);
                goto done;
            }
            nodes[i].name = json_string_value(e);
            char path[4096];
            snprintf(path, sizeof path, "%s/nodes/%s.json", x->dir, nodes[i].name);
            if (good_name(nodes[i].name)) {
                nodes[i].obj = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
                nodes[i].owned = nodes[i].obj != NULL;
            }
            if (!nodes[i].obj)
                snprintf(nodes[i].fail, sizeof nodes[i].fail, "node %.200s is not in the store (nodes/%.200s.json): "
                         "its tenants cannot be judged", nodes[i].name, nodes[i].name);
        } else {
            json_t *nm = ci_get(ci_get(e, "metadata"), "name");
            if (!json_is_object(e) || !json_is_string(nm)) {
                rc = bad_request(out, status, "Nodes.items[%u]: a Node with metadata.name expected", i);
                goto done;
            }
            nodes[i].name = json_string_value(nm);
            nodes[i].obj = e;
        }
    }
    /* the pod */
    const char *pname = annotation(pod, PL_EXT_ANN_PROFILE);
    if (!pname) {
        json_t *doc;
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
    const struct profile *pp = profile_of(x, pname, why, sizeof why);
    if (!pp) {
        char msg[700];
        snprintf(msg, sizeof msg, "the pod's profile '%.64s' is not in the store: %s", pname, why);
        json_t *doc = filter ? json_pack("{s:o,s:o,s:s}", "NodeNames", json_array(), "FailedNodes", json_object(),
                                         "Error", one_line(msg))
                             : json_array();
        rc = answer(doc, 200, out, status);
        goto done;
    }
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
        snprintf(m->name, sizeof m->name, "%s", nodes[i].name);
        json_t *alloc = ci_get(ci_get(nodes[i].obj, "status"), "allocatable");
        double c, mem;
        char bad[64];
        for (int k = 0; k < 2; k++)
            if (qty_of(alloc, k ? "memory" : "cpu", k ? &mem : &c, bad, sizeof bad) < 0) {
                if (!nodes[i].owned) { /* the request's: malformed */
                    rc = bad_request(out, status, "node %.200s: status.allocatable.%s: %s is not a quantity",
                                     nodes[i].name, k ? "memory" : "cpu", bad);
                    goto done;
                } /* the store's nodes/NAME.json: that node cannot be judged */
                snprintf(nodes[i].fail, sizeof nodes[i].fail, "nodes/%.200s.json: status.allocatable.%s: %s is not a "
                         "quantity", nodes[i].name, k ? "memory" : "cpu", bad);
            }
        m->cpus = c >= 0 ? (unsigned)floor(c) : 1u << 30; /* whole CPUs: the capacity rounded down, demand up */
        m->mem = mem > 0 ? mem : 1e30;
        if (nodes[i].fail[0])
            continue;
        const char *ten = annotation(nodes[i].obj, PL_EXT_ANN_TENANTS);
        if (!ten)
            continue;
        json_t *arr = json_loads(ten, 0, &je);
        if (!json_is_array(arr)) {
            snprintf(nodes[i].fail, sizeof nodes[i].fail, "annotation %s is not a JSON array of profile names",
                     PL_EXT_ANN_TENANTS);
            json_decref(arr);
            continue;
        }
        size_t k;
        json_t *t;
        json_array_foreach(arr, k, t)
        {
            const struct profile *tp = json_is_string(t) ? profile_of(x, json_string_value(t), why, sizeof why) : NULL;
            if (!tp) {
                snprintf(nodes[i].fail, sizeof nodes[i].fail, "tenant %.64s cannot be judged: %.300s",
                         json_is_string(t) ? json_string_value(t) : "(not a string)", json_is_string(t) ? why : "");
                break;
            }
            if (m->ntenants >= PL_SIM_MAX_TENANTS - 1) {
                snprintf(nodes[i].fail, sizeof nodes[i].fail, "more than %u tenants", PL_SIM_MAX_TENANTS - 1);
                break;
            }
            if (f.napps + 1 >= cap_apps) {
                struct pl_sim_app *na = realloc(f.app, 2 * cap_apps * sizeof *na);
                if (!na) {
                    rc = -ENOMEM;
                    break;
                }
                memset(na + cap_apps, 0, cap_apps * sizeof *na);
                f.app = na, cap_apps *= 2;
            }
            struct pl_sim_app *ap = &f.app[f.napps];
            ap->p = tp, ap->machine = (int)i;
            m->tenant[m->ntenants++] = f.napps++;
        }
        json_decref(arr);
    }
    if (rc)
        goto done;
    unsigned a = f.napps++;
    f.app[a].p = pp, f.app[a].cpus = (unsigned)ceil(pod_cpu), f.app[a].mem = pod_mem, f.app[a].machine = -1;
    struct pl_coloc_opts co = {.margin = x->o.margin, .pessimistic = x->o.pessimistic,
                               .established = x->o.established};
    struct pl_verdict *v = calloc(nn ? nn : 1, sizeof *v);
    unsigned *order = calloc(nn ? nn : 1, sizeof *order), nok = 0;
    if (!v || !order) {
        free(v), free(order);
        rc = -ENOMEM;
        goto done;
    }
    for (unsigned i = 0; i < nn; i++) {
        if (nodes[i].fail[0]) {
            v[i].kind = PL_V_UNSAFE;
            snprintf(v[i].why, sizeof v[i].why, "%s", nodes[i].fail);
            continue;
        }
        /* filter answers an unsafe node with its reason: the check in full, once; prioritize wants a verdict and
         * a fit, no text: terse (it stops at the first broken resource) */
        struct pl_coloc_opts terse = co;
        terse.terse = true;
        pl_fleet_verdict(&f, i, a, true, filter ? &co : &terse, &v[i]);
        if (v[i].kind == PL_V_FITS || v[i].kind == PL_V_SAFE || v[i].kind == PL_V_UNCERTAIN)
            order[nok++] = i;
    }
    json_t *doc;
    if (filter) {
        json_t *failed = json_object(), *kept = by_name ? json_array() : json_object();
        json_t *kept_items = by_name ? NULL : json_array();
        for (unsigned i = 0; i < nn; i++) {
            bool ok = v[i].kind == PL_V_FITS || v[i].kind == PL_V_SAFE || v[i].kind == PL_V_UNCERTAIN;
            if (!ok) {
                char msg[600];
                if (nodes[i].fail[0])
                    snprintf(msg, sizeof msg, "ibench: cannot judge: %s", v[i].why);
                else if (v[i].kind == PL_V_NO_ROOM) /* its reason starts "no room: " */
                    snprintf(msg, sizeof msg, "ibench: %s", v[i].why);
                else
                    snprintf(msg, sizeof msg, "ibench: %s: %s", pl_verdict_name(v[i].kind), v[i].why);
                json_object_set_new(failed, nodes[i].name, json_string(one_line(msg)));
            } else if (by_name) {
                json_array_append_new(kept, json_string(nodes[i].name));
            } else {
                json_array_append(kept_items, nodes[i].obj);
            }
        }
        if (!by_name) {
            json_object_set_new(kept, "items", kept_items);
            json_t *kind = ci_get(jnodes, "kind"), *api = ci_get(jnodes, "apiVersion");
            if (kind)
                json_object_set(kept, "kind", kind);
            if (api)
                json_object_set(kept, "apiVersion", api);
        }
        doc = json_object();
        json_object_set_new(doc, by_name ? "NodeNames" : "Nodes", kept);
        json_object_set_new(doc, "FailedNodes", failed);
        json_object_set_new(doc, "Error", json_string(""));
    } else {
        /* insertion sort by the policy's order (n is at most PL_EXT_MAX_NODES; nok log nok would do, but the order is
         * a predicate, and stable insertion keeps it exact) */
        for (unsigned i = 1; i < nok; i++)
            for (unsigned j = i; j > 0 && before(&f, v, order[j], order[j - 1]); j--) {
                unsigned t = order[j];
                order[j] = order[j - 1], order[j - 1] = t;
            }
        int *score = calloc(nn ? nn : 1, sizeof *score);
        if (!score) {
            free(v), free(order);
            rc = -ENOMEM;
            goto done;
        }
        for (unsigned r = 0; r < nok; r++)
            score[order[r]] = r < PL_EXT_MAX_PRIORITY ? PL_EXT_MAX_PRIORITY - (int)r : 0;
        doc = json_array();
        for (unsigned i = 0; i < nn; i++)
            json_array_append_new(doc, json_pack("{s:s,s:i}", "Host", nodes[i].name, "Score", score[i]));
        free(score);
    }
    free(v), free(order);
    rc = answer(doc, 200, out, status);
done:
    for (unsigned i = 0; nodes && i < nn; i++)
        if (nodes[i].owned)
            json_decref(nodes[i].obj);
    free(nodes);
    free(f.m);
    free(f.app);
    json_decref(req);
    return rc;
}

/* Minimal: the profile cache as it stands (entries, and how many say "not in the store"). */
int pl_extender_metrics(struct pl_extender *x, char **text)
{
    unsigned n, absent = 0;
    pthread_mutex_lock(&x->mu);
    n = x->n;
    for (unsigned i = 0; i < x->n; i++)
        absent += !x->c[i].p;
    pthread_mutex_unlock(&x->mu);
    return asprintf(text,
                    "# HELP ibench_extender_profile_cache_entries Profiles cached, by whether the store held them.\n"
                    "# TYPE ibench_extender_profile_cache_entries gauge\n"
                    "ibench_extender_profile_cache_entries{found=\"true\"} %u\n"
                    "ibench_extender_profile_cache_entries{found=\"false\"} %u\n",
                    n - absent, absent) < 0
               ? (*text = NULL, -ENOMEM)
               : 0;
}

/* Minimal: ready once the store's directory can be opened (profiles from memory: always). */
bool pl_extender_ready(struct pl_extender *x, char *why, size_t len)
{
    if (x->o.lookup)
        return true;
    DIR *d = opendir(x->dir);
    if (!d) {
        snprintf(why, len, "the profile store %.200s cannot be opened: %s", x->dir, strerror(errno));
        return false;
    }
    closedir(d);
    return true;
}
