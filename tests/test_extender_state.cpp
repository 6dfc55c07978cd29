// The scheduler extender's state (placement/k8s/pl_extender.h): the profile cache (bounded,
// least recently used out, absences forgotten after PL_EXT_MISS_TTL_MS), the node state held in memory and read
// again when its directory changes (a ConfigMap volume's `..data` swap), assumed tenants closing the race of a burst,
// and the figures (pl_extender_metrics as Prometheus text, pl_extender_ready).  The clock is the test's: no sleep.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <jansson.h>

#include "extender_proc.h"
#include "test_support.h"

extern "C" {
#include "pl_coloc.h"
#include "pl_extender.h"
#include "profile_fmt.h"
}

namespace {

const std::string kStore = std::string(IBENCH_FIXTURES) + "/extender/store/";

double g_now;
double fake_clock(void *) { return g_now; }

void write(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

void copy_profile(const std::string &name, const std::string &to)
{
    write(to, ib_test::file_text(kStore + name + ".json"));
}

struct Ext {
    pl_extender *x = nullptr;
    explicit Ext(const std::string &dir, unsigned cap = 0, unsigned assume = 0, const char *nodes = nullptr,
                 bool pessimistic = true)
    {
        pl_extender_opts o = {};
        o.profiles = dir.c_str(), o.margin = PL_COLOC_MARGIN, o.pessimistic = pessimistic;
        o.decide_headroom = true; // the store's profiles break at so many copies by the headroom rule (before 1.7)
        o.nodes = nodes, o.cache_cap = cap, o.assume_ttl_s = assume, o.clock = fake_clock;
        char why[256] = "";
        EXPECT_EQ(pl_extender_new(&o, &x, why, sizeof why), 0) << why;
    }
    ~Ext() { pl_extender_free(x); }
    std::string ask(const char *verb, const std::string &body, int *status = nullptr)
    {
        char *out = nullptr;
        int st = 0;
        EXPECT_EQ(pl_extender_handle(x, verb, body.data(), body.size(), &out, &st), 0);
        if (status)
            *status = st;
        std::string s = out ? out : "";
        free(out);
        return s;
    }
    pl_extender_stats stats()
    {
        pl_extender_stats s;
        pl_extender_get_stats(x, &s);
        return s;
    }
};

// An ExtenderArgs: a pod of profile `profile` (uid `uid`, none when empty) and full Node objects, each with its
// tenants annotation, 16 CPUs and 64 GiB allocatable.
std::string args_full(const std::string &profile, const std::string &uid,
                      const std::vector<std::pair<std::string, std::vector<std::string>>> &nodes)
{
    json_t *items = json_array();
    for (auto &n : nodes) {
        json_t *ten = json_array();
        for (auto &t : n.second)
            json_array_append_new(ten, json_string(t.c_str()));
        char *ts = json_dumps(ten, JSON_COMPACT);
        json_decref(ten);
        json_array_append_new(items, json_pack("{s:{s:s,s:{s:s}},s:{s:{s:s,s:s}}}", "metadata", "name",
                                               n.first.c_str(), "annotations", PL_EXT_ANN_TENANTS, ts, "status",
                                               "allocatable", "cpu", "16", "memory", "64Gi"));
        free(ts);
    }
    json_t *pod = json_pack("{s:{s:s,s:s,s:{s:s}},s:{s:[{s:s,s:{s:{s:s}}}]}}", "metadata", "name", "p", "namespace",
                            "default", "annotations", PL_EXT_ANN_PROFILE, profile.c_str(), "spec", "containers",
                            "name", "c", "resources", "requests", "cpu", "1");
    if (!uid.empty())
        json_object_set_new(json_object_get(pod, "metadata"), "uid", json_string(uid.c_str()));
    json_t *doc = json_pack("{s:o,s:{s:o}}", "Pod", pod, "Nodes", "items", items);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    std::string r = s;
    free(s);
    return r;
}

std::string args_names(const std::string &profile, const std::vector<std::string> &names)
{
    json_t *nn = json_array();
    for (auto &n : names)
        json_array_append_new(nn, json_string(n.c_str()));
    json_t *doc = json_pack("{s:{s:{s:s,s:{s:s}}},s:o}", "Pod", "metadata", "name", "p", "annotations",
                            PL_EXT_ANN_PROFILE, profile.c_str(), "NodeNames", nn);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    std::string r = s;
    free(s);
    return r;
}

json_t *parse(const std::string &s)
{
    json_error_t je;
    json_t *j = json_loads(s.c_str(), 0, &je);
    EXPECT_NE(j, nullptr) << s.substr(0, 200);
    return j;
}

std::string error_of(const std::string &answer)
{
    json_t *j = parse(answer);
    std::string e = json_string_value(json_object_get(j, "Error")) ?: "";
    json_decref(j);
    return e;
}

// ---- item 3: the cache

TEST(ExtenderCache, BoundedUnder100000DistinctNames)
{
    // 10 requests of 10 000 nodes, each node naming one tenant never seen before: 100 000 absences to remember
    Ext x(kStore, 0);
    for (int r = 0; r < 10; r++) {
        std::vector<std::pair<std::string, std::vector<std::string>>> nodes;
        for (int i = 0; i < 10000; i++)
            nodes.push_back({"n" + std::to_string(i), {"t" + std::to_string(r * 10000 + i)}});
        int st = 0;
        std::string a = x.ask(PL_EXT_VERB_FILTER, args_full("xz", "", nodes), &st);
        ASSERT_EQ(st, 200);
        json_t *j = parse(a);
        EXPECT_EQ(json_object_size(json_object_get(j, "FailedNodes")), 10000u); // every tenant unknown: not judged
        json_decref(j);
        pl_extender_stats s = x.stats();
        EXPECT_LE(s.entries, (unsigned long)PL_EXT_CACHE_CAP) << "after request " << r;
    }
    pl_extender_stats s = x.stats();
    EXPECT_EQ(s.capacity, (unsigned long)PL_EXT_CACHE_CAP);
    EXPECT_EQ(s.entries, (unsigned long)PL_EXT_CACHE_CAP);
    EXPECT_GE(s.misses, 100000ul);
    EXPECT_EQ(s.evictions, s.misses - s.entries); // every entry made and not held was evicted, none lost otherwise
}

TEST(ExtenderCache, LeastRecentlyUsedGoesFirst)
{
    ib_test::TempDir d("ext_lru");
    for (const char *n : {"xz", "disk", "dram"})
        copy_profile(n, d.path() + "/" + n + ".json");
    Ext x(d.path(), 2);
    auto use = [&](const char *p) { EXPECT_EQ(error_of(x.ask(PL_EXT_VERB_FILTER, args_full(p, "", {}))), ""); };
    use("xz"), use("disk"); // misses: xz, disk
    use("xz");              // hit; disk is now the least recent
    use("dram");            // miss: evicts disk
    pl_extender_stats s = x.stats();
    EXPECT_EQ(s.misses, 3ul);
    EXPECT_EQ(s.hits, 1ul);
    EXPECT_EQ(s.evictions, 1ul);
    use("xz"); // still there
    EXPECT_EQ(x.stats().hits, 2ul);
    use("disk"); // was evicted: read again
    EXPECT_EQ(x.stats().misses, 4ul);
    EXPECT_EQ(x.stats().entries, 2ul);
}

TEST(ExtenderCache, LateProfileSeenOnceTheStoreChanges)
{
    ib_test::TempDir d("ext_late");
    copy_profile("disk", d.path() + "/disk.json");
    g_now = 100;
    Ext x(d.path());
    EXPECT_NE(error_of(x.ask(PL_EXT_VERB_FILTER, args_full("xz", "", {}))).find("not in the store"),
              std::string::npos);
    copy_profile("xz", d.path() + "/xz.json.tmp"); // as a ConfigMap or any atomic writer does: a rename
    ASSERT_EQ(rename((d.path() + "/xz.json.tmp").c_str(), (d.path() + "/xz.json").c_str()), 0);
    g_now += PL_EXT_STORE_CHECK_MS / 1000.0 / 2; // before the next look at the directory: the absence is held
    EXPECT_NE(error_of(x.ask(PL_EXT_VERB_FILTER, args_full("xz", "", {}))), "");
    g_now += PL_EXT_STORE_CHECK_MS / 1000.0; // past it: the change is seen, the cache emptied
    EXPECT_EQ(error_of(x.ask(PL_EXT_VERB_FILTER, args_full("xz", "", {}))), "");
    EXPECT_EQ(x.stats().reloads, 1ul);
}

TEST(ExtenderCache, AbsenceForgottenAfterItsTimeWithoutAStoreChange)
{
    // xz.json is a symlink to a file outside the store that does not exist yet: making it changes nothing the
    // extender watches, so only the absence's time can let it be seen
    ib_test::TempDir d("ext_ttl"), out("ext_ttl_out");
    ASSERT_EQ(symlink((out.path() + "/xz.json").c_str(), (d.path() + "/xz.json").c_str()), 0);
    g_now = 100;
    Ext x(d.path());
    EXPECT_NE(error_of(x.ask(PL_EXT_VERB_FILTER, args_full("xz", "", {}))), "");
    copy_profile("xz", out.path() + "/xz.json");
    g_now += PL_EXT_MISS_TTL_MS / 1000.0 - 0.1;
    EXPECT_NE(error_of(x.ask(PL_EXT_VERB_FILTER, args_full("xz", "", {}))), "") << "the absence is still believed";
    g_now += 0.2;
    EXPECT_EQ(error_of(x.ask(PL_EXT_VERB_FILTER, args_full("xz", "", {}))), "");
    pl_extender_stats s = x.stats();
    EXPECT_EQ(s.reloads, 0ul);
    EXPECT_EQ(s.expired, 1ul);
}

TEST(ExtenderCache, AReplacedProfileChangesTheVerdictsKept)
{
    // verdicts are kept across requests, keyed by the profiles they were made of: a tenant's profile replaced in the
    // store must give the verdict a fresh extender gives, once the change is seen
    ib_test::TempDir d("ext_vc");
    copy_profile("xz", d.path() + "/xz.json");
    copy_profile("dram", d.path() + "/t.json");
    g_now = 0;
    Ext x(d.path());
    const std::string req = args_full("xz", "", {{"a", {"t"}}, {"b", {"t", "t"}}});
    const std::string before = x.ask(PL_EXT_VERB_FILTER, req);
    EXPECT_EQ(x.ask(PL_EXT_VERB_FILTER, req), before);
    copy_profile("disk", d.path() + "/t.json.tmp");
    ASSERT_EQ(rename((d.path() + "/t.json.tmp").c_str(), (d.path() + "/t.json").c_str()), 0);
    g_now += PL_EXT_STORE_CHECK_MS / 1000.0 + 0.1;
    unsigned long freed = x.stats().profiles_freed;
    const std::string after = x.ask(PL_EXT_VERB_FILTER, req);
    // the old xz and t were freed: every verdict made of them is void (an address may come back for another)
    EXPECT_EQ(x.stats().profiles_freed, freed + 2);
    Ext fresh(d.path());
    EXPECT_EQ(after, fresh.ask(PL_EXT_VERB_FILTER, req));
    EXPECT_NE(after, before) << "dram and disk as the tenant should not decide alike: the test would show nothing";
    EXPECT_EQ(x.ask(PL_EXT_VERB_PRIORITIZE, req), fresh.ask(PL_EXT_VERB_PRIORITIZE, req));
}

// A node state directory written the way an atomic writer does it (each file renamed into place, so the directory
// changes), n nodes: node i has tenants lists[i % lists.size()].
void publish_nodes(const std::string &dir, unsigned n, const std::vector<std::string> &lists)
{
    for (unsigned i = 0; i < n; i++) {
        std::string f = dir + "/n" + std::to_string(i) + ".json";
        write(f + ".tmp", "{\"annotations\": {\"" PL_EXT_ANN_TENANTS "\": \"" + lists[i % lists.size()] +
                              "\"}, \"status\": {\"allocatable\": {\"cpu\": \"15\", \"memory\": \"60Gi\"}}}");
        ASSERT_EQ(rename((f + ".tmp").c_str(), f.c_str()), 0);
    }
}

std::vector<std::string> node_names(unsigned n)
{
    std::vector<std::string> v;
    for (unsigned i = 0; i < n; i++)
        v.push_back("n" + std::to_string(i));
    return v;
}

TEST(ExtenderVerdicts, KeptAcrossRequestsOneForEachDistinctNodeState)
{
    // the benchmark's shape: nodes of every sorted list of 4 tenants of 6 profiles (126 lists), twice over.  A request
    // makes one verdict a list; the next finds every one of them and makes none
    ib_test::TempDir d("ext_vk"), nd("ext_vk_nodes");
    const char *prof[] = {"xz", "dram", "disk", "llc", "redis", "memcached"};
    for (const char *p : prof)
        copy_profile(p, d.path() + "/" + p + ".json");
    std::vector<std::string> lists;
    for (unsigned a = 0; a < 6; a++)
        for (unsigned b = a; b < 6; b++)
            for (unsigned c = b; c < 6; c++)
                for (unsigned e = c; e < 6; e++)
                    lists.push_back(std::string("[\\\"") + prof[a] + "\\\", \\\"" + prof[b] + "\\\", \\\"" + prof[c] +
                                    "\\\", \\\"" + prof[e] + "\\\"]");
    ASSERT_EQ(lists.size(), 126u);
    publish_nodes(nd.path(), 252, lists);
    g_now = 0;
    Ext x(d.path(), 0, 0, nd.path().c_str());
    const std::string req = args_names("memcached", node_names(252));
    const std::string first = x.ask(PL_EXT_VERB_FILTER, req);
    pl_extender_stats s = x.stats();
    EXPECT_EQ(s.verdict_misses, 126ul);
    EXPECT_EQ(s.verdict_hits, 0ul);
    EXPECT_EQ(x.ask(PL_EXT_VERB_FILTER, req), first);
    s = x.stats();
    EXPECT_EQ(s.verdict_misses, 126ul) << "a verdict kept was made again";
    EXPECT_EQ(s.verdict_hits, 126ul);
    Ext fresh(d.path(), 0, 0, nd.path().c_str());
    EXPECT_EQ(fresh.ask(PL_EXT_VERB_FILTER, req), first);
}

TEST(ExtenderVerdicts, AChangedTenantListGivesTheNewVerdict)
{
    // one tenant of the same room either way: only the tenant's identity tells the two verdicts apart
    ib_test::TempDir d("ext_vt"), nd("ext_vt_nodes");
    for (const char *p : {"xz", "dram", "disk"})
        copy_profile(p, d.path() + "/" + p + ".json");
    publish_nodes(nd.path(), 4, {"[\\\"dram\\\"]"});
    g_now = 0;
    Ext x(d.path(), 0, 0, nd.path().c_str());
    const std::string req = args_names("xz", node_names(4));
    const std::string before = x.ask(PL_EXT_VERB_FILTER, req), pbefore = x.ask(PL_EXT_VERB_PRIORITIZE, req);
    EXPECT_EQ(x.ask(PL_EXT_VERB_FILTER, req), before);
    publish_nodes(nd.path(), 4, {"[\\\"disk\\\"]"});
    g_now += PL_EXT_STORE_CHECK_MS / 1000.0 + 0.1;
    const std::string after = x.ask(PL_EXT_VERB_FILTER, req);
    EXPECT_EQ(x.stats().profiles_freed, 0ul) << "no profile changed: only the key can tell the lists apart";
    Ext fresh(d.path(), 0, 0, nd.path().c_str());
    EXPECT_EQ(after, fresh.ask(PL_EXT_VERB_FILTER, req));
    EXPECT_NE(after, before) << "dram and disk as the tenant should not decide alike: the test would show nothing";
    EXPECT_EQ(x.ask(PL_EXT_VERB_PRIORITIZE, req), fresh.ask(PL_EXT_VERB_PRIORITIZE, req));
    publish_nodes(nd.path(), 4, {"[\\\"dram\\\"]"}); // and back: the first verdict again
    g_now += PL_EXT_STORE_CHECK_MS / 1000.0 + 0.1;
    EXPECT_EQ(x.ask(PL_EXT_VERB_FILTER, req), before);
    EXPECT_EQ(x.ask(PL_EXT_VERB_PRIORITIZE, req), pbefore);
}

TEST(ExtenderVerdicts, AReloadedPodProfileGivesTheNewVerdict)
{
    // the pod's own profile replaced in the store (a tenant's: AReplacedProfileChangesTheVerdictsKept), names only
    ib_test::TempDir d("ext_vp"), nd("ext_vp_nodes");
    for (const char *p : {"dram", "disk", "llc"})
        copy_profile(p, d.path() + "/" + p + ".json");
    copy_profile("xz", d.path() + "/pod.json");
    publish_nodes(nd.path(), 6, {"[\\\"dram\\\"]", "[\\\"disk\\\", \\\"llc\\\"]", "[\\\"llc\\\"]"});
    g_now = 0;
    Ext x(d.path(), 0, 0, nd.path().c_str());
    const std::string req = args_names("pod", node_names(6));
    const std::string before = x.ask(PL_EXT_VERB_FILTER, req);
    EXPECT_EQ(x.ask(PL_EXT_VERB_FILTER, req), before);
    unsigned long misses = x.stats().verdict_misses;
    copy_profile("dram", d.path() + "/pod.json.tmp");
    ASSERT_EQ(rename((d.path() + "/pod.json.tmp").c_str(), (d.path() + "/pod.json").c_str()), 0);
    g_now += PL_EXT_STORE_CHECK_MS / 1000.0 + 0.1;
    const std::string after = x.ask(PL_EXT_VERB_FILTER, req);
    EXPECT_EQ(x.stats().verdict_misses, misses + 3) << "a verdict made of the old profile was used";
    Ext fresh(d.path(), 0, 0, nd.path().c_str());
    EXPECT_EQ(after, fresh.ask(PL_EXT_VERB_FILTER, req));
    EXPECT_NE(after, before) << "xz and dram as the pod should not decide alike: the test would show nothing";
    EXPECT_EQ(x.ask(PL_EXT_VERB_PRIORITIZE, req), fresh.ask(PL_EXT_VERB_PRIORITIZE, req));
}

TEST(ExtenderVerdicts, BoundedAndRightPastWhatTheyHold)
{
    // more distinct tenant lists than the verdicts kept (2048): each answer still the one a fresh extender gives
    ib_test::TempDir d("ext_vb"), nd("ext_vb_nodes");
    const char *prof[] = {"xz", "dram", "disk", "llc", "redis", "memcached"};
    for (const char *p : prof)
        copy_profile(p, d.path() + "/" + p + ".json");
    std::vector<std::string> lists;
    for (unsigned i = 0; i < 2600; i++) { // 2600 distinct lists of 5 tenants (i's digits in base 6)
        std::string l = "[";
        unsigned k = i;
        for (unsigned t = 0; t < 5; t++, k /= 6)
            l += std::string(t ? ", " : "") + "\\\"" + prof[k % 6] + "\\\"";
        lists.push_back(l + "]");
    }
    publish_nodes(nd.path(), 2600, lists);
    g_now = 0;
    Ext x(d.path(), 0, 0, nd.path().c_str());
    const std::string req = args_names("memcached", node_names(2600));
    const std::string first = x.ask(PL_EXT_VERB_FILTER, req);
    EXPECT_EQ(x.ask(PL_EXT_VERB_FILTER, req), first);
    pl_extender_stats s = x.stats();
    EXPECT_GT(s.verdict_misses, 2600ul) << "as many made as asked for: nothing was let go";
    Ext fresh(d.path(), 0, 0, nd.path().c_str());
    EXPECT_EQ(fresh.ask(PL_EXT_VERB_FILTER, req), first);
    EXPECT_EQ(x.ask(PL_EXT_VERB_PRIORITIZE, req), fresh.ask(PL_EXT_VERB_PRIORITIZE, req));
}

TEST(ExtenderCache, ConcurrentRequestsWhileEvictingAndReloading)
{
    // a cache of 1 entry, 4 threads asking for pods of 3 profiles beside tenants of the others, while the store
    // changes: every profile a request uses is pinned, so none is freed under it (ASan builds would say so)
    ib_test::TempDir d("ext_conc");
    for (const char *n : {"xz", "disk", "dram"})
        copy_profile(n, d.path() + "/" + n + ".json");
    g_now = 0;
    Ext x(d.path(), 1);
    const char *names[] = {"xz", "disk", "dram"};
    std::atomic<int> bad{0};
    std::vector<std::thread> th;
    for (int t = 0; t < 4; t++)
        th.emplace_back([&, t] {
            for (int i = 0; i < 200; i++) {
                std::string body = args_full(names[(t + i) % 3], "", {{"a", {names[(i + 1) % 3]}}, {"b", {}}});
                char *out = nullptr;
                int st = 0;
                if (pl_extender_handle(x.x, i % 2 ? PL_EXT_VERB_PRIORITIZE : PL_EXT_VERB_FILTER, body.data(),
                                       body.size(), &out, &st) != 0 || st != 200 || !out)
                    bad++;
                free(out);
            }
        });
    for (int i = 0; i < 50; i++) { // store changes meanwhile (the clock moves on; fake_clock is read racily: fine)
        write(d.path() + "/other.json.tmp", "{}");
        rename((d.path() + "/other.json.tmp").c_str(), (d.path() + "/other" + std::to_string(i % 2) + ".json").c_str());
        g_now += 2;
        usleep(1000);
    }
    for (auto &t : th)
        t.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_LE(x.stats().entries, 1ul);
    EXPECT_GT(x.stats().evictions, 0ul);
}

// ---- item 2: the node state

// A ConfigMap volume as the kubelet writes it: ..TIMESTAMP/ holds the files, ..data -> ..TIMESTAMP, and each key a
// symlink NAME.json -> ..data/NAME.json; an update writes a new ..TIMESTAMP and renames a new ..data over the old.
struct ConfigMapDir {
    std::string dir;
    int gen = 0;
    explicit ConfigMapDir(const std::string &d) : dir(d) {}
    void publish(const std::map<std::string, std::string> &files)
    {
        std::string ts = "..2026_11_27_00_00_0" + std::to_string(gen++);
        ASSERT_EQ(mkdir((dir + "/" + ts).c_str(), 0755), 0);
        for (auto &f : files) {
            write(dir + "/" + ts + "/" + f.first, f.second);
            symlink(("..data/" + f.first).c_str(), (dir + "/" + f.first).c_str()); // EEXIST after the first
        }
        unlink((dir + "/..data_tmp").c_str());
        ASSERT_EQ(symlink(ts.c_str(), (dir + "/..data_tmp").c_str()), 0);
        ASSERT_EQ(rename((dir + "/..data_tmp").c_str(), (dir + "/..data").c_str()), 0);
    }
};

std::string node_state(const std::string &tenants)
{
    return "{\"annotations\": {\"" PL_EXT_ANN_TENANTS "\": \"" + tenants + "\"}}";
}

TEST(ExtenderNodes, HeldInMemoryAndReadAgainOnAConfigMapSwap)
{
    ib_test::TempDir d("ext_cm"), nd("ext_cm_nodes");
    copy_profile("xz", d.path() + "/xz.json");
    ConfigMapDir cm(nd.path());
    cm.publish({{"n1.json", node_state("[\\\"nosuch\\\"]")}});
    g_now = 10;
    Ext x(d.path(), 0, 0, nd.path().c_str());
    EXPECT_EQ(x.stats().nodes, 1ul);
    char why[256];
    EXPECT_TRUE(pl_extender_ready(x.x, why, sizeof why)) << why;
    auto failed = [&] {
        json_t *j = parse(x.ask(PL_EXT_VERB_FILTER, args_names("xz", {"n1"})));
        std::string r = json_string_value(json_object_get(json_object_get(j, "FailedNodes"), "n1")) ?: "";
        json_decref(j);
        return r;
    };
    EXPECT_NE(failed().find("tenant nosuch cannot be judged"), std::string::npos);
    cm.publish({{"n1.json", node_state("[]")}});
    g_now += 0.5; // within PL_EXT_STORE_CHECK_MS: the state held is the old one (not read per request)
    EXPECT_NE(failed(), "");
    g_now += PL_EXT_STORE_CHECK_MS / 1000.0;
    EXPECT_EQ(failed(), "") << "the swap is seen: n1 has no tenant now";
    EXPECT_EQ(x.stats().reloads, 1ul);
    g_now += 5; // no change: nothing read again
    EXPECT_EQ(failed(), "");
    EXPECT_EQ(x.stats().reloads, 1ul);
}

TEST(ExtenderNodes, ReadyOnlyWithAStore)
{
    g_now = 0;
    Ext good(kStore);
    char why[256] = "";
    EXPECT_TRUE(pl_extender_ready(good.x, why, sizeof why)) << why;
    EXPECT_NE(std::string(why).find("5 nodes"), std::string::npos) << why; // the fixture's nodes/n1-n5
    Ext none("/nonexistent/ibench-store");
    EXPECT_FALSE(pl_extender_ready(none.x, why, sizeof why));
    EXPECT_NE(std::string(why).find("/nonexistent/ibench-store"), std::string::npos) << why;
}

// ---- item 5: a burst of pods of one profile

// How many pods of profile p one node takes as the check counts (1 when a pair already breaks).
unsigned allowed(const profile *p, bool pessimistic, unsigned cap)
{
    std::vector<const profile *> g;
    pl_coloc_opts o = {PL_COLOC_MARGIN, pessimistic, false, false, PL_DECIDE_HEADROOM, PL_WM_PRODUCT, false}; // Ext's rule
    for (unsigned n = 2; n <= cap; n++) {
        g.assign(n, p);
        pl_coloc_result r = {};
        char why[256];
        EXPECT_EQ(pl_coloc_check(g.data(), n, &o, &r, why, sizeof why), 0) << why;
        bool safe = r.safe;
        pl_coloc_result_free(&r);
        if (!safe)
            return n - 1;
    }
    return cap;
}

// The store's first profile that a few copies of break (so the count matters), under either unknown rule: the
// rule is the check's (pl_coloc), which may change; the test follows it.
bool burst_profile(std::string *prof, bool *pess, unsigned *k)
{
    for (bool pe : {false, true})
        for (const char *n : {"xz", "disk", "dram", "llc", "memcached", "redis"}) {
            profile p;
            char why[256];
            if (profile_read((kStore + n + ".json").c_str(), &p, why, sizeof why) < 0)
                return false;
            unsigned kk = allowed(&p, pe, 16);
            profile_free(&p);
            if (kk >= 2 && kk <= 10) {
                *prof = n, *pess = pe, *k = kk;
                return true;
            }
        }
    return false;
}

// 50 pods of one profile, one after another, each through filter then prioritize with the nodes filter kept, the top
// score taken (kube-scheduler's choice when ibench decides), the nodes' tenant annotations never refreshed (all
// inside the DaemonSet's 30 s).  Returns the pods each node got; pending counts the pods no node was kept for.
std::map<std::string, unsigned> burst(unsigned assume_ttl, const std::string &prof, bool pessimistic,
                                      unsigned *pending)
{
    Ext x(kStore, 0, assume_ttl, nullptr, pessimistic);
    std::vector<std::pair<std::string, std::vector<std::string>>> all;
    for (int i = 0; i < 60; i++) {
        char n[16];
        snprintf(n, sizeof n, "node-%02d", i);
        all.push_back({n, {}});
    }
    std::map<std::string, unsigned> got;
    *pending = 0;
    for (int pod = 0; pod < 50; pod++) {
        std::string uid = "burst-" + std::to_string(pod);
        json_t *f = parse(x.ask(PL_EXT_VERB_FILTER, args_full(prof, uid, all)));
        std::set<std::string> kept;
        size_t i;
        json_t *it;
        json_array_foreach(json_object_get(json_object_get(f, "Nodes"), "items"), i, it)
            kept.insert(json_string_value(json_object_get(json_object_get(it, "metadata"), "name")));
        json_decref(f);
        if (kept.empty()) {
            ++*pending;
            continue;
        }
        std::vector<std::pair<std::string, std::vector<std::string>>> cand;
        for (auto &n : all)
            if (kept.count(n.first))
                cand.push_back(n);
        json_t *pr = parse(x.ask(PL_EXT_VERB_PRIORITIZE, args_full(prof, uid, cand)));
        std::string best;
        long top = -1;
        json_array_foreach(pr, i, it)
        {
            long s = (long)json_integer_value(json_object_get(it, "Score"));
            if (s > top)
                top = s, best = json_string_value(json_object_get(it, "Host"));
        }
        json_decref(pr);
        got[best]++;
    }
    return got;
}

TEST(ExtenderBurst, AssumedTenantsKeepEachNodeWithinWhatItsProfilesAllow)
{
    std::string prof;
    bool pess = false;
    unsigned k = 0;
    ASSERT_TRUE(burst_profile(&prof, &pess, &k)) << "no profile of the store breaks at 3-11 copies";
    unsigned pending = 0;
    auto with = burst(PL_EXT_ASSUME_TTL_S, prof, pess, &pending);
    unsigned placed = 0, most = 0;
    for (auto &n : with)
        placed += n.second, most = std::max(most, n.second);
    EXPECT_EQ(placed + pending, 50u);
    EXPECT_EQ(pending, 0u) << "60 nodes hold 50 pods at " << k << " a node";
    EXPECT_LE(most, k) << "a node got more pods of " << prof << " than the check allows (" << k << ")";
    EXPECT_GE(with.size(), (50u + k - 1) / k);
    // the race without them: every pod sees the same empty nodes, and the top one takes the whole burst
    auto without = burst(0, prof, pess, &pending);
    unsigned most0 = 0;
    for (auto &n : without)
        most0 = std::max(most0, n.second);
    EXPECT_GT(most0, k) << "without assumed tenants the burst should overfill a node (the race this closes)";
    printf("burst of 50 %s (%u a node allowed): most on one node %u with assumed tenants, %u without\n", prof.c_str(),
           k, most, most0);
}

TEST(ExtenderBurst, AssumedTenantConfirmedByTheListAndExpiredByTime)
{
    g_now = 1000;
    Ext x(kStore, 0, 60);
    std::vector<std::pair<std::string, std::vector<std::string>>> nodes = {{"a", {}}};
    x.ask(PL_EXT_VERB_PRIORITIZE, args_full("xz", "u1", nodes));
    EXPECT_EQ(x.stats().assumed, 1ul);
    x.ask(PL_EXT_VERB_PRIORITIZE, args_full("xz", "u1", nodes)); // the same pod again: replaced, not added
    EXPECT_EQ(x.stats().assumed, 1ul);
    x.ask(PL_EXT_VERB_FILTER, args_full("disk", "u2", {{"a", {"xz"}}})); // a's list shows it now
    EXPECT_EQ(x.stats().assumed, 0ul);
    EXPECT_EQ(x.stats().assumed_confirmed, 1ul);
    x.ask(PL_EXT_VERB_PRIORITIZE, args_full("xz", "u3", nodes));
    g_now += 59;
    x.ask(PL_EXT_VERB_FILTER, args_full("disk", "u4", {{"b", {}}}));
    EXPECT_EQ(x.stats().assumed, 1ul);
    g_now += 2;
    x.ask(PL_EXT_VERB_FILTER, args_full("disk", "u4", {{"b", {}}}));
    EXPECT_EQ(x.stats().assumed, 0ul);
    EXPECT_EQ(x.stats().assumed_expired, 1ul);
}

// ---- the figures

TEST(ExtenderMetrics, PrometheusTextWithRefusalsByResource)
{
    g_now = 0;
    Ext x(kStore);
    int st = 0;
    std::string fa = x.ask(PL_EXT_VERB_FILTER,
                           ib_test::file_text(std::string(IBENCH_FIXTURES) + "/extender/filter-full.request.json"), &st);
    ASSERT_EQ(st, 200);
    x.ask(PL_EXT_VERB_FILTER, args_full("xz", "", {{"a", {"nosuch"}}}));
    char *text = nullptr;
    ASSERT_EQ(pl_extender_metrics(x.x, &text), 0);
    std::string t = text;
    free(text);
    // the exposition format: "# HELP name text", "# TYPE name counter|gauge", "name{label="v",...} value"
    std::regex help(R"(# HELP (ibench_extender_[a-z_]+) .+)"), type(R"(# TYPE (ibench_extender_[a-z_]+) (counter|gauge))"),
        sample(R"((ibench_extender_[a-z_]+)(\{[a-z_]+="[^"\\\n]*"(,[a-z_]+="[^"\\\n]*")*\})? ([0-9]+(\.[0-9]+)?))");
    std::map<std::string, std::string> types;
    std::map<std::string, double> values;
    std::istringstream in(t);
    int lines = 0;
    for (std::string line; std::getline(in, line); lines++) {
        std::smatch m;
        if (std::regex_match(line, m, help))
            continue;
        if (std::regex_match(line, m, type)) {
            EXPECT_EQ(types.count(m[1]), 0u) << "two TYPE lines for " << m[1];
            types[m[1]] = m[2];
            continue;
        }
        ASSERT_TRUE(std::regex_match(line, m, sample)) << "not Prometheus text: " << line;
        EXPECT_EQ(types.count(m[1]), 1u) << m[1] << " has no TYPE before it";
        values[std::string(m[1]) + std::string(m[2])] = std::stod(m[4]);
    }
    EXPECT_GT(lines, 20);
    EXPECT_EQ(values["ibench_extender_decisions_total{verb=\"filter\"}"], 2);
    EXPECT_EQ(values["ibench_extender_refusals_total{resource=\"unjudged\"}"], 2); // n7 of the fixture, and a
    EXPECT_GT(values["ibench_extender_cache_misses_total"], 0);
    EXPECT_EQ(values["ibench_extender_cache_capacity"], PL_EXT_CACHE_CAP);
    // every resource counted is one the answer's reasons name as deciding ("RES (who breaks whom ...)")
    unsigned by_resource = 0;
    const std::string pre = "ibench_extender_refusals_total{resource=\"";
    for (auto &v : values) {
        if (v.first.rfind(pre, 0) != 0)
            continue;
        std::string res = v.first.substr(pre.size(), v.first.size() - pre.size() - 2);
        if (res == "unjudged" || res == "no-room")
            continue;
        EXPECT_NE(fa.find(res + " ("), std::string::npos) << res << " is not a deciding resource of " << fa;
        by_resource++;
    }
    EXPECT_GT(by_resource, 0u) << "the fixture's unsafe node is refused for a resource:\n" << t;
}

// ---- over loopback HTTP: the command as deployed

using Server = ib_test::ExtenderProc;

TEST(ExtenderLoopback, LateProfileSeenWithinTheDocumentedTime)
{
    ib_test::TempDir d("ext_http_late");
    copy_profile("disk", d.path() + "/disk.json");
    Server s({"--profiles", d.path()});
    ASSERT_GT(s.port(), 0);
    int st = 0;
    EXPECT_NE(error_of(s.post(PL_EXT_VERB_FILTER, args_full("xz", "", {}), &st)), "");
    EXPECT_EQ(st, 200);
    copy_profile("xz", d.path() + "/xz.json.tmp");
    ASSERT_EQ(rename((d.path() + "/xz.json.tmp").c_str(), (d.path() + "/xz.json").c_str()), 0);
    auto t0 = std::chrono::steady_clock::now();
    double secs = -1;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() <
           (PL_EXT_STORE_CHECK_MS / 1000.0 + 1) * ib_test::kHangScale) {
        if (error_of(s.post(PL_EXT_VERB_FILTER, args_full("xz", "", {}), &st)).empty()) {
            secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            break;
        }
        usleep(50000);
    }
    EXPECT_GE(secs, 0) << "xz.json not seen within PL_EXT_STORE_CHECK_MS + 1 s";
    EXPECT_LE(secs, PL_EXT_STORE_CHECK_MS / 1000.0 + 0.2 * ib_test::kHangScale);
}

// The burst again, over HTTP in the shipped form: node names only, the nodes' state in the store's nodes/ (never
// refreshed during the burst), the command's default --assume-ttl against --assume-ttl 0.
std::map<std::string, unsigned> burst_http(const std::vector<std::string> &extra, const std::string &prof,
                                           bool pess, unsigned *pending)
{
    ib_test::TempDir d("ext_http_burst");
    for (const char *n : {"xz", "disk", "dram", "llc", "memcached", "redis"})
        copy_profile(n, d.path() + "/" + n + ".json");
    mkdir((d.path() + "/nodes").c_str(), 0755);
    std::vector<std::string> names;
    for (int i = 0; i < 60; i++) {
        char n[16];
        snprintf(n, sizeof n, "node-%02d", i);
        names.push_back(n);
        write(d.path() + "/nodes/" + n + ".json", "{\"annotations\": {\"" PL_EXT_ANN_TENANTS "\": \"[]\"}, "
                                                  "\"status\": {\"allocatable\": {\"cpu\": \"16\"}}}");
    }
    std::vector<std::string> a = {"--profiles", d.path(), "--unknown", pess ? "pessimistic" : "optimistic"};
    a.insert(a.end(), extra.begin(), extra.end());
    Server s(a);
    std::map<std::string, unsigned> got;
    *pending = 0;
    EXPECT_GT(s.port(), 0);
    if (!s.port())
        return got;
    for (int pod = 0; pod < 50; pod++) {
        auto body = [&](const std::vector<std::string> &nn) {
            std::string b = args_names(prof, nn);
            json_t *j = parse(b);
            json_object_set_new(json_object_get(json_object_get(j, "Pod"), "metadata"), "uid",
                                json_string(("h-" + std::to_string(pod)).c_str()));
            char *t = json_dumps(j, JSON_COMPACT);
            json_decref(j);
            std::string r = t;
            free(t);
            return r;
        };
        int st = 0;
        json_t *f = parse(s.post(PL_EXT_VERB_FILTER, body(names), &st));
        EXPECT_EQ(st, 200);
        std::vector<std::string> kept;
        size_t i;
        json_t *it;
        json_array_foreach(json_object_get(f, "NodeNames"), i, it) kept.push_back(json_string_value(it));
        json_decref(f);
        if (kept.empty()) {
            ++*pending;
            continue;
        }
        json_t *pr = parse(s.post(PL_EXT_VERB_PRIORITIZE, body(kept), &st));
        std::string best;
        long top = -1;
        json_array_foreach(pr, i, it)
        {
            long sc = (long)json_integer_value(json_object_get(it, "Score"));
            if (sc > top)
                top = sc, best = json_string_value(json_object_get(it, "Host"));
        }
        json_decref(pr);
        got[best]++;
    }
    return got;
}

TEST(ExtenderLoopback, BurstOfFiftyNamesOnlyWithinWhatEachNodeAllows)
{
    std::string prof;
    bool pess = false;
    unsigned k = 0, pending = 0, most = 0, most0 = 0, placed = 0;
    ASSERT_TRUE(burst_profile(&prof, &pess, &k));
    for (auto &n : burst_http({}, prof, pess, &pending))
        most = std::max(most, n.second), placed += n.second;
    EXPECT_EQ(placed, 50u);
    EXPECT_EQ(pending, 0u);
    EXPECT_LE(most, k) << prof;
    for (auto &n : burst_http({"--assume-ttl", "0"}, prof, pess, &pending))
        most0 = std::max(most0, n.second);
    EXPECT_GT(most0, k) << "without assumed tenants one node takes more than it allows";
}

} // namespace
