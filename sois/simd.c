/* simd.c - SoI15, vector (SIMD) issue: packed double FMA or add/mul on the widest registers this CPU and OS support
 * (AVX-512F zmm, else AVX2+FMA ymm, else SSE2 xmm; kernels in core_kernels.S, all always built), 12 independent
 * chains in ~20 us quanta, on its CPU x % of the time (the duty pacer), so the issue rate is x % of the peak measured on
 * the same CPUs with the same ISA, less the pacer's wake-ups.  Parameter isa forces a narrower one (0 auto, 1 sse,
 * 2 avx2, 3 avx512); forcing one that is absent is refused.  Self-meter: instructions issued per second, counted by
 * the kernel loop. */
#include <errno.h>

#include "cpuinfo.h"
#include "ib_err.h"
#include "peak.h"
#include "soi_opts.h"

uint64_t ib_simd_avx512_kernel(uint64_t iters);
uint64_t ib_simd_avx2_kernel(uint64_t iters);
uint64_t ib_simd_sse_kernel(uint64_t iters);

enum { ISA_AUTO = 0, ISA_SSE, ISA_AVX2, ISA_AVX512 }; /* the order of isa_names */
static const char *const isa_names[] = {"auto", "sse", "avx2", "avx512", NULL};

static const struct {
    const char *name, *kind, *what;
    peak_kernel_fn k;
} isas[] = {
    [ISA_SSE] = {"sse", "simd-sse", "sse addpd/mulpd xmm, 12 chains", ib_simd_sse_kernel},
    [ISA_AVX2] = {"avx2", "simd-avx2", "avx2 vfmadd231pd ymm, 12 chains", ib_simd_avx2_kernel},
    [ISA_AVX512] = {"avx512", "simd-avx512", "avx512 vfmadd231pd zmm, 12 chains", ib_simd_avx512_kernel},
};

static const struct soi_opt simd_opts[] = {
    {SOI_OPT("isa", SOI_O_CHOICE, struct simd_opts, isa, 0, 0, ISA_AUTO,
     "vector ISA: auto (the widest present), sse, avx2 (+fma) or avx512"), .choices = isa_names},
    {0},
};

/* cpuinfo checks XGETBV, so these mean "the CPU has it and the OS saves its registers". */
static int isa_present(const struct cpu_info *c, int isa)
{
    switch (isa) {
    case ISA_AVX512: return c->avx512f;
    case ISA_AVX2: return c->avx2 && c->fma;
    case ISA_SSE: return c->sse2;
    default: return 0;
    }
}

static int simd_pick(const struct soi_env *env, char *why, size_t len)
{
    const struct simd_opts *o = soi_opts(env);
    int want = o->isa;
    if (want != ISA_AUTO) {
        if (!isa_present(env->cpu, want))
            return ib_why(why, len, -ENOTSUP, "simd: isa=%s is not supported by this CPU/OS", isas[want].name);
        return want;
    }
    for (int i = ISA_AVX512; i >= ISA_SSE; i--)
        if (isa_present(env->cpu, i))
            return i;
    return ib_why(why, len, -ENOTSUP, "simd: not even SSE2 on this CPU");
}

static int simd_supported(const struct soi_env *env, char *why, size_t len)
{
    int rc = simd_pick(env, why, len);
    return rc < 0 ? rc : 0;
}

static int simd_prepare(struct soi *s, char *why, size_t len)
{
    int isa = simd_pick(s->env, why, len);
    if (isa < 0)
        return isa;
    return core_soi_open(s, isas[isa].kind, isas[isa].k, isas[isa].what, why, len);
}

const struct soi_ops soi_simd = {
    .version = SOI_OPS_VERSION,
    .name = "simd",
    .resource = "vector (SIMD) issue",
    .summary = "independent packed-double FMA chains on the widest vector ISA at x % of its measured peak rate",
    .paper = "SoI15",
    .scope = TOPO_SCOPE_CORE,
    .kind = SOI_DUTY,
    .opts = simd_opts,
    .opts_size = sizeof(struct simd_opts),
    .supported = simd_supported,
    .prepare = simd_prepare,
    .step = core_soi_step,
    .measure = core_soi_measure,
    .teardown = core_soi_teardown,
};
