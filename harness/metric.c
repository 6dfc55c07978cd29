/* metric.c - metric adapters (metric.h). */
#include "metric.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"

/* Load generators with a built-in adapter: the first word of --load (its basename). A rate is captured as an
 * amount (group num) over seconds (group den); the last match counts. */
static const struct adapter {
    const char *tool;
    const char *regex;
    int num, den; /* regex groups */
    const char *rate_unit, *time_unit;
} adapters[] = {
    /* libmemcached-tools 1.1: "Time to get    78402 keys by    4 threads:     1.775 seconds." */
    {"memcslap", "Time to (get|set) +([0-9]+) keys by +[0-9]+ threads: +([0-9]+(\\.[0-9]+)?) seconds", 2, 3,
     "keys/s", "s per key"},
};

const char *metric_kind_name(enum metric_kind k)
{
    static const char *const n[] = {"runtime", "throughput", "latency", "command", "ipc", "cputime", "io-rate"};
    return (unsigned)k < sizeof(n) / sizeof(n[0]) ? n[k] : "?";
}

static const struct adapter *adapter_for(const char *load)
{
    if (!load)
        return NULL;
    while (*load == ' ')
        load++;
    char word[256];
    size_t i = 0;
    while (load[i] && load[i] != ' ' && i + 1 < sizeof(word)) {
        word[i] = load[i];
        i++;
    }
    word[i] = 0;
    const char *base = strrchr(word, '/');
    base = base ? base + 1 : word;
    for (size_t k = 0; k < sizeof(adapters) / sizeof(adapters[0]); k++)
        if (!strcmp(adapters[k].tool, base))
            return &adapters[k];
    return NULL;
}

int metric_parse(struct metric *m, const char *spec, const char *load, char *why, size_t len)
{
    memset(m, 0, sizeof(*m));
    if (!spec || !*spec)
        return ib_why(why, len, -EINVAL, "--metric is required (runtime, throughput, latency, command:CMD, ipc)");
    /* what does not fit is refused: a cut command or regex would be a different one that may still run */
    if (strlen(spec) >= sizeof(m->spec))
        return ib_why(why, len, -EINVAL, "--metric is too long (%zu characters, at most %zu)", strlen(spec),
                      sizeof(m->spec) - 1);
    snprintf(m->spec, sizeof(m->spec), "%s", spec);
    const char *arg = strchr(spec, ':');
    size_t klen = arg ? (size_t)(arg - spec) : strlen(spec);
    arg = arg ? arg + 1 : NULL;
#define IS(s) (klen == strlen(s) && !strncmp(spec, s, klen))
    if (IS("runtime") || IS("cputime")) {
        if (arg)
            return ib_why(why, len, -EINVAL, "--metric %.*s takes no argument", (int)klen, spec);
        m->kind = IS("runtime") ? MK_RUNTIME : MK_CPUTIME;
        snprintf(m->unit, sizeof(m->unit), m->kind == MK_RUNTIME ? "s" : "CPU s");
        return 0;
    }
    if (IS("io-rate")) {
        m->kind = MK_IO_RATE;
        m->higher_better = 1;
        m->period_s = 1;
        if (arg) {
            char *end = NULL;
            errno = 0;
            double s = strtod(arg, &end);
            if (!*arg || errno || *end || !(s >= 0.1 && s <= 600))
                return ib_why(why, len, -EINVAL, "--metric io-rate:SECONDS: '%s' is not a number of seconds in "
                              "[0.1, 600]", arg);
            m->period_s = s;
        }
        snprintf(m->unit, sizeof(m->unit), "B/s");
        return 0;
    }
    if (IS("ipc")) {
        m->kind = MK_IPC;
        m->higher_better = 1;
        snprintf(m->unit, sizeof(m->unit), "instructions/cycle");
        return 0;
    }
    if (IS("command") || IS("command-lower")) {
        if (!arg || !*arg)
            return ib_why(why, len, -EINVAL, "--metric %.*s:CMD needs the command", (int)klen, spec);
        if (strlen(arg) >= sizeof(m->cmd))
            return ib_why(why, len, -EINVAL, "--metric %.*s: the command is too long (%zu characters, at most %zu)",
                          (int)klen, spec, strlen(arg), sizeof(m->cmd) - 1);
        m->kind = MK_COMMAND;
        m->higher_better = IS("command");
        snprintf(m->cmd, sizeof(m->cmd), "%s", arg);
        snprintf(m->adapter, sizeof(m->adapter), "first number");
        snprintf(m->regex, sizeof(m->regex), "([-+]?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?)");
        snprintf(m->unit, sizeof(m->unit), "as printed");
    } else if (IS("throughput") || IS("latency")) {
        m->kind = IS("throughput") ? MK_THROUGHPUT : MK_LATENCY;
        m->higher_better = m->kind == MK_THROUGHPUT;
        if (!load)
            return ib_why(why, len, -EINVAL, "--metric %s reads the load generator's output: give --load 'CMD'",
                          metric_kind_name(m->kind));
        if (arg && *arg) {
            if (strlen(arg) >= sizeof(m->regex))
                return ib_why(why, len, -EINVAL, "--metric %s: the regular expression is too long (%zu characters, "
                              "at most %zu)", metric_kind_name(m->kind), strlen(arg), sizeof(m->regex) - 1);
            snprintf(m->regex, sizeof(m->regex), "%s", arg);
            snprintf(m->adapter, sizeof(m->adapter), "regex");
            snprintf(m->unit, sizeof(m->unit), "as printed");
        } else {
            const struct adapter *a = adapter_for(load);
            if (!a)
                return ib_why(why, len, -EINVAL, "no built-in adapter for the load generator in '%s': give "
                              "--metric %s:REGEX (the first group captures the number)", load,
                              metric_kind_name(m->kind));
            snprintf(m->regex, sizeof(m->regex), "%s", a->regex);
            snprintf(m->adapter, sizeof(m->adapter), "%s", a->tool);
            /* throughput: amount / seconds; latency: seconds / amount */
            m->grp = m->kind == MK_THROUGHPUT ? a->num : a->den;
            m->grp_div = m->kind == MK_THROUGHPUT ? a->den : a->num;
            snprintf(m->unit, sizeof(m->unit), "%s", m->kind == MK_THROUGHPUT ? a->rate_unit : a->time_unit);
        }
    } else {
        return ib_why(why, len, -EINVAL, "unknown --metric '%.*s' (runtime, cputime, throughput, latency, "
                      "command:CMD, command-lower:CMD, ipc, io-rate[:SECONDS])", (int)klen, spec);
    }
#undef IS
    int rc = regcomp(&m->re, m->regex, REG_EXTENDED);
    if (rc != 0) {
        char e[128];
        regerror(rc, &m->re, e, sizeof(e));
        return ib_why(why, len, -EINVAL, "bad regular expression '%s': %s", m->regex, e);
    }
    m->have_re = 1;
    if (!m->grp)
        m->grp = 1;
    if (m->re.re_nsub < (size_t)(m->grp > m->grp_div ? m->grp : m->grp_div)) {
        metric_free(m);
        return ib_why(why, len, -EINVAL, "the regular expression '%s' needs a (group) that captures the number",
                      m->regex);
    }
    return 0;
}

void metric_free(struct metric *m)
{
    if (m->have_re)
        regfree(&m->re);
    m->have_re = 0;
}

/* A matched group's text into buf (truncated to fit); 0 when the group did not take part in the match. */
static int group_text(const char *p, const regmatch_t *g, char *buf, size_t size)
{
    if (g->rm_so < 0)
        return 0;
    size_t n = (size_t)(g->rm_eo - g->rm_so);
    n = n < size - 1 ? n : size - 1;
    memcpy(buf, p + g->rm_so, n);
    buf[n] = 0;
    return 1;
}

/* A positive finite number in s, or -EBADMSG with why. */
static int positive(const char *s, const char *re, double *v, char *why, size_t len)
{
    char *end;
    *v = strtod(s, &end);
    if (end == s || !isfinite(*v) || *v <= 0)
        return ib_why(why, len, -EBADMSG, "'%s' captured by /%s/ is not a positive number", s, re);
    return 0;
}

int metric_read(const struct metric *m, const char *out, double *value, char *why, size_t len)
{
    if (!m->have_re)
        return ib_why(why, len, -EBADMSG, "metric %s reads no output", metric_kind_name(m->kind));
    const char *p = out;
    regmatch_t g[8];
    int found = 0;
    char num[64] = "", den[64] = "";
    while (p && *p && regexec(&m->re, p, 8, g, p == out ? 0 : REG_NOTBOL) == 0) {
        found |= group_text(p, &g[m->grp], num, sizeof(num));
        if (m->grp_div)
            group_text(p, &g[m->grp_div], den, sizeof(den));
        if (m->kind == MK_COMMAND)
            break; /* the first number */
        p += g[0].rm_eo > 0 ? g[0].rm_eo : 1;
    }
    if (!found) {
        char head[81];
        snprintf(head, sizeof(head), "%s", out ? out : "");
        for (char *c = head; *c; c++)
            if (*c == '\n')
                *c = ' ';
        return ib_why(why, len, -EBADMSG, "the output does not match /%s/ (%s): '%s%s'", m->regex, m->adapter,
                      head, out && strlen(out) > 80 ? "..." : "");
    }
    double v, d = 1;
    int rc = positive(num, m->regex, &v, why, len);
    if (rc == 0 && m->grp_div)
        rc = positive(den, m->regex, &d, why, len);
    if (rc == 0)
        *value = v / d;
    return rc;
}

double metric_rel(const struct metric *m, double value, double base)
{
    if (value <= 0 || base <= 0)
        return 0;
    return m->higher_better ? value / base : base / value;
}

int metric_of_run(const struct metric *m, const char *out, uint64_t wall_ns, double cpu_s, double *value, char *why,
                  size_t len)
{
    switch (m->kind) {
    case MK_RUNTIME: *value = (double)wall_ns / 1e9; return 0;
    case MK_CPUTIME: *value = cpu_s > 0 ? cpu_s : 1e-6; return 0;
    case MK_IPC: return ib_why(why, len, -ENOTSUP, "ipc is counted, not read from a run");
    case MK_IO_RATE: return ib_why(why, len, -ENOTSUP, "io-rate is counted, not read from a run");
    default: return metric_read(m, out, value, why, len);
    }
}
