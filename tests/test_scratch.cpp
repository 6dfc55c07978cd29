// test_scratch.cpp - the scratch-file helper the disk SoIs and the file probes share (common/scratch.h): every
// failure point leaves no directory and no file behind, closing is idempotent, names carry the pid so that the stale
// sweep finds the directory of a killed ibench.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "fsguard.h"
#include "scratch.h"
#include "test_support.h"

namespace {

using ib_test::dir_entries;

// A directory on a memory filesystem (/dev/shm), removed afterwards; empty path where there is none.
struct ShmDir {
    ib_test::TempDir t{"scratch", "/dev/shm"};
    const std::string path = fs_is_memory("/dev/shm") ? t.path() : std::string();
};

int open_fds()
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    while (struct dirent *e = d ? readdir(d) : nullptr)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

}  // namespace

// The life cycle: a private directory named after the tag and the pid, files in it owned by the scratch, and
// scratch_close removing all of it, twice without harm.
TEST(Scratch, FilesLiveInAPrivateDirectoryAndGoTogether)
{
    ib_test::TempDir base("scratch");
    ASSERT_FALSE(base.path().empty());
    int fds = open_fds();
    struct scratch sc = {};
    char why[512] = "";
    ASSERT_EQ(scratch_open(&sc, base.path().c_str(), "disk-test", 1 << 20, 0, why, sizeof why), 0) << why;
    std::vector<std::string> made = dir_entries(base.path());
    ASSERT_EQ(made.size(), 1u);
    EXPECT_EQ(made[0].rfind("ibench-disk-test-" + std::to_string(getpid()) + ".", 0), 0u) << made[0];
    EXPECT_EQ(fs_private_dir_pid(made[0].c_str()), (long)getpid()) << "the stale sweep reads the pid back";
    char path[4200];
    int a = scratch_file(&sc, "a", O_RDWR, 1 << 20, path, sizeof path, why, sizeof why);
    ASSERT_GE(a, 0) << why;
    struct stat st;
    ASSERT_EQ(fstat(a, &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_GE((uint64_t)st.st_blocks * 512, 1u << 20) << "allocated, not a sparse size";
    EXPECT_EQ(std::string(path), std::string(sc.dir) + "/a");
    EXPECT_TRUE(fcntl(a, F_GETFD) & FD_CLOEXEC) << "a target started later must not inherit it";
    ASSERT_GE(scratch_file(&sc, "b", O_RDWR, 0, nullptr, 0, why, sizeof why), 0) << why;
    EXPECT_EQ(scratch_file(&sc, "b", O_RDWR, 0, nullptr, 0, why, sizeof why), -EEXIST) << "never another's file";
    EXPECT_EQ(dir_entries(sc.dir).size(), 2u) << "the file asked twice stays";
    scratch_close(&sc);
    EXPECT_TRUE(dir_entries(base.path()).empty());
    EXPECT_EQ(open_fds(), fds) << "every descriptor closed";
    scratch_close(&sc);  // idempotent
    struct scratch zero = {};
    scratch_close(&zero);  // a zeroed scratch is closed: nothing to release, fd 0 untouched
    EXPECT_NE(fcntl(0, F_GETFD), -1);
}

// Every failure point leaves nothing behind, and a scratch that failed closes safely.
TEST(Scratch, EveryFailureLeavesNothing)
{
    ib_test::TempDir base("scratch");
    ASSERT_FALSE(base.path().empty());
    char why[512] = "";
    struct scratch sc = {};
    // bad base: missing, a file, too long
    EXPECT_EQ(scratch_open(&sc, "/nonexistent-ibench-dir", "t", 0, 0, why, sizeof why), -ENOENT);
    EXPECT_TRUE(sc.refused_input);
    EXPECT_NE(strstr(why, "No such file"), nullptr) << why;
    std::string file = base.path() + "/plain";
    close(open(file.c_str(), O_CREAT | O_WRONLY, 0600));
    EXPECT_EQ(scratch_open(&sc, file.c_str(), "t", 0, 0, why, sizeof why), -ENOTDIR);
    EXPECT_TRUE(sc.refused_input);
    unlink(file.c_str());
    std::string longer(5000, 'x');
    EXPECT_EQ(scratch_open(&sc, longer.c_str(), "t", 0, 0, why, sizeof why), -ENAMETOOLONG);
    scratch_close(&sc);
    // no space: more than the filesystem can spare
    EXPECT_EQ(scratch_open(&sc, base.path().c_str(), "t", 1ULL << 60, 0, why, sizeof why), -ENOSPC);
    EXPECT_TRUE(sc.refused_input);
    EXPECT_NE(strstr(why, "can spare only"), nullptr) << why;
    EXPECT_TRUE(dir_entries(base.path()).empty()) << "nothing made before the space check";
    scratch_close(&sc);
    // open failure after the directory exists: a name the filesystem refuses, then a plain name that is not one
    ASSERT_EQ(scratch_open(&sc, base.path().c_str(), "t", 0, 0, why, sizeof why), 0) << why;
    EXPECT_FALSE(sc.refused_input);
    std::string huge(300, 'n');  // longer than NAME_MAX
    EXPECT_EQ(scratch_file(&sc, huge.c_str(), O_RDWR, 0, nullptr, 0, why, sizeof why), -ENAMETOOLONG) << why;
    EXPECT_EQ(scratch_file(&sc, "a/b", O_RDWR, 0, nullptr, 0, why, sizeof why), -EINVAL);
    EXPECT_TRUE(dir_entries(sc.dir).empty()) << "a file that failed is not kept";
    char small[8];
    EXPECT_EQ(scratch_file(&sc, "data", O_RDWR, 0, small, sizeof small, why, sizeof why), -ENAMETOOLONG)
        << "a path cut for its caller would name another file";
    EXPECT_TRUE(dir_entries(sc.dir).empty());
    scratch_close(&sc);
    EXPECT_TRUE(dir_entries(base.path()).empty());
    EXPECT_EQ(scratch_file(&sc, "data", O_RDWR, 0, nullptr, 0, why, sizeof why), -EBADF) << "closed: no directory";
    EXPECT_TRUE(dir_entries(base.path()).empty());
}

// A caller that measures storage refuses a memory filesystem, where O_DIRECT reads and writes memory; one that only
// needs room (disk-cap) may use it.
TEST(Scratch, AMemoryFilesystemIsRefusedWhereADiskIsNeeded)
{
    ShmDir shm;
    if (shm.path.empty())
        GTEST_SKIP() << "no tmpfs at /dev/shm";
    char why[512] = "";
    struct scratch sc = {};
    EXPECT_EQ(scratch_open(&sc, shm.path.c_str(), "t", 0, SCRATCH_DISK, why, sizeof why), -ENOTSUP);
    EXPECT_FALSE(sc.refused_input) << "what the machine has, not the user's mistake";
    EXPECT_NE(strstr(why, "tmpfs"), nullptr) << why;
    EXPECT_TRUE(dir_entries(shm.path).empty());
    scratch_close(&sc);
    ASSERT_EQ(scratch_open(&sc, shm.path.c_str(), "t", 0, 0, why, sizeof why), 0) << why;
    EXPECT_TRUE(sc.memory);
    ASSERT_GE(scratch_file(&sc, "f", O_RDWR, 4096, nullptr, 0, why, sizeof why), 0) << why;
    scratch_close(&sc);
    EXPECT_TRUE(dir_entries(shm.path).empty());
}

// The directory of an ibench killed before it could close its scratch is found by the next one's stale sweep.
TEST(Scratch, AKilledOwnersDirectoryIsSweptAway)
{
    ib_test::TempDir base("scratch");
    ASSERT_FALSE(base.path().empty());
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        struct scratch sc = {};
        char why[256];
        int ok = scratch_open(&sc, base.path().c_str(), "disk-test", 0, 0, why, sizeof why) == 0 &&
                 scratch_file(&sc, "data", O_RDWR, 4096, nullptr, 0, why, sizeof why) >= 0;
        _exit(ok ? 0 : 1);  // killed, in effect: nothing closed
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    std::vector<std::string> left = dir_entries(base.path());
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(fs_private_dir_pid(left[0].c_str()), (long)pid);
    EXPECT_EQ(fs_remove_stale_dirs(base.path().c_str()), 1);
    EXPECT_TRUE(dir_entries(base.path()).empty());
}
