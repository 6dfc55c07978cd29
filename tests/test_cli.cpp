// test_cli.cpp - `ibench run` argument parsing (cli_parse_run, no machine needed), and the real ibench binary
// (IBENCH_BIN) run through fork/exec: exit codes, one-line errors, list/help, JSON and CSV output of a short
// ramp, and Ctrl-C / SIGTERM delivered as real signals in the middle of a ramp.
//
// Every child gets a fresh IBENCH_CACHE_DIR, so nothing touches ~/.cache or depends on an earlier calibration, and
// every wait is bounded: a hung child is killed and the test fails.
#include <gtest/gtest.h>
#include <jansson.h>

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "target.h"
#include "soi.h"
#include "ib_err.h"
#include "test_support.h"

extern char **environ;

namespace {

constexpr uint64_t kMs = 1000000ULL;
constexpr uint64_t kSec = 1000000000ULL;

// ---- cli_parse_run ------------------------------------------------------------------------------------------------

struct Parsed {
    int rc = 0;
    struct run_opts o;
    char why[512] = "";
    std::vector<std::string> store;
    std::vector<char *> argv;
    explicit Parsed(std::initializer_list<const char *> args)
    {
        store.emplace_back("run");
        for (const char *a : args)
            store.emplace_back(a);
        for (auto &s : store)
            argv.push_back(&s[0]);
        argv.push_back(nullptr);
        rc = cli_parse_run((int)store.size(), argv.data(), &o, why, sizeof why);
    }
    ~Parsed() { cli_free_run(&o); }
};

// Expects -EINVAL and a reason containing every one of `words`.
void expect_error(std::initializer_list<const char *> args, std::initializer_list<const char *> words)
{
    Parsed p(args);
    std::string cmd = "run";
    for (const char *a : args)
        cmd += std::string(" '") + a + "'";
    EXPECT_EQ(p.rc, -EINVAL) << cmd;
    EXPECT_NE(p.why[0], 0) << cmd;
    EXPECT_EQ(strchr(p.why, '\n'), nullptr) << "one line: " << p.why;
    for (const char *w : words)
        EXPECT_NE(strstr(p.why, w), nullptr) << cmd << " -> \"" << p.why << "\" should name " << w;
}

}  // namespace

// A target inherits stdin, stdout and stderr and nothing of ibench's: every descriptor ibench opens is O_CLOEXEC.
TEST(CliTarget, InheritsNoStrayDescriptor)
{
    std::vector<int> ours;  // what the test process itself passes on (ctest, a shell may leave some)
    for (int fd = 3; fd < 1024; fd++) {
        int fl = fcntl(fd, F_GETFD);
        if (fl >= 0 && !(fl & FD_CLOEXEC))
            ours.push_back(fd);
    }
    char *out = nullptr, why[256] = "";
    int status = -1;
    uint64_t wall = 0;
    ASSERT_EQ(child_run("ls /proc/$$/fd", nullptr, 0, 10000, nullptr, &out, &status, &wall, nullptr, why, sizeof why),
              0)
        << why;
    EXPECT_EQ(status, 0);
    std::istringstream in(out);
    free(out);
    int fd;
    unsigned n = 0;
    while (in >> fd) {
        n++;
        if (fd > 2) {
            EXPECT_NE(std::find(ours.begin(), ours.end(), fd), ours.end()) << "the target inherited fd " << fd;
        }
    }
    EXPECT_GE(n, 3u) << "the listing holds at least stdin, stdout and stderr";
}

// Restoring puts back what install replaced, once; without an install it changes nothing (an ignored SIGINT, as a
// shell's background job has, stays ignored instead of becoming the default).
TEST(CliSignals, RestoreIsANoOpUnlessInstalled)
{
    struct sigaction ign = {}, prev_int = {}, prev_term = {}, now = {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    ASSERT_EQ(sigaction(SIGINT, &ign, &prev_int), 0);
    ASSERT_EQ(sigaction(SIGTERM, &ign, &prev_term), 0);
    cli_signals_restore();  // never installed
    sigaction(SIGINT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN) << "restore without install replaced SIGINT's disposition";
    sigaction(SIGTERM, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN) << "restore without install replaced SIGTERM's disposition";
    cli_signals_install();
    sigaction(SIGINT, nullptr, &now);
    EXPECT_NE(now.sa_handler, SIG_IGN) << "installed";
    cli_signals_restore();
    sigaction(SIGINT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN) << "restored";
    sigaction(SIGINT, &prev_int, nullptr);
    sigaction(SIGTERM, &prev_term, nullptr);
}

TEST(CliParse, Defaults)
{
    Parsed p({"--soi", "llc-cap", "--ramp"});
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_STREQ(p.o.soi, "llc-cap");
    EXPECT_EQ(p.o.ramp, 1);
    EXPECT_EQ(p.o.have_intensity, 0);
    EXPECT_EQ(p.o.steps, 11u);
    EXPECT_EQ(p.o.from, 0.0);
    EXPECT_EQ(p.o.to, 100.0);
    EXPECT_EQ(p.o.step_ns, 300 * kMs);
    EXPECT_EQ(p.o.duration_ns, 2 * kSec);
    EXPECT_EQ(p.o.threads, 1u);
    EXPECT_EQ(p.o.have_threads, 0);
    EXPECT_EQ(p.o.have_near, 0);
    EXPECT_EQ(p.o.near, -1);
    EXPECT_EQ(p.o.ncpus, 0u);
    EXPECT_EQ(p.o.cpus, nullptr);
    EXPECT_EQ(p.o.nlevels, 0u);
    EXPECT_EQ(p.o.nparams, 0u);
    EXPECT_EQ(p.o.have_fmt, 0);
    EXPECT_EQ(p.o.cached_capacity, 0);
    EXPECT_EQ(p.o.help, 0);
    EXPECT_EQ(p.o.topology, nullptr);
}

TEST(CliParse, RampOptions)
{
    {
        Parsed p({"--soi", "mem-bw", "--ramp", "--from", "10", "--to", "90%", "--steps", "5", "--step-ms", "500"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.from, 10.0);
        EXPECT_EQ(p.o.to, 90.0);
        EXPECT_EQ(p.o.steps, 5u);
        EXPECT_EQ(p.o.step_ns, 500 * kMs) << "a bare --step-ms is milliseconds";
        EXPECT_TRUE(p.o.have_from && p.o.have_to && p.o.have_steps && p.o.have_step);
    }
    {
        Parsed p({"--soi", "mem-bw", "--ramp", "--step-ms", "0.5s"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.step_ns, 500 * kMs);
    }
    {
        Parsed p({"--soi", "mem-bw", "--ramp", "--step-ms", "250ms"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.step_ns, 250 * kMs);
    }
    {
        Parsed p({"--soi", "mem-bw", "--ramp", "--step-ms", "1.5"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.step_ns, 1500000u);
    }
    {
        Parsed p({"-s", "tlb", "-r", "--from", "100", "--to", "0"});  // descending, short options
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_STREQ(p.o.soi, "tlb");
        EXPECT_EQ(p.o.from, 100.0);
        EXPECT_EQ(p.o.to, 0.0);
    }
    {
        Parsed p({"--soi", "tlb", "--ramp", "--from", "50", "--to", "50", "--steps", "1"});  // one step is fine
        EXPECT_EQ(p.rc, 0) << p.why;
    }
}

TEST(CliParse, HoldLevelsPlacementParamsFormats)
{
    {
        Parsed p({"--soi", "l1d", "--intensity", "37.5%", "--duration", "1.5"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.have_intensity, 1);
        EXPECT_EQ(p.o.intensity, 37.5);
        EXPECT_EQ(p.o.duration_ns, 1500 * kMs);
        EXPECT_EQ(p.o.ramp, 0);
    }
    {
        Parsed p({"--soi", "l1d", "-i", "0", "-d", "500ms"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.intensity, 0.0);
        EXPECT_EQ(p.o.duration_ns, 500 * kMs);
    }
    {
        Parsed p({"--soi", "l1d", "--levels", "0,50,100", "--step-ms", "20"});
        ASSERT_EQ(p.rc, 0) << p.why;
        ASSERT_EQ(p.o.nlevels, 3u);
        EXPECT_EQ(p.o.levels[0], 0.0);
        EXPECT_EQ(p.o.levels[1], 50.0);
        EXPECT_EQ(p.o.levels[2], 100.0);
        EXPECT_EQ(p.o.step_ns, 20 * kMs);
    }
    {
        Parsed p({"--soi", "llc-cap", "--ramp", "--cpus", "0-1"});
        ASSERT_EQ(p.rc, 0) << p.why;
        ASSERT_EQ(p.o.ncpus, 2u);
        EXPECT_EQ(p.o.cpus[0], 0);
        EXPECT_EQ(p.o.cpus[1], 1);
        EXPECT_EQ(p.o.have_threads, 0);
    }
    {
        Parsed p({"--soi", "llc-cap", "--ramp", "--cpus", "5,1-2", "--threads", "6"});
        ASSERT_EQ(p.rc, 0) << p.why;
        ASSERT_EQ(p.o.ncpus, 3u);  // sorted
        EXPECT_EQ(p.o.cpus[0], 1);
        EXPECT_EQ(p.o.cpus[2], 5);
        EXPECT_EQ(p.o.threads, 6u);
        EXPECT_EQ(p.o.have_threads, 1);
    }
    {
        Parsed p({"--soi", "l2-cap", "--ramp", "--near", "1", "-t", "2"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.have_near, 1);
        EXPECT_EQ(p.o.near, 1);
        EXPECT_EQ(p.o.threads, 2u);
    }
    {
        Parsed p({"--soi", "llc-cap", "--ramp", "-P", "chains=4", "--param", "sweep=off", "--max-bytes", "64M"});
        ASSERT_EQ(p.rc, 0) << p.why;
        ASSERT_EQ(p.o.nparams, 3u);
        EXPECT_STREQ(p.o.pname[0], "chains");
        EXPECT_STREQ(p.o.pvalue[0], "4");
        EXPECT_STREQ(p.o.pname[1], "sweep");
        EXPECT_STREQ(p.o.pvalue[1], "off");
        EXPECT_STREQ(p.o.pname[2], "max-bytes");
        EXPECT_STREQ(p.o.pvalue[2], "64M");
    }
    {
        Parsed p({"--soi", "l1d", "--ramp", "--json"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.have_fmt, 1);
        EXPECT_EQ(p.o.fmt, OUT_JSON);
    }
    {
        Parsed p({"--soi", "l1d", "--ramp", "--csv"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.fmt, OUT_CSV);
    }
    {
        Parsed p({"--soi", "mem-bw", "--ramp", "--cached-capacity"});
        ASSERT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.cached_capacity, 1);
    }
    {
        Parsed p({"--help"});  // help needs nothing else
        EXPECT_EQ(p.rc, 0) << p.why;
        EXPECT_EQ(p.o.help, 1);
    }
}

TEST(CliParse, MissingSoiOrMode)
{
    expect_error({"--ramp"}, {"--soi"});
    expect_error({}, {"--soi"});
    expect_error({"--soi", "l1d"}, {"--intensity", "--ramp", "--levels"});
}

TEST(CliParse, ContradictoryModes)
{
    expect_error({"--soi", "l1d", "--intensity", "50", "--ramp"}, {"--intensity", "--ramp", "exclude"});
    expect_error({"--soi", "l1d", "--levels", "0,100", "--ramp"}, {"exclude"});
    expect_error({"--soi", "l1d", "--from", "10", "--intensity", "5"}, {"--from", "--ramp"});
    expect_error({"--soi", "l1d", "--levels", "0,100", "--steps", "3"}, {"--steps", "--ramp"});
    expect_error({"--soi", "l1d", "--ramp", "--duration", "2"}, {"--duration"});
    expect_error({"--soi", "l1d", "--intensity", "5", "--step-ms", "100"}, {"--step-ms"});
    expect_error({"--soi", "l1d", "--ramp", "--cpus", "0", "--near", "1"}, {"--cpus", "--near"});
    expect_error({"--soi", "l1d", "--ramp", "--json", "--csv"}, {"--json", "--csv"});
    expect_error({"--soi", "l1d", "--ramp", "--csv", "--table"}, {"--table"});
    expect_error({"--soi", "l1d", "--ramp", "--from", "30", "--to", "30"}, {"--from", "--to"});
}

TEST(CliParse, BadIntensities)
{
    for (const char *bad : {"150", "-5", "abc", "", "100.5", "50%%", "nan", "1e3"}) {
        SCOPED_TRACE(bad);
        expect_error({"--soi", "l1d", "--intensity", bad}, {"intensity", ("'" + std::string(bad) + "'").c_str()});
    }
    expect_error({"--soi", "l1d", "--ramp", "--from", "-1"}, {"--from", "'-1'"});
    expect_error({"--soi", "l1d", "--ramp", "--to", "101"}, {"--to", "'101'"});
    expect_error({"--soi", "l1d", "--levels", "0,abc,100"}, {"--levels", "0,abc,100"});
    expect_error({"--soi", "l1d", "--levels", "0,200"}, {"--levels"});
}

TEST(CliParse, BadNumbers)
{
    expect_error({"--soi", "l1d", "--ramp", "--threads", "0"}, {"--threads", "'0'"});
    expect_error({"--soi", "l1d", "--ramp", "--threads", "100000"}, {"--threads", "'100000'", "256"});
    expect_error({"--soi", "l1d", "--ramp", "--threads", "two"}, {"--threads"});
    expect_error({"--soi", "l1d", "--ramp", "--steps", "0"}, {"--steps", "'0'"});
    expect_error({"--soi", "l1d", "--ramp", "--steps", "10001"}, {"--steps"});
    expect_error({"--soi", "l1d", "--ramp", "--step-ms", "0"}, {"--step-ms", "'0'"});
    expect_error({"--soi", "l1d", "--ramp", "--step-ms", "-5"}, {"--step-ms"});
    expect_error({"--soi", "l1d", "--ramp", "--step-ms", "fast"}, {"--step-ms", "'fast'"});
    expect_error({"--soi", "l1d", "--intensity", "5", "--duration", "0"}, {"--duration"});
    expect_error({"--soi", "l1d", "--intensity", "5", "--duration", "soon"}, {"--duration", "'soon'"});
    expect_error({"--soi", "l1d", "--ramp", "--cpus", "x"}, {"--cpus", "'x'"});
    expect_error({"--soi", "l1d", "--ramp", "--near", "abc"}, {"--near", "'abc'"});
    expect_error({"--soi", "l1d", "--ramp", "--near", "-1"}, {"--near"});
    expect_error({"--soi", "l1d", "--ramp", "-P", "chains"}, {"NAME=VALUE"});
    expect_error({"--soi", "l1d", "--ramp", "-P", "=4"}, {"NAME=VALUE"});
    expect_error({"--soi", "l1d", "--ramp", "-P", "chains="}, {"NAME=VALUE"});
    expect_error({"--soi", "int", "--ramp", "--quantum", "0"}, {"--quantum", "'0'", "20us"});
    expect_error({"--soi", "int", "--ramp", "--quantum", "19us"}, {"--quantum", "'19us'"});
    expect_error({"--soi", "int", "--ramp", "--quantum", "101ms"}, {"--quantum", "100ms"});
    expect_error({"--soi", "int", "--ramp", "--quantum", "soon"}, {"--quantum", "'soon'"});
    expect_error({"--soi", "int", "--ramp", "--quantum", "2ms", "--quantum", "3ms"}, {"--quantum", "twice"});
    Parsed q({"--soi", "int", "--ramp", "--quantum", "2.5ms"});
    EXPECT_EQ(q.rc, 0) << q.why;
    EXPECT_EQ(q.o.quantum_ns, 2500000u);
}

TEST(CliParse, UnknownRepeatedAndStray)
{
    expect_error({"--soi", "l1d", "--ramp", "--bogus"}, {"unknown option", "--bogus"});
    expect_error({"--soi", "l1d", "--ramp", "-x"}, {"unknown option", "-x"});
    expect_error({"--soi", "l1d", "--soi", "l2-cap", "--ramp"}, {"--soi", "twice"});
    expect_error({"--soi", "l1d", "--ramp", "--ramp"}, {"--ramp", "twice"});
    expect_error({"--soi", "l1d", "--ramp", "--steps", "3", "--steps", "4"}, {"--steps", "twice"});
    expect_error({"--soi", "l1d", "--intensity", "3", "-i", "4"}, {"--intensity", "twice"});
    expect_error({"--soi", "l1d", "--ramp", "--cpus", "0", "--cpus", "1"}, {"--cpus", "twice"});
    expect_error({"--soi", "l1d", "--ramp", "extra"}, {"unexpected argument", "'extra'"});
    expect_error({"extra", "--soi", "l1d", "--ramp"}, {"'extra'"});
    expect_error({"--ramp", "--soi"}, {"--soi", "needs a value"});
    expect_error({"--soi", "l1d", "--ramp", "--steps"}, {"--steps", "needs a value"});
    // an argument holding a newline or another control character is still named on one line (found by fuzz_cli)
    expect_error({"--soi", "l1d", "--ramp", "ex\ntra"}, {"unexpected argument", "'ex?tra'"});
    expect_error({"--soi", "l1d", "--ramp", "--steps", "a\r\nb"}, {"--steps", "a??b"});
}

// One mapping from a lower layer's error to the exit code, for every command; a failure the lower layer marked as
// the user's input (soi_bad_input) is bad input whatever its real errno, except an interruption.
TEST(CliExit, EveryErrorHasItsCode)
{
    EXPECT_EQ(cli_exit_for(0, 0), IB_EXIT_OK);
    EXPECT_EQ(cli_exit_for(-EINVAL, 0), IB_EXIT_USAGE);
    EXPECT_EQ(cli_exit_for(-ERANGE, 0), IB_EXIT_USAGE);
    EXPECT_EQ(cli_exit_for(-E2BIG, 0), IB_EXIT_USAGE);
    EXPECT_EQ(cli_exit_for(-ENAMETOOLONG, 0), IB_EXIT_USAGE);
    EXPECT_EQ(cli_exit_for(-ENOTSUP, 0), IB_EXIT_SKIP);
    EXPECT_EQ(cli_exit_for(-EINTR, 0), IB_EXIT_INTR);
    for (int e : {ENOMEM, EIO, ECHILD, ENOENT, EACCES, ENOSPC, ECONNREFUSED}) {
        EXPECT_EQ(cli_exit_for(-e, 0), IB_EXIT_FAIL) << strerror(e);
        EXPECT_EQ(cli_exit_for(-e, 1), IB_EXIT_USAGE) << strerror(e) << ", marked as bad input";
    }
    EXPECT_EQ(cli_exit_for(-EINTR, 1), IB_EXIT_INTR) << "an interruption stays one";
    EXPECT_EQ(cli_exit_for(0, 1), IB_EXIT_OK) << "no failure, no mark";
    EXPECT_EQ(IB_EXIT_USAGE, 2);
    EXPECT_EQ(IB_EXIT_SKIP, 77);
    EXPECT_EQ(IB_EXIT_INTR, 130);
}

// The parser can be called again and again (getopt is re-initialised each time).
TEST(CliParse, Reentrant)
{
    for (int i = 0; i < 3; i++) {
        Parsed bad({"--soi", "l1d", "--ramp", "--bogus"});
        EXPECT_EQ(bad.rc, -EINVAL);
        Parsed good({"--soi", "l1d", "--ramp", "--steps", "4"});
        EXPECT_EQ(good.rc, 0) << good.why;
        EXPECT_EQ(good.o.steps, 4u);
    }
}

// ---- the binary -----------------------------------------------------------------------------------------------------

namespace {


unsigned count_char(const std::string &s, char c)
{
    unsigned n = 0;
    for (char x : s)
        n += x == c;
    return n;
}

std::vector<std::string> split_lines(const std::string &s)
{
    std::vector<std::string> v;
    std::istringstream in(s);
    std::string l;
    while (std::getline(in, l))
        v.push_back(l);
    return v;
}

using ib_test::now_s;
using ib_test::Proc;

class Bin : public ::testing::Test {
protected:
    ib_test::TempDir dir{"cli"};
    const std::string &cache = dir.path();
    void SetUp() override { ASSERT_FALSE(cache.empty()) << "mkdtemp failed"; }
    std::vector<std::string> env(bool progress = false) const
    {
        return {"IBENCH_CACHE_DIR=" + cache, std::string("IBENCH_PROGRESS=") + (progress ? "1" : "0")};
    }
    // Runs ibench to completion (bounded by timeout_s); the result is in p.
    void run(Proc &p, const std::vector<std::string> &args, double timeout_s = 60)
    {
        ASSERT_TRUE(p.start(args, env()));
        ASSERT_TRUE(p.finish(timeout_s)) << "ibench did not finish within " << timeout_s << " s; stderr: " << p.err;
    }
    unsigned cache_files() const
    {
        unsigned n = 0;
        DIR *d = opendir(cache.c_str());
        if (!d)
            return 0;
        while (struct dirent *e = readdir(d)) {  // cache files; calib-<fp>.lock beside each is their lock
            size_t len = strlen(e->d_name);
            n += e->d_name[0] != '.' && len > 5 && !strcmp(e->d_name + len - 5, ".json");
        }
        closedir(d);
        return n;
    }
    // Bad input: exit 2, nothing on stdout, exactly one line on stderr that contains every word.
    void expect_usage_error(const std::vector<std::string> &args, std::initializer_list<const char *> words)
    {
        std::string cmd = "ibench";
        for (const auto &a : args)
            cmd += " " + a;
        SCOPED_TRACE(cmd);
        Proc p;
        run(p, args, 30);
        EXPECT_EQ(p.exit_code(), IB_EXIT_USAGE) << p.err;
        EXPECT_EQ(p.out, "");
        EXPECT_EQ(count_char(p.err, '\n'), 1u) << "exactly one line: [" << p.err << "]";
        EXPECT_FALSE(p.err.empty());
        if (!p.err.empty()) {
            EXPECT_EQ(p.err.back(), '\n');
        }
        for (const char *w : words)
            EXPECT_NE(p.err.find(w), std::string::npos) << "[" << p.err << "] should name " << w;
    }
};

json_t *parse_json(const std::string &s)
{
    json_error_t e;
    json_t *doc = json_loads(s.c_str(), 0, &e);
    EXPECT_NE(doc, nullptr) << e.text << " at line " << e.line << " in: " << s.substr(0, 2000);
    return doc;
}

}  // namespace

TEST_F(Bin, BadInputExitsTwoWithOneLine)
{
    expect_usage_error({"run", "--soi", "nope", "--ramp"}, {"ibench run", "unknown SoI", "'nope'"});
    expect_usage_error({"run", "--soi", "l1d", "--intensity", "101"}, {"intensity", "'101'"});
    expect_usage_error({"run", "--soi", "l1d", "--intensity", "x"}, {"intensity", "'x'"});
    expect_usage_error({"run", "--soi", "l1d", "--ramp", "--cpus", "4096"}, {"CPU 4096", "does not exist"});
    expect_usage_error({"run", "--soi", "l1d", "--ramp", "--near", "999"}, {"--near", "999", "does not exist"});
    expect_usage_error({"run", "--soi", "l1d", "--ramp", "--intensity", "50"}, {"exclude"});
    expect_usage_error({"run", "--soi", "l1d", "--ramp", "--cpus", "0", "--near", "0"}, {"--cpus", "--near"});
    expect_usage_error({"run", "--soi", "llc-cap", "--ramp", "--param", "nope=1"}, {"llc-cap", "'nope'"});
    expect_usage_error({"run", "--soi", "llc-cap", "--ramp", "-P", "chains=99"}, {"chains", "outside"});
    expect_usage_error({"run", "--soi", "llc-cap", "--ramp", "-P", "sweep=maybe"}, {"sweep", "'maybe'"});
    expect_usage_error({"run", "--soi", "disk-bw", "--ramp", "--rw", "2"}, {"rw", "'2'", "read|write|mix"});
    expect_usage_error({"run", "--soi", "simd", "--ramp", "-P", "isa=avx9"}, {"isa", "auto|sse|avx2|avx512"});
    expect_usage_error({"run", "--soi", "mem-cap", "--intensity", "10", "--max-bytes", "100T"},
                       {"mem-cap", "max-bytes", "100 TiB", "spare"});
    expect_usage_error({"run", "--soi", "mem-cap", "--intensity", "10", "--max-bytes", "lots"}, {"'lots'"});
    expect_usage_error({"run", "--soi", "l1d", "--ramp", "stray"}, {"'stray'"});
    expect_usage_error({"run", "--soi", "interconnect", "--intensity", "10", "--threads", "1"},
                       {"interconnect", "at least 2 threads"});
    expect_usage_error({"run", "--soi", "interconnect", "--intensity", "10", "--cpus", "0"},
                       {"interconnect", "at least 2 threads"});
    expect_usage_error({"run", "--soi", "l1d", "--intensity", "5", "--quantum", "2ms"}, {"--quantum", "duty", "l1d"});
    expect_usage_error({"frobnicate"}, {"unknown command", "'frobnicate'"});
    expect_usage_error({"probe", "nope"}, {"unknown probe", "'nope'"});
    expect_usage_error({"validate", "--soi", "nope"}, {"validate", "unknown SoI", "'nope'"});
    expect_usage_error({"validate", "--plot", "/nonexistent-ibench-dir"}, {"--plot", "writable directory"});
    expect_usage_error({"validate", "stray"}, {"'stray'"});
    expect_usage_error({"validate", "--fail-on", "bussy"}, {"--fail-on", "'bussy'", "busy, isolated, unchecked"});
    expect_usage_error({"validate", "--fail-on", ","}, {"--fail-on", "'' is not busy"});
    expect_usage_error({"probe", "chase-llc"}, {"chase-llc", "--beside"});
    expect_usage_error({"probe", "chase", "--bytes", "1"}, {"--bytes", "'1'"});
    expect_usage_error({"probe", "pingpong", "--cpus", "0"}, {"--cpus", "'0'"});
    expect_usage_error({"probe", "chase", "--cpu", "4096"}, {"CPU 4096", "does not exist"});
    expect_usage_error({"probe", "chase", "--beside", "nope"}, {"unknown SoI", "'nope'"});
    expect_usage_error({"probe", "triad", "--beside", "int"}, {"--beside", "chase"});
    expect_usage_error({"probe", "chase", "--soi-cpus", "1"}, {"--soi-cpus", "--beside"});
    expect_usage_error({"probe", "chase", "--beside", "int", "--step-ms", "20", "--settle-ms", "30"}, {"--settle-ms"});
    expect_usage_error({"probe", "chase", "--beside", "int", "--level", "0"}, {"--level"});
    expect_usage_error({"probe", "chase", "--beside", "interconnect", "--soi-cpus", "0"},
                       {"interconnect", "at least 2"});
    // sizes that reach an allocation: refused against the memory the machine can spare, never a crash
    expect_usage_error({"probe", "triad", "--bytes", "18446744073709551615"}, {"--bytes", "spare"});
    expect_usage_error({"probe", "chase", "--bytes", "18446744073709551615"}, {"--bytes", "spare"});
    expect_usage_error({"probe", "triad", "--bytes", "6148914691236517888"}, {"--bytes", "spare"});  // 3x wraps
    expect_usage_error({"probe", "chase", "--bytes", "1000T"}, {"--bytes", "spare"});
    expect_usage_error({"probe", "chase", "--beside", "int", "--bytes", "1000T"}, {"--bytes", "spare"});
    // a long --plot is checked whole: a copy cut at 1 KiB named /tmp (all slashes), a directory that exists
    const std::string long_plot = "/tmp" + std::string(1100, '/') + "nope-ibench/x.png";
    expect_usage_error({"run", "--soi", "nope", "--ramp", "--plot", long_plot},
                       {"--plot", "cannot write in its directory"});
    expect_usage_error({"list", "--soi", "nope"}, {"'nope'"});
    // none of this measured (or cached) anything
    EXPECT_EQ(cache_files(), 0u);
}

TEST_F(Bin, ListHelpVersion)
{
    {
        Proc p;
        run(p, {"list"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        EXPECT_EQ(p.err, "");
        for (unsigned i = 0; i < soi_count(); i++)
            EXPECT_NE(p.out.find(soi_at(i)->name), std::string::npos) << soi_at(i)->name << " missing from:\n"
                                                                      << p.out;
    }
    {
        Proc p;
        run(p, {"list", "--json"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        json_t *doc = parse_json(p.out);
        ASSERT_NE(doc, nullptr);
        json_t *sois = json_object_get(doc, "sois");
        ASSERT_TRUE(json_is_array(sois));
        EXPECT_EQ(json_array_size(sois), soi_count()) << "the binary lists its registry";
        size_t i;
        json_t *v;
        std::vector<std::string> names;
        json_array_foreach(sois, i, v)
        {
            ASSERT_TRUE(json_is_string(json_object_get(v, "name")));
            names.emplace_back(json_string_value(json_object_get(v, "name")));
            EXPECT_TRUE(json_is_array(json_object_get(v, "params")));
            const char *kind = json_string_value(json_object_get(v, "kind"));
            ASSERT_NE(kind, nullptr);
            EXPECT_TRUE(!strcmp(kind, "footprint") || !strcmp(kind, "rate") || !strcmp(kind, "duty")) << kind;
        }
        std::vector<std::string> registry;
        for (unsigned k = 0; k < soi_count(); k++)
            registry.emplace_back(soi_at(k)->name);
        EXPECT_EQ(names, registry) << "in registry order";
        json_decref(doc);
    }
    {
        Proc p;
        run(p, {"list", "--soi", "llc-cap"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        EXPECT_NE(p.out.find("chains"), std::string::npos) << p.out;
        EXPECT_EQ(p.out.find("mem-bw"), std::string::npos) << "only the one SoI";
    }
    {  // a choice lists its names, and its default by name; sizes as a user types them
        Proc p;
        run(p, {"list", "--soi", "disk-bw"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        EXPECT_NE(p.out.find("read|write|mix"), std::string::npos) << p.out;
        EXPECT_NE(p.out.find("choice  read"), std::string::npos) << p.out;
        EXPECT_NE(p.out.find("4K..16M"), std::string::npos) << p.out;
        Proc j;
        run(j, {"list", "--soi", "disk-bw", "--json"});
        EXPECT_EQ(j.exit_code(), 0) << j.err;
        json_t *doc = parse_json(j.out);
        ASSERT_NE(doc, nullptr);
        json_t *rw = json_array_get(json_object_get(json_array_get(json_object_get(doc, "sois"), 0), "params"), 0);
        EXPECT_STREQ(json_string_value(json_object_get(rw, "name")), "rw");
        EXPECT_STREQ(json_string_value(json_object_get(rw, "default")), "read");
        EXPECT_EQ(json_array_size(json_object_get(rw, "choices")), 3u);
        EXPECT_STREQ(json_string_value(json_array_get(json_object_get(rw, "choices"), 2)), "mix");
        json_decref(doc);
    }
    {
        Proc p;
        run(p, {"run", "--help"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        EXPECT_EQ(p.err, "");
        EXPECT_EQ(p.out.rfind("usage: ibench run", 0), 0u) << p.out;
        EXPECT_NE(p.out.find("--step-ms"), std::string::npos);
    }
    {
        Proc p;
        run(p, {"help", "run"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        EXPECT_EQ(p.out.rfind("usage: ibench run", 0), 0u) << p.out;
    }
    {
        Proc p;
        run(p, {"--version"});
        EXPECT_EQ(p.exit_code(), 0);
        EXPECT_EQ(p.out.rfind("ibench ", 0), 0u) << p.out;
    }
    {
        Proc p;
        run(p, {});
        EXPECT_EQ(p.exit_code(), IB_EXIT_USAGE) << "no command";
        EXPECT_NE(p.err.find("usage"), std::string::npos);
    }
    EXPECT_EQ(cache_files(), 0u);
}

// A short real ramp: JSON with 3 steps, then CSV and the table from the calibration the first run cached.
TEST_F(Bin, ProbesRunAndReportJson)
{
    {
        Proc p;
        run(p, {"probe", "chase", "--bytes", "64K", "--reps", "3", "--json"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        json_t *doc = parse_json(p.out);
        ASSERT_NE(doc, nullptr);
        EXPECT_STREQ(json_string_value(json_object_get(doc, "probe")), "chase");
        EXPECT_STREQ(json_string_value(json_object_get(doc, "unit")), "ns");
        double med = json_real_value(json_object_get(doc, "median")), best = json_real_value(json_object_get(doc, "best"));
        EXPECT_GT(med, 0.0);
        EXPECT_LE(best, med);
        EXPECT_EQ(json_integer_value(json_object_get(doc, "bytes")), 64 * 1024);
        json_decref(doc);
    }
    {
        // beside an SoI: a short interleaved run of l1d (needs no peak measurement) on the highest CPU
        Proc p;
        run(p, {"probe", "chase", "--beside", "l1d", "--cycles", "2", "--step-ms", "30", "--settle-ms", "2", "--json"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        json_t *doc = parse_json(p.out);
        ASSERT_NE(doc, nullptr);
        EXPECT_STREQ(json_string_value(json_object_get(doc, "beside")), "l1d");
        EXPECT_GT(json_real_value(json_object_get(doc, "solo")), 0.0);
        EXPECT_GT(json_real_value(json_object_get(doc, "beside_median")), 0.0);
        EXPECT_GT(json_integer_value(json_object_get(doc, "solo_samples")), 0);
        EXPECT_GT(json_integer_value(json_object_get(doc, "beside_samples")), 0);
        EXPECT_NEAR(json_real_value(json_object_get(doc, "soi_achieved_pct")), 100.0, 5.0);
        json_decref(doc);
    }
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
        Proc p;
        run(p, {"probe", "pingpong", "--reps", "2", "--json"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        json_t *doc = parse_json(p.out);
        ASSERT_NE(doc, nullptr);
        EXPECT_EQ(json_array_size(json_object_get(doc, "cpus")), 2u);
        EXPECT_GT(json_real_value(json_object_get(doc, "median")), 0.0);
        json_decref(doc);
    }
}

// validate on one SoI that this machine cannot probe (l1d needs an SMT sibling; none on a 2-vCPU VM without SMT,
// and on an SMT machine it is validated): a verdict with its reason, the self-meter ramp, valid JSON, exit 0/1.
TEST_F(Bin, ValidateReportsAVerdictWithItsReason)
{
    Proc p;
    run(p, {"validate", "--soi", "l1d", "--quick", "--no-overlap", "--json"}, 120);
    // 0 whatever is BUSY (under ctest -j2 another test may hold the SoI's CPU), UNCHECKED or ISOLATED; 1: a FAIL
    EXPECT_TRUE(p.exit_code() == 0 || p.exit_code() == 1) << p.err;
    json_t *doc = parse_json(p.out);
    ASSERT_NE(doc, nullptr);
    json_t *sois = json_object_get(doc, "sois");
    ASSERT_EQ(json_array_size(sois), 1u);
    json_t *r = json_array_get(sois, 0);
    EXPECT_STREQ(json_string_value(json_object_get(r, "soi")), "l1d");
    const char *v = json_string_value(json_object_get(r, "verdict"));
    ASSERT_NE(v, nullptr);
    // l1d: no outside meter anywhere, and no probe without SMT: UNCHECKED here; pass on an SMT machine
    EXPECT_TRUE(!strcmp(v, "pass") || !strcmp(v, "FAIL") || !strcmp(v, "UNCHECKED") || !strcmp(v, "BUSY")) << v;
    const char *reason = json_string_value(json_object_get(r, "reason"));
    ASSERT_NE(reason, nullptr);
    EXPECT_GT(strlen(reason), 10u) << "a verdict always says why";
    // the self-meter ramp alone runs whatever the probe's verdict: five levels, 0 % idle, a footprint SoI at x %,
    // and a verdict of its own with its reason
    json_t *self = json_object_get(r, "self");
    json_t *lv = json_object_get(self, "levels");
    ASSERT_EQ(json_array_size(lv), 5u);
    for (size_t k = 0; k < 5; k++)
        EXPECT_NEAR(json_number_value(json_object_get(json_array_get(lv, k), "achieved_pct")), 25.0 * (double)k, 2.0)
            << "level " << k;
    // its own verdict: pass; or BUSY when its threads waited for a CPU, and then its readings alone still pass
    const char *sv = json_string_value(json_object_get(self, "verdict"));
    const char *sr = json_string_value(json_object_get(self, "reason"));
    ASSERT_NE(sv, nullptr);
    if (!strcmp(sv, "BUSY")) {
        EXPECT_NE(strstr(sr, "the readings alone: pass"), nullptr) << sr;
    } else {
        EXPECT_STREQ(sv, "pass") << sr;
    }
    json_decref(doc);
}

TEST_F(Bin, ShortRampJsonCsvTable)
{
    Proc p;
    run(p, {"run", "--soi", "l1d", "--ramp", "--steps", "3", "--step-ms", "50", "--json"}, 120);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    EXPECT_EQ(p.err, "") << "no progress noise when stderr is not a terminal";
    json_t *doc = parse_json(p.out);
    ASSERT_NE(doc, nullptr);
    EXPECT_STREQ(json_string_value(json_object_get(doc, "command")), "run");
    EXPECT_STREQ(json_string_value(json_object_get(json_object_get(doc, "soi"), "name")), "l1d");
    json_t *cap = json_object_get(doc, "capacity");
    EXPECT_GT(json_number_value(json_object_get(cap, "value")), 0.0);
    EXPECT_STREQ(json_string_value(json_object_get(cap, "unit")), "B");
    EXPECT_EQ(json_integer_value(json_object_get(doc, "planned_steps")), 3);
    EXPECT_EQ(json_integer_value(json_object_get(doc, "completed_steps")), 3);
    EXPECT_TRUE(json_is_false(json_object_get(doc, "interrupted")));
    json_t *steps = json_object_get(doc, "steps");
    ASSERT_EQ(json_array_size(steps), 3u);
    const double req[] = {0, 50, 100};
    const double capv = json_number_value(json_object_get(cap, "value"));
    for (size_t i = 0; i < 3; i++) {
        SCOPED_TRACE("step " + std::to_string(i + 1));
        json_t *st = json_array_get(steps, i);
        EXPECT_EQ(json_integer_value(json_object_get(st, "step")), (json_int_t)i + 1);
        EXPECT_EQ(json_number_value(json_object_get(st, "requested_pct")), req[i]);
        double a = json_number_value(json_object_get(st, "achieved_pct"));
        EXPECT_GE(a, 0.0);
        EXPECT_LE(a, 110.0);
        // the target is x % of the capacity, achieved % is achieved over the capacity, and a footprint SoI holds
        // its bytes whatever the host does: achieved within a point of the target
        const double target = json_number_value(json_object_get(st, "target"));
        const double achieved = json_number_value(json_object_get(st, "achieved"));
        EXPECT_DOUBLE_EQ(target, capv * req[i] / 100);
        EXPECT_NEAR(a, 100 * achieved / capv, 1e-9);
        EXPECT_NEAR(achieved, target, capv / 100);
        EXPECT_GE(json_number_value(json_object_get(st, "wall_s")), 0.05);
        double on = json_number_value(json_object_get(st, "on_cpu_pct")); // every SoI: its workers' CPU time
        EXPECT_GE(on, 0.0);
        EXPECT_LE(on, 105.0);
        EXPECT_TRUE(json_is_null(json_object_get(st, "quantum_s"))) << "not a duty SoI";
    }
    // l1d at 100 % runs flat out, at 0 % its worker waits: apart, however much of the CPU another test takes
    EXPECT_GT(json_number_value(json_object_get(json_array_get(steps, 2), "on_cpu_pct")),
              json_number_value(json_object_get(json_array_get(steps, 0), "on_cpu_pct")) + 15.0);
    EXPECT_TRUE(json_is_null(json_object_get(doc, "pacing"))) << "not a duty SoI";
    EXPECT_EQ(json_number_value(json_object_get(json_array_get(steps, 0), "achieved_pct")), 0.0);
    // linearity is the least-squares line of achieved % on requested % over these steps
    json_t *lin = json_object_get(doc, "linearity");
    ASSERT_TRUE(json_is_object(lin));
    {
        double sx = 0, sy = 0, sxx = 0, sxy = 0, worst = 0;
        for (size_t i = 0; i < 3; i++) {
            double x = req[i], y = json_number_value(json_object_get(json_array_get(steps, i), "achieved_pct"));
            sx += x, sy += y, sxx += x * x, sxy += x * y;
            worst = std::max(worst, std::fabs(y - x));
        }
        const double slope = (3 * sxy - sx * sy) / (3 * sxx - sx * sx), icpt = (sy - slope * sx) / 3;
        EXPECT_NEAR(json_number_value(json_object_get(lin, "slope")), slope, 1e-9);
        EXPECT_NEAR(json_number_value(json_object_get(lin, "intercept")), icpt, 1e-7);
        EXPECT_NEAR(json_number_value(json_object_get(lin, "worst_dev_ideal")), worst, 1e-9);
        EXPECT_EQ(json_integer_value(json_object_get(lin, "n")), 3);
    }
    json_t *pl = json_object_get(doc, "placement");
    EXPECT_EQ(json_integer_value(json_object_get(pl, "threads")), 1);
    EXPECT_EQ(json_array_size(json_object_get(pl, "cpus")), 1u);
    EXPECT_EQ(cache_files(), 1u) << "the measured cache sizes were saved";

    Proc c;
    run(c, {"run", "--soi", "l1d", "--ramp", "--steps", "3", "--step-ms", "50", "--csv"}, 60);
    ASSERT_EQ(c.exit_code(), 0) << c.err;
    auto lines = split_lines(c.out);
    ASSERT_EQ(lines.size(), 4u) << "a header and 3 rows:\n" << c.out;
    // the header names the columns; every row has as many fields
    auto fields = [](const std::string &l) {
        std::vector<std::string> f;
        std::string cur;
        for (char ch : l) {
            if (ch == ',') {
                f.push_back(cur);
                cur.clear();
            } else {
                cur += ch;
            }
        }
        f.push_back(cur);
        return f;
    };
    auto head = fields(lines[0]);
    EXPECT_EQ(lines[0].rfind("step,requested_pct,target,achieved,unit,achieved_pct,", 0), 0u) << lines[0];
    auto col = [&](const char *name) {
        for (size_t k = 0; k < head.size(); k++)
            if (head[k] == name)
                return (int)k;
        ADD_FAILURE() << "no column " << name << " in " << lines[0];
        return -1;
    };
    int c_req = col("requested_pct"), c_unit = col("unit"), c_pct = col("achieved_pct"), c_wall = col("wall_s");
    ASSERT_TRUE(c_req >= 0 && c_unit >= 0 && c_pct >= 0 && c_wall >= 0);
    EXPECT_GE(col("on_cpu_pct"), 0);
    for (unsigned i = 1; i <= 3; i++) {
        SCOPED_TRACE(lines[i]);
        auto f = fields(lines[i]);
        ASSERT_EQ(f.size(), head.size());
        EXPECT_EQ(f[0], std::to_string(i));
        EXPECT_EQ(atof(f[(size_t)c_req].c_str()), req[i - 1]);
        EXPECT_EQ(f[(size_t)c_unit], "B");
        double pct = atof(f[(size_t)c_pct].c_str());
        EXPECT_GE(pct, 0.0);
        EXPECT_LE(pct, 110.0);
        EXPECT_GE(atof(f[(size_t)c_wall].c_str()), 0.05);
    }
    // The CSV is the JSON's steps in columns: every column is a step field of the JSON, and what a footprint SoI
    // repeats exactly (capacity from the cache, bytes held) is equal in both runs, row by row.
    for (size_t k = 0; k < head.size(); k++)
        EXPECT_NE(json_object_get(json_array_get(steps, 0), head[k].c_str()), nullptr) << "CSV column " << head[k];
    for (unsigned i = 1; i <= 3; i++) {
        SCOPED_TRACE(lines[i]);
        auto f = fields(lines[i]);
        json_t *st = json_array_get(steps, i - 1);
        for (const char *name : {"step", "requested_pct", "target", "achieved", "achieved_pct"}) {
            int k = col(name);
            ASSERT_GE(k, 0);
            EXPECT_DOUBLE_EQ(atof(f[(size_t)k].c_str()), json_number_value(json_object_get(st, name))) << name;
        }
        EXPECT_EQ(f[(size_t)c_unit], json_string_value(json_object_get(st, "unit")));
    }
    json_decref(doc);

    Proc t;
    run(t, {"run", "--soi", "l1d", "--levels", "0,100", "--step-ms", "30", "--cpus", "0"}, 60);
    ASSERT_EQ(t.exit_code(), 0) << t.err;
    EXPECT_NE(t.out.find("SoI       l1d"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("placement 1 thread(s) on CPU 0"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("capacity"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("on-CPU %"), std::string::npos) << t.out;
    EXPECT_EQ(t.out.find("pacing"), std::string::npos) << "no duty quantum for a footprint SoI:\n" << t.out;
}

// A duty SoI: its run says what its quantum is and where it came from (--quantum here), and what wake-ups cost.
TEST_F(Bin, DutyRunReportsItsQuantum)
{
    Proc p;
    run(p, {"run", "--soi", "int", "--levels", "0,50", "--step-ms", "150", "--quantum", "3ms", "--cpus", "0",
            "--json"}, 120);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    json_t *doc = parse_json(p.out);
    ASSERT_NE(doc, nullptr);
    json_t *pc = json_object_get(doc, "pacing");
    ASSERT_TRUE(json_is_object(pc)) << p.out;
    EXPECT_DOUBLE_EQ(json_number_value(json_object_get(pc, "quantum_s")), 0.003);
    EXPECT_STREQ(json_string_value(json_object_get(pc, "quantum_from")), "--quantum");
    double wake = json_number_value(json_object_get(pc, "wake_cpu_s"));
    EXPECT_GT(wake, 0.0) << "measured at start";
    EXPECT_LT(wake, 0.003);
    EXPECT_NEAR(json_number_value(json_object_get(pc, "wake_pct")), 100 * wake / 0.003, 1e-9);
    json_t *st = json_array_get(json_object_get(doc, "steps"), 1);
    EXPECT_DOUBLE_EQ(json_number_value(json_object_get(st, "quantum_s")), 0.003) << "a forced quantum stays";
    EXPECT_GT(json_number_value(json_object_get(st, "wake_cpu_s")), 0.0) << "it slept, and it cost";
    // the share of the CPU at 50 %: loose, the CPU may be shared with another busy test (18 % was seen so under
    // ASan); the pacer's accuracy is the fake-clock tests' (DutyWorker.*) and validation/bench-duty's job. Under 10 %
    // with the worker measured waiting for its CPU beyond the bound: the host's (busy guard)
    const double on50 = json_number_value(json_object_get(st, "on_cpu_pct"));
    const std::string busy = ib_test::busy_why_run_json(doc);
    json_decref(doc);
    if (!(on50 > 10.0))
        IB_SKIP_IF_BUSY(busy);
    EXPECT_GT(on50, 10.0);
    EXPECT_LT(on50, 65.0);

    Proc t;
    run(t, {"run", "--soi", "int", "--intensity", "30", "--duration", "0.3", "--cpus", "0", "--cached-capacity"}, 60);
    ASSERT_EQ(t.exit_code(), 0) << t.err;
    EXPECT_NE(t.out.find("pacing    duty quantum"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("the shortest under 2 % of a CPU"), std::string::npos) << t.out;
}

namespace {

// Starts a 11-step mem-bw ramp with progress on stderr, waits for step 2 to complete, sends `sig`, and checks the
// interrupted run's exit code, JSON and release of its memory.
void interrupt_ramp(const std::vector<std::string> &env, int sig)
{
    Proc p;
    ASSERT_TRUE(p.start({"run", "--soi", "mem-bw", "--ramp", "--step-ms", "400", "--json"}, env));
    // calibration (cache sweep, then the DRAM peak) comes first: allow plenty of time on a loaded host
    bool at2 = p.pump_until([&] { return p.err.find("step 2/11") != std::string::npos; }, 90);
    ASSERT_TRUE(at2) << "never saw step 2/11; exited " << p.exited << " code " << p.exit_code() << "; stderr: "
                     << p.err;
    ASSERT_FALSE(p.exited);
    ASSERT_EQ(kill(p.pid, sig), 0);
    ASSERT_TRUE(p.finish(30)) << "no exit within 30 s of the signal; stderr: " << p.err;
    EXPECT_EQ(p.exit_code(), IB_EXIT_INTR) << "status " << p.status << "; stderr: " << p.err;
    EXPECT_FALSE(WIFSIGNALED(p.status)) << "killed by signal " << WTERMSIG(p.status);

    json_t *doc = parse_json(p.out);
    ASSERT_NE(doc, nullptr);
    EXPECT_TRUE(json_is_true(json_object_get(doc, "interrupted")));
    json_int_t done = json_integer_value(json_object_get(doc, "completed_steps"));
    EXPECT_GE(done, 2);
    EXPECT_LT(done, 11);
    EXPECT_EQ(json_integer_value(json_object_get(doc, "planned_steps")), 11);
    EXPECT_EQ((json_int_t)json_array_size(json_object_get(doc, "steps")), done);
    json_decref(doc);
    EXPECT_NE(p.err.find("0 bytes of SoI memory still mapped"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("interrupted after " + std::to_string(done) + " of 11 steps"), std::string::npos) << p.err;
}

}  // namespace

TEST_F(Bin, CtrlCMidRamp) { interrupt_ramp(env(true), SIGINT); }

TEST_F(Bin, SigtermMidRamp) { interrupt_ramp(env(true), SIGTERM); }

// --plot: a bad file name fails before anything runs; a good one yields a real PNG and leaves no temp file.
TEST_F(Bin, PlotWritesAChartAtomically)
{
    expect_usage_error({"run", "--soi", "l1d", "--ramp", "--plot", cache + "/chart.jpg"}, {"--plot", ".png or .svg"});
    expect_usage_error({"run", "--soi", "l1d", "--ramp", "--plot", "/nonexistent-dir/chart.png"}, {"--plot"});
    const std::string png = cache + "/chart.png";
    Proc p;
    run(p, {"run", "--soi", "l1d", "--ramp", "--steps", "3", "--step-ms", "50", "--json", "--plot", png}, 120);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    EXPECT_NE(p.err.find("chart written"), std::string::npos) << p.err;
    FILE *f = fopen(png.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    unsigned char magic[8] = {0};
    EXPECT_EQ(fread(magic, 1, 8, f), 8u);
    fclose(f);
    EXPECT_EQ(memcmp(magic, "\x89PNG\r\n\x1a\n", 8), 0) << "a PNG file";
    DIR *d = opendir(cache.c_str());
    ASSERT_NE(d, nullptr);
    while (struct dirent *e = readdir(d))
        EXPECT_EQ(strstr(e->d_name, ".tmp."), nullptr) << e->d_name << " left behind";
    closedir(d);
}

// probe chase --sizes: one row per size, in order; a chase far beyond any L1 is slower than one inside it; and the
// option goes with chase alone.
TEST_F(Bin, ProbeChaseSizesPrintsOneRowPerSize)
{
    {
        Proc p;
        run(p, {"probe", "chase", "--sizes", "16K,16M", "--reps", "2", "--json"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        json_t *doc = parse_json(p.out);
        ASSERT_NE(doc, nullptr);
        json_t *rows = json_object_get(doc, "sizes");
        ASSERT_EQ(json_array_size(rows), 2u) << p.out;
        EXPECT_EQ(json_integer_value(json_object_get(json_array_get(rows, 0), "bytes")), 16 * 1024);
        EXPECT_EQ(json_integer_value(json_object_get(json_array_get(rows, 1), "bytes")), 16 * 1024 * 1024);
        double small = json_real_value(json_object_get(json_array_get(rows, 0), "median"));
        double big = json_real_value(json_object_get(json_array_get(rows, 1), "median"));
        EXPECT_GT(small, 0.0);
        EXPECT_GT(big, 2 * small) << "16 MiB beyond every L1 and L2, 16 KiB inside L1";
        json_decref(doc);
    }
    {
        Proc p;
        run(p, {"probe", "chase", "--sizes", "16K,64K", "--reps", "2"});
        EXPECT_EQ(p.exit_code(), 0) << p.err;
        EXPECT_EQ(count_char(p.out, '\n'), 3u) << "a header and one line per size:\n" << p.out;
    }
    expect_usage_error({"probe", "chase", "--sizes", "16K,x"}, {"--sizes", "'x'"});
    expect_usage_error({"probe", "chase", "--sizes", "16K", "--bytes", "64K"}, {"--sizes", "chase alone"});
    expect_usage_error({"probe", "triad", "--sizes", "16K"}, {"--sizes", "chase alone"});
}
