/* profile_fmt.c - the profile format (docs/profile-schema.md): one strict reader, one writer (profile_fmt.h).
 *
 * Reading checks every field this version knows for type, range and required-ness and stops at the first wrong one
 * with "<file>: <json path>: <what was expected>, got <what was there>". Unknown members are ignored (a minor version
 * only adds fields). Writing builds the JSON, reads it back through the same checks (so nothing is written that
 * the reader would refuse: a NAN in a required number is written as null and named), then writes atomically. */
#define _GNU_SOURCE
#include "profile_fmt.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"
#include "output.h"
#include "soi.h"

/* 17 significant digits: every double reads back exactly (as common/output.c writes). */
#define PROFILE_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(17))
#define PROFILE_MAX_BYTES (64u << 20)

double profile_soi_safe_tolerated(const struct profile_soi *s)
{
    const double t = s->tolerated, b0 = s->bracket[0], b1 = s->bracket[1];
    return b1 > 0 && b0 >= 0 && b0 <= t && t <= b1 ? b0 : t;
}

double profile_soi_solo_stray(const struct profile *p, const struct profile_soi *s)
{
    double lo = INFINITY, hi = -INFINITY;
    for (unsigned i = 0; i < p->nbefore + p->nafter; i++) {
        const double v = i < p->nbefore ? p->before[i] : p->after[i - p->nbefore];
        if (isfinite(v) && v > 0)
            lo = fmin(lo, v), hi = fmax(hi, v);
    }
    if (!isfinite(lo))
        return NAN;
    double f = NAN;
    for (unsigned i = 0; i < s->ncurve; i++) {
        const double v = s->curve[i].solo;
        if (!(v > 0) || !isfinite(v))
            continue;
        const double g = fmax(1.0, fmax(v / hi, lo / v));
        f = isfinite(f) ? fmax(f, g) : g;
    }
    return f;
}

double profile_soi_full_achieved(const struct profile_soi *s)
{
    double sum = 0;
    unsigned n = 0;
    for (unsigned i = 0; i < s->ncurve; i++)
        if (s->curve[i].intensity == 100 && isfinite(s->curve[i].achieved_pct))
            sum += s->curve[i].achieved_pct, n++;
    return n ? sum / n : NAN;
}

void profile_soi_init(struct profile_soi *s)
{
    memset(s, 0, sizeof(*s));
    s->capacity = NAN;
    s->reach.cpu = -1;
    s->reach.bar_pct = s->reach.effect_pct = s->reach.se_pct = s->reach.soi_achieved_pct = NAN;
    s->tolerated = s->bracket[0] = s->bracket[1] = NAN;
    struct profile_caused *c = &s->caused;
    c->intensity = c->value = c->se = c->alone = c->beside = c->cpu_lost_pct = c->cpu_lost_se = NAN;
    c->occupancy_pct = NAN;
    c->distinguishable = c->unthrottled = -1;
    s->confidence.tolerated_pts = s->confidence.noise_pct = NAN;
    s->depth.floor = s->depth.relative_100 = s->depth.se_100 = s->depth.below_floor_at = s->depth.seconds = NAN;
}

void profile_init(struct profile *p)
{
    memset(p, 0, sizeof(*p));
    p->major = PROFILE_MAJOR;
    p->minor = PROFILE_MINOR;
    p->qos = p->caused_intensity = p->caused_budget_s = NAN;
    p->caused_counted = -1;
    p->before_median = p->after_median = p->drift_pct = p->noise_pct = NAN;
    p->data_sharing = NAN;
    p->complete = 1;
    p->timeout_s = NAN;
}

static void soi_free(struct profile_soi *s)
{
    free(s->soi);
    free(s->resource);
    free(s->reason);
    free(s->capacity_unit);
    free(s->capacity_source);
    free(s->reach.verdict);
    free(s->reach.probe);
    free(s->reach.unit);
    free(s->reach.reason);
    free(s->curve);
    free(s->caused.unit);
    free(s->caused.basis);
    free(s->caused.rounds);
    free(s->caused.occupancy_what);
    free(s->caused.reason);
    free(s->caused.ref_probe);
    free(s->caused.ref_unit);
    free(s->caused.counted_res);
    free(s->caused.counted_unit);
    free(s->confidence.level);
}

void profile_soi_clear(struct profile_soi *s)
{
    soi_free(s);
    profile_soi_init(s);
}

static void missing_free(struct profile_missing *m)
{
    free(m->phase);
    free(m->soi);
    free(m->reason);
}

static void phase_free(struct profile_phase *ph)
{
    free(ph->phase);
    free(ph->soi);
}

void profile_free(struct profile *p)
{
    if (!p)
        return;
    char **strs[] = {&p->tool, &p->created, &p->fingerprint, &p->cpu_model, &p->name, &p->command, &p->load,
                     &p->metric_kind, &p->metric_spec, &p->metric_unit, &p->metric_adapter, &p->metric_regex,
                     &p->search, &p->relative_to, &p->confidence, &p->data_sharing_source, &p->bursts_off};
    for (size_t i = 0; i < IB_ARRAY_SIZE(strs); i++)
        free(*strs[i]);
    for (unsigned i = 0; i < p->ncaches; i++)
        free(p->caches[i].name);
    free(p->before);
    free(p->after);
    for (unsigned i = 0; i < p->nsois; i++)
        soi_free(&p->sois[i]);
    free(p->sois);
    for (unsigned i = 0; i < p->nmissing; i++)
        missing_free(&p->missing[i]);
    free(p->missing);
    for (unsigned i = 0; i < p->nphases; i++)
        phase_free(&p->phases[i]);
    free(p->phases);
    for (unsigned i = 0; i < p->usage.nres; i++) {
        free(p->usage.res[i].name);
        free(p->usage.res[i].unit);
        free(p->usage.res[i].soi);
        free(p->usage.res[i].windows);
    }
    free(p->usage.source);
    free(p->warning);
    profile_init(p);
}

static char *sdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

int profile_add_missing(struct profile *p, const char *phase, const char *soi, double intensity, const char *reason)
{
    struct profile_missing *m = realloc(p->missing, (p->nmissing + 1) * sizeof(*m));
    if (!m)
        return -ENOMEM;
    p->missing = m;
    m = &p->missing[p->nmissing];
    *m = (struct profile_missing){.phase = sdup(phase), .soi = sdup(soi), .intensity = intensity,
                                  .reason = sdup(reason)};
    if (!m->phase || (soi && !m->soi) || (reason && !m->reason)) {
        missing_free(m);
        return -ENOMEM;
    }
    p->nmissing++;
    p->complete = 0;
    return 0;
}

int profile_add_phase(struct profile *p, const char *phase, const char *soi, const struct profile_phase *figures)
{
    struct profile_phase *ph = realloc(p->phases, (p->nphases + 1) * sizeof(*ph));
    if (!ph)
        return -ENOMEM;
    p->phases = ph;
    ph = &p->phases[p->nphases];
    *ph = *figures;
    ph->phase = sdup(phase);
    ph->soi = sdup(soi);
    if (!ph->phase || (soi && !ph->soi)) {
        phase_free(ph);
        return -ENOMEM;
    }
    p->nphases++;
    return 0;
}

/* The bounds (docs/profile.md, "Pressure during the profile"): what a profile on a quiet machine stays under, here
 * on 2 vCPUs with the target on one and the SoI on the other, against what a neighbour doing real work shows. */
#define DISTURB_CPU_SOME 20.0
#define DISTURB_IO_SOME 20.0
#define DISTURB_MEMORY_SOME 10.0
#define DISTURB_STEAL 10.0

/* The SoIs whose own work is the pressure on a resource PSI reports: there it is not judged. */
static int own_pressure(const char *soi, const char *res)
{
    static const struct {
        const char *soi, *res;
    } own[] = {{"disk-cap", "io"}, {"disk-bw", "io"}, {"disk-write", "io"}, {"mem-cap", "memory"}};
    for (size_t i = 0; soi && i < IB_ARRAY_SIZE(own); i++)
        if (!strcmp(soi, own[i].soi) && !strcmp(res, own[i].res))
            return 1;
    return 0;
}

int profile_phase_disturbed(const struct profile_phase *ph, char *why, size_t len)
{
    const struct {
        const char *res, *what;
        double v, bound;
    } c[] = {{"cpu", "cpu some", ph->cpu_some, DISTURB_CPU_SOME},
             {"io", "io some", ph->io_some, DISTURB_IO_SOME},
             {"memory", "memory some", ph->memory_some, DISTURB_MEMORY_SOME},
             {"steal", "steal", ph->steal, DISTURB_STEAL}};
    if (why && len)
        why[0] = 0;
    int n = 0;
    for (size_t i = 0; i < IB_ARRAY_SIZE(c); i++)
        if (isfinite(c[i].v) && c[i].v > c[i].bound && !own_pressure(ph->soi, c[i].res)) {
            size_t k = why ? strlen(why) : 0;
            if (why && k < len)
                snprintf(why + k, len - k, "%s%s %.1f %% > %g %%", n ? "; " : "", c[i].what, c[i].v, c[i].bound);
            n++;
        }
    return n > 0;
}

/* ---- reading: typed getters that name the field ------------------------------------------------------------ */

struct rd {
    const char *name; /* the file, for messages */
    int minor;
    int complete;     /* the file's "complete" (1.4; 1 before) */
    char *why;
    size_t len;
};

/* What was there, short and on one line. */
static const char *got(const json_t *v, char *b, size_t n)
{
    switch (json_typeof(v)) {
    case JSON_NULL: return "null";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: snprintf(b, n, "an array of %zu", json_array_size(v)); return b;
    case JSON_INTEGER: snprintf(b, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return b;
    case JSON_REAL: {
        double x = json_real_value(v);
        snprintf(b, n, x == floor(x) && fabs(x) < 1e15 ? "%.1f" : "%g", x);
        return b;
    }
    case JSON_STRING: {
        const char *s = json_string_value(v);
        size_t k = 0, max = n > 8 ? n - 6 : 0;
        b[k++] = '"';
        for (; *s && k < max; s++)
            b[k++] = (unsigned char)*s < 0x20 ? '?' : *s;
        if (*s && n > 8) {
            memcpy(b + k, "...", 3);
            k += 3;
        }
        b[k++] = '"';
        b[k] = 0;
        return b;
    }
    }
    return "?";
}

/* "<file>: <path>: <expected> expected, got <v>" (v NULL: missing). Returns -EINVAL. */
static int bad(struct rd *r, const char *path, const json_t *v, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(struct rd *r, const char *path, const json_t *v, const char *fmt, ...)
{
    char exp[200], g[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(exp, sizeof(exp), fmt, ap);
    va_end(ap);
    if (!v)
        return ib_why(r->why, r->len, -EINVAL, "%s: %s: missing (%s expected)", r->name, path, exp);
    return ib_why(r->why, r->len, -EINVAL, "%s: %s: %s expected, got %s", r->name, path, exp, got(v, g, sizeof(g)));
}

static int oom(struct rd *r)
{
    return ib_why(r->why, r->len, -ENOMEM, "%s: out of memory", r->name);
}

/* Paths: "sois[2].tolerated" */
#define PATH_MAX_LEN 160
static void at_key(char *out, const char *at, const char *key)
{
    if (snprintf(out, PATH_MAX_LEN, "%s%s%s", at, *at ? "." : "", key) >= PATH_MAX_LEN)
        memcpy(out + PATH_MAX_LEN - 4, "...", 4); /* a path this deep is not a profile's */
}
static void at_idx(char *out, const char *at, size_t i)
{
    if (snprintf(out, PATH_MAX_LEN, "%s[%zu]", at, i) >= PATH_MAX_LEN)
        memcpy(out + PATH_MAX_LEN - 4, "...", 4);
}

enum { OPT = 0, REQ = 1 };

/* Every getter: 0 read, 1 absent and optional (out untouched), <0 error with why. */

static int get_num(struct rd *r, json_t *o, const char *at, const char *key, int req, double lo, double hi,
                   int lo_open, double *out)
{
    char f[PATH_MAX_LEN], e[96];
    at_key(f, at, key);
    json_t *v = json_object_get(o, key);
    if (!v && !req)
        return 1;
    if (isinf(lo) && isinf(hi))
        snprintf(e, sizeof(e), "a number");
    else if (isinf(hi))
        snprintf(e, sizeof(e), "a number %s %g", lo_open ? ">" : ">=", lo);
    else if (isinf(lo))
        snprintf(e, sizeof(e), "a number <= %g", hi);
    else
        snprintf(e, sizeof(e), "a number in %c%g, %g]", lo_open ? '(' : '[', lo, hi);
    if (!json_is_number(v))
        return bad(r, f, v, "%s", e);
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi || (lo_open && x == lo))
        return bad(r, f, v, "%s", e);
    *out = x;
    return 0;
}

static int get_int(struct rd *r, json_t *o, const char *at, const char *key, int req, long long lo, long long hi,
                   long long *out)
{
    char f[PATH_MAX_LEN];
    at_key(f, at, key);
    json_t *v = json_object_get(o, key);
    if (!v && !req)
        return 1;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        if (hi >= INT_MAX)
            return bad(r, f, v, "an integer >= %lld", lo);
        return bad(r, f, v, "an integer in [%lld, %lld]", lo, hi);
    }
    *out = json_integer_value(v);
    return 0;
}

enum { S_NONEMPTY = 2, S_NULL = 4 }; /* with REQ: must not be "", may be null (read as NULL) */

static int get_str(struct rd *r, json_t *o, const char *at, const char *key, int flags, char **out)
{
    char f[PATH_MAX_LEN];
    at_key(f, at, key);
    json_t *v = json_object_get(o, key);
    if (!v && !(flags & REQ))
        return 1;
    if (json_is_null(v) && (flags & S_NULL))
        return 0;
    if (!json_is_string(v) || ((flags & S_NONEMPTY) && !*json_string_value(v)))
        return bad(r, f, v, "%s%s", (flags & S_NONEMPTY) ? "a non-empty string" : "a string",
                   (flags & S_NULL) ? " or null" : "");
    if (!(*out = strdup(json_string_value(v))))
        return oom(r);
    return 0;
}

/* A string that is one of names[] (NULL-terminated); *idx its index. */
static int get_enum(struct rd *r, json_t *o, const char *at, const char *key, int req, const char *const *names,
                    int *idx, char **out)
{
    char f[PATH_MAX_LEN], e[200] = "";
    at_key(f, at, key);
    json_t *v = json_object_get(o, key);
    if (!v && !req)
        return 1;
    const char *s = json_string_value(v);
    for (int i = 0; names[i]; i++) {
        if (s && !strcmp(s, names[i])) {
            if (idx)
                *idx = i;
            if (out && !(*out = strdup(s)))
                return oom(r);
            return 0;
        }
        size_t k = strlen(e);
        snprintf(e + k, sizeof(e) - k, "%s\"%s\"", i ? (names[i + 1] ? ", " : " or ") : "", names[i]);
    }
    return bad(r, f, v, "%s", e);
}

static int get_bool(struct rd *r, json_t *o, const char *at, const char *key, int req, int *out)
{
    char f[PATH_MAX_LEN];
    at_key(f, at, key);
    json_t *v = json_object_get(o, key);
    if (!v && !req)
        return 1;
    if (!json_is_boolean(v))
        return bad(r, f, v, "true or false");
    *out = json_is_true(v);
    return 0;
}

static int get_obj(struct rd *r, json_t *o, const char *at, const char *key, int req, json_t **out)
{
    char f[PATH_MAX_LEN];
    at_key(f, at, key);
    json_t *v = json_object_get(o, key);
    if (!v && !req)
        return 1;
    if (!json_is_object(v))
        return bad(r, f, v, "an object");
    *out = v;
    return 0;
}

static int get_arr(struct rd *r, json_t *o, const char *at, const char *key, int req, size_t min, size_t max,
                   const char *what, json_t **out)
{
    char f[PATH_MAX_LEN];
    at_key(f, at, key);
    json_t *v = json_object_get(o, key);
    if (!v && !req)
        return 1;
    if (!json_is_array(v) || json_array_size(v) < min || json_array_size(v) > max) {
        if (max == SIZE_MAX)
            return min ? bad(r, f, v, "an array of %s (at least %zu)", what, min) : bad(r, f, v, "an array of %s", what);
        if (min == max)
            return bad(r, f, v, "an array of %zu %s", min, what);
        return bad(r, f, v, "an array of %s (%zu to %zu)", what, min, max);
    }
    *out = v;
    return 0;
}

/* A number array element at[i]. */
static int elem_num(struct rd *r, json_t *a, const char *at, size_t i, double lo, int lo_open, double *out)
{
    json_t *v = json_array_get(a, i);
    double x = json_number_value(v);
    if (json_is_number(v) && isfinite(x) && x >= lo && !(lo_open && x == lo)) {
        *out = x;
        return 0;
    }
    char f[PATH_MAX_LEN];
    at_idx(f, at, i);
    if (isinf(lo))
        return bad(r, f, v, "a number");
    return bad(r, f, v, "a number %s %g", lo_open ? ">" : ">=", lo);
}

/* An array of CPU numbers (non-negative integers), 1 to PROFILE_MAX_CPUS of them. */
static int get_cpus(struct rd *r, json_t *o, const char *at, const char *key, int req, int *cpus, unsigned *n)
{
    json_t *a;
    int rc = get_arr(r, o, at, key, req, 1, PROFILE_MAX_CPUS, "CPU numbers", &a);
    if (rc)
        return rc;
    char f[PATH_MAX_LEN], g[PATH_MAX_LEN];
    at_key(f, at, key);
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT_MAX) {
            at_idx(g, f, i);
            return bad(r, g, v, "a CPU number (an integer >= 0)");
        }
        cpus[i] = (int)json_integer_value(v);
    }
    *n = (unsigned)json_array_size(a);
    return 0;
}

/* {"median": > 0, "samples": [> 0, ...]} */
static int get_samples(struct rd *r, json_t *o, const char *at, const char *key, double *median, double **arr,
                       unsigned *n)
{
    json_t *b, *a;
    char f[PATH_MAX_LEN], g[PATH_MAX_LEN];
    at_key(f, at, key);
    int rc;
    if ((rc = get_obj(r, o, at, key, REQ, &b)) || (rc = get_num(r, b, f, "median", REQ, 0, INFINITY, 1, median)) ||
        (rc = get_arr(r, b, f, "samples", REQ, 1, SIZE_MAX, "numbers > 0", &a)))
        return rc;
    if (!(*arr = calloc(json_array_size(a), sizeof(double))))
        return oom(r);
    *n = (unsigned)json_array_size(a);
    at_key(g, f, "samples");
    for (size_t i = 0; i < *n; i++)
        if ((rc = elem_num(r, a, g, i, 0, 1, &(*arr)[i])))
            return rc;
    return 0;
}

#define TRY(x)                                                                                                        \
    do {                                                                                                              \
        int rc_ = (x);                                                                                                \
        if (rc_ < 0)                                                                                                  \
            return rc_;                                                                                               \
    } while (0)

static int read_point(struct rd *r, json_t *v, const char *at, struct profile_point *pt)
{
    if (!json_is_object(v))
        return bad(r, at, v, "a curve point (an object)");
    long long n = 0;
    pt->achieved_pct = NAN;
    TRY(get_num(r, v, at, "intensity", REQ, 0, 100, 0, &pt->intensity));
    TRY(get_num(r, v, at, "value", REQ, -INFINITY, INFINITY, 0, &pt->value));
    TRY(get_num(r, v, at, "solo", REQ, -INFINITY, INFINITY, 0, &pt->solo));
    TRY(get_num(r, v, at, "relative", REQ, 0, INFINITY, 0, &pt->relative));
    TRY(get_bool(r, v, at, "meets_qos", REQ, &pt->meets_qos));
    /* 1.0/1.1 always wrote it (0 for a point without a completed step); 1.2 omits it then */
    TRY(get_num(r, v, at, "achieved_pct", r->minor < 2 ? REQ : OPT, 0, 1000, 0, &pt->achieved_pct));
    TRY(get_bool(r, v, at, "again", OPT, &pt->again));
    TRY(get_int(r, v, at, "samples", OPT, 1, UINT_MAX, &n));
    pt->samples = (unsigned)n;
    TRY(get_bool(r, v, at, "timed_out", OPT, &pt->timed_out)); /* 1.4 */
    if (pt->timed_out && r->complete) {
        char f[PATH_MAX_LEN];
        at_key(f, at, "timed_out");
        return bad(r, f, json_object_get(v, "timed_out"), "false in a profile marked complete");
    }
    if (pt->timed_out && pt->meets_qos)
        return bad(r, at, json_object_get(v, "meets_qos"), "meets_qos false on a timed-out point (a bound below QoS)");
    /* 1.4: the point's standard error, its solo samples, and whether it was uncertain */
    pt->relative_se = NAN;
    TRY(get_num(r, v, at, "relative_se", OPT, 0, INFINITY, 0, &pt->relative_se));
    n = 0;
    TRY(get_int(r, v, at, "solo_samples", OPT, 1, UINT_MAX, &n));
    pt->solo_samples = (unsigned)n;
    TRY(get_bool(r, v, at, "uncertain", OPT, &pt->uncertain));
    return 0;
}

static const char *const verdicts[] = {"reaches", "does not reach", "undecided", "unchecked", NULL};

static int read_reach(struct rd *r, json_t *e, const char *at, struct profile_reach *re)
{
    json_t *o;
    char f[PATH_MAX_LEN];
    at_key(f, at, "reach");
    TRY(get_obj(r, e, at, "reach", REQ, &o));
    int v = 0;
    long long cpu = -1;
    TRY(get_enum(r, o, f, "verdict", REQ, verdicts, &v, &re->verdict));
    const int unchecked = v == 3; /* unchecked needs the reason; a checked one its probe, CPU and bar */
    TRY(get_str(r, o, f, "reason", unchecked ? REQ | S_NONEMPTY : S_NONEMPTY, &re->reason));
    TRY(get_str(r, o, f, "probe", unchecked ? OPT : REQ, &re->probe));
    TRY(get_int(r, o, f, "cpu", unchecked ? OPT : REQ, 0, INT_MAX, &cpu));
    re->cpu = (int)cpu;
    TRY(get_num(r, o, f, "bar_pct", unchecked ? OPT : REQ, 0, INFINITY, 0, &re->bar_pct));
    TRY(get_str(r, o, f, "unit", OPT, &re->unit));
    TRY(get_num(r, o, f, "effect_pct", OPT, -INFINITY, INFINITY, 0, &re->effect_pct));
    TRY(get_num(r, o, f, "se_pct", OPT, 0, INFINITY, 0, &re->se_pct));
    TRY(get_num(r, o, f, "soi_achieved_pct", OPT, 0, 1000, 0, &re->soi_achieved_pct));
    return 0;
}

static const char *const bases[] = {"cpu-second", "wall-second", "reference", "counted", NULL};

static int read_caused(struct rd *r, json_t *e, const char *at, struct profile_caused *c)
{
    char f[PATH_MAX_LEN], g[PATH_MAX_LEN];
    json_t *d, *a, *o;
    at_key(f, at, "caused");
    json_t *v = json_object_get(e, "caused");
    if (r->minor < 2) { /* 1.0/1.1: clamped to 0-100 when written */
        if (!json_is_null(v) && get_num(r, e, at, "caused", REQ, 0, 100, 0, &c->value) < 0)
            return bad(r, f, v, "a number in [0, 100] or null");
    } else if (!json_is_null(v) && get_num(r, e, at, "caused", REQ, -INFINITY, INFINITY, 0, &c->value) < 0) {
        return bad(r, f, v, "a number or null");
    }
    at_key(f, at, "caused_detail");
    TRY(get_obj(r, e, at, "caused_detail", REQ, &d));
    TRY(get_num(r, d, f, "intensity", REQ, 0, 100, 0, &c->intensity));
    TRY(get_str(r, d, f, "unit", REQ, &c->unit));
    TRY(get_enum(r, d, f, "basis", OPT, bases, NULL, &c->basis));
    TRY(get_num(r, d, f, "alone", OPT, 0, INFINITY, 0, &c->alone));
    TRY(get_num(r, d, f, "beside", OPT, 0, INFINITY, 0, &c->beside));
    TRY(get_num(r, d, f, "se", OPT, 0, INFINITY, 0, &c->se));
    TRY(get_bool(r, d, f, "distinguishable", OPT, &c->distinguishable));
    int rc = get_arr(r, d, f, "rounds", OPT, 1, SIZE_MAX, "numbers", &a);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (!(c->rounds = calloc(json_array_size(a), sizeof(double))))
            return oom(r);
        c->nrounds = (unsigned)json_array_size(a);
        at_key(g, f, "rounds");
        for (size_t i = 0; i < c->nrounds; i++)
            TRY(elem_num(r, a, g, i, -INFINITY, 0, &c->rounds[i]));
    }
    /* at most all of its CPU time lost; a gain has no bound: an I/O-bound SoI using 2 % of a CPU alone may use 7 %
     * beside the target (-250) */
    TRY(get_num(r, d, f, "cpu_lost_pct", OPT, -INFINITY, 100, 0, &c->cpu_lost_pct));
    TRY(get_num(r, d, f, "cpu_lost_se", OPT, 0, INFINITY, 0, &c->cpu_lost_se));
    TRY(get_bool(r, d, f, "unthrottled", OPT, &c->unthrottled));
    if ((rc = get_obj(r, d, f, "occupancy", OPT, &o)) < 0)
        return rc;
    if (rc == 0) {
        at_key(g, f, "occupancy");
        TRY(get_str(r, o, g, "what", REQ | S_NONEMPTY, &c->occupancy_what));
        TRY(get_num(r, o, g, "pct", REQ, 0, INFINITY, 0, &c->occupancy_pct));
    }
    /* no figure needs its reason */
    TRY(get_str(r, d, f, "reason", isnan(c->value) ? REQ | S_NONEMPTY : S_NONEMPTY, &c->reason));
    /* 1.5: a caused read through a reference probe carries the probe and its calibration */
    const int by_ref = c->basis && !strcmp(c->basis, "reference");
    if ((rc = get_obj(r, d, f, "reference", by_ref && !isnan(c->value) ? REQ : OPT, &o)) < 0)
        return rc;
    if (rc == 0) {
        at_key(g, f, "reference");
        json_t *lv, *rl;
        TRY(get_str(r, o, g, "probe", REQ | S_NONEMPTY, &c->ref_probe));
        TRY(get_str(r, o, g, "unit", REQ | S_NONEMPTY, &c->ref_unit));
        TRY(get_arr(r, o, g, "levels", REQ, 2, PROFILE_REF_MAX, "numbers", &lv));
        TRY(get_arr(r, o, g, "relative", REQ, 2, PROFILE_REF_MAX, "numbers", &rl));
        if (json_array_size(lv) != json_array_size(rl))
            return bad(r, g, rl, "as many relatives as levels");
        c->nref = (unsigned)json_array_size(lv);
        char h[PATH_MAX_LEN];
        at_key(h, g, "levels");
        for (size_t i = 0; i < c->nref; i++)
            TRY(elem_num(r, lv, h, i, 0, 0, &c->ref_levels[i]));
        at_key(h, g, "relative");
        for (size_t i = 0; i < c->nref; i++)
            TRY(elem_num(r, rl, h, i, 0, 0, &c->ref_rel[i]));
    }
    /* 1.8: a caused the kernel's count stands for names the usage resource it was read from */
    const int by_count = c->basis && !strcmp(c->basis, "counted");
    if ((rc = get_obj(r, d, f, "counted", by_count ? REQ : OPT, &o)) < 0)
        return rc;
    if (rc == 0) {
        at_key(g, f, "counted");
        long long n = 0;
        TRY(get_str(r, o, g, "resource", REQ | S_NONEMPTY, &c->counted_res));
        TRY(get_str(r, o, g, "unit", REQ | S_NONEMPTY, &c->counted_unit));
        TRY(get_num(r, o, g, "mean", REQ, 0, INFINITY, 0, &c->counted_mean));
        TRY(get_num(r, o, g, "floor", REQ, 0, INFINITY, 0, &c->counted_floor));
        TRY(get_int(r, o, g, "windows", REQ, 1, PROFILE_USAGE_WINDOWS, &n));
        c->counted_windows = (unsigned)n;
    }
    if (r->minor < 2 && !c->basis && !(c->basis = strdup("wall-second")))
        return oom(r); /* what 1.0/1.1 measured: work per wall-clock second */
    return 0;
}

static const char *const statuses[] = {"measured", "skipped", "incomplete", NULL};
static const char *const statuses13[] = {"measured", "skipped", NULL};

/* 1.7: the victim beside the SoI in bursts (struct profile_burst), by on_s ascending; absent: none measured. */
static int read_bursts(struct rd *r, json_t *e, const char *at, struct profile_soi *s)
{
    json_t *a;
    char f[PATH_MAX_LEN], g[PATH_MAX_LEN];
    int rc = get_arr(r, e, at, "bursts", OPT, 0, PROFILE_MAX_BURSTS, "bursts", &a);
    if (rc)
        return rc < 0 ? rc : 0;
    at_key(f, at, "bursts");
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        struct profile_burst *b = &s->bursts[i];
        long long n = 0;
        at_idx(g, f, i);
        if (!json_is_object(v))
            return bad(r, g, v, "a burst (an object)");
        *b = (struct profile_burst){.relative_se = NAN};
        TRY(get_num(r, v, g, "on_s", REQ, 0, INFINITY, 1, &b->on_s));
        if (i && !(b->on_s > s->bursts[i - 1].on_s)) {
            char h[PATH_MAX_LEN];
            at_key(h, g, "on_s");
            return bad(r, h, json_object_get(v, "on_s"), "a number > %g (bursts by on_s ascending)",
                       s->bursts[i - 1].on_s);
        }
        TRY(get_num(r, v, g, "off_s", REQ, 0, INFINITY, 0, &b->off_s));
        TRY(get_num(r, v, g, "level", REQ, 0, 100, 1, &b->level));
        TRY(get_num(r, v, g, "relative", REQ, 0, INFINITY, 0, &b->relative));
        TRY(get_num(r, v, g, "relative_se", OPT, 0, INFINITY, 0, &b->relative_se));
        TRY(get_num(r, v, g, "on_relative", REQ, 0, 1, 0, &b->on_relative));
        TRY(get_int(r, v, g, "samples", REQ, 1, UINT_MAX, &n));
        b->samples = (unsigned)n;
        TRY(get_num(r, v, g, "seconds", REQ, 0, INFINITY, 0, &b->seconds));
        TRY(get_bool(r, v, g, "timed_out", OPT, &b->timed_out));
        s->nbursts = (unsigned)i + 1;
    }
    return 0;
}

static int read_soi(struct rd *r, json_t *e, const char *at, struct profile_soi *s)
{
    if (!json_is_object(e))
        return bad(r, at, e, "an SoI entry (an object)");
    int st = 0;
    TRY(get_str(r, e, at, "soi", REQ | S_NONEMPTY, &s->soi));
    TRY(get_str(r, e, at, "resource", REQ, &s->resource));
    TRY(get_enum(r, e, at, "status", REQ, r->minor >= 4 ? statuses : statuses13, &st, NULL));
    s->status = st == 2 ? PROFILE_INCOMPLETE : st ? PROFILE_SKIPPED : PROFILE_MEASURED;
    if (s->status == PROFILE_INCOMPLETE && r->complete) {
        char f[PATH_MAX_LEN];
        at_key(f, at, "status");
        return bad(r, f, json_object_get(e, "status"), "\"measured\" or \"skipped\" in a profile marked complete");
    }
    const int m = s->status == PROFILE_MEASURED; /* measured needs its figures; the others their reason */
    TRY(get_str(r, e, at, "reason", m ? S_NONEMPTY : REQ | S_NONEMPTY, &s->reason));
    if (json_object_get(e, "reach")) {
        TRY(read_reach(r, e, at, &s->reach));
        s->have_reach = 1;
    }
    TRY(get_cpus(r, e, at, "cpus", m, s->cpus, &s->ncpus));
    json_t *o, *a;
    char f[PATH_MAX_LEN], g[PATH_MAX_LEN];
    int rc = get_obj(r, e, at, "capacity", m, &o);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        at_key(f, at, "capacity");
        TRY(get_num(r, o, f, "value", REQ, 0, INFINITY, 0, &s->capacity));
        TRY(get_str(r, o, f, "unit", REQ, &s->capacity_unit));
        TRY(get_str(r, o, f, "source", REQ, &s->capacity_source));
    }
    if (s->status == PROFILE_SKIPPED)
        return 0; /* whatever else a skipped entry carries is not read */
    /* an incomplete entry: the points measured before it was cut short, if any; nothing else is read */
    rc = get_arr(r, e, at, "curve", m ? REQ : OPT, m ? 1 : 0, SIZE_MAX, "points", &a);
    if (rc)
        return rc < 0 ? rc : 0;
    if (json_array_size(a) && !(s->curve = calloc(json_array_size(a), sizeof(*s->curve))))
        return oom(r);
    s->ncurve = (unsigned)json_array_size(a);
    at_key(f, at, "curve");
    for (size_t i = 0; i < s->ncurve; i++) {
        at_idx(g, f, i);
        TRY(read_point(r, json_array_get(a, i), g, &s->curve[i]));
    }
    if (!m)
        return 0;
    TRY(get_num(r, e, at, "tolerated", REQ, 0, 100, 0, &s->tolerated));
    TRY(get_arr(r, e, at, "tolerated_bracket", REQ, 2, 2, "numbers in [0, 100]", &a));
    at_key(f, at, "tolerated_bracket");
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_array_get(a, i);
        at_idx(g, f, i);
        if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 100)
            return bad(r, g, v, "a number in [0, 100]");
        s->bracket[i] = json_number_value(v);
    }
    if (s->bracket[0] > s->bracket[1])
        return ib_why(r->why, r->len, -EINVAL, "%s: %s: [low, high] with low <= high expected, got [%g, %g]", r->name,
                      f, s->bracket[0], s->bracket[1]);
    TRY(read_caused(r, e, at, &s->caused));
    s->have_caused = 1;
    at_key(f, at, "confidence");
    TRY(get_obj(r, e, at, "confidence", REQ, &o));
    TRY(get_num(r, o, f, "tolerated_pts", REQ, 0, INFINITY, 0, &s->confidence.tolerated_pts));
    TRY(get_num(r, o, f, "noise_pct", REQ, 0, INFINITY, 0, &s->confidence.noise_pct));
    TRY(get_str(r, o, f, "level", REQ | S_NONEMPTY, &s->confidence.level));
    s->have_confidence = 1;
    TRY(read_bursts(r, e, at, s));
    if (!json_object_get(e, "depth")) /* before 1.6, or a profile made with --no-depth */
        return 0;
    struct profile_depth *d = &s->depth;
    long long n = 0;
    at_key(f, at, "depth");
    TRY(get_obj(r, e, at, "depth", REQ, &o));
    TRY(get_num(r, o, f, "floor", REQ, 0, 1, 1, &d->floor));
    TRY(get_num(r, o, f, "relative_at_100", REQ, 0, INFINITY, 0, &d->relative_100));
    TRY(get_num(r, o, f, "se_at_100", OPT, 0, INFINITY, 0, &d->se_100));
    TRY(get_num(r, o, f, "below_floor_at", OPT, 0, 100, 0, &d->below_floor_at));
    TRY(get_int(r, o, f, "points", REQ, 0, INT_MAX, &n));
    d->points = (unsigned)n;
    TRY(get_num(r, o, f, "seconds", REQ, 0, INFINITY, 0, &d->seconds));
    s->have_depth = 1;
    return 0;
}

static const char *const kinds[] = {"runtime", "cputime", "throughput", "latency", "command", "ipc", "io-rate", NULL};

/* "YYYY-MM-DDTHH:MM:SSZ" */
static int utc_stamp(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(s) != sizeof(shape) - 1)
        return 0;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
            return 0;
    return 1;
}

/* "MAJOR.MINOR", digits only */
static int parse_version(const char *s, int *major, int *minor)
{
    size_t a = strspn(s, "0123456789");
    if (a == 0 || a > 6 || s[a] != '.')
        return 0;
    size_t b = strspn(s + a + 1, "0123456789");
    if (b == 0 || b > 6 || s[a + 1 + b])
        return 0;
    *major = atoi(s);
    *minor = atoi(s + a + 1);
    return 1;
}

static const char *const phases[] = {"baseline before", "tolerated", "bursts", "caused", "baseline after", "usage",
                                     NULL};

/* 1.4: what an incomplete profile lacks; none in a complete one. */
static int read_missing(struct rd *r, json_t *d, struct profile *p)
{
    json_t *a;
    char f[PATH_MAX_LEN];
    if (r->minor < 4)
        return 0;
    int rc = get_arr(r, d, "", "missing", p->complete ? OPT : REQ, p->complete ? 0 : 1, p->complete ? 0 : 1024,
                     p->complete ? "items (none in a complete profile)" : "items", &a);
    if (rc)
        return rc < 0 ? rc : 0;
    if (!(p->missing = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*p->missing))))
        return oom(r);
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        struct profile_missing *m = &p->missing[p->nmissing++];
        *m = (struct profile_missing){.intensity = NAN};
        at_idx(f, "missing", i);
        if (!json_is_object(v))
            return bad(r, f, v, "an object");
        TRY(get_enum(r, v, f, "phase", REQ, phases, NULL, &m->phase));
        TRY(get_str(r, v, f, "soi", S_NONEMPTY, &m->soi));
        TRY(get_num(r, v, f, "intensity", OPT, 0, 100, 0, &m->intensity));
        TRY(get_str(r, v, f, "reason", REQ | S_NONEMPTY, &m->reason));
    }
    return 0;
}

/* A share of wall time, %: a number in [0, 100], or null / absent when the source was absent (NAN). */
static int get_share(struct rd *r, json_t *o, const char *at, const char *key, double *out)
{
    *out = NAN;
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    char f[PATH_MAX_LEN];
    at_key(f, at, key);
    if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 100))
        return bad(r, f, v, "a number in [0, 100] or null");
    *out = json_number_value(v);
    return 0;
}

void profile_usage_res_init(struct profile_usage_res *u)
{
    memset(u, 0, sizeof(*u));
    u->floor = u->mean = u->p50 = u->p90 = u->max = u->duty = u->level = NAN;
    u->burst_mean_s = u->burst_max_s = u->gap_mean_s = u->cap_mean_pct = u->cap_level_pct = NAN;
}

/* 1.6: the target's counted usage over time (struct profile_usage). */
static int read_usage(struct rd *r, json_t *d, struct profile *p)
{
    json_t *o, *a, *w;
    char f[PATH_MAX_LEN], g[PATH_MAX_LEN], h[PATH_MAX_LEN];
    int rc = get_obj(r, d, "", "usage", OPT, &o);
    if (rc)
        return rc < 0 ? rc : 0;
    struct profile_usage *u = &p->usage;
    TRY(get_num(r, o, "usage", "window_s", REQ, 0, 3600, 1, &u->window_s));
    TRY(get_num(r, o, "usage", "seconds", REQ, 0, INFINITY, 0, &u->seconds));
    TRY(get_str(r, o, "usage", "source", REQ | S_NONEMPTY, &u->source));
    TRY(get_arr(r, o, "usage", "resources", REQ, 0, PROFILE_USAGE_MAX, "resources", &a));
    snprintf(f, sizeof(f), "usage.resources");
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        struct profile_usage_res *x = &u->res[u->nres++];
        profile_usage_res_init(x);
        at_idx(g, f, i);
        if (!json_is_object(v))
            return bad(r, g, v, "an object");
        long long nb = 0;
        TRY(get_str(r, v, g, "name", REQ | S_NONEMPTY, &x->name));
        TRY(get_str(r, v, g, "unit", REQ | S_NONEMPTY, &x->unit));
        TRY(get_str(r, v, g, "soi", S_NONEMPTY, &x->soi));
        TRY(get_num(r, v, g, "floor", REQ, 0, INFINITY, 0, &x->floor));
        TRY(get_num(r, v, g, "mean", OPT, 0, INFINITY, 0, &x->mean));
        TRY(get_num(r, v, g, "p50", OPT, 0, INFINITY, 0, &x->p50));
        TRY(get_num(r, v, g, "p90", OPT, 0, INFINITY, 0, &x->p90));
        TRY(get_num(r, v, g, "max", OPT, 0, INFINITY, 0, &x->max));
        TRY(get_num(r, v, g, "duty", OPT, 0, 1, 0, &x->duty));
        TRY(get_num(r, v, g, "level", OPT, 0, INFINITY, 0, &x->level));
        TRY(get_int(r, v, g, "bursts", REQ, 0, INT_MAX, &nb));
        x->bursts = (unsigned)nb;
        TRY(get_num(r, v, g, "burst_mean_s", OPT, 0, INFINITY, 0, &x->burst_mean_s));
        TRY(get_num(r, v, g, "burst_max_s", OPT, 0, INFINITY, 0, &x->burst_max_s));
        TRY(get_num(r, v, g, "gap_mean_s", OPT, 0, INFINITY, 0, &x->gap_mean_s));
        TRY(get_num(r, v, g, "of_capacity_mean_pct", OPT, 0, INFINITY, 0, &x->cap_mean_pct));
        TRY(get_num(r, v, g, "of_capacity_level_pct", OPT, 0, INFINITY, 0, &x->cap_level_pct));
        TRY(get_arr(r, v, g, "windows", REQ, 0, PROFILE_USAGE_WINDOWS, "numbers >= 0 or null", &w));
        at_key(h, g, "windows");
        if (json_array_size(w) && !(x->windows = calloc(json_array_size(w), sizeof(double))))
            return oom(r);
        for (size_t k = 0; k < json_array_size(w); k++) {
            json_t *e = json_array_get(w, k);
            char q[PATH_MAX_LEN];
            at_idx(q, h, k);
            if (json_is_null(e))
                x->windows[k] = NAN;
            else if (json_is_number(e) && json_number_value(e) >= 0)
                x->windows[k] = json_number_value(e);
            else
                return bad(r, q, e, "a number >= 0 or null");
            x->nwindows++;
        }
    }
    p->have_usage = 1;
    return 0;
}

/* 1.4: the machine's pressure per phase. "disturbed" and "disturbed_by" are derived (profile_phase_disturbed):
 * checked for type, and recomputed from the figures rather than believed. */
static int read_phases(struct rd *r, json_t *d, struct profile *p)
{
    json_t *a;
    char f[PATH_MAX_LEN];
    int rc = get_arr(r, d, "", "phases", OPT, 0, 4 * PROFILE_MAX_SOIS + 2, "phases", &a);
    if (rc)
        return rc < 0 ? rc : 0;
    if (!(p->phases = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*p->phases))))
        return oom(r);
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        struct profile_phase *ph = &p->phases[p->nphases++];
        at_idx(f, "phases", i);
        if (!json_is_object(v))
            return bad(r, f, v, "an object");
        int dist = 0;
        char *by = NULL;
        TRY(get_enum(r, v, f, "phase", REQ, phases, NULL, &ph->phase));
        TRY(get_str(r, v, f, "soi", S_NONEMPTY, &ph->soi));
        TRY(get_num(r, v, f, "wall_s", REQ, 0, INFINITY, 0, &ph->wall_s));
        TRY(get_share(r, v, f, "cpu_some_pct", &ph->cpu_some));
        TRY(get_share(r, v, f, "io_some_pct", &ph->io_some));
        TRY(get_share(r, v, f, "io_full_pct", &ph->io_full));
        TRY(get_share(r, v, f, "memory_some_pct", &ph->memory_some));
        TRY(get_share(r, v, f, "memory_full_pct", &ph->memory_full));
        TRY(get_share(r, v, f, "steal_pct", &ph->steal));
        TRY(get_bool(r, v, f, "disturbed", OPT, &dist));
        rc = get_str(r, v, f, "disturbed_by", OPT, &by);
        free(by);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Each SoI once, and each one this ibench knows -- except in a profile of a newer minor version, whose unknown SoI
 * may be one a newer ibench added (a minor version only adds): read, with a warning (p->warning). */
static int check_soi_names(struct rd *r, json_t *a, struct profile *p)
{
    char f[PATH_MAX_LEN], g[64];
    size_t n = json_array_size(a);
    unsigned unknown = 0;
    const json_t *first_unknown = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *name = json_string_value(json_object_get(json_array_get(a, i), "soi"));
        if (!name)
            continue; /* read_soi names what is wrong with the entry */
        for (size_t k = 0; k < i; k++) {
            const char *o = json_string_value(json_object_get(json_array_get(a, k), "soi"));
            if (o && !strcmp(o, name)) {
                at_idx(f, "sois", i);
                return ib_why(r->why, r->len, -EINVAL, "%s: %s.soi: SoI %s listed twice (first at sois[%zu])",
                              r->name, f, got(json_object_get(json_array_get(a, i), "soi"), g, sizeof(g)), k);
            }
        }
        if (soi_find(name))
            continue;
        if (r->minor <= PROFILE_MINOR) {
            at_idx(f, "sois", i);
            return ib_why(r->why, r->len, -EINVAL, "%s: %s.soi: an SoI this ibench knows expected (ibench list), got %s",
                          r->name, f, got(json_object_get(json_array_get(a, i), "soi"), g, sizeof(g)));
        }
        if (!unknown++)
            first_unknown = json_object_get(json_array_get(a, i), "soi");
    }
    if (n > PROFILE_MAX_SOIS)
        return bad(r, "sois", a, "at most %d SoI entries", PROFILE_MAX_SOIS);
    if (unknown) {
        char w[512];
        snprintf(w, sizeof(w), "%s: %u SoI%s this ibench does not know (%s%s), read as they are: the profile is "
                 "version %d.%d, newer than this ibench's %d.%d, whose SoIs may be newer ones", r->name, unknown,
                 unknown == 1 ? "" : "s", got(first_unknown, g, sizeof(g)), unknown > 1 ? ", ..." : "",
                 p->major, p->minor, PROFILE_MAJOR, PROFILE_MINOR);
        if (!(p->warning = strdup(w)))
            return oom(r);
    }
    return 0;
}

static int read_doc(struct rd *r, json_t *d, struct profile *p)
{
    char g[PATH_MAX_LEN];
    if (!json_is_object(d))
        return ib_why(r->why, r->len, -EINVAL, "%s: not an ibench profile (an object expected, got %s)", r->name,
                      got(d, g, sizeof(g)));
    json_t *v = json_object_get(d, "format");
    if (!json_is_string(v) || strcmp(json_string_value(v), PROFILE_FORMAT))
        return ib_why(r->why, r->len, -EINVAL, "%s: format: not an ibench profile (\"%s\" expected, got %s)", r->name,
                      PROFILE_FORMAT, v ? got(v, g, sizeof(g)) : "none");
    v = json_object_get(d, "version");
    if (!json_is_string(v) || !parse_version(json_string_value(v), &p->major, &p->minor))
        return bad(r, "version", v, "\"MAJOR.MINOR\" (digits)");
    if (p->major != PROFILE_MAJOR)
        return ib_why(r->why, r->len, -EINVAL, "%s: version: profile version %s; this ibench reads version %d.x only",
                      r->name, json_string_value(v), PROFILE_MAJOR);
    r->minor = p->minor;
    long long n = 0;
    json_t *o, *a;
    if (p->minor >= 4) { /* 1.4: required; older files knew no other kind */
        TRY(get_bool(r, d, "", "complete", REQ, &p->complete));
        r->complete = p->complete;
    }
    TRY(get_str(r, d, "", "tool", REQ, &p->tool));
    if (strncmp(p->tool, "ibench ", 7))
        return bad(r, "tool", json_object_get(d, "tool"), "\"ibench X.Y.Z\"");
    TRY(get_str(r, d, "", "created", REQ, &p->created));
    if (!utc_stamp(p->created))
        return bad(r, "created", json_object_get(d, "created"), "a UTC time \"YYYY-MM-DDTHH:MM:SSZ\"");

    TRY(get_obj(r, d, "", "machine", REQ, &o));
    TRY(get_str(r, o, "machine", "fingerprint", REQ, &p->fingerprint));
    TRY(get_str(r, o, "machine", "cpu_model", REQ, &p->cpu_model));
    TRY(get_int(r, o, "machine", "cpus", REQ, 1, INT_MAX, &n));
    p->machine_cpus = (int)n;
    TRY(get_obj(r, o, "machine", "caches_measured_bytes", REQ, &a));
    if (json_object_size(a) > IB_ARRAY_SIZE(p->caches))
        return bad(r, "machine.caches_measured_bytes", a, "at most %zu caches", IB_ARRAY_SIZE(p->caches));
    const char *k;
    json_object_foreach(a, k, v)
    {
        TRY(get_int(r, a, "machine.caches_measured_bytes", k, REQ, 1, LLONG_MAX, &n));
        if (!(p->caches[p->ncaches].name = strdup(k)))
            return oom(r);
        p->caches[p->ncaches++].bytes = (double)n;
    }

    TRY(get_obj(r, d, "", "target", REQ, &o));
    TRY(get_str(r, o, "target", "name", REQ | S_NONEMPTY, &p->name));
    TRY(get_str(r, o, "target", "command", S_NULL, &p->command));
    TRY(get_int(r, o, "target", "pid", REQ, 0, INT_MAX, &n));
    p->pid = (int)n;
    TRY(get_str(r, o, "target", "load", S_NULL, &p->load));
    TRY(get_cpus(r, o, "target", "cpus", REQ, p->tcpus, &p->ntcpus));

    int b = 0;
    TRY(get_obj(r, d, "", "metric", REQ, &o));
    TRY(get_enum(r, o, "metric", "kind", REQ, kinds, NULL, &p->metric_kind));
    TRY(get_str(r, o, "metric", "spec", REQ, &p->metric_spec));
    TRY(get_str(r, o, "metric", "unit", REQ, &p->metric_unit));
    TRY(get_bool(r, o, "metric", "higher_is_better", REQ, &b));
    p->higher_is_better = b;
    TRY(get_str(r, o, "metric", "adapter", REQ, &p->metric_adapter));
    TRY(get_str(r, o, "metric", "regex", REQ, &p->metric_regex));
    TRY(get_num(r, d, "", "qos", REQ, 0, 1, 1, &p->qos));

    TRY(get_obj(r, d, "", "method", REQ, &o));
    TRY(get_int(r, o, "method", "samples_per_point", REQ, 1, UINT_MAX, &n));
    p->samples_per_point = (unsigned)n;
    TRY(get_int(r, o, "method", "baseline_samples", REQ, 1, UINT_MAX, &n));
    p->baseline_samples = (unsigned)n;
    TRY(get_num(r, o, "method", "caused_intensity", REQ, 0, 100, 1, &p->caused_intensity));
    TRY(get_str(r, o, "method", "search", REQ, &p->search));
    TRY(get_str(r, o, "method", "relative_to", OPT, &p->relative_to));
    n = 0;
    TRY(get_int(r, o, "method", "caused_min_rounds", OPT, 1, UINT_MAX, &n));
    p->caused_min_rounds = (unsigned)n;
    TRY(get_num(r, o, "method", "caused_budget_s", OPT, 0, INFINITY, 1, &p->caused_budget_s));
    TRY(get_num(r, o, "method", "timeout_s", OPT, 0, INFINITY, 1, &p->timeout_s)); /* 1.4 */
    TRY(get_bool(r, o, "method", "caused_counted", OPT, &p->caused_counted)); /* 1.8 */
    int got_on = get_arr(r, o, "method", "burst_on_s", OPT, 1, PROFILE_MAX_BURSTS, "numbers > 0", &a); /* 1.7 */
    if (got_on < 0)
        return got_on;
    for (size_t i = 0; got_on == 0 && i < json_array_size(a); i++)
        TRY(elem_num(r, a, "method.burst_on_s", i, 0, 1, &p->burst_on_s[i]));
    p->nburst_on = got_on == 0 ? (unsigned)json_array_size(a) : 0;
    TRY(get_str(r, o, "method", "bursts_off", S_NONEMPTY, &p->bursts_off));

    /* an incomplete profile has what was measured of its baseline: either side, or neither */
    const int bq = p->complete ? REQ : OPT;
    TRY(get_obj(r, d, "", "baseline", REQ, &o));
    if (bq == REQ || json_object_get(o, "before"))
        TRY(get_samples(r, o, "baseline", "before", &p->before_median, &p->before, &p->nbefore));
    if (bq == REQ || json_object_get(o, "after"))
        TRY(get_samples(r, o, "baseline", "after", &p->after_median, &p->after, &p->nafter));
    TRY(get_num(r, o, "baseline", "drift_pct", bq, -INFINITY, INFINITY, 0, &p->drift_pct));
    TRY(get_num(r, o, "baseline", "noise_pct", bq, 0, INFINITY, 0, &p->noise_pct));
    TRY(get_str(r, o, "baseline", "confidence", bq | S_NONEMPTY, &p->confidence));
    TRY(read_missing(r, d, p));
    TRY(read_phases(r, d, p));
    TRY(read_usage(r, d, p));

    int has = get_obj(r, d, "", "characteristics", OPT, &o); /* 1.3 */
    if (has < 0)
        return has;
    if (has == 0) {
        TRY(get_num(r, o, "characteristics", "data_sharing", REQ, 0, 1, 1, &p->data_sharing));
        TRY(get_str(r, o, "characteristics", "data_sharing_source", REQ | S_NONEMPTY, &p->data_sharing_source));
    }

    TRY(get_arr(r, d, "", "sois", REQ, 0, SIZE_MAX, "SoI entries", &a));
    TRY(check_soi_names(r, a, p));
    if (json_array_size(a) && !(p->sois = calloc(json_array_size(a), sizeof(*p->sois))))
        return oom(r);
    p->nsois = (unsigned)json_array_size(a);
    for (unsigned i = 0; i < p->nsois; i++)
        profile_soi_init(&p->sois[i]);
    for (unsigned i = 0; i < p->nsois; i++) {
        at_idx(g, "sois", i);
        TRY(read_soi(r, json_array_get(a, i), g, &p->sois[i]));
    }
    return 0;
}

/* One line, whatever the file put in a key or its name held: control characters become '?'. */
static int one_line(int rc, char *why, size_t len)
{
    for (size_t i = 0; rc < 0 && why && i < len && why[i]; i++)
        if ((unsigned char)why[i] < 0x20)
            why[i] = '?';
    return rc;
}

static int parse(const char *text, const char *name, struct profile *p, char *why, size_t len)
{
    profile_init(p);
    if (!text || !text[strspn(text, " \t\r\n")])
        return ib_why(why, len, -EINVAL, "%s: an empty file, not a profile", name);
    json_error_t e;
    json_t *d = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &e);
    if (!d)
        return ib_why(why, len, -EINVAL, "%s: not valid JSON (line %d, column %d: %s)", name, e.line, e.column,
                      e.text);
    struct rd r = {.name = name, .minor = PROFILE_MINOR, .why = why, .len = len};
    int rc = read_doc(&r, d, p);
    json_decref(d);
    if (rc < 0)
        profile_free(p);
    return rc;
}

int profile_parse(const char *text, const char *name, struct profile *p, char *why, size_t len)
{
    return one_line(parse(text, name, p, why, len), why, len);
}

static int read_file(const char *path, struct profile *p, char *why, size_t len)
{
    profile_init(p);
    FILE *f = fopen(path, "re");
    if (!f)
        return ib_why(why, len, -errno, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : -ENOMEM;
    while (rc == 0) {
        if (n + 1 >= cap) {
            char *nb = cap < PROFILE_MAX_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                rc = cap < PROFILE_MAX_BYTES ? -ENOMEM : -EFBIG;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t k = fread(buf + n, 1, cap - 1 - n, f);
        n += k;
        if (k == 0) {
            if (ferror(f))
                rc = errno ? -errno : -EIO;
            break;
        }
    }
    fclose(f);
    if (rc < 0) {
        free(buf);
        return ib_why(why, len, rc, "%s: %s", path,
                      rc == -EFBIG ? "larger than a profile can be (64 MiB)" : strerror(-rc));
    }
    if (memchr(buf, 0, n)) {
        free(buf);
        return ib_why(why, len, -EINVAL, "%s: not valid JSON (a NUL byte)", path);
    }
    buf[n] = 0;
    rc = parse(buf, path, p, why, len);
    free(buf);
    return rc;
}

int profile_read(const char *path, struct profile *p, char *why, size_t len)
{
    return one_line(read_file(path, p, why, len), why, len);
}

/* ---- writing ------------------------------------------------------------------------------------------------ */

/* Required members: a missing value is written as null, and the check before writing names it. */
static void req_num(json_t *o, const char *k, double v)
{
    json_object_set_new(o, k, isfinite(v) ? json_real(v) : json_null());
}
static void opt_num(json_t *o, const char *k, double v)
{
    if (isfinite(v))
        json_object_set_new(o, k, json_real(v));
}
static void req_str(json_t *o, const char *k, const char *s)
{
    json_object_set_new(o, k, s ? json_string(s) : json_null());
}
static void opt_str(json_t *o, const char *k, const char *s)
{
    if (s)
        json_object_set_new(o, k, json_string(s));
}
static json_t *int_array(const int *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}
static json_t *num_array(const double *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(a, isfinite(v[i]) ? json_real(v[i]) : json_null());
    return a;
}

static json_t *point_json(const struct profile_point *pt)
{
    json_t *j = json_object();
    req_num(j, "intensity", pt->intensity);
    req_num(j, "value", pt->value);
    req_num(j, "solo", pt->solo);
    req_num(j, "relative", pt->relative);
    json_object_set_new(j, "meets_qos", json_boolean(pt->meets_qos));
    opt_num(j, "achieved_pct", pt->achieved_pct);
    if (pt->again)
        json_object_set_new(j, "again", json_true());
    if (pt->samples > 0)
        json_object_set_new(j, "samples", json_integer(pt->samples));
    if (pt->timed_out)
        json_object_set_new(j, "timed_out", json_true());
    if (pt->relative_se > 0) /* 0: no noise figure to give one */
        opt_num(j, "relative_se", pt->relative_se);
    if (pt->solo_samples > 0)
        json_object_set_new(j, "solo_samples", json_integer(pt->solo_samples));
    if (pt->uncertain)
        json_object_set_new(j, "uncertain", json_true());
    return j;
}

static json_t *reach_json(const struct profile_reach *re)
{
    json_t *j = json_object();
    req_str(j, "verdict", re->verdict);
    opt_str(j, "probe", re->probe);
    if (re->cpu >= 0)
        json_object_set_new(j, "cpu", json_integer(re->cpu));
    opt_num(j, "bar_pct", re->bar_pct);
    opt_str(j, "unit", re->unit);
    opt_num(j, "effect_pct", re->effect_pct);
    opt_num(j, "se_pct", re->se_pct);
    opt_num(j, "soi_achieved_pct", re->soi_achieved_pct);
    opt_str(j, "reason", re->reason);
    return j;
}

static json_t *caused_json(const struct profile_caused *c)
{
    json_t *j = json_object();
    req_num(j, "intensity", c->intensity);
    req_str(j, "unit", c->unit);
    opt_str(j, "basis", c->basis);
    opt_num(j, "alone", c->alone);
    opt_num(j, "beside", c->beside);
    opt_num(j, "se", c->se);
    if (c->distinguishable >= 0)
        json_object_set_new(j, "distinguishable", json_boolean(c->distinguishable));
    if (c->nrounds && c->rounds)
        json_object_set_new(j, "rounds", num_array(c->rounds, c->nrounds));
    opt_num(j, "cpu_lost_pct", c->cpu_lost_pct);
    opt_num(j, "cpu_lost_se", c->cpu_lost_se);
    if (c->unthrottled >= 0)
        json_object_set_new(j, "unthrottled", json_boolean(c->unthrottled));
    if (c->occupancy_what || isfinite(c->occupancy_pct)) {
        json_t *o = json_object();
        req_str(o, "what", c->occupancy_what);
        req_num(o, "pct", c->occupancy_pct);
        json_object_set_new(j, "occupancy", o);
    }
    opt_str(j, "reason", c->reason);
    if (c->ref_probe) {
        json_t *o = json_object();
        req_str(o, "probe", c->ref_probe);
        req_str(o, "unit", c->ref_unit);
        json_object_set_new(o, "levels", num_array(c->ref_levels, c->nref));
        json_object_set_new(o, "relative", num_array(c->ref_rel, c->nref));
        json_object_set_new(j, "reference", o);
    }
    if (c->counted_res) {
        json_t *o = json_object();
        req_str(o, "resource", c->counted_res);
        req_str(o, "unit", c->counted_unit);
        req_num(o, "mean", c->counted_mean);
        req_num(o, "floor", c->counted_floor);
        json_object_set_new(o, "windows", json_integer(c->counted_windows));
        json_object_set_new(j, "counted", o);
    }
    return j;
}

static json_t *soi_json(const struct profile_soi *s)
{
    json_t *e = json_object();
    req_str(e, "soi", s->soi);
    req_str(e, "resource", s->resource);
    json_object_set_new(e, "status", json_string(s->status == PROFILE_MEASURED   ? "measured"
                                                 : s->status == PROFILE_SKIPPED ? "skipped"
                                                                                : "incomplete"));
    opt_str(e, "reason", s->reason);
    if (s->have_reach)
        json_object_set_new(e, "reach", reach_json(&s->reach));
    if (s->ncpus)
        json_object_set_new(e, "cpus", int_array(s->cpus, s->ncpus));
    if (isfinite(s->capacity) || s->capacity_unit || s->capacity_source) {
        json_t *c = json_object();
        req_num(c, "value", s->capacity);
        req_str(c, "unit", s->capacity_unit);
        req_str(c, "source", s->capacity_source);
        json_object_set_new(e, "capacity", c);
    }
    if (s->status == PROFILE_SKIPPED || (s->status == PROFILE_INCOMPLETE && !s->ncurve))
        return e;
    json_t *curve = json_array();
    for (unsigned i = 0; i < s->ncurve && s->curve; i++)
        json_array_append_new(curve, point_json(&s->curve[i]));
    json_object_set_new(e, "curve", curve);
    if (s->status == PROFILE_INCOMPLETE)
        return e;
    req_num(e, "tolerated", s->tolerated);
    json_object_set_new(e, "tolerated_bracket", num_array(s->bracket, 2));
    if (s->have_caused) {
        json_object_set_new(e, "caused", isfinite(s->caused.value) ? json_real(s->caused.value) : json_null());
        json_object_set_new(e, "caused_detail", caused_json(&s->caused));
    }
    if (s->have_confidence) {
        json_t *c = json_object();
        req_num(c, "tolerated_pts", s->confidence.tolerated_pts);
        req_num(c, "noise_pct", s->confidence.noise_pct);
        req_str(c, "level", s->confidence.level);
        json_object_set_new(e, "confidence", c);
    }
    if (s->have_depth) {
        json_t *d = json_object();
        req_num(d, "floor", s->depth.floor);
        req_num(d, "relative_at_100", s->depth.relative_100);
        opt_num(d, "se_at_100", s->depth.se_100);
        opt_num(d, "below_floor_at", s->depth.below_floor_at); /* absent: not below the floor up to 100 % */
        json_object_set_new(d, "points", json_integer(s->depth.points));
        req_num(d, "seconds", s->depth.seconds);
        json_object_set_new(e, "depth", d);
    }
    if (s->nbursts) {
        json_t *a = json_array();
        for (unsigned i = 0; i < s->nbursts && i < PROFILE_MAX_BURSTS; i++) {
            const struct profile_burst *b = &s->bursts[i];
            json_t *j = json_object();
            req_num(j, "on_s", b->on_s);
            req_num(j, "off_s", b->off_s);
            req_num(j, "level", b->level);
            req_num(j, "relative", b->relative);
            opt_num(j, "relative_se", b->relative_se);
            req_num(j, "on_relative", b->on_relative);
            json_object_set_new(j, "samples", json_integer(b->samples));
            req_num(j, "seconds", b->seconds);
            if (b->timed_out)
                json_object_set_new(j, "timed_out", json_true());
            json_array_append_new(a, j);
        }
        json_object_set_new(e, "bursts", a);
    }
    return e;
}

static json_t *samples_json(double median, const double *v, unsigned n)
{
    json_t *j = json_object();
    req_num(j, "median", median);
    json_object_set_new(j, "samples", num_array(v, v ? n : 0));
    return j;
}

static json_t *profile_json(const struct profile *p)
{
    char ver[32];
    /* the current version; a newer minor version's profile keeps its own: it may list SoIs only that version knows,
     * which this reader refuses in a file of its own version (the text must read back) */
    snprintf(ver, sizeof(ver), "%d.%d", PROFILE_MAJOR, p->minor > PROFILE_MINOR ? p->minor : PROFILE_MINOR);
    json_t *d = json_object(), *o;
    json_object_set_new(d, "format", json_string(PROFILE_FORMAT));
    json_object_set_new(d, "version", json_string(ver));
    req_str(d, "tool", p->tool);
    req_str(d, "created", p->created);

    json_object_set_new(d, "machine", o = json_object());
    req_str(o, "fingerprint", p->fingerprint);
    req_str(o, "cpu_model", p->cpu_model);
    json_object_set_new(o, "cpus", json_integer(p->machine_cpus));
    json_t *caches = json_object();
    for (unsigned i = 0; i < p->ncaches && i < IB_ARRAY_SIZE(p->caches); i++)
        if (p->caches[i].name)
            json_object_set_new(caches, p->caches[i].name,
                                isfinite(p->caches[i].bytes) && p->caches[i].bytes >= 1 && p->caches[i].bytes < 9e18
                                    ? json_integer((json_int_t)p->caches[i].bytes)
                                    : json_null());
    json_object_set_new(o, "caches_measured_bytes", caches);

    json_object_set_new(d, "target", o = json_object());
    req_str(o, "name", p->name);
    req_str(o, "command", p->command); /* null when not given */
    json_object_set_new(o, "pid", json_integer(p->pid));
    req_str(o, "load", p->load);
    json_object_set_new(o, "cpus", int_array(p->tcpus, p->ntcpus));

    json_object_set_new(d, "metric", o = json_object());
    req_str(o, "kind", p->metric_kind);
    req_str(o, "spec", p->metric_spec);
    req_str(o, "unit", p->metric_unit);
    json_object_set_new(o, "higher_is_better", json_boolean(p->higher_is_better));
    req_str(o, "adapter", p->metric_adapter);
    req_str(o, "regex", p->metric_regex);
    req_num(d, "qos", p->qos);

    json_object_set_new(d, "method", o = json_object());
    json_object_set_new(o, "samples_per_point", json_integer(p->samples_per_point));
    json_object_set_new(o, "baseline_samples", json_integer(p->baseline_samples));
    req_num(o, "caused_intensity", p->caused_intensity);
    req_str(o, "search", p->search);
    opt_str(o, "relative_to", p->relative_to);
    if (p->caused_min_rounds)
        json_object_set_new(o, "caused_min_rounds", json_integer(p->caused_min_rounds));
    opt_num(o, "caused_budget_s", p->caused_budget_s);
    if (p->caused_counted >= 0)
        json_object_set_new(o, "caused_counted", json_boolean(p->caused_counted));

    opt_num(o, "timeout_s", p->timeout_s);
    if (p->nburst_on)
        json_object_set_new(o, "burst_on_s", num_array(p->burst_on_s, p->nburst_on));
    opt_str(o, "bursts_off", p->bursts_off);

    /* an incomplete profile has what was measured of it: the reader requires the rest of a complete one */
    json_object_set_new(d, "baseline", o = json_object());
    if (p->complete || p->nbefore)
        json_object_set_new(o, "before", samples_json(p->before_median, p->before, p->nbefore));
    if (p->complete || p->nafter)
        json_object_set_new(o, "after", samples_json(p->after_median, p->after, p->nafter));
    (p->complete ? req_num : opt_num)(o, "drift_pct", p->drift_pct);
    (p->complete ? req_num : opt_num)(o, "noise_pct", p->noise_pct);
    (p->complete ? req_str : opt_str)(o, "confidence", p->confidence);

    json_object_set_new(d, "complete", json_boolean(p->complete));
    if (!p->complete) {
        json_t *ms = json_array();
        for (unsigned i = 0; i < p->nmissing; i++) {
            const struct profile_missing *m = &p->missing[i];
            json_t *j = json_object();
            req_str(j, "phase", m->phase);
            opt_str(j, "soi", m->soi);
            opt_num(j, "intensity", m->intensity);
            req_str(j, "reason", m->reason);
            json_array_append_new(ms, j);
        }
        json_object_set_new(d, "missing", ms);
    }
    if (p->nphases) {
        json_t *phs = json_array();
        for (unsigned i = 0; i < p->nphases; i++) {
            const struct profile_phase *ph = &p->phases[i];
            json_t *j = json_object();
            req_str(j, "phase", ph->phase);
            opt_str(j, "soi", ph->soi);
            req_num(j, "wall_s", ph->wall_s);
            /* an absent source is null, never 0 */
            req_num(j, "cpu_some_pct", ph->cpu_some);
            req_num(j, "io_some_pct", ph->io_some);
            req_num(j, "io_full_pct", ph->io_full);
            req_num(j, "memory_some_pct", ph->memory_some);
            req_num(j, "memory_full_pct", ph->memory_full);
            req_num(j, "steal_pct", ph->steal);
            char by[160];
            int dist = profile_phase_disturbed(ph, by, sizeof(by));
            json_object_set_new(j, "disturbed", json_boolean(dist));
            if (dist)
                json_object_set_new(j, "disturbed_by", json_string(by));
            json_array_append_new(phs, j);
        }
        json_object_set_new(d, "phases", phs);
    }
    if (p->have_usage) {
        const struct profile_usage *u = &p->usage;
        json_t *uo = json_object(), *rs = json_array();
        req_num(uo, "window_s", u->window_s);
        req_num(uo, "seconds", u->seconds);
        req_str(uo, "source", u->source);
        for (unsigned i = 0; i < u->nres; i++) {
            const struct profile_usage_res *x = &u->res[i];
            json_t *j = json_object();
            req_str(j, "name", x->name);
            req_str(j, "unit", x->unit);
            opt_str(j, "soi", x->soi);
            req_num(j, "floor", x->floor);
            opt_num(j, "mean", x->mean);
            opt_num(j, "p50", x->p50);
            opt_num(j, "p90", x->p90);
            opt_num(j, "max", x->max);
            opt_num(j, "duty", x->duty);
            opt_num(j, "level", x->level);
            json_object_set_new(j, "bursts", json_integer(x->bursts));
            opt_num(j, "burst_mean_s", x->burst_mean_s);
            opt_num(j, "burst_max_s", x->burst_max_s);
            opt_num(j, "gap_mean_s", x->gap_mean_s);
            opt_num(j, "of_capacity_mean_pct", x->cap_mean_pct);
            opt_num(j, "of_capacity_level_pct", x->cap_level_pct);
            json_t *w = json_array();
            for (unsigned k = 0; k < x->nwindows; k++)
                json_array_append_new(w, isfinite(x->windows[k]) ? json_real(x->windows[k]) : json_null());
            json_object_set_new(j, "windows", w);
            json_array_append_new(rs, j);
        }
        json_object_set_new(uo, "resources", rs);
        json_object_set_new(d, "usage", uo);
    }

    if (isfinite(p->data_sharing)) {
        json_object_set_new(d, "characteristics", o = json_object());
        req_num(o, "data_sharing", p->data_sharing);
        req_str(o, "data_sharing_source", p->data_sharing_source ? p->data_sharing_source : "unknown");
    }

    json_t *sois = json_array();
    for (unsigned i = 0; i < p->nsois && p->sois; i++)
        json_array_append_new(sois, soi_json(&p->sois[i]));
    json_object_set_new(d, "sois", sois);
    return d;
}

char *profile_dumps(const struct profile *p)
{
    json_t *d = profile_json(p);
    char *s = d ? json_dumps(d, PROFILE_JSON_FLAGS) : NULL;
    json_decref(d);
    return s;
}

int profile_write(const char *path, const struct profile *p, char *why, size_t len)
{
    json_t *d = profile_json(p);
    char *text = d ? json_dumps(d, PROFILE_JSON_FLAGS) : NULL;
    if (!text) {
        json_decref(d);
        return ib_why(why, len, -ENOMEM, "%s: out of memory", path);
    }
    /* read back through the reader: what it would refuse is not written */
    struct profile back;
    char w[512];
    int rc = profile_parse(text, path, &back, w, sizeof(w));
    free(text);
    if (rc < 0) {
        json_decref(d);
        return ib_why(why, len, rc, "not written: %s", w);
    }
    profile_free(&back);
    rc = out_json_file_atomic(path, d);
    json_decref(d);
    if (rc < 0)
        return ib_why(why, len, rc, "%s: %s", path, strerror(-rc));
    return 0;
}

const char *profile_usage_soi(const char *usage_name)
{
    /* one table: the profile's usage_of_capacity and the placement model read the same pairs */
    static const char *const map[][2] = {{"write", "disk-write"}, {"read", "disk-bw"}, {"memory", "mem-cap"},
                                         {"net", "net-bw"},         {"llc", "llc-cap"},  {"mem-bw", "mem-bw"}};
    for (size_t k = 0; usage_name && k < sizeof map / sizeof map[0]; k++)
        if (!strcmp(usage_name, map[k][0]))
            return map[k][1];
    return NULL;
}

int profile_usage_unit_ok(const char *usage_unit, const char *capacity_unit)
{
    return usage_unit && capacity_unit &&
           (!strcmp(usage_unit, capacity_unit) || (!strcmp(usage_unit, "B") && !strcmp(capacity_unit, "bytes")));
}
