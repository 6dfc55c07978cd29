// test_place_classes.cpp - sharing classes and important placements (placement/machine/pl_classes.c, ibench place classes).
#include <gtest/gtest.h>
#include <gmp.h>
#include <hwloc.h>
#include <jansson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <functional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

extern "C" {
#include "pl_classes.h"
#include "output.h"
#include "pl_machine.h"
#include "topo.h"
}

using ib_test::Proc;

namespace {

struct Machine {
    pl_machine m{};
    pl_hier h{};
    bool ok = false;
    Machine(const std::string &spec, const char *concerns)
    {
        char why[256] = "";
        int rc = pl_machine_load(&m, spec.c_str(), nullptr, why, sizeof why);
        EXPECT_EQ(rc, 0) << why;
        if (rc)
            return;
        rc = pl_hier_from_topo(m.topo, concerns, &h, why, sizeof why);
        EXPECT_EQ(rc, 0) << why;
        ok = rc == 0;
    }
    ~Machine()
    {
        pl_hier_free(&h);
        if (m.topo)
            pl_machine_free(&m);
    }
};

struct List {
    pl_class_list l{};
    int rc = 0;
    std::string why;
    List(const pl_hier *h, unsigned n, bool all, const pl_bandwidth *bw = nullptr, unsigned long limit = 1000000)
    {
        pl_classes_opts o{};
        o.nthreads = n;
        o.all = all;
        o.limit = limit;
        o.bw = bw;
        char w[512] = "";
        rc = pl_classes(h, &o, &l, w, sizeof w);
        why = w;
    }
    ~List() { pl_class_list_free(&l); }
};

std::vector<unsigned> pus_of(const pl_class &c) { return std::vector<unsigned>(c.pus, c.pus + c.nthreads); }

std::string mpz_sum(const pl_class_list &l)
{
    mpz_t s, x;
    mpz_init(s);
    mpz_init(x);
    for (unsigned i = 0; i < l.n; i++) {
        mpz_set_str(x, l.v[i].orbit, 10);
        mpz_add(s, s, x);
    }
    char *r = mpz_get_str(nullptr, 10, s);
    std::string out = r;
    free(r);
    mpz_clear(s);
    mpz_clear(x);
    return out;
}

std::string binom(unsigned n, unsigned k)
{
    mpz_t r;
    mpz_init(r);
    mpz_bin_uiui(r, n, k);
    char *s = mpz_get_str(nullptr, 10, r);
    std::string out = s;
    free(s);
    mpz_clear(r);
    return out;
}

// ---- the test's own tree and automorphism generators (independent of pl_classes.c's canonical form) ----------

struct TNode {
    std::vector<int> ch;
    int pu = -1;
    std::string shape;
};

struct Tree {
    std::vector<TNode> n;
    explicit Tree(const pl_hier &h)
    {
        n.emplace_back(); // root
        std::vector<std::map<unsigned, int>> id(h.nlevels + 1);
        for (unsigned p = 0; p < h.npus; p++) {
            int parent = 0;
            for (unsigned k = 0; k <= h.nlevels; k++) {
                unsigned inst = k < h.nlevels ? h.lv[k].inst[p] : p;
                auto it = id[k].find(inst);
                if (it == id[k].end()) {
                    n.emplace_back();
                    int me = (int)n.size() - 1;
                    id[k][inst] = me;
                    n[parent].ch.push_back(me);
                    if (k == h.nlevels)
                        n[me].pu = (int)p;
                    parent = me;
                } else {
                    parent = it->second;
                }
            }
        }
        shape(0);
    }
    std::string shape(int i)
    {
        if (n[i].pu >= 0)
            return n[i].shape = "x";
        std::vector<std::string> s;
        for (int c : n[i].ch)
            s.push_back(shape(c));
        std::sort(s.begin(), s.end());
        std::string r = "[";
        for (auto &x : s)
            r += x;
        return n[i].shape = r + "]";
    }
    // an isomorphism from subtree a onto subtree b (same shape), as PU pairs
    void iso(int a, int b, std::vector<int> &perm)
    {
        if (n[a].pu >= 0) {
            perm[n[a].pu] = n[b].pu;
            return;
        }
        auto ca = n[a].ch, cb = n[b].ch;
        auto by = [&](int x, int y) { return n[x].shape < n[y].shape; };
        std::stable_sort(ca.begin(), ca.end(), by);
        std::stable_sort(cb.begin(), cb.end(), by);
        for (size_t i = 0; i < ca.size(); i++)
            iso(ca[i], cb[i], perm);
    }
    // generators: swaps of same-shape sibling subtrees
    std::vector<std::vector<int>> generators(unsigned npus)
    {
        std::vector<std::vector<int>> g;
        for (size_t i = 0; i < n.size(); i++)
            for (size_t a = 0; a < n[i].ch.size(); a++)
                for (size_t b = a + 1; b < n[i].ch.size(); b++) {
                    int x = n[i].ch[a], y = n[i].ch[b];
                    if (n[x].shape != n[y].shape)
                        continue;
                    std::vector<int> perm(npus);
                    for (unsigned p = 0; p < npus; p++)
                        perm[p] = (int)p;
                    iso(x, y, perm);
                    iso(y, x, perm);
                    g.push_back(perm);
                }
        return g;
    }
};

std::string pl_key_of(const pl_hier &h, uint32_t mask, pl_class *keep = nullptr)
{
    std::vector<unsigned> pus;
    for (unsigned p = 0; p < h.npus; p++)
        if (mask >> p & 1)
            pus.push_back(p);
    pl_class c{};
    char why[256] = "";
    int rc = pl_class_of(&h, pus.data(), (unsigned)pus.size(), &c, why, sizeof why);
    EXPECT_EQ(rc, 0) << why;
    std::string k = rc == 0 ? c.key : "";
    if (keep)
        *keep = c;
    else
        pl_class_free(&c);
    return k;
}

// Every N: --all orbits sum to C(PUs, N); the subsets pl_class_of puts in one class are one orbit of the tree's
// automorphism group, of the listed size.
void brute_force(const pl_hier &h, const std::string &label)
{
    ASSERT_LE(h.npus, 16u) << label;
    Tree t(h);
    auto gens = t.generators(h.npus);
    std::vector<std::map<std::string, std::vector<uint32_t>>> by_n(h.npus + 1);
    for (uint32_t m = 1; m < (1u << h.npus); m++)
        by_n[__builtin_popcount(m)][pl_key_of(h, m)].push_back(m);
    for (unsigned n = 1; n <= h.npus; n++) {
        List l(&h, n, true);
        ASSERT_EQ(l.rc, 0) << label << " N=" << n << ": " << l.why;
        EXPECT_EQ(mpz_sum(l.l), binom(h.npus, n)) << label << " N=" << n;
        EXPECT_EQ(l.l.n, by_n[n].size()) << label << " N=" << n;
        for (auto &kv : by_n[n]) {
            // the orbit of the first member under the generators
            std::set<uint32_t> orbit{kv.second[0]};
            std::vector<uint32_t> todo{kv.second[0]};
            while (!todo.empty()) {
                uint32_t m = todo.back();
                todo.pop_back();
                for (auto &g : gens) {
                    uint32_t im = 0;
                    for (unsigned p = 0; p < h.npus; p++)
                        if (m >> p & 1)
                            im |= 1u << g[p];
                    if (orbit.insert(im).second)
                        todo.push_back(im);
                }
            }
            std::set<uint32_t> cls(kv.second.begin(), kv.second.end());
            EXPECT_TRUE(orbit == cls) << label << " N=" << n << " key " << kv.first << ": orbit " << orbit.size()
                                      << " placements, class " << cls.size();
            pl_class probe{};
            probe.key = const_cast<char *>(kv.first.c_str());
            const pl_class *c = pl_class_find(&l.l, &probe);
            ASSERT_NE(c, nullptr) << label << " N=" << n << " key " << kv.first << " not listed";
            EXPECT_EQ(std::string(c->orbit), std::to_string(cls.size())) << label << " N=" << n << " " << kv.first;
            // the representative is in its class
            uint32_t rm = 0;
            for (unsigned j = 0; j < c->nthreads; j++)
                rm |= 1u << c->pus[j];
            EXPECT_TRUE(cls.count(rm)) << label << " N=" << n << " representative of " << kv.first;
        }
    }
}

std::string export_xml(hwloc_topology_t t)
{
    char *buf = nullptr;
    int len = 0;
    if (hwloc_topology_export_xmlbuffer(t, &buf, &len, 0) < 0)
        return "";
    std::string s(buf, (size_t)len);
    hwloc_free_xmlbuffer(t, buf);
    return s;
}

std::string write_tmp(const std::string &name, const std::string &text)
{
    std::string p = std::string(::testing::TempDir()) + "/ibench-pc-" + std::to_string(getpid()) + "-" + name;
    std::ofstream(p) << text;
    return p;
}

// The XML of a synthetic topology with PUs [drop] removed (hwloc_topology_restrict): an asymmetric machine.
std::string restricted_xml(const std::string &synth, const std::vector<unsigned> &drop)
{
    pl_machine m{};
    char why[256];
    if (pl_machine_load(&m, ("synthetic:" + synth).c_str(), nullptr, why, sizeof why))
        return "";
    hwloc_topology_t t = topo_hwloc(m.topo);
    hwloc_bitmap_t keep = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(t));
    for (unsigned d : drop)
        hwloc_bitmap_clr(keep, d);
    std::string xml;
    if (hwloc_topology_restrict(t, keep, 0) == 0)
        xml = export_xml(t);
    hwloc_bitmap_free(keep);
    pl_machine_free(&m);
    return xml;
}

} // namespace

// ---- Table 2 (Tang et al. ISCA'11): Clovertown ------------------------------------------------------------------------------

TEST(PlaceClasses, ClovertownTwoThreads)
{
    Machine M("synthetic:pack:2 l2:2 core:2 pu:1", "package,l2");
    ASSERT_TRUE(M.ok);
    List imp(&M.h, 2, false), all(&M.h, 2, true);
    ASSERT_EQ(imp.rc, 0) << imp.why;
    ASSERT_EQ(all.rc, 0) << all.why;
    ASSERT_EQ(imp.l.n, 3u);
    ASSERT_EQ(all.l.n, 3u);
    std::vector<std::vector<unsigned>> want = {{0, 1}, {0, 2}, {0, 4}};
    std::vector<std::string> orbits = {"4", "8", "16"};
    for (unsigned i = 0; i < 3; i++) {
        EXPECT_EQ(pus_of(imp.l.v[i]), want[i]) << "id " << i + 1;
        EXPECT_EQ(std::string(imp.l.v[i].orbit), orbits[i]) << "id " << i + 1;
        EXPECT_EQ(imp.l.v[i].id, i + 1);
        EXPECT_STREQ(imp.l.v[i].key, all.l.v[i].key);
        EXPECT_STREQ(imp.l.v[i].why, "balanced");
    }
    EXPECT_STREQ(imp.l.total, "28");
    char nota[32];
    ASSERT_EQ(pl_class_notation(&M.h, &imp.l.v[1], nota, sizeof nota), 0);
    EXPECT_STREQ(nota, "{X.X.....}");
    EXPECT_STREQ(imp.l.v[2].usage[0], "1,1");
    EXPECT_EQ(imp.l.v[2].score[0], 2u);
    EXPECT_EQ(imp.l.v[2].score[1], 2u);
}

TEST(PlaceClasses, ClovertownFourThreads)
{
    Machine M("synthetic:pack:2 l2:2 core:2 pu:1", "package,l2");
    ASSERT_TRUE(M.ok);
    List imp(&M.h, 4, false), all(&M.h, 4, true);
    ASSERT_EQ(imp.rc, 0) << imp.why;
    ASSERT_EQ(imp.l.n, 3u);
    std::vector<std::vector<unsigned>> want = {{0, 1, 2, 3}, {0, 1, 4, 5}, {0, 2, 4, 6}};
    for (unsigned i = 0; i < 3; i++)
        EXPECT_EQ(pus_of(imp.l.v[i]), want[i]) << "id " << i + 1;
    ASSERT_EQ(all.rc, 0) << all.why;
    EXPECT_EQ(all.l.n, 5u);
    EXPECT_EQ(mpz_sum(all.l), "70");
    EXPECT_STREQ(all.l.total, "70");
    for (unsigned i = 0; i < imp.l.n; i++)
        EXPECT_NE(pl_class_find(&all.l, &imp.l.v[i]), nullptr);
    // the limit
    List lim(&M.h, 4, true, nullptr, 4);
    EXPECT_EQ(lim.rc, -E2BIG);
    EXPECT_NE(lim.why.find("more than 4 classes of 4-thread placements"), std::string::npos) << lim.why;
    List exact(&M.h, 4, true, nullptr, 5); // the limit itself is allowed
    EXPECT_EQ(exact.rc, 0) << exact.why;
    List zero(&M.h, 0, false), big(&M.h, 9, false);
    EXPECT_EQ(zero.rc, -EINVAL);
    EXPECT_EQ(big.rc, -EINVAL);
}

// ---- Funston et al. ATC'18 §3: Intel, 24 threads on numa,l2: 7 important placements ------------------------------------------

TEST(PlaceClasses, IntelSevenImportant)
{
    Machine M("synthetic:pack:4 [numa] l3:1 l2:12 core:1 pu:2", "numa,l2");
    ASSERT_TRUE(M.ok);
    ASSERT_EQ(M.h.nlevels, 2u);
    List imp(&M.h, 24, false);
    ASSERT_EQ(imp.rc, 0) << imp.why;
    ASSERT_EQ(imp.l.n, 7u);
    std::vector<unsigned> nodes = {1, 2, 2, 3, 3, 4, 4}, l2 = {12, 12, 24, 12, 24, 12, 24};
    for (unsigned i = 0; i < 7; i++) {
        EXPECT_EQ(imp.l.v[i].score[0], nodes[i]) << "id " << i + 1;
        EXPECT_EQ(imp.l.v[i].score[1], l2[i]) << "id " << i + 1;
        EXPECT_TRUE(imp.l.v[i].balanced);
    }
    EXPECT_STREQ(imp.l.v[0].usage[1], "2x12");
    EXPECT_STREQ(imp.l.v[1].orbit, "5122656"); // C(4,2) * C(12,6)^2
    EXPECT_STREQ(imp.l.total, "26101718353106752508100");
}

// ---- exact counts and the brute-force cross-check on small machines ---------------------------------------------

TEST(PlaceClasses, BruteForceSymmetric)
{
    struct {
        const char *spec, *concerns;
    } cases[] = {{"pack:2 l2:2 core:2 pu:1", "package,l2"},
                 {"pack:2 core:2 pu:2", nullptr},
                 {"pack:2 l3:1 l2:2 core:2 pu:2", "package,l2,core"},
                 {"pack:2 numa:2 core:2 pu:2", "package,numa,core"},
                 {"pack:3 core:2 pu:2", nullptr},
                 {"pack:2 l2:3 core:1 pu:2", "package,l2"}};
    for (auto &c : cases) {
        Machine M(std::string("synthetic:") + c.spec, c.concerns);
        ASSERT_TRUE(M.ok) << c.spec;
        brute_force(M.h, c.spec);
    }
}

TEST(PlaceClasses, BruteForceAsymmetric)
{
    struct {
        const char *spec;
        std::vector<unsigned> drop;
        const char *concerns;
    } cases[] = {{"pack:2 l2:2 core:2 pu:2", {0, 1}, "package,l2,core"},
                 {"pack:2 l2:2 core:2 pu:2", {5}, "package,l2,core"},
                 {"pack:2 core:3 pu:2", {0, 7, 8}, "package,core"},
                 {"pack:3 l2:2 core:1 pu:2", {2, 3, 4}, "package,l2"}};
    int i = 0;
    for (auto &c : cases) {
        std::string xml = restricted_xml(c.spec, c.drop);
        ASSERT_FALSE(xml.empty()) << c.spec;
        std::string path = write_tmp("asym" + std::to_string(i++) + ".xml", xml);
        Machine M(path, c.concerns);
        ASSERT_TRUE(M.ok) << c.spec;
        EXPECT_EQ(M.h.npus, 16 - c.drop.size() - (std::string(c.spec) == "pack:2 core:3 pu:2" ? 4 : 0) -
                                (std::string(c.spec) == "pack:3 l2:2 core:1 pu:2" ? 4 : 0))
            << c.spec;
        brute_force(M.h, std::string(c.spec) + " minus PUs");
        unlink(path.c_str());
    }
}

TEST(PlaceClasses, UniformFake)
{
    const char *names[] = {"numa", "l3", "core"};
    unsigned arity[] = {2, 2, 2};
    pl_hier h{};
    char why[256];
    ASSERT_EQ(pl_hier_uniform(&h, names, arity, 3, 2, why, sizeof why), 0) << why;
    brute_force(h, "uniform 2x2x2x2");
    pl_hier_free(&h);
}

// ---- the same results from a synthetic string and from its XML with shuffled OS indexes -------------------------

// Maps every cpuset-like attribute's bits and every PU's os_index through perm.
static std::string shuffle_xml(const std::string &xml, const std::vector<unsigned> &perm)
{
    std::string out = xml;
    std::regex set_re("((?:complete_|allowed_|online_)?cpuset)=\"0x([0-9a-f]+)\"");
    std::string r;
    auto begin = std::sregex_iterator(out.begin(), out.end(), set_re);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        unsigned long v = std::stoul((*it)[2].str(), nullptr, 16), w = 0;
        for (unsigned b = 0; b < perm.size(); b++)
            if (v >> b & 1)
                w |= 1ul << perm[b];
        char buf[64];
        snprintf(buf, sizeof buf, "%s=\"0x%08lx\"", (*it)[1].str().c_str(), w);
        r += out.substr(last, (size_t)it->position() - last) + buf;
        last = (size_t)(it->position() + it->length());
    }
    r += out.substr(last);
    std::regex pu_re("type=\"PU\" os_index=\"([0-9]+)\"");
    std::string r2;
    last = 0;
    for (auto it = std::sregex_iterator(r.begin(), r.end(), pu_re); it != std::sregex_iterator(); ++it) {
        unsigned os = (unsigned)std::stoul((*it)[1].str());
        r2 += r.substr(last, (size_t)it->position() - last) + "type=\"PU\" os_index=\"" + std::to_string(perm[os]) +
              "\"";
        last = (size_t)(it->position() + it->length());
    }
    return r2 + r.substr(last);
}

TEST(PlaceClasses, XmlWithShuffledOsIndexes)
{
    const std::string synth = "pack:2 l3:1 l2:2 core:2 pu:2";
    Machine S("synthetic:" + synth, "package,l2,core");
    ASSERT_TRUE(S.ok);
    std::string xml = export_xml(topo_hwloc(S.m.topo));
    ASSERT_FALSE(xml.empty());
    // A seeded random renumbering of the PUs that hwloc accepts: every node's OS indexes are shuffled and dealt to
    // its children, whose parts are then ordered by their smallest index (hwloc wants siblings in cpuset order;
    // any other order would need the XML's objects moved too, an "out-of-order XML topology load").
    std::vector<unsigned> perm(S.h.npus);
    std::vector<unsigned> os_all(S.h.npus);
    for (unsigned p = 0; p < S.h.npus; p++)
        os_all[p] = (unsigned)S.h.pu_os[p];
    Tree tree(S.h);
    std::mt19937 rng(15);
    std::function<unsigned(int)> npus = [&](int i) {
        unsigned c = tree.n[i].pu >= 0 ? 1 : 0;
        for (int ch : tree.n[i].ch)
            c += npus(ch);
        return c;
    };
    std::function<void(int, std::vector<unsigned>)> deal = [&](int i, std::vector<unsigned> set) {
        if (tree.n[i].pu >= 0) {
            perm[(unsigned)S.h.pu_os[tree.n[i].pu]] = set[0];
            return;
        }
        std::shuffle(set.begin(), set.end(), rng);
        std::vector<std::vector<unsigned>> parts;
        size_t o = 0;
        for (int ch : tree.n[i].ch) {
            unsigned k = npus(ch);
            parts.emplace_back(set.begin() + (long)o, set.begin() + (long)(o + k));
            o += k;
        }
        std::sort(parts.begin(), parts.end(), [](const std::vector<unsigned> &a, const std::vector<unsigned> &b) {
            return *std::min_element(a.begin(), a.end()) < *std::min_element(b.begin(), b.end());
        });
        for (size_t c = 0; c < parts.size(); c++)
            deal(tree.n[i].ch[c], parts[c]);
    };
    deal(0, os_all);
    std::string path = write_tmp("shuffled.xml", shuffle_xml(xml, perm));
    Machine X(path, "package,l2,core");
    ASSERT_TRUE(X.ok);
    ASSERT_EQ(X.h.npus, S.h.npus);
    bool moved = false;
    for (unsigned p = 0; p < X.h.npus; p++)
        moved |= X.h.pu_os[p] != S.h.pu_os[p];
    EXPECT_TRUE(moved) << "the shuffle did not reach the PUs' OS indexes";
    for (unsigned n = 1; n <= S.h.npus; n++)
        for (bool all : {false, true}) {
            List a(&S.h, n, all), b(&X.h, n, all);
            ASSERT_EQ(a.rc, 0) << a.why;
            ASSERT_EQ(b.rc, 0) << b.why;
            ASSERT_EQ(a.l.n, b.l.n) << "N=" << n;
            for (unsigned i = 0; i < a.l.n; i++) {
                EXPECT_STREQ(a.l.v[i].key, b.l.v[i].key);
                EXPECT_STREQ(a.l.v[i].orbit, b.l.v[i].orbit);
                for (unsigned k = 0; k < S.h.nlevels; k++)
                    EXPECT_EQ(a.l.v[i].score[k], b.l.v[i].score[k]);
                EXPECT_EQ(pus_of(a.l.v[i]), pus_of(b.l.v[i])) << "N=" << n << " id " << i + 1;
                // mapped back through pu_os and the inverse shuffle: a placement of the same class on S
                std::vector<unsigned> back;
                for (unsigned j = 0; j < b.l.v[i].nthreads; j++) {
                    unsigned os = (unsigned)X.h.pu_os[b.l.v[i].pus[j]];
                    unsigned orig = (unsigned)(std::find(perm.begin(), perm.end(), os) - perm.begin());
                    for (unsigned p = 0; p < S.h.npus; p++)
                        if ((unsigned)S.h.pu_os[p] == orig)
                            back.push_back(p);
                }
                ASSERT_EQ(back.size(), a.l.v[i].nthreads);
                // siblings keep their order, so each logical PU is the same tree position: OS index = perm
                for (unsigned j = 0; j < a.l.v[i].nthreads; j++)
                    EXPECT_EQ((unsigned)X.h.pu_os[b.l.v[i].pus[j]], perm[(unsigned)S.h.pu_os[a.l.v[i].pus[j]]]);
                uint32_t m = 0;
                for (unsigned p : back)
                    m |= 1u << p;
                EXPECT_EQ(pl_key_of(S.h, m), std::string(a.l.v[i].key)) << "N=" << n << " id " << i + 1;
            }
        }
    unlink(path.c_str());
}

// ---- the interconnect rule (Funston et al. ATC'18's 8-node example) ----------------------------------------------------------

static std::string bw_file_8()
{
    // every 4-set 50 and the 8-set 80, but {2,3,4,5} 100, {0,2,4,6} and {1,3,5,7} 90, {0,1,6,7} 10
    std::ostringstream s;
    s << "{\"unit\": \"GB/s\", \"sets\": [";
    bool first = true;
    for (unsigned m = 0; m < 256; m++) {
        int pc = __builtin_popcount(m);
        if (pc != 4 && pc != 8)
            continue;
        double bw = pc == 8 ? 80 : m == 0x3c ? 100 : (m == 0x55 || m == 0xaa) ? 90 : m == 0xc3 ? 10 : 50;
        s << (first ? "" : ",") << "{\"nodes\": [";
        bool f2 = true;
        for (unsigned b = 0; b < 8; b++)
            if (m >> b & 1) {
                s << (f2 ? "" : ",") << b;
                f2 = false;
            }
        s << "], \"bandwidth\": " << bw << "}";
        first = false;
    }
    s << "]}";
    return s.str();
}

TEST(PlaceClasses, InterconnectSeed002Example)
{
    const char *names[] = {"numa"};
    unsigned arity[] = {8};
    pl_hier h{};
    char why[256];
    ASSERT_EQ(pl_hier_uniform(&h, names, arity, 1, 2, why, sizeof why), 0) << why;
    pl_bandwidth bw{};
    ASSERT_EQ(pl_bandwidth_parse(bw_file_8().c_str(), &bw, why, sizeof why), 0) << why;
    List l(&h, 8, false, &bw);
    ASSERT_EQ(l.rc, 0) << l.why;
    std::vector<uint64_t> four;
    for (unsigned i = 0; i < l.l.n; i++) {
        if (l.l.v[i].score[0] == 4) {
            four.push_back(l.l.v[i].nodes);
            EXPECT_EQ(__builtin_popcountll(l.l.v[i].nodes), 4);
            ASSERT_NE(l.l.v[i].why, nullptr);
        }
    }
    // by bandwidth descending, then node set
    std::vector<uint64_t> want = {0x3c, 0x55, 0xaa, 0xc3};
    EXPECT_EQ(four, want);
    for (unsigned i = 0; i < l.l.n; i++) {
        const pl_class &c = l.l.v[i];
        if (c.nodes == 0x3c) {
            EXPECT_EQ(c.bandwidth, 100);
            EXPECT_NE(std::string(c.why).find("best 4-node bandwidth"), std::string::npos) << c.why;
            EXPECT_EQ(pus_of(c), (std::vector<unsigned>{4, 5, 6, 7, 8, 9, 10, 11}));
        }
        if (c.nodes == 0xc3) {
            EXPECT_NE(std::string(c.why).find("beside the best"), std::string::npos) << c.why;
        }
        if (c.nodes == 0x55) {
            EXPECT_NE(std::string(c.why).find("best packing"), std::string::npos) << c.why;
        }
    }
    // a set the file lacks
    List bad(&h, 2, false, &bw);
    EXPECT_EQ(bad.rc, -EINVAL);
    EXPECT_NE(bad.why.find("the bandwidth file has no set {"), std::string::npos) << bad.why;
    pl_bandwidth_free(&bw);
    // no numa level
    const char *n2[] = {"l3"};
    pl_hier h2{};
    ASSERT_EQ(pl_hier_uniform(&h2, n2, arity, 1, 2, why, sizeof why), 0);
    ASSERT_EQ(pl_bandwidth_parse("{\"sets\":[{\"nodes\":[0],\"bandwidth\":1}]}", &bw, why, sizeof why), 0) << why;
    List nonuma(&h2, 2, false, &bw);
    EXPECT_EQ(nonuma.rc, -EINVAL);
    pl_bandwidth_free(&bw);
    pl_hier_free(&h2);
    pl_hier_free(&h);
}

TEST(PlaceClasses, BadBandwidthFilesRefused)
{
    const char *bad[] = {"", "[]", "{\"sets\": []}", "{\"sets\": [{\"nodes\": [0]}]}",
                         "{\"sets\": [{\"nodes\": [0], \"bandwidth\": -1}]}",
                         "{\"sets\": [{\"nodes\": [64], \"bandwidth\": 1}]}",
                         "{\"sets\": [{\"nodes\": [0, 0], \"bandwidth\": 1}]}",
                         "{\"sets\": [{\"nodes\": [0, 1], \"bandwidth\": 1}, {\"nodes\": [1, 0], \"bandwidth\": 2}]}",
                         "{\"unit\": 3, \"sets\": [{\"nodes\": [0], \"bandwidth\": 1}]}"};
    for (const char *b : bad) {
        pl_bandwidth bw{};
        char why[256] = "";
        EXPECT_EQ(pl_bandwidth_parse(b, &bw, why, sizeof why), -EINVAL) << b;
        EXPECT_STRNE(why, "") << b;
        EXPECT_EQ(bw.v, nullptr);
    }
    pl_bandwidth bw{};
    char why[256];
    EXPECT_LT(pl_bandwidth_load("/nonexistent/bw.json", &bw, why, sizeof why), 0);
}

// ---- speed: the important placements never go through the PU subsets --------------------------------------------

TEST(PlaceClasses, LargeMachinesAreFast)
{
    struct {
        const char *spec;
        unsigned n;
        size_t want;
    } cases[] = {{"synthetic:pack:4 [numa] l3:1 l2:12 core:1 pu:2", 24, 0},
                 {"synthetic:pack:4 numa:2 l3:2 core:8 pu:2", 64, 0}};
    for (auto &c : cases) {
        Machine M(c.spec, nullptr);
        ASSERT_TRUE(M.ok);
        auto t0 = std::chrono::steady_clock::now();
        List l(&M.h, c.n, false);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ASSERT_EQ(l.rc, 0) << l.why;
        EXPECT_GT(l.l.n, 0u);
        EXPECT_LT(s, 10.0) << c.spec << ": " << s << " s (a regression to brute force?)";
    }
    Machine M("synthetic:pack:4 numa:2 l3:2 core:8 pu:2", nullptr);
    List l(&M.h, 64, false);
    EXPECT_STREQ(l.l.total, binom(256, 64).c_str());
}

// ---- the command ------------------------------------------------------------------------------------------------

static Proc run(const std::vector<std::string> &args)
{
    Proc p;
    EXPECT_TRUE(p.start(args, {}));
    EXPECT_TRUE(p.finish(30));
    return p;
}

TEST(PlaceClassesCli, TableAndJson)
{
    const std::string topo = "synthetic:pack:2 l2:2 core:2 pu:1";
    Proc t = run({"place", "classes", "--threads", "4", "--topology", topo, "--concerns", "package,l2"});
    EXPECT_EQ(t.exit_code(), 0) << t.err;
    EXPECT_NE(t.out.find("important placements: balanced, feasible"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("{X.X.X.X.}"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("C(8,4) = 70"), std::string::npos) << t.out;
    Proc j = run({"place", "classes", "--threads", "4", "--all", "--json", "--topology", topo, "--concerns",
                  "package,l2"});
    ASSERT_EQ(j.exit_code(), 0) << j.err;
    json_error_t je;
    json_t *doc = json_loads(j.out.c_str(), 0, &je);
    ASSERT_NE(doc, nullptr) << je.text;
    EXPECT_STREQ(json_string_value(json_object_get(doc, "command")), "place classes");
    EXPECT_STREQ(json_string_value(json_object_get(doc, "mode")), "all");
    EXPECT_STREQ(json_string_value(json_object_get(doc, "total_placements")), "70");
    EXPECT_EQ(json_integer_value(json_object_get(doc, "threads")), 4);
    json_t *cl = json_object_get(doc, "classes");
    ASSERT_EQ(json_array_size(cl), 5u);
    json_t *c0 = json_array_get(cl, 0);
    EXPECT_EQ(json_integer_value(json_object_get(c0, "id")), 1);
    EXPECT_EQ(json_integer_value(json_object_get(json_object_get(c0, "scores"), "package")), 1);
    EXPECT_STREQ(json_string_value(json_object_get(json_object_get(c0, "usage"), "l2")), "2,2");
    EXPECT_STREQ(json_string_value(json_object_get(c0, "orbit_size")), "2");
    EXPECT_EQ(json_array_size(json_object_get(c0, "cpus")), 4u);
    EXPECT_STREQ(json_string_value(json_object_get(c0, "notation")), "{XXXX....}");
    EXPECT_TRUE(json_is_null(json_object_get(c0, "bandwidth")));
    json_decref(doc);
}

TEST(PlaceClassesCli, BadInputExitsTwo)
{
    const std::string topo = "synthetic:pack:2 l2:2 core:2 pu:1";
    std::string bwp = write_tmp("bad-bw.json", "{\"sets\": 3}");
    std::vector<std::vector<std::string>> cases = {
        {"place", "classes", "--topology", topo},
        {"place", "classes", "--threads", "0", "--topology", topo},
        {"place", "classes", "--threads", "9", "--topology", topo},
        {"place", "classes", "--threads", "2", "--topology", topo, "--concerns", "bogus"},
        {"place", "classes", "--threads", "4", "--all", "--limit", "2", "--topology", topo},
        {"place", "classes", "--threads", "2", "--topology", topo, "--bandwidth", bwp},
        {"place", "classes", "--threads", "2", "--topology", topo, "--bandwidth", "/nonexistent.json"},
        // options this command has no use for are refused, not ignored
        {"place", "classes", "--threads", "2", "--topology", topo, "--limit", "5"},
        {"place", "classes", "--threads", "2", "--topology", topo, "--distances", "/nonexistent.json"},
    };
    for (auto &a : cases) {
        Proc p = run(a);
        EXPECT_EQ(p.exit_code(), 2) << a.back() << ": " << p.out << p.err;
        EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
        EXPECT_NE(p.err.find("place classes"), std::string::npos) << p.err;
    }
    unlink(bwp.c_str());
}

// Every class of many threads on 256 PUs with a raised limit takes seconds to minutes (18 threads:
// 129 163 classes, 3.5 s here; 32 threads: over 100 s): the enumeration reports its phase and count through
// out_progress, which the CLI shows on stderr.  The first line's delay and the interval are cut to a microsecond here
// so the test does not depend on the machine's speed; 12 threads take a fraction of a second.
std::vector<std::string> g_lines;
extern "C" void grab_line(const char *label, const char *text)
{
    g_lines.push_back(std::string(label ? label : "") + "|" + text);
}

TEST(PlaceClasses, LongEnumerationsReportProgress)
{
    pl_machine m{};
    pl_hier h{};
    char why[256] = "";
    ASSERT_EQ(pl_machine_load(&m, "synthetic:pack:4 numa:2 l3:1 core:16 pu:2", nullptr, why, sizeof why), 0) << why;
    ASSERT_EQ(pl_hier_from_topo(m.topo, nullptr, &h, why, sizeof why), 0) << why;
    ASSERT_EQ(h.npus, 256u);
    g_lines.clear();
    out_progress_sink(grab_line, nullptr);
    pl_classes_opts o{};
    o.nthreads = 12, o.all = true, o.limit = 1000000, o.progress_after = 1e-6, o.progress_every = 1e-6;
    pl_class_list l;
    ASSERT_EQ(pl_classes(&h, &o, &l, why, sizeof why), 0) << why;
    bool enumerating = false, representatives = false;
    for (const std::string &s : g_lines) {
        EXPECT_EQ(s.rfind("place classes|", 0), 0u) << s;
        enumerating |= s.find("|enumerating: ") != std::string::npos;
        representatives |= s.find("|representatives: ") != std::string::npos &&
                           s.find(" of " + std::to_string(l.n) + " classes, ") != std::string::npos;
    }
    EXPECT_TRUE(enumerating) << g_lines.size();
    EXPECT_TRUE(representatives) << g_lines.size() << " lines, " << l.n << " classes";
    pl_class_list_free(&l);
    // the default delay: a short listing says nothing
    g_lines.clear();
    o.nthreads = 4, o.progress_after = 0, o.progress_every = 0;
    ASSERT_EQ(pl_classes(&h, &o, &l, why, sizeof why), 0) << why;
    EXPECT_TRUE(g_lines.empty()) << g_lines[0];
    pl_class_list_free(&l);
    out_progress_sink(nullptr, nullptr);
    pl_hier_free(&h);
    pl_machine_free(&m);
}

// ... which the command shows on stderr only when due: a short listing writes nothing there, even with
// IBENCH_PROGRESS=1, and stdout holds the table alone.
TEST(PlaceClassesCli, ShortListingsSayNothingOnStderr)
{
    Proc q;
    ASSERT_TRUE(q.start({"place", "classes", "--threads", "4", "--all", "--topology",
                         "synthetic:pack:4 numa:2 l3:1 core:16 pu:2"}, {"IBENCH_PROGRESS=1"}));
    ASSERT_TRUE(q.finish(30));
    EXPECT_EQ(q.exit_code(), 0) << q.err;
    EXPECT_NE(q.out.find("22 classes of C(256,4)"), std::string::npos) << q.out.substr(0, 400);
    EXPECT_EQ(q.err, "");
}
