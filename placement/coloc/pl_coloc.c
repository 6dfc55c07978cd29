/* pl_coloc.c - may these applications share a machine?  (the iBench paper §V.A, on profiles; docs/placement.md "Co-location")
 *
 * Since 1.7 the model decides by default (opts.decide PL_DECIDE_MODEL, pl_wmodel.h: each member's prediction beside
 * the others, with its bounds, against its QoS line; model_decides below); the headroom rule that follows fills the
 * cells as explanation, and decides only with PL_DECIDE_HEADROOM (--decide headroom, the rule before 1.7).
 *
 * The headroom rule, each part with its reason:
 * - Resources are the SoIs named in any member's profile, by name, sorted.
 * - Safety is a hard constraint, per resource, in every direction: for each member a and resource r, what the others
 *   cause together on r must stay under what a tolerates on r, less the margin.  The paper's objective, the L1 norm of
 *   tolerated minus caused, read literally prefers a co-runner that causes exactly what the other tolerates over one
 *   that causes nothing; a QoS figure is a limit, not a target, so it is a constraint here and the L1 form only ranks.
 * - Composition: the others' caused figures on r add up, capped at 100.  A caused figure is the share of the SoI's
 *   capacity the application took from it; two co-runners taking 30 % each leave the resource 40 %.  Adding is the
 *   conservative reading: where the resource is not a zero-sum share (a cache two streams thrash together, or a
 *   bandwidth neither saturates alone) it can over-count, never under-count, what a linear share model predicts.
 * - Caused as counted: a figure distinguishable from 0 counts max(0, value) (negative: the SoI ran faster beside the
 *   target; no co-runner frees capacity).  One within 2 se of 0 counts as an unknown bound: pessimistic max(0, value
 *   + 2 se), optimistic 0.  Older files (1.0/1.1) carry no se: their value counts as measured.
 * - Unknowns: an SoI skipped, a caused value NAN, a resource absent from a profile.  Pessimistic (the default):
 *   unknown caused counts 100, unknown tolerance 0; optimistic: 0 and 100.  But a cell where neither side carries
 *   any evidence (a's tolerance unknown and no other member measured what it causes there) is not judged: profiles
 *   taken where a resource is not shared (no SMT: every core SoI is skipped) would otherwise refuse every pair for a
 *   resource neither could press.  Such cells are flagged, count as safe and do not enter the fit.
 * - Margin: points kept free under every measured tolerance below 100.  The tolerated figure is the highest ramp
 *   point that met QoS on noisy samples; the margin covers a point met by luck.  A measured 100 means even the full
 *   SoI did not break QoS, and an assumed tolerance is exact by definition: neither gets a margin.
 * - Established breaks (opts.established; the front ends' default adds opts.likely, which under the model refuses
 *   an uncertain member whose point prediction is under its QoS line and whose harm is told from none, its
 *   optimistic bound under 1): a profile's figures carry their uncertainty (caused: a standard error; tolerated:
 *   the bracket from the highest point that met QoS beyond its noise to the lowest that broke it beyond its noise).  A group is refused only when a break is established: the
 *   others' caused counted at their lower bounds (value - 2 se, distinguishable figures only; unknowns 0) exceed the
 *   bracket's high end (unknown tolerance: 100) less the margin.  A cell the reading above calls unsafe but whose
 *   break is not established is uncertain: the group passes, says which cells and figures, and ranks after every
 *   safe group.  Reason: on this machine's corpus the model beat the constant "no interference" predictor only
 *   through the memory resources and tied it on the others (docs/placement.md, "Prediction skill per resource"), so
 *   a refusal on a figure that cannot be told from 0 refuses on noise (a memcached pod refused on 7 of 8 nodes by disk-cap 20.7 +- 54.9).
 *   With exact figures (no se, no bracket) both rules decide alike.
 * - Fit (larger is better): the sum over resources of the smallest headroom among the judged cells on it, i.e. on a
 *   safe group the L1 norm of the slack its binding members keep.  Every headroom falls as any caused figure rises,
 *   so less pressure never fits worse: a co-runner that causes nothing never ranks below one that causes something.
 */
#define _GNU_SOURCE /* asprintf */
#include "pl_coloc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"

const struct profile_soi *pl_coloc_soi(const struct profile *p, const char *name)
{
    for (unsigned i = 0; i < p->nsois; i++)
        if (strcmp(p->sois[i].soi, name) == 0)
            return &p->sois[i];
    return NULL;
}

static bool measured(const struct profile_soi *s) { return s && s->status == PROFILE_MEASURED; }

double pl_coloc_caused(const struct profile_soi *s, bool pessimistic, bool *known)
{
    *known = measured(s) && s->have_caused && isfinite(s->caused.value);
    if (!*known)
        return pessimistic ? 100.0 : 0.0;
    const struct profile_caused *c = &s->caused;
    if (c->distinguishable == 0)
        return pessimistic ? fmax(0.0, c->value + (isfinite(c->se) ? 2 * c->se : 0.0)) : 0.0;
    return fmax(0.0, c->value);
}

double pl_coloc_caused_lo(const struct profile_soi *s)
{
    if (!measured(s) || !s->have_caused || !isfinite(s->caused.value) || s->caused.distinguishable == 0)
        return 0.0;
    const double se = isfinite(s->caused.se) ? s->caused.se : 0.0;
    return fmax(0.0, s->caused.value - 2 * se);
}

/* The bracket's high end: the lowest intensity that broke QoS beyond its noise (tolerated without a bracket). */
static double tolerated_hi(const struct profile_soi *s)
{
    const double t = s->tolerated, b0 = s->bracket[0], b1 = s->bracket[1];
    return b1 > 0 && b0 >= 0 && b0 <= t && t <= b1 ? b1 : t;
}

const char *pl_coloc_verdict_name(enum pl_coloc_verdict v)
{
    return v == PL_COLOC_SAFE ? "safe" : v == PL_COLOC_UNCERTAIN ? "uncertain" : "unsafe";
}

bool pl_coloc_better(enum pl_coloc_verdict va, double fita, enum pl_coloc_verdict vb, double fitb)
{
    if (va != vb)
        return va < vb;
    return fita > fitb;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int resources(const struct profile *const *apps, unsigned n, struct pl_coloc_result *r)
{
    unsigned cap = 0;
    for (unsigned a = 0; a < n; a++)
        cap += apps[a]->nsois;
    r->res = calloc(cap ? cap : 1, sizeof *r->res);
    if (!r->res)
        return -ENOMEM;
    for (unsigned a = 0; a < n; a++)
        for (unsigned i = 0; i < apps[a]->nsois; i++) {
            const char *name = apps[a]->sois[i].soi;
            bool seen = false;
            for (unsigned k = 0; k < r->nres && !seen; k++)
                seen = strcmp(r->res[k], name) == 0;
            if (seen)
                continue;
            if (!(r->res[r->nres] = strdup(name)))
                return -ENOMEM;
            r->nres++;
        }
    qsort(r->res, r->nres, sizeof *r->res, cmp_str);
    return 0;
}

/* Appends formatted text to *s (malloc'd), after sep when *s holds something; -ENOMEM. Formats once into a stack
 * buffer and grows *s in place: filter writes a reason for every unsafe node of a request, so this is a hot path. */
static int append(char **s, const char *sep, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int append(char **s, const char *sep, const char *fmt, ...)
{
    char buf[256], *piece = buf;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -ENOMEM;
    if ((size_t)n >= sizeof buf) { /* longer than the buffer: format again into one of its size */
        if (!(piece = malloc((size_t)n + 1)))
            return -ENOMEM;
        va_start(ap, fmt);
        vsnprintf(piece, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    size_t old = *s ? strlen(*s) : 0, ls = *s ? strlen(sep) : 0;
    char *joined = realloc(*s, old + ls + (size_t)n + 1);
    if (joined) {
        memcpy(joined + old, sep, ls);
        memcpy(joined + old + ls, piece, (size_t)n + 1);
        *s = joined;
    }
    if (piece != buf)
        free(piece);
    return joined ? 0 : -ENOMEM;
}

static int warn(struct pl_coloc_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int warn(struct pl_coloc_result *r, const char *fmt, ...)
{
    char **w = realloc(r->warnings, (r->nwarnings + 1) * sizeof *w);
    if (!w)
        return -ENOMEM;
    r->warnings = w;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&w[r->nwarnings], fmt, ap);
    va_end(ap);
    if (n < 0)
        return -ENOMEM;
    r->nwarnings++;
    return 0;
}

static const char *str_or(const char *s, const char *dflt) { return s ? s : dflt; }

/* A member's name in the verdict: its profile's, with "#k" (its place in the group) when another has the same. */
static const char *label(const struct profile *const *apps, unsigned n, unsigned a, char *buf, size_t len)
{
    const char *name = str_or(apps[a]->name, "?");
    for (unsigned b = 0; b < n; b++)
        if (b != a && strcmp(str_or(apps[b]->name, "?"), name) == 0) {
            snprintf(buf, len, "%s#%u", name, a + 1);
            return buf;
        }
    return name;
}

/* Profiles taken on machines of another shape: their percentages are shares of other capacities. */
static int shape_warnings(const struct profile *const *apps, unsigned n, struct pl_coloc_result *r)
{
    const struct profile *p0 = apps[0];
    for (unsigned a = 1; a < n; a++) {
        const struct profile *p = apps[a];
        bool same = p->machine_cpus == p0->machine_cpus && strcmp(str_or(p->cpu_model, ""), str_or(p0->cpu_model, "")) == 0;
        if (!same &&
            warn(r, "%s was profiled on %s (%d CPUs), %s on %s (%d CPUs): their figures are shares of different "
                    "machines' capacities", str_or(p0->name, "?"), str_or(p0->cpu_model, "an unnamed CPU"),
                 p0->machine_cpus, str_or(p->name, "?"), str_or(p->cpu_model, "an unnamed CPU"), p->machine_cpus))
            return -ENOMEM;
    }
    for (unsigned a = 0; a < n; a++)
        if (apps[a]->confidence && strcmp(apps[a]->confidence, "low") == 0 &&
            warn(r, "%s's profile has low confidence: its solo baseline moved or spread by more than its QoS band",
                 str_or(apps[a]->name, "?")))
            return -ENOMEM;
    return 0;
}

const char *pl_coloc_decide_name(enum pl_coloc_decide d) { return d == PL_DECIDE_HEADROOM ? "headroom" : "model"; }

enum pl_wm_decision pl_coloc_member_decision(const struct pl_wm_pred *p, double qos, const struct pl_coloc_opts *o)
{
    const enum pl_wm_decision d = pl_wm_decide(p, qos);
    /* likely reads the point only where the profiles tell a harm from none (the optimistic bound under 1): a point
     * under the line whose bound reaches 1 is a curve's noise read at a pressure, and refusing on it refuses on
     * noise (docs/placement.md, "The uncertain case") */
    if (d == PL_WM_UNCERTAIN && (!o->established || (o->likely && p->rel < qos && p->hi < 1.0)))
        return PL_WM_REFUSED;
    return d;
}

/* The model's verdict over the headroom rule's (decide model): each member beside all the others (pl_wm_group);
 * refused: a member's optimistic bound under its QoS line (established), or its pessimistic bound (not
 * established: uncertain refused too), or with likely its point prediction when its bounds straddle the line and
 * its optimistic bound is under 1; uncertain: bounds straddling it otherwise; the fit the smallest prediction. */
static int model_decides(const struct profile *const *apps, unsigned n, const struct pl_coloc_opts *o,
                         struct pl_coloc_result *r)
{
    struct pl_wm_group g;
    if (!(r->pred = calloc(n, sizeof *r->pred)) || pl_wm_group_check(apps, n, o->combine, !o->terse, r->pred, &g) < 0)
        return -ENOMEM;
    free(r->deciding);
    free(r->uncertain);
    r->deciding = r->uncertain = NULL;
    r->verdict = PL_COLOC_SAFE;
    for (unsigned a = 0; a < n; a++) {
        const double q = pl_wm_qos(apps[a]);
        const enum pl_wm_decision d = pl_coloc_member_decision(&r->pred[a], q, o);
        if (d == PL_WM_KEPT)
            continue;
        const enum pl_coloc_verdict v = d == PL_WM_REFUSED ? PL_COLOC_UNSAFE : PL_COLOC_UNCERTAIN;
        if (v > r->verdict)
            r->verdict = v;
        if (o->terse)
            continue;
        const struct pl_wm_pred *p = &r->pred[a];
        char la[96];
        /* "RES (A predicted ...)", joined by ", ": the headroom rule's form, which the extender counts by resource */
        int err = append(d == PL_WM_REFUSED ? &r->deciding : &r->uncertain, ", ",
                         "%s (%s predicted %.2f [%.2f, %.2f] %s QoS %.2f: %s)", p->deciding[0] ? p->deciding : "model",
                         label(apps, n, a, la, sizeof la), p->rel, p->lo, p->hi,
                         p->hi < q    ? "< (even optimistic)"
                         : p->lo >= q ? ">="
                         /* straddling and refused, established: refused by its point (likely) */
                         : d == PL_WM_REFUSED && o->established ? "straddles, its point under"
                                                                : "straddles",
                         q, p->why);
        if (err)
            return err;
    }
    r->safe = r->verdict != PL_COLOC_UNSAFE;
    r->fit = g.fit;
    return 0;
}

int pl_coloc_check(const struct profile *const *apps, unsigned n, const struct pl_coloc_opts *o,
                   struct pl_coloc_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    if (n < 2 || n > PL_COLOC_MAX_APPS)
        return ib_why(why, len, -EINVAL, "a co-location check takes 2 to %d applications, not %u", PL_COLOC_MAX_APPS,
                      n);
    if (!(o->margin >= 0 && o->margin <= 100))
        return ib_why(why, len, -EINVAL, "margin %g: a number of points in 0-100 expected", o->margin);
    for (unsigned a = 0; a < n; a++) {
        unsigned k = 0;
        while (k < apps[a]->nsois && !measured(&apps[a]->sois[k]))
            k++;
        if (k == apps[a]->nsois)
            return ib_why(why, len, -EINVAL, "%s: the profile has no measured SoI", str_or(apps[a]->name, "?"));
    }
    int err = resources(apps, n, r);
    if (err == 0 && !(r->cell = calloc((size_t)n * (r->nres ? r->nres : 1), sizeof *r->cell)))
        err = -ENOMEM;
    if (err) {
        pl_coloc_result_free(r);
        return ib_why(why, len, err, "out of memory");
    }
    r->napps = n;
    r->safe = true;
    r->decide = o->decide;
    /* decide model: the cells are explanation, every one filled, no text; the model decides below */
    const bool model = o->decide == PL_DECIDE_MODEL, texts = !o->terse && !model, stop = o->terse && !model;
    /* terse under the model: no cell is read (a scheduler's loop wants the verdict and the fit), none is filled */
    const bool cells = !(model && o->terse);
    for (unsigned k = 0; cells && k < r->nres; k++) {
        double least = INFINITY, cv[PL_COLOC_MAX_APPS], clo[PL_COLOC_MAX_APPS];
        const struct profile_soi *sp[PL_COLOC_MAX_APPS];
        bool ck[PL_COLOC_MAX_APPS];
        for (unsigned b = 0; b < n; b++) {
            sp[b] = pl_coloc_soi(apps[b], r->res[k]);
            cv[b] = pl_coloc_caused(sp[b], o->pessimistic, &ck[b]);
            clo[b] = pl_coloc_caused_lo(sp[b]);
        }
        for (unsigned a = 0; a < n; a++) {
            struct pl_coloc_cell *c = &r->cell[a * r->nres + k];
            const struct profile_soi *s = sp[a];
            bool tol_known = measured(s);
            double oth = 0;
            bool any_known = false;
            for (unsigned b = 0; b < n; b++) {
                if (b == a)
                    continue;
                if (!ck[b])
                    c->unknown_oth = true;
                any_known |= ck[b];
                oth += cv[b];
            }
            c->unknown_tol = !tol_known;
            c->judged = tol_known || any_known;
            if (!c->judged) { /* no evidence on either side */
                c->tolerated = 100, c->others = 0, c->headroom = 100;
                continue;
            }
            c->others = fmin(100.0, oth);
            /* the safe end of the bracket: the highest intensity that met QoS beyond its noise */
            const double tol = tol_known ? profile_soi_safe_tolerated(s) : 0;
            c->tolerated = tol_known ? tol : (o->pessimistic ? 0.0 : 100.0);
            double margin = tol_known && tol < 100 ? o->margin : 0.0;
            c->headroom = c->tolerated - margin - c->others;
            least = fmin(least, c->headroom);
            if (c->headroom < 0 && o->established) {
                double lo = 0;
                for (unsigned b = 0; b < n; b++)
                    if (b != a)
                        lo += clo[b];
                c->others_lo = fmin(100.0, lo);
                c->tol_hi = tol_known ? tolerated_hi(s) : 100.0;
                const double mhi = tol_known && c->tol_hi < 100 ? o->margin : 0.0;
                if (!(c->others_lo > c->tol_hi - mhi)) { /* not established: uncertain, not refused */
                    c->uncertain = true;
                    if (r->verdict == PL_COLOC_SAFE)
                        r->verdict = PL_COLOC_UNCERTAIN;
                    if (texts) {
                        char la[96];
                        err = append(&r->uncertain, ", ", "%s (%s: %.1f caused as counted > %.1f tolerated - %g margin, "
                                     "but %.1f established beyond 2 se <= %.1f the bracket's high end - %g)",
                                     r->res[k], label(apps, n, a, la, sizeof la), c->others, c->tolerated, margin,
                                     c->others_lo, c->tol_hi, mhi);
                        if (err) {
                            pl_coloc_result_free(r);
                            return ib_why(why, len, err, "out of memory");
                        }
                    }
                    continue;
                }
                r->safe = false;
                r->verdict = PL_COLOC_UNSAFE;
                if (stop)
                    return 0;
                if (!texts)
                    continue;
                char *who = NULL, *figs = NULL, la[96], lb[96];
                for (unsigned b = 0; b < n && err == 0; b++)
                    if (b != a && clo[b] > 0) {
                        const char *nb = label(apps, n, b, lb, sizeof lb);
                        err = append(&who, "+", "%s", nb);
                        if (err == 0)
                            err = append(&figs, ", ", "%s %.1f +- %.1f", nb, sp[b]->caused.value,
                                         isfinite(sp[b]->caused.se) ? sp[b]->caused.se : 0.0);
                    }
                if (err == 0)
                    err = append(&r->deciding, ", ", "%s (%s break%s %s: caused %s, at least %.1f beyond 2 se > "
                                 "%.1f tolerated at most (the bracket's high end) - %g margin)", r->res[k],
                                 who ? who : "?", who && strchr(who, '+') ? "" : "s", label(apps, n, a, la, sizeof la),
                                 figs ? figs : "?", c->others_lo, c->tol_hi, mhi);
                free(who);
                free(figs);
                if (err) {
                    pl_coloc_result_free(r);
                    return ib_why(why, len, err, "out of memory");
                }
                continue;
            }
            if (c->headroom < 0) {
                r->safe = false;
                r->verdict = PL_COLOC_UNSAFE;
                if (stop)
                    return 0;
                if (!texts)
                    continue;
                char *who = NULL; /* the others that press r as counted (an unknown counted 100 among them) */
                char lb[96], la[96];
                for (unsigned b = 0; b < n && err == 0; b++)
                    if (b != a && cv[b] > 0)
                        err = append(&who, "+", "%s", label(apps, n, b, lb, sizeof lb));
                if (err == 0)
                    err = append(&r->deciding, ", ", "%s (%s break%s %s: %.1f caused > %.1f tolerated - %g margin)",
                                 r->res[k], who ? who : "any co-runner", who && strchr(who, '+') ? "" : "s",
                                 label(apps, n, a, la, sizeof la), c->others, c->tolerated, margin);
                free(who);
                if (err) {
                    pl_coloc_result_free(r);
                    return ib_why(why, len, err, "out of memory");
                }
            }
        }
        if (isfinite(least))
            r->fit += least;
    }
    if (model && (err = model_decides(apps, n, o, r)) != 0) {
        pl_coloc_result_free(r);
        return ib_why(why, len, err, "out of memory");
    }
    if (!o->terse && (err = shape_warnings(apps, n, r))) {
        pl_coloc_result_free(r);
        return ib_why(why, len, err, "out of memory");
    }
    return 0;
}

void pl_coloc_result_free(struct pl_coloc_result *r)
{
    for (unsigned k = 0; r->res && k < r->nres; k++)
        free(r->res[k]);
    free(r->res);
    free(r->cell);
    free(r->deciding);
    free(r->uncertain);
    free(r->pred);
    for (unsigned w = 0; w < r->nwarnings; w++)
        free(r->warnings[w]);
    free(r->warnings);
    memset(r, 0, sizeof *r);
}
