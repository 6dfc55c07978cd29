/* cmd_place_model.c - `ibench place model train|predict` and `ibench place pack`: the placement model of Funston et al. ATC'18
 * §4-5 (placement/mapping/pl_model.h; docs/placement.md, "The placement model"). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "output.h"
#include "parse.h"
#include "pl_classes.h"
#include "pl_model.h"
#include "pl_proc.h"
#include "place.h"
#include "render.h"

static int lib_fail(int e, const char *cmd, const char *why)
{
    return cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, cmd, "%s", why);
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *vec_json(const double *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned j = 0; j < n; j++)
        json_array_append_new(a, num(v[j]));
    return a;
}

/* ---------------------------------------------------------------- train */

#define TRAIN "place model train"

struct train_args {
    struct place_opts po;
    const char *vectors, *out;
    struct pl_train_opts o;
    int seed_given;
};

/* --k auto|N */
static int set_k(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    unsigned long v = 0;
    if (strcmp(arg, "auto") && parse_uint(arg, 1, 1000000, &v) < 0)
        return -EINVAL;
    ((struct train_args *)opts)->o.k = (unsigned)v;
    return 0;
}

static const struct cli_cmd model_train, model_predict; /* defined at the end */

static int cmd_train(void *opts, int argc, char **argv, int first)
{
    const struct train_args *a = opts;
    const char *vectors = a->vectors, *out = a->out;
    const struct pl_train_opts o = a->o;
    int json = a->po.json;
    bool seed_given = a->seed_given;
    if (!vectors || !out)
        return cli_fail(IB_EXIT_USAGE, TRAIN, "--vectors FILE.csv and -o MODEL.json are required");
    char why[512];
    struct pl_vectors vec;
    int e = pl_vectors_load(vectors, &vec, why, sizeof why);
    if (e < 0)
        return lib_fail(e, TRAIN, why);
    if (vec.label && seed_given) { /* never ignored in silence */
        pl_vectors_free(&vec);
        return cli_fail(IB_EXIT_USAGE, TRAIN, "--seed: %s has a label column, so the clusters are its labels and no "
                        "k-means is seeded; drop --seed or the column", vectors);
    }
    struct pl_model m;
    e = pl_model_train(&vec, &o, &m, why, sizeof why);
    if (e < 0) {
        pl_vectors_free(&vec);
        return lib_fail(e, TRAIN, why);
    }
    int rc = IB_EXIT_OK;
    char *text = pl_model_dump(&m);
    json_t *mdoc = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (!mdoc || (e = out_json_file_atomic(out, mdoc)) < 0) {
        rc = cli_fail(IB_EXIT_FAIL, TRAIN, "cannot write %s: %s", out, mdoc ? strerror(-e) : "out of memory");
        goto done;
    }
    if (json) {
        json_t *doc = json_object(), *pl = json_array(), *tried = json_array(), *cl = json_array();
        for (unsigned j = 0; j < m.np; j++)
            json_array_append_new(pl, json_string(m.pid[j]));
        for (unsigned t = 0; t < m.nk; t++)
            json_array_append_new(tried, json_pack("{s:i,s:o}", "k", (int)m.ks[t], "silhouette", num(m.sil[t])));
        for (unsigned k = 0; k < m.k; k++) {
            json_t *mem = json_array();
            for (unsigned i = 0; i < m.c[k].size; i++)
                json_array_append_new(mem, json_string(m.c[k].members[i]));
            json_array_append_new(cl, json_pack("{s:s,s:i,s:o,s:o}", "name", m.c[k].name, "size", (int)m.c[k].size,
                                                "members", mem, "centroid", vec_json(m.c[k].centroid, m.np)));
        }
        json_object_set_new(doc, "command", json_string(TRAIN));
        json_object_set_new(doc, "vectors", json_string(vectors));
        json_object_set_new(doc, "workloads", json_integer(vec.n));
        json_object_set_new(doc, "placements", pl);
        json_object_set_new(doc, "baseline", json_string(m.pid[0]));
        json_object_set_new(doc, "method", json_string(m.from_labels ? "labels" : "kmeans"));
        json_object_set_new(doc, "seed", json_integer((json_int_t)m.seed));
        json_object_set_new(doc, "restarts", json_integer(PL_MODEL_RESTARTS));
        json_object_set_new(doc, "tolerance", json_real(m.tolerance));
        json_object_set_new(doc, "tried", tried);
        json_object_set_new(doc, "k", json_integer(m.k));
        json_object_set_new(doc, "silhouette", num(m.silhouette));
        json_object_set_new(doc, "clusters", cl);
        json_object_set_new(doc, "model", json_string(out));
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, TRAIN, "cannot write JSON");
        json_decref(doc);
        goto done;
    }
    printf("%s: %u workloads, %u placements (baseline %s)\n", vectors, vec.n, m.np, m.pid[0]);
    if (m.from_labels) {
        printf("clusters from the label column: k = %u, mean silhouette %.4f\n", m.k, m.silhouette);
    } else {
        printf("k-means++, seed %llu, %d restarts per k (lowest inertia kept)\n\n", (unsigned long long)m.seed,
               PL_MODEL_RESTARTS);
        printf("%4s  %10s\n", "k", "silhouette");
        for (unsigned t = 0; t < m.nk; t++)
            printf("%4u  %10.4f%s\n", m.ks[t], m.sil[t], m.ks[t] == m.k ? "  <- chosen" : "");
    }
    printf("\n%-10s %5s", "cluster", "size");
    for (unsigned j = 0; j < m.np; j++)
        printf(" %8.8s", m.pid[j]);
    printf("  members\n");
    for (unsigned k = 0; k < m.k; k++) {
        printf("%-10s %5u", m.c[k].name, m.c[k].size);
        for (unsigned j = 0; j < m.np; j++)
            printf(" %8.3f", m.c[k].centroid[j]);
        printf("  ");
        for (unsigned i = 0; i < m.c[k].size; i++)
            printf("%s%s", i ? "," : "", m.c[k].members[i]);
        printf("\n");
    }
    printf("\n(centroids: the predicted vector of each cluster)\nmodel written to %s\n", out);
done:
    json_decref(mdoc);
    pl_model_free(&m);
    pl_vectors_free(&vec);
    return rc;
}

/* ---------------------------------------------------------------- predict */

/* A measured vector in the model's placement order: the CSV's columns matched by placement id. */
struct measured {
    const double *row; /* the CSV row */
    const unsigned *col; /* model placement -> CSV column */
};

static double measure_csv(void *ctx, unsigned p)
{
    const struct measured *m = ctx;
    return m->row[m->col[p]];
}

/* Maps the CSV's columns to the model's placements: the same ids, any order. */
static int map_columns(const struct pl_model *m, const struct pl_vectors *v, unsigned *col, char *why, size_t len)
{
    if (v->np != m->np)
        return ib_why(why, len, -EINVAL, "the measured file has %u placements, the model %u", v->np, m->np);
    for (unsigned j = 0; j < m->np; j++) {
        int c = -1;
        for (unsigned i = 0; i < v->np; i++)
            if (!strcmp(v->pid[i], m->pid[j]))
                c = (int)i;
        if (c < 0)
            return ib_why(why, len, -EINVAL, "the measured file has no column for the model's placement '%s'",
                          m->pid[j]);
        col[j] = (unsigned)c;
    }
    return 0;
}

static json_t *prediction_json(const struct pl_model *m, const char *workload, const struct pl_prediction *p)
{
    json_t *tried = json_array(), *rem = json_array();
    for (unsigned t = 0; t < p->ntried; t++) {
        json_array_append_new(tried, json_string(m->pid[p->tried[t]]));
        json_array_append_new(rem, json_integer(p->remaining[t]));
    }
    return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "workload", workload, "status",
                     pl_predict_status_name(p->status), "cluster",
                     p->cluster >= 0 ? json_string(m->c[p->cluster].name) : json_null(), "tried", tried,
                     "remaining", rem, "measured", vec_json(p->measured, m->np), "vector",
                     vec_json(p->vector, m->np));
}

static void print_prediction(const struct pl_model *m, const char *workload, const struct pl_prediction *p)
{
    printf("%s: %s", workload, pl_predict_status_name(p->status));
    if (p->cluster >= 0)
        printf(", cluster %s", m->c[p->cluster].name);
    printf("; tried %u placement(s):", p->ntried);
    for (unsigned t = 0; t < p->ntried; t++)
        printf(" %s (%u left)", m->pid[p->tried[t]], p->remaining[t]);
    printf("\n  %-10s %10s %10s\n", "placement", "measured", "predicted");
    for (unsigned j = 0; j < m->np; j++) {
        printf("  %-10s ", m->pid[j]);
        if (isnan(p->measured[j]))
            printf("%10s", "-");
        else
            printf("%10.4f", p->measured[j]);
        printf(" %10.4f\n", p->vector[j]);
    }
}

/* The live form: the process pinned to each placement the method asks for, its metric over --period seconds there
 * (higher is better: a lower-is-better metric is inverted, so relative performance is base / value). */
struct live_measure {
    struct place_live *L;
    const struct pl_hier *h;
    const struct pl_class_list *l;
    const unsigned *rowof;
    double period;
    int err;
    char why[512];
};

static double measure_live(void *ctx, unsigned p)
{
    struct live_measure *x = ctx;
    if (x->err)
        return NAN;
    const struct pl_class *c = &x->l->v[x->rowof[p]];
    int cpus[4096];
    for (unsigned j = 0; j < c->nthreads && j < 4096; j++)
        cpus[j] = x->h->pu_os[c->pus[j]];
    double v = NAN;
    if ((x->err = place_live_pin(x->L, cpus, c->nthreads, x->why, sizeof x->why)) < 0 ||
        (x->err = place_live_measure(x->L, x->period, &v, x->why, sizeof x->why)) < 0)
        return NAN;
    if (!(v > 0)) {
        x->err = ib_why(x->why, sizeof x->why, -EBADMSG, "the metric in placement %u is %g, not positive",
                        c->id, v);
        return NAN;
    }
    return place_live_higher_better(x->L) ? v : 1.0 / v;
}

#define PREDICT "place model predict"

static int predict_live(const struct pl_model *m, const char *model, pid_t pid, const char *mspec, double period,
                        const char *concerns, int json)
{
    char why[512] = "";
    struct place_live L;
    int e = place_live_open(&L, pid, mspec, why, sizeof why);
    if (e < 0)
        return cli_fail(IB_EXIT_USAGE, PREDICT, "%s", why);
    struct place_opts po = {.concerns = concerns};
    struct pl_machine mach;
    struct pl_hier h;
    int rc = place_open("model predict", &po, &mach, &h);
    if (rc) {
        place_live_close(&L);
        return rc;
    }
    struct pl_threads t = {0};
    struct pl_class_list l = {0};
    unsigned *rowof = calloc(m->np, sizeof(*rowof));
    bool have_l = false;
    if (!rowof) {
        rc = cli_fail(IB_EXIT_FAIL, PREDICT, "out of memory");
        goto out;
    }
    if ((e = pl_proc_threads(pid, &t, why, sizeof why)) < 0 ||
        (e = pl_model_classes(m, &h, t.n, &l, rowof, why, sizeof why)) < 0) {
        rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, PREDICT, "%s", why);
        goto out;
    }
    have_l = true;
    struct live_measure x = {.L = &L, .h = &h, .l = &l, .rowof = rowof, .period = period};
    struct pl_prediction p;
    cli_signals_install();
    e = pl_model_predict(m, measure_live, &x, &p, why, sizeof why);
    cli_signals_restore();
    if (x.err || e < 0) {
        if (e == 0)
            pl_prediction_free(&p);
        int err = x.err ? x.err : e;
        rc = err == -EINTR || cli_stop ? cli_fail(IB_EXIT_INTR, PREDICT, "interrupted")
                                       : cli_fail(cli_exit_for(err, err == -ESRCH), PREDICT, "%s",
                                                  x.err ? x.why : why);
        goto out;
    }
    char name[64], desc[256];
    snprintf(name, sizeof name, "pid %d", (int)pid);
    snprintf(desc, sizeof desc, "live: pid %d, metric %s, %.3g s a placement", (int)pid, mspec, period);
    if (json) {
        json_t *pl = json_array(), *preds = json_array();
        for (unsigned j = 0; j < m->np; j++)
            json_array_append_new(pl, json_string(m->pid[j]));
        json_array_append_new(preds, prediction_json(m, name, &p));
        json_t *doc = json_object();
        json_object_set_new(doc, "command", json_string(PREDICT));
        json_object_set_new(doc, "model", json_string(model));
        json_object_set_new(doc, "measured", json_string(desc));
        json_object_set_new(doc, "placements", pl);
        json_object_set_new(doc, "tolerance", json_real(m->tolerance));
        json_object_set_new(doc, "predictions", preds);
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, PREDICT, "cannot write JSON");
        json_decref(doc);
    } else {
        printf("%s\n", desc);
        print_prediction(m, name, &p);
    }
    pl_prediction_free(&p);
out:
    if (have_l)
        pl_class_list_free(&l);
    free(rowof);
    pl_threads_free(&t);
    pl_hier_free(&h);
    pl_machine_free(&mach);
    place_live_close(&L);
    return rc;
}

struct predict_args {
    struct place_opts po;
    const char *model, *measured, *metric;
    unsigned long pid;
    double period;
    int period_given;
};

static int cmd_predict(void *opts, int argc, char **argv, int first)
{
    const struct predict_args *a = opts;
    const char *model = a->model, *measured = a->measured, *mspec = a->metric, *concerns = a->po.concerns;
    unsigned long pid = a->pid;
    double period = a->period;
    bool period_given = a->period_given;
    int json = a->po.json;
    if (!model || !!measured == !!pid)
        return cli_fail(IB_EXIT_USAGE, PREDICT, "--model MODEL.json and one of --measured FILE.csv, --pid P are "
                        "required");
    if (pid && !mspec)
        return cli_fail(IB_EXIT_USAGE, PREDICT, "--pid needs --metric (command:CMD, command-lower:CMD or cputime)");
    if (!pid && (mspec || concerns || period_given)) /* never ignored in silence */
        return cli_fail(IB_EXIT_USAGE, PREDICT, "--metric, --period and --concerns go with --pid");
    char why[512];
    struct pl_model m;
    int e = pl_model_load(model, &m, why, sizeof why);
    if (e < 0)
        return lib_fail(e, PREDICT, why);
    if (pid) {
        int r = predict_live(&m, model, (pid_t)pid, mspec, period, concerns, json);
        pl_model_free(&m);
        return r;
    }
    struct pl_vectors v;
    if ((e = pl_vectors_load(measured, &v, why, sizeof why)) < 0) {
        pl_model_free(&m);
        return lib_fail(e, PREDICT, why);
    }
    int rc = IB_EXIT_OK;
    unsigned *col = calloc(m.np, sizeof(*col));
    json_t *preds = json_array();
    if (!col) {
        rc = cli_fail(IB_EXIT_FAIL, PREDICT, "out of memory");
        goto done;
    }
    if ((e = map_columns(&m, &v, col, why, sizeof why)) < 0) {
        rc = cli_fail(IB_EXIT_USAGE, PREDICT, "%s: %s", measured, why);
        goto done;
    }
    for (unsigned i = 0; i < v.n; i++) {
        struct measured ms = {v.v + (size_t)i * v.np, col};
        struct pl_prediction p;
        if ((e = pl_model_predict(&m, measure_csv, &ms, &p, why, sizeof why)) < 0) {
            rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, PREDICT, "%s: workload '%s': %s", measured,
                          v.name[i], why);
            goto done;
        }
        if (json)
            json_array_append_new(preds, prediction_json(&m, v.name[i], &p));
        else
            print_prediction(&m, v.name[i], &p);
        pl_prediction_free(&p);
    }
    if (json) {
        json_t *pl = json_array();
        for (unsigned j = 0; j < m.np; j++)
            json_array_append_new(pl, json_string(m.pid[j]));
        json_t *doc = json_object();
        json_object_set_new(doc, "command", json_string(PREDICT));
        json_object_set_new(doc, "model", json_string(model));
        json_object_set_new(doc, "measured", json_string(measured));
        json_object_set_new(doc, "placements", pl);
        json_object_set_new(doc, "tolerance", json_real(m.tolerance));
        json_object_set_new(doc, "predictions", preds);
        preds = NULL;
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, PREDICT, "cannot write JSON");
        json_decref(doc);
    }
done:
    json_decref(preds);
    free(col);
    pl_vectors_free(&v);
    pl_model_free(&m);
    return rc;
}

/* ---------------------------------------------------------------- pack */

#define PACK "place pack"

struct pack_args {
    struct place_opts po;
    const char *model, *measured, *cluster, *bound;
    double goal;
    unsigned long threads;
};

static const char *const pack_bounds[] = {"centroid", "min", NULL};

static int cmd_place_pack(void *opts, int argc, char **argv, int first)
{
    const struct pack_args *a = opts;
    const struct place_opts po = a->po;
    const char *model = a->model, *measured = a->measured, *cluster = a->cluster;
    double goal = a->goal;
    unsigned long threads = a->threads;
    enum pl_pack_bound bound = !strcmp(a->bound, "min") ? PL_PACK_MIN : PL_PACK_CENTROID;
    if (!model || isnan(goal) || !threads)
        return cli_fail(IB_EXIT_USAGE, PACK, "--model, --goal and --threads are required");
    if (!cluster == !measured)
        return cli_fail(IB_EXIT_USAGE, PACK, "one of --cluster C or --measured FILE.csv is required");
    if (place_refuse_distances(PACK, &po))
        return IB_EXIT_USAGE;
    char why[512];
    struct pl_model m;
    int e = pl_model_load(model, &m, why, sizeof why);
    if (e < 0)
        return lib_fail(e, PACK, why);
    int rc = IB_EXIT_OK, ci = -1;
    struct pl_prediction pred = {0};
    struct pl_pack pk = {0};
    struct pl_machine mach = {0};
    struct pl_hier h = {0};
    bool have_pred = false, have_mach = false;
    if (cluster) {
        if ((ci = pl_model_cluster(&m, cluster)) < 0) {
            rc = cli_fail(IB_EXIT_USAGE, PACK, "the model has no cluster '%s'", cluster);
            goto done;
        }
    } else {
        struct pl_vectors v;
        if ((e = pl_vectors_load(measured, &v, why, sizeof why)) < 0) {
            rc = lib_fail(e, PACK, why);
            goto done;
        }
        unsigned *col = calloc(m.np, sizeof(*col));
        if (v.n != 1)
            e = ib_why(why, sizeof why, -EINVAL, "%s: one workload row expected, got %u", measured, v.n);
        else if (!col)
            e = ib_why(why, sizeof why, -ENOMEM, "out of memory");
        else if ((e = map_columns(&m, &v, col, why, sizeof why)) == 0) {
            struct measured ms = {v.v, col};
            e = pl_model_predict(&m, measure_csv, &ms, &pred, why, sizeof why);
            have_pred = e == 0;
        }
        free(col);
        pl_vectors_free(&v);
        if (e < 0) {
            rc = lib_fail(e, PACK, why);
            goto done;
        }
        if (pred.cluster < 0 || pred.status == PL_PRED_NONE) {
            rc = cli_fail(IB_EXIT_FAIL, PACK, "%s matches no cluster of the model (no cluster): nothing to pack by",
                          measured);
            goto done;
        }
        ci = pred.cluster;
    }
    if ((rc = place_open("pack", &po, &mach, &h)) != 0)
        goto done;
    have_mach = true;
    if ((e = pl_model_pack(&m, (unsigned)ci, goal, bound, &h, (unsigned)threads, &pk, why, sizeof why)) < 0) {
        rc = lib_fail(e, PACK, why);
        goto done;
    }
    if (po.json) {
        json_t *rows = json_array();
        for (unsigned j = 0; j < pk.nrow; j++) {
            const struct pl_pack_row *r = &pk.row[j];
            json_array_append_new(rows, json_pack("{s:s,s:i,s:i,s:i,s:f,s:b}", "placement", m.pid[r->placement],
                                                  "class", (int)r->class_id, "units", (int)r->units, "containers",
                                                  (int)r->containers, "predicted", r->perf, "meets", r->meets));
        }
        json_t *doc = json_object();
        json_object_set_new(doc, "command", json_string(PACK));
        json_object_set_new(doc, "model", json_string(model));
        json_object_set_new(doc, "topology", json_string(mach.spec));
        json_object_set_new(doc, "threads", json_integer(pk.nthreads));
        json_object_set_new(doc, "level", json_string(pk.level));
        json_object_set_new(doc, "instances", json_integer(pk.ninst));
        json_object_set_new(doc, "cluster", json_string(m.c[ci].name));
        json_object_set_new(doc, "prediction", have_pred ? prediction_json(&m, measured, &pred) : json_null());
        json_object_set_new(doc, "goal", json_real(goal));
        json_object_set_new(doc, "bound", json_string(bound == PL_PACK_MIN ? "min" : "centroid"));
        json_object_set_new(doc, "placements", rows);
        json_object_set_new(doc, "choice", pk.choice >= 0 ? json_string(m.pid[pk.choice]) : json_null());
        json_object_set_new(doc, "containers", json_integer(pk.containers));
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, PACK, "cannot write JSON");
        json_decref(doc);
        goto done;
    }
    printf("topology  %s (%s): %u %s instances; %lu threads per container\n", mach.spec, mach.kind, pk.ninst,
           pk.level, threads);
    if (have_pred)
        printf("cluster   %s (%s after %u placement(s) of %s)\n", m.c[ci].name, pl_predict_status_name(pred.status),
               pred.ntried, measured);
    else
        printf("cluster   %s\n", m.c[ci].name);
    printf("goal      each container keeps >= %.3g of its baseline performance (predicted by the %s)\n\n", goal,
           bound == PL_PACK_MIN ? "interval minimum" : "centroid");
    printf("%-12s %6s %6s %11s %10s  %s\n", "placement", "class", pk.level, "containers", "predicted", "meets");
    for (unsigned j = 0; j < pk.nrow; j++) {
        const struct pl_pack_row *r = &pk.row[j];
        printf("%-12s %6u %6u %11u %10.4f  %s%s\n", m.pid[r->placement], r->class_id, r->units, r->containers,
               r->perf, r->meets ? "yes" : "no", (int)j == pk.choice ? "  <- chosen" : "");
    }
    if (pk.choice >= 0)
        printf("\n%u container(s) in placement %s\n", pk.containers, m.pid[pk.choice]);
    else
        printf("\nno placement meets the goal: not even one container\n");
done:
    pl_pack_free(&pk);
    if (have_pred)
        pl_prediction_free(&pred);
    if (have_mach) {
        pl_hier_free(&h);
        pl_machine_free(&mach);
    }
    pl_model_free(&m);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define TA struct train_args
static const struct cli_opt train_table[] = {
    {CLI_STR("vectors", "FILE.csv", TA, vectors,
             "header workload,<placement ids...>[,label]; one row per workload, performance\n"
             "relative to the first placement (the baseline, 1.0), higher is better; with a\n"
             "label column the clusters are the labels (no k-means)")},
    {CLI_CUSTOM("k", "auto|N", TA, o.k, set_k,
                "clusters (default auto: k = 2..min(10, n-1), the highest mean silhouette,\n"
                "the smaller k on a tie); with a label column N must be the number of labels"),
     .what = "auto or a whole number >= 1", .sample = "auto"},
    {CLI_ULONG("seed", "S", TA, o.seed, 0, 9223372036854775807.0,
               "k-means++ seed; " CLI_STR_OF(PL_MODEL_RESTARTS) " restarts, the lowest inertia kept; refused with\n"
               "a label column (nothing to seed)"),
     .def = "1", .have = CLI_HAVE(TA, seed_given), .what = "a whole number in 0-2^63-1"},
    {CLI_DOUBLE("tolerance", "T", TA, o.tolerance, 0, INFINITY,
                "widen every interval by T on both sides when predicting (0: the paper's)"),
     .def = "0"},
    {CLI_STR("out", "MODEL.json", TA, out, "the model, written atomically"), .shortopt = 'o'},
    PLACE_OPT_JSON(TA),
};
#undef TA

static const struct cli_cmd model_train = {
    .name = "place model train",
    CLI_RUN(cmd_train, struct train_args),
    .summary = "cluster performance vectors into a model (ibench place model train --help)",
    .usage = "usage: ibench place model train --vectors FILE.csv [--k auto|N] [--seed S] [--tolerance T] -o MODEL.json\n"
             "                                [--json]\n\n",
    .about = "Clusters the workloads' performance vectors (Funston et al. ATC'18 §4.1) and writes the model: per cluster, per\n"
             "placement, the interval [min, max] of its members and the centroid (the predicted vector).\n\n",
    CLI_OPTS(train_table),
};

#define PA struct predict_args
static const struct cli_opt predict_table[] = {
    {CLI_STR("model", "MODEL.json", PA, model, "from place model train")},
    {CLI_STR("measured", "FILE.csv", PA, measured, "the workloads' measured vectors (a label column is ignored)")},
    {CLI_ULONG("pid", "P", PA, pid, 1, 4194304,
               "instead, a live process: pinned to each placement the method asks for (the\n"
               "model's placement ids are the important placements of its thread count here)"),
     .what = "a process id"},
    {CLI_STR("metric", "SPEC", PA, metric, "its metric there: command:CMD, command-lower:CMD or cputime (as place atom)")},
    {CLI_DOUBLE("period", "S", PA, period, 0.05, 86400, "seconds measured in each placement"), .def = "10",
     .have = CLI_HAVE(PA, period_given), .what = "seconds in [0.05, 86400]"},
    PLACE_OPT_CONCERNS(PA, "the levels the placements are counted on (as place classes)"),
    PLACE_OPT_JSON(PA),
};
#undef PA

static const struct cli_cmd model_predict = {
    .name = "place model predict",
    CLI_RUN(cmd_predict, struct predict_args),
    .summary = "the iterative method on measured vectors (ibench place model predict --help)",
    .usage = "usage: ibench place model predict --model MODEL.json (--measured FILE.csv | --pid P --metric SPEC\n"
             "                                  [--period S] [--concerns LIST]) [--json]\n\n",
    .about = "The iterative method (Funston et al. ATC'18 §4.3, Algorithm 1) for each workload of FILE.csv: from the baseline,\n"
             "measure the placement that leaves the fewest clusters in the worst case, exclude the clusters whose\n"
             "intervals miss the value, until one is left (or none: \"no cluster\").  FILE.csv holds each workload's\n"
             "whole vector (the place model train format, the model's placement ids in any order); the method\n"
             "\"measures\" by reading it, so the output shows which placements it would have run.\n\n",
    CLI_OPTS(predict_table),
};

static const struct cli_cmd *const model_cmds[] = {&model_train, &model_predict};

const struct cli_cmd cli_cmd_place_model = {
    .name = "place model",
    .summary = "the placement model: cluster performance vectors, predict by the iterative method",
    .usage = "usage: ibench place model train|predict [options]\n\n",
    CLI_SUB(model_cmds),
};

#define KA struct pack_args
static const struct cli_opt pack_table[] = {
    {CLI_STR("model", "MODEL.json", KA, model, "from place model train")},
    {CLI_DOUBLE("goal", "G", KA, goal, 0, INFINITY, "e.g. 0.9: each container keeps >= 90 % of its baseline performance"),
     .flags = CLI_OPT_GT_MIN},
    {CLI_ULONG("threads", "N", KA, threads, 1, 1 << 20, "threads per container")},
    {CLI_STR("cluster", "C", KA, cluster, "the workload's cluster (a name from the model), or")},
    {CLI_STR("measured", "FILE.csv", KA, measured, "its measured vector (one row): the cluster by the iterative method")},
    {CLI_CHOICE("bound", "centroid|min", KA, bound, pack_bounds,
                "the predicted performance: the cluster's centroid or the lowest\n"
                "of its training members (every member would have met the goal)"),
     .def = "centroid"},
    PLACE_COMMON_OPTS(KA),
};
#undef KA

const struct cli_cmd cli_cmd_place_pack = {
    .name = "place pack",
    CLI_RUN(cmd_place_pack, struct pack_args),
    .preset = &(const struct pack_args){.goal = NAN},
    .summary = "how many containers of a workload fit a machine under a performance goal",
    .usage = "usage: ibench place pack --model MODEL.json --goal G --threads N (--cluster C | --measured FILE.csv)\n"
             "                         [--bound centroid|min] [--topology SPEC] [--concerns LIST] [--json]\n\n",
    .about = "How many containers of one workload (N threads each) fit on the machine while each keeps at least\n"
             "G times its baseline performance (Funston et al. ATC'18 §5).  Containers never share an instance of the coarsest\n"
             "concern level (e.g. a NUMA node); the placement that fits the most containers among those whose\n"
             "predicted performance meets the goal is chosen (ties: higher predicted performance, then the model's\n"
             "order).  The model's placement ids must be this topology's important placements of N threads, by\n"
             "id or notation (ibench place classes --threads N).\n\n",
    CLI_OPTS(pack_table),
};
