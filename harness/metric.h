/* metric.h - how a profile reads a target's performance: one number per sample, through an adapter.
 *
 *   runtime               the wall time of one run of the target (a batch job: --target, no --load); lower is better
 *   cputime               the CPU time (user + system) of one run of the batch target, from its rusage: what it
 *                         spent itself, so time other programs took from its CPU does not count; lower is better
 *   throughput[:REGEX]    a number in the load generator's output (--load); higher is better
 *   latency[:REGEX]       the same, lower is better
 *   command:CMD           the first number CMD prints on stdout (run once per sample); higher is better
 *   command-lower:CMD     the same, lower is better
 *   ipc                   instructions per cycle of the target (user space): a batch --target's run, or a service
 *                         (--target or --pid, every thread of its process tree) while --load runs; counted with
 *                         perf_event_open (common/taskcount.h), so it needs a PMU; higher is better
 *   io-rate[:SECONDS]     the bytes a running program (a --target service, or --pid) reads and writes per second, as
 *                         the kernel counts them for its processes (/proc/PID/io over its cgroup or process tree,
 *                         harness/usage.h), over SECONDS (1) a sample: a program that runs until stopped (a writer,
 *                         a service without a load generator) is its own load; higher is better
 *
 * REGEX is a POSIX extended regular expression whose first parenthesised group captures the number; the last
 * match in the output counts. Without REGEX, throughput and latency use the adapter of the load generator named by
 * the first word of --load: `memcslap` ("Time to get N keys by T threads: S seconds": throughput = N/S keys/s,
 * latency = S/N s per key). Any other generator needs a REGEX. The contract is in docs/profile.md. */
#ifndef IB_METRIC_H
#define IB_METRIC_H
#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum metric_kind { MK_RUNTIME = 0, MK_THROUGHPUT, MK_LATENCY, MK_COMMAND, MK_IPC, MK_CPUTIME, MK_IO_RATE };

struct metric {
    enum metric_kind kind;
    int higher_better;
    char spec[512];      /* as given */
    char cmd[512];       /* command:CMD */
    char regex[256];     /* the pattern in use (given or the adapter's) */
    char adapter[32];    /* "memcslap", "regex", "" */
    int grp, grp_div;    /* regex groups: the value is group grp, divided by group grp_div when that is set */
    regex_t re;
    int have_re;
    char unit[32];
    double period_s;     /* io-rate: a sample's seconds */
};

/* Parse --metric; load: the --load command (or NULL). 0 or -EINVAL with why (unknown kind, bad regex, a
 * throughput/latency metric without --load, no adapter for that generator and no REGEX). */
int metric_parse(struct metric *m, const char *spec, const char *load, char *why, size_t len);
void metric_free(struct metric *m);
/* The value from a program's output: 0 or -EBADMSG with why (no match, not a number, not positive): a run-time
 * failure, not bad input (-EINVAL is kept for what the user typed). */
int metric_read(const struct metric *m, const char *out, double *value, char *why, size_t len);
/* The value of one finished run of the sample command: its wall time (runtime), its CPU time (cputime; a run too
 * short to be charged a tick counts as 1 us), else metric_read of its output. ipc is counted apart: -ENOTSUP. */
int metric_of_run(const struct metric *m, const char *out, uint64_t wall_ns, double cpu_s, double *value, char *why,
                  size_t len);
/* Performance relative to a baseline, higher = better: value / base or base / value. */
double metric_rel(const struct metric *m, double value, double base);
const char *metric_kind_name(enum metric_kind k);

#ifdef __cplusplus
}
#endif
#endif
