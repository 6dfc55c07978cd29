// test_k8s_cli.cpp - `ibench k8s` (cli/cmd_k8s.c, docs/kubernetes.md): exact outputs on fixtures, the annotation
// size check on a generated oversized profile, and bad input (exit 2, one line).
#include <gtest/gtest.h>

#include <jansson.h>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "test_support.h"

extern "C" {
#include "ib_rand.h"
#include "pl_extender.h"
}

using ib_test::sh;

namespace {

const std::string kBin = IBENCH_BIN;
const std::string kSmall = std::string(IBENCH_FIXTURES) + "/profile-v1.2-small.json";

std::string k8s(const std::string &args, int *rc) { return sh(kBin + " k8s " + args, rc); }

size_t lines(const std::string &s)
{
    size_t n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

// The compact profile as the command prints it, checked against the fixture by value (jansson, not text).
std::string compact_of(const std::string &path)
{
    int rc;
    std::string o = k8s("profile-annotations " + path + " --compact", &rc);
    EXPECT_EQ(rc, 0) << o;
    return o;
}

} // namespace

TEST(K8sCli, TenantsExact)
{
    int rc;
    EXPECT_EQ(k8s("tenants-annotation memcached xz", &rc), "ibench.io/tenants=[\"memcached\",\"xz\"]\n");
    EXPECT_EQ(rc, 0);
    // no tenants: an empty array (a node whose pods all finished), and the order given, repeats kept
    EXPECT_EQ(k8s("tenants-annotation", &rc), "ibench.io/tenants=[]\n");
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(k8s("tenants-annotation b a b", &rc), "ibench.io/tenants=[\"b\",\"a\",\"b\"]\n");
    EXPECT_EQ(k8s("tenants-annotation --json a", &rc),
              "{\n  \"metadata\": {\n    \"annotations\": {\n      \"ibench.io/tenants\": \"[\\\"a\\\"]\"\n    }\n  }\n}\n");
    EXPECT_EQ(rc, 0);
}

TEST(K8sCli, ProfileAnnotationExact)
{
    int rc;
    EXPECT_EQ(k8s("profile-annotations " + kSmall, &rc), "ibench.io/profile=profile-v1.2-small\n");
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(k8s("profile-annotations --name memcached-1.6 " + kSmall, &rc), "ibench.io/profile=memcached-1.6\n");
    EXPECT_EQ(rc, 0);
    // the key is the header's constant
    EXPECT_EQ(std::string(PL_EXT_ANN_PROFILE), "ibench.io/profile");
}

TEST(K8sCli, CompactIsTheFixtureOnOneLine)
{
    std::string c = compact_of(kSmall);
    ASSERT_EQ(lines(c), 1u);
    EXPECT_EQ(c.find("\n  "), std::string::npos); // no indentation
    json_error_t e;
    json_t *a = json_loads(c.c_str(), 0, &e), *b = json_load_file(kSmall.c_str(), 0, &e);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(json_equal(a, b)); // every value read back exactly (17 digits)
    json_decref(a);
    json_decref(b);
}

TEST(K8sCli, ProfileJsonSize)
{
    int rc;
    std::string o = k8s("profile-annotations " + kSmall + " --json", &rc);
    ASSERT_EQ(rc, 0) << o;
    json_error_t e;
    json_t *d = json_loads(o.c_str(), 0, &e);
    ASSERT_TRUE(d) << o;
    EXPECT_STREQ(json_string_value(json_object_get(json_object_get(json_object_get(d, "metadata"), "annotations"),
                                                   "ibench.io/profile")),
                 "profile-v1.2-small");
    EXPECT_STREQ(json_string_value(json_object_get(d, "store_key")), "profile-v1.2-small.json");
    EXPECT_EQ(json_integer_value(json_object_get(d, "limit_bytes")), 262144);
    // kubectl.kubernetes.io/last-applied-configuration (48) + the compact text as a JSON string (quotes escaped)
    EXPECT_EQ(json_integer_value(json_object_get(d, "annotation_bytes")), 4179);
    std::string c = compact_of(kSmall);
    c.pop_back();
    json_t *s = json_string(c.c_str());
    char *q = json_dumps(s, JSON_ENCODE_ANY);
    EXPECT_EQ((size_t)json_integer_value(json_object_get(d, "annotation_bytes")), 48 + strlen(q));
    free(q);
    json_decref(s);
    json_decref(d);
}

TEST(K8sCli, ConfigMapYaml)
{
    int rc;
    std::string o = k8s("profile-annotations " + kSmall + " --configmap ibench-profiles --namespace ibench-system "
                        "--name memcached", &rc);
    ASSERT_EQ(rc, 0) << o;
    std::string c = compact_of(kSmall);
    EXPECT_EQ(o, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ibench-profiles\n  namespace: ibench-system\n"
                 "  labels:\n    app.kubernetes.io/part-of: ibench\ndata:\n  memcached.json: |-\n    " + c);
    // and a YAML reader gets the compact text back (python3-yaml, as tests/k8s_manifests.py)
    std::string path = ib_test::temp_file_with(o, "ibench-k8s-cm", ".yaml");
    std::string back = sh("/usr/bin/python3 -c \"import yaml,sys; "
                          "sys.stdout.write(yaml.safe_load(open('" + path + "'))['data']['memcached.json'])\"", &rc);
    unlink(path.c_str());
    EXPECT_EQ(rc, 0) << back;
    EXPECT_EQ(back + "\n", c);
}

TEST(K8sCli, NodeAnnotationsMatchTopo)
{
    int rc;
    const std::string topo = "'synthetic:pack:2 l2:2 core:2 pu:1'";
    std::string o = k8s("node-annotations --topology " + topo, &rc);
    ASSERT_EQ(rc, 0) << o;
    // the fingerprint and model `ibench topo` prints for the same machine, and its PU count
    std::string t = sh(kBin + " topo --no-measure --json --topology 'pack:2 l2:2 core:2 pu:1'", &rc);
    ASSERT_EQ(rc, 0) << t;
    json_error_t e;
    json_t *d = json_loads(t.c_str(), 0, &e);
    ASSERT_TRUE(d) << t;
    json_t *m = json_pack("{s:O,s:O,s:i}", "fingerprint", json_object_get(d, "fingerprint"), "cpu_model",
                          json_object_get(json_object_get(d, "cpu"), "model"), "cpus", 8); // 2 packages x 2 L2 x 2 cores x 1 PU
    char *want = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
    EXPECT_EQ(o, std::string("ibench.io/machine=") + want + "\n");
    free(want);
    json_decref(m);
    json_decref(d);
    // this machine: one line, the three fields
    o = k8s("node-annotations --topology live --json", &rc);
    ASSERT_EQ(rc, 0) << o;
    d = json_loads(o.c_str(), 0, &e);
    ASSERT_TRUE(d) << o;
    const char *v = json_string_value(
        json_object_get(json_object_get(json_object_get(d, "metadata"), "annotations"), "ibench.io/machine"));
    ASSERT_TRUE(v) << o;
    json_t *mv = json_loads(v, 0, &e);
    ASSERT_TRUE(mv) << v;
    EXPECT_EQ(json_object_size(mv), 3u);
    EXPECT_EQ(json_integer_value(json_object_get(mv, "cpus")), (json_int_t)sysconf(_SC_NPROCESSORS_ONLN));
    json_decref(mv);
    json_decref(d);
}

// A valid profile grown past the limit by its baseline samples (seeded values): exit 2, one line with the size.
TEST(K8sCli, OversizedProfileRefused)
{
    json_error_t e;
    json_t *p = json_load_file(kSmall.c_str(), JSON_PRESERVE_ORDER, &e);
    ASSERT_TRUE(p);
    json_t *samples = json_object_get(json_object_get(json_object_get(p, "baseline"), "before"), "samples");
    ASSERT_TRUE(json_is_array(samples));
    uint64_t seed = 19;
    for (int i = 0; i < 14000; i++) // ~19 bytes each: ~266 KB
        json_array_append_new(samples, json_real(30000.0 + (double)(ib_splitmix64(&seed) % 1000000) / 97.0));
    char *text = json_dumps(p, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(p);
    ASSERT_TRUE(text);
    std::string big = ib_test::temp_file_with(text, "ibench-k8s-big", ".json");
    free(text);
    int rc;
    std::string o = k8s("profile-annotations " + big, &rc);
    // it is a valid profile: ibench show reads it
    std::string shown = sh(kBin + " show " + big + " >/dev/null", &rc);
    EXPECT_EQ(rc, 0) << shown;
    o = k8s("profile-annotations " + big + " --name big", &rc);
    unlink(big.c_str());
    EXPECT_EQ(rc, 2) << o;
    EXPECT_EQ(lines(o), 1u) << o;
    EXPECT_NE(o.find("over Kubernetes' limit of 262144"), std::string::npos) << o;
    EXPECT_EQ(o.find("ibench.io/profile="), std::string::npos) << o; // nothing on stdout
}

TEST(K8sCli, BadInputOneLine)
{
    const char *bad[] = {
        "",
        "nope",
        "profile-annotations",
        "profile-annotations /nonexistent/p.json",
        "profile-annotations " IBENCH_FIXTURES "/profile-invalid-tolerated.json",
        "profile-annotations " IBENCH_FIXTURES "/profile-v1.2-small.json --name .hidden",
        "profile-annotations " IBENCH_FIXTURES "/profile-v1.2-small.json --name 'a b'",
        "profile-annotations " IBENCH_FIXTURES "/profile-v1.2-small.json --configmap Bad_Name",
        "profile-annotations " IBENCH_FIXTURES "/profile-v1.2-small.json --namespace ns",
        "profile-annotations " IBENCH_FIXTURES "/profile-v1.2-small.json --compact --json",
        "profile-annotations " IBENCH_FIXTURES "/profile-v1.2-small.json extra",
        "profile-annotations " IBENCH_FIXTURES "/profile-v1.2-small.json --bogus",
        "node-annotations --topology 'synthetic:nonsense'",
        "node-annotations extra",
        "tenants-annotation ok 'not ok'",
        "tenants-annotation -x",
    };
    for (const char *b : bad) {
        int rc;
        std::string o = k8s(b, &rc);
        EXPECT_EQ(rc, 2) << b << ": " << o;
        EXPECT_EQ(lines(o), 1u) << b << ": " << o;
        EXPECT_EQ(o.rfind("ibench k8s", 0), 0u) << b << ": " << o;
    }
}
