/* pl_map.h - the characteristics heuristic (Tang et al. ISCA'11 §5.1, Algorithm 1): for a latency-sensitive application P beside
 * a co-runner C, share or spread P's threads over the last-level cache and over the memory path, from three
 * characteristics of each; then the two applications' CPU sets on a given machine (pl_map.c states the rules;
 * docs/placement.md, "The characteristics heuristic"). */
#ifndef IB_PL_MAP_H
#define IB_PL_MAP_H
#include <stdbool.h>
#include <stddef.h>

#include "pl_machine.h"
#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults of the "high" thresholds (options of place map). */
#define PL_MAP_SHARING_HIGH 0.30   /* data_sharing at or above: high */
#define PL_MAP_FOOTPRINT_HIGH 50.0 /* llc_footprint at or above (% of one LLC): high */

/* An application's characteristics.  NAN: unknown. */
struct pl_map_chars {
    char name[64];
    unsigned threads;     /* 0: not given */
    double bus_usage;     /* memory bandwidth the whole application draws, % of the machine's sustained bandwidth
                           * (may exceed 100: demand) */
    double llc_footprint; /* its footprint in the last-level cache, % of one LLC instance */
    double data_sharing;  /* share of its LLC references to lines its threads share, 0-1 */
    char src[3][96];      /* where bus_usage, llc_footprint and data_sharing came from */
};

/* A characteristics file: JSON {"name", "threads"?, "bus_usage", "llc_footprint", "data_sharing"?} (numbers in
 * the units above; "data_sharing" may be null or absent: unknown).  -EINVAL with one line otherwise. */
int pl_map_chars_parse(const char *text, const char *file, struct pl_map_chars *c, char *why, size_t len);
/* From a profile: bus_usage = caused mem-bw, llc_footprint = caused llc-cap (as measured, % of the SoI's capacity),
 * data_sharing = the profile's characteristics.data_sharing (1.3, written by place cluster) or unknown.  -EINVAL when
 * the profile measured neither. */
int pl_map_chars_from_profile(const struct profile *p, struct pl_map_chars *c, char *why, size_t len);

enum pl_share { PL_SHARED = 0, PL_SPREAD = 1 };

struct pl_map_opts {
    double sharing_high;   /* PL_MAP_SHARING_HIGH */
    double footprint_high; /* PL_MAP_FOOTPRINT_HIGH */
};

/* Algorithm 1's decision: llc and bus (P's threads sharing them among themselves, or spread), the line of the
 * algorithm it ends on (2-20), which of the two the branch fixes first (true: the bus), and why (one line). */
struct pl_map_decision {
    enum pl_share llc, bus;
    int line;
    bool bus_first;
    char why[384];
};
int pl_map_decide(const struct pl_map_chars *p, const struct pl_map_chars *c, const struct pl_map_opts *o,
                  struct pl_map_decision *d, char *why, size_t len);

/* The mapping on a machine.  h: its hierarchy; llc and bus: levels of h (the LLC and the memory path; llc finer
 * than or equal to bus).  P takes a balanced placement of np threads using the fewest (shared) or most (spread)
 * instances of each level; where the decided pair is not possible there, the branch's first decision stands and the
 * other gives way (`adjusted` says so).  C takes nc of the PUs left, away from P first.  pus are logical indexes. */
struct pl_map_result {
    enum pl_share llc, bus;       /* as placed */
    bool adjusted;
    char adjust_why[256];
    unsigned llc_used, bus_used;  /* instances P uses */
    unsigned np, nc;
    unsigned *p_pus, *c_pus;      /* ascending */
    char notation[80];            /* {XXXX****}: X P, * C, . idle (machines up to 64 PUs; else empty) */
};
int pl_map_place(const struct pl_hier *h, int llc, int bus, unsigned np, unsigned nc, const struct pl_map_decision *d,
                 struct pl_map_result *r, char *why, size_t len);
void pl_map_result_free(struct pl_map_result *r);

/* The LLC and memory-path levels of h: the memory path is the coarsest level that is not a cache (package, die or
 * numa), else level 0; the LLC the coarsest cache level (l3, l2 or l1), else the finest level.  Both -1 when h has
 * no level (pl_map_place then places P on the first PUs and C on the next, and says why). */
int pl_map_levels(const struct pl_hier *h, int *llc, int *bus, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
