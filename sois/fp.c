/* fp.c - SoI12, scalar floating-point issue: 12 independent chains of scalar double addsd/mulsd (ib_fp_kernel in
 * core_kernels.S, no packed instructions) in ~20 us quanta, on its CPU x % of the time (the duty pacer), so the issue
 * rate is x % of the peak measured on the same CPUs, less the pacer's wake-ups.  Self-meter: instructions issued per
 * second, counted by the kernel loop. */
#include "peak.h"

uint64_t ib_fp_kernel(uint64_t iters);

static int fp_prepare(struct soi *s, char *why, size_t len)
{
    return core_soi_open(s, "fp", ib_fp_kernel, "scalar double addsd/mulsd, 12 chains", why, len);
}

const struct soi_ops soi_fp = {
    .version = SOI_OPS_VERSION,
    .name = "fp",
    .resource = "scalar floating-point issue",
    .summary = "independent scalar double add/mul chains at x % of the measured peak issue rate",
    .paper = "SoI12",
    .scope = TOPO_SCOPE_CORE,
    .kind = SOI_DUTY,
    .prepare = fp_prepare,
    .step = core_soi_step,
    .measure = core_soi_measure,
    .teardown = core_soi_teardown,
};
