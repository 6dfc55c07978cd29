/* resctrl.h - a resctrl monitoring group: the L3 occupancy and memory traffic of a set of threads, counted by the
 * hardware (Intel RDT CMT/MBM, AMD PQoS) where the machine has it.
 *
 * The kernel's interface (Documentation/filesystems/resctrl.rst, "Monitoring"): resctrl mounted at ROOT (usually
 * /sys/fs/resctrl); ROOT/info/L3_MON/mon_features lists what the CPU monitors; a directory made under
 * ROOT/mon_groups/ is a monitoring group with an RMID of its own, in the default control group; a thread id written
 * to its tasks file moves that thread there (threads and children it creates later inherit the group); its
 * mon_data/mon_L3_XX/ holds per L3 domain llc_occupancy (bytes in that L3 now), mbm_total_bytes and
 * mbm_local_bytes (cumulative bytes between that L3 and memory: all of it, the local NUMA node's), or "Unavailable"
 * when the counter cannot be read now; rmdir of the group moves its tasks back to the parent group and frees the
 * RMID. A thread in another control group is refused (EINVAL): its allocation is never changed here.
 *
 * Every function takes the root it works under, so tests run on a fixture tree. Library code: never prints or exits;
 * 0 or -errno, with a one-line reason in why. */
#ifndef IB_RESCTRL_H
#define IB_RESCTRL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What ROOT/info/L3_MON/mon_features lists. */
struct resctrl_features {
    bool llc, mbm_total, mbm_local; /* llc_occupancy, mbm_total_bytes, mbm_local_bytes */
};

/* An open monitoring group. */
struct resctrl_mon {
    char dir[512];                  /* ROOT/mon_groups/NAME; "" when not open */
    bool llc, mbm_total, mbm_local; /* what resctrl_mon_read reads: what mon_features lists (clear one to skip it) */
};

/* One reading, summed over the L3 domains. A figure is absent (have_* false, value 0) when it is not read or a domain
 * says "Unavailable" (or "Error") now. */
struct resctrl_count {
    unsigned domains;
    bool have_llc, have_mbm_total, have_mbm_local;
    uint64_t llc_bytes;                        /* occupancy now */
    uint64_t mbm_total_bytes, mbm_local_bytes; /* cumulative: meaningful as differences */
};

/* What the CPU monitors under root (NULL: "/sys/fs/resctrl"). 0; -ENOTSUP with why "no resctrl monitoring: ROOT is
 * not mounted" or "no resctrl monitoring: the CPU has no L3 monitoring (no ROOT/info/L3_MON/mon_features)";
 * -ENAMETOOLONG for a root of 256 characters or more. */
int resctrl_mon_features(const char *root, struct resctrl_features *f, char *why, size_t len);

/* Make the monitoring group ROOT/mon_groups/NAME (name NULL: "ibench-<this pid>"; one left by a killed process of the
 * same name is removed and made again) and move the ntids threads of tids into it (a thread that has ended is
 * skipped; ntids 0: an empty group, for resctrl_mon_add). 0; or, nothing left behind: resctrl_mon_features' errors,
 * -ENOTSUP "no resctrl monitoring: the CPU has no llc_occupancy, mbm_total_bytes or mbm_local_bytes", -EACCES or
 * -EPERM "cannot make the resctrl group ...: ... (resctrl needs root)", -ENOSPC "... (no free RMID: too many
 * monitoring groups)", -ESRCH when none of the ntids threads is there, or resctrl_mon_add's errors. */
int resctrl_mon_open(struct resctrl_mon *m, const char *root, const char *name, const pid_t *tids, size_t ntids,
                     char *why, size_t len);
/* Move thread tid into the group. 0; -ESRCH (with why) when it has ended; -EINVAL "thread T is in another resctrl
 * control group (the kernel refuses to move it to DIR)", or "not a thread id: 0" for tid <= 0 (the kernel would
 * read 0 as the writer itself); or -errno with why. The group stays open either way. */
int resctrl_mon_add(struct resctrl_mon *m, pid_t tid, char *why, size_t len);
/* What the group counts now. 0; -EIO with why when mon_data holds no mon_L3_* domain; or -errno with why (a file
 * that cannot be read, a number that is not one). */
int resctrl_mon_read(const struct resctrl_mon *m, struct resctrl_count *c, char *why, size_t len);
/* Remove the group (its threads go back to the default group); safe on a zeroed or closed one. */
void resctrl_mon_close(struct resctrl_mon *m);

#ifdef __cplusplus
}
#endif
#endif
