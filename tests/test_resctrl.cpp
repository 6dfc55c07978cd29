// test_resctrl.cpp - a resctrl monitoring group (common/resctrl.h) on the hand-made resctrl root of
// tests/fixtures/usage/resctrl/: what the CPU monitors, a group made for a set of threads, its domains summed, a
// figure the kernel cannot read now left absent, and the group removed on close and on every failure after it was
// made; and this machine as it is. (harness/usage.c's add-on over it: test_usage.cpp, UsageResctrl.*.)
#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_support.h"

extern "C" {
#include "resctrl.h"
}

namespace {

std::string fx(const std::string &rel) { return std::string(IBENCH_FIXTURES) + "/usage/" + rel; }

bool has(const char *why, const char *what) { return strstr(why, what) != nullptr; }

// A copy of the fixture root with mon_groups/ (where the kernel would take a new group), under d.
std::string fixture_root(const ib_test::TempDir &d)
{
    const std::string root = d.path() + "/resctrl";
    std::filesystem::copy(fx("resctrl"), root, std::filesystem::copy_options::recursive);
    std::filesystem::create_directories(root + "/mon_groups");
    return root;
}

// What the kernel gives a new group: its mon_data (here the root's recorded shape), and what rmdir takes away.
void give_mon_data(const std::string &root, const std::string &group)
{
    std::filesystem::copy(root + "/mon_data", group + "/mon_data", std::filesystem::copy_options::recursive);
}

void take_kernel_files(const std::string &group)
{
    std::filesystem::remove_all(group + "/mon_data");
    std::filesystem::remove(group + "/tasks");
}

void set_mon(const std::string &group, const char *dom, const char *file, const std::string &v)
{
    ASSERT_TRUE(ib_test::write_file(group + "/mon_data/mon_L3_" + dom + "/" + file, v + "\n"));
}

} // namespace

// Not mounted, no L3 monitoring, nothing monitored: -ENOTSUP with one line each, and nothing made.
TEST(Resctrl, FeaturesSayWhatIsMissing)
{
    ib_test::TempDir d("resctrl_none");
    ASSERT_FALSE(d.path().empty());
    const std::string root = d.path() + "/resctrl";
    std::filesystem::create_directories(root);
    char why[512] = "";
    resctrl_features f{};
    EXPECT_EQ(-ENOTSUP, resctrl_mon_features(root.c_str(), &f, why, sizeof why));
    EXPECT_EQ("no resctrl monitoring: " + root + " is not mounted", std::string(why));
    std::filesystem::create_directories(root + "/info/L3");
    EXPECT_EQ(-ENOTSUP, resctrl_mon_features(root.c_str(), &f, why, sizeof why));
    EXPECT_EQ("no resctrl monitoring: the CPU has no L3 monitoring (no " + root + "/info/L3_MON/mon_features)",
              std::string(why));
    std::filesystem::create_directories(root + "/info/L3_MON");
    ASSERT_TRUE(ib_test::write_file(root + "/info/L3_MON/mon_features", "\nmbm_local_bytes\n"));
    ASSERT_EQ(0, resctrl_mon_features(root.c_str(), &f, why, sizeof why)) << why;
    EXPECT_TRUE(!f.llc && !f.mbm_total && f.mbm_local);
    ASSERT_TRUE(ib_test::write_file(root + "/info/L3_MON/mon_features", "mbm_local\n"));
    resctrl_mon m{};
    EXPECT_EQ(-ENOTSUP, resctrl_mon_open(&m, root.c_str(), "g", nullptr, 0, why, sizeof why));
    EXPECT_STREQ("no resctrl monitoring: the CPU has no llc_occupancy, mbm_total_bytes or mbm_local_bytes", why);
    EXPECT_FALSE(std::filesystem::exists(root + "/mon_groups")) << "nothing made";
    EXPECT_EQ('\0', m.dir[0]);

    ASSERT_EQ(0, resctrl_mon_features(fx("resctrl").c_str(), &f, why, sizeof why)) << why;
    EXPECT_TRUE(f.llc && f.mbm_total && f.mbm_local);
    EXPECT_EQ(-ENAMETOOLONG, resctrl_mon_features(std::string(300, 'r').c_str(), &f, why, sizeof why));
    EXPECT_EQ(nullptr, strchr(why, '\n'));

    // this machine, as it is
    if (!std::filesystem::exists("/sys/fs/resctrl/info")) {
        EXPECT_EQ(-ENOTSUP, resctrl_mon_open(&m, nullptr, nullptr, nullptr, 0, why, sizeof why));
        EXPECT_STREQ("no resctrl monitoring: /sys/fs/resctrl is not mounted", why);
    }
}

// A group of two threads: both in its tasks, its two L3 domains summed for each figure, an "Unavailable" or "Error"
// domain leaves that figure absent, a figure cleared is not read, and closing removes the group.
TEST(Resctrl, GroupOfThreadsReadOverDomainsAndRemoved)
{
    ib_test::TempDir d("resctrl_group");
    ASSERT_FALSE(d.path().empty());
    const std::string root = fixture_root(d), group = root + "/mon_groups/ibench-probe";
    char why[512] = "";
    resctrl_mon m{};
    const pid_t tids[] = {4711, 4712};
    ASSERT_EQ(0, resctrl_mon_open(&m, root.c_str(), "ibench-probe", tids, 2, why, sizeof why)) << why;
    EXPECT_EQ(group, m.dir);
    EXPECT_TRUE(m.llc && m.mbm_total && m.mbm_local);
    EXPECT_EQ("4711\n4712\n", ib_test::file_text(group + "/tasks"));
    ASSERT_EQ(0, resctrl_mon_add(&m, 4713, why, sizeof why)) << why;
    EXPECT_EQ("4711\n4712\n4713\n", ib_test::file_text(group + "/tasks"));

    give_mon_data(root, group);
    resctrl_count c{};
    ASSERT_EQ(0, resctrl_mon_read(&m, &c, why, sizeof why)) << why;
    EXPECT_EQ(2u, c.domains);
    EXPECT_TRUE(c.have_llc && c.have_mbm_total && c.have_mbm_local);
    EXPECT_EQ(1048576u + 524288u, c.llc_bytes);
    EXPECT_EQ(6815744u + 2097152u, c.mbm_total_bytes);
    EXPECT_EQ(4194304u + 2097152u, c.mbm_local_bytes);

    set_mon(group, "01", "mbm_local_bytes", "Unavailable");
    set_mon(group, "00", "llc_occupancy", "Error");
    ASSERT_EQ(0, resctrl_mon_read(&m, &c, why, sizeof why)) << why;
    EXPECT_FALSE(c.have_llc);
    EXPECT_FALSE(c.have_mbm_local);
    EXPECT_EQ(0u, c.llc_bytes + c.mbm_local_bytes);
    EXPECT_TRUE(c.have_mbm_total);
    EXPECT_EQ(6815744u + 2097152u, c.mbm_total_bytes);

    m.llc = m.mbm_local = false; // not read: an unreadable file of theirs no longer matters
    std::filesystem::remove(group + "/mon_data/mon_L3_00/llc_occupancy");
    ASSERT_EQ(0, resctrl_mon_read(&m, &c, why, sizeof why)) << why;
    EXPECT_TRUE(!c.have_llc && c.have_mbm_total && !c.have_mbm_local);

    set_mon(group, "00", "mbm_total_bytes", "12x");
    EXPECT_EQ(-EINVAL, resctrl_mon_read(&m, &c, why, sizeof why));
    EXPECT_TRUE(has(why, "mon_L3_00/mbm_total_bytes: '12x' is not one number")) << why;
    std::filesystem::remove_all(group + "/mon_data/mon_L3_00");
    std::filesystem::remove_all(group + "/mon_data/mon_L3_01");
    EXPECT_EQ(-EIO, resctrl_mon_read(&m, &c, why, sizeof why));
    EXPECT_EQ(group + "/mon_data holds no mon_L3_* domain", std::string(why));
    EXPECT_EQ(nullptr, strchr(why, '\n'));

    take_kernel_files(group);
    resctrl_mon_close(&m);
    EXPECT_FALSE(std::filesystem::exists(group)) << "the group is removed on close";
    EXPECT_EQ('\0', m.dir[0]);
    resctrl_mon_close(&m); // twice: nothing
    EXPECT_EQ(-EINVAL, resctrl_mon_read(&m, &c, why, sizeof why));
}

// The default name is ibench-<pid>; one left by a killed process is made again; a group that cannot be made says why
// (and nothing is left); a failure after it was made removes it.
TEST(Resctrl, DefaultNameAndEveryFailureLeavesNoGroup)
{
    ib_test::TempDir d("resctrl_fail");
    ASSERT_FALSE(d.path().empty());
    const std::string root = fixture_root(d), group = root + "/mon_groups/ibench-" + std::to_string(getpid());
    char why[512] = "";
    resctrl_mon m{};
    std::filesystem::create_directories(group); // left by a killed ibench of the same pid
    ASSERT_EQ(0, resctrl_mon_open(&m, root.c_str(), nullptr, nullptr, 0, why, sizeof why)) << why;
    EXPECT_EQ(group, m.dir);
    EXPECT_FALSE(std::filesystem::exists(group + "/tasks")) << "an empty group";
    resctrl_mon_close(&m);
    EXPECT_FALSE(std::filesystem::exists(group));

    // a thread id that is none (0 would move the caller itself): refused, the group made for it removed
    const pid_t zero[] = {0};
    EXPECT_EQ(-EINVAL, resctrl_mon_open(&m, root.c_str(), nullptr, zero, 1, why, sizeof why));
    EXPECT_STREQ("not a thread id: 0", why);
    EXPECT_FALSE(std::filesystem::exists(group)) << "removed after the failure";
    EXPECT_EQ('\0', m.dir[0]);

    EXPECT_EQ(-EINVAL, resctrl_mon_open(&m, root.c_str(), "a/b", nullptr, 0, why, sizeof why));
    EXPECT_STREQ("not a resctrl group name: 'a/b'", why);
    std::filesystem::remove(root + "/mon_groups");
    EXPECT_EQ(-ENOENT, resctrl_mon_open(&m, root.c_str(), "g", nullptr, 0, why, sizeof why));
    EXPECT_EQ("cannot make the resctrl group " + root + "/mon_groups/g: No such file or directory", std::string(why));
    EXPECT_EQ('\0', m.dir[0]);
    EXPECT_EQ(nullptr, strchr(why, '\n'));
}

// This machine: where resctrl monitoring is mounted (and ibench is root), a group of this thread reads its domains;
// elsewhere it is refused as above.
TEST(Resctrl, ThisMachine)
{
    char why[512] = "";
    resctrl_features f{};
    int rc = resctrl_mon_features(nullptr, &f, why, sizeof why);
    if (rc == -ENOTSUP)
        GTEST_SKIP() << why;
    ASSERT_EQ(0, rc) << why;
    resctrl_mon m{};
    const pid_t self[] = {gettid()};
    rc = resctrl_mon_open(&m, nullptr, nullptr, self, 1, why, sizeof why);
    if (rc == -EACCES || rc == -EPERM || rc == -ENOSPC || rc == -EINVAL)
        GTEST_SKIP() << why;
    ASSERT_EQ(0, rc) << why;
    resctrl_count c{};
    rc = resctrl_mon_read(&m, &c, why, sizeof why);
    std::string dir = m.dir;
    resctrl_mon_close(&m);
    ASSERT_EQ(0, rc) << why;
    EXPECT_GE(c.domains, 1u);
    EXPECT_FALSE(std::filesystem::exists(dir));
}
