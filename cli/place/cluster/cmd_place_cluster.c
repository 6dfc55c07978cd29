/* cmd_place_cluster.c - `ibench place cluster`: Tam et al. EuroSys'07's sharing-aware thread clustering on samples of a trace file
 * or of a live process (perf, or the shipped ibench-share workload), the thread-to-chip plan, and optionally pinning
 * it (--apply) and writing the data_sharing characteristic into a profile (--profile).  The pipeline is
 * placement/cluster/pl_cluster.h; the sources pl_trace.h, pl_src_perf.h, pl_src_soft.h.  docs/placement.md, "Thread
 * clustering". */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_cluster.h"
#include "pl_proc.h"
#include "pl_src_perf.h"
#include "pl_src_soft.h"
#include "pl_trace.h"
#include "place.h"
#include "profile_fmt.h"
#include "render.h"
#include "topo.h"

#define CMD "place cluster"

/* The chips: per chip, its CPUs (OS indexes, ascending). */
struct chips {
    unsigned n;
    int **cpus;
    unsigned *ncpus;
    char how[160];
};

static void chips_free(struct chips *c)
{
    for (unsigned k = 0; c->cpus && k < c->n; k++)
        free(c->cpus[k]);
    free(c->cpus);
    free(c->ncpus);
    memset(c, 0, sizeof *c);
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* want 0: the coarsest level's instances (none: -EINVAL); else want chips, the coarsest level's instances when it has
 * that many, else PUs in logical order cut into want runs (the first npus % want one PU longer). */
static int chips_make(const struct pl_hier *h, unsigned want, struct chips *c, char *why, size_t len)
{
    memset(c, 0, sizeof *c);
    const struct pl_level *lv = h->nlevels ? &h->lv[0] : NULL;
    if (!want && !lv)
        return ib_why(why, len, -EINVAL, "this topology has no level that some PUs share and others do not: "
                      "give --chips N");
    if (want > h->npus)
        return ib_why(why, len, -EINVAL, "%u chips, but the machine has %u PUs", want, h->npus);
    bool by_level = lv && (!want || lv->ninst == want);
    c->n = by_level ? lv->ninst : want;
    c->cpus = calloc(c->n, sizeof *c->cpus);
    c->ncpus = calloc(c->n, sizeof *c->ncpus);
    if (!c->cpus || !c->ncpus)
        goto oom;
    for (unsigned k = 0; k < c->n; k++)
        if (!(c->cpus[k] = malloc(h->npus * sizeof **c->cpus)))
            goto oom;
    for (unsigned pu = 0; pu < h->npus; pu++) {
        unsigned k;
        if (by_level) {
            k = lv->inst[pu];
        } else { /* runs: chip k holds PUs [k*q + min(k, r), ...) */
            unsigned q = h->npus / c->n, r = h->npus % c->n;
            k = pu < r * (q + 1) ? pu / (q + 1) : r + (pu - r * (q + 1)) / q;
        }
        c->cpus[k][c->ncpus[k]++] = h->pu_os[pu];
    }
    for (unsigned k = 0; k < c->n; k++)
        qsort(c->cpus[k], c->ncpus[k], sizeof **c->cpus, cmp_int);
    if (by_level)
        snprintf(c->how, sizeof c->how, "the %u instances of %s", c->n, lv->name);
    else
        snprintf(c->how, sizeof c->how, "%u runs of PUs in logical order", c->n);
    return 0;
oom:
    chips_free(c);
    return ib_why(why, len, -ENOMEM, "out of memory");
}

/* The chip of each thread of r (chip[i] for r->thread[i]; to free). */
static int chips_of(const struct pl_cluster_result *r, const struct chips *ch, int **chip, char *why, size_t len)
{
    unsigned *cap = calloc(ch->n, sizeof *cap);
    *chip = calloc(r->nthreads ? r->nthreads : 1, sizeof **chip);
    if (!cap || !*chip) {
        free(cap);
        free(*chip);
        *chip = NULL;
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned k = 0; k < ch->n; k++)
        cap[k] = ch->ncpus[k];
    int e = pl_cluster_result_chips(r, ch->n, cap, *chip, why, len);
    free(cap);
    if (e < 0) {
        free(*chip);
        *chip = NULL;
    }
    return e;
}

/* The repeat loop's sources and moves (pl_cluster_loop). */
struct loop_ctx {
    const char *trace, *source;
    unsigned long pid;
    double seconds;
    bool quiet;
    const struct chips *ch;
    unsigned pinned, skipped; /* the last move's */
    /* memory following each move (--apply): the plan, its readings before the first move, the last move's CPU
     * per thread (its chip's first) for the score and the cpuset, the last move's place_mem_follow */
    const struct pl_machine *m;
    struct place_mem *pm;
    bool moved;
    int *first;
    unsigned nfirst;
    int mrc;
};

static int round_sample(void *ctx, unsigned round, pl_sample_fn fn, void *fctx, char *why, size_t len)
{
    struct loop_ctx *l = ctx;
    if (l->trace)
        return pl_trace_read(l->trace, fn, fctx, why, len);
    if (cli_stop)
        return -EINTR;
    if ((l->seconds >= 3 || round) && !l->quiet)
        fprintf(stderr, "ibench place cluster: round %u: sampling process %lu for %.3g s (source %s)\n", round + 1,
                l->pid, l->seconds, l->source);
    return !strcmp(l->source, "perf") ? pl_src_perf_read((pid_t)l->pid, l->seconds, fn, fctx, why, len)
                                      : pl_src_soft_read((pid_t)l->pid, l->seconds, fn, fctx, why, len);
}

/* The CPUs of the chips the threads of r go to (chip[i] for r->thread[i]), each once: to free, NULL when out of
 * memory. */
static int *chips_used(const struct pl_cluster_result *r, const struct chips *ch, const int *chip, unsigned *nu)
{
    unsigned cap = 0;
    for (unsigned k = 0; k < ch->n; k++)
        cap += ch->ncpus[k];
    int *used = malloc((cap ? cap : 1) * sizeof *used);
    unsigned char *seen = calloc(ch->n ? ch->n : 1, 1);
    *nu = 0;
    for (unsigned i = 0; used && seen && i < r->nthreads; i++)
        if (!seen[chip[i]]) {
            seen[chip[i]] = 1;
            for (unsigned j = 0; j < ch->ncpus[chip[i]]; j++)
                used[(*nu)++] = ch->cpus[chip[i]][j];
        }
    if (!seen) {
        free(used);
        used = NULL;
    }
    free(seen);
    return used;
}

static int round_migrate(void *ctx, unsigned round, const struct pl_cluster_result *r, char *why, size_t len)
{
    struct loop_ctx *l = ctx;
    (void)round;
    if (r->nthreads == 0)
        return ib_why(why, len, -ENODATA, "no sample of a thread was counted: nothing to move");
    int *chip = NULL, e = chips_of(r, l->ch, &chip, why, len);
    if (e < 0)
        return e;
    /* memory follows: the policy on the nodes of the chips used; a thread counts on the node of its chip's first
     * CPU; the readings before are the first move's */
    unsigned nu = 0;
    int *used = chips_used(r, l->ch, chip, &nu), *first = calloc(r->nthreads, sizeof *first);
    if (!used || !first) {
        free(used), free(first), free(chip);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    for (unsigned i = 0; i < r->nthreads; i++)
        first[i] = l->ch->cpus[chip[i]][0];
    e = place_mem_replan(l->pm, l->m, used, nu, why, len);
    free(used);
    if (e < 0) {
        free(first), free(chip);
        return e;
    }
    if (!l->moved) {
        struct pl_threads before;
        char pwhy[256];
        if (pl_proc_threads((pid_t)l->pid, &before, pwhy, sizeof pwhy) == 0) {
            place_mem_before(l->pm, l->m, (pid_t)l->pid, &before);
            pl_threads_free(&before);
        }
    }
    pid_t *tids = calloc(r->nthreads, sizeof *tids);
    const int **sets = calloc(r->nthreads, sizeof *sets);
    unsigned *ns = calloc(r->nthreads, sizeof *ns);
    if (tids && sets && ns) {
        for (unsigned i = 0; i < r->nthreads; i++)
            tids[i] = (pid_t)r->thread[i].tid, sets[i] = l->ch->cpus[chip[i]], ns[i] = l->ch->ncpus[chip[i]];
        e = pl_proc_pin_each((pid_t)l->pid, tids, sets, ns, r->nthreads, &l->skipped, why, len);
        l->pinned = r->nthreads - l->skipped;
    } else {
        e = ib_why(why, len, -ENOMEM, "out of memory");
    }
    free(tids), free(sets), free(ns), free(chip);
    if (e < 0) {
        free(first);
        return e;
    }
    /* the pages moved after each move (the next round's phase 1 sees them placed); the cpuset once, after the
     * loop, on the last move's CPUs.  A refusal to move pages is told after the output, not fatal to the loop. */
    l->pm->err_why[0] = 0;
    l->pm->migrated = false;
    l->mrc = place_mem_follow(l->pm, l->m, (pid_t)l->pid, first, r->nthreads, false);
    free(l->first);
    l->first = first;
    l->nfirst = r->nthreads;
    l->moved = true;
    return 0;
}

struct cluster_args {
    struct place_opts po;
    struct pl_cluster_opts co;
    const char *trace, *source, *profile, *mem;
    unsigned long pid, chips, rounds;
    double seconds;
    int apply, no_cpuset, have_seconds, have_remote;
};

/* --region: bytes, a power of two */
static int set_region(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    unsigned long v;
    if (parse_uint(arg, 1, 1ul << 30, &v) < 0 || (v & (v - 1)))
        return -EINVAL;
    ((struct cluster_args *)opts)->co.region = v;
    return 0;
}

/* --trigger: a share in [0, 1); 0 (any remote share activates) is the library's -1, its 0 being its default */
static int set_trigger(const struct cli_opt *op, const char *arg, void *opts, char *why, size_t len)
{
    double v;
    if (parse_double(arg, &v) < 0 || !(v >= 0 && v < 1))
        return -EINVAL;
    ((struct cluster_args *)opts)->co.trigger = v == 0 ? -1 : v;
    return 0;
}

static const char *const cluster_sources[] = {"perf", "soft", NULL};

static int cmd_place_cluster(void *opts, int argc, char **argv, int first)
{
    const struct cluster_args *a = opts;
    const struct place_opts po = a->po;
    struct pl_cluster_opts co = a->co;
    co.have_stall_share = a->have_remote;
    const char *trace = a->trace, *source = a->source, *profile = a->profile, *mem = a->mem;
    bool no_cpuset = a->no_cpuset, apply = a->apply, seconds_given = a->have_seconds;
    unsigned long pid = a->pid, chips_n = a->chips, rounds_max = a->rounds;
    double seconds = a->seconds;
    if (place_refuse_distances(CMD, &po))
        return IB_EXIT_USAGE;
    if (!!trace == !!pid)
        return cli_fail(IB_EXIT_USAGE, CMD, "one of --trace FILE and --pid P is needed");
    if (pid && !source)
        return cli_fail(IB_EXIT_USAGE, CMD, "--pid needs --source perf or --source soft");
    if (trace && (source || apply))
        return cli_fail(IB_EXIT_USAGE, CMD, "--source and --apply go with --pid (a trace's threads are not here)");
    if ((mem || no_cpuset) && !apply)
        return cli_fail(IB_EXIT_USAGE, CMD, "--%s goes with --apply", mem ? "mem" : "no-cpuset");
    if (rounds_max && !apply) /* never ignored in silence: without a move, a second round sees the same process */
        return cli_fail(IB_EXIT_USAGE, CMD, "--rounds goes with --apply (rounds repeat sampling after each move)");
    if (trace && seconds_given)
        return cli_fail(IB_EXIT_USAGE, CMD, "--seconds goes with --pid (a trace is read whole)");
    if (apply && po.topology && strcmp(po.topology, "live"))
        return cli_fail(IB_EXIT_USAGE, CMD, "--apply pins on this machine: --topology must be live");

    char why[512] = "";
    struct pl_machine m;
    struct pl_hier h;
    int rc = place_open("cluster", &po, &m, &h);
    if (rc)
        return rc;
    struct chips ch = {0};
    struct pl_cluster_round_info *info = NULL;
    struct pl_cluster_result res = {0};
    struct place_mem pm = {0};
    bool have_res = false, have_pm = false;
    int *chip = NULL, e, bad = -1; /* bad: 1 the user's input, 0 not, -1 by the rule at fail: */
    struct loop_ctx lc = {trace, source, pid, seconds, po.json != 0, &ch, 0, 0, &m, &pm, false, NULL, 0, 0};
    if ((e = chips_make(&h, (unsigned)chips_n, &ch, why, sizeof why)) < 0)
        goto fail;
    if (!co.region) { /* the cache line hwloc reports */
        struct topo_cache tc;
        if (topo_cache_info(m.topo, 1, false, -1, &tc) == 0 && tc.line && !(tc.line & (tc.line - 1)))
            co.region = tc.line;
    }
    if (apply) { /* --mem checked before any sampling (bad input: exit 2), on every chip's CPUs; each move
                  * resolves it again on the chips it uses */
        unsigned na = 0;
        for (unsigned k = 0; k < ch.n; k++)
            na += ch.ncpus[k];
        int *all = malloc((na ? na : 1) * sizeof *all);
        if (!all) {
            e = ib_why(why, sizeof why, -ENOMEM, "out of memory");
            goto fail;
        }
        na = 0;
        for (unsigned k = 0; k < ch.n; k++)
            for (unsigned j = 0; j < ch.ncpus[k]; j++)
                all[na++] = ch.cpus[k][j];
        rc = place_mem_plan(CMD, mem, &m, all, na, &pm);
        free(all);
        if (rc)
            goto out;
        have_pm = true;
    }
    struct pl_cluster_round_cb cb = {round_sample, apply ? round_migrate : NULL, &lc};
    unsigned nrounds_max = rounds_max ? (unsigned)rounds_max : 1, nrounds = 0;
    if (!(info = calloc(nrounds_max, sizeof *info))) {
        e = ib_why(why, sizeof why, -ENOMEM, "out of memory");
        goto fail;
    }
    if (!trace)
        cli_signals_install();
    e = pl_cluster_loop(&co, &cb, nrounds_max, &res, info, &nrounds, why, sizeof why);
    if (!trace)
        cli_signals_restore();
    if (!trace && (e == -EINTR || cli_stop)) {
        if (e == 0)
            pl_cluster_result_free(&res);
        rc = cli_fail(IB_EXIT_INTR, CMD, "interrupted");
        goto out;
    }
    if (e < 0)
        goto fail;
    have_res = true;
    if (res.nthreads == 0) {
        e = ib_why(why, sizeof why, -ENODATA, "no sample of a thread was counted (%llu samples, %llu remote or "
                   "unknown): nothing to cluster", (unsigned long long)res.stats.samples,
                   (unsigned long long)res.stats.counted);
        goto fail;
    }
    if ((e = chips_of(&res, &ch, &chip, why, sizeof why)) < 0)
        goto fail;
    bool moved = nrounds && info[nrounds - 1].migrated; /* the plan shown is the one applied */
    if (lc.moved) /* the cgroup v2 cpuset once, on the last move's CPUs */
        place_mem_cpuset(&pm, &m, (pid_t)pid, lc.first, lc.nfirst, !no_cpuset);
    char src[200];
    if (trace)
        snprintf(src, sizeof src, "place cluster --trace %s", trace);
    else
        snprintf(src, sizeof src, "place cluster --source %s, %.3g s of process %lu", source, seconds, pid);
    if (profile) {
        struct profile p;
        if ((e = profile_read(profile, &p, why, sizeof why)) < 0) {
            bad = e != -ENOMEM;
            goto fail;
        }
        p.data_sharing = res.data_sharing;
        free(p.data_sharing_source);
        p.data_sharing_source = strdup(src);
        e = p.data_sharing_source ? profile_write(profile, &p, why, sizeof why) : -ENOMEM;
        profile_free(&p);
        if (e < 0) {
            bad = 0;
            goto fail;
        }
    }
    /* ---- output */
    json_t *doc = json_object(), *jch = json_array(), *jcl = json_array(), *jth = json_array(), *jun = json_array();
    for (unsigned k = 0; k < ch.n; k++) {
        char l[1024];
        pl_cpulist_format(ch.cpus[k], ch.ncpus[k], l, sizeof l);
        json_t *tt = json_array();
        for (unsigned i = 0; i < res.nthreads; i++)
            if (chip[i] == (int)k)
                json_array_append_new(tt, json_integer(res.thread[i].tid));
        json_array_append_new(jch, json_pack("{s:i,s:s,s:o}", "chip", (int)k, "cpus", l, "threads", tt));
    }
    for (unsigned g = 0; g < res.nclusters; g++) {
        json_t *tt = json_array();
        for (unsigned j = 0; j < res.cluster[g].n; j++)
            json_array_append_new(tt, json_integer(res.thread[res.cluster[g].member[j]].tid));
        json_array_append_new(jcl, json_pack("{s:i,s:i,s:o}", "cluster", (int)g + 1, "representative",
                                             (int)res.thread[res.cluster[g].member[0]].tid, "threads", tt));
    }
    for (unsigned i = 0; i < res.nthreads; i++)
        json_array_append_new(jth, json_pack("{s:i,s:I,s:I,s:I,s:o,s:i}", "tid", (int)res.thread[i].tid, "samples",
                                             (json_int_t)res.thread[i].samples, "recorded",
                                             (json_int_t)res.thread[i].recorded, "similarity",
                                             (json_int_t)res.thread[i].rep_similarity, "cluster",
                                             res.thread[i].cluster >= 0 ? json_integer(res.thread[i].cluster + 1)
                                                                        : json_null(),
                                             "chip", chip[i]));
    for (unsigned j = 0; j < res.nunclustered; j++)
        json_array_append_new(jun, json_integer(res.thread[res.unclustered[j]].tid));
    json_object_set_new(doc, "command", json_string(CMD));
    json_object_set_new(doc, "source", json_string(trace ? "trace" : source));
    json_object_set_new(doc, "input", json_string(src));
    json_object_set_new(doc, "region", json_integer((json_int_t)(co.region ? co.region : PL_CLUSTER_REGION)));
    json_object_set_new(doc, "threshold", json_real(res.threshold));
    json_object_set_new(doc, "samples", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "seen", (json_int_t)res.stats.samples,
                                                   "counted", (json_int_t)res.stats.counted, "taken",
                                                   (json_int_t)res.stats.taken, "recorded",
                                                   (json_int_t)res.stats.recorded, "collided",
                                                   (json_int_t)res.stats.collided, "limited",
                                                   (json_int_t)res.stats.limited));
    json_object_set_new(doc, "global_entries", json_integer(res.nglobal));
    json_object_set_new(doc, "data_sharing", json_real(res.data_sharing));
    json_object_set_new(doc, "lines", json_pack("{s:I,s:I,s:I}", "seen", (json_int_t)res.lines, "shared",
                                                 (json_int_t)res.shared_lines, "untracked_samples",
                                                 (json_int_t)res.lines_untracked));
    json_object_set_new(doc, "remote_shared", json_real(res.remote_shared));
    json_object_set_new(doc, "phase1", json_pack("{s:f,s:o,s:s,s:b}", "trigger", res.trigger < 0 ? 0.0 : res.trigger,
                                                  "remote_share", isnan(res.remote_share) ? json_null()
                                                                                          : json_real(res.remote_share),
                                                  "source", res.remote_share_source, "triggered", res.triggered));
    json_object_set_new(doc, "comparisons", json_integer((json_int_t)res.comparisons));
    json_t *jr = json_array();
    for (unsigned k = 0; k < nrounds; k++)
        json_array_append_new(jr, json_pack("{s:i,s:o,s:b,s:b,s:i,s:i,s:i}", "round", (int)k + 1, "remote_share",
                                            isnan(info[k].remote_share) ? json_null()
                                                                        : json_real(info[k].remote_share),
                                            "triggered", info[k].triggered, "moved", info[k].migrated, "threads",
                                            (int)info[k].nthreads, "clusters", (int)info[k].nclusters,
                                            "unclustered", (int)info[k].nunclustered));
    json_object_set_new(doc, "rounds", jr);
    json_object_set_new(doc, "threads", jth);
    json_object_set_new(doc, "clusters", jcl);
    json_object_set_new(doc, "unclustered", jun);
    json_object_set_new(doc, "chips", json_pack("{s:s,s:o}", "how", ch.how, "plan", jch));
    json_object_set_new(doc, "applied", apply ? json_pack("{s:i,s:i,s:b,s:o}", "pinned", (int)lc.pinned, "skipped",
                                                          (int)lc.skipped, "plan_applied", moved, "memory",
                                                          lc.moved ? place_mem_json(&pm, &m) : json_null())
                                              : json_null());
    json_object_set_new(doc, "profile", profile ? json_string(profile) : json_null());
    if (po.json) {
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, CMD, "cannot write JSON");
    } else {
        printf("%s: %u threads, %u cluster%s, %u unclustered\n", src, res.nthreads, res.nclusters,
               res.nclusters == 1 ? "" : "s", res.nunclustered);
        printf("samples: %llu seen, %llu remote or unknown, %llu taken (1 in %u), %llu recorded (%llu collided in the "
               "filter, %llu over a thread's limit)\n",
               (unsigned long long)res.stats.samples, (unsigned long long)res.stats.counted,
               (unsigned long long)res.stats.taken, co.sample_n ? co.sample_n : 1,
               (unsigned long long)res.stats.recorded, (unsigned long long)res.stats.collided,
               (unsigned long long)res.stats.limited);
        printf("similarity: dot product of shMaps, entries under %u ignored, %u globally shared entr%s left out; "
               "threshold %.0f\n", res.small, res.nglobal, res.nglobal == 1 ? "y" : "ies", res.threshold);
        char share[48] = "unknown";
        if (!isnan(res.remote_share))
            snprintf(share, sizeof share, "%.3f", res.remote_share);
        printf("phase 1: remote share %s (%s) %s trigger %.2f: %s\n", share, res.remote_share_source,
               res.triggered && !isnan(res.remote_share) ? ">" : isnan(res.remote_share) ? "vs" : "<=",
               res.trigger < 0 ? 0.0 : res.trigger,
               res.triggered ? "clustering activated" : "clustering not activated, every thread unclustered");
        printf("one pass: threads in tid order, %llu similarities with representatives\n",
               (unsigned long long)res.comparisons);
        printf("data sharing (Algorithm 1's): %.3f of all samples on lines 2 or more threads touch (%llu of %llu "
               "lines shared%s); remote samples on shared shMap entries: %.3f\n",
               res.data_sharing, (unsigned long long)res.shared_lines, (unsigned long long)res.lines,
               res.lines_untracked ? ", some samples on lines past the table's bound left out" : "",
               res.remote_shared);
        if (nrounds > 1 || apply)
            for (unsigned k = 0; k < nrounds; k++) {
                char rs[48] = "unknown";
                if (!isnan(info[k].remote_share))
                    snprintf(rs, sizeof rs, "%.3f", info[k].remote_share);
                printf("round %u: remote share %s, %u cluster%s, %s\n", k + 1, rs, info[k].nclusters,
                       info[k].nclusters == 1 ? "" : "s",
                       info[k].migrated ? "threads moved" : info[k].triggered ? "not moved" : "phase 1 not triggered: "
                       "nothing moved, loop ended");
            }
        printf("\n");
        for (unsigned g = 0; g < res.nclusters; g++) {
            printf("cluster %u:", g + 1);
            for (unsigned j = 0; j < res.cluster[g].n; j++)
                printf(" %u", res.thread[res.cluster[g].member[j]].tid);
            printf("  (representative %u)\n", res.thread[res.cluster[g].member[0]].tid);
        }
        if (res.nunclustered) {
            printf("unclustered:");
            for (unsigned j = 0; j < res.nunclustered; j++)
                printf(" %u", res.thread[res.unclustered[j]].tid);
            printf("\n");
        }
        printf("\n%-8s %10s %10s %12s %8s %5s\n", "tid", "samples", "recorded", "similarity", "cluster", "chip");
        for (unsigned i = 0; i < res.nthreads; i++) {
            char cl[16] = "-";
            if (res.thread[i].cluster >= 0)
                snprintf(cl, sizeof cl, "%d", res.thread[i].cluster + 1);
            printf("%-8u %10llu %10llu %12llu %8s %5d\n", res.thread[i].tid,
                   (unsigned long long)res.thread[i].samples, (unsigned long long)res.thread[i].recorded,
                   (unsigned long long)res.thread[i].rep_similarity, cl, chip[i]);
        }
        printf("\nchips (%s)%s:\n", ch.how, apply && !moved ? ", not applied (phase 1 not triggered)" : "");
        for (unsigned k = 0; k < ch.n; k++) {
            char l[1024];
            pl_cpulist_format(ch.cpus[k], ch.ncpus[k], l, sizeof l);
            printf("  chip %u (cpus %s):", k, l);
            for (unsigned i = 0; i < res.nthreads; i++)
                if (chip[i] == (int)k)
                    printf(" %u", res.thread[i].tid);
            printf("\n");
        }
        if (apply && lc.pinned + lc.skipped)
            printf("applied: %u thread%s pinned to their chip's CPUs%s\n", lc.pinned, lc.pinned == 1 ? "" : "s",
                   lc.skipped ? " (some had exited: skipped)" : "");
        if (apply && lc.moved)
            place_mem_print(&pm, &m);
        else if (apply)
            printf("memory          left alone: no thread was moved\n");
        if (profile)
            printf("data sharing %.3f written into %s\n", res.data_sharing, profile);
    }
    json_decref(doc);
    /* threads pinned but memory refused: the placement is half done, which is a failure to say */
    if (lc.mrc < 0 && rc == IB_EXIT_OK)
        rc = cli_fail(IB_EXIT_FAIL, CMD, "threads pinned, memory not moved: %s", pm.err_why);
    goto out;
fail:
    if (e == -EOPNOTSUPP)
        rc = cli_fail(IB_EXIT_SKIP, CMD, "%s", why);
    else {
        /* the rule: a trace's every failure is its content's; a live one's, a process that is not there or not
         * ibench-share; pinning refused, no sample from a live process, I/O: run-time failures */
        if (bad < 0)
            bad = trace ? e != -ENOMEM : (e == -ENOENT || e == -ESRCH || e == -EINVAL || e == -EPROTO);
        rc = cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : cli_exit_for(e, bad), CMD, "%s", why);
    }
out:
    if (have_pm)
        place_mem_free(&pm);
    free(lc.first);
    free(chip);
    if (have_res)
        pl_cluster_result_free(&res);
    free(info);
    chips_free(&ch);
    pl_hier_free(&h);
    pl_machine_free(&m);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define CA struct cluster_args
static const struct cli_opt cluster_table[] = {
    {CLI_STR("trace", "FILE", CA, trace,
             "'tid address [source]' lines (docs/placement.md; scripts/perf2trace converts perf)")},
    {CLI_ULONG("pid", "P", CA, pid, 1, 4194304, "a live process, sampled for --seconds by --source"),
     .what = "a process id"},
    {CLI_CHOICE("source", "perf|soft", CA, source, cluster_sources,
                "perf (PEBS load latency / AMD IBS; exit 77 where the PMU has neither) or soft\n"
                "(P is ibench-share, which reports its own sampled accesses)")},
    {CLI_DOUBLE("seconds", "S", CA, seconds, 0, 86400, "how long --pid is sampled"), .flags = CLI_OPT_GT_MIN,
     .def = "5", .have = CLI_HAVE(CA, have_seconds), .what = "seconds in (0, 86400]"},
    {CLI_ULONG("chips", "N", CA, chips, 1, 4096,
               "N chips: the instances of the topology's coarsest level when it has N, else the\n"
               "PUs in logical order cut into N runs")},
    PLACE_OPT_TOPOLOGY(CA, "the chips are the instances of its coarsest level (default: this machine)"),
    {CLI_DOUBLE("threshold", "T", CA, co.threshold, 0, INFINITY,
                "similarity threshold (default 40000 for 8-bit counters, scaled with --bits)"),
     .flags = CLI_OPT_GT_MIN},
    {CLI_UINT("entries", "E", CA, co.entries, 1, 1 << 20, "shMap entries (default 256)")},
    {CLI_UINT("bits", "B", CA, co.bits, 1, 16, "counter width (default 8)")},
    {CLI_CUSTOM("region", "BYTES", CA, co.region, set_region,
                "region size (default: the cache line size hwloc reports)"),
     .what = "bytes, a power of two", .sample = "64"},
    {CLI_UINT("sample", "N", CA, co.sample_n, 1, 1u << 30, "temporal sampling 1 in N (default 1)")},
    {CLI_ULONG("seed", "S", CA, co.seed, 0, 18446744073709551615.0, "the jitter's seed"), .def = "1"},
    {CLI_CUSTOM("trigger", "F", CA, co.trigger, set_trigger,
                "phase 1: cluster only when the remote share is above F (default 0.20; 0 clusters\n"
                "whenever anything is remote)"),
     .what = "a share in [0, 1)", .sample = "0.2"},
    {CLI_DOUBLE("remote-share", "F", CA, co.stall_share, 0, 1,
                "a measured remote stall share (0-1) for phase 1, instead of the samples' share of\n"
                "remote accesses among those whose source is known"),
     .have = CLI_HAVE(CA, have_remote), .what = "a share in [0, 1]"},
    {CLI_FLAG("apply", CA, apply,
              "pin each thread of P to the CPUs of its chip (checked: /proc/P/task/*/status),\n"
              "and move its memory to the chips' NUMA nodes (--mem, as place apply)")},
    {CLI_ULONG("rounds", "N", CA, rounds, 1, 1000,
               "with --apply: sample, cluster and pin again, up to N rounds (default 1), while\n"
               "phase 1 stays triggered (Tam et al. EuroSys'07's repeat loop); memory follows each move")},
    PLACE_MEM_OPTS(CA),
    {CLI_STR("profile", "FILE", CA, profile,
             "write the measured data sharing (Algorithm 1's: the share of all sampled accesses\n"
             "on lines two or more threads touch) into FILE's characteristics (profile 1.3)")},
    PLACE_OPT_CONCERNS(CA, place_help_concerns),
    PLACE_OPT_NO_DISTANCES(CA),
    PLACE_OPT_JSON(CA),
};
#undef CA

const struct cli_cmd cli_cmd_place_cluster = {
    .name = "place cluster",
    CLI_RUN(cmd_place_cluster, struct cluster_args),
    .summary = "Tam et al. EuroSys'07: cluster a process's threads by the data they share, and onto chips",
    .usage = "usage: ibench place cluster (--trace FILE | --pid P --source perf|soft [--seconds S])\n"
             "                            (--chips N | --topology SPEC) [--threshold T] [--entries E] [--bits B]\n"
             "                            [--region BYTES] [--sample N] [--seed S] [--trigger F] [--remote-share F]\n"
             "                            [--apply [--rounds N] [--mem MODE] [--no-cpuset]] [--profile FILE] [--json]\n\n",
    .about = "Tam et al. EuroSys'07's thread clustering: phase 1 activates it when the remote share is above the trigger; per-thread\n"
             "shMaps of the sampled remote cache accesses; the paper's one pass (threads in tid order, each compared\n"
             "with the known clusters' representatives: dot product, lines in more than half of the threads left\n"
             "out); then each cluster onto one chip, and with --apply the threads (and their memory) moved there,\n"
             "repeated while phase 1 stays triggered.\n\n",
    CLI_OPTS(cluster_table),
};
