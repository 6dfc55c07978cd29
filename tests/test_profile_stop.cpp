// test_profile_stop.cpp - a whole profile (prof_profile, harness/profile_method.h) stopped at every point: on a fake
// target and fake SoIs, the stop flag is raised at the k-th call of the meter or of an SoI's open, for every k over a
// small profile. Each result keeps what finished before the stop (the same figures as the run that was not stopped),
// is incomplete, lists what is missing, leaves no SoI open, is written, read back, valid against the schema and shown.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ib_err.h"
#include "profile_method.h"
#include "soi.h"
#include "test_support.h"

namespace {

// How a stopped meter answers. Strict: every call from the stop on fails with -EINTR. As the real adapter does
// (harness/profile.c): a sample (its child killed), a wait, a reference window or calibration, a hold to 0 and an
// SoI's open fail; marking, reading and the target's work go on. Deaf: nothing fails, only the flag is up.
enum class Mode { strict, real, deaf };

// Three SoIs: 0 measured on its own rate (prof_caused), 1 skipped by its open (this machine cannot place it), 2
// measured through a reference (prof_caused_ref). The target keeps QoS up to 60 %, then runs at 0.8.
struct Fake {
    Mode mode;
    long stop_at;            // the call that raises the stop (-1: never)
    atomic_int stop{0};
    long calls = 0;
    long bite = -1;          // the first call that failed for the stop
    unsigned samples_ok = 0; // samples that finished
    struct Line {
        long calls; // calls made when it was said: the next call's index
        int soi;    // the SoI open then (-1: none)
        std::string text;
    };
    std::vector<Line> said; // the method's progress lines
    unsigned opens = 0, closes = 0;
    int open_soi = -1;
    double x = 0;
    int work_on = 0;
    uint64_t now = 0;
    std::mt19937_64 rng{7};
    std::normal_distribution<double> nd{0, 1};

    int usage_mode = 0;      // the usage hook: 0 none, 1 measures, 2 fails
    unsigned samples_before_usage = 0;

    Fake(Mode m, long k) : mode(m), stop_at(k) {}
    static Fake *of(void *c) { return static_cast<Fake *>(c); }
    static int usage(void *c, struct profile_usage *u, char *why, size_t len)
    {
        Fake *f = of(c);
        f->samples_before_usage = f->samples_ok;
        if (f->usage_mode == 2)
            return ib_why(why, len, -EACCES, "cannot read /proc/42/io: Permission denied");
        u->window_s = 0.1;
        u->seconds = 0.2;
        u->source = strdup("fake");
        profile_usage_res_init(&u->res[0]);
        u->res[0].name = strdup("write");
        u->res[0].unit = strdup("B/s");
        u->res[0].floor = 1;
        u->res[0].windows = (double *)calloc(2, sizeof(double));
        u->res[0].nwindows = 2;
        u->nres = 1;
        return 0;
    }
    // one call: true when it fails for the stop (interruptible: it fails as the real adapter's does)
    bool call(bool interruptible)
    {
        if (calls++ == stop_at)
            stop = 1;
        const bool fails = stop && mode != Mode::deaf && (mode == Mode::strict || interruptible);
        if (fails && bite < 0)
            bite = calls - 1;
        return fails;
    }
    static int intr(char *why, size_t len)
    {
        snprintf(why, len, "stopped");
        return -EINTR;
    }
    static int sample(void *c, double *v, char *why, size_t len)
    {
        Fake *f = of(c);
        if (f->call(true))
            return intr(why, len);
        f->now += 250000000ULL;
        *v = 1000 * (f->x < 60 ? 1 : 0.8) * (1 + 0.01 * f->nd(f->rng));
        f->samples_ok++;
        return 0;
    }
    static int hold(void *c, double x, int, char *why, size_t len)
    {
        Fake *f = of(c);
        if (f->call(x <= 0))
            return intr(why, len);
        f->x = x;
        return 0;
    }
    static int mark(void *c, char *why, size_t len) { return of(c)->call(false) ? intr(why, len) : 0; }
    static int read(void *c, struct prof_window *w, char *why, size_t len)
    {
        Fake *f = of(c);
        if (f->call(false))
            return intr(why, len);
        const double rate = 1e9 * (f->work_on ? 0.8 : 1) * (1 + 0.01 * f->nd(f->rng));
        *w = prof_window{f->x, rate, rate, 1.0};
        return 0;
    }
    static int work(void *c, int on, char *why, size_t len)
    {
        Fake *f = of(c);
        if (f->call(false))
            return intr(why, len);
        f->work_on = on;
        return 0;
    }
    static int wait(void *c, unsigned ms, char *why, size_t len)
    {
        Fake *f = of(c);
        if (f->call(true))
            return intr(why, len);
        f->now += (uint64_t)ms * 1000000ULL;
        return 0;
    }
    static uint64_t clock(void *c) { return of(c)->now; }
    static void progress(void *c, const char *line)
    {
        Fake *f = of(c);
        f->said.push_back({f->calls, f->open_soi, line});
    }
    static int ref_curve(void *c, const double *lv, unsigned n, double *rel, double *rel_se, char *why, size_t len)
    {
        Fake *f = of(c);
        if (f->call(true))
            return intr(why, len);
        for (unsigned i = 0; i < n; i++) {
            rel[i] = 1 - 0.4 * lv[i] / 100;
            rel_se[i] = 0.01;
        }
        f->now += 4500000000ULL;
        return 0;
    }
    static int ref_window(void *c, double *rate, char *why, size_t len)
    {
        Fake *f = of(c);
        if (f->call(true))
            return intr(why, len);
        f->now += 300000000ULL;
        *rate = 5000 * (f->work_on ? 0.9 : 1) * (1 + 0.01 * f->nd(f->rng));
        return 0;
    }
    prof_meter meter()
    {
        prof_meter m{};
        m.ctx = this;
        m.sample = sample;
        m.soi_hold = hold;
        m.soi_mark = mark;
        m.soi_read = read;
        m.work = work;
        m.wait_ms = wait;
        m.now_ns = clock;
        m.ref_curve = ref_curve;
        m.ref_window = ref_window;
        m.progress = progress;
        if (usage_mode)
            m.usage = usage;
        return m;
    }

    // the SoIs
    static const char *name(void *, unsigned i) { return soi_at(i)->name; }
    static const char *resource(void *, unsigned i) { return soi_at(i)->resource; }
    static int open(void *c, unsigned i, struct profile_soi *e, char *why, size_t len)
    {
        Fake *f = of(c);
        f->opens++;
        f->open_soi = (int)i;
        if (f->call(true))
            return intr(why, len);
        e->cpus[e->ncpus++] = 1;
        e->capacity = 1e9;
        e->capacity_unit = strdup("ops/s");
        e->capacity_source = strdup("fake");
        if (i == 1) {
            e->status = PROFILE_SKIPPED;
            e->reason = strdup("no CPU shares it here (fake)");
            return 0;
        }
        return 1;
    }
    static int caused(void *c, const prof_params *pp, prof_meter *m, profile_caused *cd, char *why, size_t len)
    {
        Fake *f = of(c);
        cd->unit = strdup("ops/s");
        int rc = f->open_soi == 2 ? prof_caused_ref(pp, m, "fake-ref", cd, why, len) : prof_caused(pp, m, cd, why, len);
        if (rc == 0 && cd->ref_probe) { // as profile.c's a_caused: the unit of a caused read through a reference
            free(cd->unit);
            cd->unit = strdup("% of the SoI (equivalent intensity)");
            cd->ref_unit = strdup("reads/s");
        }
        cd->unthrottled = 0;
        return rc;
    }
    static int close(void *c, char *, size_t)
    {
        Fake *f = of(c);
        f->closes++;
        f->open_soi = -1;
        f->x = 0; // the adapter stops the SoI and the target's work whatever the meter said
        f->work_on = 0;
        return 0;
    }
    prof_sois sois()
    {
        prof_sois s{};
        s.ctx = this;
        s.n = 3;
        s.name = name;
        s.resource = resource;
        s.open = open;
        s.caused = caused;
        s.close = close;
        return s;
    }
};

constexpr unsigned kBaselines = 3;

// What a writer needs besides the measurements (profile.c's describe()).
void describe(profile *p, const prof_params &pp)
{
    p->tool = strdup("ibench test");
    p->created = strdup("2026-11-28T00:00:00Z");
    p->fingerprint = strdup("fake");
    p->cpu_model = strdup("fake CPU");
    p->machine_cpus = 2;
    p->name = strdup("stopped");
    p->command = strdup("fake");
    p->tcpus[p->ntcpus++] = 0;
    p->metric_kind = strdup("throughput");
    p->metric_spec = strdup("throughput");
    p->metric_unit = strdup("ops/s");
    p->metric_adapter = strdup("fake");
    p->metric_regex = strdup("");
    p->higher_is_better = 1;
    p->qos = pp.qos;
    p->samples_per_point = pp.samples;
    p->baseline_samples = kBaselines;
    p->caused_intensity = pp.caused_level;
    p->caused_min_rounds = pp.caused_min_rounds;
    p->caused_budget_s = pp.caused_budget_s;
    p->search = strdup("fake");
}

struct Result {
    int rc = 0;
    profile p;
    long calls = 0, bite = -1;
    unsigned samples_ok = 0, opens = 0, closes = 0;
    std::vector<Fake::Line> said;
    std::string why;
    Result() { profile_init(&p); }
    ~Result() { profile_free(&p); }
};

void run(Mode mode, long stop_at, Result &r)
{
    Fake f(mode, stop_at);
    prof_params pp;
    prof_params_default(&pp);
    pp.timeout_s = 60;
    describe(&r.p, pp);
    prof_meter m = f.meter();
    prof_sois s = f.sois();
    char why[512] = "";
    r.rc = prof_profile(&pp, &m, &s, kBaselines, &f.stop, &r.p, why, sizeof(why));
    r.why = why;
    r.calls = f.calls;
    r.bite = f.bite;
    r.said = f.said;
    r.samples_ok = f.samples_ok;
    r.opens = f.opens;
    r.closes = f.closes;
}

bool has(const char *s, const char *word) { return s && strstr(s, word); }

// The points of a, each as b has it (same intensity and figures), b holding at least as many.
void expect_prefix(const profile_soi &a, const profile_soi &b)
{
    ASSERT_LE(a.ncurve, b.ncurve);
    for (unsigned i = 0; i < a.ncurve; i++) {
        EXPECT_EQ(a.curve[i].intensity, b.curve[i].intensity) << i;
        EXPECT_EQ(a.curve[i].value, b.curve[i].value) << i;
        EXPECT_EQ(a.curve[i].relative, b.curve[i].relative) << i;
    }
}

// When each point of each SoI's tolerated search was whole, from an uninterrupted run's progress: point j once point
// j+1 began ("tolerated, X %: solo sample 1", said after its first call, the hold at 0) or the search ended (the
// first line of caused, said after the search's last call, the hold at 0). done[i][j]: the index of that call.
std::map<int, std::vector<long>> points_done(const std::vector<Fake::Line> &said)
{
    std::map<int, std::vector<long>> done;
    std::map<int, int> open; // points begun and not yet known whole, per SoI
    for (const auto &l : said) {
        if (l.soi < 0)
            continue;
        const std::string first = ": solo sample 1";
        const bool begins = l.text.rfind("tolerated, ", 0) == 0 && l.text.size() > first.size() &&
                            l.text.compare(l.text.size() - first.size(), first.size(), first) == 0;
        const bool caused = l.text.rfind("caused", 0) == 0;
        if ((begins || caused) && open[l.soi]) {
            done[l.soi].push_back(l.calls - 1);
            open[l.soi] = 0;
        }
        if (begins)
            open[l.soi] = 1;
    }
    return done;
}

// A shape: what the profile holds and lacks, to show one file of each.
std::string shape(const profile &p)
{
    std::string s = std::to_string(p.nbefore) + "/" + std::to_string(p.nafter);
    for (unsigned i = 0; i < p.nsois; i++)
        s += " " + std::to_string(p.sois[i].status) + ":" + std::to_string(p.sois[i].ncurve) +
             (p.sois[i].have_caused && std::isnan(p.sois[i].caused.value) ? "c" : "");
    for (unsigned i = 0; i < p.nmissing; i++)
        s += std::string(" ") + p.missing[i].phase;
    return s;
}

TEST(ProfileStop, EveryPointOfAFakeProfileKeepsWhatWasMeasuredAndListsWhatIsMissing)
{
    Result full;
    run(Mode::strict, -1, full);
    ASSERT_EQ(full.rc, 0) << full.why;
    ASSERT_TRUE(full.p.complete) << "not stopped: complete";
    ASSERT_FALSE(full.p.interrupted);
    ASSERT_EQ(full.p.nsois, 3u);
    ASSERT_EQ(full.p.sois[0].status, PROFILE_MEASURED);
    ASSERT_EQ(full.p.sois[1].status, PROFILE_SKIPPED);
    ASSERT_EQ(full.p.sois[2].status, PROFILE_MEASURED);
    ASSERT_TRUE(std::isfinite(full.p.sois[0].caused.value));
    ASSERT_TRUE(std::isfinite(full.p.sois[2].caused.value)) << full.p.sois[2].caused.reason;
    const long n = full.calls;
    ASSERT_GT(n, 100) << "a profile of some size";
    const auto done = points_done(full.said);
    ASSERT_EQ(done.count(0) ? done.at(0).size() : 0, full.p.sois[0].ncurve);
    ASSERT_EQ(done.count(2) ? done.at(2).size() : 0, full.p.sois[2].ncurve);

    ib_test::TempDir dir("profile_stop");
    ASSERT_FALSE(dir.path().empty());
    std::vector<std::string> files;
    std::map<std::string, std::string> shapes; // shape -> one file of it
    unsigned nothing = 0;
    for (Mode mode : {Mode::strict, Mode::real})
        for (long k = 0; k < n; k++) {
            SCOPED_TRACE(std::string(mode == Mode::strict ? "strict" : "real") + ", stopped at call " +
                         std::to_string(k));
            Result r;
            run(mode, k, r);
            EXPECT_EQ(r.opens, r.closes) << "an SoI left open";
            if (r.rc == -EINTR) { // stopped before the first sample finished: nothing to write
                EXPECT_EQ(r.samples_ok, 0u);
                EXPECT_NE(r.why.find("nothing measured"), std::string::npos) << r.why;
                nothing++;
                continue;
            }
            ASSERT_EQ(r.rc, 0) << r.why;
            const profile &p = r.p;
            EXPECT_FALSE(p.complete);
            EXPECT_TRUE(p.interrupted);
            ASSERT_GE(p.nmissing, 1u);
            for (unsigned i = 0; i < p.nmissing; i++)
                EXPECT_TRUE(has(p.missing[i].reason, "interrupted")) << p.missing[i].reason;
            // what finished is kept, as the run that was not stopped measured it: every baseline sample that
            // finished, every point whole before the stop bit, the same figures
            ASSERT_GE(p.nbefore, 1u);
            EXPECT_EQ(p.nbefore, std::min(r.samples_ok, kBaselines));
            for (unsigned i = 0; i < p.nbefore; i++)
                EXPECT_EQ(p.before[i], full.p.before[i]);
            for (unsigned i = 0; i < p.nafter; i++)
                EXPECT_EQ(p.after[i], full.p.after[i]);
            bool after_listed = false;
            for (unsigned i = 0; i < p.nmissing; i++)
                after_listed |= !strcmp(p.missing[i].phase, "baseline after");
            EXPECT_TRUE(after_listed || p.nafter == kBaselines) << "the baseline after is whole or listed";
            // every SoI asked for is listed: measured as before, skipped as before, or incomplete saying why
            ASSERT_EQ(p.nsois, 3u);
            for (unsigned i = 0; i < 3; i++) {
                const profile_soi &e = p.sois[i], &w = full.p.sois[i];
                SCOPED_TRACE(e.soi);
                EXPECT_STREQ(e.soi, w.soi);
                if (e.status == PROFILE_INCOMPLETE) {
                    EXPECT_TRUE(has(e.reason, "interrupted")) << e.reason;
                    if (w.status == PROFILE_MEASURED) {
                        expect_prefix(e, w);
                        unsigned whole = 0;
                        for (long c : done.at((int)i))
                            whole += r.bite < 0 || c <= r.bite;
                        EXPECT_EQ(e.ncurve, whole) << "the points whole before the stop bit at call " << r.bite;
                    }
                    continue;
                }
                EXPECT_EQ(e.status, w.status);
                if (e.status != PROFILE_MEASURED)
                    continue;
                ASSERT_EQ(e.ncurve, w.ncurve);
                expect_prefix(e, w);
                EXPECT_EQ(e.tolerated, w.tolerated);
                EXPECT_EQ(e.bracket[0], w.bracket[0]);
                if (std::isnan(e.caused.value)) { // its caused was cut short: said, and listed
                    EXPECT_TRUE(has(e.caused.reason, "interrupted")) << e.caused.reason;
                    bool listed = false;
                    for (unsigned j = 0; j < p.nmissing; j++)
                        listed |= !strcmp(p.missing[j].phase, "caused") && !strcmp(p.missing[j].soi, e.soi);
                    EXPECT_TRUE(listed);
                } else {
                    EXPECT_EQ(e.caused.value, w.caused.value);
                }
            }
            // written, and read back as it was
            const std::string file = dir.path() + "/" + (mode == Mode::strict ? "s" : "r") + std::to_string(k) +
                                     ".json";
            char why[512] = "";
            ASSERT_EQ(profile_write(file.c_str(), &p, why, sizeof(why)), 0) << why;
            profile back;
            ASSERT_EQ(profile_read(file.c_str(), &back, why, sizeof(why)), 0) << why;
            EXPECT_FALSE(back.complete);
            EXPECT_EQ(back.nmissing, p.nmissing);
            for (unsigned i = 0; i < back.nmissing && i < p.nmissing; i++) {
                EXPECT_STREQ(back.missing[i].phase, p.missing[i].phase);
                EXPECT_STREQ(back.missing[i].reason, p.missing[i].reason);
            }
            EXPECT_EQ(back.nbefore, p.nbefore);
            EXPECT_EQ(back.nafter, p.nafter);
            EXPECT_EQ(shape(back), shape(p));
            profile_free(&back);
            files.push_back(file);
            shapes.emplace(shape(p), file);
        }
    EXPECT_EQ(nothing, 2u) << "only a stop at the very first sample leaves nothing, in each mode";
    // the stops fell in every phase: the baseline before, each SoI's open, search and caused, the baseline after
    EXPECT_GE(shapes.size(), 15u);
    // every file validates against docs/schema/profile-v1.schema.json (one checker run for all)
    std::vector<std::string> cmd = {"/usr/bin/python3", std::string(IBENCH_FIXTURES) + "/../check_profile_schema.py"};
    cmd.insert(cmd.end(), files.begin(), files.end());
    ib_test::Proc schema;
    ASSERT_TRUE(schema.start_cmd(cmd, {}));
    ASSERT_TRUE(schema.finish(120));
    EXPECT_EQ(schema.exit_code(), 0) << schema.err;
    // and `ibench show` lists the missing parts of one file of each shape
    for (const auto &[sh, file] : shapes) {
        SCOPED_TRACE(sh + ": " + file);
        ib_test::Proc show;
        ASSERT_TRUE(show.start({"show", file}, {}));
        ASSERT_TRUE(show.finish(30));
        EXPECT_EQ(show.exit_code(), 0) << show.err;
        EXPECT_NE(show.out.find("INCOMPLETE"), std::string::npos) << show.out;
        EXPECT_NE(show.out.find("missing (the profile is incomplete):"), std::string::npos) << show.out;
        EXPECT_NE(show.out.find("interrupted (SIGINT/SIGTERM)"), std::string::npos) << show.out;
    }
}

// A stop the measurements do not see (the flag raised while none of them fails) is seen between SoIs: raised during
// the first SoI's search, that SoI is measured whole, the rest is listed as not measured, and no baseline after.
// The usage over time is taken once, after the first baseline (every sample of it in) and before the SoIs; one that
// cannot be measured is written as missing ("usage", its reason), and the SoIs are measured all the same.
TEST(ProfileStop, UsageFollowsTheFirstBaselineAndItsFailureIsMissingNotFatal)
{
    for (int mode : {1, 2}) {
        Fake f(Mode::real, -1);
        f.usage_mode = mode;
        prof_params pp;
        prof_params_default(&pp);
        pp.timeout_s = 60;
        profile p;
        profile_init(&p);
        describe(&p, pp);
        prof_meter m = f.meter();
        prof_sois s = f.sois();
        char why[512] = "";
        ASSERT_EQ(prof_profile(&pp, &m, &s, kBaselines, &f.stop, &p, why, sizeof(why)), 0) << why;
        EXPECT_EQ(f.samples_before_usage, kBaselines) << "after the whole first baseline, before any point";
        EXPECT_EQ(p.sois[0].status, PROFILE_MEASURED);
        if (mode == 1) {
            EXPECT_EQ(p.have_usage, 1);
            EXPECT_TRUE(p.complete);
            EXPECT_EQ(p.nmissing, 0u);
        } else {
            EXPECT_EQ(p.have_usage, 0);
            EXPECT_FALSE(p.complete);
            ASSERT_EQ(p.nmissing, 1u);
            EXPECT_STREQ(p.missing[0].phase, "usage");
            EXPECT_STREQ(p.missing[0].reason, "cannot read /proc/42/io: Permission denied");
        }
        profile_free(&p);
    }
}

TEST(ProfileStop, AFlagRaisedBetweenMeasurementsEndsTheProfileAtTheNextSoI)
{
    Result r;
    run(Mode::deaf, 10, r); // call 10: the first SoI's search (3 baseline samples, an open, then its points)
    ASSERT_EQ(r.rc, 0) << r.why;
    EXPECT_TRUE(r.p.interrupted);
    EXPECT_FALSE(r.p.complete);
    ASSERT_EQ(r.p.nsois, 3u);
    EXPECT_EQ(r.p.sois[0].status, PROFILE_MEASURED);
    EXPECT_TRUE(std::isfinite(r.p.sois[0].caused.value));
    for (unsigned i = 1; i < 3; i++) {
        EXPECT_EQ(r.p.sois[i].status, PROFILE_INCOMPLETE) << i;
        EXPECT_STREQ(r.p.sois[i].reason, "not measured: interrupted (SIGINT/SIGTERM) before it began");
    }
    EXPECT_EQ(r.p.nafter, 0u);
    ASSERT_EQ(r.p.nmissing, 3u) << "two SoIs and the baseline after";
    EXPECT_STREQ(r.p.missing[2].phase, "baseline after");
    EXPECT_EQ(r.opens, 1u);
    EXPECT_EQ(r.closes, 1u);
}

} // namespace
