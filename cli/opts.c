/* opts.c - options as data (opts.h): one parser, one help printer and one set of refusals for every command. */
#define _GNU_SOURCE
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "parse.h"

/* ---- values ------------------------------------------------------------------------------------------------ */

/* A whole number above this is "no bound": the range's end is the type's. */
#define CLI_UNBOUNDED 9007199254740992.0 /* 2^53 */

static void *field(void *opts, size_t off) { return (char *)opts + off; }

static const char *num_text(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%.15g", v);
    return buf;
}

/* ns in the largest unit it is a whole number of ("20us", "100ms", "2s"); the form parse_duration_ns reads back. */
static const char *ns_text(double ns, char *buf, size_t len)
{
    static const struct { double ns; const char *unit; } u[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    for (size_t i = 0; i < IB_ARRAY_SIZE(u); i++)
        if (ns >= u[i].ns && fmod(ns, u[i].ns) == 0) {
            snprintf(buf, len, "%.15g%s", ns / u[i].ns, u[i].unit);
            return buf;
        }
    snprintf(buf, len, "%.15gns", ns);
    return buf;
}

/* bytes with the largest binary suffix they are a whole number of ("4K", "1G"): what parse_size reads back */
static const char *size_text(double b, char *buf, size_t len)
{
    static const char sfx[] = "TGMK";
    for (int i = 0; i < 4; i++) {
        double m = ldexp(1, 10 * (4 - i));
        if (b >= m && fmod(b, m) == 0) {
            snprintf(buf, len, "%.15g%c", b / m, sfx[i]);
            return buf;
        }
    }
    return num_text(b, buf, len);
}

static const char *bound_text(const struct cli_opt *o, double v, char *buf, size_t len)
{
    if (o->type == CLI_O_DURATION || o->type == CLI_O_MSEC)
        return ns_text(v, buf, len);
    if (o->type == CLI_O_SIZE)
        return size_text(v, buf, len);
    return num_text(v, buf, len);
}

/* What a value of o must be, for its refusal: o->what, else said from the type and the range. */
static const char *what_text(const struct cli_opt *o, char *buf, size_t len)
{
    char lo[48], hi[48];
    if (o->what)
        return o->what;
    switch (o->type) {
    case CLI_O_CHOICE: {
        size_t at = 0;
        buf[0] = 0;
        for (unsigned k = 0; o->choices[k] && at < len; k++)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", k == 0 ? "" : o->choices[k + 1] ? ", " : " or ",
                                   o->choices[k]);
        return buf;
    }
    case CLI_O_INT:
    case CLI_O_UINT:
    case CLI_O_ULONG:
        if (o->max >= CLI_UNBOUNDED)
            snprintf(buf, len, o->min > 0 ? "a whole number >= %s" : "a whole number", num_text(o->min, lo, sizeof lo));
        else
            snprintf(buf, len, "a whole number in %s-%s", num_text(o->min, lo, sizeof lo),
                     num_text(o->max, hi, sizeof hi));
        return buf;
    case CLI_O_DOUBLE:
    case CLI_O_PCT:
    case CLI_O_SIZE:
    case CLI_O_DURATION:
    case CLI_O_MSEC: {
        const char *kind = o->type == CLI_O_SIZE ? "a size" : o->type == CLI_O_DURATION || o->type == CLI_O_MSEC
                                                                  ? "a duration"
                                                                  : "a number";
        bound_text(o, o->min, lo, sizeof lo);
        bound_text(o, o->max, hi, sizeof hi);
        if (isinf(o->max))
            snprintf(buf, len, "%s %s %s", kind, o->flags & CLI_OPT_GT_MIN ? ">" : ">=", lo);
        else
            snprintf(buf, len, "%s in %c%s, %s]", kind, o->flags & CLI_OPT_GT_MIN ? '(' : '[', lo, hi);
        return buf;
    }
    case CLI_O_CPUS: return "a CPU list (0-3,5)";
    default: return "a value";
    }
}

static int in_range(const struct cli_opt *o, double v)
{
    return (o->flags & CLI_OPT_GT_MIN ? v > o->min : v >= o->min) && v <= o->max;
}

static int whole(const struct cli_opt *o, const char *s, unsigned long *v)
{
    unsigned long lo = o->min <= 0 ? 0 : (unsigned long)o->min;
    unsigned long hi = o->max >= (double)ULONG_MAX ? ULONG_MAX : (unsigned long)o->max;
    return parse_uint(s, lo, hi, v);
}

/* o's value arg into opts: 0, or -EINVAL with the refusal in why. */
static int set_value(const struct cli_opt *o, const char *arg, void *opts, char *why, size_t len)
{
    void *p = field(opts, o->off);
    unsigned long u;
    uint64_t ns;
    double d;
    int rc = 0;
    why[0] = 0;
    switch (o->type) {
    case CLI_O_FLAG: *(int *)p = 1; return 0;
    case CLI_O_STR: *(const char **)p = arg; return 0;
    case CLI_O_CHOICE:
        rc = -EINVAL;
        for (unsigned k = 0; o->choices[k]; k++)
            if (!strcmp(arg, o->choices[k]))
                rc = 0;
        if (rc == 0)
            *(const char **)p = arg;
        break;
    case CLI_O_INT:
    case CLI_O_UINT:
    case CLI_O_ULONG:
        if ((rc = whole(o, arg, &u)) == 0 && !in_range(o, (double)u))
            rc = -EINVAL;
        if (rc == 0 && o->type == CLI_O_INT)
            *(int *)p = (int)u;
        else if (rc == 0 && o->type == CLI_O_UINT)
            *(unsigned *)p = (unsigned)u;
        else if (rc == 0)
            *(unsigned long *)p = u;
        break;
    case CLI_O_DOUBLE:
    case CLI_O_PCT:
        rc = o->type == CLI_O_PCT ? parse_intensity(arg, &d) : parse_double(arg, &d);
        if (rc == 0 && (!isfinite(d) || !in_range(o, d)))
            rc = -EINVAL;
        if (rc == 0)
            *(double *)p = d;
        break;
    case CLI_O_SIZE:
    case CLI_O_DURATION:
    case CLI_O_MSEC:
        if (o->type == CLI_O_SIZE)
            rc = parse_size(arg, &ns);
        else if (o->type == CLI_O_MSEC && parse_double(arg, &d) == 0) /* a bare number: milliseconds */
            rc = isfinite(d) && d >= 0 && d * 1e6 < 1.8e19 ? (ns = (uint64_t)(d * 1e6), 0) : -EINVAL;
        else
            rc = parse_duration_ns(arg, o->min <= 0, &ns);
        if (rc == 0 && !in_range(o, (double)ns))
            rc = -EINVAL;
        if (rc == 0)
            *(uint64_t *)p = ns;
        break;
    case CLI_O_CPUS: {
        int *v = NULL;
        unsigned n = 0;
        if ((rc = parse_cpulist(arg, &v, &n)) == 0 && n == 0)
            rc = -EINVAL;
        if (rc < 0) {
            free(v);
            break;
        }
        *(int **)p = v;
        *(unsigned *)field(opts, o->off2) = n;
        return 0;
    }
    case CLI_O_LIST: {
        unsigned *n = field(opts, o->off2);
        if (*n >= (unsigned)o->max)
            return ib_why(why, len, -EINVAL, "--%s: at most %u", o->name, (unsigned)o->max);
        ((const char **)p)[(*n)++] = arg;
        return 0;
    }
    case CLI_O_CUSTOM:
        rc = o->set(o, arg, opts, why, len);
        if (rc < 0 && why[0])
            return -EINVAL;
        break;
    }
    if (rc < 0) {
        char w[256];
        return ib_why(why, len, -EINVAL, "--%s '%s': %s expected", o->name, arg, what_text(o, w, sizeof w));
    }
    return 0;
}

/* ---- parsing ---------------------------------------------------------------------------------------------- */

/* The entry an alias names: the one before it that is not an alias. */
static unsigned primary(const struct cli_opt *t, unsigned i)
{
    while (i > 0 && (t[i].flags & CLI_OPT_ALIAS))
        i--;
    return i;
}

/* Frees the CPU lists this parse allocated (marked in took), so a refusal or --help leaves nothing behind. */
static void drop_lists(const struct cli_cmd *c, void *opts, const unsigned char *took)
{
    for (unsigned i = 0; i < c->nopts; i++)
        if (took[i]) {
            free(*(int **)field(opts, c->opts[i].off));
            *(int **)field(opts, c->opts[i].off) = NULL;
            *(unsigned *)field(opts, c->opts[i].off2) = 0;
        }
}

int cli_opts_parse(const struct cli_cmd *c, int argc, char **argv, void *opts, int *first, int *help, char *why,
                   size_t len)
{
    const struct cli_opt *t = c->opts;
    struct option lo[CLI_OPTS_MAX + 2];
    char shorts[2 * CLI_OPTS_MAX + 8];
    unsigned count[CLI_OPTS_MAX] = {0};
    unsigned char took[CLI_OPTS_MAX] = {0};
    size_t ns = 0;
    *help = 0;
    *first = argc;
    if (!t || c->nopts > CLI_OPTS_MAX)
        return ib_why(why, len, -EINVAL, "%s has no option table", c->name);
    /* "+": options end at the first operand (the command line after it is not ours); ":": a missing value is told
     * apart from an unknown option */
    if (c->args == CLI_ARGS_CMD)
        shorts[ns++] = '+';
    shorts[ns++] = ':';
    shorts[ns++] = 'h';
    for (unsigned i = 0; i < c->nopts; i++) {
        lo[i] = (struct option){t[i].name, t[i].arg ? required_argument : no_argument, NULL, 0x100 + (int)i};
        if (t[i].shortopt) {
            shorts[ns++] = (char)t[i].shortopt;
            if (t[i].arg)
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = 0;
    lo[c->nopts] = (struct option){"help", no_argument, NULL, 'h'};
    lo[c->nopts + 1] = (struct option){0, 0, 0, 0};
    for (unsigned i = 0; i < c->nopts; i++)
        if (t[i].def && set_value(&t[i], t[i].def, opts, why, len) < 0)
            return ib_why(why, len, -EINVAL, "the default of --%s does not parse", t[i].name);

    int rc = 0, ch;
    optind = 0; /* GNU: full re-initialisation, so a process (a test) can parse again and again */
    opterr = 0;
    while (rc == 0 && (ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (ch == 'h') {
            *help = 1;
            break;
        }
        if (ch == ':') {
            rc = ib_why(why, len, -EINVAL, "%s needs a value", argv[optind - 1]);
            break;
        }
        unsigned i = c->nopts;
        if (ch >= 0x100)
            i = (unsigned)(ch - 0x100);
        else
            for (unsigned k = 0; k < c->nopts; k++)
                if (t[k].shortopt == ch)
                    i = k;
        if (i >= c->nopts) {
            rc = ib_why(why, len, -EINVAL, "unknown option '%s'", argv[optind - 1]);
            break;
        }
        unsigned p = primary(t, i);
        if (count[p] && !(t[p].flags & CLI_OPT_REPEAT) && t[p].type != CLI_O_LIST) {
            rc = ib_why(why, len, -EINVAL, "--%s given twice", t[p].name);
            break;
        }
        if ((rc = set_value(&t[i], optarg, opts, why, len)) < 0)
            break;
        took[i] |= t[i].type == CLI_O_CPUS;
        count[p]++;
        if (t[p].have)
            *(int *)field(opts, t[p].have - 1) = (int)count[p];
    }
    if (rc == 0 && !*help && c->args == CLI_ARGS_NONE && optind < argc)
        rc = ib_why(why, len, -EINVAL, "unexpected argument '%s'", argv[optind]);
    if (rc < 0 || *help)
        drop_lists(c, opts, took);
    *first = optind < argc ? optind : argc;
    return rc;
}

int cli_call(const struct cli_cmd *c, int argc, char **argv)
{
    if (c->nsub)
        return cli_dispatch(c, argc, argv);
    if (!c->run)
        return cli_fail(IB_EXIT_FAIL, c->name, "nothing to run"); /* a table without .run or .sub: a defect */
    void *opts = calloc(1, c->size);
    if (!opts)
        return cli_fail(IB_EXIT_FAIL, c->name, "out of memory");
    if (c->preset)
        memcpy(opts, c->preset, c->size);
    char why[512] = "";
    int first, help, rc;
    if (cli_opts_parse(c, argc, argv, opts, &first, &help, why, sizeof why) < 0) {
        rc = cli_fail(IB_EXIT_USAGE, c->name, "%s", why);
    } else if (help) {
        cli_help(stdout, c->parent && (c->parent->flags & CLI_CMD_HELP_ALL) ? c->parent : c);
        rc = IB_EXIT_OK;
    } else {
        rc = c->run(opts, argc, argv, first);
        unsigned char all[CLI_OPTS_MAX];
        for (unsigned i = 0; i < c->nopts; i++)
            all[i] = c->opts[i].type == CLI_O_CPUS && *(int **)field(opts, c->opts[i].off);
        drop_lists(c, opts, all);
    }
    if (c->done)
        c->done(opts);
    free(opts);
    return rc;
}

/* ---- help ------------------------------------------------------------------------------------------------- */

#define HELP_LABEL_MAX 24 /* a longer label puts its help on the next line */

static void label_text(const struct cli_opt *o, int shorts, char *buf, size_t len)
{
    if (o->shortopt)
        snprintf(buf, len, "-%c, --%s%s%s", o->shortopt, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    else
        snprintf(buf, len, "%s--%s%s%s", shorts ? "    " : "", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* text at column col: each line after the first indented to it */
static void indented(FILE *f, const char *text, int col)
{
    for (const char *s = text; *s; s++) {
        fputc(*s, f);
        if (*s == '\n' && s[1])
            fprintf(f, "%*s", col, "");
    }
}

/* the option lines, at indent */
static void opts_lines(FILE *f, const struct cli_opt *t, unsigned n, int indent)
{
    int shorts = 0, w = 0;
    char lab[128];
    for (unsigned i = 0; i < n; i++)
        shorts |= t[i].shortopt && !(t[i].flags & (CLI_OPT_HIDDEN | CLI_OPT_ALIAS));
    for (unsigned i = 0; i < n; i++) {
        if (t[i].flags & (CLI_OPT_HIDDEN | CLI_OPT_ALIAS))
            continue;
        label_text(&t[i], shorts, lab, sizeof lab);
        int l = (int)strlen(lab);
        w = l > w && l <= HELP_LABEL_MAX ? l : w;
    }
    int col = indent + w + 2;
    for (unsigned i = 0; i < n; i++) {
        if (t[i].flags & (CLI_OPT_HIDDEN | CLI_OPT_ALIAS))
            continue;
        label_text(&t[i], shorts, lab, sizeof lab);
        if ((int)strlen(lab) > w)
            fprintf(f, "%*s%s\n%*s", indent, "", lab, col, "");
        else
            fprintf(f, "%*s%-*s  ", indent, "", w, lab);
        indented(f, t[i].help, col);
        if (t[i].def)
            fprintf(f, " (default %s)", t[i].def);
        fputc('\n', f);
    }
}

static const char *last_word(const char *name)
{
    const char *sp = strrchr(name, ' ');
    return sp ? sp + 1 : name;
}

void cli_help(FILE *f, const struct cli_cmd *c)
{
    if (c->usage)
        fputs(c->usage, f);
    if (c->about_fn)
        c->about_fn(f);
    else if (c->about)
        fputs(c->about, f);
    if (c->nsub) {
        int w = 0;
        for (unsigned i = 0; i < c->nsub; i++)
            w = (int)strlen(last_word(c->sub[i]->name)) > w ? (int)strlen(last_word(c->sub[i]->name)) : w;
        w++;
        for (unsigned i = 0; i < c->nsub; i++) {
            fprintf(f, "  %-*s ", w, last_word(c->sub[i]->name));
            indented(f, c->sub[i]->summary, 2 + w + 1);
            fputc('\n', f);
            if (c->flags & CLI_CMD_HELP_ALL) /* under their command's line */
                opts_lines(f, c->sub[i]->opts, c->sub[i]->nopts, 4);
        }
    } else {
        opts_lines(f, c->opts, c->nopts, 2);
    }
    if (c->more)
        fputs(c->more, f);
}

const struct cli_cmd *cli_sub_find(const struct cli_cmd *c, const char *name)
{
    for (unsigned i = 0; i < c->nsub; i++)
        if (!strcmp(last_word(c->sub[i]->name), name))
            return c->sub[i];
    return NULL;
}

int cli_dispatch(const struct cli_cmd *c, int argc, char **argv)
{
    if (argc < 2)
        return cli_fail(IB_EXIT_USAGE, c->name, "which command? (ibench %s --help lists them)", c->name);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        cli_help(stdout, c);
        return IB_EXIT_OK;
    }
    const struct cli_cmd *s = cli_sub_find(c, argv[1]);
    if (!s)
        return cli_fail(IB_EXIT_USAGE, c->name, "unknown command '%s' (ibench %s --help lists them)", argv[1],
                        c->name);
    return cli_call(s, argc - 1, argv + 1);
}

/* ---- the tables' own check -------------------------------------------------------------------------------- */

#define CHECK_SCRATCH 16384 /* bytes: more than any command's option struct */

static int check_one(const struct cli_cmd *c, unsigned i, void *scratch, char *why, size_t len)
{
    const struct cli_opt *o = &c->opts[i];
    char w[512];
    if (!o->name || !o->name[0] || !strcmp(o->name, "help"))
        return ib_why(why, len, -EINVAL, "%s: entry %u has no name (or is --help, which every command has)",
                      c->name, i);
    for (unsigned k = 0; k < i; k++) {
        if (!strcmp(c->opts[k].name, o->name))
            return ib_why(why, len, -EINVAL, "%s: --%s twice in the table", c->name, o->name);
        if (o->shortopt && c->opts[k].shortopt == o->shortopt)
            return ib_why(why, len, -EINVAL, "%s: -%c twice in the table", c->name, o->shortopt);
    }
    if (o->shortopt == 'h' || o->shortopt == ':' || o->shortopt == '+')
        return ib_why(why, len, -EINVAL, "%s: --%s: -%c is taken", c->name, o->name, o->shortopt);
    if (!o->arg != (o->type == CLI_O_FLAG))
        return ib_why(why, len, -EINVAL, "%s: --%s: a flag, and only a flag, takes no value", c->name, o->name);
    if (!(o->flags & (CLI_OPT_HIDDEN | CLI_OPT_ALIAS)) && (!o->help || !o->help[0]))
        return ib_why(why, len, -EINVAL, "%s: --%s has no help", c->name, o->name);
    if ((o->flags & CLI_OPT_REPEAT) && o->type != CLI_O_CUSTOM)
        return ib_why(why, len, -EINVAL, "%s: --%s repeats but keeps one value (only CUSTOM and LIST repeat)",
                      c->name, o->name);
    if ((o->flags & CLI_OPT_ALIAS) &&
        (i == 0 || c->opts[primary(c->opts, i)].off != o->off || c->opts[primary(c->opts, i)].type != o->type))
        return ib_why(why, len, -EINVAL, "%s: --%s is an alias of no entry before it", c->name, o->name);
    if (o->type == CLI_O_CHOICE && (!o->choices || !o->choices[0]))
        return ib_why(why, len, -EINVAL, "%s: --%s chooses from nothing", c->name, o->name);
    if (o->type == CLI_O_CUSTOM && !o->set)
        return ib_why(why, len, -EINVAL, "%s: --%s has no parser", c->name, o->name);
    if (o->type == CLI_O_LIST && !(o->max >= 1))
        return ib_why(why, len, -EINVAL, "%s: --%s holds nothing", c->name, o->name);
    if (o->type >= CLI_O_INT && o->type <= CLI_O_MSEC && !(o->min <= o->max && o->min >= 0))
        return ib_why(why, len, -EINVAL, "%s: --%s: the range [%g, %g] is empty or below 0", c->name, o->name,
                      o->min, o->max);
    if (o->off >= CHECK_SCRATCH || o->off2 >= CHECK_SCRATCH)
        return ib_why(why, len, -EINVAL, "%s: --%s: its field is past %d bytes", c->name, o->name, CHECK_SCRATCH);
    /* a custom parser may keep what it parses (allocate): its default and sample are the tests' to try */
    const char *vals[2] = {o->def, o->sample};
    for (int k = 0; k < 2 && o->type != CLI_O_CUSTOM; k++) {
        if (!vals[k])
            continue;
        memset(scratch, 0, CHECK_SCRATCH);
        if (set_value(o, vals[k], scratch, w, sizeof w) < 0)
            return ib_why(why, len, -EINVAL, "%s: the %s of --%s: %s", c->name, k ? "sample" : "default", o->name, w);
        if (o->type == CLI_O_CPUS)
            free(*(int **)field(scratch, o->off));
    }
    return 0;
}

int cli_opts_check(const struct cli_cmd *c, char *why, size_t len)
{
    if (!c->opts)
        return 0;
    if (c->nopts > CLI_OPTS_MAX)
        return ib_why(why, len, -EINVAL, "%s: %u options, at most %d", c->name, c->nopts, CLI_OPTS_MAX);
    void *scratch = calloc(1, CHECK_SCRATCH);
    if (!scratch)
        return ib_why(why, len, -ENOMEM, "out of memory");
    int rc = 0;
    for (unsigned i = 0; rc == 0 && i < c->nopts; i++)
        rc = check_one(c, i, scratch, why, len);
    free(scratch);
    return rc;
}
