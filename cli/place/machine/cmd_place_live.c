/* cmd_place_live.c - `ibench place apply` (pin every thread of a live process) and `ibench place show` (where each
 * thread runs and may run, and the class of that placement).  docs/placement.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"
#include "pl_classes.h"
#include "pl_proc.h"
#include "place.h"

/* --class on a listing with --all: more classes than this is not a listing anyone picks a row from */

/* The shared options as a live process takes them: its own machine's topology alone, no distances file (given, both
 * are refused by live_only). */
#define LIVE_OPTS(st)                                                                                              \
    PLACE_OPT_CONCERNS(st, "the shared levels that define classes (ibench place classes --help)"),                 \
        {CLI_STR("topology", "live", st, po.topology,                                                              \
                 "only this machine makes sense for a running process (the default)")},                          \
        PLACE_OPT_NO_DISTANCES(st), PLACE_OPT_JSON(st)

/* A live process runs on this machine: any other topology, or a distances file, is a mistake worth a word. */
static int live_only(const char *cmd, const struct place_opts *o)
{
    if (o->topology && strcmp(o->topology, "live"))
        return cli_fail(IB_EXIT_USAGE, cmd, "--topology %s: a running process is on this machine; only live applies",
                        o->topology);
    if (place_refuse_distances(cmd, o))
        return IB_EXIT_USAGE;
    return 0;
}

static int parse_pid(const char *cmd, const char *s, pid_t *pid)
{
    unsigned long v;
    if (parse_uint(s, 1, INT_MAX, &v) < 0)
        return cli_fail(IB_EXIT_USAGE, cmd, "bad --pid '%s': want a process id (a positive number)", s);
    *pid = (pid_t)v;
    return 0;
}

/* A failure of pl_proc_threads/pl_proc_apply: a process that is not there (or not a process) is the user's input. */
static int proc_fail(const char *cmd, int rc, const char *why)
{
    return cli_fail(rc == -ESRCH || rc == -EINVAL ? IB_EXIT_USAGE : IB_EXIT_FAIL, cmd, "%s", why);
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static json_t *int_array(const int *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

/* ---- place apply ------------------------------------------------------------------------------------------------- */

struct apply_args {
    struct place_opts po;
    pid_t pid;
    const char *pidarg, *cpus, *class_id, *threads, *limit, *mem;
    int all, set, no_cpuset;
};

_Static_assert(PL_CLASSES_LIMIT == 10000, "the help of --limit below says 10000");

/* --pid, --class, --threads and --limit are read where they are used (place_class_cpus, parse_pid), as place run
 * reads them */
/* The rules between apply's options, and --pid read: 0, or the exit code after one line. */
static int apply_check(struct apply_args *a)
{
    const char *pid = a->pidarg;
    if (!pid)
        return cli_fail(IB_EXIT_USAGE, "place apply", "--pid P is required (ibench place apply --help)");
    if (!a->cpus == !a->class_id)
        return cli_fail(IB_EXIT_USAGE, "place apply", "give either --cpus LIST or --class ID --threads N");
    if (a->class_id && !a->threads)
        return cli_fail(IB_EXIT_USAGE, "place apply", "--class ID needs --threads N: ids number the rows of "
                                                      "`ibench place classes --threads N`");
    if (a->cpus && (a->threads || a->all || a->limit))
        return cli_fail(IB_EXIT_USAGE, "place apply", "--%s goes with --class, not --cpus",
                        a->all ? "all" : a->limit ? "limit" : "threads");
    if (a->limit && !a->all)
        return cli_fail(IB_EXIT_USAGE, "place apply", "--limit goes with --all");
    int rc = live_only("place apply", &a->po);
    return rc ? rc : parse_pid("place apply", pid, &a->pid);
}

/* The CPUs (OS indexes, in the representative's PU order) of row `id` of the class listing. */
int place_class_cpus(const char *cmd, const struct pl_hier *h, const char *class_id, unsigned long n, int all,
                     const char *limit_arg, int **cpus, unsigned *ncpus)
{
    unsigned long id;
    if (parse_uint(class_id, 0, ULONG_MAX, &id) < 0)
        return cli_fail(IB_EXIT_USAGE, cmd, "bad --class '%s': want a row id of ibench place classes",
                        class_id);
    if (n > h->npus)
        return cli_fail(IB_EXIT_USAGE, cmd, "--threads %lu: this machine has %u PUs", n, h->npus);
    unsigned long limit = PL_CLASSES_LIMIT;
    if (limit_arg && parse_uint(limit_arg, 1, ULONG_MAX, &limit) < 0)
        return cli_fail(IB_EXIT_USAGE, cmd, "bad --limit '%s': want a count of classes >= 1", limit_arg);
    struct pl_classes_opts co = {.nthreads = (unsigned)n, .all = all, .limit = limit, .bw = NULL};
    struct pl_class_list l;
    char why[512];
    int rc = pl_classes(h, &co, &l, why, sizeof(why));
    if (rc < 0)
        return cli_fail(cli_exit_for(rc, rc != -ENOMEM), cmd, "%s", why);
    if (id < 1 || id > l.n) {
        rc = cli_fail(IB_EXIT_USAGE, cmd, "class id %lu out of range: the %s for %lu thread(s) are 1..%u",
                      id, all ? "classes" : "important placements", n, l.n);
        pl_class_list_free(&l);
        return rc;
    }
    const struct pl_class *k = &l.v[id - 1];
    *cpus = malloc(k->nthreads * sizeof(**cpus));
    if (!*cpus) {
        pl_class_list_free(&l);
        return cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    }
    for (unsigned i = 0; i < k->nthreads; i++)
        (*cpus)[i] = h->pu_os[k->pus[i]];
    *ncpus = k->nthreads;
    pl_class_list_free(&l);
    return 0;
}

static json_t *apply_doc(const struct apply_args *a, const int *cpus, unsigned ncpus, unsigned long n,
                         const struct pl_apply_result *r, const struct place_mem *pm, const struct pl_machine *m)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "command", json_string("place apply"));
    json_object_set_new(doc, "pid", json_integer(a->pid));
    json_object_set_new(doc, "mode", json_string(a->set ? "set" : "cpus"));
    json_object_set_new(doc, "cpus", int_array(cpus, ncpus));
    json_object_set_new(doc, "class", a->class_id ? json_pack("{s:i,s:i,s:b}", "id", atoi(a->class_id), "threads",
                                                              (int)n, "all", a->all)
                                                  : json_null());
    json_object_set_new(doc, "wrapped", json_boolean(r->wrapped));
    json_object_set_new(doc, "rounds", json_integer(r->rounds));
    json_object_set_new(doc, "pinned", json_integer(r->pinned));
    json_t *th = json_array();
    for (unsigned i = 0; i < r->n; i++) {
        const struct pl_applied *t = &r->v[i];
        json_t *tc = t->exited ? json_array() : a->set ? int_array(cpus, ncpus) : int_array(&t->cpu, 1);
        json_array_append_new(th, json_pack("{s:i,s:s,s:o,s:o,s:i,s:b}", "tid", (int)t->tid, "name", t->comm, "cpus",
                                            tc, "before", int_array(t->before, t->nbefore), "round", (int)t->round,
                                            "exited", t->exited));
    }
    json_object_set_new(doc, "threads", th);
    json_object_set_new(doc, "memory", place_mem_json(pm, m));
    return doc;
}

static void apply_print(const struct apply_args *a, const int *cpus, unsigned ncpus, const struct pl_apply_result *r)
{
    char list[256], one[32];
    /* the list as given (order matters), not merged into ranges */
    size_t used = 0;
    list[0] = '\0';
    for (unsigned i = 0; i < ncpus && used < sizeof(list); i++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d", i ? "," : "", cpus[i]);
    printf("process %d: %u thread(s) pinned, %s %s\n", (int)a->pid, r->pinned,
           a->set ? "each to all of CPUs" : "one CPU each from", list);
    printf("\n%8s  %-16s %s\n", "tid", "name", "cpus");
    for (unsigned i = 0; i < r->n; i++) {
        const struct pl_applied *t = &r->v[i];
        snprintf(one, sizeof(one), "%d", t->cpu);
        printf("%8d  %-16s %s\n", (int)t->tid, t->comm,
               t->exited ? "(exited before it was pinned)" : a->set ? list : one);
    }
}

static int cmd_place_apply(void *opts, int argc, char **argv, int first)
{
    struct apply_args *a = opts;
    int rc = apply_check(a);
    if (rc)
        return rc;
    const char *cmd = "place apply";
    char why[512];
    int *cpus = NULL;
    unsigned ncpus = 0;
    unsigned long n = 0;
    if (a->cpus && pl_cpulist_parse(a->cpus, &cpus, &ncpus, why, sizeof(why)) < 0)
        return cli_fail(IB_EXIT_USAGE, cmd, "--cpus: %s", why);
    if (a->threads && parse_uint(a->threads, 1, UINT_MAX, &n) < 0) {
        free(cpus);
        return cli_fail(IB_EXIT_USAGE, cmd, "bad --threads '%s': want a thread count of at least 1", a->threads);
    }

    struct pl_machine m;
    struct pl_hier h;
    /* --cpus needs only the PUs' OS indexes: every level, unchecked, so a hierarchy the concerns would refuse does
     * not stand in the way */
    rc = place_open("apply", &a->po, &m, a->class_id ? &h : NULL);
    if (rc) {
        free(cpus);
        return rc;
    }
    if (a->cpus) {
        rc = pl_hier_levels(m.topo, &h, why, sizeof(why));
        if (rc < 0)
            rc = cli_fail(cli_exit_for(rc, rc != -ENOMEM), cmd, "%s", why);
        else if (pl_cpus_on_machine(&h, cpus, ncpus, why, sizeof(why)) < 0)
            rc = cli_fail(IB_EXIT_USAGE, cmd, "%s", why);
    } else {
        rc = place_class_cpus(cmd, &h, a->class_id, n, a->all, a->limit, &cpus, &ncpus);
    }
    pl_hier_free(&h);
    struct place_mem pm = {0};
    if (!rc)
        rc = place_mem_plan(cmd, a->mem, &m, cpus, ncpus, &pm);
    if (rc) {
        pl_machine_free(&m);
        free(cpus);
        return rc;
    }

    /* the process as it is now: does it exist, and does its thread count match the listing's N */
    struct pl_threads t;
    rc = pl_proc_threads(a->pid, &t, why, sizeof(why));
    if (rc < 0) {
        place_mem_free(&pm);
        pl_machine_free(&m);
        free(cpus);
        return proc_fail(cmd, rc, why);
    }
    place_mem_before(&pm, &m, a->pid, &t);
    if (a->class_id && t.n != n)
        fprintf(stderr,
                "ibench %s: warning: process %d has %u thread(s), the class is a placement of %lu: %s\n", cmd,
                (int)a->pid, t.n, n,
                t.n > n ? (a->set ? "every thread shares all of its CPUs" : "threads past the class's CPUs reuse them")
                        : "some of its CPUs stay unused");
    pl_threads_free(&t);

    struct pl_apply_opts ao = {.cpus = cpus, .ncpus = ncpus, .set = a->set};
    struct pl_apply_result r;
    rc = pl_proc_apply(a->pid, &ao, &r, why, sizeof(why));
    if (rc < 0) {
        /* the process was there a moment ago: vanishing now is a run-time failure, not bad input */
        rc = cli_fail(rc == -EINVAL ? IB_EXIT_USAGE : IB_EXIT_FAIL, cmd, "%s", why);
    } else {
        /* the CPUs the threads now have: one each, or the whole list each (--set) */
        int *now = malloc((r.n + ncpus + 1) * sizeof *now);
        unsigned nnow = 0;
        for (unsigned i = 0; now && i < (a->set ? ncpus : r.n); i++)
            if (a->set || !r.v[i].exited)
                now[nnow++] = a->set ? cpus[i] : r.v[i].cpu;
        int mrc = place_mem_follow(&pm, &m, a->pid, now ? now : cpus, now ? nnow : ncpus, !a->no_cpuset);
        free(now);
        if (r.wrapped)
            fprintf(stderr, "ibench %s: note: %u threads on %u CPU(s): the CPUs were handed out again from the "
                            "list's start (thread %u got CPU %d)\n", cmd, r.n, ncpus, ncpus + 1, cpus[0]);
        if (a->po.json) {
            json_t *doc = apply_doc(a, cpus, ncpus, n, &r, &pm, &m);
            rc = out_json(stdout, doc) < 0 ? IB_EXIT_FAIL : IB_EXIT_OK;
            json_decref(doc);
        } else {
            apply_print(a, cpus, ncpus, &r);
            place_mem_print(&pm, &m);
            rc = IB_EXIT_OK;
        }
        /* threads pinned but memory refused: the placement is half done, which is a failure to say */
        if (mrc < 0 && rc == IB_EXIT_OK)
            rc = cli_fail(IB_EXIT_FAIL, cmd, "threads pinned, memory not moved: %s", pm.err_why);
    }
    pl_apply_result_free(&r);
    place_mem_free(&pm);
    pl_machine_free(&m);
    free(cpus);
    return rc;
}

/* ---- place show -------------------------------------------------------------------------------------------------- */

/* Where the threads may run, as a placement: their CPUs when every thread is allowed exactly one and no two share
 * one (pinned), else the union of what they are allowed.  CPUs not in the topology (allowed but offline) are left
 * out and counted in *dropped.  cpus: ascending OS indexes, pus: their logical indexes. */
struct show_place {
    int pinned;
    int *cpus;
    unsigned *pus;
    unsigned n, dropped;
};

static int show_placement(const struct pl_threads *t, const struct pl_hier *h, struct show_place *sp)
{
    memset(sp, 0, sizeof(*sp));
    unsigned total = 0;
    int one_each = 1;
    for (unsigned i = 0; i < t->n; i++) {
        total += t->v[i].nallowed;
        one_each &= t->v[i].nallowed == 1;
    }
    int *all = malloc((total ? total : 1) * sizeof(*all));
    sp->cpus = malloc((total ? total : 1) * sizeof(*sp->cpus));
    sp->pus = malloc((total ? total : 1) * sizeof(*sp->pus));
    if (!all || !sp->cpus || !sp->pus) {
        free(all);
        return -ENOMEM;
    }
    unsigned k = 0;
    for (unsigned i = 0; i < t->n; i++)
        for (unsigned j = 0; j < t->v[i].nallowed; j++)
            all[k++] = t->v[i].allowed[j];
    qsort(all, k, sizeof(*all), int_cmp);
    unsigned distinct = 0;
    for (unsigned i = 0; i < k; i++) {
        if (i && all[i] == all[i - 1])
            continue;
        distinct++;
        if (pl_cpus_to_pus(h, &all[i], 1, &sp->pus[sp->n], NULL, 0) < 0) {
            sp->dropped++;
            continue;
        }
        sp->cpus[sp->n++] = all[i];
    }
    sp->pinned = one_each && distinct == t->n;
    free(all);
    return 0;
}

static void show_place_free(struct show_place *sp)
{
    free(sp->cpus);
    free(sp->pus);
    memset(sp, 0, sizeof(*sp));
}

/* The class of the placement, and its id among the important placements for that many threads (0: not one). */
static int show_class(const struct pl_hier *h, const struct show_place *sp, struct pl_class *c, char *why, size_t len)
{
    unsigned *pus = malloc((sp->n ? sp->n : 1) * sizeof(*pus));
    if (!pus)
        return ib_why(why, len, -ENOMEM, "out of memory");
    memcpy(pus, sp->pus, sp->n * sizeof(*pus));
    /* ascending logical order, as a class's representative is written */
    for (unsigned a = 1; a < sp->n; a++)
        for (unsigned b = a; b > 0 && pus[b - 1] > pus[b]; b--) {
            unsigned x = pus[b];
            pus[b] = pus[b - 1];
            pus[b - 1] = x;
        }
    int rc = pl_class_of(h, pus, sp->n, c, why, len);
    free(pus);
    if (rc < 0)
        return rc;
    c->id = 0;
    struct pl_classes_opts co = {.nthreads = sp->n, .all = false, .limit = PL_CLASSES_LIMIT, .bw = NULL};
    struct pl_class_list l;
    char ignore[256];
    if (pl_classes(h, &co, &l, ignore, sizeof(ignore)) == 0) {
        const struct pl_class *f = pl_class_find(&l, c);
        c->id = f ? f->id : 0;
        pl_class_list_free(&l);
    }
    return 0;
}

static json_t *show_doc(pid_t pid, const struct pl_threads *t, const struct pl_hier *h, const struct show_place *sp,
                        const struct pl_class *c)
{
    char buf[4096];
    json_t *doc = json_object();
    json_object_set_new(doc, "command", json_string("place show"));
    json_object_set_new(doc, "pid", json_integer(pid));
    json_t *cn = json_array();
    for (unsigned k = 0; k < h->nlevels; k++)
        json_array_append_new(cn, json_string(h->lv[k].name));
    json_object_set_new(doc, "concerns", cn);
    json_t *th = json_array();
    for (unsigned i = 0; i < t->n; i++) {
        const struct pl_thread *x = &t->v[i];
        json_array_append_new(
            th, json_pack("{s:i,s:s,s:o,s:o,s:s}", "tid", (int)x->tid, "name", x->comm, "last_cpu",
                          x->last_cpu >= 0 ? json_integer(x->last_cpu) : json_null(), "allowed",
                          int_array(x->allowed, x->nallowed), "allowed_list",
                          pl_cpulist_format(x->allowed, x->nallowed, buf, sizeof(buf))));
    }
    json_object_set_new(doc, "threads", th);

    json_t *pus = json_array();
    for (unsigned i = 0; i < sp->n; i++)
        json_array_append_new(pus, json_integer(sp->pus[i]));
    json_t *scores = json_object(), *usage = json_object();
    for (unsigned k = 0; k < h->nlevels; k++) {
        json_object_set_new(scores, h->lv[k].name, json_integer(c->score[k]));
        json_object_set_new(usage, h->lv[k].name, json_string(c->usage[k] ? c->usage[k] : ""));
    }
    char note[80];
    json_t *cls = json_pack("{s:o,s:o,s:o,s:s,s:f,s:s}", "id", c->id ? json_integer(c->id) : json_null(), "scores",
                            scores, "usage", usage, "orbit_size", c->orbit ? c->orbit : "", "orbit_fraction",
                            c->orbit_frac, "key", c->key ? c->key : "");
    json_object_set_new(cls, "notation",
                        pl_class_notation(h, c, note, sizeof(note)) == 0 ? json_string(note) : json_null());
    json_object_set_new(doc, "placement",
                        json_pack("{s:b,s:i,s:o,s:s,s:o,s:i,s:o}", "pinned", sp->pinned, "nthreads", (int)sp->n,
                                  "cpus", int_array(sp->cpus, sp->n), "cpus_list",
                                  pl_cpulist_format(sp->cpus, sp->n, buf, sizeof(buf)), "pus", pus, "dropped",
                                  (int)sp->dropped, "class", cls));
    return doc;
}

static void show_print(pid_t pid, const struct pl_threads *t, const struct pl_hier *h, const struct show_place *sp,
                       const struct pl_class *c)
{
    char buf[4096];
    printf("process %d: %u thread(s)\n\n%8s  %-16s %8s  %s\n", (int)pid, t->n, "tid", "name", "last CPU", "allowed");
    for (unsigned i = 0; i < t->n; i++) {
        const struct pl_thread *x = &t->v[i];
        char last[16] = "-";
        if (x->last_cpu >= 0)
            snprintf(last, sizeof(last), "%d", x->last_cpu);
        printf("%8d  %-16s %8s  %s\n", (int)x->tid, x->comm, last,
               pl_cpulist_format(x->allowed, x->nallowed, buf, sizeof(buf)));
    }
    pl_cpulist_format(sp->cpus, sp->n, buf, sizeof(buf));
    if (sp->pinned)
        printf("\nplacement pinned, one thread per CPU: CPUs %s\n", buf);
    else
        printf("\nplacement not pinned one thread per CPU; the CPUs they may use, CPUs %s, as a placement of %u "
               "PU(s)\n", buf, sp->n);
    if (sp->dropped)
        printf("          (%u allowed CPU(s) not on this machine's topology left out)\n", sp->dropped);
    if (c->id)
        printf("class     %u of the important placements for %u thread(s) (ibench place classes --threads %u)\n",
               c->id, sp->n, sp->n);
    else
        printf("class     not one of the important placements for %u thread(s)\n", sp->n);
    if (!h->nlevels) {
        printf("concerns  none: no shared level here, every placement is alike\n");
    } else {
        printf("\n%-16s %6s  %s\n", "level", "score", "threads per used instance");
        for (unsigned k = 0; k < h->nlevels; k++)
            printf("%-16s %6u  %s\n", h->lv[k].name, c->score[k], c->usage[k] ? c->usage[k] : "");
    }
    printf("orbit     %s placement(s) in this class (%.3g of all placements of %u thread(s))\n",
           c->orbit ? c->orbit : "?", c->orbit_frac, c->nthreads);
    if (pl_class_notation(h, c, buf, sizeof(buf)) == 0)
        printf("notation  %s\n", buf);
}

struct show_args {
    struct place_opts po;
    const char *pidarg;
};

static int cmd_place_show(void *opts, int argc, char **argv, int first)
{
    const struct show_args *a = opts;
    const char *cmd = "place show", *pidarg = a->pidarg;
    const struct place_opts po = a->po;
    if (!pidarg)
        return cli_fail(IB_EXIT_USAGE, cmd, "--pid P is required (ibench place show --help)");
    pid_t pid = 0;
    int rc = live_only(cmd, &po);
    if (!rc)
        rc = parse_pid(cmd, pidarg, &pid);
    if (rc)
        return rc;

    char why[512];
    struct pl_threads t;
    rc = pl_proc_threads(pid, &t, why, sizeof(why));
    if (rc < 0)
        return proc_fail(cmd, rc, why);
    struct pl_machine m;
    struct pl_hier h;
    rc = place_open("show", &po, &m, &h);
    if (rc) {
        pl_threads_free(&t);
        return rc;
    }
    struct show_place sp;
    struct pl_class cls;
    memset(&cls, 0, sizeof(cls));
    rc = show_placement(&t, &h, &sp);
    if (rc < 0)
        rc = cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    else if (!sp.n)
        rc = cli_fail(IB_EXIT_FAIL, cmd, "process %d may run on no CPU of this machine's topology", (int)pid);
    else if ((rc = show_class(&h, &sp, &cls, why, sizeof(why))) < 0)
        rc = cli_fail(cli_exit_for(rc, 0), cmd, "%s", why);
    if (!rc && po.json) {
        json_t *doc = show_doc(pid, &t, &h, &sp, &cls);
        rc = out_json(stdout, doc) < 0 ? IB_EXIT_FAIL : IB_EXIT_OK;
        json_decref(doc);
    } else if (!rc) {
        show_print(pid, &t, &h, &sp, &cls);
    }
    pl_class_free(&cls);
    show_place_free(&sp);
    pl_threads_free(&t);
    pl_hier_free(&h);
    pl_machine_free(&m);
    return rc;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define AA struct apply_args
static const struct cli_opt apply_table[] = {
    {CLI_STR("pid", "P", AA, pidarg, "the process")},
    {CLI_STR("cpus", "LIST", AA, cpus,
             "CPUs by OS index (as taskset), e.g. 2,0-1: the order given is the order\n"
             "threads get them")},
    {CLI_STR("class", "ID", AA, class_id,
             "the representative of row ID of `ibench place classes --threads N`\n"
             "(with the same --all and --concerns)")},
    {CLI_STR("threads", "N", AA, threads,
             "the thread count of that listing (a warning when the process has more\n"
             "or fewer threads)")},
    {CLI_FLAG("all", AA, all, "ID is a row of the --all listing (every class), not of the important ones")},
    {CLI_STR("limit", "K", AA, limit, "with --all: as place classes --limit (default 10000)")},
    {CLI_FLAG("set", AA, set, "every thread gets the whole list, as taskset -a, instead of one CPU each")},
    PLACE_MEM_OPTS(AA),
    LIVE_OPTS(AA),
};
#undef AA

const struct cli_cmd cli_cmd_place_apply = {
    .name = "place apply",
    CLI_RUN(cmd_place_apply, struct apply_args),
    .summary = "pin every thread of a live process to a CPU list or a class's representative",
    .usage = "usage: ibench place apply --pid P (--cpus LIST | --class ID --threads N [--all [--limit K]]\n"
             "                          [--concerns LIST]) [--set] [--mem MODE] [--no-cpuset] [--json]\n\n",
    .about = "Pins every thread of a running process.  Threads, the main thread first and then by thread id,\n"
             "get one CPU each from the list in its order, starting again from its first CPU when there are\n"
             "more threads than CPUs; threads started meanwhile are found and pinned too.  Then its memory\n"
             "follows (--mem): its pages on other NUMA nodes move to the chosen ones (migrate_pages), and the\n"
             "output gives the bytes moved and the locality score before and after.  Linux cannot set the\n"
             "memory policy of another process: its later allocations stay on the set only through a cgroup\n"
             "v2 cpuset (made where possible, else the output says why not) or, by default, by being local\n"
             "to the CPUs it now runs on.\n\n",
    CLI_OPTS(apply_table),
};

static const struct cli_opt show_table[] = {
    {CLI_STR("pid", "P", struct show_args, pidarg, "the process")},
    LIVE_OPTS(struct show_args),
};

const struct cli_cmd cli_cmd_place_show = {
    .name = "place show",
    CLI_RUN(cmd_place_show, struct show_args),
    .summary = "where each thread of a live process runs and may run, and its class",
    .usage = "usage: ibench place show --pid P [--concerns LIST] [--json]\n\n",
    .about = "Where each thread of a running process last ran and may run, then the placement: when every\n"
             "thread may run on exactly one CPU and no two share one, the class of those CPUs (and its row\n"
             "in ibench place classes when it is an important placement); otherwise the class of all the\n"
             "CPUs they may use, as a placement of that many PUs.\n\n",
    CLI_OPTS(show_table),
};
