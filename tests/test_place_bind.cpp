// test_place_bind.cpp - memory follows the placement (placement/machine/pl_bind.h, place apply --mem, place run).
//
// Multi-node decisions on synthetic and XML topologies of machines this one is not (2 and 4 NUMA nodes); the
// binding itself on this machine (one NUMA node) through the kernel's own reports: get_mempolicy in the launched
// command, /proc/PID/numa_maps and /proc/PID/status of it.  The cgroup v2 cpuset's file protocol on a tree of
// plain files laid out as cgroupfs (this machine has no cpuset controller in v2).
#include <hwloc.h>
#include <jansson.h>
#include <sys/mman.h>

#include <fstream>

#include "pl_bind.h"
#include "pl_machine.h"
#include "test_support.h"

using ib_test::Proc;

namespace {

// The probe: when the test binary is started with IB_TEST_MEMPOLICY_PROBE set (as the command of `place run`), it
// prints its own memory policy (get_mempolicy) and CPU affinity before main and exits: what the kernel says the
// launched command got from its first instruction.
std::string join(const std::vector<unsigned> &v)
{
    std::string s;
    for (unsigned x : v)
        s += (s.empty() ? "" : ",") + std::to_string(x);
    return s;
}

int probe()
{
    if (!getenv("IB_TEST_MEMPOLICY_PROBE"))
        return 0;
    int mode;
    unsigned nodes[64], n = 0;
    char why[256];
    if (pl_mpol_get(&mode, nodes, 64, &n, why, sizeof why) < 0) {
        printf("error %s\n", why);
        _exit(9);
    }
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    std::vector<unsigned> cpus;
    for (unsigned c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s))
            cpus.push_back(c);
    const char *name = mode == PL_MPOL_NONE ? "default" : mode == PL_MPOL_BIND ? "bind" : mode == PL_MPOL_INTERLEAVE
                                                                                           ? "interleave"
                                                                                           : "other";
    printf("mode=%s nodes=%s cpus=%s\n", name, join(std::vector<unsigned>(nodes, nodes + (n < 64 ? n : 64))).c_str(),
           join(cpus).c_str());
    fflush(stdout);
    _exit(0);
}
const int probed = probe();

struct CliRun {
    int code = -1;
    std::string out, err;
};

CliRun ibench(const std::vector<std::string> &args, const std::vector<std::string> &env = {})
{
    Proc p;
    CliRun r;
    if (!p.start(args, env))
        return r;
    if (!p.finish(30))
        r.err = "timed out";
    r.code = p.exit_code();
    r.out = p.out;
    r.err += p.err;
    return r;
}

std::string self_exe()
{
    char b[4096];
    ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
    return n > 0 ? std::string(b, (size_t)n) : "";
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void put(const std::string &path, const std::string &text)
{
    std::ofstream f(path);
    f << text;
}

std::string status_field(pid_t pid, const char *field)
{
    std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/status"));
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) {
            size_t i = line.find_first_not_of(" \t", strlen(field));
            return i == std::string::npos ? "" : line.substr(i);
        }
    return "";
}

// The child of `parent` whose comm is `comm`, or -1 (found by its parent in /proc/PID/stat: task/TID/children is
// not on every kernel).
pid_t child_named(pid_t parent, const char *comm)
{
    for (const auto &e : ib_test::dir_entries("/proc")) {
        int c = atoi(e.c_str());
        std::string st = c > 0 ? slurp("/proc/" + e + "/stat") : "";
        size_t rp = st.rfind(')');
        int ppid = 0;
        if (rp != std::string::npos && sscanf(st.c_str() + rp + 1, " %*c %d", &ppid) == 1 && ppid == parent &&
            slurp("/proc/" + e + "/comm") == std::string(comm) + "\n")
            return c;
    }
    return -1;
}

// This machine's CPU 0, allowed to us, and a kernel with NUMA policies (get_mempolicy answers).
bool can_bind(std::string &why)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) < 0 || !CPU_ISSET(0, &s)) {
        why = "needs CPU 0";
        return false;
    }
    int mode;
    unsigned nodes[8], n;
    char w[256];
    if (pl_mpol_get(&mode, nodes, 8, &n, w, sizeof w) < 0) {
        why = w;
        return false;
    }
    return true;
}

struct Machine {
    struct pl_machine m;
    bool ok = false;
    char why[512] = "";
    explicit Machine(const char *spec, const char *dist = nullptr)
    {
        ok = pl_machine_load(&m, spec, dist, why, sizeof why) == 0;
    }
    ~Machine()
    {
        if (ok)
            pl_machine_free(&m);
    }
};

// The policy of spec for cpus on m, or the error and its line.
struct Pol {
    int rc;
    std::string why, text;
    std::vector<unsigned> nodes, cpu_nodes;
    int mode;
};
Pol policy(const struct pl_machine *m, const char *spec, const std::vector<int> &cpus)
{
    Pol r{};
    char why[512] = "";
    struct pl_mem_spec s;
    r.rc = pl_mem_parse(spec, &s, why, sizeof why);
    if (r.rc == 0) {
        struct pl_mem_policy p;
        r.rc = pl_mem_resolve(m, &s, cpus.data(), (unsigned)cpus.size(), &p, why, sizeof why);
        if (r.rc == 0) {
            r.text = p.text;
            r.mode = p.mode;
            r.nodes.assign(p.nodes, p.nodes + p.nnodes);
            r.cpu_nodes.assign(p.cpu_nodes, p.cpu_nodes + p.ncpu_nodes);
            pl_mem_policy_free(&p);
        }
        pl_mem_spec_free(&s);
    }
    r.why = why;
    return r;
}

const char kTwoNodes[] = "synthetic:pack:2 [numa] core:2 pu:2"; // node 0: PUs 0-3, node 1: PUs 4-7

} // namespace

TEST(PlBind, MemParsesEveryModeAndRefusesBadLists)
{
    struct pl_mem_spec s;
    char why[256];
    struct Good {
        const char *text;
        enum pl_mem_kind kind;
        std::vector<unsigned> nodes;
    } good[] = {{nullptr, PL_MEM_LOCAL, {}},        {"", PL_MEM_LOCAL, {}},
                {"local", PL_MEM_LOCAL, {}},        {"none", PL_MEM_NONE, {}},
                {"interleave", PL_MEM_INTERLEAVE, {}}, {"interleave:1,0", PL_MEM_INTERLEAVE, {0, 1}},
                {"2,0", PL_MEM_NODES, {0, 2}},       {"1-3", PL_MEM_NODES, {1, 2, 3}}};
    for (const auto &g : good) {
        ASSERT_EQ(pl_mem_parse(g.text, &s, why, sizeof why), 0) << (g.text ? g.text : "NULL") << ": " << why;
        EXPECT_EQ(s.kind, g.kind) << (g.text ? g.text : "NULL");
        EXPECT_EQ(std::vector<unsigned>(s.nodes, s.nodes + s.nnodes), g.nodes) << (g.text ? g.text : "NULL");
        pl_mem_spec_free(&s);
    }
    for (const char *bad : {"x", "interleave:", "0,0", "-1", "bind", "interleave:a", "0-"}) {
        why[0] = 0;
        EXPECT_EQ(pl_mem_parse(bad, &s, why, sizeof why), -EINVAL) << bad;
        EXPECT_NE(strstr(why, "--mem '"), nullptr) << bad << " -> " << why;
        EXPECT_EQ(s.nodes, nullptr) << bad;
    }
}

// The node set of a placement on a 2-node machine: the nodes its CPUs are on, and what each --mem makes of it.
TEST(PlBind, NodeSetsOnATwoNodeSyntheticMachine)
{
    Machine M(kTwoNodes);
    ASSERT_TRUE(M.ok) << M.why;
    ASSERT_EQ(M.m.nnodes, 2u);
    Pol p = policy(&M.m, "local", {4, 5});
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_EQ(p.mode, PL_MPOL_BIND);
    EXPECT_EQ(p.nodes, std::vector<unsigned>{1});
    EXPECT_EQ(p.cpu_nodes, std::vector<unsigned>{1});
    EXPECT_EQ(p.text, "bind:1");
    p = policy(&M.m, nullptr, {5, 0}); // the default is local; CPUs on both nodes
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_EQ(p.text, "bind:0-1");
    EXPECT_EQ(p.cpu_nodes, (std::vector<unsigned>{0, 1}));
    p = policy(&M.m, "interleave", {0, 7});
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_EQ(p.mode, PL_MPOL_INTERLEAVE);
    EXPECT_EQ(p.text, "interleave:0-1");
    p = policy(&M.m, "interleave", {3});
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_EQ(p.text, "interleave:0") << "the interleave set is the CPUs' nodes, not the machine's";
    p = policy(&M.m, "interleave:0-1", {3});
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_EQ(p.text, "interleave:0-1");
    EXPECT_EQ(p.cpu_nodes, std::vector<unsigned>{0});
    p = policy(&M.m, "1", {0, 1}); // memory away from the CPUs, as asked
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_EQ(p.text, "bind:1");
    EXPECT_EQ(p.cpu_nodes, std::vector<unsigned>{0});
    p = policy(&M.m, "none", {6});
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_EQ(p.mode, PL_MPOL_NONE);
    EXPECT_EQ(p.text, "none");
    EXPECT_TRUE(p.nodes.empty());
    EXPECT_EQ(p.cpu_nodes, std::vector<unsigned>{1});

    // errors: a node that does not exist, a CPU in no node, no CPUs to take nodes from
    p = policy(&M.m, "3", {0});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_NE(p.why.find("node 3 does not exist here (nodes 0-1)"), std::string::npos) << p.why;
    p = policy(&M.m, "interleave:0,2", {0});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_NE(p.why.find("node 2 does not exist here"), std::string::npos) << p.why;
    p = policy(&M.m, "local", {0, 9});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_NE(p.why.find("CPU 9 is in no NUMA node"), std::string::npos) << p.why;
    p = policy(&M.m, "local", {});
    EXPECT_EQ(p.rc, -EINVAL);
    EXPECT_NE(p.why.find("no CPUs"), std::string::npos) << p.why;
}

// A 4-node machine exported as XML (with its latency matrix, as lstopo writes it): the nodes of CPUs named by OS
// index, and the locality score before and after the memory moves, from the XML's own distances.
TEST(PlBind, NodeSetsAndScoresOnAFourNodeXmlMachine)
{
    ib_test::TempDir dir("place_bind");
    std::string xml = dir.path() + "/four.xml";
    ASSERT_EQ(ib_test::write_ring_numa_xml(xml), "");
    Machine M(xml.c_str());
    ASSERT_TRUE(M.ok) << M.why;
    ASSERT_EQ(M.m.nnodes, 4u);
    ASSERT_NE(M.m.dist, nullptr) << M.m.dist_source;
    Pol p = policy(&M.m, "local", {2, 3, 6}); // nodes 1 and 3 (two CPUs per node)
    ASSERT_EQ(p.rc, 0) << p.why;
    EXPECT_EQ(p.text, "bind:1,3");
    p = policy(&M.m, "4", {0});
    EXPECT_NE(p.why.find("node 4 does not exist here (nodes 0-3)"), std::string::npos) << p.why;

    // threads on node 1; memory on node 3 (two hops: 10/30), then moved to node 1 (local)
    double cpu[4];
    int cpus[2] = {2, 3};
    EXPECT_EQ(pl_cpus_per_node(&M.m, cpus, 2, cpu), 0u);
    EXPECT_EQ(cpu[1], 2);
    EXPECT_EQ(cpu[0] + cpu[2] + cpu[3], 0);
    uint64_t away[4] = {0, 0, 0, 1 << 20}, home[4] = {0, 1 << 20, 0, 0}, half[4] = {0, 1 << 19, 1 << 19, 0};
    double s;
    char why[256];
    ASSERT_EQ(pl_bind_score(&M.m, cpu, away, &s, why, sizeof why), 0) << why;
    EXPECT_NEAR(s, 10.0 / 30, 1e-12);
    ASSERT_EQ(pl_bind_score(&M.m, cpu, home, &s, why, sizeof why), 0) << why;
    EXPECT_NEAR(s, 1.0, 1e-12);
    ASSERT_EQ(pl_bind_score(&M.m, cpu, half, &s, why, sizeof why), 0) << why;
    EXPECT_NEAR(s, 0.5 + 0.5 * 10 / 20, 1e-12);
    uint64_t none[4] = {0, 0, 0, 0};
    EXPECT_EQ(pl_bind_score(&M.m, cpu, none, &s, why, sizeof why), -ENODATA);
    EXPECT_NE(strstr(why, "no memory resident"), nullptr) << why;

    // bytes outside the set: what a move must clear
    struct pl_mem_spec sp;
    struct pl_mem_policy pol;
    ASSERT_EQ(pl_mem_parse("1", &sp, why, sizeof why), 0);
    ASSERT_EQ(pl_mem_resolve(&M.m, &sp, cpus, 2, &pol, why, sizeof why), 0) << why;
    EXPECT_EQ(pl_mem_outside(&M.m, &pol, away), 1u << 20);
    EXPECT_EQ(pl_mem_outside(&M.m, &pol, home), 0u);
    EXPECT_EQ(pl_mem_outside(&M.m, &pol, half), 1u << 19);
    pl_mem_policy_free(&pol);
    pl_mem_spec_free(&sp);
}

// Several nodes and no distance matrix (a synthetic machine has none): the score is not told, and says why.
TEST(PlBind, ScoreNeedsDistancesOnSeveralNodesAndIsOneOnOne)
{
    Machine two(kTwoNodes);
    ASSERT_TRUE(two.ok) << two.why;
    double cpu[2] = {1, 0}, s = -1;
    uint64_t mem[2] = {0, 4096};
    char why[256] = "";
    EXPECT_EQ(pl_bind_score(&two.m, cpu, mem, &s, why, sizeof why), -ENODATA);
    EXPECT_NE(strstr(why, "2 NUMA nodes and no distances"), nullptr) << why;
    Machine one("synthetic:pack:1 core:2 pu:1");
    ASSERT_TRUE(one.ok) << one.why;
    ASSERT_EQ(one.m.nnodes, 1u);
    double c1[1] = {2};
    uint64_t m1[1] = {4096};
    ASSERT_EQ(pl_bind_score(&one.m, c1, m1, &s, why, sizeof why), 0) << why;
    EXPECT_EQ(s, 1);
}

TEST(PlBind, NodeMaskIsTheKernelsLayoutAndReadsBack)
{
    unsigned long mask[2], maxnode = 0;
    char why[128];
    const unsigned bits = 8 * sizeof(unsigned long);
    unsigned nodes[3] = {0, 3, bits}; // the first node of the second word
    ASSERT_EQ(pl_nodemask(nodes, 3, mask, 2, &maxnode, why, sizeof why), 0) << why;
    EXPECT_EQ(mask[0], 0x9ul);
    EXPECT_EQ(mask[1], 0x1ul);
    EXPECT_EQ(maxnode, (unsigned long)bits + 2) << "the kernel reads maxnode - 1 bits";
    unsigned back[8];
    ASSERT_EQ(pl_nodemask_nodes(mask, 2, back, 8), 3u);
    EXPECT_EQ(std::vector<unsigned>(back, back + 3), std::vector<unsigned>(nodes, nodes + 3));
    unsigned far[1] = {2 * bits};
    EXPECT_EQ(pl_nodemask(far, 1, mask, 2, &maxnode, why, sizeof why), -ERANGE);
}

TEST(PlBind, NumaMapsPolicyFieldAndCgroup2Location)
{
    char pol[64];
    ASSERT_EQ(pl_numa_maps_policy("7f00 bind:0-1 anon=3 dirty=3 N0=3 kernelpagesize_kB=4", pol, sizeof pol), 0);
    EXPECT_STREQ(pol, "bind:0-1");
    EXPECT_EQ(pl_numa_maps_policy("7f00", pol, sizeof pol), -EINVAL);

    const char *mi = "22 1 0:21 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755\n"
                     "29 22 0:25 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
                     "30 22 0:26 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n";
    char mount[256], group[256], why[256];
    ASSERT_EQ(pl_cgroup2_locate(mi, "4:memory:/a\n0::/user.slice/s-1.scope\n", mount, sizeof mount, group,
                                sizeof group, why, sizeof why), 0) << why;
    EXPECT_STREQ(mount, "/sys/fs/cgroup/unified");
    EXPECT_STREQ(group, "/user.slice/s-1.scope");
    EXPECT_EQ(pl_cgroup2_locate("30 22 0:26 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n", "0::/\n", mount,
                                sizeof mount, group, sizeof group, why, sizeof why), -ENOENT);
    EXPECT_NE(strstr(why, "no cgroup v2"), nullptr) << why;
    EXPECT_EQ(pl_cgroup2_locate(mi, "4:memory:/a\n", mount, sizeof mount, group, sizeof group, why, sizeof why),
              -ENOENT);
    EXPECT_NE(strstr(why, "no 0:: line"), nullptr) << why;
}

// The cpuset's file protocol on a tree of plain files laid out as cgroupfs: refused without the controller (the
// reason names what the group offers), made with it: the controller enabled for the children, the group's CPUs,
// nodes and process written.
TEST(PlBind, CpusetOnAFakeCgroupTree)
{
    ib_test::TempDir dir("place_cpuset");
    ASSERT_FALSE(dir.path().empty());
    std::string g = dir.path();
    char made[4096] = "", why[512] = "";
    EXPECT_EQ(pl_cpuset_usable(g.c_str(), why, sizeof why), -ENOENT) << why;
    put(g + "/cgroup.controllers", "hugetlb\n");
    put(g + "/cgroup.subtree_control", "");
    EXPECT_EQ(pl_cpuset_usable(g.c_str(), why, sizeof why), -ENOTSUP);
    EXPECT_NE(strstr(why, "offers no cpuset controller (cgroup.controllers: hugetlb)"), nullptr) << why;
    EXPECT_EQ(pl_cpuset_make(g.c_str(), "ibench-place-1234", "0-1", "1", 1234, made, sizeof made, why, sizeof why),
              -ENOTSUP);
    EXPECT_EQ(access((g + "/ibench-place-1234").c_str(), F_OK), -1) << "nothing made when refused";
    put(g + "/cgroup.controllers", "cpuset cpu io memory\n");
    ASSERT_EQ(pl_cpuset_usable(g.c_str(), why, sizeof why), 0) << why;
    ASSERT_EQ(pl_cpuset_make(g.c_str(), "ibench-place-1234", "0-1", "1", 1234, made, sizeof made, why, sizeof why),
              0) << why;
    EXPECT_EQ(std::string(made), g + "/ibench-place-1234");
    EXPECT_EQ(slurp(g + "/cgroup.subtree_control"), "+cpuset");
    EXPECT_EQ(slurp(g + "/ibench-place-1234/cpuset.cpus"), "0-1");
    EXPECT_EQ(slurp(g + "/ibench-place-1234/cpuset.mems"), "1");
    EXPECT_EQ(slurp(g + "/ibench-place-1234/cgroup.procs"), "1234");
}

// The system calls on this machine: a policy set in a child reads back through get_mempolicy.
TEST(PlBindLive, SetPolicyReadsBackThroughGetMempolicy)
{
    std::string skip;
    if (!can_bind(skip))
        GTEST_SKIP() << skip;
    Machine M("live");
    ASSERT_TRUE(M.ok) << M.why;
    for (const char *spec : {"interleave", "local", "none"}) {
        int fd[2];
        ASSERT_EQ(pipe(fd), 0);
        pid_t p = fork();
        ASSERT_GE(p, 0);
        if (p == 0) {
            char why[256];
            struct pl_mem_spec s;
            struct pl_mem_policy pol;
            int cpu0 = 0, mode = -9;
            unsigned nodes[8], n = 0;
            if (pl_mem_parse(spec, &s, why, sizeof why) || pl_mem_resolve(&M.m, &s, &cpu0, 1, &pol, why, sizeof why) ||
                pl_mpol_set(&pol, why, sizeof why) || pl_mpol_get(&mode, nodes, 8, &n, why, sizeof why))
                _exit(2);
            int out[2] = {mode, (int)n};
            _exit(write(fd[1], out, sizeof out) == (ssize_t)sizeof out ? 0 : 3);
        }
        close(fd[1]);
        int got[2] = {-1, -1}, st;
        ASSERT_EQ(read(fd[0], got, sizeof got), (ssize_t)sizeof got) << spec;
        close(fd[0]);
        waitpid(p, &st, 0);
        EXPECT_EQ(got[0], !strcmp(spec, "interleave") ? PL_MPOL_INTERLEAVE : !strcmp(spec, "local") ? PL_MPOL_BIND
                                                                                                     : PL_MPOL_NONE)
            << spec;
        EXPECT_EQ(got[1], !strcmp(spec, "none") ? 0 : 1) << spec << ": the nodes of CPU 0, one node here";
    }
}

// `place run` from the first instruction: the command (this binary, probing itself before main) reads its own
// policy and CPUs.
TEST(PlaceRun, TheCommandStartsWithItsCpusAndMemoryPolicy)
{
    std::string skip;
    if (!can_bind(skip))
        GTEST_SKIP() << skip;
    std::string exe = self_exe();
    ASSERT_FALSE(exe.empty());
    struct Case {
        const char *mem, *want;
    } cases[] = {{"interleave", "mode=interleave nodes=0 cpus=0\n"},
                 {"local", "mode=bind nodes=0 cpus=0\n"},
                 {"0", "mode=bind nodes=0 cpus=0\n"},
                 {"none", "mode=default nodes= cpus=0\n"}};
    for (const auto &c : cases) {
        CliRun r = ibench({"place", "run", "--cpus", "0", "--mem", c.mem, "--", exe}, {"IB_TEST_MEMPOLICY_PROBE=1"});
        EXPECT_EQ(r.code, 0) << c.mem << ": " << r.err;
        EXPECT_EQ(r.out, c.want) << c.mem;
        EXPECT_EQ(r.err, "") << c.mem << ": nothing of ibench's own on a success";
    }
}

// The running command seen from outside: every mapping of /proc/PID/numa_maps under the policy, its CPUs in
// /proc/PID/status; a SIGTERM to ibench reaches it, and ibench exits as the command did (128 + 15).
TEST(PlaceRun, NumaMapsShowThePolicyAndSignalsReachTheCommand)
{
    std::string skip;
    if (!can_bind(skip))
        GTEST_SKIP() << skip;
    Proc p;
    ASSERT_TRUE(p.start({"place", "run", "--cpus", "0", "--mem", "0", "--", "sleep", "30"}, {}));
    // the command: ibench's child, once it is sleep
    pid_t cmd = -1;
    ASSERT_TRUE(p.pump_until([&] { return (cmd = child_named(p.pid, "sleep")) > 0; }, 10));
    std::string maps = slurp("/proc/" + std::to_string(cmd) + "/numa_maps");
    std::istringstream in(maps);
    std::string line;
    unsigned lines = 0;
    while (std::getline(in, line)) {
        char pol[64] = "";
        ASSERT_EQ(pl_numa_maps_policy(line.c_str(), pol, sizeof pol), 0) << line;
        EXPECT_STREQ(pol, "bind:0") << line;
        lines++;
    }
    EXPECT_GT(lines, 3u) << maps;
    EXPECT_EQ(status_field(cmd, "Cpus_allowed_list:"), "0");
    ASSERT_EQ(kill(p.pid, SIGTERM), 0);
    ASSERT_TRUE(p.finish(10));
    EXPECT_EQ(p.exit_code(), 128 + SIGTERM) << p.err;
    EXPECT_EQ(kill(cmd, 0), -1) << "the command ended with ibench";

    // Ctrl-C as a process sends it (kill -INT): passed on, the command ends by it, ibench exits 130
    Proc q;
    ASSERT_TRUE(q.start({"place", "run", "--cpus", "0", "--", "sleep", "30"}, {}));
    ASSERT_TRUE(q.pump_until([&] { return child_named(q.pid, "sleep") > 0; }, 10));
    ASSERT_EQ(kill(q.pid, SIGINT), 0);
    ASSERT_TRUE(q.finish(10));
    EXPECT_EQ(q.exit_code(), 128 + SIGINT) << q.err;
}

TEST(PlaceRun, ExitStatusIsTheCommandsAndIbenchsOwnFailuresAreNamed)
{
    std::string skip;
    if (!can_bind(skip))
        GTEST_SKIP() << skip;
    CliRun r = ibench({"place", "run", "--cpus", "0", "--", "sh", "-c", "exit 3"});
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err, "");
    r = ibench({"place", "run", "--cpus", "0", "--", "sh", "-c", "kill -KILL $$"});
    EXPECT_EQ(r.code, 128 + SIGKILL);
    EXPECT_EQ(r.err, "");
    r = ibench({"place", "run", "--cpus", "0", "--", "/nonexistent/ibench-test-cmd"});
    EXPECT_EQ(r.code, 127);
    EXPECT_EQ(r.err.rfind("ibench place run: cannot run '/nonexistent/ibench-test-cmd'", 0), 0u) << r.err;
    // bad input: exit 2, one line, and the command never ran
    ib_test::TempDir dir("place_run");
    std::string mark = dir.path() + "/ran";
    struct Case {
        std::vector<std::string> args;
        const char *says;
    } cases[] = {{{"--cpus", "999"}, "CPU 999 is not on this machine"},
                 {{"--cpus", "0", "--mem", "77"}, "node 77 does not exist here"},
                 {{"--cpus", "0", "--mem", "bogus"}, "--mem 'bogus'"},
                 {{"--class", "1"}, "--class ID needs --threads N"},
                 {{"--cpus", "0", "--json"}, "--json goes with --dry-run"},
                 {{"--cpus", "0", "--topology", "synthetic:pack:2 pu:1"}, "other topologies go with --dry-run"}};
    for (const auto &c : cases) {
        std::vector<std::string> a = {"place", "run"};
        a.insert(a.end(), c.args.begin(), c.args.end());
        a.insert(a.end(), {"--", "touch", mark});
        r = ibench(a);
        EXPECT_EQ(r.code, 2) << c.says << ": " << r.err;
        EXPECT_EQ(r.err.rfind("ibench place run: ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(access(mark.c_str(), F_OK), 0) << c.says << ": the command ran";
    }
}

// --dry-run on a machine this one is not: the placement and the policy place run would set.
TEST(PlaceRun, DryRunOnATwoNodeMachineGivesTheNodesOfTheChosenCpus)
{
    CliRun r = ibench({"place", "run", "--dry-run", "--json", "--topology", kTwoNodes, "--cpus", "4-5", "--mem",
                       "interleave", "--", "app", "-x"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_error_t je;
    json_t *doc = json_loads(r.out.c_str(), 0, &je);
    ASSERT_NE(doc, nullptr) << je.text << "\n" << r.out;
    EXPECT_STREQ(json_string_value(json_object_get(doc, "policy")), "interleave:1");
    EXPECT_STREQ(json_string_value(json_object_get(doc, "cpus_list")), "4-5");
    EXPECT_EQ(json_array_size(json_object_get(doc, "argv")), 2u);
    EXPECT_TRUE(json_is_false(json_object_get(doc, "ran")));
    json_decref(doc);
    // a class: row 2 for 2 threads spreads over both packages, so memory is bound to both nodes
    r = ibench({"place", "run", "--dry-run", "--topology", "synthetic:pack:2 [numa] core:2 pu:1", "--class", "2",
                "--threads", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("bind:0-1"), std::string::npos) << r.out;
}

// place apply: the threads are pinned and the pages moved (migrate_pages); before and after read from numa_maps.
TEST(PlaceApplyMem, ApplyMovesMemoryAndReportsScoresAndTheCpuset)
{
    std::string skip;
    if (!can_bind(skip))
        GTEST_SKIP() << skip;
    int fd[2];
    ASSERT_EQ(pipe(fd), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) { // 8 MiB touched, then wait to be placed
        alarm(60);
        close(fd[0]);
        size_t n = 8u << 20;
        char *b = (char *)mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b == MAP_FAILED)
            _exit(2);
        memset(b, 1, n);
        char c = 1;
        if (write(fd[1], &c, 1) != 1)
            _exit(3);
        pause();
        _exit(0);
    }
    close(fd[1]);
    char c;
    ASSERT_EQ(read(fd[0], &c, 1), 1);
    close(fd[0]);
    std::string pid = std::to_string(child);
    CliRun r = ibench({"place", "apply", "--pid", pid, "--cpus", "0", "--json"});
    EXPECT_EQ(r.code, 0) << r.err;
    json_error_t je;
    json_t *doc = json_loads(r.out.c_str(), 0, &je);
    EXPECT_NE(doc, nullptr) << je.text << "\n" << r.out;
    json_t *mem = json_object_get(doc, "memory");
    EXPECT_STREQ(json_string_value(json_object_get(mem, "mem")), "local");
    EXPECT_STREQ(json_string_value(json_object_get(mem, "policy")), "bind:0");
    EXPECT_TRUE(json_is_true(json_object_get(mem, "migrated")));
    EXPECT_EQ(json_integer_value(json_object_get(mem, "not_moved_pages")), 0);
    EXPECT_EQ(json_integer_value(json_object_get(mem, "moved_bytes")), 0) << "one node: nothing lies outside";
    EXPECT_GE(json_integer_value(json_array_get(json_object_get(mem, "bytes_before"), 0)), 8 << 20);
    EXPECT_GE(json_integer_value(json_array_get(json_object_get(mem, "bytes_after"), 0)), 8 << 20);
    EXPECT_EQ(json_real_value(json_object_get(mem, "score_before")), 1.0);
    EXPECT_EQ(json_real_value(json_object_get(mem, "score_after")), 1.0);
    EXPECT_STREQ(json_string_value(json_object_get(mem, "process_policy")), "default");
    json_t *cs = json_object_get(mem, "cpuset");
    if (json_is_true(json_object_get(cs, "made"))) {
        EXPECT_TRUE(json_is_string(json_object_get(cs, "path")));
    } else {
        const char *why = json_string_value(json_object_get(cs, "skipped"));
        ASSERT_NE(why, nullptr);
        EXPECT_GT(strlen(why), 10u) << "a skip says why";
    }
    json_decref(doc);
    EXPECT_EQ(status_field(child, "Cpus_allowed_list:"), "0");

    r = ibench({"place", "apply", "--pid", pid, "--cpus", "0", "--mem", "none"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("--mem none: none"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("moved "), std::string::npos) << "nothing is moved with --mem none\n" << r.out;
    // a node this machine lacks: bad input, and the threads are left where they were
    std::string before = status_field(child, "Cpus_allowed_list:");
    r = ibench({"place", "apply", "--pid", pid, "--cpus", "1", "--mem", "9"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("node 9 does not exist here"), std::string::npos) << r.err;
    EXPECT_EQ(status_field(child, "Cpus_allowed_list:"), before);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
}

// place cluster --apply: the threads go to their chips, the memory to the chips' nodes (the same report as apply);
// --mem without --apply is refused, not ignored.
TEST(PlaceApplyMem, ClusterApplyMovesMemoryToTheChipsNodes)
{
    std::string skip;
    if (!can_bind(skip))
        GTEST_SKIP() << skip;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "needs 2 CPUs";
    Proc share;
    std::map<uint32_t, unsigned> layout;
    ASSERT_TRUE(ib_test::start_share(share, {"--groups", "2", "--threads", "2", "--seconds", "20"}, layout))
        << share.out << share.err;
    std::string pid = std::to_string(share.pid);
    CliRun r = ibench({"place", "cluster", "--pid", pid, "--source", "soft", "--seconds", "0.5", "--chips", "2",
                       "--apply", "--mem", "interleave", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    json_error_t je;
    json_t *doc = json_loads(r.out.c_str(), 0, &je);
    ASSERT_NE(doc, nullptr) << je.text << "\n" << r.out;
    json_t *mem = json_object_get(json_object_get(doc, "applied"), "memory");
    EXPECT_STREQ(json_string_value(json_object_get(mem, "policy")), "interleave:0");
    EXPECT_TRUE(json_is_true(json_object_get(mem, "migrated")));
    EXPECT_EQ(json_integer_value(json_object_get(mem, "not_moved_pages")), 0);
    EXPECT_GT(json_integer_value(json_array_get(json_object_get(mem, "bytes_after"), 0)), 0);
    json_decref(doc);
    r = ibench({"place", "cluster", "--pid", pid, "--source", "soft", "--chips", "2", "--mem", "0"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--mem goes with --apply"), std::string::npos) << r.err;
}
