/* kcount.c - the kernel's own counters: a path's block device, a namespace's interfaces, resident memory (kcount.h). */
#define _GNU_SOURCE
#include "kcount.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ib_err.h"
#include "readfile.h"

/* ---- text */

bool kc_next_line(const char **p, const char **s, const char **e)
{
    if (!**p)
        return false;
    *s = *p;
    const char *nl = strchr(*p, '\n');
    *e = nl ? nl : *p + strlen(*p);
    *p = nl ? nl + 1 : *e;
    return true;
}

bool kc_next_tok(const char **p, const char *e, const char **ts, const char **te)
{
    const char *q = *p;
    while (q < e && (*q == ' ' || *q == '\t'))
        q++;
    if (q == e)
        return false;
    *ts = q;
    while (q < e && *q != ' ' && *q != '\t')
        q++;
    *te = q;
    *p = q;
    return true;
}

bool kc_tok_is(const char *s, const char *e, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(e - s) == n && memcmp(s, word, n) == 0;
}

bool kc_tok_u64(const char *s, const char *e, uint64_t *v)
{
    if (s == e)
        return false;
    uint64_t x = 0;
    for (const char *c = s; c < e; c++) {
        if (*c < '0' || *c > '9')
            return false;
        unsigned d = (unsigned)(*c - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}

/* A token quoted in a reason: at most 40 characters of it. */
#define TOKF "'%.*s'"
#define TOKA(s, e) (int)((e) - (s) > 40 ? 40 : (e) - (s)), (s)

int kc_fields_u64(const char *text, const char *name, uint64_t *v, int min, int max, char *why, size_t len)
{
    const char *p = text, *ls, *le, *ts, *te;
    if (!kc_next_line(&p, &ls, &le))
        return ib_why(why, len, -EINVAL, "%s: empty", name);
    const char *q = ls;
    int i = 0;
    for (; i < max && kc_next_tok(&q, le, &ts, &te); i++)
        if (!kc_tok_u64(ts, te, &v[i]))
            return ib_why(why, len, -EINVAL, "%s: field %d " TOKF " is not a number", name, i + 1, TOKA(ts, te));
    if (i < min)
        return ib_why(why, len, -EINVAL, "%s: %d fields, expected %s%d", name, i, min < max ? "at least " : "", min);
    return i;
}

int kc_number(const char *text, const char *name, uint64_t *v, char *why, size_t len)
{
    const char *e = text + strcspn(text, "\n");
    if (!kc_tok_u64(text, e, v) || (*e == '\n' && e[1] != '\0'))
        return ib_why(why, len, -EINVAL, "%s: " TOKF " is not one number", name, TOKA(text, e));
    return 0;
}

int kc_read(const char *path, char *buf, size_t len, char *why, size_t wlen)
{
    int rc = ib_read_small(path, buf, len);
    if (rc)
        return ib_why(why, wlen, rc, "cannot read %s: %s", path, strerror(-rc));
    if (strlen(buf) + 1 >= len)
        return ib_why(why, wlen, -EFBIG, "%s is larger than %zu bytes", path, len - 1);
    return 0;
}

/* A parser's reason prefixed with the path it read. */
static int in_file(int rc, const char *path, char *why, size_t len)
{
    char inner[200];
    snprintf(inner, sizeof(inner), "%s", why ? why : "");
    return ib_why(why, len, rc, "%s: %s", path, inner);
}

/* PROCROOT/PID/name, PID "self" for 0. */
static int proc_path(char *out, size_t n, const char *procroot, pid_t pid, const char *name, char *why, size_t len)
{
    int w = pid ? snprintf(out, n, "%s/%d/%s", procroot ? procroot : "/proc", (int)pid, name)
                : snprintf(out, n, "%s/self/%s", procroot ? procroot : "/proc", name);
    return w > 0 && (size_t)w < n ? 0 : ib_why(why, len, -ENAMETOOLONG, "path too long: %.60s...", out);
}

/* ---- block devices */

#define SECTOR 512ULL /* stat.rst: "standard UNIX 512-byte sectors" */
#define BLK_FIELDS_MAX 32

int kc_blk_parse(const char *text, struct kc_blk_count *c, char *why, size_t len)
{
    memset(c, 0, sizeof(*c));
    uint64_t v[BLK_FIELDS_MAX];
    int n = kc_fields_u64(text, "stat", v, 11, BLK_FIELDS_MAX, why, len);
    if (n < 0)
        return n;
    if (n != 11 && n != 15 && n < 17) /* no kernel wrote 12-14 or 16: a cut or damaged line */
        return ib_why(why, len, -EINVAL, "stat: %d fields, a kernel writes 11, 15 or 17", n);
    if (v[2] > UINT64_MAX / SECTOR || v[6] > UINT64_MAX / SECTOR || (n >= 15 && v[13] > UINT64_MAX / SECTOR))
        return ib_why(why, len, -EINVAL, "stat: a sector count is beyond 64-bit bytes");
    c->nfields = (unsigned)n;
    c->rd_ios = v[0];
    c->rd_bytes = v[2] * SECTOR;
    c->wr_ios = v[4];
    c->wr_bytes = v[6] * SECTOR;
    c->io_ticks_ms = v[9];
    c->have_discard = n >= 15;
    if (c->have_discard) {
        c->discard_ios = v[11];
        c->discard_bytes = v[13] * SECTOR;
    }
    c->have_flush = n >= 17;
    if (c->have_flush)
        c->flush_ios = v[15];
    return 0;
}

/* The device's name: DEVNAME= of its uevent, else the last part of the link's target. */
static void blk_name(struct kc_blk *b, const char *dir)
{
    char path[sizeof(b->stat_path) + 16], buf[1024];
    snprintf(b->name, sizeof(b->name), "%u:%u", b->major, b->minor);
    snprintf(path, sizeof(path), "%s/uevent", dir);
    if (ib_read_small(path, buf, sizeof(buf)) == 0) {
        const char *p = buf, *ls, *le;
        while (kc_next_line(&p, &ls, &le))
            if (le - ls > 8 && !strncmp(ls, "DEVNAME=", 8)) {
                snprintf(b->name, sizeof(b->name), "%.*s", (int)(le - ls - 8), ls + 8);
                return;
            }
    }
    ssize_t n = readlink(dir, buf, sizeof(buf) - 1);
    if (n <= 0)
        return;
    buf[n] = '\0';
    const char *slash = strrchr(buf, '/');
    if (slash ? slash[1] : buf[0])
        snprintf(b->name, sizeof(b->name), "%.63s", slash ? slash + 1 : buf);
}

int kc_blk_of_path(const char *sysroot, const char *path, struct kc_blk *b, char *why, size_t len)
{
    memset(b, 0, sizeof(*b));
    struct stat st;
    if (stat(path, &st) != 0)
        return ib_why(why, len, -errno, "cannot stat %s: %s", path, strerror(errno));
    b->major = major(st.st_dev);
    b->minor = minor(st.st_dev);
    if (b->major == 0) /* an anonymous device: the kernel gives one to every file system without a block device */
        return ib_why(why, len, -ENODEV, "%s is on %u:%u, a file system with no block device (tmpfs, overlay, a "
                                         "btrfs subvolume, NFS, ...)", path, b->major, b->minor);
    char dir[sizeof(b->stat_path) - sizeof("/stat")];
    int w = snprintf(dir, sizeof(dir), "%s/dev/block/%u:%u", sysroot ? sysroot : "/sys", b->major, b->minor);
    if (w < 0 || (size_t)w >= sizeof(dir))
        return ib_why(why, len, -ENAMETOOLONG, "path too long: %.60s...", dir);
    snprintf(b->stat_path, sizeof(b->stat_path), "%s/stat", dir);
    if (access(b->stat_path, R_OK) != 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return ib_why(why, len, -ENODEV, "%s is on %u:%u, which has no block device statistics (no %s)", path,
                          b->major, b->minor, b->stat_path);
        return ib_why(why, len, -e, "cannot read %s: %s", b->stat_path, strerror(e));
    }
    blk_name(b, dir);
    return 0;
}

int kc_blk_read(const struct kc_blk *b, struct kc_blk_count *c, char *why, size_t len)
{
    char buf[512];
    int rc = kc_read(b->stat_path, buf, sizeof(buf), why, len);
    if (rc)
        return rc;
    rc = kc_blk_parse(buf, c, why, len);
    return rc ? in_file(rc, b->stat_path, why, len) : 0;
}

/* ---- network interfaces */

int kc_net_parse(const char *text, const char *ifname, struct kc_net_count *c, char *why, size_t len)
{
    memset(c, 0, sizeof(*c));
    const char *p = text, *ls, *le;
    for (unsigned no = 1; kc_next_line(&p, &ls, &le); no++) {
        const char *colon = memchr(ls, ':', (size_t)(le - ls)), *bar = memchr(ls, '|', (size_t)(le - ls));
        if (bar && (!colon || bar < colon))
            continue; /* the two header lines */
        const char *q = ls, *ts, *te;
        if (!kc_next_tok(&q, le, &ts, &te))
            continue;
        if (!colon)
            return ib_why(why, len, -EINVAL, "net/dev line %u: expected 'interface: 16 numbers'", no);
        const char *ns = ls, *ne = colon; /* the name, trimmed; an old kernel glued "eth0:123" */
        while (ns < ne && (*ns == ' ' || *ns == '\t'))
            ns++;
        if (ns == ne)
            return ib_why(why, len, -EINVAL, "net/dev line %u: no interface name before ':'", no);
        uint64_t v[16];
        int n = 0;
        q = colon + 1;
        while (kc_next_tok(&q, le, &ts, &te)) {
            if (n == 16)
                return ib_why(why, len, -EINVAL, "net/dev line %u: " TOKF " has more than 16 numbers", no,
                              TOKA(ns, ne));
            if (!kc_tok_u64(ts, te, &v[n]))
                return ib_why(why, len, -EINVAL, "net/dev line %u: " TOKF " field %d " TOKF " is not a number", no,
                              TOKA(ns, ne), n + 1, TOKA(ts, te));
            n++;
        }
        if (n != 16)
            return ib_why(why, len, -EINVAL, "net/dev line %u: " TOKF " has %d numbers, expected 16", no,
                          TOKA(ns, ne), n);
        if (ifname && !kc_tok_is(ns, ne, ifname))
            continue;
        /* fields 1, 2: received bytes, packets; 9, 10: transmitted */
        c->rx_bytes += v[0];
        c->rx_packets += v[1];
        c->tx_bytes += v[8];
        c->tx_packets += v[9];
        c->nif++;
    }
    if (ifname && !c->nif)
        return ib_why(why, len, -ENODEV, "net/dev: no interface '%.40s'", ifname);
    return 0;
}

int kc_net_read(const char *procroot, pid_t pid, const char *ifname, struct kc_net_count *c, char *why, size_t len)
{
    memset(c, 0, sizeof(*c));
    char path[512], *text = NULL;
    int rc = proc_path(path, sizeof(path), procroot, pid, "net/dev", why, len);
    if (rc)
        return rc;
    /* a host with thousands of interfaces (veths of containers) writes ~150 bytes a line */
    if ((rc = ib_read_all(path, 16 * IB_MIB, &text, NULL)) != 0)
        return ib_why(why, len, rc, "cannot read %s: %s", path, strerror(-rc));
    rc = kc_net_parse(text, ifname, c, why, len);
    free(text);
    return rc ? in_file(rc, path, why, len) : 0;
}

/* ---- resident memory */

int kc_rss_parse(const char *text, uint64_t page_size, uint64_t *bytes, char *why, size_t len)
{
    uint64_t v[7];
    int n = kc_fields_u64(text, "statm", v, 7, 7, why, len);
    if (n < 0)
        return n;
    if (page_size && v[1] > UINT64_MAX / page_size)
        return ib_why(why, len, -EINVAL, "statm: resident %llu pages is beyond 64-bit bytes",
                      (unsigned long long)v[1]);
    *bytes = v[1] * page_size;
    return 0;
}

int kc_rss_read(const char *procroot, pid_t pid, uint64_t *bytes, char *why, size_t len)
{
    char path[512], buf[256];
    int rc = proc_path(path, sizeof(path), procroot, pid, "statm", why, len);
    if (rc == 0)
        rc = kc_read(path, buf, sizeof(buf), why, len);
    if (rc)
        return rc;
    long pg = sysconf(_SC_PAGESIZE);
    rc = kc_rss_parse(buf, pg > 0 ? (uint64_t)pg : 4096, bytes, why, len);
    return rc ? in_file(rc, path, why, len) : 0;
}
