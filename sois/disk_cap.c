/* disk_cap.c - SoI3, storage capacity: a real, allocated file of x % of its allotment, kept in use by random reads.
 *
 * The allotment is --max-bytes, or by default a modest share of the filesystem: min(10 % of the spare space, 4 GiB),
 * where the spare space is what is available less a margin of max(5 %, 1 GiB) (fsguard.h).  An allotment above the
 * spare space is refused.  The file lives in a private directory inside --dir (default $TMPDIR or /var/tmp).
 * set_intensity(x) grows the file with fallocate (blocks really allocated, not a sparse size) or shrinks it with
 * ftruncate; before every growth it re-reads the free space and never grows past the spare space of that moment
 * (the run says so in its note).  Every thread keeps reading random 4 KiB blocks of the file through the page
 * cache, so the space and its cache footprint are both used; `access-rate` caps those reads (all threads).
 * Self-meter: the bytes the filesystem reports allocated to the file (st_blocks x 512), not the size asked for.
 * Teardown removes the file and the directory on every exit path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsguard.h"
#include "ib_err.h"
#include "kernels.h"
#include "parse.h"
#include "scratch.h"
#include "soi.h"
#include "soi_opts.h"

static const struct soi_opt dcap_opts[] = {
    {SOI_OPT("max-bytes", SOI_O_SIZE, struct dcap_opts, max_bytes, 0, 1ULL << 50, 0,
     "allotment at 100 % (also --max-bytes; 0: min(10 % of the spare space, 4 GiB))"),
     SOI_QUICK(2ULL << 30)}, /* validation: a fixed allotment, quick to fill */
    {SOI_OPT("access-rate", SOI_O_DOUBLE, struct dcap_opts, access_rate, 0, 1e7, 2000,
     "random 4 KiB reads per second, all threads (0: unlimited)")},
    {0},
};

#define DCAP_DEFAULT_MAX (4ULL << 30)
#define DCAP_GRAIN (1ULL << 20) /* sizes in whole MiB */

/* Each worker's PRNG state on a cache line of its own: states 8 bytes apart would bounce one line between the
 * workers on every read they pick. */
struct dcap_rng {
    uint64_t s;
} __attribute__((aligned(64)));

struct dcap {
    int fd;                  /* the file, owned by sc */
    struct scratch sc;       /* its private directory (scratch.h) */
    char path[4200];
    uint64_t allot;       /* bytes at 100 % */
    uint64_t size;        /* current file size */
    struct dcap_rng rng[64]; /* per thread */
    unsigned n;
    char buf[64][4096] __attribute__((aligned(4096)));
};
_Static_assert(sizeof(struct dcap_rng) == 64 && offsetof(struct dcap, rng) % 64 == 0,
               "disk-cap: one PRNG state per cache line");

static void dcap_teardown(struct soi *s)
{
    struct dcap *p = s->priv;
    if (!p)
        return;
    scratch_close(&p->sc); /* the file and its directory */
    ib_unmap(p, sizeof(*p));
    s->priv = NULL;
}

static int dcap_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    const struct dcap_opts *o = soi_opts(env);
    if (env->nthreads > 64)
        return soi_bad_input(s, ib_why(why, len, -EINVAL, "disk-cap: at most 64 threads"));
    struct dcap *p = ib_map(sizeof(*p), 0); /* page-aligned, zeroed: its scratch is closed */
    if (!p)
        return -ENOMEM;
    p->fd = -1;
    p->n = env->nthreads;
    s->priv = p;
    uint64_t want = o->max_bytes;
    /* an allotment asked for must fit the spare space (else the user's input is refused); the default is a share of
     * it, at least one grain */
    int rc = scratch_open(&p->sc, env->dir, "disk-cap", want ? want : DCAP_GRAIN, 0, why, len);
    if (rc < 0) {
        if (rc == -ENOSPC && want) {
            size_t l = strlen(why);
            if (l < len)
                snprintf(why + l, len - l, ": lower --max-bytes");
        }
        if (p->sc.refused_input && (rc != -ENOSPC || want))
            soi_bad_input(s, rc);
        goto fail;
    }
    const char *dir = p->sc.base;
    struct fs_space sp = p->sc.space;
    uint64_t spare = fs_spare(&sp);
    char b1[32], b2[32], b3[32], b4[32];
    if (want == 0)
        want = spare / 10 < DCAP_DEFAULT_MAX ? spare / 10 : DCAP_DEFAULT_MAX;
    want = want / DCAP_GRAIN * DCAP_GRAIN;
    if (want < DCAP_GRAIN) {
        rc = ib_why(why, len, -ENOSPC, "disk-cap: %s can spare only %s (available %s less the margin of %s)", dir,
                    fmt_bytes((double)spare, b1, sizeof(b1)), fmt_bytes((double)sp.avail, b2, sizeof(b2)),
                    fmt_bytes((double)fs_margin(sp.total), b3, sizeof(b3)));
        goto fail;
    }
    p->allot = want;
    if ((rc = p->fd = scratch_file(&p->sc, "space", O_RDWR, 0, p->path, sizeof(p->path), why, len)) < 0)
        goto fail;
    for (unsigned i = 0; i < p->n; i++)
        p->rng[i].s = 0x9e3779b97f4a7c15ULL * (i + 1) ^ (uint64_t)env->cpus[i];
    s->capacity = (double)p->allot;
    s->rate_cap = o->access_rate;
    snprintf(s->unit, sizeof(s->unit), "B");
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "reads/s");
    snprintf(s->capacity_src, sizeof(s->capacity_src), "allotment %s of %s (spare %s: available %s less the margin "
             "of %s)%s", fmt_bytes((double)p->allot, b1, sizeof(b1)), dir, fmt_bytes((double)spare, b2, sizeof(b2)),
             fmt_bytes((double)sp.avail, b3, sizeof(b3)), fmt_bytes((double)fs_margin(sp.total), b4, sizeof(b4)),
             o->max_bytes > 0 ? "" : "; default min(10 % of spare, 4 GiB)");
    snprintf(s->note, sizeof(s->note), "file %.300s (removed at exit)%s", p->path,
             p->sc.memory ? "; this is a tmpfs: its space is memory" : "");
    return 0;
fail:
    dcap_teardown(s);
    return rc;
}

static int dcap_set_intensity(struct soi *s, double x, char *why, size_t len)
{
    struct dcap *p = s->priv;
    uint64_t target = (uint64_t)((double)p->allot * x / 100.0) / DCAP_GRAIN * DCAP_GRAIN;
    if (target < p->size) {
        if (ftruncate(p->fd, (off_t)target) != 0)
            return ib_why(why, len, -errno, "disk-cap: shrinking %s: %s", p->path, strerror(errno));
        p->size = target;
        return 0;
    }
    while (p->size < target) {
        if (s->env->stop && atomic_load(s->env->stop))
            return -EINTR;
        struct fs_space sp;
        int rc = fs_space_of(p->sc.dir, &sp);
        if (rc < 0)
            return ib_why(why, len, rc, "disk-cap: statvfs: %s", strerror(-rc));
        uint64_t spare = fs_spare(&sp) / DCAP_GRAIN * DCAP_GRAIN, grow = target - p->size;
        if (grow > 256 * DCAP_GRAIN) /* grow in pieces, re-checking the free space before each */
            grow = 256 * DCAP_GRAIN;
        if (grow > spare) {
            char b1[32], b2[32];
            snprintf(s->note, sizeof(s->note), "stopped growing at %s of %s asked: the filesystem's spare space ran "
                     "out (margin kept)", fmt_bytes((double)p->size, b1, sizeof(b1)),
                     fmt_bytes((double)target, b2, sizeof(b2)));
            break;
        }
        if (fallocate(p->fd, 0, (off_t)p->size, (off_t)grow) != 0)
            return ib_why(why, len, errno == ENOSPC ? -ENOSPC : -errno, "disk-cap: allocating %s: %s", p->path,
                          strerror(errno));
        p->size += grow;
    }
    return 0;
}

static int dcap_step(struct soi *s, unsigned tid, uint64_t *units)
{
    struct dcap *p = s->priv;
    uint64_t blocks = p->size / 4096;
    if (!blocks) {
        *units = 0;
        return 0;
    }
    uint64_t *r = &p->rng[tid].s;
    int n = 0;
    for (int k = 0; k < 16; k++) { /* a quantum: 16 random 4 KiB reads through the page cache */
        uint64_t b = ib_rand(r) % blocks;
        ssize_t got = pread(p->fd, p->buf[tid], 4096, (off_t)(b * 4096));
        if (got < 0 && errno != EINTR)
            return -errno;
        n++;
    }
    *units = (uint64_t)n;
    return 0;
}

static int dcap_measure(struct soi *s, struct soi_meter *m)
{
    struct dcap *p = s->priv;
    struct stat st;
    if (fstat(p->fd, &st) != 0)
        return -errno;
    m->achieved = (double)st.st_blocks * 512.0; /* what the filesystem really allocated */
    return 0;
}

const struct soi_ops soi_disk_cap = {
    .version = SOI_OPS_VERSION,
    .name = "disk-cap",
    .resource = "storage capacity",
    .summary = "a real, allocated file of x % of its allotment, read at random through the page cache",
    .paper = "SoI3",
    .scope = TOPO_SCOPE_MACHINE,
    .kind = SOI_FOOTPRINT,
    .opts = dcap_opts,
    .opts_size = sizeof(struct dcap_opts),
    .prepare = dcap_prepare,
    .set_intensity = dcap_set_intensity,
    .step = dcap_step,
    .measure = dcap_measure,
    .teardown = dcap_teardown,
    .io = SOI_IO_DIR,
};
