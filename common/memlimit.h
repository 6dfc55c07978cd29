/* memlimit.h - how much memory this process may use: /proc/meminfo and cgroup v1/v2 limits.
 *
 * Every path is read under `root` ("" for the live system), so tests run on fixture trees, e.g.
 * tests/fixtures/cgroup-v1/{proc/meminfo,proc/self/cgroup,sys/fs/cgroup/memory/...}.
 */
#ifndef IB_MEMLIMIT_H
#define IB_MEMLIMIT_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLIM_UNLIMITED UINT64_MAX

struct mlim {
    uint64_t mem_total;      /* MemTotal */
    uint64_t mem_available;  /* MemAvailable */
    int cg_version;          /* 0 none found, 1, 2 */
    uint64_t cg_limit;       /* tightest limit on the path from our cgroup to the root; MLIM_UNLIMITED if none */
    uint64_t cg_usage;       /* usage of the cgroup whose limit is the tightest (0 if unknown) */
    char cg_path[512];       /* our cgroup path as /proc/self/cgroup says */
};

/* 0, or -errno (e.g. -ENOENT when root/proc/meminfo is missing). cgroup files that are absent are not errors. */
int mlim_read(struct mlim *m, const char *root);

/* Memory the SoI must leave alone: max(10 % of the smaller of MemTotal and the cgroup limit, 512 MiB). */
uint64_t mlim_margin(const struct mlim *m);

/* What the machine can spare: min(MemAvailable, cgroup limit - cgroup usage) - margin, floored at 0. */
uint64_t mlim_spare(const struct mlim *m);
/* The most a memory SoI may hold: min(mlim_spare(), max_bytes) (max_bytes 0 = no user cap). */
uint64_t mlim_cap(const struct mlim *m, uint64_t max_bytes);

/* The rule every size that reaches an allocation obeys (mem-cap's): n x each bytes must fit in mlim_spare(m) (m NULL:
 * read the live system).  0, or -E2BIG with one line "<what> <n x each>, more than this machine can spare (...)"
 * (what: "mem-cap: max-bytes", "disk-bw: ... take"); a product that overflows 64 bits is refused, never wrapped. */
int mlim_check(const struct mlim *m, uint64_t n, uint64_t each, const char *what, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
