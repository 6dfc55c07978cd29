/* corun.h - a co-run: what program B really does to program A when both share this machine, measured.
 *
 * Method (library code on an interface a test fakes): B runs continuously on its CPUs; for each repetition B is
 * paused (frozen), A is sampled once (solo), B is resumed, A is sampled once more (beside). Interleaving solo and
 * beside samples one after the other cancels the machine's own drift, which on a shared host is larger than many
 * effects. Per repetition relative_i = metric_rel(beside_i, solo_i) (higher = better, 1 = as fast as alone); the
 * co-run's relative is the median of the relative_i, its standard error 1.2533 x s / sqrt(n) x t(0.975, n-1) / 1.96
 * where s is the larger of the robust spread (1.4826 MAD) and the standard deviation: a disk neighbour gives a few
 * wild repetitions, and a spread that ignored them would be too confident; a spread that only saw them would hide a
 * steady effect.
 *
 * Adapter (corun_run): A is a batch job (its command, once per sample) or a service (its command left running,
 * --a-load once per sample); B is a program run again and again (its command in a loop) or a service with its load
 * generator in a loop. Each runs in a cgroup of its own where the machine allows (target.h), pinned to its CPUs, and
 * B is paused through the cgroup freezer (child_pause), so a process of B that calls setsid is paused too.
 *
 * Record: JSON, format "ibench-corun" 1.1 (docs/schema/corun-v1.schema.json), with the machine's fingerprint, both
 * commands, the placement and every sample; written atomically; read back strictly. 1.1 added complete, reps_planned
 * and reason: a co-run stopped by SIGINT/SIGTERM is written with the repetitions it finished, complete false and why
 * (docs/corun.md, "Interrupted"); a 1.0 record reads as complete, its reps_planned the repetitions it holds. */
#ifndef IB_CORUN_H
#define IB_CORUN_H
#include <stddef.h>

#include "ib_atomic.h"
#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CORUN_MAX_REPS 100
#define CORUN_MAX_CPUS 64
#define CORUN_MAJOR 1
#define CORUN_MINOR 1

struct corun_meter {
    void *ctx;
    int (*sample)(void *ctx, double *value, char *why, size_t len); /* one sample of A's metric */
    int (*b_pause)(void *ctx, int paused, char *why, size_t len);    /* B frozen (1) or running (0) */
    int (*wait_ms)(void *ctx, unsigned ms, char *why, size_t len);
    void (*progress)(void *ctx, const char *line);                  /* optional */
};

struct corun_params {
    unsigned reps;              /* 1..CORUN_MAX_REPS (3 at least for a standard error) */
    unsigned settle_solo_ms;    /* after pausing B, before A's solo sample (200) */
    unsigned settle_beside_ms;  /* after resuming B, before A's beside sample (300) */
    int higher_better;          /* A's metric */
};

struct corun_sample {
    double solo, beside, relative;
};

struct corun_result {
    unsigned n;
    struct corun_sample s[CORUN_MAX_REPS];
    double relative, se;        /* median of the relatives and its standard error (NAN with fewer than 2) */
    double solo_median, beside_median;
};

/* The method above. 0, or -errno with why (-EINTR: stopped); out holds the repetitions done so far either way. */
int corun_measure(const struct corun_params *pp, struct corun_meter *m, struct corun_result *out, char *why,
                  size_t len);
/* The standard error above for n relatives around their median med; NAN when n < 2. */
double corun_se(const double *rel, unsigned n, double med);

struct corun_side {
    char *name;     /* a short label (default: the command's first word) */
    char *command;  /* A: its batch job or service; B: what runs again and again, or its service */
    char *load;     /* NULL: none */
    int cpus[CORUN_MAX_CPUS];
    unsigned ncpus;
};

struct corun_record {
    int major, minor;
    char *tool, *created;
    char *fingerprint, *cpu_model;
    int machine_cpus;
    struct corun_side a, b;
    char *metric_spec, *metric_unit;
    int higher_is_better;
    char *pause;           /* "freezer" or "signals" (a process of B that left its group was not paused) */
    unsigned settle_solo_ms, settle_beside_ms;
    int complete;          /* 1.1: 0 when stopped before every repetition asked for was done (1.0: 1) */
    unsigned reps_planned; /* 1.1: the repetitions asked for, >= r.n (1.0: r.n) */
    char *reason;          /* 1.1: why it is incomplete, one line; NULL when complete */
    struct corun_result r;
};

struct corun_opts {
    struct corun_side a, b; /* borrowed strings */
    struct metric metric;   /* A's */
    struct corun_params pp; /* its higher_better is the metric's */
    unsigned timeout_s;     /* one sample of A */
    unsigned warmup_ms;     /* after starting a service (A's or B's) */
    void (*progress)(void *ctx, const char *line); /* optional, ctx NULL */
};

/* Run a co-run on this machine: fills *rec (release with corun_free; the machine fields are the caller's to set),
 * complete or not. 0 (complete), -EINTR (stopped: *stop raised, or a failure while it was, a child the same Ctrl-C
 * killed; rec holds the repetitions finished, complete 0 and its reason, written by the caller when there is one), or
 * -errno with why (A or B failed: not to be written). Every child is gone on return. */
int corun_run(const struct corun_opts *o, const atomic_int *stop, struct corun_record *rec, char *why, size_t len);

/* JSON of a record (a new reference), and its strict reader: 0, or -errno with a one-line why naming the file and
 * the field (-EINVAL: not a co-run record, a field wrong or missing, an unknown major version). */
void *corun_json(const struct corun_record *rec); /* json_t * */
int corun_parse(const char *text, const char *name, struct corun_record *rec, char *why, size_t len);
int corun_read(const char *path, struct corun_record *rec, char *why, size_t len);
/* Write atomically, read back through the reader first. 0 or -errno with why. */
int corun_write(const char *path, const struct corun_record *rec, char *why, size_t len);
void corun_free(struct corun_record *rec);

#ifdef __cplusplus
}
#endif
#endif
