/* pl_coloc.h - co-location on interference profiles (the iBench paper §V.A): may these applications share a machine, and
 * which of several safe machines fits best.  Safety is a hard per-resource constraint in both directions; the fit
 * only ranks the safe choices (pl_coloc.c documents every rule and its reason; docs/placement.md).
 *
 * A resource is an SoI by name.  For application a and resource r: tolerated_r(a) is the highest intensity (% of the
 * SoI's capacity) a keeps its QoS beside; caused_r(a) the pressure a puts on r (% of the SoI's capacity).
 */
#ifndef IB_PL_COLOC_H
#define IB_PL_COLOC_H
#include <stdbool.h>
#include <stddef.h>

#include "pl_wmodel.h"
#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_COLOC_MAX_APPS 64

/* A group's verdict.  Uncertain (only with `established`): the model's bounds straddle a member's QoS line (decide
 * model), or a cell the reading calls unsafe but whose break is not established beyond the profiles' uncertainty
 * (decide headroom); the group is not refused and ranks after every safe one. */
enum pl_coloc_verdict { PL_COLOC_SAFE = 0, PL_COLOC_UNCERTAIN, PL_COLOC_UNSAFE };
const char *pl_coloc_verdict_name(enum pl_coloc_verdict v);

/* What decides: the model (pl_wmodel.h: each member's predicted relative performance beside the others, with its
 * bounds, against its QoS line; the default since 1.7), or the headroom rule (tolerated - margin - others' caused
 * per resource, the rule before 1.7, kept for comparison: --decide headroom). */
enum pl_coloc_decide { PL_DECIDE_MODEL = 0, PL_DECIDE_HEADROOM };
const char *pl_coloc_decide_name(enum pl_coloc_decide d); /* "model", "headroom" */

struct pl_coloc_opts {
    double margin;    /* points kept free under every tolerated figure (default PL_COLOC_MARGIN) */
    bool pessimistic; /* unknowns (skipped SoI, NAN or indistinguishable caused, a resource missing from a profile)
                       * count against safety; false: in its favour */
    bool terse;       /* a scheduler's inner loop: no `deciding` text, no warnings, no prediction's why; under the
                       * headroom rule an unsafe group returns at its first deciding cell (the cells after it are not
                       * filled), under the model no cell is filled */
    bool established; /* refuse only a break established beyond the profiles' uncertainty (the front ends'
                       * default, --refuse established): the others' caused counted at its lower bound (value - 2 se,
                       * distinguishable figures only, unknowns 0) against the tolerated bracket's high end (the
                       * lowest intensity that broke QoS beyond its noise, unknown: 100), less the margin.  A cell
                       * unsafe by the reading above but not established is uncertain.  false (--refuse uncertain):
                       * every cell the reading calls unsafe refuses, as before 1.4.  Decide model: refuse a
                       * member whose optimistic bound is under its QoS line (true), or whose pessimistic bound is
                       * (false: uncertain refused too) */
    enum pl_coloc_decide decide; /* PL_DECIDE_MODEL (0) unless asked: the cells are then explanation only */
    enum pl_wm_combine combine;  /* decide model: how a window's resources combine (product, 0) */
    bool likely;      /* decide model, with established: an uncertain member whose point prediction is under its
                       * QoS line and whose optimistic bound is under 1 (a harm told from none) is refused too
                       * (--refuse likely, the front ends' default since 1.8: the uncertain case decided by the
                       * prediction itself; docs/placement.md, "The uncertain case") */
};
#define PL_COLOC_MARGIN 5.0

/* A member's decision under the model as o makes it: pl_wm_decide's, an uncertain one refused without established,
 * or with likely when its point prediction is under qos and its optimistic bound under 1. */
enum pl_wm_decision pl_coloc_member_decision(const struct pl_wm_pred *p, double qos, const struct pl_coloc_opts *o);

/* What one application sees on one resource in a group. */
struct pl_coloc_cell {
    double tolerated;  /* as counted (after the unknown rule) */
    double others;     /* what the other members cause together, as counted (capped at 100) */
    double headroom;   /* tolerated - margin - others; < 0: unsafe */
    bool unknown_tol;  /* tolerated was not measured: the unknown rule gave it */
    bool unknown_oth;  /* some other member's caused was not known: the unknown rule gave it */
    bool judged;       /* false: no evidence on either side (tolerance unknown, no other's caused known): not
                        * judged, counted safe (100 / 0 / 100), left out of the fit */
    bool uncertain;    /* established only: headroom < 0, but the break is not established (not refused) */
    double others_lo;  /* established only: what the others cause together at least (their lower bounds, capped) */
    double tol_hi;     /* established only: the tolerated bracket's high end as counted */
};

struct pl_coloc_result {
    unsigned napps, nres;
    char **res;                   /* nres resource (SoI) names, sorted */
    struct pl_coloc_cell *cell;   /* napps x nres, row-major by application */
    bool safe;                    /* not refused: verdict SAFE or UNCERTAIN */
    enum pl_coloc_verdict verdict;
    char *deciding;               /* unsafe: "mem-bw (B breaks A: 40.0 caused > 25.0 tolerated - 5 margin), ..."
                                   * (co-runners that press it joined by '+'; established: each one's figure and
                                   * se); safe: NULL */
    char *uncertain;              /* uncertain: the cells that made it so, with their figures; else NULL */
    double fit;                   /* groups not refused: larger is better (monotone: less pressure never fits worse).
                                   * Decide model: the smallest member prediction (0-1).  Headroom: the summed
                                   * headroom (points); an uncertain group's is computed on the same reading, so its
                                   * negative headroom counts against it */
    enum pl_coloc_decide decide;  /* what decided */
    struct pl_wm_pred *pred;      /* decide model: napps predictions, member a beside all the others; else NULL */
    char **warnings;              /* e.g. profiles taken on machines of another shape */
    unsigned nwarnings;
};

/* Checks a group of n >= 2 applications (a pair is n == 2).  Decide model: verdict, safe, deciding, uncertain and
 * fit are the model's (pl_wm_group_check; deciding and uncertain name each member refused or uncertain with its
 * prediction, bounds, QoS line and why); the cells are filled as the headroom rule reads them, as explanation.  0 with *r filled (pl_coloc_result_free), or -EINVAL
 * with one line (n < 2, a profile with no measured SoI, a margin outside 0-100). */
int pl_coloc_check(const struct profile *const *apps, unsigned n, const struct pl_coloc_opts *o,
                   struct pl_coloc_result *r, char *why, size_t len);
void pl_coloc_result_free(struct pl_coloc_result *r);

/* The SoI called name in p, or NULL. */
const struct profile_soi *pl_coloc_soi(const struct profile *p, const char *name);
/* What an application causes on an SoI as the check counts it: max(0, caused) when distinguishable from 0; within
 * 2 se of 0, 0 (optimistic) or value + 2 se (pessimistic); unknown (not measured, no figure: *known false), 0 or
 * 100.  s may be NULL. */
double pl_coloc_caused(const struct profile_soi *s, bool pessimistic, bool *known);
/* What an application causes on an SoI at least, beyond its uncertainty: max(0, value - 2 se) for a figure
 * distinguishable from 0 (an older file's figure without se: its value), else 0 (unknown, or within 2 se of 0). */
double pl_coloc_caused_lo(const struct profile_soi *s);
/* Two groups' order for a choice among them: safe before uncertain, then the larger fit. */
bool pl_coloc_better(enum pl_coloc_verdict va, double fita, enum pl_coloc_verdict vb, double fitb);

#ifdef __cplusplus
}
#endif
#endif
