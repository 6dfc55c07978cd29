// test_profile.cpp - `ibench profile`, `show` and `plot` through the real binary: bad input of every kind gets a clear
// message and a non-zero exit, no profile file, and no child process left behind; a short real profile of a
// synthetic target writes a valid v1 profile that show and plot read; metric adapters on recorded output.
//
// Children are found by a marker unique to each test in their command line (/proc/PID/cmdline).
#include <gtest/gtest.h>
#include <jansson.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "metric.h"
#include "profile.h"
#include "soi.h"
#include "stats.h"
#include "vprobe.h"
#include "test_support.h"

using namespace ib_test;

namespace {

class Profile : public ::testing::Test {
protected:
    TempDir dir{"profile"};
    std::string marker;
    void SetUp() override
    {
        ASSERT_FALSE(dir.path().empty());
        marker = "ibtmark" + std::to_string(getpid()) + "x" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name();
    }
    std::vector<std::string> env() const
    {
        return {"IBENCH_CACHE_DIR=" + dir.path(), "IBENCH_PROGRESS=0"};
    }
    // A profile here measures no usage over time (3 s by default) unless the test asks for it with --usage-seconds:
    // the tests of other parts do not pay for it, UsageOverTime* and ShortRealProfile* measure it.
    void run(Proc &p, std::vector<std::string> args, double timeout_s = 120)
    {
        if (!args.empty() && args[0] == "profile" &&
            std::find(args.begin(), args.end(), "--usage-seconds") == args.end()) {
            args.push_back("--usage-seconds");
            args.push_back("0");
        }
        ASSERT_TRUE(p.start(args, env()));
        ASSERT_TRUE(p.finish(timeout_s)) << "ibench did not finish within " << timeout_s << " s; stderr: " << p.err;
    }
    std::string out() const { return dir.path() + "/t.profile.json"; }
    bool exists(const std::string &f) const
    {
        struct stat st;
        return stat(f.c_str(), &st) == 0;
    }
    // processes whose command line carries this test's marker, read from /proc: a shell pipeline running pgrep would
    // count its own forked subshells, which carry the marker until they exec
    int leftovers() const
    {
        DIR *d = opendir("/proc");
        if (!d)
            return -1;
        int n = 0;
        while (struct dirent *e = readdir(d)) {
            const int pid = atoi(e->d_name);
            if (pid <= 0 || pid == getpid())
                continue;
            // read(2), not a stream: a process that ends meanwhile is an error to skip, not an exception
            const int fd = open(("/proc/" + std::to_string(pid) + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
            std::string cmd;
            char buf[4096];
            for (ssize_t r; fd >= 0 && (r = read(fd, buf, sizeof buf)) > 0;)
                cmd.append(buf, (size_t)r);
            if (fd >= 0)
                close(fd);
            n += cmd.find(marker) != std::string::npos;
        }
        closedir(d);
        return n;
    }
    // a shell command that carries the marker (a comment keeps the shell, not an exec'd program, in ps)
    std::string tagged(const std::string &body) const { return body + " # " + marker; }
    std::string target_bin() const { return IBENCH_TARGET_BIN; }
};


double num(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

double median_of(json_t *arr)
{
    std::vector<double> v;
    for (size_t i = 0; i < json_array_size(arr); i++)
        v.push_back(json_number_value(json_array_get(arr, i)));
    return v.empty() ? NAN : ib_median(v.data(), v.size());
}

// A profile's figures follow from its measurements by fixed rules, whatever the host's noise: each median is the
// median of its samples, each point's relative is solo over value (or value over solo) and meets QoS by it, the
// tolerated level and its bracket are where the documented search (25 % steps, a break counting when it repeats,
// then bisection) ends on those points, and caused is the median of its rounds. Checked on every measured SoI.
void expect_figures_follow_from_samples(json_t *d)
{
    const bool higher = json_is_true(json_object_get(json_object_get(d, "metric"), "higher_is_better"));
    auto rel = [higher](double v, double base) { return higher ? v / base : base / v; };
    const double qos = num(d, "qos");
    json_t *method = json_object_get(d, "method"), *bl = json_object_get(d, "baseline");
    const size_t nbase = (size_t)json_integer_value(json_object_get(method, "baseline_samples"));
    for (const char *when : {"before", "after"}) {
        SCOPED_TRACE(std::string("baseline ") + when);
        json_t *b = json_object_get(bl, when);
        EXPECT_EQ(json_array_size(json_object_get(b, "samples")), nbase);
        EXPECT_DOUBLE_EQ(num(b, "median"), median_of(json_object_get(b, "samples")));
    }
    const double before = num(json_object_get(bl, "before"), "median");
    const double after = num(json_object_get(bl, "after"), "median");
    EXPECT_NEAR(num(bl, "drift_pct"), 100 * (rel(after, before) - 1), 1e-9);
    json_t *sois = json_object_get(d, "sois");
    for (size_t k = 0; k < json_array_size(sois); k++) {
        json_t *s = json_array_get(sois, k);
        if (strcmp(json_string_value(json_object_get(s, "status")), "measured"))
            continue;
        SCOPED_TRACE(json_string_value(json_object_get(s, "soi")));
        json_t *curve = json_object_get(s, "curve");
        const size_t n = json_array_size(curve);
        // each point's verdict follows from its relative and standard error: meets QoS beyond 2 se, breaks it beyond
        // 2 se, else uncertain (without a standard error, the relative alone decides)
        for (size_t i = 0; i < n; i++) {
            json_t *pt = json_array_get(curve, i);
            SCOPED_TRACE("point " + std::to_string(i));
            const double r = num(pt, "relative");
            EXPECT_NEAR(r, rel(num(pt, "value"), num(pt, "solo")), 1e-12 * r);
            json_t *sej = json_object_get(pt, "relative_se");
            const double se = json_is_number(sej) ? json_number_value(sej) : 0;
            const bool meets = json_is_true(json_object_get(pt, "meets_qos"));
            const bool unsure = json_is_true(json_object_get(pt, "uncertain"));
            EXPECT_EQ(meets, r >= qos + 2 * se);
            EXPECT_EQ(unsure, se > 0 && r < qos + 2 * se && r >= qos - 2 * se);
        }
        // the depth's points follow the search's (profile_method.h, "Depth"); they are checked after it
        json_t *dep = json_object_get(s, "depth");
        const size_t ndepth = dep ? (size_t)json_integer_value(json_object_get(dep, "points")) : 0;
        ASSERT_LE(ndepth, n);
        const size_t nsearch = n - ndepth;
        // replay the search on the recorded points: (flat first, the method says: 100 %, and done when it met QoS)
        // 25, 50, 75, 100 up to the first that did not meet QoS (100 % not measured twice), then the bisection; the
        // safe end is the last point that met it
        const std::string search = json_string_value(json_object_get(json_object_get(d, "method"), "search"));
        const bool flat_first = search.rfind("100 % first", 0) == 0;
        size_t i = 0, first = 0;
        auto decide = [&](double x, bool *ok) {
            if (flat_first && x == 100 && i > 0) { // measured first
                *ok = json_is_true(json_object_get(json_array_get(curve, 0), "meets_qos"));
                return true;
            }
            json_t *pt = json_array_get(curve, i);
            if (!pt) {
                ADD_FAILURE() << "the curve ends before the search does (at " << x << " %)";
                return false;
            }
            EXPECT_EQ(num(pt, "intensity"), x) << "point " << i;
            *ok = json_is_true(json_object_get(pt, "meets_qos"));
            i++;
            return true;
        };
        double lo = 0, hi = -1;
        bool pass = false;
        if (flat_first) {
            if (!decide(100, &pass))
                return;
            first = 1;
            if (pass)
                lo = 100;
        }
        for (double x = 25; x <= 100 && lo < 100; x += 25) {
            if (!decide(x, &pass))
                return;
            if (!pass) {
                hi = x;
                break;
            }
            lo = x;
        }
        while (hi > 0 && i < nsearch) {
            const double x = 0.5 * (lo + hi);
            if (!decide(x, &pass))
                return;
            (pass ? lo : hi) = x;
        }
        EXPECT_EQ(i, nsearch) << "points beyond where the search ends, other than the depth's";
        if (dep) { // 100 % measured (by the search or first of the depth), read as the depth says
            double at100 = NAN;
            for (size_t j = 0; j < n; j++)
                if (num(json_array_get(curve, j), "intensity") == 100)
                    at100 = num(json_array_get(curve, j), "relative");
            EXPECT_EQ(num(dep, "relative_at_100"), at100);
            if (ndepth && !first && num(json_array_get(curve, nsearch), "intensity") != 100)
                ADD_FAILURE() << "the depth's first point is not 100 % though the search did not reach it";
        }
        // the safe end over every point: the highest intensity at and below which every point met QoS
        for (size_t j = 0; j < n; j++) {
            const double xj = num(json_array_get(curve, j), "intensity");
            bool all = true;
            for (size_t q = 0; q < n; q++)
                all &= num(json_array_get(curve, q), "intensity") > xj ||
                       json_is_true(json_object_get(json_array_get(curve, q), "meets_qos"));
            if (all && xj > lo)
                lo = xj;
        }
        // the bracket: the safe end, and the lowest point above it that broke QoS beyond its noise (else 100)
        double top = 100;
        for (size_t j = 0; j < n; j++) {
            json_t *pt = json_array_get(curve, j);
            if (!json_is_true(json_object_get(pt, "meets_qos")) && !json_is_true(json_object_get(pt, "uncertain")) &&
                num(pt, "intensity") > lo)
                top = std::min(top, num(pt, "intensity"));
        }
        json_t *br = json_object_get(s, "tolerated_bracket");
        EXPECT_EQ(json_number_value(json_array_get(br, 0)), lo);
        EXPECT_EQ(json_number_value(json_array_get(br, 1)), top);
        // tolerated, the point estimate, lies in the bracket (100 when nothing failed to meet QoS)
        if (hi < 0) {
            EXPECT_EQ(num(s, "tolerated"), 100);
        }
        EXPECT_GE(num(s, "tolerated"), lo);
        EXPECT_LE(num(s, "tolerated"), top);
        // caused: the median of its rounds, distinguishable when beyond twice its standard error
        json_t *cd = json_object_get(s, "caused_detail");
        json_t *rounds = json_object_get(cd, "rounds");
        if (json_is_number(json_object_get(s, "caused"))) {
            const size_t min_rounds = (size_t)json_integer_value(json_object_get(method, "caused_min_rounds"));
            EXPECT_GE(json_array_size(rounds), min_rounds);
            EXPECT_DOUBLE_EQ(num(s, "caused"), median_of(rounds));
            EXPECT_EQ(json_is_true(json_object_get(cd, "distinguishable")),
                      std::fabs(num(s, "caused")) > 2 * num(cd, "se"));
        }
    }
}
} // namespace

// The JSON document at path (nullptr, with the parser's reason as a failure, when it does not load).
static json_t *load_doc(const std::string &path)
{
    json_error_t e;
    json_t *d = json_load_file(path.c_str(), 0, &e);
    EXPECT_NE(d, nullptr) << path << ": " << e.text;
    return d;
}

TEST_F(Profile, ServiceThatExitsEarlyFailsWithoutAProfile)
{
    Proc p;
    run(p, {"profile", "--name", "t", "--target", tagged("sleep 0.2; exit 3"), "--metric",
            "command:" + tagged("sleep 0.3; echo 5"), "--sois", "mem-bw", "--warmup", "0", "--out", out()});
    EXPECT_EQ(p.exit_code(), 1) << p.err;
    EXPECT_NE(p.err.find("exited with status 3"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("no profile written"), std::string::npos) << p.err;
    EXPECT_FALSE(exists(out()));
    EXPECT_EQ(leftovers(), 0);
}

TEST_F(Profile, BatchTargetThatCrashesFails)
{
    Proc p;
    run(p, {"profile", "--name", "t", "--target", target_bin() + " crash", "--metric", "runtime", "--sois", "mem-bw",
            "--out", out()});
    EXPECT_EQ(p.exit_code(), 1) << p.err;
    EXPECT_NE(p.err.find("killed by signal 11"), std::string::npos) << p.err;
    EXPECT_FALSE(exists(out()));
}

TEST_F(Profile, LoadOutputThatDoesNotParseFailsAndStopsTheTarget)
{
    Proc p;
    run(p, {"profile", "--name", "t", "--target", target_bin() + " sleep 600 " + marker, "--load", "echo hello",
            "--metric",
            "throughput:([0-9]+) ops/s", "--sois", "mem-bw", "--warmup", "100", "--out", out()});
    EXPECT_EQ(p.exit_code(), 1) << p.err;
    EXPECT_NE(p.err.find("does not match"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("'hello"), std::string::npos) << "the message quotes the output: " << p.err;
    EXPECT_FALSE(exists(out()));
    EXPECT_EQ(leftovers(), 0) << "the service target was left running";
}

TEST_F(Profile, PidThatDoesNotExist)
{
    Proc p;
    run(p, {"profile", "--name", "t", "--pid", "4194303", "--metric", "command:echo 1", "--out", out()});
    EXPECT_EQ(p.exit_code(), 2) << p.err;
    EXPECT_NE(p.err.find("no such process"), std::string::npos) << p.err;
    EXPECT_FALSE(exists(out()));
}

// Long arguments are checked whole: a copy cut to a fixed buffer named another directory (an existing one) and
// dropped the end of a long --sois list. The --pid that does not exist is what the cut copies used to reach.
TEST_F(Profile, LongOutAndSoisAreCheckedWhole)
{
    const std::string out_dir = "/tmp" + std::string(1100, '/') + "nonexistent-ibench-dir/p.json";
    std::string sois;
    for (int i = 0; i < 80; i++)
        sois += "llc-cap,";
    sois += "nope";
    struct Case {
        std::vector<std::string> args;
        const char *word;
    } cases[] = {
        {{"profile", "--name", "t", "--pid", "4194303", "--metric", "command:echo 1", "--out", out_dir},
         "cannot write in its directory"},
        {{"profile", "--name", "t", "--pid", "4194303", "--metric", "command:echo 1", "--sois", sois, "--out", out()},
         "unknown SoI 'nope'"},
    };
    for (const auto &c : cases) {
        Proc p;
        run(p, c.args, 30);
        EXPECT_EQ(p.exit_code(), 2) << p.err;
        EXPECT_NE(p.err.find(c.word), std::string::npos) << p.err.substr(0, 300);
        EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << "one line";
    }
}

TEST_F(Profile, BadArgumentsExitTwoWithOneLine)
{
    const std::vector<std::vector<std::string>> bad = {
        {"profile", "--target", "true", "--metric", "runtime"},                                  // no --name
        {"profile", "--name", "t", "--metric", "runtime"},                                       // no target
        {"profile", "--name", "t", "--target", "true", "--pid", "1", "--metric", "runtime"},     // both
        {"profile", "--name", "t", "--target", "true"},                                          // no metric
        {"profile", "--name", "t", "--target", "true", "--metric", "speed"},                     // unknown metric
        {"profile", "--name", "t", "--target", "true", "--metric", "throughput"},                // no --load
        {"profile", "--name", "t", "--target", "true", "--load", "mytool", "--metric", "throughput"}, // no adapter
        {"profile", "--name", "t", "--target", "true", "--load", "x", "--metric", "latency:([0-9"},   // bad regex
        {"profile", "--name", "t", "--target", "true", "--load", "x", "--metric", "latency:[0-9]+"},  // no group
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--qos", "1.5"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--sois", "llc-cap,nope"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--target-cpus", "99"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--out", "/nonexistent/dir/p.json"},
        {"profile", "--name", "t", "--target", "true", "--load", "x", "--metric", "runtime"},
        {"profile", "--name", "t", "--pid", "1", "--metric", "cputime"},                          // cputime: batch only
        {"profile", "--name", "t", "--target", "true", "--metric", "cputime:x"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--caused-rounds", "1"}, // se 0
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--caused-rounds", "2"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--bursts", "1", "--no-bursts"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--bursts", "0.01"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--bursts", "1,1"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--bursts", "1,x"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--bursts-all", "--no-bursts"},
        {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--no-depth", "--no-flat-first"},
    };
    for (const auto &a : bad) {
        Proc p;
        run(p, a, 30);
        const std::string line = ib_test::words(a);
        EXPECT_EQ(p.exit_code(), 2) << line << "\n" << p.err;
        EXPECT_NE(p.err.find("ibench profile: "), std::string::npos) << line << "\n" << p.err;
        EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << "one line: " << p.err;
    }
}

TEST_F(Profile, IpcWithoutAPmuSaysSoAndExits77)
{
    struct stat st;
    if (stat("/sys/bus/event_source/devices/cpu", &st) == 0)
        GTEST_SKIP() << "this machine has a PMU";
    Proc p;
    run(p, {"profile", "--name", "t", "--target", "true", "--load", "true", "--metric", "ipc", "--out", out()});
    EXPECT_EQ(p.exit_code(), 77) << p.err;
    // the reason is the kernel's, for the event that could not be opened
    EXPECT_NE(p.err.find("--metric ipc: cannot count instructions: perf_event_open: "), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("no hardware PMU"), std::string::npos) << p.err;
    EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << "one line: " << p.err;
    EXPECT_FALSE(exists(out()));
    // ipc of a --pid needs the load it is measured under
    Proc q;
    run(q, {"profile", "--name", "t", "--pid", std::to_string(getpid()), "--metric", "ipc", "--out", out()});
    EXPECT_EQ(q.exit_code(), 2) << q.err;
    EXPECT_NE(q.err.find("--metric ipc counts a batch --target's run"), std::string::npos) << q.err;
}

// Ctrl-C before the first sample finished: nothing was measured, so nothing is written (a file of nothing would only
// replace what --out held), exit 130, and no child is left.
TEST_F(Profile, CtrlCBeforeTheFirstSampleWritesNothing)
{
    Proc p;
    ASSERT_TRUE(p.start({"profile", "--name", "t", "--target", target_bin() + " sleep 600 " + marker, "--metric",
                         "command:" + tagged("sleep 30; echo 7"), "--sois", "disk-bw", "--dir", dir.path(),
                         "--warmup", "0", "--out", out()},
                        env()));
    // ibench and its watchdog (a fork of it) carry the marker in their arguments, then the target and the first
    // sample's command: 4 = the first sample under way
    ASSERT_TRUE(p.pump_until([&] { return leftovers() >= 4; }, 20)) << "the first sample never started";
    kill(p.pid, SIGINT);
    ASSERT_TRUE(p.finish(30)) << p.err;
    EXPECT_EQ(p.exit_code(), 130) << p.err;
    EXPECT_NE(p.err.find("interrupted before the first sample finished; no profile written"), std::string::npos)
        << p.err;
    EXPECT_FALSE(exists(out()));
    EXPECT_EQ(leftovers(), 0) << "a child outlived ibench";
}

// A profile interrupted at a random point once a sample has finished is written with what was measured, marked
// incomplete, valid against the schema, and `ibench show` lists its missing parts; exit 130, and no child is left.
// The point: 0-3 s after the first baseline sample, anywhere in the baselines, the usage over time (1 s), disk-bw's
// search or its caused rounds (these alone take 4 s; --caused-rounds-always, since a target the kernel counts idle
// would otherwise have its caused counted in no time, and the profile could end before the stop).
TEST_F(Profile, CtrlCAtARandomPointWritesWhatWasMeasuredIncomplete)
{
    const unsigned seed = (unsigned)time(nullptr) ^ (unsigned)getpid();
    const int delay_ms = (int)(seed % 3001);
    SCOPED_TRACE("SIGINT " + std::to_string(delay_ms) + " ms after the first sample (seed " + std::to_string(seed) +
                 ")");
    Proc p;
    // progress as it goes off a terminal (a line per sample): "solo sample 2/2" says the first one finished
    ASSERT_TRUE(p.start({"profile", "--name", "t", "--target", tagged("sleep 0.05"), "--metric", "runtime", "--sois",
                         "disk-bw", "--dir", dir.path(), "--samples", "1", "--baselines", "2", "--usage-seconds", "1",
                         "--caused-rounds-always", "--out", out()},
                        {"IBENCH_CACHE_DIR=" + dir.path()}));
    ASSERT_TRUE(p.pump_until([&] { return p.err.find("solo sample 2/2") != std::string::npos; }, 60)) << p.err;
    const double until = ib_test::now_s() + delay_ms / 1000.0; // pump() returns as soon as a line arrives
    p.pump_until([&] { return ib_test::now_s() >= until; }, 10);
    ASSERT_FALSE(p.exited) << "the profile ended before the stop: " << p.err;
    kill(p.pid, SIGINT);
    ASSERT_TRUE(p.finish(30)) << p.err;
    EXPECT_EQ(p.exit_code(), 130) << p.err;
    EXPECT_NE(p.err.find("interrupted; wrote " + out() + ", incomplete:"), std::string::npos) << p.err;
    ASSERT_TRUE(exists(out())) << p.err;
    json_t *d = load_doc(out());
    ASSERT_NE(d, nullptr);
    EXPECT_TRUE(json_is_false(json_object_get(d, "complete")));
    EXPECT_GE(json_array_size(json_object_get(json_object_get(json_object_get(d, "baseline"), "before"), "samples")),
              1u);
    json_t *miss = json_object_get(d, "missing");
    ASSERT_GE(json_array_size(miss), 1u);
    for (size_t i = 0; i < json_array_size(miss); i++)
        EXPECT_NE(std::string(json_string_value(json_object_get(json_array_get(miss, i), "reason"))).find("interrupted"),
                  std::string::npos);
    json_decref(d);
    Proc schema;
    ASSERT_TRUE(schema.start_cmd({"/usr/bin/python3", IBENCH_SCHEMA_CHECK, out()}, {}));
    ASSERT_TRUE(schema.finish(60));
    EXPECT_EQ(schema.exit_code(), 0) << schema.err;
    Proc show;
    run(show, {"show", out()}, 30);
    EXPECT_EQ(show.exit_code(), 0) << show.err;
    EXPECT_NE(show.out.find("INCOMPLETE"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("missing (the profile is incomplete):"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("interrupted (SIGINT/SIGTERM)"), std::string::npos) << show.out;
    EXPECT_EQ(leftovers(), 0) << "a child outlived ibench";
}

TEST_F(Profile, ShowAndPlotRejectBadFiles)
{
    const std::string bad_json = dir.path() + "/bad.json", v2 = dir.path() + "/v2.json",
                      other = dir.path() + "/other.json";
    std::ofstream(bad_json) << "{\"format\": \"ibench-profile\", \"version\": \"1.0\", ";
    std::ofstream(v2) << "{\"format\": \"ibench-profile\", \"version\": \"2.0\", \"target\": {}, \"sois\": []}";
    std::ofstream(other) << "{\"hello\": 1}";
    struct Case {
        std::string file, says;
    } cases[] = {{bad_json, "not valid JSON"},
                 {v2, "version 2.0; this ibench reads version 1.x only"},
                 {other, "not an ibench profile"},
                 {dir.path() + "/missing.json", "No such file"}};
    for (const auto &c : cases)
        for (const char *cmd : {"show", "plot"}) {
            Proc p;
            run(p, {cmd, c.file}, 30);
            EXPECT_EQ(p.exit_code(), 2) << cmd << " " << c.file << ": " << p.err;
            EXPECT_NE(p.err.find(c.says), std::string::npos) << cmd << " " << c.file << ": " << p.err;
            EXPECT_FALSE(exists(dir.path() + "/bad.png") || exists(dir.path() + "/v2.png")) << "no chart of a bad file";
        }
}

// A real, short profile: the chase target against two SoIs, one sample per point. Checks the file's shape and that
// show and plot read it; the sensitivities themselves are validation/bench-profile's job (timing-dependent).
TEST_F(Profile, ShortRealProfileIsWrittenAndReadBack)
{
    Proc p;
    run(p, {"profile", "--name", "t", "--target", target_bin() + " chase 1048576 2000000", "--metric", "runtime",
            "--sois", "llc-cap,l1d", "--samples", "1", "--baselines", "2", "--usage-seconds", "1", "--out", out()},
        240);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    ASSERT_TRUE(exists(out()));
    json_error_t e;
    json_t *d = json_load_file(out().c_str(), 0, &e);
    ASSERT_NE(d, nullptr) << e.text;
    EXPECT_STREQ(json_string_value(json_object_get(d, "format")), "ibench-profile");
    EXPECT_STREQ(json_string_value(json_object_get(d, "version")), "1.8");
    json_t *sois = json_object_get(d, "sois");
    ASSERT_EQ(json_array_size(sois), 2u);
    int measured = 0;
    for (size_t i = 0; i < 2; i++) {
        json_t *s = json_array_get(sois, i);
        const char *name = json_string_value(json_object_get(s, "soi"));
        const char *st = json_string_value(json_object_get(s, "status"));
        if (!strcmp(name, "l1d")) { // no SMT here: skipped with the reason (the show check below relies on it)
            EXPECT_STREQ(st, "skipped");
            EXPECT_NE(std::string(json_string_value(json_object_get(s, "reason"))).find("core"), std::string::npos);
            EXPECT_EQ(json_object_get(s, "reach"), nullptr) << "l1d needs no reach check";
            continue;
        }
        // llc-cap's sharing rests on hwloc's word: a probe on the target's CPU checked it first, and the entry says
        // what it found; skipped only when the probe did not move (on this VM the vCPUs may share no LLC)
        json_t *reach = json_object_get(s, "reach");
        ASSERT_TRUE(json_is_object(reach)) << "llc-cap has no reach check";
        const char *rv = json_string_value(json_object_get(reach, "verdict"));
        ASSERT_NE(rv, nullptr);
        if (!strcmp(st, "skipped")) {
            EXPECT_STREQ(rv, "does not reach");
            double eff = json_number_value(json_object_get(reach, "effect_pct"));
            double se = json_number_value(json_object_get(reach, "se_pct"));
            EXPECT_LT(eff + 2 * se, json_number_value(json_object_get(reach, "bar_pct")));
            EXPECT_NE(std::string(json_string_value(json_object_get(s, "reason"))).find("does not reach CPU 0"),
                      std::string::npos);
            continue;
        }
        EXPECT_TRUE(!strcmp(rv, "reaches") || !strcmp(rv, "undecided") || !strcmp(rv, "unchecked")) << rv;
        ASSERT_STREQ(st, "measured");
        measured++;
        double tol = json_number_value(json_object_get(s, "tolerated"));
        EXPECT_TRUE(tol >= 0 && tol <= 100) << tol;
        // caused: the raw median of at least 3 alone/beside rounds, with its standard error and the flag
        json_t *cd = json_object_get(s, "caused_detail");
        ASSERT_TRUE(json_is_number(json_object_get(s, "caused"))) << "caused null: "
                                                                   << json_string_value(json_object_get(cd, "reason"));
        EXPECT_TRUE(json_is_number(json_object_get(cd, "se")));
        EXPECT_TRUE(json_is_boolean(json_object_get(cd, "distinguishable")));
        EXPECT_GE(json_array_size(json_object_get(cd, "rounds")), 3u);
        EXPECT_STREQ(json_string_value(json_object_get(cd, "basis")), "cpu-second");
        json_t *br = json_object_get(s, "tolerated_bracket");
        EXPECT_LE(json_number_value(json_array_get(br, 0)), tol) << "the safe end is at or below the estimate";
        EXPECT_GE(json_number_value(json_array_get(br, 1)), tol);
        EXPECT_GE(json_array_size(json_object_get(s, "curve")), 1u);
        EXPECT_TRUE(json_is_object(json_object_get(s, "confidence")));
    }
    expect_figures_follow_from_samples(d);
    json_decref(d);
    Proc schema; // the file validates against docs/schema/profile-v1.schema.json
    ASSERT_TRUE(schema.start_cmd({"/usr/bin/python3", IBENCH_SCHEMA_CHECK, out()}, {}));
    ASSERT_TRUE(schema.finish(60));
    EXPECT_EQ(schema.exit_code(), 0) << schema.err;
    Proc show;
    run(show, {"show", out()}, 30);
    EXPECT_EQ(show.exit_code(), 0) << show.err;
    EXPECT_NE(show.out.find("llc-cap"), std::string::npos);
    EXPECT_NE(show.out.find("skipped"), std::string::npos);
    Proc plot;
    run(plot, {"plot", out(), "--out", dir.path() + "/t.svg"}, 60);
    if (measured) {
        EXPECT_EQ(plot.exit_code(), 0) << plot.err;
        EXPECT_TRUE(exists(dir.path() + "/t.svg"));
    } else { // llc-cap did not reach CPU 0 this time: nothing to draw, and plot says so instead of an empty chart
        EXPECT_EQ(plot.exit_code(), 2) << plot.err;
        EXPECT_NE(plot.err.find("no measured SoI"), std::string::npos) << plot.err;
        EXPECT_FALSE(exists(dir.path() + "/t.svg"));
    }
    Proc fplot; // the drawing itself, on a recorded profile with measured SoIs
    run(fplot, {"plot", std::string(IBENCH_FIXTURES) + "/profile-memcached.json", "--out", dir.path() + "/m.svg"}, 60);
    EXPECT_EQ(fplot.exit_code(), 0) << fplot.err;
    EXPECT_TRUE(exists(dir.path() + "/m.svg"));
}

// The same on a profile whose SoI is measured whatever the host: llc-cap ramped without its reach check (on this
// VM the check may find the LLC unshared and skip it). A footprint SoI holds its bytes, so each point's achieved %
// is its intensity.
TEST_F(Profile, MeasuredFiguresFollowFromTheirSamples)
{
    Proc p;
    run(p, {"profile", "--name", "t", "--target", target_bin() + " chase 1048576 2000000", "--metric", "runtime",
            "--sois", "llc-cap", "--no-reach-check", "--samples", "1", "--baselines", "2", "--no-depth", "--out",
            out()},
        240);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    json_t *d = load_doc(out());
    ASSERT_NE(d, nullptr);
    json_t *s = json_array_get(json_object_get(d, "sois"), 0);
    ASSERT_STREQ(json_string_value(json_object_get(s, "status")), "measured");
    json_t *curve = json_object_get(s, "curve");
    ASSERT_GE(json_array_size(curve), 1u);
    for (size_t i = 0; i < json_array_size(curve); i++) {
        json_t *pt = json_array_get(curve, i);
        EXPECT_NEAR(num(pt, "achieved_pct"), num(pt, "intensity"), 1.0) << "point " << i;
        EXPECT_EQ(json_integer_value(json_object_get(pt, "samples")), 1) << "--samples 1";
    }
    expect_figures_follow_from_samples(d);
    json_decref(d);
}

// The cached LLC size is re-checked (seconds when it moved) only for a profile that uses it: any SoI of LLC scope.
TEST(ProfileLlcCheck, OnlyForSoisSizedByTheLlc)
{
    EXPECT_EQ(profile_uses_llc_size(nullptr), 1) << "all SoIs: llc-cap among them";
    EXPECT_EQ(profile_uses_llc_size("llc-cap"), 1);
    EXPECT_EQ(profile_uses_llc_size("disk-bw,llc-bw"), 1);
    EXPECT_EQ(profile_uses_llc_size("disk-bw"), 0);
    EXPECT_EQ(profile_uses_llc_size("disk-bw,disk-write,net-bw,int"), 0);
    EXPECT_EQ(profile_uses_llc_size("llc"), 0) << "a whole name, not a prefix";
}

TEST(MetricAdapter, MemcslapOutputGivesKeysPerSecond)
{
    struct metric m;
    char why[256];
    ASSERT_EQ(metric_parse(&m, "throughput", "memcslap --servers=127.0.0.1:1 --concurrency=4", why, sizeof(why)), 0)
        << why;
    const char *out = "Time to generate      20000 test keys:                0.051 seconds.\n"
                      "Time to set           20000 keys:                     1.586 seconds.\n"
                      "Time to start             4 threads:                  0.000 seconds.\n"
                      "Time to get           78402 keys by    4 threads:     1.775 seconds.\n"
                      "Time total:                                           3.413 seconds.\n";
    double v = 0;
    ASSERT_EQ(metric_read(&m, out, &v, why, sizeof(why)), 0) << why;
    EXPECT_NEAR(v, 78402 / 1.775, 0.01);
    metric_free(&m);
    ASSERT_EQ(metric_parse(&m, "latency", "/usr/bin/memcslap -s x", why, sizeof(why)), 0) << why;
    ASSERT_EQ(metric_read(&m, out, &v, why, sizeof(why)), 0) << why;
    EXPECT_NEAR(v, 1.775 / 78402, 1e-9);
    EXPECT_FALSE(m.higher_better);
    EXPECT_EQ(metric_read(&m, "connection refused\n", &v, why, sizeof(why)), -EBADMSG);
    EXPECT_NE(std::string(why).find("connection refused"), std::string::npos) << why;
    metric_free(&m);
}

// cputime: the batch target's own CPU time (its rusage, through the shell): a busy child is charged, a sleeping
// one almost nothing, whatever the wall time.
TEST_F(Profile, CputimeCountsTheTargetsOwnCpuTime)
{
    Proc p;
    run(p, {"profile", "--name", "t", "--target", target_bin() + " sleep 1", "--metric", "cputime", "--sois", "l1d",
            "--baselines", "1", "--out", out()},
        60);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    json_error_t e;
    json_t *d = json_load_file(out().c_str(), 0, &e);
    ASSERT_NE(d, nullptr) << e.text;
    double slept = json_number_value(json_object_get(json_object_get(json_object_get(d, "baseline"), "before"),
                                                     "median"));
    EXPECT_LT(slept, 0.1) << "a 1 s sleep used almost no CPU";
    EXPECT_STREQ(json_string_value(json_object_get(json_object_get(d, "metric"), "unit")), "CPU s");
    json_decref(d);
    unlink(out().c_str());
    Proc q;
    run(q, {"profile", "--name", "t", "--target", target_bin() + " chase 1048576 20000000", "--metric", "cputime",
            "--sois", "l1d", "--baselines", "1", "--out", out()},
        60);
    ASSERT_EQ(q.exit_code(), 0) << q.err;
    d = json_load_file(out().c_str(), 0, &e);
    ASSERT_NE(d, nullptr) << e.text;
    double busy = json_number_value(json_object_get(json_object_get(json_object_get(d, "baseline"), "before"),
                                                    "median"));
    EXPECT_GT(busy, 0.05) << "20 million dependent loads are charged to the target";
    json_decref(d);
}

TEST(MetricAdapter, RegexAndCommandAdapters)
{
    struct metric m;
    char why[256];
    double v = 0;
    ASSERT_EQ(metric_parse(&m, "throughput:([0-9.]+) req/s", "wrk http://x", why, sizeof(why)), 0) << why;
    ASSERT_EQ(metric_read(&m, "warmup 10 req/s\nfinal 2500.5 req/s\n", &v, why, sizeof(why)), 0) << why;
    EXPECT_DOUBLE_EQ(v, 2500.5) << "the last match counts";
    EXPECT_EQ(metric_read(&m, "final 0 req/s\n", &v, why, sizeof(why)), -EBADMSG) << "zero is not a rate";
    metric_free(&m);
    ASSERT_EQ(metric_parse(&m, "command-lower:cat /x", nullptr, why, sizeof(why)), 0) << why;
    ASSERT_EQ(metric_read(&m, "latency: 1.5e-3 s, then 7\n", &v, why, sizeof(why)), 0) << why;
    EXPECT_DOUBLE_EQ(v, 1.5e-3) << "the first number";
    EXPECT_FALSE(m.higher_better);
    EXPECT_DOUBLE_EQ(metric_rel(&m, 2.0, 1.0), 0.5);
    metric_free(&m);
}

// io-rate[:SECONDS]: a running program's own bytes per second, higher is better; counted, never read from a run
TEST(MetricAdapter, IoRateTakesItsSecondsAndIsCounted)
{
    struct metric m;
    char why[256] = "";
    double v = 0;
    ASSERT_EQ(metric_parse(&m, "io-rate", nullptr, why, sizeof(why)), 0) << why;
    EXPECT_EQ(m.kind, MK_IO_RATE);
    EXPECT_TRUE(m.higher_better);
    EXPECT_DOUBLE_EQ(m.period_s, 1.0);
    EXPECT_STREQ(m.unit, "B/s");
    EXPECT_STREQ(metric_kind_name(m.kind), "io-rate");
    EXPECT_EQ(metric_of_run(&m, "", 1000000, 0.1, &v, why, sizeof(why)), -ENOTSUP) << "counted, not read from a run";
    metric_free(&m);
    ASSERT_EQ(metric_parse(&m, "io-rate:2.5", nullptr, why, sizeof(why)), 0) << why;
    EXPECT_DOUBLE_EQ(m.period_s, 2.5);
    metric_free(&m);
    for (const char *bad : {"io-rate:0", "io-rate:", "io-rate:x", "io-rate:700", "io-rate:1s"}) {
        EXPECT_EQ(metric_parse(&m, bad, nullptr, why, sizeof(why)), -EINVAL) << bad;
        EXPECT_NE(strstr(why, "[0.1, 600]"), nullptr) << bad << ": " << why;
        metric_free(&m);
    }
}

// A program that runs until stopped is profiled by its own I/O rate: a loop of O_DIRECT writes and reads (ib_target
// disk) as a --target service, no --load. Its baseline is a rate the kernel counted (at least the 4 MiB a run moves
// each way, within a 0.3 s sample), in B/s; caused was measured by pausing the program itself (its cgroup's freezer)
// where it has a cgroup; and the program was running again after each pause (the after-baseline has a rate too).
TEST_F(Profile, IoRateProfilesAProgramThatRunsUntilStopped)
{
    const std::string loop = "while :; do " + target_bin() + " disk " + dir.path() + " 4194304 || exit 1; done";
    Proc p;
    run(p, {"profile", "--name", "w", "--target", loop, "--metric", "io-rate:0.3", "--sois", "disk-bw", "--samples", "1",
            "--baselines", "2", "--no-depth", "--dir", dir.path(), "--out", out()},
        120);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    json_error_t e;
    json_t *d = json_load_file(out().c_str(), 0, &e);
    ASSERT_NE(d, nullptr) << e.text;
    json_t *metric = json_object_get(d, "metric");
    EXPECT_STREQ(json_string_value(json_object_get(metric, "kind")), "io-rate");
    EXPECT_STREQ(json_string_value(json_object_get(metric, "unit")), "B/s");
    json_t *bl = json_object_get(d, "baseline");
    const double before = num(json_object_get(bl, "before"), "median"), after = num(json_object_get(bl, "after"),
                                                                                    "median");
    EXPECT_GT(before, 4.0 * 1048576) << "a rate the kernel counted, in bytes per second";
    EXPECT_GT(after, 4.0 * 1048576) << "the program runs again after the caused rounds paused it";
    json_t *s0 = json_array_get(json_object_get(d, "sois"), 0);
    EXPECT_STREQ(json_string_value(json_object_get(s0, "status")), "measured")
        << json_string_value(json_object_get(s0, "reason"));
    json_decref(d);
}

// The target's usage over time (profile 1.6 "usage"): a batch job that sleeps 0.3 s, then writes and reads 8 MiB
// with O_DIRECT, run in a loop for 3 s, is counted by the kernel in 100 ms windows: its writes come in bursts
// (several, each shorter than a run) with idle windows between, so its duty lies strictly between 0 and 1 and its
// level while active is above its mean; every window is kept; operations are not reported (system calls).
TEST_F(Profile, UsageOverTimeShowsABurstyWritersDutyAndBursts)
{
    const std::string job = "sleep 0.3; " + target_bin() + " disk " + dir.path() + " 8388608";
    Proc p;
    run(p, {"profile", "--name", "b", "--target", job, "--metric", "runtime", "--sois", "l1d", "--samples", "1",
            "--baselines", "1", "--no-depth", "--usage-seconds", "3", "--out", out()},
        120);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    json_t *d = load_doc(out());
    ASSERT_NE(d, nullptr);
    json_t *u = json_object_get(d, "usage");
    ASSERT_TRUE(json_is_object(u)) << "no usage in the profile";
    EXPECT_NEAR(num(u, "window_s"), 0.1, 1e-12);
    EXPECT_NEAR(num(u, "seconds"), 3.0, 0.5);
    json_t *w = nullptr, *r;
    size_t i;
    json_array_foreach(json_object_get(u, "resources"), i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        EXPECT_TRUE(strcmp(name, "read-ops") && strcmp(name, "write-ops")) << name << ": system calls, not reported";
        if (!strcmp(name, "write"))
            w = r;
    }
    ASSERT_NE(w, nullptr) << "no write bytes counted";
    const double duty = num(w, "duty"), mean = num(w, "mean"), level = num(w, "level");
    printf("write: mean %.3g B/s, duty %.2f, level %.3g B/s, %d bursts of %.2f s, gaps %.2f s\n", mean, duty, level,
           (int)json_integer_value(json_object_get(w, "bursts")), num(w, "burst_mean_s"), num(w, "gap_mean_s"));
    EXPECT_GT(duty, 0.02) << "the writes were counted";
    EXPECT_LT(duty, 0.8) << "the 0.3 s sleeps are idle windows";
    EXPECT_GT(level, mean) << "the pressure while active is above the mean";
    EXPECT_GE(json_integer_value(json_object_get(w, "bursts")), 2) << "a run about every 0.4 s";
    EXPECT_GT(mean * 3, 2 * 8388608.0) << "at least two runs' 8 MiB counted over 3 s";
    EXPECT_GE(json_array_size(json_object_get(w, "windows")), 25u);
    json_decref(d);
}

// A regex or command longer than the room kept for it is refused, not cut into a different one that still compiles
TEST(MetricAdapter, TooLongRegexOrCommandIsRefused)
{
    struct metric m;
    char why[256] = "";
    const std::string re = "throughput:([0-9.]+) req/s" + std::string(300, 'x');
    EXPECT_EQ(metric_parse(&m, re.c_str(), "wrk http://x", why, sizeof(why)), -EINVAL) << "a 326-character regex";
    EXPECT_NE(strstr(why, "too long"), nullptr) << why;
    metric_free(&m);
    const std::string cmd = "command:echo " + std::string(500, '1');
    EXPECT_EQ(metric_parse(&m, cmd.c_str(), nullptr, why, sizeof(why)), -EINVAL) << "a 505-character command";
    EXPECT_NE(strstr(why, "too long"), nullptr) << why;
    metric_free(&m);
    const std::string spec = "command:echo 1 " + std::string(600, ' ');
    EXPECT_EQ(metric_parse(&m, spec.c_str(), nullptr, why, sizeof(why)), -EINVAL) << "a 615-character --metric";
    metric_free(&m);
    // the longest that fits still works
    const std::string fits = "throughput:([0-9.]+)" + std::string(255 - 9, 'x');
    ASSERT_EQ(metric_parse(&m, fits.c_str(), "wrk http://x", why, sizeof(why)), 0) << why;
    EXPECT_EQ(strlen(m.regex), 255u);
    metric_free(&m);
}

// The tolerated search on a scripted metric: a command that prints the next value of a fixed sequence, so every
// sample (baseline, solo-before-point, beside-the-SoI) gets a known figure. The baseline's noise is 0.74 % (1.4826 x
// MAD 0.5 of 100); one solo and one beside sample give a relative a standard error of 1.31 %. A point within 2 of them
// of QoS (0.95) is measured again, whichever side it falls, and decided on all its samples; one beyond is decided at
// once. The safe end is the last point that met QoS beyond its noise.
TEST_F(Profile, PointsNearQoSAreConfirmedWhicheverSideTheyFall)
{
    // --samples 1 --baselines 3: the baseline; then per point and round: solo, beside
    const char *seq[] = {
        "100", "100.5", "99.5", // baseline: noise 0.74 %
        "100", "96",            // 25 %: 0.96, within 2 se of 0.95: measured again ...
        "100", "99",            // ... 0.975 on both rounds' samples: meets (the first reading alone would not have)
        "100", "100",           // 50 %: 1.0, meets at once
        "100", "94",            // 75 %: 0.94, uncertain ...
        "100", "93",            // ... 0.935, still ...
        "100", "92",            // ... 0.93 on three rounds: breaks
        "100", "100",           // bisection at 62.5 %: meets
        "100", "50",            // bisection at 68.75 %: 0.5, breaks at once
    };
    std::string vals = dir.path() + "/seq", ctr = dir.path() + "/n";
    {
        std::ofstream f(vals);
        for (const char *v : seq)
            f << v << "\n";
    }
    // the next line of the sequence, 100 once it runs out (caused and the last baseline)
    std::string next = "n=$(cat " + ctr + " 2>/dev/null || echo 0); echo $((n + 1)) > " + ctr +
                       "; v=$(sed -n \"$((n + 1))p\" " + vals + "); echo ${v:-100}";
    std::string script = dir.path() + "/next.sh";
    {
        std::ofstream f(script);
        f << next << "\n";
    }
    Proc p;
    run(p, {"profile", "--name", "t", "--target", tagged("sleep 600"), "--metric", "command:sh " + script, "--sois",
            "mem-bw", "--no-reach-check", "--samples", "1", "--baselines", "3", "--warmup", "0", "--no-depth", "--out",
            out()},
        240);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    json_t *d = load_doc(out());
    ASSERT_NE(d, nullptr);
    json_t *s = json_array_get(json_object_get(d, "sois"), 0);
    ASSERT_STREQ(json_string_value(json_object_get(s, "status")), "measured");
    json_t *br = json_object_get(s, "tolerated_bracket");
    EXPECT_DOUBLE_EQ(json_number_value(json_array_get(br, 0)), 62.5) << "the safe end";
    EXPECT_DOUBLE_EQ(json_number_value(json_array_get(br, 1)), 68.75);
    // the estimate: where 1.0 at 62.5 and 0.5 at 68.75 cross 0.95
    EXPECT_NEAR(json_number_value(json_object_get(s, "tolerated")), 62.5 + 6.25 * 0.05 / 0.5, 1e-9);
    EXPECT_STREQ(json_string_value(json_object_get(json_object_get(s, "reach"), "verdict")), "unchecked");
    json_t *curve = json_object_get(s, "curve");
    ASSERT_EQ(json_array_size(curve), 5u) << "25, 50, 75, 62.5, 68.75";
    const double xs[] = {25, 50, 75, 62.5, 68.75}, rel[] = {0.975, 1.0, 0.93, 1.0, 0.5};
    const int ok[] = {1, 1, 0, 1, 0}, again[] = {1, 0, 1, 0, 0}, beside[] = {2, 1, 3, 1, 1};
    for (size_t i = 0; i < 5; i++) {
        json_t *pt = json_array_get(curve, i);
        EXPECT_DOUBLE_EQ(json_number_value(json_object_get(pt, "intensity")), xs[i]) << i;
        EXPECT_NEAR(json_number_value(json_object_get(pt, "relative")), rel[i], 1e-9) << i;
        EXPECT_EQ(json_is_true(json_object_get(pt, "meets_qos")), ok[i] == 1) << i;
        EXPECT_EQ(json_is_true(json_object_get(pt, "again")), again[i] == 1) << i;
        EXPECT_EQ(json_integer_value(json_object_get(pt, "samples")), beside[i]) << i;
        EXPECT_FALSE(json_is_true(json_object_get(pt, "uncertain"))) << i << ": every point was decided";
    }
    json_decref(d);
    EXPECT_EQ(leftovers(), 0);
}

// One sample past its timeout no longer discards the profile. A batch target that hangs on its Nth run
// (a counter file; the hang is a sleep the timeout cuts short): the profile is written with everything measured,
// marked incomplete with what is missing and why, the point recorded as a bound, and the exit code is 1.
class ProfileTimeout : public Profile {
protected:
    // the target: ib_target's int mode, except on run number hang_at (0-based), which sleeps 60 s
    std::string hanging_target(int hang_at) const
    {
        const std::string ctr = dir.path() + "/runs", script = dir.path() + "/target.sh";
        std::ofstream f(script);
        f << "n=$(cat " << ctr << " 2>/dev/null || echo 0); echo $((n + 1)) > " << ctr << "\n"
          << "[ \"$n\" -eq " << hang_at << " ] && sleep 60\n"
          << "exec " << target_bin() << " int 2000000\n";
        return tagged("sh " + script);
    }
    json_t *profile_of(Proc &p, int hang_at, const std::string &sois)
    {
        // --samples 1 --baselines 2: runs 0-1 the baseline; then per point a solo run and one beside the SoI (no usage
        // over time: its loop of runs would move the count; no bursts: the timed-out point breaks QoS at 100 % too,
        // and the phases below are the search's; no flat first: the runs count from 25 %)
        // progress as it goes off a terminal: a line per sample (no IBENCH_PROGRESS=0 here)
        EXPECT_TRUE(p.start({"profile", "--name", "t", "--target", hanging_target(hang_at), "--metric", "runtime",
                             "--sois", sois, "--no-reach-check", "--samples", "1", "--baselines", "2", "--timeout", "2",
                             "--usage-seconds", "0", "--no-bursts", "--no-flat-first", "--out", out()},
                            {"IBENCH_CACHE_DIR=" + dir.path()}));
        EXPECT_TRUE(p.finish(240)) << p.err;
        EXPECT_EQ(p.exit_code(), 1) << p.err;
        EXPECT_TRUE(exists(out())) << p.err;
        return exists(out()) ? load_doc(out()) : nullptr;
    }
    void expect_schema_and_show(const char *show_says)
    {
        Proc schema;
        ASSERT_TRUE(schema.start_cmd({"/usr/bin/python3", IBENCH_SCHEMA_CHECK, out()}, {}));
        ASSERT_TRUE(schema.finish(60));
        EXPECT_EQ(schema.exit_code(), 0) << schema.err;
        Proc show;
        run(show, {"show", out()}, 30);
        EXPECT_EQ(show.exit_code(), 0) << show.err;
        EXPECT_NE(show.out.find("INCOMPLETE"), std::string::npos) << show.out;
        EXPECT_NE(show.out.find(show_says), std::string::npos) << show.out;
        EXPECT_NE(show.out.find("pressure per phase"), std::string::npos) << show.out;
    }
};

// Run 3, the first beside mem-bw at 25 %, hangs: a QoS break by at least (solo wall time / 2 s), decided (a bound is
// no noise to confirm), and the search below it, caused and the baseline after all go on.
TEST_F(ProfileTimeout, ASampleBesideTheSoIPastItsTimeoutIsABoundAndTheProfileIsWrittenIncomplete)
{
    Proc p;
    json_t *d = profile_of(p, 3, "mem-bw");
    ASSERT_NE(d, nullptr);
    EXPECT_NE(p.err.find("incomplete"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("did not finish within 2 s"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("sample 1 beside the SoI"), std::string::npos) << "a progress line per sample: " << p.err;
    EXPECT_FALSE(json_is_true(json_object_get(d, "complete")));
    EXPECT_TRUE(json_is_false(json_object_get(d, "complete")));
    EXPECT_EQ(num(json_object_get(d, "method"), "timeout_s"), 2);
    json_t *s = json_array_get(json_object_get(d, "sois"), 0);
    EXPECT_STREQ(json_string_value(json_object_get(s, "status")), "measured");
    json_t *pt = json_array_get(json_object_get(s, "curve"), 0);
    EXPECT_EQ(num(pt, "intensity"), 25);
    EXPECT_TRUE(json_is_true(json_object_get(pt, "timed_out")));
    EXPECT_TRUE(json_is_false(json_object_get(pt, "meets_qos")));
    EXPECT_GT(num(pt, "relative"), 0);
    EXPECT_LT(num(pt, "relative"), 0.5) << "a solo run takes well under 1 s, the timeout 2 s";
    // runtime, lower is better: value is the runtime that bound implies, many times the solo one (the bound uses the
    // wall time of the solo samples as the method clocks them, a little above the metric's: it errs loose, not tight)
    EXPECT_NEAR(num(pt, "relative"), num(pt, "solo") / num(pt, "value"), 1e-9);
    EXPECT_GT(num(pt, "value"), 2 * num(pt, "solo"));
    json_t *next = json_array_get(json_object_get(s, "curve"), 1);
    EXPECT_EQ(num(next, "intensity"), 12.5) << "the bisection goes on below the bound";
    EXPECT_LE(json_number_value(json_array_get(json_object_get(s, "tolerated_bracket"), 1)), 25) << "the bound closes the bracket";
    EXPECT_TRUE(json_is_number(json_object_get(s, "caused"))) << "caused is still measured";
    json_t *miss = json_object_get(d, "missing");
    ASSERT_EQ(json_array_size(miss), 1u);
    json_t *m0 = json_array_get(miss, 0);
    EXPECT_STREQ(json_string_value(json_object_get(m0, "phase")), "tolerated");
    EXPECT_STREQ(json_string_value(json_object_get(m0, "soi")), "mem-bw");
    EXPECT_EQ(num(m0, "intensity"), 25);
    EXPECT_NE(std::string(json_string_value(json_object_get(m0, "reason"))).find("a bound"), std::string::npos);
    EXPECT_EQ(json_array_size(json_object_get(json_object_get(json_object_get(d, "baseline"), "after"), "samples")), 2u);
    // the pressure of every phase, in order
    json_t *ph = json_object_get(d, "phases");
    const char *want[] = {"baseline before", "tolerated", "caused", "baseline after"};
    ASSERT_EQ(json_array_size(ph), 4u);
    for (size_t i = 0; i < 4; i++) {
        json_t *e = json_array_get(ph, i);
        EXPECT_STREQ(json_string_value(json_object_get(e, "phase")), want[i]);
        EXPECT_GT(num(e, "wall_s"), 0);
        EXPECT_TRUE(json_is_number(json_object_get(e, "io_some_pct"))) << "PSI is present on this machine";
        EXPECT_TRUE(json_is_boolean(json_object_get(e, "disturbed")));
    }
    json_decref(d);
    expect_schema_and_show("25:<=");
    EXPECT_EQ(leftovers(), 0);
}

// Run 2, the solo run before the first point, hangs: not the SoI's doing, and nothing after it would be comparable.
// The SoI is incomplete, the next one not measured, no baseline after; the baseline before is kept.
TEST_F(ProfileTimeout, ASoloSamplePastItsTimeoutStopsTheMeasuringAndKeepsWhatWasMeasured)
{
    Proc p;
    json_t *d = profile_of(p, 2, "mem-bw,llc-cap");
    ASSERT_NE(d, nullptr);
    EXPECT_TRUE(json_is_false(json_object_get(d, "complete")));
    json_t *sois = json_object_get(d, "sois");
    ASSERT_EQ(json_array_size(sois), 2u);
    for (size_t i = 0; i < 2; i++)
        EXPECT_STREQ(json_string_value(json_object_get(json_array_get(sois, i), "status")), "incomplete") << i;
    EXPECT_NE(std::string(json_string_value(json_object_get(json_array_get(sois, 1), "reason"))).find("not measured"),
              std::string::npos);
    json_t *bl = json_object_get(d, "baseline");
    EXPECT_EQ(json_array_size(json_object_get(json_object_get(bl, "before"), "samples")), 2u);
    EXPECT_EQ(json_object_get(bl, "after"), nullptr) << "not measured, not invented";
    json_t *miss = json_object_get(d, "missing");
    ASSERT_EQ(json_array_size(miss), 3u) << "mem-bw cut short, llc-cap not measured, no baseline after";
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(miss, 2), "phase")), "baseline after");
    json_decref(d);
    expect_schema_and_show("INCOMPLETE: tolerated cut short at 25 %");
    EXPECT_EQ(leftovers(), 0);
}

// The case of the issue: the very first sample (the baseline's) does not finish. Nothing is measured, and the profile
// says so: no baseline figure, every SoI "not measured", what is missing and why, and the pressure of the baseline.
TEST_F(ProfileTimeout, TheFirstSamplePastItsTimeoutWritesAProfileOfWhatIsMissing)
{
    Proc p;
    json_t *d = profile_of(p, 0, "mem-bw");
    ASSERT_NE(d, nullptr);
    EXPECT_TRUE(json_is_false(json_object_get(d, "complete")));
    json_t *bl = json_object_get(d, "baseline");
    EXPECT_EQ(json_object_size(bl), 0u) << "no figure is invented";
    json_t *miss = json_object_get(d, "missing");
    ASSERT_EQ(json_array_size(miss), 3u) << "baseline before, mem-bw, baseline after";
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(miss, 0), "phase")), "baseline before");
    EXPECT_NE(std::string(json_string_value(json_object_get(json_array_get(miss, 0), "reason")))
                  .find("did not finish within 2 s"),
              std::string::npos);
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(json_object_get(d, "sois"), 0), "status")),
                 "incomplete");
    json_t *ph = json_object_get(d, "phases");
    ASSERT_EQ(json_array_size(ph), 1u);
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(ph, 0), "phase")), "baseline before");
    json_decref(d);
    expect_schema_and_show("not measured: the profile stopped before it");
    EXPECT_EQ(leftovers(), 0);
}

TEST(ProfileReach, VerdictRule)
{
    // bar 2.5 % (QoS 0.95): clearly nothing, clearly something, and the noisy middle
    EXPECT_STREQ(profile_reach_verdict(0.4, 0.9, 2.5), "does not reach");
    EXPECT_STREQ(profile_reach_verdict(-3.0, 1.0, 2.5), "does not reach");
    EXPECT_STREQ(profile_reach_verdict(43.0, 6.3, 2.5), "reaches");
    EXPECT_STREQ(profile_reach_verdict(10.0, 4.6, 2.5), "reaches");
    EXPECT_STREQ(profile_reach_verdict(1.2, 2.2, 2.5), "undecided") << "small effect, too noisy to rule out";
    EXPECT_STREQ(profile_reach_verdict(4.0, 2.5, 2.5), "undecided") << "large effect, too noisy to confirm";
    EXPECT_STREQ(profile_reach_verdict(NAN, 1.0, 2.5), "undecided");
    EXPECT_STREQ(profile_reach_verdict(INFINITY, 0, 2.5), "undecided") << "a starved probe is not a figure";
}

TEST(Stats, RobustStandardErrorOfTheMedian)
{
    double a[] = {1, 2, 3, 4, 5}; // deviations 2 1 0 1 2: MAD 1
    EXPECT_NEAR(ib_median_rse(a, 5, 3), 1.2533 * 1.4826 / std::sqrt(5.0), 1e-9);
    double b[] = {1, 1, 1, 1, 100}; // one wild value: MAD 0
    EXPECT_DOUBLE_EQ(ib_median_rse(b, 5, 1), 0);
    double c[] = {7};
    EXPECT_DOUBLE_EQ(ib_median_rse(c, 1, 7), 0);
}

// One table says which probe checks which SoI (validation/vprobe.c): validate's ramps and profile's reach check both
// read it, so every registered SoI must have an entry, and reach is checked exactly where sharing rests on which
// CPUs hwloc groups under a cache or memory path.
TEST(ProfileReach, EverySoiHasAProbeMapEntry)
{
    for (unsigned i = 0; i < soi_count(); i++) {
        const struct soi_ops *ops = soi_at(i);
        const struct vprobe_map *vm = vprobe_map_of(ops->name);
        ASSERT_NE(vm, nullptr) << ops->name;
        if (vm->placed) {
            EXPECT_NE(vm->probe, nullptr) << ops->name;
            EXPECT_TRUE(vm->where == TOPO_SCOPE_LLC || vm->where == TOPO_SCOPE_NUMA) << ops->name;
        }
    }
    EXPECT_EQ(vprobe_map_of("no-such-soi"), nullptr);
}
