// test_place_live.cpp - pl_proc (a live process's threads, pinning them) on this process's own threads, and
// `ibench place apply|show` on a live 2-thread child, checked through /proc/PID/task/*/status.
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>

#include "pl_classes.h"
#include "pl_machine.h"
#include "pl_proc.h"
#include "test_support.h"

using ib_test::Proc;

namespace {

pid_t my_tid()
{
    return (pid_t)syscall(SYS_gettid);
}

// "Cpus_allowed_list" of a task, "" when it cannot be read.
std::string allowed_list(pid_t pid, pid_t tid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("Cpus_allowed_list:", 0) == 0) {
            size_t i = line.find_first_not_of(" \t", 18);
            return i == std::string::npos ? "" : line.substr(i);
        }
    return "";
}

std::vector<int> affinity_of(pid_t tid)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    std::vector<int> v;
    if (sched_getaffinity(tid, sizeof s, &s) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &s))
                v.push_back(c);
    return v;
}

bool task_exists(pid_t pid, pid_t tid)
{
    return access(("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid)).c_str(), F_OK) == 0;
}

// This process has no thread but the main one (the apply tests count positions; a sanitizer's helper thread would
// shift them).
bool alone()
{
    return ib_test::dir_entries("/proc/self/task").size() == 1;
}

// A pid no process has: a child that has exited and been reaped (pids are not reused for a long while).
pid_t vanished_pid()
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    int st;
    waitpid(p, &st, 0);
    return p;
}

// This machine's CPUs 0 and 1, both allowed to us: what the CLI tests pin to.
bool have_cpus_0_1()
{
    std::vector<int> a = affinity_of(0);
    return a.size() >= 2 && a[0] == 0 && a[1] == 1;
}

// A child process with a main thread and nthreads-1 more ("ibt-worker-K"), all blocked until the child is killed
// (and at most 60 s: alarm, should this test die without killing it).  Always killed and reaped by the destructor.
class LiveChild {
public:
    pid_t pid = -1;
    std::vector<pid_t> tids; // the main thread first, then the workers in creation order

    bool start(unsigned nthreads)
    {
        int ready[2], hold[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
            return false;
        if (pipe2(hold, O_CLOEXEC) < 0) {
            close(ready[0]);
            close(ready[1]);
            return false;
        }
        pid = fork();
        if (pid < 0)
            return false;
        if (pid == 0) {
            alarm(60);
            close(ready[0]);
            close(hold[1]);
            pid_t me = my_tid();
            if (write(ready[1], &me, sizeof me) != (ssize_t)sizeof me)
                _exit(3);
            for (unsigned k = 1; k < nthreads; k++) {
                pthread_t th;
                static int ready_w;
                ready_w = ready[1];
                if (pthread_create(&th, nullptr, worker, &ready_w) != 0)
                    _exit(4);
                char name[16];
                snprintf(name, sizeof name, "ibt-worker-%u", k % 10000); /* a thread name holds 15 characters */
                pthread_setname_np(th, name);
            }
            char c;
            while (read(hold[0], &c, 1) < 0 && errno == EINTR) {
            }
            _exit(0);
        }
        close(ready[1]);
        close(hold[0]);
        hold_w = hold[1];
        double end = ib_test::now_s() + 10 * ib_test::kHangScale;
        while (tids.size() < nthreads && ib_test::now_s() < end) {
            struct pollfd p = {ready[0], POLLIN, 0};
            if (poll(&p, 1, 100) <= 0)
                continue;
            pid_t t;
            if (read(ready[0], &t, sizeof t) != (ssize_t)sizeof t)
                break;
            tids.push_back(t);
        }
        close(ready[0]);
        if (tids.size() > 2) // workers write their tids in the order they run, not the order they were made
            std::sort(tids.begin() + 1, tids.end());
        // and the names set: a worker names itself only after pthread_setname_np in the parent thread returns
        while (ib_test::now_s() < end && nthreads > 1 && comm(tids.back()).rfind("ibt-worker", 0) != 0)
            usleep(1000);
        return tids.size() == nthreads;
    }

    std::string comm(pid_t tid) const
    {
        std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
        std::string s;
        std::getline(f, s);
        return s;
    }

    ~LiveChild()
    {
        if (hold_w >= 0)
            close(hold_w);
        if (pid > 0) {
            kill(pid, SIGKILL);
            int st;
            waitpid(pid, &st, 0);
        }
    }

private:
    int hold_w = -1;
    static void *worker(void *arg)
    {
        pid_t me = my_tid();
        if (write(*(int *)arg, &me, sizeof me) != (ssize_t)sizeof me)
            _exit(5);
        for (;;)
            pause();
        return nullptr;
    }
};

// ibench with args; exit code, stdout and stderr.
struct CliRun {
    int code = -1;
    std::string out, err;
};
CliRun ibench(const std::vector<std::string> &args)
{
    Proc p;
    CliRun r;
    if (!p.start(args, {}))
        return r;
    if (!p.finish(30))
        r.err = "timed out";
    r.code = p.exit_code();
    r.out = p.out;
    r.err += p.err;
    return r;
}

std::string args_str(const std::vector<std::string> &a)
{
    std::string s;
    for (const auto &x : a)
        s += x + " ";
    return s;
}

} // namespace

// ---- pl_proc on this process's own threads --------------------------------------------------------------------------

namespace {

// A thread of this process that blocks until told to end; joined by the destructor.
class OwnThread {
public:
    std::atomic<pid_t> tid{0};
    explicit OwnThread(const char *name)
    {
        if (pipe2(fds, O_CLOEXEC) < 0)
            return;
        started = pthread_create(&th, nullptr, body, this) == 0;
        if (started)
            pthread_setname_np(th, name);
        double end = ib_test::now_s() + 10;
        while (started && !tid.load() && ib_test::now_s() < end)
            usleep(1000);
        std::string want(name);
        while (started && ib_test::now_s() < end && comm() != want)
            usleep(1000);
    }
    std::string comm() const
    {
        std::ifstream f("/proc/self/task/" + std::to_string(tid.load()) + "/comm");
        std::string s;
        std::getline(f, s);
        return s;
    }
    // Ends the thread and waits until the kernel has let go of its tid (pthread_join returns a moment before).
    void end()
    {
        if (!started)
            return;
        close(fds[1]);
        fds[1] = -1;
        pthread_join(th, nullptr);
        started = false;
        double until = ib_test::now_s() + 5;
        while (task_exists(getpid(), tid.load()) && ib_test::now_s() < until)
            usleep(1000);
    }
    ~OwnThread()
    {
        end();
        if (fds[0] >= 0)
            close(fds[0]);
        if (fds[1] >= 0)
            close(fds[1]);
    }
    bool started = false;

private:
    pthread_t th{};
    int fds[2] = {-1, -1};
    static void *body(void *arg)
    {
        OwnThread *t = (OwnThread *)arg;
        t->tid = my_tid();
        char c;
        while (read(t->fds[0], &c, 1) < 0 && errno == EINTR) {
        }
        return nullptr;
    }
};

// Puts this process's main thread back on the CPUs it had when the test started.
class KeepAffinity {
public:
    KeepAffinity() { sched_getaffinity(0, sizeof s, &s); }
    ~KeepAffinity() { sched_setaffinity(0, sizeof s, &s); }

private:
    cpu_set_t s;
};

} // namespace

TEST(PlProc, ListsOwnThreadsMainFirstWithNamesAndAllowedCpus)
{
    OwnThread a("ibt-own-a"), b("ibt-own-b");
    ASSERT_TRUE(a.started && b.started);
    // the main thread, running while its stat is read, on one CPU: that is the CPU it last ran on
    KeepAffinity keep;
    std::vector<int> all = affinity_of(0);
    ASSERT_FALSE(all.empty());
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(all.back(), &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    struct pl_threads t;
    char why[256] = "";
    ASSERT_EQ(pl_proc_threads(getpid(), &t, why, sizeof why), 0) << why;
    ASSERT_GE(t.n, 3u);
    EXPECT_EQ(t.v[0].tid, getpid()) << "the main thread comes first";
    EXPECT_EQ(t.v[0].last_cpu, all.back());
    for (unsigned i = 2; i < t.n; i++)
        EXPECT_LT(t.v[i - 1].tid, t.v[i].tid) << "then by ascending tid";
    long ncpus = sysconf(_SC_NPROCESSORS_CONF);
    bool saw_a = false, saw_b = false;
    for (unsigned i = 0; i < t.n; i++) {
        saw_a |= t.v[i].tid == a.tid && !strcmp(t.v[i].comm, "ibt-own-a");
        saw_b |= t.v[i].tid == b.tid && !strcmp(t.v[i].comm, "ibt-own-b");
        EXPECT_GE(t.v[i].last_cpu, 0) << "tid " << t.v[i].tid;
        EXPECT_LT(t.v[i].last_cpu, ncpus) << "tid " << t.v[i].tid;
        EXPECT_EQ(std::vector<int>(t.v[i].allowed, t.v[i].allowed + t.v[i].nallowed), affinity_of(t.v[i].tid))
            << "tid " << t.v[i].tid;
    }
    EXPECT_TRUE(saw_a && saw_b) << "both named threads listed with their names";
    pl_threads_free(&t);
}

TEST(PlProc, SortPutsTheMainThreadFirstEvenWhenPidsWrapped)
{
    // pids wrapped: the workers got smaller TIDs than the process's own
    struct pl_thread v[4] = {};
    pid_t tids[4] = {900, 40000, 300, 41000};
    for (unsigned i = 0; i < 4; i++)
        v[i].tid = tids[i];
    struct pl_threads t = {40000, 4, v};
    pl_threads_sort(&t);
    std::vector<pid_t> got;
    for (unsigned i = 0; i < 4; i++)
        got.push_back(v[i].tid);
    EXPECT_EQ(got, (std::vector<pid_t>{40000, 300, 900, 41000}));
}

TEST(PlProc, MissingPidIsEsrchAndAThreadIdIsNotAProcess)
{
    char why[256] = "";
    struct pl_threads t;
    pid_t gone = vanished_pid();
    EXPECT_EQ(pl_proc_threads(gone, &t, why, sizeof why), -ESRCH);
    EXPECT_EQ(std::string(why), "no process " + std::to_string(gone));
    EXPECT_EQ(t.n, 0u);

    OwnThread a("ibt-own-a");
    ASSERT_TRUE(a.started);
    why[0] = '\0';
    EXPECT_EQ(pl_proc_threads(a.tid, &t, why, sizeof why), -EINVAL);
    EXPECT_NE(std::string(why).find("is a thread of process " + std::to_string(getpid())), std::string::npos) << why;

    struct pl_apply_result r;
    int cpu = 0;
    struct pl_apply_opts o = {};
    o.cpus = &cpu;
    o.ncpus = 1;
    EXPECT_EQ(pl_proc_apply(gone, &o, &r, why, sizeof why), -ESRCH);
    EXPECT_EQ(r.n, 0u);
    pl_apply_result_free(&r);
}

TEST(PlProc, CpuListKeepsTheOrderWrittenAndRefusesRepeats)
{
    char why[256] = "";
    int *v = nullptr;
    unsigned n = 0;
    ASSERT_EQ(pl_cpulist_parse("5,0-2,4", &v, &n, why, sizeof why), 0) << why;
    EXPECT_EQ(std::vector<int>(v, v + n), (std::vector<int>{5, 0, 1, 2, 4}));
    free(v);
    for (const char *bad : {"", "0,0", "0-2,1", "x", "1-0", "0-", ",1", "1,", " 1", "0;1"}) {
        why[0] = '\0';
        EXPECT_EQ(pl_cpulist_parse(bad, &v, &n, why, sizeof why), -EINVAL) << "'" << bad << "'";
        EXPECT_EQ(v, nullptr);
        EXPECT_NE(std::string(why).find("bad CPU list"), std::string::npos) << why;
    }
    char buf[64];
    int c[] = {0, 1, 2, 5, 7, 8};
    EXPECT_STREQ(pl_cpulist_format(c, 6, buf, sizeof buf), "0-2,5,7-8");
    EXPECT_STREQ(pl_cpulist_format(c, 0, buf, sizeof buf), "");
}

TEST(PlProc, CpusMapToLogicalPusAndUnknownCpusAreNamed)
{
    // a uniform 2x2 machine has PU os index = logical index
    const char *names[] = {"package", "core"};
    unsigned arity[] = {2, 2};
    struct pl_hier h;
    char why[256] = "";
    ASSERT_EQ(pl_hier_uniform(&h, names, arity, 2, 1, why, sizeof why), 0) << why;
    // and a shuffled numbering, as firmware gives
    int os[] = {2, 0, 3, 1};
    for (unsigned p = 0; p < 4; p++)
        h.pu_os[p] = os[p];
    int cpus[] = {0, 1, 3};
    unsigned pus[3];
    ASSERT_EQ(pl_cpus_to_pus(&h, cpus, 3, pus, why, sizeof why), 0) << why;
    EXPECT_EQ(std::vector<unsigned>(pus, pus + 3), (std::vector<unsigned>{1, 3, 2}));
    int bad[] = {1, 4};
    EXPECT_EQ(pl_cpus_on_machine(&h, bad, 2, why, sizeof why), -EINVAL);
    EXPECT_STREQ(why, "CPU 4 is not on this machine (CPUs 0-3)");
    pl_hier_free(&h);
}

namespace {
// The hook of the apply tests: in round 0 it ends one listed thread (pinning it then finds it gone) and starts a
// new one (a later pass must find it); with `every_round` it starts one in every round.
struct HookState {
    OwnThread *to_end = nullptr;
    std::vector<OwnThread *> started;
    bool every_round = false;
    ~HookState()
    {
        for (auto *t : started)
            delete t;
    }
};
void apply_hook(void *arg, unsigned round)
{
    HookState *s = (HookState *)arg;
    if (round == 0 && s->to_end)
        s->to_end->end();
    if (round == 0 || s->every_round)
        s->started.push_back(new OwnThread("ibt-late"));
}
} // namespace

TEST(PlProc, ApplyPinsInOrderCatchesLateThreadsAndSkipsExitedOnes)
{
    if (!alone())
        GTEST_SKIP() << "this process has other threads";
    std::vector<int> mine = affinity_of(0);
    if (mine.size() < 2)
        GTEST_SKIP() << "needs 2 allowed CPUs";
    KeepAffinity keep;
    OwnThread a("ibt-own-a");
    ASSERT_TRUE(a.started);
    HookState hs;
    hs.to_end = &a;
    int cpus[2] = {mine[1], mine[0]}; // reversed: the list's order, not ascending, is the order handed out
    struct pl_apply_opts o = {};
    o.cpus = cpus;
    o.ncpus = 2;
    o.on_listed = apply_hook;
    o.hook_arg = &hs;
    struct pl_apply_result r;
    char why[256] = "";
    ASSERT_EQ(pl_proc_apply(getpid(), &o, &r, why, sizeof why), 0) << why;
    ASSERT_EQ(hs.started.size(), 1u);
    pid_t late = hs.started[0]->tid;
    // round 0: main (pos 0, cpus[0]), a (pos 1, exited before pinning); round 1: the late thread (pos 2, wraps to
    // cpus[0]); round 2: nothing new
    ASSERT_EQ(r.n, 3u);
    EXPECT_EQ(r.v[0].tid, getpid());
    EXPECT_EQ(r.v[0].cpu, cpus[0]);
    EXPECT_FALSE(r.v[0].exited);
    EXPECT_EQ(r.v[1].tid, a.tid);
    EXPECT_TRUE(r.v[1].exited) << "a thread that exits meanwhile is skipped, not an error";
    EXPECT_EQ(r.v[2].tid, late);
    EXPECT_EQ(r.v[2].round, 1u);
    EXPECT_EQ(r.v[2].cpu, cpus[0]);
    EXPECT_TRUE(r.wrapped);
    EXPECT_EQ(r.pinned, 2u);
    EXPECT_EQ(r.rounds, 3u);
    EXPECT_EQ(affinity_of(0), std::vector<int>{cpus[0]});
    EXPECT_EQ(affinity_of(late), std::vector<int>{cpus[0]});
    pl_apply_result_free(&r);
}

TEST(PlProc, ApplyRefusedMidwayPutsBackTheThreadsAlreadyPinned)
{
    if (!alone())
        GTEST_SKIP() << "this process has other threads";
    std::vector<int> mine = affinity_of(0);
    if (mine.size() < 2)
        GTEST_SKIP() << "needs 2 allowed CPUs";
    KeepAffinity keep;
    OwnThread a("ibt-own-a");
    ASSERT_TRUE(a.started);
    // the main thread gets a CPU it may use, the next one a CPU no machine here has (the library leaves that check
    // to its caller, so the kernel refuses it): EINVAL half way
    int cpus[2] = {mine[0], 4000};
    struct pl_apply_opts o = {};
    o.cpus = cpus;
    o.ncpus = 2;
    struct pl_apply_result r;
    char why[256] = "";
    EXPECT_EQ(pl_proc_apply(getpid(), &o, &r, why, sizeof why), -EINVAL);
    EXPECT_NE(std::string(why).find("thread " + std::to_string(a.tid) + " of process " + std::to_string(getpid()) +
                                    ": cannot pin to CPU 4000"),
              std::string::npos)
        << why;
    EXPECT_NE(std::string(why).find("put back"), std::string::npos) << why;
    EXPECT_EQ(affinity_of(0), mine) << "the main thread, pinned first, is back on its CPUs";
    EXPECT_EQ(affinity_of(a.tid), mine);
    EXPECT_EQ(r.pinned, 0u);
    ASSERT_GE(r.n, 1u);
    EXPECT_EQ(std::vector<int>(r.v[0].before, r.v[0].before + r.v[0].nbefore), mine);
    pl_apply_result_free(&r);
}

TEST(PlProc, ApplySetGivesEveryThreadTheWholeList)
{
    std::vector<int> mine = affinity_of(0);
    KeepAffinity keep;
    OwnThread a("ibt-own-a");
    ASSERT_TRUE(a.started);
    struct pl_apply_opts o = {};
    o.cpus = mine.data();
    o.ncpus = (unsigned)mine.size();
    o.set = true;
    struct pl_apply_result r;
    char why[256] = "";
    ASSERT_EQ(pl_proc_apply(getpid(), &o, &r, why, sizeof why), 0) << why;
    EXPECT_EQ(r.rounds, 2u);
    EXPECT_FALSE(r.wrapped);
    for (unsigned i = 0; i < r.n; i++) {
        EXPECT_EQ(r.v[i].cpu, -1);
        EXPECT_EQ(affinity_of(r.v[i].tid), mine) << "tid " << r.v[i].tid;
    }
    pl_apply_result_free(&r);
}

TEST(PlProc, ApplyGivesUpOnAProcessThatKeepsCreatingThreads)
{
    if (!alone())
        GTEST_SKIP() << "this process has other threads";
    KeepAffinity keep;
    std::vector<int> mine = affinity_of(0);
    HookState hs;
    hs.every_round = true;
    struct pl_apply_opts o = {};
    o.cpus = mine.data();
    o.ncpus = 1;
    o.rounds = 3;
    o.on_listed = apply_hook;
    o.hook_arg = &hs;
    struct pl_apply_result r;
    char why[256] = "";
    EXPECT_EQ(pl_proc_apply(getpid(), &o, &r, why, sizeof why), -EAGAIN);
    EXPECT_NE(std::string(why).find("still creating threads after 3 passes"), std::string::npos) << why;
    EXPECT_EQ(r.rounds, 3u);
    EXPECT_EQ(r.n, 3u) << "main + the threads of rounds 0 and 1 (round 2's was never listed)";
    pl_apply_result_free(&r);
}

// ---- ibench place apply|show on a live 2-thread child ---------------------------------------------------------------

// Each thread to its own CPU set (place cluster --apply): a live 2-thread child, main thread to CPU 0, the worker to
// CPU 1, read back; a tid that is not the process's is skipped; a process that is gone is -ESRCH.
TEST(PlProc, PinEachGivesEveryThreadItsOwnSet)
{
    if (!have_cpus_0_1())
        GTEST_SKIP() << "needs CPUs 0 and 1";
    LiveChild c;
    ASSERT_TRUE(c.start(2));
    const int zero[] = {0}, one[] = {1};
    pid_t tids[] = {c.tids[0], c.tids[1], getpid()};
    const int *sets[] = {zero, one, zero};
    unsigned ns[] = {1, 1, 1}, skipped = 9;
    char why[256] = "";
    ASSERT_EQ(pl_proc_pin_each(c.pid, tids, sets, ns, 3, &skipped, why, sizeof why), 0) << why;
    EXPECT_EQ(skipped, 1u) << "our own pid is not the child's thread";
    EXPECT_EQ(affinity_of(c.tids[0]), std::vector<int>{0});
    EXPECT_EQ(affinity_of(c.tids[1]), std::vector<int>{1});
    EXPECT_NE(affinity_of(0), std::vector<int>{0}) << "this process was not touched";
    pid_t gone = vanished_pid();
    EXPECT_EQ(pl_proc_pin_each(gone, tids, sets, ns, 1, &skipped, why, sizeof why), -ESRCH) << why;
}

TEST(PlaceLive, ApplyCpusPinsOneCpuEachMainThreadFirst)
{
    if (!have_cpus_0_1())
        GTEST_SKIP() << "needs CPUs 0 and 1";
    LiveChild c;
    ASSERT_TRUE(c.start(2));
    std::string pid = std::to_string(c.pid);
    CliRun r = ibench({"place", "apply", "--pid", pid, "--cpus", "0,1"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(allowed_list(c.pid, c.tids[0]), "0");
    EXPECT_EQ(allowed_list(c.pid, c.tids[1]), "1");
    EXPECT_NE(r.out.find("ibt-worker-1"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
    // the list's order is the order handed out
    r = ibench({"place", "apply", "--pid", pid, "--cpus", "1,0", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(allowed_list(c.pid, c.tids[0]), "1");
    EXPECT_EQ(allowed_list(c.pid, c.tids[1]), "0");
    json_error_t je;
    json_t *doc = json_loads(r.out.c_str(), 0, &je);
    ASSERT_NE(doc, nullptr) << je.text << "\n" << r.out;
    EXPECT_STREQ(json_string_value(json_object_get(doc, "mode")), "cpus");
    EXPECT_EQ(json_integer_value(json_object_get(doc, "pinned")), 2);
    json_t *th = json_object_get(doc, "threads");
    ASSERT_EQ(json_array_size(th), 2u);
    EXPECT_EQ(json_integer_value(json_object_get(json_array_get(th, 0), "tid")), c.tids[0]);
    EXPECT_EQ(json_integer_value(json_array_get(json_object_get(json_array_get(th, 0), "cpus"), 0)), 1);
    EXPECT_EQ(json_integer_value(json_array_get(json_object_get(json_array_get(th, 1), "cpus"), 0)), 0);
    // what each thread had before: the first apply's CPU
    EXPECT_EQ(json_integer_value(json_array_get(json_object_get(json_array_get(th, 0), "before"), 0)), 0);
    EXPECT_EQ(json_integer_value(json_array_get(json_object_get(json_array_get(th, 1), "before"), 0)), 1);
    json_decref(doc);
}

TEST(PlaceLive, ApplySetGivesTheWholeListAndWrappingIsSaid)
{
    if (!have_cpus_0_1())
        GTEST_SKIP() << "needs CPUs 0 and 1";
    LiveChild c;
    ASSERT_TRUE(c.start(2));
    std::string pid = std::to_string(c.pid);
    CliRun r = ibench({"place", "apply", "--pid", pid, "--cpus", "1"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(allowed_list(c.pid, c.tids[0]), "1");
    EXPECT_EQ(allowed_list(c.pid, c.tids[1]), "1") << "two threads on one CPU: the list starts again";
    EXPECT_NE(r.err.find("note: 2 threads on 1 CPU(s): the CPUs were handed out again"), std::string::npos) << r.err;
    r = ibench({"place", "apply", "--pid", pid, "--cpus", "0-1", "--set"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(allowed_list(c.pid, c.tids[0]), "0-1");
    EXPECT_EQ(allowed_list(c.pid, c.tids[1]), "0-1");
    EXPECT_EQ(r.err, "");
}

TEST(PlaceLive, ShowReportsWhatApplySet)
{
    if (!have_cpus_0_1())
        GTEST_SKIP() << "needs CPUs 0 and 1";
    LiveChild c;
    ASSERT_TRUE(c.start(2));
    std::string pid = std::to_string(c.pid);
    ASSERT_EQ(ibench({"place", "apply", "--pid", pid, "--cpus", "0,1"}).code, 0);
    CliRun r = ibench({"place", "show", "--pid", pid, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_error_t je;
    json_t *doc = json_loads(r.out.c_str(), 0, &je);
    ASSERT_NE(doc, nullptr) << je.text << "\n" << r.out;
    json_t *th = json_object_get(doc, "threads");
    ASSERT_EQ(json_array_size(th), 2u);
    for (unsigned i = 0; i < 2; i++) {
        json_t *t = json_array_get(th, i);
        EXPECT_EQ(json_integer_value(json_object_get(t, "tid")), c.tids[i]);
        EXPECT_STREQ(json_string_value(json_object_get(t, "name")), c.comm(c.tids[i]).c_str());
        EXPECT_STREQ(json_string_value(json_object_get(t, "allowed_list")), std::to_string(i).c_str());
        EXPECT_TRUE(json_is_integer(json_object_get(t, "last_cpu")));
    }
    json_t *pl = json_object_get(doc, "placement");
    EXPECT_TRUE(json_is_true(json_object_get(pl, "pinned")));
    EXPECT_STREQ(json_string_value(json_object_get(pl, "cpus_list")), "0-1");
    EXPECT_EQ(json_integer_value(json_object_get(pl, "nthreads")), 2);
    EXPECT_TRUE(json_is_object(json_object_get(pl, "class")));
    json_decref(doc);

    // all threads on both CPUs: not pinned one per CPU; the union is the placement
    ASSERT_EQ(ibench({"place", "apply", "--pid", pid, "--cpus", "0-1", "--set"}).code, 0);
    r = ibench({"place", "show", "--pid", pid});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("not pinned one thread per CPU; the CPUs they may use, CPUs 0-1, as a placement of 2 PU(s)"),
              std::string::npos)
        << r.out;
    // both threads on CPU 0: allowed one CPU each, but the same one
    ASSERT_EQ(ibench({"place", "apply", "--pid", pid, "--cpus", "0"}).code, 0);
    r = ibench({"place", "show", "--pid", pid});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("not pinned one thread per CPU; the CPUs they may use, CPUs 0, as a placement of 1 PU(s)"),
              std::string::npos)
        << r.out;
}

// Depends on the real classes engine (pl_classes.c): the row is computed here through the same library call.
TEST(PlaceLive, ClassPicksTheListedRepresentativeAndWarnsOnAThreadCountMismatch)
{
    if (!have_cpus_0_1())
        GTEST_SKIP() << "needs CPUs 0 and 1";
    struct pl_machine m;
    struct pl_hier h;
    char why[512] = "";
    ASSERT_EQ(pl_machine_load(&m, "live", nullptr, why, sizeof why), 0) << why;
    ASSERT_EQ(pl_hier_from_topo(m.topo, nullptr, &h, why, sizeof why), 0) << why;
    struct pl_classes_opts co = {};
    co.nthreads = 2;
    co.limit = 1000000;
    struct pl_class_list l;
    ASSERT_EQ(pl_classes(&h, &co, &l, why, sizeof why), 0) << why;
    ASSERT_GE(l.n, 1u);
    std::string want0 = std::to_string(h.pu_os[l.v[0].pus[0]]), want1 = std::to_string(h.pu_os[l.v[0].pus[1]]);
    pl_class_list_free(&l);
    pl_hier_free(&h);
    pl_machine_free(&m);

    LiveChild c;
    ASSERT_TRUE(c.start(2));
    std::string pid = std::to_string(c.pid);
    CliRun r = ibench({"place", "apply", "--pid", pid, "--class", "1", "--threads", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(allowed_list(c.pid, c.tids[0]), want0);
    EXPECT_EQ(allowed_list(c.pid, c.tids[1]), want1);
    r = ibench({"place", "apply", "--pid", pid, "--class", "1", "--threads", "1"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: process " + pid + " has 2 thread(s), the class is a placement of 1"),
              std::string::npos)
        << r.err;
}

TEST(PlaceLive, BadInputExits2WithOneLineAndPinsNothing)
{
    LiveChild c;
    ASSERT_TRUE(c.start(2));
    std::string pid = std::to_string(c.pid), gone = std::to_string(vanished_pid());
    std::string before0 = allowed_list(c.pid, c.tids[0]), before1 = allowed_list(c.pid, c.tids[1]);
    struct Case {
        std::vector<std::string> args;
        std::string says;
    } cases[] = {
        {{"place", "apply", "--pid", gone, "--cpus", "0"}, "no process"},
        {{"place", "show", "--pid", gone}, "no process"},
        {{"place", "apply", "--pid", pid, "--cpus", "999"}, "CPU 999 is not on this machine"},
        {{"place", "apply", "--pid", pid, "--cpus", "0-"}, "bad CPU list '0-'"},
        {{"place", "apply", "--pid", pid, "--cpus", "0,0"}, "a CPU is named twice"},
        {{"place", "apply", "--pid", pid, "--cpus", "zero"}, "bad CPU list"},
        {{"place", "apply", "--pid", pid, "--class", "0", "--threads", "2"}, "class id 0 out of range"},
        {{"place", "apply", "--pid", pid, "--class", "100000", "--threads", "1"}, "class id 100000 out of range"},
        {{"place", "apply", "--pid", pid, "--class", "1", "--threads", "100000"}, "--threads 100000: this machine has"},
        {{"place", "apply", "--pid", pid, "--class", "1"}, "--class ID needs --threads N"},
        {{"place", "apply", "--pid", pid, "--cpus", "0", "--limit", "5"}, "--limit goes with --class"},
        {{"place", "apply", "--pid", pid, "--class", "1", "--threads", "1", "--limit", "5"}, "--limit goes with --all"},
        {{"place", "apply", "--pid", pid, "--class", "1", "--threads", "1", "--all", "--limit", "0"}, "bad --limit"},
        {{"place", "apply", "--pid", pid, "--cpus", "0", "--class", "1", "--threads", "1"}, "either --cpus"},
        {{"place", "apply", "--pid", "-3", "--cpus", "0"}, "bad --pid"},
        {{"place", "apply", "--cpus", "0"}, "--pid P is required"},
        {{"place", "apply", "--pid", pid, "--cpus", "0", "--topology", "synthetic:pack:2 pu:1"}, "only live"},
        {{"place", "show", "--pid", std::to_string(c.tids[1])}, "is a thread of process " + pid},
    };
    for (const auto &k : cases) {
        CliRun r = ibench(k.args);
        EXPECT_EQ(r.code, 2) << args_str(k.args) << "\n" << r.err;
        EXPECT_EQ(r.out, "") << args_str(k.args);
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args_str(k.args) << "\n" << r.err;
        EXPECT_EQ(r.err.rfind("ibench place " + k.args[1] + ": ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(k.says), std::string::npos) << args_str(k.args) << "\n" << r.err;
    }
    EXPECT_EQ(allowed_list(c.pid, c.tids[0]), before0) << "bad input pins nothing";
    EXPECT_EQ(allowed_list(c.pid, c.tids[1]), before1);
}
