// test_extender_http.cpp - `ibench extender` over loopback with plain sockets (docs/extender.md): routes, limits,
// slow clients, concurrency, signals, TLS, options.  Two kinds of server:
// - the command itself (ExtenderCli): a child `ibench extender --listen 127.0.0.1:0`, the port read from its stderr;
//   its decisions are placement/k8s/pl_extender.c's (ExtenderRealLib and the goldens check them over HTTP);
// - the HTTP layer in process (ExtenderServer): http_server with a fake handler that answers 200 with what it got,
//   for the paths that need a 200 (whole bodies delivered, concurrency).
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <atomic>
#include <functional>
#include <regex>
#include <thread>

#include "extender_proc.h"
#include "test_support.h"

extern "C" {
#include "http_server.h"
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

// `ibench extender --listen 127.0.0.1:0 ARGS` as a child (extender_proc.h); port() once it said where it listens.
using Extender = ib_test::ExtenderProc;

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

// http_server in process on 127.0.0.1 (a free port) with the fake handler.
class InProc {
public:
    InProc(size_t max_body, unsigned timeout_s, unsigned threads = 2,
           const std::function<void(http_server_opts &)> &tweak = nullptr)
    {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        http_server_opts o{};
        o.addr = (sockaddr *)&a;
        o.addrlen = sizeof(a);
        o.threads = threads;
        o.max_body = max_body;
        o.timeout_s = timeout_s;
        o.handler = fake_handler;
        if (tweak)
            tweak(o);
        char why[256] = "";
        rc_ = http_server_start(&o, &s_, why, sizeof(why));
        why_ = why;
    }
    ~InProc() { http_server_stop(s_); }
    int port() const { return s_ ? http_server_port(s_) : 0; }
    int rc_;
    std::string why_;

private:
    http_server *s_ = nullptr;
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

// --max-connections bounds the connections held at once.  When every one is in the middle of a request (none idle
// to evict), a further connection is refused at once (closed unanswered), not left waiting in the backlog: the
// client learns now, not after its own timeout.  Once one closes, a new connection is served.
TEST(ExtenderCli, ConnectionLimitRefusesWhenEveryConnectionIsBusy)
{
    Extender x({"--threads", "1", "--max-connections", "2", "--timeout", "5"});
    ASSERT_GT(x.port(), 0) << x.err();
    int held[2];
    for (int &fd : held) { // two connections, each in the middle of a body: busy, never evicted
        fd = connect_to(x.port());
        ASSERT_GE(fd, 0);
        ASSERT_TRUE(send_all(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"Pod\":"));
    }
    usleep(200000);
    int third = connect_to(x.port());
    ASSERT_GE(third, 0);
    send_all(third, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    bool closed = false;
    auto t0 = Clock::now();
    std::string r = read_all(third, 2.0, &closed);
    EXPECT_TRUE(closed && r.empty()) << "a third connection with two busy and --max-connections 2: " << r;
    EXPECT_LT(secs_since(t0), 1.0);
    close(third);
    close(held[0]);
    usleep(200000);
    r = http(x.port(), "GET", "/healthz", "", 3.0);
    EXPECT_EQ(status_of(r), 200) << "not served once one of the two closed: " << r;
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
                          "--max-per-address 0", "--max-connections 10 --max-per-address 11", "--body-memory 0",
                          "--max-body 8M --body-memory 4M", "--log-level loud", "--log-level",
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
    // from one address, so the per-address limit is raised to them all: else the 33rd connection would evict the
    // oldest idle one, a keep-alive connection between two of its requests
    InProc s(4u << 20, 10, 2, [](http_server_opts &o) { o.per_address = 64; });
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
    // the goldens are the rule that refuses every negative headroom (--refuse uncertain) ...
    Extender x({"--profiles", dir + "store", "--refuse", "uncertain", "--decide", "headroom"});
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
    // ... the model refusing only established breaks (--refuse established): n2's and n4's refusals above rest on
    // figures within their noise, so both pass filter; the model predicts n4's group (its tenants and the pod) at or
    // above QoS beyond its bounds (safe, and shared: before the empty n3), n2's straddles a QoS line (uncertain: last)
    Extender d({"--profiles", dir + "store", "--refuse", "established"});
    ASSERT_GT(d.port(), 0);
    std::string f = body_of(http(d.port(), "POST", "/filter", file_text(dir + "filter-names.request.json")));
    EXPECT_NE(f.find("\"n2\""), std::string::npos) << f;
    EXPECT_NE(f.find("\"n4\""), std::string::npos) << f;
    EXPECT_EQ(f.find("unsafe"), std::string::npos) << f;
    std::string p = canon(body_of(http(d.port(), "POST", "/prioritize", file_text(dir + "filter-full.request.json"))));
    EXPECT_NE(p.find("\"Host\": \"n1\",\n  \"Score\": 10"), std::string::npos) << p;
    EXPECT_NE(p.find("\"Host\": \"n4\",\n  \"Score\": 9"), std::string::npos) << p;
    EXPECT_NE(p.find("\"Host\": \"n3\",\n  \"Score\": 8"), std::string::npos) << p;
    EXPECT_NE(p.find("\"Host\": \"n2\",\n  \"Score\": 7"), std::string::npos) << p;
    // asked again, the verdicts come from those kept across requests: the same order, uncertain last
    EXPECT_EQ(canon(body_of(http(d.port(), "POST", "/prioritize", file_text(dir + "filter-full.request.json")))), p);
    // the default (--refuse likely): n2's group straddles the line with xz's point prediction under it: refused,
    // saying so; n4 still passes
    Extender l({"--profiles", dir + "store"});
    ASSERT_GT(l.port(), 0);
    f = body_of(http(l.port(), "POST", "/filter", file_text(dir + "filter-names.request.json")));
    EXPECT_NE(f.find("\"n4\""), std::string::npos) << f;
    EXPECT_NE(f.find("\"n2\":\"ibench: unsafe: mem-cap (xz predicted 0.91 [0.84, 0.98] straddles, its point under "
                     "QoS 0.95"),
              std::string::npos)
        << f;
}

} // namespace

// ---- never stalled (item 4), observable (item 6), the small ones (item 8)
namespace {

using ib_test::file_text;

const std::string kFix = std::string(IBENCH_FIXTURES) + "/extender/";

// A connection to 127.0.0.1:port from the loopback address src (Linux routes all of 127/8 to lo, so a test has as
// many client addresses as it wants).
int connect_from(int port, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{}, b{};
    b.sin_family = AF_INET;
    inet_pton(AF_INET, src, &b.sin_addr);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0};
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (fd >= 0 && (bind(fd, (sockaddr *)&b, sizeof(b)) < 0 || connect(fd, (sockaddr *)&a, sizeof(a)) < 0)) {
        close(fd);
        return -1;
    }
    return fd;
}

// One POST on a new connection from src; the answer, and in *secs the time from connect to the last byte.
std::string post_from(int port, const char *src, const std::string &path, const std::string &body, double *secs)
{
    auto t0 = Clock::now();
    int fd = connect_from(port, src);
    if (fd < 0)
        return "";
    send_all(fd, "POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body);
    std::string r = read_all(fd, 5);
    *secs = secs_since(t0);
    close(fd);
    return r;
}

std::string get_from(int port, const char *src, const std::string &path)
{
    int fd = connect_from(port, src);
    if (fd < 0)
        return "";
    send_all(fd, "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    std::string r = read_all(fd, 5);
    close(fd);
    return r;
}

// Sockets the server has closed: readable with EOF (or reset) now.
int closed_by_server(const std::vector<int> &fds)
{
    int n = 0;
    for (int fd : fds) {
        pollfd p{fd, POLLIN, 0};
        char c;
        if (poll(&p, 1, 0) > 0 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0)
            n++;
    }
    return n;
}

// ---- the Prometheus text format (exposition format 0.0.4), strictly: every line a comment (# HELP / # TYPE) or a
// sample `name{label="value",...} value`; every sample's family TYPEd before it; histograms' buckets cumulative with
// +Inf equal to _count.  Returns "" or the first fault.
struct Sample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value;
};

std::string parse_prometheus(const std::string &text, std::vector<Sample> *out)
{
    static const std::regex help(R"re(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*)re");
    static const std::regex type(R"re(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))re");
    static const std::regex sample(R"re(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+))re");
    static const std::regex label(R"re(^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$))re");
    std::map<std::string, std::string> types;
    std::istringstream in(text);
    std::string line;
    int n = 0;
    if (text.empty() || text.back() != '\n')
        return "the text does not end with a newline";
    while (std::getline(in, line)) {
        n++;
        std::smatch m;
        if (std::regex_match(line, m, type)) {
            if (types.count(m[1]))
                return "line " + std::to_string(n) + ": a second TYPE for " + m[1].str();
            types[m[1]] = m[2];
            continue;
        }
        if (std::regex_match(line, m, help))
            continue;
        if (!std::regex_match(line, m, sample))
            return "line " + std::to_string(n) + ": not a sample: " + line;
        Sample s;
        s.name = m[1];
        std::string ls = m[3], v = m[4];
        while (!ls.empty()) {
            std::smatch lm;
            if (!std::regex_search(ls, lm, label))
                return "line " + std::to_string(n) + ": bad labels: " + line;
            s.labels[lm[1]] = lm[2];
            ls = lm.suffix();
        }
        char *end;
        s.value = v == "+Inf" ? INFINITY : v == "-Inf" ? -INFINITY : strtod(v.c_str(), &end);
        if (v != "+Inf" && v != "-Inf" && (*end || v.empty()))
            return "line " + std::to_string(n) + ": bad value: " + line;
        std::string fam = s.name;
        for (const char *suf : {"_bucket", "_sum", "_count"})
            if (fam.size() > strlen(suf) && fam.compare(fam.size() - strlen(suf), strlen(suf), suf) == 0 &&
                types.count(fam.substr(0, fam.size() - strlen(suf))) &&
                types[fam.substr(0, fam.size() - strlen(suf))] == "histogram")
                fam = fam.substr(0, fam.size() - strlen(suf));
        if (!types.count(fam))
            return "line " + std::to_string(n) + ": no TYPE before " + s.name;
        out->push_back(s);
    }
    // histograms: per family and labels without le, buckets non-decreasing, +Inf == _count
    for (auto &t : types) {
        if (t.second != "histogram")
            continue;
        std::map<std::string, std::vector<std::pair<double, double>>> buckets;
        std::map<std::string, double> counts;
        for (auto &s : *out) {
            auto key = s.labels;
            key.erase("le");
            std::string k;
            for (auto &kv : key)
                k += kv.first + "=" + kv.second + ",";
            if (s.name == t.first + "_bucket") {
                if (!s.labels.count("le"))
                    return t.first + "_bucket without le";
                double le = s.labels["le"] == "+Inf" ? INFINITY : strtod(s.labels["le"].c_str(), nullptr);
                buckets[k].push_back({le, s.value});
            } else if (s.name == t.first + "_count") {
                counts[k] = s.value;
            }
        }
        for (auto &b : buckets) {
            for (size_t i = 1; i < b.second.size(); i++)
                if (b.second[i].first <= b.second[i - 1].first || b.second[i].second < b.second[i - 1].second)
                    return t.first + "{" + b.first + "}: buckets not increasing";
            if (b.second.empty() || !std::isinf(b.second.back().first) || b.second.back().second != counts[b.first])
                return t.first + "{" + b.first + "}: +Inf bucket is not _count";
        }
    }
    return "";
}

double metric(const std::vector<Sample> &v, const std::string &name, const std::map<std::string, std::string> &want)
{
    for (auto &s : v) {
        if (s.name != name)
            continue;
        bool ok = true;
        for (auto &kv : want)
            ok = ok && s.labels.count(kv.first) && s.labels.at(kv.first) == kv.second;
        if (ok)
            return s.value;
    }
    return -1;
}

// Item 4, the acceptance: 64 idle sockets (half connected only, half one byte of a request) from 127.0.0.1, the
// address the healthy client also uses, against the command's defaults.  Every healthy filter request is answered
// 200 within 100 ms, from 127.0.0.1 and from another address.  (Before: 8 connections, each held by an idle socket
// for the 10 s timeout: the healthy client waited 9.71 s.)
TEST(ExtenderStall, SixtyFourIdleSocketsDoNotDelayAHealthyClient)
{
    Extender x({"--profiles", kFix + "store"});
    ASSERT_GT(x.port(), 0) << x.err();
    std::string body = file_text(kFix + "filter-full.request.json");
    double warm;
    ASSERT_EQ(status_of(post_from(x.port(), "127.0.0.1", "/filter", body, &warm)), 200); // profiles cached
    std::vector<int> idle;
    for (int i = 0; i < 64; i++) {
        int fd = connect_from(x.port(), "127.0.0.1");
        ASSERT_GE(fd, 0) << i;
        if (i % 2)
            send_all(fd, "P");
        idle.push_back(fd);
    }
    usleep(100000);
    double worst = 0;
    for (int k = 0; k < 10; k++) {
        double t = 0;
        std::string r = post_from(x.port(), k % 2 ? "127.0.0.2" : "127.0.0.1", "/filter", body, &t);
        EXPECT_EQ(status_of(r), 200) << k << ": " << r.substr(0, 200);
        EXPECT_NE(r.find("\"FailedNodes\""), std::string::npos) << r.substr(0, 200);
        worst = std::max(worst, t);
    }
    EXPECT_LT(worst, 0.1 * ib_test::kHangScale) << "a healthy client waited " << worst << " s beside 64 idle sockets";
    // the per-address limit (32) held: the server shut the oldest idle sockets of 127.0.0.1 down to admit new ones
    usleep(100000);
    int shut = closed_by_server(idle);
    EXPECT_GE(shut, 64 - 32) << "idle sockets the server closed";
    std::vector<Sample> m;
    std::string r = http(x.port(), "GET", "/metrics");
    ASSERT_EQ(parse_prometheus(body_of(r), &m), "") << body_of(r);
    EXPECT_GE(metric(m, "ibench_extender_http_connections_evicted_total", {}), 64 - 32);
    EXPECT_EQ(metric(m, "ibench_extender_http_connections_refused_total", {}), 0);
    for (int fd : idle)
        close(fd);
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// The issue's exact shape: 8 connections in all, 8 clients that send one byte.  The 9th is admitted at once, and
// the idle socket evicted for it is the oldest (least recently used), not a random one.
TEST(ExtenderStall, EightSlotsHeldByIdleSocketsEvictOldestFirst)
{
    InProc s(1u << 20, 10, 2, [](http_server_opts &o) { o.max_conns = 8, o.per_address = 8; });
    ASSERT_EQ(s.rc_, 0) << s.why_;
    std::vector<int> idle;
    for (int i = 0; i < 8; i++) {
        idle.push_back(connect_to(s.port()));
        ASSERT_GE(idle.back(), 0);
        send_all(idle.back(), "P");
        usleep(20000); // distinct ages
    }
    usleep(100000);
    double t;
    std::string r = post_from(s.port(), "127.0.0.1", "/filter", "{}", &t);
    EXPECT_EQ(status_of(r), 200) << r;
    EXPECT_LT(t, 0.1 * ib_test::kHangScale);
    usleep(100000);
    EXPECT_EQ(closed_by_server({idle[0]}), 1) << "the oldest idle socket was not the one evicted";
    EXPECT_EQ(closed_by_server(std::vector<int>(idle.begin() + 1, idle.end())), 0);
    for (int fd : idle)
        close(fd);
}

// The per-address limit against busy connections (each in the middle of a body: never evicted): one address holds
// at most per_address; the rest of its connections are refused at once, and another address is served meanwhile.
TEST(ExtenderStall, PerAddressLimitHoldsOneAddressBack)
{
    InProc s(1u << 20, 5, 2, [](http_server_opts &o) { o.max_conns = 64, o.per_address = 8; });
    ASSERT_EQ(s.rc_, 0) << s.why_;
    std::vector<int> busy;
    for (int i = 0; i < 20; i++) {
        int fd = connect_from(s.port(), "127.0.0.1");
        ASSERT_GE(fd, 0);
        send_all(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"Pod\":");
        busy.push_back(fd);
        usleep(5000);
    }
    usleep(200000);
    EXPECT_EQ(closed_by_server(busy), 12) << "an address held more than --max-per-address 8 busy connections";
    double t;
    std::string r = post_from(s.port(), "127.0.0.3", "/prioritize", "{}", &t);
    EXPECT_EQ(status_of(r), 200) << r;
    EXPECT_LT(t, 0.1 * ib_test::kHangScale);
    std::vector<Sample> m; // from another address: 127.0.0.1 is at its limit, all busy
    ASSERT_EQ(parse_prometheus(body_of(get_from(s.port(), "127.0.0.3", "/metrics")), &m), "");
    EXPECT_EQ(metric(m, "ibench_extender_http_connections_refused_total", {}), 12);
    for (int fd : busy)
        close(fd);
}

// Bodies arriving on all connections together stay under body_memory: a third 1 MiB body beside two held is
// refused (503 or closed: MHD 0.9 cannot answer mid-body), and the memory is given back when they end.
TEST(ExtenderStall, BodyMemoryBoundsBodiesOfAllConnections)
{
    InProc s(1u << 20, 5, 2, [](http_server_opts &o) { o.body_memory = 2u << 20; });
    ASSERT_EQ(s.rc_, 0) << s.why_;
    g_calls = 0;
    std::string head = "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(1u << 20) + "\r\n\r\n";
    int fd[3];
    for (int &f : fd) {
        f = connect_to(s.port());
        ASSERT_GE(f, 0);
        send_all(f, head + std::string(600u << 10, ' ')); // past 512 KiB: its buffer doubles to the whole 1 MiB
        usleep(100000);
    }
    bool closed = false;
    std::string r = read_all(fd[2], 2, &closed);
    EXPECT_TRUE(status_of(r) == 503 || (r.empty() && closed)) << r;
    EXPECT_TRUE(closed_by_server({fd[0], fd[1]}) == 0);
    std::vector<Sample> m;
    ASSERT_EQ(parse_prometheus(body_of(http(s.port(), "GET", "/metrics")), &m), "");
    EXPECT_EQ(metric(m, "ibench_extender_http_body_bytes_held", {}), 2u << 20);
    EXPECT_EQ(metric(m, "ibench_extender_http_body_memory_refused_total", {}), 1);
    for (int f : fd)
        close(f);
    usleep(200000);
    m.clear();
    ASSERT_EQ(parse_prometheus(body_of(http(s.port(), "GET", "/metrics")), &m), "");
    EXPECT_EQ(metric(m, "ibench_extender_http_body_bytes_held", {}), 0) << "body memory not given back";
    EXPECT_EQ(g_calls.load(), 0);
}

// The log's scanner reads client bodies that are not JSON (the handler has answered 400): each is answered at
// --log-level info within a second, none hangs a thread (a value that consumes no character once looped forever).
TEST(ExtenderObserve, LogScannerSurvivesMalformedBodies)
{
    Extender x({"--profiles", kFix + "store", "--log-level", "info", "--threads", "1"});
    ASSERT_GT(x.port(), 0) << x.err();
    const std::string nul(1, '\0');
    const std::vector<std::string> bodies = {
        "{\"NodeNames\": [" + nul + "]}", "{\"NodeNames\": [1 2]}", "{\"NodeNames\": [,]}", "{\"Nodes\": {\"items\": [1,",
        "{\"Nodes\": {\"items\": [{}:]}}", "{\"Pod\": {\"metadata\": {\"name\": \"x", "{\"Pod\" " + nul + ": 1}", "[", "{",
        "{\"NodeNames\": [\"a\", :]}", "{\"NodeNames\": [\"\\"};
    for (const std::string &b : bodies) {
        auto t0 = Clock::now();
        std::string r = http(x.port(), "POST", "/filter", b, 3);
        EXPECT_EQ(status_of(r), 400) << b << ": " << r;
        EXPECT_LT(secs_since(t0), 1.0 * ib_test::kHangScale) << b;
    }
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// Item 6: /healthz alive, /readyz ready while the store can be read and 503 with a JSON reason once it cannot,
// /metrics parsed as Prometheus text with the requests, their latency and the library's cache lines.
TEST(ExtenderObserve, HealthReadyAndMetrics)
{
    ib_test::TempDir d("ext_ready");
    ASSERT_FALSE(d.path().empty());
    std::string store = d.path() + "/store";
    int rc;
    sh("cp -rL " + kFix + "store " + store, &rc); // the fixture links to docs/data
    ASSERT_EQ(rc, 0);
    Extender x({"--profiles", store});
    ASSERT_GT(x.port(), 0) << x.err();
    EXPECT_EQ(body_of(http(x.port(), "GET", "/healthz")), "ok\n");
    std::string r = http(x.port(), "GET", "/readyz");
    EXPECT_EQ(status_of(r), 200) << r;
    std::string body = file_text(kFix + "filter-full.request.json");
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(status_of(http(x.port(), "POST", "/filter", body)), 200);
    EXPECT_EQ(status_of(http(x.port(), "POST", "/prioritize", "{bad")), 400);
    EXPECT_EQ(status_of(http(x.port(), "POST", "/readyz", "")), 405);
    r = http(x.port(), "GET", "/metrics");
    EXPECT_EQ(status_of(r), 200);
    EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << r.substr(0, 300);
    std::vector<Sample> m;
    ASSERT_EQ(parse_prometheus(body_of(r), &m), "") << body_of(r);
    EXPECT_EQ(metric(m, "ibench_extender_http_requests_total", {{"verb", "filter"}, {"code", "200"}}), 3);
    EXPECT_EQ(metric(m, "ibench_extender_http_requests_total", {{"verb", "prioritize"}, {"code", "400"}}), 1);
    EXPECT_EQ(metric(m, "ibench_extender_http_requests_total", {{"verb", "readyz"}, {"code", "405"}}), 1);
    EXPECT_EQ(metric(m, "ibench_extender_http_request_duration_seconds_count", {{"verb", "filter"}}), 3);
    EXPECT_GT(metric(m, "ibench_extender_http_request_duration_seconds_sum", {{"verb", "filter"}}), 0);
    EXPECT_EQ(metric(m, "ibench_extender_http_request_duration_seconds_bucket", {{"verb", "filter"}, {"le", "+Inf"}}),
              3);
    // the decisions' figures beside the server's (pl_extender_metrics): the request names 5 profiles (4 in the
    // store, 1 not), each read once, the two later requests answered from the cache
    EXPECT_EQ(metric(m, "ibench_extender_decisions_total", {{"verb", "filter"}}), 3) << body_of(r);
    EXPECT_EQ(metric(m, "ibench_extender_cache_entries", {}), 5) << body_of(r);
    EXPECT_EQ(metric(m, "ibench_extender_cache_misses_total", {}), 5) << body_of(r);
    // the store gone: not ready, with the reason, as JSON
    sh("rm -rf " + store, &rc);
    r = http(x.port(), "GET", "/readyz");
    EXPECT_EQ(status_of(r), 503) << r;
    EXPECT_TRUE(one_line_error(body_of(r))) << r;
    EXPECT_NE(r.find("Content-Type: application/json"), std::string::npos) << r;
    EXPECT_NE(body_of(r).find("not ready: the profile store"), std::string::npos) << r;
    EXPECT_EQ(status_of(http(x.port(), "GET", "/healthz")), 200); // alive all the same
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// Item 3 over loopback: twenty requests of 10 000 nodes, each node naming a tenant never seen before (the issue's
// case: RSS 8.5 -> 135 MB over six requests, the request 0.38 -> 5.86 s): 200 000 distinct names, the cache never
// over its capacity (read from /metrics), the server's memory bounded (the first requests grow it to the working set
// of a 10 000-node request: 35 -> about 127 MiB here, then flat through 300 000 names), the last request no slower
// than a few times the first.
TEST(ExtenderObserve, CacheBoundedUnder100000NamesOverLoopback)
{
    Extender x({"--profiles", kFix + "store"});
    ASSERT_GT(x.port(), 0) << x.err();
    json_error_t e;
    json_t *req = json_loads(file_text(kFix + "filter-full.request.json").c_str(), 0, &e);
    ASSERT_NE(req, nullptr) << e.text;
    auto rss_kib = [&]() {
        std::string st = file_text("/proc/" + std::to_string(x.pid()) + "/status");
        size_t at = st.find("VmRSS:");
        return at == std::string::npos ? -1L : strtol(st.c_str() + at + 6, nullptr, 10);
    };
    long rss1 = 0, rss10 = 0;
    double t1 = 0, tlast = 0;
    for (int r = 0; r < 20; r++) {
        json_t *items = json_array();
        for (int i = 0; i < 10000; i++) {
            std::string ten = "[\"ghost-" + std::to_string(r) + "-" + std::to_string(i) + "\"]";
            json_array_append_new(items, json_pack("{s:{s:s,s:{s:s}},s:{s:{s:s,s:s}}}", "metadata", "name",
                                                   ("n" + std::to_string(i)).c_str(), "annotations",
                                                   "ibench.io/tenants", ten.c_str(), "status", "allocatable", "cpu",
                                                   "8", "memory", "16Gi"));
        }
        json_object_set_new(req, "Nodes", json_pack("{s:o}", "items", items));
        json_object_del(req, "NodeNames");
        char *body = json_dumps(req, JSON_COMPACT);
        ASSERT_NE(body, nullptr);
        double t0 = ib_test::now_s();
        std::string a = http(x.port(), "POST", "/filter", body);
        double dt = ib_test::now_s() - t0;
        free(body);
        ASSERT_EQ(status_of(a), 200) << a.substr(0, 300);
        if (r == 0)
            rss1 = rss_kib(), t1 = dt;
        if (r == 9)
            rss10 = rss_kib();
        tlast = dt;
    }
    json_decref(req);
    std::string r = http(x.port(), "GET", "/metrics");
    std::vector<Sample> m;
    ASSERT_EQ(parse_prometheus(body_of(r), &m), "") << body_of(r);
    const double cap = metric(m, "ibench_extender_cache_capacity", {});
    EXPECT_EQ(cap, 1024);
    EXPECT_LE(metric(m, "ibench_extender_cache_entries", {}), cap);
    EXPECT_GE(metric(m, "ibench_extender_cache_misses_total", {}), 200000);
    EXPECT_GE(metric(m, "ibench_extender_cache_evictions_total", {}), 200000 - cap - 10);
    long rss20 = rss_kib();
    printf("200 000 distinct names over loopback: VmRSS %ld KiB after the first request, %ld after the tenth, %ld "
           "after the twentieth; request 1 %.3f s, request 20 %.3f s\n", rss1, rss10, rss20, t1, tlast);
    // the issue's server kept every name: 126 MB for 60 000, about 2 KiB a name, 400 MiB for these 200 000. The
    // allocator's arenas settle at the working set of a 10 000-node request within some requests (when varies from
    // run to run: 67-127 MiB at the tenth here, 124-127 at the twentieth and the thirtieth), so the bound is on the
    // whole run
    EXPECT_LT(rss20, rss1 + 128 * 1024) << "memory grows with the names seen"; // an unbounded cache: +154 MiB
    EXPECT_LT(tlast, 3 * t1 + 0.2 * ib_test::kHangScale) << "a lookup slows with the names seen";
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// Every log line of the CLI's stderr after the first (listening) and before "stopped", parsed.
std::vector<json_t *> log_lines(const std::string &err, std::string *bad)
{
    std::vector<json_t *> v;
    std::istringstream in(err);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("ibench extender: ", 0) == 0)
            continue;
        json_t *j = json_loads(line.c_str(), 0, nullptr);
        if (!json_is_object(j))
            *bad += line + "\n";
        else
            v.push_back(j);
    }
    return v;
}

// One JSON line per request at --log-level info: verb, status, duration, nodes in and out, the pod; none at off;
// at error only the failures.
TEST(ExtenderObserve, OneLogLinePerRequestAtTheLevelAsked)
{
    std::string body = file_text(kFix + "filter-full.request.json");
    {
        Extender x({"--profiles", kFix + "store", "--log-level", "info", "--refuse", "uncertain", "--decide", "headroom"});
        ASSERT_GT(x.port(), 0) << x.err();
        EXPECT_EQ(status_of(http(x.port(), "POST", "/filter", body)), 200);
        EXPECT_EQ(status_of(http(x.port(), "POST", "/prioritize", body)), 200);
        EXPECT_EQ(status_of(http(x.port(), "GET", "/nope")), 404);
        EXPECT_EQ(x.stop(), 0);
        std::string bad;
        auto v = log_lines(x.err(), &bad);
        EXPECT_EQ(bad, "");
        ASSERT_EQ(v.size(), 3u) << x.err();
        json_t *f = v[0], *p = v[1], *n = v[2];
        EXPECT_STREQ(json_string_value(json_object_get(f, "level")), "info");
        EXPECT_STREQ(json_string_value(json_object_get(f, "verb")), "filter");
        EXPECT_EQ(json_integer_value(json_object_get(f, "status")), 200);
        EXPECT_TRUE(json_is_number(json_object_get(f, "duration_ms")));
        EXPECT_GT(json_number_value(json_object_get(f, "duration_ms")), 0);
        EXPECT_STREQ(json_string_value(json_object_get(f, "pod")), "default/web-1");
        EXPECT_EQ(json_integer_value(json_object_get(f, "nodes_in")), 6);
        // the golden answer keeps n1 and n5 (filter-full.filter.json)
        EXPECT_EQ(json_integer_value(json_object_get(f, "nodes_out")), 2) << x.err();
        EXPECT_STREQ(json_string_value(json_object_get(p, "verb")), "prioritize");
        EXPECT_EQ(json_integer_value(json_object_get(p, "nodes_in")), 6);
        EXPECT_EQ(json_integer_value(json_object_get(p, "nodes_out")), 2); // scored above 0
        EXPECT_STREQ(json_string_value(json_object_get(n, "verb")), "other");
        EXPECT_EQ(json_integer_value(json_object_get(n, "status")), 404);
        for (json_t *j : v)
            json_decref(j);
    }
    for (const char *level : {"off", "error"}) {
        Extender x({"--profiles", kFix + "store", "--log-level", level});
        ASSERT_GT(x.port(), 0) << x.err();
        EXPECT_EQ(status_of(http(x.port(), "POST", "/filter", body)), 200);
        EXPECT_EQ(status_of(http(x.port(), "GET", "/nope")), 404);
        EXPECT_EQ(x.stop(), 0);
        std::string bad;
        auto v = log_lines(x.err(), &bad);
        EXPECT_EQ(v.size() + bad.size(), 0u) << level << ": " << x.err();
    }
}

int failing_handler(void *, const char *, const char *, size_t, char **out, int *)
{
    *out = nullptr;
    return -ENOMEM;
}

// At error, a 500 is logged with level error; lines of 32 concurrent requests never interleave.
TEST(ExtenderObserve, ErrorLevelLogsFailuresAndLinesStayWhole)
{
    FILE *log = tmpfile();
    ASSERT_NE(log, nullptr);
    {
        InProc s(1u << 20, 5, 2, [&](http_server_opts &o) {
            o.handler = failing_handler, o.log = log, o.log_level = HTTP_LOG_ERROR;
        });
        ASSERT_EQ(s.rc_, 0) << s.why_;
        std::string r = http(s.port(), "POST", "/filter", "{}");
        EXPECT_EQ(status_of(r), 500) << r;
        EXPECT_TRUE(one_line_error(body_of(r))) << r;
        EXPECT_EQ(status_of(http(s.port(), "GET", "/healthz")), 200); // not logged at error
    }
    {
        InProc s(1u << 20, 5, 2, [&](http_server_opts &o) { o.log = log, o.log_level = HTTP_LOG_INFO; });
        ASSERT_EQ(s.rc_, 0) << s.why_;
        std::vector<std::thread> th;
        for (int i = 0; i < 32; i++)
            th.emplace_back([&] { http(s.port(), "POST", "/filter", std::string(20000, 'x')); });
        for (auto &t : th)
            t.join();
    }
    rewind(log);
    std::string text;
    char b[4096];
    size_t n;
    while ((n = fread(b, 1, sizeof b, log)) > 0)
        text.append(b, n);
    fclose(log);
    std::string bad;
    auto v = log_lines(text, &bad);
    EXPECT_EQ(bad, "") << "lines that are not JSON objects";
    ASSERT_EQ(v.size(), 33u) << text;
    EXPECT_STREQ(json_string_value(json_object_get(v[0], "level")), "error");
    EXPECT_EQ(json_integer_value(json_object_get(v[0], "status")), 500);
    for (size_t i = 1; i < v.size(); i++)
        EXPECT_EQ(json_integer_value(json_object_get(v[i], "bytes_in")), 20000);
    for (json_t *j : v)
        json_decref(j);
}

// Every error the server answers is one line of JSON: 404, 405, 413, 408, 500 (above), 503 (readyz, body memory).
// libmicrohttpd 0.9's own refusals cannot be replaced (its answers are compiled in, with no hook): a header over its
// 32 KiB connection memory gets its HTML 431 and the connection closed; the server serves on.
TEST(ExtenderObserve, ErrorAnswersAreJsonButLibmicrohttpdsOwn431)
{
    InProc s(1024, 1);
    ASSERT_EQ(s.rc_, 0) << s.why_;
    for (auto &c : std::vector<std::pair<std::string, int>>{
             {"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404},
             {"DELETE /filter HTTP/1.1\r\nHost: x\r\n\r\n", 405},
             {"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405},
             {"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", 413}}) {
        int fd = connect_to(s.port());
        send_all(fd, c.first);
        std::string r = read_all(fd, 2);
        close(fd);
        EXPECT_EQ(status_of(r), c.second) << r;
        EXPECT_TRUE(one_line_error(body_of(r))) << r;
        EXPECT_NE(r.find("Content-Type: application/json"), std::string::npos) << r;
    }
    int fd = connect_to(s.port()); // 408: a body trickling past the 1 s timeout
    send_all(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n");
    std::string r;
    bool closed = false;
    for (int i = 0; i < 8 && !closed; i++) {
        send_all(fd, "x");
        r += read_all(fd, 0.3, &closed);
    }
    close(fd);
    EXPECT_TRUE(closed || status_of(r) == 408) << r;
    if (!r.empty()) {
        EXPECT_TRUE(one_line_error(body_of(r))) << r;
    }
    fd = connect_to(s.port());
    send_all(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(40000, 'a') + "\r\n\r\n");
    r = read_all(fd, 2, &closed);
    close(fd);
    EXPECT_EQ(status_of(r), 431) << r.substr(0, 300);
    EXPECT_TRUE(closed);
    EXPECT_EQ(status_of(http(s.port(), "GET", "/healthz")), 200);
}

// Item 8: a quantity that is not one ("abc", "-3", "1e400", ...) in the pod's requests or a node's allocatable is a
// 400 naming the field, never 0 or unlimited; the forms Kubernetes writes are taken.
TEST(ExtenderSmall, InvalidQuantitiesAre400)
{
    Extender x({"--profiles", kFix + "store"});
    ASSERT_GT(x.port(), 0) << x.err();
    json_t *req = json_load_file((kFix + "filter-full.request.json").c_str(), 0, nullptr);
    ASSERT_NE(req, nullptr);
    json_t *requests = json_object_get(
        json_object_get(json_array_get(json_object_get(json_object_get(json_object_get(req, "Pod"), "spec"),
                                                       "containers"),
                                       0),
                        "resources"),
        "requests");
    json_t *alloc = json_object_get(
        json_object_get(json_array_get(json_object_get(json_object_get(req, "Nodes"), "items"), 2), "status"),
        "allocatable");
    ASSERT_TRUE(json_is_object(requests) && json_is_object(alloc));
    auto ask = [&](json_t *where, const char *key, json_t *value) {
        json_t *old = json_deep_copy(json_object_get(where, key));
        json_object_set_new(where, key, value);
        char *t = json_dumps(req, JSON_COMPACT);
        std::string r = http(x.port(), "POST", "/filter", t);
        free(t);
        json_object_set_new(where, key, old);
        return r;
    };
    for (const char *bad : {"abc", "-3", "1e400", "inf", "NaN", "0x10", " 1", "", "1.2.3", "5Qi", "1e", "+", ".",
                            "1Mi ", "1e3Mi"})
        for (auto w : {std::make_pair(requests, "cpu"), std::make_pair(alloc, "memory")}) {
            std::string r = ask(w.first, w.second, json_string(bad));
            EXPECT_EQ(status_of(r), 400) << "'" << bad << "' as " << w.second << ": " << body_of(r).substr(0, 200);
            EXPECT_TRUE(one_line_error(body_of(r))) << r;
            EXPECT_NE(body_of(r).find("is not a quantity"), std::string::npos) << r;
            EXPECT_NE(body_of(r).find(w.second), std::string::npos) << r;
        }
    std::string r = ask(requests, "memory", json_integer(-5));
    EXPECT_EQ(status_of(r), 400) << r;
    for (const char *good : {"500m", "1e3", "2", ".5", "5.", "+1", "1Ei", "1E", "4Gi", "1e-3", "100k"}) {
        r = ask(alloc, "cpu", json_string(good));
        EXPECT_EQ(status_of(r), 200) << good << ": " << body_of(r).substr(0, 200);
    }
    json_decref(req);
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// Item 8 in the node state held: a quantity that is not one in the state's nodes/NAME.json is not
// the request's fault: that node fails with the reason, the others are decided as before.
TEST(ExtenderSmall, InvalidQuantityInTheNodeStateFailsThatNode)
{
    ib_test::TempDir d("ext_badq");
    ASSERT_FALSE(d.path().empty());
    std::string store = d.path() + "/store";
    int rc;
    sh("cp -rL " + kFix + "store " + store, &rc);
    ASSERT_EQ(rc, 0);
    {
        std::ofstream o(store + "/nodes/n1.json");
        o << "{\"annotations\": {\"ibench.io/tenants\": \"[\\\"llc\\\"]\"}, "
             "\"status\": {\"allocatable\": {\"cpu\": \"abc\", \"memory\": \"4Gi\"}}}";
    }
    Extender x({"--profiles", store});
    ASSERT_GT(x.port(), 0) << x.err();
    std::string r = http(x.port(), "POST", "/filter", file_text(kFix + "filter-names.request.json"));
    EXPECT_EQ(status_of(r), 200) << r;
    json_t *a = json_loads(body_of(r).c_str(), 0, nullptr);
    ASSERT_NE(a, nullptr) << r;
    const char *why = json_string_value(json_object_get(json_object_get(a, "FailedNodes"), "n1"));
    ASSERT_NE(why, nullptr) << r;
    EXPECT_EQ(std::string(why), "ibench: cannot judge: nodes/n1.json: status.allocatable.cpu: 'abc' is not a quantity");
    json_t *kept = json_object_get(a, "NodeNames");
    bool n3 = false;
    for (size_t i = 0; i < json_array_size(kept); i++)
        n3 = n3 || !strcmp(json_string_value(json_array_get(kept, i)), "n3");
    EXPECT_TRUE(n3) << r;
    json_decref(a);
    EXPECT_EQ(x.stop(), 0) << x.err();
}

// The refusals counted by resource under either refusal rule (item 1): the old rule refuses n2 and
// n4 of the fixture, disk-bw among the resources each names; the default keeps them as uncertain, which is no
// refusal and is not counted.
TEST(ExtenderObserve, RefusalsByResourceFollowTheRule)
{
    for (bool established : {false, true}) {
        std::vector<std::string> args = {"--profiles", kFix + "store", "--decide", "headroom"}; // the rule before 1.7
        if (!established)
            args.insert(args.end(), {"--refuse", "uncertain"});
        Extender x(args);
        ASSERT_GT(x.port(), 0) << x.err();
        EXPECT_EQ(status_of(http(x.port(), "POST", "/filter", file_text(kFix + "filter-names.request.json"))), 200);
        std::vector<Sample> m;
        std::string r = http(x.port(), "GET", "/metrics");
        ASSERT_EQ(parse_prometheus(body_of(r), &m), "") << body_of(r);
        EXPECT_EQ(metric(m, "ibench_extender_refusals_total", {{"resource", "disk-bw"}}), established ? -1 : 2)
            << body_of(r);
        EXPECT_EQ(metric(m, "ibench_extender_refusals_total", {{"resource", "unjudged"}}), 2) << body_of(r);
        EXPECT_EQ(metric(m, "ibench_extender_refusals_total", {{"resource", "other"}}), -1) << body_of(r);
        EXPECT_EQ(x.stop(), 0) << x.err();
    }
}

// Item 8: one name limit, PL_EXT_NAME_MAX (248: the ConfigMap key NAME.json is at most 253): ibench k8s takes a
// name of 248 characters and refuses 249; the extender looks a 248-character name up in the store and refuses 249
// as no profile name.
TEST(ExtenderSmall, OneNameLimitForK8sAndTheExtender)
{
    std::string n248(248, 'a'), n249(249, 'a');
    int rc;
    std::string prof = std::string(IBENCH_FIXTURES) + "/profile-v1.2-small.json";
    sh(std::string(IBENCH_BIN) + " k8s profile-annotations " + prof + " --name " + n248, &rc);
    EXPECT_EQ(rc, 0);
    std::string o = sh(std::string(IBENCH_BIN) + " k8s profile-annotations " + prof + " --name " + n249, &rc);
    EXPECT_EQ(rc, 2) << o;
    Extender x({"--profiles", kFix + "store"});
    ASSERT_GT(x.port(), 0) << x.err();
    for (auto &n : {n248, n249}) {
        std::string req = "{\"Pod\": {\"metadata\": {\"annotations\": {\"ibench.io/profile\": \"" + n +
                          "\"}}}, \"NodeNames\": [\"n1\"]}";
        std::string r = http(x.port(), "POST", "/filter", req);
        EXPECT_EQ(status_of(r), 200) << r;
        // 248: looked up (and not found); 249: refused as a name before any lookup
        bool named = body_of(r).find("is not a profile name") != std::string::npos;
        EXPECT_EQ(named, n.size() == 249) << n.size() << ": " << body_of(r);
        EXPECT_EQ(body_of(r).find(n) != std::string::npos, n.size() == 248) << "the store's reason names it whole";
    }
    EXPECT_EQ(x.stop(), 0) << x.err();
}

} // namespace
