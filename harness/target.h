/* target.h - the programs a profile runs: the target (a service left running, or a batch job run once per sample),
 * its load generator, a metric command. Each child runs `sh -c CMD` in a process group of its own, pinned to the
 * given CPUs before exec, so Ctrl-C reaches ibench only and ibench takes the whole group down (SIGTERM, then
 * SIGKILL after a grace period) on every exit path.
 *
 * Containment: a process group does not hold a daemon (setsid, `memcached -d`), so where the machine allows it each
 * child also runs in a cgroup of its own (cgroup.h), killed as a whole and removed when the child is stopped, and
 * known to the watchdog (watchdog.h), which kills it if ibench dies without stopping it. Elsewhere the child gets
 * PR_SET_PDEATHSIG(SIGKILL): it dies with ibench, though a daemon it started does not. */
#ifndef IB_TARGET_H
#define IB_TARGET_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "ib_atomic.h"

#ifdef __cplusplus
extern "C" {
#endif

struct child {
    pid_t pid;       /* also the process group; -1 when none */
    int out_fd;      /* read end of its stdout (capture only), -1 otherwise */
    int exited;      /* reaped */
    int status;      /* wait status once exited */
    double cpu_s;    /* user + system CPU time of it and its reaped descendants (rusage), once exited */
    uint64_t t0_ns;  /* CLOCK_MONOTONIC at spawn */
    char cg[CG_PATH_MAX]; /* its cgroup, "" when none */
    int slot;        /* its entry in the table child_kill_all reads, -1 when none */
    int frozen;      /* paused through its cgroup's freezer (child_pause): thawed before it is stopped */
};

/* How children are contained here: CG_V1/CG_V2 (a cgroup each) or CG_NONE (process group + PR_SET_PDEATHSIG), with
 * a one-line description into desc (the hierarchy, or why none is used). Found on first use; cgroups of ibench
 * processes that are gone are removed then. */
enum cg_kind child_containment(char *desc, size_t len);
/* Use r's hierarchy for the children spawned from now on (tests: a chosen hierarchy); NULL: no cgroups. */
void child_containment_set(const struct cg_root *r);
/* SIGKILL to every live child's process group and cgroup. Async-signal-safe: for a second Ctrl-C. */
void child_kill_all(void);

/* Start `sh -c cmd` pinned to cpus[0..ncpus-1] (none: inherit), stdin from /dev/null, stdout captured when
 * capture, else /dev/null; stderr to /dev/null unless show_err. 0 or -errno with why. Call it from a thread that
 * outlives the child: PR_SET_PDEATHSIG fires when the thread that forked ends. */
int child_spawn(const char *cmd, const int *cpus, unsigned ncpus, int capture, int show_err, struct child *c,
                char *why, size_t len);
/* Reaps it if it has exited (non-blocking): 1 exited, 0 running. */
int child_poll(struct child *c);
/* Pause (1) or resume (0) the child and everything it started. Through its cgroup's freezer where it has one, so a
 * process that left the group (fio's jobs and daemons call setsid) is paused too; else SIGSTOP/SIGCONT to its process
 * group, which misses such processes: *how (if not NULL) says which was used, "freezer" or "signals". 0 or -errno
 * with why. */
int child_pause(struct child *c, int paused, const char **how, char *why, size_t len);
/* SIGTERM to its group, SIGKILL after grace_ms, reaped; closes the pipe. Safe on a child that already exited. */
void child_stop(struct child *c, unsigned grace_ms);

/* Run `sh -c cmd` to completion, capturing stdout (up to 1 MiB) into a malloc'd NUL-terminated *out, wall time in
 * *wall_ns. Gives up after timeout_ms (-ETIMEDOUT) or when *stop rises (-EINTR), killing the group. On success
 * returns 0 with *status its wait status (the caller judges it) and *cpu_s the CPU time it used (user + system,
 * the shell and what it waited for; NULL: not wanted). */
int child_run(const char *cmd, const int *cpus, unsigned ncpus, unsigned timeout_ms, const atomic_int *stop,
              char **out, int *status, uint64_t *wall_ns, double *cpu_s, char *why, size_t len);

/* An existing process: 0 if pid names a live process we may signal, else -ESRCH / -EPERM with why. */
int pid_check(pid_t pid, char *why, size_t len);
/* The CPU affinity of each thread of a process ibench did not start, as pid_pin found it, so that it is put back:
 * by pid_unpin on every exit path, and by the watchdog (watchdog.h) when ibench dies first. */
#define PIN_MASK_WORDS 16 /* 1024 CPUs, as CPU_SETSIZE */
struct pin_saved {
    pid_t pid;                /* 0: nothing saved */
    unsigned long long start; /* the process's start time (/proc/pid/stat field 22): a reused pid is not touched */
    unsigned n;
    pid_t *tid;
    uint64_t (*mask)[PIN_MASK_WORDS];
};

/* Pin every thread of pid to cpus (sched_setaffinity on /proc/pid/task/<tid>), each thread's affinity saved into
 * *saved first and told to the watchdog. 0 or -errno with why; on failure the threads pinned so
 * far are put back. */
int pid_pin(pid_t pid, const int *cpus, unsigned ncpus, struct pin_saved *saved, char *why, size_t len);
/* Puts every thread of saved->pid back as pid_pin found it (a thread started since gets the main thread's saved
 * affinity), tells the watchdog, frees *saved. 0, -ESRCH when the process is gone (or its pid reused: then nothing is
 * touched), -errno with why. A no-op on an empty *saved. */
int pid_unpin(struct pin_saved *saved, char *why, size_t len);
/* pid_unpin without freeing or telling the watchdog (the watchdog's own restore). */
int pin_restore(const struct pin_saved *s, char *why, size_t len);
/* One saved thread as the watchdog's entry: "<pid>/<tid> <start> <hex mask>" (pin_saved_parse reads it back). */
int pin_saved_entry(const struct pin_saved *s, unsigned i, char *out, size_t len);
/* Adds the thread of one such entry to *s (s->pid 0 or the entry's). 0 or -EINVAL / -ENOMEM. */
int pin_saved_parse(struct pin_saved *s, const char *entry);
void pin_saved_free(struct pin_saved *s);

/* Resident memory (bytes) of every process in process group pgid (pgid > 0), or of process -pgid alone (pgid < 0),
 * from /proc; 0 when none is found. */
double group_rss_bytes(pid_t pgid);

/* One line saying how a wait status ended: "exited with status 3", "killed by signal 11 (Segmentation fault)". */
void status_text(int status, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
