/* tlb.c - SoI10, data TLB: distinct 4 KiB pages touched = x % of the L1 + L2 data-TLB reach.
 * One line per page, at an offset that rotates through the page so the lines spread over the cache sets; pages
 * are kept small (no transparent huge pages), so every page costs a TLB entry. */
#include <stdio.h>

#include "cpuinfo.h"
#include "ib_err.h"
#include "soikit.h"

#define PAGE 4096

static int tlb_prepare(struct soi *s, char *why, size_t len)
{
    const struct tlb_info *tlb = &s->env->cpu->tlb;
    double entries = (double)tlb->l1d_entries + (double)tlb->l2_entries;
    int rc = kit_fp_prepare(s, TOPO_SCOPE_CORE, entries, 1, "pages", PAGE, 64 * 37, 8, 0, 0, why, len);
    if (rc < 0)
        return rc;
    snprintf(s->capacity_src, sizeof(s->capacity_src), "L1 dTLB %u + L2 TLB %u entries (%s)", tlb->l1d_entries,
             tlb->l2_entries, tlb->source);
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "pages/s");
    return 0;
}

const struct soi_ops soi_tlb = {
    .version = SOI_OPS_VERSION,
    .name = "tlb",
    .resource = "data TLB",
    .summary = "page-strided random accesses over x % of the data-TLB reach",
    .paper = "SoI10",
    .scope = TOPO_SCOPE_CORE,
    .kind = SOI_FOOTPRINT,
    .prepare = tlb_prepare,
    .set_intensity = kit_fp_set_intensity,
    .step = kit_fp_step,
    .measure = kit_fp_measure,
    .teardown = kit_fp_teardown,
};
