/* vprobe.h - the validation probes: small victim kernels, one per resource, independent of the SoIs' code.
 *
 * Every probe reports a *cost* per unit of work (higher = worse), so a degradation is cost beside / cost solo - 1
 * for all of them. CPU-bound probes count their own thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so time-sharing a
 * CPU alone does not count as interference; I/O probes count wall time (their work is waiting).
 *
 *   name        resource                       one sample                                      cost
 *   chase-l1    L1d                            dependent loads over 16 KiB                     ns/load (CPU)
 *   chase-l2    L2                             dependent loads over half the effective L2      ns/load (CPU)
 *   chase-llc   LLC                            dependent loads over half the effective LLC     ns/load (CPU)
 *   chase-dram  DRAM latency                   dependent loads over 64 MiB                     ns/load (CPU)
 *   stream-llc  LLC bandwidth                  sums over half the effective LLC                ns/KiB (CPU)
 *   stream-dram DRAM bandwidth                 sums over 256 MiB                               ns/KiB (CPU)
 *   tlb         data TLB                       one load per page over 2x the TLB reach          ns/load (CPU)
 *   ops-int     integer issue                  8 chains of add/xor (plain C)                   ns/op (CPU)
 *   pagecache   memory left for others         64 random pages of a file (SoIs' memory margin + 1 GiB): cached?
 *                                              1/hit-rate (mincore)
 *   disk-rand   storage (random latency)       random 4 KiB O_DIRECT reads of a 256 MiB file    us/read (wall)
 *   disk-seq    storage (sequential rate)      sequential 256 KiB O_DIRECT reads, 256 MiB file  ns/KiB (wall)
 *   net         network path                   64 KiB to an ibench sink, until acknowledged     ns/KiB (wall)
 */
#ifndef IB_VPROBE_H
#define IB_VPROBE_H
#include <stddef.h>
#include <stdint.h>

#include "beside.h"
#include "calib.h"
#include "memlimit.h"
#include "scratch.h"
#include "topo.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sink;

struct vprobe {
    char name[16];
    char resource[40];
    char unit[16];
    char what[160];       /* one line: what exactly it does here, with sizes */
    struct beside_probe bp;
    /* state, used by some kinds */
    int kind;
    uint64_t bytes;       /* working set / file size */
    uint64_t per_sample;  /* loads, bytes or reads per sample */
    void *buf;
    void *cursor;
    void *map;            /* pagecache: the file mapped, for mincore */
    uint64_t pos, rng;
    int fd;
    char base[4096];      /* where the file probes make their private directory ("": the default scratch dir) */
    struct scratch sc;    /* a file probe's private directory and file, while they exist (scratch.h) */
    struct sink *sink;
    char target[80];
};

/* The counter the kernel keeps of an SoI's resource, which neither the SoI nor its probe writes: the outside meter of
 * validation (validation/xmeter.h). NONE: no such counter anywhere (a cache's bandwidth); the resctrl ones exist
 * only on a machine with RDT/PQoS monitoring. */
enum vprobe_meter {
    VPM_NONE = 0,
    VPM_ONCPU,          /* duty SoIs: their workers' CPU time (the self-meter ramp reads it: the kernel's count) */
    VPM_BLK_READ,       /* the block device under its files: bytes read */
    VPM_BLK_WRITE,      /* ... bytes written */
    VPM_FS_USED,        /* the file system under its files: bytes allocated (statvfs) */
    VPM_NET_SENT,       /* the network namespace's interfaces: bytes sent */
    VPM_RSS,            /* this process's resident memory */
    VPM_LLC_OCCUPANCY,  /* resctrl CMT: bytes of the LLC held */
    VPM_MEM_BW,         /* resctrl MBM: bytes moved to and from memory */
};

/* Which probe checks which SoI from outside, and what the probe must share with it (SOIS.md, "independent probe");
 * ibench validate ramps each SoI beside its probe, ibench profile checks reach with it. */
struct vprobe_map {
    const char *soi;
    const char *probe;     /* NULL: no probe yet */
    enum topo_scope where;
    const char *bwkind;    /* bandwidth SoIs: the calibration kind whose 1-CPU and 2-CPU rates tell whether it is
                            * shared at all (a probe can only feel a bandwidth both CPUs cannot have in full at
                            * once); measured by validate after a ramp that showed no effect (bw_unshared) */
    int placed;            /* 1: whether the SoI reaches another CPU rests on which CPUs hwloc says share `where`
                            * (a cache or memory path), so a profile checks it from the target's CPU first */
    /* validation only (ibench validate) */
    unsigned min_cpus;     /* the probe can only measure the path with this many CPUs (0: any) ... */
    const char *cpus_why;  /* ... and why, for the skip reason */
    const char *quick_skip; /* --quick leaves this SoI out, for this reason */
    enum vprobe_meter meter; /* the outside meter of its linearity */
};
extern const struct vprobe_map vprobe_maps[];
extern const size_t vprobe_nmaps;
/* The entry for SoI `soi`, or NULL. */
const struct vprobe_map *vprobe_map_of(const char *soi);

/* The catalogue's overlap claims (SOIS.md): what an SoI at 100 % must and must not do to probes other than its own,
 * judged on the overlap matrix by validation/validate.c (val_claims_eval), one evaluator per kind. d(p): the
 * degradation of probe p with the SoI at 100 %, se(p) its standard error. */
enum overlap_kind {
    CLAIM_UNDER = 0, /* d(probe) < factor x d(other[0]); undecidable when other[0] was not hurt (d <= 2 se + 1) */
    CLAIM_ABOVE,     /* d(probe) > d(other[0]); undecidable when neither was hurt */
    CLAIM_SMALL,     /* |d(p)| < factor + 2 se(p) for p = probe and every other[]; undecidable when the SoI did
                      * not do its work beside one of them (validate.h, VAL_WORK_CPU_*): nothing moved by nothing */
};
#define CLAIM_MAX_OTHERS 2
struct overlap_claim {
    const char *soi;
    enum overlap_kind kind;
    const char *probe, *what;                      /* the probe the claim is about, and its words */
    const char *other[CLAIM_MAX_OTHERS], *other_what; /* the probe(s) it is compared with (NULL-padded) */
    double factor;
    const char *text;                              /* the claim, one line */
};
extern const struct overlap_claim overlap_claims[];
extern const size_t overlap_nclaims;

/* Names of every probe, NULL-terminated. */
extern const char *const vprobe_names[];

/* Set p up as probe `name` for this machine (sizes from c and mlim, files in dir or fs_default_dir(), net to target or a sink
 * of its own on loopback, whose threads run on sink_cpu when >= 0). Nothing heavy happens here; the probe's open()
 * (called on its own thread by beside_run) builds its data. 0, -ENOENT (unknown name) or -errno with why. */
int vprobe_init(struct vprobe *p, const char *name, const struct calib *c, const struct mlim *mlim, const char *dir,
                const char *target,
                int sink_cpu, char *why, size_t len);
/* Release what open() left (files, sink); safe to call twice. */
void vprobe_fini(struct vprobe *p);

#ifdef __cplusplus
}
#endif
#endif
