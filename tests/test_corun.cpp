// test_corun.cpp - co-runs (harness/corun.h): the interleaved method on a fake A and B, exactly and with seeded noise;
// the record's writer and strict reader; `ibench corun` on real short commands, its bad input and its failures.
#include <math.h>

#include <random>

#include "test_support.h"

extern "C" {
#include "corun.h"
}

namespace {

// A's metric is a run time: slow x (1 + noise) beside a running B, x (1 + noise) alone.
struct FakeAB {
    double solo = 2.0, slow = 1.25, noise = 0;
    int paused = 0, fail_at = -1;
    unsigned samples = 0, pauses = 0;
    std::vector<std::string> log; // the order of events
    std::mt19937_64 rng;
    std::normal_distribution<double> nd{0, 1};
    explicit FakeAB(uint64_t seed) : rng(seed) {}
    static FakeAB *of(void *c) { return static_cast<FakeAB *>(c); }
    static int sample(void *c, double *v, char *why, size_t len)
    {
        FakeAB *f = of(c);
        if ((int)f->samples++ == f->fail_at) {
            snprintf(why, len, "A died");
            return -ECHILD;
        }
        f->log.push_back(f->paused ? "solo" : "beside");
        *v = f->solo * (f->paused ? 1 : f->slow) * (1 + f->noise * f->nd(f->rng));
        return 0;
    }
    static int pause(void *c, int p, char *, size_t)
    {
        of(c)->paused = p;
        of(c)->pauses++;
        of(c)->log.push_back(p ? "pause" : "resume");
        return 0;
    }
    static int wait(void *c, unsigned ms, char *, size_t)
    {
        of(c)->log.push_back("wait " + std::to_string(ms));
        return 0;
    }
    corun_meter meter()
    {
        corun_meter m{};
        m.ctx = this;
        m.sample = sample;
        m.b_pause = pause;
        m.wait_ms = wait;
        return m;
    }
};

corun_params params(unsigned reps)
{
    corun_params p{};
    p.reps = reps;
    p.settle_solo_ms = 200;
    p.settle_beside_ms = 300;
    p.higher_better = 0; // a run time
    return p;
}

} // namespace

TEST(Corun, InterleavesPauseSoloResumeBesideAndReadsTheSlowdownExactly)
{
    FakeAB f(1);
    corun_meter m = f.meter();
    corun_params pp = params(3);
    corun_result r;
    char why[256] = "";
    ASSERT_EQ(0, corun_measure(&pp, &m, &r, why, sizeof(why))) << why;
    ASSERT_EQ(3u, r.n);
    const std::vector<std::string> one = {"pause", "wait 200", "solo", "resume", "wait 300", "beside"};
    ASSERT_EQ(18u, f.log.size());
    for (size_t i = 0; i < f.log.size(); i++)
        EXPECT_EQ(one[i % one.size()], f.log[i]) << "event " << i;
    EXPECT_DOUBLE_EQ(0.8, r.relative); // 1 / 1.25: lower is better
    EXPECT_DOUBLE_EQ(2.0, r.solo_median);
    EXPECT_DOUBLE_EQ(2.5, r.beside_median);
    EXPECT_DOUBLE_EQ(0.0, r.se); // noiseless: no spread to come from
    // higher is better: relative = beside / solo
    pp.higher_better = 1;
    FakeAB g(1);
    g.slow = 0.5;
    m = g.meter();
    ASSERT_EQ(0, corun_measure(&pp, &m, &r, why, sizeof(why))) << why;
    EXPECT_DOUBLE_EQ(0.5, r.relative);
}

TEST(Corun, StandardErrorCoversTheTruthAndNoEffectIsWithinIt)
{
    corun_params pp = params(7);
    int covered = 0, null_within = 0;
    for (int seed = 1; seed <= 200; seed++) {
        FakeAB f(seed);
        f.noise = 0.03;
        corun_meter m = f.meter();
        corun_result r;
        char why[256];
        ASSERT_EQ(0, corun_measure(&pp, &m, &r, why, sizeof(why))) << why;
        EXPECT_GT(r.se, 0);
        covered += fabs(r.relative - 0.8) <= 2 * r.se;
        FakeAB g(1000 + seed);
        g.noise = 0.03;
        g.slow = 1.0;
        m = g.meter();
        ASSERT_EQ(0, corun_measure(&pp, &m, &r, why, sizeof(why))) << why;
        null_within += fabs(r.relative - 1.0) <= 2 * r.se;
    }
    printf("3 %% noise, 7 reps: the truth within 2 se in %d / 200; no effect within 2 se of 1 in %d / 200\n", covered,
           null_within);
    EXPECT_GE(covered, 180);
    EXPECT_GE(null_within, 180);
}

TEST(Corun, ASampleThatFailsStopsWithTheRepetitionsDone)
{
    FakeAB f(2);
    f.fail_at = 5; // the 6th sample: repetition 3's beside
    corun_meter m = f.meter();
    corun_params pp = params(7);
    corun_result r;
    char why[256] = "";
    EXPECT_EQ(-ECHILD, corun_measure(&pp, &m, &r, why, sizeof(why)));
    EXPECT_STREQ("A died", why);
    EXPECT_EQ(2u, r.n);
    EXPECT_DOUBLE_EQ(0.8, r.relative);
}

namespace {

corun_record sample_record()
{
    corun_record rec{};
    rec.major = 1;
    rec.minor = 0;
    rec.tool = strdup("ibench test");
    rec.created = strdup("2026-11-27T00:00:00Z");
    rec.fingerprint = strdup("fp");
    rec.cpu_model = strdup("CPU");
    rec.machine_cpus = 2;
    rec.a = {strdup("xz"), strdup("xz -9"), nullptr, {0}, 1};
    rec.b = {strdup("redis"), strdup("redis-server"), strdup("redis-benchmark -q"), {1}, 1};
    rec.metric_spec = strdup("runtime");
    rec.metric_unit = strdup("s");
    rec.higher_is_better = 0;
    rec.pause = strdup("freezer");
    rec.settle_solo_ms = 200;
    rec.settle_beside_ms = 300;
    double solo[] = {1.0, 1.1, 0.9}, beside[] = {1.2, 1.4, 1.0};
    for (int i = 0; i < 3; i++)
        rec.r.s[rec.r.n++] = {solo[i], beside[i], solo[i] / beside[i]};
    rec.r.relative = 0.8333;
    return rec;
}

std::string dumps(const corun_record &rec)
{
    json_t *d = (json_t *)corun_json(&rec);
    char *t = json_dumps(d, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    std::string s = t;
    free(t);
    json_decref(d);
    return s;
}

std::string replace(std::string s, const std::string &from, const std::string &to)
{
    size_t p = s.find(from);
    EXPECT_NE(std::string::npos, p) << from;
    if (p != std::string::npos)
        s.replace(p, from.size(), to);
    return s;
}

} // namespace

TEST(CorunRecord, RoundTripsAndDerivesItsFiguresFromTheSamples)
{
    corun_record rec = sample_record();
    std::string text = dumps(rec);
    corun_record back;
    char why[512] = "";
    ASSERT_EQ(0, corun_parse(text.c_str(), "t.json", &back, why, sizeof(why))) << why;
    EXPECT_STREQ("xz -9", back.a.command);
    EXPECT_EQ(nullptr, back.a.load);
    EXPECT_STREQ("redis-benchmark -q", back.b.load);
    EXPECT_EQ(1, back.b.cpus[0]);
    EXPECT_EQ(3u, back.r.n);
    EXPECT_NEAR(1.0 / 1.2, back.r.relative, 1e-12); // the median of 0.833, 0.786, 0.9
    EXPECT_GT(back.r.se, 0);
    EXPECT_EQ(0, back.higher_is_better);
    corun_free(&back);
    corun_free(&rec);
}

TEST(CorunRecord, ReaderRefusesWhatIsNotARecordNamingTheField)
{
    corun_record rec = sample_record();
    std::string ok = dumps(rec);
    corun_free(&rec);
    struct Case {
        std::string text;
        const char *word;
    } cases[] = {
        {"[1]", "format"},
        {"{\"format\": \"ibench-profile\"}", "format"},
        {replace(ok, "\"version\": \"1.0\"", "\"version\": \"2.0\""), "version"},
        {replace(ok, "\"pause\": \"freezer\",", ""), "pause"},
        {replace(ok, "\"cpus\": [\n   0\n  ]", "\"cpus\": []"), "a.cpus"},
        {replace(ok, "\"higher_is_better\": false", "\"higher_is_better\": 0"), "higher_is_better"},
        {replace(ok, "\"solo\": 1.0,", "\"solo\": -1.0,"), "solo"},
        {replace(ok, "\"relative\": 0.83333333333333337", "\"relative\": 0.5"), "relative"},
        {replace(ok, "\"tool\": \"ibench test\",", "\"tool\": \"ibench test\", \"tool\": \"x\","), "duplicate"},
        {"{not json", "not JSON"},
    };
    for (const auto &c : cases) {
        corun_record r;
        char why[512] = "";
        EXPECT_EQ(-EINVAL, corun_parse(c.text.c_str(), "bad.json", &r, why, sizeof(why))) << c.word;
        EXPECT_NE(nullptr, strstr(why, c.word)) << why;
        EXPECT_NE(nullptr, strstr(why, "bad.json")) << why;
    }
}

// 1.1: a co-run stopped part way is a record of the repetitions it finished, complete false, the repetitions asked for
// and why; read back as such, and a 1.0 record reads as complete, its repetitions all it asked for.
TEST(CorunRecord, AnIncompleteRecordSaysSoAndAnOldOneReadsComplete)
{
    corun_record rec = sample_record(); // 1.0
    std::string text = dumps(rec);
    EXPECT_EQ(std::string::npos, text.find("complete")) << "1.0 has no such field";
    corun_record back;
    char why[512] = "";
    ASSERT_EQ(0, corun_parse(text.c_str(), "old.json", &back, why, sizeof(why))) << why;
    EXPECT_EQ(1, back.complete);
    EXPECT_EQ(3u, back.reps_planned);
    EXPECT_EQ(nullptr, back.reason);
    corun_free(&back);
    rec.minor = 1;
    rec.complete = 0;
    rec.reps_planned = 50;
    rec.reason = strdup("interrupted (SIGINT/SIGTERM) after 3 of 50 repetitions");
    text = dumps(rec);
    ASSERT_EQ(0, corun_parse(text.c_str(), "new.json", &back, why, sizeof(why))) << why;
    EXPECT_EQ(0, back.complete);
    EXPECT_EQ(50u, back.reps_planned);
    EXPECT_STREQ(rec.reason, back.reason);
    EXPECT_EQ(3u, back.r.n);
    corun_free(&back);
    // refused: each 1.1 rule broken, the field named
    struct Case {
        std::string text;
        const char *word;
    } cases[] = {
        {replace(text, "\"complete\": false,", ""), "complete"},
        {replace(text, "\"reps_planned\": 50,", ""), "reps_planned"},
        {replace(text, "\"reps_planned\": 50", "\"reps_planned\": 3"), "reps_planned"}, // incomplete: fewer than asked
        {replace(text, "\"reason\": \"interrupted (SIGINT/SIGTERM) after 3 of 50 repetitions\"", "\"reason\": null"),
         "reason"},
        {replace(text, "\"complete\": false", "\"complete\": true"), "reps_planned"}, // complete: all it asked for
    };
    for (const auto &c : cases) {
        corun_record r;
        EXPECT_EQ(-EINVAL, corun_parse(c.text.c_str(), "bad.json", &r, why, sizeof(why))) << c.word;
        EXPECT_NE(nullptr, strstr(why, c.word)) << why;
    }
    // written (read back first), and valid against docs/schema/corun-v1.schema.json
    ib_test::TempDir t("corun");
    const std::string out = t.path() + "/r.json";
    ASSERT_EQ(0, corun_write(out.c_str(), &rec, why, sizeof(why))) << why;
    ib_test::Proc v;
    ASSERT_TRUE(v.start_cmd({"/usr/bin/python3", IBENCH_SCHEMA_CHECK, "--schema", "corun-v1", out}, {}));
    ASSERT_TRUE(v.finish(30));
    EXPECT_EQ(0, v.exit_code()) << v.out << v.err;
    free(rec.reason); // an incomplete record without its reason is not written
    rec.reason = nullptr;
    EXPECT_EQ(-EINVAL, corun_write(out.c_str(), &rec, why, sizeof(why)));
    EXPECT_NE(nullptr, strstr(why, "not written")) << why;
    corun_free(&rec);
}

namespace {

void run(ib_test::Proc &p, const std::vector<std::string> &args, double timeout_s = 60)
{
    ASSERT_TRUE(p.start(args, {}));
    ASSERT_TRUE(p.finish(timeout_s)) << "hung: " << p.err;
}

} // namespace

TEST(CorunCli, BadInputExitsTwoWithOneLine)
{
    const std::vector<std::vector<std::string>> bad = {
        {"corun", "--a-metric", "runtime", "--b", "true"},                                   // no --a
        {"corun", "--a", "true", "--a-metric", "runtime"},                                   // no --b
        {"corun", "--a", "true", "--b", "true"},                                             // no metric
        {"corun", "--a", "true", "--b", "true", "--a-metric", "speed"},                      // unknown metric
        {"corun", "--a", "true", "--b", "true", "--a-metric", "ipc"},                        // not offered
        {"corun", "--a", "true", "--a-load", "x", "--b", "true", "--a-metric", "runtime"},   // runtime of a service
        {"corun", "--a", "true", "--b", "true", "--a-metric", "throughput"},                 // no --a-load
        {"corun", "--a", "true", "--b", "true", "--a-metric", "runtime", "--reps", "2"},     // no standard error
        {"corun", "--a", "true", "--b", "true", "--a-metric", "runtime", "--cpus-b", "99"},  // no such CPU
        {"corun", "--a", "true", "--b", "true", "--a-metric", "runtime", "--out", "/nonexistent/x.json"},
        {"corun", "--a", "true", "--b", "true", "--a-metric", "runtime", "extra"},
    };
    for (const auto &a : bad) {
        ib_test::Proc p;
        run(p, a);
        const std::string line = ib_test::words(a);
        EXPECT_EQ(2, p.exit_code()) << line << "\n" << p.err;
        EXPECT_EQ(0u, p.err.rfind("ibench corun: ", 0)) << line << "\n" << p.err;
        EXPECT_EQ(1, std::count(p.err.begin(), p.err.end(), '\n')) << "one line: " << p.err;
    }
}

TEST(CorunCli, ARealCoRunWritesAValidRecord)
{
    ib_test::TempDir t("corun");
    ASSERT_FALSE(t.path().empty());
    std::string out = t.path() + "/r.json";
    ib_test::Proc p;
    // A: a short batch job; B: a busy loop of its own, run again and again
    run(p, {"corun", "--a", "sleep 0.05", "--a-metric", "runtime", "--b", "sleep 0.3", "--reps", "3",
            "--settle-solo", "10", "--settle-beside", "10", "--out", out});
    ASSERT_EQ(0, p.exit_code()) << p.err;
    EXPECT_NE(std::string::npos, p.out.find("relative ")) << p.out;
    EXPECT_NE(std::string::npos, p.err.find("repetition 3 of 3")) << "progress on stderr: " << p.err;
    corun_record rec;
    char why[512] = "";
    ASSERT_EQ(0, corun_read(out.c_str(), &rec, why, sizeof(why))) << why;
    EXPECT_EQ(3u, rec.r.n);
    EXPECT_STREQ("sleep", rec.a.name);
    EXPECT_STREQ("sleep 0.3", rec.b.command);
    for (unsigned i = 0; i < rec.r.n; i++) // a sleep of 50 ms takes 50 ms or a little more, whatever is beside it
        EXPECT_GE(rec.r.s[i].solo, 0.05);
    EXPECT_GT(rec.machine_cpus, 0);
    EXPECT_EQ(1, rec.complete);
    EXPECT_EQ(3u, rec.reps_planned);
    EXPECT_TRUE(!strcmp(rec.pause, "freezer") || !strcmp(rec.pause, "signals")) << rec.pause;
    corun_free(&rec);
    ib_test::Proc v;
    ASSERT_TRUE(v.start_cmd({"/usr/bin/python3", IBENCH_SCHEMA_CHECK, "--schema", "corun-v1", out}, {}));
    ASSERT_TRUE(v.finish(30));
    EXPECT_EQ(0, v.exit_code()) << v.out << v.err;
}

// A metric where higher is better (command:CMD) is read in its direction: B appends to a file while it runs, and A's
// metric counts what was appended in 100 ms, plus 1: about 1 alone (B frozen), many beside B. relative = beside /
// solo is then far above 1; read the other way round it would be far below.
TEST(CorunCli, TheRelativeFollowsTheMetricsDirection)
{
    ib_test::TempDir t("corun");
    std::string f = t.path() + "/grow";
    ib_test::Proc p;
    run(p, {"corun", "--a", "true", "--a-metric",
            "command:s1=$(stat -c %s " + f + "); sleep 0.1; s2=$(stat -c %s " + f + "); echo $((s2 - s1 + 1))",
            "--b", "echo x >> " + f + "; sleep 0.001", "--reps", "3", "--settle-solo", "50", "--settle-beside", "50",
            "--json"});
    ASSERT_EQ(0, p.exit_code()) << p.err;
    json_t *d = json_loads(p.out.c_str(), 0, nullptr);
    ASSERT_NE(nullptr, d) << p.out;
    EXPECT_TRUE(json_is_true(json_object_get(json_object_get(d, "metric"), "higher_is_better")));
    EXPECT_GT(json_number_value(json_object_get(d, "relative")), 2.0) << p.out;
    json_decref(d);
}

TEST(CorunCli, AProgramThatFailsEndsTheCoRunWithNoRecord)
{
    ib_test::TempDir t("corun");
    std::string out = t.path() + "/r.json";
    for (const auto &args : std::vector<std::vector<std::string>>{
             {"corun", "--a", "exit 3", "--a-metric", "runtime", "--b", "sleep 1", "--reps", "3", "--out", out},
             {"corun", "--a", "sleep 0.05", "--a-metric", "runtime", "--b", "exit 4", "--reps", "3", "--out", out}}) {
        ib_test::Proc p;
        run(p, args);
        EXPECT_EQ(1, p.exit_code()) << p.err;
        EXPECT_NE(std::string::npos, p.err.find("exited with status")) << p.err;
        EXPECT_NE(std::string::npos, p.err.find("no record written")) << p.err;
        EXPECT_NE(0, access(out.c_str(), F_OK)) << "a record was written";
    }
}

// SIGTERM part way through: the repetitions finished are written, marked incomplete (complete false, the repetitions
// asked for, why), valid against the schema and read back; exit 130 with one line; place predict --check skips the
// record with a warning and grades the others.
TEST(CorunCli, SigtermWritesTheRepetitionsSoFarIncomplete)
{
    ib_test::TempDir t("corun");
    ASSERT_FALSE(t.path().empty());
    const std::string out = t.path() + "/r.json";
    ib_test::Proc p;
    ASSERT_TRUE(p.start({"corun", "--a", "sleep 0.2", "--a-metric", "runtime", "--b", "sleep 100", "--reps", "50",
                         "--settle-solo", "50", "--settle-beside", "50", "--out", out},
                        {}));
    // repetition 2 begun: one finished
    ASSERT_TRUE(p.pump_until([&] { return p.err.find("repetition 2 of 50") != std::string::npos; }, 30)) << p.err;
    const double until = ib_test::now_s() + 1.0;
    p.pump_until([&] { return ib_test::now_s() >= until; }, 5);
    kill(p.pid, SIGTERM);
    ASSERT_TRUE(p.finish(30)) << p.err;
    EXPECT_EQ(130, p.exit_code()) << p.err;
    EXPECT_NE(std::string::npos, p.err.find("interrupted; wrote " + out + ", incomplete: ")) << p.err;
    EXPECT_NE(std::string::npos, p.err.find(" of 50 repetitions\n")) << p.err;
    EXPECT_NE(std::string::npos, p.out.find("INCOMPLETE: interrupted (SIGINT/SIGTERM) after")) << p.out;
    corun_record rec;
    char why[512] = "";
    ASSERT_EQ(0, corun_read(out.c_str(), &rec, why, sizeof(why))) << why;
    EXPECT_EQ(0, rec.complete);
    EXPECT_EQ(50u, rec.reps_planned);
    EXPECT_GE(rec.r.n, 1u);
    EXPECT_LT(rec.r.n, 50u);
    ASSERT_NE(nullptr, rec.reason);
    EXPECT_NE(nullptr, strstr(rec.reason, "interrupted")) << rec.reason;
    corun_free(&rec);
    ib_test::Proc v;
    ASSERT_TRUE(v.start_cmd({"/usr/bin/python3", IBENCH_SCHEMA_CHECK, "--schema", "corun-v1", out}, {}));
    ASSERT_TRUE(v.finish(30));
    EXPECT_EQ(0, v.exit_code()) << v.out << v.err;
    const std::string data = std::string(IBENCH_FIXTURES) + "/../../docs/data/corun";
    ib_test::Proc c;
    run(c, {"place", "predict", "--check", data + "/records-2026-11-24/disk-dram.json", out, "--profiles", data});
    EXPECT_EQ(0, c.exit_code()) << c.err;
    EXPECT_NE(std::string::npos, c.err.find(out + " skipped: an incomplete record (interrupted")) << c.err;
    EXPECT_NE(std::string::npos, c.out.find("1 records")) << "the complete one graded: " << c.out;
    ib_test::Proc only;
    run(only, {"place", "predict", "--check", out, "--profiles", data});
    EXPECT_EQ(2, only.exit_code()) << only.err;
    EXPECT_NE(std::string::npos, only.err.find("no complete record to grade: 1 incomplete, skipped")) << only.err;
}

// Stopped before a repetition finished: nothing measured, nothing written.
TEST(CorunCli, SigtermBeforeTheFirstRepetitionWritesNothing)
{
    ib_test::TempDir t("corun");
    const std::string out = t.path() + "/r.json";
    ib_test::Proc p;
    ASSERT_TRUE(p.start({"corun", "--a", "sleep 5", "--a-metric", "runtime", "--b", "sleep 100", "--reps", "3",
                         "--settle-solo", "0", "--out", out},
                        {}));
    ASSERT_TRUE(p.pump_until([&] { return p.err.find("repetition 1 of 3") != std::string::npos; }, 30)) << p.err;
    kill(p.pid, SIGTERM);
    ASSERT_TRUE(p.finish(30)) << p.err;
    EXPECT_EQ(130, p.exit_code()) << p.err;
    EXPECT_NE(std::string::npos, p.err.find("interrupted before the first repetition finished; no record written"))
        << p.err;
    EXPECT_NE(0, access(out.c_str(), F_OK)) << "a record was written";
}
