/* soi_opts.h - each SoI's option struct: the fields its option table (in the SoI's own file) names by offset.
 * The SoI reads it with soi_opts(s->env); the structs live here so that tests can read back what a name set.
 * Field types follow enum soi_otype: SIZE uint64_t, UINT unsigned, DOUBLE double, BOOL and CHOICE int. */
#ifndef IB_SOI_OPTS_H
#define IB_SOI_OPTS_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dbw_opts { /* disk-bw */
    int rw;             /* CHOICE read|write|mix: 0, 1, 2 */
    uint64_t bs;        /* bytes per request */
    unsigned qd;        /* requests in flight per thread */
    uint64_t file_size; /* bytes per thread's file */
};

struct dcap_opts { /* disk-cap */
    uint64_t max_bytes; /* allotment at 100 % (0: automatic) */
    double access_rate; /* random reads per second, all threads (0: unlimited) */
};

struct cache_cap_opts { /* l2-cap (sweep only), llc-cap */
    int sweep;       /* BOOL: sweep the level below so the chase's accesses reach this one */
    unsigned chains; /* llc-cap: independent chases */
};

struct mem_cap_opts { /* mem-cap */
    uint64_t max_bytes; /* footprint at 100 % (0: all the machine can spare) */
    double touch_rate;  /* random line touches per second (0: unlimited) */
};

struct nbw_opts { /* net-bw */
    uint64_t max_request; /* request size at 100 % */
};

struct simd_opts { /* simd */
    int isa; /* CHOICE auto|sse|avx2|avx512: 0 .. 3 */
};

#ifdef __cplusplus
}
#endif
#endif
