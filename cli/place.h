/* place.h - `ibench place ...`: the subcommands and the options they share (docs/placement.md). */
#ifndef IB_CLI_PLACE_H
#define IB_CLI_PLACE_H
#include <getopt.h>

#include "pl_machine.h"

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

/* Long-option codes of the shared options: a command's getopt table lists PLACE_COMMON_OPTIONS and hands any code
 * >= PLACE_OPT_BASE to place_common_opt. */
enum { PLACE_OPT_BASE = 0x1000, PLACE_OPT_TOPOLOGY = PLACE_OPT_BASE, PLACE_OPT_DISTANCES, PLACE_OPT_CONCERNS,
       PLACE_OPT_JSON };
#define PLACE_COMMON_OPTIONS                                                                                        \
    {"topology", required_argument, 0, PLACE_OPT_TOPOLOGY}, {"distances", required_argument, 0, PLACE_OPT_DISTANCES}, \
        {"concerns", required_argument, 0, PLACE_OPT_CONCERNS}, {"json", no_argument, 0, PLACE_OPT_JSON}
/* The help lines of the shared options, for a command's --help. */
extern const char place_common_help[];

/* Records a shared option (code from getopt_long, its optarg). 0, or -EINVAL when code is not a shared option. */
int place_common_opt(struct place_opts *o, int code, const char *arg);

/* Loads the machine and its hierarchy for o->concerns (h may be NULL when the command needs none).  On failure
 * prints one line as "ibench place CMD: ..." and returns the exit code (2 for bad input); 0 on success. */
int place_open(const char *cmd, const struct place_opts *o, struct pl_machine *m, struct pl_hier *h);

/* The subcommands (argv[0] is the subcommand's name); each returns an exit code. */
int cmd_place(int argc, char **argv);
int cmd_place_topo(int argc, char **argv);
int cmd_place_classes(int argc, char **argv);
int cmd_place_apply(int argc, char **argv);
int cmd_place_show(int argc, char **argv);
int cmd_place_score(int argc, char **argv);
int cmd_place_pair(int argc, char **argv);
int cmd_place_predict(int argc, char **argv);
int cmd_place_colocate(int argc, char **argv);
int cmd_place_provision(int argc, char **argv);
int cmd_place_simulate(int argc, char **argv);
int cmd_place_map(int argc, char **argv);
int cmd_place_atom(int argc, char **argv);
int cmd_place_hetero(int argc, char **argv);
int cmd_place_model(int argc, char **argv);
int cmd_place_pack(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
