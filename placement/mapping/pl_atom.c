/* pl_atom.c - AToM's learning phase (pl_atom.h).  Rules, and why:
 *
 * - Equal time: every class gets `period` seconds, as Tang et al. ISCA'11 §5.2 gives each mapping "an equal amount of time", so
 *   a learning phase lasts classes x period exactly.
 * - Repeated periods: the period is run as `rounds` slices, interleaved round by round with a rotating start (round
 *   r begins with class r mod K).  The slices give each class a spread (the standard error of its mean), and the
 *   interleaving keeps a drift of the machine from favouring whichever class ran last.
 * - The winner is the best mean.  It wins clearly only when it beats every other class by more than z combined
 *   standard errors (z = 2, a two-sided 95 % test for a difference of normal means); otherwise the result says so
 *   and names the class within noise of it.  The caller still applies the best mean: between classes the
 *   measurement cannot tell apart, keeping any of them costs nothing measurable.
 * - One class: nothing to compete; it is measured all the same (the report shows its figure). */
#include "pl_atom.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "ib_rand.h"

void pl_atom_result_free(struct pl_atom_result *r)
{
    free(r->st);
    free(r->order);
    memset(r, 0, sizeof *r);
}

int pl_atom_learn(const struct pl_atom_ops *ops, void *ctx, unsigned nclasses, const struct pl_atom_opts *o,
                  struct pl_atom_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    r->best = r->rival = -1;
    if (nclasses == 0)
        return ib_why(why, len, -EINVAL, "no class to compete");
    if (!(o->period > 0) || o->rounds == 0)
        return ib_why(why, len, -EINVAL, "a period above 0 and at least one round are needed");
    r->nclasses = nclasses;
    r->slice_s = o->period / o->rounds;
    r->st = calloc(nclasses, sizeof *r->st);
    r->order = calloc((size_t)nclasses * o->rounds, sizeof *r->order);
    double *sum = calloc(nclasses, sizeof *sum), *sq = calloc(nclasses, sizeof *sq);
    if (!r->st || !r->order || !sum || !sq) {
        free(sum), free(sq);
        pl_atom_result_free(r);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    int rc = 0;
    for (unsigned round = 0; round < o->rounds && rc == 0; round++)
        for (unsigned j = 0; j < nclasses && rc == 0; j++) {
            unsigned k = (round + j) % nclasses;
            double v;
            if ((rc = ops->apply(ctx, k, why, len)) < 0 || (rc = ops->measure(ctx, k, r->slice_s, &v, why, len)) < 0)
                break;
            if (!isfinite(v)) {
                rc = ib_why(why, len, -EBADMSG, "class %u: the metric is not a number", k + 1);
                break;
            }
            r->order[r->nslices++] = k;
            r->st[k].n++;
            sum[k] += v, sq[k] += v * v;
        }
    r->learning_s = r->nslices * r->slice_s;
    double sign = o->higher_better ? 1 : -1;
    for (unsigned k = 0; k < nclasses; k++) {
        struct pl_atom_stat *s = &r->st[k];
        if (!s->n) {
            s->mean = s->sd = s->se = NAN;
            continue;
        }
        s->mean = sum[k] / s->n;
        double var = s->n > 1 ? fmax(0, (sq[k] - s->n * s->mean * s->mean) / (s->n - 1)) : NAN;
        s->sd = sqrt(var);
        s->se = s->sd / sqrt(s->n);
        if (r->best < 0 || sign * s->mean > sign * r->st[r->best].mean)
            r->best = (int)k;
    }
    free(sum), free(sq);
    if (r->best < 0)
        return rc ? rc : ib_why(why, len, -EIO, "nothing was measured");
    r->margin_se = INFINITY;
    const struct pl_atom_stat *b = &r->st[r->best];
    for (unsigned k = 0; k < nclasses; k++) {
        if ((int)k == r->best || !r->st[k].n)
            continue;
        double se = sqrt(b->se * b->se + r->st[k].se * r->st[k].se);
        double m = sign * (b->mean - r->st[k].mean) / se; /* se 0 (no noise at all): +inf, a clear win */
        if (isnan(m))
            m = 0; /* one slice each: no spread to judge by */
        if (m < r->margin_se)
            r->margin_se = m, r->rival = (int)k;
    }
    r->clear = r->margin_se > o->z;
    if (r->rival < 0)
        snprintf(r->why, sizeof r->why, "one class: nothing to compete");
    else if (r->clear)
        snprintf(r->why, sizeof r->why, "class %d wins: %.3g%% %s than the next best (class %d), %.1f standard "
                 "errors apart", r->best + 1, 100 * fabs(b->mean / r->st[r->rival].mean - 1),
                 o->higher_better ? "higher" : "lower", r->rival + 1, r->margin_se);
    else
        snprintf(r->why, sizeof r->why, "no clear winner: class %d leads class %d by %.1f standard errors (a win "
                 "needs %.1f); the leader is kept", r->best + 1, r->rival + 1, r->margin_se, o->z);
    return rc;
}

/* ---- the oracle: a simulated application */

void pl_atom_oracle_seed(struct pl_atom_oracle *o, uint64_t seed)
{
    o->state = seed ^ 0xa70a70a70a70a70aULL;
    o->applies = 0;
}

void pl_atom_oracle_free(struct pl_atom_oracle *o)
{
    for (unsigned k = 0; o->label && k < o->n; k++)
        free(o->label[k]);
    free(o->label);
    free(o->perf);
    memset(o, 0, sizeof *o);
}

int pl_atom_oracle_parse(const char *text, const char *file, struct pl_atom_oracle *o, char *why, size_t len)
{
    memset(o, 0, sizeof *o);
    json_error_t e;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &e), *v;
    if (!doc)
        return ib_why(why, len, -EINVAL, "%s: line %d: %s", file, e.line, e.text);
    int rc = 0;
    const char *key;
    if (!json_is_object(doc)) {
        rc = ib_why(why, len, -EINVAL, "%s: a JSON object expected", file);
        goto out;
    }
    json_object_foreach(doc, key, v) if (strcmp(key, "name") && strcmp(key, "noise") && strcmp(key, "classes") &&
                                         strcmp(key, "note"))
    {
        rc = ib_why(why, len, -EINVAL, "%s: unknown key '%s' (an oracle has name, noise, classes, note)", file, key);
        goto out;
    }
    v = json_object_get(doc, "noise");
    if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1) {
        rc = ib_why(why, len, -EINVAL, "%s: noise: a number in [0, 1] expected (the sd of the log)", file);
        goto out;
    }
    o->noise = json_number_value(v);
    json_t *cl = json_object_get(doc, "classes");
    if (!json_is_array(cl) || json_array_size(cl) == 0 || json_array_size(cl) > 10000) {
        rc = ib_why(why, len, -EINVAL, "%s: classes: a non-empty array expected", file);
        goto out;
    }
    o->n = (unsigned)json_array_size(cl);
    o->perf = calloc(o->n, sizeof *o->perf);
    o->label = calloc(o->n, sizeof *o->label);
    if (!o->perf || !o->label) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    for (unsigned k = 0; k < o->n; k++) {
        json_t *c = json_array_get(cl, k), *p = json_object_get(c, "performance"), *l = json_object_get(c, "class");
        if (!json_is_object(c) || json_object_size(c) != (l ? 2u : 1u) || !json_is_number(p) ||
            !(json_number_value(p) > 0) || (l && !json_is_string(l))) {
            rc = ib_why(why, len, -EINVAL, "%s: classes[%u]: {\"class\": NOTATION, \"performance\": a number > 0} "
                        "expected", file, k);
            goto out;
        }
        o->perf[k] = json_number_value(p);
        if (l && !(o->label[k] = strdup(json_string_value(l)))) {
            rc = ib_why(why, len, -ENOMEM, "out of memory");
            goto out;
        }
    }
out:
    json_decref(doc);
    if (rc < 0)
        pl_atom_oracle_free(o);
    return rc;
}

static int oracle_apply(void *ctx, unsigned k, char *why, size_t len)
{
    struct pl_atom_oracle *o = ctx;
    if (k >= o->n)
        return ib_why(why, len, -EINVAL, "class %u: the oracle has %u classes", k + 1, o->n);
    o->applied = k;
    o->applies++;
    return 0;
}

static int oracle_measure(void *ctx, unsigned k, double seconds, double *value, char *why, size_t len)
{
    struct pl_atom_oracle *o = ctx;
    (void)seconds;
    if (k != o->applied)
        return ib_why(why, len, -EINVAL, "measured class %u while class %u is applied", k + 1, o->applied + 1);
    double u = 1.0 - ib_unit01(&o->state), w = ib_unit01(&o->state); /* Box-Muller, u in (0, 1] */
    *value = o->perf[k] * exp(o->noise * sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * w));
    return 0;
}

const struct pl_atom_ops pl_atom_oracle_ops = {oracle_apply, oracle_measure};
