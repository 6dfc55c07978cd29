// test_xmeter_disk.cpp - the outside meter on this machine's disk (validation/xmeter.h, docs/validation.md "The
// outside meter"): an SoI that presses half of what it claims FAILs on the block device's own counters, and the
// real disk-write, read the same way, agrees with its self-meter. Needs a file system on a block device under the
// default directory (else skipped, with why); runs in the I/O lock group (tests/CMakeLists.txt).
#include <math.h>

#include "test_support.h"
#include "validate.h"

extern "C" const struct soi_ops soi_disk_bw;

namespace {

::testing::Environment *const g_cache_env =
    ::testing::AddGlobalTestEnvironment(new ib_test::PrivateCacheEnv("xmeter-disk"));

// The broken SoI of issue 37: disk-bw writing (--rw write), which counts every byte twice, in its step() (what the
// engine paces) and in its self-meter (measure()). Its capacity is measured by its own peak windows (real bytes), so
// the engine, pacing the bytes it counts, writes half of x, and its self-meter reads x all the same. Registered
// nowhere: only this test knows it.
int double_step(struct soi *s, unsigned tid, uint64_t *units)
{
    int rc = soi_disk_bw.step(s, tid, units);
    *units *= 2;
    return rc;
}

int double_measure(struct soi *s, struct soi_meter *m)
{
    int rc = soi_disk_bw.measure ? soi_disk_bw.measure(s, m) : 0;
    m->achieved *= 2;
    return rc;
}

struct soi_ops half_write_ops()
{
    struct soi_ops o = soi_disk_bw;
    o.name = "half-write";
    o.summary = "writes half the bytes it counts";
    o.step = double_step;
    o.measure = double_measure;
    return o;
}
const struct soi_ops g_half = half_write_ops();

class XmeterDisk : public ::testing::Test {
protected:
    struct machine m{};
    int cpu = -1;
    atomic_int stop{0};
    char why[640] = "";
    struct soi_env env{};
    struct soi *s = nullptr;
    struct val_xmeter xm{};
    void SetUp() override
    {
        ASSERT_EQ(machine_open(&m, nullptr, why, sizeof why), 0) << why;
        cpu = topo_pu_os(m.topo, topo_npus(m.topo) - 1); // where ibench validate puts an SoI
        int rc = val_xmeter_open(VPM_BLK_WRITE, nullptr, nullptr, &xm, why, sizeof why);
        if (rc == -ENOTSUP)
            GTEST_SKIP() << "no block device under the default directory: " << why;
        ASSERT_EQ(rc, 0) << why;
    }
    // ops opened as validate opens an SoI (quick sizes); rw: set its --rw to write (disk-bw's copy)
    void open(const soi_ops *ops, bool rw)
    {
        soi_env_init(&env, ops, &m, 1, &cpu, -1, &stop);
        soi_opts_quick(&env);
        if (rw) {
            ASSERT_EQ(soi_opt_set(&env, "rw", "write", why, sizeof why), 0) << why;
        }
        ASSERT_EQ(soi_open(ops, &env, &s, nullptr, why, sizeof why), 0) << why;
    }
    // ops through validate's self-meter ramp with the device meter, printed
    void ramp(const soi_ops *ops, bool rw, val_self *o, val_xcheck *x)
    {
        open(ops, rw);
        if (HasFatalFailure())
            return;
        val_self_ramp(s, 1, &stop, &xm, o, x);
        printf("%s: self-meter %.1f %.1f %.1f %.1f %.1f (%s); %s: %.1f %.1f %.1f %.1f, of the self-meter %.2f, "
               "background %.0f B/s\n  %s: %s\n",
               ops->name, o->achieved[0], o->achieved[1], o->achieved[2], o->achieved[3], o->achieved[4],
               val_verdict_name(o->verdict), x->what, x->pct[1], x->pct[2], x->pct[3], x->pct[4], x->self_ratio,
               x->background, val_verdict_name(x->verdict), x->reason);
        ASSERT_TRUE(o->judged) << o->reason;
        ASSERT_TRUE(x->ran) << x->reason;
    }
    void TearDown() override
    {
        soi_close(s);
        machine_close(&m);
    }
};

} // namespace

// Half the pressure it claims: its self-meter passes (it counts what it paces), the device's counters read about
// half of x at every paced level: FAIL, with the meter's figures.
TEST_F(XmeterDisk, AnSoiThatWritesHalfWhatItCountsFails)
{
    val_self o{};
    val_xcheck x{};
    ASSERT_NO_FATAL_FAILURE(ramp(&g_half, true, &o, &x));
    EXPECT_NEAR(o.achieved[2], 50, 10) << "its self-meter reads what it paces: x";
    EXPECT_EQ(x.verdict, VAL_FAIL) << x.reason;
    EXPECT_GT(x.worst_pts, 20) << x.reason;
    EXPECT_GT(x.self_ratio, 0.3) << x.reason;
    EXPECT_LT(x.self_ratio, 0.7) << "the device wrote about half of what the SoI counted: " << x.reason;
}

// The real writer, read the same way: the device's counters agree with its self-meter (what the meter can show
// anywhere; whether its levels are within the bar is the host's disk's day, validate's verdict).
TEST_F(XmeterDisk, TheRealWriterAgreesWithTheDevice)
{
    val_self o{};
    val_xcheck x{};
    ASSERT_NO_FATAL_FAILURE(ramp(soi_find("disk-write"), false, &o, &x));
    EXPECT_GT(x.self_ratio, 0.8) << x.reason;
    EXPECT_LT(x.self_ratio, 1.25) << x.reason;
}
