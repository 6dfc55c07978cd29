/* opts.h - a command's options as data, as fio's option table and the SoIs' SOI_OPT: one typed table per command
 * (name, value, type, range, default, help, whether it may repeat) from which parsing, --help and every refusal of
 * an option (given twice, out of range, unknown, without its value, a stray argument) come.  A command keeps as code
 * only its rules between options (X excludes Y, X goes with Y).
 *
 * The commands form one tree of struct cli_cmd: the top table (cli.c), and commands of commands (place, k8s, place
 * model) holding their own subcommands; help lists them from it and tests walk it (cli_commands). */
#ifndef IB_CLI_OPTS_H
#define IB_CLI_OPTS_H
#include <math.h> /* INFINITY, for a range with no end */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What an option's value is, and the C type of the field it lands in (checked at compile time by the macros). */
enum cli_otype {
    CLI_O_FLAG,     /* int: set to 1 when given; no value */
    CLI_O_STR,      /* const char *: the value as given */
    CLI_O_CHOICE,   /* const char *: one of .choices, as given */
    CLI_O_INT,      /* int: a whole number in [min, max] */
    CLI_O_UINT,     /* unsigned: a whole number in [min, max] */
    CLI_O_ULONG,    /* unsigned long (uint64_t): a whole number in [min, max] */
    CLI_O_DOUBLE,   /* double: a number in [min, max] */
    CLI_O_PCT,      /* double: an intensity, 0 to 100 with an optional '%' (parse_intensity), in [min, max] */
    CLI_O_SIZE,     /* uint64_t: bytes, "4096", "64K", "1.5M" (parse_size), in [min, max] */
    CLI_O_DURATION, /* uint64_t: ns, "1.5" (seconds), "250ms", "2s" (parse_duration_ns), in [min, max] ns */
    CLI_O_MSEC,     /* uint64_t: ns, a bare number is milliseconds ("300", "0.5"), else a duration; in [min, max] */
    CLI_O_CPUS,     /* int *, malloc'd, sorted (parse_cpulist), its count an unsigned at .off2; never empty */
    CLI_O_LIST,     /* const char *[N]: every value given, in order, the count an unsigned at .off2; may repeat */
    CLI_O_CUSTOM,   /* .set parses it */
};

/* .flags */
#define CLI_OPT_REPEAT 1u /* may be given more than once (CUSTOM: .set is called each time); else "given twice" */
#define CLI_OPT_HIDDEN 2u /* not in --help: a test's knob */
#define CLI_OPT_GT_MIN 4u /* numbers: above min, not equal to it */
#define CLI_OPT_ALIAS 8u  /* another name of the entry before it, not in --help: given after it is "given twice" */

struct cli_opt {
    const char *name;       /* the long name, without "--" */
    int shortopt;           /* 's' for -s; 0: none */
    const char *arg;        /* the value's name in help (N, FILE); NULL for a flag */
    enum cli_otype type;
    double min, max;        /* numbers: the range (INFINITY: none above); LIST: how many it holds */
    const char *def;        /* the default, as a user would type it: set before the arguments are read, and said in
                             * --help; NULL: none (the command's own preset, or the help says what happens) */
    const char *help;       /* one or more lines; cli_help aligns them */
    unsigned flags;         /* CLI_OPT_* */
    size_t off;             /* offsetof the field in the command's option struct */
    size_t off2;            /* CPUS, LIST: offsetof their count (unsigned) */
    size_t have;            /* 1 + offsetof an int counting how often it was given; 0: none */
    const char *const *choices; /* CHOICE: the names, NULL-terminated */
    const char *what;       /* what a value must be, for the refusal ("a CPU list (0-3,5)"); NULL: said from the type
                             * and the range */
    const char *sample;     /* a valid value, for the tests that walk the tables, where def is NULL and the type
                             * gives none (CUSTOM, STR that must name something) */
    /* CUSTOM: parses arg into opts (the whole option struct; the field at .off); 0, or -EINVAL with a reason in
     * why (or why left empty: "--NAME 'ARG': WHAT expected") */
    int (*set)(const struct cli_opt *o, const char *arg, void *opts, char *why, size_t len);
};

/* The table's entries, as SOI_OPT: `{CLI_UINT("steps", "N", struct run_opts, steps, 1, 100, "help"), .def = "11"}`,
 * with .shortopt, .def, .have, .flags, .what, .sample added as the entry needs.  The field's type is checked against
 * the option's at compile time (a mismatch is a negative array size). */
#define CLI_IS_(st, f, T) _Generic(((st *)0)->f, T: 1, default: 0)
#define CLI_CHECK_(c) (0 * sizeof(char[(c) ? 1 : -1]))
#define CLI_OPT_(n, a, t, st, f, T, h)                                                                             \
    .name = (n), .arg = (a), .type = (t), .off = offsetof(st, f) + CLI_CHECK_(CLI_IS_(st, f, T)), .help = (h)
#define CLI_FLAG(n, st, f, h) CLI_OPT_(n, NULL, CLI_O_FLAG, st, f, int, h)
#define CLI_STR(n, a, st, f, h) CLI_OPT_(n, a, CLI_O_STR, st, f, const char *, h)
#define CLI_CHOICE(n, a, st, f, ch, h) CLI_OPT_(n, a, CLI_O_CHOICE, st, f, const char *, h), .choices = (ch)
#define CLI_INT(n, a, st, f, lo, hi, h) CLI_OPT_(n, a, CLI_O_INT, st, f, int, h), .min = (lo), .max = (hi)
#define CLI_UINT(n, a, st, f, lo, hi, h) CLI_OPT_(n, a, CLI_O_UINT, st, f, unsigned, h), .min = (lo), .max = (hi)
#define CLI_ULONG(n, a, st, f, lo, hi, h)                                                                          \
    CLI_OPT_(n, a, CLI_O_ULONG, st, f, unsigned long, h), .min = (lo), .max = (hi)
#define CLI_DOUBLE(n, a, st, f, lo, hi, h) CLI_OPT_(n, a, CLI_O_DOUBLE, st, f, double, h), .min = (lo), .max = (hi)
#define CLI_PCT(n, a, st, f, lo, hi, h) CLI_OPT_(n, a, CLI_O_PCT, st, f, double, h), .min = (lo), .max = (hi)
#define CLI_SIZE(n, a, st, f, lo, hi, h) CLI_OPT_(n, a, CLI_O_SIZE, st, f, uint64_t, h), .min = (lo), .max = (hi)
#define CLI_DURATION(n, a, st, f, lo, hi, h)                                                                       \
    CLI_OPT_(n, a, CLI_O_DURATION, st, f, uint64_t, h), .min = (lo), .max = (hi)
#define CLI_MSEC(n, a, st, f, lo, hi, h) CLI_OPT_(n, a, CLI_O_MSEC, st, f, uint64_t, h), .min = (lo), .max = (hi)
#define CLI_CPUS(n, a, st, f, nf, h)                                                                               \
    CLI_OPT_(n, a, CLI_O_CPUS, st, f, int *, h), .off2 = offsetof(st, nf) + CLI_CHECK_(CLI_IS_(st, nf, unsigned))
#define CLI_LIST(n, a, st, f, nf, h)                                                                               \
    CLI_OPT_(n, a, CLI_O_LIST, st, f, const char **, h),                                                           \
        .off2 = offsetof(st, nf) + CLI_CHECK_(CLI_IS_(st, nf, unsigned)),                                          \
        .max = sizeof(((st *)0)->f) / sizeof(((st *)0)->f[0]) + CLI_CHECK_(sizeof(((st *)0)->f) > sizeof(void *))
#define CLI_CUSTOM(n, a, st, f, fn, h) .name = (n), .arg = (a), .type = CLI_O_CUSTOM, .off = offsetof(st, f),        \
                                       .set = (fn), .help = (h)
/* A library's constant as its default: the literal as the source spells it ("0.30", "5.0"), for .def. */
#define CLI_STR_OF(x) CLI_STR_OF_(x)
#define CLI_STR_OF_(x) #x
#define CLI_HAVE(st, f) (1 + offsetof(st, f) + CLI_CHECK_(CLI_IS_(st, f, int)))

/* What a command does with the words that are not options. */
enum cli_args {
    CLI_ARGS_NONE, /* none: "unexpected argument 'X'" */
    CLI_ARGS_ANY,  /* any, among the options; the command counts them */
    CLI_ARGS_CMD,  /* options end at the first of them: a command line of its own follows (place run) */
};

/* .flags of a command */
#define CLI_CMD_HELP_ALL 1u /* a command of commands whose --help also holds each subcommand's options, and which its
                             * subcommands' --help prints (k8s: one page for three short commands) */

/* One command, or a command of commands (.sub).  A command with a table is run by cli_call: its options parsed into
 * a struct of .size bytes (.preset, else zeros, under the table's defaults), --help and every refusal of an option
 * answered there, then .run with the struct and the words from argv[first] on, its operands; the CPU lists the parse
 * made are freed after it, and .done frees what a CUSTOM option kept (run or not).  The help is usage, about (or about_fn, for a text that prints values), the option lines
 * (or the subcommands), then more; each string brings its own line ends. */
struct cli_cmd {
    const char *name;                 /* the words after "ibench": "run", "place topo" */
    int (*run)(void *opts, int argc, char **argv, int first);
    size_t size;
    const void *preset;
    void (*done)(void *opts);
    const char *summary;              /* its line in the list of its parent (may run over lines) */
    const char *usage, *about, *more;
    void (*about_fn)(FILE *f);
    const struct cli_opt *opts;       /* its options (none: NULL, nopts 0) */
    unsigned nopts;
    enum cli_args args;
    unsigned flags;                   /* CLI_CMD_* */
    const struct cli_cmd *const *sub; /* a command of commands: its subcommands */
    unsigned nsub;
    const struct cli_cmd *parent;     /* set for the subcommands of a CLI_CMD_HELP_ALL command */
};
#define CLI_RUN(f, st) .run = (f), .size = sizeof(st)
#define CLI_OPTS(t) .opts = (t), .nopts = sizeof(t) / sizeof((t)[0])
#define CLI_SUB(t) .sub = (t), .nsub = sizeof(t) / sizeof((t)[0])

/* The most options a command has. */
#define CLI_OPTS_MAX 48

/* Parses argv (argv[0]: the command's word) by c's table into opts: the table's defaults first, over whatever the
 * caller preset, then the arguments.  0 with *first the index of the first word that is not an option (argc: none)
 * and *help 1 when --help or -h was given (parsing stops there); or -EINVAL with one line in why, nothing the parse
 * allocated left behind.  Checks every option on its own; rules between options are the command's. */
int cli_opts_parse(const struct cli_cmd *c, int argc, char **argv, void *opts, int *first, int *help, char *why,
                   size_t len);

/* Runs c: a command of commands by cli_dispatch, else a command with a table as said above.  The exit code:
 * 0 after --help, 2 after one line "ibench NAME: why" on stderr for an option refused, else the command's. */
int cli_call(const struct cli_cmd *c, int argc, char **argv);

/* c's --help: usage, about, then a line for each option of its table but the hidden ones ("  -s, --soi NAME   help
 * (default X)", the help in one column) or one for each subcommand, then more. */
void cli_help(FILE *f, const struct cli_cmd *c);

/* A command of commands: argv[1] names the subcommand, which is called with argv + 1.  None, or an unknown name: one
 * line, exit 2; -h, --help or help: the help, exit 0. */
int cli_dispatch(const struct cli_cmd *c, int argc, char **argv);
/* c's subcommand called name, or NULL. */
const struct cli_cmd *cli_sub_find(const struct cli_cmd *c, const char *name);

/* Is c's table sound?  Names and short options unique, REPEAT only where a value can be kept each time, ALIAS after
 * the entry it names, every default and sample taken by the option's own parser: 0, or -EINVAL with the first
 * problem in why.  (The tests run it over every table; a command never needs to.) */
int cli_opts_check(const struct cli_cmd *c, char *why, size_t len);

/* The top table of commands (cli.c): every command under it, through .sub. */
const struct cli_cmd *const *cli_commands(unsigned *n);

#ifdef __cplusplus
}
#endif
#endif
