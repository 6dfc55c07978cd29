// test_support.h - small fixtures the GoogleTest binaries share.
#ifndef IB_TEST_SUPPORT_H
#define IB_TEST_SUPPORT_H
#include <ftw.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

namespace ib_test {

// A fresh directory under /tmp ("/tmp/ibench_test_<tag>.XXXXXX"), removed with everything in it when the object
// goes. path() is empty if it could not be made.
class TempDir {
public:
    explicit TempDir(const char *tag)
    {
        std::string t = std::string("/tmp/ibench_test_") + tag + ".XXXXXX";
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

}  // namespace ib_test

#endif
