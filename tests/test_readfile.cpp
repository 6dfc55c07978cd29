// test_readfile.cpp - common/readfile.h: a small file into a buffer (cut at its length), and a file of any length up
// to a bound into memory (grown past its first 4 KiB, refused past the bound, nothing left allocated on an error).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "readfile.h"
#include "test_support.h"

using ib_test::TempDir;

namespace {

std::string write_file(const TempDir &d, const char *name, const std::string &text)
{
    const std::string path = d.path() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

TEST(ReadFile, SmallFileIsCutAtTheBuffer)
{
    TempDir d("readfile");
    const std::string p = write_file(d, "small", "0123456789");
    char buf[5];
    ASSERT_EQ(ib_read_small(p.c_str(), buf, sizeof(buf)), 0);
    EXPECT_STREQ(buf, "0123");
    EXPECT_EQ(ib_read_small((d.path() + "/none").c_str(), buf, sizeof(buf)), -ENOENT);
}

TEST(ReadFile, AllOfAFileGrowsPastItsFirstBlockUpToTheBound)
{
    TempDir d("readfile");
    std::string big;
    for (int i = 0; i < 3000; i++)
        big += std::to_string(i) + "\n"; // 13 890 bytes: the buffer doubles twice
    const std::string p = write_file(d, "big", big);
    char *t = nullptr;
    size_t n = 0;
    ASSERT_EQ(ib_read_all(p.c_str(), 1 << 20, &t, &n), 0);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(n, big.size());
    EXPECT_EQ(std::string(t), big);
    free(t);
    // longer than the bound: refused, nothing handed back
    t = reinterpret_cast<char *>(1);
    EXPECT_EQ(ib_read_all(p.c_str(), 8192, &t, &n), -EFBIG);
    EXPECT_EQ(t, nullptr);
    // exactly the bound is not longer than it
    const std::string edge = write_file(d, "edge", std::string(8192, 'x'));
    ASSERT_EQ(ib_read_all(edge.c_str(), 8192, &t, nullptr), 0);
    EXPECT_EQ(strlen(t), 8192u);
    free(t);
    // empty, and missing
    const std::string e = write_file(d, "empty", "");
    ASSERT_EQ(ib_read_all(e.c_str(), 16, &t, &n), 0);
    EXPECT_EQ(n, 0u);
    EXPECT_STREQ(t, "");
    free(t);
    EXPECT_EQ(ib_read_all((d.path() + "/none").c_str(), 16, &t, &n), -ENOENT);
    EXPECT_EQ(t, nullptr);
}

} // namespace
