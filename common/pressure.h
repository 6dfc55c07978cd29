/* pressure.h - did the machine give us what we asked for? Measured from the kernel, independently of any self-meter.
 *
 * Three sources, each optional (absent ones read as NAN, never as 0):
 *   - pressure stall information, /proc/pressure/{cpu,io,memory}: the share of wall time in which some (or all)
 *     runnable tasks waited for the resource (Linux >= 4.20, CONFIG_PSI);
 *   - steal time, the 8th field of the "cpu" line of /proc/stat: time the hypervisor ran someone else on our vCPUs;
 *   - per-thread run-queue delay, /proc/<pid>/task/<tid>/schedstat ("on-CPU ns, waiting ns, slices";
 *     CONFIG_SCHED_INFO): how long *these* threads were runnable but not running.
 * The last is the one a verdict rests on: PSI and steal say the machine was busy, the wait share says our threads
 * paid for it. A snapshot is taken before and after an interval; a delta turns two snapshots into shares of it.
 *
 * The parsers take text so that tests can feed recorded files; the readers take a procfs root ("/proc" normally). */
#ifndef IB_PRESSURE_H
#define IB_PRESSURE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ib_psi_res { IB_PSI_CPU, IB_PSI_IO, IB_PSI_MEM, IB_PSI_N };
extern const char *const ib_psi_name[IB_PSI_N]; /* "cpu", "io", "memory" */

/* One reading of the machine: cumulative counters, meaningful only as a difference of two snapshots. */
struct ib_pressure_snap {
    uint64_t t_ns;                 /* CLOCK_MONOTONIC */
    bool psi_have[IB_PSI_N];
    uint64_t psi_some_us[IB_PSI_N];
    uint64_t psi_full_us[IB_PSI_N]; /* cpu's "full" line exists from Linux 5.13 and is 0 at the system level */
    bool stat_have;
    uint64_t steal_ticks, total_ticks; /* summed over every CPU, in USER_HZ ticks */
};

/* The interval between two snapshots, as % of its wall time (NAN where a source was absent in either). */
struct ib_pressure {
    double wall_s;
    double some_pct[IB_PSI_N]; /* some task waited for the resource */
    double full_pct[IB_PSI_N]; /* every non-idle task waited (io, memory) */
    double steal_pct;          /* of all CPUs' time, stolen by the hypervisor */
};

/* Parse one /proc/pressure/<res> file: the "total=" of its "some" line and, when present, its "full" line.
 * 0, or -EINVAL with why. */
int ib_psi_parse(const char *text, uint64_t *some_us, uint64_t *full_us, bool *have_full, char *why, size_t len);
/* Parse /proc/stat's aggregate "cpu" line: steal and the sum of every field. 0, or -EINVAL with why. */
int ib_stat_parse(const char *text, uint64_t *steal, uint64_t *total, char *why, size_t len);
/* Parse a schedstat line: on-CPU ns, run-queue wait ns, and (slices may be NULL) the number of times the thread ran
 * on a CPU. 0, or -EINVAL with why. */
int ib_schedstat_parse(const char *text, uint64_t *run_ns, uint64_t *wait_ns, uint64_t *slices, char *why,
                       size_t len);

/* Snapshot from procfs under root (NULL: "/proc"). Missing sources are marked absent, not an error; 0 always
 * unless root itself cannot be read at all (then -errno with why). */
int ib_pressure_read(struct ib_pressure_snap *s, const char *root, char *why, size_t len);
void ib_pressure_delta(const struct ib_pressure_snap *a, const struct ib_pressure_snap *b, struct ib_pressure *out);
/* Merge a into acc, wall-time weighted (for a phase made of several intervals). acc starts zeroed. */
void ib_pressure_add(struct ib_pressure *acc, const struct ib_pressure *a);

/* Run-queue accounting of a set of threads: summed on-CPU and waiting ns. */
struct ib_sched {
    bool have;
    uint64_t run_ns, wait_ns;
    uint64_t slices; /* times they ran on a CPU: every run was preceded by a wait, a wake-up's or another task's */
    unsigned ntasks;
};
/* One thread (tid 0: the calling thread). 0, or -errno with why (-ENOENT: no schedstat here). */
int ib_sched_thread(pid_t tid, struct ib_sched *s, char *why, size_t len);
/* Every thread of process pid (0: this process), as it is now. 0, or -errno with why. */
int ib_sched_process(pid_t pid, struct ib_sched *s, char *why, size_t len);
/* Share of the interval's runnable time the threads spent waiting for a CPU, in %: wait / (run + wait). NAN when
 * either side is absent or the threads were never runnable. */
double ib_sched_wait_pct(const struct ib_sched *a, const struct ib_sched *b);
/* These threads of this process (tids from gettid()), summed. A thread that cannot be read makes the whole set
 * absent (have false): a share over some of the threads would not be theirs. 0, or -errno with why. */
int ib_sched_threads(const pid_t *tids, unsigned n, struct ib_sched *s, char *why, size_t len);
/* b - a into out (the interval's run and wait ns); out->have false when either is absent or the counters went
 * backwards (another set of threads). */
void ib_sched_delta(const struct ib_sched *a, const struct ib_sched *b, struct ib_sched *out);
/* acc += d, for a phase made of several intervals (absent parts are left out; acc starts zeroed). */
void ib_sched_add(struct ib_sched *acc, const struct ib_sched *d);
/* The wait share of an interval already reduced to a delta: wait / (run + wait) in %. NAN when absent, or when the
 * threads were runnable for less than IB_BUSY_MIN_RUNNABLE_NS in all: then the share is the latency of a few
 * wake-ups (an idle SoI step read 33 % of 0.1 ms here), not a lack of CPU. */
double ib_sched_share(const struct ib_sched *d);
#define IB_BUSY_MIN_RUNNABLE_NS 1000000ULL

/* The documented bound: a step whose threads waited more than this share of their runnable time did not get the
 * CPU it asked for, so its figures say "busy", not "broken". 10 %: a CPU-bound SoI alone on its CPU waits < 1 % here
 * (kernel threads, timer ticks); beside one CPU hog on the same CPU it waits about 50 %. A self-meter's own
 * tolerance is a few %, and a 10 % loss of CPU already moves a rate SoI beyond it. See docs/validation.md. */
#define IB_BUSY_WAIT_PCT 10.0

/* The rule: true when wait_pct is above IB_BUSY_WAIT_PCT. A share that was not measured (NAN) is never busy. */
bool ib_busy(double wait_pct);
/* The mean wait before a run, in us: wait_ns / slices (NAN when absent or never run). A thread that waits because
 * another task holds its CPU waits for that task's slice, milliseconds; a thread that only waits to be woken (an I/O
 * SoI whose own completions wake it, the block layer's work for that I/O beside it) waits a wake-up's latency,
 * tens of microseconds, however large a share of its short runnable time that is. */
double ib_sched_wait_per_run_us(const struct ib_sched *d);
/* The second half of the busy rule: waits of another task's slice, not of wake-ups, at or above IB_BUSY_WAIT_RUN_US
 * (a figure that was not measured, NAN, counts: the share alone decides, as before the figure was read). A step is
 * busy when ib_busy(share) and ib_busy_waits(per run). See docs/validation.md, "Busy is a verdict". */
bool ib_busy_waits(double wait_per_run_us);
#define IB_BUSY_WAIT_RUN_US 250.0
/* The figure behind a verdict, one line: "the SoI's threads waited 48 % of their runnable time for a CPU (bound
 * 10 %); PSI cpu some 51 %, steal 0.0 %" (a source that was absent is left out; p may be NULL). */
void ib_busy_text(double wait_pct, const struct ib_pressure *p, char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif
