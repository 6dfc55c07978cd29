// test_kcount.cpp - the kernel's counters (common/kcount.h): the block device under a path on a sysroot built around
// a real temp file (stat lines of 11, 15 and 17 fields), paths with no block device, one namespace's interfaces and a
// process's resident memory on fixture /proc trees, malformed files, and this machine's disk under /var/tmp.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_support.h"

extern "C" {
#include "kcount.h"
}

namespace {

std::string fx(const std::string &rel) { return std::string(IBENCH_FIXTURES) + "/usage/" + rel; }

bool has(const char *why, const char *what) { return strstr(why, what) != nullptr; }

constexpr uint64_t kMiB = 1024ULL * 1024ULL;

// A sysroot for the file system of a real file: SYS/dev/block/MAJ:MIN/ with the given stat line and (when not empty)
// a uevent naming the device. "" when the file's device is anonymous (major 0): no sysroot can stand for it.
struct FakeSys {
    std::string sys, file, dev, entry;
};

bool make_fake_sys(const std::string &base, FakeSys &f)
{
    f.sys = base + "/sys";
    f.file = base + "/data";
    if (!ib_test::write_file(f.file, "x"))
        return false;
    struct stat st;
    if (stat(f.file.c_str(), &st) != 0 || major(st.st_dev) == 0)
        return false;
    f.dev = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
    f.entry = f.sys + "/dev/block/" + f.dev;
    return true;
}

} // namespace

// ---- the block device under a path

// A stat line of each length the kernel writes, read through the sysroot as the device under a real file; sectors
// are 512 bytes whatever the device, and the fields a kernel does not write are marked absent.
TEST(Kcount, BlkOfPathReadsElevenFifteenAndSeventeenFields)
{
    ib_test::TempDir d("kcount_blk");
    ASSERT_FALSE(d.path().empty());
    FakeSys f;
    if (!make_fake_sys(d.path(), f))
        GTEST_SKIP() << d.path() << " is on a file system with no block device (major 0): no sysroot stands for it";
    std::filesystem::create_directories(f.entry);
    ASSERT_TRUE(ib_test::write_file(f.entry + "/uevent", "MAJOR=1\nMINOR=2\nDEVNAME=fakedisk1\nDEVTYPE=partition\n"));
    char why[256] = "";
    kc_blk b{};

    // Linux before 4.19: 11 fields
    ASSERT_TRUE(ib_test::write_file(f.entry + "/stat", "    1200       30    80000      500      700       10    40000"
                                                       "      300        0      900      800\n"));
    ASSERT_EQ(0, kc_blk_of_path(f.sys.c_str(), f.file.c_str(), &b, why, sizeof why)) << why;
    EXPECT_EQ(f.dev, std::to_string(b.major) + ":" + std::to_string(b.minor));
    EXPECT_STREQ("fakedisk1", b.name);
    EXPECT_EQ(f.entry + "/stat", b.stat_path);
    kc_blk_count c{};
    ASSERT_EQ(0, kc_blk_read(&b, &c, why, sizeof why)) << why;
    EXPECT_EQ(11u, c.nfields);
    EXPECT_EQ(1200u, c.rd_ios);
    EXPECT_EQ(80000u * 512u, c.rd_bytes); // 40,960,000 bytes
    EXPECT_EQ(700u, c.wr_ios);
    EXPECT_EQ(40000u * 512u, c.wr_bytes); // 20,480,000 bytes
    EXPECT_EQ(900u, c.io_ticks_ms);
    EXPECT_FALSE(c.have_discard);
    EXPECT_FALSE(c.have_flush);
    EXPECT_EQ(0u, c.discard_ios + c.discard_bytes + c.flush_ios);

    // 4.19 to 5.4: discards added
    ASSERT_TRUE(ib_test::write_file(f.entry + "/stat", "1200 30 80000 500 700 10 40000 300 0 900 800 5 0 2048 7\n"));
    ASSERT_EQ(0, kc_blk_read(&b, &c, why, sizeof why)) << why;
    EXPECT_EQ(15u, c.nfields);
    EXPECT_TRUE(c.have_discard);
    EXPECT_FALSE(c.have_flush);
    EXPECT_EQ(5u, c.discard_ios);
    EXPECT_EQ(1048576u, c.discard_bytes); // 2048 sectors
    EXPECT_EQ(20480000u, c.wr_bytes);

    // 5.5 and later: flushes too (this line recorded on the development host's vda, 2026-11-28)
    ASSERT_TRUE(ib_test::write_file(f.entry + "/stat",
                                    "21901874   564979 8169068146 47137787  9500664  1355385 12052887440 43410667"
                                    "       17  6811680 91597806   320777       95 4769254944  1026497   423974"
                                    "    22854\n"));
    ASSERT_EQ(0, kc_blk_read(&b, &c, why, sizeof why)) << why;
    EXPECT_EQ(17u, c.nfields);
    EXPECT_EQ(21901874u, c.rd_ios);
    EXPECT_EQ(4182562890752u, c.rd_bytes); // 8,169,068,146 sectors x 512
    EXPECT_EQ(9500664u, c.wr_ios);
    EXPECT_EQ(6171078369280u, c.wr_bytes); // 12,052,887,440 x 512
    EXPECT_EQ(6811680u, c.io_ticks_ms);
    EXPECT_TRUE(c.have_discard && c.have_flush);
    EXPECT_EQ(320777u, c.discard_ios);
    EXPECT_EQ(2441858531328u, c.discard_bytes); // 4,769,254,944 x 512
    EXPECT_EQ(423974u, c.flush_ios);

    // a later kernel's appended field is ignored
    ASSERT_EQ(0, kc_blk_parse("1 0 2 0 3 0 4 0 0 5 0 0 0 0 0 6 0 99\n", &c, why, sizeof why)) << why;
    EXPECT_EQ(18u, c.nfields);
    EXPECT_EQ(1024u, c.rd_bytes);
    EXPECT_EQ(2048u, c.wr_bytes);
    EXPECT_EQ(6u, c.flush_ios);
}

// The name: the uevent's DEVNAME, else the last part of the link sysfs keeps (a device-mapper device's "dm-0"),
// else MAJ:MIN.
TEST(Kcount, BlkNameFromUeventOrTheLinksTarget)
{
    ib_test::TempDir d("kcount_name");
    ASSERT_FALSE(d.path().empty());
    FakeSys f;
    if (!make_fake_sys(d.path(), f))
        GTEST_SKIP() << d.path() << " is on a file system with no block device (major 0): no sysroot stands for it";
    const std::string target = f.sys + "/devices/virtual/block/dm-0";
    std::filesystem::create_directories(target);
    std::filesystem::create_directories(f.sys + "/dev/block");
    ASSERT_TRUE(ib_test::write_file(target + "/stat", "1 0 8 0 2 0 16 0 0 3 4\n"));
    std::filesystem::create_directory_symlink("../../devices/virtual/block/dm-0", f.entry);
    char why[256] = "";
    kc_blk b{};
    ASSERT_EQ(0, kc_blk_of_path(f.sys.c_str(), f.file.c_str(), &b, why, sizeof why)) << why;
    EXPECT_STREQ("dm-0", b.name);
    kc_blk_count c{};
    ASSERT_EQ(0, kc_blk_read(&b, &c, why, sizeof why)) << why;
    EXPECT_EQ(4096u, c.rd_bytes);
    EXPECT_EQ(8192u, c.wr_bytes);
    // a uevent without DEVNAME, and no link: MAJ:MIN
    std::filesystem::remove(f.entry);
    std::filesystem::create_directories(f.entry);
    ASSERT_TRUE(ib_test::write_file(f.entry + "/stat", "1 0 8 0 2 0 16 0 0 3 4\n"));
    ASSERT_TRUE(ib_test::write_file(f.entry + "/uevent", "MAJOR=1\n"));
    ASSERT_EQ(0, kc_blk_of_path(f.sys.c_str(), f.file.c_str(), &b, why, sizeof why)) << why;
    EXPECT_EQ(f.dev, b.name);
}

// No block device: a sysroot without the entry names what is missing; a file system on an anonymous device (major 0)
// names the path and its MAJ:MIN; a path that is not there is its own error. Each one line.
TEST(Kcount, NoBlockDeviceIsNoDevWithOneLine)
{
    ib_test::TempDir d("kcount_nodev");
    ASSERT_FALSE(d.path().empty());
    char why[512] = "";
    kc_blk b{};
    FakeSys f;
    if (make_fake_sys(d.path(), f)) {
        std::filesystem::create_directories(f.sys + "/dev/block");
        EXPECT_EQ(-ENODEV, kc_blk_of_path(f.sys.c_str(), f.file.c_str(), &b, why, sizeof why));
        EXPECT_TRUE(has(why, f.file.c_str()) && has(why, ("is on " + f.dev).c_str())) << why;
        EXPECT_TRUE(has(why, "no block device statistics") && has(why, ("no " + f.entry + "/stat").c_str())) << why;
        EXPECT_EQ(nullptr, strchr(why, '\n'));
    }
    // procfs is always on an anonymous device; /dev/shm is a tmpfs where it is mounted
    for (const char *p : {"/proc/self/status", "/dev/shm"}) {
        struct stat st;
        if (stat(p, &st) != 0 || major(st.st_dev) != 0)
            continue;
        EXPECT_EQ(-ENODEV, kc_blk_of_path(nullptr, p, &b, why, sizeof why)) << p;
        std::string dev = "0:" + std::to_string(minor(st.st_dev));
        EXPECT_TRUE(has(why, p) && has(why, ("is on " + dev + ", a file system with no block device").c_str()))
            << why;
        EXPECT_EQ(nullptr, strchr(why, '\n'));
    }
    EXPECT_EQ(-ENOENT, kc_blk_of_path(nullptr, (d.path() + "/none").c_str(), &b, why, sizeof why));
    EXPECT_TRUE(has(why, "cannot stat") && has(why, "/none")) << why;
}

// A stat line no kernel writes is -EINVAL with one line naming the file and what is wrong.
TEST(Kcount, MalformedStatIsInvalidWithOneLine)
{
    char why[512] = "";
    kc_blk_count c{};
    EXPECT_EQ(-EINVAL, kc_blk_parse("1 2 3 4 5\n", &c, why, sizeof why));
    EXPECT_STREQ("stat: 5 fields, expected at least 11", why);
    EXPECT_EQ(-EINVAL, kc_blk_parse("1 2 3 4 5 6 7 8 9 10 11 12\n", &c, why, sizeof why));
    EXPECT_STREQ("stat: 12 fields, a kernel writes 11, 15 or 17", why);
    EXPECT_EQ(-EINVAL, kc_blk_parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", &c, why, sizeof why));
    EXPECT_TRUE(has(why, "16 fields")) << why;
    EXPECT_EQ(-EINVAL, kc_blk_parse("1 2 x 4 5 6 7 8 9 10 11\n", &c, why, sizeof why));
    EXPECT_STREQ("stat: field 3 'x' is not a number", why);
    EXPECT_EQ(-EINVAL, kc_blk_parse("", &c, why, sizeof why));
    EXPECT_STREQ("stat: empty", why);
    EXPECT_EQ(-EINVAL, kc_blk_parse("1 2 36028797018963968 4 5 6 7 8 9 10 11\n", &c, why, sizeof why)); // 2^55 x 512
    EXPECT_TRUE(has(why, "beyond 64-bit")) << why;

    ib_test::TempDir d("kcount_bad");
    ASSERT_FALSE(d.path().empty());
    FakeSys f;
    if (!make_fake_sys(d.path(), f))
        return;
    std::filesystem::create_directories(f.entry);
    ASSERT_TRUE(ib_test::write_file(f.entry + "/stat", "1 2 3\n4 5 6 7 8 9 10 11\n"));
    kc_blk b{};
    ASSERT_EQ(0, kc_blk_of_path(f.sys.c_str(), f.file.c_str(), &b, why, sizeof why)) << why;
    EXPECT_EQ(-EINVAL, kc_blk_read(&b, &c, why, sizeof why));
    EXPECT_EQ(f.entry + "/stat: stat: 3 fields, expected at least 11", std::string(why));
    std::filesystem::remove(f.entry + "/stat");
    EXPECT_EQ(-ENOENT, kc_blk_read(&b, &c, why, sizeof why));
    EXPECT_TRUE(has(why, "cannot read") && has(why, "/stat")) << why;
    EXPECT_EQ(nullptr, strchr(why, '\n'));
}

// This machine: the device under a file in /var/tmp, and its counters after 4 MiB written with O_DIRECT and fsync'd
// (what reaches the device is at least that much: other writers only add to it).
TEST(Kcount, RealDiskCountsFourMiBWrittenDirect)
{
    char why[512] = "";
    kc_blk b{};
    ib_test::TempDir d("kcount_real", "/var/tmp");
    ASSERT_FALSE(d.path().empty());
    const std::string path = d.path() + "/direct";
    ASSERT_TRUE(ib_test::write_file(path, ""));
    int rc = kc_blk_of_path(nullptr, path.c_str(), &b, why, sizeof why);
    if (rc == -ENODEV)
        GTEST_SKIP() << "/var/tmp has no block device here: " << why;
    ASSERT_EQ(0, rc) << why;
    EXPECT_NE('\0', b.name[0]);
    int fd = open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0)
        GTEST_SKIP() << "no O_DIRECT on /var/tmp's file system (" << strerror(errno) << ")";
    const size_t chunk = 1 << 20;
    void *buf = nullptr;
    ASSERT_EQ(0, posix_memalign(&buf, 4096, chunk));
    memset(buf, 0x5a, chunk);
    kc_blk_count before{}, after{};
    ASSERT_EQ(0, kc_blk_read(&b, &before, why, sizeof why)) << why;
    size_t done = 0;
    for (int i = 0; i < 4; i++)
        done += write(fd, buf, chunk) == (ssize_t)chunk ? chunk : 0;
    EXPECT_EQ(0, fsync(fd));
    close(fd);
    free(buf);
    ASSERT_EQ(4 * kMiB, done);
    ASSERT_EQ(0, kc_blk_read(&b, &after, why, sizeof why)) << why;
    EXPECT_GE(after.wr_bytes - before.wr_bytes, 4 * kMiB) << b.name << " (" << b.stat_path << ")";
    EXPECT_GE(after.wr_ios - before.wr_ios, 1u);
    EXPECT_GE(after.nfields, 11u);
}

// ---- network interfaces

// The recorded net/dev of this host (lo, eth0) under a fixture /proc: one interface, every interface, PID or self.
TEST(Kcount, NetDevOneInterfaceOrAll)
{
    ib_test::TempDir d("kcount_net");
    ASSERT_FALSE(d.path().empty());
    const std::string proc = d.path() + "/proc";
    for (const char *who : {"/4242", "/self"}) {
        std::filesystem::create_directories(proc + who + "/net");
        std::filesystem::copy_file(fx("net-dev"), proc + who + "/net/dev");
    }
    char why[512] = "";
    kc_net_count c{};
    ASSERT_EQ(0, kc_net_read(proc.c_str(), 4242, "eth0", &c, why, sizeof why)) << why;
    EXPECT_EQ(40846332u, c.rx_bytes);
    EXPECT_EQ(921u, c.rx_packets);
    EXPECT_EQ(52364u, c.tx_bytes);
    EXPECT_EQ(625u, c.tx_packets);
    EXPECT_EQ(1u, c.nif);
    ASSERT_EQ(0, kc_net_read(proc.c_str(), 4242, "lo", &c, why, sizeof why)) << why;
    EXPECT_EQ(1561934651391u, c.rx_bytes);
    EXPECT_EQ(c.rx_bytes, c.tx_bytes);
    EXPECT_EQ(74521224u, c.tx_packets);
    ASSERT_EQ(0, kc_net_read(proc.c_str(), 0, nullptr, &c, why, sizeof why)) << why; // self, every interface
    EXPECT_EQ(2u, c.nif);
    EXPECT_EQ(1561934651391u + 40846332u, c.rx_bytes);
    EXPECT_EQ(74521224u + 921u, c.rx_packets);
    EXPECT_EQ(1561934651391u + 52364u, c.tx_bytes);
    EXPECT_EQ(74521224u + 625u, c.tx_packets);

    EXPECT_EQ(-ENODEV, kc_net_read(proc.c_str(), 4242, "wlan0", &c, why, sizeof why));
    EXPECT_TRUE(has(why, "/4242/net/dev: net/dev: no interface 'wlan0'")) << why;
    EXPECT_EQ(-ENOENT, kc_net_read(proc.c_str(), 4343, nullptr, &c, why, sizeof why));
    EXPECT_TRUE(has(why, "cannot read") && has(why, "/4343/net/dev")) << why;
    // an interface whose name is another's prefix is not it
    ASSERT_EQ(0, kc_net_parse("eth0: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\neth01: 10 20 0 0 0 0 0 0 30 40 0 0 0 0 0 0\n",
                              "eth0", &c, why, sizeof why)) << why;
    EXPECT_EQ(1u, c.rx_bytes);
    EXPECT_EQ(3u, c.tx_bytes);
    ASSERT_EQ(0, kc_net_parse("", nullptr, &c, why, sizeof why)) << why;
    EXPECT_EQ(0u, c.nif + c.rx_bytes + c.tx_bytes);

    // this process's namespace: at least one interface (lo is in every namespace)
    ASSERT_EQ(0, kc_net_read(nullptr, 0, nullptr, &c, why, sizeof why)) << why;
    EXPECT_GE(c.nif, 1u);
}

TEST(Kcount, MalformedNetDevIsInvalidWithOneLine)
{
    ib_test::TempDir d("kcount_net_bad");
    ASSERT_FALSE(d.path().empty());
    const std::string proc = d.path() + "/proc";
    std::filesystem::create_directories(proc + "/7/net");
    ASSERT_TRUE(ib_test::write_file(proc + "/7/net/dev", ib_test::file_text(fx("net-dev")) + "  eth1: 1 2 3\n"));
    char why[512] = "";
    kc_net_count c{};
    EXPECT_EQ(-EINVAL, kc_net_read(proc.c_str(), 7, "eth0", &c, why, sizeof why));
    EXPECT_EQ(proc + "/7/net/dev: net/dev line 5: 'eth1' has 3 numbers, expected 16", std::string(why));
    EXPECT_EQ(-EINVAL, kc_net_parse("eth0: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0 9\n", nullptr, &c, why, sizeof why));
    EXPECT_TRUE(has(why, "more than 16 numbers")) << why;
    EXPECT_EQ(-EINVAL, kc_net_parse("lo: 1 2 0 0 0 0 0 0 x 4 0 0 0 0 0 0\n", "lo", &c, why, sizeof why));
    EXPECT_STREQ("net/dev line 1: 'lo' field 9 'x' is not a number", why);
    EXPECT_EQ(-EINVAL, kc_net_parse("eth0 1 2\n", nullptr, &c, why, sizeof why));
    EXPECT_STREQ("net/dev line 1: expected 'interface: 16 numbers'", why);
    EXPECT_EQ(nullptr, strchr(why, '\n'));
}

// ---- resident memory

TEST(Kcount, RssIsResidentPagesTimesThePageSize)
{
    ib_test::TempDir d("kcount_rss");
    ASSERT_FALSE(d.path().empty());
    const std::string proc = d.path() + "/proc";
    std::filesystem::create_directories(proc + "/100");
    std::filesystem::copy_file(fx("proc/100/statm"), proc + "/100/statm"); // "1283 1035 779 193 0 302 0"
    char why[512] = "";
    uint64_t b = 0;
    ASSERT_EQ(0, kc_rss_read(proc.c_str(), 100, &b, why, sizeof why)) << why;
    EXPECT_EQ(1035u * (uint64_t)sysconf(_SC_PAGESIZE), b);
    ASSERT_EQ(0, kc_rss_parse("9 7 0 0 0 0 0\n", 4096, &b, why, sizeof why)) << why;
    EXPECT_EQ(7u * 4096u, b);

    EXPECT_EQ(-ENOENT, kc_rss_read(proc.c_str(), 101, &b, why, sizeof why));
    EXPECT_TRUE(has(why, "cannot read") && has(why, "/101/statm")) << why;
    ASSERT_TRUE(ib_test::write_file(proc + "/100/statm", "1283 1035\n"));
    EXPECT_EQ(-EINVAL, kc_rss_read(proc.c_str(), 100, &b, why, sizeof why));
    EXPECT_EQ(proc + "/100/statm: statm: 2 fields, expected 7", std::string(why));
    EXPECT_EQ(-EINVAL, kc_rss_parse("1283 -5 0 0 0 0 0\n", 4096, &b, why, sizeof why));
    EXPECT_STREQ("statm: field 2 '-5' is not a number", why);
    EXPECT_EQ(nullptr, strchr(why, '\n'));

    // this process: resident memory is some pages, and grows by what it touches
    uint64_t self0 = 0, self1 = 0;
    ASSERT_EQ(0, kc_rss_read(nullptr, 0, &self0, why, sizeof why)) << why;
    ASSERT_EQ(0, kc_rss_read(nullptr, getpid(), &b, why, sizeof why)) << why;
    EXPECT_GT(self0, 0u);
    std::string touched(64 * kMiB, 'x');
    ASSERT_EQ(0, kc_rss_read(nullptr, 0, &self1, why, sizeof why)) << why;
    EXPECT_GE(self1, self0 + 48 * kMiB) << "64 MiB touched";
    EXPECT_EQ('x', touched[touched.size() / 2]);
}

// ---- the text primitives the readers share

TEST(Kcount, FieldsAndOneNumber)
{
    char why[256] = "";
    uint64_t v[4] = {0};
    EXPECT_EQ(3, kc_fields_u64("10 20 30 x\n", "f", v, 3, 3, why, sizeof why)) << "the rest of the line is not read";
    EXPECT_EQ(30u, v[2]);
    EXPECT_EQ(2, kc_fields_u64("\t5  6\n7\n", "f", v, 1, 4, why, sizeof why)) << why;
    EXPECT_EQ(6u, v[1]);
    EXPECT_EQ(-EINVAL, kc_fields_u64("5\n", "f", v, 2, 4, why, sizeof why));
    EXPECT_STREQ("f: 1 fields, expected at least 2", why);
    EXPECT_EQ(-EINVAL, kc_fields_u64("18446744073709551616\n", "f", v, 1, 1, why, sizeof why)); // 2^64
    EXPECT_STREQ("f: field 1 '18446744073709551616' is not a number", why);
    uint64_t n = 0;
    ASSERT_EQ(0, kc_number("18446744073709551615\n", "one", &n, why, sizeof why)) << why;
    EXPECT_EQ(UINT64_MAX, n);
    EXPECT_EQ(-EINVAL, kc_number("max\n", "memory.max", &n, why, sizeof why));
    EXPECT_STREQ("memory.max: 'max' is not one number", why);
}
