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

static int fast_node(struct jscan *s, struct nspans *it)
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
static int fast_nodes(struct jscan *s, struct ext_fast *fa)
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

/* The ExtenderArgs: a Nodes object is scanned (fa), everything else goes to jansson (*doc, duplicates refused).
 * 0; 1 with a one-line reason in why (not JSON: a 400); -ENOMEM. */
static int parse_request(const char *body, size_t len, json_t **doc, struct ext_fast *fa, char *why, size_t wlen)
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
    *doc = json_loadb(rest, rn, JSON_REJECT_DUPLICATES, &je);
    free(rest);
    if (!*doc) {
        snprintf(why, wlen, "the body is not JSON: %s", je.text);
        return 1;
    }
    return 0;
}

static int set_fail(struct ext_node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_fail(struct ext_node *n, const char *fmt, ...)
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

/* Node i's state: from its Node object (scanned, else parsed) or from the node state by its name. */
static int read_node(struct pl_extender *x, struct ext_req *r, unsigned i)
{
    struct ext_node *n = &r->nodes[i];
    if (r->fast) {
        int fr = x->o.general_only ? 1 : ninfo_scan(&r->fa.it[i], &n->own, &r->rnames);
        if (fr < 0)
            return fr;
        atomic_fetch_add(&x->fig.nodes_read[fr ? 1 : 0], 1);
        char why[300];
        if (fr && (fr = ninfo_parse(&r->fa.it[i], i, &n->own, &r->rnames, why, sizeof why)) != 0)
            return fr < 0 ? fr : answered(ext_bad_request(&r->out, &r->status, "%s", why));
        n->name = n->own.name;
        n->ni = &n->own;
    } else {
        json_t *e = json_array_get(r->jnames, i);
        if (!json_is_string(e))
            return answered(ext_bad_request(&r->out, &r->status, "NodeNames[%u]: a string expected", i));
        n->name = json_string_value(e);
        n->ni = nsnap_find(r->snap, n->name); /* the snapshot holds good names only */
        if (!n->ni && set_fail(n, "node %.200s is not in the store (nodes/%.200s.json): its tenants cannot be judged",
                               n->name, n->name) < 0)
            return -ENOMEM;
    }
    if (n->ni && n->ni->fail && set_fail(n, "%s", n->ni->fail) < 0)
        return -ENOMEM;
    return 0;
}

int ext_read_request(struct pl_extender *x, struct ext_req *r, const char *body, size_t len)
{
    char perr[300];
    int pr = parse_request(body, len, &r->doc, &r->fa, perr, sizeof perr);
    if (pr)
        return pr < 0 ? pr : answered(ext_bad_request(&r->out, &r->status, "%s", perr));
    ext_nodes_check(&x->nodes, x->o.lookup ? NULL : &x->cache, r->now, false);
    json_t *jnodes = ext_ci_get(r->doc, "Nodes");
    r->pod = ext_ci_get(r->doc, "Pod");
    r->jnames = ext_ci_get(r->doc, "NodeNames");
    r->fast = r->fa.raw.p != NULL;
    r->by_name = !r->fast;
    /* a Nodes member left to jansson is not an object: no NodeList */
    bool no_list = r->fast ? !r->fa.items : jnodes && !json_is_null(jnodes);
    const char *bad = !json_is_object(r->doc)          ? "an ExtenderArgs object expected"
                      : !json_is_object(r->pod)        ? "no Pod in the request (an ExtenderArgs needs one)"
                      : no_list                        ? "Nodes: a NodeList with items expected"
                      : r->by_name && !json_is_array(r->jnames) ? "neither Nodes.items nor NodeNames in the request"
                                                                : NULL;
    if (bad)
        return answered(ext_bad_request(&r->out, &r->status, "%s", bad));
    size_t nlist = r->fast ? r->fa.n : json_array_size(r->jnames);
    if (nlist > PL_EXT_MAX_NODES)
        return answered(ext_bad_request(&r->out, &r->status, "%zu nodes: at most %u in one request", nlist,
                                        PL_EXT_MAX_NODES));
    r->nn = (unsigned)nlist;
    if (!(r->nodes = calloc(r->nn ? r->nn : 1, sizeof *r->nodes)))
        return -ENOMEM;
    if (r->by_name)
        r->snap = ext_nodes_get(&x->nodes);
    for (unsigned i = 0; i < r->nn; i++) {
        int rc = read_node(x, r, i);
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
