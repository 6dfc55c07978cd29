/* llc_cap.c - SoI6, LLC capacity: footprint = x % of the *effective* LLC (latency knee, not only cpuid).
 *
 * Eight independent random pointer chases (memory-level parallelism) over a uniformly random cycle of lines, so
 * accesses spread evenly over the cache sets.  After each quantum an L2-sized buffer is streamed, which pushes the
 * chase's lines out of the private L2 so its accesses land in the LLC even when the footprint is small.
 * Self-meter: distinct lines touched in the step (bytes) and the access rate.
 */
#include <stdio.h>

#include "calib.h"
#include "ib_err.h"
#include "parse.h"
#include "soikit.h"

static const struct soi_param llc_cap_params[] = {
    {"sweep", SOI_P_BOOL, 0, 1, 1, "stream an L2-sized buffer after each quantum so accesses reach the LLC"},
    {"chains", SOI_P_UINT, 1, 16, 8, "independent chases in flight (memory-level parallelism)"},
    {0},
};

static int llc_cap_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    int rc = calib_need_caches(env->calib, env->topo, env->cpus[0], env->stop, why, len);
    if (rc < 0)
        return rc;
    uint64_t eff = calib_effective(env->calib, CALIB_LLC);
    uint64_t sweep = env->param[0] ? calib_effective(env->calib, CALIB_L2) : 0;
    rc = kit_fp_prepare(s, TOPO_SCOPE_LLC, (double)(eff / 64), 64, "B", 64, 0, (unsigned)env->param[1], 1, sweep,
                        why, len);
    if (rc < 0)
        return rc;
    char a[32], b[32];
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s LLC %s%s (hwloc claims %s)",
             env->calib->measured[CALIB_LLC] ? "measured" : "claimed", fmt_bytes((double)eff, a, sizeof(a)),
             env->calib->measured[CALIB_LLC] ? " at the latency knee" : ", no knee found",
             fmt_bytes((double)env->calib->claimed[CALIB_LLC], b, sizeof(b)));
    return 0;
}

const struct soi_ops soi_llc_cap = {
    .version = SOI_OPS_VERSION,
    .name = "llc-cap",
    .resource = "LLC capacity",
    .summary = "random accesses over x % of the effective last-level cache",
    .paper = "SoI6",
    .scope = TOPO_SCOPE_LLC,
    .kind = SOI_FOOTPRINT,
    .params = llc_cap_params,
    .prepare = llc_cap_prepare,
    .set_intensity = kit_fp_set_intensity,
    .step = kit_fp_step,
    .measure = kit_fp_measure,
    .teardown = kit_fp_teardown,
};
