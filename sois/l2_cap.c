/* l2_cap.c - SoI6', L2 capacity: footprint = x % of the L2 (measured knee, checked against hwloc).
 * Random chases as llc-cap, with an L1-sized sweep so accesses land in the L2. */
#include <stdio.h>

#include "calib.h"
#include "ib_err.h"
#include "parse.h"
#include "soikit.h"

static const struct soi_param l2_cap_params[] = {
    {"sweep", SOI_P_BOOL, 0, 1, 1, "stream an L1-sized buffer after each quantum so accesses reach the L2"},
    {0},
};

static int l2_cap_supported(const struct soi_env *env, char *why, size_t len)
{
    if (topo_llc_level(env->topo) < 2)
        return ib_why(why, len, -ENOTSUP, "this machine has no L2 cache");
    return 0;
}

static int l2_cap_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    int rc = calib_need_caches(env->calib, env->topo, env->cpus[0], env->stop, why, len);
    if (rc < 0)
        return rc;
    uint64_t eff = calib_effective(env->calib, CALIB_L2);
    uint64_t sweep = env->param[0] ? calib_effective(env->calib, CALIB_L1) : 0;
    rc = kit_fp_prepare(s, TOPO_SCOPE_L2, (double)(eff / 64), 64, "B", 64, 0, 8, 1, sweep, why, len);
    if (rc < 0)
        return rc;
    char a[32], b[32];
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s L2 %s (hwloc claims %s)",
             env->calib->measured[CALIB_L2] ? "measured" : "claimed", fmt_bytes((double)eff, a, sizeof(a)),
             fmt_bytes((double)env->calib->claimed[CALIB_L2], b, sizeof(b)));
    return 0;
}

const struct soi_ops soi_l2_cap = {
    .version = SOI_OPS_VERSION,
    .name = "l2-cap",
    .resource = "L2 capacity",
    .summary = "random accesses over x % of the L2 cache",
    .paper = "SoI6'",
    .scope = TOPO_SCOPE_L2,
    .kind = SOI_FOOTPRINT,
    .params = l2_cap_params,
    .supported = l2_cap_supported,
    .prepare = l2_cap_prepare,
    .set_intensity = kit_fp_set_intensity,
    .step = kit_fp_step,
    .measure = kit_fp_measure,
    .teardown = kit_fp_teardown,
};
