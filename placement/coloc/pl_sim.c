/* pl_sim.c - the fleet simulator (pl_sim.h).  Rules and their reasons:
 *
 * - Time is whole seconds.  At each second, in this order: work (every placed application does `rate` seconds of
 *   its work), departures (by app index: those whose work is done), then the waiting queue is retried FIFO
 *   (something may have left), then that second's arrivals (by app index).  A fixed order is what makes a run
 *   byte-identical under a seed.
 * - An application brings a fixed amount of work (its duration alone) and does it at the rate its truth gives: one
 *   slowed to 0.5 holds its CPUs twice as long.  The iBench paper §V.A: with interference managed "the duration of the
 *   scenario reduces because applications are running near their target performance"; a simulator with fixed
 *   durations would hide the machine-time that interference costs.
 * - Truth (pl_sim_truth) is separate from the policies: it reads the measured curves, never tolerated; it is
 *   evaluated for every tenant of a machine whose tenant set changed (grew or shrank), times lognormal noise (sd of log
 *   PL_SIM_NOISE_SD).  Composition across resources is a product: each curve was measured with one resource
 *   pressed and the others idle, so it is the share of performance left by that resource alone; independent
 *   losses multiply (two 10 % losses leave 81 %, not 80 %), and a product never goes below 0 as a sum of losses
 *   would.  Pressures of co-runners on one resource add (capped at 100 %, the SoI's capacity): the same rule the
 *   co-location check uses for caused.  Unknown or negative caused counts 0, and so does a caused figure within 2 se
 *   of 0 (not distinguishable): counted at face value, such figures predicted slowdowns the real co-runs here did not
 *   show (docs/placement.md, "The truth model against real co-runs").  An SoI without a curve counts 1.0.
 * - A curve's points are sorted, repeats at one intensity averaged (a ramp measures a point twice when the first
 *   broke QoS), and capped at 1.0: a co-runner is not taken to speed an application up; above-1 points are noise.
 * - Adaptive step (the iBench paper §V.A): an application whose truth is under its QoS counts one violation (once per
 *   application) and is moved to a machine the policy accepts other than its own; if there is none, its machine
 *   is closed to newcomers until it empties.  Its truth is then evaluated where it is.
 * - An application's performance is the lowest truth it saw: a violation is a violation however brief.
 */
#include "pl_sim.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corun.h"
#include "ib_err.h"
#include "ib_rand.h"
#include "pl_recorded.h"
#include "stats.h"

/* ---- PRNG: xoshiro256** seeded by splitmix64 (ib_rand.h) */
struct rng {
    struct ib_xoshiro x;
};
static void rng_seed(struct rng *g, uint64_t seed) { ib_xoshiro_seed(&g->x, seed); }
static uint64_t rng_next(struct rng *g) { return ib_xoshiro_next(&g->x); }
static double rng_unit(struct rng *g) { return (double)(rng_next(g) >> 11) * 0x1.0p-53; } /* [0, 1) */
static double rng_uniform(struct rng *g, double lo, double hi) { return lo + (hi - lo) * rng_unit(g); }
static unsigned rng_int(struct rng *g, unsigned lo, unsigned hi)
{
    return lo + (unsigned)(rng_next(g) % (hi - lo + 1));
}
static double rng_normal(struct rng *g)
{
    double u = 1.0 - rng_unit(g), v = rng_unit(g); /* u in (0, 1] */
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* ---- truth */
double pl_sim_curve(const struct profile_soi *s, double x)
{
    if (!s->curve || s->ncurve == 0 || x <= 0)
        return 1.0;
    /* distinct intensities, averaged and capped; insertion into a small sorted array */
    double xs[64], ys[64];
    unsigned cnt[64], n = 0;
    for (unsigned i = 0; i < s->ncurve && i < 64; i++) {
        double xi = s->curve[i].intensity, yi = s->curve[i].relative;
        if (!isfinite(xi) || !isfinite(yi))
            continue;
        unsigned k = 0;
        while (k < n && xs[k] < xi)
            k++;
        if (k < n && xs[k] == xi) {
            ys[k] += yi;
            cnt[k]++;
            continue;
        }
        memmove(xs + k + 1, xs + k, (n - k) * sizeof xs[0]);
        memmove(ys + k + 1, ys + k, (n - k) * sizeof ys[0]);
        memmove(cnt + k + 1, cnt + k, (n - k) * sizeof cnt[0]);
        xs[k] = xi, ys[k] = yi, cnt[k] = 1, n++;
    }
    if (n == 0)
        return 1.0;
    double px = 0, py = 1.0;
    for (unsigned k = 0; k < n; k++) {
        double y = fmin(1.0, ys[k] / cnt[k]);
        if (x <= xs[k])
            return xs[k] == px ? y : py + (y - py) * (x - px) / (xs[k] - px);
        px = xs[k], py = y;
    }
    return py;
}

static double caused_of(const struct profile *p, const char *soi)
{
    for (unsigned i = 0; i < p->nsois; i++) {
        const struct profile_soi *s = &p->sois[i];
        if (strcmp(s->soi, soi) != 0)
            continue;
        if (s->status != PROFILE_MEASURED || !s->have_caused || !isfinite(s->caused.value) || s->caused.value < 0 ||
            s->caused.distinguishable == 0)
            return 0;
        return s->caused.value;
    }
    return 0;
}

double pl_sim_pressure(const struct profile *const *others, unsigned n, const char *soi)
{
    double press = 0;
    for (unsigned j = 0; j < n; j++)
        press += caused_of(others[j], soi);
    return fmin(100.0, press);
}

double pl_sim_truth(const struct profile *app, const struct profile *const *others, unsigned n)
{
    double rel = 1.0;
    for (unsigned i = 0; i < app->nsois; i++) {
        const struct profile_soi *s = &app->sois[i];
        if (s->status == PROFILE_MEASURED)
            rel *= pl_sim_curve(s, pl_sim_pressure(others, n, s->soi));
    }
    return rel;
}

/* ---- policies */
static bool fits(const struct pl_sim_fleet *f, unsigned mi, unsigned a)
{
    const struct pl_sim_machine *m = &f->m[mi];
    return !m->closed && m->ntenants < PL_SIM_MAX_TENANTS && m->cpu_used + f->app[a].cpus <= m->cpus &&
           m->mem_used + f->app[a].mem <= m->mem;
}
static double free_cpu(const struct pl_sim_machine *m) { return m->cpus - m->cpu_used; }
/* more free CPU first, then name: the least-loaded order */
static bool less_loaded(const struct pl_sim_machine *a, const struct pl_sim_machine *b)
{
    if (free_cpu(a) != free_cpu(b))
        return free_cpu(a) > free_cpu(b);
    return strcmp(a->name, b->name) < 0;
}

/* The pressure the group's other members put on each of member x's SoIs (the profile's order, up to
 * PL_SIM_LEARN_SOIS). */
static void pressure_vec(const struct pl_sim_fleet *f, const unsigned *group, unsigned n, unsigned x, float *v)
{
    const struct profile *o[PL_COLOC_MAX_APPS];
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        if (group[i] != x)
            o[k++] = f->app[group[i]].p;
    const struct profile *p = f->app[x].p;
    for (unsigned s = 0; s < p->nsois && s < PL_SIM_LEARN_SOIS; s++)
        v[s] = (float)pl_sim_pressure(o, k, p->sois[s].soi);
}

/* Does the group press some member at least as hard, on every SoI, as where a re-profile found it breaking? */
static bool learned_unsafe(const struct pl_sim_fleet *f, const unsigned *group, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const struct pl_sim_app *x = &f->app[group[i]];
        if (!x->nlearned)
            continue;
        float v[PL_SIM_LEARN_SOIS];
        pressure_vec(f, group, n, group[i], v);
        unsigned ns = x->p->nsois < PL_SIM_LEARN_SOIS ? x->p->nsois : PL_SIM_LEARN_SOIS;
        for (unsigned l = 0; l < x->nlearned; l++) {
            unsigned s = 0;
            while (s < ns && v[s] >= x->learned[l][s])
                s++;
            if (s == ns)
                return true;
        }
    }
    return false;
}

static int choose_least_loaded(const struct pl_sim_fleet *f, unsigned a, int exclude)
{
    int best = -1;
    for (unsigned i = 0; i < f->nm; i++)
        if ((int)i != exclude && fits(f, i, a) && (best < 0 || less_loaded(&f->m[i], &f->m[best])))
            best = (int)i;
    return best;
}

bool pl_sim_machine_safe_before(const struct pl_sim_machine *a, const char *name_a, double fit_a,
                                const struct pl_sim_machine *b, const char *name_b, double fit_b)
{
    bool sa = a->ntenants > 0, sb = b->ntenants > 0;
    if (sa != sb)
        return sa;
    if (sa && free_cpu(a) != free_cpu(b))
        return free_cpu(a) < free_cpu(b); /* the fullest safe machine: pack */
    if (sa && fit_a != fit_b)
        return fit_a > fit_b;
    if (free_cpu(a) != free_cpu(b)) /* less loaded, then name (less_loaded's order) */
        return free_cpu(a) > free_cpu(b);
    return strncmp(name_a, name_b, sizeof a->name - 1) < 0;
}

bool pl_sim_safe_before(const struct pl_sim_fleet *f, unsigned i, double fit_i, unsigned j, double fit_j)
{
    return pl_sim_machine_safe_before(&f->m[i], f->m[i].name, fit_i, &f->m[j], f->m[j].name, fit_j);
}

/* Among machines where CPU and memory fit, those where pl_coloc_check(tenants + app) with the caller's options does
 * not refuse (o->decide says what decides: the model, or the headroom rule before 1.7; an uncertain group is kept
 * only with o->established, and then comes after every safe group and every empty machine), less the groups a
 * re-profile ruled out; a shared safe machine before an empty one (packing onto a safe co-runner is what keeps
 * machines free, the point of the iBench paper V.A), the best fit first, ties by least loaded, then name.  The
 * simulator's own options are choose_interference's. */
int pl_sim_choose_safe(const struct pl_sim_fleet *f, unsigned a, int exclude, const struct pl_coloc_opts *opts)
{
    int best = -1;
    double best_fit = 0;
    bool best_unc = false;
    struct pl_coloc_opts o = *opts;
    o.terse = true;
    for (unsigned i = 0; i < f->nm; i++) {
        if ((int)i == exclude || !fits(f, i, a))
            continue;
        const struct pl_sim_machine *m = &f->m[i];
        double fit = 0;
        enum pl_coloc_verdict verdict = PL_COLOC_SAFE;
        bool shared = m->ntenants > 0;
        if (shared) {
            const struct profile *g[PL_COLOC_MAX_APPS];
            for (unsigned t = 0; t < m->ntenants; t++)
                g[t] = f->app[m->tenant[t]].p;
            g[m->ntenants] = f->app[a].p;
            struct pl_coloc_result r;
            char w[256];
            if (pl_coloc_check(g, m->ntenants + 1, &o, &r, w, sizeof w) != 0)
                continue; /* cannot be judged: not safe */
            bool safe = r.safe;
            fit = r.fit;
            verdict = r.verdict;
            pl_coloc_result_free(&r);
            if (!safe)
                continue;
            unsigned grp[PL_COLOC_MAX_APPS];
            memcpy(grp, m->tenant, m->ntenants * sizeof grp[0]);
            grp[m->ntenants] = a;
            if (learned_unsafe(f, grp, m->ntenants + 1))
                continue;
        }
        /* an uncertain group (established rule only) comes after every safe one and every empty machine */
        bool unc = verdict == PL_COLOC_UNCERTAIN;
        if (best < 0 || (unc != best_unc ? !unc : pl_sim_safe_before(f, i, fit, (unsigned)best, best_fit)))
            best = (int)i, best_fit = fit, best_unc = unc;
    }
    return best;
}

/* The simulator's interference policy: what decides is f->decide (place simulate --decide; the model by default).
 * Margin PL_COLOC_MARGIN and unknowns optimistic shape the headroom rule (--decide headroom decides as the policy
 * did before 1.7, reproducing the figures docs/placement.md dates 2026-11-26); the model reads neither.  Uncertain
 * is refused in both modes (established false, as the policy was before --refuse established existed): a simulator
 * that packs must not count a group the profiles cannot clear as safe.  Kept, an uncertain group would be taken
 * exactly where the application would otherwise wait, which on a fleet short of CPU (ibench-200x40) is often, and
 * the run would then score the profiles' noise, not the rule. */
static int choose_interference(const struct pl_sim_fleet *f, unsigned a, int exclude)
{
    const struct pl_coloc_opts o = {
        .margin = PL_COLOC_MARGIN, .pessimistic = false, .established = false, .decide = f->decide};
    return pl_sim_choose_safe(f, a, exclude, &o);
}

static const struct pl_sim_policy policies[] = {
    {"least-loaded", choose_least_loaded},
    {"interference", choose_interference},
};
const struct pl_sim_policy *pl_sim_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (strcmp(policies[i].name, name) == 0)
            return &policies[i];
    return NULL;
}

/* ---- the run */
static void place(struct pl_sim_fleet *f, unsigned a, int mi)
{
    struct pl_sim_machine *m = &f->m[mi];
    m->tenant[m->ntenants++] = a;
    m->cpu_used += f->app[a].cpus;
    m->mem_used += f->app[a].mem;
    f->app[a].machine = mi;
}
static void unplace(struct pl_sim_fleet *f, unsigned a)
{
    struct pl_sim_machine *m = &f->m[f->app[a].machine];
    for (unsigned t = 0; t < m->ntenants; t++)
        if (m->tenant[t] == a) {
            memmove(m->tenant + t, m->tenant + t + 1, (m->ntenants - t - 1) * sizeof m->tenant[0]);
            m->ntenants--;
            break;
        }
    m->cpu_used -= f->app[a].cpus;
    m->mem_used -= f->app[a].mem;
    if (m->ntenants == 0)
        m->closed = false; /* closed for its tenants' sake: empty, it harms no one */
    f->app[a].machine = -1;
}

/* ---- recorded truth */
static const char *name_of(const struct profile *p) { return p->name ? p->name : ""; }

const struct pl_sim_pair *pl_sim_records_find(const struct pl_sim_records *r, const char *a, const char *b)
{
    for (unsigned i = 0; r && i < r->n; i++) /* tens of pairs: a scan is enough */
        if (!strcmp(r->pair[i].a, a) && !strcmp(r->pair[i].b, b))
            return &r->pair[i];
    return NULL;
}

void pl_sim_records_free(struct pl_sim_records *r)
{
    for (unsigned i = 0; r->pair && i < r->n; i++) {
        free(r->pair[i].a);
        free(r->pair[i].b);
        free(r->pair[i].rel);
    }
    free(r->pair);
    r->pair = NULL;
    r->n = 0;
}

int pl_sim_records_make(const struct corun_record *recs, unsigned n, struct pl_sim_records *out, char *why,
                        size_t len)
{
    memset(out, 0, sizeof(*out));
    if (n && !(out->pair = calloc(n, sizeof *out->pair)))
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < n; i++) {
        const struct corun_record *c = &recs[i];
        struct pl_sim_pair *p = (struct pl_sim_pair *)pl_sim_records_find(out, c->a.name, c->b.name);
        if (!p) {
            p = &out->pair[out->n++];
            if (!(p->a = strdup(c->a.name)) || !(p->b = strdup(c->b.name)))
                goto oom;
        }
        double *nr = realloc(p->rel, (p->n + c->r.n) * sizeof(double));
        if (!nr)
            goto oom;
        p->rel = nr;
        for (unsigned k = 0; k < c->r.n; k++)
            p->rel[p->n++] = c->r.s[k].relative;
    }
    for (unsigned i = 0; i < out->n; i++) {
        double *t = malloc(out->pair[i].n * sizeof(double));
        if (!t)
            goto oom;
        memcpy(t, out->pair[i].rel, out->pair[i].n * sizeof(double));
        out->pair[i].median = ib_median(t, out->pair[i].n);
        free(t);
    }
    return 0;
oom:
    pl_sim_records_free(out);
    return ib_why(why, len, -ENOMEM, "out of memory");
}

/* a's truth on machine mi: noisy (g: the model's noise and the records' draws) or without noise (g NULL: the
 * model without its noise, each record's median); counts pairs into r when given */
static double truth_at(const struct pl_sim_fleet *f, unsigned mi, unsigned a, struct rng *g, struct pl_sim_result *r)
{
    const struct pl_sim_machine *m = &f->m[mi];
    const struct profile *o[PL_COLOC_MAX_APPS] = {0};
    unsigned n = 0;
    double rec = 1.0;
    for (unsigned t = 0; t < m->ntenants; t++) {
        if (m->tenant[t] == a)
            continue;
        const struct profile *b = f->app[m->tenant[t]].p;
        const struct pl_sim_pair *p = f->records ? pl_sim_records_find(f->records, name_of(f->app[a].p),
                                                                        name_of(b))
                                                 : NULL;
        if (!p || p->n == 0) {
            o[n++] = b;
            if (r && f->records)
                r->truth_model++;
            continue;
        }
        /* one repetition drawn at random: the records' own spread is the truth's noise; capped at 1.0 as the
         * curves are (a co-runner is not taken to speed an application up) */
        rec *= fmin(1.0, g ? p->rel[rng_int(g, 0, p->n - 1)] : p->median);
        if (r)
            r->truth_recorded++;
    }
    double model = pl_sim_truth(f->app[a].p, o, n);
    /* the noise is drawn whether or not it applies, so that the model's stream of draws is what it always was */
    double noise = g ? exp(PL_SIM_NOISE_SD * rng_normal(g)) : 1.0;
    return rec * model * (n ? noise : 1.0); /* alone: 1.0 by definition of relative */
}

static double truth_of(const struct pl_sim_fleet *f, unsigned a, struct rng *g, struct pl_sim_result *r)
{
    return truth_at(f, (unsigned)f->app[a].machine, a, g, r);
}

/* The adaptive step's re-profile of a, found under its QoS on machine mi: where the truth without its noise is under
 * the QoS too, the pressures it breaks at are kept (the oldest replaced); a dip of noise alone teaches nothing. */
static void relearn(struct pl_sim_fleet *f, unsigned mi, unsigned a)
{
    const struct pl_sim_machine *m = &f->m[mi];
    struct pl_sim_app *x = &f->app[a];
    if (truth_at(f, mi, a, NULL, NULL) >= x->qos)
        return;
    if (x->nlearned == PL_SIM_LEARN) { /* full: the oldest goes */
        memmove(x->learned[0], x->learned[1], (PL_SIM_LEARN - 1) * sizeof x->learned[0]);
        x->nlearned--;
    }
    pressure_vec(f, m->tenant, m->ntenants, a, x->learned[x->nlearned++]);
}

/* Evaluates every tenant of machine mi; the adaptive step for those under QoS. */
static void evaluate(struct pl_sim_fleet *f, unsigned mi, const struct pl_sim_policy *pol, struct rng *g,
                     struct pl_sim_result *r, int depth)
{
    unsigned ts[PL_SIM_MAX_TENANTS], n = f->m[mi].ntenants;
    memcpy(ts, f->m[mi].tenant, n * sizeof ts[0]);
    for (unsigned k = 0; k < n; k++) {
        unsigned a = ts[k];
        if (f->app[a].machine != (int)mi)
            continue;
        double t = truth_of(f, a, g, r);
        f->app[a].rate = t;
        if (t < f->app[a].worst)
            f->app[a].worst = t;
        if (t >= f->app[a].qos)
            continue;
        if (!f->app[a].violated) {
            f->app[a].violated = true;
            r->violations++;
        }
        relearn(f, mi, a);
        if (depth > 0)
            continue; /* one adaptive step per event: a move does not cascade */
        unplace(f, a);
        int to = pol->choose(f, a, (int)mi);
        if (to >= 0) {
            place(f, a, to);
            r->moves++;
            evaluate(f, (unsigned)to, pol, g, r, depth + 1);
        } else {
            place(f, a, (int)mi);
            if (!f->m[mi].closed)
                r->closures++;
            f->m[mi].closed = true;
        }
    }
}

int pl_sim_run(struct pl_sim_fleet *f, const struct pl_sim_policy *pol, uint64_t seed, struct pl_sim_result *r,
               char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    r->decide = pol->choose == choose_interference ? pl_coloc_decide_name(f->decide) : NULL;
    if (f->nm == 0)
        return ib_why(why, len, -EINVAL, "the fleet has no machine");
    if (f->napps == 0)
        return ib_why(why, len, -EINVAL, "no application arrives");
    for (unsigned a = 0; a < f->napps; a++) {
        struct pl_sim_app *ap = &f->app[a];
        if (a && ap->arrival < f->app[a - 1].arrival)
            return ib_why(why, len, -EINVAL, "applications not sorted by arrival (app %u)", a);
        ap->machine = -1;
        ap->violated = false;
        ap->worst = 1.0;
        ap->rate = 1.0;
        ap->done = 0;
        ap->nlearned = 0;
        ap->start = ap->end = 0;
        if (ap->duration == 0)
            return ib_why(why, len, -EINVAL, "application %u has no work (duration 0)", a);
    }
    for (unsigned i = 0; i < f->nm; i++)
        f->m[i].ntenants = 0, f->m[i].cpu_used = f->m[i].mem_used = 0, f->m[i].closed = false;
    struct rng g;
    rng_seed(&g, seed ^ 0x5eed0f1ee75111ULL);
    unsigned *queue = calloc(f->napps, sizeof *queue), qn = 0, next = 0, done = 0, cap = 1024;
    bool *started = calloc(f->napps, sizeof *started);
    r->used = malloc(cap * sizeof *r->used);
    if (!queue || !started || !r->used) {
        free(queue), free(started), free(r->used), r->used = NULL;
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    double util_sum = 0, used_sum = 0, useful_sum = 0;
    unsigned busy_secs = 0;
    int rc = 0;
    for (unsigned t = 0; done < f->napps; t++) {
        for (unsigned a = 0; a < f->napps; a++) /* work */
            if (f->app[a].machine >= 0)
                f->app[a].done += f->app[a].rate;
        for (unsigned a = 0; a < f->napps; a++) /* departures; the tenants left behind are evaluated again */
            if (f->app[a].machine >= 0 && f->app[a].done >= f->app[a].duration) {
                unsigned mi = (unsigned)f->app[a].machine;
                unplace(f, a);
                f->app[a].end = t;
                done++;
                if (f->m[mi].ntenants)
                    evaluate(f, mi, pol, &g, r, 0);
            }
        unsigned nq = 0; /* waiting, FIFO */
        for (unsigned k = 0; k < qn; k++) {
            unsigned a = queue[k];
            int mi = pol->choose(f, a, -1);
            if (mi < 0) {
                queue[nq++] = a;
                continue;
            }
            place(f, a, mi), f->app[a].start = t, started[a] = true;
            evaluate(f, (unsigned)mi, pol, &g, r, 0);
        }
        qn = nq;
        if (qn && next == f->napps && done + qn == f->napps) { /* nothing runs: what waits fits no empty machine */
            rc = ib_why(why, len, -EINVAL, "application %u fits no machine of the fleet", queue[0]);
            break;
        }
        for (; next < f->napps && f->app[next].arrival <= t; next++) { /* arrivals */
            int mi = pol->choose(f, next, -1);
            if (mi < 0) {
                queue[qn++] = next;
                r->waited++;
                continue;
            }
            place(f, next, mi), f->app[next].start = t, started[next] = true;
            evaluate(f, (unsigned)mi, pol, &g, r, 0);
        }
        unsigned used = 0;
        double cpus = 0, dem = 0, work = 0;
        for (unsigned i = 0; i < f->nm; i++)
            if (f->m[i].ntenants) {
                used++, cpus += f->m[i].cpus, dem += f->m[i].cpu_used;
                for (unsigned k = 0; k < f->m[i].ntenants; k++)
                    work += f->app[f->m[i].tenant[k]].cpus * fmin(1.0, f->app[f->m[i].tenant[k]].rate);
            }
        if (r->nseries == cap) {
            unsigned *u = realloc(r->used, 2 * cap * sizeof *u);
            if (!u) {
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                break;
            }
            r->used = u, cap *= 2;
        }
        r->used[r->nseries++] = used;
        if (used) {
            busy_secs++, used_sum += used, util_sum += dem / cpus, useful_sum += work / cpus;
            r->peak_used = used > r->peak_used ? used : r->peak_used;
        }
    }
    free(queue);
    free(started);
    if (rc) {
        pl_sim_result_free(r);
        return rc;
    }
    r->napps = f->napps, r->nmachines = f->nm;
    r->worst_rel = 1.0;
    double sum = 0;
    for (unsigned a = 0; a < f->napps; a++) {
        sum += f->app[a].worst;
        r->worst_rel = fmin(r->worst_rel, f->app[a].worst);
    }
    r->mean_rel = sum / f->napps;
    double perf = 0, wait = 0;
    for (unsigned a = 0; a < f->napps; a++) {
        const struct pl_sim_app *ap = &f->app[a];
        perf += ap->duration / (double)(ap->end - ap->start);
        wait += ap->start - ap->arrival;
        r->makespan = ap->end > r->makespan ? ap->end : r->makespan;
    }
    r->mean_perf = perf / f->napps;
    r->mean_wait = wait / f->napps;
    r->utilization = busy_secs ? util_sum / busy_secs : 0;
    r->mean_used = busy_secs ? used_sum / busy_secs : 0;
    r->useful = busy_secs ? useful_sum / busy_secs : 0;
    r->machine_seconds = used_sum;
    return 0;
}

void pl_sim_result_free(struct pl_sim_result *r)
{
    free(r->used);
    memset(r, 0, sizeof *r);
}

/* ---- scenario ibench-200x40 (the iBench paper §V.A's first: 200 applications on 40 machines, one arrival a second) */
static const char *const synth_res[] = {"llc-cap", "llc-bw", "mem-bw", "mem-cap", "l2-cap", "int", "disk-bw", "net-bw"};
#define NSYNTH_RES (sizeof synth_res / sizeof synth_res[0])
/* Classes of synthetic applications: which resources they press hard and are sensitive on. */
static const unsigned synth_hot[4][3] = {{5, 4, 4}, {0, 1, 4}, {2, 3, 1}, {6, 7, 6}}; /* cpu, cache, memory, io */

/* One synthetic profile, shaped like the profiles measured here (docs/placement.md, "The synthetic generator"):
 * - caused: hot resources (the class's) U(10, 40) %, cold ones U(0, 5) %: measured caused figures here run from
 *   within noise of 0 (redis, every SoI) to about 20 (memcached's llc-cap; the dram target's mem-bw);
 * - tolerated: hot U(20, 60) %, cold 100 (half of them: nothing broke them, as most of memcached's and redis's
 *   I/O SoIs) or U(60, 100), rounded down to the ramp's 6.25-point grid;
 * - the curve has a knee, as measured ones do: 0.99 at half the tolerance, QoS + 0.02 at it, QoS - 0.05 one
 *   bisection step (6.25 points) past it, and QoS - U(0.1, 0.4) 25 points past it; with tolerated 100, 0.99 at 50
 *   and 0.97 at 100.  So tolerated is where the curve leaves the QoS, as in a measured profile.  qos 0.9. */
static int synth_profile(struct profile *p, unsigned idx, struct rng *g)
{
    profile_init(p);
    char name[32];
    snprintf(name, sizeof name, "synthetic-%u", idx);
    p->name = strdup(name);
    p->qos = 0.9;
    p->sois = calloc(NSYNTH_RES, sizeof *p->sois);
    if (!p->name || !p->sois)
        return -ENOMEM;
    unsigned cls = rng_int(g, 0, 3);
    for (unsigned k = 0; k < NSYNTH_RES; k++) {
        struct profile_soi *s = &p->sois[k];
        profile_soi_init(s);
        p->nsois++;
        bool hot = synth_hot[cls][0] == k || synth_hot[cls][1] == k || synth_hot[cls][2] == k;
        s->soi = strdup(synth_res[k]);
        s->curve = calloc(4, sizeof *s->curve);
        if (!s->soi || !s->curve)
            return -ENOMEM;
        s->status = PROFILE_MEASURED;
        double tol = hot ? rng_uniform(g, 20, 60) : rng_int(g, 0, 1) ? 100 : rng_uniform(g, 60, 100);
        s->tolerated = floor(tol / 6.25) * 6.25;
        s->have_caused = 1;
        s->caused.value = hot ? rng_uniform(g, 10, 40) : rng_uniform(g, 0, 5);
        s->caused.distinguishable = 1;
        struct profile_point *c = s->curve;
        double t = s->tolerated, q = p->qos;
        if (t >= 100) {
            c[0].intensity = 50, c[0].relative = 0.99;
            c[1].intensity = 100, c[1].relative = 0.97;
            s->ncurve = 2;
        } else {
            c[0].intensity = t / 2, c[0].relative = 0.99;
            c[1].intensity = t, c[1].relative = q + 0.02;
            c[2].intensity = t + 6.25, c[2].relative = q - 0.05;
            c[3].intensity = fmin(100, t + 25), c[3].relative = q - rng_uniform(g, 0.1, 0.4);
            s->ncurve = 4;
        }
    }
    return 0;
}

void pl_sim_scenario_free(struct pl_sim_scenario *s)
{
    for (unsigned i = 0; i < s->nbuiltin; i++)
        profile_free(&s->builtin[i]);
    free(s->builtin);
    for (unsigned i = 0; i < s->nsynth; i++)
        profile_free(&s->synth[i]);
    free(s->synth);
    free(s->f.m);
    free(s->f.app);
    memset(s, 0, sizeof *s);
}

int pl_sim_scenario_make(const char *name, uint64_t seed, const struct profile *const *recorded, unsigned nrec,
                         struct pl_sim_scenario *s, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    /* ibench-200x40-recorded: the same fleet and arrivals, every application a recorded profile (for the recorded
     * truth, which knows only the programs of its co-run records) */
    const bool all_recorded = !strcmp(name, "ibench-200x40-recorded");
    if (strcmp(name, "ibench-200x40") != 0 && !all_recorded)
        return ib_why(why, len, -EINVAL, "unknown scenario '%s' (known: ibench-200x40, ibench-200x40-recorded)", name);
    const unsigned nm = 40, na = 200, nsynth = 64;
    const struct profile *builtin[64];
    if (all_recorded && recorded && nrec == 0)
        return ib_why(why, len, -EINVAL, "scenario '%s' needs recorded profiles", name);
    if (!recorded) { /* the built-in pool: parsed as a file would be; a bad one is a build defect, refused alike */
        if (pl_nrecorded > sizeof builtin / sizeof builtin[0])
            return ib_why(why, len, -EINVAL, "%u built-in profiles: at most 64", pl_nrecorded);
        if (pl_nrecorded && !(s->builtin = calloc(pl_nrecorded, sizeof *s->builtin)))
            return ib_why(why, len, -ENOMEM, "out of memory");
        for (unsigned i = 0; i < pl_nrecorded; i++) {
            int rc = profile_parse(pl_recorded[i].text, pl_recorded[i].name, &s->builtin[i], why, len);
            if (rc < 0) {
                pl_sim_scenario_free(s);
                return rc;
            }
            builtin[s->nbuiltin++] = &s->builtin[i];
        }
        recorded = builtin, nrec = s->nbuiltin;
    }
    struct rng g;
    rng_seed(&g, seed);
    s->f.m = calloc(nm, sizeof *s->f.m);
    s->f.app = calloc(na, sizeof *s->f.app);
    s->synth = calloc(nsynth, sizeof *s->synth);
    if (!s->f.m || !s->f.app || !s->synth) {
        pl_sim_scenario_free(s);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    s->f.nm = nm, s->f.napps = na;
    /* the iBench paper §V.A: "dual socket, 4-12 core machines" with 16-48 GB.  The count is per machine: the same paper calls
     * its own two quad-core Nehalems "a dual-socket, 8-core" server (§III).  So 2 sockets of 2-6 cores, one CPU a
     * core. */
    static const double gib[] = {16, 24, 32, 48};
    for (unsigned i = 0; i < nm; i++) {
        snprintf(s->f.m[i].name, sizeof s->f.m[i].name, "m%02u", i);
        s->f.m[i].cpus = 2 * rng_int(&g, 2, 6);
        s->f.m[i].mem = gib[rng_int(&g, 0, 3)] * 1073741824.0;
    }
    for (unsigned i = 0; i < nsynth; i++) {
        s->nsynth++;
        if (synth_profile(&s->synth[i], i, &g) != 0) {
            pl_sim_scenario_free(s);
            return ib_why(why, len, -ENOMEM, "out of memory");
        }
    }
    /* Applications: a recorded profile one time in four (when there are any), else a synthetic one; 1-4 CPUs,
     * 1-8 GiB; durations uniform 60-600 s (documented in the doc: the paper gives none). */
    for (unsigned a = 0; a < na; a++) {
        struct pl_sim_app *ap = &s->f.app[a];
        bool rec = nrec && (rng_int(&g, 0, 3) == 0 || all_recorded); /* drawn either way: the same stream */
        unsigned pick = rng_int(&g, 0, rec ? nrec - 1 : nsynth - 1);
        ap->p = rec ? recorded[pick] : &s->synth[pick];
        ap->qos = isfinite(ap->p->qos) && ap->p->qos > 0 ? ap->p->qos : 0.9;
        ap->cpus = rng_int(&g, 1, 4);
        ap->mem = rng_int(&g, 1, 8) * 1073741824.0;
        ap->arrival = a;
        ap->duration = rng_int(&g, 60, 600);
        ap->machine = -1;
    }
    return 0;
}

/* ---- JSON (jansson, keys in a fixed order: the same result gives the same bytes) */
char *pl_sim_json(const char *scenario, const char *policy, uint64_t seed, const char *truth,
                  const struct pl_sim_result *r)
{
    json_t *used = json_array();
    for (unsigned i = 0; used && i < r->nseries; i++)
        json_array_append_new(used, json_integer(r->used[i]));
    json_t *doc = json_object();
    if (!doc || !used) {
        json_decref(doc), json_decref(used);
        return NULL;
    }
    json_object_set_new(doc, "command", json_string("place simulate"));
    json_object_set_new(doc, "scenario", json_string(scenario));
    json_object_set_new(doc, "policy", json_string(policy));
    json_object_set_new(doc, "seed", json_integer((json_int_t)seed));
    json_t *tr = json_pack("{s:s}", "kind", truth);
    if (tr && !strcmp(truth, "recorded")) {
        unsigned long all = r->truth_recorded + r->truth_model;
        json_object_set_new(tr, "pairs_recorded", json_integer((json_int_t)r->truth_recorded));
        json_object_set_new(tr, "pairs_model", json_integer((json_int_t)r->truth_model));
        json_object_set_new(tr, "share_recorded", all ? json_real((double)r->truth_recorded / all) : json_null());
    }
    json_object_set_new(doc, "truth", tr);
    if (r->decide) /* the interference policy's: what decided */
        json_object_set_new(doc, "decide", json_string(r->decide));
    json_object_set_new(doc, "apps", json_integer(r->napps));
    json_object_set_new(doc, "machines", json_integer(r->nmachines));
    json_object_set_new(doc, "qos_violations", json_integer(r->violations));
    json_object_set_new(doc, "adaptive_moves", json_integer(r->moves));
    json_object_set_new(doc, "machines_closed", json_integer(r->closures));
    json_object_set_new(doc, "waited", json_integer(r->waited));
    json_object_set_new(doc, "mean_relative", json_real(r->mean_rel));
    json_object_set_new(doc, "worst_relative", json_real(r->worst_rel));
    json_object_set_new(doc, "mean_performance", json_real(r->mean_perf));
    json_object_set_new(doc, "mean_wait_s", json_real(r->mean_wait));
    json_object_set_new(doc, "utilization", json_real(r->utilization));
    json_object_set_new(doc, "useful_utilization", json_real(r->useful));
    json_object_set_new(doc, "machine_seconds", json_real(r->machine_seconds));
    json_object_set_new(doc, "mean_machines_used", json_real(r->mean_used));
    json_object_set_new(doc, "peak_machines_used", json_integer(r->peak_used));
    json_object_set_new(doc, "makespan_s", json_integer(r->makespan));
    json_object_set_new(doc, "machines_used", used);
    char *text = json_dumps(doc, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6) | JSON_INDENT(2));
    json_decref(doc);
    if (!text)
        return NULL;
    /* a trailing newline, as every ibench JSON document */
    size_t n = strlen(text);
    char *out = realloc(text, n + 2);
    if (!out) {
        free(text);
        return NULL;
    }
    out[n] = '\n', out[n + 1] = 0;
    return out;
}
