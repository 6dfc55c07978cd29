/* cgroup.h - a cgroup per child, so that a child and everything it starts (a daemon that calls setsid, a forked
 * server) is killed as a whole. cgroup v2 (cgroup.kill) or a v1 hierarchy (freezer or pids: frozen, then every
 * member SIGKILLed until none is left). Each ibench process uses <root>/ibench/<its pid>-<n>; a directory there
 * whose pid is gone is a leftover of a killed ibench and is removed by cg_sweep_stale.
 *
 * cg_enter and cg_kill are async-signal-safe (open/read/write/kill/nanosleep only): the child calls cg_enter between
 * fork and exec, a signal handler and the watchdog call cg_kill. */
#ifndef IB_CGROUP_H
#define IB_CGROUP_H
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cg_kind { CG_NONE, CG_V1, CG_V2 };

#define CG_PATH_MAX 256

struct cg_root {
    enum cg_kind kind;
    char dir[CG_PATH_MAX]; /* <hierarchy>/ibench: where this machine's ibench cgroups live */
};

/* The hierarchy to use: cgroup v2 mounted at /sys/fs/cgroup (under ibench's own cgroup, else at the root); else a
 * v1 freezer or pids hierarchy; else the v2 one of a hybrid layout (/sys/fs/cgroup/unified); each only when
 * <it>/ibench can be made and written. 0, or -errno with
 * why when none is usable (then r->kind is CG_NONE). */
int cg_root_find(struct cg_root *r, char *why, size_t len);
/* The given hierarchy (tests: a real one, or a plain directory standing for one). 0 or -errno with why. */
int cg_root_at(struct cg_root *r, enum cg_kind kind, const char *hierarchy, char *why, size_t len);

/* A new empty cgroup <r->dir>/<pid>-<n> into out. 0 or -errno with why. */
int cg_make(const struct cg_root *r, char *out, size_t outlen, char *why, size_t len);
/* Called by cg_make with each name before it is made (made = 1) and again (made = 0) when it could not be made;
 * NULL: none. Before, not after: a process killed between the mkdir and the call would leave a cgroup no one was
 * told of. The harness's watchdog listens here. */
void cg_set_make_hook(void (*hook)(int made, const char *path));
/* Moves the calling process into cg (writes "0" to its cgroup.procs). 0 or -errno. Async-signal-safe. */
int cg_enter(const char *cg);
/* Moves process pid into cg. 0 or -errno. */
int cg_add(const char *cg, pid_t pid);
/* Kills every process of cg: v2 by cgroup.kill; v1 frozen (freezer), each member SIGKILLed, thawed, and again until
 * cgroup.procs is empty, bounded (about 1 s). Returns the number of processes still listed (0: all gone) or -errno.
 * Async-signal-safe. */
int cg_kill(const char *cg);
/* Freeze (frozen 1) or thaw (0) every process of cg, daemons that left the process group included: v2 by
 * cgroup.freeze, v1 by freezer.state (a freezer hierarchy only). Waits until the kernel reports the state reached,
 * bounded (about 1 s); a freeze still under way then counts as done (its last members are inside system calls and
 * freeze as they leave them), a thaw not reached is -ETIMEDOUT. 0; -ENOTSUP when cg cannot be frozen (a v1 pids
 * hierarchy); -errno. */
int cg_freeze(const char *cg, int frozen);
/* cg_kill, then rmdir (retried briefly while the last members exit). 0 or -errno. */
int cg_remove(const char *cg);
/* Removes the cgroups under r->dir named <pid>-<n> whose pid is no longer a process (killed first). Returns how many
 * were removed. */
int cg_sweep_stale(const struct cg_root *r);

const char *cg_kind_name(enum cg_kind k);

#ifdef __cplusplus
}
#endif
#endif
