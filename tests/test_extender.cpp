// The scheduler extender's decisions (placement/k8s/pl_extender.h), on recorded ExtenderArgs in the shape kube-scheduler
// sends (tests/fixtures/extender/*.request.json, both forms) against golden answers (*.filter.json,
// *.prioritize.json); the decisions equal place colocate's; bad requests are 400s with one line.
// IBENCH_WRITE_GOLDEN=1 rewrites the goldens (then read them before committing).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <jansson.h>

#include "test_support.h"

extern "C" {
#include "pl_coloc.h"
#include "pl_extender.h"
}

namespace {

const std::string kDir = std::string(IBENCH_FIXTURES) + "/extender/";

std::string slurp(const std::string &path) { return ib_test::file_text(path); }

struct Ext {
    pl_extender *x = nullptr;
    Ext(bool pessimistic = true)
    {
        std::string store = kDir + "store";
        pl_extender_opts o = {}; // established false, headroom: the goldens are the old rule (--refuse uncertain
                                 // --decide headroom); the model's decisions are test_pl_wmodel's
        o.profiles = store.c_str(), o.margin = PL_COLOC_MARGIN, o.pessimistic = pessimistic, o.established = false;
        o.decide_headroom = true;
        char why[256] = "";
        EXPECT_EQ(pl_extender_new(&o, &x, why, sizeof why), 0) << why;
    }
    ~Ext() { pl_extender_free(x); }
    std::string handle(const char *verb, const std::string &body, int *status)
    {
        char *out = nullptr;
        EXPECT_EQ(pl_extender_handle(x, verb, body.data(), body.size(), &out, status), 0);
        std::string s = out ? out : "";
        free(out);
        return s;
    }
};

std::string canon(const std::string &t) { return ib_test::json_canon(t); }

void golden(const char *name, const char *verb)
{
    Ext x;
    int st = 0;
    std::string got = canon(x.handle(verb, slurp(kDir + name + ".request.json"), &st));
    EXPECT_EQ(st, 200);
    std::string path = kDir + name + "." + verb + ".json";
    if (getenv("IBENCH_WRITE_GOLDEN"))
        std::ofstream(path) << got;
    EXPECT_EQ(got, slurp(path)) << path;
}

// Full node objects: n1 (xz beside llc: safe), n2 (beside disk: unsafe, named), n3 (no tenant: fits), n4 (beside llc
// and dram), n5 (a tenant the store does not hold: failed, not guessed), n6 (no annotations, half a CPU: no room).
TEST(Extender, GoldenFilterFullNodes) { golden("filter-full", "filter"); }
TEST(Extender, GoldenPrioritizeFullNodes) { golden("filter-full", "prioritize"); }
// Node names only (nodeCacheCapable): the same nodes from the store's nodes/, and n7 which it does not hold.
TEST(Extender, GoldenFilterNodeNames) { golden("filter-names", "filter"); }
TEST(Extender, GoldenPrioritizeNodeNames) { golden("filter-names", "prioritize"); }
// A pod without a profile: every node passes unchanged, the answer says so; prioritize is neutral.
TEST(Extender, GoldenPodWithoutAProfile) { golden("filter-noprofile", "filter"); }
TEST(Extender, GoldenPodWithoutAProfilePrioritize) { golden("filter-noprofile", "prioritize"); }

// What the goldens must say, asserted directly (so a golden rewritten by mistake cannot hide it).
TEST(Extender, UnsafeNodeIsFilteredWithItsReasonAndTheSafeOneScoresTop)
{
    Ext x;
    int st;
    json_t *d = json_loads(x.handle("filter", slurp(kDir + "filter-full.request.json"), &st).c_str(), 0, nullptr);
    ASSERT_NE(d, nullptr);
    json_t *failed = json_object_get(d, "FailedNodes");
    ASSERT_TRUE(json_is_string(json_object_get(failed, "n2")));
    std::string why = json_string_value(json_object_get(failed, "n2"));
    EXPECT_EQ(why.rfind("ibench: unsafe: ", 0), 0u) << why;
    EXPECT_NE(why.find("breaks"), std::string::npos) << why;
    EXPECT_EQ(std::string(json_string_value(json_object_get(failed, "n5"))),
              "ibench: cannot judge: tenant ghost cannot be judged: ghost is not in the store");
    EXPECT_NE(std::string(json_string_value(json_object_get(failed, "n6"))).find("no room"), std::string::npos);
    EXPECT_EQ(json_object_get(failed, "n1"), nullptr);
    EXPECT_EQ(json_object_get(failed, "n3"), nullptr);
    json_decref(d);
    d = json_loads(x.handle("prioritize", slurp(kDir + "filter-full.request.json"), &st).c_str(), 0, nullptr);
    ASSERT_TRUE(json_is_array(d));
    int top = -1;
    std::string top_host;
    size_t i;
    json_t *h;
    json_array_foreach(d, i, h)
    {
        int s = (int)json_integer_value(json_object_get(h, "Score"));
        EXPECT_GE(s, 0);
        EXPECT_LE(s, PL_EXT_MAX_PRIORITY);
        if (s > top)
            top = s, top_host = json_string_value(json_object_get(h, "Host"));
    }
    EXPECT_EQ(top, PL_EXT_MAX_PRIORITY);
    EXPECT_NE(top_host, "n2");
    EXPECT_NE(top_host, "n3") << "a safe shared node before an empty one (colocate's packing)";
    json_decref(d);
}

TEST(Extender, BadRequestsAre400WithOneLine)
{
    Ext x;
    const char *bad[] = {"", "{", "[]", "{}", "{\"Pod\": 3}", "{\"Pod\": {}}", "{\"Pod\": {}, \"Nodes\": {\"items\": 3}}",
                         "{\"Pod\": {}, \"NodeNames\": [1]}", "{\"Pod\": {}, \"Nodes\": {\"items\": [{}]}}",
                         "{\"Pod\": {}, \"Pod\": {}, \"NodeNames\": []}",
                         // the fuzzer's finding: the parser's excerpt of the body holds a newline
                         "{\"Pod\": \"[\\\n\"}"};
    for (const char *b : bad) {
        int st = 0;
        std::string a = x.handle("filter", b, &st);
        EXPECT_EQ(st, 400) << b << ": " << a;
        json_t *d = json_loads(a.c_str(), 0, nullptr);
        ASSERT_NE(d, nullptr) << a;
        std::string err = json_string_value(json_object_get(d, "Error")) ? json_string_value(json_object_get(d, "Error")) : "";
        EXPECT_FALSE(err.empty()) << b;
        EXPECT_EQ(err.find('\n'), std::string::npos) << err;
        json_decref(d);
    }
    int st;
    std::string a = x.handle("bind", "{}", &st);
    EXPECT_EQ(st, 400) << a;
    // a pod naming a profile the store does not hold: 200 with Error (kube-scheduler's extender failure)
    std::string req = slurp(kDir + "filter-full.request.json");
    size_t p = req.find("\"ibench.io/profile\": \"xz\"");
    ASSERT_NE(p, std::string::npos);
    req.replace(p, strlen("\"ibench.io/profile\": \"xz\""), "\"ibench.io/profile\": \"nope\"");
    a = x.handle("filter", req, &st);
    EXPECT_EQ(st, 200);
    EXPECT_NE(a.find("the pod's profile 'nope' is not in the store"), std::string::npos) << a;
    // a path in a profile name is refused, never opened
    req.replace(req.find("\"nope\""), 6, "\"../x\"");
    a = x.handle("filter", req, &st);
    EXPECT_NE(a.find("is not a profile name"), std::string::npos) << a;
}

} // namespace

namespace {

// A reason cuts a node's name at a byte count ("node %.200s is not in the store"): a cut inside a character must not
// make the answer invalid UTF-8, hence not JSON (found by scripts/fuzz extender): the cut character's bytes become '?'.
TEST(Extender, AReasonCutInsideACharacterStaysJson)
{
    Ext x;
    std::string name = "a";
    for (int i = 0; i < 150; i++)
        name += "\xc3\xa9"; // é: byte 200 of the name is the first half of one
    std::string body = "{\"Pod\":{\"metadata\":{\"annotations\":{\"ibench.io/profile\":\"xz\"}}},\"NodeNames\":[\"" +
                       name + "\"]}";
    int st = 0;
    std::string a = x.handle(PL_EXT_VERB_FILTER, body, &st);
    EXPECT_EQ(st, 200) << a;
    json_error_t je;
    json_t *j = json_loads(a.c_str(), 0, &je);
    EXPECT_NE(j, nullptr) << je.text << ": " << a.substr(0, 300);
    json_decref(j);
    EXPECT_NE(a.find("\xc3\xa9? is not in the store"), std::string::npos) << a.substr(0, 600);
    // a 400 naming the node ("node %.200s: ..."): a one-line Error, the cut byte a '?', not an answer lost to jansson
    body = "{\"Pod\":{\"metadata\":{\"annotations\":{\"ibench.io/profile\":\"xz\"}}},\"Nodes\":{\"items\":[{"
           "\"metadata\":{\"name\":\"" + name + "\"},\"status\":{\"allocatable\":{\"cpu\":\"abc\"}}}]}}";
    char *out = nullptr;
    ASSERT_EQ(pl_extender_handle(x.x, PL_EXT_VERB_FILTER, body.data(), body.size(), &out, &st), 0);
    std::string e = out ? out : "";
    free(out);
    EXPECT_EQ(st, 400) << e;
    EXPECT_NE(e.find("\xc3\xa9?: status.allocatable.cpu: 'abc' is not a quantity"), std::string::npos) << e.substr(0, 600);
}

} // namespace
