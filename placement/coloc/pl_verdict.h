/* pl_verdict.h - the co-location verdict: whether a machine takes one more application, and why.  The rule
 * `place colocate` prints and the scheduler extender filters and ranks by (one rule, two front ends); the machines
 * and applications are a pl_sim_fleet's, however they were read. */
#ifndef IB_PL_VERDICT_H
#define IB_PL_VERDICT_H
#include <stdbool.h>

#include "pl_coloc.h"
#include "pl_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* uncertain: shared, not refused (pl_coloc_opts.established), ranked after every safe and empty machine */
enum pl_verdict_kind { PL_V_NO_ROOM, PL_V_FITS, PL_V_SAFE, PL_V_UNSAFE, PL_V_UNCERTAIN };
struct pl_verdict {
    enum pl_verdict_kind kind;
    char why[512];
    double fit; /* safe or uncertain: pl_coloc_result.fit; else NAN */
};
/* Whether machine mi of f takes application a, and why.  In order: no room (CPU, memory or the group limit); fits
 * (the policy is not interference, or the machine has no tenant); else pl_coloc_check of its tenants plus a with o:
 * safe (fit set), uncertain (o->established and no break established) or unsafe (the deciding resources; also a
 * group that cannot be judged). */
void pl_verdict_of(const struct pl_sim_fleet *f, unsigned mi, unsigned a, bool interference,
                   const struct pl_coloc_opts *o, struct pl_verdict *v);
const char *pl_verdict_name(enum pl_verdict_kind k);

#ifdef __cplusplus
}
#endif
#endif
