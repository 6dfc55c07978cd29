// The simulator's built-in scenario replayed through the extender's decisions: at every placement the interference
// policy makes in `place simulate --scenario ibench-200x40`, the same fleet state is put to the extender as the
// ExtenderArgs kube-scheduler would send (the nodes with room, their tenants' profile names, the pod's profile and
// requests), filter then prioritize, and its top-scored node must be the simulator's choice.  The one knowledge the
// extender lacks is the simulator's adaptive step (re-profiles it keeps in memory): decisions where it refused a
// group for that reason are counted apart, and every other decision must agree.
#include <gtest/gtest.h>

#include <cmath>
#include <sys/stat.h>
#include <cstdio>
#include <string>
#include <vector>

#include <jansson.h>

#include "test_support.h"

extern "C" {
#include "http_server.h"
#include "pl_coloc.h"
#include "pl_extender.h"
#include "pl_sim.h"
#include "profile_fmt.h"
}

namespace {

pl_extender *g_ext;
int g_http_port; // 0: call the library; else POST to the extender's server on this loopback port

// One verb's answer, from the library or over HTTP.
std::string ask(const char *verb, const std::string &body, int *status)
{
    if (g_http_port) {
        std::string r = ib_test::http(g_http_port, "POST", std::string("/") + verb, body);
        *status = r.rfind("HTTP/1.1 ", 0) == 0 ? atoi(r.c_str() + 9) : -1;
        size_t p = r.find("\r\n\r\n");
        return p == std::string::npos ? "" : r.substr(p + 4);
    }
    char *out = nullptr;
    EXPECT_EQ(pl_extender_handle(g_ext, verb, body.data(), body.size(), &out, status), 0);
    std::string a = out ? out : "";
    free(out);
    return a;
}
const pl_sim_scenario *g_scenario;

// The store, from memory: the scenario's profiles by name (synthetic ones have no file).
const profile *lookup(void *, const char *name)
{
    for (unsigned a = 0; a < g_scenario->f.napps; a++)
        if (!strcmp(g_scenario->f.app[a].p->name, name))
            return g_scenario->f.app[a].p;
    return nullptr;
}
unsigned g_decisions, g_agree, g_learned, g_placed;

bool fits(const pl_sim_fleet *f, unsigned mi, unsigned a)
{
    const pl_sim_machine *m = &f->m[mi];
    return !m->closed && m->ntenants < PL_SIM_MAX_TENANTS && m->cpu_used + f->app[a].cpus <= m->cpus &&
           m->mem_used + f->app[a].mem <= m->mem;
}

// The ExtenderArgs for app a on the nodes with room (kube-scheduler filters resources before the extender).
std::string request(const pl_sim_fleet *f, unsigned a, int exclude)
{
    json_t *items = json_array();
    for (unsigned i = 0; i < f->nm; i++) {
        if ((int)i == exclude || !fits(f, i, a))
            continue;
        const pl_sim_machine *m = &f->m[i];
        json_t *ten = json_array();
        for (unsigned t = 0; t < m->ntenants; t++)
            json_array_append_new(ten, json_string(f->app[m->tenant[t]].p->name));
        char *tens = json_dumps(ten, JSON_COMPACT);
        json_decref(ten);
        char cpu[32], mem[32];
        snprintf(cpu, sizeof cpu, "%g", m->cpus - m->cpu_used);
        snprintf(mem, sizeof mem, "%.0f", m->mem - m->mem_used);
        json_array_append_new(items, json_pack("{s:{s:s,s:{s:s}},s:{s:{s:s,s:s}}}", "metadata", "name", m->name,
                                               "annotations", PL_EXT_ANN_TENANTS, tens, "status", "allocatable",
                                               "cpu", cpu, "memory", mem));
        free(tens);
    }
    char cpu[32], mem[32];
    snprintf(cpu, sizeof cpu, "%u", f->app[a].cpus);
    snprintf(mem, sizeof mem, "%.0f", f->app[a].mem);
    json_t *req = json_pack("{s:{s:{s:s,s:{s:s}},s:{s:[{s:s,s:{s:{s:s,s:s}}}]}},s:{s:o}}", "Pod", "metadata", "name",
                            "app", "annotations", PL_EXT_ANN_PROFILE, f->app[a].p->name, "spec", "containers", "name",
                            "c", "resources", "requests", "cpu", cpu, "memory", mem, "Nodes", "items", items);
    char *s = json_dumps(req, JSON_COMPACT);
    std::string r = s;
    free(s);
    json_decref(req);
    return r;
}

// The extender's choice: filter, then prioritize the kept nodes, the top score (unique: 10); -1 when none is kept.
int extender_choice(const pl_sim_fleet *f, unsigned a, int exclude)
{
    std::string req = request(f, a, exclude);
    int st = 0;
    std::string fa = ask(PL_EXT_VERB_FILTER, req, &st);
    EXPECT_EQ(st, 200) << fa;
    json_t *fr = json_loads(fa.c_str(), 0, nullptr);
    EXPECT_STREQ(json_string_value(json_object_get(fr, "Error")), "");
    json_t *kept = json_object_get(json_object_get(fr, "Nodes"), "items");
    if (json_array_size(kept) == 0) {
        json_decref(fr);
        return -1;
    }
    json_t *preq = json_loads(req.c_str(), 0, nullptr);
    json_object_set(json_object_get(preq, "Nodes"), "items", kept);
    char *ps = json_dumps(preq, JSON_COMPACT);
    json_decref(preq);
    json_decref(fr);
    std::string pa = ask(PL_EXT_VERB_PRIORITIZE, ps, &st);
    free(ps);
    EXPECT_EQ(st, 200) << pa;
    json_t *pr = json_loads(pa.c_str(), 0, nullptr);
    int best = -1;
    long top = -1;
    unsigned ntop = 0;
    size_t i;
    json_t *h;
    json_array_foreach(pr, i, h)
    {
        long s = (long)json_integer_value(json_object_get(h, "Score"));
        const char *host = json_string_value(json_object_get(h, "Host"));
        if (s > top)
            top = s, ntop = 0;
        if (s == top) {
            ntop++;
            for (unsigned m = 0; m < f->nm; m++)
                if (!strcmp(f->m[m].name, host))
                    best = (int)m;
        }
    }
    EXPECT_EQ(ntop, 1u) << "the top score is unique";
    json_decref(pr);
    return best;
}

// The simulator's rule without its adaptive memory: the re-profiles set aside for the call (const_cast: restored).
int sim_without_memory(const pl_sim_fleet *f, unsigned a, int exclude, const pl_coloc_opts *o)
{
    std::vector<unsigned> kept(f->napps);
    for (unsigned i = 0; i < f->napps; i++)
        kept[i] = f->app[i].nlearned, const_cast<pl_sim_app *>(&f->app[i])->nlearned = 0;
    int c = pl_sim_choose_safe(f, a, exclude, o);
    for (unsigned i = 0; i < f->napps; i++)
        const_cast<pl_sim_app *>(&f->app[i])->nlearned = kept[i];
    return c;
}

// The policy of the run: the simulator's interference rule.  The extender is asked the same question beside it and
// must answer what the rule answers without the simulator's memory of re-profiles (which only the simulator holds).
int replay_choose(const pl_sim_fleet *f, unsigned a, int exclude)
{
    const pl_coloc_opts o = {PL_COLOC_MARGIN, false, false, false, PL_DECIDE_MODEL, PL_WM_PRODUCT, false};
    int sim = pl_sim_choose_safe(f, a, exclude, &o);
    int bare = sim_without_memory(f, a, exclude, &o);
    int ext = extender_choice(f, a, exclude);
    g_decisions++;
    g_placed += sim >= 0;
    g_learned += sim != bare;
    if (ext == bare)
        g_agree++;
    else
        ADD_FAILURE() << "app " << a << " (" << f->app[a].p->name << "): simulator " << bare << ", extender " << ext;
    return sim;
}

int handle(void *ctx, const char *verb, const char *body, size_t len, char **out, int *status)
{
    return pl_extender_handle(static_cast<pl_extender *>(ctx), verb, body, len, out, status);
}

void replay(uint64_t seed, bool over_http)
{
    pl_sim_scenario s;
    char why[256] = "";
    ASSERT_EQ(pl_sim_scenario_make("ibench-200x40", seed, nullptr, 0, &s, why, sizeof why), 0) << why;
    g_scenario = &s;
    pl_extender_opts eo = {}; // the policy's: unknowns optimistic; no assumed tenants (the fleet is the truth)
    eo.margin = PL_COLOC_MARGIN, eo.pessimistic = false, eo.lookup = lookup, eo.established = false;
    ASSERT_EQ(pl_extender_new(&eo, &g_ext, why, sizeof why), 0) << why;
    http_server *srv = nullptr;
    g_http_port = 0;
    if (over_http) { /* the command's server, in process, on a free loopback port */
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        http_server_opts so{};
        so.addr = (const sockaddr *)&a, so.addrlen = sizeof a, so.threads = 2, so.max_body = PL_EXT_MAX_BODY;
        so.timeout_s = 10, so.handler = handle, so.ctx = g_ext;
        ASSERT_EQ(http_server_start(&so, &srv, why, sizeof why), 0) << why;
        g_http_port = http_server_port(srv);
    }
    g_decisions = g_agree = g_learned = g_placed = 0;
    pl_sim_policy pol = {"replay", replay_choose};
    pl_sim_result r;
    ASSERT_EQ(pl_sim_run(&s.f, &pol, seed, &r, why, sizeof why), 0) << why;
    printf("seed %llu%s: %u decisions (%u placed), the extender agreed on %u; the simulator's re-profiles changed "
           "%u of them\n",
           (unsigned long long)seed, over_http ? " over HTTP" : "", g_decisions, g_placed, g_agree, g_learned);
    EXPECT_EQ(g_agree, g_decisions);
    // the run is the interference policy's: the same figures as place simulate
    pl_sim_result ref;
    pl_sim_scenario s2;
    ASSERT_EQ(pl_sim_scenario_make("ibench-200x40", seed, nullptr, 0, &s2, why, sizeof why), 0);
    ASSERT_EQ(pl_sim_run(&s2.f, pl_sim_policy_find("interference"), seed, &ref, why, sizeof why), 0);
    EXPECT_EQ(r.violations, ref.violations);
    EXPECT_DOUBLE_EQ(r.machine_seconds, ref.machine_seconds);
    pl_sim_result_free(&ref);
    pl_sim_scenario_free(&s2);
    pl_sim_result_free(&r);
    if (srv)
        http_server_stop(srv);
    g_http_port = 0;
    pl_extender_free(g_ext);
    pl_sim_scenario_free(&s);
}

TEST(ExtenderReplay, SimulatorScenarioGivesTheSamePlacements)
{
    replay(1, false);
    replay(2, false);
}

// The acceptance's form: the same over loopback HTTP, through `ibench extender`'s server (seed 1).
TEST(ExtenderReplay, OverHttpGivesTheSamePlacements) { replay(1, true); }

} // namespace
