/* pl_model_io.c - the placement model's files (pl_model.h): the vectors CSV read strictly, and the model file
 * written and read back exactly (every key known, every number checked).  The model itself, its training and its
 * use are pl_model.c's. */
#define _GNU_SOURCE
#include "pl_model.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "readfile.h"

/* ---------------------------------------------------------------- CSV */

void pl_vectors_free(struct pl_vectors *v)
{
    if (!v)
        return;
    for (unsigned i = 0; i < v->n; i++) {
        free(v->name ? v->name[i] : NULL);
        free(v->label ? v->label[i] : NULL);
    }
    for (unsigned j = 0; j < v->np; j++)
        free(v->pid ? v->pid[j] : NULL);
    free(v->name);
    free(v->label);
    free(v->pid);
    free(v->v);
    memset(v, 0, sizeof(*v));
}

/* Splits one line (no newline) at commas into fields (pointers into `line`, which is modified). Returns the count,
 * or -1 when there are more than `max`. Fields are trimmed of spaces and tabs. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    char *s = line;
    for (;;) {
        char *c = strchr(s, ',');
        if (c)
            *c = 0;
        if (n == max)
            return -1;
        while (*s == ' ' || *s == '\t')
            s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            *--e = 0;
        f[n++] = s;
        if (!c)
            return n;
        s = c + 1;
    }
}

int pl_vectors_parse(const char *text, struct pl_vectors *out, char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    char *buf = strdup(text ? text : "");
    if (!buf)
        return ib_why(why, len, -ENOMEM, "out of memory");
    int rc = 0, maxf = 2;
    for (const char *p = buf; *p; p++)
        maxf += *p == ',';
    char **f = calloc((size_t)maxf, sizeof(*f));
    unsigned cap = 0, ncols = 0;
    bool header = false, has_label = false;
    if (!f) {
        free(buf);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    unsigned lineno = 0;
    char *save = NULL;
    for (char *line = buf; line && !rc; line = save) {
        char *nl = strchr(line, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl)
            *nl = 0;
        lineno++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = 0;
        if (strspn(line, " \t") == l)
            continue; /* blank */
        int nf = split(line, f, maxf);
        if (!header) {
            header = true;
            if (strcmp(f[0], "workload") != 0) {
                rc = ib_why(why, len, -EINVAL, "line %u column 1: the header must start with 'workload', not '%s'",
                            lineno, f[0]);
                break;
            }
            has_label = nf >= 2 && strcmp(f[nf - 1], "label") == 0;
            ncols = (unsigned)nf;
            out->np = ncols - 1 - (has_label ? 1 : 0);
            if (out->np == 0) {
                rc = ib_why(why, len, -EINVAL, "line %u: the header names no placement", lineno);
                break;
            }
            out->pid = calloc(out->np, sizeof(*out->pid));
            if (!out->pid) {
                out->np = 0;
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                break;
            }
            for (unsigned j = 0; j < out->np && !rc; j++) {
                const char *id = f[j + 1];
                if (!*id || !strcmp(id, "workload") || !strcmp(id, "label"))
                    rc = ib_why(why, len, -EINVAL, "line %u column %u: bad placement id '%s'", lineno, j + 2, id);
                for (unsigned i = 0; i < j && !rc; i++)
                    if (!strcmp(out->pid[i], id))
                        rc = ib_why(why, len, -EINVAL, "line %u column %u: placement '%s' named twice", lineno, j + 2,
                                    id);
                if (!rc && !(out->pid[j] = strdup(id)))
                    rc = ib_why(why, len, -ENOMEM, "out of memory");
            }
            continue;
        }
        if (nf != (int)ncols) {
            rc = ib_why(why, len, -EINVAL, "line %u: %d columns, the header has %u", lineno, nf < 0 ? maxf : nf,
                        ncols);
            break;
        }
        if (!*f[0]) {
            rc = ib_why(why, len, -EINVAL, "line %u column 1: empty workload name", lineno);
            break;
        }
        for (unsigned i = 0; i < out->n && !rc; i++)
            if (!strcmp(out->name[i], f[0]))
                rc = ib_why(why, len, -EINVAL, "line %u column 1: workload '%s' named twice", lineno, f[0]);
        if (rc)
            break;
        if (out->n == cap) {
            unsigned nc = cap ? cap * 2 : 16;
            char **nn = realloc(out->name, nc * sizeof(*nn));
            if (nn)
                out->name = nn;
            char **nl2 = realloc(out->label, nc * sizeof(*nl2));
            if (nl2)
                out->label = nl2;
            double *nv = realloc(out->v, (size_t)nc * out->np * sizeof(*nv));
            if (nv)
                out->v = nv;
            if (!nn || !nl2 || !nv) {
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                break;
            }
            cap = nc;
        }
        unsigned i = out->n;
        out->name[i] = NULL;
        out->label[i] = NULL;
        for (unsigned j = 0; j < out->np && !rc; j++) {
            const char *s = f[j + 1];
            char *end;
            errno = 0;
            double x = strtod(s, &end);
            if (!*s || *end || errno == ERANGE || !isfinite(x))
                rc = ib_why(why, len, -EINVAL, "line %u column %u: '%s' is not a number", lineno, j + 2, s);
            else if (x <= 0)
                rc = ib_why(why, len, -EINVAL, "line %u column %u: %s is not a positive performance", lineno, j + 2, s);
            else
                out->v[(size_t)i * out->np + j] = x;
        }
        if (rc)
            break;
        if (has_label && !*f[ncols - 1]) {
            rc = ib_why(why, len, -EINVAL, "line %u column %u: empty label", lineno, ncols);
            break;
        }
        out->name[i] = strdup(f[0]);
        out->label[i] = has_label ? strdup(f[ncols - 1]) : NULL;
        out->n++;
        if (!out->name[i] || (has_label && !out->label[i]))
            rc = ib_why(why, len, -ENOMEM, "out of memory");
    }
    if (!rc && !header)
        rc = ib_why(why, len, -EINVAL, "empty file: no header");
    else if (!rc && out->n == 0)
        rc = ib_why(why, len, -EINVAL, "no workload rows after the header");
    if (!rc && !has_label) {
        free(out->label);
        out->label = NULL;
    }
    free(f);
    free(buf);
    if (rc)
        pl_vectors_free(out);
    return rc;
}

/* The whole file as text (at most 16 MiB, no NUL byte): what a user gives a command. */
static int slurp(const char *path, const char *what, char **text, char *why, size_t len)
{
    size_t n = 0;
    int rc = ib_read_all(path, 16u << 20, text, &n);
    if (rc == -EFBIG)
        return ib_why(why, len, -EINVAL, "%s %s: larger than 16 MiB", what, path);
    if (rc < 0)
        return ib_why(why, len, rc == -ENOENT ? -ENOENT : -EINVAL, "%s %s: %s", what, path, strerror(-rc));
    if (strlen(*text) != n) {
        free(*text);
        *text = NULL;
        return ib_why(why, len, -EINVAL, "%s %s: holds a NUL byte", what, path);
    }
    return 0;
}

int pl_vectors_load(const char *path, struct pl_vectors *out, char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    char *text;
    int rc = slurp(path, "vectors file", &text, why, len);
    if (rc)
        return rc;
    char w[512];
    rc = pl_vectors_parse(text, out, w, sizeof(w));
    free(text);
    if (rc)
        return ib_why(why, len, rc, "%s: %s", path, w);
    return 0;
}

/* ---------------------------------------------------------------- the model file */

static json_t *num_array(const double *x, unsigned n)
{
    json_t *a = json_array();
    for (unsigned j = 0; j < n; j++)
        json_array_append_new(a, json_real(x[j]));
    return a;
}

char *pl_model_dump(const struct pl_model *m)
{
    json_t *pl = json_array(), *tried = json_array(), *cl = json_array();
    for (unsigned j = 0; j < m->np; j++)
        json_array_append_new(pl, json_string(m->pid[j]));
    for (unsigned t = 0; t < m->nk; t++)
        json_array_append_new(tried, json_pack("{s:i,s:o}", "k", (int)m->ks[t], "silhouette",
                                               isnan(m->sil[t]) ? json_null() : json_real(m->sil[t])));
    for (unsigned c = 0; c < m->k; c++) {
        const struct pl_cluster *x = &m->c[c];
        json_t *mem = json_array();
        for (unsigned i = 0; i < x->size; i++)
            json_array_append_new(mem, json_string(x->members[i]));
        json_array_append_new(cl, json_pack("{s:s,s:o,s:o,s:o,s:o}", "name", x->name, "members", mem, "centroid",
                                            num_array(x->centroid, m->np), "min", num_array(x->lo, m->np), "max",
                                            num_array(x->hi, m->np)));
    }
    json_t *doc = json_pack("{s:s,s:i,s:s,s:o,s:f,s:{s:s,s:I,s:i,s:o,s:o},s:o}", "format", PL_MODEL_FORMAT,
                            "version", PL_MODEL_VERSION, "baseline", m->pid[0], "placements", pl, "tolerance",
                            m->tolerance, "clustering", "method", m->from_labels ? "labels" : "kmeans", "seed",
                            (json_int_t)m->seed, "k", (int)m->k, "silhouette",
                            isnan(m->silhouette) ? json_null() : json_real(m->silhouette), "tried", tried,
                            "clusters", cl);
    if (!doc)
        return NULL;
    char *s = json_dumps(doc, JSON_PRESERVE_ORDER | JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(doc);
    return s;
}

/* Exactly these keys, no other. */
static int keys_exact(json_t *o, const char *where, const char *const *keys, char *why, size_t len)
{
    const char *k;
    json_t *val;
    json_object_foreach(o, k, val) {
        bool ok = false;
        for (const char *const *p = keys; *p; p++)
            ok |= !strcmp(*p, k);
        if (!ok)
            return ib_why(why, len, -EINVAL, "%s: unknown key '%s'", where, k);
    }
    for (const char *const *p = keys; *p; p++)
        if (!json_object_get(o, *p))
            return ib_why(why, len, -EINVAL, "%s: missing '%s'", where, *p);
    return 0;
}

static int read_nums(json_t *a, unsigned n, double *out, const char *where, char *why, size_t len)
{
    if (!json_is_array(a) || json_array_size(a) != n)
        return ib_why(why, len, -EINVAL, "%s: not an array of %u numbers", where, n);
    for (unsigned j = 0; j < n; j++) {
        json_t *x = json_array_get(a, j);
        if (!json_is_number(x) || !isfinite(json_number_value(x)) || json_number_value(x) <= 0)
            return ib_why(why, len, -EINVAL, "%s[%u]: not a positive number", where, j);
        out[j] = json_number_value(x);
    }
    return 0;
}

static int model_from_json(json_t *doc, struct pl_model *m, char *why, size_t len)
{
    static const char *const top[] = {"format", "version", "baseline", "placements", "tolerance", "clustering",
                                      "clusters", NULL};
    static const char *const clk[] = {"method", "seed", "k", "silhouette", "tried", NULL};
    static const char *const cck[] = {"name", "members", "centroid", "min", "max", NULL};
    if (!json_is_object(doc))
        return ib_why(why, len, -EINVAL, "not a JSON object");
    json_t *f = json_object_get(doc, "format"), *ver = json_object_get(doc, "version");
    if (!json_is_string(f) || strcmp(json_string_value(f), PL_MODEL_FORMAT))
        return ib_why(why, len, -EINVAL, "\"format\" is not \"%s\"", PL_MODEL_FORMAT);
    if (!json_is_integer(ver) || json_integer_value(ver) != PL_MODEL_VERSION)
        return ib_why(why, len, -EINVAL, "\"version\" is not %d", PL_MODEL_VERSION);
    int rc = keys_exact(doc, "model", top, why, len);
    if (rc)
        return rc;
    json_t *pl = json_object_get(doc, "placements"), *cl = json_object_get(doc, "clusters");
    json_t *cg = json_object_get(doc, "clustering"), *tol = json_object_get(doc, "tolerance");
    json_t *base = json_object_get(doc, "baseline");
    if (!json_is_array(pl) || json_array_size(pl) == 0)
        return ib_why(why, len, -EINVAL, "\"placements\": not a non-empty array");
    m->np = (unsigned)json_array_size(pl);
    if (!(m->pid = calloc(m->np, sizeof(*m->pid))))
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned j = 0; j < m->np; j++) {
        json_t *s = json_array_get(pl, j);
        if (!json_is_string(s) || !*json_string_value(s))
            return ib_why(why, len, -EINVAL, "placements[%u]: not a non-empty string", j);
        for (unsigned e = 0; e < j; e++)
            if (!strcmp(m->pid[e], json_string_value(s)))
                return ib_why(why, len, -EINVAL, "placements[%u]: '%s' named twice", j, json_string_value(s));
        if (!(m->pid[j] = strdup(json_string_value(s))))
            return ib_why(why, len, -ENOMEM, "out of memory");
    }
    if (!json_is_string(base) || strcmp(json_string_value(base), m->pid[0]))
        return ib_why(why, len, -EINVAL, "\"baseline\" is not the first placement '%s'", m->pid[0]);
    if (!json_is_number(tol) || !(json_number_value(tol) >= 0) || !isfinite(json_number_value(tol)))
        return ib_why(why, len, -EINVAL, "\"tolerance\": not a number >= 0");
    m->tolerance = json_number_value(tol);
    if (!json_is_object(cg))
        return ib_why(why, len, -EINVAL, "\"clustering\": not an object");
    if ((rc = keys_exact(cg, "clustering", clk, why, len)))
        return rc;
    json_t *meth = json_object_get(cg, "method"), *seed = json_object_get(cg, "seed"), *k = json_object_get(cg, "k");
    json_t *sil = json_object_get(cg, "silhouette"), *tried = json_object_get(cg, "tried");
    if (!json_is_string(meth) || (strcmp(json_string_value(meth), "kmeans") && strcmp(json_string_value(meth),
                                                                                        "labels")))
        return ib_why(why, len, -EINVAL, "clustering.method: not \"kmeans\" or \"labels\"");
    m->from_labels = !strcmp(json_string_value(meth), "labels");
    if (!json_is_integer(seed) || json_integer_value(seed) < 0)
        return ib_why(why, len, -EINVAL, "clustering.seed: not an integer >= 0");
    m->seed = (uint64_t)json_integer_value(seed);
    if (!json_is_array(cl) || json_array_size(cl) == 0)
        return ib_why(why, len, -EINVAL, "\"clusters\": not a non-empty array");
    if (!json_is_integer(k) || json_integer_value(k) != (json_int_t)json_array_size(cl))
        return ib_why(why, len, -EINVAL, "clustering.k is not the number of clusters (%zu)", json_array_size(cl));
    if (!json_is_null(sil) && !json_is_number(sil))
        return ib_why(why, len, -EINVAL, "clustering.silhouette: not a number or null");
    m->silhouette = json_is_null(sil) ? NAN : json_number_value(sil);
    if (!json_is_array(tried) || json_array_size(tried) == 0)
        return ib_why(why, len, -EINVAL, "clustering.tried: not a non-empty array");
    m->nk = (unsigned)json_array_size(tried);
    m->ks = calloc(m->nk, sizeof(*m->ks));
    m->sil = calloc(m->nk, sizeof(*m->sil));
    if (!m->ks || !m->sil)
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned t = 0; t < m->nk; t++) {
        static const char *const tk[] = {"k", "silhouette", NULL};
        json_t *e = json_array_get(tried, t);
        char where[48];
        snprintf(where, sizeof(where), "clustering.tried[%u]", t);
        if (!json_is_object(e))
            return ib_why(why, len, -EINVAL, "%s: not an object", where);
        if ((rc = keys_exact(e, where, tk, why, len)))
            return rc;
        json_t *ek = json_object_get(e, "k"), *es = json_object_get(e, "silhouette");
        if (!json_is_integer(ek) || json_integer_value(ek) < 1 || (!json_is_null(es) && !json_is_number(es)))
            return ib_why(why, len, -EINVAL, "%s: k not a positive integer or silhouette not a number", where);
        m->ks[t] = (unsigned)json_integer_value(ek);
        m->sil[t] = json_is_null(es) ? NAN : json_number_value(es);
    }
    m->k = (unsigned)json_array_size(cl);
    if (!(m->c = calloc(m->k, sizeof(*m->c))))
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned c = 0; c < m->k; c++) {
        json_t *e = json_array_get(cl, c);
        char where[64];
        snprintf(where, sizeof(where), "clusters[%u]", c);
        if (!json_is_object(e))
            return ib_why(why, len, -EINVAL, "%s: not an object", where);
        if ((rc = keys_exact(e, where, cck, why, len)))
            return rc;
        struct pl_cluster *x = &m->c[c];
        json_t *name = json_object_get(e, "name"), *mem = json_object_get(e, "members");
        if (!json_is_string(name) || !*json_string_value(name))
            return ib_why(why, len, -EINVAL, "%s.name: not a non-empty string", where);
        for (unsigned e2 = 0; e2 < c; e2++)
            if (!strcmp(m->c[e2].name, json_string_value(name)))
                return ib_why(why, len, -EINVAL, "%s.name: '%s' named twice", where, json_string_value(name));
        if (!(x->name = strdup(json_string_value(name))))
            return ib_why(why, len, -ENOMEM, "out of memory");
        if (!json_is_array(mem) || json_array_size(mem) == 0)
            return ib_why(why, len, -EINVAL, "%s.members: not a non-empty array", where);
        x->members = calloc(json_array_size(mem), sizeof(char *));
        x->centroid = malloc(m->np * sizeof(double));
        x->lo = malloc(m->np * sizeof(double));
        x->hi = malloc(m->np * sizeof(double));
        if (!x->members || !x->centroid || !x->lo || !x->hi)
            return ib_why(why, len, -ENOMEM, "out of memory");
        for (size_t i = 0; i < json_array_size(mem); i++) {
            json_t *s = json_array_get(mem, i);
            if (!json_is_string(s))
                return ib_why(why, len, -EINVAL, "%s.members[%zu]: not a string", where, i);
            if (!(x->members[i] = strdup(json_string_value(s))))
                return ib_why(why, len, -ENOMEM, "out of memory");
            x->size++;
        }
        char w2[96];
        snprintf(w2, sizeof(w2), "%s.centroid", where);
        if ((rc = read_nums(json_object_get(e, "centroid"), m->np, x->centroid, w2, why, len)))
            return rc;
        snprintf(w2, sizeof(w2), "%s.min", where);
        if ((rc = read_nums(json_object_get(e, "min"), m->np, x->lo, w2, why, len)))
            return rc;
        snprintf(w2, sizeof(w2), "%s.max", where);
        if ((rc = read_nums(json_object_get(e, "max"), m->np, x->hi, w2, why, len)))
            return rc;
        for (unsigned j = 0; j < m->np; j++)
            if (!(x->lo[j] <= x->centroid[j] * (1 + 1e-12) && x->centroid[j] <= x->hi[j] * (1 + 1e-12)))
                return ib_why(why, len, -EINVAL, "%s: at placement '%s' min <= centroid <= max does not hold", where,
                              m->pid[j]);
    }
    return 0;
}

int pl_model_parse(const char *text, struct pl_model *m, char *why, size_t len)
{
    memset(m, 0, sizeof(*m));
    json_error_t e;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    if (!doc)
        return ib_why(why, len, -EINVAL, "line %d: %s", e.line, e.text);
    int rc = model_from_json(doc, m, why, len);
    json_decref(doc);
    if (rc)
        pl_model_free(m);
    return rc;
}

int pl_model_load(const char *path, struct pl_model *m, char *why, size_t len)
{
    memset(m, 0, sizeof(*m));
    char *text;
    int rc = slurp(path, "model", &text, why, len);
    if (rc)
        return rc;
    char w[512];
    rc = pl_model_parse(text, m, w, sizeof(w));
    free(text);
    if (rc)
        return ib_why(why, len, rc, "model %s: %s", path, w);
    return 0;
}
