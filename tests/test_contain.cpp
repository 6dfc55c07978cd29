// test_contain.cpp - nothing outlives ibench: children in a cgroup each, killed whole; the
// pdeathsig fallback; the watchdog after a SIGKILL; stale scratch directories; SIGHUP/SIGQUIT and a second Ctrl-C.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cgroup.h"
#include "cli.h"
#include "fsguard.h"
#include "target.h"
#include "test_support.h"
#include "watchdog.h"

namespace {

// true when pid is gone (or a zombie nobody reaps yet) within ms
bool gone_within(pid_t pid, int ms)
{
    for (int i = 0; i < ms / 10; i++) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return true;
        char path[64], st = 0;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        std::ifstream f(path);
        std::string s;
        std::getline(f, s);
        size_t rp = s.rfind(')');
        if (rp != std::string::npos && rp + 2 < s.size())
            st = s[rp + 2];
        if (st == 'Z' || st == 'X')
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

pid_t read_pid(const std::string &file, int ms = 3000)
{
    for (int i = 0; i < ms / 10; i++) {
        std::ifstream f(file);
        long p = 0;
        if (f >> p && p > 0)
            return (pid_t)p;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
}

// A pid no process has: a child's, reaped.
pid_t dead_pid()
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, nullptr, 0);
    return p;
}

// The cgroup hierarchies this machine lets us use, each as a root (none when not root or no cgroups).
std::vector<cg_root> usable_roots()
{
    std::vector<cg_root> v;
    struct {
        cg_kind kind;
        const char *path;
        const char *need; // a file only that kind of hierarchy has
    } cand[] = {{CG_V1, "/sys/fs/cgroup/freezer", "freezer.state"},
                {CG_V1, "/sys/fs/cgroup/pids", "pids.max"},
                {CG_V2, "/sys/fs/cgroup/unified", "cgroup.kill"},
                {CG_V2, "/sys/fs/cgroup", "cgroup.kill"}};
    for (auto &c : cand) {
        cg_root r;
        char why[256];
        if (access((std::string(c.path) + "/cgroup.procs").c_str(), W_OK) != 0 ||
            cg_root_at(&r, c.kind, c.path, why, sizeof why) != 0)
            continue;
        char probe[CG_PATH_MAX];
        if (cg_make(&r, probe, sizeof probe, why, sizeof why) != 0)
            continue;
        bool ok = access((std::string(probe) + "/" + c.need).c_str(), F_OK) == 0;
        rmdir(probe);
        if (ok)
            v.push_back(r);
    }
    return v;
}

// The usable hierarchies with a freezer (v1 freezer, v2): where a child can be paused.
std::vector<cg_root> freezable_roots()
{
    std::vector<cg_root> freezable;
    for (auto &r : usable_roots()) {
        char probe[CG_PATH_MAX], why[256];
        if (cg_make(&r, probe, sizeof probe, why, sizeof why) != 0)
            continue;
        bool ok = access((std::string(probe) + "/freezer.state").c_str(), F_OK) == 0 ||
                  access((std::string(probe) + "/cgroup.freeze").c_str(), F_OK) == 0;
        rmdir(probe);
        if (ok)
            freezable.push_back(r);
    }
    return freezable;
}

// The CPU affinity of every thread of pid, by tid.
std::map<pid_t, std::vector<int>> affinities(pid_t pid)
{
    std::map<pid_t, std::vector<int>> m;
    for (const std::string &t : ib_test::dir_entries("/proc/" + std::to_string(pid) + "/task")) {
        pid_t tid = (pid_t)atoi(t.c_str());
        cpu_set_t set;
        if (tid <= 0 || sched_getaffinity(tid, sizeof set, &set) != 0)
            continue;
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                m[tid].push_back(c);
    }
    return m;
}

bool set_affinity(pid_t tid, std::initializer_list<int> cpus)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus)
        CPU_SET(c, &set);
    return sched_setaffinity(tid, sizeof set, &set) == 0;
}

// A stand-in for an ibench that dies by SIGKILL: a child that starts its watchdog, runs body (which writes what the
// test needs on fd and says false on failure: the child then exits 1), writes the watchdog's pid, and SIGKILLs
// itself. Returns its pid, reaped, with *st its wait status; *rfd the read end (the body's writes, then the pid).
pid_t ibench_killed(const std::function<bool(int)> &body, int *rfd, int *st)
{
    int pfd[2];
    if (pipe(pfd) != 0)
        return -1;
    pid_t ib = fork();
    if (ib == 0) {
        close(pfd[0]);
        char why[512];
        if (watchdog_start(why, sizeof why) != 0 || !body(pfd[1]))
            _exit(1);
        pid_t w = watchdog_pid();
        if (write(pfd[1], &w, sizeof w) != (ssize_t)sizeof w)
            _exit(1);
        raise(SIGKILL);
        _exit(1);
    }
    close(pfd[1]);
    *rfd = pfd[0];
    waitpid(ib, st, 0);
    return ib;
}

} // namespace

// A paused child is thawed before anything waits on it when ibench is SIGKILLed, in every freezer this machine
// has; and the watchdog acts on ibench's death even while a copy of ibench (a fork that has not exec'd yet) holds
// its socket, frozen in the same cgroup. Before the fix the watchdog waited for end-of-file for ever and the
// cgroup stayed FROZEN.
TEST(Contain, WatchdogThawsWhatIbenchPausedAfterASigkill)
{
    std::vector<cg_root> freezable = freezable_roots();
    if (freezable.empty())
        GTEST_SKIP() << "no cgroup hierarchy with a freezer here (not root, or a v1 pids hierarchy only)";
    for (auto &r : freezable) {
        int fd = -1, st = 0;
        ibench_killed(
            [&r](int out) {
                char why[512];
                child_containment_set(&r);
                child c;
                if (child_spawn("exec sleep 307", nullptr, 0, 0, 0, &c, why, sizeof why) != 0)
                    return false;
                pid_t copy = fork(); // holds the watchdog's socket as a child between fork and exec does
                if (copy == 0) {
                    for (;;)
                        pause();
                }
                return copy > 0 && cg_add(c.cg, copy) == 0 && child_pause(&c, 1, nullptr, why, sizeof why) == 0 &&
                       write(out, &c.pid, sizeof c.pid) == (ssize_t)sizeof c.pid &&
                       write(out, &copy, sizeof copy) == (ssize_t)sizeof copy &&
                       write(out, c.cg, sizeof c.cg) == (ssize_t)sizeof c.cg;
            },
            &fd, &st);
        pid_t w = -1, kid = -1, copy = -1;
        char cg[CG_PATH_MAX] = "";
        ASSERT_EQ(read(fd, &kid, sizeof kid), (ssize_t)sizeof kid) << r.dir;
        ASSERT_EQ(read(fd, &copy, sizeof copy), (ssize_t)sizeof copy);
        ASSERT_EQ(read(fd, cg, sizeof cg), (ssize_t)sizeof cg);
        ASSERT_EQ(read(fd, &w, sizeof w), (ssize_t)sizeof w);
        close(fd);
        ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        EXPECT_TRUE(gone_within(kid, 2000)) << "the frozen child outlived a SIGKILLed ibench by 2 s (" << r.dir << ")";
        EXPECT_TRUE(gone_within(copy, 2000)) << "the frozen copy of ibench outlived it by 2 s (" << r.dir << ")";
        EXPECT_TRUE(gone_within(w, 2000)) << "the watchdog still waits (" << r.dir << ")";
        struct stat sb;
        EXPECT_NE(stat(cg, &sb), 0) << cg << " left";
        for (pid_t p : {kid, copy}) { // a failure must not leave them frozen either
            cg_freeze(cg, 0);
            kill(p, SIGKILL);
        }
        cg_remove(cg);
        kill(w, SIGKILL);
    }
    child_containment_set(nullptr);
}

// child_spawn returns once the child has exec'd: a child paused right after it is never a copy of ibench holding
// ibench's descriptors. Before the fix /proc/<pid>/exe was often still this test binary.
TEST(Contain, SpawnReturnsAfterExec)
{
    child_containment_set(nullptr);
    char self[4096] = "";
    ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
    int still_us = 0;
    for (int i = 0; i < 30; i++) {
        child c;
        char why[256];
        ASSERT_EQ(child_spawn("exec sleep 308", nullptr, 0, 0, 0, &c, why, sizeof why), 0) << why;
        char exe[4096] = "";
        ssize_t n = readlink(("/proc/" + std::to_string(c.pid) + "/exe").c_str(), exe, sizeof exe - 1);
        still_us += n > 0 && !strcmp(exe, self);
        child_stop(&c, 0);
    }
    EXPECT_EQ(still_us, 0) << "child_spawn returned before the exec " << still_us << " times of 30";
}

// A process ibench did not start gets its threads' affinities back: from pid_unpin on the way out (a thread started
// since the pin takes the main thread's), and from the watchdog when ibench is SIGKILLed while it is pinned.
TEST(Contain, PinnedProcessIsPutBack)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "one CPU: a pin changes nothing to put back";
    pid_t svc = ib_test::spawn_two_thread_spinner(30);
    ASSERT_GT(svc, 0);
    auto before = affinities(svc);
    ASSERT_EQ(before.size(), 2u);
    for (auto &t : before) // two different sets, so that putting back the wrong one shows
        ASSERT_TRUE(t.first == svc ? set_affinity(t.first, {0, 1}) : set_affinity(t.first, {1}));
    before = affinities(svc);

    // the entry the watchdog is told reads back exactly
    struct pin_saved s = {};
    char why[512] = "";
    int cpu0[] = {0};
    ASSERT_EQ(pid_pin(svc, cpu0, 1, &s, why, sizeof why), 0) << why;
    for (auto &t : affinities(svc))
        EXPECT_EQ(t.second, std::vector<int>{0}) << "thread " << t.first << " not pinned";
    struct pin_saved back = {};
    for (unsigned i = 0; i < s.n; i++) {
        char entry[512];
        ASSERT_EQ(pin_saved_entry(&s, i, entry, sizeof entry), 0);
        ASSERT_EQ(pin_saved_parse(&back, entry), 0) << entry;
    }
    ASSERT_EQ(back.n, s.n);
    EXPECT_EQ(back.pid, svc);
    EXPECT_EQ(back.start, s.start);
    EXPECT_EQ(memcmp(back.mask, s.mask, s.n * sizeof(*s.mask)), 0);
    EXPECT_EQ(pin_saved_parse(&back, "12/13 5 xyz"), -EINVAL);
    pin_saved_free(&back);
    ASSERT_EQ(pid_unpin(&s, why, sizeof why), 0) << why;
    EXPECT_EQ(affinities(svc), before) << "pid_unpin did not put every thread back";
    EXPECT_EQ(s.pid, 0) << "saved state not released";

    // a thread unknown to the save (as one started after the pin) gets the main thread's set
    ASSERT_EQ(pid_pin(svc, cpu0, 1, &s, why, sizeof why), 0) << why;
    for (unsigned i = 0; i < s.n; i++)
        if (s.tid[i] != svc)
            s.tid[i] = 1; // no thread of svc
    ASSERT_EQ(pid_unpin(&s, why, sizeof why), 0) << why;
    for (auto &t : affinities(svc))
        EXPECT_EQ(t.second, (std::vector<int>{0, 1})) << "thread " << t.first;
    for (auto &t : before)
        ASSERT_TRUE(t.first == svc ? set_affinity(t.first, {0, 1}) : set_affinity(t.first, {1}));

    // ibench SIGKILLed while the process is pinned: the watchdog puts it back
    int fd = -1, st = 0;
    ibench_killed(
        [&](int) {
            struct pin_saved k = {};
            return pid_pin(svc, cpu0, 1, &k, why, sizeof why) == 0;
        },
        &fd, &st);
    pid_t w = -1;
    ASSERT_EQ(read(fd, &w, sizeof w), (ssize_t)sizeof w);
    close(fd);
    EXPECT_TRUE(gone_within(w, 2000)) << "the watchdog outlived its cleanup";
    EXPECT_EQ(affinities(svc), before) << "the watchdog did not put the pinned process back";
    kill(svc, SIGKILL);
    waitpid(svc, &st, 0);
    EXPECT_EQ(pid_pin(svc, cpu0, 1, &s, why, sizeof why), -ENOENT) << why;
}

// A daemon the target starts (setsid: out of its process group) dies when the child is stopped: its cgroup is
// killed whole, in each kind of hierarchy this machine has. Before the fix the daemon outlived child_run.
TEST(Contain, DaemonOfAChildDiesWithItsCgroup)
{
    auto roots = usable_roots();
    if (roots.empty())
        GTEST_SKIP() << "no writable cgroup hierarchy here (not root?)";
    ib_test::TempDir t("contain");
    for (auto &r : roots) {
        child_containment_set(&r);
        char desc[512];
        EXPECT_EQ(child_containment(desc, sizeof desc), r.kind);
        EXPECT_NE(strstr(desc, r.dir), nullptr) << desc;
        std::string pidf = t.path() + "/daemon-" + std::to_string(r.kind);
        std::string cmd = "setsid sleep 301 </dev/null >/dev/null 2>&1 & echo $! > " + pidf;
        char *out = nullptr, why[512] = "";
        int st = 0;
        uint64_t wall = 0;
        ASSERT_EQ(child_run(cmd.c_str(), nullptr, 0, 5000, nullptr, &out, &st, &wall, nullptr, why, sizeof why), 0)
            << why;
        free(out);
        pid_t d = read_pid(pidf);
        ASSERT_GT(d, 0);
        EXPECT_TRUE(gone_within(d, 2000)) << "the daemon " << d << " outlived its child (" << r.dir << ")";
        kill(d, SIGKILL);
        // its cgroup is removed too: nothing of this process is left under the root
        DIR *dd = opendir(r.dir);
        ASSERT_NE(dd, nullptr);
        std::string mine = std::to_string(getpid()) + "-";
        while (dirent *e = readdir(dd))
            EXPECT_NE(std::string(e->d_name).rfind(mine, 0), 0u) << r.dir << "/" << e->d_name << " left";
        closedir(dd);
    }
    child_containment_set(nullptr);
}

// The same through child_spawn/child_stop (a service stopped at the end of a profile).
TEST(Contain, StoppedServiceTakesItsDaemonAlong)
{
    auto roots = usable_roots();
    if (roots.empty())
        GTEST_SKIP() << "no writable cgroup hierarchy here (not root?)";
    ib_test::TempDir t("contain");
    child_containment_set(&roots[0]);
    std::string pidf = t.path() + "/daemon";
    std::string cmd = "setsid sleep 302 </dev/null >/dev/null 2>&1 & echo $! > " + pidf + "; exec sleep 302";
    child c;
    char why[512] = "";
    ASSERT_EQ(child_spawn(cmd.c_str(), nullptr, 0, 0, 0, &c, why, sizeof why), 0) << why;
    EXPECT_NE(c.cg[0], 0) << "spawned without a cgroup";
    pid_t d = read_pid(pidf);
    ASSERT_GT(d, 0);
    child_stop(&c, 200);
    EXPECT_TRUE(c.exited);
    EXPECT_TRUE(gone_within(d, 2000)) << "the daemon " << d << " outlived the stopped service";
    kill(d, SIGKILL);
    child_containment_set(nullptr);
}

// CPU time (utime + stime, ticks) of pid from /proc/pid/stat; -1 when unreadable.
long cpu_ticks(pid_t pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string s;
    std::getline(f, s);
    size_t rp = s.rfind(')');
    if (rp == std::string::npos)
        return -1;
    std::istringstream in(s.substr(rp + 2));
    std::string field;
    long ut = -1, st = -1;
    for (int i = 3; in >> field; i++) { // field 3 is the state; utime is 14, stime 15
        if (i == 14)
            ut = std::stol(field);
        if (i == 15) {
            st = std::stol(field);
            break;
        }
    }
    return ut < 0 || st < 0 ? -1 : ut + st;
}

// A paused work stays paused even where a process of it left the process group (fio's job processes call setsid):
// the freezer holds the cgroup, where SIGSTOP to the group would miss it. Before the fix (SIGSTOP to the group) the
// spinning daemon kept running while "paused".
TEST(Contain, PauseFreezesAProcessThatLeftTheGroup)
{
    std::vector<cg_root> freezable = freezable_roots();
    if (freezable.empty())
        GTEST_SKIP() << "no cgroup hierarchy with a freezer here (not root, or a v1 pids hierarchy only)";
    ib_test::TempDir t("pause");
    for (auto &r : freezable) {
        child_containment_set(&r);
        std::string pidf = t.path() + "/spin-" + std::to_string(r.kind);
        std::string cmd = "setsid sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & echo $! > " + pidf +
                          "; exec sleep 300";
        child c;
        char why[512] = "";
        ASSERT_EQ(child_spawn(cmd.c_str(), nullptr, 0, 0, 0, &c, why, sizeof why), 0) << why;
        pid_t d = read_pid(pidf);
        ASSERT_GT(d, 0);
        for (int i = 0; i < 200 && getpgid(d) == c.pid; i++) // $! is known before setsid has run in the child
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_NE(getpgid(d), c.pid) << "the spinner should have left the group";
        const char *how = nullptr;
        ASSERT_EQ(child_pause(&c, 1, &how, why, sizeof why), 0) << why;
        EXPECT_STREQ(how, "freezer") << r.dir;
        long t0 = cpu_ticks(d);
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        long t1 = cpu_ticks(d);
        EXPECT_LE(t1 - t0, 1) << "the spinner that left the group ran " << (t1 - t0) << " ticks while paused ("
                              << r.dir << ")";
        ASSERT_EQ(child_pause(&c, 0, &how, why, sizeof why), 0) << why;
        long ran = 0; // resumed, it runs again: a few ticks within 3 s however busy the machine is
        for (int i = 0; i < 30 && ran < 3; i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            ran = cpu_ticks(d) - t1;
        }
        EXPECT_GE(ran, 3) << "resumed, it runs again";
        // stopping a paused child never hangs: it is thawed first
        ASSERT_EQ(child_pause(&c, 1, &how, why, sizeof why), 0) << why;
        child_stop(&c, 200);
        EXPECT_TRUE(c.exited);
        EXPECT_TRUE(gone_within(d, 2000)) << "the spinner outlived its stopped, paused service";
        kill(d, SIGKILL);
    }
    child_containment_set(nullptr);
}

// Without cgroups a child dies with ibench (PR_SET_PDEATHSIG): "ibench" here is a process that spawns it and
// exits without stopping it. Before the fix the child lived on.
TEST(Contain, WithoutCgroupsAChildDiesWithIbench)
{
    int pfd[2];
    ASSERT_EQ(pipe(pfd), 0);
    pid_t ib = fork();
    if (ib == 0) {
        close(pfd[0]);
        child_containment_set(nullptr);
        child c;
        char why[256];
        if (child_spawn("exec sleep 303", nullptr, 0, 0, 0, &c, why, sizeof why) != 0)
            _exit(1);
        if (write(pfd[1], &c.pid, sizeof c.pid) != (ssize_t)sizeof c.pid)
            _exit(1);
        _exit(0); // without child_stop: as a crash would
    }
    close(pfd[1]);
    pid_t kid = -1;
    ASSERT_EQ(read(pfd[0], &kid, sizeof kid), (ssize_t)sizeof kid);
    close(pfd[0]);
    int st;
    waitpid(ib, &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    EXPECT_TRUE(gone_within(kid, 2000)) << "child " << kid << " outlived its ibench";
    kill(kid, SIGKILL);
}

// SIGKILL of ibench: its watchdog kills the children's cgroups (a daemon in them included) and removes its scratch
// directories, then exits itself.
TEST(Contain, WatchdogCleansUpAfterASigkill)
{
    ib_test::TempDir t("contain");
    auto roots = usable_roots();
    std::string pidf = t.path() + "/daemon";
    int fd = -1, st = 0;
    pid_t ib = ibench_killed(
        [&](int out) {
            char why[512];
            if (!roots.empty())
                child_containment_set(&roots[0]);
            else
                child_containment_set(nullptr);
            char dir[4096];
            if (fs_make_private_dir(t.path().c_str(), "wd", dir, sizeof dir, why, sizeof why) != 0)
                return false;
            std::ofstream(std::string(dir) + "/data") << "x";
            child c;
            std::string cmd = "setsid sleep 304 </dev/null >/dev/null 2>&1 & echo $! > " + pidf + "; exec sleep 304";
            if (child_spawn(cmd.c_str(), nullptr, 0, 0, 0, &c, why, sizeof why) != 0)
                return false;
            if (!roots.empty() && read_pid(pidf) <= 0) // the daemon started before ibench dies
                return false;
            return write(out, &c.pid, sizeof c.pid) == (ssize_t)sizeof c.pid;
        },
        &fd, &st);
    pid_t w = -1, kid = -1;
    ASSERT_EQ(read(fd, &kid, sizeof kid), (ssize_t)sizeof kid);
    ASSERT_EQ(read(fd, &w, sizeof w), (ssize_t)sizeof w);
    close(fd);
    ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    ASSERT_GT(w, 0);
    EXPECT_TRUE(gone_within(w, 3000)) << "the watchdog outlived its cleanup";
    EXPECT_TRUE(gone_within(kid, 2000)) << "the child outlived a SIGKILLed ibench";
    kill(kid, SIGKILL);
    if (!roots.empty()) { // only a cgroup holds a setsid daemon
        pid_t d = read_pid(pidf);
        ASSERT_GT(d, 0);
        EXPECT_TRUE(gone_within(d, 2000)) << "the daemon " << d << " outlived a SIGKILLed ibench";
        kill(d, SIGKILL);
        std::string mine = std::to_string(ib) + "-";
        DIR *dd = opendir(roots[0].dir);
        ASSERT_NE(dd, nullptr);
        while (dirent *e = readdir(dd))
            EXPECT_NE(std::string(e->d_name).rfind(mine, 0), 0u) << roots[0].dir << "/" << e->d_name << " left";
        closedir(dd);
    }
    DIR *dd = opendir(t.path().c_str());
    ASSERT_NE(dd, nullptr);
    while (dirent *e = readdir(dd))
        EXPECT_NE(std::string(e->d_name).rfind("ibench-", 0), 0u) << e->d_name << " left behind";
    closedir(dd);
}

// A clean exit: the watchdog ends with ibench (reaped: no process and no zombie left).
TEST(Contain, WatchdogStopsWithIbench)
{
    ib_test::TempDir t("contain");
    char why[256];
    ASSERT_EQ(watchdog_start(why, sizeof why), 0) << why;
    pid_t w = watchdog_pid();
    ASSERT_GT(w, 0);
    char dir[4096];
    ASSERT_EQ(fs_make_private_dir(t.path().c_str(), "keep", dir, sizeof dir, why, sizeof why), 0) << why;
    watchdog_stop();
    EXPECT_EQ(watchdog_pid(), -1);
    EXPECT_EQ(kill(w, 0), -1) << "the watchdog is still there (or unreaped)";
    // a directory ibench did not remove is still listed: the watchdog removes it as it ends, whatever the exit
    struct stat s;
    EXPECT_NE(stat(dir, &s), 0) << dir << " left behind";
}

// Scratch directories are named with the pid; at start those whose process is gone are removed, and only those.
TEST(Contain, StaleScratchDirectories)
{
    ib_test::TempDir t("contain");
    char dir[4096], why[256];
    ASSERT_EQ(fs_make_private_dir(t.path().c_str(), "disk-bw", dir, sizeof dir, why, sizeof why), 0) << why;
    std::string base = strrchr(dir, '/') + 1;
    EXPECT_EQ(fs_private_dir_pid(base.c_str()), (long)getpid()) << base;
    EXPECT_EQ(fs_private_dir_pid("ibench-disk-bw-123.abcdef"), 123);
    EXPECT_EQ(fs_private_dir_pid("ibench-a-b-77.Zz09aB"), 77);
    EXPECT_EQ(fs_private_dir_pid("ibench-disk-bw.abcdef"), 0) << "the old name has no pid";
    EXPECT_EQ(fs_private_dir_pid("ibench--12.abcdef"), 0) << "no tag";
    EXPECT_EQ(fs_private_dir_pid("ibench-x-12.abc"), 0) << "not mkdtemp's suffix";
    EXPECT_EQ(fs_private_dir_pid("other-x-12.abcdef"), 0);
    EXPECT_EQ(fs_private_dir_pid("ibench-x-012.abcdef"), 0);

    std::string dead = std::to_string(dead_pid());
    const std::string &p = t.path();
    ASSERT_EQ(mkdir((p + "/ibench-disk-bw-" + dead + ".aaaaaa").c_str(), 0700), 0);
    std::ofstream(p + "/ibench-disk-bw-" + dead + ".aaaaaa/data") << "x";
    ASSERT_EQ(mkdir((p + "/ibench-probe-" + dead + ".bbbbbb").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((p + "/ibench-x-" + std::to_string(getppid()) + ".cccccc").c_str(), 0700), 0); // alive
    ASSERT_EQ(mkdir((p + "/ibench-x.dddddd").c_str(), 0700), 0);                                    // no pid
    ASSERT_EQ(mkdir((p + "/mine-x-" + dead + ".eeeeee").c_str(), 0700), 0);                         // not ours
    ASSERT_EQ(mkdir((p + "/target").c_str(), 0700), 0);
    ASSERT_EQ(symlink((p + "/target").c_str(), (p + "/ibench-y-" + dead + ".ffffff").c_str()), 0); // a link
    std::ofstream(p + "/ibench-z-" + dead + ".gggggg") << "a file";
    EXPECT_EQ(fs_remove_stale_dirs(p.c_str()), 2);
    struct stat s;
    EXPECT_NE(stat((p + "/ibench-disk-bw-" + dead + ".aaaaaa").c_str(), &s), 0);
    EXPECT_NE(stat((p + "/ibench-probe-" + dead + ".bbbbbb").c_str(), &s), 0);
    for (const char *keep : {"/ibench-x.dddddd", "/target"})
        EXPECT_EQ(stat((p + keep).c_str(), &s), 0) << keep;
    EXPECT_EQ(stat((p + "/ibench-x-" + std::to_string(getppid()) + ".cccccc").c_str(), &s), 0);
    EXPECT_EQ(stat((p + "/mine-x-" + dead + ".eeeeee").c_str(), &s), 0);
    EXPECT_EQ(lstat((p + "/ibench-y-" + dead + ".ffffff").c_str(), &s), 0);
    EXPECT_EQ(stat((p + "/ibench-z-" + dead + ".gggggg").c_str(), &s), 0);
    EXPECT_EQ(stat(dir, &s), 0) << "this process's own directory";
    fs_remove_private_dir(dir);
}

// Stale cgroups (<pid>-<n> of a process that is gone) are removed; a faked root (a plain directory) will do.
TEST(Contain, StaleCgroupsAreSwept)
{
    ib_test::TempDir t("contain");
    cg_root r;
    char why[256];
    ASSERT_EQ(cg_root_at(&r, CG_V1, t.path().c_str(), why, sizeof why), 0) << why;
    EXPECT_EQ(std::string(r.dir), t.path() + "/ibench");
    char mine[CG_PATH_MAX];
    ASSERT_EQ(cg_make(&r, mine, sizeof mine, why, sizeof why), 0) << why;
    EXPECT_EQ(std::string(mine).rfind(std::string(r.dir) + "/" + std::to_string(getpid()) + "-", 0), 0u) << mine;
    std::string dead = std::string(r.dir) + "/" + std::to_string(dead_pid()) + "-0";
    std::string other = std::string(r.dir) + "/someone-else";
    ASSERT_EQ(mkdir(dead.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
    EXPECT_EQ(cg_sweep_stale(&r), 1);
    struct stat s;
    EXPECT_NE(stat(dead.c_str(), &s), 0);
    EXPECT_EQ(stat(other.c_str(), &s), 0);
    EXPECT_EQ(stat(mine, &s), 0);
    EXPECT_EQ(cg_remove(mine), 0);
    EXPECT_NE(stat(mine, &s), 0);
}

// A cgroup's or a scratch directory's name reaches the watchdog's hook before the mkdir, never after: a SIGKILL
// between the two would otherwise leave one that no one was told of.
namespace {
struct told {
    int made;
    std::string path;
    bool existed;
};
std::vector<told> hook_calls;
void record_hook(int made, const char *path)
{
    struct stat s;
    hook_calls.push_back({made, path, stat(path, &s) == 0});
}
} // namespace

TEST(Contain, NamesAreToldBeforeTheyAreMade)
{
    ib_test::TempDir t("contain");
    cg_root r;
    char why[256], cg[CG_PATH_MAX], dir[4096];
    ASSERT_EQ(cg_root_at(&r, CG_V1, t.path().c_str(), why, sizeof why), 0) << why;
    // make one with the hook set; it was told of once, as made, before it existed
    auto told_once_before = [](void (*set)(void (*)(int, const char *)), const std::function<int()> &make,
                               const char *path) {
        hook_calls.clear();
        set(record_hook);
        const int rc = make();
        set(nullptr);
        ASSERT_EQ(rc, 0);
        ASSERT_EQ(hook_calls.size(), 1u);
        EXPECT_EQ(hook_calls[0].made, 1);
        EXPECT_EQ(hook_calls[0].path, path);
        EXPECT_FALSE(hook_calls[0].existed) << "told of after the mkdir";
    };
    told_once_before(cg_set_make_hook, [&] { return cg_make(&r, cg, sizeof cg, why, sizeof why); }, cg);
    told_once_before(fs_set_dir_hook,
                     [&] { return fs_make_private_dir(t.path().c_str(), "told", dir, sizeof dir, why, sizeof why); },
                     dir);
    struct stat s;
    ASSERT_EQ(stat(dir, &s), 0);
    EXPECT_EQ(s.st_mode & 0777, 0700u) << "mkdtemp's mode";
    EXPECT_EQ(fs_private_dir_pid(strrchr(dir, '/') + 1), (long)getpid()) << dir;

    // a name that cannot be made is told of again as not made
    hook_calls.clear();
    fs_set_dir_hook(record_hook);
    const int rc = fs_make_private_dir((t.path() + "/no-such-dir").c_str(), "told", dir, sizeof dir, why, sizeof why);
    fs_set_dir_hook(nullptr);
    EXPECT_EQ(rc, -ENOENT);
    ASSERT_EQ(hook_calls.size(), 2u);
    EXPECT_EQ(hook_calls[0].made, 1);
    EXPECT_EQ(hook_calls[1].made, 0);
    EXPECT_EQ(hook_calls[0].path, hook_calls[1].path);
    EXPECT_EQ(cg_remove(cg), 0);
}

// SIGHUP and SIGQUIT stop a run as SIGTERM does; a second SIGINT SIGKILLs the children; restoring what was never
// installed changes nothing.
TEST(Contain, Signals)
{
    struct sigaction mine = {}, now = {};
    mine.sa_handler = SIG_IGN;
    sigaction(SIGINT, &mine, nullptr);
    cli_signals_restore(); // never installed: must not touch SIGINT
    sigaction(SIGINT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN) << "restored a handler that was never installed";

    for (int sig : {SIGHUP, SIGQUIT, SIGTERM}) {
        cli_signals_install();
        raise(sig);
        EXPECT_EQ(atomic_load(&cli_stop), 1) << strsignal(sig);
        cli_signals_restore();
    }

    child_containment_set(nullptr);
    cli_signals_install();
    child c;
    char why[256];
    ASSERT_EQ(child_spawn("exec sleep 305", nullptr, 0, 0, 0, &c, why, sizeof why), 0) << why;
    raise(SIGINT);
    EXPECT_EQ(atomic_load(&cli_stop), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(child_poll(&c), 0) << "the first Ctrl-C only asks the run to stop";
    raise(SIGINT);
    bool dead = false;
    for (int i = 0; i < 200 && !(dead = child_poll(&c)); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(dead) << "the second Ctrl-C did not kill the child";
    if (dead) {
        EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL) << c.status;
    }
    child_stop(&c, 0);
    cli_signals_restore();
    sigaction(SIGINT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN) << "the handler before install is back";
    signal(SIGINT, SIG_DFL);
}
