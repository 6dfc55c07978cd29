// test_junit.cpp - `ibench validate`'s JUnit XML (cli/junit.c): exact counts and elements on a hand-written validate
// document (fixtures/junit/validate.json) under every --fail-on bit, escaping, an SoI without checks, unknown verdicts,
// long overlap names, refusals with one line, and the output validated against Jenkins' junit-10.xsd by xmllint.
#include <gtest/gtest.h>

#include <jansson.h>
#include <cerrno>
#include <string>

#include "test_support.h"

extern "C" {
#include "junit.h"
}

using ib_test::sh;

namespace {

const std::string kFixture = std::string(IBENCH_FIXTURES) + "/junit/validate.json";
const std::string kXsd = std::string(IBENCH_FIXTURES) + "/junit/junit-10.xsd";

json_t *load(const std::string &path)
{
    json_error_t e;
    json_t *d = json_load_file(path.c_str(), 0, &e);
    EXPECT_NE(d, nullptr) << path << ":" << e.line << ": " << e.text;
    return d;
}

json_t *parse(const char *text)
{
    json_error_t e;
    json_t *d = json_loads(text, JSON_ALLOW_NUL, &e);
    EXPECT_NE(d, nullptr) << e.text << ": " << text;
    return d;
}

// The XML for doc, asserting success.
std::string junit(const json_t *doc, unsigned fail_on)
{
    char *xml = nullptr, why[256] = "";
    int rc = junit_from_validate(doc, fail_on, &xml, why, sizeof(why));
    EXPECT_EQ(rc, 0) << why;
    std::string r = xml ? xml : "";
    free(xml);
    return r;
}

std::string fixture_xml(unsigned fail_on)
{
    json_t *d = load(kFixture);
    std::string x = d ? junit(d, fail_on) : "";
    json_decref(d);
    return x;
}

size_t count(const std::string &s, const std::string &needle)
{
    size_t n = 0;
    for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size()))
        n++;
    return n;
}

// The <testsuite ...> start tag, whole.
std::string suite_tag(const std::string &xml)
{
    size_t a = xml.find("<testsuite "), b = a == std::string::npos ? a : xml.find('>', a);
    return b == std::string::npos ? "" : xml.substr(a, b - a + 1);
}

// xmllint's verdict on xml against the schema: its exit status (0 valid), its output in *out.
int xmllint(const std::string &xml, std::string *out)
{
    ib_test::TempDir dir("junit");
    std::string path = dir.path() + "/validate.xml";
    EXPECT_TRUE(ib_test::write_file(path, xml));
    int rc;
    *out = sh("xmllint --noout --schema " + kXsd + " " + path, &rc);
    return rc;
}

// One refusal: -EINVAL, one line, nothing in *xml.
void expect_refused(const json_t *doc, const std::string &says)
{
    char *xml = (char *)"untouched", why[256] = "";
    EXPECT_EQ(junit_from_validate(doc, 0, &xml, why, sizeof(why)), -EINVAL);
    EXPECT_EQ(xml, nullptr);
    EXPECT_NE(std::string(why).find(says), std::string::npos) << why;
    EXPECT_EQ(std::string(why).find('\n'), std::string::npos) << why;
}

const char kSelf[] = "    <testcase classname=\"ibench.validate.mem-bw\" name=\"self-meter\" time=\"1.500\"/>\n";
const char kNeighbourFail[] =
    "    <testcase classname=\"ibench.validate.mem-bw\" name=\"neighbour\" time=\"4.000\">\n"
    "      <failure message=\"the probe&apos;s degradation falls from 50 to 75 %\" type=\"FAIL\">the probe&apos;s "
    "degradation falls from 50 to 75 %</failure>\n"
    "    </testcase>\n";
const char kUnchecked[] = "    <testcase classname=\"ibench.validate.llc-cap\" name=\"outside meter\">\n"
                          "      <skipped message=\"UNCHECKED: no resctrl and no PMU here: no independent meter\"/>\n"
                          "    </testcase>\n";
const char kIsolated[] = "    <testcase classname=\"ibench.validate.llc-cap\" name=\"neighbour\">\n"
                         "      <skipped message=\"ISOLATED: the meter shows the footprint, the probe feels "
                         "nothing\"/>\n"
                         "    </testcase>\n";
const char kBusy[] = "    <testcase classname=\"ibench.validate.net-bw\" name=\"self-meter\">\n"
                     "      <skipped message=\"BUSY: its threads waited 28.7 % of their runnable time for a CPU (&gt; "
                     "10 %)\"/>\n"
                     "    </testcase>\n";

TEST(Junit, CountsAndElementsWithoutFailOn)
{
    std::string x = fixture_xml(0);
    EXPECT_EQ(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<testsuites name=\"ibench validate\" tests=\"13\" failures=\"2\" errors=\"0\" time=\"86.250\">\n",
                      0),
              0u)
        << x;
    EXPECT_EQ(suite_tag(x), "<testsuite name=\"ibench validate\" tests=\"13\" failures=\"2\" errors=\"0\" skipped=\"7\" "
                            "time=\"86.250\">")
        << x;
    EXPECT_EQ(count(x, "<testcase "), 13u);
    EXPECT_EQ(count(x, "<failure "), 2u);
    EXPECT_EQ(count(x, "<skipped "), 7u);
    EXPECT_EQ(count(x, "<error"), 0u);
    // pass: an empty test case, with its time where the check gave one
    EXPECT_NE(x.find(kSelf), std::string::npos) << x;
    EXPECT_NE(x.find("<testcase classname=\"ibench.validate.mem-bw\" name=\"outside meter\" time=\"2.250\"/>"),
              std::string::npos);
    EXPECT_NE(x.find("<testcase classname=\"ibench.validate.llc-cap\" name=\"self-meter\"/>"), std::string::npos);
    // FAIL: a failure with the reason; BUSY, ISOLATED, UNCHECKED, undecidable: skipped, saying why
    EXPECT_NE(x.find(kNeighbourFail), std::string::npos) << x;
    EXPECT_NE(x.find(kUnchecked), std::string::npos) << x;
    EXPECT_NE(x.find(kIsolated), std::string::npos) << x;
    EXPECT_NE(x.find(kBusy), std::string::npos) << x;
    EXPECT_NE(x.find("name=\"neighbour\">\n      <skipped message=\"undecidable: the probe was not hurt in this "
                     "run\"/>"),
              std::string::npos);
    // the document's scalar members as properties; the arrays are not
    EXPECT_NE(x.find("    <properties>\n      <property name=\"ibench\" value=\"0.0-fixture\"/>\n"
                     "      <property name=\"validate\" value=\"v1\"/>\n      <property name=\"quick\" value=\"true\"/>\n"
                     "      <property name=\"soi_cpu\" value=\"1\"/>\n      <property name=\"probe_cpu\" value=\"0\"/>\n"
                     "      <property name=\"seconds\" value=\"86.25\"/>\n    </properties>\n"),
              std::string::npos)
        << x;
    EXPECT_EQ(count(x, "<property "), 6u);
}

TEST(Junit, SoiWithoutChecksIsOneCaseFromItsVerdict)
{
    std::string x = fixture_xml(0);
    // mem-cap has no "checks", disk-bw an empty array: one test case "validate" each, from the SoI's verdict
    EXPECT_NE(x.find("    <testcase classname=\"ibench.validate.mem-cap\" name=\"validate\">\n"
                     "      <skipped message=\"skipped: --quick: left out\"/>\n    </testcase>\n"),
              std::string::npos)
        << x;
    EXPECT_NE(x.find("    <testcase classname=\"ibench.validate.disk-bw\" name=\"validate\">\n"
                     "      <skipped message=\"interrupted: stopped by SIGINT\"/>\n    </testcase>\n"),
              std::string::npos)
        << x;
    EXPECT_EQ(count(x, "\" name=\"validate\""), 2u); // (the property "validate" is the document's version)
    // a FAIL without checks is a failure; without a reason, the message is empty
    json_t *d = parse("{\"sois\": [{\"soi\": \"l1d\", \"verdict\": \"FAIL\"}, {\"soi\": \"l2\", \"verdict\": \"pass\","
                      " \"checks\": null}]}");
    x = junit(d, 0);
    json_decref(d);
    EXPECT_NE(x.find("    <testcase classname=\"ibench.validate.l1d\" name=\"validate\">\n"
                     "      <failure message=\"\" type=\"FAIL\"></failure>\n    </testcase>\n"
                     "    <testcase classname=\"ibench.validate.l2\" name=\"validate\"/>\n"),
              std::string::npos)
        << x;
    EXPECT_EQ(suite_tag(x), "<testsuite name=\"ibench validate\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" "
                            "time=\"0.000\">");
}

TEST(Junit, EachFailOnBitTurnsItsVerdictIntoAFailure)
{
    const struct {
        unsigned mask;
        const char *verdict, *element;
    } bits[] = {
        {JUNIT_FAIL_BUSY, "BUSY",
         "    <testcase classname=\"ibench.validate.net-bw\" name=\"self-meter\">\n      <failure message=\"its threads "
         "waited 28.7 % of their runnable time for a CPU (&gt; 10 %)\" type=\"BUSY\">its threads waited 28.7 % of "
         "their runnable time for a CPU (&gt; 10 %)</failure>\n    </testcase>\n"},
        {JUNIT_FAIL_ISOLATED, "ISOLATED",
         "    <testcase classname=\"ibench.validate.llc-cap\" name=\"neighbour\">\n      <failure message=\"the meter "
         "shows the footprint, the probe feels nothing\" type=\"ISOLATED\">the meter shows the footprint, the probe "
         "feels nothing</failure>\n    </testcase>\n"},
        {JUNIT_FAIL_UNCHECKED, "UNCHECKED",
         "    <testcase classname=\"ibench.validate.llc-cap\" name=\"outside meter\">\n      <failure message=\"no "
         "resctrl and no PMU here: no independent meter\" type=\"UNCHECKED\">no resctrl and no PMU here: no "
         "independent meter</failure>\n    </testcase>\n"},
    };
    for (const auto &b : bits) {
        SCOPED_TRACE(b.verdict);
        std::string x = fixture_xml(b.mask);
        EXPECT_EQ(suite_tag(x), "<testsuite name=\"ibench validate\" tests=\"13\" failures=\"3\" errors=\"0\" "
                                "skipped=\"6\" time=\"86.250\">");
        EXPECT_NE(x.find(b.element), std::string::npos) << x;
        EXPECT_EQ(count(x, "type=\"" + std::string(b.verdict) + "\""), 1u);
        EXPECT_EQ(count(x, "<skipped message=\"" + std::string(b.verdict)), 0u);
        // the other two stay skipped, FAIL stays a failure
        for (const char *other : {"BUSY", "ISOLATED", "UNCHECKED"}) {
            if (strcmp(other, b.verdict)) {
                EXPECT_EQ(count(x, "<skipped message=\"" + std::string(other) + ":"), 1u) << other;
            }
        }
        EXPECT_NE(x.find(kNeighbourFail), std::string::npos);
    }
    std::string x = fixture_xml(JUNIT_FAIL_ALL);
    EXPECT_EQ(suite_tag(x), "<testsuite name=\"ibench validate\" tests=\"13\" failures=\"5\" errors=\"0\" skipped=\"4\" "
                            "time=\"86.250\">");
    // undecidable, skipped and interrupted never fail, whatever fail_on holds
    EXPECT_EQ(count(x, "<skipped message=\"undecidable:"), 2u);
    EXPECT_EQ(count(x, "<skipped message=\"skipped:"), 1u);
    EXPECT_EQ(count(x, "<skipped message=\"interrupted:"), 1u);
}

TEST(Junit, EscapesMarkupAndCharactersXmlForbids)
{
    // < & " ' and a C0 control (U+0001), a tab, a newline, a carriage return, NUL, U+FFFF, and a kept "µ"
    json_t *d = parse("{\"sois\": [{\"soi\": \"a<b\", \"checks\": [{\"check\": \"self-meter\", \"verdict\": \"FAIL\","
                      " \"reason\": \"x <y> & \\\"z\\\" 'w'\\u0001\\tt\\nn\\rr\\u0000\\uffff 5 \\u00b5s\"}]}]}");
    std::string x = junit(d, 0);
    EXPECT_NE(x.find("<testcase classname=\"ibench.validate.a&lt;b\" name=\"self-meter\">\n"
                     "      <failure message=\"x &lt;y&gt; &amp; &quot;z&quot; &apos;w&apos;?&#9;t&#10;n&#13;r?? 5 "
                     "\xc2\xb5s\" type=\"FAIL\">x &lt;y&gt; &amp; &quot;z&quot; &apos;w&apos;?\tt\nn&#13;r?? 5 "
                     "\xc2\xb5s</failure>\n"),
              std::string::npos)
        << x;
    std::string out;
    EXPECT_EQ(xmllint(x, &out), 0) << out << x;
    json_decref(d);
    // bytes that are not UTF-8 cannot come from jansson's parser, but a document built in memory may hold them
    d = json_pack("{s:[{s:s,s:s}]}", "overlap_checks", "check", "ok", "verdict", "pass");
    json_array_append_new(json_object_get(d, "overlap_checks"),
                          json_pack("{s:o,s:s}", "check", json_stringn_nocheck("bad \xff\xc3( \xed\xa0\x80 end", 15),
                                    "verdict", "pass"));
    x = junit(d, 0);
    json_decref(d);
    EXPECT_NE(x.find("name=\"bad ?\?( ??? end\"/>"), std::string::npos) << x;
    EXPECT_EQ(xmllint(x, &out), 0) << out << x;
}

TEST(Junit, UnknownVerdictIsAFailureOfTypeUnknown)
{
    json_t *d = parse("{\"sois\": [{\"soi\": \"int\", \"checks\": [{\"check\": \"self-meter\", \"verdict\": "
                      "\"WOBBLY\", \"reason\": \"new in a later ibench\"}, {\"check\": \"neighbour\", \"verdict\": "
                      "\"pass\\u0000x\"}, {\"check\": \"outside meter\", \"verdict\": \"Pass\"}]}]}");
    std::string x = junit(d, 0);
    json_decref(d);
    EXPECT_NE(x.find("<failure message=\"verdict 'WOBBLY' unknown to this ibench: new in a later ibench\" "
                     "type=\"unknown\">new in a later ibench</failure>"),
              std::string::npos)
        << x;
    EXPECT_NE(x.find("<failure message=\"verdict 'pass?x' unknown to this ibench\" type=\"unknown\">"),
              std::string::npos)
        << x;
    EXPECT_NE(x.find("<failure message=\"verdict 'Pass' unknown to this ibench\" type=\"unknown\">"),
              std::string::npos)
        << x;
    EXPECT_EQ(suite_tag(x), "<testsuite name=\"ibench validate\" tests=\"3\" failures=\"3\" errors=\"0\" skipped=\"0\" "
                            "time=\"0.000\">");
}

TEST(Junit, OverlapNamesCutAtACharacterAndKeptDistinct)
{
    std::string x = fixture_xml(0);
    std::string text = "mem-bw at 100 %: stream-dram -31.0 +- 1.2 % vs chase-llc -2.0 % (must be larger); the first "
                       "cell read it at 25 %, the rest at 100 %";
    EXPECT_NE(x.find("    <testcase classname=\"ibench.validate.overlap\" name=\"" + text.substr(0, 97) + "...\">\n"
                     "      <failure message=\"" + text + "\" type=\"FAIL\">" + text + "</failure>\n"
                     "      <system-out>" + text + "</system-out>\n    </testcase>\n"),
              std::string::npos)
        << x;
    EXPECT_NE(x.find("<testcase classname=\"ibench.validate.overlap\" name=\"int at 100 %: chase-dram moves at most "
                     "+0.4 +- 0.3 %\"/>"),
              std::string::npos)
        << x;
    // two texts alike in their first 97 bytes; a two-byte character (U+00B5) across the cut at byte 97
    std::string same(96, 'a'), t1 = same + "\xc2\xb5" + "one", t2 = same + "\xc2\xb5" + "two";
    t1 += std::string(10, '.');
    t2 += std::string(10, '.');
    json_t *d = json_pack("{s:[{s:s,s:s},{s:s,s:s},{s:s,s:s}]}", "overlap_checks", "check", t1.c_str(), "verdict",
                          "pass", "check", t2.c_str(), "verdict", "FAIL", "check", t1.c_str(), "verdict", "pass");
    x = junit(d, 0);
    json_decref(d);
    EXPECT_NE(x.find("name=\"" + same + "...\">"), std::string::npos) << x;
    EXPECT_NE(x.find("name=\"" + same + "... (2)\">"), std::string::npos) << x;
    EXPECT_NE(x.find("name=\"" + same + "... (3)\">"), std::string::npos) << x;
    EXPECT_EQ(count(x, "<system-out>"), 3u);
    std::string out;
    EXPECT_EQ(xmllint(x, &out), 0) << out << x;
}

TEST(Junit, RefusesWhatIsNotAValidateResultWithOneLine)
{
    json_t *d = json_array();
    expect_refused(d, "the document is not a JSON object");
    json_decref(d);
    expect_refused(nullptr, "the document is not a JSON object");
    const struct {
        const char *doc, *says;
    } bad[] = {
        {"{\"sois\": {}}", "\"sois\" is not an array"},
        {"{\"overlap_checks\": 3}", "\"overlap_checks\" is not an array"},
        {"{\"seconds\": -1}", "the document: \"seconds\" is not a number of seconds >= 0"},
        {"{\"seconds\": \"86\"}", "the document: \"seconds\""},
        {"{\"sois\": [3]}", "sois[0] is not an object with a \"soi\" name"},
        {"{\"sois\": [{\"soi\": \"l1d\"}]}", "sois[0] (l1d) has no checks and no \"verdict\""},
        {"{\"sois\": [{\"soi\": \"l1d\", \"verdict\": \"pass\", \"reason\": 7}]}", "sois[0] (l1d): \"reason\" is not"},
        {"{\"sois\": [{\"soi\": \"l1d\", \"checks\": {}}]}", "sois[0] (l1d): \"checks\" is not an array"},
        {"{\"sois\": [{\"soi\": \"a\", \"verdict\": \"pass\"}, {\"soi\": \"l1d\", \"checks\": [{\"check\": \"self-meter\"}]}]}",
         "sois[1] (l1d): checks[0] is not an object with \"check\" and \"verdict\" strings"},
        {"{\"sois\": [{\"soi\": \"l1d\", \"checks\": [{\"check\": \"x\", \"verdict\": \"pass\", \"seconds\": -2}]}]}",
         "sois[0] (l1d): checks[0]: \"seconds\" is not a number"},
        {"{\"overlap_checks\": [{\"check\": \"x\"}]}", "overlap_checks[0] is not an object with \"check\" and"},
    };
    for (const auto &b : bad) {
        SCOPED_TRACE(b.doc);
        d = parse(b.doc);
        expect_refused(d, b.says);
        json_decref(d);
    }
    char why[64];
    EXPECT_EQ(junit_from_validate(nullptr, 0, nullptr, why, sizeof(why)), -EINVAL);
    // an empty result is a valid, empty report
    d = json_object();
    std::string x = junit(d, 0);
    json_decref(d);
    EXPECT_EQ(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<testsuites name=\"ibench validate\" tests=\"0\" failures=\"0\" errors=\"0\" time=\"0.000\">\n"
                 "  <testsuite name=\"ibench validate\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\" "
                 "time=\"0.000\">\n  </testsuite>\n</testsuites>\n");
}

TEST(Junit, FailOnListAndTheVerdictRule)
{
    const struct {
        const char *list;
        unsigned mask;
    } good[] = {{"busy", JUNIT_FAIL_BUSY},
                {"isolated", JUNIT_FAIL_ISOLATED},
                {"UNCHECKED", JUNIT_FAIL_UNCHECKED},
                {"busy,unchecked", JUNIT_FAIL_BUSY | JUNIT_FAIL_UNCHECKED},
                {"all", JUNIT_FAIL_ALL},
                {"busy,isolated,unchecked", JUNIT_FAIL_ALL}};
    for (const auto &g : good) {
        unsigned m = 99;
        char why[128] = "";
        EXPECT_EQ(junit_fail_on_parse(g.list, &m, why, sizeof(why)), 0) << g.list << ": " << why;
        EXPECT_EQ(m, g.mask) << g.list;
    }
    for (const char *b : {"", "busy,", ",busy", "busy,,isolated", "fail", "skipped", "busy isolated"}) {
        unsigned m = 99;
        char why[128] = "";
        EXPECT_EQ(junit_fail_on_parse(b, &m, why, sizeof(why)), -EINVAL) << b;
        EXPECT_EQ(m, 99u) << b;
        EXPECT_NE(std::string(why).find("--fail-on"), std::string::npos) << why;
        EXPECT_EQ(std::string(why).find('\n'), std::string::npos) << why;
    }
    EXPECT_TRUE(junit_verdict_fails("FAIL", 0));
    EXPECT_TRUE(junit_verdict_fails("something new", 0));
    for (const char *v : {"pass", "skipped", "undecidable", "interrupted", "BUSY", "ISOLATED", "UNCHECKED"})
        EXPECT_FALSE(junit_verdict_fails(v, 0)) << v;
    for (const char *v : {"pass", "skipped", "undecidable", "interrupted"})
        EXPECT_FALSE(junit_verdict_fails(v, JUNIT_FAIL_ALL)) << v;
    EXPECT_TRUE(junit_verdict_fails("BUSY", JUNIT_FAIL_BUSY));
    EXPECT_FALSE(junit_verdict_fails("BUSY", JUNIT_FAIL_ISOLATED | JUNIT_FAIL_UNCHECKED));
    EXPECT_TRUE(junit_verdict_fails("ISOLATED", JUNIT_FAIL_ISOLATED));
    EXPECT_TRUE(junit_verdict_fails("UNCHECKED", JUNIT_FAIL_UNCHECKED));
}

// The report validates against the JUnit schema Jenkins reads (junit-10.xsd, jenkinsci/xunit-plugin), under every
// fail_on; and xmllint does reject a report that breaks it, so a missing or lax check cannot pass.
TEST(Junit, ValidatesAgainstTheJenkinsSchema)
{
    int rc;
    std::string v = sh("xmllint --version", &rc);
    ASSERT_EQ(rc, 0) << "xmllint not found (Debian: libxml2-utils; scripts/bootstrap --tests installs it): " << v;
    for (unsigned mask : {0u, JUNIT_FAIL_BUSY, JUNIT_FAIL_ALL}) {
        std::string x = fixture_xml(mask), out;
        EXPECT_EQ(xmllint(x, &out), 0) << "fail_on " << mask << ": " << out << x;
        EXPECT_NE(out.find("validates"), std::string::npos) << out;
    }
    std::string x = fixture_xml(0), out;
    const std::string with = "<testsuite name=\"ibench validate\" tests=\"13\"";
    x.replace(x.find(with), with.size(), "<testsuite name=\"ibench validate\"");
    EXPECT_NE(xmllint(x, &out), 0) << "a testsuite without tests= passed the schema check:\n" << x;
    EXPECT_NE(out.find("tests"), std::string::npos) << out;
}

} // namespace
