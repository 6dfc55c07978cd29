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
#define SOI_MAX_PARAMS 8
#define SOI_MAX_THREADS 256

struct calib;
struct cpu_info;
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

enum soi_ptype { SOI_P_SIZE = 0, SOI_P_UINT, SOI_P_DOUBLE, SOI_P_BOOL };

/* One tunable, checked centrally (range, type) and listed by `ibench list --soi NAME`. */
struct soi_param {
    const char *name; /* NULL terminates the table */
    enum soi_ptype type;
    double min, max, def;
    const char *help;
};

/* What the engine hands an SoI: read-only facts about where and how it runs. */
struct soi_env {
    struct topo *topo;
    const struct cpu_info *cpu;
    struct calib *calib;     /* measured capacities; SoIs may ask for a missing one to be measured */
    const struct mlim *mlim; /* memory limits */
    unsigned nthreads;
    const int *cpus;         /* nthreads OS CPU indices, where worker i runs */
    int target_cpu;          /* --near target, or -1 */
    double param[SOI_MAX_PARAMS]; /* values for ops->params, in table order */
    const atomic_int *stop;  /* set on SIGINT/SIGTERM: long prepare/set_intensity work must poll it */
    int cached_capacity;     /* 1: trust cached peak rates; 0 (default): re-measure them now, in this run */
    uint64_t duty_period_ns; /* duty SoIs: the duty quantum, one on/off cycle (0: the engine picks the shortest
                              * whose wake-up costs under 2 % of a CPU, pace_duty_period_for) */
    /* I/O SoIs (NULL / 0 when not given) */
    const char *dir;         /* disk SoIs: where their files go (NULL: fs_default_dir()) */
    const char *device;      /* disk-bw: read a raw block device instead (only with force) */
    int force;
    const char *target;      /* net-bw: ADDR:PORT of an ibench sink (NULL: a sink of its own on loopback) */
};

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
    const struct soi_param *params;
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
};

#define SOI_IO_DIR 1u
#define SOI_IO_DEVICE 2u
#define SOI_IO_TARGET 4u

/* Registry (sois/registry.c). */
unsigned soi_count(void);
const struct soi_ops *soi_at(unsigned i);
const struct soi_ops *soi_find(const char *name);

/* Checks an ops table: version, name, step, params (ranges, defaults inside them, names unique). */
int soi_check_ops(const struct soi_ops *ops, char *why, size_t len);
/* Parameters: defaults, index by name, and "NAME=VALUE" with central type/range checking. */
unsigned soi_nparams(const struct soi_ops *ops);
int soi_param_index(const struct soi_ops *ops, const char *name);
void soi_param_defaults(const struct soi_ops *ops, double *vals);
int soi_param_set(const struct soi_ops *ops, double *vals, const char *name, const char *value, char *why,
                  size_t len);

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
