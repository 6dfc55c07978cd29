// test_measure.cpp - common/measure.c, the one thread/barrier/median helper: fake jobs (no real measurement), the
// median and spread of the windows' totals, windows in step, binding to the CPUs given, serving threads released
// when the measuring ones are done, and every failure path (a thread that cannot be created, bind/setup/window
// errors, the stop flag) ending and joining every thread it started.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "measure.h"
#include "topo.h"

namespace {

struct Fake {
    std::atomic<int> setups{0}, teardowns{0}, warms{0}, windows{0}, serves{0};
    std::atomic<int> finished{0};    // windows finished, all threads
    std::atomic<int> out_of_step{0}; // a window begun before every thread finished the one before
    std::atomic<int> measurers_done{0};
    std::atomic<int> served_early{0};
    std::atomic<uint64_t> warm_ns_seen{0};
    unsigned n = 0;
    int fail_setup_tid = -1, fail_window_tid = -1, fail_window_rep = -1, stop_at_rep = -1;
    atomic_int *stop = nullptr;
    int cpu_seen[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    cpu_set_t mask[8];
};

int fake_setup(void *a, unsigned tid)
{
    Fake *f = static_cast<Fake *>(a);
    f->setups++;
    pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), &f->mask[tid]);
    f->cpu_seen[tid] = sched_getcpu();
    return (int)tid == f->fail_setup_tid ? -ENOMEM : 0;
}

// Thread 0 gives 5,1,4,2,3 over the windows, thread t (t+1) times that; the later threads are slower, so a window
// that did not wait for the others would begin while they are still in the one before.
int fake_window(void *a, unsigned tid, int rep, uint64_t ns, double *v)
{
    Fake *f = static_cast<Fake *>(a);
    if (rep < 0) {
        f->warms++;
        f->warm_ns_seen = ns;
        return 0;
    }
    f->windows++;
    if (f->finished.load() < rep * (int)f->n)
        f->out_of_step++;
    struct timespec ts = {0, 2000000L * (long)tid};
    nanosleep(&ts, nullptr);
    static const double base[] = {5, 1, 4, 2, 3};
    *v = base[rep % 5] * (tid + 1);
    if (rep == f->stop_at_rep && tid == 0)
        atomic_store(f->stop, 1);
    f->finished++;
    return (int)tid == f->fail_window_tid && rep == f->fail_window_rep ? -EIO : 0;
}

int fake_serve(void *a, unsigned, const atomic_int *done)
{
    Fake *f = static_cast<Fake *>(a);
    f->serves++;
    while (!atomic_load(done)) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, nullptr);
    }
    if (f->measurers_done.load() < 1)
        f->served_early++;
    return 0;
}

int fake_window_then_done(void *a, unsigned tid, int rep, uint64_t ns, double *v)
{
    int rc = fake_window(a, tid, rep, ns, v);
    Fake *f = static_cast<Fake *>(a);
    if (rep == 2)
        f->measurers_done++;
    return rc;
}

void fake_teardown(void *a, unsigned) { static_cast<Fake *>(a)->teardowns++; }

// A thread creator that fails from the `fail_at`-th call on and counts the threads that ran to their end.
std::atomic<int> g_calls{0}, g_exited{0};
int g_fail_at = 0;
struct Wrap {
    void *(*fn)(void *);
    void *arg;
};
void *wrapped(void *p)
{
    Wrap w = *static_cast<Wrap *>(p);
    delete static_cast<Wrap *>(p);
    void *r = w.fn(w.arg);
    g_exited++;
    return r;
}
int failing_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (++g_calls >= g_fail_at)
        return EAGAIN;
    Wrap *w = new Wrap{fn, arg};
    int rc = pthread_create(th, attr, wrapped, w);
    if (rc)
        delete w;
    return rc;
}

struct meas_spec spec_for(Fake &f, const int *cpus, unsigned n)
{
    f.n = n;
    struct meas_spec sp {};
    sp.what = "fake";
    sp.n = n;
    sp.cpus = cpus;
    sp.arg = &f;
    sp.nmeasure = n;
    sp.warmups = 2;
    sp.warm_ns = 12345;
    sp.windows = 5;
    sp.window_ns = 1;
    sp.setup = fake_setup;
    sp.window = fake_window;
    sp.teardown = fake_teardown;
    return sp;
}

const int kCpus[4] = {0, 0, 0, 0};

}  // namespace

TEST(Measure, MedianAndSpreadOfTheWindowsTotals)
{
    Fake f;
    char why[256] = "";
    struct meas_spec sp = spec_for(f, kCpus, 3);
    double tot[5];
    struct meas_out o = {0, 0, tot};
    ASSERT_EQ(meas_run(&sp, &o, why, sizeof why), 0) << why;
    // totals: 6 x (5,1,4,2,3) = 30,6,24,12,18 -> sorted 6,12,18,24,30
    const double want[] = {6, 12, 18, 24, 30};
    for (int w = 0; w < 5; w++)
        EXPECT_DOUBLE_EQ(tot[w], want[w]) << "window " << w;
    EXPECT_DOUBLE_EQ(o.median, 18);
    EXPECT_DOUBLE_EQ(o.spread, (30.0 - 6.0) / 18.0);
    EXPECT_EQ(f.warms.load(), 6) << "two warm-ups a thread";
    EXPECT_EQ(f.warm_ns_seen.load(), 12345u);
    EXPECT_EQ(f.windows.load(), 15);
    EXPECT_EQ(f.setups.load(), 3);
    EXPECT_EQ(f.teardowns.load(), 3);
}

TEST(Measure, WindowsRunInStepBehindTheBarrier)
{
    Fake f;
    char why[256] = "";
    struct meas_spec sp = spec_for(f, kCpus, 4);
    sp.windows = 6;
    struct meas_out o {};
    ASSERT_EQ(meas_run(&sp, &o, why, sizeof why), 0) << why;
    EXPECT_EQ(f.windows.load(), 24);
    EXPECT_EQ(f.out_of_step.load(), 0) << "a thread began a window before the others had finished the one before";
}

TEST(Measure, EachThreadIsBoundToItsCpu)
{
    struct topo *t = nullptr;
    char why[256] = "";
    ASSERT_EQ(topo_load(&t, nullptr, why, sizeof why), 0) << why;
    const unsigned npus = topo_npus(t);
    int cpus[2] = {topo_pu_os(t, npus - 1), topo_pu_os(t, 0)}; // the highest first: not the threads' order by chance
    Fake f;
    struct meas_spec sp = spec_for(f, cpus, 2);
    sp.topo = t;
    EXPECT_EQ(meas_run(&sp, nullptr, why, sizeof why), 0) << why;
    for (unsigned i = 0; i < 2; i++) {
        EXPECT_EQ(CPU_COUNT(&f.mask[i]), 1) << "thread " << i;
        EXPECT_TRUE(CPU_ISSET(cpus[i], &f.mask[i])) << "thread " << i << " not on CPU " << cpus[i];
        EXPECT_EQ(f.cpu_seen[i], cpus[i]) << "thread " << i;
    }
    // no topology: the threads keep the caller's affinity
    cpu_set_t mine;
    pthread_getaffinity_np(pthread_self(), sizeof mine, &mine);
    Fake g;
    struct meas_spec sp2 = spec_for(g, cpus, 2);
    EXPECT_EQ(meas_run(&sp2, nullptr, why, sizeof why), 0) << why;
    EXPECT_TRUE(CPU_EQUAL(&g.mask[0], &mine));
    // a CPU that does not exist: the bind fails, named, nothing measured
    int bad[2] = {cpus[0], 4095};
    Fake h;
    struct meas_spec sp3 = spec_for(h, bad, 2);
    sp3.topo = t;
    EXPECT_LT(meas_run(&sp3, nullptr, why, sizeof why), 0);
    EXPECT_NE(strstr(why, "CPU 4095"), nullptr) << why;
    EXPECT_EQ(h.windows.load(), 0);
    EXPECT_EQ(h.teardowns.load(), h.setups.load());
    topo_destroy(t);
}

TEST(Measure, AThreadThatCannotStartEndsTheOthers)
{
    Fake f;
    char why[256] = "";
    struct meas_spec sp = spec_for(f, kCpus, 4);
    g_calls = 0;
    g_exited = 0;
    g_fail_at = 3; // threads 0 and 1 start, thread 2 cannot
    meas_thread_create = failing_create;
    int rc = meas_run(&sp, nullptr, why, sizeof why);
    meas_thread_create = pthread_create;
    EXPECT_EQ(rc, -EAGAIN);
    EXPECT_NE(strstr(why, "cannot start thread 3 of 4"), nullptr) << why;
    EXPECT_EQ(g_exited.load(), 2) << "every thread started was ended and joined before the return";
    EXPECT_EQ(f.setups.load(), 0) << "the started threads gave up before doing anything";
    EXPECT_EQ(f.windows.load(), 0);
}

TEST(Measure, ASetupOrWindowFailureFailsTheRunWithoutHangingIt)
{
    char why[256] = "";
    {
        Fake f;
        f.fail_setup_tid = 1;
        struct meas_spec sp = spec_for(f, kCpus, 3);
        struct meas_ctl *r = reinterpret_cast<struct meas_ctl *>(1);
        EXPECT_EQ(meas_start(&sp, &r, why, sizeof why), -ENOMEM);
        EXPECT_EQ(r, nullptr);
        EXPECT_NE(strstr(why, "fake failed on CPU 0"), nullptr) << why;
        EXPECT_EQ(f.windows.load() + f.warms.load(), 0) << "nothing measured after a failed setup";
        EXPECT_EQ(f.teardowns.load(), 3) << "teardown wherever setup was called";
    }
    {
        Fake f;
        f.fail_window_tid = 2;
        f.fail_window_rep = 1;
        struct meas_spec sp = spec_for(f, kCpus, 3);
        EXPECT_EQ(meas_run(&sp, nullptr, why, sizeof why), -EIO);
        EXPECT_LE(f.windows.load(), 3 * 2 + 2) << "the windows after the failure are skipped";
        EXPECT_EQ(f.teardowns.load(), 3);
    }
}

TEST(Measure, TheStopFlagEndsTheWindows)
{
    char why[256] = "";
    atomic_int stop = 0;
    Fake f;
    f.stop = &stop;
    f.stop_at_rep = 1;
    struct meas_spec sp = spec_for(f, kCpus, 2);
    sp.stop = &stop;
    EXPECT_EQ(meas_run(&sp, nullptr, why, sizeof why), -EINTR);
    EXPECT_LE(f.windows.load(), 2 * 2 + 1) << "windows 2.. are skipped";
    EXPECT_EQ(f.teardowns.load(), 2);
    Fake g; // raised before: nothing runs
    struct meas_spec sp2 = spec_for(g, kCpus, 2);
    sp2.stop = &stop;
    EXPECT_EQ(meas_run(&sp2, nullptr, why, sizeof why), -EINTR);
    EXPECT_EQ(g.windows.load() + g.warms.load(), 0);
}

TEST(Measure, ServingThreadsRunUntilTheMeasuringOnesAreDone)
{
    char why[256] = "";
    Fake f;
    struct meas_spec sp = spec_for(f, kCpus, 3);
    sp.nmeasure = 1;
    sp.windows = 3;
    sp.window = fake_window_then_done;
    sp.serve = fake_serve;
    f.n = 1;
    struct meas_ctl *r = nullptr;
    ASSERT_EQ(meas_start(&sp, &r, why, sizeof why), 0) << why;
    EXPECT_EQ(f.setups.load(), 3) << "every thread is set up when meas_start returns";
    double tot[3];
    struct meas_out o = {0, 0, tot};
    ASSERT_EQ(meas_finish(r, &o, why, sizeof why), 0) << why;
    EXPECT_EQ(f.serves.load(), 2);
    EXPECT_EQ(f.served_early.load(), 0) << "a server was released before the measuring thread finished";
    EXPECT_DOUBLE_EQ(o.median, 4) << "the total is the measuring thread's alone (5, 1, 4)";
    EXPECT_EQ(f.teardowns.load(), 3);
}

TEST(Measure, BadSpecsAreRefused)
{
    char why[256] = "";
    Fake f;
    struct meas_spec sp = spec_for(f, kCpus, 2);
    sp.n = 0;
    EXPECT_EQ(meas_run(&sp, nullptr, why, sizeof why), -EINVAL);
    sp = spec_for(f, kCpus, 2);
    sp.windows = 0;
    EXPECT_EQ(meas_run(&sp, nullptr, why, sizeof why), -EINVAL);
    sp = spec_for(f, kCpus, 2);
    sp.nmeasure = 1; // a serving thread without serve()
    EXPECT_EQ(meas_run(&sp, nullptr, why, sizeof why), -EINVAL);
    EXPECT_EQ(f.setups.load(), 0);
}
