/* validate.h - the validation method (docs/validation.md) as a library: every SoI measured from outside by an
 * independent probe, and the overlap matrix with the catalogue's claims. Results are plain C structs; `ibench
 * validate` (cli/cmd_validate.c) parses arguments and renders them. Nothing here prints (progress goes through
 * out_progress) or exits.
 *
 * The probe ramp and the overlap cells take their beside measurements through struct val_meter, so a test can pass
 * a fake with seeded noise; val_open's context brings the real one (beside_run on the real SoI and probe).
 */
#ifndef IB_VALIDATE_H
#define IB_VALIDATE_H
#include <stddef.h>
#include <stdint.h>

#include "beside.h"
#include "ib_atomic.h"
#include "machine.h"
#include "soi.h"
#include "verdict.h"
#include "vprobe.h"
#include "xmeter.h"

#ifdef __cplusplus
extern "C" {
#endif


/* ---- busy is a verdict -------------------------------------------------------------------------------------------
 * Figures taken while the SoI's threads waited for a CPU describe the host, not the SoI (docs/validation.md, "Busy is
 * a verdict"). The rule, on the SoI workers' own run-queue wait share (pressure.h: % of their runnable time; NAN, not
 * measured, is never busy), against IB_BUSY_WAIT_PCT:
 *  - over all the steps the verdict rests on, above the bound: BUSY, whatever the readings say (a pass on part of a
 *    CPU is no evidence either);
 *  - a FAIL, undecidable, UNCHECKED or ISOLATED verdict (a negative finding) with any one of those steps above the
 *    bound: BUSY (a failure or an absence of effect is never called on a step that did not get its CPU);
 *  - otherwise the verdict measured; skipped and interrupted stand.
 * Every verdict on timing or on work per CPU second (which divides by a capacity measured on the same CPUs when the
 * SoI opened) goes through it. Steps at 0 % ask for no CPU and are not judged: their workers are runnable only to
 * wake up and park, and that, behind the engine's own control thread on a loaded CPU, read 98 % waited of a
 * millisecond or two. */
enum val_verdict val_busy_rule(enum val_verdict measured, double wait_all_pct, double wait_worst_pct);
/* Whether the rule applies, the same for every SoI: 1 when the SoI's threads waited, on the mean, at least
 * IB_BUSY_WAIT_RUN_US before each run on a CPU (another task's slice: the machine took the CPU), 0 when their waits
 * were a wake-up's (an I/O SoI woken by its own completions, with the block layer's work for that I/O on its CPU:
 * disk-bw waited 24-50 % of its short runnable time on an idle machine, in waits of tens of us); then the wait is
 * reported, not judged. wait_per_run_us NAN (not measured): judged (pressure.h, ib_busy_waits). */
int val_busy_judged(double wait_per_run_us);

#define VAL_LEVELS 5      /* 0, 25, 50, 75, 100 % */
#define VAL_MAX_ROUNDS 8
#define VAL_NPROBES 10
#define VAL_MAX_SOIS 32
#define VAL_MAX_CHECKS 16

/* The probes of the overlap matrix, in column order: those that can run on another CPU than the SoI's. */
extern const char *const val_mprobes[VAL_NPROBES];

/* ---- how beside measurements are taken ------------------------------------------------------------------------ */
struct val_meter {
    /* Make `ops` the SoI measured (fresh: measure its peak rates now, else take the cached ones). 0 or -errno. */
    int (*open)(void *ctx, const struct soi_ops *ops, int fresh, char *why, size_t len);
    void (*close)(void *ctx);
    /* The open SoI through levels x cycles, step_ns each, beside probe `probe` on probe_cpu (beside_run): out gets
     * per level the paired ratios (beside_level.cycle_ratio). 0, -EINTR, or -errno with why. */
    int (*beside)(void *ctx, const char *probe, int probe_cpu, const double *levels, unsigned nlevels, unsigned cycles,
                  uint64_t step_ns, uint64_t settle_ns, struct beside_result *out, char *why, size_t len);
    /* Bandwidth `kind` measured now: 1 when the two CPUs share no bottleneck in it (why says what was measured),
     * 0 when they do, -1 when unknown. NULL: never asked. */
    int (*unshared)(void *ctx, const char *kind, int probe_cpu, char *why, size_t len);
    void *ctx;
};

/* ---- work seen from outside the SoI ----------------------------------------------------------------------------
 * An SoI that works on its own CPUs (a rate or duty SoI, not I/O: a footprint's figure is bytes held, I/O waits off
 * the CPU) does the work it counts in CPU time. At 100 % it runs flat out, so its units per second of its workers'
 * own CPU time (the kernel's count of that time, not the SoI's) are its kernel's speed: they must lie between a
 * tenth and a hundred times its capacity, measured at open as units per wall second. A step that counts work it does
 * not do reads thousands of times its capacity per CPU second, one that does nothing for its CPU time reads 0, and
 * one that neither works nor spins has no CPU time. The bar is wide because the capacity is a wall-time rate:
 * measured while the host lent the CPU elsewhere, it reads low, and the ratio high (docs/validation.md, "Work seen
 * from outside the SoI", has the figures). Paced levels are not judged: a pacer's wake-ups and an SoI spinning on
 * round trips cost CPU time that is not work. */
#define VAL_WORK_CPU_MIN_PCT 10.0
#define VAL_WORK_CPU_MAX_PCT 10000.0
/* 1 when the rule above applies to ops. */
int val_works_on_cpu(const struct soi_ops *ops);
/* 1 when work_cpu_pct (NAN: no CPU time) is within the bar. */
int val_work_cpu_ok(double work_cpu_pct);

/* ---- the self-meter ramp, the SoI alone ----------------------------------------------------------------------- */
struct val_self {
    int ran;
    const char *method;          /* "climb and descend", "levels between 100 % windows", "... as % of them" */
    const char *tag;             /* the method in a word: "climb", "ref", "duty" */
    double step_ms;
    unsigned fit_levels;         /* 4 for a rate SoI (its 100 % is unpaced), else 5 */
    double level[VAL_LEVELS], achieved[VAL_LEVELS]; /* achieved % (NAN: the level has no reading) */
    unsigned readings[VAL_LEVELS];
    /* Seen from outside the SoI's step(): its workers' own CPU time over the wall time, % (every reading at the
     * level, capacity-limited ones too), and its work per second of that CPU time, % of its capacity (achieved %
     * over on-CPU share; NAN with no CPU time). A step that does nothing cannot hold both: it sleeps or spins. */
    double on_cpu[VAL_LEVELS], work_cpu[VAL_LEVELS];
    double slope, r2, worst_pts, noise_pts, calib_pct, calib_lo, calib_hi; /* calib: the 100 % readings */
    double alone_pct;            /* achieved % of the capacity at 100 %, mean of those windows */
    unsigned capacity_limited;   /* readings left out: the capacity of the moment was below the target */
    /* Did the SoI get its CPU (busy rule above)? Its workers' run-queue wait share per level (over the level's
     * steps), over every step, and the worst step's (at wait_worst_level %); PSI and steal over the ramp. */
    double wait[VAL_LEVELS], wait_pct, wait_worst_pct, wait_worst_level;
    double wait_run_us;          /* their mean wait before a run, over every step (val_busy_judged) */
    unsigned busy_steps;         /* steps above the bound */
    struct ib_pressure machine;
    enum val_verdict measured;   /* what the readings alone say (verdict differs only when BUSY) */
    int judged;                  /* the figures above are set (the ramp completed) */
    enum val_verdict verdict;
    char reason[320];
};

/* ---- the probe ramp ---------------------------------------------------------------------------------------------
 * Adaptive dwell (docs/validation.md, "How long a ramp looks"): the first round is step_ns x cycles (60 ms steps).
 * The verdict is undecided while |d(100)| is within 3 standard errors of 0 (widened for few cycles: a t statistic)
 * and |d(100)| + 3 se is not under 1 %, or while an effect's shape fails (R^2 < 0.9 or not monotone) with some
 * level's se over a twelfth of d(100) (noise that large can fail the shape alone). While undecided the dwell grows
 * 4x up to max_step_ns, each new dwell starting a new pool of per-cycle ratios (a longer step is another
 * measurement: a large footprint may need it to fill), with more_cycles cycles; at the longest dwell further rounds
 * add cycles to its pool. Every round must fit what is left of budget_s (cycles cut to fit: at least 4 for a new
 * dwell, 2 more for the pool); budget_s 0 runs the first round only. */
struct val_ramp_cfg {
    const char *probe;
    int probe_cpu;
    uint64_t step_ns, settle_ns; /* the first round; settle grows with the step */
    unsigned cycles;             /* the first round */
    uint64_t max_step_ns;
    unsigned more_cycles;        /* cycles per later round */
    double budget_s;             /* for every round together (dwell x steps) */
    const atomic_int *stop;
};

struct val_level {
    double level, achieved_pct, probe_cost; /* achieved: the SoI's self-meter beside the probe; probe_cost: median */
    double on_cpu_pct, work_cpu_pct;        /* beside the probe, as val_self's on_cpu / work_cpu */
    double wait_pct;                        /* the SoI workers' run-queue wait share over the level's steps */
    double d, se;                           /* degradation % (1 - 1/ratio) and its standard error */
    unsigned samples, cycles;
};

struct val_round {
    double dwell_ms;
    unsigned cycles;
    double d100, se100;          /* on the pool at this dwell, after this round */
};

struct val_ramp {
    unsigned nlevels;
    struct val_level lv[VAL_LEVELS];
    double slope, icpt, r2;      /* d against the requested x (the verdict's) */
    double a_slope, a_icpt, a_r2; /* d against the pressure achieved beside the probe */
    double self_slope, self_r2;  /* achieved against x, beside the probe */
    double noise_pct;            /* the solo level's even/odd-cycle difference, last round */
    double cycle_sd_pct;         /* spread (sample standard deviation) of d(100) over the pooled cycles */
    int monotone;
    /* how long it looked: the verdict is on the pool at dwell_ms (cycles cycles); looked_s counts every round */
    double dwell_ms, looked_s, budget_s;
    unsigned cycles, nrounds;
    int decided;                 /* 0: the budget ran out with the effect still within the noise */
    /* the SoI's workers' run-queue wait share over the pool's steps, the worst level's step, PSI and steal (the
     * busy rule above; NAN: not measured) */
    double wait_pct, wait_worst_pct, wait_worst_level;
    double wait_run_us;          /* their mean wait before a run, over the pool's steps */
    struct ib_pressure machine;
    int busy_exempt;             /* the SoI's wait is not judged (val_busy_judged on wait_run_us; val_probe_ramp sets
                                  * it) */
    struct val_round round[VAL_MAX_ROUNDS];
};

/* The self-meter ramp of an open SoI, alone (docs/validation.md, "The self-meter, alone"), judged with the busy rule:
 * o->measured is what the readings say, o->verdict that or BUSY. quick: shorter steps. */
void val_self_ramp(struct soi *s, int quick, const atomic_int *stop, struct val_xmeter *xm, struct val_self *o,
                   struct val_xcheck *xc);
/* xm (may be NULL): an open outside meter (xmeter.h), read at every step of that ramp; xc gets its figures and its
 * verdict (val_xmeter_judge), through the same busy rule on the same steps. */

/* Run the ramp through m (open SoI) per cfg; fill r's figures. 0, -EINTR (figures of the rounds done), -errno. */
int val_probe_ramp(const struct val_meter *m, const struct val_ramp_cfg *cfg, struct val_ramp *r, char *why,
                   size_t len);
/* The neighbour's view, the probe ramp's verdict (docs/validation.md): a real effect (d(100) beyond 2 se and 1 %)
 * monotone within the noise: pass; no effect: UNCHECKED (val_soi_run makes it ISOLATED when the outside meter saw
 * the pressure), or skipped when unshared() says the bandwidth is no shared bottleneck; an effect that is not
 * monotone: UNCHECKED. Its shape is reported, not judged as a line: a neighbour's loss beside a queue is a cliff on
 * real devices. Then the busy rule on r's wait shares (BUSY: the reason gives the figure, then what the readings
 * said; *measured, when not NULL, gets the readings' own verdict). The reason says how long it looked and the
 * noise it saw. alone_pct / rate_soi: the SoI's 100 % alone and whether its
 * 100 % reading beside the probe means anything (not a footprint). */
enum val_verdict val_ramp_verdict(const struct val_ramp *r, const struct val_meter *m, const char *bwkind,
                                  int probe_cpu, double alone_pct, int rate_soi, char *reason, size_t len,
                                  enum val_verdict *measured);
/* "+38.4 +- 0.7 % at 100 %, monotone within the noise, falls fastest from 75 to 100 % (+12.7 points), R^2 0.987
 * against x" */
void val_ramp_shape(const struct val_ramp *r, char *out, size_t len);
/* "looked 96 s: 6 cycles of 1920 ms (after 16 x 60, 6 x 240, 6 x 960 ms); noise: se 1.2 %, per cycle 3.0 %" */
void val_looked_text(const struct val_ramp *r, char *out, size_t len);

/* ---- one SoI --------------------------------------------------------------------------------------------------- */
struct val_soi {
    const struct soi_ops *ops;
    int soi_cpu;
    int opened;                  /* capacity fields are set */
    double capacity;
    char unit[16], capacity_src[256];
    struct val_self self;
    int have_probe;              /* the probe fields and the ramp are set */
    char probe[16], probe_unit[16], probe_what[160];
    int probe_cpu;
    struct val_ramp ramp;
    double alone_100, beside_100; /* the SoI at 100 %: alone (self-meter ramp) and beside the probe */
    /* the outside meter (xmeter.h), read over the self-meter ramp: meter.ran, or meter.verdict UNCHECKED with
     * meter.reason saying why there is none here */
    enum vprobe_meter meter_kind;
    struct val_xcheck meter;
    /* the neighbour's view: the probe ramp's own verdict (val_ramp_verdict; ISOLATED where the meter saw the
     * pressure and the probe nothing) and reason; skipped with why when no probe ran */
    enum val_verdict neighbour;
    enum val_verdict measured;   /* the probe ramp's readings alone (neighbour differs only when BUSY) */
    char neighbour_reason[640];
    /* the SoI's verdict, from the three (val_soi_verdict) */
    enum val_verdict verdict;
    char reason[640];
    int open_rc, bad_input;      /* the SoI did not open: its real error, and whether it refused the user's input
                                  * (soi_open's mark: a --dir that is missing ...), which ends the command (exit 2) */
};

/* ---- the overlap matrix and the claims ----------------------------------------------------------------------- */
struct val_cell {
    int measured;                /* 1: d, se, noise set; 0: skipped (why) or not run (why empty) */
    double d, se, noise;
    double soi_pct, soi_on_cpu_pct, soi_work_cpu_pct; /* the SoI at 100 % beside the probe: achieved % of its
                                                        * capacity, on-CPU %, work per CPU second (val_self) */
    int has_norm;
    double normalised;           /* d over what the probe's own SoI does to it */
    double wait_pct;             /* the SoI workers' run-queue wait share at 100 % (busy rule; NAN: not measured) */
    int remeasured;              /* measured twice: first_* is the first figure */
    double first_d, first_se;
    char why[160];
};

struct val_row {
    const struct soi_ops *ops;
    int skipped;
    char why[320];
    struct val_cell cell[VAL_NPROBES];
};

struct val_check {
    const struct overlap_claim *claim;
    enum val_verdict verdict;    /* pass, FAIL, undecidable, or BUSY (a cell it rests on did not get its CPU) */
    char text[400];
};

struct val_overlap {
    unsigned nrows, nchecks;
    struct val_row row[VAL_MAX_SOIS];
    struct val_check check[VAL_MAX_CHECKS];
};

/* Which cells a claim's verdict rests on, for re-measuring. */
struct val_cellref {
    unsigned row, col;
};

/* Judge every claim in overlap_claims whose cells were measured (none: no check). bad/nbad (may be NULL): the cells
 * of checks that are FAIL or undecidable, at most maxbad. Returns 1 when some check is FAIL, else 0. */
int val_claims_eval(struct val_overlap *ov, struct val_cellref *bad, unsigned *nbad, unsigned maxbad);
/* val_claims_eval, then every cell a FAIL or undecidable check rests on measured once more through m (never a
 * third time) and the claims judged again on the second figures. Returns 1 when some check is FAIL. */
int val_claims_check(struct val_overlap *ov, const struct val_meter *m, int probe_cpu, int quick,
                     const atomic_int *stop);
/* Measure one cell through m (the SoI open): 0/100 % beside the probe. 0 or -errno with why. */
int val_cell_measure(const struct val_meter *m, const char *probe, int probe_cpu, int io_soi, int quick,
                     struct val_cell *cell, char *why, size_t len);
/* d over what the probe's own SoI (vprobe_maps) does to it, where that is over 0.5 %. */
void val_normalise(struct val_overlap *ov);

/* ---- the whole run on this machine ----------------------------------------------------------------------------- */
struct val_opts {
    int quick;
    double budget_s;             /* per probe ramp; < 0: the default (first round only with quick, else 100 s) */
    const char *dir;             /* where disk SoIs and probes make their files (NULL: fs_default_dir()) */
    const atomic_int *stop;
};

struct val_ctx; /* validate.c */

/* The SoI on the highest-numbered CPU, probes on the lowest; the caches measured once when the calibration cache
 * has none (the probes' sizes come from them). 0 or -errno with why. */
int val_open(struct val_ctx **out, struct machine *m, const struct val_opts *o, char *why, size_t len);
int val_soi_cpu(const struct val_ctx *c);
int val_probe_cpu(const struct val_ctx *c);
void val_close(struct val_ctx *c);

/* The SoI's verdict from its three checks (docs/validation.md, "Verdicts"), into v->verdict and v->reason: FAIL when
 * the self-meter or the outside meter FAILs; else BUSY when one of them is; else, with the meter's pass, pass when
 * the neighbour felt it or could not be placed and ISOLATED when it felt nothing; without a meter here, pass when the
 * neighbour felt a monotone effect, else UNCHECKED; undecidable and interrupted stand. */
void val_soi_verdict(struct val_soi *v);
/* Validate one SoI: self-meter ramp with its outside meter, probe ramp, and the verdicts. 0, or -EINTR (out says
 * how far it got). */
int val_soi_run(struct val_ctx *c, const struct soi_ops *ops, struct val_soi *out);
/* The overlap matrix for SoI `only` (NULL: every SoI), normalised, with the claims checked (cells re-measured
 * once). Returns 1 when a check is FAIL, else 0. */
int val_overlap_run(struct val_ctx *c, const struct soi_ops *only, struct val_overlap *ov);

#ifdef __cplusplus
}
#endif
#endif
