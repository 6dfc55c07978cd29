/* cmd_place_map.c - `ibench place map`: Tang et al. ISCA'11's characteristics heuristic (Algorithm 1) for a latency-sensitive
 * target beside a co-runner, and both applications' CPU sets on a machine (placement/mapping/pl_map.h; docs/placement.md,
 * "The characteristics heuristic"). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "cli.h"
#include "cpuinfo.h"
#include "ib_err.h"
#include "memlimit.h"
#include "parse.h"
#include "pl_map.h"
#include "pl_proc.h"
#include "place.h"
#include "readfile.h"
#include "render.h"

#define CMD "place map"

static char *slurp(const char *path, char *why, size_t len)
{
    char *b = NULL;
    int rc = ib_read_all(path, 16u << 20, &b, NULL);
    if (rc == -EFBIG)
        ib_why(why, len, rc, "%s: larger than 16 MiB", path);
    else if (rc < 0)
        ib_why(why, len, rc, "%s: %s", path, strerror(-rc));
    return b;
}

int place_map_load(const char *arg, struct pl_map_chars *c, struct place_origin *o, char *why, size_t len)
{
    struct place_origin none;
    if (!o)
        o = &none;
    memset(o, 0, sizeof *o);
    char path[4096];
    snprintf(path, sizeof path, "%s", arg);
    unsigned long threads = 0;
    char *colon = strrchr(path, ':');
    if (colon) {
        if (parse_uint(colon + 1, 1, 4096, &threads) < 0)
            return ib_why(why, len, -EINVAL, "'%s': FILE[:THREADS] expected, THREADS a whole number in 1-4096", arg);
        *colon = 0;
    }
    why[0] = 0;
    char *text = slurp(path, why, len);
    if (!text)
        return -EINVAL;
    json_t *doc = json_loads(text, 0, NULL);
    bool is_profile = doc && json_is_string(json_object_get(doc, "format")) &&
                      !strcmp(json_string_value(json_object_get(doc, "format")), "ibench-profile");
    json_decref(doc);
    int rc;
    if (is_profile) {
        struct profile p;
        rc = profile_read(path, &p, why, len);
        if (rc == 0) {
            rc = pl_map_chars_from_profile(&p, c, why, len);
            snprintf(o->fp, sizeof o->fp, "%s", p.fingerprint ? p.fingerprint : "");
            o->cpus = p.machine_cpus;
            profile_free(&p);
        }
    } else {
        rc = pl_map_chars_parse(text, path, c, why, len);
    }
    free(text);
    if (rc == 0 && threads)
        c->threads = (unsigned)threads;
    return rc;
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *app_json(const struct pl_map_chars *c, const char *cpus)
{
    return json_pack("{s:s,s:i,s:o,s:o,s:o,s:{s:s,s:s,s:s},s:s}", "name", c->name, "threads", (int)c->threads,
                     "bus_usage", num(c->bus_usage), "llc_footprint", num(c->llc_footprint), "data_sharing",
                     num(c->data_sharing), "sources", "bus_usage", c->src[0], "llc_footprint", c->src[1],
                     "data_sharing", c->src[2], "cpus", cpus);
}

static const char *word(enum pl_share s) { return s == PL_SHARED ? "shared" : "spread"; }

static bool warn_stderr = true;

/* A warning: into the JSON's "warnings", and for a table on stderr now (one line). */
static void warn(json_t *arr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(json_t *arr, const char *fmt, ...)
{
    char w[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w, sizeof w, fmt, ap);
    va_end(ap);
    if (warn_stderr)
        fprintf(stderr, "ibench " CMD ": warning: %s\n", TTY_TEXT(w));
    json_array_append_new(arr, json_string(w));
}

/* A profile measured on another machine is applied here with a warning: its figures are that machine's.  On this
 * machine (--topology live) the fingerprints are compared (calib_fingerprint: CPU, topology, caches, memory); a
 * synthetic or XML topology has no fingerprint to compare, so its PU count is compared with the profile's CPUs. */
static void check_origin(json_t *arr, const struct pl_map_chars *c, const struct place_origin *o,
                         const struct pl_machine *m, const struct pl_hier *h)
{
    if (!o->fp[0] && !o->cpus)
        return; /* a characteristics file: no machine to compare */
    if (!strcmp(m->kind, "live")) {
        struct cpu_info ci;
        struct mlim ml;
        char fp[96];
        cpuinfo_read(&ci);
        if (mlim_read(&ml, "") < 0 || calib_fingerprint(m->topo, &ci, &ml, fp, sizeof fp) < 0)
            warn(arr, "%s: this machine's fingerprint cannot be read: the profile's (%s) is not checked", c->name,
                 o->fp[0] ? o->fp : "none");
        else if (!o->fp[0])
            warn(arr, "%s: the profile names no machine: it may have been measured on another one", c->name);
        else if (strcmp(o->fp, fp))
            warn(arr, "%s was profiled on machine %s, this one is %s: its figures are that machine's", c->name,
                 o->fp, fp);
    } else if (o->cpus && (unsigned)o->cpus != h->npus) {
        warn(arr, "%s was profiled on a machine of %d CPUs (%s), the topology %s has %u PUs: its figures are that "
             "machine's", c->name, o->cpus, o->fp[0] ? o->fp : "no fingerprint", m->spec, h->npus);
    }
}

struct map_args {
    struct place_opts po;
    const char *target, *corunner;
    struct pl_map_opts mo;
};

static int cmd_place_map(void *opts, int argc, char **argv, int first)
{
    const struct map_args *a = opts;
    const struct place_opts po = a->po;
    const struct pl_map_opts mo = a->mo;
    const char *targ = a->target, *corun = a->corunner;
    if (place_refuse_distances(CMD, &po))
        return IB_EXIT_USAGE;
    if (!targ || !corun)
        return cli_fail(IB_EXIT_USAGE, CMD, "--target and --corunner are both required");
    char why[512] = "";
    struct pl_map_chars t, co;
    struct place_origin ot, oc;
    int e;
    if ((e = place_map_load(targ, &t, &ot, why, sizeof why)) < 0 ||
        (e = place_map_load(corun, &co, &oc, why, sizeof why)) < 0)
        return cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
    struct pl_map_decision d;
    if ((e = pl_map_decide(&t, &co, &mo, &d, why, sizeof why)) < 0)
        return cli_fail(IB_EXIT_USAGE, CMD, "%s", why);
    struct pl_machine m;
    struct pl_hier h;
    int rc = place_open("map", &po, &m, &h);
    if (rc)
        return rc;
    int llc, bus;
    struct pl_map_result r = {0};
    json_t *warnings = json_array();
    warn_stderr = !po.json;
    if ((e = pl_map_levels(&h, &llc, &bus, why, sizeof why)) < 0)
        goto bad;
    check_origin(warnings, &t, &ot, &m, &h);
    check_origin(warnings, &co, &oc, &m, &h);
    struct pl_map_chars *ap[2] = {&t, &co};
    for (int i = 0; i < 2; i++)
        if (!ap[i]->threads) {
            ap[i]->threads = h.npus / 2 ? h.npus / 2 : 1;
            warn(warnings, "%s: no thread count (neither FILE:THREADS nor a \"threads\" in the file; a profile "
                 "carries none): half the machine's PUs assumed, %u", ap[i]->name, ap[i]->threads);
        }
    if ((e = pl_map_place(&h, llc, bus, t.threads, co.threads, &d, &r, why, sizeof why)) < 0)
        goto bad;
    char tl[1024], cl[1024];
    if (!place_pus_cpulist(&h, r.p_pus, r.np, tl, sizeof tl) || !place_pus_cpulist(&h, r.c_pus, r.nc, cl, sizeof cl)) {
        e = ib_why(why, sizeof why, -ENOMEM, "out of memory");
        goto bad;
    }
    if (po.json) {
        json_t *doc = json_object();
        json_object_set_new(doc, "command", json_string(CMD));
        json_object_set_new(doc, "topology", json_string(m.spec));
        json_object_set_new(doc, "levels", llc < 0 ? json_null()
                                                   : json_pack("{s:s,s:i,s:s,s:i}", "llc", h.lv[llc].name,
                                                               "llc_instances", (int)h.lv[llc].ninst, "bus",
                                                               h.lv[bus].name, "bus_instances", (int)h.lv[bus].ninst));
        json_object_set_new(doc, "thresholds", json_pack("{s:f,s:f}", "sharing_high", mo.sharing_high,
                                                          "footprint_high", mo.footprint_high));
        json_object_set_new(doc, "target", app_json(&t, tl));
        json_object_set_new(doc, "corunner", app_json(&co, cl));
        json_object_set_new(doc, "decision", json_pack("{s:s,s:s,s:i,s:s}", "llc", word(d.llc), "bus", word(d.bus),
                                                        "line", d.line, "why", d.why));
        json_object_set_new(doc, "placed", json_pack("{s:s,s:s,s:i,s:i,s:b,s:o}", "llc", word(r.llc), "bus",
                                                      word(r.bus), "llc_instances", (int)r.llc_used, "bus_instances",
                                                      (int)r.bus_used, "adjusted", r.adjusted, "why",
                                                      r.adjusted ? json_string(r.adjust_why) : json_null()));
        json_object_set_new(doc, "notation", r.notation[0] ? json_string(r.notation) : json_null());
        json_object_set_new(doc, "warnings", json_incref(warnings));
        rc = out_json(stdout, doc) == 0 ? IB_EXIT_OK : cli_fail(IB_EXIT_FAIL, CMD, "cannot write JSON");
        json_decref(doc);
    } else {
        if (llc >= 0)
            printf("%s (%u threads) beside %s (%u threads) on %s: LLC = %s (%u), memory path = %s (%u)\n\n", TTY_TEXT(t.name),
                   t.threads, TTY_TEXT(co.name), co.threads, m.spec, h.lv[llc].name, h.lv[llc].ninst, h.lv[bus].name,
                   h.lv[bus].ninst);
        else
            printf("%s (%u threads) beside %s (%u threads) on %s: no shared level\n\n", TTY_TEXT(t.name), t.threads, TTY_TEXT(co.name),
                   co.threads, m.spec);
        printf("%-16s %12s %14s %13s\n", "", "bus usage", "LLC footprint", "data sharing");
        for (int i = 0; i < 2; i++) {
            char ds[32];
            snprintf(ds, sizeof ds, isnan(ap[i]->data_sharing) ? "unknown" : "%.2f", ap[i]->data_sharing);
            printf("%-16.16s %12.1f %14.1f %13s\n", TTY_TEXT(ap[i]->name), ap[i]->bus_usage, ap[i]->llc_footprint, ds);
        }
        for (int i = 0; i < 2; i++)
            if (!strcmp(ap[i]->src[0], ap[i]->src[1]) && !strcmp(ap[i]->src[1], ap[i]->src[2]))
                printf("  %s: all %s\n", TTY_TEXT(ap[i]->name), ap[i]->src[0]);
            else
                printf("  %s: bus usage %s; LLC footprint %s; data sharing %s\n", TTY_TEXT(ap[i]->name), ap[i]->src[0],
                       ap[i]->src[1], ap[i]->src[2]);
        printf("\nAlgorithm 1: %s\n", d.why);
        printf("decision: LLC %s, memory path %s (line %d)\n", word(d.llc), word(d.bus), d.line);
        if (r.adjusted)
            printf("adjusted: %s\n", r.adjust_why);
        if (llc >= 0)
            printf("placed:   LLC %s (%u instance%s), memory path %s (%u)\n", word(r.llc), r.llc_used,
                   r.llc_used == 1 ? "" : "s", word(r.bus), r.bus_used);
        printf("\n");
        printf("%-16.16s cpus %s\n%-16.16s cpus %s\n", TTY_TEXT(t.name), tl, TTY_TEXT(co.name), cl);
        if (r.notation[0])
            printf("notation         %s\n", r.notation);
    }
    json_decref(warnings);
    pl_map_result_free(&r);
    pl_hier_free(&h);
    pl_machine_free(&m);
    return rc;
bad:
    json_decref(warnings);
    pl_map_result_free(&r);
    pl_hier_free(&h);
    pl_machine_free(&m);
    return cli_fail(e == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, CMD, "%s", why);
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

#define MA struct map_args
static const struct cli_opt map_table[] = {
    {CLI_STR("target", "T[:THREADS]", MA, target, "the latency-sensitive target: a profile or a characteristics file")},
    {CLI_STR("corunner", "C[:THREADS]", MA, corunner, "its co-runner, likewise")},
    {CLI_DOUBLE("sharing-high", "F", MA, mo.sharing_high, 0, 1, "data sharing (0-1) at or above F is high"),
     .def = CLI_STR_OF(PL_MAP_SHARING_HIGH)},
    {CLI_DOUBLE("footprint-high", "P", MA, mo.footprint_high, 0, INFINITY,
                "an LLC footprint at or above P % of one LLC is high"),
     .def = CLI_STR_OF(PL_MAP_FOOTPRINT_HIGH)},
    PLACE_OPT_TOPOLOGY(MA, place_help_topology),
    PLACE_OPT_NO_DISTANCES(MA),
    PLACE_OPT_CONCERNS(MA, place_help_concerns),
    PLACE_OPT_JSON(MA),
};
#undef MA

const struct cli_cmd cli_cmd_place_map = {
    .name = "place map",
    CLI_RUN(cmd_place_map, struct map_args),
    .summary = "Tang et al. ISCA'11's heuristic: share or spread a target's threads over LLC and memory path",
    .usage = "usage: ibench place map --target T[:THREADS] --corunner C[:THREADS] [--topology SPEC] [--concerns LIST]\n"
             "                        [--sharing-high F] [--footprint-high P] [--json]\n\n",
    .about = "Tang et al. ISCA'11's characteristics heuristic (Algorithm 1): whether the latency-sensitive target T should share\n"
             "the last-level cache and the memory path among its own threads or spread over them, beside co-runner C;\n"
             "then both applications' CPU sets on the machine and Tang et al. ISCA'11's notation ({XXXX****}: X the target,\n"
             "* the co-runner, . idle).  T and C are ibench profiles (bus usage = caused mem-bw, LLC footprint =\n"
             "caused llc-cap) or characteristics files (docs/placement.md, \"The characteristics heuristic\").\n"
             "THREADS: the file's \"threads\", else half the machine's PUs (with a warning).  A profile measured on\n"
             "another machine is used with a warning naming both.  --distances is refused (no use here).\n\n",
    CLI_OPTS(map_table),
};
