/* llc_cap.c - SoI6, LLC capacity: footprint = x % of the *effective* LLC (latency knee, not only cpuid).
 *
 * Eight independent random pointer chases (memory-level parallelism) over a uniformly random cycle of lines, so
 * accesses spread evenly over the cache sets.  Between quanta it streams an L2-sized buffer in proportion (one L2
 * per footprint's worth of accesses), so each chase line is out of the private L2 before it is reused and the
 * accesses land in the LLC even when the footprint is small: a once-per-quantum sweep left small footprints in L2
 * (docs/sois.md has the latencies measured).
 * Self-meters: distinct lines touched in the step (bytes), the access rate, and ns per dependent load.
 */
#include "calib.h"
#include "soi_opts.h"
#include "soikit.h"

static const struct soi_opt llc_cap_opts[] = {
    {SOI_OPT("sweep", SOI_O_BOOL, struct cache_cap_opts, sweep, 0, 1, 1,
     "sweep the L2 in proportion to the chase so accesses reach the LLC")},
    {SOI_OPT("chains", SOI_O_UINT, struct cache_cap_opts, chains, 1, 16, 8,
     "independent chases in flight (memory-level parallelism)")},
    {0},
};

static int llc_cap_prepare(struct soi *s, char *why, size_t len)
{
    const struct cache_cap_opts *o = soi_opts(s->env);
    return kit_cache_prepare(s, CALIB_LLC, TOPO_SCOPE_LLC, o->sweep ? CALIB_L2 : -1, o->chains, why, len);
}

const struct soi_ops soi_llc_cap = {
    .version = SOI_OPS_VERSION,
    .name = "llc-cap",
    .resource = "LLC capacity",
    .summary = "random accesses over x % of the effective last-level cache",
    .paper = "SoI6",
    .scope = TOPO_SCOPE_LLC,
    .kind = SOI_FOOTPRINT,
    .opts = llc_cap_opts,
    .opts_size = sizeof(struct cache_cap_opts),
    .prepare = llc_cap_prepare,
    .set_intensity = kit_fp_set_intensity,
    .step = kit_fp_step,
    .measure = kit_fp_measure,
    .teardown = kit_fp_teardown,
};
