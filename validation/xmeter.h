/* xmeter.h - the outside meter of validation (docs/validation.md, "The outside meter"): a counter the kernel keeps,
 * that neither the SoI nor its probe writes, read at every step of the SoI's self-meter ramp, and the verdict on
 * what it read: does intensity x press x % of the SoI's capacity, as the kernel counts it?
 *
 * Which counter reads which SoI is data (vprobe_maps' `meter`, validation/vprobe.c). The verdict is a pure function
 * of the readings (val_xmeter_judge), tested on fakes; the readers are thin adapters over common/kcount.h. */
#ifndef IB_XMETER_H
#define IB_XMETER_H
#include <stddef.h>

#include "kcount.h"
#include "resctrl.h"
#include "verdict.h"
#include "vprobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VAL_XLEVELS 5 /* 0, 25, 50, 75, 100 %, as the self-meter ramp */

/* A counter, opened for one SoI. read() gives a cumulative count (rate meters: bytes so far) or a level (bytes
 * held now), in unit's numerator ("B"); 0 or -errno with why. */
struct val_xmeter {
    enum vprobe_meter kind;
    int rate;                   /* 1: the SoI's figure is the count's growth per second of the step; 0: a level */
    char what[600];             /* "block device vda: sectors written x 512 (/sys/dev/block/254:0/stat)" */
    char unit[16];              /* the SoI's unit it reads in: "B/s" (rate) or "B" (level) */
    int (*read)(struct val_xmeter *xm, double *value, char *why, size_t len); /* NULL: VPM_ONCPU, read from the
                                                                                  * ramp's steps */
    struct kc_blk blk;          /* the adapters': the device, */
    char path[256];             /* ... or the directory, */
    struct resctrl_mon mon;     /* ... or a resctrl monitoring group (closed by val_xmeter_close) */
};

/* Open the counter `kind` for an SoI whose files are in dir (NULL: fs_default_dir()), run by threads the calling
 * thread will create (a resctrl group takes the calling thread: the engine's workers, made by it, inherit the group).
 * 0; -ENOTSUP with why when this machine has no such counter (a file system with no block device, no resctrl
 * monitoring): the check is then UNCHECKED, with why; -errno on another failure. resctrl_root: NULL for
 * /sys/fs/resctrl (a test passes a fixture). Release with val_xmeter_close (safe on a failed open). */
int val_xmeter_open(enum vprobe_meter kind, const char *dir, const char *resctrl_root, struct val_xmeter *xm,
                    char *why, size_t len);
void val_xmeter_close(struct val_xmeter *xm);
/* "block device bytes written", "network bytes sent", ... (what a kind reads, in words) */
const char *val_xmeter_kind_text(enum vprobe_meter kind);

/* What the meter read over a ramp, and its verdict. */
struct val_xcheck {
    int ran;                    /* the meter was read over a completed ramp: the figures below are set */
    char what[600], unit[16];
    int rate;
    double level[VAL_XLEVELS];
    double pct[VAL_XLEVELS];    /* the meter's reading less its 0 % reading, % of the SoI's capacity (NAN: none) */
    double value[VAL_XLEVELS];  /* the meter's reading in unit, mean over the level's readings (0 % too) */
    unsigned readings[VAL_XLEVELS];
    double background;          /* the 0 % reading, in unit: what others did on the counter meanwhile */
    unsigned fit_levels;        /* 4 for a rate SoI (its 100 % is unpaced), else 5 */
    double slope, r2, worst_pts, noise_pts;
    double self_ratio;          /* the meter over the self-meter at the paced levels (1: they agree) */
    unsigned capacity_limited;  /* readings left out: the meter's neighbouring 100 % windows were below x + 5 */
    enum val_verdict measured;  /* the readings' own verdict */
    enum val_verdict verdict;   /* after the busy rule (validate.c; val_xmeter_judge sets it to measured) */
    char reason[640];
};

/* The verdict on n steps of a self-meter ramp (validate.c's order: a rate SoI's levels between 100 % windows, a
 * footprint's climb and descent): xs[i] the requested %, v[i] the meter's figure over step i in unit (a rate:
 * the count's growth over the step's wall time; a level: what it held at the step's end), self[i] the self-meter's
 * achieved % (for the agreement figure; NAN: not known), capacity the SoI's in unit. The rules are the self-meter's
 * (validate.c, val_self_ramp), on the meter's readings: each reading less the 0 % level's mean, as % of the
 * capacity; a paced level must read x within 5 points + the noise (the largest gap between a level's readings),
 * with R^2 >= 0.98 over the paced levels (0-75 % for a rate SoI, 0-100 % for a footprint) unless the readings
 * disagree by more than 5 points; a rate SoI's reading whose two neighbouring 100 % windows read below x + 5 % is
 * left out (the host's capacity was below the target), and a paced level with no reading left is undecidable. The
 * windows are read by the self-meter where self is given (an SoI that presses half of what it says reads 50 % at
 * 100 % by the meter, and would be excused), else by the meter. Returns the readings' verdict (also in out->measured and out->verdict). */
enum val_verdict val_xmeter_judge(int rate, const double *xs, const double *v, const double *self, unsigned n, double capacity,
                     struct val_xcheck *out);

#ifdef __cplusplus
}
#endif
#endif
