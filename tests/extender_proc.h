// extender_proc.h - `ibench extender --listen 127.0.0.1:0 ARGS...` as a child for the loopback tests
// (test_extender_http.cpp, test_extender_state.cpp): its port read from the first line of its stderr, requests
// POSTed to it, SIGTERM at the end. IBENCH_BIN names the binary.
#ifndef IB_TEST_EXTENDER_PROC_H
#define IB_TEST_EXTENDER_PROC_H

#include "test_support.h"

namespace ib_test {

class ExtenderProc {
public:
    explicit ExtenderProc(const std::vector<std::string> &args)
    {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
            return;
        std::vector<std::string> a = {IBENCH_BIN, "extender", "--listen", "127.0.0.1:0"};
        a.insert(a.end(), args.begin(), args.end());
        pid_ = fork();
        if (pid_ == 0) {
            dup2(p[1], 2);
            std::vector<char *> av;
            for (auto &s : a)
                av.push_back(&s[0]);
            av.push_back(nullptr);
            execv(av[0], av.data());
            _exit(127);
        }
        close(p[1]);
        err_fd_ = p[0];
        auto t0 = std::chrono::steady_clock::now();
        char b[512];
        while (secs(t0) < 5 * kHangScale && err_.find('\n') == std::string::npos) {
            pollfd q{err_fd_, POLLIN, 0};
            if (poll(&q, 1, 50) <= 0)
                continue;
            ssize_t n = read(err_fd_, b, sizeof(b));
            if (n <= 0)
                break;
            err_.append(b, (size_t)n);
        }
        size_t k = err_.find("listening on ");
        size_t c = err_.rfind(':', err_.find('\n'));
        if (k != std::string::npos && c != std::string::npos)
            port_ = atoi(err_.c_str() + c + 1);
    }
    ~ExtenderProc() { stop(); }
    ExtenderProc(const ExtenderProc &) = delete;
    ExtenderProc &operator=(const ExtenderProc &) = delete;
    int port() const { return port_; }
    pid_t pid() const { return pid_; }
    const std::string &err() const { return err_; }
    // POST /VERB: the answer's body, *status its HTTP status (-1: no answer).
    std::string post(const char *verb, const std::string &body, int *status) const
    {
        std::string r = http(port_, "POST", std::string("/") + verb, body);
        *status = r.rfind("HTTP/1.1 ", 0) == 0 ? atoi(r.c_str() + 9) : -1;
        size_t p = r.find("\r\n\r\n");
        return p == std::string::npos ? "" : r.substr(p + 4);
    }
    // SIGTERM, then the exit code (-1 if it did not exit within 5 s: killed).
    int stop()
    {
        if (pid_ <= 0)
            return rc_;
        kill(pid_, SIGTERM);
        auto t0 = std::chrono::steady_clock::now();
        int st = 0;
        while (waitpid(pid_, &st, WNOHANG) == 0) {
            if (secs(t0) > 5 * kHangScale) {
                kill(pid_, SIGKILL);
                waitpid(pid_, &st, 0);
                pid_ = 0;
                return rc_ = -1;
            }
            usleep(10000);
        }
        pid_ = 0;
        char b[512];
        ssize_t n;
        while ((n = read(err_fd_, b, sizeof(b))) > 0)
            err_.append(b, (size_t)n);
        close(err_fd_);
        err_fd_ = -1;
        return rc_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }

private:
    static double secs(std::chrono::steady_clock::time_point t0)
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    pid_t pid_ = -1;
    int err_fd_ = -1, port_ = 0, rc_ = -1;
    std::string err_;
};

} // namespace ib_test

#endif
