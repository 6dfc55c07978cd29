// test_support.h - small fixtures the GoogleTest binaries share.
#ifndef IB_TEST_SUPPORT_H
#define IB_TEST_SUPPORT_H
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <hwloc.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine.h"
#include "pressure.h"

extern char **environ;

namespace ib_test {

// Hang guards (how long a test waits for a child before calling it hung) stretch by this in a sanitized build
// (IBENCH_SANITIZED, set by tests/CMakeLists.txt under -DIBENCH_SANITIZE): ASan/UBSan make ibench several times
// slower. A timing assertion never uses it.
#ifdef IBENCH_SANITIZED
constexpr double kHangScale = 5;
#else
constexpr double kHangScale = 1;
#endif

// A fresh directory under base ("<base>/ibench_test_<tag>.XXXXXX"), removed with everything in it when the object
// goes. path() is empty if it could not be made.
class TempDir {
public:
    explicit TempDir(const char *tag, const char *base = "/tmp")
    {
        std::string t = std::string(base) + "/ibench_test_" + tag + ".XXXXXX";
        if (mkdtemp(&t[0]))
            path_ = t;
    }
    ~TempDir()
    {
        if (!path_.empty())
            nftw(path_.c_str(), remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }

private:
    static int remove_entry(const char *p, const struct stat *, int, struct FTW *) { return remove(p); }
    std::string path_;
};

// The names in a directory other than . and .. (none when it cannot be read).
inline std::vector<std::string> dir_entries(const std::string &dir)
{
    std::vector<std::string> v;
    DIR *d = opendir(dir.c_str());
    while (struct dirent *e = d ? readdir(d) : nullptr)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            v.emplace_back(e->d_name);
    if (d)
        closedir(d);
    return v;
}

// A private, empty calibration cache (IBENCH_CACHE_DIR) for the whole test process:
//   ::testing::AddGlobalTestEnvironment(new ib_test::PrivateCacheEnv("registry"));
class PrivateCacheEnv : public ::testing::Environment {
public:
    explicit PrivateCacheEnv(const char *tag) : tag_(tag) {}
    void SetUp() override
    {
        dir_ = new TempDir(tag_);
        ASSERT_FALSE(dir_->path().empty()) << "mkdtemp failed";
        setenv("IBENCH_CACHE_DIR", dir_->path().c_str(), 1);
    }
    void TearDown() override
    {
        delete dir_;
        dir_ = nullptr;
    }

private:
    const char *tag_;
    TempDir *dir_ = nullptr;
};

inline double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A child process running IBENCH_BIN with pipes on stdout and stderr.
class Proc {
public:
    pid_t pid = -1;
    std::string out, err;
    int status = 0;
    bool exited = false;

    // ibench with these arguments. env: extra NAME=VALUE entries; every IBENCH_* variable of ours is dropped first.
    bool start(const std::vector<std::string> &args, const std::vector<std::string> &env)
    {
        std::vector<std::string> a = args;
        a.insert(a.begin(), IBENCH_BIN);
        return start_cmd(a, env);
    }

    // Any program (argv[0] looked up in PATH), same pipes and environment rules.
    bool start_cmd(const std::vector<std::string> &cmd, const std::vector<std::string> &env)
    {
        int po[2], pe[2];
        if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
            return false;
        std::vector<std::string> envs;
        for (char **e = environ; *e; e++)
            if (strncmp(*e, "IBENCH_", 7) != 0)
                envs.emplace_back(*e);
        for (const auto &e : env)
            envs.push_back(e);
        std::vector<char *> envp, argv;
        for (auto &e : envs)
            envp.push_back(&e[0]);
        envp.push_back(nullptr);
        std::vector<std::string> a = cmd;
        for (auto &x : a)
            argv.push_back(&x[0]);
        argv.push_back(nullptr);
        pid = fork();
        if (pid < 0)
            return false;
        if (pid == 0) {
            dup2(po[1], 1);
            dup2(pe[1], 2);
            int devnull = open("/dev/null", O_RDONLY);
            if (devnull >= 0)
                dup2(devnull, 0);
            // the child starts with default signal dispositions and nothing blocked
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, nullptr);
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            execvpe(argv[0], argv.data(), envp.data());
            _exit(127);
        }
        close(po[1]);
        close(pe[1]);
        fd_out = po[0];
        fd_err = pe[0];
        return true;
    }

    // Reads whatever arrives for up to `ms`, and notices the exit.
    void pump(int ms)
    {
        struct pollfd p[2];
        int n = 0;
        if (fd_out >= 0)
            p[n++] = {fd_out, POLLIN, 0};
        if (fd_err >= 0)
            p[n++] = {fd_err, POLLIN, 0};
        if (n > 0 && poll(p, (nfds_t)n, ms) > 0) {
            for (int i = 0; i < n; i++) {
                if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                char buf[4096];
                ssize_t r = read(p[i].fd, buf, sizeof buf);
                bool is_out = p[i].fd == fd_out;
                if (r > 0) {
                    (is_out ? out : err).append(buf, (size_t)r);
                } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                    close(p[i].fd);
                    (is_out ? fd_out : fd_err) = -1;
                }
            }
        } else if (n == 0) {
            usleep((useconds_t)ms * 1000);
        }
        if (!exited && pid > 0 && waitpid(pid, &status, WNOHANG) == pid)
            exited = true;
    }

    // Pumps until pred() holds or the process exits or timeout_s passes; returns pred().
    bool pump_until(const std::function<bool()> &pred, double timeout_s)
    {
        double end = now_s() + timeout_s * kHangScale;
        while (!pred() && now_s() < end && !(exited && fd_out < 0 && fd_err < 0))
            pump(20);
        return pred();
    }

    // Waits for the exit and EOF on both pipes; kills the child after timeout_s (x kHangScale). False on timeout.
    bool finish(double timeout_s)
    {
        bool ok = pump_until([&] { return exited && fd_out < 0 && fd_err < 0; }, timeout_s);
        if (!ok)
            kill_now();
        return ok;
    }

    void kill_now()
    {
        if (pid > 0 && !exited) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            exited = true;
        }
        close_fds();
    }

    int exit_code() const { return exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

    ~Proc() { kill_now(); }

private:
    int fd_out = -1, fd_err = -1;
    void close_fds()
    {
        if (fd_out >= 0)
            close(fd_out);
        if (fd_err >= 0)
            close(fd_err);
        fd_out = fd_err = -1;
    }
};

// Runs `cmd` through sh, stdout and stderr together; *rc its exit status (-1: did not exit).
// argv as one line, words joined by spaces: what a failure message names
inline std::string words(const std::vector<std::string> &argv)
{
    std::string line;
    for (const auto &w : argv)
        line += (line.empty() ? "" : " ") + w;
    return line;
}

inline std::string sh(const std::string &cmd, int *rc)
{
    std::string out;
    FILE *f = popen((cmd + " 2>&1").c_str(), "r");
    char b[512];
    while (f && fgets(b, sizeof b, f))
        out += b;
    int st = f ? pclose(f) : -1;
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

// A live 2-thread program (python3: the main thread and one more, both spinning, for at most `seconds`), for the
// commands that pin and measure a live process.  Returns its pid once /proc shows both threads, else -1 (the child
// is then killed).  The caller kills and reaps it.
inline pid_t spawn_two_thread_spinner(int seconds = 20)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        alarm((unsigned)seconds + 10);
        std::string prog = "import threading, time\n"
                           "def spin():\n"
                           "    end = time.time() + " + std::to_string(seconds) + "\n"
                           "    while time.time() < end:\n"
                           "        pass\n"
                           "t = threading.Thread(target=spin); t.start(); spin()\n";
        execlp("python3", "python3", "-c", prog.c_str(), (char *)nullptr);
        _exit(127);
    }
    std::string task = "/proc/" + std::to_string(pid) + "/task";
    for (int i = 0; i < 200; i++) {
        usleep(25000);
        if (dir_entries(task.c_str()).size() == 2)
            return pid;
    }
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    return -1;
}

// A new file /tmp/PREFIX-XXXXXX<suffix> holding text; its path (the caller unlinks it).
inline std::string temp_file_with(const std::string &text, const char *prefix, const char *suffix)
{
    std::string t = std::string("/tmp/") + prefix + "-XXXXXX" + suffix;
    std::vector<char> b(t.begin(), t.end());
    b.push_back(0);
    int fd = mkstemps(b.data(), (int)strlen(suffix));
    EXPECT_GE(fd, 0) << t;
    if (fd >= 0) {
        EXPECT_EQ(write(fd, text.data(), text.size()), (ssize_t)text.size());
        close(fd);
    }
    return b.data();
}

// A JSON document's canonical text (sorted keys, indented, a final newline): goldens read well and compare exactly.
inline std::string json_canon(const std::string &text)
{
    json_error_t e;
    json_t *d = json_loads(text.c_str(), 0, &e);
    EXPECT_NE(d, nullptr) << e.text << ": " << text;
    char *s = d ? json_dumps(d, JSON_INDENT(1) | JSON_SORT_KEYS) : nullptr;
    std::string r = s ? s : "";
    free(s);
    json_decref(d);
    return r + "\n";
}

// A whole file's text ("" when it cannot be read).
// A synthetic 4-node machine (pack:4 [numa] core:2 pu:1) with a latency matrix -- a ring 0-1-2-3-0, 10 local, 20 a
// hop, 30 to the opposite node -- exported as XML the way lstopo writes it. "" on success, else what failed.
inline std::string write_ring_numa_xml(const std::string &xml)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return "hwloc_topology_init";
    std::string err;
    hwloc_obj_t nodes[4];
    hwloc_uint64_t v[16];
    hwloc_distances_add_handle_t hd = nullptr;
    if (hwloc_topology_set_synthetic(t, "pack:4 [numa] core:2 pu:1") != 0 || hwloc_topology_load(t) != 0)
        err = "the synthetic topology";
    for (unsigned i = 0; err.empty() && i < 4; i++) {
        nodes[i] = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
        for (unsigned j = 0; j < 4; j++)
            v[i * 4 + j] = i == j ? 10 : ((i + 2) % 4 == j ? 30 : 20);
    }
    if (err.empty() && !(hd = hwloc_distances_add_create(t, "NUMALatency", HWLOC_DISTANCES_KIND_FROM_USER |
                                                                             HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0)))
        err = "hwloc_distances_add_create";
    if (err.empty() && (hwloc_distances_add_values(t, hd, 4, nodes, v, 0) != 0 ||
                        hwloc_distances_add_commit(t, hd, 0) != 0))
        err = "the distances";
    if (err.empty() && hwloc_topology_export_xml(t, xml.c_str(), 0) != 0)
        err = "hwloc_topology_export_xml";
    hwloc_topology_destroy(t);
    return err;
}

inline std::string file_text(const std::string &path)
{
    std::string r;
    FILE *f = fopen(path.c_str(), "r");
    char b[65536];
    for (size_t n; f && (n = fread(b, 1, sizeof b, f)) > 0;)
        r.append(b, n);
    if (f)
        fclose(f);
    return r;
}

// Write text to path whole; false when it cannot be written.
inline bool write_file(const std::string &path, const std::string &text)
{
    FILE *f = fopen(path.c_str(), "w");
    if (!f)
        return false;
    bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
    return fclose(f) == 0 && ok;
}

// ---- busy is a verdict (docs/validation.md): a timing test skips when, and only when, the threads that did its timed
// work were measured waiting for a CPU more than IB_BUSY_WAIT_PCT of their runnable time (their run-queue delay,
// schedstat). Never a blanket skip: an unmeasured share (NAN) is not busy, and the test asserts as before. Each
// helper returns the skip reason, "" when not busy; IB_SKIP_IF_BUSY(reason) skips with it. Call it after the
// functional assertions and before the timing ones.
#define IB_SKIP_IF_BUSY(reason_expr)                                                                                   \
    do {                                                                                                               \
        const std::string ib_busy_reason_ = (reason_expr);                                                             \
        if (!ib_busy_reason_.empty())                                                                                  \
            GTEST_SKIP() << ib_busy_reason_;                                                                           \
    } while (0)

// "machine busy: WHO waited 37.0 % of their runnable time for a CPU (> 10 %)", or "".
inline std::string busy_why(double wait_pct, const std::string &who)
{
    if (!ib_busy(wait_pct))
        return "";
    char b[320];
    snprintf(b, sizeof b, "machine busy: %s waited %.1f %% of their runnable time for a CPU (> %.0f %%)", who.c_str(),
             wait_pct, IB_BUSY_WAIT_PCT);
    return b;
}

// The engine's steps (engine_run): the SoI workers' own wait share, the worst step's. Pass the steps the failing bar
// is about (a busy 0 % step excuses no bar at 40 %).
inline std::string busy_why(const step_result *r, size_t n)
{
    size_t worst = n;
    for (size_t i = 0; i < n; i++) // a 0 % step asks for no CPU: not judged (validate.h)
        if (r[i].requested > 0 && ib_busy(r[i].wait_pct) && (worst == n || r[i].wait_pct > r[worst].wait_pct))
            worst = i;
    char at[64];
    if (worst < n)
        snprintf(at, sizeof at, "the SoI's threads in the %g %% step", r[worst].requested);
    return worst == n ? "" : busy_why(r[worst].wait_pct, at);
}

// An `ibench run --json` document: the wait share of its steps (each step's "wait_pct"), the worst step's.
inline std::string busy_why_run_json(json_t *doc)
{
    if (!strcmp(json_string_value(json_object_get(json_object_get(doc, "busy"), "verdict")) ?: "", "not judged"))
        return ""; // a disk SoI: its wait is reported, not judged
    json_t *st;
    size_t i, worst = 0;
    double w = NAN;
    json_array_foreach(json_object_get(doc, "steps"), i, st)
    {
        json_t *v = json_object_get(st, "wait_pct");
        if (json_is_number(v) && json_number_value(json_object_get(st, "requested_pct")) > 0 &&
            !(json_number_value(v) <= w)) {
            w = json_number_value(v);
            worst = i;
        }
    }
    return busy_why(w, "the ibench run's SoI threads in step " + std::to_string(worst + 1));
}
inline std::string busy_why_run_json(const std::string &out)
{
    json_error_t e;
    json_t *d = json_loads(out.c_str(), 0, &e);
    std::string r = d ? busy_why_run_json(d) : "";
    json_decref(d);
    return r;
}

// A `busy` object of `ibench validate --json` (a self-meter ramp's or a probe ramp's): the wait share over its steps,
// else (when that is within the bound) its worst step's, as the busy rule reads them.
inline std::string busy_why_validate_json(json_t *busy, const std::string &who)
{
    if (json_is_false(json_object_get(busy, "judged"))) // a disk SoI: its wait is reported, not judged
        return "";
    json_t *a = json_object_get(busy, "wait_pct"), *w = json_object_get(busy, "worst_step_wait_pct");
    std::string r = busy_why(json_is_number(a) ? json_number_value(a) : NAN, who + "'s threads over its ramp");
    if (r.empty())
        r = busy_why(json_is_number(w) ? json_number_value(w) : NAN, who + "'s threads in one step");
    return r;
}

// The calling thread, for a test that times its own loop: its wait share from construction to why().
class ThreadBusy {
public:
    ThreadBusy() { ib_sched_thread(0, &a_, nullptr, 0); }
    double wait_pct() const
    {
        ib_sched b, d;
        ib_sched_thread(0, &b, nullptr, 0);
        ib_sched_delta(&a_, &b, &d);
        return ib_sched_share(&d);
    }
    std::string why(const std::string &who = "this test's thread") const { return busy_why(wait_pct(), who); }

private:
    ib_sched a_{};
};

// A child that spins on `cpu` (fork, sched_setaffinity, a busy loop) to make that CPU busy on purpose; killed and
// reaped when the object goes, on every path (alarm(max_s) ends it should this process die first). ok() once it has
// run on its CPU.
class CpuHog {
public:
    explicit CpuHog(int cpu, unsigned max_s = 120)
    {
        pid_ = fork();
        if (pid_ == 0) {
            alarm(max_s);
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            if (sched_setaffinity(0, sizeof set, &set) != 0)
                _exit(1);
            for (volatile unsigned long x = 0;; x = x + 1) {
            }
        }
        // running once its schedstat shows 10 ms on a CPU (at most 2 s)
        std::string ss = "/proc/" + std::to_string(pid_) + "/schedstat";
        for (int i = 0; pid_ > 0 && i < 200 && !ok_; i++) {
            usleep(10000);
            ok_ = atoll(file_text(ss).c_str()) > 10000000;
        }
    }
    ~CpuHog()
    {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            int st;
            waitpid(pid_, &st, 0);
        }
    }
    CpuHog(const CpuHog &) = delete;
    CpuHog &operator=(const CpuHog &) = delete;
    bool ok() const { return ok_; }
    pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
    bool ok_ = false;
};

// ---- a small HTTP/1.1 client over loopback, for the extender's tests
inline int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0}; // a server that stops reading fails the send, not the test run
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (fd >= 0 && connect(fd, (sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

inline bool send_all(int fd, const std::string &s)
{
    size_t off = 0;
    while (off < s.size()) {
        ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        off += (size_t)n;
    }
    return true;
}

// Reads until the peer closes or timeout_s passes; *closed says which.
inline std::string read_all(int fd, double timeout_s, bool *closed = nullptr)
{
    std::string r;
    double t0 = now_s();
    if (closed)
        *closed = false;
    char b[65536];
    while (now_s() - t0 < timeout_s) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t n = recv(fd, b, sizeof(b), 0);
        if (n <= 0) {
            if (closed)
                *closed = true;
            break;
        }
        r.append(b, (size_t)n);
    }
    return r;
}

// One request on its own connection (Connection: close), the whole answer.
inline std::string http(int port, const std::string &method, const std::string &path, const std::string &body = "",
                 double timeout_s = 5)
{
    int fd = connect_to(port);
    if (fd < 0)
        return "";
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    if (method == "POST")
        req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n" + body;
    send_all(fd, req);
    std::string r = read_all(fd, timeout_s);
    close(fd);
    return r;
}


#ifdef IBENCH_SHARE_BIN
// Starts the shipped ibench-share workload with args in p and reads its layout (tid -> group) up to "ready".
inline bool start_share(Proc &p, const std::vector<std::string> &args, std::map<uint32_t, unsigned> &layout)
{
    std::vector<std::string> cmd = {IBENCH_SHARE_BIN};
    cmd.insert(cmd.end(), args.begin(), args.end());
    if (!p.start_cmd(cmd, {}))
        return false;
    if (!p.pump_until([&] { return p.out.find("ready\n") != std::string::npos; }, 10))
        return false;
    std::istringstream in(p.out);
    std::string line;
    while (std::getline(in, line) && line != "ready") {
        unsigned long tid;
        unsigned g;
        if (sscanf(line.c_str(), "%lu %u", &tid, &g) != 2)
            return false;
        layout[(uint32_t)tid] = g;
    }
    return true;
}
#endif

}  // namespace ib_test

#endif
