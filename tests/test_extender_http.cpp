// test_extender_http.cpp - `ibench extender` over loopback with plain sockets (docs/extender.md): routes, limits,
// slow clients, concurrency, signals, TLS, options.  Two kinds of server:
// - the command itself (ExtenderCli): a child `ibench extender --listen 127.0.0.1:0`, the port read from its stderr;
//   its decisions are placement/pl_extender.c's (ExtenderRealLib and the goldens check them over HTTP);
// - the HTTP layer in process (ExtenderServer): ext_server with a fake handler that answers 200 with what it got,
//   for the paths that need a 200 (whole bodies delivered, concurrency).
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <atomic>
#include <thread>

#include "test_support.h"

extern "C" {
#include "ext_server.h"
}

namespace {

using Clock = std::chrono::steady_clock;

double secs_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

using ib_test::connect_to;
using ib_test::http;
using ib_test::read_all;
using ib_test::send_all;

int status_of(const std::string &r) { return r.rfind("HTTP/1.1 ", 0) == 0 ? atoi(r.c_str() + 9) : -1; }
std::string body_of(const std::string &r)
{
    size_t p = r.find("\r\n\r\n");
    return p == std::string::npos ? "" : r.substr(p + 4);
}
// A JSON object whose "Error" is a non-empty string of one line, and nothing but it on one line.
bool one_line_error(const std::string &b)
{
    json_t *d = json_loads(b.c_str(), 0, nullptr);
    json_t *e = json_object_get(d, "Error");
    bool ok = json_is_string(e) && json_string_length(e) > 0 && !strchr(json_string_value(e), '\n') &&
              b.find('\n') >= b.size() - 1;
    json_decref(d);
    return ok;
}

// `ibench extender ARGS --listen 127.0.0.1:0` as a child; port() once it said where it listens.
class Extender {
public:
    explicit Extender(const std::vector<std::string> &args)
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
        auto t0 = Clock::now();
        char b[512];
        while (secs_since(t0) < 5 * ib_test::kHangScale && err_.find('\n') == std::string::npos) {
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
    ~Extender() { stop(); }
    int port() const { return port_; }
    const std::string &err() const { return err_; }
    // SIGTERM, then the exit code (-1 if it did not exit within 5 s: killed).
    int stop()
    {
        if (pid_ <= 0)
            return rc_;
        kill(pid_, SIGTERM);
        auto t0 = Clock::now();
        int st = 0;
        while (waitpid(pid_, &st, WNOHANG) == 0) {
            if (secs_since(t0) > 5 * ib_test::kHangScale) {
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
        return rc_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }

private:
    pid_t pid_ = -1;
    int err_fd_ = -1, port_ = 0, rc_ = -1;
    std::string err_;
};

// A shell command's output (stdout and stderr) and exit code.
std::string sh(const std::string &cmd, int *rc)
{
    std::string out;
    FILE *f = popen((cmd + " 2>&1").c_str(), "r");
    char b[4096];
    size_t n;
    while (f && (n = fread(b, 1, sizeof(b), f)) > 0)
        out.append(b, n);
    int st = f ? pclose(f) : -1;
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

// The fake decisions: 200 with the verb, the body's length and a checksum of it.
std::atomic<int> g_calls;
int fake_handler(void *, const char *verb, const char *body, size_t len, char **out, int *status)
{
    g_calls++;
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)body[i]) * 1099511628211ull;
    char b[160];
    snprintf(b, sizeof(b), "{\"verb\": \"%s\", \"len\": %zu, \"fnv\": %llu}", verb, len, h);
    *out = strdup(b);
    *status = 200;
    return 0;
}

unsigned long long fnv(const std::string &s)
{
    unsigned long long h = 1469598103934665603ull;
    for (unsigned char c : s)
        h = (h ^ c) * 1099511628211ull;
    return h;
}

// ext_server in process on 127.0.0.1 (a free port) with the fake handler.
class InProc {
public:
    InProc(size_t max_body, unsigned timeout_s, unsigned threads = 2)
    {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ext_server_opts o{};
        o.addr = (sockaddr *)&a;
        o.addrlen = sizeof(a);
        o.threads = threads;
        o.max_body = max_body;
        o.timeout_s = timeout_s;
        o.handler = fake_handler;
        char why[256] = "";
        rc_ = ext_server_start(&o, &s_, why, sizeof(why));
        why_ = why;
    }
    ~InProc() { ext_server_stop(s_); }
    int port() const { return s_ ? ext_server_port(s_) : 0; }
    int rc_;
    std::string why_;

private:
    ext_server *s_ = nullptr;
};

TEST(ExtenderCli, RoutesHealthz404And405)
{
    Extender x({});
    ASSERT_GT(x.port(), 0) << x.err();
    EXPECT_NE(x.err().find("listening on http://127.0.0.1:"), std::string::npos) << x.err();
    std::string r = http(x.port(), "GET", "/healthz");
    EXPECT_EQ(status_of(r), 200) << r;
    EXPECT_EQ(body_of(r), "ok\n");
    r = http(x.port(), "GET", "/nope");
    EXPECT_EQ(status_of(r), 404) << r;
    EXPECT_TRUE(one_line_error(body_of(r))) << r;
    EXPECT_NE(r.find("Content-Type: application/json"), std::string::npos) << r;
    r = http(x.port(), "GET", "/filter");
    EXPECT_EQ(status_of(r), 405) << r;
    EXPECT_NE(r.find("Allow: POST"), std::string::npos) << r;
    EXPECT_TRUE(one_line_error(body_of(r))) << r;
    r = http(x.port(), "POST", "/healthz", "{}");
    EXPECT_EQ(status_of(r), 405) << r;
    r = http(x.port(), "PUT", "/prioritize", "{}");
    EXPECT_EQ(status_of(r), 405) << r;
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// Malformed JSON, wrong types, no pod: 400 with a one-line {"Error": ...} (the library's answer, passed through).
TEST(ExtenderCli, MalformedRequestsAre400OneLine)
{
    Extender x({});
    ASSERT_GT(x.port(), 0) << x.err();
    for (const char *b : {"{bad", "", "[1,2,3]", "{\"Pod\": 5, \"Nodes\": \"x\"}", "{\"Nodes\": {\"items\": []}}",
                          "\xff\xfe\x00garbage"}) {
        for (const char *path : {"/filter", "/prioritize"}) {
            std::string r = http(x.port(), "POST", path, b);
            EXPECT_EQ(status_of(r), 400) << path << " " << b << ": " << r;
            EXPECT_TRUE(one_line_error(body_of(r))) << r;
            EXPECT_NE(r.find("Content-Type: application/json"), std::string::npos) << r;
        }
    }
    EXPECT_EQ(status_of(http(x.port(), "GET", "/healthz")), 200); // alive after all of them
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// A 10 MB body announced by Content-Length: 413 before the body is read, in well under a second.
TEST(ExtenderCli, TenMegabyteBodyIs413Quickly)
{
    Extender x({});
    ASSERT_GT(x.port(), 0) << x.err();
    int fd = connect_to(x.port());
    ASSERT_GE(fd, 0);
    auto t0 = Clock::now();
    size_t ten = 10u << 20;
    send_all(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(ten) + "\r\n\r\n");
    send_all(fd, std::string(65536, '{')); // a first piece of it; the rest is never needed
    std::string r = read_all(fd, 5);
    close(fd);
    EXPECT_EQ(status_of(r), 413) << r;
    EXPECT_TRUE(one_line_error(body_of(r))) << r;
    EXPECT_LT(secs_since(t0), 1.0);
    EXPECT_EQ(status_of(http(x.port(), "GET", "/healthz")), 200);
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// A client that sends half a request and stalls is closed after --timeout, and others are answered meanwhile.
TEST(ExtenderCli, StalledClientClosedAfterTimeoutOthersServed)
{
    Extender x({"--timeout", "1"});
    ASSERT_GT(x.port(), 0) << x.err();
    int half_headers = connect_to(x.port()), half_body = connect_to(x.port());
    ASSERT_GE(half_headers, 0);
    ASSERT_GE(half_body, 0);
    auto t0 = Clock::now();
    send_all(half_headers, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Le");
    send_all(half_body, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"Pod\":");
    for (int i = 0; i < 5; i++) // meanwhile
        EXPECT_EQ(status_of(http(x.port(), "GET", "/healthz", "", 0.5)), 200);
    bool closed1 = false, closed2 = false;
    read_all(half_headers, 5, &closed1);
    read_all(half_body, 5, &closed2);
    double t = secs_since(t0);
    EXPECT_TRUE(closed1);
    EXPECT_TRUE(closed2);
    EXPECT_GE(t, 0.9);
    EXPECT_LT(t, 3.5) << "a stalled client held for " << t << " s with --timeout 1";
    close(half_headers);
    close(half_body);
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// --max-connections bounds the connections held at once (each may hold a body of up to --max-body as it arrives).
// libmicrohttpd at the limit stops accepting: a further connection waits in the kernel's backlog, unanswered, and is
// served as soon as a held one closes (nothing is dropped).
TEST(ExtenderCli, ConnectionLimitHoldsExtraConnectionsBack)
{
    Extender x({"--threads", "1", "--max-connections", "2"});
    ASSERT_GT(x.port(), 0) << x.err();
    int held[2];
    for (int &fd : held) { // two connections, each in the middle of a body
        fd = connect_to(x.port());
        ASSERT_GE(fd, 0);
        ASSERT_TRUE(send_all(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"Pod\":"));
    }
    usleep(200000);
    int third = connect_to(x.port());
    ASSERT_GE(third, 0);
    ASSERT_TRUE(send_all(third, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    std::string r = read_all(third, 1.0);
    EXPECT_EQ(r, "") << "a third connection was answered with two held and --max-connections 2";
    close(held[0]);
    r += read_all(third, 3.0);
    EXPECT_EQ(status_of(r), 200) << "not served once one of the two closed: " << r;
    close(third);
    close(held[1]);
    EXPECT_EQ(x.stop(), 0) << x.err();
}

TEST(ExtenderCli, SigtermStopsCleanlyExit0)
{
    Extender x({});
    ASSERT_GT(x.port(), 0) << x.err();
    int idle = connect_to(x.port()); // an open connection does not hold the stop up
    ASSERT_GE(idle, 0);
    auto t0 = Clock::now();
    EXPECT_EQ(x.stop(), 0) << x.err();
    EXPECT_LT(secs_since(t0), 2.0);
    EXPECT_NE(x.err().find("ibench extender: stopped"), std::string::npos) << x.err();
    close(idle);
}

TEST(ExtenderCli, BadOptionsExit2OneLine)
{
    for (const char *a : {"--listen nope:80", "--listen 127.0.0.1:70000", "--threads 0", "--timeout 0",
                          "--max-body 0", "--max-connections 0", "--threads 4 --max-connections 4", "--margin -1",
                          "--unknown maybe", "--tls-cert /etc/hostname", "--profiles /nonexistent/dir", "--bogus",
                          "extra"}) {
        int rc;
        std::string o = sh(std::string(IBENCH_BIN) + " extender " + a, &rc);
        EXPECT_EQ(rc, 2) << a << ": " << o;
        EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << a << ": " << o;
        EXPECT_EQ(o.rfind("ibench extender: ", 0), 0u) << o;
    }
    int rc;
    std::string o = sh(std::string(IBENCH_BIN) + " extender --help", &rc);
    EXPECT_EQ(rc, 0);
    EXPECT_NE(o.find("--max-body"), std::string::npos);
}

TEST(ExtenderCli, PortInUseExit1WithReason)
{
    Extender x({});
    ASSERT_GT(x.port(), 0) << x.err();
    int rc;
    std::string o = sh(std::string(IBENCH_BIN) + " extender --listen 127.0.0.1:" + std::to_string(x.port()), &rc);
    EXPECT_EQ(rc, 1) << o;
    EXPECT_NE(o.find("Address already in use"), std::string::npos) << o;
}

TEST(ExtenderCli, TlsWithSelfSignedCertificate)
{
    int rc;
    if (sh("command -v openssl", &rc), rc != 0)
        GTEST_SKIP() << "openssl not installed (scripts/bootstrap --tests installs it)";
    ib_test::TempDir d("ext_tls");
    ASSERT_FALSE(d.path().empty());
    std::string cert = d.path() + "/c.pem", key = d.path() + "/k.pem";
    std::string o = sh("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout " + key +
                           " -out " + cert,
                       &rc);
    ASSERT_EQ(rc, 0) << o;
    Extender x({"--tls-cert", cert, "--tls-key", key});
    ASSERT_GT(x.port(), 0) << x.err();
    EXPECT_NE(x.err().find("listening on https://"), std::string::npos) << x.err();
    std::string plain = http(x.port(), "GET", "/healthz", "", 2);
    EXPECT_EQ(plain.find("HTTP/1.1 200"), std::string::npos) << "plain HTTP answered on the TLS port: " << plain;
    o = sh("printf 'GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' | timeout 10 openssl "
           "s_client -quiet -connect 127.0.0.1:" + std::to_string(x.port()),
           &rc);
    EXPECT_NE(o.find("HTTP/1.1 200 OK"), std::string::npos) << o;
    EXPECT_NE(o.find("\r\n\r\nok"), std::string::npos) << o;
    EXPECT_EQ(x.stop(), 0) << x.err();
    // a key that is not a key: the server does not start, and says so
    o = sh(std::string(IBENCH_BIN) + " extender --listen 127.0.0.1:0 --tls-cert " + cert + " --tls-key " + cert, &rc);
    EXPECT_EQ(rc, 1) << o;
    EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
}

// The decisions over HTTP: a pod without the profile annotation passes every node, and the answer says so.
TEST(ExtenderRealLib, PodWithoutProfilePassesEveryNode)
{
    Extender x({});
    ASSERT_GT(x.port(), 0) << x.err();
    std::string args = "{\"Pod\": {\"metadata\": {\"name\": \"p\", \"namespace\": \"default\"}}, \"Nodes\": "
                       "{\"items\": [{\"metadata\": {\"name\": \"n1\"}}, {\"metadata\": {\"name\": \"n2\"}}]}}";
    std::string r = http(x.port(), "POST", "/filter", args);
    EXPECT_EQ(status_of(r), 200) << r;
    EXPECT_NE(body_of(r).find("every node passes unchanged"), std::string::npos) << r;
    EXPECT_NE(body_of(r).find("\"n1\""), std::string::npos) << r;
    EXPECT_NE(body_of(r).find("\"n2\""), std::string::npos) << r;
    r = http(x.port(), "POST", "/prioritize", args);
    EXPECT_EQ(status_of(r), 200) << r;
}

// The body reaches the handler whole and intact, by Content-Length and chunked; the answer is the handler's.
TEST(ExtenderServer, HandlerGetsWholeBody)
{
    InProc s(4u << 20, 5);
    ASSERT_EQ(s.rc_, 0) << s.why_;
    std::string body;
    for (int i = 0; body.size() < (3u << 20); i++)
        body += "{\"k\": " + std::to_string(i * 7919 % 10007) + "},";
    std::string r = http(s.port(), "POST", "/prioritize", body);
    EXPECT_EQ(status_of(r), 200) << r.substr(0, 200);
    EXPECT_NE(r.find("Content-Type: application/json"), std::string::npos);
    EXPECT_EQ(body_of(r), "{\"verb\": \"prioritize\", \"len\": " + std::to_string(body.size()) +
                              ", \"fnv\": " + std::to_string(fnv(body)) + "}");
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);
    send_all(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                 "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
    r = read_all(fd, 5);
    close(fd);
    EXPECT_EQ(body_of(r), "{\"verb\": \"filter\", \"len\": 11, \"fnv\": " + std::to_string(fnv("hello world")) + "}")
        << r;
}

// A chunked body passing the limit: refused at once (413, or the connection closed: libmicrohttpd 0.9 cannot answer
// in the middle of a body), never read to its end; the server goes on serving.
TEST(ExtenderServer, ChunkedBodyOverLimitRefusedAtOnce)
{
    InProc s(64u << 10, 5);
    ASSERT_EQ(s.rc_, 0) << s.why_;
    g_calls = 0;
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);
    auto t0 = Clock::now();
    send_all(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    std::string chunk = "4000\r\n" + std::string(0x4000, 'x') + "\r\n";
    size_t sent = 0;
    bool ok = true;
    for (int i = 0; i < 640 && ok; i++) { // 10 MB in 16 KiB chunks, until the server stops taking them
        ok = send_all(fd, chunk);
        sent += ok ? chunk.size() : 0;
    }
    bool closed = false;
    std::string r = read_all(fd, 5, &closed);
    close(fd);
    EXPECT_TRUE(status_of(r) == 413 || (r.empty() && closed)) << r;
    EXPECT_LT(sent, 10u << 20) << "the server read the whole 10 MB";
    EXPECT_LT(secs_since(t0), 2.0);
    EXPECT_EQ(g_calls.load(), 0);
    EXPECT_EQ(status_of(http(s.port(), "GET", "/healthz")), 200);
}

// A body that trickles in (a byte every 0.3 s, never idle for --timeout) is cut off after --timeout in all (408).
TEST(ExtenderServer, TricklingBodyCutOffAfterTimeout)
{
    InProc s(4u << 20, 1);
    ASSERT_EQ(s.rc_, 0) << s.why_;
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);
    auto t0 = Clock::now();
    send_all(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
    std::string r;
    bool closed = false;
    while (!closed && secs_since(t0) < 5) {
        if (!send_all(fd, "x"))
            break;
        r += read_all(fd, 0.3, &closed);
    }
    r += read_all(fd, 1, &closed);
    close(fd);
    EXPECT_TRUE(status_of(r) == 408 || closed) << r;
    EXPECT_LT(secs_since(t0), 3.0);
}

// 64 clients at once, each a keep-alive connection with 4 requests: every answer a 200 with its own body.
TEST(ExtenderServer, SixtyFourConcurrentConnections)
{
    InProc s(4u << 20, 10, 2);
    ASSERT_EQ(s.rc_, 0) << s.why_;
    std::atomic<int> good{0};
    std::vector<std::thread> th;
    for (int i = 0; i < 64; i++)
        th.emplace_back([&, i] {
            int fd = connect_to(s.port());
            if (fd < 0)
                return;
            for (int k = 0; k < 4; k++) {
                std::string b = "{\"client\": " + std::to_string(i) + ", \"k\": " + std::to_string(k) + "}";
                std::string req = "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(b.size()) +
                                  "\r\n" + (k == 3 ? "Connection: close\r\n" : "") + "\r\n" + b;
                if (!send_all(fd, req))
                    break;
                std::string want = "{\"verb\": \"filter\", \"len\": " + std::to_string(b.size()) +
                                   ", \"fnv\": " + std::to_string(fnv(b)) + "}";
                std::string r;
                auto t0 = Clock::now();
                while (r.find(want) == std::string::npos && secs_since(t0) < 10) {
                    char buf[4096];
                    pollfd p{fd, POLLIN, 0};
                    if (poll(&p, 1, 50) <= 0)
                        continue;
                    ssize_t n = recv(fd, buf, sizeof(buf), 0);
                    if (n <= 0)
                        break;
                    r.append(buf, (size_t)n);
                }
                if (status_of(r) == 200 && r.find(want) != std::string::npos)
                    good++;
            }
            close(fd);
        });
    for (auto &t : th)
        t.join();
    EXPECT_EQ(good.load(), 64 * 4);
}

} // namespace

namespace {

using ib_test::file_text;
std::string canon(const std::string &t) { return ib_test::json_canon(t); }

// The acceptance's goldens over loopback HTTP: `ibench extender --profiles STORE` answers the recorded ExtenderArgs
// (both forms, an unsafe node with its reason, a pod without a profile) exactly as tests/fixtures/extender/ has them.
TEST(ExtenderCli, GoldenAnswersOverLoopback)
{
    const std::string dir = std::string(IBENCH_FIXTURES) + "/extender/";
    Extender x({"--profiles", dir + "store"});
    ASSERT_GT(x.port(), 0);
    unsigned n = 0;
    for (const char *name : {"filter-full", "filter-names", "filter-noprofile"})
        for (const char *verb : {"filter", "prioritize"}) {
            std::string r = http(x.port(), "POST", std::string("/") + verb, file_text(dir + name + ".request.json"));
            EXPECT_EQ(status_of(r), 200) << name << " " << verb << ": " << r;
            EXPECT_NE(r.find("Content-Type: application/json"), std::string::npos) << r;
            EXPECT_EQ(canon(body_of(r)), file_text(dir + name + "." + verb + ".json")) << name << " " << verb;
            n++;
        }
    EXPECT_EQ(n, 6u);
}

} // namespace
