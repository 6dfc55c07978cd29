/* int.c - SoI11, integer ALU issue: 8 independent chains of add/xor on general-purpose registers
 * (ib_int_kernel in core_kernels.S) in ~20 us quanta, on its CPU x % of the time (the duty pacer), so the issue rate
 * is x % of the peak measured on the same CPUs, less the pacer's wake-ups.  Self-meter: instructions issued per
 * second, counted by the kernel loop. */
#include "peak.h"

uint64_t ib_int_kernel(uint64_t iters);

static int int_prepare(struct soi *s, char *why, size_t len)
{
    return core_soi_open(s, "int", ib_int_kernel, "integer add/xor, 8 chains", why, len);
}

const struct soi_ops soi_int = {
    .version = SOI_OPS_VERSION,
    .name = "int",
    .resource = "integer ALU issue",
    .summary = "independent integer add/xor chains at x % of the measured peak issue rate",
    .paper = "SoI11",
    .scope = TOPO_SCOPE_CORE,
    .kind = SOI_DUTY,
    .prepare = int_prepare,
    .step = core_soi_step,
    .measure = core_soi_measure,
    .teardown = core_soi_teardown,
};
