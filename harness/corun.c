/* corun.c - a co-run measured, its adapter to real programs and its record (corun.h). */
#define _GNU_SOURCE
#include "corun.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "config.h"
#include "ib_err.h"
#include "output.h"
#include "stats.h"
#include "target.h"

/* ---- the method ------------------------------------------------------------------------------------------------ */

static void say(struct corun_meter *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct corun_meter *m, const char *fmt, ...)
{
    if (!m->progress)
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    m->progress(m->ctx, line);
}

double corun_se(const double *rel, unsigned n, double med)
{
    if (n < 2 || n > CORUN_MAX_REPS)
        return NAN;
    double dev[CORUN_MAX_REPS], mean = 0, ss = 0;
    for (unsigned i = 0; i < n; i++) {
        dev[i] = fabs(rel[i] - med);
        mean += rel[i] / n;
    }
    for (unsigned i = 0; i < n; i++)
        ss += (rel[i] - mean) * (rel[i] - mean);
    double s = fmax(1.4826 * ib_median(dev, n), sqrt(ss / (n - 1)));
    return 1.2533 * s / sqrt((double)n) * ib_t975(n - 1) / 1.96;
}

static int positive(double v, const char *what, char *why, size_t len)
{
    if (isfinite(v) && v > 0)
        return 0;
    return ib_why(why, len, -EBADMSG, "a %s sample of A is not a positive number (%g)", what, v);
}

static void summarize(const struct corun_params *pp, struct corun_result *out)
{
    (void)pp;
    double t[CORUN_MAX_REPS];
    unsigned n = out->n;
    out->relative = out->se = out->solo_median = out->beside_median = NAN;
    if (n == 0)
        return;
    for (unsigned i = 0; i < n; i++)
        t[i] = out->s[i].relative;
    out->relative = ib_median(t, n);
    out->se = corun_se(t, n, out->relative);
    for (unsigned i = 0; i < n; i++)
        t[i] = out->s[i].solo;
    out->solo_median = ib_median(t, n);
    for (unsigned i = 0; i < n; i++)
        t[i] = out->s[i].beside;
    out->beside_median = ib_median(t, n);
}

int corun_measure(const struct corun_params *pp, struct corun_meter *m, struct corun_result *out, char *why,
                  size_t len)
{
    memset(out, 0, sizeof(*out));
    if (pp->reps < 1 || pp->reps > CORUN_MAX_REPS)
        return ib_why(why, len, -EINVAL, "reps %u: 1 to %d", pp->reps, CORUN_MAX_REPS);
    int rc = 0;
    for (unsigned i = 0; i < pp->reps && rc == 0; i++) {
        struct corun_sample s;
        say(m, "repetition %u of %u: A alone (B paused)", i + 1, pp->reps);
        if ((rc = m->b_pause(m->ctx, 1, why, len)) < 0 || (rc = m->wait_ms(m->ctx, pp->settle_solo_ms, why, len)) < 0 ||
            (rc = m->sample(m->ctx, &s.solo, why, len)) < 0 || (rc = positive(s.solo, "solo", why, len)) < 0)
            break;
        say(m, "repetition %u of %u: A beside B", i + 1, pp->reps);
        if ((rc = m->b_pause(m->ctx, 0, why, len)) < 0 ||
            (rc = m->wait_ms(m->ctx, pp->settle_beside_ms, why, len)) < 0 ||
            (rc = m->sample(m->ctx, &s.beside, why, len)) < 0 || (rc = positive(s.beside, "beside", why, len)) < 0)
            break;
        s.relative = pp->higher_better ? s.beside / s.solo : s.solo / s.beside;
        out->s[out->n++] = s;
    }
    summarize(pp, out);
    return rc;
}

/* ---- the adapter: real programs ---------------------------------------------------------------------------------- */

struct crun {
    const struct corun_opts *o;
    const atomic_int *stop;
    struct child a_srv, b_main, b_load;
    int a_live, b_main_live, b_load_live;
    const char *pause_how;
};

/* B's command (or its load) again and again: a run that fails ends the loop with its status */
static char *loop_of(const char *cmd)
{
    char *s = NULL;
    if (asprintf(&s, "while :; do\n%s\nst=$?; [ \"$st\" -eq 0 ] || exit \"$st\"\ndone", cmd) < 0)
        return NULL;
    return s;
}

static int alive(struct child *c, int live, const char *who, const char *cmd, char *why, size_t len)
{
    if (!live || !child_poll(c))
        return 0;
    char st[96];
    status_text(c->status, st, sizeof(st));
    return ib_why(why, len, -ECHILD, "%s '%s' %s", who, cmd, st);
}

static int all_alive(struct crun *r, char *why, size_t len)
{
    const struct corun_opts *o = r->o;
    int rc = alive(&r->a_srv, r->a_live, "A's service", o->a.command, why, len);
    if (rc == 0)
        rc = alive(&r->b_main, r->b_main_live, "B", o->b.command, why, len);
    if (rc == 0)
        rc = alive(&r->b_load, r->b_load_live, "B's load", o->b.load ? o->b.load : "", why, len);
    return rc;
}

static int c_sample(void *ctx, double *v, char *why, size_t len)
{
    struct crun *r = ctx;
    const struct corun_opts *o = r->o;
    int rc = all_alive(r, why, len);
    if (rc < 0)
        return rc;
    const char *cmd = o->metric.kind == MK_COMMAND ? o->metric.cmd : o->a.load ? o->a.load : o->a.command;
    char *out = NULL;
    int st = 0;
    uint64_t wall = 0;
    double cpu = 0;
    rc = child_run(cmd, o->a.cpus, o->a.ncpus, o->timeout_s * 1000, r->stop, &out, &st, &wall, &cpu, why, len);
    if (rc < 0)
        return rc;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char s[96];
        status_text(st, s, sizeof(s));
        free(out);
        return ib_why(why, len, -ECHILD, "A's sample '%s' %s", cmd, s);
    }
    rc = metric_of_run(&o->metric, out, wall, cpu, v, why, len);
    free(out);
    return rc == 0 ? all_alive(r, why, len) : rc;
}

static int c_pause(void *ctx, int paused, char *why, size_t len)
{
    struct crun *r = ctx;
    int rc = all_alive(r, why, len);
    if (rc == 0 && r->b_main_live)
        rc = child_pause(&r->b_main, paused, &r->pause_how, why, len);
    if (rc == 0 && r->b_load_live)
        rc = child_pause(&r->b_load, paused, &r->pause_how, why, len);
    return rc;
}

static int c_wait(void *ctx, unsigned ms, char *why, size_t len)
{
    struct crun *r = ctx;
    for (unsigned done = 0; done < ms; done += 10) {
        if (r->stop && atomic_load(r->stop))
            return ib_why(why, len, -EINTR, "stopped");
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return r->stop && atomic_load(r->stop) ? ib_why(why, len, -EINTR, "stopped") : 0;
}

static char *sdup(const char *s) { return s ? strdup(s) : NULL; }

static void side_copy(struct corun_side *d, const struct corun_side *s)
{
    *d = *s;
    d->name = sdup(s->name);
    d->command = sdup(s->command);
    d->load = sdup(s->load);
}

int corun_run(const struct corun_opts *o, const atomic_int *stop, struct corun_record *rec, char *why, size_t len)
{
    memset(rec, 0, sizeof(*rec));
    struct crun r = {.o = o, .stop = stop, .pause_how = "freezer"};
    int rc = 0;
    char *bloop = NULL;
    /* A's service first, B next: B's warm-up covers A's */
    if (o->a.load) {
        rc = child_spawn(o->a.command, o->a.cpus, o->a.ncpus, 0, 0, &r.a_srv, why, len);
        r.a_live = rc == 0;
    }
    /* a service runs as it is; a program with no load runs again and again */
    if (rc == 0 && !o->b.load && !(bloop = loop_of(o->b.command)))
        rc = ib_why(why, len, -ENOMEM, "out of memory");
    if (rc == 0) {
        rc = child_spawn(o->b.load ? o->b.command : bloop, o->b.cpus, o->b.ncpus, 0, 0, &r.b_main, why, len);
        r.b_main_live = rc == 0;
    }
    unsigned warm = o->a.load || o->b.load ? o->warmup_ms : 0;
    if (rc == 0 && warm)
        rc = c_wait(&r, warm, why, len);
    if (rc == 0 && o->b.load && !(bloop = loop_of(o->b.load)))
        rc = ib_why(why, len, -ENOMEM, "out of memory");
    if (rc == 0 && o->b.load) {
        rc = child_spawn(bloop, o->b.cpus, o->b.ncpus, 0, 0, &r.b_load, why, len);
        r.b_load_live = rc == 0;
    }
    if (rc == 0)
        rc = all_alive(&r, why, len);
    struct corun_meter m = {.ctx = &r, .sample = c_sample, .b_pause = c_pause, .wait_ms = c_wait,
                            .progress = o->progress};
    struct corun_params pp = o->pp;
    pp.higher_better = o->metric.higher_better; /* the metric's direction, whatever the caller left there */
    if (rc == 0)
        rc = corun_measure(&pp, &m, &rec->r, why, len);
    if (rc < 0 && rc != -ENOMEM && stop && atomic_load(stop)) /* a failure while stopping is the stop's */
        rc = ib_why(why, len, -EINTR, "stopped");
    /* the order of stopping: B's load, B, A's service; each thawed first by child_stop */
    if (r.b_load_live)
        child_stop(&r.b_load, 300);
    if (r.b_main_live)
        child_stop(&r.b_main, 300);
    if (r.a_live)
        child_stop(&r.a_srv, 300);
    free(bloop);
    side_copy(&rec->a, &o->a);
    side_copy(&rec->b, &o->b);
    rec->metric_spec = sdup(o->metric.spec);
    rec->metric_unit = sdup(o->metric.unit);
    rec->higher_is_better = o->metric.higher_better;
    rec->pause = sdup(r.pause_how);
    rec->settle_solo_ms = o->pp.settle_solo_ms;
    rec->settle_beside_ms = o->pp.settle_beside_ms;
    rec->complete = rc == 0;
    rec->reps_planned = pp.reps;
    if (rc == -EINTR && asprintf(&rec->reason, "interrupted (SIGINT/SIGTERM) after %u of %u repetitions", rec->r.n,
                                 pp.reps) < 0)
        rec->reason = NULL;
    rec->major = CORUN_MAJOR;
    rec->minor = CORUN_MINOR;
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    rec->created = sdup(when);
    rec->tool = sdup("ibench " IBENCH_VERSION);
    return rc;
}

/* ---- the record ------------------------------------------------------------------------------------------------- */

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *side_json(const struct corun_side *s)
{
    json_t *cpus = json_array();
    for (unsigned i = 0; i < s->ncpus; i++)
        json_array_append_new(cpus, json_integer(s->cpus[i]));
    return json_pack("{s:s, s:s, s:o, s:o}", "name", s->name ? s->name : "", "command", s->command ? s->command : "",
                     "load", s->load ? json_string(s->load) : json_null(), "cpus", cpus);
}

void *corun_json(const struct corun_record *rec)
{
    json_t *samples = json_array();
    for (unsigned i = 0; i < rec->r.n; i++)
        json_array_append_new(samples, json_pack("{s:i, s:f, s:f, s:f}", "rep", (int)i + 1, "solo", rec->r.s[i].solo,
                                                 "beside", rec->r.s[i].beside, "relative", rec->r.s[i].relative));
    char version[16];
    snprintf(version, sizeof(version), "%d.%d", rec->major, rec->minor);
    json_t *d = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:i}, s:o, s:o, s:{s:s, s:s, s:b}, s:s, s:{s:i, s:i},"
                     " s:i, s:o, s:o, s:o, s:o, s:o}",
                     "format", "ibench-corun", "version", version, "tool", rec->tool ? rec->tool : "", "created",
                     rec->created ? rec->created : "", "machine", "fingerprint",
                     rec->fingerprint ? rec->fingerprint : "", "cpu_model", rec->cpu_model ? rec->cpu_model : "",
                     "cpus", rec->machine_cpus, "a", side_json(&rec->a), "b", side_json(&rec->b), "metric", "spec",
                     rec->metric_spec ? rec->metric_spec : "", "unit", rec->metric_unit ? rec->metric_unit : "",
                     "higher_is_better", rec->higher_is_better, "pause", rec->pause ? rec->pause : "", "settle_ms",
                     "solo", (int)rec->settle_solo_ms, "beside", (int)rec->settle_beside_ms, "reps", (int)rec->r.n,
                     "samples", samples, "relative", num_or_null(rec->r.relative), "relative_se",
                     num_or_null(rec->r.se), "solo_median", num_or_null(rec->r.solo_median), "beside_median",
                     num_or_null(rec->r.beside_median));
    if (d && rec->minor >= 1) { /* 1.1: whether every repetition asked for was done, and why not */
        json_object_set_new(d, "complete", json_boolean(rec->complete));
        json_object_set_new(d, "reps_planned", json_integer(rec->reps_planned));
        if (!rec->complete)
            json_object_set_new(d, "reason", rec->reason ? json_string(rec->reason) : json_null());
    }
    return d;
}

/* Reader helpers: each names the field that is wrong. */
static int bad(char *why, size_t len, const char *name, const char *field, const char *what)
{
    return ib_why(why, len, -EINVAL, "%s: %s: %s", name, field, what);
}

static int get_str(json_t *o, const char *key, int required, char **out, const char *name, const char *where,
                   char *why, size_t len)
{
    json_t *v = json_object_get(o, key);
    char field[96];
    snprintf(field, sizeof(field), "%s%s", where, key);
    if (!v || json_is_null(v)) {
        if (required)
            return bad(why, len, name, field, "a string expected, absent");
        return 0;
    }
    if (!json_is_string(v))
        return bad(why, len, name, field, "a string expected");
    if (!(*out = strdup(json_string_value(v))))
        return -ENOMEM;
    return 0;
}

static int get_num(json_t *o, const char *key, double lo, double hi, double *out, const char *name, const char *where,
                   char *why, size_t len)
{
    json_t *v = json_object_get(o, key);
    char field[96];
    snprintf(field, sizeof(field), "%s%s", where, key);
    if (!json_is_number(v))
        return bad(why, len, name, field, "a number expected");
    double d = json_number_value(v);
    if (!(d >= lo && d <= hi))
        return bad(why, len, name, field, "out of range");
    *out = d;
    return 0;
}

static int side_parse(json_t *o, const char *key, struct corun_side *s, const char *name, char *why, size_t len)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_object(v))
        return bad(why, len, name, key, "an object expected");
    char where[8];
    snprintf(where, sizeof(where), "%s.", key);
    int rc = get_str(v, "name", 1, &s->name, name, where, why, len);
    if (rc == 0)
        rc = get_str(v, "command", 1, &s->command, name, where, why, len);
    if (rc == 0)
        rc = get_str(v, "load", 0, &s->load, name, where, why, len);
    if (rc)
        return rc;
    json_t *cpus = json_object_get(v, "cpus");
    if (!json_is_array(cpus) || json_array_size(cpus) == 0 || json_array_size(cpus) > CORUN_MAX_CPUS)
        return bad(why, len, name, strcat(where, "cpus"), "a list of 1 to 64 CPUs expected");
    size_t i;
    json_t *c;
    json_array_foreach(cpus, i, c)
    {
        if (!json_is_integer(c) || json_integer_value(c) < 0 || json_integer_value(c) > 65535)
            return bad(why, len, name, strcat(where, "cpus"), "a CPU number expected");
        s->cpus[s->ncpus++] = (int)json_integer_value(c);
    }
    return 0;
}

/* 1.1: complete, reps_planned (every repetition asked for is there in a complete record; fewer in an incomplete
 * one) and reason (an incomplete record's, none in a complete one). */
static int read_completeness(json_t *d, struct corun_record *rec, const char *name, char *why, size_t len)
{
    json_t *c = json_object_get(d, "complete");
    if (!json_is_boolean(c))
        return bad(why, len, name, "complete", "true or false expected");
    rec->complete = json_is_true(c);
    double planned;
    int rc = get_num(d, "reps_planned", 1, CORUN_MAX_REPS, &planned, name, "", why, len);
    if (rc)
        return rc;
    if (planned != floor(planned))
        return bad(why, len, name, "reps_planned", "a whole number expected");
    rec->reps_planned = (unsigned)planned;
    if (rec->complete ? rec->reps_planned != rec->r.n : rec->reps_planned <= rec->r.n)
        return bad(why, len, name, "reps_planned",
                   rec->complete ? "the samples' count expected in a complete record"
                                 : "more than the samples' count expected in an incomplete record");
    json_t *r = json_object_get(d, "reason");
    if (rec->complete)
        return r && !json_is_null(r) ? bad(why, len, name, "reason", "none expected in a complete record") : 0;
    if (!json_is_string(r) || !*json_string_value(r))
        return bad(why, len, name, "reason", "a non-empty string expected in an incomplete record");
    return (rec->reason = strdup(json_string_value(r))) ? 0 : -ENOMEM;
}

int corun_parse(const char *text, const char *name, struct corun_record *rec, char *why, size_t len)
{
    memset(rec, 0, sizeof(*rec));
    json_error_t e;
    json_t *d = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    if (!d)
        return ib_why(why, len, -EINVAL, "%s: not JSON (line %d: %s)", name, e.line, e.text);
    int rc = 0;
    const char *fmt = json_string_value(json_object_get(d, "format"));
    const char *ver = json_string_value(json_object_get(d, "version"));
    if (!json_is_object(d) || !fmt || strcmp(fmt, "ibench-corun") != 0) {
        rc = bad(why, len, name, "format", "not an ibench co-run record (\"format\": \"ibench-corun\" expected)");
        goto out;
    }
    if (!ver || sscanf(ver, "%d.%d", &rec->major, &rec->minor) != 2 || rec->major != CORUN_MAJOR) {
        rc = bad(why, len, name, "version", "version 1.x expected");
        goto out;
    }
    json_t *mach = json_object_get(d, "machine"), *met = json_object_get(d, "metric");
    if (!json_is_object(mach) || !json_is_object(met)) {
        rc = bad(why, len, name, !json_is_object(mach) ? "machine" : "metric", "an object expected");
        goto out;
    }
    double x;
    if ((rc = get_str(d, "tool", 1, &rec->tool, name, "", why, len)) ||
        (rc = get_str(d, "created", 1, &rec->created, name, "", why, len)) ||
        (rc = get_str(mach, "fingerprint", 1, &rec->fingerprint, name, "machine.", why, len)) ||
        (rc = get_str(mach, "cpu_model", 1, &rec->cpu_model, name, "machine.", why, len)) ||
        (rc = get_num(mach, "cpus", 1, 65536, &x, name, "machine.", why, len)))
        goto out;
    rec->machine_cpus = (int)x;
    if ((rc = side_parse(d, "a", &rec->a, name, why, len)) || (rc = side_parse(d, "b", &rec->b, name, why, len)) ||
        (rc = get_str(met, "spec", 1, &rec->metric_spec, name, "metric.", why, len)) ||
        (rc = get_str(met, "unit", 1, &rec->metric_unit, name, "metric.", why, len)) ||
        (rc = get_str(d, "pause", 1, &rec->pause, name, "", why, len)))
        goto out;
    json_t *hib = json_object_get(met, "higher_is_better");
    if (!json_is_boolean(hib)) {
        rc = bad(why, len, name, "metric.higher_is_better", "true or false expected");
        goto out;
    }
    rec->higher_is_better = json_is_true(hib);
    json_t *samples = json_object_get(d, "samples");
    if (!json_is_array(samples) || json_array_size(samples) == 0 || json_array_size(samples) > CORUN_MAX_REPS) {
        rc = bad(why, len, name, "samples", "a list of 1 to 100 repetitions expected");
        goto out;
    }
    size_t i;
    json_t *s;
    json_array_foreach(samples, i, s)
    {
        struct corun_sample *cs = &rec->r.s[i];
        if (!json_is_object(s) || (rc = get_num(s, "solo", 1e-300, 1e300, &cs->solo, name, "samples[].", why, len)) ||
            (rc = get_num(s, "beside", 1e-300, 1e300, &cs->beside, name, "samples[].", why, len))) {
            if (!rc)
                rc = bad(why, len, name, "samples[]", "an object expected");
            goto out;
        }
        /* the relative is derived, not trusted: a record whose figures disagree with its samples is refused */
        cs->relative = rec->higher_is_better ? cs->beside / cs->solo : cs->solo / cs->beside;
        json_t *rv = json_object_get(s, "relative");
        if (!json_is_number(rv) || fabs(json_number_value(rv) - cs->relative) > 1e-6 * fmax(1, cs->relative)) {
            rc = bad(why, len, name, "samples[].relative", "not beside/solo of its own sample");
            goto out;
        }
        rec->r.n++;
    }
    summarize(NULL, &rec->r);
    rec->complete = 1;
    rec->reps_planned = rec->r.n;
    if (rec->minor >= 1 && (rc = read_completeness(d, rec, name, why, len)))
        goto out;
out:
    json_decref(d);
    if (rc)
        corun_free(rec);
    return rc;
}

int corun_read(const char *path, struct corun_record *rec, char *why, size_t len)
{
    memset(rec, 0, sizeof(*rec));
    FILE *f = fopen(path, "re");
    if (!f)
        return ib_why(why, len, -errno, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            if (cap >= (64u << 20)) { /* a record of 100 repetitions is a few KiB */
                free(buf);
                fclose(f);
                return ib_why(why, len, -EFBIG, "%s: larger than a co-run record can be", path);
            }
            cap = cap ? 2 * cap : 65536 * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return ib_why(why, len, -ENOMEM, "out of memory");
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return ib_why(why, len, -EIO, "%s: read error", path);
    }
    buf[n] = 0;
    int rc = corun_parse(buf, path, rec, why, len);
    free(buf);
    return rc;
}

int corun_write(const char *path, const struct corun_record *rec, char *why, size_t len)
{
    json_t *d = corun_json(rec);
    char *text = d ? json_dumps(d, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (!text) {
        json_decref(d);
        return ib_why(why, len, -ENOMEM, "%s: out of memory", path);
    }
    struct corun_record back;
    char w[512];
    int rc = corun_parse(text, path, &back, w, sizeof(w));
    free(text);
    if (rc < 0) {
        json_decref(d);
        return ib_why(why, len, rc, "not written: %s", w);
    }
    corun_free(&back);
    rc = out_json_file_atomic(path, d);
    json_decref(d);
    return rc < 0 ? ib_why(why, len, rc, "%s: %s", path, strerror(-rc)) : 0;
}

static void side_free(struct corun_side *s)
{
    free(s->name);
    free(s->command);
    free(s->load);
    s->name = s->command = s->load = NULL;
}

void corun_free(struct corun_record *rec)
{
    free(rec->tool);
    free(rec->created);
    free(rec->fingerprint);
    free(rec->cpu_model);
    side_free(&rec->a);
    side_free(&rec->b);
    free(rec->metric_spec);
    free(rec->metric_unit);
    free(rec->pause);
    free(rec->reason);
    rec->tool = rec->created = rec->fingerprint = rec->cpu_model = rec->metric_spec = rec->metric_unit = rec->pause =
        rec->reason = NULL;
}
