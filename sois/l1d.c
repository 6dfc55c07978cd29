/* l1d.c - SoI9, L1 data cache: footprint = x % of the L1d, random accesses over it. */
#include "calib.h"
#include "soikit.h"

static int l1d_prepare(struct soi *s, char *why, size_t len)
{
    return kit_cache_prepare(s, CALIB_L1, TOPO_SCOPE_CORE, -1, 8, why, len);
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
