// test_output.cpp - common/output.c: JSON round trip, CSV and table text, atomic file writes, progress lines.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "output.h"
#include "render.h"

namespace {

// Everything written to a FILE* by fn, as a string.
template <typename Fn> std::string capture(Fn fn, int *ret)
{
    FILE *f = tmpfile();
    if (!f)
        return "<tmpfile failed>";
    *ret = fn(f);
    fflush(f);
    std::string s;
    rewind(f);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        s.append(buf, n);
    fclose(f);
    return s;
}

// Structural equality; reals within 1e-12 relative, integers and strings exact, types must match.
::testing::AssertionResult json_same(const json_t *a, const json_t *b, const std::string &where)
{
    if (!a || !b)
        return ::testing::AssertionFailure() << where << ": missing value";
    if (json_typeof(a) != json_typeof(b))
        return ::testing::AssertionFailure()
               << where << ": type " << json_typeof(a) << " vs " << json_typeof(b);
    switch (json_typeof(a)) {
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b))
            return ::testing::AssertionFailure() << where << ": object sizes differ";
        const char *k;
        json_t *v;
        void *it = json_object_iter(const_cast<json_t *>(a));
        void *jt = json_object_iter(const_cast<json_t *>(b));
        for (; it; it = json_object_iter_next(const_cast<json_t *>(a), it),
                   jt = json_object_iter_next(const_cast<json_t *>(b), jt)) {
            k = json_object_iter_key(it);
            v = json_object_iter_value(it);
            if (!jt || strcmp(k, json_object_iter_key(jt)) != 0)
                return ::testing::AssertionFailure() << where << ": key order differs at " << k;
            auto r = json_same(v, json_object_get(b, k), where + "." + k);
            if (!r)
                return r;
        }
        return ::testing::AssertionSuccess();
    }
    case JSON_ARRAY: {
        if (json_array_size(a) != json_array_size(b))
            return ::testing::AssertionFailure() << where << ": array sizes differ";
        for (size_t i = 0; i < json_array_size(a); i++) {
            auto r = json_same(json_array_get(a, i), json_array_get(b, i), where + "[" + std::to_string(i) + "]");
            if (!r)
                return r;
        }
        return ::testing::AssertionSuccess();
    }
    case JSON_STRING:
        if (json_string_length(a) != json_string_length(b) ||
            memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) != 0)
            return ::testing::AssertionFailure()
                   << where << ": \"" << json_string_value(a) << "\" vs \"" << json_string_value(b) << "\"";
        return ::testing::AssertionSuccess();
    case JSON_INTEGER:
        if (json_integer_value(a) != json_integer_value(b))
            return ::testing::AssertionFailure()
                   << where << ": " << json_integer_value(a) << " vs " << json_integer_value(b);
        return ::testing::AssertionSuccess();
    case JSON_REAL: {
        double x = json_real_value(a), y = json_real_value(b);
        if (x == y || std::fabs(x - y) <= 1e-12 * std::fmax(std::fabs(x), std::fabs(y)))
            return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << where << ": " << x << " vs " << y;
    }
    default:
        return ::testing::AssertionSuccess();
    }
}

json_t *sample_doc()
{
    json_t *doc = json_object();
    json_object_set_new(doc, "tool", json_string("ibench"));
    json_object_set_new(doc, "version", json_integer(1));
    json_t *rows = json_array();
    json_t *r1 = json_object();
    json_object_set_new(r1, "big", json_real(1e10));
    json_object_set_new(r1, "tenth", json_real(0.1));
    json_object_set_new(r1, "neg", json_real(-273.15));
    json_object_set_new(r1, "third", json_real(1.0 / 3.0));
    json_object_set_new(r1, "tiny", json_real(6.02214076e-23));
    json_object_set_new(r1, "count", json_integer(42));
    json_object_set_new(r1, "negint", json_integer(-7));
    json_object_set_new(r1, "huge", json_integer(4611686018427387904LL));
    json_object_set_new(r1, "csvish", json_string("a,b \"quoted\" c"));
    json_object_set_new(r1, "unicode", json_string("µs → 日本語 ✓"));
    json_object_set_new(r1, "none", json_null());
    json_object_set_new(r1, "flag", json_true());
    json_array_append_new(rows, r1);
    json_t *r2 = json_object();
    json_object_set_new(r2, "big", json_real(-1e-300));
    json_object_set_new(r2, "tenth", json_real(0.30000000000000004));
    json_object_set_new(r2, "nested", json_pack("{s:[i,f,s]}", "list", 1, 2.5, "x"));
    json_array_append_new(rows, r2);
    json_object_set_new(doc, "rows", rows);
    return doc;
}

std::string slurp(const std::string &path)
{
    std::string s;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f)
        return s;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        s.append(buf, n);
    fclose(f);
    return s;
}

std::vector<std::string> list_dir(const std::string &dir)
{
    std::vector<std::string> names;
    DIR *d = opendir(dir.c_str());
    if (!d)
        return names;
    while (struct dirent *e = readdir(d))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            names.push_back(e->d_name);
    closedir(d);
    return names;
}

bool any_tmp(const std::string &dir)
{
    for (const auto &n : list_dir(dir))
        if (n.find(".tmp.") != std::string::npos)
            return true;
    return false;
}

struct TempDir {
    std::string path;
    TempDir()
    {
        char t[] = "/tmp/ibench_test_output.XXXXXX";
        if (mkdtemp(t))
            path = t;
    }
    ~TempDir()
    {
        for (const auto &n : list_dir(path)) {
            std::string p = path + "/" + n;
            if (rmdir(p.c_str()) != 0)
                unlink(p.c_str());
        }
        rmdir(path.c_str());
    }
};

const struct out_col kCols[] = {
    {"name", "Name", OUT_K_STR, 0, nullptr},
    {"size", "Size", OUT_K_BYTES, 0, nullptr},
    {"bw", "Bandwidth", OUT_K_RATE, 0, "B/s"},
    {"lat", "Latency ns", OUT_K_NUM, 2, nullptr},
    {"n", "N", OUT_K_INT, 0, nullptr},
};

json_t *sample_rows()
{
    json_t *rows = json_array();
    json_array_append_new(rows, json_pack("{s:s,s:I,s:f,s:f,s:I}", "name", "a", "size", (json_int_t)1572864,
                                          "bw", 28.0e9, "lat", 12.346, "n", (json_int_t)3));
    json_array_append_new(rows, json_pack("{s:s,s:I,s:n,s:I}", "name", "long-name", "size", (json_int_t)512, "bw",
                                          "n", (json_int_t)42));
    json_array_append_new(rows, json_pack("{s:s,s:f,s:f,s:f,s:f}", "name", "x, \"y\"\nz", "size", 3.0 * 1024 * 1024 * 1024,
                                          "bw", 950.0, "lat", 0.5, "n", 7.0));
    return rows;
}

} // namespace

TEST(Output, JsonRoundTrip)
{
    json_t *doc = sample_doc();
    FILE *f = tmpfile();
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(out_json(f, doc), 0);
    // Trailing newline.
    fseek(f, -1, SEEK_END);
    EXPECT_EQ(fgetc(f), '\n');
    rewind(f);
    json_error_t jerr;
    json_t *back = json_loadf(f, 0, &jerr);
    fclose(f);
    ASSERT_NE(back, nullptr) << jerr.text << " at line " << jerr.line;
    EXPECT_TRUE(json_same(doc, back, "doc"));
    // Every real survives exactly with the chosen precision.
    EXPECT_EQ(json_real_value(json_object_get(json_array_get(json_object_get(back, "rows"), 0), "tenth")), 0.1);
    EXPECT_EQ(json_real_value(json_object_get(json_array_get(json_object_get(back, "rows"), 0), "third")), 1.0 / 3.0);
    json_decref(back);
    json_decref(doc);
}

TEST(Output, JsonIsIndented)
{
    json_t *doc = json_pack("{s:i,s:[i]}", "a", 1, "b", 2);
    int ret = -1;
    std::string s = capture([&](FILE *f) { return out_json(f, doc); }, &ret);
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(s, "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n");
    json_decref(doc);
}

TEST(Output, Csv)
{
    json_t *rows = sample_rows();
    int ret = -1;
    std::string s = capture([&](FILE *f) { return out_rows(f, OUT_CSV, rows, kCols, 5); }, &ret);
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(s, "name,size,bw,lat,n\n"
                 "a,1572864,28000000000,12.346,3\n"
                 "long-name,512,,,42\n"
                 "\"x, \"\"y\"\"\nz\",3221225472,950,0.5,7\n");
    json_decref(rows);
}

TEST(Output, CsvFullPrecision)
{
    json_t *rows = json_pack("[{s:f,s:f,s:I}]", "a", 0.1, "b", 1.0 / 3.0, "c", (json_int_t)-9007199254740993LL);
    const struct out_col cols[] = {{"a", "A", OUT_K_NUM, 1, nullptr},
                                   {"b", "B", OUT_K_RATE, 0, "B/s"},
                                   {"c", "C", OUT_K_INT, 0, nullptr}};
    int ret = -1;
    std::string s = capture([&](FILE *f) { return out_rows(f, OUT_CSV, rows, cols, 3); }, &ret);
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(s, "a,b,c\n0.1,0.3333333333333333,-9007199254740993\n");
    double b = strtod(s.c_str() + s.find(',', 6) + 1, nullptr);
    EXPECT_EQ(b, 1.0 / 3.0);
    json_decref(rows);
}

TEST(Output, Table)
{
    json_t *rows = sample_rows();
    // The third row's name has a newline; leave it out of the table test.
    json_array_remove(rows, 2);
    json_array_append_new(rows, json_pack("{s:s,s:f,s:f,s:f,s:f}", "name", "µs", "size", 3.0 * 1024 * 1024 * 1024,
                                          "bw", 950.0, "lat", 0.5, "n", 7.0));
    int ret = -1;
    std::string s = capture([&](FILE *f) { return out_rows(f, OUT_TABLE, rows, kCols, 5); }, &ret);
    EXPECT_EQ(ret, 0);
    // text left-aligned, numbers right-aligned
    EXPECT_EQ(s, "Name           Size  Bandwidth  Latency ns   N\n"
                 "---------  --------  ---------  ----------  --\n"
                 "a          1.50 MiB  28.0 GB/s       12.35   3\n"
                 "long-name     512 B          -           -  42\n"
                 "µs         3.00 GiB  950.0 B/s        0.50   7\n");
    json_decref(rows);
}

TEST(Output, TableEmptyAndUnits)
{
    const struct out_col cols[] = {{"b", "bytes", OUT_K_BYTES, 0, nullptr}, {"r", "rate", OUT_K_RATE, 0, nullptr}};
    json_t *rows = json_array();
    int ret = -1;
    std::string s = capture([&](FILE *f) { return out_rows(f, OUT_TABLE, rows, cols, 2); }, &ret);
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(s, "bytes  rate\n-----  ----\n");
    json_array_append_new(rows, json_pack("{s:f,s:f}", "b", 1024.0 * 1023.999, "r", 999.96e6));
    json_array_append_new(rows, json_pack("{s:I,s:f}", "b", (json_int_t)1024, "r", 1500.0));
    s = capture([&](FILE *f) { return out_rows(f, OUT_TABLE, rows, cols, 2); }, &ret);
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(s, "   bytes   rate\n"
                 "--------  -----\n"
                 "1.00 MiB  1.0 G\n"
                 "1.00 KiB  1.5 k\n");
    json_decref(rows);
}

TEST(Output, RowsMustBeAnArrayOfObjects)
{
    FILE *f = tmpfile();
    ASSERT_NE(f, nullptr);
    json_t *obj = json_object();
    EXPECT_EQ(out_rows(f, OUT_TABLE, obj, kCols, 5), -EINVAL);
    EXPECT_EQ(out_rows(f, OUT_CSV, obj, kCols, 5), -EINVAL);
    EXPECT_EQ(out_rows(f, OUT_CSV, nullptr, kCols, 5), -EINVAL);
    json_t *bad = json_pack("[{s:i}, 3]", "n", 1);
    EXPECT_EQ(out_rows(f, OUT_TABLE, bad, kCols, 5), -EINVAL);
    EXPECT_EQ(ftell(f), 0) << "nothing is written for invalid input";
    json_decref(bad);
    json_decref(obj);
    fclose(f);
}

TEST(Output, WriteErrorIsEio)
{
    FILE *f = fopen("/dev/full", "w");
    if (!f) {
        GTEST_SKIP() << "/dev/full not available";
    }
    json_t *rows = sample_rows();
    EXPECT_EQ(out_rows(f, OUT_CSV, rows, kCols, 5), -EIO);
    clearerr(f);
    EXPECT_EQ(out_json(f, rows), -EIO);
    fclose(f);
    json_decref(rows);
}

TEST(Output, AtomicWrite)
{
    TempDir td;
    ASSERT_FALSE(td.path.empty());
    std::string path = td.path + "/result.json";
    json_t *doc = sample_doc();
    ASSERT_EQ(out_json_file_atomic(path.c_str(), doc), 0);
    json_error_t jerr;
    json_t *back = json_load_file(path.c_str(), 0, &jerr);
    ASSERT_NE(back, nullptr) << jerr.text;
    EXPECT_TRUE(json_same(doc, back, "doc"));
    json_decref(back);
    EXPECT_FALSE(any_tmp(td.path));
    EXPECT_EQ(list_dir(td.path).size(), 1u);

    // The new file gets ordinary permissions (0666 & ~umask), not mkstemp's 0600.
    mode_t mask = umask(022);
    umask(mask);
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);

    // Overwriting replaces the whole content and keeps the existing mode.
    ASSERT_EQ(chmod(path.c_str(), 0640), 0);
    json_t *small = json_pack("{s:s}", "replaced", "yes");
    ASSERT_EQ(out_json_file_atomic(path.c_str(), small), 0);
    EXPECT_EQ(slurp(path), "{\n  \"replaced\": \"yes\"\n}\n");
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    EXPECT_FALSE(any_tmp(td.path));
    json_decref(small);
    json_decref(doc);
}

// Killed by SIGKILL while it writes (nothing can catch that), a writer leaves no partial or temporary file: the
// directory holds nothing or the whole document. A child writes a document of some 20 MB, killed at 10 moments spread
// over its write; the old way (a named temporary file renamed when complete) left "result.json.tmp.XXXXXX" at most
// of them.
TEST(Output, AtomicWriteKilledLeavesNothing)
{
    TempDir td;
    ASSERT_FALSE(td.path.empty());
    const std::string path = td.path + "/result.json";
    json_t *big = json_array();
    for (int i = 0; i < 400000; i++)
        json_array_append_new(big, json_pack("{s:i,s:s}", "i", i, "pad", "0123456789abcdef0123456789"));
    auto now = [] {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
    };
    // how long one write takes here, so the kills land inside it
    double t0 = now();
    ASSERT_EQ(out_json_file_atomic(path.c_str(), big), 0);
    const double took = now() - t0;
    ASSERT_EQ(unlink(path.c_str()), 0);
    unsigned inside = 0;
    for (int k = 1; k <= 10; k++) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0)
            _exit(out_json_file_atomic(path.c_str(), big) == 0 ? 0 : 1);
        usleep((useconds_t)(took * k / 11 * 1e6));
        kill(pid, SIGKILL);
        int st;
        ASSERT_EQ(waitpid(pid, &st, 0), pid);
        inside += WIFSIGNALED(st);
        std::vector<std::string> left = list_dir(td.path);
        for (const auto &n : left)
            EXPECT_EQ(n, "result.json") << "killed at " << k << "/11 of a " << took << " s write: " << n << " left";
        if (!left.empty()) { // complete, or not there at all
            json_error_t e;
            json_t *back = json_load_file(path.c_str(), 0, &e);
            EXPECT_NE(back, nullptr) << "a partial result.json: " << e.text;
            json_decref(back);
            unlink(path.c_str());
        }
    }
    EXPECT_GE(inside, 5u) << "most kills must land while the child writes (one write takes " << took << " s)";
    json_decref(big);
}

TEST(Output, AtomicWriteFailures)
{
    TempDir td;
    ASSERT_FALSE(td.path.empty());
    json_t *doc = sample_doc();

    // Nonexistent directory: negative errno, nothing created anywhere.
    std::string missing = td.path + "/no/such/dir/result.json";
    int r = out_json_file_atomic(missing.c_str(), doc);
    EXPECT_EQ(r, -ENOENT);
    EXPECT_TRUE(list_dir(td.path).empty());

    // Target is a directory: the rename fails after the temp file was written; it must be removed.
    std::string dir = td.path + "/adir";
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    r = out_json_file_atomic(dir.c_str(), doc);
    EXPECT_LT(r, 0);
    EXPECT_FALSE(any_tmp(td.path));
    EXPECT_EQ(list_dir(td.path).size(), 1u);
    struct stat st;
    ASSERT_EQ(stat(dir.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));

    EXPECT_EQ(out_json_file_atomic(nullptr, doc), -EINVAL);
    EXPECT_EQ(out_json_file_atomic((td.path + "/x.json").c_str(), nullptr), -EINVAL);
    EXPECT_FALSE(any_tmp(td.path));
    json_decref(doc);
}

namespace {

// Run fn with stderr redirected into a pipe; return what was written.
template <typename Fn> std::string capture_stderr(Fn fn)
{
    int p[2];
    if (pipe(p) != 0)
        return "<pipe failed>";
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(p[1], STDERR_FILENO);
    close(p[1]);
    fn();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::string s;
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    char buf[512];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof(buf))) > 0)
        s.append(buf, (size_t)n);
    close(p[0]);
    return s;
}

} // namespace

TEST(Output, ProgressSilentWhenNotATerminal)
{
    unsetenv("IBENCH_PROGRESS");
    render_progress_install(); // stderr is not a terminal here: installs nothing
    std::string s = capture_stderr([] {
        out_progress("run", "%d/%d", 1, 10);
        out_progress("run", "%d/%d", 2, 10);
        out_progress_done();
    });
    EXPECT_EQ(s, "");
}

TEST(Output, ProgressForced)
{
    setenv("IBENCH_PROGRESS", "1", 1);
    render_progress_install();
    std::string s = capture_stderr([] {
        out_progress_done(); // nothing displayed yet: no newline
        out_progress("stream", "%d/%d", 1, 10);
        out_progress("stream", "%d/%d", 2, 10);
        out_progress_done();
        out_progress_done(); // already finished: no second newline
    });
    unsetenv("IBENCH_PROGRESS");
    out_progress_sink(nullptr, nullptr);
    EXPECT_EQ(s, "\r\033[K[stream] 1/10\r\033[K[stream] 2/10\n");
}

// The lower layers report progress to whatever sink the front end installed, and never print themselves.
TEST(Output, ProgressGoesToTheInstalledSinkOnly)
{
    static std::string seen;
    static int dones;
    seen.clear();
    dones = 0;
    out_progress_sink(nullptr, nullptr);
    std::string s = capture_stderr([] { out_progress("x", "%d", 1); });
    EXPECT_EQ(s, "") << "no sink: nothing printed";
    out_progress_sink([](const char *label, const char *text) { seen += std::string(label ? label : "-") + ":" + text + ";"; },
                      [] { dones++; });
    s = capture_stderr([] {
        out_progress("profile", "%s at %d %%", "mem-bw", 50);
        out_progress(nullptr, "plain");
        out_progress_done();
    });
    out_progress_sink(nullptr, nullptr);
    EXPECT_EQ(s, "");
    EXPECT_EQ(seen, "profile:mem-bw at 50 %;-:plain;");
    EXPECT_EQ(dones, 1);
}

// Text from a file, for a terminal (render.h): what a terminal acts on comes out escaped, the rest as it is.
TEST(TtyText, ControlCharactersComeOutEscaped)
{
    char buf[256];
    const char *clean = "mem-bw caf\xc3\xa9 \xe2\x9c\x93"; // UTF-8 text is left alone, not copied
    EXPECT_EQ(tty_text(clean, buf, sizeof(buf)), clean);
    struct {
        const char *in, *out;
    } cases[] = {
        {"a\x1b[31mred", "a\\x1b[31mred"},           // ESC: colours, cursor moves, titles
        {"x\ny\tz\r", "x\\x0ay\\x09z\\x0d"},        // line breaks would forge lines
        {"del\x7f", "del\\x7f"},
        {"c1\xc2\x9b" "2J", "c1\\u{009b}2J"},          // U+009B: CSI on some terminals
        {"bidi\xe2\x80\xae" "txt", "bidi\\u{202e}txt"}, // right-to-left override
        {"bad\xff\xc3", "bad\\xff\\xc3"},             // bytes that are not UTF-8
    };
    for (const auto &c : cases)
        EXPECT_STREQ(tty_text(c.in, buf, sizeof(buf)), c.out) << c.out;
    EXPECT_STREQ(tty_text(nullptr, buf, sizeof(buf)), "");
    // too long for the buffer: cut, and said so
    std::string lng(100, 'a');
    lng += "\x1b";
    char small[32];
    const char *t = tty_text(lng.c_str(), small, sizeof(small));
    EXPECT_EQ(strlen(t), sizeof(small) - 1);
    EXPECT_STREQ(t + strlen(t) - 3, "...");
    // and in a table: a cell from a file is escaped too
    json_t *rows = json_pack("[{s:s}]", "name", "evil\x1b[2J");
    const struct out_col col[] = {{"name", "name", OUT_K_STR, 0, nullptr}};
    int ret = 0;
    std::string s = capture([&](FILE *f) { return out_rows(f, OUT_TABLE, rows, col, 1); }, &ret);
    json_decref(rows);
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(s.find('\x1b'), std::string::npos) << s;
    EXPECT_NE(s.find("evil\\x1b[2J"), std::string::npos) << s;
}
