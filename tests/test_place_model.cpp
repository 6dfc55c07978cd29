// The placement model (placement/pl_model.h, seed 002 §4-5): the strict CSV of performance vectors, k-means++ and
// the silhouette, k auto on a synthetic corpus of 7 clusters, leave-one-out prediction with the iterative method
// (Algorithm 1), its rules for a measurement outside every interval, packing on a synthetic topology, the model
// file, and `ibench place model` / `ibench place pack` through the binary.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern "C" {
#include "pl_model.h"
}

namespace {

std::string parse_err(const std::string &text)
{
    struct pl_vectors v;
    char why[512] = "";
    int rc = pl_vectors_parse(text.c_str(), &v, why, sizeof why);
    EXPECT_NE(rc, 0) << text;
    EXPECT_EQ(strchr(why, '\n'), nullptr);
    return why;
}

TEST(PlaceModel, CsvParsesVectorsAndLabels)
{
    struct pl_vectors v;
    char why[256];
    ASSERT_EQ(pl_vectors_parse("workload, p1,p2 ,p3\r\n\nw1,1,0.8,0.7\nw2,1.0,1.25,2e-1\n", &v, why, sizeof why), 0)
        << why;
    EXPECT_EQ(v.n, 2u);
    EXPECT_EQ(v.np, 3u);
    EXPECT_STREQ(v.pid[1], "p2");
    EXPECT_STREQ(v.name[1], "w2");
    EXPECT_DOUBLE_EQ(v.v[1 * 3 + 2], 0.2);
    EXPECT_EQ(v.label, nullptr);
    pl_vectors_free(&v);
    ASSERT_EQ(pl_vectors_parse("workload,a,b,label\nx,1,2,fast\ny,1,3,slow\n", &v, why, sizeof why), 0) << why;
    EXPECT_EQ(v.np, 2u);
    ASSERT_NE(v.label, nullptr);
    EXPECT_STREQ(v.label[1], "slow");
    pl_vectors_free(&v);
}

TEST(PlaceModel, CsvRefusesBadInputWithLineAndColumn)
{
    EXPECT_EQ(parse_err(""), "empty file: no header");
    EXPECT_EQ(parse_err("\n  \n"), "empty file: no header");
    EXPECT_EQ(parse_err("workload,a,b\n"), "no workload rows after the header");
    EXPECT_EQ(parse_err("name,a,b\nw,1,2\n"), "line 1 column 1: the header must start with 'workload', not 'name'");
    EXPECT_EQ(parse_err("workload\nw\n"), "line 1: the header names no placement");
    EXPECT_EQ(parse_err("workload,a,a\nw,1,2\n"), "line 1 column 3: placement 'a' named twice");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,x2\n"), "line 2 column 3: 'x2' is not a number");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,\n"), "line 2 column 3: '' is not a number");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,nan\n"), "line 2 column 3: 'nan' is not a number");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,-1\n"), "line 2 column 3: -1 is not a positive performance");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,2\nv,1\n"), "line 3: 2 columns, the header has 3");
    EXPECT_EQ(parse_err("workload,a,b\nw,1,2\n\nw,1,3\n"), "line 4 column 1: workload 'w' named twice");
    EXPECT_EQ(parse_err("workload,a,label\nw,1,\n"), "line 2 column 3: empty label");
}

} // namespace
