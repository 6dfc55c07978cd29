/* pl_wmodel.h - one model that predicts and decides (docs/placement.md, "One model that predicts and decides"):
 * application A's relative performance beside co-runners, window by window of what the co-runners press over time,
 * with a pessimistic and an optimistic bound, and the decision it makes at A's QoS line.  Pure functions on
 * profiles (pl_wmodel.c states every rule and its reason).
 *
 * Per SoI s that A measured: A's sustained curve y(x) (pl_sim_curve), the pressure the co-runners put on s in each
 * window (their kernel-counted usage as % of A's capacity of s, else their caused figure in every window), the
 * length of the burst each window belongs to, and the share k(L) of the sustained harm a burst of length L does
 * (A's bursts on s).  A's relative in window w on s is 1 - k(L_w) (1 - y(x_w)); across resources the product (or
 * the worst one); A's prediction the mean over windows. */
#ifndef IB_PL_WMODEL_H
#define IB_PL_WMODEL_H

#include <stdbool.h>

#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the resources of one window combine: the product of their relatives (default) or the worst one. */
enum pl_wm_combine { PL_WM_PRODUCT = 0, PL_WM_MIN };
/* The three readings: the figures as measured; pessimistic (curves 2 se lower, caused 2 se higher, bursts 2 se
 * harsher); optimistic (the reverse). */
enum pl_wm_reading { PL_WM_CENTRAL = 0, PL_WM_PESSIMISTIC, PL_WM_OPTIMISTIC };
/* A decision at the QoS line, in pl_coloc_verdict's order: kept (the pessimistic bound meets it), uncertain (the
 * bounds straddle it), refused (even the optimistic bound is under it). */
enum pl_wm_decision { PL_WM_KEPT = 0, PL_WM_UNCERTAIN, PL_WM_REFUSED };

struct pl_wm_pred {
    double rel, lo, hi;   /* relative performance: central, pessimistic, optimistic reading; lo <= rel <= hi */
    unsigned nwindows;    /* windows of the timeline (1 when no co-runner has usage windows) */
    double window_s;      /* their length; NAN without windows */
    char deciding[64];    /* the resource whose reading alone is lowest (SoI name); "" when nothing is pressed */
    char why[400];        /* one line: "disk-write: 0.09 [0.07, 0.12] beside fio's write 2.7 GB/s (100 % of
                           * capacity), active 100 % of 30 windows, sustained" */
};

/* A's prediction beside others[0..n-1] (n may be 0: 1.0).  only_soi non-NULL: that resource alone (1.0 when A did
 * not measure it).  0, or -ENOMEM (out->rel etc. NAN). */
int pl_wm_predict(const struct profile *a, const struct profile *const *others, unsigned n, enum pl_wm_combine c,
                  const char *only_soi, struct pl_wm_pred *out);
/* true when the model does not read A's curve on s: its points' solo baselines strayed beyond
 * PROFILE_SOLO_STRAY_MAX outside A's baseline (the machine or A changed under the curve; pl_wmodel.c). */
bool pl_wm_curve_stray(const struct profile *a, const struct profile_soi *s);
/* A's QoS line: its profile's qos (the relative performance that still meets QoS), 0.9 where absent (as the
 * simulator's fleet reads it). */
double pl_wm_qos(const struct profile *p);
enum pl_wm_decision pl_wm_decide(const struct pl_wm_pred *p, double qos);
const char *pl_wm_decision_name(enum pl_wm_decision d); /* "kept", "uncertain", "refused" */

/* A group: every member against all the others.  preds[n] out (texts false: their deciding and why left empty).  Refused if any member is, kept if all are, else
 * uncertain; fit the smallest member prediction (central), worst its member.  0 or -ENOMEM. */
struct pl_wm_group {
    enum pl_wm_decision decision;
    double fit;
    unsigned worst;
};
int pl_wm_group_check(const struct profile *const *apps, unsigned n, enum pl_wm_combine c, bool texts,
                      struct pl_wm_pred *preds, struct pl_wm_group *g);

/* k(L): the share of A's sustained harm on s that a burst of L seconds does (INFINITY: sustained, 1), by reading
 * (pessimistic: the larger share).  In [0, 1]; 1 when s has no usable burst. */
double pl_wm_burst_share(const struct profile_soi *s, double L, enum pl_wm_reading rd);
/* A's curve on s at x % by reading: pl_sim_curve's, each point's relative moved by -2 se (pessimistic) or +2 se
 * (optimistic), NAN se 0, capped to [0, 1]. */
double pl_wm_curve(const struct profile_soi *s, double x, enum pl_wm_reading rd);

#ifdef __cplusplus
}
#endif
#endif
