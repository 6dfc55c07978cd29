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

#ifdef __cplusplus
}
#endif
#endif
