// Fleet and arrivals files (placement/coloc/pl_fleet.h), `ibench place colocate` (exact decisions on a small fleet of the
// profiles recorded here) and `place simulate --fleet/--arrivals/--policy both/--plot` through the binary.
#include <gtest/gtest.h>
#include <jansson.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern "C" {
#include "pl_fleet.h"
}
#include "test_support.h"

namespace {

const std::string kExamples = std::string(IBENCH_FIXTURES) + "/../../examples/fleet";
const std::string kCorun = std::string(IBENCH_FIXTURES) + "/../../docs/data/corun";

// A file in a private temporary directory, removed with it.
struct TmpDir {
    std::string dir;
    TmpDir()
    {
        char t[] = "/tmp/ibench-fleet-XXXXXX";
        dir = mkdtemp(t);
    }
    ~TmpDir()
    {
        std::string cmd = "rm -rf " + dir;
        EXPECT_EQ(system(cmd.c_str()), 0);
    }
    std::string write(const std::string &name, const std::string &text)
    {
        std::string p = dir + "/" + name;
        std::ofstream(p) << text;
        return p;
    }
};

int read_fleet(const std::string &path, std::string *why)
{
    struct pl_fleet fl;
    char w[512] = "";
    int rc = pl_fleet_read(path.c_str(), &fl, w, sizeof w);
    if (rc == 0)
        pl_fleet_free(&fl);
    *why = w;
    return rc;
}

TEST(PlaceFleet, ReadsMachinesAndPlacesTenants)
{
    struct pl_fleet fl;
    char why[512] = "";
    ASSERT_EQ(pl_fleet_read((kExamples + "/fleet.json").c_str(), &fl, why, sizeof why), 0) << why;
    ASSERT_EQ(fl.f.nm, 3u);
    EXPECT_STREQ(fl.f.m[0].name, "a");
    EXPECT_EQ(fl.f.m[0].cpus, 8u);
    EXPECT_DOUBLE_EQ(fl.f.m[0].mem, 32.0 * (1 << 30));
    EXPECT_EQ(fl.ntenants, 2u);
    EXPECT_EQ(fl.f.m[0].ntenants, 1u);
    EXPECT_DOUBLE_EQ(fl.f.m[0].cpu_used, 2);
    EXPECT_EQ(fl.f.app[fl.f.m[1].tenant[0]].machine, 1);
    EXPECT_STREQ(fl.f.app[fl.f.m[1].tenant[0]].p->name, "redis");
    ASSERT_EQ(pl_fleet_read_arrivals((kExamples + "/arrivals.json").c_str(), &fl, why, sizeof why), 0) << why;
    EXPECT_EQ(fl.f.napps, 2u + 24u);
    EXPECT_EQ(fl.nprof, 6u); // each profile file read once
    pl_fleet_free(&fl);
}

TEST(PlaceFleet, RefusesWithOneLineNamingTheField)
{
    TmpDir t;
    std::string prof = kCorun + "/xz.json", why;
    struct Case {
        const char *text, *expect;
        int rc = -EINVAL;
    } cases[] = {
        {"{\"version\": 1, \"machines\": []}", "machines: a non-empty array expected"},
        {"{\"version\": 2, \"machines\": [{\"name\": \"a\", \"cpus\": 1, \"memory_gib\": 1}]}", "version: 1 expected"},
        {"{\"version\": 1, \"machines\": [{\"name\": \"a\", \"cpus\": 1, \"memory_gib\": 1, \"cpu\": 4}]}",
         "machines[0]: unknown key 'cpu'"},
        {"{\"version\": 1, \"machines\": [{\"name\": \"a\", \"cpus\": 0, \"memory_gib\": 1}]}",
         "machines[0].cpus: a whole number in 1-65536 expected"},
        {"{\"version\": 1, \"machines\": [{\"name\": \"a\", \"cpus\": 1, \"memory_gib\": 1}, {\"name\": \"a\", "
         "\"cpus\": 1, \"memory_gib\": 1}]}",
         "machines[1].name: 'a' names machines[0] too"},
        {"{\"version\": 1, \"machines\": [{\"name\": \"a\", \"cpus\": 2, \"memory_gib\": 1, \"tenants\": "
         "[{\"profile\": \"PROF\", \"cpus\": 3, \"memory_gib\": 1}]}]}",
         "machines[0].tenants[0]: the tenants need more than a's 2 CPUs and 1 GiB"},
        {"{\"version\": 1, \"machines\": [{\"name\": \"a\", \"cpus\": 2, \"memory_gib\": 1, \"tenants\": "
         "[{\"profile\": \"nope.json\", \"cpus\": 1, \"memory_gib\": 1}]}]}",
         "nope.json", -ENOENT},
        {"{\"version\": 1, \"machines\": ", "end of file"},
    };
    for (auto &c : cases) {
        std::string text = c.text;
        size_t at = text.find("PROF");
        if (at != std::string::npos)
            text.replace(at, 4, prof);
        std::string p = t.write("f.json", text);
        EXPECT_EQ(read_fleet(p, &why), c.rc) << text;
        EXPECT_NE(why.find(c.expect), std::string::npos) << why;
        EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    }
    struct pl_fleet fl;
    char w[512] = "";
    ASSERT_EQ(pl_fleet_read((kExamples + "/machines.json").c_str(), &fl, w, sizeof w), 0) << w;
    std::string arr = t.write("a.json", "{\"version\": 1, \"applications\": [{\"profile\": \"" + prof +
                                            "\", \"arrival\": 5, \"work_s\": 10, \"cpus\": 1, \"memory_gib\": 1}, "
                                            "{\"profile\": \"" + prof +
                                            "\", \"arrival\": 4, \"work_s\": 10, \"cpus\": 1, \"memory_gib\": 1}]}");
    EXPECT_EQ(pl_fleet_read_arrivals(arr.c_str(), &fl, w, sizeof w), -EINVAL);
    EXPECT_NE(strstr(w, "applications[1].arrival: 4 is before the one above (5): sort by arrival"), nullptr) << w;
    pl_fleet_free(&fl);
}

struct CliRun {
    int code = -1;
    std::string out, err;
};

CliRun ibench(const std::vector<std::string> &args)
{
    ib_test::Proc p;
    CliRun r;
    std::vector<std::string> a = {"place"};
    a.insert(a.end(), args.begin(), args.end());
    EXPECT_TRUE(p.start(a, {}));
    EXPECT_TRUE(p.finish(60)) << "ibench place hung";
    r.code = p.exit_code();
    r.out = p.out;
    r.err = p.err;
    return r;
}

TEST(PlaceColocate, ExactDecisionsAndReasons)
{
    std::string fleet = kExamples + "/fleet.json";
    // optimistic: memcached is safe beside redis on b (not beside disk on a, whose disk-bw it presses), and b is
    // fuller than the empty c; xz then goes to b too: a and b are both safe, b the fuller
    CliRun r = ibench({"colocate", "--fleet", fleet, "--unknown", "optimistic", "--refuse", "uncertain", "--json",
                       "--decide", "headroom",
                       "--profiles", kCorun + "/memcached.json", kCorun + "/xz.json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_error_t e;
    json_t *doc = json_loads(r.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text;
    json_t *d = json_object_get(doc, "decisions");
    ASSERT_EQ(json_array_size(d), 2u);
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(d, 0), "machine")), "b");
    json_t *cand = json_object_get(json_array_get(d, 0), "candidates");
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(cand, 0), "verdict")), "unsafe");
    EXPECT_NE(strstr(json_string_value(json_object_get(json_array_get(cand, 0), "why")), "disk-bw (memcached breaks disk"),
              nullptr);
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(cand, 1), "verdict")), "safe");
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(d, 1), "machine")), "b");
    EXPECT_STREQ(json_string_value(json_object_get(doc, "decide")), "headroom");
    json_decref(doc);

    // the model (said in the JSON and the header, which names no unknown rule: the model reads none), refusing only
    // established breaks: memcached's disk-bw beside disk is uncertain on a, redis on b is safe, b the fuller
    r = ibench({"colocate", "--fleet", fleet, "--json", "--refuse", "established", "--profiles",
                kCorun + "/memcached.json"});
    ASSERT_EQ(r.code, 0) << r.err;
    doc = json_loads(r.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text;
    EXPECT_STREQ(json_string_value(json_object_get(doc, "decide")), "model");
    d = json_object_get(doc, "decisions");
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(d, 0), "machine")), "b");
    cand = json_object_get(json_array_get(d, 0), "candidates");
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(cand, 0), "verdict")), "uncertain");
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(cand, 1), "verdict")), "safe");
    json_decref(doc);
    // the default (--refuse likely): on a, memcached's point prediction is under its QoS line: refused there
    r = ibench({"colocate", "--fleet", fleet, "--json", "--profiles", kCorun + "/memcached.json"});
    ASSERT_EQ(r.code, 0) << r.err;
    doc = json_loads(r.out.c_str(), 0, &e);
    ASSERT_NE(doc, nullptr) << e.text;
    EXPECT_STREQ(json_string_value(json_object_get(doc, "refuse")), "likely");
    cand = json_object_get(json_array_get(json_object_get(doc, "decisions"), 0), "candidates");
    EXPECT_STREQ(json_string_value(json_object_get(json_array_get(cand, 0), "verdict")), "unsafe");
    json_decref(doc);
    r = ibench({"colocate", "--fleet", fleet, "--refuse", "uncertain", "--profiles", kCorun + "/memcached.json"});
    EXPECT_NE(r.out.find("(interference policy, deciding by the model, refusing uncertain too): 1 placed"),
              std::string::npos) << r.out;

    // pessimistic, refusing every negative headroom (the old default): memcached takes the empty c (unsafe
    // beside disk and redis); dram:2:8 then fits nowhere safely, and waits with every machine's reason
    r = ibench({"colocate", "--fleet", fleet, "--refuse", "uncertain", "--decide", "headroom", "--profiles",
                kCorun + "/memcached.json",
                kCorun + "/dram.json:2:8"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("memcached (1 CPUs, 1.0 GiB): -> c"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 placed, 1 wait"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("dram (2 CPUs, 8.0 GiB): waits"), std::string::npos) << r.out;
    // the default refuses only established breaks: none of those refusals was beyond the figures' se, so a and b
    // are uncertain (said why), memcached still takes the empty c before them, and dram no longer waits
    r = ibench({"colocate", "--fleet", fleet, "--decide", "headroom", "--profiles", kCorun + "/memcached.json",
                kCorun + "/dram.json:2:8"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("refusing established breaks only): 2 placed, 0 wait"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("memcached (1 CPUs, 1.0 GiB): -> c"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  b          uncertain no break established beyond the profiles' uncertainty; uncertain: "
                         "disk-cap (memcached: 47.8 caused as counted > 18.8 tolerated - 5 margin, but 0.0 established"),
              std::string::npos) << r.out;
    r = ibench({"colocate", "--fleet", fleet, "--refuse", "maybe", "--profiles", kCorun + "/memcached.json"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibench place colocate: --refuse 'maybe': likely, established or uncertain expected\n");
    // least-loaded sees only CPU: the empty c
    r = ibench({"colocate", "--fleet", fleet, "--policy", "least-loaded", "--profiles", kCorun + "/dram.json:2:8"});
    EXPECT_NE(r.out.find("dram (2 CPUs, 8.0 GiB): -> a"), std::string::npos) << r.out; // a and b tie at 6 free: name

    r = ibench({"colocate", "--fleet", fleet});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibench place colocate: --profiles FILE... expected (the applications to place)\n");
    r = ibench({"colocate", "--fleet", fleet, "--profiles", kCorun + "/xz.json:0"});
    EXPECT_EQ(r.code, 2);
    r = ibench({"colocate", "--fleet", "/nonexistent.json", "--profiles", kCorun + "/xz.json"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
}

TEST(PlaceSimulateFiles, DeterministicBothPoliciesAndPlot)
{
    std::string m = kExamples + "/machines.json", a = kExamples + "/arrivals.json";
    CliRun r1 = ibench({"simulate", "--fleet", m, "--arrivals", a, "--policy", "interference", "--seed", "4", "--json"});
    CliRun r2 = ibench({"simulate", "--fleet", m, "--arrivals", a, "--policy", "interference", "--seed", "4", "--json"});
    ASSERT_EQ(r1.code, 0) << r1.err;
    EXPECT_EQ(r1.out, r2.out);
    EXPECT_NE(r1.out.find("\"apps\": 24"), std::string::npos) << r1.out;
    CliRun both = ibench({"simulate", "--fleet", m, "--arrivals", a, "--policy", "both", "--seed", "4"});
    EXPECT_EQ(both.code, 0) << both.err;
    EXPECT_NE(both.out.find("policy least-loaded"), std::string::npos);
    EXPECT_NE(both.out.find("policy interference"), std::string::npos);
    CliRun bad = ibench({"simulate", "--fleet", kExamples + "/fleet.json", "--arrivals", a, "--policy", "both",
                         "--seed", "1"});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("simulate starts from empty machines"), std::string::npos) << bad.err;
    bad = ibench({"simulate", "--fleet", m, "--policy", "both", "--seed", "1"});
    EXPECT_EQ(bad.err, "ibench place simulate: --fleet and --arrivals go together\n");
    bad = ibench({"simulate", "--scenario", "ibench-200x40", "--policy", "both", "--seed", "1", "--json"});
    EXPECT_EQ(bad.code, 2);
    bad = ibench({"simulate", "--scenario", "ibench-200x40", "--policy", "both", "--seed", "1", "--plot", "x.gif"});
    EXPECT_EQ(bad.code, 2);
    if (system("command -v gnuplot >/dev/null") == 0) {
        TmpDir t;
        std::string png = t.dir + "/m.png";
        CliRun p = ibench({"simulate", "--fleet", m, "--arrivals", a, "--policy", "both", "--seed", "4", "--plot", png});
        EXPECT_EQ(p.code, 0) << p.err;
        EXPECT_EQ(access(png.c_str(), R_OK), 0);
    }
}

} // namespace
