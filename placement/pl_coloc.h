/* pl_coloc.h - co-location on interference profiles (seed 004 §V.A): may these applications share a machine, and
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

#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_COLOC_MAX_APPS 64

struct pl_coloc_opts {
    double margin;    /* points kept free under every tolerated figure (default PL_COLOC_MARGIN) */
    bool pessimistic; /* unknowns (skipped SoI, NAN or indistinguishable caused, a resource missing from a profile)
                       * count against safety; false: in its favour */
    bool terse;       /* a scheduler's inner loop: no `deciding` text, no warnings; an unsafe group returns at its
                       * first deciding cell (the cells after it are not filled) */
};
#define PL_COLOC_MARGIN 5.0

/* What one application sees on one resource in a group. */
struct pl_coloc_cell {
    double tolerated;  /* as counted (after the unknown rule) */
    double others;     /* what the other members cause together, as counted (capped at 100) */
    double headroom;   /* tolerated - margin - others; < 0: unsafe */
    bool unknown_tol;  /* tolerated was not measured: the unknown rule gave it */
    bool unknown_oth;  /* some other member's caused was not known: the unknown rule gave it */
    bool judged;       /* false: no evidence on either side (tolerance unknown, no other's caused known): not
                        * judged, counted safe (100 / 0 / 100), left out of the fit */
};

struct pl_coloc_result {
    unsigned napps, nres;
    char **res;                   /* nres resource (SoI) names, sorted */
    struct pl_coloc_cell *cell;   /* napps x nres, row-major by application */
    bool safe;
    char *deciding;               /* unsafe: "mem-bw (B breaks A: 40.0 caused > 25.0 tolerated - 5 margin), ..."
                                   * (co-runners that press it joined by '+'); safe: NULL */
    double fit;                   /* safe groups only: larger is better (monotone: less pressure never fits worse) */
    char **warnings;              /* e.g. profiles taken on machines of another shape */
    unsigned nwarnings;
};

/* Checks a group of n >= 2 applications (a pair is n == 2).  0 with *r filled (pl_coloc_result_free), or -EINVAL
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

#ifdef __cplusplus
}
#endif
#endif
