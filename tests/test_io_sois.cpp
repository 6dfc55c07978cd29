// test_io_sois.cpp - the I/O SoIs (disk-cap, disk-bw, net-bw), their safety rules and the ibench sink: the
// filesystem guard on real and tiny (tmpfs) filesystems, runs through the engine, cleanup on every exit path
// (normal, bad input, run-time failure, SIGINT, SIGTERM) through the real binary, and net-bw over loopback and
// between two network namespaces joined by a veth pair, made and removed by the test itself.
#include <gtest/gtest.h>

#include <atomic>

#include <dirent.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <jansson.h>

#include "engine.h"
#include "fsguard.h"
#include "ib_err.h"
#include "machine.h"
#include "netsink.h"
#include "ramp.h"
#include "soi.h"
#include "test_support.h"

namespace {

constexpr uint64_t kMs = 1000000ULL;
constexpr uint64_t MiB = 1ULL << 20, GiB = 1ULL << 30;
::testing::Environment *const g_cache_env = ::testing::AddGlobalTestEnvironment(new ib_test::PrivateCacheEnv("io"));

using ib_test::dir_entries;

// A scratch directory on a real disk (/var/tmp), removed afterwards.
struct DiskDir {
    ib_test::TempDir t{"io", "/var/tmp"};
    const std::string &path = t.path();
};

// A tmpfs of `size` mounted on a fresh directory (root only); ok() is false where mounting is not allowed.
struct SmallFs {
    std::string path;
    bool mounted = false;
    explicit SmallFs(const char *size)
    {
        char t[] = "/tmp/ibench_test_fs.XXXXXX";
        if (!mkdtemp(t))
            return;
        path = t;
        std::string opt = std::string("size=") + size;
        mounted = mount("tmpfs", path.c_str(), "tmpfs", 0, opt.c_str()) == 0;
    }
    bool ok() const { return mounted; }
    ~SmallFs()
    {
        if (mounted)
            umount2(path.c_str(), MNT_DETACH);
        if (!path.empty())
            rmdir(path.c_str());
    }
};

class IoSoi : public ::testing::Test {
protected:
    struct machine m {};
    bool open = false;
    atomic_int stop{0};
    char why[512] = "";
    int cpus[1] = {0};
    void SetUp() override
    {
        ASSERT_EQ(machine_open(&m, nullptr, why, sizeof why), 0) << why;
        open = true;
        cpus[0] = topo_pu_os(m.topo, topo_npus(m.topo) - 1);
    }
    void TearDown() override
    {
        if (open)
            machine_close(&m);
    }
    struct soi_env env(const soi_ops *ops)
    {
        struct soi_env e;
        soi_env_init(&e, ops, &m, 1, cpus, -1, &stop);
        return e;
    }
    void set(const soi_ops *ops, struct soi_env &e, const char *name, const char *value)
    {
        ASSERT_EQ(e.ops, ops);
        ASSERT_EQ(soi_opt_set(&e, name, value, why, sizeof why), 0) << why;
    }
    // levels through the engine; returns the results
    std::vector<step_result> ramp(struct soi *s, std::vector<double> xs, uint64_t step_ns)
    {
        ramp_sched r = {0, nullptr};
        EXPECT_EQ(ramp_list(&r, xs.data(), xs.size(), step_ns), 0);
        std::vector<step_result> res(xs.size());
        unsigned ndone = 0;
        EXPECT_EQ(engine_run(s, &r, &stop, nullptr, res.data(), &ndone, why, sizeof why), 0) << why;
        EXPECT_EQ(ndone, xs.size());
        ramp_free(&r);
        return res;
    }
};

}  // namespace

// ---- the filesystem guard ---------------------------------------------------------------------------------------

TEST(FsGuard, MarginAndSpare)
{
    EXPECT_EQ(fs_margin(10 * GiB), 1 * GiB) << "1 GiB floor";
    EXPECT_EQ(fs_margin(100 * GiB), 5 * GiB) << "5 % of 100 GiB";
    struct fs_space a = {100 * GiB, 30 * GiB};
    EXPECT_EQ(fs_spare(&a), 25 * GiB);
    struct fs_space b = {10 * GiB, 512 * MiB};
    EXPECT_EQ(fs_spare(&b), 0u) << "inside the margin already: nothing to spare";
    struct fs_space c = {10 * GiB, 1 * GiB};
    EXPECT_EQ(fs_spare(&c), 0u);
}

TEST(FsGuard, CheckDirAndPrivateDirs)
{
    char why[256];
    ib_test::TempDir t("fsguard");
    ASSERT_FALSE(t.path().empty());
    EXPECT_EQ(fs_check_dir(t.path().c_str(), why, sizeof why), 0) << why;
    EXPECT_EQ(dir_entries(t.path()).size(), 0u) << "the writability probe leaves nothing";
    EXPECT_EQ(fs_check_dir("/nonexistent-ibench-dir", why, sizeof why), -ENOENT);
    std::string file = t.path() + "/f";
    std::ofstream(file) << "x";
    EXPECT_EQ(fs_check_dir(file.c_str(), why, sizeof why), -ENOTDIR);
    EXPECT_NE(strstr(why, "not a directory"), nullptr) << why;
    EXPECT_LT(fs_check_dir("/proc", why, sizeof why), 0) << "root cannot make files in /proc either";
    EXPECT_NE(strstr(why, "not writable"), nullptr) << why;
    // a block device is refused as a directory
    DIR *sb = opendir("/sys/block");
    std::string dev;
    while (sb && dev.empty())
        if (struct dirent *e = readdir(sb)) {
            struct stat st;
            std::string p = std::string("/dev/") + e->d_name;
            if (e->d_name[0] != '.' && stat(p.c_str(), &st) == 0 && S_ISBLK(st.st_mode))
                dev = p;
        } else {
            break;
        }
    if (sb)
        closedir(sb);
    if (!dev.empty()) {
        EXPECT_EQ(fs_check_dir(dev.c_str(), why, sizeof why), -EPERM) << dev;
        EXPECT_NE(strstr(why, "--device"), nullptr) << why;
    }
    // private directories: made inside, removed with their files; nothing else is removed
    char pd[4096];
    ASSERT_EQ(fs_make_private_dir(t.path().c_str(), "x", pd, sizeof pd, why, sizeof why), 0) << why;
    EXPECT_EQ(std::string(pd).rfind(t.path() + "/ibench-x-" + std::to_string(getpid()) + ".", 0), 0u) << pd;
    std::ofstream(std::string(pd) + "/a") << "1";
    std::ofstream(std::string(pd) + "/b") << "2";
    EXPECT_EQ(fs_remove_private_dir(pd), 0);
    EXPECT_EQ(dir_entries(t.path()), std::vector<std::string>{"f"});
    EXPECT_EQ(fs_remove_private_dir(t.path().c_str()), -EINVAL) << "not one of ours: refused";
    EXPECT_EQ(access(file.c_str(), F_OK), 0);
    EXPECT_EQ(fs_is_memory("/proc/self"), 0);
}

// ---- disk-cap ---------------------------------------------------------------------------------------------------

TEST_F(IoSoi, DiskCapAllocatesWhatItSaysAndCleansUp)
{
    DiskDir d;
    ASSERT_FALSE(d.path.empty());
    const soi_ops *ops = soi_find("disk-cap");
    ASSERT_NE(ops, nullptr);
    EXPECT_EQ(ops->io, SOI_IO_DIR);
    struct soi_env e = env(ops);
    e.dir = d.path.c_str();
    set(ops, e, "max-bytes", "64M");
    struct soi *s = nullptr;
    ASSERT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), 0) << why;
    EXPECT_EQ(s->capacity, (double)(64 * MiB));
    ASSERT_EQ(dir_entries(d.path).size(), 1u) << "one private directory";
    EXPECT_EQ(dir_entries(d.path)[0].rfind("ibench-disk-cap-", 0), 0u);
    auto res = ramp(s, {0, 50, 100, 25}, 60 * kMs);
    // the meter is what the filesystem allocated: within a block group of the size asked (fallocate is exact on ext4)
    EXPECT_NEAR(res[0].achieved, 0, 1 * MiB);
    EXPECT_NEAR(res[1].achieved, 32.0 * MiB, 1 * MiB);
    EXPECT_NEAR(res[2].achieved, 64.0 * MiB, 1 * MiB);
    EXPECT_NEAR(res[3].achieved, 16.0 * MiB, 1 * MiB) << "shrinks too";
    EXPECT_GT(res[2].secondary, 0.0) << "reads it at random";
    soi_close(s);
    EXPECT_TRUE(dir_entries(d.path).empty()) << "file and directory removed";
}

TEST_F(IoSoi, DiskCapKeepsTheMarginOnASmallFilesystem)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to mount a small tmpfs";
    SmallFs fs("1100M");  // margin 1 GiB: about 76 MiB to spare
    if (!fs.ok())
        GTEST_SKIP() << "cannot mount a tmpfs here: " << strerror(errno);
    const soi_ops *ops = soi_find("disk-cap");
    struct soi_env e = env(ops);
    e.dir = fs.path.c_str();
    set(ops, e, "max-bytes", "200M");
    struct soi *s = nullptr;
    int bad = 0;
    EXPECT_EQ(soi_open(ops, &e, &s, &bad, why, sizeof why), -ENOSPC) << "more than it can spare: refused";
    EXPECT_EQ(bad, 1) << "the allotment asked for is the user's input";
    EXPECT_NE(strstr(why, "can spare"), nullptr) << why;
    EXPECT_TRUE(dir_entries(fs.path).empty()) << "nothing made";

    set(ops, e, "max-bytes", "60M");
    ASSERT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), 0) << why;
    EXPECT_NE(strstr(s->note, "tmpfs"), nullptr) << s->note;
    // something else eats the spare space while the SoI is small
    std::string other = fs.path + "/other";
    {
        std::ofstream f(other, std::ios::binary);
        std::string mb(MiB, 'x');
        for (int i = 0; i < 50; i++)
            f << mb;
    }
    auto res = ramp(s, {10, 100}, 50 * kMs);
    EXPECT_NEAR(res[0].achieved, 6.0 * MiB, 1 * MiB);
    EXPECT_LT(res[1].achieved, 60.0 * MiB) << "it stopped growing";
    EXPECT_NE(strstr(s->note, "stopped growing"), nullptr) << s->note;
    struct fs_space sp;
    ASSERT_EQ(fs_space_of(fs.path.c_str(), &sp), 0);
    EXPECT_GE(sp.avail + MiB, fs_margin(sp.total)) << "the margin is still free";
    soi_close(s);
    EXPECT_EQ(dir_entries(fs.path), std::vector<std::string>{"other"});
}

// ---- disk-bw ----------------------------------------------------------------------------------------------------

TEST_F(IoSoi, DiskSoisPaceEveryDirectionAndCleanUp)
{
    DiskDir d;
    ASSERT_FALSE(d.path.empty());
    const soi_ops *ops = soi_find("disk-bw");
    ASSERT_NE(ops, nullptr);
    EXPECT_EQ(ops->io, SOI_IO_DIR | SOI_IO_DEVICE);
    // disk-bw's three directions at its queue depth, then disk-write at its own (deeper: 32)
    for (const char *rw : {"read", "write", "mix", "disk-write"}) {
        SCOPED_TRACE(std::string("rw=") + rw);
        const bool dw = !strcmp(rw, "disk-write");
        if (dw)
            ops = soi_find("disk-write");
        ASSERT_NE(ops, nullptr);
        struct soi_env e = env(ops);
        e.dir = d.path.c_str();
        if (!dw)
            set(ops, e, "rw", rw);
        set(ops, e, "file-size", "64M");
        set(ops, e, "bs", "256K");
        struct soi *s = nullptr;
        int rc = soi_open(ops, &e, &s, nullptr, why, sizeof why);
        if (rc == -ENOTSUP)
            GTEST_SKIP() << why;
        ASSERT_EQ(rc, 0) << why;
        printf("%s\n", s->capacity_src);
        EXPECT_GT(s->capacity, 0);
        EXPECT_NE(strstr(s->capacity_src, "O_DIRECT io_uring"), nullptr);
        EXPECT_NE(strstr(s->capacity_src, dw ? "QD 32" : "QD 8"), nullptr) << s->capacity_src;
        auto res = ramp(s, {0, 30, 100}, 150 * kMs);
        printf("30 %% -> %.2f %%, 100 %% -> %.2f %%\n", res[1].achieved_pct, res[2].achieved_pct);
        EXPECT_EQ(res[0].achieved, 0.0);
        EXPECT_GT(res[1].achieved, 0.0);
        // paced: a 30 % step stays near its target; a generous bound (the credit is 25 ms of a 150 ms step)
        EXPECT_LT(res[1].achieved_pct, 30 * 1.6);
        // No lower bound holds: the disk is shared with whatever else runs (30 % read 29.9-31.6 % mostly, and once
        // 11.7 %, with 100 % lower still). The 25 ms of credit that makes up the path's stalls is checked on the
        // fake clock: Bucket.IoStallShorterThanItsCreditIsMadeUpWithinTheStep in test_pace.
        EXPECT_GT(res[2].achieved, res[1].achieved) << "unthrottled beats 30 %";
        soi_close(s);
        EXPECT_TRUE(dir_entries(d.path).empty()) << "files removed";
    }
}

TEST_F(IoSoi, DiskBwRefusesWhatIsNotADisk)
{
    const soi_ops *ops = soi_find("disk-bw");
    struct soi_env e = env(ops);
    struct soi *s = nullptr;
    if (fs_is_memory("/dev/shm")) {
        e.dir = "/dev/shm";
        EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -ENOTSUP);
        EXPECT_NE(strstr(why, "tmpfs"), nullptr) << why;
    }
    e.dir = "/nonexistent-ibench-dir";
    EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -ENOENT);
    e.dir = nullptr;
    e.device = "/dev/null";
    EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -EINVAL) << "no --force";
    e.force = 1;
    EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -ENOTBLK) << "not a block device";
    EXPECT_NE(strstr(why, "not a block device"), nullptr) << why;
    set(ops, e, "rw", "write");
    EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -EINVAL);
    EXPECT_NE(strstr(why, "only --rw read"), nullptr) << why;
    e.device = nullptr;
    e.force = 0;
    DiskDir d;
    e.dir = d.path.c_str();
    set(ops, e, "rw", "read");
    set(ops, e, "file-size", "1T");
    struct fs_space sp;
    ASSERT_EQ(fs_space_of(d.path.c_str(), &sp), 0);
    if (fs_spare(&sp) < (1ULL << 40)) {
        EXPECT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), -ENOSPC);
        EXPECT_NE(strstr(why, "can spare"), nullptr) << why;
    }
    EXPECT_TRUE(dir_entries(d.path).empty());
}

// An SoI marks bad input through the API (soi_bad_input) and keeps the real error: soi_open hands the mark to its
// caller with the real rc, so the command exits 2 with the right message (cli_exit_for). A failure of the machine
// (a tmpfs where a disk is needed) is not marked.
TEST_F(IoSoi, BadInputIsMarkedAndKeepsTheRealError)
{
    for (const char *name : {"disk-cap", "disk-bw", "disk-write"}) {
        SCOPED_TRACE(name);
        const soi_ops *ops = soi_find(name);
        ASSERT_NE(ops, nullptr);
        struct soi_env e = env(ops);
        e.dir = "/nonexistent-ibench-dir";
        struct soi *s = nullptr;
        int bad = -1;
        EXPECT_EQ(soi_open(ops, &e, &s, &bad, why, sizeof why), -ENOENT) << why;
        EXPECT_EQ(bad, 1) << "a missing --dir is the user's input";
        EXPECT_NE(strstr(why, strerror(ENOENT)), nullptr) << why;
        e.dir = "/proc/self/status";  // a file, not a directory
        bad = -1;
        EXPECT_EQ(soi_open(ops, &e, &s, &bad, why, sizeof why), -ENOTDIR) << why;
        EXPECT_EQ(bad, 1);
    }
    const soi_ops *dbw = soi_find("disk-bw");
    if (fs_is_memory("/dev/shm")) {
        struct soi_env e = env(dbw);
        e.dir = "/dev/shm";
        struct soi *s = nullptr;
        int bad = -1;
        EXPECT_EQ(soi_open(dbw, &e, &s, &bad, why, sizeof why), -ENOTSUP) << why;
        EXPECT_EQ(bad, 0) << "a memory filesystem is what this machine has, not a mistake: not marked";
    }
    const soi_ops *nbw = soi_find("net-bw");
    ASSERT_NE(nbw, nullptr);
    struct soi_env e = env(nbw);
    e.target = "127.0.0.1:1";  // nobody listens there
    struct soi *s = nullptr;
    int bad = -1;
    EXPECT_EQ(soi_open(nbw, &e, &s, &bad, why, sizeof why), -ECONNREFUSED) << why;
    EXPECT_EQ(bad, 1) << "an unreachable --target is the user's input";
    EXPECT_NE(strstr(why, strerror(ECONNREFUSED)), nullptr) << why;
}

// ---- net-bw and the sink ----------------------------------------------------------------------------------------

TEST(Sink, AddressesAndHandshake)
{
    char why[256];
    struct sockaddr_storage sa;
    unsigned len = 0;
    EXPECT_EQ(sink_parse_addr("127.0.0.1:5301", 1, &sa, &len, why, sizeof why), 0);
    EXPECT_EQ(sa.ss_family, AF_INET);
    EXPECT_EQ(ntohs(((struct sockaddr_in *)&sa)->sin_port), 5301);
    EXPECT_EQ(sink_parse_addr("[::1]:7", 1, &sa, &len, why, sizeof why), 0);
    EXPECT_EQ(sa.ss_family, AF_INET6);
    EXPECT_EQ(sink_parse_addr("10.0.0.1", 99, &sa, &len, why, sizeof why), 0);
    EXPECT_EQ(ntohs(((struct sockaddr_in *)&sa)->sin_port), 99);
    EXPECT_EQ(sink_parse_addr("localhost:5301", 1, &sa, &len, why, sizeof why), -EINVAL) << "nothing is resolved";
    EXPECT_EQ(sink_parse_addr("1.2.3.4:99999", 1, &sa, &len, why, sizeof why), -EINVAL);
    EXPECT_EQ(sink_parse_addr("", 1, &sa, &len, why, sizeof why), -EINVAL);

    struct sink *s = nullptr;
    // the sink tells its owner of each closed connection (it never prints itself)
    struct Closed {
        std::atomic<uint64_t> bytes{0};
        std::atomic<int> n{0};
    } closed;
    struct sink_report rep = {[](void *arg, uint64_t bytes, double secs) {
                                  auto *c = static_cast<Closed *>(arg);
                                  c->bytes += bytes;
                                  c->n += secs >= 0;
                              },
                              &closed};
    ASSERT_EQ(sink_start("127.0.0.1:0", -1, &rep, &s, why, sizeof why), 0) << why;
    std::string addr = sink_address(s);
    EXPECT_EQ(addr.rfind("127.0.0.1:", 0), 0u) << addr;
    int fd = -1;
    ASSERT_EQ(sink_connect(addr.c_str(), 2000, &fd, why, sizeof why), 0) << why;
    std::string data(1 << 20, 'z');
    ASSERT_EQ(send(fd, data.data(), data.size(), MSG_NOSIGNAL), (ssize_t)data.size());
    for (int i = 0; i < 200 && sink_bytes_acked(fd) < data.size() + strlen(SINK_HELLO); i++)
        usleep(5000);
    EXPECT_GE(sink_bytes_acked(fd), data.size());
    close(fd);
    struct sink_stats st;
    for (int i = 0; i < 200; i++) {
        sink_get_stats(s, &st);
        if (st.bytes >= data.size())
            break;
        usleep(5000);
    }
    EXPECT_EQ(st.bytes, data.size());
    EXPECT_EQ(st.connections, 1u);
    for (int i = 0; i < 200 && closed.n.load() == 0; i++)
        usleep(5000);
    EXPECT_EQ(closed.n.load(), 1);
    EXPECT_EQ(closed.bytes.load(), data.size()) << "what the connection carried after the handshake";
    sink_stop(s);

    // a server that is not a sink: refused before anything is streamed
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    ASSERT_EQ(listen(l, 1), 0);
    socklen_t al = sizeof a;
    getsockname(l, (struct sockaddr *)&a, &al);
    std::string other = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    EXPECT_EQ(sink_connect(other.c_str(), 300, &fd, why, sizeof why), -EPROTO);
    EXPECT_NE(strstr(why, "not answer as an ibench sink"), nullptr) << why;
    close(l);
    EXPECT_EQ(sink_connect(other.c_str(), 300, &fd, why, sizeof why), -ECONNREFUSED) << why;
}

// Teardown waits are bounded: peers that are silent in the handshake, stop half-way through it,
// or stream without ever reading must not hold sink_stop. Every sink thread waits on the stop pipe as well as on its
// connection, so sink_stop returns at once (bound 1 s on a loaded host) and every peer then sees its connection
// closed.
TEST(Sink, StopIsBoundedWhateverThePeersDo)
{
    char why[256];
    struct sink *s = nullptr;
    ASSERT_EQ(sink_start("127.0.0.1:0", -1, nullptr, &s, why, sizeof why), 0) << why;
    std::string addr = sink_address(s);
    struct sockaddr_storage sa;
    unsigned salen = 0;
    ASSERT_EQ(sink_parse_addr(addr.c_str(), 0, &sa, &salen, why, sizeof why), 0) << why;
    auto raw = [&]() {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        EXPECT_EQ(connect(fd, (struct sockaddr *)&sa, salen), 0) << strerror(errno);
        return fd;
    };
    int silent = raw();                       // connects, never sends the hello
    int half = raw();                         // sends half of it, then nothing
    ASSERT_EQ(send(half, SINK_HELLO, 6, MSG_NOSIGNAL), 6);
    int flood = -1;                           // completes the handshake, streams, never reads
    ASSERT_EQ(sink_connect(addr.c_str(), 2000, &flood, why, sizeof why), 0) << why;
    std::string data(1 << 16, 'z');
    for (int i = 0; i < 64 && send(flood, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT) > 0; i++) {
    }
    struct sink_stats st = {};
    for (int i = 0; i < 400 && st.active < 3; i++) {
        sink_get_stats(s, &st);
        usleep(5000);
    }
    ASSERT_EQ(st.active, 3u) << "the sink accepted " << st.active << " of 3 connections";
    double t0 = ib_test::now_s();
    sink_stop(s);
    double took = ib_test::now_s() - t0;
    EXPECT_LT(took, 1.0) << "sink_stop waited " << took << " s for its peers";
    printf("sink_stop with a silent, a half-hello and a flooding peer: %.3f s\n", took);
    for (int fd : {silent, half, flood}) { // each one's connection is closed by the sink: EOF or reset, not silence
        struct pollfd p = {fd, POLLIN, 0};
        EXPECT_EQ(poll(&p, 1, 2000), 1) << "fd " << fd << ": the sink left the connection open";
        char c[64];
        ssize_t k;
        while ((k = recv(fd, c, sizeof c, MSG_DONTWAIT)) > 0) { // the flooding peer may hold the sink's OK unread
        }
        EXPECT_TRUE(k == 0 || (k < 0 && errno == ECONNRESET)) << "fd " << fd << ": " << k << " " << strerror(errno);
        close(fd);
    }
}

TEST_F(IoSoi, NetBwOverLoopbackGrowsSizeAndRate)
{
    const soi_ops *ops = soi_find("net-bw");
    ASSERT_NE(ops, nullptr);
    EXPECT_EQ(ops->io, SOI_IO_TARGET);
    struct soi_env e = env(ops);
    struct soi *s = nullptr;
    ASSERT_EQ(soi_open(ops, &e, &s, nullptr, why, sizeof why), 0) << why;
    printf("%s\n%s\n", s->capacity_src, s->note);
    EXPECT_NE(strstr(s->note, "a sink of its own at 127.0.0.1:"), nullptr) << s->note;
    auto res = ramp(s, {0, 25, 100}, 150 * kMs);
    printf("25 %% -> %.2f %%, 100 %% -> %.2f %%\n", res[1].achieved_pct, res[2].achieved_pct);
    EXPECT_NEAR(res[0].achieved_pct, 0.0, 0.5);
    EXPECT_GT(res[1].achieved, 0.0);
    EXPECT_LT(res[1].achieved_pct, 25 * 1.6) << "paced";
    // and not far under: 25 % of the loopback's rate is reached with half the CPUs taken (25.1-25.3 % here), unless
    // its worker was measured waiting for its CPU beyond the bound (busy guard)
    if (!(res[1].achieved_pct > 25 * 0.5))
        IB_SKIP_IF_BUSY(ib_test::busy_why(&res[1], 1));
    EXPECT_GT(res[1].achieved_pct, 25 * 0.5) << "paced, not starved";
    EXPECT_GT(res[2].achieved, res[1].achieved);
    // request size grows with x (sqrt): bytes per request at 100 % exceed those at 25 %
    double per_req25 = res[1].achieved / res[1].secondary, per_req100 = res[2].achieved / res[2].secondary;
    EXPECT_GT(per_req100, 1.5 * per_req25) << per_req25 << " vs " << per_req100;
    soi_close(s);
}

// ---- through the binary: bad input, cleanup on every exit path, the sink dying, namespaces ------------------------

namespace {

class IoBin : public ::testing::Test {
protected:
    ib_test::TempDir cache{"iobin"};
    DiskDir d;
    std::vector<std::string> env() const { return {"IBENCH_CACHE_DIR=" + cache.path(), "IBENCH_PROGRESS=1"}; }
    void run(ib_test::Proc &p, const std::vector<std::string> &args, double timeout_s = 120)
    {
        ASSERT_TRUE(p.start(args, env()));
        ASSERT_TRUE(p.finish(timeout_s)) << "no exit within " << timeout_s << " s; stderr: " << p.err;
    }
    void expect_fails(const std::vector<std::string> &args, int code, const char *word)
    {
        std::string cmd;
        for (const auto &a : args)
            cmd += " " + a;
        SCOPED_TRACE(cmd);
        ib_test::Proc p;
        run(p, args, 60);
        EXPECT_EQ(p.exit_code(), code) << p.err;
        EXPECT_NE(p.err.find(word), std::string::npos) << p.err;
        EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << "one line: " << p.err;
        EXPECT_TRUE(dir_entries(d.path).empty()) << "nothing left behind";
    }
};

}  // namespace

TEST_F(IoBin, BadInputIsRefusedAndLeavesNothing)
{
    ASSERT_FALSE(d.path.empty());
    expect_fails({"run", "--soi", "disk-bw", "--intensity", "10", "--dir", "/nonexistent-ibench"}, IB_EXIT_USAGE,
                 "No such file");
    expect_fails({"run", "--soi", "disk-cap", "--intensity", "10", "--dir", "/nonexistent-ibench"}, IB_EXIT_USAGE,
                 "--dir /nonexistent-ibench: No such file or directory");
    expect_fails({"run", "--soi", "disk-cap", "--intensity", "10", "--dir", "/proc"}, IB_EXIT_USAGE, "not writable");
    expect_fails({"run", "--soi", "disk-cap", "--intensity", "10", "--dir", d.path, "--max-bytes", "1000T"},
                 IB_EXIT_USAGE, "can spare");
    expect_fails({"run", "--soi", "disk-bw", "--intensity", "10", "--dir", d.path, "-P", "file-size=1T"},
                 IB_EXIT_USAGE, "can spare");
    expect_fails({"run", "--soi", "disk-bw", "--intensity", "10", "--device", "/dev/null"}, IB_EXIT_USAGE, "--force");
    // qd x bs buffers per thread are checked against the memory the machine can spare (here 64 x 4 GiB) before
    // anything is mapped, touched or written; a file size O_DIRECT cannot write is refused before the prefill
    expect_fails({"run", "--soi", "disk-bw", "--intensity", "10", "--dir", d.path, "--threads", "64", "-P", "qd=256",
                  "-P", "bs=16M", "-P", "file-size=16M"},
                 IB_EXIT_USAGE, "can spare");
    expect_fails({"run", "--soi", "disk-bw", "--intensity", "10", "--dir", d.path, "-P", "file-size=16777217"},
                 IB_EXIT_USAGE, "file-size 16777217 is not a multiple of 4 KiB");
    expect_fails({"run", "--soi", "disk-bw", "--intensity", "10", "--rw", "sideways"}, IB_EXIT_USAGE,
                 "bad value 'sideways' for rw (one of read|write|mix)");
    expect_fails({"run", "--soi", "l1d", "--intensity", "10", "--dir", d.path}, IB_EXIT_USAGE, "takes no --dir");
    expect_fails({"run", "--soi", "net-bw", "--intensity", "10", "--target", "127.0.0.1:1"}, IB_EXIT_USAGE,
                 "Connection refused");
    expect_fails({"run", "--soi", "net-bw", "--intensity", "10", "--target", "localhost:5301"}, IB_EXIT_USAGE,
                 "not a numeric IP address");
    expect_fails({"sink", "--listen", "nope"}, IB_EXIT_USAGE, "numeric");
}

// A profile whose disk SoI refuses --dir stops there with the SoI's real reason and exit 2, writing nothing, rather
// than skipping the SoI as if this machine could not run it (soi_open's bad-input mark, passed on by profile_run).
TEST_F(IoBin, AProfileStopsOnADirItsDiskSoiRefuses)
{
    ASSERT_FALSE(d.path.empty());
    ib_test::Proc p;
    const std::string out = d.path + "/p.json";
    run(p, {"profile", "--name", "t", "--target", "true", "--metric", "runtime", "--sois", "disk-cap", "--dir",
            "/nonexistent-ibench", "--usage-seconds", "0", "--out", out});
    EXPECT_EQ(p.exit_code(), IB_EXIT_USAGE) << p.err;
    EXPECT_NE(p.err.find("--dir /nonexistent-ibench: No such file or directory; no profile written"),
              std::string::npos)
        << p.err;
    EXPECT_TRUE(dir_entries(d.path).empty()) << "no profile written";
}

TEST_F(IoBin, DiskFilesAreRemovedOnEveryExit)
{
    ASSERT_FALSE(d.path.empty());
    for (const char *soi : {"disk-bw", "disk-write", "disk-cap"}) {
        SCOPED_TRACE(soi);
        std::vector<std::string> base = {"run", "--soi", soi, "--dir", d.path};
        if (std::string(soi) != "disk-cap")
            base.insert(base.end(), {"-P", "file-size=64M"});
        else
            base.insert(base.end(), {"--max-bytes", "256M"});
        {  // normal exit
            ib_test::Proc p;
            auto a = base;
            a.insert(a.end(), {"--levels", "0,50,100", "--step-ms", "100", "--json"});
            run(p, a);
            EXPECT_EQ(p.exit_code(), 0) << p.err;
            EXPECT_TRUE(dir_entries(d.path).empty());
        }
        for (int sig : {SIGINT, SIGTERM}) {
            SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
            ib_test::Proc p;
            auto a = base;
            a.insert(a.end(), {"--ramp", "--step-ms", "400", "--json"});
            ASSERT_TRUE(p.start(a, env()));
            ASSERT_TRUE(p.pump_until([&] { return p.err.find("step 2/11") != std::string::npos; }, 60)) << p.err;
            EXPECT_FALSE(dir_entries(d.path).empty()) << "its directory exists while it runs";
            ASSERT_EQ(kill(p.pid, sig), 0);
            ASSERT_TRUE(p.finish(30)) << p.err;
            EXPECT_EQ(p.exit_code(), IB_EXIT_INTR) << p.err;
            EXPECT_TRUE(dir_entries(d.path).empty()) << "removed after " << (sig == SIGINT ? "SIGINT" : "SIGTERM");
        }
    }
}

TEST_F(IoBin, SinkDyingMidRunFailsCleanly)
{
    ib_test::Proc sink;
    ASSERT_TRUE(sink.start({"sink", "--listen", "127.0.0.1:0", "--quiet"}, env()));
    ASSERT_TRUE(sink.pump_until([&] { return sink.err.find("listening on ") != std::string::npos; }, 10)) << sink.err;
    size_t at = sink.err.find("listening on ") + 13;
    std::string addr = sink.err.substr(at, sink.err.find('\n', at) - at);
    ib_test::Proc p;
    ASSERT_TRUE(p.start({"run", "--soi", "net-bw", "--target", addr, "--ramp", "--step-ms", "400", "--json"}, env()));
    ASSERT_TRUE(p.pump_until([&] { return p.err.find("step 2/11") != std::string::npos; }, 60)) << p.err;
    sink.kill_now();
    ASSERT_TRUE(p.finish(30)) << p.err;
    EXPECT_EQ(p.exit_code(), IB_EXIT_FAIL) << p.err;
    EXPECT_TRUE(p.err.find("reset by peer") != std::string::npos || p.err.find("Broken pipe") != std::string::npos)
        << p.err;
}

TEST_F(IoBin, NetBwBetweenTwoNamespaces)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root for network namespaces";
    if (system("command -v ip >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "needs ip (iproute2)";
    const std::string tag = std::to_string(getpid() % 100000);
    const std::string A = "ibtA" + tag, B = "ibtB" + tag, va = "ibva" + tag, vb = "ibvb" + tag;
    auto sh = [](const std::string &c) { return system((c + " >/dev/null 2>&1").c_str()); };
    struct Cleanup {
        std::function<void()> f;
        ~Cleanup() { f(); }
    } cleanup{[&] {
        sh("ip netns del " + A);
        sh("ip netns del " + B);
    }};
    if (sh("ip netns add " + A) || sh("ip netns add " + B))
        GTEST_SKIP() << "ip netns add failed (no permission for namespaces here)";
    ASSERT_EQ(sh("ip link add " + va + " type veth peer name " + vb), 0);
    ASSERT_EQ(sh("ip link set " + va + " netns " + A), 0);
    ASSERT_EQ(sh("ip link set " + vb + " netns " + B), 0);
    ASSERT_EQ(sh("ip -n " + A + " addr add 10.231.0.1/30 dev " + va), 0);
    ASSERT_EQ(sh("ip -n " + B + " addr add 10.231.0.2/30 dev " + vb), 0);
    ASSERT_EQ(sh("ip -n " + A + " link set " + va + " up"), 0);
    ASSERT_EQ(sh("ip -n " + B + " link set " + vb + " up"), 0);
    ASSERT_EQ(sh("ip -n " + A + " link set lo up"), 0);
    ASSERT_EQ(sh("ip -n " + B + " link set lo up"), 0);

    // the sink in A, the SoI in B: `ip netns exec NS ibench ...` (Proc runs IBENCH_BIN, so wrap through env)
    ib_test::Proc sink;
    ASSERT_TRUE(sink.start_cmd({"ip", "netns", "exec", A, IBENCH_BIN, "sink", "--listen", "10.231.0.1:5301",
                                "--json"},
                               env()));
    ASSERT_TRUE(sink.pump_until([&] { return sink.err.find("listening on") != std::string::npos; }, 10)) << sink.err;
    ib_test::Proc p;
    ASSERT_TRUE(p.start_cmd({"ip", "netns", "exec", B, IBENCH_BIN, "run", "--soi", "net-bw", "--target",
                             "10.231.0.1:5301", "--levels", "0,50,100", "--step-ms", "200", "--json"},
                            env()));
    ASSERT_TRUE(p.finish(120)) << p.err;
    EXPECT_EQ(p.exit_code(), 0) << p.err;
    json_error_t je;
    json_t *doc = json_loads(p.out.c_str(), 0, &je);
    ASSERT_NE(doc, nullptr) << je.text << ": " << p.out;
    json_t *steps = json_object_get(doc, "steps");
    ASSERT_EQ(json_array_size(steps), 3u);
    double a50 = json_number_value(json_object_get(json_array_get(steps, 1), "achieved")),
           a100 = json_number_value(json_object_get(json_array_get(steps, 2), "achieved"));
    printf("veth path: %.3g B/s at 50 %%, %.3g B/s at 100 %%\n", a50, a100);
    EXPECT_GT(a50, 0.0);
    EXPECT_GT(a100, 0.0);
    // paced at 50 %: not above its target (25 ms of credit in a 200 ms step). Whether the unthrottled 100 % step
    // beats it depends on what the host gives the veth path that second (it did not, once): not asserted here.
    double pct50 = json_number_value(json_object_get(json_array_get(steps, 1), "achieved_pct"));
    EXPECT_LT(pct50, 50 * 1.3);
    EXPECT_NE(std::string(json_string_value(json_object_get(doc, "capacity") ? json_object_get(
                                                json_object_get(doc, "capacity"), "source")
                                                                                : nullptr) ?: "")
                  .find("10.231.0.1:5301"),
              std::string::npos);
    json_decref(doc);
    // from A's side the SoI is unreachable on loopback: a sink in A is not in B's loopback
    ib_test::Proc q;
    ASSERT_TRUE(q.start_cmd({"ip", "netns", "exec", B, IBENCH_BIN, "run", "--soi", "net-bw", "--target",
                             "127.0.0.1:5301", "--intensity", "10"},
                            env()));
    ASSERT_TRUE(q.finish(30));
    EXPECT_EQ(q.exit_code(), IB_EXIT_USAGE) << q.err;
    ASSERT_EQ(kill(sink.pid, SIGINT), 0);
    ASSERT_TRUE(sink.finish(10)) << sink.err;
    json_t *sd = json_loads(sink.out.c_str(), 0, &je);
    ASSERT_NE(sd, nullptr) << sink.out;
    EXPECT_GT(json_integer_value(json_object_get(sd, "bytes")), 0) << "the sink in A received what B sent";
    json_decref(sd);
}

TEST_F(IoBin, CalibrateMeasuresTheFilesystem)
{
    ASSERT_FALSE(d.path.empty());
    expect_fails({"topo", "--dir", d.path}, IB_EXIT_USAGE, "--dir goes with ibench calibrate");
    ib_test::Proc p;
    run(p, {"calibrate", "--dir", d.path, "--json"}, 180);
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    json_error_t je;
    json_t *doc = json_loads(p.out.c_str(), 0, &je);
    ASSERT_NE(doc, nullptr) << je.text;
    json_t *io = json_object_get(doc, "io_paths");
    ASSERT_TRUE(json_is_array(io));
    bool r = false, w = false;
    size_t i;
    json_t *v;
    json_array_foreach(io, i, v)
    {
        const char *k = json_string_value(json_object_get(v, "kind"));
        ASSERT_NE(k, nullptr);
        r |= k[0] == 'd' && k[1] == 'r';
        w |= k[0] == 'd' && k[1] == 'w';
        EXPECT_GT(json_number_value(json_object_get(v, "bps")), 0.0) << k;
        EXPECT_STREQ(json_string_value(json_object_get(v, "unit")), "B/s");
    }
    EXPECT_TRUE(r && w) << "read and write bandwidth of the filesystem cached";
    json_decref(doc);
    EXPECT_TRUE(dir_entries(d.path).empty()) << "its files removed";
    // and disk-bw --cached-capacity uses it without measuring
    ib_test::Proc q;
    run(q, {"run", "--soi", "disk-bw", "--dir", d.path, "--cached-capacity", "--levels", "10", "--step-ms", "100",
            "-P", "file-size=64M", "--json"});
    ASSERT_EQ(q.exit_code(), 0) << q.err;
    EXPECT_NE(q.out.find("cached sequential read"), std::string::npos) << q.out.substr(0, 2000);
    // and so does disk-write, at its own queue depth (deeper than disk-bw's: the key holds it)
    ib_test::Proc w2;
    run(w2, {"run", "--soi", "disk-write", "--dir", d.path, "--cached-capacity", "--levels", "10", "--step-ms", "100",
             "-P", "file-size=64M", "--json"});
    ASSERT_EQ(w2.exit_code(), 0) << w2.err;
    EXPECT_NE(w2.out.find("cached sequential write, 1.00 MiB blocks, QD 32"), std::string::npos)
        << w2.out.substr(0, 2000);
}
