/* soi.h - what a source of interference (SoI) is: one small ops table.
 *
 * A new SoI is one file in sois/ ending in `const struct soi_ops soi_<name> = {...}` plus one line in
 * sois/soi_list.h.  Only `name` and `step` are required; soi_check_ops() validates the rest.
 *
 * Life cycle, driven by the ramp engine (engine.h), which owns threads, binding, pacing and the stop flag:
 *   supported() -> prepare() -> { set_intensity(x) [workers parked] -> step()* on every worker -> measure() }*
 *   -> teardown()  (teardown runs on every exit path once prepare has succeeded)
 * SoIs never sleep, bind or print.  Callbacks return 0 or -errno and put a one-line reason in why[len].
 */
#ifndef IB_SOI_H
#define IB_SOI_H
#include "ib_atomic.h"
#include <stddef.h>
#include <stdint.h>

#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SOI_OPS_VERSION 1
#define SOI_MAX_OPTS 8      /* options per SoI */
#define SOI_MAX_CHOICES 8   /* names per CHOICE option */
#define SOI_OPTS_MAX 128    /* bytes of an SoI's option struct (ops->opts_size), held inside struct soi_env */
#define SOI_MAX_THREADS 256

struct calib;
struct cpu_info;
struct machine;
struct mlim;

/* How intensity maps to pressure, and so how the engine paces it. */
enum soi_kind {
    SOI_FOOTPRINT = 0, /* x % of a capacity held (bytes, pages); runs flat out, optionally rate-capped */
    SOI_RATE,          /* x % of a measured peak rate (B/s, ops/s); token-bucket paced */
    SOI_DUTY,          /* x % of time active; duty-cycle paced */
};
const char *soi_kind_name(enum soi_kind k);

/* What of another program's the OS shows that this SoI's resource holds: a profile reports the target's own
 * occupancy beside what the target takes from the SoI (FOOTPRINT SoIs). */
enum soi_occupancy {
    SOI_OCC_NONE = 0,
    SOI_OCC_RSS,       /* resident memory, bytes (the SoI's capacity is in bytes of memory) */
};

/* Where the threads go by default. */
enum soi_placement {
    SOI_PLACE_SHARE = 0, /* next to the target, sharing ops->scope with it (topo_near); default: highest CPUs */
    SOI_PLACE_SPREAD,    /* as far apart as possible (topo_spread): traffic between CPUs is the pressure */
};

/* Option types and the C type of the field each fills in the SoI's option struct. */
enum soi_otype {
    SOI_O_SIZE = 0, /* uint64_t: bytes, "4096", "64K", "1.5M", "2G" */
    SOI_O_UINT,     /* unsigned */
    SOI_O_DOUBLE,   /* double */
    SOI_O_BOOL,     /* int, 0 or 1: 1/yes/on/true, 0/no/off/false */
    SOI_O_CHOICE,   /* int, an index into `choices`, set by name ("read|write|mix"): declare the field as int */
};

/* One tunable, as fio's struct fio_option: a named field of the SoI's own `struct <soi>_opts` at `off`, checked
 * centrally (type, range) and listed by `ibench list --soi NAME`.  The SoI reads the struct through soi_opts(). */
struct soi_opt {
    const char *name;            /* NULL terminates the table */
    enum soi_otype type;
    size_t off;                  /* offsetof(struct <soi>_opts, field) */
    double min, max, def;        /* CHOICE: def is an index; min and max are unused (the range is the choices) */
    const char *help;
    const char *const *choices;  /* CHOICE: the names, NULL-terminated, in the order of the SoI's enum */
    double quick;                /* with has_quick: the value a run that must be short and safe uses (ibench
                                  * validate), e.g. smaller files; inside [min, max] like def */
    int has_quick;
};
/* A table row, in the SoI's file:
 *     {SOI_OPT("bs", SOI_O_SIZE, struct dbw_opts, bs, 4096, 16 << 20, 1 << 20, "block size ..."), SOI_QUICK(...)},
 * with .choices = NAMES for a CHOICE.  In C the field's type is checked against the option's at compile time
 * (a mismatch is a negative array size). */
#define SOI_QUICK(v) .quick = (v), .has_quick = 1
#ifndef __cplusplus
#define SOI_OTYPE_OF_(st, f)                                                                                       \
    _Generic(((st *)0)->f, uint64_t: SOI_O_SIZE, unsigned: SOI_O_UINT, double: SOI_O_DOUBLE, int: -1, default: -2)
#define SOI_FIELD_FITS_(t, st, f)                                                                                  \
    ((int)SOI_OTYPE_OF_(st, f) == (int)(t) ||                                                                      \
     ((int)SOI_OTYPE_OF_(st, f) == -1 && ((t) == SOI_O_BOOL || (t) == SOI_O_CHOICE)))
#define SOI_OPT(n, t, st, f, lo, hi, d, h)                                                                         \
    .name = (n), .type = (t), .off = offsetof(st, f) + 0 * sizeof(char[SOI_FIELD_FITS_(t, st, f) ? 1 : -1]),       \
    .min = (lo), .max = (hi), .def = (d), .help = (h)
#endif

/* What the engine hands an SoI: read-only facts about where and how it runs.  Built by soi_env_init() (the common
 * facts, the option defaults); the I/O fields and knobs are plain assignments after it. */
struct soi_env {
    const struct soi_ops *ops; /* whose options `opts` holds: soi_open() refuses an env made for another SoI */
    struct topo *topo;
    const struct cpu_info *cpu;
    struct calib *calib;     /* measured capacities; SoIs may ask for a missing one to be measured */
    const struct mlim *mlim; /* memory limits */
    unsigned nthreads;
    const int *cpus;         /* nthreads OS CPU indices, where worker i runs */
    int target_cpu;          /* --near target, or -1 */
    const atomic_int *stop;  /* set on SIGINT/SIGTERM: long prepare/set_intensity work must poll it */
    int cached_capacity;     /* 1: trust cached peak rates; 0 (default): re-measure them now, in this run */
    uint64_t duty_period_ns; /* duty SoIs: the duty quantum, one on/off cycle (0: the engine picks the shortest
                              * whose wake-up costs under 2 % of a CPU, pace_duty_period_for) */
    /* I/O SoIs (NULL / 0 when not given) */
    const char *dir;         /* disk SoIs: where their files go (NULL: fs_default_dir()) */
    const char *device;      /* disk-bw: read a raw block device instead (only with force) */
    int force;
    const char *target;      /* net-bw: ADDR:PORT of an ibench sink (NULL: a sink of its own on loopback) */
    union {                  /* the SoI's struct <soi>_opts (ops->opts_size bytes): read it with soi_opts(), set it
                              * through soi_opt_set()/soi_opt_setnum(); in the env, so nothing to free */
        unsigned char b[SOI_OPTS_MAX];
        uint64_t u64;        /* (alignment for any field type) */
        double d;
        void *p;
    } opts;
};

/* The SoI's option struct: `const struct dbw_opts *o = soi_opts(s->env);` */
static inline const void *soi_opts(const struct soi_env *env)
{
    return env->opts.b;
}

/* A running instance. The SoI fills capacity/unit/capacity_src in prepare(). */
struct soi {
    const struct soi_ops *ops;
    const struct soi_env *env;
    void *priv;
    double capacity;          /* pressure at 100 %, in `unit`: bytes, B/s, ops/s, or 1 (duty) */
    char unit[16];            /* "B", "B/s", "pages", "accesses/s" ... */
    char capacity_src[256];   /* where capacity came from, e.g. "measured latency knee (cpuid claims 32 MiB)" */
    double rate_cap;          /* FOOTPRINT SoIs: cap on step units/s for all threads (0 = none) */
    char secondary_unit[16];  /* unit of the per-step secondary figure (step units per second), e.g. "acc/s" */
    char note[384];           /* anything worth telling the user (time-shared CPU, clamped size, ...) */
    char load_meaning[96];    /* what its load_ns meter is, when not a data chase's dependent load (l1i: a block) */
    int pace_lead_only;       /* RATE: pace worker 0 for the whole target; the others serve it unpaced (their step()
                               * returns within a quantum when there is nothing to serve) */
    uint64_t pace_burst_ns;   /* credit a paced worker may bank after falling behind (0: the engine's 2 ms); I/O
                               * SoIs, whose path stalls for tens of ms, take more so a stall is made up */
    uint64_t duty_wake_ns;    /* filled by the engine when its workers start (duty SoIs): the CPU time a sleep and
                               * wake-up cost there (clk_wake_cost_ns, the largest over the workers) */
    uint64_t duty_period_ns;  /* ... and the duty quantum it paces with (env->duty_period_ns, or chosen from it) */
    int pace_spin;            /* wait out pacing deadlines by spinning (pause) instead of sleeping: for SoIs whose
                               * CPUs are busy anyway and whose pressure suffers when a CPU idles (on a VM an idle
                               * vCPU halts, and the hypervisor may move it before it runs again) */
    int bad_input;            /* set by soi_bad_input: prepare() failed on the user's input, not on the machine */
};

/* An SoI's prepare() marks the failure it returns as the user's input (a missing --dir, an unreachable --target,
 * more than the filesystem can spare), so the command exits 2 while its rc stays the real error (-ENOENT,
 * -ECONNREFUSED ...) and its message right. Returns rc: `return soi_bad_input(s, ib_why(why, len, -ENOENT, ...));`. */
int soi_bad_input(struct soi *s, int rc);

/* Per-step self-meter. The engine fills elapsed/units/active; measure() sets `achieved` for FOOTPRINT SoIs (RATE:
 * engine computes units/s; DUTY: the workers' on-CPU share, their CPU time over the wall time) and may add detail. */
struct soi_meter {
    uint64_t wall_ns;     /* step wall time */
    uint64_t units;       /* sum of step() units over all threads */
    uint64_t active_ns;   /* sum of time inside step() over all threads */
    double achieved;      /* pressure achieved, in soi->unit */
    double secondary;     /* units per second (access rate, ...) */
    double load_ns;       /* chase SoIs: mean latency of one dependent load (where the footprint lives); 0 = n/a */
};

struct soi_ops {
    unsigned version;        /* SOI_OPS_VERSION */
    const char *name;        /* "llc-cap" */
    const char *resource;    /* "LLC capacity" */
    const char *summary;     /* one line for `ibench list` */
    const char *paper;       /* "SoI6" */
    enum topo_scope scope;   /* what a --near placement must share with the target */
    enum soi_kind kind;
    const struct soi_opt *opts; /* its options (NULL: none), over a struct of opts_size bytes */
    size_t opts_size;           /* sizeof(struct <soi>_opts), at most SOI_OPTS_MAX */
    int (*supported)(const struct soi_env *env, char *why, size_t len);         /* 0 or -ENOTSUP */
    int (*prepare)(struct soi *s, char *why, size_t len);                       /* size, allocate, calibrate */
    int (*set_intensity)(struct soi *s, double x, char *why, size_t len);       /* workers are parked */
    int (*step)(struct soi *s, unsigned tid, uint64_t *units);                  /* one bounded quantum (<~1 ms) */
    int (*measure)(struct soi *s, struct soi_meter *m);                         /* self-meter after a step */
    void (*teardown)(struct soi *s);                                            /* release everything */
    unsigned min_threads;    /* fewest threads it can run with (0 or 1: any); also its default thread count */
    enum soi_placement placement;
    unsigned io;             /* which of env's I/O options it takes: SOI_IO_DIR | SOI_IO_DEVICE | SOI_IO_TARGET */
    enum soi_occupancy occupancy; /* what of a target's the OS shows in this SoI's resource (default: nothing) */
    /* A profile's caused on this SoI read through a latency-sensitive reference instead of the SoI's own rate: the
     * name of a validation probe (validation/vprobe.h) that the SoI slows and the SoI's own kind of load does not
     * measure (a writer barely slows a writer, and slows a latency-bound reader tenfold). The target's effect on
     * the probe is read as the SoI intensity that has the same effect (harness/profile_method.h,
     * prof_caused_ref). NULL: the SoI's own rate. */
    const char *caused_ref;
};

#define SOI_IO_DIR 1u
#define SOI_IO_DEVICE 2u
#define SOI_IO_TARGET 4u

/* Registry (sois/registry.c). */
unsigned soi_count(void);
const struct soi_ops *soi_at(unsigned i);
const struct soi_ops *soi_find(const char *name);

/* Checks an ops table: version, name, step, options (types, offsets inside opts_size and apart, ranges, defaults
 * and quick values inside them, names unique, choices). */
int soi_check_ops(const struct soi_ops *ops, char *why, size_t len);

/* One constructor for every caller: zeroes env, fills the common facts (m may be NULL: topo, cpu, calib and mlim
 * stay NULL for the caller to set), and writes ops's option defaults.  target_cpu: --near CPU, or -1. */
void soi_env_init(struct soi_env *env, const struct soi_ops *ops, struct machine *m, unsigned nthreads,
                  const int *cpus, int target_cpu, const atomic_int *stop);

/* Options, by name, through env->ops's table. */
unsigned soi_nopts(const struct soi_ops *ops);
const struct soi_opt *soi_opt_find(const struct soi_ops *ops, const char *name); /* NULL: no such option */
/* Set from a string (the command line): -EINVAL for an unknown name or a value that does not parse (a CHOICE
 * takes one of its names), -ERANGE outside [min, max]. */
int soi_opt_set(struct soi_env *env, const char *name, const char *value, char *why, size_t len);
/* Set from a number (a CHOICE's index, a BOOL's 0/1): -EINVAL unknown name, NaN or a fraction for an integer
 * type; -ERANGE outside. */
int soi_opt_setnum(struct soi_env *env, const char *name, double v, char *why, size_t len);
/* Every option with a quick value takes it (see struct soi_opt). */
void soi_opts_quick(struct soi_env *env);
/* An option's value in env, as a number (a CHOICE's index). */
double soi_opt_get(const struct soi_env *env, const struct soi_opt *o);
/* A value of o as text a user could type back: a CHOICE's name, a BOOL's on/off, a size as "512M"; buf returned. */
const char *soi_opt_text(const struct soi_opt *o, double v, char *buf, size_t len);
const char *soi_otype_name(enum soi_otype t);

/* supported() + prepare(); on success *out is ready for the engine, release with soi_close(). On failure
 * *bad_input (may be NULL) is 1 when the SoI marked it as the user's input (soi_bad_input), else 0; callers pass it on
 * to cli_exit_for. */
int soi_open(const struct soi_ops *ops, const struct soi_env *env, struct soi **out, int *bad_input, char *why,
             size_t len);
void soi_close(struct soi *s);

#ifdef __cplusplus
}
#endif
#endif
