/* l2_cap.c - SoI6', L2 capacity: footprint = x % of the L2 (measured knee, checked against hwloc).
 * Random chases as llc-cap, with a proportional L1-sized sweep so accesses land in the L2. */
#include "calib.h"
#include "ib_err.h"
#include "soi_opts.h"
#include "soikit.h"

static const struct soi_opt l2_cap_opts[] = {
    {SOI_OPT("sweep", SOI_O_BOOL, struct cache_cap_opts, sweep, 0, 1, 1,
     "sweep the L1d in proportion to the chase so accesses reach the L2")},
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
    const struct cache_cap_opts *o = soi_opts(s->env);
    return kit_cache_prepare(s, CALIB_L2, TOPO_SCOPE_L2, o->sweep ? CALIB_L1 : -1, 8, why, len);
}

const struct soi_ops soi_l2_cap = {
    .version = SOI_OPS_VERSION,
    .name = "l2-cap",
    .resource = "L2 capacity",
    .summary = "random accesses over x % of the L2 cache",
    .paper = "SoI6'",
    .scope = TOPO_SCOPE_L2,
    .kind = SOI_FOOTPRINT,
    .opts = l2_cap_opts,
    .opts_size = sizeof(struct cache_cap_opts),
    .supported = l2_cap_supported,
    .prepare = l2_cap_prepare,
    .set_intensity = kit_fp_set_intensity,
    .step = kit_fp_step,
    .measure = kit_fp_measure,
    .teardown = kit_fp_teardown,
};
