// AToM (placement/mapping/pl_atom.h): the learning phase on simulated applications built from Tang et al. ISCA'11's Table 3 (pick
// rate over 100 seeds, learning time), its noise rule, its schedule and errors; the command on an oracle and live on
// a 2-thread program, checked through /proc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

extern "C" {
#include "pl_atom.h"
#include "pl_classes.h"
}

namespace {

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

const char *kApps[] = {"bigtable", "contentAnalyzer", "webSearch"};
const char *kWith[] = {"solo", "stitcher", "protobuf"};

// The oracle's classes are the listing's for 4 threads on Clovertown (package, l2), in its order.
TEST(PlaceAtom, OracleClassesAreClovertownsFourThreadClasses)
{
    pl_machine m{};
    pl_hier h{};
    char why[256] = "";
    ASSERT_EQ(pl_machine_load(&m, "synthetic:pack:2 l2:2 core:2 pu:1", nullptr, why, sizeof why), 0) << why;
    ASSERT_EQ(pl_hier_from_topo(m.topo, "package,l2", &h, why, sizeof why), 0) << why;
    pl_class_list l{};
    pl_classes_opts o = {4, false, PL_CLASSES_LIMIT, nullptr, 0, 0};
    ASSERT_EQ(pl_classes(&h, &o, &l, why, sizeof why), 0) << why;
    pl_atom_oracle orc;
    std::string f = std::string(IBENCH_FIXTURES) + "/tang-isca11/oracle-bigtable-solo.json";
    ASSERT_EQ(pl_atom_oracle_parse(slurp(f).c_str(), f.c_str(), &orc, why, sizeof why), 0) << why;
    ASSERT_EQ(orc.n, l.n);
    for (unsigned k = 0; k < l.n; k++) {
        char note[80];
        pl_class_notation(&h, &l.v[k], note, sizeof note);
        EXPECT_STREQ(orc.label[k], note);
    }
    pl_atom_oracle_free(&orc);
    pl_class_list_free(&l);
    pl_hier_free(&h);
    pl_machine_free(&m);
}

// The acceptance: with an oracle per (application, co-runner) of Table 3 and 2 % noise, AToM picks the optimal class
// in >= 95 of 100 seeded runs each; a learning phase lasts classes x period.
TEST(PlaceAtom, PicksTableThreesOptimumInNinetyFivePercent)
{
    printf("%-26s %s\n", "oracle", "optimal picked / 100 (clear wins)");
    for (const char *a : kApps)
        for (const char *w : kWith) {
            std::string f = std::string(IBENCH_FIXTURES) + "/tang-isca11/oracle-" + a + "-" + w + ".json";
            pl_atom_oracle orc;
            char why[256] = "";
            ASSERT_EQ(pl_atom_oracle_parse(slurp(f).c_str(), f.c_str(), &orc, why, sizeof why), 0) << why;
            EXPECT_DOUBLE_EQ(orc.noise, 0.02);
            unsigned opt = (unsigned)(std::max_element(orc.perf, orc.perf + orc.n) - orc.perf), picked = 0, clear = 0;
            for (uint64_t seed = 1; seed <= 100; seed++) {
                pl_atom_oracle_seed(&orc, seed);
                pl_atom_opts o = {600, PL_ATOM_ROUNDS, true, PL_ATOM_Z};
                pl_atom_result r;
                ASSERT_EQ(pl_atom_learn(&pl_atom_oracle_ops, &orc, orc.n, &o, &r, why, sizeof why), 0) << why;
                EXPECT_DOUBLE_EQ(r.learning_s, orc.n * 600.0);
                EXPECT_EQ(r.nslices, orc.n * PL_ATOM_ROUNDS);
                EXPECT_EQ(orc.applies, orc.n * PL_ATOM_ROUNDS);
                picked += r.best == (int)opt;
                clear += r.clear;
                pl_atom_result_free(&r);
            }
            printf("%-26s %3u (%u)\n", (std::string(a) + "-" + w).c_str(), picked, clear);
            EXPECT_GE(picked, 95u) << f;
            pl_atom_oracle_free(&orc);
        }
}

// Noise-aware: equal classes rarely make a clear winner; a 40 % gap always does.
TEST(PlaceAtom, AWinIsClearOnlyBeyondTheSpread)
{
    double equal[] = {1.0, 1.0, 1.0}, gap[] = {0.95, 0.75, 0.68};
    for (int which = 0; which < 2; which++) {
        pl_atom_oracle orc{};
        orc.n = 3;
        orc.perf = which ? gap : equal;
        orc.noise = 0.02;
        unsigned clear = 0;
        for (uint64_t seed = 1; seed <= 100; seed++) {
            pl_atom_oracle_seed(&orc, seed);
            pl_atom_opts o = {60, 10, true, PL_ATOM_Z};
            pl_atom_result r;
            char why[256] = "";
            ASSERT_EQ(pl_atom_learn(&pl_atom_oracle_ops, &orc, 3, &o, &r, why, sizeof why), 0) << why;
            clear += r.clear;
            if (!r.clear) {
                EXPECT_NE(std::string(r.why).find("no clear winner"), std::string::npos) << r.why;
            }
            pl_atom_result_free(&r);
        }
        if (which)
            EXPECT_EQ(clear, 100u);
        else
            EXPECT_LE(clear, 10u);
    }
}

struct Script {
    std::vector<double> values; // returned in turn
    std::vector<unsigned> applied, measured;
    int fail_apply_at = -1, fail_measure_at = -1, err = 0;
};
int s_apply(void *ctx, unsigned k, char *why, size_t len)
{
    Script *s = static_cast<Script *>(ctx);
    if ((int)s->applied.size() == s->fail_apply_at) {
        snprintf(why, len, "cannot pin");
        return -EPERM;
    }
    s->applied.push_back(k);
    return 0;
}
int s_measure(void *ctx, unsigned k, double seconds, double *v, char *why, size_t len)
{
    Script *s = static_cast<Script *>(ctx);
    EXPECT_DOUBLE_EQ(seconds, 2.0);
    if ((int)s->measured.size() == s->fail_measure_at) {
        snprintf(why, len, "interrupted");
        return -EINTR;
    }
    *v = s->values[s->measured.size() % s->values.size()];
    s->measured.push_back(k);
    return 0;
}
const pl_atom_ops kScript = {s_apply, s_measure};

// The schedule: round r starts at class r mod K; each slice is period / rounds; lower-is-better metrics pick the
// lowest mean; the exact figures.
TEST(PlaceAtom, RoundsRotateAndFiguresAreExact)
{
    Script s;
    s.values = {10, 20, 30, 14, 24, 12}; // slices in order: classes 0 1 2 | 1 2 0
    pl_atom_opts o = {4, 2, false, PL_ATOM_Z};
    pl_atom_result r;
    char why[256] = "";
    ASSERT_EQ(pl_atom_learn(&kScript, &s, 3, &o, &r, why, sizeof why), 0) << why;
    EXPECT_EQ(s.measured, (std::vector<unsigned>{0, 1, 2, 1, 2, 0}));
    EXPECT_EQ(s.applied, s.measured);
    EXPECT_DOUBLE_EQ(r.st[0].mean, 11); // 10, 12
    EXPECT_DOUBLE_EQ(r.st[1].mean, 17); // 20, 14
    EXPECT_DOUBLE_EQ(r.st[2].mean, 27); // 30, 24
    EXPECT_DOUBLE_EQ(r.st[0].se, 1);    // sd sqrt(2), /sqrt(2)
    EXPECT_EQ(r.best, 0);               // lower is better
    EXPECT_EQ(r.rival, 1);
    EXPECT_NEAR(r.margin_se, 6 / std::sqrt(1.0 + 9.0), 1e-12); // se1 = 3
    EXPECT_FALSE(r.clear); // 1.897 < 2
    EXPECT_DOUBLE_EQ(r.learning_s, 12);
    pl_atom_result_free(&r);
}

TEST(PlaceAtom, ErrorsStopTheLearningWithTheirReason)
{
    pl_atom_opts o = {4, 2, true, PL_ATOM_Z};
    pl_atom_result r;
    char why[256] = "";
    Script a;
    a.values = {1};
    a.fail_apply_at = 2;
    EXPECT_EQ(pl_atom_learn(&kScript, &a, 3, &o, &r, why, sizeof why), -EPERM);
    EXPECT_STREQ(why, "cannot pin");
    EXPECT_EQ(r.nslices, 2u);
    pl_atom_result_free(&r);
    Script b;
    b.values = {1};
    b.fail_measure_at = 0;
    EXPECT_EQ(pl_atom_learn(&kScript, &b, 3, &o, &r, why, sizeof why), -EINTR);
    pl_atom_result_free(&r);
    Script c;
    c.values = {NAN};
    EXPECT_EQ(pl_atom_learn(&kScript, &c, 3, &o, &r, why, sizeof why), -EBADMSG);
    pl_atom_result_free(&r);
    EXPECT_EQ(pl_atom_learn(&kScript, &c, 0, &o, &r, why, sizeof why), -EINVAL);
    pl_atom_result_free(&r);
    pl_atom_oracle orc;
    const char *bad[] = {"{}", "{\"noise\":0.02,\"classes\":[]}", "{\"noise\":-1,\"classes\":[{\"performance\":1}]}",
                         "{\"noise\":0.02,\"classes\":[{\"performance\":0}]}",
                         "{\"noise\":0.02,\"classes\":[{\"performance\":1,\"x\":1}]}",
                         "{\"noise\":0.02,\"classes\":[{\"performance\":1}],\"extra\":1}"};
    for (const char *t : bad) {
        EXPECT_EQ(pl_atom_oracle_parse(t, "o.json", &orc, why, sizeof why), -EINVAL) << t;
        EXPECT_EQ(std::string(why).rfind("o.json: ", 0), 0u) << why;
    }
}

using ib_test::sh;

TEST(PlaceAtom, CommandOnAnOracle)
{
    int rc;
    std::string base = std::string(IBENCH_BIN) + " place atom --topology 'synthetic:pack:2 l2:2 core:2 pu:1' "
                       "--concerns package,l2 --threads 4 --period 600 --oracle " IBENCH_FIXTURES "/tang-isca11/";
    std::string o = sh(base + "oracle-bigtable-stitcher.json", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("learning phase 1: 3 classes x 600 s = 1.8e+03 s (90 slices of 20 s)"), std::string::npos) << o;
    EXPECT_NE(o.find("class 1 wins"), std::string::npos) << o;
    o = sh(base + "oracle-webSearch-protobuf.json --json --seed 3", &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("\"learning_s\": 1800.0"), std::string::npos) << o;
    const char *bad[] = {"oracle-bigtable-solo.json --threads 2", "nonexistent.json", "oracle-bigtable-solo.json --pid 1",
                         "oracle-bigtable-solo.json --rounds 0"};
    for (const char *b : bad) {
        o = sh(base + b, &rc);
        EXPECT_EQ(rc, 2) << b << ": " << o;
        EXPECT_EQ(o.rfind("ibench place atom: ", 0), 0u) << o;
        EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
    }
    o = sh(std::string(IBENCH_BIN) + " place atom --period 1", &rc);
    EXPECT_EQ(rc, 2) << o;
}

std::vector<int> allowed(pid_t tid_or_pid, pid_t pid)
{
    std::string st = slurp("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid_or_pid) + "/status");
    size_t p = st.find("Cpus_allowed_list:");
    std::vector<int> v;
    if (p == std::string::npos)
        return v;
    std::string l = st.substr(p + 18, st.find('\n', p) - p - 18);
    int a, b;
    for (std::stringstream ss(l); ss >> std::ws && ss.good();) {
        ss >> a;
        b = a;
        if (ss.peek() == '-') {
            ss.get();
            ss >> b;
        }
        for (int c = a; c <= b; c++)
            v.push_back(c);
        if (ss.peek() == ',')
            ss.get();
    }
    return v;
}

// Live, with the classes this machine has: a 2-thread program (python3: a main thread and one more, both spinning)
// is measured, pinned one thread a CPU, and reported; its threads' affinities are read back from /proc.
TEST(PlaceAtom, LiveOnATwoThreadProgram)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "needs 2 CPUs";
    pid_t pid = ib_test::spawn_two_thread_spinner();
    ASSERT_GT(pid, 0) << "the 2-thread program did not start";
    std::vector<std::string> tasks = ib_test::dir_entries("/proc/" + std::to_string(pid) + "/task");
    int rc;
    std::string o = sh(std::string(IBENCH_BIN) + " place atom --pid " + std::to_string(pid) +
                           " --metric cputime --period 0.6 --rounds 3",
                       &rc);
    EXPECT_EQ(rc, 0) << o;
    EXPECT_NE(o.find("learning phase 1: 1 class x 0.6 s = 0.6 s (3 slices of 0.2 s)"), std::string::npos) << o;
    EXPECT_NE(o.find("applied class 1"), std::string::npos) << o;
    std::set<int> cpus;
    for (const std::string &t : tasks) {
        std::vector<int> a = allowed(std::stoi(t), pid);
        EXPECT_EQ(a.size(), 1u) << "thread " << t << " is not pinned to one CPU";
        if (a.size() == 1)
            cpus.insert(a[0]);
    }
    EXPECT_EQ(cpus.size(), 2u) << "the two threads share a CPU";
    // the metric is the process's CPU time: two spinning threads under the GIL still get some
    EXPECT_NE(o.find("CPU-s/s"), std::string::npos) << o;
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    // a process that is gone: exit 2, one line
    o = sh(std::string(IBENCH_BIN) + " place atom --pid " + std::to_string(pid) + " --metric cputime --period 1",
           &rc);
    EXPECT_EQ(rc, 2) << o;
    EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
}

} // namespace
