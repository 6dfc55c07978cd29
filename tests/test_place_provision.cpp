// Provisioning advice (placement/coloc/pl_provision.h): the ranking on hand-made profiles (exact order; a skipped SoI never
// ranked; ties by name), the catalogue's strict reader, the advice's order; `ibench place provision` through the
// binary.
#include <gtest/gtest.h>
#include <jansson.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern "C" {
#include "pl_provision.h"
}
#include "test_support.h"

namespace {

struct S {
    const char *name;
    double tolerated, caused;
    int dist = 1;
    bool skipped = false;
};

struct Prof {
    struct profile p;
    explicit Prof(const std::vector<S> &sois)
    {
        profile_init(&p);
        p.name = strdup("app");
        p.sois = static_cast<struct profile_soi *>(calloc(sois.size() + 1, sizeof *p.sois));
        for (const S &d : sois) {
            struct profile_soi *s = &p.sois[p.nsois++];
            profile_soi_init(s);
            s->soi = strdup(d.name);
            if (d.skipped) {
                s->status = PROFILE_SKIPPED;
                s->reason = strdup("no other CPU shares it");
                continue;
            }
            s->status = PROFILE_MEASURED;
            s->tolerated = d.tolerated;
            s->have_caused = 1;
            s->caused.value = d.caused;
            s->caused.se = 1;
            s->caused.distinguishable = d.dist;
        }
    }
    ~Prof() { profile_free(&p); }
};

std::string write_tmp(const std::string &text)
{
    char t[] = "/tmp/ibench-catalog-XXXXXX";
    int fd = mkstemp(t);
    EXPECT_GE(fd, 0);
    close(fd);
    std::ofstream(t) << text;
    return t;
}

TEST(PlaceProvision, RanksByPressurePlusSensitivity)
{
    Prof p({{"net-bw", 100, 40},          // 0.40
            {"mem-bw", 50, 30},           // 0.30 + 0.50 = 0.80
            {"llc-cap", 90, 5, 0},        // not told apart from 0: 0 + 0.10
            {"int", 0, 0, 1, true},       // skipped: never ranked
            {"disk-bw", 60, 0},           // 0.40, ties net-bw: by name
            {"l2-cap", 100, -20}});       // negative caused: 0
    struct pl_prov r;
    char why[256];
    ASSERT_EQ(pl_provision(&p.p, nullptr, 3, &r, why, sizeof why), 0) << why;
    ASSERT_EQ(r.nres, 6u);
    ASSERT_EQ(r.nranked, 5u);
    const char *order[] = {"mem-bw", "disk-bw", "net-bw", "llc-cap", "l2-cap", "int"};
    for (unsigned i = 0; i < 6; i++)
        EXPECT_STREQ(r.res[i].soi, order[i]) << i;
    EXPECT_DOUBLE_EQ(r.res[0].score, 0.8);
    EXPECT_DOUBLE_EQ(r.res[3].pressure, 0);
    EXPECT_FALSE(r.res[5].measured);
    EXPECT_TRUE(r.res[2].candidate);
    EXPECT_FALSE(r.res[3].candidate);
    EXPECT_EQ(r.top, 3u);
    pl_prov_free(&r);
    Prof none({{"int", 0, 0, 1, true}});
    EXPECT_EQ(pl_provision(&none.p, nullptr, 3, &r, why, sizeof why), -EINVAL);
    EXPECT_STREQ(why, "app: the profile has no measured SoI");
}

TEST(PlaceProvision, CatalogueAndAdviceOrder)
{
    std::string path = write_tmp(R"({"version": 1, "baseline": "base", "types": [
      {"name": "cheap-mem", "relieves": {"mem-bw": 1.5}, "cost": 1.1},
      {"name": "dear-mem", "relieves": {"mem-bw": 1.5}, "cost": 1.3},
      {"name": "both", "relieves": {"mem-bw": 1.2, "disk-bw": 2}, "cost": 2},
      {"name": "big-mem", "relieves": {"mem-bw": 3}, "cost": 1.5},
      {"name": "unrelated", "relieves": {"fp": 9}, "cost": 1},
      {"name": "smaller", "relieves": {"mem-bw": 0.5}, "cost": 0.5}]})");
    struct pl_catalog cat;
    char why[256];
    ASSERT_EQ(pl_catalog_read(path.c_str(), &cat, why, sizeof why), 0) << why;
    Prof p({{"mem-bw", 50, 30}, {"disk-bw", 60, 0}, {"net-bw", 100, 0}});
    struct pl_prov r;
    ASSERT_EQ(pl_provision(&p.p, &cat, 2, &r, why, sizeof why), 0) << why;
    // both relieves the two top candidates; then by gain (big-mem x3), then by cost (cheap before dear)
    const char *order[] = {"both", "big-mem", "cheap-mem", "dear-mem"};
    ASSERT_EQ(r.nadv, 4u);
    for (unsigned i = 0; i < 4; i++)
        EXPECT_STREQ(cat.t[r.adv[i].type].name, order[i]) << i;
    EXPECT_EQ(r.adv[0].relieved, 2u);
    EXPECT_DOUBLE_EQ(r.adv[0].gain, 2.4);
    pl_prov_free(&r);
    pl_catalog_free(&cat);
    unlink(path.c_str());

    struct Bad {
        const char *text, *expect;
    } bads[] = {
        {R"({"version": 1, "baseline": "b", "types": []})", "types: a non-empty array expected"},
        {R"({"version": 1, "baseline": "b", "types": [{"name": "x", "relieves": {}, "cost": 0}]})",
         "types[0].cost: a number > 0 expected"},
        {R"({"version": 1, "baseline": "b", "types": [{"name": "x", "relieves": {"mem-bw": -1}, "cost": 1}]})",
         "types[0].relieves.mem-bw: a factor > 0 expected"},
        {R"({"version": 1, "baseline": "b", "types": [{"name": "x", "relieves": {}, "cost": 1, "price": 2}]})",
         "types[0]: unknown key 'price'"},
        {R"({"version": 1, "baseline": "b", "types": [{"name": "x", "relieves": {}, "cost": 1},
            {"name": "x", "relieves": {}, "cost": 1}]})", "types[1].name: 'x' named twice"},
        {R"({"version": 2, "baseline": "b", "types": []})", "version: 1 expected"},
    };
    for (auto &b : bads) {
        std::string f = write_tmp(b.text);
        EXPECT_EQ(pl_catalog_read(f.c_str(), &cat, why, sizeof why), -EINVAL) << b.text;
        EXPECT_NE(strstr(why, b.expect), nullptr) << why;
        unlink(f.c_str());
    }
}

TEST(PlaceProvisionCli, TableJsonAndBadInput)
{
    std::string prof = std::string(IBENCH_FIXTURES) + "/../../docs/data/corun/disk.json";
    std::string cat = std::string(IBENCH_FIXTURES) + "/../../examples/catalog.json";
    ib_test::Proc p;
    ASSERT_TRUE(p.start({"place", "provision", prof, "--catalog", cat, "--json"}, {}));
    ASSERT_TRUE(p.finish(30));
    ASSERT_EQ(p.exit_code(), 0) << p.err;
    json_error_t e;
    json_t *doc = json_loads(p.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text;
    json_t *res = json_object_get(doc, "resources");
    ASSERT_GT(json_array_size(res), 0u);
    double prev = 3;
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r)
    {
        double s = json_real_value(json_object_get(r, "score"));
        EXPECT_LE(s, prev); // ranked
        prev = s;
    }
    EXPECT_GT(json_array_size(json_object_get(doc, "advice")), 0u);
    json_decref(doc);
    ib_test::Proc q;
    ASSERT_TRUE(q.start({"place", "provision", prof, "--catalog", "/nonexistent.json"}, {}));
    ASSERT_TRUE(q.finish(30));
    EXPECT_EQ(q.exit_code(), 2);
    EXPECT_EQ(q.out, "");
    ib_test::Proc t;
    ASSERT_TRUE(t.start({"place", "provision", prof, "--top", "0"}, {}));
    ASSERT_TRUE(t.finish(30));
    EXPECT_EQ(t.exit_code(), 2);
    EXPECT_EQ(t.err, "ibench place provision: --top '0': a whole number in 1-64 expected\n");
}

} // namespace
