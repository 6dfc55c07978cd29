/* pl_src_soft.c - the channel of ibench-share and its reader (pl_src_soft.h states the layout and the ring rule). */
#define _GNU_SOURCE
#include "pl_src_soft.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ib_err.h"

_Static_assert(sizeof(struct pl_share_hdr) == 64, "channel header is 64 bytes");
_Static_assert(sizeof(struct pl_share_slot) == 64, "slot header is 64 bytes");
_Static_assert(sizeof(struct pl_share_rec) == 16, "record is 16 bytes");

size_t pl_share_size(uint32_t nslots, uint32_t ring)
{
    return sizeof(struct pl_share_hdr) +
           (size_t)nslots * (sizeof(struct pl_share_slot) + (size_t)ring * sizeof(struct pl_share_rec));
}

char *pl_share_path(pid_t pid, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s%d", PL_SHARE_DIR, PL_SHARE_PREFIX, (int)pid);
    return buf;
}

int pl_share_starttime(pid_t pid, uint64_t *t)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -ESRCH;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    /* comm (field 2) may hold spaces and parentheses: fields are counted after the last ')' */
    char *p = strrchr(line, ')');
    if (!p)
        return -EIO;
    p++;
    for (int field = 3; field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (!p)
            return -EIO;
    }
    char *end;
    unsigned long long v = strtoull(p + 1, &end, 10);
    if (end == p + 1)
        return -EIO;
    *t = v;
    return 0;
}

struct pl_share_slot *pl_share_slot_at(void *map, uint32_t i)
{
    const struct pl_share_hdr *h = map;
    size_t stride = sizeof(struct pl_share_slot) + (size_t)h->ring * sizeof(struct pl_share_rec);
    return (struct pl_share_slot *)((char *)map + sizeof *h + (size_t)i * stride);
}

static struct pl_share_rec *slot_ring(struct pl_share_slot *s)
{
    return (struct pl_share_rec *)(s + 1);
}

void pl_share_put(struct pl_share_slot *s, uint32_t ring, uint64_t addr, uint32_t tid, enum pl_src src)
{
    uint64_t h = __atomic_load_n(&s->head, __ATOMIC_RELAXED); /* only this thread writes it */
    struct pl_share_rec *r = &slot_ring(s)[h & (ring - 1)];
    __atomic_store_n(&r->addr, addr, __ATOMIC_RELAXED);
    __atomic_store_n(&r->tid_src, ((uint64_t)tid << 32) | (uint32_t)src, __ATOMIC_RELAXED);
    __atomic_store_n(&s->head, h + 1, __ATOMIC_RELEASE);
}

int pl_share_create(uint32_t nslots, uint32_t line_size, void **map, size_t *size, char *why, size_t len)
{
    char path[96];
    pl_share_path(getpid(), path, sizeof path);
    uint64_t st = 0;
    int rc = pl_share_starttime(getpid(), &st);
    if (rc < 0)
        return ib_why(why, len, rc, "cannot read /proc/self/stat: %s", strerror(-rc));
    /* a leftover of an earlier process with this pid (SIGKILLed) is replaced, never reused: it is a new channel */
    unlink(path);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return ib_why(why, len, -errno, "cannot create %s: %s", path, strerror(errno));
    size_t sz = pl_share_size(nslots, PL_SHARE_RING);
    if (ftruncate(fd, (off_t)sz) < 0) {
        rc = ib_why(why, len, -errno, "cannot size %s to %zu bytes: %s", path, sz, strerror(errno));
        close(fd);
        unlink(path);
        return rc;
    }
    void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED) {
        unlink(path);
        return ib_why(why, len, -e, "cannot map %s: %s", path, strerror(e));
    }
    struct pl_share_hdr *h = m;
    /* the file is zero-filled by ftruncate: heads 0, TIDs 0 (not started) */
    h->version = PL_SHARE_VERSION;
    h->hdr_size = sizeof *h;
    h->nslots = nslots;
    h->ring = PL_SHARE_RING;
    h->rec_size = sizeof(struct pl_share_rec);
    h->line_size = line_size;
    h->pid = (int32_t)getpid();
    h->starttime = st;
    /* the magic last, released: a reader that sees it sees a complete header */
    char magic[8];
    memcpy(magic, PL_SHARE_MAGIC, sizeof magic);
    uint64_t mw;
    memcpy(&mw, magic, sizeof mw);
    __atomic_store_n((uint64_t *)(void *)h->magic, mw, __ATOMIC_RELEASE);
    *map = m;
    *size = sz;
    return 0;
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Is pid gone?  A zombie counts as gone: it runs no more threads, and the test's own child is one until reaped. */
static int pid_gone(pid_t pid)
{
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return 1;
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 1;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    char *p = strrchr(line, ')');
    return p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
}

struct reader {
    int fd;
    void *map;
    size_t size;
    const struct pl_share_hdr *h;
    uint64_t *tail;
};

static void reader_close(struct reader *r)
{
    if (r->map && r->map != MAP_FAILED)
        munmap(r->map, r->size);
    if (r->fd >= 0)
        close(r->fd);
    free(r->tail);
}

/* Opens and checks the channel of pid. */
static int reader_open(pid_t pid, struct reader *r, char *why, size_t len)
{
    char path[96];
    pl_share_path(pid, path, sizeof path);
    if (pid_gone(pid))
        return ib_why(why, len, -ESRCH, "no process %d", (int)pid);
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        int e = errno;
        if (pid_gone(pid))
            return ib_why(why, len, -ESRCH, "no process %d", (int)pid);
        if (e == ENOENT)
            return ib_why(why, len, -ENOENT, "process %d is not running ibench-share (no %s)", (int)pid, path);
        return ib_why(why, len, -e, "cannot open %s: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(r->fd, &st) < 0)
        return ib_why(why, len, -errno, "cannot stat %s: %s", path, strerror(errno));
    if ((size_t)st.st_size < sizeof(struct pl_share_hdr))
        return ib_why(why, len, -EPROTO, "%s: %lld bytes, shorter than its header", path, (long long)st.st_size);
    r->size = (size_t)st.st_size;
    r->map = mmap(NULL, r->size, PROT_READ, MAP_SHARED, r->fd, 0);
    if (r->map == MAP_FAILED) {
        r->map = NULL;
        return ib_why(why, len, -errno, "cannot map %s: %s", path, strerror(errno));
    }
    r->h = r->map;
    uint64_t mw = __atomic_load_n((const uint64_t *)(const void *)r->h->magic, __ATOMIC_ACQUIRE);
    if (memcmp(&mw, PL_SHARE_MAGIC, 8) != 0)
        return ib_why(why, len, -EPROTO, "%s is not an ibench-share channel (bad magic)", path);
    if (r->h->version != PL_SHARE_VERSION)
        return ib_why(why, len, -EPROTO, "%s: channel version %u, this reader knows %u", path, r->h->version,
                      PL_SHARE_VERSION);
    const struct pl_share_hdr *h = r->h;
    if (h->hdr_size != sizeof *h || h->rec_size != sizeof(struct pl_share_rec) || h->ring == 0 ||
        (h->ring & (h->ring - 1)) != 0 || h->nslots == 0 || pl_share_size(h->nslots, h->ring) != r->size)
        return ib_why(why, len, -EPROTO, "%s: malformed header (%u slots of %u records in %zu bytes)", path,
                      h->nslots, h->ring, r->size);
    /* a leftover of a SIGKILLed run whose pid now names another process */
    uint64_t t = 0;
    if (h->pid != (int32_t)pid || pl_share_starttime(pid, &t) < 0 || t != h->starttime) {
        if (pid_gone(pid))
            return ib_why(why, len, -ESRCH, "no process %d", (int)pid);
        return ib_why(why, len, -ENOENT,
                      "process %d is not running ibench-share (%s is a stale channel of an earlier process)",
                      (int)pid, path);
    }
    r->tail = calloc(h->nslots, sizeof *r->tail);
    if (!r->tail)
        return ib_why(why, len, -ENOMEM, "out of memory");
    return 0;
}

/* Delivers what slot i holds beyond the reader's tail. */
static int drain_slot(struct reader *r, uint32_t i, pl_sample_fn fn, void *ctx, struct pl_soft_stats *st)
{
    uint32_t ring = r->h->ring;
    struct pl_share_slot *s = pl_share_slot_at(r->map, i);
    uint64_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
    uint64_t tail = r->tail[i];
    if (head == tail)
        return 0;
    uint64_t from = head - tail > ring ? head - ring : tail;
    st->lost += from - tail;
    enum { CHUNK = 256 };
    struct pl_share_rec buf[CHUNK];
    const struct pl_share_rec *rg = slot_ring(s);
    while (from < head) {
        uint64_t n = head - from < CHUNK ? head - from : CHUNK;
        for (uint64_t k = 0; k < n; k++) {
            const struct pl_share_rec *x = &rg[(from + k) & (ring - 1)];
            buf[k].addr = __atomic_load_n(&x->addr, __ATOMIC_RELAXED);
            buf[k].tid_src = __atomic_load_n(&x->tid_src, __ATOMIC_RELAXED);
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        /* the writer may have lapped us while we copied: record j is intact only if j > head2 - ring (the writer
         * may be storing record head2 into record head2 - ring's place right now) */
        uint64_t head2 = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
        uint64_t valid = head2 + 1 > ring ? head2 + 1 - ring : 0;
        for (uint64_t k = 0; k < n; k++) {
            if (from + k < valid) {
                st->lost++;
                continue;
            }
            struct pl_sample smp = {.tid = (uint32_t)(buf[k].tid_src >> 32),
                                    .addr = buf[k].addr,
                                    .src = (enum pl_src)(buf[k].tid_src & 0xffffffffu)};
            if ((unsigned)smp.src > PL_SRC_MEMORY)
                smp.src = PL_SRC_UNKNOWN;
            st->samples++;
            int rc = fn(ctx, &smp);
            if (rc != 0) {
                r->tail[i] = from + k + 1;
                return rc;
            }
        }
        from += n;
    }
    r->tail[i] = head;
    return 0;
}

int pl_src_soft_read_stats(pid_t pid, double seconds, pl_sample_fn fn, void *ctx, struct pl_soft_stats *stats,
                           char *why, size_t len)
{
    struct pl_soft_stats st_local = {0};
    struct pl_soft_stats *st = stats ? stats : &st_local;
    memset(st, 0, sizeof *st);
    if (pid <= 0)
        return ib_why(why, len, -EINVAL, "bad pid %d", (int)pid);
    if (!(seconds >= 0))
        return ib_why(why, len, -EINVAL, "bad duration %g s", seconds);
    struct reader r = {.fd = -1};
    int rc = reader_open(pid, &r, why, len);
    if (rc < 0) {
        reader_close(&r);
        return rc;
    }
    uint32_t n = r.h->nslots;
    /* from the current end: every slot's tail starts at its head now */
    for (uint32_t i = 0; i < n; i++)
        r.tail[i] = __atomic_load_n(&pl_share_slot_at(r.map, i)->head, __ATOMIC_ACQUIRE);
    double t0 = mono_s(), end = t0 + seconds, last_check = t0;
    int gone = 0;
    for (;;) {
        struct timespec nap = {0, PL_SHARE_POLL_MS * 1000000L};
        double now = mono_s();
        int last = now >= end;
        if (!last)
            nanosleep(&nap, NULL);
        /* a gone process: its channel is unlinked (st_nlink 0) or its pid dead; checked every 50 ms */
        if (now - last_check >= 0.05 || last) {
            struct stat sb;
            last_check = now;
            if ((fstat(r.fd, &sb) == 0 && sb.st_nlink == 0) || pid_gone(pid))
                gone = 1;
        }
        for (uint32_t i = 0; i < n && rc == 0; i++)
            rc = drain_slot(&r, i, fn, ctx, st);
        if (rc != 0 || gone || last)
            break;
    }
    st->threads = 0;
    for (uint32_t i = 0; i < n; i++)
        if (__atomic_load_n(&pl_share_slot_at(r.map, i)->tid, __ATOMIC_ACQUIRE) != 0)
            st->threads++;
    reader_close(&r);
    if (rc != 0)
        return rc;
    if (gone)
        return ib_why(why, len, -ESRCH, "process %d exited %.2f s into the read (%llu samples read)", (int)pid,
                      mono_s() - t0, (unsigned long long)st->samples);
    return 0;
}

int pl_src_soft_read(pid_t pid, double seconds, pl_sample_fn fn, void *ctx, char *why, size_t len)
{
    return pl_src_soft_read_stats(pid, seconds, fn, ctx, NULL, why, len);
}
