/* place.h - `ibench place ...`: the subcommands and the options they share (docs/placement.md). */
#ifndef IB_CLI_PLACE_H
#define IB_CLI_PLACE_H
#include <jansson.h>
#include <limits.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "metric.h"
#include "opts.h"
#include "pl_bind.h"
#include "pl_coloc.h"
#include "pl_machine.h"
#include "pl_proc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options every place command takes. */
struct place_opts {
    const char *topology;  /* --topology live|FILE.xml|synthetic:STRING (default live) */
    const char *distances; /* --distances FILE (score also takes "hops") */
    const char *concerns;  /* --concerns LIST (NULL: the default levels) */
    int json;              /* --json */
};

/* The help of the shared options (cmd_place.c), and their table entries over a struct place_opts po in the
 * command's option struct st: PLACE_COMMON_OPTS all four, or each with a help of the command's own. */
extern const char place_help_topology[], place_help_distances[], place_help_concerns[], place_help_json[];
#define PLACE_OPT_TOPOLOGY(st, h) {CLI_STR("topology", "SPEC", st, po.topology, h)}
#define PLACE_OPT_DISTANCES(st, h) {CLI_STR("distances", "FILE", st, po.distances, h)}
#define PLACE_OPT_CONCERNS(st, h) {CLI_STR("concerns", "LIST", st, po.concerns, h)}
#define PLACE_OPT_JSON(st) {CLI_FLAG("json", st, po.json, place_help_json)}
/* --distances where it has no use: taken, to be refused by place_refuse_distances, and left out of the help */
#define PLACE_OPT_NO_DISTANCES(st) {CLI_STR("distances", "FILE", st, po.distances, NULL), .flags = CLI_OPT_HIDDEN}
#define PLACE_COMMON_OPTS(st)                                                                                      \
    PLACE_OPT_TOPOLOGY(st, place_help_topology), PLACE_OPT_DISTANCES(st, place_help_distances),                    \
        PLACE_OPT_CONCERNS(st, place_help_concerns), PLACE_OPT_JSON(st)

/* A command that reads no NUMA distances refuses --distances (never ignored in silence): 0, or the exit code after
 * one line. */
int place_refuse_distances(const char *cmd, const struct place_opts *o);
/* The co-location check's options (place pair, place colocate): --margin, --unknown, --refuse, --decide, over a struct
 * place_coloc_args ck in the command's option struct st (the defaults: pl_coloc.h's), and what they make of the
 * library's struct pl_coloc_opts. */
struct place_coloc_args {
    double margin;
    const char *unknown, *refuse, *decide;
};
struct pl_coloc_opts;
void place_coloc_opts(const struct place_coloc_args *a, struct pl_coloc_opts *o);
/* --decide's MODE as the library's choice: "headroom" the rule before 1.7, anything else (NULL: not given) the
 * model, the default. */
enum pl_coloc_decide place_decide(const char *mode);
/* place predict --check (cli/place/coloc/cmd_place_check.c): co-run records recs[0..n) scored against the predictions
 * of each profile set dirs[0..ndirs) in turn, one report each; 0, or the exit code after one line. */
struct pl_pred_rule;
struct place_check_args {
    const char *const *dirs;
    unsigned ndirs;
    double qos;
    int json, fit;
    int half;                        /* -1 all, 0 half A, 1 half B */
    const struct pl_pred_rule *rule; /* NULL: the default (--fit selects one) */
    uint64_t seed;                   /* the bootstrap's */
};
int place_predict_check(const char *cmd, const struct place_check_args *a, char **recs, unsigned n);
extern const char place_help_margin[], place_help_unknown[], place_help_refuse[], place_help_decide[];
extern const char *const place_unknown_modes[], *const place_refuse_rules[], *const place_decide_modes[];
#define PLACE_COLOC_OPTS(st)                                                                                       \
    {CLI_DOUBLE("margin", "M", st, ck.margin, 0, 100, place_help_margin), .def = CLI_STR_OF(PL_COLOC_MARGIN),      \
     .what = "a number of points in 0-100"},                                                                       \
        {CLI_CHOICE("unknown", "MODE", st, ck.unknown, place_unknown_modes, place_help_unknown),                   \
         .def = "pessimistic"},                                                                                    \
        {CLI_CHOICE("refuse", "RULE", st, ck.refuse, place_refuse_rules, place_help_refuse), .def = "likely"}, \
        PLACE_OPT_DECIDE(st, ck.decide, place_help_decide)
/* --decide alone over the const char * field f of st, with the command's help h (place simulate: the policy's) */
#define PLACE_OPT_DECIDE(st, f, h)                                                                                 \
    {CLI_CHOICE("decide", "MODE", st, f, place_decide_modes, h), .def = "model"}

/* Loads the machine and its hierarchy for o->concerns (h may be NULL when the command needs none).  On failure
 * prints one line as "ibench place CMD: ..." and returns the exit code (2 for bad input); 0 on success. */
int place_open(const char *cmd, const struct place_opts *o, struct pl_machine *m, struct pl_hier *h);

/* A live process the place commands measure (cli/place/place_live.c).  Metrics over a slice of time: command:CMD and
 * command-lower:CMD (the first number CMD prints at the slice's end; the profile's adapter), or cputime (the CPU
 * seconds per second the process's threads got over the slice, from /proc; higher is better). */
struct place_live {
    pid_t pid;
    struct metric metric;
    bool have_metric, cputime;
};
/* mspec NULL: no metric (pinning only).  -EINVAL with one line for a metric a live process cannot give. */
int place_live_open(struct place_live *L, pid_t pid, const char *mspec, char *why, size_t len);
void place_live_close(struct place_live *L);
bool place_live_higher_better(const struct place_live *L);
const char *place_live_unit(const struct place_live *L);
/* Every thread pinned, one CPU each (pl_proc_apply). */
int place_live_pin(struct place_live *L, const int *cpus, unsigned n, char *why, size_t len);
/* Sleeps `seconds` (-EINTR when cli_stop rises), then the metric over them. */
int place_live_measure(struct place_live *L, double seconds, double *value, char *why, size_t len);
int place_live_sleep(double seconds);

/* Memory following the placement of a live process (cli/place/place_mem.c; docs/placement.md, "Memory follows the
 * placement"): --mem resolved on the machine, the pages moved, the locality score before and after, the cpuset. */
struct place_mem {
    const char *arg; /* --mem as given ("local" when not) */
    struct pl_mem_policy pol;
    unsigned nnodes;
    uint64_t *before, *after;     /* resident bytes per node position, from numa_maps */
    double *cpu_before, *cpu_after; /* threads per node: their last CPUs before, the CPUs given after */
    bool have_before, have_after, have_score_before, have_score_after, migrated, cpuset_made;
    double score_before, score_after;
    long not_moved, page_size;
    char score_why[256], err_why[512], process_policy[160], cpuset_path[PATH_MAX], cpuset_why[512];
};
/* --mem and --no-cpuset (place_mem.c): their entries over the command's option struct st, fields mem (const char *)
 * and no_cpuset (int). */
extern const char place_help_mem[], place_help_no_cpuset[];
#define PLACE_MEM_OPTS(st)                                                                                         \
    {CLI_STR("mem", "MODE", st, mem, place_help_mem)}, {CLI_FLAG("no-cpuset", st, no_cpuset, place_help_no_cpuset)}
/* --mem (arg, NULL: local) resolved for cpus[n] on m; 0, or the exit code after one line (2: bad input). */
int place_mem_plan(const char *cmd, const char *arg, const struct pl_machine *m, const int *cpus, unsigned n,
                   struct place_mem *pm);
/* pm's --mem resolved again for cpus[n] (a later move: place cluster --apply --rounds), its readings kept: 0, or
 * -errno with why (pm unchanged). */
int place_mem_replan(struct place_mem *pm, const struct pl_machine *m, const int *cpus, unsigned n, char *why,
                     size_t len);
/* Before the threads move: their last CPUs and the resident memory per node (the score before). */
void place_mem_before(struct place_mem *pm, const struct pl_machine *m, pid_t pid, const struct pl_threads *t);
/* After they are pinned to cpus[n] (one per thread, or the set): the pages moved (migrate_pages), read again, the
 * score after, the cpuset (unless !cpuset).  0, or -errno when the kernel refused to move the pages (err_why). */
int place_mem_follow(struct place_mem *pm, const struct pl_machine *m, pid_t pid, const int *cpus, unsigned n,
                     bool cpuset);
json_t *place_mem_json(const struct place_mem *pm, const struct pl_machine *m);
void place_mem_print(const struct place_mem *pm, const struct pl_machine *m);
void place_mem_free(struct place_mem *pm);

/* The CPUs (OS indexes, in the representative's PU order) of row class_id of `place classes --threads n` (with
 * --all and --limit as given) on h: 0, or the exit code after one line (place apply, place run). */
int place_class_cpus(const char *cmd, const struct pl_hier *h, const char *class_id, unsigned long n, int all,
                     const char *limit_arg, int **cpus, unsigned *ncpus);
/* Makes the cgroup v2 cpuset of pm for process pid on cpus[n] (unless !want: skipped, "--no-cpuset"); whether it
 * was made, or why not, in pm->cpuset_made, cpuset_path, cpuset_why. */
void place_mem_cpuset(struct place_mem *pm, const struct pl_machine *m, pid_t pid, const int *cpus, unsigned n,
                      bool want);

/* Where a profile was measured: its machine block (an empty fingerprint and 0 CPUs for a characteristics file). */
struct place_origin {
    char fp[96];
    int cpus;
};
struct pl_map_chars;
/* place map's FILE[:THREADS] (--target, --corunner; place run --map): a profile ("format": "ibench-profile") or a
 * characteristics file into c, THREADS overriding the file's; where it was measured into o (NULL: not wanted).  0, or
 * -errno with one line in why (cli/place/mapping/cmd_place_map.c). */
int place_map_load(const char *arg, struct pl_map_chars *c, struct place_origin *o, char *why, size_t len);

/* PUs (logical indexes of h) as a CPU list of their OS indexes, ascending ("0,2,4-5") into buf; NULL: no memory. */
char *place_pus_cpulist(const struct pl_hier *h, const unsigned *pus, unsigned n, char *buf, size_t len);

/* The subcommands, in the table of cmd_place.c (opts.h): each its options, help and function. */
extern const struct cli_cmd cli_cmd_place_topo, cli_cmd_place_classes, cli_cmd_place_apply, cli_cmd_place_show,
    cli_cmd_place_score, cli_cmd_place_pair, cli_cmd_place_predict, cli_cmd_place_colocate, cli_cmd_place_provision,
    cli_cmd_place_simulate, cli_cmd_place_map, cli_cmd_place_atom, cli_cmd_place_hetero, cli_cmd_place_cluster,
    cli_cmd_place_model, cli_cmd_place_pack, cli_cmd_place_run;

#ifdef __cplusplus
}
#endif
#endif
