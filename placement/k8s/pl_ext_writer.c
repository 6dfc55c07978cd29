/* pl_ext_writer.c - how the extender writes (pl_ext_writer.h), and its answers (pl_ext.h): filter's
 * ExtenderFilterResult (the nodes kept, as they came: names, or the Node objects' text; FailedNodes with each
 * node's reason, each distinct reason escaped once) and prioritize's HostPriorityList (10, 9, ... 1 in prioritize's
 * order, 0 for the rest). */
#define _GNU_SOURCE
#include "pl_ext_writer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_ext.h"
#include "pl_jscan.h"

void ext_put(struct ext_buf *b, const char *fmt, ...)
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

void ext_reserve(struct ext_buf *b, size_t n)
{
    if (b->oom || b->n + n + 1 <= b->cap)
        return;
    char *ns = realloc(b->s, b->n + n + 1);
    if (!ns) {
        b->oom = true;
        return;
    }
    if (!b->s)
        ns[0] = 0;
    b->s = ns, b->cap = b->n + n + 1;
}

void ext_put_raw(struct ext_buf *b, const char *s, size_t n)
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

void ext_put_str(struct ext_buf *b, const char *s)
{
    ext_put_raw(b, "\"", 1);
    const unsigned char *end = (const unsigned char *)s + strlen(s);
    for (const char *c = s; *c;) {
        size_t run = 0; /* printable ASCII but the quote and the backslash: as it is */
        while ((unsigned char)c[run] >= 0x20 && (unsigned char)c[run] < 0x80 && c[run] != '"' && c[run] != '\\')
            run++;
        ext_put_raw(b, c, run);
        c += run;
        if (!*c)
            break;
        unsigned char ch = (unsigned char)*c;
        if (ch >= 0x80) {
            size_t n = jscan_utf8_len((const unsigned char *)c, end);
            if (n)
                ext_put_raw(b, c, n);
            else
                ext_put_raw(b, "\xef\xbf\xbd", 3); /* U+FFFD */
            c += n ? n : 1;
            continue;
        }
        c++;
        switch (ch) {
        case '"': ext_put(b, "\\\""); break;
        case '\\': ext_put(b, "\\\\"); break;
        case '\b': ext_put(b, "\\b"); break;
        case '\f': ext_put(b, "\\f"); break;
        case '\n': ext_put(b, "\\n"); break;
        case '\r': ext_put(b, "\\r"); break;
        case '\t': ext_put(b, "\\t"); break;
        default: ext_put(b, "\\u%04X", ch);
        }
    }
    ext_put_raw(b, "\"", 1);
}

/* jansson takes no string that is not UTF-8, and a reason is one line */
char *ext_one_line(char *s)
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

int ext_set_text(char **s, const char *fmt, ...)
{
    free(*s);
    va_list ap;
    va_start(ap, fmt);
    int k = vasprintf(s, fmt, ap);
    va_end(ap);
    if (k < 0) {
        *s = NULL;
        return -ENOMEM;
    }
    return 0;
}

int ext_answer_buf(struct ext_buf *b, char **out, int *status)
{
    if (b->oom || !b->s) {
        free(b->s);
        memset(b, 0, sizeof *b);
        return -ENOMEM;
    }
    *out = b->s;
    *status = 200;
    memset(b, 0, sizeof *b);
    return 0;
}

int ext_answer_json(json_t *doc, int status, char **out, int *st)
{
    *out = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    *st = status;
    return *out ? 0 : -ENOMEM;
}

int ext_bad_request(char **out, int *st, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ext_answer_json(json_pack("{s:s}", "Error", ext_one_line(msg)), 400, out, st);
}

/* ---- the answers */
#define NO_PROFILE_NOTE "the pod has no " PL_EXT_ANN_PROFILE " annotation: every node passes unchanged"

/* A node's name as a JSON string: the node state's made once, else escaped now. */
static void put_name(struct ext_buf *b, const struct ext_node *n)
{
    if (n->json)
        ext_put_raw(b, n->json, n->jlen);
    else
        ext_put_str(b, n->name);
}

/* prioritize's answer: every node with its score (NULL: 0). */
static int host_scores(struct ext_req *r, const int *score)
{
    static const char *const sc[] = {",\"Score\":0}", ",\"Score\":1}", ",\"Score\":2}", ",\"Score\":3}",
                                     ",\"Score\":4}", ",\"Score\":5}", ",\"Score\":6}", ",\"Score\":7}",
                                     ",\"Score\":8}", ",\"Score\":9}", ",\"Score\":10}"};
    _Static_assert(sizeof sc / sizeof sc[0] == PL_EXT_MAX_PRIORITY + 1, "a score's text for each score");
    struct ext_buf b = {0};
    ext_put_raw(&b, "[", 1);
    for (unsigned i = 0; i < r->nn; i++) {
        static const char host[] = ",{\"Host\":";
        ext_put_raw(&b, host + !i, sizeof host - 1 - !i);
        put_name(&b, &r->nodes[i]);
        const char *t = sc[score ? score[i] : 0];
        ext_put_raw(&b, t, strlen(t));
    }
    ext_put_raw(&b, "]", 1);
    return ext_answer_buf(&b, &r->out, &r->status);
}

int ext_answer_no_profile(struct ext_req *r)
{
    if (!r->filter)
        return host_scores(r, NULL);
    if (r->by_name && !r->names.p) { /* NodeNames as jansson read it */
        json_t *doc = json_object();
        json_object_set(doc, "NodeNames", r->jnames);
        json_object_set_new(doc, "FailedNodes", json_object());
        json_object_set_new(doc, "Error", json_string(""));
        json_object_set_new(doc, "Note", json_string(NO_PROFILE_NOTE));
        return ext_answer_json(doc, 200, &r->out, &r->status);
    }
    struct ext_buf b = {0}; /* the nodes as they came: Node objects as sent, names as jansson writes them */
    if (r->fast) {
        ext_put_raw(&b, "{\"Nodes\":", 9);
        ext_put_raw(&b, r->fa.raw.p, r->fa.raw.n);
    } else {
        ext_put_raw(&b, "{\"NodeNames\":[", 14);
        for (unsigned i = 0; i < r->nn; i++) {
            if (i)
                ext_put_raw(&b, ",", 1);
            put_name(&b, &r->nodes[i]);
        }
        ext_put_raw(&b, "]", 1);
    }
    ext_put(&b, ",\"FailedNodes\":{},\"Error\":\"\",\"Note\":\"" NO_PROFILE_NOTE "\"}");
    return ext_answer_buf(&b, &r->out, &r->status);
}

int ext_answer_no_store(struct ext_req *r, char *msg)
{
    json_t *doc = r->filter ? json_pack("{s:o,s:o,s:s}", "NodeNames", json_array(), "FailedNodes", json_object(),
                                        "Error", ext_one_line(msg))
                            : json_array();
    return ext_answer_json(doc, 200, &r->out, &r->status);
}

static bool kept(enum pl_verdict_kind k) { return k == PL_V_FITS || k == PL_V_SAFE || k == PL_V_UNCERTAIN; }

/* Each distinct refusal's text, escaped, in uwhy[u] (NULL for a verdict that keeps its node). */
static int refusals(const struct ext_req *r, char **uwhy)
{
    for (unsigned u = 1; u < r->nuv; u++) {
        const struct pl_verdict *v = &r->uv[u];
        if (kept(v->kind))
            continue;
        char *t;
        int k = v->kind == PL_V_NO_ROOM ? asprintf(&t, "ibench: %s", v->why) /* "no room: ..." */
                                        : asprintf(&t, "ibench: %s: %s", pl_verdict_name(v->kind), v->why);
        if (k < 0)
            return -ENOMEM;
        struct ext_buf e = {0}; /* escaped once, written for each of its nodes */
        ext_put_str(&e, ext_one_line(t));
        free(t);
        if (e.oom || !e.s) {
            free(e.s);
            return -ENOMEM;
        }
        uwhy[u] = e.s;
    }
    return 0;
}

/* The kept nodes, as they came. */
static void kept_nodes(const struct ext_req *r, struct ext_buf *b)
{
    if (r->by_name) {
        ext_put_raw(b, "{\"NodeNames\":[", 14);
        for (unsigned k = 0; k < r->nok; k++) {
            if (k)
                ext_put_raw(b, ",", 1);
            put_name(b, &r->nodes[r->order[k]]);
        }
        ext_put_raw(b, "]", 1);
        return;
    }
    size_t all = 64 + r->fa.kind.n + r->fa.api.n;
    for (unsigned k = 0; k < r->nok; k++)
        all += r->fa.it[r->order[k]].raw.n + 1;
    ext_reserve(b, all);
    ext_put_raw(b, "{\"Nodes\":{\"items\":[", 19);
    for (unsigned k = 0; k < r->nok; k++) {
        if (k)
            ext_put_raw(b, ",", 1);
        ext_put_raw(b, r->fa.it[r->order[k]].raw.p, r->fa.it[r->order[k]].raw.n);
    }
    ext_put_raw(b, "]", 1);
    if (r->fa.kind.p) {
        ext_put_raw(b, ",\"kind\":", 8);
        ext_put_raw(b, r->fa.kind.p, r->fa.kind.n);
    }
    if (r->fa.api.p) {
        ext_put_raw(b, ",\"apiVersion\":", 14);
        ext_put_raw(b, r->fa.api.p, r->fa.api.n);
    }
    ext_put_raw(b, "}", 1);
}

/* FailedNodes' members; the refusals counted by resource, each distinct one once times its nodes. */
static int failed_nodes(struct pl_extender *x, const struct ext_req *r, char **uwhy, struct ext_buf *b)
{
    unsigned long unjudged = 0, *vcount = calloc(r->nuv, sizeof *vcount);
    if (!vcount)
        return -ENOMEM;
    unsigned w = 0;
    for (unsigned i = 0; i < r->nn; i++) {
        const struct ext_node *n = &r->nodes[i];
        const char *fail = ext_node_fail(r, n);
        if (!fail && kept(r->uv[n->v].kind))
            continue;
        if (w++)
            ext_put_raw(b, ",", 1);
        put_name(b, n);
        ext_put_raw(b, ":", 1);
        if (fail) {
            char *msg = NULL;
            if (asprintf(&msg, "ibench: cannot judge: %.500s", fail) < 0) {
                free(vcount);
                return -ENOMEM;
            }
            ext_put_str(b, ext_one_line(msg));
            free(msg);
            unjudged++;
        } else {
            ext_put_raw(b, uwhy[n->v], strlen(uwhy[n->v]));
            vcount[n->v]++;
        }
    }
    if (unjudged)
        ext_count_refusal(&x->fig, "unjudged", 8, unjudged);
    for (unsigned u = 1; u < r->nuv; u++)
        if (vcount[u] && r->uv[u].kind == PL_V_NO_ROOM)
            ext_count_refusal(&x->fig, "no-room", 7, vcount[u]);
        else if (vcount[u])
            ext_count_refusals(&x->fig, r->uv[u].why, vcount[u]);
    free(vcount);
    return 0;
}

int ext_answer_filter(struct pl_extender *x, struct ext_req *r)
{
    char **uwhy = calloc(r->nuv, sizeof *uwhy);
    int rc = uwhy ? refusals(r, uwhy) : -ENOMEM;
    struct ext_buf b = {0};
    if (rc == 0) {
        kept_nodes(r, &b);
        ext_put(&b, ",\"FailedNodes\":{");
        rc = failed_nodes(x, r, uwhy, &b);
        ext_put(&b, "},\"Error\":\"\"}");
    }
    for (unsigned u = 0; uwhy && u < r->nuv; u++)
        free(uwhy[u]);
    free(uwhy);
    if (rc < 0) {
        free(b.s);
        return rc;
    }
    return ext_answer_buf(&b, &r->out, &r->status);
}

int ext_answer_prioritize(struct ext_req *r)
{
    int *score = calloc(r->nn ? r->nn : 1, sizeof *score);
    if (!score)
        return -ENOMEM;
    for (unsigned k = 0; k < r->nok && k < PL_EXT_MAX_PRIORITY; k++)
        score[r->order[k]] = PL_EXT_MAX_PRIORITY - (int)k;
    int rc = host_scores(r, score);
    free(score);
    return rc;
}
