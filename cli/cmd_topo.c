/* cmd_topo.c - `ibench topo`: the machine, claimed vs measured, with sources; and what it shares with `ibench
 * calibrate` (cmd_calibrate.c): opening the machine, and showing it after measuring. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib.h"
#include "cli.h"
#include "config.h"
#include "counters.h"
#include "ib_err.h"
#include "machine.h"
#include "parse.h"
#include "soi.h"

void cli_calib_progress(void *arg, const char *what, double frac)
{
    out_progress((const char *)arg, "%s %3.0f %%", what, frac * 100.0);
}

static json_t *cache_rows(const struct machine *m)
{
    json_t *rows = json_array();
    const struct calib *c = &m->calib;
    for (int l = 0; l < CALIB_NLEVELS; l++) {
        if (!c->claimed[l] && !c->measured[l])
            continue;
        double agree = c->claimed[l] && c->measured[l] ? 100.0 * (double)c->measured[l] / (double)c->claimed[l] : 0;
        const char *verdict = !c->measured[l]  ? "no knee found: using the claim"
                              : agree > 125 ? "knee above the claim: the claim is used"
                              : agree < 75  ? "DISAGREES: the measured size is used"
                                            : "agrees";
        int hwlevel = l == CALIB_L1 ? 1 : l == CALIB_L2 ? 2 : topo_llc_level(m->topo);
        struct topo_cache tc = {0};
        int *sh = NULL;
        unsigned nsh = 0;
        char shared[128] = "";
        topo_cache_info(m->topo, hwlevel, false, c->sweep_cpu, &tc);
        topo_sharing(m->topo, l == CALIB_L1 ? TOPO_SCOPE_CORE : l == CALIB_L2 ? TOPO_SCOPE_L2 : TOPO_SCOPE_LLC,
                     c->sweep_cpu, &sh, &nsh);
        for (unsigned k = 0; k < nsh; k++) {
            size_t used = strlen(shared);
            snprintf(shared + used, sizeof(shared) - used, "%s%d", k ? "," : "", sh[k]);
        }
        free(sh);
        char range[80] = "";
        if (c->knee_lo[l] && c->knee_hi[l] > c->knee_lo[l]) {
            char a[32], b[32];
            snprintf(range, sizeof(range), "%s-%s", fmt_bytes((double)c->knee_lo[l], a, sizeof(a)),
                     fmt_bytes((double)c->knee_hi[l], b, sizeof(b)));
        }
        json_t *row = json_pack("{s:s,s:I,s:I,s:I,s:f,s:i,s:i,s:s,s:f,s:s,s:s}", "level",
                                              calib_level_name(l), "claimed", (json_int_t)c->claimed[l], "measured",
                                              (json_int_t)c->measured[l], "effective",
                                              (json_int_t)calib_effective(c, (enum calib_level)l), "measured_pct",
                                              agree, "ways", (int)tc.ways, "line", (int)tc.line, "shared_by", shared,
                                              "latency_ns", c->plateau_ns[l], "source",
                                              "hwloc / latency knee (pointer chase)", "verdict", verdict);
        /* the knee is the median over the sweeps kept: their range and spread say how far to trust it */
        json_object_set_new(row, "knee_min", json_integer((json_int_t)c->knee_lo[l]));
        json_object_set_new(row, "knee_max", json_integer((json_int_t)c->knee_hi[l]));
        json_object_set_new(row, "knee_range", json_string(range));
        json_object_set_new(row, "spread_pct", json_real(100 * c->spread[l]));
        json_array_append_new(rows, row);
    }
    return rows;
}

static json_t *bw_rows(const struct calib *c, enum calib_kind_class cls)
{
    json_t *rows = json_array();
    for (unsigned i = 0; i < c->nbw; i++)
        if (calib_kind_class(c->bw[i].kind) == cls)
            json_array_append_new(rows, json_pack("{s:s,s:s,s:I,s:f,s:f,s:s}", "kind", c->bw[i].kind, "cpus",
                                                  c->bw[i].cpus, "ws_bytes", (json_int_t)c->bw[i].ws_bytes, "bps",
                                                  c->bw[i].bps, "spread_pct", c->bw[i].spread * 100, "unit",
                                                  calib_kind_unit(c->bw[i].kind)));
    return rows;
}

static json_t *machine_doc(struct machine *m)
{
    char hw[160] = "";
    bool pmu = pmu_hw_available(hw, sizeof(hw));
    struct topo_cache l1i = {0};
    topo_cache_info(m->topo, 1, true, -1, &l1i);
    json_t *doc = json_object();
    json_object_set_new(doc, "ibench", json_string(IBENCH_VERSION));
    json_object_set_new(doc, "fingerprint", json_string(m->fp));
    json_object_set_new(doc, "cpu", json_pack("{s:s,s:s,s:i,s:i,s:i,s:b,s:b,s:b}", "vendor", m->cpu.vendor, "model",
                                              m->cpu.model, "family", m->cpu.family, "model_id", m->cpu.model_id,
                                              "stepping", m->cpu.stepping, "avx2", m->cpu.avx2, "avx512f",
                                              m->cpu.avx512f, "hypervisor", m->cpu.hypervisor));
    json_object_set_new(doc, "topology",
                        json_pack("{s:i,s:i,s:i,s:i,s:b,s:i}", "packages", topo_npackages(m->topo), "numa_nodes",
                                  topo_nnuma(m->topo), "cores", topo_ncores(m->topo), "pus", topo_npus(m->topo), "smt",
                                  topo_has_smt(m->topo), "llc_level", topo_llc_level(m->topo)));
    json_object_set_new(doc, "caches", cache_rows(m));
    json_t *sws = json_array();
    unsigned kept = 0;
    for (unsigned i = 0; i < m->calib.nsweeps; i++) {
        const struct calib_sweep_sum *w = &m->calib.sweeps[i];
        kept += !w->reject[0];
        json_array_append_new(sws, json_pack("{s:I,s:I,s:I,s:f,s:o,s:s}", "l1d", (json_int_t)w->knee[CALIB_L1], "l2",
                                             (json_int_t)w->knee[CALIB_L2], "llc", (json_int_t)w->knee[CALIB_LLC],
                                             "llc_ns", w->plateau_ns[CALIB_LLC], "wait_pct",
                                             isfinite(w->wait_pct) ? json_real(w->wait_pct) : json_null(), "rejected",
                                             w->reject));
    }
    json_object_set_new(doc, "sweeps", json_pack("{s:i,s:i,s:o,s:s}", "taken", (int)m->calib.nsweeps, "kept",
                                                 (int)kept, "each", sws, "note", m->calib.caches_note));
    json_object_set_new(doc, "l1i_bytes", json_integer((json_int_t)l1i.size));
    json_object_set_new(doc, "tlb", json_pack("{s:i,s:i,s:s}", "l1d_entries", m->cpu.tlb.l1d_entries, "l2_entries",
                                              m->cpu.tlb.l2_entries, "source", m->cpu.tlb.source));
    json_object_set_new(doc, "memory",
                        json_pack("{s:I,s:I,s:i,s:o,s:I,s:I}", "total", (json_int_t)m->mlim.mem_total, "available",
                                  (json_int_t)m->mlim.mem_available, "cgroup_version", m->mlim.cg_version,
                                  "cgroup_limit",
                                  m->mlim.cg_limit == MLIM_UNLIMITED ? json_null()
                                                                     : json_integer((json_int_t)m->mlim.cg_limit),
                                  "margin", (json_int_t)mlim_margin(&m->mlim), "spare",
                                  (json_int_t)mlim_spare(&m->mlim)));
    json_object_set_new(doc, "dram_latency_ns", m->calib.plateau_ns[CALIB_NLEVELS] > 0
                                                    ? json_real(m->calib.plateau_ns[CALIB_NLEVELS])
                                                    : json_null());
    json_object_set_new(doc, "bandwidth", bw_rows(&m->calib, CALIB_CLASS_MEMORY));
    json_object_set_new(doc, "peak_rates", bw_rows(&m->calib, CALIB_CLASS_OPS));
    json_object_set_new(doc, "io_paths", bw_rows(&m->calib, CALIB_CLASS_IO));
    json_object_set_new(doc, "counters", json_pack("{s:b,s:s}", "hardware", pmu, "why", pmu ? "" : hw));
    json_object_set_new(doc, "calibration_file", json_string(m->calib.path));
    return doc;
}

static void print_machine(json_t *doc, const struct machine *m)
{
    char a[32], b[32];
    json_t *t = json_object_get(doc, "topology");
    printf("machine   %s (%s)%s\n", m->cpu.model, m->fp, m->cpu.hypervisor ? ", virtual machine" : "");
    printf("topology  %lld package(s), %lld NUMA node(s), %lld cores, %lld PUs, SMT %s\n",
           json_integer_value(json_object_get(t, "packages")), json_integer_value(json_object_get(t, "numa_nodes")),
           json_integer_value(json_object_get(t, "cores")), json_integer_value(json_object_get(t, "pus")),
           topo_has_smt(m->topo) ? "yes" : "no");
    printf("memory    %s total, %s available\n", fmt_bytes((double)m->mlim.mem_total, a, sizeof(a)),
           fmt_bytes((double)m->mlim.mem_available, b, sizeof(b)));
    printf("          cgroup v%d limit %s; SoIs keep a safety margin of %s", m->mlim.cg_version,
           m->mlim.cg_limit == MLIM_UNLIMITED ? "none" : fmt_bytes((double)m->mlim.cg_limit, a, sizeof(a)),
           fmt_bytes((double)mlim_margin(&m->mlim), b, sizeof(b)));
    printf(" and may use %s\n", fmt_bytes((double)mlim_spare(&m->mlim), a, sizeof(a)));
    printf("TLB       L1 dTLB %u + L2 TLB %u entries (%s)\n", m->cpu.tlb.l1d_entries, m->cpu.tlb.l2_entries,
           m->cpu.tlb.source);
    const char *why = json_string_value(json_object_get(json_object_get(doc, "counters"), "why"));
    printf("counters  %s%s\n", json_is_true(json_object_get(json_object_get(doc, "counters"), "hardware"))
                                   ? "hardware PMU available"
                                   : "no hardware counters: ",
           why ? why : "");
    if (!m->calib.have_caches) {
        struct topo_cache tc;
        printf("\ncaches (claimed by hwloc; not measured yet: run ibench topo without --no-measure, or ibench "
               "calibrate):\n");
        for (int lvl = 1; lvl <= topo_llc_level(m->topo); lvl++)
            if (topo_cache_info(m->topo, lvl, false, -1, &tc) == 0)
                printf("  L%d %s, %u-way, %u-byte lines, shared by %u PU(s)\n", lvl,
                       fmt_bytes((double)tc.size, a, sizeof(a)), tc.ways, tc.line, tc.nshared);
        printf("\ncalibration cache: %s (empty)\n", m->calib.path);
        return;
    }
    printf("\ncaches: claimed by hwloc vs measured (median knee of pointer-chase latency sweeps on CPU %d)\n",
           m->calib.sweep_cpu);
    static const struct out_col cc[] = {
        {"level", "level", OUT_K_STR, 0, NULL},       {"claimed", "claimed", OUT_K_BYTES, 0, NULL},
        {"ways", "ways", OUT_K_INT, 0, NULL},          {"line", "line", OUT_K_INT, 0, NULL},
        {"shared_by", "CPUs", OUT_K_STR, 0, NULL},    {"measured", "measured", OUT_K_BYTES, 0, NULL},
        {"measured_pct", "meas/claim %", OUT_K_NUM, 0, NULL}, {"effective", "used", OUT_K_BYTES, 0, NULL},
        {"knee_range", "knees", OUT_K_STR, 0, NULL},  {"spread_pct", "spread %", OUT_K_NUM, 0, NULL},
        {"latency_ns", "latency ns", OUT_K_NUM, 1, NULL}, {"verdict", "verdict", OUT_K_STR, 0, NULL},
    };
    out_rows(stdout, OUT_TABLE, json_object_get(doc, "caches"), cc, IB_ARRAY_SIZE(cc));
    const struct calib *cb = &m->calib;
    unsigned kept = 0, shown = 0;
    for (unsigned i = 0; i < cb->nsweeps; i++)
        kept += !cb->sweeps[i].reject[0];
    if (cb->nsweeps) {
        printf("measured as the median knee of %u sweeps kept of %u", kept, cb->nsweeps);
        for (unsigned i = 0; i < cb->nsweeps; i++)
            if (cb->sweeps[i].reject[0])
                printf("%s sweep %u: %s", shown++ ? ";" : " (rejected:", i + 1, cb->sweeps[i].reject);
        printf("%s\n", shown ? ")" : "");
    }
    if (*cb->caches_note)
        printf("note: %s\n", cb->caches_note);
    printf("DRAM latency %.1f ns\n", m->calib.plateau_ns[CALIB_NLEVELS]);
    json_t *bw = json_object_get(doc, "bandwidth");
    if (json_array_size(bw)) {
        printf("\nstreaming bandwidth, measured (l2/llc: vector reads; dram: STREAM triad, counted as STREAM does):\n");
        static const struct out_col bc[] = {
            {"kind", "level", OUT_K_STR, 0, NULL},          {"cpus", "CPUs", OUT_K_STR, 0, NULL},
            {"ws_bytes", "working set/thread", OUT_K_BYTES, 0, NULL}, {"bps", "bandwidth", OUT_K_RATE, 0, "B/s"},
            {"spread_pct", "spread %", OUT_K_NUM, 1, NULL},
        };
        out_rows(stdout, OUT_TABLE, bw, bc, IB_ARRAY_SIZE(bc));
        /* Checked by measurement: private L2s should add up across CPUs. When they do not, the CPUs most likely
         * share a physical core (a hypervisor placing vCPUs on SMT siblings), whatever the topology says. */
        const struct calib_bw *one = NULL, *many = NULL;
        for (unsigned i = 0; i < m->calib.nbw; i++) {
            const struct calib_bw *e = &m->calib.bw[i];
            if (strcmp(e->kind, "l2"))
                continue;
            if (!strchr(e->cpus, ',') && !strchr(e->cpus, '-'))
                one = e;
            else
                many = e;
        }
        char r1[32], r2[32];
        if (one && many && many->bps < 1.3 * one->bps)
            printf("note: L2 bandwidth does not add up across CPUs %s (%s together, %s on one):\n"
                   "      they likely share physical cores (hypervisor SMT), although the topology shows %s.\n",
                   many->cpus, fmt_scaled(many->bps, 0, 1, "B/s", r2, sizeof(r2)),
                   fmt_scaled(one->bps, 0, 1, "B/s", r1, sizeof(r1)), topo_has_smt(m->topo) ? "SMT" : "no SMT");
    }
    json_t *pk = json_object_get(doc, "peak_rates");
    if (json_array_size(pk)) {
        printf("\npeak rates of the core SoIs (instructions/s) and interconnect (messages/s), measured:\n");
        static const struct out_col pc[] = {
            {"kind", "kind", OUT_K_STR, 0, NULL},
            {"cpus", "CPUs", OUT_K_STR, 0, NULL},
            {"bps", "rate", OUT_K_NUM, 4, NULL},
            {"unit", "unit", OUT_K_STR, 0, NULL},
            {"spread_pct", "spread %", OUT_K_NUM, 1, NULL},
        };
        out_rows(stdout, OUT_TABLE, pk, pc, IB_ARRAY_SIZE(pc));
    }
    json_t *io = json_object_get(doc, "io_paths");
    if (json_array_size(io)) {
        printf("\nI/O paths, measured (disk-bw: d<read|write|mix><device>/<block KiB>/<QD>; net-bw: n<sink>/<request "
               "KiB>):\n");
        static const struct out_col ic[] = {
            {"kind", "path", OUT_K_STR, 0, NULL},
            {"cpus", "CPUs", OUT_K_STR, 0, NULL},
            {"bps", "bandwidth", OUT_K_RATE, 0, "B/s"},
            {"spread_pct", "spread %", OUT_K_NUM, 1, NULL},
        };
        out_rows(stdout, OUT_TABLE, io, ic, IB_ARRAY_SIZE(ic));
    }
    printf("\ncalibration cache: %s\n", m->calib.path);
}

int cli_machine_cmd(const char *cmd, struct machine_opts *o, cli_machine_measure measure)
{
    if (o->json && o->csv)
        return cli_fail(IB_EXIT_USAGE, cmd, "--json and --csv exclude each other");
    struct machine m;
    char why[512] = "";
    int rc = machine_open(&m, o->topology, why, sizeof(why));
    if (rc < 0)
        return cli_fail(o->topology ? IB_EXIT_USAGE : IB_EXIT_FAIL, cmd, "%s", why);
    cli_calib_note(cmd, &m);
    int code = IB_EXIT_OK;
    for (unsigned i = 0; i < o->ncpus; i++)
        if (!topo_cpu_exists(m.topo, o->cpus[i])) {
            code = cli_fail(IB_EXIT_USAGE, cmd, "CPU %d does not exist", o->cpus[i]);
            goto out;
        }
    cli_signals_install();
    if ((rc = measure(cmd, &m, o, why, sizeof(why))) < 0) {
        code = cli_fail(cli_exit_for(rc, o->bad_input), cmd, "%s", why);
        goto out;
    }
    out_progress_done();
    if ((rc = machine_save_calib(&m, why, sizeof(why))) < 0)
        fprintf(stderr, "ibench %s: warning: %s\n", cmd, why);
    json_t *doc = machine_doc(&m);
    if (o->json) {
        out_json(stdout, doc);
    } else if (o->csv) { /* the caches table, one row per level: the part that is a table */
        static const struct out_col cc[] = {
            {"level", "", OUT_K_STR, 0, NULL},       {"claimed", "", OUT_K_INT, 0, NULL},
            {"ways", "", OUT_K_INT, 0, NULL},        {"line", "", OUT_K_INT, 0, NULL},
            {"shared_by", "", OUT_K_STR, 0, NULL},   {"measured", "", OUT_K_INT, 0, NULL},
            {"effective", "", OUT_K_INT, 0, NULL},   {"latency_ns", "", OUT_K_NUM, 3, NULL},
            {"verdict", "", OUT_K_STR, 0, NULL},
        };
        out_rows(stdout, OUT_CSV, json_object_get(doc, "caches"), cc, IB_ARRAY_SIZE(cc));
    } else {
        print_machine(doc, &m);
    }
    json_decref(doc);
out:
    out_progress_done();
    cli_signals_restore();
    machine_close(&m);
    return code;
}

/* topo measures the caches when none are cached, unless --no-measure or the topology is not this machine's */
static int topo_measure(const char *cmd, struct machine *m, struct machine_opts *o, char *why, size_t len)
{
    if (o->no_measure || m->calib.have_caches || !topo_is_this_machine(m->topo))
        return 0;
    int last = topo_pu_os(m->topo, topo_npus(m->topo) - 1);
    return calib_measure_caches(&m->calib, m->topo, last, &cli_stop, cli_calib_progress, (void *)cmd, why, len);
}

static int cmd_topo(void *opts, int argc, char **argv, int first)
{
    struct machine_opts *o = opts;
    if (o->ncpus || o->dir)
        return cli_fail(IB_EXIT_USAGE, "topo", "%s goes with ibench calibrate", o->ncpus ? "--cpus" : "--dir");
    return cli_machine_cmd("topo", o, topo_measure);
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt topo_table[] = {MACHINE_OPTS_TABLE(0, CLI_OPT_HIDDEN)};

const struct cli_cmd cli_cmd_topo = {
    .name = "topo",
    CLI_RUN(cmd_topo, struct machine_opts),
    .summary = "the machine: topology, caches claimed vs measured, TLB, memory limits, counters",
    .usage = "usage: ibench topo [--json | --csv] [--no-measure]\n\n",
    .about = "Shows the machine: packages, NUMA nodes, cores, PUs, SMT; caches claimed by hwloc next to\n"
             "the sizes measured by a latency sweep (measured now if not cached, unless --no-measure);\n"
             "TLB geometry from cpuid; memory, cgroup limit and the margin SoIs leave; hardware counters;\n"
             "and any cached bandwidth measurements. --csv prints the caches table only.\n\n",
    CLI_OPTS(topo_table),
};
