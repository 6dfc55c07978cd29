// test_profile_fmt.cpp - the profile format's one reader and writer (harness/profile_fmt.h): every malformed file in
// tests/fixtures/profile-bad is refused with one line naming the field, by the library and by `ibench show`/`plot`
// (exit 2, nothing on stdout); the recorded 1.1 profile and a 1.0 one read with absent fields marked absent; a 1.2
// struct with every field set writes, validates against the JSON Schema and reads back equal; show prints a caused
// figure clamped and marked, never a raw negative, "(null)" or "nan".
#include <gtest/gtest.h>
#include <jansson.h>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "profile_fmt.h"
#include "test_support.h"

using namespace ib_test;

namespace {

const std::string kBad = std::string(IBENCH_FIXTURES) + "/profile-bad/";
const std::string kMemcached = std::string(IBENCH_FIXTURES) + "/profile-memcached.json";

// Each malformed fixture and what its one line must name (the JSON path, or the kind of breakage).
struct BadCase {
    const char *file, *says;
};
const BadCase kBadCases[] = {
    {"achieved-pct-huge", ": sois[0].curve[0].achieved_pct: a number in [0, 1000] expected, got 5000"},
    {"baseline-median-negative", ": baseline.before.median: a number > 0 expected"},
    {"bracket-one-number", ": sois[0].tolerated_bracket: an array of 2 numbers"},
    {"bracket-reversed", ": sois[0].tolerated_bracket: [low, high] with low <= high expected, got [62.5, 56.25]"},
    {"caches-bytes-string", ": machine.caches_measured_bytes.l2: an integer >= 1 expected, got \"1 MiB\""},
    {"caused-over-100-v1.1", ": sois[0].caused: a number in [0, 100] or null expected, got 120"},
    {"confidence-missing", ": sois[0].confidence: missing"},
    {"depth-floor", ": sois[0].depth.floor: a number in (0, 1] expected, got 2"},
    {"bursts-on-relative", ": sois[0].bursts[1].on_relative: a number in [0, 1] expected, got 1.5"},
    {"usage-duty", ": usage.resources[0].duty: a number in [0, 1] expected, got 1.5"},
    {"cpus-negative", ": sois[0].cpus[0]: a CPU number (an integer >= 0) expected, got -1"},
    {"created-not-utc", ": created: a UTC time"},
    {"curve-empty", ": sois[0].curve: an array of points (at least 1)"},
    {"curve-point-not-object", ": sois[0].curve[1]: a curve point (an object) expected, got 5"},
    {"duplicate-key", ": not valid JSON (line 33"},
    {"empty", ": an empty file, not a profile"},
    {"machine-missing", ": machine: missing (an object expected)"},
    {"measured-without-curve", ": sois[0].curve: missing"},
    {"meets-qos-string", ": sois[0].curve[0].meets_qos: true or false expected, got \"yes\""},
    {"metric-kind-unknown", ": metric.kind: \"runtime\""},
    {"not-a-profile", ": format: not an ibench profile"},
    {"not-json", ": not valid JSON (line 1"},
    {"qos-zero", ": qos: a number in (0, 1] expected, got 0"},
    {"reach-checked-without-probe", ": sois[1].reach.probe: missing"},
    {"reach-verdict-unknown", ": sois[1].reach.verdict: \"reaches\", \"does not reach\", \"undecided\" or \"unchecked\""},
    {"samples-per-point-fraction", ": method.samples_per_point: an integer >= 1 expected, got 3.5"},
    {"skipped-empty-reason", ": sois[2].reason: a non-empty string expected, got \"\""},
    {"skipped-without-reason", ": sois[2].reason: missing"},
    {"soi-listed-twice", ": sois[1].soi: SoI \"mem-cap\" listed twice (first at sois[0])"},
    {"soi-unknown", ": sois[2].soi: an SoI this ibench knows expected (ibench list), got \"l3-cap\""},
    {"soi-unknown-with-escape", ": sois[0].soi: an SoI this ibench knows expected (ibench list), got \"mem-cap?]0;pwned?\""},
    {"sois-not-array", ": sois: an array of SoI entries expected, got an object"},
    {"status-unknown", ": sois[0].status: \"measured\" or \"skipped\" expected, got \"done\""},
    {"target-command-number", ": target.command: a string or null expected, got 42"},
    {"target-cpus-empty", ": target.cpus: an array of CPU numbers (1 to 256) expected, got an array of 0"},
    {"tolerated-over-100", ": sois[0].tolerated: a number in [0, 100] expected, got 150"},
    {"tolerated-string", ": sois[0].tolerated: a number in [0, 100] expected, got \"high\""},
    {"top-level-array", ": not an ibench profile (an object expected, got an array of 2)"},
    {"truncated", ": not valid JSON"},
    {"v1.2-basis-unknown", ": sois[0].caused_detail.basis: \"cpu-second\", \"wall-second\", \"reference\" or \"counted\" expected"},
    {"v1.2-caused-null-without-reason", ": sois[0].caused_detail.reason: missing"},
    {"v1.2-caused-string", ": sois[0].caused: a number or null expected, got \"3\""},
    {"v1.2-curve-samples-zero", ": sois[0].curve[0].samples: an integer >= 1 expected, got 0"},
    {"v1.2-distinguishable-number", ": sois[0].caused_detail.distinguishable: true or false expected, got 0"},
    {"v1.2-min-rounds-zero", ": method.caused_min_rounds: an integer >= 1 expected, got 0"},
    {"v1.2-occupancy-without-pct", ": sois[0].caused_detail.occupancy.pct: missing"},
    {"v1.2-rounds-not-numbers", ": sois[0].caused_detail.rounds[1]: a number expected, got \"x\""},
    {"v1.4-complete-missing", ": complete: missing (true or false expected)"},
    {"v1.4-incomplete-soi-in-complete-profile", ": sois[1].status: \"measured\" or \"skipped\" in a profile marked complete"},
    {"v1.4-incomplete-without-missing", ": missing: missing (an array of items"},
    {"v1.4-phase-share-over-100", ": phases[0].io_some_pct: a number in [0, 100] or null expected, got 120"},
    {"v1.4-timed-out-meets-qos", ": sois[0].curve[0]: meets_qos false on a timed-out point"},
    {"version-2.0", ": version: profile version 2.0; this ibench reads version 1.x only"},
    {"version-not-digits", ": version: \"MAJOR.MINOR\" (digits) expected, got \"1.x\""},
};

std::string path_of(const BadCase &c)
{
    return kBad + c.file + ".json";
}

bool same(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

std::string slurp(const std::string &f)
{
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void run(Proc &p, const std::vector<std::string> &args)
{
    ASSERT_TRUE(p.start(args, {"IBENCH_PROGRESS=0"}));
    ASSERT_TRUE(p.finish(30)) << "ibench did not finish; stderr: " << p.err;
}

// A 1.2 profile with every field set: a measured SoI with reach, a full caused (negative and not distinguishable)
// and a point without a self-meter reading; a skipped SoI.
void fill_full(struct profile *p)
{
    profile_init(p);
    p->tool = strdup("ibench 0.2.0");
    p->created = strdup("2026-11-23T10:00:00Z");
    p->data_sharing = 0.375; // 1.3
    p->data_sharing_source = strdup("place cluster --source soft: 3/8 of the counted samples on shared lines");
    p->fingerprint = strdup("test-fp-1234");
    p->cpu_model = strdup("Test CPU @ 2.0GHz");
    p->machine_cpus = 4;
    p->caches[0] = {strdup("l1d"), 32768};
    p->caches[1] = {strdup("llc"), 8388608};
    p->ncaches = 2;
    p->name = strdup("svc");
    p->command = strdup("svc --port 1");
    p->load = strdup("loadgen --rate 10");
    p->pid = 4321;
    p->tcpus[0] = 0;
    p->tcpus[1] = 2;
    p->ntcpus = 2;
    p->metric_kind = strdup("throughput");
    p->metric_spec = strdup("throughput:([0-9]+) ops/s");
    p->metric_unit = strdup("ops/s");
    p->metric_adapter = strdup("regex");
    p->metric_regex = strdup("([0-9]+) ops/s");
    p->higher_is_better = 1;
    p->qos = 0.95;
    p->samples_per_point = 3;
    p->baseline_samples = 5;
    p->caused_intensity = 100;
    p->search = strdup("25/50/75/100 %, then 2 bisection steps");
    p->relative_to = strdup("solo samples taken right before each point");
    p->caused_min_rounds = 3;
    p->caused_budget_s = 20.5;
    p->caused_counted = 1; // 1.8
    p->timeout_s = 60; // 1.4
    // 1.4: the pressure of two phases, one source absent (NAN: written null, read back NAN)
    struct profile_phase ph = {nullptr, nullptr, 12.5, 3.5, 1.25, 0.5, 0, 0, NAN};
    profile_add_phase(p, "baseline before", nullptr, &ph);
    ph = {nullptr, nullptr, 30.25, 2.5, 93.5, 40, 0, 0, 0.5};
    profile_add_phase(p, "tolerated", "mem-bw", &ph);
    p->before_median = 100.5;
    p->before = (double *)malloc(3 * sizeof(double));
    p->before[0] = 99.5, p->before[1] = 100.5, p->before[2] = 101.25;
    p->nbefore = 3;
    p->after_median = 0.1 + 0.2; // not exactly representable: the round trip must keep every bit
    p->after = (double *)malloc(sizeof(double));
    p->after[0] = 0.1 + 0.2;
    p->nafter = 1;
    p->drift_pct = -1.25;
    p->noise_pct = 2.5;
    p->confidence = strdup("high");
    p->sois = (struct profile_soi *)calloc(2, sizeof(struct profile_soi));
    p->nsois = 2;
    struct profile_soi *s = &p->sois[0];
    profile_soi_init(s);
    s->soi = strdup("mem-bw");
    s->resource = strdup("memory bandwidth");
    s->status = PROFILE_MEASURED;
    s->cpus[0] = 1;
    s->cpus[1] = 3;
    s->ncpus = 2;
    s->capacity = 1.25e10;
    s->capacity_unit = strdup("B/s");
    s->capacity_source = strdup("cached stream");
    s->have_reach = 1;
    s->reach.verdict = strdup("reaches");
    s->reach.probe = strdup("stream-dram");
    s->reach.unit = strdup("ns/KiB");
    s->reach.reason = strdup("a note");
    s->reach.cpu = 0;
    s->reach.bar_pct = 2.5;
    s->reach.effect_pct = 10.125;
    s->reach.se_pct = 1.2;
    s->reach.soi_achieved_pct = 99.75;
    s->tolerated = 56.25;
    s->bracket[0] = 56.25;
    s->bracket[1] = 62.5;
    s->curve = (struct profile_point *)calloc(3, sizeof(struct profile_point));
    s->ncurve = 3;
    s->curve[0] = {25, 950, 1000, 0.95, 25.5, 1, 0, 3, 0, 0.0125, 2, 0};
    s->curve[1] = {50, 800, 1000, 0.8, 50.25, 0, 1, 9, 0, 0.02, 9, 1}; // confirmed over 3 rounds, still uncertain
    s->curve[2] = {50, 700, 1000, 0.7, NAN, 0, 1, 0, 0, NAN, 0, 0}; // no step completed: no self-meter; samples not recorded
    s->have_caused = 1;
    struct profile_caused *c = &s->caused;
    c->intensity = 100;
    c->unit = strdup("B/s");
    c->basis = strdup("cpu-second");
    c->value = -3.25;
    c->se = 1.75;
    c->distinguishable = 0;
    c->alone = 1e9;
    c->beside = 1.0325e9;
    c->cpu_lost_pct = 2.5;
    c->cpu_lost_se = 0.5;
    c->unthrottled = 1;
    c->rounds = (double *)malloc(3 * sizeof(double));
    c->rounds[0] = -3.25, c->rounds[1] = -1, c->rounds[2] = -4.5;
    c->nrounds = 3;
    c->occupancy_what = strdup("resident memory");
    c->occupancy_pct = 12.5;
    c->reason = strdup("a note on caused");
    c->ref_probe = strdup("disk-rand"); // 1.5: a reference's calibration
    c->ref_unit = strdup("read/s");
    c->nref = 3;
    c->ref_levels[0] = 0, c->ref_levels[1] = 50, c->ref_levels[2] = 100;
    c->ref_rel[0] = 1, c->ref_rel[1] = 0.625, c->ref_rel[2] = 0.125;
    c->counted_res = strdup("write"); // 1.8: what a counted caused was read from
    c->counted_unit = strdup("B/s");
    c->counted_mean = 2048.5, c->counted_floor = 1048576, c->counted_windows = 30;
    s->have_confidence = 1;
    s->confidence = {6.25, 2.5, strdup("high")};
    s->have_depth = 1; // 1.6
    s->depth = {0.5, 0.0125, 0.004, 60.164, 3, 7.5};
    s->nbursts = 2; // 1.7: one a value, one a bound without a standard error
    s->bursts[0] = {0.25, 0.25, 100, 0.995, 0.0125, 0.99, 6, 2.25, 0};
    s->bursts[1] = {4, 4, 100, 0.51, NAN, 0.02, 96, 24.75, 1};
    p->nburst_on = 3;
    p->burst_on_s[0] = 0.25, p->burst_on_s[1] = 1, p->burst_on_s[2] = 4;
    p->have_usage = 1; // 1.6
    p->usage.window_s = 0.1;
    p->usage.seconds = 0.3;
    p->usage.source = strdup("the work's processes");
    p->usage.nres = 1;
    struct profile_usage_res *u = &p->usage.res[0];
    profile_usage_res_init(u);
    u->name = strdup("write");
    u->unit = strdup("B/s");
    u->soi = strdup("disk-write");
    u->floor = 1048576;
    u->mean = 2.5e7, u->p50 = 0, u->p90 = 6e7, u->max = 7.5e7, u->duty = 1.0 / 3, u->level = 7.5e7;
    u->bursts = 1, u->burst_mean_s = 0.1, u->burst_max_s = 0.1; // gap_mean_s: absent with one burst
    u->cap_mean_pct = 1.25, u->cap_level_pct = 3.75;
    u->nwindows = 3;
    u->windows = (double *)malloc(3 * sizeof(double));
    u->windows[0] = 0, u->windows[1] = 7.5e7, u->windows[2] = NAN;
    s = &p->sois[1];
    profile_soi_init(s);
    s->soi = strdup("l2-cap");
    s->resource = strdup("L2 capacity");
    s->status = PROFILE_SKIPPED;
    s->reason = strdup("no other CPU shares the l2 with the target's CPU 0");
}

void expect_equal(const struct profile &a, const struct profile &b)
{
    EXPECT_EQ(a.major, b.major);
    EXPECT_EQ(a.minor, b.minor);
    EXPECT_STREQ(a.tool, b.tool);
    EXPECT_TRUE(a.data_sharing == b.data_sharing || (std::isnan(a.data_sharing) && std::isnan(b.data_sharing)));
    EXPECT_STREQ(a.data_sharing_source, b.data_sharing_source);
    EXPECT_STREQ(a.created, b.created);
    EXPECT_STREQ(a.fingerprint, b.fingerprint);
    EXPECT_STREQ(a.cpu_model, b.cpu_model);
    EXPECT_EQ(a.machine_cpus, b.machine_cpus);
    ASSERT_EQ(a.ncaches, b.ncaches);
    for (unsigned i = 0; i < a.ncaches; i++) {
        EXPECT_STREQ(a.caches[i].name, b.caches[i].name);
        EXPECT_EQ(a.caches[i].bytes, b.caches[i].bytes);
    }
    EXPECT_STREQ(a.name, b.name);
    EXPECT_STREQ(a.command, b.command);
    EXPECT_STREQ(a.load, b.load);
    EXPECT_EQ(a.pid, b.pid);
    ASSERT_EQ(a.ntcpus, b.ntcpus);
    for (unsigned i = 0; i < a.ntcpus; i++)
        EXPECT_EQ(a.tcpus[i], b.tcpus[i]);
    EXPECT_STREQ(a.metric_kind, b.metric_kind);
    EXPECT_STREQ(a.metric_spec, b.metric_spec);
    EXPECT_STREQ(a.metric_unit, b.metric_unit);
    EXPECT_STREQ(a.metric_adapter, b.metric_adapter);
    EXPECT_STREQ(a.metric_regex, b.metric_regex);
    EXPECT_EQ(a.higher_is_better, b.higher_is_better);
    EXPECT_EQ(a.qos, b.qos);
    EXPECT_EQ(a.samples_per_point, b.samples_per_point);
    EXPECT_EQ(a.baseline_samples, b.baseline_samples);
    EXPECT_EQ(a.caused_intensity, b.caused_intensity);
    EXPECT_STREQ(a.search, b.search);
    EXPECT_STREQ(a.relative_to, b.relative_to);
    EXPECT_EQ(a.caused_min_rounds, b.caused_min_rounds);
    EXPECT_TRUE(same(a.caused_budget_s, b.caused_budget_s));
    EXPECT_EQ(a.caused_counted, b.caused_counted);
    EXPECT_EQ(a.before_median, b.before_median);
    EXPECT_EQ(a.after_median, b.after_median);
    ASSERT_EQ(a.nbefore, b.nbefore);
    ASSERT_EQ(a.nafter, b.nafter);
    for (unsigned i = 0; i < a.nbefore; i++)
        EXPECT_EQ(a.before[i], b.before[i]);
    for (unsigned i = 0; i < a.nafter; i++)
        EXPECT_EQ(a.after[i], b.after[i]);
    EXPECT_EQ(a.drift_pct, b.drift_pct);
    EXPECT_EQ(a.noise_pct, b.noise_pct);
    EXPECT_STREQ(a.confidence, b.confidence);
    EXPECT_EQ(a.complete, b.complete);
    EXPECT_TRUE(same(a.timeout_s, b.timeout_s));
    ASSERT_EQ(a.nburst_on, b.nburst_on); // 1.7
    for (unsigned i = 0; i < a.nburst_on; i++)
        EXPECT_EQ(a.burst_on_s[i], b.burst_on_s[i]);
    EXPECT_STREQ(a.bursts_off, b.bursts_off);
    ASSERT_EQ(a.nmissing, b.nmissing);
    for (unsigned i = 0; i < a.nmissing; i++) {
        EXPECT_STREQ(a.missing[i].phase, b.missing[i].phase);
        EXPECT_STREQ(a.missing[i].soi, b.missing[i].soi);
        EXPECT_TRUE(same(a.missing[i].intensity, b.missing[i].intensity));
        EXPECT_STREQ(a.missing[i].reason, b.missing[i].reason);
    }
    ASSERT_EQ(a.nphases, b.nphases);
    for (unsigned i = 0; i < a.nphases; i++) {
        const struct profile_phase &x = a.phases[i], &y = b.phases[i];
        EXPECT_STREQ(x.phase, y.phase);
        EXPECT_STREQ(x.soi, y.soi);
        EXPECT_EQ(x.wall_s, y.wall_s);
        EXPECT_TRUE(same(x.cpu_some, y.cpu_some) && same(x.io_some, y.io_some) && same(x.io_full, y.io_full) &&
                    same(x.memory_some, y.memory_some) && same(x.memory_full, y.memory_full) &&
                    same(x.steal, y.steal))
            << "phase " << i;
    }
    ASSERT_EQ(a.nsois, b.nsois);
    for (unsigned i = 0; i < a.nsois; i++) {
        const struct profile_soi &x = a.sois[i], &y = b.sois[i];
        SCOPED_TRACE(x.soi ? x.soi : "(no name)");
        EXPECT_STREQ(x.soi, y.soi);
        EXPECT_STREQ(x.resource, y.resource);
        EXPECT_EQ(x.status, y.status);
        EXPECT_STREQ(x.reason, y.reason);
        ASSERT_EQ(x.ncpus, y.ncpus);
        for (unsigned k = 0; k < x.ncpus; k++)
            EXPECT_EQ(x.cpus[k], y.cpus[k]);
        EXPECT_TRUE(same(x.capacity, y.capacity));
        EXPECT_STREQ(x.capacity_unit, y.capacity_unit);
        EXPECT_STREQ(x.capacity_source, y.capacity_source);
        EXPECT_EQ(x.have_reach, y.have_reach);
        EXPECT_STREQ(x.reach.verdict, y.reach.verdict);
        EXPECT_STREQ(x.reach.probe, y.reach.probe);
        EXPECT_STREQ(x.reach.unit, y.reach.unit);
        EXPECT_STREQ(x.reach.reason, y.reach.reason);
        EXPECT_EQ(x.reach.cpu, y.reach.cpu);
        EXPECT_TRUE(same(x.reach.bar_pct, y.reach.bar_pct));
        EXPECT_TRUE(same(x.reach.effect_pct, y.reach.effect_pct));
        EXPECT_TRUE(same(x.reach.se_pct, y.reach.se_pct));
        EXPECT_TRUE(same(x.reach.soi_achieved_pct, y.reach.soi_achieved_pct));
        EXPECT_TRUE(same(x.tolerated, y.tolerated));
        EXPECT_TRUE(same(x.bracket[0], y.bracket[0]));
        EXPECT_TRUE(same(x.bracket[1], y.bracket[1]));
        ASSERT_EQ(x.ncurve, y.ncurve);
        for (unsigned k = 0; k < x.ncurve; k++) {
            const struct profile_point &u = x.curve[k], &v = y.curve[k];
            EXPECT_EQ(u.intensity, v.intensity) << k;
            EXPECT_EQ(u.value, v.value) << k;
            EXPECT_EQ(u.solo, v.solo) << k;
            EXPECT_EQ(u.relative, v.relative) << k;
            EXPECT_TRUE(same(u.achieved_pct, v.achieved_pct)) << k;
            EXPECT_EQ(u.meets_qos, v.meets_qos) << k;
            EXPECT_EQ(u.again, v.again) << k;
            EXPECT_EQ(u.samples, v.samples) << k;
            EXPECT_EQ(u.timed_out, v.timed_out) << k;
            if (std::isnan(u.relative_se)) {
                EXPECT_TRUE(std::isnan(v.relative_se)) << k;
            } else {
                EXPECT_DOUBLE_EQ(u.relative_se, v.relative_se) << k;
            }
            EXPECT_EQ(u.solo_samples, v.solo_samples) << k;
            EXPECT_EQ(u.uncertain, v.uncertain) << k;
        }
        EXPECT_EQ(x.have_caused, y.have_caused);
        const struct profile_caused &c = x.caused, &d = y.caused;
        EXPECT_TRUE(same(c.intensity, d.intensity));
        EXPECT_STREQ(c.unit, d.unit);
        EXPECT_STREQ(c.basis, d.basis);
        EXPECT_TRUE(same(c.value, d.value));
        EXPECT_TRUE(same(c.se, d.se));
        EXPECT_EQ(c.distinguishable, d.distinguishable);
        EXPECT_TRUE(same(c.alone, d.alone));
        EXPECT_TRUE(same(c.beside, d.beside));
        EXPECT_TRUE(same(c.cpu_lost_pct, d.cpu_lost_pct));
        EXPECT_TRUE(same(c.cpu_lost_se, d.cpu_lost_se));
        EXPECT_EQ(c.unthrottled, d.unthrottled);
        ASSERT_EQ(c.nrounds, d.nrounds);
        for (unsigned k = 0; k < c.nrounds; k++)
            EXPECT_EQ(c.rounds[k], d.rounds[k]);
        EXPECT_STREQ(c.occupancy_what, d.occupancy_what);
        EXPECT_TRUE(same(c.occupancy_pct, d.occupancy_pct));
        EXPECT_STREQ(c.reason, d.reason);
        EXPECT_STREQ(c.ref_probe, d.ref_probe);
        EXPECT_STREQ(c.ref_unit, d.ref_unit);
        ASSERT_EQ(c.nref, d.nref);
        for (unsigned k = 0; k < c.nref; k++)
            EXPECT_TRUE(c.ref_levels[k] == d.ref_levels[k] && c.ref_rel[k] == d.ref_rel[k]) << k;
        EXPECT_STREQ(c.counted_res, d.counted_res);
        EXPECT_STREQ(c.counted_unit, d.counted_unit);
        EXPECT_TRUE(same(c.counted_mean, d.counted_mean) && same(c.counted_floor, d.counted_floor));
        EXPECT_EQ(c.counted_windows, d.counted_windows);
        EXPECT_TRUE(same(x.confidence.tolerated_pts, y.confidence.tolerated_pts));
        EXPECT_TRUE(same(x.confidence.noise_pct, y.confidence.noise_pct));
        EXPECT_STREQ(x.confidence.level, y.confidence.level);
        EXPECT_EQ(x.have_depth, y.have_depth); // 1.6 depth
        EXPECT_TRUE(same(x.depth.floor, y.depth.floor));
        EXPECT_TRUE(same(x.depth.relative_100, y.depth.relative_100));
        EXPECT_TRUE(same(x.depth.se_100, y.depth.se_100));
        EXPECT_TRUE(same(x.depth.below_floor_at, y.depth.below_floor_at));
        EXPECT_EQ(x.depth.points, y.depth.points);
        EXPECT_TRUE(same(x.depth.seconds, y.depth.seconds));
        ASSERT_EQ(x.nbursts, y.nbursts); // 1.7 bursts
        for (unsigned k = 0; k < x.nbursts; k++) {
            const profile_burst &u = x.bursts[k], &w = y.bursts[k];
            EXPECT_TRUE(u.on_s == w.on_s && u.off_s == w.off_s && u.level == w.level && u.relative == w.relative) << k;
            EXPECT_TRUE(same(u.relative_se, w.relative_se)) << k;
            EXPECT_TRUE(u.on_relative == w.on_relative && u.samples == w.samples && u.seconds == w.seconds) << k;
            EXPECT_EQ(u.timed_out, w.timed_out) << k;
        }
    }
}

} // namespace

// Every file in profile-bad/ has an expectation here (a new fixture without one fails), and there are at least 20.
TEST(ProfileFmt, EveryBadFixtureIsListed)
{
    std::set<std::string> listed, found;
    for (const auto &c : kBadCases)
        listed.insert(std::string(c.file) + ".json");
    DIR *d = opendir(kBad.c_str());
    ASSERT_NE(d, nullptr) << kBad;
    while (struct dirent *e = readdir(d))
        if (e->d_name[0] != '.')
            found.insert(e->d_name);
    closedir(d);
    EXPECT_EQ(listed, found);
    EXPECT_GE(found.size(), 22u);
}

TEST(ProfileFmt, ReaderRefusesEveryBadFixtureNamingTheField)
{
    for (const auto &c : kBadCases) {
        struct profile p;
        char why[512] = "";
        const std::string f = path_of(c);
        EXPECT_EQ(profile_read(f.c_str(), &p, why, sizeof(why)), -EINVAL) << c.file;
        EXPECT_NE(std::string(why).find(f + c.says), std::string::npos) << c.file << ": " << why;
        EXPECT_EQ(strchr(why, '\n'), nullptr) << c.file << ": one line: " << why;
        EXPECT_EQ(p.sois, nullptr) << "nothing to free after an error";
        profile_free(&p); // harmless
    }
}

// A profile listing one SoI thousands of times (62 MB, shown with exit 0) is refused at the first repeat,
// naming it, by the reader and by show; nothing on stdout.
TEST(ProfileFmt, AnSoiListedThousandsOfTimesIsRefusedAtTheFirstRepeat)
{
    TempDir dir("profile_fmt");
    json_error_t e;
    json_t *d = json_load_file((std::string(IBENCH_FIXTURES) + "/profile-v1.2-small.json").c_str(), 0, &e);
    ASSERT_NE(d, nullptr) << e.text;
    json_t *one = json_incref(json_array_get(json_object_get(d, "sois"), 1));
    json_t *many = json_array();
    for (int i = 0; i < 5000; i++)
        json_array_append(many, one);
    json_decref(one);
    json_object_set_new(d, "sois", many);
    const std::string f = dir.path() + "/dup.json";
    ASSERT_EQ(json_dump_file(d, f.c_str(), 0), 0);
    json_decref(d);
    struct profile p;
    char why[512] = "";
    EXPECT_EQ(profile_read(f.c_str(), &p, why, sizeof(why)), -EINVAL);
    EXPECT_NE(std::string(why).find(f + ": sois[1].soi: SoI \"mem-bw\" listed twice (first at sois[0])"),
              std::string::npos)
        << why;
    Proc s;
    run(s, {"show", f});
    EXPECT_EQ(s.exit_code(), 2) << s.err;
    EXPECT_EQ(s.out, "");
    EXPECT_EQ(std::count(s.err.begin(), s.err.end(), '\n'), 1) << s.err;
}

// A newer minor version may list an SoI this ibench does not know (a newer SoI): read with one warning, not
// refused. Its names hold escape sequences, and every one comes out escaped: no ESC byte reaches the terminal.
TEST(ProfileFmt, NewerVersionsUnknownSoiIsAWarningAndEscapesComeOutEscaped)
{
    const std::string f = std::string(IBENCH_FIXTURES) + "/profile-v1.9-unknown-soi.json";
    struct profile p;
    char why[512] = "";
    ASSERT_EQ(profile_read(f.c_str(), &p, why, sizeof(why)), 0) << why;
    ASSERT_NE(p.warning, nullptr);
    EXPECT_NE(std::string(p.warning).find("1 SoI this ibench does not know"), std::string::npos) << p.warning;
    EXPECT_NE(std::string(p.warning).find("version 1.9, newer than this ibench's 1.8"), std::string::npos)
        << p.warning;
    EXPECT_STREQ(p.sois[2].soi, "l3-cap\x1b[31m") << "the struct keeps the name as the file has it";
    profile_free(&p);
    Proc s;
    run(s, {"show", f});
    EXPECT_EQ(s.exit_code(), 0) << s.err;
    EXPECT_EQ(s.out.find('\x1b'), std::string::npos) << "a raw ESC on stdout";
    EXPECT_EQ(s.err.find('\x1b'), std::string::npos) << "a raw ESC on stderr";
    EXPECT_NE(s.out.find("profile   svc\\x1b[2J\\x1b[31m (1.9, "), std::string::npos) << s.out;
    EXPECT_NE(s.out.find("l3-cap\\x1b[31m skipped: "), std::string::npos) << s.out;
    EXPECT_EQ(s.err.find("ibench show: warning: "), 0u) << s.err;
    EXPECT_EQ(std::count(s.err.begin(), s.err.end(), '\n'), 1) << s.err;
    // show --json re-emits it as it was read, in its own (newer) version: it reads back
    Proc sj;
    run(sj, {"show", "--json", f});
    EXPECT_EQ(sj.exit_code(), 0) << sj.err;
    ASSERT_EQ(profile_parse(sj.out.c_str(), "stdout", &p, why, sizeof(why)), 0) << why;
    EXPECT_EQ(p.minor, 9);
    profile_free(&p);
    // the placement commands print profile names too: place pair of it beside the recorded memcached profile
    Proc pp;
    run(pp, {"place", "pair", f, kMemcached});
    EXPECT_TRUE(pp.exit_code() == 0 || pp.exit_code() == 1) << pp.err; // safe or unsafe: a verdict, not a refusal
    EXPECT_EQ(pp.out.find('\x1b'), std::string::npos) << "a raw ESC on stdout";
    EXPECT_EQ(pp.err.find('\x1b'), std::string::npos) << "a raw ESC on stderr";
    EXPECT_NE(pp.out.find("1 svc\\x1b[2J"), std::string::npos) << pp.out;
    // the same file as this ibench's own version: refused, the name shown without its escape
    Proc q;
    const std::string bad = path_of({"soi-unknown-with-escape", ""});
    run(q, {"show", bad});
    EXPECT_EQ(q.exit_code(), 2);
    EXPECT_EQ(q.err.find('\x1b'), std::string::npos) << q.err;
    EXPECT_EQ(q.err.find('\x07'), std::string::npos) << q.err;
}

TEST(ProfileFmt, MissingFileIsENOENT)
{
    struct profile p;
    char why[512] = "";
    EXPECT_EQ(profile_read((kBad + "no-such-file.json").c_str(), &p, why, sizeof(why)), -ENOENT);
    EXPECT_NE(std::string(why).find("no-such-file.json: No such file"), std::string::npos) << why;
}

// A file larger than a profile can be keeps its own error (-EFBIG, not -EINVAL) and is still bad input (exit 2).
TEST(ProfileFmt, AFileTooLargeIsEFBIGAndBadInput)
{
    TempDir dir("profile_fmt");
    const std::string f = dir.path() + "/huge.json";
    {
        std::ofstream o(f);
        o << "{";
    }
    ASSERT_EQ(truncate(f.c_str(), (65LL << 20)), 0) << strerror(errno);  // sparse: 65 MiB
    struct profile p;
    char why[512] = "";
    EXPECT_EQ(profile_read(f.c_str(), &p, why, sizeof(why)), -EFBIG) << why;
    EXPECT_NE(std::string(why).find("larger than a profile can be"), std::string::npos) << why;
    Proc s;
    run(s, {"show", f});
    EXPECT_EQ(s.exit_code(), 2) << s.err;
    EXPECT_NE(s.err.find("larger than a profile can be"), std::string::npos) << s.err;
}

TEST(ProfileFmt, ShowAndPlotRefuseEveryBadFixtureWithOneLine)
{
    TempDir dir("profile_fmt");
    for (const auto &c : kBadCases)
        for (const char *cmd : {"show", "plot"}) {
            Proc p;
            const std::string png = dir.path() + "/x.png";
            if (!strcmp(cmd, "plot"))
                run(p, {cmd, path_of(c), "--out", png});
            else
                run(p, {cmd, path_of(c)});
            EXPECT_EQ(p.exit_code(), 2) << cmd << " " << c.file << ": " << p.err;
            EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << cmd << " " << c.file << ": " << p.err;
            EXPECT_EQ(p.err.find("ibench " + std::string(cmd) + ": " + path_of(c) + c.says), 0u)
                << cmd << " " << c.file << ": " << p.err;
            EXPECT_EQ(p.out, "") << cmd << " " << c.file;
            struct stat st;
            EXPECT_NE(stat(png.c_str(), &st), 0) << "no chart of a bad file";
        }
}

TEST(ProfileFmt, Reads11FixtureWithNewFieldsAbsent)
{
    struct profile p;
    char why[512] = "";
    ASSERT_EQ(profile_read(kMemcached.c_str(), &p, why, sizeof(why)), 0) << why;
    EXPECT_EQ(p.major, 1);
    EXPECT_EQ(p.minor, 1);
    EXPECT_STREQ(p.name, "memcached");
    EXPECT_EQ(p.pid, 0);
    EXPECT_EQ(p.ntcpus, 1u);
    EXPECT_EQ(p.ncaches, 3u);
    EXPECT_EQ(p.qos, 0.94999999999999996);
    EXPECT_EQ(p.caused_min_rounds, 0u);
    EXPECT_TRUE(std::isnan(p.caused_budget_s));
    EXPECT_EQ(p.nbefore, 5u);
    EXPECT_EQ(p.caused_counted, -1) << "absent before 1.8";
    ASSERT_EQ(p.nsois, 17u);
    // tolerated per measured SoI, as recorded
    const struct {
        const char *soi;
        double tolerated, caused;
    } want[] = {{"mem-cap", 56.25, 0.0},        {"mem-bw", 12.5, 0.0},   {"llc-cap", 31.25, 19.260335077456524},
                {"llc-bw", 12.5, 0.18998771785737611}, {"disk-cap", 87.5, 0.0}, {"disk-bw", 50.0, 0.0},
                {"net-bw", 56.25, 0.0}};
    unsigned measured = 0;
    for (unsigned i = 0; i < p.nsois; i++) {
        const struct profile_soi &s = p.sois[i];
        SCOPED_TRACE(s.soi);
        if (s.status == PROFILE_SKIPPED) {
            EXPECT_NE(s.reason, nullptr);
            EXPECT_TRUE(std::isnan(s.tolerated));
            continue;
        }
        ASSERT_LT(measured, 7u);
        EXPECT_STREQ(s.soi, want[measured].soi);
        EXPECT_EQ(s.tolerated, want[measured].tolerated);
        EXPECT_EQ(s.caused.value, want[measured].caused);
        measured++;
        EXPECT_EQ(s.have_caused, 1);
        EXPECT_STREQ(s.caused.basis, "wall-second") << "what 1.1 measured";
        EXPECT_TRUE(std::isnan(s.caused.se));
        EXPECT_EQ(s.caused.distinguishable, -1);
        EXPECT_EQ(s.caused.unthrottled, -1);
        EXPECT_TRUE(std::isnan(s.caused.cpu_lost_pct));
        EXPECT_EQ(s.caused.nrounds, 0u);
        EXPECT_EQ(s.caused.occupancy_what, nullptr);
        for (unsigned k = 0; k < s.ncurve; k++)
            EXPECT_EQ(s.curve[k].samples, 0u) << "not recorded in 1.1";
    }
    EXPECT_EQ(measured, 7u);
    EXPECT_EQ(p.sois[1].have_reach, 1);
    EXPECT_STREQ(p.sois[1].reach.verdict, "reaches");
    EXPECT_EQ(p.sois[1].reach.cpu, 0);
    EXPECT_EQ(p.sois[0].have_reach, 0);
    EXPECT_EQ(p.sois[0].curve[3].again, 1);
    profile_free(&p);
}

TEST(ProfileFmt, ShowOf11PrintsNoNullOrNan)
{
    Proc p;
    run(p, {"show", kMemcached});
    EXPECT_EQ(p.exit_code(), 0) << p.err;
    EXPECT_EQ(p.out.find("(null)"), std::string::npos) << p.out;
    EXPECT_EQ(p.out.find("nan"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("llc-cap            31.2 [31.25, 37.5]    19.3 "), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("profile   memcached (1.1, "), std::string::npos) << p.out;
    EXPECT_EQ(p.out.find("n.d."), std::string::npos) << "1.1 knows no standard error: nothing is marked";
}

// A 1.0 profile: the 1.1 fixture without reach and again.
TEST(ProfileFmt, Reads10)
{
    TempDir dir("profile_fmt");
    json_error_t e;
    json_t *d = json_load_file(kMemcached.c_str(), 0, &e);
    ASSERT_NE(d, nullptr) << e.text;
    json_object_set_new(d, "version", json_string("1.0"));
    size_t i, k;
    json_t *s, *pt;
    json_array_foreach(json_object_get(d, "sois"), i, s)
    {
        json_object_del(s, "reach");
        json_array_foreach(json_object_get(s, "curve"), k, pt)
            json_object_del(pt, "again");
    }
    const std::string f = dir.path() + "/p10.json";
    ASSERT_EQ(json_dump_file(d, f.c_str(), JSON_INDENT(2)), 0);
    json_decref(d);
    struct profile p;
    char why[512] = "";
    ASSERT_EQ(profile_read(f.c_str(), &p, why, sizeof(why)), 0) << why;
    EXPECT_EQ(p.minor, 0);
    ASSERT_EQ(p.nsois, 17u);
    for (unsigned j = 0; j < p.nsois; j++) {
        EXPECT_EQ(p.sois[j].have_reach, 0);
        for (unsigned c = 0; c < p.sois[j].ncurve; c++)
            EXPECT_EQ(p.sois[j].curve[c].again, 0);
    }
    EXPECT_EQ(p.sois[0].tolerated, 56.25);
    EXPECT_STREQ(p.sois[0].caused.basis, "wall-second");
    profile_free(&p);
    Proc show;
    run(show, {"show", f});
    EXPECT_EQ(show.exit_code(), 0) << show.err;
    EXPECT_NE(show.out.find("(1.0, "), std::string::npos) << show.out;
    EXPECT_EQ(show.out.find("reach ("), std::string::npos) << "no reach section without reach";
}

// A 1.4 struct with every field set -> profile_write -> the JSON Schema -> profile_read: equal field by field.
TEST(ProfileFmt, RoundTrip14)
{
    TempDir dir("profile_fmt");
    struct profile a, b;
    fill_full(&a);
    const std::string f = dir.path() + "/p12.json";
    char why[512] = "";
    ASSERT_EQ(profile_write(f.c_str(), &a, why, sizeof(why)), 0) << why;
    const std::string text = slurp(f);
    EXPECT_NE(text.find("\"version\": \"1.8\""), std::string::npos);
    EXPECT_NE(text.find("\"probe\": \"disk-rand\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"complete\": true"), std::string::npos) << text;
    EXPECT_NE(text.find("\"steal_pct\": null"), std::string::npos) << "an absent source is null, not 0";
    EXPECT_NE(text.find("\"disturbed_by\": \"io some 93.5 % > 20 %\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"data_sharing\": 0.375"), std::string::npos) << text;
    EXPECT_NE(text.find("\"caused\": -3.25"), std::string::npos) << "the raw median, not clamped";
    EXPECT_NE(text.find("\"below_floor_at\": 60.164"), std::string::npos) << text;
    EXPECT_EQ(text.find("NaN"), std::string::npos);
    Proc schema;
    ASSERT_TRUE(schema.start_cmd({"/usr/bin/python3", IBENCH_SCHEMA_CHECK, f}, {}));
    ASSERT_TRUE(schema.finish(60));
    EXPECT_EQ(schema.exit_code(), 0) << schema.err;
    ASSERT_EQ(profile_read(f.c_str(), &b, why, sizeof(why)), 0) << why;
    EXPECT_EQ(b.minor, PROFILE_MINOR);
    expect_equal(a, b);
    // 1.6 usage: every figure, a window without a figure as null, an absent gap left out
    ASSERT_EQ(b.have_usage, 1);
    ASSERT_EQ(b.usage.nres, 1u);
    const struct profile_usage_res &ua = a.usage.res[0], &ub = b.usage.res[0];
    EXPECT_STREQ(ub.name, "write");
    EXPECT_STREQ(ub.soi, "disk-write");
    EXPECT_STREQ(b.usage.source, "the work's processes");
    for (auto fld : {&profile_usage_res::floor, &profile_usage_res::mean, &profile_usage_res::p50,
                   &profile_usage_res::p90, &profile_usage_res::max, &profile_usage_res::duty, &profile_usage_res::level,
                   &profile_usage_res::burst_mean_s, &profile_usage_res::burst_max_s, &profile_usage_res::gap_mean_s,
                   &profile_usage_res::cap_mean_pct, &profile_usage_res::cap_level_pct})
        EXPECT_TRUE(same(ua.*fld, ub.*fld));
    EXPECT_EQ(ub.bursts, 1u);
    ASSERT_EQ(ub.nwindows, 3u);
    EXPECT_EQ(ub.windows[1], 7.5e7);
    EXPECT_TRUE(std::isnan(ub.windows[2]));
    EXPECT_EQ(text.find("gap_mean_s"), std::string::npos) << "absent, not null";
    // the point without a self-meter reading stayed absent, and the skipped SoI carries nothing measured
    EXPECT_TRUE(std::isnan(b.sois[0].curve[2].achieved_pct));
    EXPECT_EQ(b.sois[1].ncurve, 0u);
    EXPECT_EQ(b.sois[1].have_caused, 0);
    // and profile_dumps of either is the same text
    char *ta = profile_dumps(&a), *tb = profile_dumps(&b);
    ASSERT_TRUE(ta && tb);
    EXPECT_STREQ(ta, tb);
    free(ta);
    free(tb);
    profile_free(&a);
    profile_free(&b);
}

// profile_write refuses what the reader would refuse, names the field, and leaves no file.
TEST(ProfileFmt, WriteRefusesAnInvalidStruct)
{
    TempDir dir("profile_fmt");
    struct profile a;
    fill_full(&a);
    a.sois[0].tolerated = NAN; // measured without its tolerated
    const std::string f = dir.path() + "/bad.json";
    char why[512] = "";
    EXPECT_EQ(profile_write(f.c_str(), &a, why, sizeof(why)), -EINVAL);
    EXPECT_NE(std::string(why).find("sois[0].tolerated: a number in [0, 100] expected, got null"), std::string::npos)
        << why;
    struct stat st;
    EXPECT_NE(stat(f.c_str(), &st), 0) << "nothing written";
    a.sois[0].tolerated = 56.25;
    a.sois[0].caused.value = NAN; // not measurable needs its reason
    free(a.sois[0].caused.reason);
    a.sois[0].caused.reason = nullptr;
    EXPECT_EQ(profile_write(f.c_str(), &a, why, sizeof(why)), -EINVAL);
    EXPECT_NE(std::string(why).find("sois[0].caused_detail.reason: missing"), std::string::npos) << why;
    a.sois[0].caused.reason = strdup("the SoI completed no whole step");
    EXPECT_EQ(profile_write((dir.path() + "/no/dir/p.json").c_str(), &a, why, sizeof(why)), -ENOENT);
    EXPECT_NE(std::string(why).find("/no/dir/p.json: No such file"), std::string::npos) << why;
    EXPECT_EQ(profile_write(f.c_str(), &a, why, sizeof(why)), 0) << why;
    profile_free(&a);
}

// cpu_lost_pct is at most 100 and has no lower bound: a SoI that gained CPU beside the target (-259.9, as an
// I/O-bound disk SoI read once) is written, passes the schema and reads back; 100.5 is refused naming the field.
TEST(ProfileFmt, CpuLostIsAtMost100AndAGainIsUnbounded)
{
    TempDir dir("profile_fmt");
    struct profile a, b;
    fill_full(&a);
    a.sois[0].caused.cpu_lost_pct = -259.9;
    const std::string f = dir.path() + "/gain.json";
    char why[512] = "";
    ASSERT_EQ(profile_write(f.c_str(), &a, why, sizeof(why)), 0) << why;
    Proc schema;
    ASSERT_TRUE(schema.start_cmd({"/usr/bin/python3", IBENCH_SCHEMA_CHECK, f}, {}));
    ASSERT_TRUE(schema.finish(60));
    EXPECT_EQ(schema.exit_code(), 0) << schema.err;
    ASSERT_EQ(profile_read(f.c_str(), &b, why, sizeof(why)), 0) << why;
    EXPECT_DOUBLE_EQ(b.sois[0].caused.cpu_lost_pct, -259.9);
    profile_free(&b);
    a.sois[0].caused.cpu_lost_pct = 100.5;
    const std::string g = dir.path() + "/over.json";
    EXPECT_EQ(profile_write(g.c_str(), &a, why, sizeof(why)), -EINVAL);
    EXPECT_NE(std::string(why).find("caused_detail.cpu_lost_pct: a number <= 100 expected, got 100.5"),
              std::string::npos)
        << why;
    struct stat st;
    EXPECT_NE(stat(g.c_str(), &st), 0) << "nothing written";
    profile_free(&a);
}

// show on a 1.2 profile: a negative caused within 2 se of 0 prints clamped to 0, with its se, marked n.d.; the caused
// section shows the CPU lost and the occupancy; a caused that could not be measured prints "-".
TEST(ProfileFmt, ShowOf12ClampsAndMarksCaused)
{
    TempDir dir("profile_fmt");
    struct profile a;
    fill_full(&a);
    a.sois[1].status = PROFILE_MEASURED; // a second measured SoI whose caused is not measurable
    struct profile_soi &s = a.sois[1];
    s.cpus[0] = 1;
    s.ncpus = 1;
    s.capacity = 1048576;
    s.capacity_unit = strdup("B");
    s.capacity_source = strdup("l2 size");
    s.tolerated = 100;
    s.bracket[0] = s.bracket[1] = 100;
    s.curve = (struct profile_point *)calloc(1, sizeof(struct profile_point));
    s.ncurve = 1;
    s.curve[0] = {100, 1000, 1000, 1.0, 100.0, 1, 0, 3, 0, NAN, 0, 0};
    s.have_caused = 1;
    s.caused.intensity = 100;
    s.caused.unit = strdup("acc/s");
    s.caused.reason = strdup("the SoI completed no whole step");
    s.have_confidence = 1;
    s.confidence = {0, 2.5, strdup("high")};
    const std::string f = dir.path() + "/p12.json";
    char why[512] = "";
    ASSERT_EQ(profile_write(f.c_str(), &a, why, sizeof(why)), 0) << why;
    profile_free(&a);
    Proc p;
    run(p, {"show", f});
    EXPECT_EQ(p.exit_code(), 0) << p.err;
    EXPECT_EQ(p.err, "");
    EXPECT_EQ(p.out.find("-3"), std::string::npos) << "the raw negative figure is not shown: " << p.out;
    EXPECT_NE(p.out.find(" 0.0 +- 1.8 n.d. "), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("n.d.: not distinguishable from 0"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("  mem-bw       cpu lost 2.5 +- 0.5 %; target's resident memory 12.5 % of capacity"),
              std::string::npos)
        << p.out;
    EXPECT_NE(p.out.find("l2-cap            100.0    [100, 100]               -  100:1.00"), std::string::npos)
        << p.out;
    EXPECT_EQ(p.out.find("(null)"), std::string::npos) << p.out;
    EXPECT_EQ(p.out.find("nan"), std::string::npos) << p.out;
}

// show --json: the profile re-emitted as the current version, and nothing else.
TEST(ProfileFmt, ShowJsonReemitsTheCurrentVersion)
{
    Proc p;
    run(p, {"show", "--json", kMemcached});
    EXPECT_EQ(p.exit_code(), 0) << p.err;
    EXPECT_EQ(p.err, "");
    struct profile q;
    char why[512] = "";
    ASSERT_EQ(profile_parse(p.out.c_str(), "stdout", &q, why, sizeof(why)), 0) << why;
    EXPECT_EQ(q.minor, PROFILE_MINOR);
    ASSERT_EQ(q.nsois, 17u);
    EXPECT_EQ(q.sois[2].caused.value, 19.260335077456524);
    EXPECT_STREQ(q.sois[2].caused.basis, "wall-second") << "a 1.1 figure stays marked as one";
    profile_free(&q);
}

// 1.5: a caused read through a reference says so in `show`, with the probe's rates and calibration (a corpus profile).
TEST(ProfileFmt, ShowSaysACausedWasReadThroughItsReference)
{
    Proc p;
    ASSERT_TRUE(p.start_cmd({IBENCH_BIN, "show", std::string(IBENCH_FIXTURES) + "/../../docs/data/corpus/profiles/"
                                                                                "sqlite-fsync.json"},
                            {}));
    ASSERT_TRUE(p.finish(30));
    EXPECT_EQ(p.exit_code(), 0) << p.err;
    EXPECT_NE(p.out.find("disk-write   through the disk-rand reference: "), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("read/s alone"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find(" 1.00@0 "), std::string::npos) << p.out;
}

// show prints the bursts of an SoI that has them, a small table (a bound marked "<"); a profile with none says why.
TEST(ProfileFmt, ShowPrintsTheBursts)
{
    TempDir dir("profile_fmt");
    struct profile a;
    fill_full(&a);
    const std::string f = dir.path() + "/p17.json";
    char why[512] = "";
    ASSERT_EQ(profile_write(f.c_str(), &a, why, sizeof(why)), 0) << why;
    Proc p;
    run(p, {"show", f});
    EXPECT_EQ(p.status, 0) << p.err;
    EXPECT_NE(p.out.find("\nbursts ("), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("    0.25     0.25     100    0.995  "), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("       4        4     100    0.510<"), std::string::npos) << p.out;
    a.sois[0].nbursts = 0;
    a.nburst_on = 0;
    a.bursts_off = strdup("off: not asked for");
    ASSERT_EQ(profile_write(f.c_str(), &a, why, sizeof(why)), 0) << why;
    profile_free(&a);
    Proc q;
    run(q, {"show", f});
    EXPECT_NE(q.out.find("\nbursts: off: not asked for\n"), std::string::npos) << q.out;
}

// show names the curves measured while the target's own solo speed moved beyond PROFILE_SOLO_STRAY_MAX outside its
// baseline (the corpus's set a sqlite-fsync: llc-cap and disk-bw, 13.8- and 15.2-fold), and only those.
TEST(ProfileFmt, ShowNamesTheCurvesMeasuredWhileTheTargetsSoloStrayed)
{
    const std::string corpus = std::string(IBENCH_FIXTURES) + "/../../docs/data/corpus/";
    Proc p;
    run(p, {"show", corpus + "profiles-a/sqlite-fsync.json"});
    EXPECT_EQ(p.status, 0) << p.err;
    EXPECT_NE(p.out.find("\nSTRAYED: "), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("  llc-cap      the points' solo baselines 0.1839-2.458, 13.8-fold outside"),
              std::string::npos) << p.out;
    EXPECT_NE(p.out.find("  disk-bw      the points' solo baselines 0.2008-2.72, 15.2-fold outside"), std::string::npos)
        << p.out;
    EXPECT_EQ(p.out.find("  mem-bw       the points' solo"), std::string::npos) << "1.2-fold: within" << p.out;
    Proc q;
    run(q, {"show", corpus + "profiles-b/sqlite-fsync.json"});
    EXPECT_EQ(q.status, 0) << q.err;
    EXPECT_EQ(q.out.find("STRAYED"), std::string::npos) << q.out;
}

// show says when an SoI's point at 100 % achieved far more than the capacity its other points were paced against
// (the corpus's set b: disk-write cached at 351 MB/s, its 100 % point at 738 %), and not otherwise (set a: 112 %).
TEST(ProfileFmt, ShowSaysWhenACapacityWasMeasuredLow)
{
    const std::string corpus = std::string(IBENCH_FIXTURES) + "/../../docs/data/corpus/";
    Proc p;
    run(p, {"show", corpus + "profiles-b/fio-randread-qd16.json"});
    EXPECT_EQ(p.status, 0) << p.err;
    EXPECT_NE(p.out.find("\nCAPACITY LOW: "), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("  disk-write   738 % of 3.505e+08 B/s (cached sequential write"), std::string::npos) << p.out;
    Proc q;
    run(q, {"show", corpus + "profiles-a/fio-randread-qd16.json"});
    EXPECT_EQ(q.status, 0) << q.err;
    EXPECT_EQ(q.out.find("CAPACITY LOW"), std::string::npos) << q.out;
}
