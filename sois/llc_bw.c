/* llc_bw.c - SoI7, LLC bandwidth: sequential reads paced to x % of the llc streaming bandwidth measured on the same CPUs
 * with the same kernel and working set (calib.c).  Self-meter: bytes read per second. */
#include "soikit.h"

static int llc_bw_prepare(struct soi *s, char *why, size_t len) { return kit_stream_open(s, "llc", why, len); }

const struct soi_ops soi_llc_bw = {
    .version = SOI_OPS_VERSION,
    .name = "llc-bw",
    .resource = "LLC bandwidth",
    .summary = "streams an LLC-resident buffer at x % of the measured LLC bandwidth",
    .paper = "SoI7",
    .scope = TOPO_SCOPE_LLC,
    .kind = SOI_RATE,
    .prepare = llc_bw_prepare,
    .step = kit_stream_step,
    .teardown = kit_stream_teardown,
};
