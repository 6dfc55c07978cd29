/* pl_ext_reader.c - reading a request (pl_ext.h): the ExtenderArgs, keys matched case-insensitively as Go's
 * encoding/json does ("Pod", "Nodes", "NodeNames"; kube-scheduler sends them capitalised).  The body is scanned
 * (pl_jscan.h) and checked whole; a Nodes object is read from the scanned text without a tree (its items' spans),
 * everything else goes to jansson, duplicates refused.  Anything that is not an ExtenderArgs (not an object, no pod,
 * Nodes without items, a node without a name, a wrong type, over PL_EXT_MAX_NODES nodes, a quantity that is not one)
 * is a 400 with {"Error": one line}. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_ext.h"
#include "pl_ext_writer.h"
#include "pl_jscan.h"

/* A stage's answer given (0 from the writer) or its failure. */
static int answered(int rc) { return rc < 0 ? rc : 1; }

/* Walks the members of the object at s->p ('{'): on() is called with s->p at each member's value and either consumes
 * it (1) or leaves it to be skipped, checked as jscan_value(s, depth) checks it (0); below 0: an error, passed on.
 * 0 after the closing '}'. */
typedef int (*member_fn)(void *ctx, struct jscan *s, const char *key, size_t klen);

static int walk(struct jscan *s, int depth, member_fn on, void *ctx)
{
    bool first = true;
    const char *k;
    size_t kl;
    int r;
    s->p++; /* '{' */
    while ((r = jscan_member(s, &first, &k, &kl)) == 1) {
        int c = on(ctx, s, k, kl);
        if (c < 0)
            return c;
        if (c == 0 && jscan_value(s, depth) < 0)
            return -1;
    }
    return r;
}

/* The value at s->p kept as *sp, checked as jscan_value(s, depth) checks it. */
static int keep(struct jscan *s, int depth, struct span *sp)
{
    const char *v = s->p;
    if (jscan_value(s, depth) < 0)
        return -1;
    sp->p = v, sp->n = (size_t)(s->p - v);
    return 1;
}

struct node_part {
    struct nspans *it;
    bool md; /* in metadata, else in status */
};

static int node_part(void *ctx, struct jscan *s, const char *k, size_t kl)
{
    struct node_part *w = ctx;
    struct span *want = w->md && jscan_key_is(k, kl, "name")           ? &w->it->name
                        : w->md && jscan_key_is(k, kl, "annotations")  ? &w->it->annotations
                        : !w->md && jscan_key_is(k, kl, "allocatable") ? &w->it->allocatable
                                                                       : NULL;
    return want ? keep(s, 3, want) : 0;
}

static int node_member(void *ctx, struct jscan *s, const char *k, size_t kl)
{
    struct node_part w = {.it = ctx, .md = jscan_key_is(k, kl, "metadata")};
    if ((!w.md && !jscan_key_is(k, kl, "status")) || jscan_peek(s) != '{')
        return 0;
    return walk(s, 3, node_part, &w) < 0 ? -1 : 1;
}

/* One Node object: the spans of metadata.name, metadata.annotations and status.allocatable. */
static int fast_node(struct jscan *s, struct nspans *it)
{
    it->object = true;
    it->raw.p = s->p;
    if (walk(s, 2, node_member, it) < 0)
        return -1;
    it->raw.n = (size_t)(s->p - it->raw.p);
    return 0;
}

/* Nodes.items: each item's spans. */
static int items(struct jscan *s, struct ext_fast *fa)
{
    fa->items = true;
    s->p++; /* '[' */
    bool first = true;
    int r;
    while ((r = jscan_element(s, &first)) == 1) {
        if (fa->n == fa->cap) {
            unsigned nc = fa->cap ? 2 * fa->cap : 64;
            struct nspans *ni = realloc(fa->it, nc * sizeof *ni);
            if (!ni)
                return -ENOMEM;
            fa->it = ni, fa->cap = nc;
        }
        struct nspans *it = &fa->it[fa->n++];
        memset(it, 0, sizeof *it);
        if (jscan_peek(s) == '{' ? fast_node(s, it) < 0 : jscan_value(s, 2) < 0)
            return -1;
    }
    return r < 0 ? -1 : 1;
}

static int nodes_member(void *ctx, struct jscan *s, const char *k, size_t kl)
{
    struct ext_fast *fa = ctx;
    if (jscan_key_is(k, kl, "items") && jscan_peek(s) == '[')
        return items(s, fa);
    struct span *want = jscan_key_is(k, kl, "kind") ? &fa->kind : jscan_key_is(k, kl, "apiVersion") ? &fa->api
                                                                                                    : NULL;
    return want && !want->p ? keep(s, 1, want) : 0; /* the first of each */
}

/* The Nodes object: its items' spans, kind and apiVersion. */
static int fast_nodes(struct jscan *s, struct ext_fast *fa)
{
    fa->raw.p = s->p;
    int r = walk(s, 1, nodes_member, fa);
    if (r < 0)
        return r;
    fa->raw.n = (size_t)(s->p - fa->raw.p);
    return 0;
}

/* The ExtenderArgs: a Nodes object is scanned (fa), and a NodeNames array when it is the only member of that name
 * (several are jansson's to choose from, or to refuse as duplicates); everything else goes to jansson (*doc,
 * duplicates refused).  0; 1 with a one-line reason in why (not JSON: a 400); -ENOMEM. */
static int parse_request(const char *body, size_t len, json_t **doc, struct ext_fast *fa, struct span *names,
                         size_t *count, char *why, size_t wlen)
{
    json_error_t je;
    struct jscan s;
    jscan_init(&s, body, len);
    if (jscan_peek(&s) != '{') { /* not an object: jansson says what it is */
        if (!(*doc = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je))) {
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
    unsigned nnames = 0;
    struct span held = {0}; /* the NodeNames member held out of rest */
    s.p++;
    while ((r = jscan_member(&s, &first, &k, &kl)) == 1) {
        bool is_names = jscan_key_is(k, kl, "NodeNames");
        if (is_names && nnames++ == 0 && jscan_peek(&s) == '[') { /* scanned as jscan_value would, counted */
            held.p = k - 1;
            names->p = s.p++;
            bool f2 = true;
            *count = 0;
            while ((r = jscan_element(&s, &f2)) == 1 && (r = jscan_value(&s, 2)) == 0)
                ++*count;
            if (r != 0) {
                r = -1;
                break;
            }
            names->n = (size_t)(s.p - names->p), held.n = (size_t)(s.p - held.p);
            continue;
        }
        if (is_names && held.p) { /* another one: both are jansson's */
            if (rn > 1)
                rest[rn++] = ',';
            memcpy(rest + rn, held.p, held.n);
            rn += held.n;
            held.p = NULL, names->p = NULL, names->n = 0;
        }
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
    *doc = json_loadb(rest, rn, JSON_REJECT_DUPLICATES, &je);
    free(rest);
    if (!*doc) {
        snprintf(why, wlen, "the body is not JSON: %s", je.text);
        return 1;
    }
    return 0;
}

/* Node i's state from its Node object: scanned, else parsed. */
static int read_object(struct pl_extender *x, struct ext_req *r, unsigned i)
{
    struct ext_node *n = &r->nodes[i];
    struct ninfo *own = &r->own[i];
    int fr = x->o.general_only ? 1 : ninfo_scan(&r->fa.it[i], own, &r->rnames);
    if (fr < 0)
        return fr;
    atomic_fetch_add(&x->fig.nodes_read[fr ? 1 : 0], 1);
    char why[300];
    if (fr && (fr = ninfo_parse(&r->fa.it[i], i, own, &r->rnames, why, sizeof why)) != 0)
        return fr < 0 ? fr : answered(ext_bad_request(&r->out, &r->status, "%s", why));
    own->h = ext_hash(own->name), own->sh = ninfo_state_hash(own);
    n->name = own->name;
    n->ni = own;
    return own->fail ? ext_set_text(&n->fail, "%s", own->fail) : 0;
}

/* Node i by its name (len bytes; owned: a copy the node keeps): its state is the node state's. */
static int named(struct ext_req *r, unsigned i, const char *name, size_t len, char *owned)
{
    struct ext_node *n = &r->nodes[i];
    n->ni = nsnap_find(r->snap, name, len); /* the snapshot holds good names only */
    if (n->ni) {
        free(owned);
        n->name = n->ni->name, n->json = n->ni->json, n->jlen = n->ni->jlen;
        return 0;
    }
    if (!owned && !(owned = strndup(name, len)))
        return -ENOMEM;
    n->name = n->owned = owned;
    return ext_set_text(&n->fail, "node %.200s is not in the store (nodes/%.200s.json): its tenants cannot be judged",
                        n->name, n->name);
}

/* The node names: scanned (an element without an escape is looked up as it stands), else jansson's array. */
static int read_names(struct ext_req *r)
{
    struct jscan s;
    bool first = true;
    if (r->names.p) {
        jscan_init(&s, r->names.p, r->names.n);
        s.p++; /* '[' */
    }
    for (unsigned i = 0; i < r->nn; i++) {
        const char *v = NULL;
        size_t vn = 0;
        if (r->names.p) {
            if (jscan_element(&s, &first) != 1 || (v = s.p, jscan_value(&s, 1) < 0))
                return -EINVAL; /* checked whole when the body was read: not reached */
            vn = (size_t)(s.p - v);
        }
        int rc;
        if (v && *v == '"' && !memchr(v, '\\', vn)) {
            rc = named(r, i, v + 1, vn - 2, NULL);
        } else {
            json_error_t je;
            json_t *e = v ? json_loadb(v, vn, JSON_DECODE_ANY, &je) : json_incref(json_array_get(r->jnames, i));
            bool str = json_is_string(e);
            char *name = str ? strdup(json_string_value(e)) : NULL;
            json_decref(e);
            if (!str)
                return answered(ext_bad_request(&r->out, &r->status, "NodeNames[%u]: a string expected", i));
            rc = name ? named(r, i, name, strlen(name), name) : -ENOMEM;
        }
        if (rc)
            return rc;
        struct ext_node *n = &r->nodes[i];
        if (n->ni && n->ni->fail && ext_set_text(&n->fail, "%s", n->ni->fail) < 0)
            return -ENOMEM;
    }
    return 0;
}

int ext_read_request(struct pl_extender *x, struct ext_req *r, const char *body, size_t len)
{
    char perr[300];
    size_t nnames = 0;
    int pr = parse_request(body, len, &r->doc, &r->fa, &r->names, &nnames, perr, sizeof perr);
    if (pr)
        return pr < 0 ? pr : answered(ext_bad_request(&r->out, &r->status, "%s", perr));
    ext_nodes_check(&x->nodes, x->o.lookup ? NULL : &x->cache, r->now, false);
    json_t *jnodes = ext_ci_get(r->doc, "Nodes");
    r->pod = ext_ci_get(r->doc, "Pod");
    r->jnames = ext_ci_get(r->doc, "NodeNames");
    r->fast = r->fa.raw.p != NULL;
    r->by_name = !r->fast;
    bool have_names = r->names.p || json_is_array(r->jnames);
    /* a Nodes member left to jansson is not an object: no NodeList */
    bool no_list = r->fast ? !r->fa.items : jnodes && !json_is_null(jnodes);
    const char *bad = !json_is_object(r->doc)          ? "an ExtenderArgs object expected"
                      : !json_is_object(r->pod)        ? "no Pod in the request (an ExtenderArgs needs one)"
                      : no_list                        ? "Nodes: a NodeList with items expected"
                      : r->by_name && !have_names ? "neither Nodes.items nor NodeNames in the request"
                                                                : NULL;
    if (bad)
        return answered(ext_bad_request(&r->out, &r->status, "%s", bad));
    size_t nlist = r->fast ? r->fa.n : r->names.p ? nnames : json_array_size(r->jnames);
    if (nlist > PL_EXT_MAX_NODES)
        return answered(ext_bad_request(&r->out, &r->status, "%zu nodes: at most %u in one request", nlist,
                                        PL_EXT_MAX_NODES));
    r->nn = (unsigned)nlist;
    if (!(r->nodes = calloc(r->nn ? r->nn : 1, sizeof *r->nodes)))
        return -ENOMEM;
    if (r->by_name) {
        r->snap = ext_nodes_get(&x->nodes);
        return read_names(r);
    }
    if (!(r->own = calloc(r->nn ? r->nn : 1, sizeof *r->own)))
        return -ENOMEM;
    for (unsigned i = 0; i < r->nn; i++) {
        int rc = read_object(x, r, i);
        if (rc)
            return rc;
    }
    return 0;
}

/* The pod's key for assumed tenants: metadata.uid, else namespace/name; false when it has neither. */
static bool pod_key(json_t *pod, char *key, size_t len)
{
    json_t *md = ext_ci_get(pod, "metadata"), *uid = ext_ci_get(md, "uid"), *ns = ext_ci_get(md, "namespace"),
           *nm = ext_ci_get(md, "name");
    if (json_is_string(uid) && *json_string_value(uid))
        return (size_t)snprintf(key, len, "uid:%s", json_string_value(uid)) < len;
    if (json_is_string(nm) && *json_string_value(nm))
        return (size_t)snprintf(key, len, "%s/%s", json_is_string(ns) ? json_string_value(ns) : "",
                                json_string_value(nm)) < len;
    return false;
}

int ext_read_pod(struct pl_extender *x, struct ext_req *r)
{
    r->pname = ext_annotation(r->pod, PL_EXT_ANN_PROFILE);
    if (!r->pname)
        return answered(ext_answer_no_profile(r));
    char why[512];
    if (!(r->pp = ext_cache_get(&x->cache, r->pname, r->now, &r->pn, why, sizeof why))) {
        char msg[700];
        snprintf(msg, sizeof msg, "the pod's profile '%.64s' is not in the store: %s", r->pname, why);
        return answered(ext_answer_no_store(r, msg));
    }
    atomic_fetch_add(&x->fig.decisions[r->filter ? 0 : 1], 1);
    r->keyed = x->o.assume_ttl_s && pod_key(r->pod, r->key, sizeof r->key);
    /* the pod's demand: its containers' requests (absent: 0) */
    json_t *ctrs = ext_ci_get(ext_ci_get(r->pod, "spec"), "containers"), *ct;
    size_t ci;
    json_array_foreach(ctrs, ci, ct)
    {
        json_t *rq = ext_ci_get(ext_ci_get(ct, "resources"), "requests");
        double c, m;
        char bad[64];
        for (int k = 0; k < 2; k++)
            if (ext_qty_of(rq, k ? "memory" : "cpu", k ? &m : &c, bad, sizeof bad) < 0)
                return answered(ext_bad_request(&r->out, &r->status,
                                                "Pod: containers[%zu].resources.requests.%s: %s is not a quantity", ci,
                                                k ? "memory" : "cpu", bad));
        r->pod_cpu += c > 0 ? c : 0, r->pod_mem += m > 0 ? m : 0;
    }
    return 0;
}

/* ---- the log line's fields */

/* The value of the first member named key (letters without case) of the object that is the span in, checked up to
 * that value.  false when in is not an object, has no such member, or is not JSON before it. */
static bool find(struct span in, const char *key, struct span *out)
{
    struct jscan s;
    jscan_init(&s, in.p, in.n);
    if (!in.p || jscan_peek(&s) != '{')
        return false;
    bool first = true;
    const char *k;
    size_t kl;
    s.p++;
    while (jscan_member(&s, &first, &k, &kl) == 1) {
        const char *v = s.p;
        if (jscan_value(&s, 1) < 0)
            return false;
        if (jscan_key_is(k, kl, key)) {
            out->p = v, out->n = (size_t)(s.p - v);
            return true;
        }
    }
    return false;
}

/* The elements of the array (or members of the object) that is the span in; with score, only those whose "Score"
 * is above 0.  -1 when in is neither, or is not JSON. */
static long count(struct span in, bool score)
{
    struct jscan s;
    jscan_init(&s, in.p, in.n);
    char c = in.p ? jscan_peek(&s) : 0;
    if (c != '[' && c != '{')
        return -1;
    bool first = true;
    const char *k;
    size_t kl;
    long n = 0;
    int r;
    s.p++;
    while ((r = c == '{' ? jscan_member(&s, &first, &k, &kl) : jscan_element(&s, &first)) == 1) {
        struct span v = {s.p, 0}, sc;
        if (jscan_value(&s, 1) < 0)
            return -1;
        v.n = (size_t)(s.p - v.p);
        n += !score || (find(v, "Score", &sc) && strtol(sc.p, NULL, 10) > 0);
    }
    return r == 0 ? n : -1;
}

/* The text of the string that is the span in, escapes kept, cut to len - 1 bytes; false when it is not a string. */
static bool text(struct span in, char *b, size_t len)
{
    if (!in.p || in.n < 2 || in.p[0] != '"')
        return false;
    snprintf(b, len, "%.*s", (int)(in.n - 2 < len ? in.n - 2 : len - 1), in.p + 1);
    return true;
}

void pl_extender_log_fields(const char *verb, const char *body, size_t len, const char *answer,
                            struct pl_extender_logf *lf)
{
    memset(lf, 0, sizeof *lf);
    const struct span req = {body, len}, ans = {answer, strlen(answer)};
    struct span pod, md, v, items;
    char ns[128] = "", name[256] = "";
    if (find(req, "Pod", &pod) && find(pod, "metadata", &md) && find(md, "name", &v) && text(v, name, sizeof name)) {
        if (find(md, "namespace", &v))
            text(v, ns, sizeof ns);
        lf->has_pod = true;
        snprintf(lf->pod, sizeof lf->pod, "%s%s%s", ns, ns[0] ? "/" : "", name);
    }
    bool nodes = find(req, "Nodes", &v) && v.p[0] == '{';
    lf->nodes_in = nodes && find(v, "items", &items) ? count(items, false) : -1;
    if (lf->nodes_in < 0)
        lf->nodes_in = find(req, "NodeNames", &v) ? count(v, false) : -1;
    if (strcmp(verb, PL_EXT_VERB_FILTER)) {
        lf->nodes_out = count(ans, true); /* scored above 0 */
        return;
    }
    if (find(ans, "Nodes", &v) && v.p[0] == '{')
        lf->nodes_out = find(v, "items", &items) ? count(items, false) : -1;
    else
        lf->nodes_out = find(ans, "NodeNames", &v) ? count(v, false) : -1;
    if (find(ans, "Error", &v))
        text(v, lf->error, sizeof lf->error);
}
