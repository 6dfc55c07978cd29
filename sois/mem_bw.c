/* mem_bw.c - SoI2, DRAM bandwidth: STREAM-triad streaming (two read streams, one write stream) over a buffer of at
 * least 4x the LLC, paced to x % of the triad bandwidth measured at the start of the run on the same CPUs with the
 * same kernel and working set (calib.c).  Self-meter: bytes per second, counted as STREAM counts them. */
#include "soikit.h"

static int mem_bw_prepare(struct soi *s, char *why, size_t len) { return kit_stream_open(s, "dram", why, len); }

const struct soi_ops soi_mem_bw = {
    .version = SOI_OPS_VERSION,
    .name = "mem-bw",
    .resource = "DRAM bandwidth",
    .summary = "streams a buffer >= 4x the LLC at x % of the measured DRAM bandwidth",
    .paper = "SoI2",
    .scope = TOPO_SCOPE_NUMA,
    .kind = SOI_RATE,
    .prepare = mem_bw_prepare,
    .step = kit_stream_step,
    .teardown = kit_stream_teardown,
};
