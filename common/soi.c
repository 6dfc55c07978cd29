/* soi.c - checks an SoI's ops table, handles its parameter table, and opens/closes instances. */
#include "soi.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
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

unsigned soi_nparams(const struct soi_ops *ops)
{
    unsigned n = 0;
    while (ops->params && ops->params[n].name)
        n++;
    return n;
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
    unsigned n = soi_nparams(ops);
    if (n > SOI_MAX_PARAMS)
        return ib_why(why, len, -EINVAL, "%s: %u parameters, at most %d", ops->name, n, SOI_MAX_PARAMS);
    for (unsigned i = 0; i < n; i++) {
        const struct soi_param *p = &ops->params[i];
        if (!(p->min <= p->def && p->def <= p->max))
            return ib_why(why, len, -EINVAL, "%s: parameter %s default %g outside [%g, %g]", ops->name, p->name,
                          p->def, p->min, p->max);
        if (!p->help || !*p->help)
            return ib_why(why, len, -EINVAL, "%s: parameter %s has no help", ops->name, p->name);
        for (unsigned j = 0; j < i; j++)
            if (!strcmp(ops->params[j].name, p->name))
                return ib_why(why, len, -EINVAL, "%s: parameter %s twice", ops->name, p->name);
    }
    return 0;
}

int soi_param_index(const struct soi_ops *ops, const char *name)
{
    unsigned n = soi_nparams(ops);
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(ops->params[i].name, name))
            return (int)i;
    return -ENOENT;
}

void soi_param_defaults(const struct soi_ops *ops, double *vals)
{
    unsigned n = soi_nparams(ops);
    for (unsigned i = 0; i < SOI_MAX_PARAMS; i++)
        vals[i] = i < n ? ops->params[i].def : 0;
}

int soi_param_set(const struct soi_ops *ops, double *vals, const char *name, const char *value, char *why,
                  size_t len)
{
    int i = soi_param_index(ops, name);
    if (i < 0)
        return ib_why(why, len, -EINVAL, "%s has no parameter '%s' (see: ibench list --soi %s)", ops->name, name,
                      ops->name);
    const struct soi_param *p = &ops->params[i];
    double v = 0;
    int rc;
    switch (p->type) {
    case SOI_P_SIZE: {
        uint64_t b = 0;
        rc = parse_size(value, &b);
        v = (double)b;
        break;
    }
    case SOI_P_UINT: {
        unsigned long u = 0;
        rc = parse_uint(value, 0, (unsigned long)p->max, &u);
        v = (double)u;
        break;
    }
    case SOI_P_BOOL:
        rc = 0;
        if (!strcmp(value, "1") || !strcmp(value, "yes") || !strcmp(value, "on") || !strcmp(value, "true"))
            v = 1;
        else if (!strcmp(value, "0") || !strcmp(value, "no") || !strcmp(value, "off") || !strcmp(value, "false"))
            v = 0;
        else
            rc = -EINVAL;
        break;
    default:
        rc = parse_double(value, &v);
    }
    if (rc < 0 && rc != -ERANGE)
        return ib_why(why, len, -EINVAL, "%s: bad value '%s' for %s", ops->name, value, name);
    if (rc == -ERANGE || v < p->min || v > p->max) /* parse_uint reports its own range as -ERANGE */
        return ib_why(why, len, -ERANGE, "%s: %s=%s is outside [%g, %g]", ops->name, name, value, p->min, p->max);
    vals[i] = v;
    return 0;
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
