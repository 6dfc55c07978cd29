/* pl_model.c - the placement model (pl_model.h).  Rules, and why:
 *
 * Vectors.  Entry p is performance in placement p over performance in the baseline, placement 0 (the CSV's first
 * placement column), higher better.  The paper's example [1.0, 0.8, 0.7] uses run-time ratios; we use performance so
 * that a goal of 0.9 reads "keeps 90 % of the baseline's performance".  Training refuses a baseline entry that is not
 * 1 (within 1e-9): a vector relative to another placement would silently mix conventions.
 *
 * Clustering (seed 002 §4.1: k-means on the vectors, k by the silhouette coefficient).
 * - k-means++ seeding (first centre uniform, each next one with probability proportional to the squared distance to
 *   the nearest chosen centre; uniform when every point sits on a centre), then Lloyd's iterations until no point
 *   changes cluster (at most PL_MODEL_MAX_ITER).  A cluster left empty takes the point farthest from its centre (the
 *   lowest index on ties), so k clusters always come out.
 * - PL_MODEL_RESTARTS = 10 restarts, each from the next seeds of one splitmix64 stream; the lowest inertia (sum of
 *   squared distances to the centres) is kept, the earliest restart on ties.  Ten is plenty for tens of workloads
 *   (k-means++ alone is within O(log k) of the optimum in expectation) and costs microseconds.
 * - Clusters are renumbered by their first member in CSV order, so the same partition always gets the same numbers.
 * - k auto: k = 2..min(10, n-1) (the silhouette needs k < n); the highest mean silhouette wins; on a tie (equal within
 *   1e-12) the smaller k, the simpler model that needs fewer measurements to tell clusters apart.
 * - A label column replaces k-means: clusters are the labels, numbered by first appearance.  A k given with it must
 *   be the number of labels (then it is honoured), else the training is refused: a k dropped in silence would train
 *   another model than the one asked for.
 *
 * Intervals (Algorithm 1): [min, max] of the members per placement, widened on use by the model's tolerance on both
 * sides (default 0, the paper's rule; a tolerance admits a workload a little outside a small cluster's range).
 *
 * The iterative method (Algorithm 1, §4.3): see pl_model_predict.
 * Packing (§5): see pl_model_pack. */
#define _GNU_SOURCE
#include "pl_model.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "ib_rand.h"
#include "pl_classes.h"

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

/* The whole file as text (at most 16 MiB). */
static int slurp(const char *path, const char *what, char **text, char *why, size_t len)
{
    *text = NULL;
    FILE *fp = fopen(path, "re");
    if (!fp)
        return ib_why(why, len, errno == ENOENT ? -ENOENT : -EINVAL, "%s %s: %s", what, path, strerror(errno));
    size_t cap = 8192, n = 0;
    char *t = malloc(cap);
    int rc = t ? 0 : ib_why(why, len, -ENOMEM, "out of memory");
    while (!rc) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            char *nt = cap > (16u << 20) ? NULL : realloc(t, cap);
            if (!nt) {
                rc = ib_why(why, len, -EINVAL, "%s %s: larger than 16 MiB", what, path);
                break;
            }
            t = nt;
        }
        size_t r = fread(t + n, 1, cap - n - 1, fp);
        n += r;
        if (r == 0) {
            if (ferror(fp))
                rc = ib_why(why, len, -EINVAL, "%s %s: read error", what, path);
            break;
        }
    }
    fclose(fp);
    if (rc) {
        free(t);
        return rc;
    }
    t[n] = 0;
    if (strlen(t) != n) {
        free(t);
        return ib_why(why, len, -EINVAL, "%s %s: holds a NUL byte", what, path);
    }
    *text = t;
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

/* ---------------------------------------------------------------- k-means and the silhouette */

/* Uniform in [0, 1). */
static double unif(uint64_t *s) { return ib_unit01(s); }

static double dist2(const double *a, const double *b, unsigned d)
{
    double s = 0;
    for (unsigned j = 0; j < d; j++)
        s += (a[j] - b[j]) * (a[j] - b[j]);
    return s;
}

double pl_silhouette(const double *x, unsigned n, unsigned d, const unsigned *assign, unsigned k)
{
    if (k < 2 || n < 2)
        return NAN;
    double *sum = malloc(k * sizeof(*sum));
    unsigned *cnt = calloc(k, sizeof(*cnt));
    if (!sum || !cnt) {
        free(sum);
        free(cnt);
        return NAN;
    }
    for (unsigned i = 0; i < n; i++)
        cnt[assign[i]]++;
    double total = 0;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned c = 0; c < k; c++)
            sum[c] = 0;
        for (unsigned j = 0; j < n; j++)
            if (j != i)
                sum[assign[j]] += sqrt(dist2(x + (size_t)i * d, x + (size_t)j * d, d));
        unsigned own = assign[i];
        if (cnt[own] < 2)
            continue; /* a singleton scores 0 */
        double a = sum[own] / (cnt[own] - 1), b = INFINITY;
        for (unsigned c = 0; c < k; c++)
            if (c != own && cnt[c] && sum[c] / cnt[c] < b)
                b = sum[c] / cnt[c];
        double m = a > b ? a : b;
        total += m > 0 ? (b - a) / m : 0;
    }
    free(sum);
    free(cnt);
    return total / n;
}

/* One k-means++ start and Lloyd's iterations; returns the inertia, or NAN on ENOMEM. */
static double kmeans_once(const double *x, unsigned n, unsigned d, unsigned k, uint64_t *rng, unsigned *assign,
                          double *cen, double *dmin, unsigned *cnt)
{
    /* k-means++ */
    unsigned first = (unsigned)(unif(rng) * n);
    memcpy(cen, x + (size_t)first * d, d * sizeof(*cen));
    for (unsigned i = 0; i < n; i++)
        dmin[i] = dist2(x + (size_t)i * d, cen, d);
    for (unsigned c = 1; c < k; c++) {
        double tot = 0;
        for (unsigned i = 0; i < n; i++)
            tot += dmin[i];
        unsigned pick = n - 1;
        if (tot > 0) {
            double r = unif(rng) * tot, acc = 0;
            for (unsigned i = 0; i < n; i++) {
                acc += dmin[i];
                if (r < acc && dmin[i] > 0) {
                    pick = i;
                    break;
                }
            }
            while (dmin[pick] == 0 && pick > 0) /* rounding at the end of the sum: the last point with weight */
                pick--;
        } else {
            pick = (unsigned)(unif(rng) * n);
        }
        memcpy(cen + (size_t)c * d, x + (size_t)pick * d, d * sizeof(*cen));
        for (unsigned i = 0; i < n; i++) {
            double e = dist2(x + (size_t)i * d, cen + (size_t)c * d, d);
            if (e < dmin[i])
                dmin[i] = e;
        }
    }
    /* Lloyd */
    for (unsigned i = 0; i < n; i++)
        assign[i] = UINT32_MAX;
    for (unsigned it = 0; it < PL_MODEL_MAX_ITER; it++) {
        bool moved = false;
        for (unsigned i = 0; i < n; i++) {
            unsigned best = 0;
            double bd = INFINITY;
            for (unsigned c = 0; c < k; c++) {
                double e = dist2(x + (size_t)i * d, cen + (size_t)c * d, d);
                if (e < bd) {
                    bd = e;
                    best = c;
                }
            }
            dmin[i] = bd;
            if (assign[i] != best) {
                assign[i] = best;
                moved = true;
            }
        }
        /* an empty cluster takes the point farthest from its centre */
        memset(cnt, 0, k * sizeof(*cnt));
        for (unsigned i = 0; i < n; i++)
            cnt[assign[i]]++;
        for (unsigned c = 0; c < k; c++) {
            if (cnt[c])
                continue;
            unsigned far = 0;
            for (unsigned i = 1; i < n; i++)
                if (dmin[i] > dmin[far] && cnt[assign[i]] > 1)
                    far = i;
            cnt[assign[far]]--;
            assign[far] = c;
            cnt[c] = 1;
            dmin[far] = 0;
            moved = true;
        }
        memset(cen, 0, (size_t)k * d * sizeof(*cen));
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = 0; j < d; j++)
                cen[(size_t)assign[i] * d + j] += x[(size_t)i * d + j];
        for (unsigned c = 0; c < k; c++)
            for (unsigned j = 0; j < d; j++)
                cen[(size_t)c * d + j] /= cnt[c];
        if (!moved)
            break;
    }
    double in = 0;
    for (unsigned i = 0; i < n; i++)
        in += dist2(x + (size_t)i * d, cen + (size_t)assign[i] * d, d);
    return in;
}

/* Renumbers clusters by their first member. */
static void renumber(unsigned *assign, unsigned n, unsigned k)
{
    unsigned map[PL_MODEL_KMAX * 64 + 1];
    unsigned *m = k < IB_ARRAY_SIZE(map) ? map : malloc(k * sizeof(*m));
    if (!m)
        return;
    for (unsigned c = 0; c < k; c++)
        m[c] = UINT32_MAX;
    unsigned next = 0;
    for (unsigned i = 0; i < n; i++) {
        if (m[assign[i]] == UINT32_MAX)
            m[assign[i]] = next++;
        assign[i] = m[assign[i]];
    }
    if (m != map)
        free(m);
}

int pl_kmeans(const double *x, unsigned n, unsigned d, unsigned k, uint64_t seed, unsigned *assign, double *inertia)
{
    if (k == 0 || k > n || d == 0)
        return -EINVAL;
    double *cen = malloc((size_t)k * d * sizeof(*cen)), *dmin = malloc(n * sizeof(*dmin));
    unsigned *cnt = malloc(k * sizeof(*cnt)), *a = malloc(n * sizeof(*a));
    int rc = 0;
    if (!cen || !dmin || !cnt || !a) {
        rc = -ENOMEM;
        goto out;
    }
    uint64_t rng = seed;
    double best = INFINITY;
    for (unsigned r = 0; r < PL_MODEL_RESTARTS; r++) {
        double in = kmeans_once(x, n, d, k, &rng, a, cen, dmin, cnt);
        if (in < best) { /* strictly: the earliest restart keeps a tie */
            best = in;
            memcpy(assign, a, n * sizeof(*a));
        }
    }
    renumber(assign, n, k);
    if (inertia)
        *inertia = best;
out:
    free(cen);
    free(dmin);
    free(cnt);
    free(a);
    return rc;
}

/* ---------------------------------------------------------------- the model */

static void cluster_free(struct pl_cluster *c)
{
    free(c->name);
    free(c->centroid);
    free(c->lo);
    free(c->hi);
    for (unsigned i = 0; c->members && i < c->size; i++)
        free(c->members[i]);
    free(c->members);
}

void pl_model_free(struct pl_model *m)
{
    if (!m)
        return;
    for (unsigned j = 0; m->pid && j < m->np; j++)
        free(m->pid[j]);
    free(m->pid);
    for (unsigned c = 0; m->c && c < m->k; c++)
        cluster_free(&m->c[c]);
    free(m->c);
    free(m->ks);
    free(m->sil);
    memset(m, 0, sizeof(*m));
}

/* Fills m->c from a partition of v (assign in 0..k-1, every cluster non-empty). */
static int build_clusters(const struct pl_vectors *v, const unsigned *assign, unsigned k, struct pl_model *m)
{
    unsigned np = v->np;
    m->k = k;
    m->c = calloc(k, sizeof(*m->c));
    if (!m->c)
        return -ENOMEM;
    for (unsigned c = 0; c < k; c++) {
        struct pl_cluster *cl = &m->c[c];
        for (unsigned i = 0; i < v->n; i++)
            cl->size += assign[i] == c;
        cl->centroid = calloc(np, sizeof(double));
        cl->lo = malloc(np * sizeof(double));
        cl->hi = malloc(np * sizeof(double));
        cl->members = calloc(cl->size ? cl->size : 1, sizeof(char *));
        if (!cl->centroid || !cl->lo || !cl->hi || !cl->members)
            return -ENOMEM;
        for (unsigned j = 0; j < np; j++) {
            cl->lo[j] = INFINITY;
            cl->hi[j] = -INFINITY;
        }
        unsigned t = 0;
        for (unsigned i = 0; i < v->n; i++) {
            if (assign[i] != c)
                continue;
            if (!(cl->members[t++] = strdup(v->name[i])))
                return -ENOMEM;
            for (unsigned j = 0; j < np; j++) {
                double x = v->v[(size_t)i * np + j];
                cl->centroid[j] += x;
                cl->lo[j] = x < cl->lo[j] ? x : cl->lo[j];
                cl->hi[j] = x > cl->hi[j] ? x : cl->hi[j];
            }
        }
        for (unsigned j = 0; j < np; j++)
            cl->centroid[j] /= cl->size;
        char num[16];
        snprintf(num, sizeof(num), "%u", c + 1);
        if (!(cl->name = strdup(v->label ? v->label[0] : num)))
            return -ENOMEM;
        if (v->label)
            for (unsigned i = 0; i < v->n; i++)
                if (assign[i] == c) {
                    free(cl->name);
                    if (!(cl->name = strdup(v->label[i])))
                        return -ENOMEM;
                    break;
                }
    }
    return 0;
}

int pl_model_train(const struct pl_vectors *v, const struct pl_train_opts *o, struct pl_model *m, char *why,
                   size_t len)
{
    memset(m, 0, sizeof(*m));
    if (!v->n || !v->np)
        return ib_why(why, len, -EINVAL, "no vectors");
    if (!(o->tolerance >= 0) || !isfinite(o->tolerance))
        return ib_why(why, len, -EINVAL, "tolerance must be a number >= 0");
    for (unsigned i = 0; i < v->n; i++)
        if (fabs(v->v[(size_t)i * v->np] - 1.0) > 1e-9)
            return ib_why(why, len, -EINVAL,
                          "workload '%s': its baseline entry (placement '%s') is %g, not 1: vectors must be "
                          "relative to the first placement", v->name[i], v->pid[0], v->v[(size_t)i * v->np]);
    m->np = v->np;
    m->tolerance = o->tolerance;
    m->seed = o->seed;
    m->pid = calloc(v->np, sizeof(*m->pid));
    unsigned *assign = calloc(v->n, sizeof(*assign)), *best = calloc(v->n, sizeof(*best));
    int rc = 0;
    if (!m->pid || !assign || !best) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    for (unsigned j = 0; j < v->np; j++)
        if (!(m->pid[j] = strdup(v->pid[j]))) {
            rc = ib_why(why, len, -ENOMEM, "out of memory");
            goto out;
        }
    unsigned k = 0;
    if (v->label) {
        /* clusters are the labels, numbered by first appearance */
        m->from_labels = true;
        for (unsigned i = 0; i < v->n; i++) {
            unsigned c = k;
            for (unsigned e = 0; e < i; e++)
                if (!strcmp(v->label[e], v->label[i])) {
                    c = best[e];
                    break;
                }
            best[i] = c;
            k += c == k;
        }
        if (o->k && o->k != k) { /* honoured when it agrees; never dropped in silence */
            rc = ib_why(why, len, -EINVAL, "k = %u, but the label column gives %u clusters: drop k or the column",
                        o->k, k);
            goto out;
        }
        m->nk = 1;
    } else if (o->k) {
        if (o->k > v->n) {
            rc = ib_why(why, len, -EINVAL, "k = %u but only %u workloads", o->k, v->n);
            goto out;
        }
        k = o->k;
        if ((rc = pl_kmeans(v->v, v->n, v->np, k, o->seed, best, NULL))) {
            rc = ib_why(why, len, rc, "k-means: %s", strerror(-rc));
            goto out;
        }
        m->nk = 1;
    } else {
        if (v->n < 3) {
            rc = ib_why(why, len, -EINVAL, "k auto needs at least 3 workloads (k from 2 to n-1), got %u", v->n);
            goto out;
        }
        unsigned kmax = v->n - 1 < PL_MODEL_KMAX ? v->n - 1 : PL_MODEL_KMAX;
        m->nk = kmax - 1;
        m->ks = calloc(m->nk, sizeof(*m->ks));
        m->sil = calloc(m->nk, sizeof(*m->sil));
        if (!m->ks || !m->sil) {
            rc = ib_why(why, len, -ENOMEM, "out of memory");
            goto out;
        }
        double bs = -INFINITY;
        for (unsigned kk = 2; kk <= kmax; kk++) {
            if ((rc = pl_kmeans(v->v, v->n, v->np, kk, o->seed, assign, NULL))) {
                rc = ib_why(why, len, rc, "k-means: %s", strerror(-rc));
                goto out;
            }
            double s = pl_silhouette(v->v, v->n, v->np, assign, kk);
            m->ks[kk - 2] = kk;
            m->sil[kk - 2] = s;
            if (s > bs + 1e-12) { /* a tie keeps the smaller k */
                bs = s;
                k = kk;
                memcpy(best, assign, v->n * sizeof(*best));
            }
        }
    }
    if (!m->ks) {
        m->ks = calloc(1, sizeof(*m->ks));
        m->sil = calloc(1, sizeof(*m->sil));
        if (!m->ks || !m->sil) {
            rc = ib_why(why, len, -ENOMEM, "out of memory");
            goto out;
        }
        m->ks[0] = k;
        m->sil[0] = pl_silhouette(v->v, v->n, v->np, best, k);
    }
    m->silhouette = pl_silhouette(v->v, v->n, v->np, best, k);
    if ((rc = build_clusters(v, best, k, m)))
        rc = ib_why(why, len, rc, "out of memory");
out:
    free(assign);
    free(best);
    if (rc)
        pl_model_free(m);
    return rc;
}

int pl_model_placement(const struct pl_model *m, const char *pid)
{
    for (unsigned j = 0; j < m->np; j++)
        if (!strcmp(m->pid[j], pid))
            return (int)j;
    return -1;
}

int pl_model_cluster(const struct pl_model *m, const char *name)
{
    for (unsigned c = 0; c < m->k; c++)
        if (!strcmp(m->c[c].name, name))
            return (int)c;
    return -1;
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

/* ---------------------------------------------------------------- the iterative method */

const char *pl_predict_status_name(enum pl_predict_status s)
{
    switch (s) {
    case PL_PRED_FOUND:
        return "found";
    case PL_PRED_CLOSEST:
        return "closest";
    case PL_PRED_NONE:
        return "no cluster";
    case PL_PRED_AMBIGUOUS:
        return "ambiguous";
    }
    return "?";
}

void pl_prediction_free(struct pl_prediction *p)
{
    if (!p)
        return;
    free(p->tried);
    free(p->remaining);
    free(p->measured);
    free(p->vector);
    memset(p, 0, sizeof(*p));
}

static bool inside(const struct pl_model *m, unsigned c, unsigned p, double x)
{
    return x >= m->c[c].lo[p] - m->tolerance && x <= m->c[c].hi[p] + m->tolerance;
}

/* Distance from x to cluster c's (widened) interval at p; 0 inside. */
static double interval_dist(const struct pl_model *m, unsigned c, unsigned p, double x)
{
    double lo = m->c[c].lo[p] - m->tolerance, hi = m->c[c].hi[p] + m->tolerance;
    return x < lo ? lo - x : x > hi ? x - hi : 0;
}

/* The most candidate intervals at p that one measurement can fall in (the worst case: those all stay). */
static unsigned worst_case(const struct pl_model *m, const bool *excl, unsigned p)
{
    unsigned worst = 0;
    for (unsigned c = 0; c < m->k; c++) {
        if (excl[c])
            continue;
        double x = m->c[c].lo[p] - m->tolerance; /* the deepest point is some interval's left end */
        unsigned d = 0;
        for (unsigned e = 0; e < m->k; e++)
            d += !excl[e] && inside(m, e, p, x);
        worst = d > worst ? d : worst;
    }
    return worst;
}

static int measure_rel(const struct pl_model *m, pl_measure_fn measure, void *ctx, unsigned p, double base,
                       double *x, char *why, size_t len)
{
    double v = measure(ctx, p);
    if (!(v > 0) || !isfinite(v))
        return ib_why(why, len, -EINVAL, "the measurement in placement '%s' is %g, not a positive number", m->pid[p],
                      v);
    *x = v / base;
    return 0;
}

/* Algorithm 1 (seed 002 §4.3):
 * - Measure the baseline (placement 0); every later measurement is divided by it.  The baseline excludes nothing (every
 *   interval there is [1, 1]).
 * - While more than one cluster remains and a placement is untried: measure next the untried placement whose worst
 *   case leaves the fewest candidates (the most candidate intervals one value can fall in: the paper's "eliminates the
 *   most clusters in the worst case"); ties: the lowest placement index, i.e. the CSV's order, which the trainer
 *   controls.
 * - Exclusion: every cluster whose interval at that placement does not contain the value is excluded.  When the value
 *   is outside every cluster's interval (all k, as Algorithm 1 iterates over every interval of the placement), the
 *   closest interval's cluster (distance to the nearer end; ties: lowest cluster index) is kept and all others are
 *   excluded.  Distances within PL_MODEL_TIE_EPS (relative to the value, at least 1e-9 absolute) are a tie: a value
 *   exactly between two intervals (1.175 between 0.95 and 1.40) must not go to whichever side float rounding favours.
 *   When that closest cluster had already been excluded at an earlier step, it stays excluded: nothing
 *   remains.
 * - Nothing remains: "no cluster" (Algorithm 1's return); the paper then runs the workload in every placement (§4.3),
 *   so every untried placement is measured, in index order, and the vector is the measured one.
 * - One remains: found (or "closest" when the closest-interval rule kept it); the vector is the measurement where
 *   measured and the cluster's centroid elsewhere (§4.3: "averaging performance within that category for each
 *   placement not already tried").
 * - Every placement measured and several remain (the paper's loop would run out of placements): the remaining cluster
 *   whose centroid is nearest the measured vector (Euclidean; ties: lowest index) is named, status "ambiguous". */
int pl_model_predict(const struct pl_model *m, pl_measure_fn measure, void *ctx, struct pl_prediction *out,
                     char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    unsigned np = m->np, k = m->k;
    out->tried = calloc(np, sizeof(*out->tried));
    out->remaining = calloc(np, sizeof(*out->remaining));
    out->measured = malloc(np * sizeof(double));
    out->vector = malloc(np * sizeof(double));
    bool *excl = calloc(k ? k : 1, sizeof(*excl)), *done = calloc(np, sizeof(*done));
    int rc = 0;
    if (!out->tried || !out->remaining || !out->measured || !out->vector || !excl || !done) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    if (!k) {
        rc = ib_why(why, len, -EINVAL, "the model has no cluster");
        goto out;
    }
    for (unsigned j = 0; j < np; j++)
        out->measured[j] = NAN;
    double base = measure(ctx, 0);
    if (!(base > 0) || !isfinite(base)) {
        rc = ib_why(why, len, -EINVAL, "the baseline measurement (placement '%s') is %g, not a positive number",
                    m->pid[0], base);
        goto out;
    }
    out->measured[0] = 1.0;
    done[0] = true;
    out->tried[0] = 0;
    out->remaining[0] = k;
    out->ntried = 1;
    unsigned ncand = k;
    bool closest_used = false;
    while (ncand > 1 && out->ntried < np) {
        unsigned p = 0, pw = UINT32_MAX;
        for (unsigned j = 1; j < np; j++) {
            if (done[j])
                continue;
            unsigned w = worst_case(m, excl, j);
            if (w < pw) {
                pw = w;
                p = j;
            }
        }
        double x = 0;
        if ((rc = measure_rel(m, measure, ctx, p, base, &x, why, len)))
            goto out;
        done[p] = true;
        out->measured[p] = x;
        out->tried[out->ntried] = p;
        bool any = false;
        for (unsigned c = 0; c < k; c++)
            any |= inside(m, c, p, x);
        if (any) {
            for (unsigned c = 0; c < k; c++)
                if (!excl[c] && !inside(m, c, p, x)) {
                    excl[c] = true;
                    ncand--;
                }
        } else {
            unsigned best = 0;
            for (unsigned c = 1; c < k; c++) /* closer by more than the tie tolerance; else the lower index */
                if (interval_dist(m, c, p, x) <
                    interval_dist(m, best, p, x) - PL_MODEL_TIE_EPS * fmax(1.0, fabs(x)))
                    best = c;
            ncand = excl[best] ? 0 : 1; /* an already excluded closest cluster stays excluded */
            for (unsigned c = 0; c < k; c++)
                excl[c] = c != best || excl[c];
            closest_used |= ncand == 1;
        }
        out->remaining[out->ntried++] = ncand;
    }
    if (ncand == 0) {
        out->status = PL_PRED_NONE;
        out->cluster = -1;
        for (unsigned j = 1; j < np; j++) {
            if (done[j])
                continue;
            double x = 0;
            if ((rc = measure_rel(m, measure, ctx, j, base, &x, why, len)))
                goto out;
            done[j] = true;
            out->measured[j] = x;
            out->tried[out->ntried] = j;
            out->remaining[out->ntried++] = 0;
        }
    } else if (ncand == 1) {
        out->status = closest_used ? PL_PRED_CLOSEST : PL_PRED_FOUND;
        for (unsigned c = 0; c < k; c++)
            if (!excl[c])
                out->cluster = (int)c;
    } else {
        out->status = PL_PRED_AMBIGUOUS;
        double bd = INFINITY;
        for (unsigned c = 0; c < k; c++) {
            if (excl[c])
                continue;
            double d = dist2(out->measured, m->c[c].centroid, np);
            if (d < bd) {
                bd = d;
                out->cluster = (int)c;
            }
        }
    }
    for (unsigned j = 0; j < np; j++)
        out->vector[j] = done[j] ? out->measured[j] : m->c[out->cluster].centroid[j];
out:
    free(excl);
    free(done);
    if (rc)
        pl_prediction_free(out);
    return rc;
}

/* ---------------------------------------------------------------- packing */

void pl_pack_free(struct pl_pack *p)
{
    if (!p)
        return;
    free(p->row);
    memset(p, 0, sizeof(*p));
}

/* The important placements of nthreads threads on h, and each model placement's row among them: a placement id of
 * digits is a class id, any other text a notation ({XX..XX..}).  Two model placements on one class are refused. */
int pl_model_classes(const struct pl_model *m, const struct pl_hier *h, unsigned nthreads, struct pl_class_list *l,
                     unsigned *rowof, char *why, size_t len)
{
    struct pl_classes_opts co = {.nthreads = nthreads, .all = false, .limit = PL_CLASSES_LIMIT, .bw = NULL};
    int rc = pl_classes(h, &co, l, why, len);
    if (rc)
        return rc;
    for (unsigned j = 0; j < m->np && !rc; j++) {
        const char *id = m->pid[j];
        int row = -1;
        bool digits = *id && strspn(id, "0123456789") == strlen(id);
        for (unsigned r = 0; r < l->n && row < 0; r++) {
            char nota[80];
            if (digits ? strtoul(id, NULL, 10) == l->v[r].id
                       : pl_class_notation(h, &l->v[r], nota, sizeof(nota)) == 0 && !strcmp(nota, id))
                row = (int)r;
        }
        if (row < 0) {
            rc = ib_why(why, len, -EINVAL,
                        "placement '%s' of the model is not an important placement of %u threads here (ids 1-%u, "
                        "or their notation)", id, nthreads, l->n);
            break;
        }
        for (unsigned e = 0; e < j && !rc; e++)
            if (rowof[e] == (unsigned)row)
                rc = ib_why(why, len, -EINVAL, "placements '%s' and '%s' of the model are the same placement %u",
                            m->pid[e], id, l->v[row].id);
        rowof[j] = (unsigned)row;
    }
    if (rc)
        pl_class_list_free(l);
    return rc;
}

/* Seed 002 §5 packs as many containers of one workload on a machine as meet the performance goal; its placements
 * come from §3, where a container's cost is the NUMA nodes (the coarsest units) it uses.  Rules (the paper leaves them
 * open; docs/placement.md says why):
 * - Containers never share an instance of the coarsest concern level (h->lv[0], e.g. the NUMA node or the package):
 *   the vectors were measured with the workload alone there, and the paper's Aggressive policy shows that containers
 *   sharing nodes miss their goal.  A container in placement p uses score[0] such instances, so floor(instances /
 *   score[0]) containers in p fit (the machine is assumed symmetric at that level; an asymmetric one is refused).
 * - A placement meets the goal when the cluster's predicted performance there (the centroid, or with PL_PACK_MIN the
 *   lowest training member's) is >= goal.
 * - The choice: the placement that fits the most containers among those that meet the goal; ties: the higher
 *   predicted performance, then the lower placement index.  Mixing placements never packs more: the placement using
 *   the fewest instances among those meeting the goal already fills the machine but for fewer instances than any
 *   other goal-meeting placement needs.
 * - The interconnect (node sets with different bandwidth) is not a concern here: classes are listed without a
 *   bandwidth file, so each model placement is one class whatever nodes it sits on. */
int pl_model_pack(const struct pl_model *m, unsigned cluster, double goal, enum pl_pack_bound bound,
                  const struct pl_hier *h, unsigned nthreads, struct pl_pack *out, char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    out->choice = -1;
    if (cluster >= m->k)
        return ib_why(why, len, -EINVAL, "no cluster %u (the model has %u)", cluster + 1, m->k);
    if (!(goal > 0) || !isfinite(goal))
        return ib_why(why, len, -EINVAL, "the goal must be a number > 0");
    if (!h->nlevels)
        return ib_why(why, len, -EINVAL, "the topology has no concern level to pack on");
    const struct pl_level *lv = &h->lv[0];
    for (unsigned i = 1; i < lv->ninst; i++)
        if (lv->inst_npus[i] != lv->inst_npus[0])
            return ib_why(why, len, -EINVAL, "packing assumes every %s holds the same PUs (%s 0: %u, %s %u: %u)",
                          lv->name, lv->name, lv->inst_npus[0], lv->name, i, lv->inst_npus[i]);
    struct pl_class_list l;
    unsigned *rowof = calloc(m->np, sizeof(*rowof));
    if (!rowof)
        return ib_why(why, len, -ENOMEM, "out of memory");
    int rc = pl_model_classes(m, h, nthreads, &l, rowof, why, len);
    if (rc) {
        free(rowof);
        return rc;
    }
    out->nthreads = nthreads;
    snprintf(out->level, sizeof(out->level), "%s", lv->name);
    out->ninst = lv->ninst;
    out->row = calloc(m->np, sizeof(*out->row));
    if (!out->row) {
        free(rowof);
        pl_class_list_free(&l);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    out->nrow = m->np;
    for (unsigned j = 0; j < m->np; j++) {
        unsigned row = rowof[j];
        struct pl_pack_row *pr = &out->row[j];
        pr->placement = j;
        pr->class_id = l.v[row].id;
        pr->units = l.v[row].score[0];
        pr->containers = pr->units ? lv->ninst / pr->units : 0;
        pr->perf = bound == PL_PACK_MIN ? m->c[cluster].lo[j] : m->c[cluster].centroid[j];
        pr->meets = pr->perf >= goal;
    }
    pl_class_list_free(&l);
    free(rowof);
    for (unsigned j = 0; j < m->np; j++) {
        const struct pl_pack_row *r = &out->row[j];
        if (!r->meets || !r->containers)
            continue;
        if (out->choice < 0 || r->containers > out->containers ||
            (r->containers == out->containers && r->perf > out->row[out->choice].perf)) {
            out->choice = (int)j;
            out->containers = r->containers;
        }
    }
    return 0;
}
