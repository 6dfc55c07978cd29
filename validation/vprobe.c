/* vprobe.c - the validation probes (vprobe.h). Their data is built once, on the probe's own thread, the first time
 * beside_run opens them, and kept across runs until vprobe_fini (so an overlap matrix does not rebuild a 1 GiB file
 * for every SoI). */
#define _GNU_SOURCE
#include "vprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fsguard.h"
#include "ib_err.h"
#include "kernels.h"
#include "memlimit.h"
#include "netsink.h"
#include "parse.h"
#include "probes.h"
#include "scratch.h"

enum vkind { VK_CHASE = 0, VK_STREAM, VK_TLB, VK_OPS, VK_PAGECACHE, VK_DISK_RAND, VK_DISK_SEQ, VK_NET };

/* Designated initialisers: the validation fields are rare. */
#define VM(s, p, w, bw, pl) .soi = s, .probe = p, .where = w, .bwkind = bw, .placed = pl
const struct vprobe_map vprobe_maps[] = {
    {VM("mem-cap", "pagecache", TOPO_SCOPE_NUMA, NULL, 0), .meter = VPM_RSS,
     .quick_skip = "--quick: mem-cap's footprint (all the memory the machine can spare) takes seconds to grow and "
                   "shrink at every step"},
    {VM("mem-bw", "stream-dram", TOPO_SCOPE_NUMA, "dram", 1), .meter = VPM_MEM_BW},
    {VM("llc-cap", "chase-llc", TOPO_SCOPE_LLC, NULL, 1), .meter = VPM_LLC_OCCUPANCY},
    {VM("llc-bw", "stream-llc", TOPO_SCOPE_LLC, "llc", 1)},
    {VM("l2-cap", "chase-l2", TOPO_SCOPE_L2, NULL, 0)},
    {VM("l2-bw", "chase-l2", TOPO_SCOPE_L2, NULL, 0)},
    {VM("l1d", "chase-l1", TOPO_SCOPE_CORE, NULL, 0)},
    {VM("tlb", "tlb", TOPO_SCOPE_CORE, NULL, 0)},
    {VM("int", "ops-int", TOPO_SCOPE_CORE, NULL, 0), .meter = VPM_ONCPU},
    {VM("fp", NULL, TOPO_SCOPE_CORE, NULL, 0), .meter = VPM_ONCPU},
    {VM("simd", NULL, TOPO_SCOPE_CORE, NULL, 0), .meter = VPM_ONCPU},
    {VM("l1i", NULL, TOPO_SCOPE_CORE, NULL, 0)},
    {VM("prefetch", "stream-llc", TOPO_SCOPE_CORE, NULL, 0), .meter = VPM_ONCPU},
    {VM("interconnect", NULL, TOPO_SCOPE_MACHINE, NULL, 0), .min_cpus = 4,
     .cpus_why = "2 for the SoI, 2 for a ping-pong probe"},
    {VM("disk-cap", "disk-rand", TOPO_SCOPE_MACHINE, NULL, 0), .meter = VPM_FS_USED},
    {VM("disk-bw", "disk-seq", TOPO_SCOPE_MACHINE, NULL, 0), .meter = VPM_BLK_READ},
    {VM("disk-write", "disk-rand", TOPO_SCOPE_MACHINE, NULL, 0), .meter = VPM_BLK_WRITE},
    {VM("net-bw", "net", TOPO_SCOPE_MACHINE, NULL, 0), .meter = VPM_NET_SENT, .min_cpus = 4,
     .cpus_why = "with fewer, net-bw, its sink, the probe and the probe's sink all share them: the probe measures CPU "
                 "sharing and vCPU wake-ups, not the path (it ran faster beside net-bw on 2 CPUs)"},
};
const size_t vprobe_nmaps = sizeof(vprobe_maps) / sizeof(vprobe_maps[0]);

const struct vprobe_map *vprobe_map_of(const char *soi)
{
    for (size_t i = 0; i < vprobe_nmaps; i++)
        if (!strcmp(vprobe_maps[i].soi, soi))
            return &vprobe_maps[i];
    return NULL;
}

const struct overlap_claim overlap_claims[] = {
    {"mem-bw", CLAIM_UNDER, "pagecache", "memory-capacity probe", {"stream-dram"}, "bandwidth probe", 0.5,
     "mem-bw degrades the memory-capacity probe by less than half of what it does to the bandwidth probe"},
    {"llc-cap", CLAIM_ABOVE, "chase-llc", "half-LLC chase", {"stream-dram"}, "streaming-bandwidth probe", 0,
     "llc-cap degrades the half-LLC chase more than the streaming probe"},
    {"int", CLAIM_SMALL, "chase-llc", "cache probes", {"stream-llc", "chase-l2"}, NULL, 5.0,
     "int moves the cache probes by less than 5 % + twice the standard error"},
    {"fp", CLAIM_SMALL, "chase-llc", "cache probes", {"stream-llc", "chase-l2"}, NULL, 5.0,
     "fp moves the cache probes by less than 5 % + twice the standard error"},
    {"simd", CLAIM_SMALL, "chase-llc", "cache probes", {"stream-llc", "chase-l2"}, NULL, 5.0,
     "simd moves the cache probes by less than 5 % + twice the standard error"},
};
const size_t overlap_nclaims = sizeof(overlap_claims) / sizeof(overlap_claims[0]);

const char *const vprobe_names[] = {"chase-l1",  "chase-l2",  "chase-llc", "chase-dram", "stream-llc", "stream-dram",
                                    "tlb",       "ops-int",   "pagecache", "disk-rand",  "disk-seq",   "net",
                                    NULL};

/* ---- CPU probes -------------------------------------------------------------------------------------------------- */

__attribute__((noinline)) static uint64_t vp_sum(const uint64_t *p, size_t n)
{
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        a += p[i];
        b += p[i + 1];
        c += p[i + 2];
        d += p[i + 3];
    }
    return a ^ b ^ c ^ d;
}

/* 8 independent add/xor chains, kept apart by empty asm so the compiler neither folds nor vectorises them */
#define VB(x) __asm__ volatile("" : "+r"(x))
__attribute__((noinline)) static uint64_t vp_int(uint64_t n)
{
    uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8;
    for (uint64_t i = 0; i < n; i++) {
        a += 3; b += 5; c += 7; d += 9; e += 11; f += 13; g += 15; h += 17;
        VB(a); VB(b); VB(c); VB(d); VB(e); VB(f); VB(g); VB(h);
        a ^= 0x55; b ^= 0x66; c ^= 0x77; d ^= 0x11; e ^= 0x22; f ^= 0x33; g ^= 0x44; h ^= 0x5a;
        VB(a); VB(b); VB(c); VB(d); VB(e); VB(f); VB(g); VB(h);
    }
    return a + b + c + d + e + f + g + h;
}

/* one line per page, pages in a random cycle, at a random line inside each page */
static void *vp_tlb_build(uint64_t pages)
{
    uint8_t *buf = ib_map(pages * 4096, 0);
    uint64_t *perm = malloc(pages * sizeof(*perm));
    if (!buf || !perm) {
        free(perm);
        if (buf)
            ib_unmap(buf, pages * 4096);
        return NULL;
    }
    uint64_t s = 0x243f6a8885a308d3ULL;
    for (uint64_t i = 0; i < pages; i++)
        perm[i] = i;
    for (uint64_t i = pages - 1; i > 0; i--) {
        uint64_t k = ib_rand(&s) % i, t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    for (uint64_t i = 0; i < pages; i++) {
        uint64_t from = perm[i], to = perm[(i + 1) % pages];
        *(void **)(buf + from * 4096 + (from * 7 % 64) * 64) = buf + to * 4096 + (to * 7 % 64) * 64;
    }
    free(perm);
    return buf;
}

/* ---- file probes ---------------------------------------------------------------------------------------------- */

/* The private directory and its file go together (scratch.h): on any failure neither is left, so a later open starts
 * afresh in the base directory (never inside a directory of its own). */
static void vp_drop_file(struct vprobe *p)
{
    scratch_close(&p->sc); /* the file's descriptor, the file and the directory */
    p->fd = -1;
}

/* The disk probes (direct) measure storage: a memory filesystem is refused (-ENOTSUP), as O_DIRECT there would read
 * memory. */
static int vp_make_file(struct vprobe *p, int direct)
{
    char why[256];
    int rc = scratch_open(&p->sc, p->base[0] ? p->base : NULL, "probe", p->bytes, direct ? SCRATCH_DISK : 0, why,
                          sizeof(why));
    if (rc == 0 && (p->fd = scratch_file(&p->sc, "data", O_RDWR | (direct ? O_DIRECT : 0), 0, NULL, 0, why,
                                         sizeof(why))) < 0)
        rc = p->fd;
    size_t chunk = 1 << 20;
    uint8_t *b = rc == 0 ? ib_map(chunk, 0) : NULL;
    if (rc == 0 && !b)
        rc = -ENOMEM;
    if (b)
        memset(b, 0xa5, chunk);
    for (uint64_t off = 0; rc == 0 && off < p->bytes; off += chunk)
        if (pwrite(p->fd, b, chunk, (off_t)off) != (ssize_t)chunk)
            rc = errno ? -errno : -EIO;
    if (b)
        ib_unmap(b, chunk);
    if (rc == 0) {
        fdatasync(p->fd);
        p->buf = ib_map(1 << 20, 0); /* aligned read buffer */
        if (!p->buf)
            rc = -ENOMEM;
    }
    if (rc < 0)
        vp_drop_file(p);
    return rc;
}

/* ---- open / sample ----------------------------------------------------------------------------------------------- */

static int vp_open(void *ctx)
{
    struct vprobe *p = ctx;
    if (p->buf || p->fd >= 0)
        return 0; /* built by an earlier run */
    switch (p->kind) {
    case VK_CHASE:
        p->buf = probe_chase_build(p->bytes);
        p->cursor = p->buf;
        return p->buf ? 0 : -ENOMEM;
    case VK_TLB:
        p->buf = vp_tlb_build(p->bytes / 4096);
        p->cursor = p->buf;
        return p->buf ? 0 : -ENOMEM;
    case VK_STREAM:
        p->buf = ib_map(p->bytes, 0);
        if (!p->buf)
            return -ENOMEM;
        memset(p->buf, 1, p->bytes);
        return 0;
    case VK_OPS:
        p->buf = (void *)1; /* nothing to build */
        return 0;
    case VK_PAGECACHE: {
        int rc = vp_make_file(p, 0);
        if (rc < 0)
            return rc;
        p->map = mmap(NULL, p->bytes, PROT_READ, MAP_SHARED, p->fd, 0); /* for mincore only; never touched */
        if (p->map == MAP_FAILED) { /* nothing kept: a later open must not take the file for a built probe */
            rc = -errno;
            p->map = NULL;
            ib_unmap(p->buf, 1 << 20);
            p->buf = NULL;
            vp_drop_file(p);
            return rc;
        }
        return 0;
    }
    case VK_DISK_RAND:
    case VK_DISK_SEQ:
        return vp_make_file(p, 1);
    case VK_NET: {
        char why[256];
        int fd = -1;
        int rc = sink_connect(p->target, 3000, &fd, why, sizeof(why));
        if (rc < 0)
            return rc;
        p->fd = fd;
        p->buf = ib_map(p->per_sample, 0);
        return p->buf ? 0 : -ENOMEM;
    }
    }
    return -EINVAL;
}

static double ns_since(uint64_t t0, int cpu)
{
    return (double)((cpu ? clk_thread_cpu_ns() : clk_mono_ns()) - t0);
}

static int vp_sample(void *ctx, double *v)
{
    struct vprobe *p = ctx;
    uint64_t t0;
    switch (p->kind) {
    case VK_CHASE:
    case VK_TLB:
        *v = probe_chase_walk_ns(&p->cursor, p->per_sample);
        return 0;
    case VK_STREAM: {
        t0 = clk_thread_cpu_ns();
        uint64_t done = 0, sink = 0;
        while (done < p->per_sample) {
            uint64_t n = p->per_sample - done, left = p->bytes - p->pos;
            n = n < left ? n : left;
            sink += vp_sum((const uint64_t *)((uint8_t *)p->buf + p->pos), n / 8);
            done += n;
            p->pos = (p->pos + n) % p->bytes;
        }
        __asm__ volatile("" ::"r"(sink));
        *v = ns_since(t0, 1) / ((double)done / 1024.0);
        return 0;
    }
    case VK_OPS:
        t0 = clk_thread_cpu_ns();
        __asm__ volatile("" ::"r"(vp_int(p->per_sample)));
        *v = ns_since(t0, 1) / ((double)p->per_sample * 18.0);
        return 0;
    case VK_PAGECACHE: { /* capacity, not speed: the share of random pages still cached (mincore before reading) */
        uint64_t pages = p->bytes / 4096, hits = 0;
        for (uint64_t k = 0; k < p->per_sample; k++) {
            uint64_t pg = ib_rand(&p->rng) % pages;
            unsigned char in = 0;
            if (mincore((uint8_t *)p->map + pg * 4096, 4096, &in) < 0)
                return -errno;
            hits += in & 1;
            /* a lost page is brought back in, asynchronously (a disk SoI may hold the device: waiting for it would
             * measure the disk), so later samples see what the SoI takes, not what earlier samples lost */
            if (!(in & 1))
                posix_fadvise(p->fd, (off_t)(pg * 4096), 4096, POSIX_FADV_WILLNEED);
        }
        *v = (double)p->per_sample / (hits ? (double)hits : 0.5);
        return 0;
    }
    case VK_DISK_RAND: {
        uint64_t blocks = p->bytes / 4096;
        t0 = clk_mono_ns();
        for (uint64_t k = 0; k < p->per_sample; k++)
            if (pread(p->fd, p->buf, 4096, (off_t)(ib_rand(&p->rng) % blocks * 4096)) != 4096)
                return errno ? -errno : -EIO;
        *v = ns_since(t0, 0) / 1000.0 / (double)p->per_sample;
        return 0;
    }
    case VK_DISK_SEQ: {
        t0 = clk_mono_ns();
        for (uint64_t k = 0; k < p->per_sample; k++) {
            if (pread(p->fd, p->buf, 256 << 10, (off_t)p->pos) != (256 << 10))
                return errno ? -errno : -EIO;
            p->pos = (p->pos + (256 << 10)) % p->bytes;
        }
        *v = ns_since(t0, 0) / ((double)p->per_sample * 256.0);
        return 0;
    }
    case VK_NET: {
        t0 = clk_mono_ns();
        uint64_t left = p->per_sample;
        while (left) {
            ssize_t k = send(p->fd, (uint8_t *)p->buf + (p->per_sample - left), left, MSG_NOSIGNAL);
            if (k < 0) {
                if (errno == EINTR)
                    continue;
                return -errno;
            }
            left -= (uint64_t)k;
        }
        int q = 1;
        while (ioctl(p->fd, SIOCOUTQ, &q) == 0 && q > 0 && clk_mono_ns() - t0 < IB_NS_PER_S) {
            /* until the sink has acknowledged all of it; napping, not spinning: the sink may share this CPU */
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
        *v = ns_since(t0, 0) / ((double)p->per_sample / 1024.0);
        return 0;
    }
    }
    return -EINVAL;
}

static void vp_close(void *ctx) { (void)ctx; /* kept for the next run: vprobe_fini releases */ }

/* ---- setup ------------------------------------------------------------------------------------------------------- */

int vprobe_init(struct vprobe *p, const char *name, const struct calib *c, const struct mlim *mlim, const char *dir,
                const char *target,
                int sink_cpu, char *why, size_t len)
{
    memset(p, 0, sizeof(*p));
    p->fd = -1;
    p->rng = 0x9e3779b97f4a7c15ULL;
    snprintf(p->name, sizeof(p->name), "%s", name);
    if (dir && snprintf(p->base, sizeof(p->base), "%s", dir) >= (int)sizeof(p->base))
        return ib_why(why, len, -ENAMETOOLONG, "probe %s: the directory '%.64s...' is too long", name, dir);
    uint64_t l2 = calib_effective(c, CALIB_L2), llc = calib_effective(c, CALIB_LLC);
    if (!l2)
        l2 = 512 << 10;
    if (!llc)
        llc = 4 << 20;
    char b[32];
    if (!strcmp(name, "chase-l1") || !strcmp(name, "chase-l2") || !strcmp(name, "chase-llc") ||
        !strcmp(name, "chase-dram")) {
        p->kind = VK_CHASE;
        p->bytes = !strcmp(name, "chase-l1") ? 16 << 10 : !strcmp(name, "chase-l2") ? l2 / 2
                   : !strcmp(name, "chase-llc") ? llc / 2 : 64ULL << 20;
        p->bytes = p->bytes / 64 * 64;
        p->per_sample = !strcmp(name, "chase-l1") ? 200000 : !strcmp(name, "chase-l2") ? 100000
                        : !strcmp(name, "chase-llc") ? 40000 : 5000;
        snprintf(p->resource, sizeof(p->resource), "%s", !strcmp(name, "chase-l1") ? "L1d" : !strcmp(name, "chase-l2")
                 ? "L2" : !strcmp(name, "chase-llc") ? "LLC capacity" : "DRAM latency");
        snprintf(p->unit, sizeof(p->unit), "ns/load");
        snprintf(p->what, sizeof(p->what), "dependent loads over a random cycle of %s, %llu per sample, own CPU time",
                 fmt_bytes((double)p->bytes, b, sizeof(b)), (unsigned long long)p->per_sample);
    } else if (!strcmp(name, "stream-llc") || !strcmp(name, "stream-dram")) {
        p->kind = VK_STREAM;
        int dram = !strcmp(name, "stream-dram");
        p->bytes = dram ? 256ULL << 20 : (llc / 2) / 4096 * 4096;
        p->per_sample = dram ? 4 << 20 : 8 * p->bytes;
        snprintf(p->resource, sizeof(p->resource), "%s", dram ? "DRAM bandwidth" : "LLC bandwidth");
        snprintf(p->unit, sizeof(p->unit), "ns/KiB");
        snprintf(p->what, sizeof(p->what), "sums 64-bit words over %s, %s per sample, own CPU time",
                 fmt_bytes((double)p->bytes, b, sizeof(b)), dram ? "4 MiB" : "8 passes");
    } else if (!strcmp(name, "tlb")) {
        p->kind = VK_TLB;
        p->bytes = 8192ULL * 4096;
        p->per_sample = 20000;
        snprintf(p->resource, sizeof(p->resource), "data TLB");
        snprintf(p->unit, sizeof(p->unit), "ns/load");
        snprintf(p->what, sizeof(p->what), "one load per 4 KiB page over 8192 pages in random order, own CPU time");
    } else if (!strcmp(name, "ops-int")) {
        p->kind = VK_OPS;
        p->per_sample = 50000;
        snprintf(p->resource, sizeof(p->resource), "integer issue");
        snprintf(p->unit, sizeof(p->unit), "ns/op");
        snprintf(p->what, sizeof(p->what), "8 independent add/xor chains in plain C, own CPU time");
    } else if (!strcmp(name, "pagecache")) {
        p->kind = VK_PAGECACHE;
        /* larger than the memory margin every SoI leaves, so mem-cap at 100 % must take part of it: 1 GiB more than
         * that, at most 8 GiB */
        p->bytes = mlim_margin(mlim) + (1ULL << 30);
        p->bytes = (p->bytes > (8ULL << 30) ? (8ULL << 30) : p->bytes) & ~((1ULL << 20) - 1);
        p->per_sample = 64;
        snprintf(p->resource, sizeof(p->resource), "memory left for the page cache");
        snprintf(p->unit, sizeof(p->unit), "1/hit-rate");
        char fb[32];
        snprintf(p->what, sizeof(p->what), "share of random 4 KiB pages of a %s written file still in the page cache "
                 "(mincore); lost pages are read back in", fmt_bytes((double)p->bytes, fb, sizeof(fb)));
    } else if (!strcmp(name, "disk-rand") || !strcmp(name, "disk-seq")) {
        int rnd = !strcmp(name, "disk-rand");
        p->kind = rnd ? VK_DISK_RAND : VK_DISK_SEQ;
        p->bytes = 256ULL << 20;
        p->per_sample = rnd ? 8 : 1;
        snprintf(p->resource, sizeof(p->resource), "%s", rnd ? "storage (random reads)" : "storage (sequential)");
        snprintf(p->unit, sizeof(p->unit), "%s", rnd ? "us/read" : "ns/KiB");
        snprintf(p->what, sizeof(p->what), "%s O_DIRECT reads of a 256 MiB file, wall time",
                 rnd ? "random 4 KiB" : "sequential 256 KiB");
    } else if (!strcmp(name, "net")) {
        p->kind = VK_NET;
        p->per_sample = 64 << 10;
        if (target) {
            snprintf(p->target, sizeof(p->target), "%s", target);
        } else {
            int rc = sink_start("127.0.0.1:0", sink_cpu, 0, &p->sink, why, len);
            if (rc < 0)
                return rc;
            snprintf(p->target, sizeof(p->target), "%s", sink_address(p->sink));
        }
        snprintf(p->resource, sizeof(p->resource), "network path");
        snprintf(p->unit, sizeof(p->unit), "ns/KiB");
        snprintf(p->what, sizeof(p->what), "64 KiB to the ibench sink at %s until acknowledged, wall time", p->target);
    } else {
        return ib_why(why, len, -ENOENT, "no probe '%s'", name);
    }
    /* what the probe maps is held to what the machine can spare, as every allocation is */
    uint64_t mem = p->kind == VK_CHASE ? probe_chase_footprint(p->bytes)
                   : p->kind == VK_TLB ? p->bytes + p->bytes / 4096 * sizeof(uint64_t)
                   : p->kind == VK_STREAM ? p->bytes : 0;
    char what[48];
    snprintf(what, sizeof(what), "probe %s maps", p->name);
    int rc = mem ? mlim_check(mlim, 1, mem, what, why, len) : 0;
    if (rc < 0)
        return rc;
    p->bp = (struct beside_probe){.name = p->name, .unit = p->unit, .open = vp_open, .sample = vp_sample,
                                  .close = vp_close, .ctx = p};
    return 0;
}

void vprobe_fini(struct vprobe *p)
{
    if (p->kind == VK_OPS)
        p->buf = NULL;
    if (p->buf) {
        size_t sz = p->kind == VK_CHASE || p->kind == VK_TLB || p->kind == VK_STREAM ? p->bytes
                    : p->kind == VK_NET ? p->per_sample : (1 << 20);
        ib_unmap(p->buf, sz);
        p->buf = NULL;
    }
    if (p->map)
        munmap(p->map, p->bytes);
    p->map = NULL;
    if (p->kind == VK_NET && p->fd >= 0)
        close(p->fd); /* its socket; a file probe's descriptor is its scratch's */
    vp_drop_file(p);
    if (p->sink)
        sink_stop(p->sink);
    p->sink = NULL;
}
