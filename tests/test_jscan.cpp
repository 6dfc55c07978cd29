// The extender's skip-scanner (placement/k8s/pl_jscan.h) agrees with jansson on what is JSON: the same texts accepted
// and refused, over hand-picked edge cases (strings, escapes, surrogates, UTF-8, numbers, structure, nesting) and
// over random mutations of a Node object; and the extender refuses a malformed part it skips (a 400, not a pass).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <jansson.h>

extern "C" {
#include "pl_extender.h"
#include "pl_jscan.h"
}

namespace {

bool jansson_ok(const std::string &t)
{
    json_t *v = json_loadb(t.data(), t.size(), JSON_DECODE_ANY, nullptr);
    json_decref(v);
    return v != nullptr;
}

bool jscan_ok(const std::string &t)
{
    jscan s;
    jscan_init(&s, t.data(), t.size());
    return jscan_value(&s, 0) == 0 && jscan_finish(&s) == 0;
}

TEST(Jscan, AgreesWithJanssonOnEdgeCases)
{
    const std::vector<std::string> cases = {
        "{}", "[]", "{\"a\":1}", "{\"a\":1,}", "[1,]", "[,1]", "{,}", "{\"a\" 1}", "{\"a\":}", "{1:2}", "[1 2]",
        "\"x\"", "\"\\u0041\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83dx\"",
        "\"\\u0000\"", "\"\\x\"", "\"\\u12\"", "\"\\uzzzz\"", "\"a\tb\"", "\"a\nb\"", "\"\x7f\"", "\"\xc3\xa9\"",
        "\"\xc3\"", "\"\xc0\x80\"", "\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
        "\"\xf0\x9f\x98\x80\"", "\"\xff\"", "\"unterminated", "0", "-0", "01", "1.", "1.5", ".5", "1e5", "1E+5",
        "1e", "-", "--1", "1e-", "true", "tru", "false", "null", "nul", "[true,false,null]", " {} ", "{} x",
        "{}{}", "", " ", "[[[[[]]]]]", "{\"a\":{\"b\":[1,{\"c\":\"d\"}]}}", "\"\\/\"", "\"\\b\\f\\n\\r\\t\"",
        "[1,2,3", "{\"a\":1", "[\"a\",\"b\"]", "{\"k\":\"v\",\"k2\":[]}", "\"\\\"\"", "\"\\\\\"",
        std::string("\"a\0b\"", 5), std::string(600, '[') + std::string(600, ']'),
        std::string(3000, '[') + std::string(3000, ']'), "1e400", "-1e400", "1e-400", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "123456789012345678901234567890",
        "1.5e308", "0." + std::string(100, '1') + "e10", std::string(70, '1') + ".5",
    };
    for (const std::string &c : cases)
        EXPECT_EQ(jscan_ok(c), jansson_ok(c)) << "'" << c.substr(0, 60) << "'";
}

TEST(Jscan, AgreesWithJanssonOnMutatedNodes)
{
    const std::string node =
        "{\"metadata\":{\"name\":\"n-1\",\"annotations\":{\"ibench.io/tenants\":\"[\\\"xz\\\"]\"}},"
        "\"status\":{\"allocatable\":{\"cpu\":\"15\",\"memory\":\"60Gi\"},\"images\":[{\"names\":"
        "[\"registry.example.com/a@sha256:0123456789abcdef\",\"r/a:v1.2\"],\"sizeBytes\":10007919}],"
        "\"ok\":true,\"x\":null,\"n\":-1.5e3}}";
    ASSERT_TRUE(jansson_ok(node));
    ASSERT_TRUE(jscan_ok(node));
    std::mt19937 rng(29);
    const char alphabet[] = "{}[]\",:\\u0aeE.-+ \t\n\x01\x7f\x80\xc3\xa9\xed\xff";
    unsigned disagree = 0, refused = 0;
    for (int i = 0; i < 100000; i++) {
        std::string t = node;
        for (int k = 1 + (int)(rng() % 3); k > 0; k--) {
            size_t at = rng() % t.size();
            char c = alphabet[rng() % (sizeof alphabet - 1)];
            switch (rng() % 3) {
            case 0: t[at] = c; break;
            case 1: t.insert(t.begin() + (long)at, c); break;
            default: t.erase(at, 1);
            }
        }
        bool a = jscan_ok(t), b = jansson_ok(t);
        refused += !b;
        if (a != b && disagree++ < 5)
            ADD_FAILURE() << "jscan " << a << ", jansson " << b << ": " << t;
    }
    EXPECT_EQ(disagree, 0u);
    EXPECT_GT(refused, 25000u); // the mutations do break most texts: the comparison is not of valid texts only
}

TEST(Jscan, KeysMatchWithoutCaseAndThroughEscapes)
{
    auto is = [](const std::string &quoted, const char *want) { // the key as it stands in a text, quotes and all
        return jscan_key_is(quoted.c_str() + 1, quoted.size() - 2, want);
    };
    EXPECT_TRUE(is("\"metadata\"", "metadata"));
    EXPECT_TRUE(is("\"MetaData\"", "metadata"));
    EXPECT_TRUE(is("\"met\\u0061data\"", "metadata"));
    EXPECT_FALSE(is("\"metadat\"", "metadata"));
    EXPECT_FALSE(is("\"metadatas\"", "metadata"));
    EXPECT_FALSE(is("\"met\\u0061datas\"", "metadata"));
}

std::string ask(pl_extender *x, const std::string &body, int *status)
{
    char *out = nullptr;
    EXPECT_EQ(pl_extender_handle(x, PL_EXT_VERB_FILTER, body.data(), body.size(), &out, status), 0);
    std::string s = out ? out : "";
    free(out);
    return s;
}

TEST(Jscan, TheExtenderRefusesAMalformedPartItSkips)
{
    pl_extender_opts o = {};
    std::string store = std::string(IBENCH_FIXTURES) + "/extender/store";
    o.profiles = store.c_str(), o.margin = 5, o.pessimistic = true;
    pl_extender *x = nullptr;
    char why[256];
    ASSERT_EQ(pl_extender_new(&o, &x, why, sizeof why), 0) << why;
    const std::string pod = "{\"Pod\":{\"metadata\":{\"annotations\":{\"ibench.io/profile\":\"xz\"}}},";
    const std::string good = "{\"metadata\":{\"name\":\"a\"},\"status\":{\"images\":[{\"names\":[\"r/x:1\"]}]}}";
    int st = 0;
    std::string a = ask(x, pod + "\"Nodes\":{\"items\":[" + good + "]}}", &st);
    EXPECT_EQ(st, 200) << a;
    EXPECT_NE(a.find("\"names\":[\"r/x:1\"]"), std::string::npos) << "the kept node echoed as sent: " << a;
    for (const std::string &bad : {std::string("{\"metadata\":{\"name\":\"a\"},\"status\":{\"images\":[\"\\q\"]}}"),
                                   std::string("{\"metadata\":{\"name\":\"a\"},\"status\":{\"images\":[\"\xff\"]}}"),
                                   std::string("{\"metadata\":{\"name\":\"a\"},\"status\":{\"images\":[1,]}}"),
                                   std::string("{\"metadata\":{\"name\":\"a\",\"annotations\":{\"k\":1,\"k\":2}}}")}) {
        a = ask(x, pod + "\"Nodes\":{\"items\":[" + bad + "]}}", &st);
        EXPECT_EQ(st, 400) << bad << " -> " << a;
        EXPECT_EQ(a.find('\n'), std::string::npos);
    }
    a = ask(x, pod + "\"Nodes\":{\"items\":[" + good + "]},\"Nodes\":{\"items\":[]}}", &st);
    EXPECT_EQ(st, 400) << a;
    pl_extender_free(x);
}

// A Node's state (name, tenants annotation, allocatable) read from the scanned text decides exactly as the same Node
// parsed with jansson: random requests of nodes built from usual and unusual parts (escapes, duplicates, wrong
// types, bad quantities, lists that do not parse), answered by two extenders, one reading every Node through
// jansson (general_only); their answers must be the same bytes, and both paths must have been taken.
TEST(Jscan, NodeStateReadFromTheTextDecidesAsJanssonDoes)
{
    std::string store = std::string(IBENCH_FIXTURES) + "/extender/store";
    pl_extender_opts o = {};
    o.profiles = store.c_str(), o.margin = 5, o.pessimistic = true, o.established = true;
    pl_extender *fast = nullptr, *slow = nullptr;
    char why[256];
    ASSERT_EQ(pl_extender_new(&o, &fast, why, sizeof why), 0) << why;
    o.general_only = true;
    ASSERT_EQ(pl_extender_new(&o, &slow, why, sizeof why), 0) << why;
    const std::vector<std::string> names = {"\"n-%\"", "\"n\\u002d%\"", "\"n\\/%\"", "\"N-%\""};
    const std::vector<std::string> tenants = { // the annotation's value, as it stands in the text
        "\"[\\\"xz\\\", \\\"memcached\\\"]\"", "\"[\\\"xz\\\"]\"", "\"[\\\"dram\\\",\\\"llc\\\",\\\"redis\\\"]\"",
        "\"[]\"", "\"[\\\"nosuch\\\"]\"", "\"[1]\"", "\"[\\\"x\\\\u007a\\\"]\"", "\"{}\"", "\"[\"", "\"\\\"xz\\\"\"",
        "\" [ \\\"disk\\\" ] \"", "\"[\\\"xz\\\"] x\"", "1", "null", "\"[\\\"xz\\\",]\"", "\"[\\\"x\\u007a\\\"]\""};
    const std::vector<std::string> extra = { // more of annotations
        "", ",\"other\":\"1\"", ",\"ibench.io/tenants\":\"[]\"", ",\"ibench.io\\/tenants\":\"[\\\"xz\\\"]\"",
        ",\"k\":{\"a\":1}", ",\"k\":\"1\",\"k\":\"2\""};
    const std::vector<std::string> room = { // status.allocatable
        "{\"cpu\":\"15\",\"memory\":\"60Gi\"}", "", "{\"cpu\":\"abc\"}", "{\"cpu\":15}", "{\"cpu\":\"1\",\"cpu\":\"2\"}",
        "{\"memory\":\"-3\"}", "{\"cpu\":null}", "{\"CPU\":\"4\"}", "{\"cpu\":\"\\u0031\"}", "{\"cpu\":\"500m\"}",
        "{\"memory\":\"1e400\",\"cpu\":\"x\"}", "[]", "\"15\""};
    std::mt19937 rng(30);
    // the usual part (the first of each list) three times in four, any part else
    auto pick = [&](const std::vector<std::string> &v) { return v[rng() % 4 ? 0 : rng() % v.size()]; };
    unsigned same = 0, answered = 0;
    for (int r = 0; r < 300; r++) {
        std::string body = "{\"Pod\":{\"metadata\":{\"uid\":\"u\",\"annotations\":{\"ibench.io/profile\":\"" +
                           std::string(rng() % 2 ? "xz" : "memcached") + "\"}}},\"Nodes\":{\"items\":[";
        for (int n = 0, nn = 1 + (int)(rng() % 6); n < nn; n++) {
            std::string nm = pick(names);
            nm.replace(nm.find('%'), 1, std::to_string(n));
            std::string ann = rng() % 8 ? "{\"ibench.io/tenants\":" + pick(tenants) + pick(extra) + "}"
                                        : (rng() % 2 ? "[]" : "{}");
            std::string rm = pick(room);
            body += std::string(n ? "," : "") + "{\"metadata\":{\"name\":" + nm + ",\"annotations\":" + ann +
                    "},\"status\":{" + (rm.empty() ? "" : "\"allocatable\":" + rm + ",") +
                    "\"images\":[{\"names\":[\"r/x:1\"],\"sizeBytes\":1}]}}";
        }
        body += "]}}";
        for (const char *verb : {PL_EXT_VERB_FILTER, PL_EXT_VERB_PRIORITIZE}) {
            char *a = nullptr, *b = nullptr;
            int sa = 0, sb = 0;
            ASSERT_EQ(pl_extender_handle(fast, verb, body.data(), body.size(), &a, &sa), 0);
            ASSERT_EQ(pl_extender_handle(slow, verb, body.data(), body.size(), &b, &sb), 0);
            EXPECT_EQ(sa, sb) << verb << ": " << body;
            EXPECT_STREQ(a, b) << verb << ": " << body;
            same += sa == sb && a && b && !strcmp(a, b);
            answered += sa == 200;
            free(a), free(b);
        }
    }
    EXPECT_EQ(same, 600u);
    EXPECT_GT(answered, 200u) << "most requests are decided, not refused as a whole";
    pl_extender_stats fs, ss;
    pl_extender_get_stats(fast, &fs);
    pl_extender_get_stats(slow, &ss);
    EXPECT_GT(fs.nodes_read[0], 200u) << "the usual nodes were read from the text";
    EXPECT_GT(fs.nodes_read[1], 200u) << "the unusual ones went to jansson";
    EXPECT_EQ(ss.nodes_read[0], 0u);
    pl_extender_free(fast);
    pl_extender_free(slow);
}

} // namespace
