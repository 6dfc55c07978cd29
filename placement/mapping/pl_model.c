/* pl_model.c - the placement model (pl_model.h).  Rules, and why:
 *
 * Vectors.  Entry p is performance in placement p over performance in the baseline, placement 0 (the CSV's first
 * placement column), higher better.  The paper's example [1.0, 0.8, 0.7] uses run-time ratios; we use performance so
 * that a goal of 0.9 reads "keeps 90 % of the baseline's performance".  Training refuses a baseline entry that is not
 * 1 (within 1e-9): a vector relative to another placement would silently mix conventions.
 *
 * Clustering (Funston et al. ATC'18 §4.1: k-means on the vectors, k by the silhouette coefficient).
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
 * Packing (§5): see pl_model_pack.
 *
 * The files (the vectors CSV, the model file) are pl_model_io.c's: this file is the model's maths. */
#define _GNU_SOURCE
#include "pl_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "ib_rand.h"
#include "pl_classes.h"

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

int pl_model_cluster(const struct pl_model *m, const char *name)
{
    for (unsigned c = 0; c < m->k; c++)
        if (!strcmp(m->c[c].name, name))
            return (int)c;
    return -1;
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

/* Algorithm 1 (Funston et al. ATC'18 §4.3):
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

/* Funston et al. ATC'18 §5 packs as many containers of one workload on a machine as meet the performance goal; its placements
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
