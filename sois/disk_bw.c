/* disk_bw.c - SoI4, storage bandwidth: sequential O_DIRECT reads, writes or both through io_uring, at x % of the
 * sequential bandwidth measured on the same filesystem with the same block size and queue depth.
 * Two SoIs share this file: disk-bw (reads by default, --rw chooses) and disk-write (writes only), because reading and
 * writing are different resources to a program beside them: a latency-bound reader keeps its speed beside a reader at
 * full bandwidth and loses an order of magnitude beside a writer (docs/sois.md, "disk-write"), so a profile carries
 * both axes.
 *
 * Each worker owns a file of `file-size` bytes in a private directory inside --dir (default $TMPDIR or /var/tmp),
 * written in full once at prepare (so reads hit real blocks, not unwritten extents that read back as zeros without
 * touching the disk), and keeps `qd` requests of `bs` bytes in flight over it, sequentially and wrapping around.
 * mix alternates reads and writes.  Writes overwrite blocks already allocated: the file never grows.  One step()
 * reaps and resubmits for about 1 ms; the engine's token bucket paces the bytes it *submits* below 100 % (pacing
 * completions would let the qd x bs in flight run ahead of the pacer).  Every step starts with nothing in flight
 * and its meter waits for what it left in flight, so no step inherits another's I/O.
 * With --device PATH --force it reads a raw block device instead (reads only; writes would destroy its data).
 * Self-meter: bytes completed per second, counted from io_uring completions, as % of the measured peak.
 *
 * Safety (fsguard.h): the file must fit the spare space (available less max(5 %, 1 GiB)) or the run is refused;
 * every file and the private directory are removed in teardown, which runs on every exit path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "clock.h"
#include "fsguard.h"
#include "ib_err.h"
#include "kernels.h"
#include "memlimit.h"
#include "parse.h"
#include "peak.h"
#include "soikit.h"
#include "scratch.h"
#include "soi_opts.h"
#include "uring_kit.h"

enum { RW_READ = 0, RW_WRITE, RW_MIX }; /* the order of rw_name */
static const char *const rw_name[] = {"read", "write", "mix", NULL};

/* the options both SoIs of this file take; only qd's default differs */
#define DBW_SHARED_OPTS(qd_default)                                                                                  \
    {SOI_OPT("bs", SOI_O_SIZE, struct dbw_opts, bs, 4096, 16 << 20, 1 << 20,                                         \
     "block size of each request (also --bs), a multiple of 4 KiB")},                                                \
    {SOI_OPT("qd", SOI_O_UINT, struct dbw_opts, qd, 1, 256, qd_default,                                              \
     "requests in flight per thread (also --qd)")},                                                                  \
    {SOI_OPT("file-size", SOI_O_SIZE, struct dbw_opts, file_size, 16 << 20, 1ULL << 40, 512 << 20,                   \
     "size of each thread's file, a multiple of 4 KiB (within the spare space)"),                                    \
     SOI_QUICK(256 << 20)} /* validation: files quick to write at prepare */

static const struct soi_opt dbw_opts[] = {
    {SOI_OPT("rw", SOI_O_CHOICE, struct dbw_opts, rw, 0, 0, RW_READ,
     "direction: read, write, or mix (alternating) (also --rw)"), .choices = rw_name},
    DBW_SHARED_OPTS(8),
    {0},
};

/* disk-write: the same options but the direction, which is its name.  Its queue is deeper: at 100 % it is to press
 * storage as hard as a writer can, and on writes requests in flight cost a latency-bound reader more than bytes do
 * (more harm at QD 32 than at 8 while moving fewer bytes; QD 64 no more than 32: docs/sois.md, "disk-write") */
static const struct soi_opt dwr_opts[] = {
    DBW_SHARED_OPTS(32),
    {0},
};

extern const struct soi_ops soi_disk_write;

#define DBW_STEP_NS (1 * IB_NS_PER_MS)

struct dbw_thread {
    struct io_uring ring;
    int ring_ok;
    int fd;
    uint8_t *buf;       /* qd slots of bs bytes, 4 KiB aligned */
    uint64_t off;       /* next offset */
    unsigned inflight;
    unsigned nops;      /* requests issued (mix alternates on it) */
    unsigned free_slot[256];
    unsigned nfree;
    uint64_t done_bytes; /* completed since the last set_intensity/measure */
    uint64_t drained;    /* bytes of the requests the last drain reaped */
    char path[4200];
};

struct dbw {
    unsigned n;
    int rw;
    uint64_t bs, bytes; /* request size, file (or device) bytes */
    unsigned qd;
    int device;         /* 1: a raw device (its descriptors are ours to close), 0: files in sc */
    struct scratch sc;  /* the private directory and its files, which own their descriptors (scratch.h) */
    struct dbw_thread *t;
};

/* A device may stall for seconds; one stuck for longer than this does not hold a teardown (or Ctrl-C) for ever. */
#define DBW_DRAIN_NS (5 * IB_NS_PER_S)
#define DBW_CANCEL_NS (1 * IB_NS_PER_S)

static void dbw_reaped(void *arg, struct io_uring_cqe *cqe)
{
    struct dbw_thread *t = arg;
    if (cqe->res > 0)
        t->drained += (uint64_t)cqe->res;
    t->free_slot[t->nfree++] = (unsigned)io_uring_cqe_get_data64(cqe);
}

/* Wait for everything in flight, at most DBW_DRAIN_NS, then cancel it; returns the bytes those requests moved. A
 * ring left with requests in flight is not used again (ring_ok = 0). */
static uint64_t dbw_drain(struct dbw_thread *t)
{
    if (!t->ring_ok || !t->inflight)
        return 0;
    t->drained = 0;
    t->inflight = uring_drain(&t->ring, t->inflight, clk_mono_ns() + DBW_DRAIN_NS, DBW_CANCEL_NS, dbw_reaped, t);
    if (t->inflight) {
        io_uring_queue_exit(&t->ring); /* the kernel ends them in the background */
        t->ring_ok = 0;
    }
    return t->drained;
}

static void dbw_teardown(struct soi *s)
{
    struct dbw *p = s->priv;
    if (!p)
        return;
    for (unsigned i = 0; p->t && i < p->n; i++) {
        struct dbw_thread *t = &p->t[i];
        dbw_drain(t);
        if (t->ring_ok)
            io_uring_queue_exit(&t->ring);
        if (p->device && t->fd >= 0)
            close(t->fd);
        if (t->buf)
            ib_unmap(t->buf, (size_t)p->qd * p->bs);
    }
    scratch_close(&p->sc); /* every file and the directory */
    free(p->t);
    free(p);
    s->priv = NULL;
}

/* Prepare requests until qd are in flight (submitted by the caller); *sub += their bytes. */
static void dbw_prep(struct dbw *p, struct dbw_thread *t, uint64_t *sub)
{
    while (t->inflight < p->qd && t->nfree) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
        if (!sqe)
            break;
        unsigned slot = t->free_slot[--t->nfree];
        uint8_t *b = t->buf + (size_t)slot * p->bs;
        int write = p->rw == RW_WRITE || (p->rw == RW_MIX && (t->nops & 1));
        if (write)
            io_uring_prep_write(sqe, t->fd, b, (unsigned)p->bs, t->off);
        else
            io_uring_prep_read(sqe, t->fd, b, (unsigned)p->bs, t->off);
        io_uring_sqe_set_data64(sqe, slot);
        t->nops++;
        *sub += p->bs;
        t->off += p->bs;
        if (t->off + p->bs > p->bytes)
            t->off = 0;
        t->inflight++;
    }
}

/* Run for about budget_ns: reap completions and resubmit. *sub gets the bytes submitted (what the pacer charges:
 * pacing submissions keeps the qd x bs in flight from running ahead of it), t->done_bytes grows by what completed. */
static int dbw_run(struct dbw *p, struct dbw_thread *t, uint64_t budget_ns, uint64_t *sub)
{
    uint64_t t0 = clk_mono_ns();
    *sub = 0;
    for (;;) {
        /* refill, submit and wait for a completion in one system call, then reap every completion already there:
         * the freed slots go out together on the next turn (one doorbell for a virtio disk for several requests,
         * which the block layer can also plug and merge), as fio does */
        dbw_prep(p, t, sub);
        int rc = io_uring_submit_and_wait(&t->ring, 1);
        if (rc == -EINTR)
            continue;
        if (rc < 0)
            return rc;
        struct io_uring_cqe *cqe;
        while (io_uring_peek_cqe(&t->ring, &cqe) == 0) {
            int res = cqe->res;
            t->free_slot[t->nfree++] = (unsigned)io_uring_cqe_get_data64(cqe);
            io_uring_cqe_seen(&t->ring, cqe);
            t->inflight--;
            if (res < 0)
                return res;
            t->done_bytes += (uint64_t)res;
        }
        if (clk_mono_ns() - t0 >= budget_ns)
            return 0;
    }
}

/* ---- peak: every thread unthrottled at once, 5 windows of 200 ms, median of the summed rate ------------------- */

/* one peak window of thread tid: unthrottled, completions counted */
static int dbw_window(void *arg, unsigned tid, uint64_t ns, double *rate)
{
    struct dbw *p = arg;
    struct dbw_thread *t = &p->t[tid];
    uint64_t s0 = clk_mono_ns(), done0 = t->done_bytes, d, sub;
    int rc;
    do {
        rc = dbw_run(p, t, DBW_STEP_NS, &sub);
        d = clk_mono_ns() - s0;
    } while (rc == 0 && d < ns);
    *rate = (double)(t->done_bytes - done0) / ((double)d / 1e9);
    return rc;
}

/* ---- ops ------------------------------------------------------------------------------------------------------- */

/* Write the whole file once, sequentially, with O_DIRECT (polls stop). */
static int dbw_prefill(struct dbw *p, struct dbw_thread *t, const atomic_int *stop)
{
    uint8_t *b = t->buf;
    for (uint64_t i = 0; i < (uint64_t)p->qd * p->bs; i += 8)
        *(uint64_t *)(b + i) = 0x9e3779b97f4a7c15ULL * (i + 1);
    size_t chunk = (size_t)p->qd * p->bs;
    for (uint64_t off = 0; off < p->bytes;) {
        if (stop && atomic_load(stop))
            return -EINTR;
        size_t want = p->bytes - off < chunk ? (size_t)(p->bytes - off) : chunk;
        ssize_t w = pwrite(t->fd, b, want, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        off += (uint64_t)w;
    }
    return fdatasync(t->fd) ? -errno : 0;
}

static int dbw_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
    struct dbw *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    s->priv = p;
    p->n = env->nthreads;
    const struct dbw_opts *o = soi_opts(env);
    const char *nm = env->ops->name;
    p->rw = env->ops == &soi_disk_write ? RW_WRITE : o->rw;
    p->bs = o->bs;
    p->qd = o->qd;
    p->bytes = o->file_size;
    int rc;
    if (p->bs % 4096) {
        rc = soi_bad_input(s, ib_why(why, len, -EINVAL, "%s: bs %llu is not a multiple of 4 KiB (O_DIRECT)", nm,
                                     (unsigned long long)p->bs));
        goto fail;
    }
    if (p->bytes % 4096) {
        rc = soi_bad_input(s, ib_why(why, len, -EINVAL, "%s: file-size %llu is not a multiple of 4 KiB "
                                     "(O_DIRECT writes whole blocks)", nm, (unsigned long long)p->bytes));
        goto fail;
    }
    /* every thread maps and touches qd x bs bytes of buffers (up to 4 GiB): held to what the machine can spare */
    char what[96], b0[32];
    snprintf(what, sizeof(what), "%s: the buffers of %u thread(s) x qd %u x bs %s take", nm, p->n, p->qd,
             fmt_bytes((double)p->bs, b0, sizeof(b0)));
    if ((rc = mlim_check(env->mlim, p->n, (uint64_t)p->qd * p->bs, what, why, len)) < 0) {
        soi_bad_input(s, rc); /* its qd x bs */
        goto fail;
    }
    p->t = calloc(p->n, sizeof(*p->t));
    if (!p->t) {
        rc = -ENOMEM;
        goto fail;
    }
    for (unsigned i = 0; i < p->n; i++)
        p->t[i].fd = -1;
    char where[4200], fsdesc[128];
    struct stat st;
    if (env->device) {
        p->device = 1;
        if (!env->force) {
            rc = soi_bad_input(s, ib_why(why, len, -EINVAL, "%s: --device %s needs --force", nm, env->device));
            goto fail;
        }
        if (p->rw != RW_READ) {
            rc = soi_bad_input(s, ib_why(why, len, -EINVAL, "%s: on a raw device only --rw read is allowed "
                                         "(writing would destroy its data)", nm));
            goto fail;
        }
        if (stat(env->device, &st) != 0) {
            rc = soi_bad_input(s, ib_why(why, len, -errno, "%s: --device %s: %s", nm, env->device, strerror(errno)));
            goto fail;
        }
        if (!S_ISBLK(st.st_mode)) {
            rc = soi_bad_input(s, ib_why(why, len, -ENOTBLK, "%s: --device %s is not a block device", nm,
                                         env->device));
            goto fail;
        }
        snprintf(where, sizeof(where), "%s", env->device);
        snprintf(fsdesc, sizeof(fsdesc), "device %u:%u", major(st.st_rdev), minor(st.st_rdev));
    } else {
        /* every thread's file must fit the spare space; a tmpfs is refused: it would measure memory */
        if ((rc = scratch_open(&p->sc, env->dir, nm, p->bytes * p->n, SCRATCH_DISK, why, len)) < 0) {
            if (rc == -ENOSPC) {
                size_t l = strlen(why);
                if (l < len)
                    snprintf(why + l, len - l, ": lower --param file-size");
            }
            if (p->sc.refused_input)
                soi_bad_input(s, rc);
            goto fail;
        }
        const char *dir = p->sc.base;
        stat(dir, &st);
        snprintf(where, sizeof(where), "%s", p->sc.dir);
        snprintf(fsdesc, sizeof(fsdesc), "dev %u:%u", major(st.st_dev), minor(st.st_dev));
    }
    for (unsigned i = 0; i < p->n; i++) {
        struct dbw_thread *t = &p->t[i];
        t->buf = ib_map((size_t)p->qd * p->bs, 0);
        if (!t->buf) {
            rc = ib_why(why, len, -ENOMEM, "%s: cannot map its buffers", nm);
            goto fail;
        }
        for (unsigned k = 0; k < p->qd; k++)
            t->free_slot[t->nfree++] = k;
        if (env->device) {
            t->fd = open(env->device, O_RDONLY | O_DIRECT | O_CLOEXEC);
            uint64_t sz = 0;
            if (t->fd < 0) {
                rc = -errno;
                if (rc == -EINVAL)
                    rc = ib_why(why, len, -ENOTSUP, "%s: %s does not support O_DIRECT: the page cache would "
                                "answer instead of the disk", nm, where);
                else
                    ib_why(why, len, rc, "%s: cannot open %s: %s", nm, where, strerror(-rc));
                goto fail;
            }
            if (ioctl(t->fd, BLKGETSIZE64, &sz) == 0 && sz >= p->bs)
                p->bytes = sz < p->bytes ? sz : p->bytes;
        } else {
            char name[32];
            snprintf(name, sizeof(name), "data.%u", i);
            if ((rc = t->fd = scratch_file(&p->sc, name, O_RDWR | O_DIRECT, p->bytes, t->path, sizeof(t->path), why,
                                           len)) < 0)
                goto fail;
            if ((rc = dbw_prefill(p, t, env->stop)) < 0) {
                if (rc != -EINTR)
                    ib_why(why, len, rc, "%s: writing %s failed: %s", nm, t->path, strerror(-rc));
                goto fail;
            }
        }
        /* COOP_TASKRUN: completions wait for the worker's next entry into the kernel instead of interrupting it
         * (as fio sets up its rings); older kernels refuse the flag: then without it */
        rc = io_uring_queue_init(p->qd < 8 ? 8 : p->qd, &t->ring, IORING_SETUP_COOP_TASKRUN);
        if (rc == -EINVAL)
            rc = io_uring_queue_init(p->qd < 8 ? 8 : p->qd, &t->ring, 0);
        if (rc < 0) {
            ib_why(why, len, rc == -EPERM ? -ENOTSUP : rc, "%s: io_uring is not available: %s", nm, strerror(-rc));
            if (rc == -EPERM)
                rc = -ENOTSUP;
            goto fail;
        }
        t->ring_ok = 1;
    }
    char kind[CALIB_KIND_LEN]; /* the whole filesystem description: never cut into another's key */
    snprintf(kind, sizeof(kind), "d%c%s/%llu/%u", p->rw == RW_READ ? 'r' : p->rw == RW_WRITE ? 'w' : 'm',
             strchr(fsdesc, ' ') + 1, (unsigned long long)(p->bs >> 10), p->qd);
    double peak = 0, old = 0;
    if ((rc = peak_need_threads(env, kind, p->n, dbw_window, p, 2 * PEAK_REP_NS, &peak, &old, why, len)) < 0)
        goto fail;
    s->capacity = peak;
    s->pace_burst_ns = 25 * IB_NS_PER_MS; /* the path stalls for tens of ms: let the bucket make that up */
    char b1[32], b2[32], b3[40]; /* "; cached 123.45 GB/s" */
    kit_rate_units(s, "B/s", old, b3, sizeof(b3));
    snprintf(s->capacity_src, sizeof(s->capacity_src), "%s sequential %s, %s blocks, QD %u, O_DIRECT io_uring, %.40s: %s%s",
             env->cached_capacity && old > 0 ? "cached" : "measured now:", rw_name[p->rw],
             fmt_bytes((double)p->bs, b1, sizeof(b1)), p->qd, fsdesc, fmt_rate(peak, "B/s", b2, sizeof(b2)), b3);
    snprintf(s->note, sizeof(s->note), "%s %s in %.300s%s", env->device ? "reads" : "file(s) of",
             fmt_bytes((double)p->bytes, b1, sizeof(b1)), where, env->device ? "" : " (removed at exit)");
    return 0;
fail:
    dbw_teardown(s);
    return rc;
}

static int dbw_step(struct soi *s, unsigned tid, uint64_t *units)
{
    struct dbw *p = s->priv;
    if (!p->t[tid].ring_ok) /* a drain gave up on a stuck device */
        return -EIO;
    int rc = dbw_run(p, &p->t[tid], DBW_STEP_NS, units);
    return rc < 0 ? rc : 0;
}

/* Workers are parked: nothing new is submitted. Before a step starts, nothing is in flight and nothing counted. */
static int dbw_set_intensity(struct soi *s, double x, char *why, size_t len)
{
    (void)x;
    (void)why;
    (void)len;
    struct dbw *p = s->priv;
    for (unsigned i = 0; i < p->n; i++) {
        dbw_drain(&p->t[i]);
        p->t[i].done_bytes = 0;
    }
    return 0;
}

/* Achieved: every byte the step submitted, completed: what completed during the step plus what was still in flight
 * when it ended (waited for now), over the step's time plus that wait. */
static int dbw_measure(struct soi *s, struct soi_meter *m)
{
    struct dbw *p = s->priv;
    uint64_t t0 = clk_mono_ns(), done = 0;
    for (unsigned i = 0; i < p->n; i++) {
        done += p->t[i].done_bytes + dbw_drain(&p->t[i]);
        p->t[i].done_bytes = 0;
    }
    double secs = (double)(m->wall_ns + (clk_mono_ns() - t0)) / 1e9;
    m->achieved = secs > 0 ? (double)done / secs : 0;
    m->secondary = m->achieved;
    return 0;
}

const struct soi_ops soi_disk_bw = {
    .version = SOI_OPS_VERSION,
    .name = "disk-bw",
    .resource = "storage bandwidth",
    .summary = "sequential O_DIRECT io_uring reads/writes at x % of the bandwidth measured on that filesystem",
    .paper = "SoI4",
    .scope = TOPO_SCOPE_MACHINE,
    .kind = SOI_RATE,
    .opts = dbw_opts,
    .opts_size = sizeof(struct dbw_opts),
    .prepare = dbw_prepare,
    .set_intensity = dbw_set_intensity,
    .step = dbw_step,
    .measure = dbw_measure,
    .teardown = dbw_teardown,
    .io = SOI_IO_DIR | SOI_IO_DEVICE,
};

const struct soi_ops soi_disk_write = {
    .version = SOI_OPS_VERSION,
    .name = "disk-write",
    .resource = "storage write bandwidth",
    .summary = "sequential O_DIRECT io_uring writes at x % of the write bandwidth measured on that filesystem",
    .paper = "SoI4 (writes)",
    .scope = TOPO_SCOPE_MACHINE,
    .kind = SOI_RATE,
    .opts = dwr_opts,
    .opts_size = sizeof(struct dbw_opts),
    .prepare = dbw_prepare,
    .set_intensity = dbw_set_intensity,
    .step = dbw_step,
    .measure = dbw_measure,
    .teardown = dbw_teardown,
    .io = SOI_IO_DIR,
    .caused_ref = "disk-rand", /* a writer's pressure shows on a random reader, not on another writer */
};
