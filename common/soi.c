/* soi.c - checks an SoI's ops table, builds its environment, sets its typed options, and opens/closes instances. */
#include "soi.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "machine.h"
#include "parse.h"

const char *soi_kind_name(enum soi_kind k)
{
    switch (k) {
    case SOI_FOOTPRINT: return "footprint";
    case SOI_RATE: return "rate";
    case SOI_DUTY: return "duty";
    }
    return "?";
}

unsigned soi_nopts(const struct soi_ops *ops)
{
    unsigned n = 0;
    while (ops->opts && ops->opts[n].name)
        n++;
    return n;
}

const char *soi_otype_name(enum soi_otype t)
{
    switch (t) {
    case SOI_O_SIZE: return "size";
    case SOI_O_UINT: return "uint";
    case SOI_O_DOUBLE: return "number";
    case SOI_O_BOOL: return "bool";
    case SOI_O_CHOICE: return "choice";
    }
    return "?";
}

/* The C type behind each option type: its size (alignment is the same for these). */
static size_t otype_size(enum soi_otype t)
{
    switch (t) {
    case SOI_O_SIZE: return sizeof(uint64_t);
    case SOI_O_UINT: return sizeof(unsigned);
    case SOI_O_DOUBLE: return sizeof(double);
    case SOI_O_BOOL:
    case SOI_O_CHOICE: return sizeof(int);
    }
    return 0;
}

static unsigned nchoices(const struct soi_opt *o)
{
    unsigned n = 0;
    while (o->choices && o->choices[n])
        n++;
    return n;
}

/* The range a value must be in: a CHOICE's is its indices. */
static void opt_range(const struct soi_opt *o, double *lo, double *hi)
{
    *lo = o->type == SOI_O_CHOICE ? 0 : o->min;
    *hi = o->type == SOI_O_CHOICE ? (double)nchoices(o) - 1 : o->max;
}

static int integral(enum soi_otype t)
{
    return t != SOI_O_DOUBLE;
}

static int check_opt(const struct soi_ops *ops, const struct soi_opt *o, char *why, size_t len)
{
    size_t sz = otype_size(o->type);
    if (!sz)
        return ib_why(why, len, -EINVAL, "%s: option %s has an unknown type %d", ops->name, o->name, (int)o->type);
    if (o->off % sz || o->off + sz > ops->opts_size)
        return ib_why(why, len, -EINVAL, "%s: option %s at offset %zu (%zu bytes) is misaligned or outside the "
                      "%zu-byte option struct", ops->name, o->name, o->off, sz, ops->opts_size);
    if (!o->help || !*o->help)
        return ib_why(why, len, -EINVAL, "%s: option %s has no help", ops->name, o->name);
    unsigned nc = nchoices(o);
    if ((o->type == SOI_O_CHOICE) != (nc > 0) || nc > SOI_MAX_CHOICES)
        return ib_why(why, len, -EINVAL, "%s: option %s: a choice takes 1 to %d names, other types none", ops->name,
                      o->name, SOI_MAX_CHOICES);
    for (unsigned i = 0; i < nc; i++)
        for (unsigned j = 0; j <= i; j++)
            if (!*o->choices[i] || (j < i && !strcmp(o->choices[i], o->choices[j])))
                return ib_why(why, len, -EINVAL, "%s: option %s: choice '%s' empty or twice", ops->name, o->name,
                              o->choices[i]);
    if (o->type == SOI_O_BOOL && (o->min != 0 || o->max != 1))
        return ib_why(why, len, -EINVAL, "%s: option %s: a bool's range is [0, 1]", ops->name, o->name);
    if (o->type == SOI_O_UINT && (o->min < 0 || o->max > UINT_MAX))
        return ib_why(why, len, -EINVAL, "%s: option %s: range beyond an unsigned", ops->name, o->name);
    if (o->type == SOI_O_SIZE && (o->min < 0 || o->max > 0x1p64))
        return ib_why(why, len, -EINVAL, "%s: option %s: range beyond a 64-bit size", ops->name, o->name);
    double lo, hi;
    opt_range(o, &lo, &hi);
    if (!(lo <= o->def && o->def <= hi) || (integral(o->type) && o->def != floor(o->def)))
        return ib_why(why, len, -EINVAL, "%s: option %s default %g outside [%g, %g] or not a whole number",
                      ops->name, o->name, o->def, lo, hi);
    if (o->has_quick && (!(lo <= o->quick && o->quick <= hi) || (integral(o->type) && o->quick != floor(o->quick))))
        return ib_why(why, len, -EINVAL, "%s: option %s quick value %g outside [%g, %g] or not a whole number",
                      ops->name, o->name, o->quick, lo, hi);
    return 0;
}

int soi_check_ops(const struct soi_ops *ops, char *why, size_t len)
{
    if (!ops)
        return ib_why(why, len, -EINVAL, "null ops table");
    if (ops->version != SOI_OPS_VERSION)
        return ib_why(why, len, -EINVAL, "%s: ops version %u, expected %u", ops->name ? ops->name : "?",
                      ops->version, SOI_OPS_VERSION);
    if (!ops->name || !*ops->name)
        return ib_why(why, len, -EINVAL, "SoI without a name");
    for (const char *p = ops->name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return ib_why(why, len, -EINVAL, "%s: names use a-z, 0-9 and '-'", ops->name);
    if (!ops->step)
        return ib_why(why, len, -EINVAL, "%s: no step callback", ops->name);
    if (!ops->resource || !ops->summary)
        return ib_why(why, len, -EINVAL, "%s: resource and summary are required", ops->name);
    if (ops->kind == SOI_FOOTPRINT && !ops->measure)
        return ib_why(why, len, -EINVAL, "%s: a footprint SoI must measure its footprint", ops->name);
    if ((ops->prepare == NULL) != (ops->teardown == NULL))
        return ib_why(why, len, -EINVAL, "%s: prepare and teardown go together", ops->name);
    unsigned n = soi_nopts(ops);
    if (n > SOI_MAX_OPTS)
        return ib_why(why, len, -EINVAL, "%s: %u options, at most %d", ops->name, n, SOI_MAX_OPTS);
    if (ops->opts_size > SOI_OPTS_MAX)
        return ib_why(why, len, -EINVAL, "%s: a %zu-byte option struct, at most %d", ops->name, ops->opts_size,
                      SOI_OPTS_MAX);
    for (unsigned i = 0; i < n; i++) {
        const struct soi_opt *o = &ops->opts[i];
        int rc = check_opt(ops, o, why, len);
        if (rc < 0)
            return rc;
        for (unsigned j = 0; j < i; j++) {
            const struct soi_opt *q = &ops->opts[j];
            if (!strcmp(q->name, o->name))
                return ib_why(why, len, -EINVAL, "%s: option %s twice", ops->name, o->name);
            if (o->off < q->off + otype_size(q->type) && q->off < o->off + otype_size(o->type))
                return ib_why(why, len, -EINVAL, "%s: options %s and %s overlap in the option struct", ops->name,
                              q->name, o->name);
        }
    }
    return 0;
}

const struct soi_opt *soi_opt_find(const struct soi_ops *ops, const char *name)
{
    unsigned n = ops ? soi_nopts(ops) : 0;
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(ops->opts[i].name, name))
            return &ops->opts[i];
    return NULL;
}

/* Stores v (in range, whole for integer types) into o's field; a field outside the buffer (a table soi_open
 * will refuse) is left alone. */
static void opt_store(struct soi_env *env, const struct soi_opt *o, double v)
{
    unsigned char *f = env->opts.b + o->off;
    if (o->off + otype_size(o->type) > SOI_OPTS_MAX)
        return;
    switch (o->type) {
    case SOI_O_SIZE: {
        uint64_t x = v >= 0x1p64 ? UINT64_MAX : (uint64_t)v;
        memcpy(f, &x, sizeof(x));
        break;
    }
    case SOI_O_UINT: {
        unsigned x = (unsigned)v;
        memcpy(f, &x, sizeof(x));
        break;
    }
    case SOI_O_DOUBLE: memcpy(f, &v, sizeof(v)); break;
    case SOI_O_BOOL:
    case SOI_O_CHOICE: {
        int x = (int)v;
        memcpy(f, &x, sizeof(x));
        break;
    }
    }
}

double soi_opt_get(const struct soi_env *env, const struct soi_opt *o)
{
    const unsigned char *f = env->opts.b + o->off;
    if (o->off + otype_size(o->type) > SOI_OPTS_MAX)
        return 0;
    switch (o->type) {
    case SOI_O_SIZE: {
        uint64_t x;
        memcpy(&x, f, sizeof(x));
        return (double)x;
    }
    case SOI_O_UINT: {
        unsigned x;
        memcpy(&x, f, sizeof(x));
        return x;
    }
    case SOI_O_DOUBLE: {
        double x;
        memcpy(&x, f, sizeof(x));
        return x;
    }
    case SOI_O_BOOL:
    case SOI_O_CHOICE: {
        int x;
        memcpy(&x, f, sizeof(x));
        return x;
    }
    }
    return 0;
}

void soi_env_init(struct soi_env *env, const struct soi_ops *ops, struct machine *m, unsigned nthreads,
                  const int *cpus, int target_cpu, const atomic_int *stop)
{
    memset(env, 0, sizeof(*env));
    env->ops = ops;
    if (m) {
        env->topo = m->topo;
        env->cpu = &m->cpu;
        env->calib = &m->calib;
        env->mlim = &m->mlim;
    }
    env->nthreads = nthreads;
    env->cpus = cpus;
    env->target_cpu = target_cpu;
    env->stop = stop;
    unsigned n = ops ? soi_nopts(ops) : 0;
    for (unsigned i = 0; i < n; i++)
        opt_store(env, &ops->opts[i], ops->opts[i].def);
}

void soi_opts_quick(struct soi_env *env)
{
    unsigned n = env->ops ? soi_nopts(env->ops) : 0;
    for (unsigned i = 0; i < n; i++)
        if (env->ops->opts[i].has_quick)
            opt_store(env, &env->ops->opts[i], env->ops->opts[i].quick);
}

static const struct soi_opt *opt_lookup(const struct soi_env *env, const char *name, char *why, size_t len)
{
    const struct soi_opt *o = env->ops ? soi_opt_find(env->ops, name) : NULL;
    if (!o)
        ib_why(why, len, -EINVAL, "%s has no parameter '%s' (see: ibench list --soi %s)",
               env->ops ? env->ops->name : "?", name, env->ops ? env->ops->name : "NAME");
    return o;
}

int soi_opt_setnum(struct soi_env *env, const char *name, double v, char *why, size_t len)
{
    const struct soi_opt *o = opt_lookup(env, name, why, len);
    if (!o)
        return -EINVAL;
    double lo, hi;
    opt_range(o, &lo, &hi);
    if (isnan(v) || (integral(o->type) && isfinite(v) && v != floor(v)))
        return ib_why(why, len, -EINVAL, "%s: bad value %g for %s", env->ops->name, v, name);
    if (!(lo <= v && v <= hi))
        return ib_why(why, len, -ERANGE, "%s: %s=%g is outside [%g, %g]", env->ops->name, name, v, lo, hi);
    opt_store(env, o, v);
    return 0;
}

int soi_opt_set(struct soi_env *env, const char *name, const char *value, char *why, size_t len)
{
    const struct soi_opt *o = opt_lookup(env, name, why, len);
    if (!o)
        return -EINVAL;
    const char *soi = env->ops->name;
    double v = 0;
    int rc = -EINVAL;
    switch (o->type) {
    case SOI_O_SIZE: {
        uint64_t b = 0;
        rc = parse_size(value, &b);
        v = (double)b;
        break;
    }
    case SOI_O_UINT: {
        unsigned long u = 0;
        rc = parse_uint(value, 0, (unsigned long)o->max, &u);
        v = (double)u;
        break;
    }
    case SOI_O_BOOL:
        if (!strcmp(value, "1") || !strcmp(value, "yes") || !strcmp(value, "on") || !strcmp(value, "true"))
            v = 1, rc = 0;
        else if (!strcmp(value, "0") || !strcmp(value, "no") || !strcmp(value, "off") || !strcmp(value, "false"))
            v = 0, rc = 0;
        break;
    case SOI_O_CHOICE: {
        char names[160] = "";
        size_t at = 0;
        for (unsigned i = 0; o->choices[i]; i++) {
            if (!strcmp(value, o->choices[i])) {
                opt_store(env, o, i);
                return 0;
            }
            int k = snprintf(names + at, sizeof(names) - at, "%s%s", i ? "|" : "", o->choices[i]);
            at = k < 0 || (size_t)k >= sizeof(names) - at ? sizeof(names) - 1 : at + (size_t)k;
        }
        return ib_why(why, len, -EINVAL, "%s: bad value '%s' for %s (one of %s)", soi, value, name, names);
    }
    case SOI_O_DOUBLE: rc = parse_double(value, &v); break;
    }
    if (rc < 0 && rc != -ERANGE)
        return ib_why(why, len, -EINVAL, "%s: bad value '%s' for %s", soi, value, name);
    if (rc == -ERANGE || v < o->min || v > o->max) /* parse_uint reports its own range as -ERANGE */
        return ib_why(why, len, -ERANGE, "%s: %s=%s is outside [%g, %g]", soi, name, value, o->min, o->max);
    opt_store(env, o, v);
    return 0;
}

const char *soi_opt_text(const struct soi_opt *o, double v, char *buf, size_t len)
{
    switch (o->type) {
    case SOI_O_CHOICE:
        snprintf(buf, len, "%s", v >= 0 && v < nchoices(o) ? o->choices[(unsigned)v] : "?");
        break;
    case SOI_O_BOOL: snprintf(buf, len, "%s", v ? "on" : "off"); break;
    case SOI_O_SIZE: { /* the largest binary suffix that divides it: parse_size reads it back */
        static const char sfx[] = "KMGT";
        int k = -1;
        while (k < 3 && v >= 1024 && fmod(v, 1024) == 0)
            v /= 1024, k++;
        if (k < 0)
            snprintf(buf, len, "%.0f", v);
        else
            snprintf(buf, len, "%.0f%c", v, sfx[k]);
        break;
    }
    default: snprintf(buf, len, "%g", v);
    }
    return buf;
}

int soi_bad_input(struct soi *s, int rc)
{
    if (s && rc < 0)
        s->bad_input = 1;
    return rc;
}

int soi_open(const struct soi_ops *ops, const struct soi_env *env, struct soi **out, int *bad_input, char *why,
             size_t len)
{
    if (bad_input)
        *bad_input = 0;
    int rc = soi_check_ops(ops, why, len);
    if (rc < 0)
        return rc;
    if (env->ops != ops)
        return ib_why(why, len, -EINVAL, "%s: its environment was made for %s (soi_env_init)", ops->name,
                      env->ops ? env->ops->name : "no SoI");
    if (env->nthreads == 0 || env->nthreads > SOI_MAX_THREADS) {
        if (bad_input)
            *bad_input = 1;
        return ib_why(why, len, -EINVAL, "%u threads: 1 to %d", env->nthreads, SOI_MAX_THREADS);
    }
    if (ops->supported && (rc = ops->supported(env, why, len)) < 0)
        return rc;
    struct soi *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->ops = ops;
    s->env = env;
    if (ops->prepare && (rc = ops->prepare(s, why, len)) < 0) {
        if (bad_input)
            *bad_input = s->bad_input;
        free(s);
        return rc;
    }
    if (!(s->capacity > 0) || !isfinite(s->capacity)) {
        if (ops->teardown)
            ops->teardown(s);
        free(s);
        return ib_why(why, len, -EINVAL, "%s: no capacity to scale intensity against", ops->name);
    }
    *out = s;
    return 0;
}

void soi_close(struct soi *s)
{
    if (!s)
        return;
    if (s->ops->teardown)
        s->ops->teardown(s);
    free(s);
}
