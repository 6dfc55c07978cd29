/* cmd_place_check.c - `ibench place predict --check`: do the profiles predict measured co-runs on this machine, and
 * are the decisions made from them right?  Each co-run record is predicted from one profile set (--profiles DIR,
 * repeatable: one report per set) and scored beside two baselines, the constant 1.0 and the per-group means; the
 * decisions `place pair` makes are set against the measured truth; the gain in mean absolute error over each baseline
 * gets a paired bootstrap interval (placement/coloc/pl_check.h).  docs/placement.md, "Do profiles predict here?". */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "corun.h"
#include "ib_err.h"
#include "pl_check.h"
#include "pl_coloc.h"
#include "pl_wmodel.h"
#include "place.h"
#include "render.h"

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* One profile of DIR/NAME.json: 0, or an exit code after one line.  quiet: the profile reader's warning is not shown
 * (a profile read only to place a record of the other half in its group). */
static int profile_of(const char *cmd, const char *dir, const char *name, struct profile *p, char *path, size_t plen,
                      bool quiet)
{
    if (!name[0] || strchr(name, '/') || snprintf(path, plen, "%s/%s.json", dir, name) >= (int)plen)
        return cli_fail(IB_EXIT_USAGE, cmd, "no profile can be named for program '%s' in %s", name, dir);
    char why[512];
    int rc = profile_read(path, p, why, sizeof why);
    if (rc < 0)
        return cli_fail(rc == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, cmd, "%s", why);
    if (!quiet)
        cli_profile_warn(cmd, p);
    return 0;
}

static json_t *stats_json(const struct pl_check_stats *s)
{
    return json_pack("{s:i,s:o,s:o,s:i,s:{s:i,s:i,s:i,s:i},s:o,s:o}", "n", (int)s->n, "mae", num_or_null(s->mae),
                     "rank_corr", num_or_null(s->rank_corr), "within_2se", (int)s->within_2se, "confusion", "tp",
                     (int)s->tp, "fp", (int)s->fp, "fn", (int)s->fn, "tn", (int)s->tn, "precision",
                     num_or_null(s->precision), "recall", num_or_null(s->recall));
}

static void fmt3(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.3f", fabs(v) < 0.0005 ? 0.0 : v); /* no "-0.000" */
    else
        snprintf(b, n, "-");
}

static void check_table(json_t *doc, const struct pl_check_stats *m, const struct pl_check_stats *k, double qos)
{
    printf("%-28s %-12s %-12s %9s %9s %7s %8s\n", "record", "A", "B", "predicted", "measured", "se", "error");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "records"), i, r)
    {
        double pr = json_real_value(json_object_get(r, "predicted")),
               me = json_real_value(json_object_get(r, "measured")), se = json_number_value(json_object_get(r, "se"));
        char sb[16];
        fmt3(sb, sizeof sb, json_is_number(json_object_get(r, "se")) ? se : NAN);
        const char *file = json_string_value(json_object_get(r, "file"));
        const char *base = strrchr(file, '/');
        printf("%-28.28s %-12.12s %-12.12s %9.3f %9.3f %7s %+8.3f%s\n", TTY_TEXT(base ? base + 1 : file),
               TTY_TEXT(json_string_value(json_object_get(r, "a"))),
               TTY_TEXT(json_string_value(json_object_get(r, "b"))), pr, me, sb, pr - me, me < qos ? "  unsafe" : "");
    }
    char a[16], b[16];
    printf("\n%u records; \"unsafe\" = relative below %.2f (measured: %u)\n\n%-30s %12s %14s\n", m->n, qos,
           m->tp + m->fn, "", "model", "constant 1.0");
    fmt3(a, sizeof a, m->mae), fmt3(b, sizeof b, k->mae);
    printf("%-30s %12s %14s\n", "mean absolute error", a, b);
    fmt3(a, sizeof a, m->rank_corr), fmt3(b, sizeof b, k->rank_corr);
    printf("%-30s %12s %14s\n", "rank correlation", a, b);
    snprintf(a, sizeof a, "%u/%u", m->within_2se, m->n), snprintf(b, sizeof b, "%u/%u", k->within_2se, k->n);
    printf("%-30s %12s %14s\n", "within 2 se of the measurement", a, b);
    snprintf(a, sizeof a, "%u/%u", m->tp, m->tp + m->fp), snprintf(b, sizeof b, "%u/%u", k->tp, k->tp + k->fp);
    printf("%-30s %12s %14s\n", "precision (unsafe)", a, b);
    snprintf(a, sizeof a, "%u/%u", m->tp, m->tp + m->fn), snprintf(b, sizeof b, "%u/%u", k->tp, k->tp + k->fn);
    printf("%-30s %12s %14s\n", "recall (unsafe)", a, b);
    printf("%-30s %12s %14s\n", "confusion tp fp fn tn", "", "");
    snprintf(a, sizeof a, "%u %u %u %u", m->tp, m->fp, m->fn, m->tn);
    snprintf(b, sizeof b, "%u %u %u %u", k->tp, k->fp, k->fn, k->tn);
    printf("%-30s %12s %14s\n", "", a, b);
    if (isfinite(m->mae) && isfinite(k->mae))
        printf("\nThe model's mean absolute error is %s the constant's on these records.\n",
               m->mae < k->mae ? "below" : m->mae > k->mae ? "ABOVE" : "equal to");
}

/* A predictor against the constant: 1 when its mean absolute error is lower by at least PL_CHECK_TIE, -1 when higher
 * by as much, else 0 (a tie: differences under half a point of relative performance are no skill to claim). */
#define PL_CHECK_TIE 0.005
static int beats(const struct pl_check_stats *s, const struct pl_check_stats *k)
{
    return s->mae <= k->mae - PL_CHECK_TIE ? 1 : s->mae >= k->mae + PL_CHECK_TIE ? -1 : 0;
}

/* One record of place predict --check, with its programs' profiles from one set. */
struct pc_rec {
    const char *file;
    char pa[4096], pb[4096];
    struct profile p[2]; /* A's and B's; a record of the other half holds B's only (its group) */
    char *a, *b;
    double measured, se;
    int half, io; /* its half of the split (0 A, 1 B); B I/O-bound: its group in the per-group baseline */
};

/* The records read against one profile set: r[0..m) those scored (complete, of the half asked for), in the order
 * given; ro[0..mo) the complete records of the other half, which only fit the per-group baseline. */
struct pc_set {
    const char *dir;
    struct pc_rec *r, *ro;
    unsigned m, mo, other_half, incomplete;
    json_t *warn;
};

static void pc_set_free(struct pc_set *s)
{
    for (unsigned i = 0; s->r && i < s->m; i++) {
        profile_free(&s->r[i].p[0]);
        profile_free(&s->r[i].p[1]);
        free(s->r[i].a);
        free(s->r[i].b);
    }
    for (unsigned i = 0; s->ro && i < s->mo; i++) {
        profile_free(&s->ro[i].p[1]);
        free(s->ro[i].a);
        free(s->ro[i].b);
    }
    free(s->r);
    free(s->ro);
    json_decref(s->warn);
    memset(s, 0, sizeof *s);
}

static void pc_warn(const char *cmd, struct pc_set *s, int json, const char *w)
{
    json_array_append_new(s->warn, json_string(w));
    if (!json)
        fprintf(stderr, "ibench %s: warning: %s\n", cmd, TTY_TEXT(w));
}

/* Every record read, its profiles from s->dir: 0, or an exit code after one line. */
static int pc_load(const char *cmd, char **recs, unsigned n, const char *dir, int half, int json, struct pc_set *s)
{
    memset(s, 0, sizeof *s);
    s->dir = dir;
    s->r = calloc(n ? n : 1, sizeof *s->r);
    s->ro = calloc(n ? n : 1, sizeof *s->ro);
    s->warn = json_array();
    if (!s->r || !s->ro || !s->warn)
        return cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    int rc = 0;
    for (unsigned i = 0; rc == 0 && i < n; i++) {
        struct corun_record rec;
        char why[512];
        if (corun_read(recs[i], &rec, why, sizeof why) < 0)
            return cli_fail(IB_EXIT_USAGE, cmd, "%s", why);
        const int h = pl_check_half(rec.a.name, rec.b.name), in = half < 0 || h == half;
        s->other_half += !in;
        if (!rec.complete) { /* stopped part way (docs/corun.md, "Interrupted"): fewer repetitions than the co-run
                              * asked for, not the measurement it meant to be; skipped, said when it is scored */
            if (in) {
                char w[4600];
                snprintf(w, sizeof w, "%s skipped: an incomplete record (%s)", recs[i], rec.reason ? rec.reason : "");
                pc_warn(cmd, s, json, w);
                s->incomplete++;
            }
            corun_free(&rec);
            continue;
        }
        struct pc_rec *x = in ? &s->r[s->m] : &s->ro[s->mo];
        if (!in) /* B's profile alone, for its group; its warnings belong to the half that scores it */
            rc = profile_of(cmd, dir, rec.b.name, &x->p[1], x->pb, sizeof x->pb, true);
        else if ((rc = profile_of(cmd, dir, rec.a.name, &x->p[0], x->pa, sizeof x->pa, false)) == 0 &&
                 (rc = profile_of(cmd, dir, rec.b.name, &x->p[1], x->pb, sizeof x->pb, false)) != 0)
            profile_free(&x->p[0]);
        if (rc == 0) {
            x->file = recs[i], x->measured = rec.r.relative, x->se = rec.r.se;
            x->half = h, x->io = pl_check_io_bound(&x->p[1]);
            x->a = strdup(rec.a.name), x->b = strdup(rec.b.name);
            if (in)
                s->m++;
            else
                s->mo++;
            if (!x->a || !x->b)
                rc = cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
            for (int k = 0; in && k < 2; k++) /* a prediction from another machine's profile is no test of this one */
                if (x->p[k].fingerprint && rec.fingerprint && strcmp(x->p[k].fingerprint, rec.fingerprint) != 0) {
                    char w[9300];
                    snprintf(w, sizeof w, "%s was measured on machine %s, %s profiled on %s", recs[i],
                             rec.fingerprint, k ? x->pb : x->pa, x->p[k].fingerprint);
                    pc_warn(cmd, s, json, w);
                }
        }
        corun_free(&rec);
    }
    if (rc == 0 && s->m == 0 && s->incomplete)
        rc = cli_fail(IB_EXIT_USAGE, cmd, "no complete record to grade: %u incomplete, skipped", s->incomplete);
    else if (rc == 0 && s->m == 0)
        rc = cli_fail(IB_EXIT_USAGE, cmd, "no record in half %c (%u in the other)", half ? 'B' : 'A', s->other_half);
    return rc;
}

/* Each record's prediction by rule r (only non-NULL: that resource alone); with lo and hi, also the model's bounds
 * (pessimistic, optimistic reading) from the same prediction, NAN where r is not the model (only it has bounds). */
static void pc_cases_bounds(const struct pc_rec *r, unsigned n, const struct pl_pred_rule *rule, const char *only,
                            struct pl_check_case *c, double *lo, double *hi)
{
    for (unsigned i = 0; i < n; i++) {
        const struct profile *others[1] = {&r[i].p[1]};
        double pred;
        if (lo && rule->windows) {
            struct pl_wm_pred p;
            const int ok = pl_wm_predict(&r[i].p[0], others, 1, rule->min ? PL_WM_MIN : PL_WM_PRODUCT, only, &p) == 0;
            pred = ok ? p.rel : NAN, lo[i] = ok ? p.lo : NAN, hi[i] = ok ? p.hi : NAN;
        } else {
            pred = pl_predict(&r[i].p[0], others, 1, rule, only);
            if (lo)
                lo[i] = hi[i] = NAN;
        }
        c[i] = (struct pl_check_case){pred, r[i].measured, r[i].se};
    }
}

static void pc_cases(const struct pc_rec *r, unsigned n, const struct pl_pred_rule *rule, const char *only,
                     struct pl_check_case *c)
{
    pc_cases_bounds(r, n, rule, only, c, NULL, NULL);
}

static void stats_row(const char *label, const struct pl_check_stats *s, const char *note)
{
    char m[16], rc[16], w[16], pr[16], re[16];
    fmt3(m, sizeof m, s->mae), fmt3(rc, sizeof rc, s->rank_corr);
    snprintf(w, sizeof w, "%u/%u", s->within_2se, s->n);
    snprintf(pr, sizeof pr, "%u/%u", s->tp, s->tp + s->fp), snprintf(re, sizeof re, "%u/%u", s->tp, s->tp + s->fn);
    printf("%-22s %7s %9s %10s %9s %7s%s%s\n", TTY_TEXT(label), m, rc, w, pr, re, note ? "  " : "", note ? note : "");
}

/* ---- the decisions, the per-group baseline and the bootstrap ------------------------------------------------------ */

/* The options `place pair` decides with (the model): --check scores the default reading (--refuse likely: an
 * uncertain pair refused when a member's point prediction is under its QoS line) beside the uncertain kept
 * (established) and refused; and the headroom rule's (the default before 1.7), scored beside it for comparison. */
static const struct pl_coloc_opts pc_pair_opts = {.margin = PL_COLOC_MARGIN, .pessimistic = true, .established = true};
static const struct pl_coloc_opts pc_likely_opts = {.margin = PL_COLOC_MARGIN, .pessimistic = true,
                                                    .established = true, .likely = true};
static const struct pl_coloc_opts pc_head_opts = {.margin = PL_COLOC_MARGIN, .pessimistic = true, .established = true,
                                                  .decide = PL_DECIDE_HEADROOM};
#define PC_NDEC 4 /* place pair (the model), headroom, per group, constant */

static json_t *dec_json(const struct pl_check_dec *d)
{
    json_t *o = json_object();
    const char *const truth[] = {"breaks", "safe", "unclear"};
    for (int t = 0; t < 3; t++)
        json_object_set_new(o, truth[t], json_pack("{s:i,s:i,s:i}", "refused", (int)d->n[t][PL_COLOC_UNSAFE],
                                                   "uncertain", (int)d->n[t][PL_COLOC_UNCERTAIN], "kept",
                                                   (int)d->n[t][PL_COLOC_SAFE]));
    json_object_set_new(o, "recall", json_pack("{s:o,s:o}", "uncertain_kept", num_or_null(d->recall_kept),
                                               "uncertain_refused", num_or_null(d->recall_refused)));
    json_object_set_new(o, "false_refusals", json_pack("{s:o,s:o}", "uncertain_kept", num_or_null(d->false_kept),
                                                       "uncertain_refused", num_or_null(d->false_refused)));
    return o;
}

/* place pair's decisions (established: uncertain marked) and its default reading's recall and false refusals */
static json_t *pair_json(const struct pl_check_dec *d, const struct pl_check_dec *likely)
{
    json_t *o = dec_json(d);
    json_object_set_new(json_object_get(o, "recall"), "likely", num_or_null(likely->recall_kept));
    json_object_set_new(json_object_get(o, "false_refusals"), "likely", num_or_null(likely->false_kept));
    return o;
}

/* One row of the bootstrap: its records (idx[0..k) into the scored ones) against both baselines. */
struct pc_boot_row {
    const char *label;
    unsigned k;
    struct pl_boot constant, group;
};

static int pc_boot_row(const struct pl_check_case *c, const double *grp, const unsigned *idx, unsigned k,
                       uint64_t seed, struct pc_boot_row *row)
{
    double *v = malloc(4 * (size_t)(k ? k : 1) * sizeof(double));
    if (!v)
        return -ENOMEM;
    double *meas = v, *model = v + k, *one = v + 2 * k, *g = v + 3 * k;
    for (unsigned j = 0; j < k; j++)
        meas[j] = c[idx[j]].measured, model[j] = c[idx[j]].predicted, one[j] = 1.0, g[j] = grp[idx[j]];
    row->k = k;
    int e = pl_check_bootstrap(meas, model, one, k, PL_BOOT_RESAMPLES, seed, &row->constant);
    if (e == 0)
        e = pl_check_bootstrap(meas, model, g, k, PL_BOOT_RESAMPLES, seed, &row->group);
    free(v);
    return e;
}

static json_t *boot_json(const struct pl_boot *b)
{
    return json_pack("{s:o,s:o,s:o}", "gain", num_or_null(b->gain), "lo", num_or_null(b->lo), "hi", num_or_null(b->hi));
}

static void fmt_interval(char *buf, size_t len, const struct pl_boot *b)
{
    snprintf(buf, len, "%+.3f [%+.3f, %+.3f]", b->gain, b->lo, b->hi);
}

static const char *boot_words(const struct pl_boot *b)
{
    return b->lo > 0 ? "skill (the interval lies above 0)" : b->hi < 0 ? "WORSE (the interval lies below 0)"
                                                          : "no skill shown (the interval holds 0)";
}

static void print_dec_line(const char *label, const struct pl_check_dec *d, int t)
{
    char c[PC_NDEC][24];
    for (int k = 0; k < PC_NDEC; k++) {
        const unsigned *x = d[k].n[t];
        if (k < 2)
            snprintf(c[k], sizeof c[k], "%u/%u/%u", x[PL_COLOC_UNSAFE], x[PL_COLOC_UNCERTAIN], x[PL_COLOC_SAFE]);
        else /* the baselines have no uncertain decision */
            snprintf(c[k], sizeof c[k], "%u/-/%u", x[PL_COLOC_UNSAFE], x[PL_COLOC_SAFE]);
    }
    printf("%-44s %12s %12s %12s %13s\n", label, c[0], c[1], c[2], c[3]);
}

static void print_rate_line(const char *label, const struct pl_check_dec *d, int recall, int refused)
{
    char c[PC_NDEC][24];
    for (int k = 0; k < PC_NDEC; k++) {
        const unsigned *x = d[k].n[recall ? PL_TRUTH_BREAK : PL_TRUTH_SAFE];
        unsigned num = x[PL_COLOC_UNSAFE] + (refused ? x[PL_COLOC_UNCERTAIN] : 0);
        snprintf(c[k], sizeof c[k], "%u/%u", num, recall ? d[k].breaks : d[k].safe);
    }
    printf("%-44s %12s %12s %12s %13s\n", label, c[0], c[1], c[2], c[3]);
}

/* The report of one set: its document, and the table unless json. */
static int pc_report(const char *cmd, struct pc_set *s, const struct place_check_args *a, json_t **out)
{
    const unsigned m = s->m, mo = s->mo, all = m + mo;
    const int json = a->json, half = a->half, fit = a->fit;
    const double qos = a->qos;
    const struct pl_pred_rule *dflt = pl_pred_rule_find(PL_PRED_DEFAULT), *rule = a->rule ? a->rule : dflt,
                              *tru = pl_pred_rule_find(PL_PRED_TRUTH);
    struct pc_rec *r = s->r;
    struct pl_check_case *cases = calloc(m, sizeof *cases), *gcases = calloc(m, sizeof *gcases);
    double *meas = calloc(all, sizeof(double)), *grp = calloc(all, sizeof(double));
    double *blo = calloc(m ? m : 1, sizeof(double)), *bhi = calloc(m ? m : 1, sizeof(double));
    int *group = calloc(all, sizeof(int)), *hf = calloc(all, sizeof(int));
    unsigned *idx = calloc(m, sizeof(unsigned));
    enum pl_coloc_verdict *dec = calloc((PC_NDEC + 1) * (size_t)m, sizeof *dec); /* the last m: --refuse likely's */
    json_t *doc = json_object(), *arr = json_array(), *fits = json_array(), *resj = json_array();
    int rc = cases && gcases && meas && grp && blo && bhi && group && hf && idx && dec && doc && arr && fits && resj
                 ? 0
                 : cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    if (rc == 0 && fit) {
        struct pl_check_stats best = {0};
        for (unsigned k = 0; k < pl_pred_nrules; k++) {
            struct pl_check_stats st;
            pc_cases(r, m, &pl_pred_rules[k], NULL, cases);
            pl_check_eval(cases, m, qos, 0, 0, &st);
            json_t *fj = stats_json(&st);
            json_object_set_new(fj, "rule", json_string(pl_pred_rules[k].name));
            json_array_append_new(fits, fj);
            if (k == 0 || st.mae < best.mae || (st.mae == best.mae && st.within_2se > best.within_2se))
                best = st, rule = &pl_pred_rules[k];
        }
    }
    struct pl_check_stats model, constant, deflt, truth_st, group_st;
    struct pl_check_coverage cover;
    struct pl_check_dec dtab[PC_NDEC]; /* place pair (the model), headroom, per group, constant */
    struct pl_check_dec dlik[PC_NDEC]; /* the same with place pair's default reading (--refuse likely) first */
    struct pc_boot_row rows[2];
    unsigned nrows = 0;
    double gmean[2][2];
    unsigned gcount[2][2];
    const char *seen[PROFILE_MAX_SOIS];
    unsigned nres = 0;
    struct pl_check_stats *rst = NULL;
    if (rc == 0) {
        pc_cases(r, m, tru, NULL, cases);
        pl_check_eval(cases, m, qos, 0, 0, &truth_st);
        pc_cases(r, m, dflt, NULL, cases);
        pl_check_eval(cases, m, qos, 0, 0, &deflt);
        pc_cases_bounds(r, m, rule, NULL, cases, blo, bhi);
        pl_check_eval(cases, m, qos, 0, 0, &model);
        pl_check_eval(cases, m, qos, 1, 1.0, &constant);
        pl_check_cover(cases, blo, bhi, m, &cover);
        /* the per-group baseline, cross-fitted over every complete record read, of either half */
        for (unsigned i = 0; i < all; i++) {
            const struct pc_rec *x = i < m ? &r[i] : &s->ro[i - m];
            meas[i] = x->measured, group[i] = x->io, hf[i] = x->half;
        }
        pl_check_group_fit(meas, group, hf, all, grp, gmean, gcount);
        for (unsigned i = 0; i < m; i++)
            gcases[i] = (struct pl_check_case){grp[i], r[i].measured, r[i].se};
        pl_check_eval(gcases, m, qos, 0, 0, &group_st);
        /* the decisions: place pair's on each record's pair; the baselines' from their predictions */
        for (unsigned i = 0; i < m; i++) {
            dec[i] = pl_check_decision(&r[i].p[0], &r[i].p[1], &pc_pair_opts);
            dec[m + i] = pl_check_decision(&r[i].p[0], &r[i].p[1], &pc_head_opts);
            dec[2 * m + i] = pl_check_decision_of(grp[i], qos);
            dec[3 * m + i] = pl_check_decision_of(1.0, qos);
        }
        for (unsigned i = 0; i < m; i++)
            dec[PC_NDEC * m + i] = pl_check_decision(&r[i].p[0], &r[i].p[1], &pc_likely_opts);
        for (int k = 0; k < PC_NDEC; k++)
            pl_check_decisions(cases, dec + (size_t)k * m, m, qos, &dtab[k]);
        memcpy(dlik, dtab, sizeof dlik);
        pl_check_decisions(cases, dec + (size_t)PC_NDEC * m, m, qos, &dlik[0]);
        /* the bootstrap: the held-out half and all records (or the one half asked for) */
        unsigned k = 0;
        if (half < 0) {
            for (unsigned i = 0; i < m; i++)
                if (r[i].half == 1)
                    idx[k++] = i;
            if (k) {
                rows[nrows].label = "half B (held out)";
                if (pc_boot_row(cases, grp, idx, k, a->seed, &rows[nrows]) < 0)
                    rc = cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
                nrows++;
            }
        }
        for (k = 0; k < m; k++)
            idx[k] = k;
        rows[nrows].label = half < 0 ? "all" : half ? "half B" : "half A";
        if (rc == 0 && pc_boot_row(cases, grp, idx, m, a->seed, &rows[nrows]) < 0)
            rc = cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
        nrows++;
    }
    if (rc == 0) {
        for (unsigned i = 0; i < m; i++) {
            json_t *rj = json_pack("{s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:o}", "file", r[i].file, "a", r[i].a, "b", r[i].b,
                                   "a_profile", r[i].pa, "b_profile", r[i].pb, "predicted", cases[i].predicted,
                                   "measured", cases[i].measured, "se", num_or_null(cases[i].se));
            json_object_set_new(rj, "lo", num_or_null(blo[i]));
            json_object_set_new(rj, "hi", num_or_null(bhi[i]));
            json_object_set_new(rj, "half", json_string(r[i].half ? "B" : "A"));
            json_object_set_new(rj, "b_io_bound", json_boolean(r[i].io));
            json_object_set_new(rj, "per_group", json_real(grp[i]));
            json_object_set_new(rj, "truth", json_string(pl_truth_name(pl_check_truth(r[i].measured, r[i].se, qos))));
            json_object_set_new(rj, "decision", json_string(pl_check_decision_name(dec[PC_NDEC * m + i])));
            json_object_set_new(rj, "decision_established", json_string(pl_check_decision_name(dec[i])));
            json_object_set_new(rj, "decision_headroom", json_string(pl_check_decision_name(dec[m + i])));
            json_array_append_new(arr, rj);
        }
        /* per resource: A's curve on that resource alone, at what B causes there */
        for (unsigned i = 0; i < m; i++)
            for (unsigned k = 0; k < r[i].p[0].nsois && nres < PROFILE_MAX_SOIS; k++) {
                const struct profile_soi *so = &r[i].p[0].sois[k];
                unsigned j = 0;
                while (j < nres && strcmp(seen[j], so->soi) != 0)
                    j++;
                if (j == nres && so->status == PROFILE_MEASURED)
                    seen[nres++] = so->soi;
            }
        struct pl_check_case *one = calloc(m, sizeof *one);
        rst = calloc(nres ? nres : 1, sizeof *rst);
        if (!one || !rst)
            nres = 0;
        for (unsigned j = 0; j < nres; j++) {
            pc_cases(r, m, rule, seen[j], one);
            pl_check_eval(one, m, qos, 0, 0, &rst[j]);
            json_t *sj = stats_json(&rst[j]);
            json_object_set_new(sj, "resource", json_string(seen[j]));
            json_object_set_new(sj, "versus_constant", json_string(beats(&rst[j], &constant) > 0   ? "beats"
                                                                   : beats(&rst[j], &constant) < 0 ? "worse"
                                                                                                   : "ties"));
            json_array_append_new(resj, sj);
        }
        free(one);
        json_object_set_new(doc, "command", json_string("place predict --check"));
        json_object_set_new(doc, "profiles", json_string(s->dir));
        json_object_set_new(doc, "qos", json_real(qos));
        json_object_set_new(doc, "half", json_string(half < 0 ? "all" : half ? "B" : "A"));
        json_object_set_new(doc, "rule", json_string(rule->name));
        json_object_set_new(doc, "records", arr);
        arr = NULL;
        json_object_set_new(doc, "model", stats_json(&model));
        json_object_set_new(doc, "constant", stats_json(&constant));
        json_object_set_new(doc, "bounds", rule->windows ? json_pack("{s:i,s:i,s:i}", "n", (int)cover.n, "inside",
                                                                     (int)cover.inside, "inside_2se",
                                                                     (int)cover.inside_2se)
                                                         : json_null());
        json_object_set_new(doc, "default_rule", stats_json(&deflt));
        json_object_set_new(doc, "truth_rule", stats_json(&truth_st));
        json_object_set_new(doc, "fit", fit ? fits : json_null());
        if (fit) /* else unused, released below */
            fits = NULL;
        json_object_set_new(doc, "resources", resj);
        resj = NULL;
        json_t *groups = json_array();
        for (int h = 0; h < 2; h++)
            for (int g = 1; g >= 0; g--)
                json_array_append_new(groups, json_pack("{s:s,s:b,s:i,s:o}", "half", h ? "B" : "A", "b_io_bound", g,
                                                        "n", (int)gcount[h][g], "mean", num_or_null(gmean[h][g])));
        json_object_set_new(doc, "per_group",
                            json_pack("{s:f,s:o,s:o}", "io_some_pct", PL_CHECK_IO_SOME_PCT, "groups", groups,
                                      "stats", stats_json(&group_st)));
        json_object_set_new(doc, "decisions",
                            json_pack("{s:f,s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "margin", pc_pair_opts.margin, "unknown",
                                      "pessimistic", "default", "likely", "decide", "model", "place_pair",
                                      pair_json(&dtab[0], &dlik[0]), "headroom", dec_json(&dtab[1]), "per_group",
                                      dec_json(&dtab[2]), "constant", dec_json(&dtab[3])));
        json_t *bj = json_array();
        for (unsigned k = 0; k < nrows; k++)
            json_array_append_new(bj, json_pack("{s:s,s:i,s:o,s:o}", "records", rows[k].label, "n", (int)rows[k].k,
                                                "constant", boot_json(&rows[k].constant), "per_group",
                                                boot_json(&rows[k].group)));
        json_object_set_new(doc, "bootstrap", json_pack("{s:i,s:I,s:f,s:o}", "resamples", PL_BOOT_RESAMPLES, "seed",
                                                        (json_int_t)a->seed, "level", 0.95, "rows", bj));
        json_object_set_new(doc, "warnings", json_incref(s->warn));
    }
    if (rc == 0 && !json) {
        if (fit) {
            printf("Rules fitted on %u records (half %s): the lowest mean absolute error is selected\n\n", m,
                   half < 0 ? "all" : half ? "B" : "A");
            printf("%-22s %7s %9s %10s %9s %7s\n", "rule", "MAE", "rank corr", "within 2se", "precision", "recall");
            for (unsigned k = 0; k < pl_pred_nrules; k++) {
                struct pl_check_stats st;
                struct pl_check_case *c = calloc(m, sizeof *c);
                if (!c)
                    break;
                pc_cases(r, m, &pl_pred_rules[k], NULL, c);
                pl_check_eval(c, m, qos, 0, 0, &st);
                free(c);
                stats_row(pl_pred_rules[k].name, &st, &pl_pred_rules[k] == rule ? "selected" : NULL);
            }
            printf("\n");
        }
        printf("rule %s%s, half %s\n\n", rule->name, rule == dflt ? " (the default)" : "",
               half < 0 ? "all" : half ? "B" : "A");
        check_table(doc, &model, &constant, qos);
        if (rule->windows)
            printf("The model's bounds (its pessimistic and optimistic readings: the profiles' noise only) hold the\n"
                   "measured figure in %u/%u records, %u/%u within 2 se of the measurement.\n",
                   cover.inside, cover.n, cover.inside_2se, cover.n);
        printf("\n%s on the same records:\n", rule != dflt ? "the default rule (the model) and the rule before 1.7"
                                                          : "the rule before 1.7 (the simulator's truth)");
        printf("%-22s %7s %9s %10s %9s %7s\n", "", "MAE", "rank corr", "within 2se", "precision", "recall");
        stats_row(rule->name, &model, NULL);
        if (rule != dflt)
            stats_row(dflt->name, &deflt, NULL);
        if (rule != tru)
            stats_row(tru->name, &truth_st, NULL);
        stats_row("constant 1.0", &constant, NULL);
        printf("\nper resource (rule %s on that resource alone; the constant's MAE %.3f):\n", rule->name,
               constant.mae);
        printf("%-22s %7s %9s %10s %9s %7s\n", "resource", "MAE", "rank corr", "within 2se", "precision", "recall");
        for (unsigned j = 0; j < nres; j++)
            stats_row(seen[j], &rst[j],
                      beats(&rst[j], &constant) > 0   ? "beats the constant"
                      : beats(&rst[j], &constant) < 0 ? "worse than the constant"
                                                      : "ties the constant");

        printf("\nper group (the baseline: a record's group is whether B is I/O-bound, the largest PSI io some of its\n"
               "profile's solo baselines >= %.0f %%; each half predicted by the other half's group means):\n",
               PL_CHECK_IO_SOME_PCT);
        printf("%-22s %9s %7s %9s %7s\n", "group", "half A n", "mean", "half B n", "mean");
        for (int g = 1; g >= 0; g--) {
            char ma[16], mb[16];
            fmt3(ma, sizeof ma, gmean[0][g]), fmt3(mb, sizeof mb, gmean[1][g]);
            printf("%-22s %9u %7s %9u %7s\n", g ? "B I/O-bound" : "B not I/O-bound", gcount[0][g], ma, gcount[1][g],
                   mb);
        }
        printf("%-22s %7s %9s %10s %9s %7s\n", "", "MAE", "rank corr", "within 2se", "precision", "recall");
        stats_row(rule->name, &model, NULL);
        stats_row("per group", &group_st, NULL);
        stats_row("constant 1.0", &constant, NULL);

        printf("\ndecisions (refused/uncertain/kept): place pair's verdict on each record's pair, by the model (each\n"
               "program's QoS line; by default an uncertain pair is refused when a member's point prediction is\n"
               "under its line, --refuse likely) and by the headroom rule before 1.7 (--decide headroom: margin %g,\n"
               "unknowns pessimistic); a baseline refuses below %.2f.\n"
               "truth: a break when measured + 2 se < %.2f, safe when measured - 2 se >= %.2f, else unclear\n",
               pc_pair_opts.margin, qos, qos, qos);
        printf("%-44s %12s %12s %12s %13s\n", "", "place pair", "headroom", "per group", "constant 1.0");
        char lab[64];
        snprintf(lab, sizeof lab, "breaks (%u)", dtab[0].breaks);
        print_dec_line(lab, dtab, PL_TRUTH_BREAK);
        snprintf(lab, sizeof lab, "safe (%u)", dtab[0].safe);
        print_dec_line(lab, dtab, PL_TRUTH_SAFE);
        snprintf(lab, sizeof lab, "unclear (%u)", dtab[0].unclear);
        print_dec_line(lab, dtab, PL_TRUTH_UNCLEAR);
        print_rate_line("recall of breaks, by its point (default)", dlik, 1, 0);
        print_rate_line("recall of breaks, uncertain kept", dtab, 1, 0);
        print_rate_line("recall of breaks, uncertain refused", dtab, 1, 1);
        print_rate_line("false refusals, by its point (default)", dlik, 0, 0);
        print_rate_line("false refusals, uncertain kept", dtab, 0, 0);
        print_rate_line("false refusals, uncertain refused", dtab, 0, 1);

        printf("\nskill: the gain in mean absolute error = MAE(baseline) - MAE(model %s) on the same records, with\n"
               "its 95 %% paired percentile bootstrap interval (%u resamples, seed %llu); above 0: the model errs less\n",
               rule->name, PL_BOOT_RESAMPLES, (unsigned long long)a->seed);
        printf("%-20s %4s %28s %28s\n", "records", "n", "vs constant 1.0", "vs per group");
        for (unsigned k = 0; k < nrows; k++) {
            char c1[64], c2[64];
            fmt_interval(c1, sizeof c1, &rows[k].constant);
            fmt_interval(c2, sizeof c2, &rows[k].group);
            printf("%-20s %4u %28s %28s\n", rows[k].label, rows[k].k, c1, c2);
        }
        printf("\n");
        for (unsigned k = 0; k < nrows; k++)
            printf("%s: vs the constant, %s; vs per group, %s.\n", rows[k].label,
                   boot_words(&rows[k].constant), boot_words(&rows[k].group));
    }
    free(rst);
    free(cases);
    free(gcases);
    free(meas);
    free(grp);
    free(blo);
    free(bhi);
    free(group);
    free(hf);
    free(idx);
    free(dec);
    json_decref(arr);
    json_decref(fits);
    json_decref(resj);
    if (rc == 0)
        *out = doc;
    else
        json_decref(doc);
    return rc;
}

int place_predict_check(const char *cmd, const struct place_check_args *a, char **recs, unsigned n)
{
    struct pc_set *sets = calloc(a->ndirs ? a->ndirs : 1, sizeof *sets);
    if (!sets)
        return cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    int rc = 0;
    unsigned loaded = 0;
    /* every set read before any report, so that bad input in a later set prints no partial report */
    for (; rc == 0 && loaded < a->ndirs; loaded++)
        rc = pc_load(cmd, recs, n, a->dirs[loaded], a->half, a->json, &sets[loaded]);
    json_t *docs = json_array();
    if (rc == 0 && !docs)
        rc = cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    for (unsigned k = 0; rc == 0 && k < a->ndirs; k++) {
        if (!a->json && a->ndirs > 1)
            printf("%sprofiles %s (set %u of %u)\n\n", k ? "\n\n" : "", TTY_TEXT(a->dirs[k]), k + 1, a->ndirs);
        json_t *doc = NULL;
        if ((rc = pc_report(cmd, &sets[k], a, &doc)) == 0)
            json_array_append_new(docs, doc);
    }
    if (rc == 0 && a->json) {
        json_t *out = a->ndirs == 1 ? json_incref(json_array_get(docs, 0))
                                    : json_pack("{s:s,s:O}", "command", "place predict --check", "sets", docs);
        rc = out && out_json(stdout, out) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, cmd, "cannot write JSON");
        json_decref(out);
    }
    json_decref(docs);
    for (unsigned k = 0; k < loaded; k++)
        pc_set_free(&sets[k]);
    free(sets);
    return rc;
}
