/* soi_list.h - every SoI, one line each, in the order `ibench list` shows them.
 * Adding an SoI: write sois/<name>.c ending in `const struct soi_ops soi_<ident> = {...}` and add SOI(<ident>). */
SOI(mem_cap)
SOI(mem_bw)
SOI(llc_cap)
SOI(llc_bw)
SOI(l2_cap)
SOI(l2_bw)
SOI(l1d)
SOI(tlb)
