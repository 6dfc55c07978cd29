/* pl_fleet.h - fleet and arrivals files for `place colocate` and `place simulate` (docs/placement.md, "Fleet and
 * arrivals files").  Read strictly (jansson): an unknown key, a missing or out-of-range field, a duplicate machine
 * name, tenants over a machine's capacity or a profile that does not parse is -EINVAL (a file that cannot be read:
 * its -errno) with one line naming the file and the field.  Profile paths are relative to the file's directory; each file is read once.
 */
#ifndef IB_PL_FLEET_H
#define IB_PL_FLEET_H
#include <stdbool.h>
#include <stddef.h>

#include "pl_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pl_fleet {
    struct pl_sim_fleet f;     /* machines; apps: the tenants (placed), then what was added */
    unsigned ntenants;         /* f.app[0..ntenants-1] are the fleet file's tenants */
    struct profile **prof;     /* the profiles read, owned */
    char **prof_path;
    unsigned nprof;
};

/* {"version": 1, "machines": [{"name", "cpus", "memory_gib", "topology"?, "tenants"?: [{"profile", "cpus",
 * "memory_gib"}]}]}: machines with their tenants placed.  0 or -errno (fl holds nothing to free on error). */
int pl_fleet_read(const char *path, struct pl_fleet *fl, char *why, size_t len);
/* {"version": 1, "applications": [{"profile", "arrival", "work_s", "cpus", "memory_gib"}]}, sorted by arrival:
 * appended to fl's applications. */
int pl_fleet_read_arrivals(const char *path, struct pl_fleet *fl, char *why, size_t len);
/* One application (a profile file, its demand), not placed: appended.  Its index in *idx. */
int pl_fleet_add(struct pl_fleet *fl, const char *profile_path, unsigned cpus, double mem_bytes, unsigned arrival,
                 unsigned work_s, unsigned *idx, char *why, size_t len);
void pl_fleet_free(struct pl_fleet *fl);

/* Whether machine mi of f takes application a, and why: the rule place colocate prints and the scheduler extender
 * filters by (one library, two front ends).  In order: no room (CPU, memory or the group limit); fits (the policy is
 * not interference, or the machine has no tenant); else pl_coloc_check of its tenants plus a with o: safe (fit set)
 * or unsafe (the deciding resources; also a group that cannot be judged). */
/* uncertain: shared, not refused (pl_coloc_opts.established), ranked after every safe and empty machine */
enum pl_verdict_kind { PL_V_NO_ROOM, PL_V_FITS, PL_V_SAFE, PL_V_UNSAFE, PL_V_UNCERTAIN };
struct pl_verdict {
    enum pl_verdict_kind kind;
    char why[512];
    double fit; /* safe or uncertain: pl_coloc_result.fit; else NAN */
};
void pl_fleet_verdict(const struct pl_sim_fleet *f, unsigned mi, unsigned a, bool interference,
                      const struct pl_coloc_opts *o, struct pl_verdict *v);
const char *pl_verdict_name(enum pl_verdict_kind k);

#ifdef __cplusplus
}
#endif
#endif
