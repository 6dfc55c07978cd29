/* l1d.c - SoI9, L1 data cache: footprint = x % of the L1d, random accesses over it. */
#include <stdio.h>

#include "calib.h"
#include "ib_err.h"
#include "parse.h"
#include "soikit.h"

static int l1d_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    int rc = calib_need_caches(env->calib, env->topo, env->cpus[0], env->stop, why, len);
    if (rc < 0)
        return rc;
    uint64_t eff = calib_effective(env->calib, CALIB_L1);
    if (!eff)
        return ib_why(why, len, -ENOTSUP, "no L1 data cache size from hwloc or measurement");
    rc = kit_fp_prepare(s, TOPO_SCOPE_CORE, (double)(eff / 64), 64, "B", 64, 0, 8, 1, 0, why, len);
    if (rc < 0)
        return rc;
    char a[32], b[32];
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s L1d %s (hwloc claims %s)",
             env->calib->measured[CALIB_L1] ? "measured" : "claimed", fmt_bytes((double)eff, a, sizeof(a)),
             fmt_bytes((double)env->calib->claimed[CALIB_L1], b, sizeof(b)));
    return 0;
}

const struct soi_ops soi_l1d = {
    .version = SOI_OPS_VERSION,
    .name = "l1d",
    .resource = "L1 data cache",
    .summary = "random accesses over x % of the L1 data cache",
    .paper = "SoI9",
    .scope = TOPO_SCOPE_CORE,
    .kind = SOI_FOOTPRINT,
    .prepare = l1d_prepare,
    .set_intensity = kit_fp_set_intensity,
    .step = kit_fp_step,
    .measure = kit_fp_measure,
    .teardown = kit_fp_teardown,
};
