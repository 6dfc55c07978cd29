/* l2_bw.c - SoI7', L2 bandwidth: sequential reads paced to x % of the l2 streaming bandwidth measured on the same CPUs
 * with the same kernel and working set (calib.c).  Self-meter: bytes read per second. */
#include "soikit.h"

static int l2_bw_prepare(struct soi *s, char *why, size_t len) { return kit_stream_open(s, "l2", why, len); }

const struct soi_ops soi_l2_bw = {
    .version = SOI_OPS_VERSION,
    .name = "l2-bw",
    .resource = "L2 bandwidth",
    .summary = "streams an L2-resident buffer at x % of the measured L2 bandwidth",
    .paper = "SoI7'",
    .scope = TOPO_SCOPE_L2,
    .kind = SOI_RATE,
    .prepare = l2_bw_prepare,
    .step = kit_stream_step,
    .teardown = kit_stream_teardown,
};
