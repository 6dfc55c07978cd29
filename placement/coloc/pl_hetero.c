/* pl_hetero.c - heterogeneous cores (the iBench paper §V.D; pl_hetero.h).  The model and its rules, each with its reason:
 * - The machine: M cores, each of a named type; one application per core (the paper's mixes are as many applications
 *   as cores, 4 on 4 and 16 on 16); N <= M, the cores left over stay idle.  Cores of one type are identical.
 * - Shared and private resources: all cores share the LLC and memory (§V.D), by default the SoIs mem-cap, mem-bw,
 *   llc-cap, llc-bw (a caller may name others).  Every other SoI presses a core's own pipeline or private caches; with
 *   one application per core no co-runner reaches them, so they add no interference and are not counted.  What the
 *   core type changes is the profile: an application measured on a small core (smaller private caches, lower
 *   frequency) may tolerate less LLC or memory pressure, and cause another amount of it.
 * - The interference application a suffers on a core of type t, in points (percent of an SoI's capacity) summed over
 *   the shared resources: sum_r max(0, others_r(a) - tolerated_r(a on t)), where others_r(a) is what every other
 *   application of the mix causes on r, summed and capped at 100 (pl_coloc's composition).  This is the iBench paper's L1
 *   norm of tolerated minus caused (eq. 1) read one-sided, as pl_coloc reads it: pressure under a tolerance costs
 *   nothing (a QoS figure is a limit, not a target), pressure over it costs what it exceeds by.
 * - The documented simplification that makes the problem exact: a co-runner's caused figure depends on the type of
 *   core it lands on, which would make each application's cost depend on the whole assignment.  Here a co-runner
 *   counts its largest caused figure over the machine's core types (the pessimistic bound: it presses at most this
 *   wherever it goes).  Every co-runner of the mix shares the LLC and memory whatever the assignment, so others_r(a)
 *   is then fixed, the cost of a on type t depends on a and t alone, and the assignment is a linear assignment
 *   problem, solved exactly (the Hungarian algorithm).  Since interference grows with pressure, the objective is an
 *   upper bound on what the profiles predict for the chosen assignment; that prediction (the co-runners' caused taken
 *   on their own cores' types) is reported beside it as "placed".  Where a co-runner's caused does not depend on its
 *   core type the two are equal.
 * - The objective is the average over applications of that cost (the paper's "average interference across
 *   workloads"); N is fixed, so this is the minimum total.
 * - Caused as counted and unknowns: pl_coloc's rules.  A figure told apart from 0 counts max(0, value); one within
 *   2 se of 0 counts max(0, value + 2 se) pessimistically, 0 optimistically.  An SoI skipped, a caused value NAN or a
 *   resource missing from a profile: pessimistic (default) caused 100, tolerated 0; optimistic 0 and 100.  A cell
 *   where neither side has evidence (a's tolerance unknown and no co-runner's caused known on any type) is not judged
 *   and costs 0.
 * - Quantisation: costs are rounded to 1e-6 points, integers of micro-points held in doubles, so sums are exact and
 *   equal totals are recognised as equal: the tie-break below is decided on exact ties, not on rounding noise.
 * - Tie-break: among all assignments of minimum total, the lexicographically smallest vector of core indices in the
 *   applications' order (the first application gets the lowest-numbered core any optimal assignment gives it, then
 *   the second, ...).  Cores are numbered type by type in the machine's order, so equal costs fill the first type's
 *   cores first, in the applications' order: the same input always gives the same answer.
 */
#include "pl_hetero.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "pl_coloc.h"

/* ---- the linear assignment problem -------------------------------------------------------------------------------- */

int pl_hungarian(const double *cost, unsigned n, unsigned m, unsigned *assign, double *total)
{
    if (n == 0 || n > m)
        return -EINVAL;
    for (size_t k = 0; k < (size_t)n * m; k++)
        if (!isfinite(cost[k]))
            return -EINVAL;
    /* Kuhn-Munkres with row and column potentials, 1-based (column 0 is the sentinel): each row in turn is added by a
     * shortest augmenting path in reduced costs; the potentials keep every reduced cost >= 0, so the matching stays
     * optimal for the rows added so far. */
    double *u = calloc(n + 1, sizeof *u), *v = calloc(m + 1, sizeof *v), *minv = calloc(m + 1, sizeof *minv);
    unsigned *p = calloc(m + 1, sizeof *p), *way = calloc(m + 1, sizeof *way);
    unsigned char *used = calloc(m + 1, 1);
    int rc = 0;
    if (!u || !v || !minv || !p || !way || !used) {
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned i = 1; i <= n; i++) {
        p[0] = i;
        unsigned j0 = 0;
        for (unsigned j = 0; j <= m; j++)
            minv[j] = INFINITY, used[j] = 0;
        do {
            used[j0] = 1;
            unsigned i0 = p[j0], j1 = 0;
            double delta = INFINITY;
            for (unsigned j = 1; j <= m; j++) {
                if (used[j])
                    continue;
                double cur = cost[(size_t)(i0 - 1) * m + (j - 1)] - u[i0] - v[j];
                if (cur < minv[j])
                    minv[j] = cur, way[j] = j0;
                if (minv[j] < delta)
                    delta = minv[j], j1 = j;
            }
            for (unsigned j = 0; j <= m; j++) {
                if (used[j])
                    u[p[j]] += delta, v[j] -= delta;
                else
                    minv[j] -= delta;
            }
            j0 = j1;
        } while (p[j0] != 0);
        do {
            unsigned j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
        } while (j0);
    }
    for (unsigned j = 1; j <= m; j++)
        if (p[j])
            assign[p[j] - 1] = j - 1;
    *total = 0;
    for (unsigned i = 0; i < n; i++)
        *total += cost[(size_t)i * m + assign[i]];
out:
    free(u), free(v), free(minv), free(p), free(way), free(used);
    return rc;
}

int pl_assign_greedy(const double *cost, unsigned n, unsigned m, unsigned *assign, double *total)
{
    if (n == 0 || n > m)
        return -EINVAL;
    unsigned char *taken = calloc(m, 1);
    if (!taken)
        return -ENOMEM;
    *total = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned best = m;
        for (unsigned j = 0; j < m; j++)
            if (!taken[j] && (best == m || cost[(size_t)i * m + j] < cost[(size_t)i * m + best]))
                best = j;
        taken[best] = 1;
        assign[i] = best;
        *total += cost[(size_t)i * m + best];
    }
    free(taken);
    return 0;
}

/* Is column j the same as column k on rows from..n-1?  (Cores of one type are: trying one of them settles all.) */
static bool same_column(const double *cost, unsigned n, unsigned m, unsigned from, unsigned j, unsigned k)
{
    for (unsigned i = from; i < n; i++)
        if (cost[(size_t)i * m + j] != cost[(size_t)i * m + k])
            return false;
    return true;
}

int pl_assign_lexmin(const double *cost, unsigned n, unsigned m, unsigned *assign, double *total)
{
    int rc = pl_hungarian(cost, n, m, assign, total);
    if (rc)
        return rc;
    const double best = *total;
    double *sub = malloc((size_t)n * m * sizeof *sub);
    unsigned *free_col = malloc(m * sizeof *free_col), *sub_assign = malloc(n * sizeof *sub_assign),
             *tried = malloc(m * sizeof *tried);
    unsigned char *taken = calloc(m, 1);
    if (!sub || !free_col || !sub_assign || !tried || !taken) {
        rc = -ENOMEM;
        goto out;
    }
    /* Fix the rows one at a time: row i takes the lowest-numbered free column with which the rows after it can still
     * reach the optimum.  The optimum is reachable at every step (the column fixed last time was part of one). */
    double fixed = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned ntried = 0, pick = m;
        for (unsigned j = 0; j < m && pick == m; j++) {
            if (taken[j])
                continue;
            bool dup = false;
            for (unsigned t = 0; t < ntried && !dup; t++)
                dup = same_column(cost, n, m, i, j, tried[t]);
            if (dup)
                continue; /* a column like one already refused is refused too */
            tried[ntried++] = j;
            double rest = 0;
            unsigned rows = n - i - 1, cols = 0;
            if (rows) {
                for (unsigned k = 0; k < m; k++)
                    if (!taken[k] && k != j)
                        free_col[cols++] = k;
                for (unsigned r = 0; r < rows; r++)
                    for (unsigned c = 0; c < cols; c++)
                        sub[(size_t)r * cols + c] = cost[(size_t)(i + 1 + r) * m + free_col[c]];
                if ((rc = pl_hungarian(sub, rows, cols, sub_assign, &rest)))
                    goto out;
            }
            double t = fixed + cost[(size_t)i * m + j] + rest;
            /* exact on integer costs; the tolerance only absorbs rounding on fractional ones */
            if (fabs(t - best) <= 1e-9 * fmax(1.0, fabs(best)))
                pick = j;
        }
        if (pick == m) { /* fractional costs whose rounding hid the optimum: take the first cheapest column */
            double least = INFINITY;
            for (unsigned j = 0; j < m; j++)
                if (!taken[j] && cost[(size_t)i * m + j] < least)
                    least = cost[(size_t)i * m + j], pick = j;
        }
        assign[i] = pick;
        taken[pick] = 1;
        fixed += cost[(size_t)i * m + pick];
    }
    *total = fixed;
out:
    free(sub), free(free_col), free(sub_assign), free(tried), free(taken);
    return rc;
}

/* ---- the heterogeneous machine --------------------------------------------------------------------------------- */

static bool measured(const struct profile_soi *s) { return s && s->status == PROFILE_MEASURED; }

static double quantise(double points) { return round(points * 1e6); } /* micro-points */

/* Fills cell for application a on type t against the co-runners' pressures w[b * nres + r] (wknown: evidence). */
static double judge(const struct pl_hetero_app *apps, unsigned n, unsigned a, unsigned t, char *const *res,
                    unsigned nres, const double *w, const bool *wknown, bool pessimistic, struct pl_hetero_cell *cell)
{
    double sum = 0;
    for (unsigned r = 0; r < nres; r++) {
        struct pl_hetero_cell *c = &cell[r];
        const struct profile_soi *s = pl_coloc_soi(apps[a].prof[t], res[r]);
        bool tol_known = measured(s), any_known = false;
        double oth = 0;
        memset(c, 0, sizeof *c);
        for (unsigned b = 0; b < n; b++) {
            if (b == a)
                continue;
            oth += w[b * nres + r];
            any_known |= wknown[b * nres + r];
            c->unknown_oth |= !wknown[b * nres + r];
        }
        c->unknown_tol = !tol_known;
        c->judged = tol_known || any_known;
        if (!c->judged) {
            c->tolerated = 100, c->others = 0, c->excess = 0;
            continue;
        }
        c->tolerated = tol_known ? profile_soi_safe_tolerated(s) : (pessimistic ? 0.0 : 100.0);
        c->others = fmin(100.0, oth);
        c->excess = fmax(0.0, c->others - c->tolerated);
        sum += c->excess;
    }
    return quantise(sum);
}

void pl_hetero_result_free(struct pl_hetero_result *r)
{
    for (unsigned k = 0; r->res && k < r->nres; k++)
        free(r->res[k]);
    free(r->res);
    free(r->cell);
    free(r->cost);
    free(r->core);
    free(r->type);
    free(r->placed);
    free(r->greedy_core);
    memset(r, 0, sizeof *r);
}

static int split_shared(const struct pl_hetero_opts *o, struct pl_hetero_result *r)
{
    if (o->shared) {
        if (!(r->res = calloc(o->nshared ? o->nshared : 1, sizeof *r->res)))
            return -ENOMEM;
        for (unsigned k = 0; k < o->nshared; k++, r->nres++)
            if (!(r->res[k] = strdup(o->shared[k])))
                return -ENOMEM;
        return 0;
    }
    char *list = strdup(PL_HETERO_SHARED), *save = NULL;
    if (!list || !(r->res = calloc(8, sizeof *r->res))) {
        free(list);
        return -ENOMEM;
    }
    for (char *tok = strtok_r(list, ",", &save); tok && r->nres < 8; tok = strtok_r(NULL, ",", &save))
        if (!(r->res[r->nres++] = strdup(tok))) {
            free(list);
            return -ENOMEM;
        }
    free(list);
    return 0;
}

int pl_hetero_assign(const struct pl_hetero_app *apps, unsigned n, const struct pl_hetero_machine *m,
                     const struct pl_hetero_opts *o, struct pl_hetero_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    if (m->ntypes == 0 || m->ntypes > PL_HETERO_MAX_TYPES)
        return ib_why(why, len, -EINVAL, "a machine has 1 to %d core types, not %u", PL_HETERO_MAX_TYPES, m->ntypes);
    unsigned ncores = 0;
    for (unsigned t = 0; t < m->ntypes; t++) {
        if (m->count[t] == 0 || m->count[t] > PL_HETERO_MAX_CORES)
            return ib_why(why, len, -EINVAL, "core type %s: 1 to %d cores expected, not %u", m->type[t],
                          PL_HETERO_MAX_CORES, m->count[t]);
        ncores += m->count[t];
    }
    if (ncores > PL_HETERO_MAX_CORES)
        return ib_why(why, len, -EINVAL, "%u cores: at most %d", ncores, PL_HETERO_MAX_CORES);
    if (n == 0)
        return ib_why(why, len, -EINVAL, "no application to assign");
    if (n > ncores)
        return ib_why(why, len, -EINVAL, "%u applications for %u cores: one application per core", n, ncores);
    if (o->shared && o->nshared == 0)
        return ib_why(why, len, -EINVAL, "no shared resource named");
    for (unsigned a = 0; a < n; a++)
        for (unsigned t = 0; t < m->ntypes; t++) {
            const struct profile *p = apps[a].prof[t];
            unsigned k = 0;
            while (k < p->nsois && !measured(&p->sois[k]))
                k++;
            if (k == p->nsois)
                return ib_why(why, len, -EINVAL, "%s on %s: the profile has no measured SoI", apps[a].name,
                              m->type[t]);
        }
    int err = split_shared(o, r);
    const unsigned T = m->ntypes;
    r->napps = n, r->ncores = ncores, r->ntypes = T;
    const unsigned R = r->nres;
    double *w = calloc((size_t)n * (R ? R : 1), sizeof *w), *wp = calloc((size_t)n * (R ? R : 1), sizeof *wp);
    bool *wk = calloc((size_t)n * (R ? R : 1), sizeof *wk), *wpk = calloc((size_t)n * (R ? R : 1), sizeof *wpk);
    double *mat = calloc((size_t)n * ncores, sizeof *mat);
    struct pl_hetero_cell *scratch = calloc(R ? R : 1, sizeof *scratch);
    unsigned *type_of = calloc(ncores, sizeof *type_of);
    if (err == 0 &&
        (!w || !wp || !wk || !wpk || !mat || !scratch || !type_of ||
         !(r->cell = calloc((size_t)n * T * (R ? R : 1), sizeof *r->cell)) ||
         !(r->cost = calloc((size_t)n * T, sizeof *r->cost)) || !(r->core = calloc(n, sizeof *r->core)) ||
         !(r->type = calloc(n, sizeof *r->type)) || !(r->placed = calloc(n, sizeof *r->placed)) ||
         !(r->greedy_core = calloc(n, sizeof *r->greedy_core))))
        err = -ENOMEM;
    if (err)
        goto fail;
    for (unsigned t = 0, c = 0; t < T; t++)
        for (unsigned k = 0; k < m->count[t]; k++)
            type_of[c++] = t;
    /* The co-runners' pressure: each its largest caused figure over the core types (the bound, see above). */
    for (unsigned b = 0; b < n; b++)
        for (unsigned k = 0; k < R; k++) {
            double most = 0;
            bool any = false;
            for (unsigned t = 0; t < T; t++) {
                bool known;
                double v = pl_coloc_caused(pl_coloc_soi(apps[b].prof[t], r->res[k]), o->pessimistic, &known);
                most = fmax(most, v);
                any |= known;
            }
            w[b * R + k] = most, wk[b * R + k] = any;
        }
    for (unsigned a = 0; a < n; a++)
        for (unsigned t = 0; t < T; t++)
            r->cost[a * T + t] =
                judge(apps, n, a, t, r->res, R, w, wk, o->pessimistic, &r->cell[((size_t)a * T + t) * (R ? R : 1)]);
    for (unsigned a = 0; a < n; a++)
        for (unsigned c = 0; c < ncores; c++)
            mat[(size_t)a * ncores + c] = r->cost[a * T + type_of[c]];
    double total, gtotal;
    if ((err = pl_assign_lexmin(mat, n, ncores, r->core, &total)) ||
        (err = pl_assign_greedy(mat, n, ncores, r->greedy_core, &gtotal)))
        goto fail;
    for (unsigned a = 0; a < n; a++)
        r->type[a] = type_of[r->core[a]];
    /* What the profiles predict for this assignment: the co-runners' caused on their own cores' types. */
    for (unsigned b = 0; b < n; b++)
        for (unsigned k = 0; k < R; k++)
            wp[b * R + k] = pl_coloc_caused(pl_coloc_soi(apps[b].prof[r->type[b]], r->res[k]), o->pessimistic,
                                           &wpk[b * R + k]);
    double ptotal = 0;
    for (unsigned a = 0; a < n; a++) {
        double q = judge(apps, n, a, r->type[a], r->res, R, wp, wpk, o->pessimistic, scratch);
        r->placed[a] = q / 1e6;
        ptotal += q;
    }
    for (size_t k = 0; k < (size_t)n * T; k++)
        r->cost[k] /= 1e6;
    r->total = total / 1e6, r->average = total / 1e6 / n;
    r->greedy_total = gtotal / 1e6;
    r->placed_total = ptotal / 1e6, r->placed_average = ptotal / 1e6 / n;
    free(w), free(wp), free(wk), free(wpk), free(mat), free(scratch), free(type_of);
    return 0;
fail:
    free(w), free(wp), free(wk), free(wpk), free(mat), free(scratch), free(type_of);
    pl_hetero_result_free(r);
    return ib_why(why, len, err, err == -ENOMEM ? "out of memory" : "the assignment failed");
}
