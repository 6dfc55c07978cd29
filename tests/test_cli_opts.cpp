// test_cli_opts.cpp - every command's option table (cli/opts.h), walked from the one table of commands
// (cli_commands, through place's and k8s's own): each table is sound; `ibench CMD --help` has a line for each option
// it does not hide; an option given twice is refused with exit 2 and one line, unless it may repeat; a number out of
// its range is refused the same way.  The refusals happen while the options are read, before any rule between them,
// so they are seen whatever else a command would need.  Every command has a table: one reading argv itself is a
// failure here.
//
// Every child runs IBENCH_BIN with a fresh IBENCH_CACHE_DIR, and every wait is bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "cli.h"
#include "ib_err.h"
#include "opts.h"
#include "test_support.h"

namespace {

struct Leaf {
    std::vector<std::string> words;  // after "ibench": {"place", "topo"}
    const cli_cmd *c;
};

void walk(const cli_cmd *c, std::vector<std::string> words, std::vector<Leaf> &leaves, std::vector<std::string> &own)
{
    std::string w = c->name;
    size_t sp = w.rfind(' ');
    words.push_back(sp == std::string::npos ? w : w.substr(sp + 1));
    if (c->nsub) {
        for (unsigned i = 0; i < c->nsub; i++)
            walk(c->sub[i], words, leaves, own);
    } else if (c->opts) {
        leaves.push_back({words, c});
    } else {
        own.push_back(c->name);
    }
}

std::vector<Leaf> leaves(std::vector<std::string> *own_out = nullptr)
{
    unsigned n = 0;
    const cli_cmd *const *top = cli_commands(&n);
    std::vector<Leaf> v;
    std::vector<std::string> own;
    for (unsigned i = 0; i < n; i++)
        walk(top[i], {}, v, own);
    if (own_out)
        *own_out = own;
    return v;
}

// v printed whole, or with every digit a double has, or as nanoseconds
std::string whole_text(double v) { char b[64]; snprintf(b, sizeof b, "%.0f", v); return b; }
std::string real_text(double v) { char b[64]; snprintf(b, sizeof b, "%.17g", v); return b; }

bool numeric(const cli_opt &o) { return o.type >= CLI_O_INT && o.type <= CLI_O_MSEC; }
bool whole(const cli_opt &o) { return o.type == CLI_O_INT || o.type == CLI_O_UINT || o.type == CLI_O_ULONG; }

// v as the option's parser reads it
std::string number_text(const cli_opt &o, double v)
{
    if (o.type == CLI_O_DURATION || o.type == CLI_O_MSEC)
        return whole_text(v) + "ns";
    if (whole(o) || o.type == CLI_O_SIZE)
        return whole_text(v);
    return real_text(v);
}

// A value the option takes: its default, its sample, else one from its type and range.
std::string valid_value(const cli_opt &o)
{
    if (o.def)
        return o.def;
    if (o.sample)
        return o.sample;
    switch (o.type) {
    case CLI_O_CHOICE: return o.choices[0];
    case CLI_O_CPUS: return "0";
    case CLI_O_STR:
    case CLI_O_LIST: return "x";
    default: break;
    }
    if (!numeric(o))
        return "";
    double v = o.min;
    if (o.flags & CLI_OPT_GT_MIN)
        v = std::isinf(o.max) ? o.min + 1 : whole(o) ? o.min + 1 : (o.min + o.max) / 2;
    return number_text(o, v);
}

// Above 2^53 a whole number has no neighbour a double can name: such a range has no end to step over.
constexpr double kUnbounded = 9007199254740992.0;

struct Outcome {
    int code = -1;
    std::string out, err;
};

class CliOpts : public ::testing::Test {
protected:
    std::string cache;
    void SetUp() override
    {
        char tmpl[] = "/tmp/ibench-opts-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        cache = tmpl;
    }
    void TearDown() override
    {
        int rc;
        ib_test::sh("rm -rf '" + cache + "'", &rc);
    }
    Outcome run(const std::vector<std::string> &args)
    {
        ib_test::Proc p;
        Outcome r;
        if (!p.start(args, {"IBENCH_CACHE_DIR=" + cache}))
            return r;
        if (!p.finish(30)) {
            ADD_FAILURE() << "hung: " << joined(args);
            return r;
        }
        r.code = p.exit_code();
        r.out = p.out;
        r.err = p.err;
        return r;
    }
    static std::string joined(const std::vector<std::string> &args)
    {
        std::string s = "ibench";
        for (const auto &a : args)
            s += " '" + a + "'";
        return s;
    }
    // exit 2, nothing on stdout, one line on stderr naming the command and containing every one of words
    void expect_refused(const Leaf &l, const std::vector<std::string> &args, const std::vector<std::string> &words)
    {
        Outcome r = run(args);
        std::string name;
        for (const auto &w : l.words)
            name += (name.empty() ? "" : " ") + w;
        EXPECT_EQ(r.code, IB_EXIT_USAGE) << joined(args) << "\n" << r.err;
        EXPECT_EQ(r.out, "") << joined(args);
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << joined(args) << "\n" << r.err;
        EXPECT_EQ(r.err.rfind("ibench " + name + ": ", 0), 0u) << joined(args) << "\n" << r.err;
        for (const auto &w : words)
            EXPECT_NE(r.err.find(w), std::string::npos) << joined(args) << ": \"" << r.err << "\" should say " << w;
    }
};

}  // namespace

// The tables themselves: names and short options unique, defaults and samples taken by their own parser, ...
// (cli_opts_check); and every command has one.
TEST_F(CliOpts, EveryTableIsSound)
{
    std::vector<std::string> own;
    std::vector<Leaf> v = leaves(&own);
    ASSERT_GE(v.size(), 25u) << "the walk found too few commands";
    for (const auto &l : v) {
        char why[512] = "";
        EXPECT_EQ(cli_opts_check(l.c, why, sizeof why), 0) << why;
        for (unsigned i = 0; i < l.c->nopts; i++) {
            const cli_opt &o = l.c->opts[i];
            if (o.type == CLI_O_CUSTOM) {
                EXPECT_TRUE(o.def || o.sample) << l.c->name << " --" << o.name << ": a custom option needs a default "
                                                                                  "or a sample for these tests";
            }
        }
    }
    for (const auto &o : own)
        ADD_FAILURE() << o << " has no option table: it reads argv itself, so nothing here checks it";
}

// `ibench CMD --help` exits 0 and has a line for every option it does not hide: "  -s, --name ARG   help".
TEST_F(CliOpts, HelpHasALineForEveryOption)
{
    for (const auto &l : leaves()) {
        std::vector<std::string> args = l.words;
        args.push_back("--help");
        Outcome r = run(args);
        ASSERT_EQ(r.code, 0) << joined(args) << "\n" << r.err;
        EXPECT_EQ(r.err, "") << joined(args);
        EXPECT_EQ(r.out.rfind("usage: ibench ", 0), 0u) << joined(args) << "\n" << r.out;
        for (unsigned i = 0; i < l.c->nopts; i++) {
            const cli_opt &o = l.c->opts[i];
            if (o.flags & (CLI_OPT_HIDDEN | CLI_OPT_ALIAS))
                continue;
            std::string label = std::string("--") + o.name + (o.arg ? std::string(" ") + o.arg : "");
            std::string esc = std::regex_replace(label, std::regex(R"([\\^$.|?*+()\[\]{}])"), R"(\$&)");
            std::string sh = o.shortopt ? std::string("(-") + (char)o.shortopt + ", )?" : "";
            std::regex line("(^|\n) +" + sh + esc + "( {2,}|\n)");
            EXPECT_TRUE(std::regex_search(r.out, line))
                << joined(args) << " has no line for " << label << ":\n" << r.out;
        }
    }
}

// Every option that may not repeat, given twice with a value it takes, is refused while the options are read.
TEST_F(CliOpts, AnOptionGivenTwiceIsRefused)
{
    for (const auto &l : leaves()) {
        for (unsigned i = 0; i < l.c->nopts; i++) {
            const cli_opt &o = l.c->opts[i];
            if ((o.flags & CLI_OPT_REPEAT) || o.type == CLI_O_LIST)
                continue;
            unsigned p = i;
            while (p > 0 && (l.c->opts[p].flags & CLI_OPT_ALIAS))
                p--;
            std::vector<std::string> args = l.words;
            for (const cli_opt *x : {&l.c->opts[p], &o}) {  // an alias after the entry it names
                args.push_back(std::string("--") + x->name);
                if (x->arg)
                    args.push_back(valid_value(*x));
            }
            expect_refused(l, args, {std::string("--") + l.c->opts[p].name + " given twice"});
        }
    }
}

// A number above its range's end, or below its start, is refused the same way, naming the option.
TEST_F(CliOpts, ANumberOutOfRangeIsRefused)
{
    unsigned tried = 0;
    for (const auto &l : leaves()) {
        for (unsigned i = 0; i < l.c->nopts; i++) {
            const cli_opt &o = l.c->opts[i];
            if (!numeric(o))
                continue;
            std::vector<std::string> bad;
            if (!std::isinf(o.max) && o.max < kUnbounded)
                bad.push_back(number_text(o, o.max + 1));
            if (o.flags & CLI_OPT_GT_MIN)
                bad.push_back(number_text(o, o.min));
            else
                bad.push_back(o.min >= 1 ? number_text(o, o.min - 1) : "-1");
            for (const auto &b : bad) {
                std::vector<std::string> args = l.words;
                args.push_back(std::string("--") + o.name);
                args.push_back(b);
                expect_refused(l, args, {std::string("--") + o.name});
                tried++;
            }
        }
    }
    EXPECT_GE(tried, 40u) << "too few ranges were tried";
}
