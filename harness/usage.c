/* usage.c - a target's pressure window by window, from its cgroup or its processes (usage.h). */
#define _GNU_SOURCE
#include "usage.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ib_err.h"
#include "kcount.h"
#include "readfile.h"
#include "resctrl.h"
#include "stats.h"

/* ---- text (lines, tokens, numbers: kcount.h's kc_next_line, kc_next_tok, kc_tok_is, kc_tok_u64) */

/* "MAJ:MIN" */
static bool tok_dev(const char *s, const char *e)
{
    const char *colon = memchr(s, ':', (size_t)(e - s));
    uint64_t v;
    return colon && kc_tok_u64(s, colon, &v) && kc_tok_u64(colon + 1, e, &v);
}

/* A token quoted in a reason: at most 40 characters of it. */
#define TOKF "'%.*s'"
#define TOKA(s, e) (int)((e) - (s) > 40 ? 40 : (e) - (s)), (s)

/* ---- parsers */

int usage_parse_io_stat(const char *text, struct usage_io *io, char *why, size_t len)
{
    static const char *const keys[4] = {"rbytes", "wbytes", "rios", "wios"};
    memset(io, 0, sizeof(*io));
    const char *p = text, *ls, *le;
    for (unsigned no = 1; kc_next_line(&p, &ls, &le); no++) {
        const char *q = ls, *ts, *te;
        if (!kc_next_tok(&q, le, &ts, &te))
            continue; /* an empty line */
        if (!tok_dev(ts, te))
            return ib_why(why, len, -EINVAL, "io.stat line %u: " TOKF " is not a MAJ:MIN device", no, TOKA(ts, te));
        uint64_t v[4] = {0};
        bool seen[4] = {false};
        while (kc_next_tok(&q, le, &ts, &te)) {
            const char *eq = memchr(ts, '=', (size_t)(te - ts));
            if (!eq || eq == ts)
                return ib_why(why, len, -EINVAL, "io.stat line %u: " TOKF " is not key=value", no, TOKA(ts, te));
            for (int k = 0; k < 4; k++) {
                if (!kc_tok_is(ts, eq, keys[k]))
                    continue;
                if (seen[k])
                    return ib_why(why, len, -EINVAL, "io.stat line %u: %s= twice", no, keys[k]);
                if (!kc_tok_u64(eq + 1, te, &v[k]))
                    return ib_why(why, len, -EINVAL, "io.stat line %u: %s=" TOKF " is not a number", no, keys[k],
                                  TOKA(eq + 1, te));
                seen[k] = true;
            }
        }
        for (int k = 0; k < 4; k++)
            if (!seen[k])
                return ib_why(why, len, -EINVAL, "io.stat line %u: no %s=", no, keys[k]);
        io->read_bytes += v[0];
        io->write_bytes += v[1];
        io->read_ops += v[2];
        io->write_ops += v[3];
    }
    return 0;
}

int usage_parse_blkio(const char *text, uint64_t *rd, uint64_t *wr, char *why, size_t len)
{
    static const char *const ignored[] = {"Sync", "Async", "Discard", "Total"};
    *rd = *wr = 0;
    const char *p = text, *ls, *le;
    for (unsigned no = 1; kc_next_line(&p, &ls, &le); no++) {
        const char *q = ls, *t[4][2];
        int n = 0;
        while (n < 4 && kc_next_tok(&q, le, &t[n][0], &t[n][1]))
            n++;
        if (n == 0)
            continue;
        uint64_t v;
        if (n == 2 && kc_tok_is(t[0][0], t[0][1], "Total")) {
            if (!kc_tok_u64(t[1][0], t[1][1], &v))
                return ib_why(why, len, -EINVAL, "blkio line %u: Total " TOKF " is not a number", no,
                              TOKA(t[1][0], t[1][1]));
            continue;
        }
        if (n != 3 || !tok_dev(t[0][0], t[0][1]))
            return ib_why(why, len, -EINVAL, "blkio line %u: expected 'MAJ:MIN Read|Write|... N' or 'Total N'", no);
        if (!kc_tok_u64(t[2][0], t[2][1], &v))
            return ib_why(why, len, -EINVAL, "blkio line %u: " TOKF " is not a number", no, TOKA(t[2][0], t[2][1]));
        if (kc_tok_is(t[1][0], t[1][1], "Read")) {
            *rd += v;
            continue;
        }
        if (kc_tok_is(t[1][0], t[1][1], "Write")) {
            *wr += v;
            continue;
        }
        bool known = false;
        for (size_t i = 0; i < IB_ARRAY_SIZE(ignored); i++)
            known = known || kc_tok_is(t[1][0], t[1][1], ignored[i]);
        if (!known)
            return ib_why(why, len, -EINVAL, "blkio line %u: unknown operation " TOKF, no, TOKA(t[1][0], t[1][1]));
    }
    return 0;
}

int usage_parse_proc_io(const char *text, struct usage_io *io, char *why, size_t len)
{
    static const char *const keys[4] = {"read_bytes", "write_bytes", "syscr", "syscw"};
    uint64_t v[4] = {0};
    bool seen[4] = {false};
    const char *p = text, *ls, *le;
    for (unsigned no = 1; kc_next_line(&p, &ls, &le); no++) {
        const char *q = ls, *ks, *ke, *vs, *ve;
        if (!kc_next_tok(&q, le, &ks, &ke))
            continue;
        if (ke - ks < 2 || ke[-1] != ':' || !kc_next_tok(&q, le, &vs, &ve))
            return ib_why(why, len, -EINVAL, "io line %u: expected 'name: N'", no);
        for (int k = 0; k < 4; k++) {
            if (!kc_tok_is(ks, ke - 1, keys[k]))
                continue;
            if (!kc_tok_u64(vs, ve, &v[k]))
                return ib_why(why, len, -EINVAL, "io line %u: %s " TOKF " is not a number", no, keys[k],
                              TOKA(vs, ve));
            seen[k] = true;
        }
    }
    for (int k = 0; k < 4; k++)
        if (!seen[k])
            return ib_why(why, len, -EINVAL, "io: no %s line", keys[k]);
    io->read_bytes = v[0];
    io->write_bytes = v[1];
    io->read_ops = v[2];
    io->write_ops = v[3];
    return 0;
}

int usage_parse_cpu_stat(const char *text, uint64_t *cpu_ns, char *why, size_t len)
{
    bool seen = false;
    const char *p = text, *ls, *le;
    for (unsigned no = 1; kc_next_line(&p, &ls, &le); no++) {
        const char *q = ls, *ks, *ke, *vs, *ve;
        if (!kc_next_tok(&q, le, &ks, &ke))
            continue;
        if (!kc_next_tok(&q, le, &vs, &ve))
            return ib_why(why, len, -EINVAL, "cpu.stat line %u: expected 'name N'", no);
        if (!kc_tok_is(ks, ke, "usage_usec"))
            continue;
        uint64_t us;
        if (!kc_tok_u64(vs, ve, &us) || us > UINT64_MAX / 1000)
            return ib_why(why, len, -EINVAL, "cpu.stat line %u: usage_usec " TOKF " is not a number", no,
                          TOKA(vs, ve));
        *cpu_ns = us * 1000;
        seen = true;
    }
    return seen ? 0 : ib_why(why, len, -EINVAL, "cpu.stat: no usage_usec line");
}

int usage_parse_number(const char *text, const char *name, uint64_t *v, char *why, size_t len)
{
    return kc_number(text, name, v, why, len);
}

int usage_parse_net_dev(const char *text, struct usage_net *net, char *why, size_t len)
{
    memset(net, 0, sizeof(*net));
    struct kc_net_count all, lo;
    int rc = kc_net_parse(text, NULL, &all, why, len);
    if (rc)
        return rc;
    if (kc_net_parse(text, "lo", &lo, NULL, 0) != 0) /* no lo line: nothing to take off */
        memset(&lo, 0, sizeof(lo));
    /* received plus transmitted on every interface; lo's received are its transmitted: counted once */
    net->bytes = all.rx_bytes - lo.rx_bytes + all.tx_bytes;
    net->packets = all.rx_packets - lo.rx_packets + all.tx_packets;
    return 0;
}

int usage_parse_schedstat(const char *text, uint64_t *run_ns, char *why, size_t len)
{
    uint64_t v[3];
    int rc = kc_fields_u64(text, "schedstat", v, 3, 3, why, len);
    if (rc < 0)
        return rc;
    *run_ns = v[0];
    return 0;
}

int usage_parse_statm(const char *text, uint64_t page_size, uint64_t *rss_bytes, char *why, size_t len)
{
    return kc_rss_parse(text, page_size, rss_bytes, why, len);
}

/* /proc/PID/stat: "pid (comm) state ppid ... starttime(22) ...". comm may hold spaces and parentheses, so fields
 * count from the last ')'. */
static int parse_proc_stat(const char *text, char *state, pid_t *ppid, uint64_t *start, char *why, size_t len)
{
    const char *rp = strrchr(text, ')');
    const char *e = rp ? rp + strlen(rp) : NULL, *q = rp ? rp + 1 : NULL, *ts, *te;
    uint64_t v = 0;
    for (int field = 3; rp && field <= 22; field++) {
        if (!kc_next_tok(&q, e, &ts, &te))
            break;
        if (field == 3)
            *state = *ts;
        else if (field == 4 || field == 22) {
            if (!kc_tok_u64(ts, te, &v))
                return ib_why(why, len, -EINVAL, "stat: field %d " TOKF " is not a number", field, TOKA(ts, te));
            if (field == 22) {
                *start = v;
                return 0;
            }
            *ppid = (pid_t)v;
        }
    }
    return ib_why(why, len, -EINVAL, "stat: no 'pid (comm) state ppid ... starttime' fields");
}

/* ---- shared by the readers */

#define USAGE_BUF (64 * 1024) /* a cgroup.procs of a few thousand pids, an io.stat of hundreds of devices */

/* Parse a file's text, prefixing the parser's reason with the path. */
#define PARSED(rc, path, why, len)                                                                                    \
    do {                                                                                                              \
        if ((rc) != 0) {                                                                                              \
            char inner_[200];                                                                                         \
            snprintf(inner_, sizeof(inner_), "%s", why ? why : "");                                                   \
            return ib_why(why, len, rc, "%s: %s", path, inner_);                                                      \
        }                                                                                                             \
    } while (0)

static bool file_there(const char *path) { return access(path, F_OK) == 0; }

/* A path the source keeps, with room for the longest name it appends: -ENAMETOOLONG with why otherwise. */
static int path_fits(const char *path, size_t room, char *why, size_t len)
{
    return strlen(path) < room ? 0 : ib_why(why, len, -ENAMETOOLONG, "path too long: %.60s...", path);
}

/* ---- cgroup v2 */

struct cg2 {
    char io[512], cpu[512], mem[512];
    bool have_io, have_mem;
    char buf[USAGE_BUF];
};

static int cg2_read(void *ctx, struct usage_snap *s, char *why, size_t len)
{
    struct cg2 *c = ctx;
    int rc;
    if (c->have_io) {
        struct usage_io io;
        if ((rc = kc_read(c->io, c->buf, sizeof(c->buf), why, len)) != 0)
            return rc;
        rc = usage_parse_io_stat(c->buf, &io, why, len);
        PARSED(rc, c->io, why, len);
        s->read_bytes = io.read_bytes;
        s->write_bytes = io.write_bytes;
        s->read_ops = io.read_ops;
        s->write_ops = io.write_ops;
        s->have_io = true;
    }
    if ((rc = kc_read(c->cpu, c->buf, sizeof(c->buf), why, len)) != 0)
        return rc;
    rc = usage_parse_cpu_stat(c->buf, &s->cpu_ns, why, len);
    PARSED(rc, c->cpu, why, len);
    s->have_cpu = true;
    if (c->have_mem) {
        if ((rc = kc_read(c->mem, c->buf, sizeof(c->buf), why, len)) != 0)
            return rc;
        rc = usage_parse_number(c->buf, "memory.current", &s->mem_bytes, why, len);
        PARSED(rc, c->mem, why, len);
        s->have_mem = true;
    }
    return 0;
}

static void ctx_free(void *ctx) { free(ctx); }

static const struct usage_src_ops cg2_ops = {.name = "cgroup-v2", .read = cg2_read, .close = ctx_free};

int usage_src_cgroup_v2(struct usage_src *src, const char *dir, char *why, size_t len)
{
    memset(src, 0, sizeof(*src));
    int rc = path_fits(dir, sizeof(((struct cg2 *)0)->io) - sizeof("/memory.current"), why, len);
    if (rc)
        return rc;
    struct cg2 *c = calloc(1, sizeof(*c));
    if (!c)
        return ib_why(why, len, -ENOMEM, "out of memory");
    snprintf(c->io, sizeof(c->io), "%s/io.stat", dir);
    snprintf(c->cpu, sizeof(c->cpu), "%s/cpu.stat", dir);
    snprintf(c->mem, sizeof(c->mem), "%s/memory.current", dir);
    if (!file_there(c->cpu)) {
        int e = errno;
        free(c);
        return ib_why(why, len, -e, "%s/cpu.stat: %s (not a cgroup v2 directory?)", dir, strerror(e));
    }
    c->have_io = file_there(c->io);
    c->have_mem = file_there(c->mem);
    src->ops = &cg2_ops;
    src->ctx = c;
    return 0;
}

/* ---- cgroup v1 */

struct cg1 {
    char bytes[512], ops[512], cpu[512], mem[512]; /* "" where absent */
    char buf[USAGE_BUF];
};

static int cg1_read(void *ctx, struct usage_snap *s, char *why, size_t len)
{
    struct cg1 *c = ctx;
    int rc;
    if (c->bytes[0]) {
        if ((rc = kc_read(c->bytes, c->buf, sizeof(c->buf), why, len)) != 0)
            return rc;
        rc = usage_parse_blkio(c->buf, &s->read_bytes, &s->write_bytes, why, len);
        PARSED(rc, c->bytes, why, len);
        if ((rc = kc_read(c->ops, c->buf, sizeof(c->buf), why, len)) != 0)
            return rc;
        rc = usage_parse_blkio(c->buf, &s->read_ops, &s->write_ops, why, len);
        PARSED(rc, c->ops, why, len);
        s->have_io = true;
    }
    if (c->cpu[0]) {
        if ((rc = kc_read(c->cpu, c->buf, sizeof(c->buf), why, len)) != 0)
            return rc;
        rc = usage_parse_number(c->buf, "cpuacct.usage", &s->cpu_ns, why, len);
        PARSED(rc, c->cpu, why, len);
        s->have_cpu = true;
    }
    if (c->mem[0]) {
        if ((rc = kc_read(c->mem, c->buf, sizeof(c->buf), why, len)) != 0)
            return rc;
        rc = usage_parse_number(c->buf, "memory.usage_in_bytes", &s->mem_bytes, why, len);
        PARSED(rc, c->mem, why, len);
        s->have_mem = true;
    }
    return 0;
}

static const struct usage_src_ops cg1_ops = {.name = "cgroup-v1", .read = cg1_read, .close = ctx_free};

/* dir/name into out when dir is given: 0, or -errno with why when the file is not there. */
static int cg1_file(char *out, size_t outlen, const char *dir, const char *name, char *why, size_t len)
{
    out[0] = '\0';
    if (!dir)
        return 0;
    snprintf(out, outlen, "%s/%s", dir, name);
    if (file_there(out))
        return 0;
    int e = errno;
    return ib_why(why, len, -e, "%s: %s", out, strerror(e));
}

int usage_src_cgroup_v1(struct usage_src *src, const char *blkio_dir, const char *cpuacct_dir, const char *memory_dir,
                        char *why, size_t len)
{
    memset(src, 0, sizeof(*src));
    const size_t room = sizeof(((struct cg1 *)0)->bytes) - sizeof("/blkio.throttle.io_service_bytes");
    const char *dirs[] = {blkio_dir, cpuacct_dir, memory_dir};
    for (size_t i = 0; i < IB_ARRAY_SIZE(dirs); i++) {
        int rc = dirs[i] ? path_fits(dirs[i], room, why, len) : 0;
        if (rc)
            return rc;
    }
    struct cg1 *c = calloc(1, sizeof(*c));
    if (!c)
        return ib_why(why, len, -ENOMEM, "out of memory");
    int rc = cg1_file(c->bytes, sizeof(c->bytes), blkio_dir, "blkio.throttle.io_service_bytes", why, len);
    if (rc == 0)
        rc = cg1_file(c->ops, sizeof(c->ops), blkio_dir, "blkio.throttle.io_serviced", why, len);
    if (rc == 0)
        rc = cg1_file(c->cpu, sizeof(c->cpu), cpuacct_dir, "cpuacct.usage", why, len);
    if (rc == 0)
        rc = cg1_file(c->mem, sizeof(c->mem), memory_dir, "memory.usage_in_bytes", why, len);
    if (rc) {
        free(c);
        return rc;
    }
    src->ops = &cg1_ops;
    src->ctx = c;
    return 0;
}

/* ---- the process set */

enum { IO_RB, IO_WB, IO_RO, IO_WO, IO_N };

/* A process the set has seen: its kernel counters at the last read, and what the source still owes its parent. */
struct ps_proc {
    pid_t pid, ppid;
    uint64_t start; /* starttime: tells a new process under a reused pid */
    bool read_now;  /* read in this read */
    bool gone;      /* exited (or its pid reused) since the last read */
    bool have_last;
    uint64_t last[IO_N], cur[IO_N];
    /* the last counters of children that exited and whose I/O the kernel adds to this process's counters when it
     * reaps them: taken off this process's next increases, for two reads */
    uint64_t credit[IO_N];
    unsigned credit_reads;
};

struct ps_task {
    pid_t tid;
    bool seen;
    uint64_t last_ns;
};

/* A network namespace the set's processes were found in: its counters at the last read. */
struct ps_ns {
    char id[64]; /* the /proc/PID/ns/net link, "net:[4026531840]" */
    bool seen;
    uint64_t last_b, last_p;
};

struct ps {
    char root[256];
    char procs[512]; /* the cgroup.procs read, or "" */
    pid_t tree;      /* the tree's root pid, or 0 */
    bool started;    /* a first read (the baseline) was made */
    bool no_io, no_cpu; /* /proc/PID/io or schedstat is missing on this kernel */
    struct ps_proc *p;
    size_t np, pcap;
    struct ps_task *t;
    size_t nt, tcap;
    pid_t *list;
    size_t nl, lcap;
    uint64_t tot[IO_N], cpu_tot;
    struct ps_ns *ns;
    size_t nns, nscap;
    uint64_t net_b, net_p;
    char buf[USAGE_BUF];
};

static int grow(void **a, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*a, nc * elem);
    if (!q)
        return -ENOMEM;
    *a = q;
    *cap = nc;
    return 0;
}

static struct ps_proc *ps_find(struct ps *c, pid_t pid)
{
    for (size_t i = 0; i < c->np; i++)
        if (c->p[i].pid == pid)
            return &c->p[i];
    return NULL;
}

static bool listed(const struct ps *c, pid_t pid)
{
    for (size_t i = 0; i < c->nl; i++)
        if (c->list[i] == pid)
            return true;
    return false;
}

static int list_add(struct ps *c, pid_t pid)
{
    if (listed(c, pid))
        return 0;
    if (grow((void **)&c->list, &c->lcap, c->nl + 1, sizeof(pid_t)))
        return -ENOMEM;
    c->list[c->nl++] = pid;
    return 0;
}

/* The decimal pids of text (one per line, or space-separated as in a children file) into the list. */
static int list_parse(struct ps *c, const char *text, const char *name, char *why, size_t len)
{
    const char *p = text, *ls, *le;
    for (unsigned no = 1; kc_next_line(&p, &ls, &le); no++) {
        const char *q = ls, *ts, *te;
        uint64_t v;
        while (kc_next_tok(&q, le, &ts, &te)) {
            if (!kc_tok_u64(ts, te, &v) || v == 0 || v > 0x7fffffff)
                return ib_why(why, len, -EINVAL, "%s line %u: " TOKF " is not a pid", name, no, TOKA(ts, te));
            if (list_add(c, (pid_t)v))
                return ib_why(why, len, -ENOMEM, "out of memory");
        }
    }
    return 0;
}

/* The members now: the cgroup.procs list, or the tree walked from its root through every thread's children. */
static int ps_list(struct ps *c, char *why, size_t len)
{
    c->nl = 0;
    char path[768];
    if (!c->tree) {
        int rc = kc_read(c->procs, c->buf, sizeof(c->buf), why, len);
        return rc ? rc : list_parse(c, c->buf, c->procs, why, len);
    }
    snprintf(path, sizeof(path), "%s/%d/task", c->root, (int)c->tree);
    if (!file_there(path))
        return ib_why(why, len, -ESRCH, "process %d is gone", (int)c->tree);
    if (list_add(c, c->tree))
        return ib_why(why, len, -ENOMEM, "out of memory");
    for (size_t i = 0; i < c->nl; i++) { /* the list grows as the walk finds children */
        snprintf(path, sizeof(path), "%s/%d/task", c->root, (int)c->list[i]);
        DIR *d = opendir(path);
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL) {
            if (de->d_name[0] < '0' || de->d_name[0] > '9')
                continue;
            char cpath[sizeof(path) + sizeof(de->d_name) + 16];
            snprintf(cpath, sizeof(cpath), "%s/%s/children", path, de->d_name);
            /* a thread that ended meanwhile has no children to list */
            if (ib_read_small(cpath, c->buf, sizeof(c->buf)) != 0)
                continue;
            int rc = list_parse(c, c->buf, cpath, why, len);
            if (rc) {
                closedir(d);
                return rc;
            }
        }
        if (d)
            closedir(d);
    }
    return 0;
}

/* -ENOENT or -ESRCH: the process exited under us. */
static bool vanished(int rc) { return rc == -ENOENT || rc == -ESRCH; }

/* The stat of pid: 0, -ENOENT/-ESRCH when it is gone, or -errno with why. */
static int ps_stat(struct ps *c, pid_t pid, char *state, pid_t *ppid, uint64_t *start, char *why, size_t len)
{
    char path[384];
    snprintf(path, sizeof(path), "%s/%d/stat", c->root, (int)pid);
    int rc = ib_read_small(path, c->buf, sizeof(c->buf));
    if (rc)
        return vanished(rc) ? rc : ib_why(why, len, rc, "cannot read %s: %s", path, strerror(-rc));
    rc = parse_proc_stat(c->buf, state, ppid, start, why, len);
    PARSED(rc, path, why, len);
    return 0;
}

static struct ps_task *task_find(struct ps *c, pid_t tid)
{
    for (size_t i = 0; i < c->nt; i++)
        if (c->t[i].tid == tid)
            return &c->t[i];
    return NULL;
}

/* Every thread of pid: its on-CPU ns since the last read into *cpu (a new thread from 0, after the baseline). */
static int ps_tasks(struct ps *c, pid_t pid, uint64_t *cpu, char *why, size_t len)
{
    char dir[384], path[sizeof(dir) + 256 + 16];
    snprintf(dir, sizeof(dir), "%s/%d/task", c->root, (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return -ENOENT;
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "%s/%s/schedstat", dir, de->d_name);
        uint64_t ns;
        int r = ib_read_small(path, c->buf, sizeof(c->buf));
        if (r == -ENOENT) {
            char tdir[sizeof(dir) + sizeof(de->d_name) + 2];
            snprintf(tdir, sizeof(tdir), "%s/%s", dir, de->d_name);
            if (file_there(tdir)) {
                c->no_cpu = true; /* the thread is there, its schedstat not: no CONFIG_SCHED_INFO */
                break;
            }
        }
        if (r) { /* a thread that ended meanwhile */
            if (!vanished(r))
                rc = ib_why(why, len, r, "cannot read %s: %s", path, strerror(-r));
            continue;
        }
        r = usage_parse_schedstat(c->buf, &ns, why, len);
        if (r) {
            char inner[200];
            snprintf(inner, sizeof(inner), "%s", why ? why : "");
            rc = ib_why(why, len, r, "%s: %s", path, inner);
            break;
        }
        pid_t tid = (pid_t)atoi(de->d_name);
        struct ps_task *t = task_find(c, tid);
        if (!t) {
            if (grow((void **)&c->t, &c->tcap, c->nt + 1, sizeof(*c->t))) {
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                break;
            }
            t = &c->t[c->nt++];
            t->tid = tid;
            t->last_ns = c->started ? 0 : ns; /* the baseline counts nothing; a thread born later counts from 0 */
        }
        /* a counter below the last is a new thread under a reused tid: it counts from 0 */
        *cpu += ns >= t->last_ns ? ns - t->last_ns : ns;
        t->last_ns = ns;
        t->seen = true;
    }
    closedir(d);
    return rc;
}

/* Read one process: its I/O counters into its entry (made when new), its threads' CPU and its resident memory.
 * -ENOENT/-ESRCH when it went away meanwhile (nothing is counted), or -errno with why. */
static int ps_read_proc(struct ps *c, pid_t pid, struct ps_proc *known, uint64_t *cpu, uint64_t *mem, char *why,
                        size_t len)
{
    char state = '?', path[384];
    pid_t ppid = 0;
    uint64_t start = 0;
    int rc = ps_stat(c, pid, &state, &ppid, &start, why, len);
    if (rc)
        return rc;
    struct ps_proc *e = known ? known : ps_find(c, pid);
    if (e && e->start != start) {
        e->gone = true; /* the pid now names another process: the old one exited */
        e = NULL;
    }
    struct usage_io io = {0};
    snprintf(path, sizeof(path), "%s/%d/io", c->root, (int)pid);
    rc = ib_read_small(path, c->buf, sizeof(c->buf));
    if (rc == -ENOENT && ps_stat(c, pid, &state, &ppid, &start, NULL, 0) == 0)
        c->no_io = true; /* no CONFIG_TASK_IO_ACCOUNTING */
    else if (rc)
        return vanished(rc) ? rc : ib_why(why, len, rc, "cannot read %s: %s", path, strerror(-rc));
    else {
        rc = usage_parse_proc_io(c->buf, &io, why, len);
        PARSED(rc, path, why, len);
    }
    uint64_t rss = 0;
    if ((rc = kc_rss_read(c->root, pid, &rss, why, len)) != 0)
        return rc; /* vanished, or why says what */
    rc = ps_tasks(c, pid, cpu, why, len);
    if (rc && !vanished(rc))
        return rc;
    if (!e) {
        if (grow((void **)&c->p, &c->pcap, c->np + 1, sizeof(*c->p)))
            return ib_why(why, len, -ENOMEM, "out of memory");
        e = &c->p[c->np++];
        memset(e, 0, sizeof(*e));
        e->pid = pid;
        e->start = start;
        /* the baseline counts nothing; a process that appears later counts from 0 */
        e->have_last = !c->started;
        if (e->have_last) {
            e->last[IO_RB] = io.read_bytes;
            e->last[IO_WB] = io.write_bytes;
            e->last[IO_RO] = io.read_ops;
            e->last[IO_WO] = io.write_ops;
        }
    }
    e->ppid = ppid;
    e->cur[IO_RB] = io.read_bytes;
    e->cur[IO_WB] = io.write_bytes;
    e->cur[IO_RO] = io.read_ops;
    e->cur[IO_WO] = io.write_ops;
    e->read_now = true;
    *mem += rss;
    return 0;
}

/* Who reaps e, and so has e's counters added to its own: its parent (as recorded at the last read) when that was
 * read now. A parent that exited too passes it on to its own parent: it reaped e before exiting, as a shell does
 * its last command (had it exited first, e would have gone to init, and its last counters would be taken off
 * that grandparent wrongly, for two reads). NULL when no such ancestor is in the set. */
static struct ps_proc *holder(struct ps *c, const struct ps_proc *e)
{
    pid_t pp = e->ppid;
    for (int depth = 0; depth < 64 && pp > 0; depth++) {
        struct ps_proc *h = NULL;
        for (size_t i = 0; i < c->np; i++)
            if (c->p[i].pid == pp && &c->p[i] != e && (!h || c->p[i].read_now))
                h = &c->p[i];
        if (h && h->read_now)
            return h;
        if (!h || !h->gone) /* not in the set, or left it alive */
            return NULL;
        pp = h->ppid;
    }
    return NULL;
}

/* The network namespaces of the processes read now, each once: their increases since the last read into the
 * totals (a namespace first seen counts from now, a sum that went down adds nothing). *any: one was read. */
static int ps_net(struct ps *c, bool *any, char *why, size_t len)
{
    char path[384], id[64];
    for (size_t i = 0; i < c->nns; i++)
        c->ns[i].seen = false;
    *any = false;
    for (size_t i = 0; i < c->np; i++) {
        if (!c->p[i].read_now)
            continue;
        snprintf(path, sizeof(path), "%s/%d/ns/net", c->root, (int)c->p[i].pid);
        ssize_t n = readlink(path, id, sizeof(id) - 1);
        if (n <= 0)
            continue; /* gone, a zombie, or not ours to look at: no namespace from it */
        id[n] = '\0';
        struct ps_ns *e = NULL;
        for (size_t k = 0; k < c->nns && !e; k++)
            if (!strcmp(c->ns[k].id, id))
                e = &c->ns[k];
        if (e && e->seen)
            continue;
        snprintf(path, sizeof(path), "%s/%d/net/dev", c->root, (int)c->p[i].pid);
        int rc = ib_read_small(path, c->buf, sizeof(c->buf));
        if (rc)
            continue; /* it exited meanwhile */
        struct usage_net net;
        rc = usage_parse_net_dev(c->buf, &net, why, len);
        PARSED(rc, path, why, len);
        if (!e) {
            if (grow((void **)&c->ns, &c->nscap, c->nns + 1, sizeof(*c->ns)))
                return ib_why(why, len, -ENOMEM, "out of memory");
            e = &c->ns[c->nns++];
            snprintf(e->id, sizeof(e->id), "%s", id);
        } else {
            c->net_b += net.bytes >= e->last_b ? net.bytes - e->last_b : 0;
            c->net_p += net.packets >= e->last_p ? net.packets - e->last_p : 0;
        }
        e->last_b = net.bytes;
        e->last_p = net.packets;
        e->seen = true;
        *any = true;
    }
    size_t w = 0;
    for (size_t k = 0; k < c->nns; k++)
        if (c->ns[k].seen)
            c->ns[w++] = c->ns[k];
    c->nns = w;
    return 0;
}

static int ps_read(void *ctx, struct usage_snap *s, char *why, size_t len)
{
    struct ps *c = ctx;
    int rc = ps_list(c, why, len);
    if (rc)
        return rc;
    for (size_t i = 0; i < c->np; i++)
        c->p[i].read_now = c->p[i].gone = false;
    for (size_t i = 0; i < c->nt; i++)
        c->t[i].seen = false;
    uint64_t cpu = 0, mem = 0;
    for (size_t i = 0; i < c->nl; i++) {
        rc = ps_read_proc(c, c->list[i], NULL, &cpu, &mem, why, len);
        if (rc && !vanished(rc))
            return rc;
    }
    /* Known processes not listed now: a zombie not yet reaped (cgroup.procs leaves it out) is read once more, so
     * its last window counts; one that is gone exited; one still running left the set (moved to another cgroup,
     * or re-parented out of the tree) and takes nothing with it. */
    size_t known = c->np;
    for (size_t i = 0; i < known; i++) {
        struct ps_proc *e = &c->p[i];
        if (e->read_now || e->gone)
            continue;
        char state = '?';
        pid_t ppid;
        uint64_t start;
        rc = ps_stat(c, e->pid, &state, &ppid, &start, why, len);
        if (rc && !vanished(rc))
            return rc;
        if (rc || start != e->start)
            e->gone = true;
        else if (state == 'Z' || state == 'X') {
            rc = ps_read_proc(c, e->pid, e, &cpu, &mem, why, len); /* may move c->p */
            if (rc && !vanished(rc))
                return rc;
            c->p[i].gone = rc != 0;
        }
    }
    /* Each process that exited hands its last counters, and what it was still owed, to its nearest ancestor still
     * here: that one's counters grow by them when it reaps it. */
    for (size_t i = 0; i < c->np; i++) {
        struct ps_proc *e = &c->p[i], *h = e->gone ? holder(c, e) : NULL;
        if (!h)
            continue;
        for (int k = 0; k < IO_N; k++)
            h->credit[k] += (e->have_last ? e->last[k] : 0) + e->credit[k];
        h->credit_reads = 2;
    }
    for (size_t i = 0; i < c->np; i++) {
        struct ps_proc *e = &c->p[i];
        if (!e->read_now)
            continue;
        for (int k = 0; k < IO_N; k++) {
            uint64_t base = e->have_last ? e->last[k] : 0;
            /* below the last: counters of a new process (never a negative) */
            uint64_t d = e->cur[k] >= base ? e->cur[k] - base : e->cur[k];
            uint64_t taken = d < e->credit[k] ? d : e->credit[k];
            e->credit[k] -= taken;
            c->tot[k] += d - taken;
            e->last[k] = e->cur[k];
        }
        e->have_last = true;
        if (e->credit_reads && --e->credit_reads == 0)
            memset(e->credit, 0, sizeof(e->credit));
    }
    bool net = false;
    if ((rc = ps_net(c, &net, why, len)) != 0)
        return rc;
    /* forget the processes not read now, and the threads not seen (what they did since the last read is lost) */
    size_t w = 0;
    for (size_t i = 0; i < c->np; i++)
        if (c->p[i].read_now)
            c->p[w++] = c->p[i];
    c->np = w;
    w = 0;
    for (size_t i = 0; i < c->nt; i++)
        if (c->t[i].seen)
            c->t[w++] = c->t[i];
    c->nt = w;
    c->cpu_tot += cpu;
    c->started = true;
    s->have_io = !c->no_io;
    s->have_cpu = !c->no_cpu;
    s->have_mem = true;
    s->read_bytes = c->tot[IO_RB];
    s->write_bytes = c->tot[IO_WB];
    s->read_ops = c->tot[IO_RO];
    s->write_ops = c->tot[IO_WO];
    s->cpu_ns = c->cpu_tot;
    s->mem_bytes = mem;
    s->have_net = net;
    s->net_bytes = c->net_b;
    s->net_packets = c->net_p;
    return 0;
}

static void ps_close(void *ctx)
{
    struct ps *c = ctx;
    free(c->ns);
    free(c->p);
    free(c->t);
    free(c->list);
    free(c);
}

static const struct usage_src_ops ps_ops = {.name = "procs", .read = ps_read, .close = ps_close};

static int ps_open(struct usage_src *src, const char *root, struct ps **out, char *why, size_t len)
{
    memset(src, 0, sizeof(*src));
    if (!root)
        root = "/proc";
    int rc = path_fits(root, sizeof(((struct ps *)0)->root), why, len);
    if (rc)
        return rc;
    struct ps *c = calloc(1, sizeof(*c));
    if (!c)
        return ib_why(why, len, -ENOMEM, "out of memory");
    snprintf(c->root, sizeof(c->root), "%s", root);
    *out = c;
    src->ops = &ps_ops;
    src->ctx = c;
    return 0;
}

int usage_src_procs_cgroup(struct usage_src *src, const char *proc_root, const char *procs_file, char *why,
                           size_t len)
{
    struct ps *c;
    int rc = path_fits(procs_file, sizeof(c->procs), why, len);
    if (rc == 0)
        rc = ps_open(src, proc_root, &c, why, len);
    if (rc)
        return rc;
    snprintf(c->procs, sizeof(c->procs), "%s", procs_file);
    if (!file_there(c->procs)) {
        int e = errno;
        usage_src_close(src);
        return ib_why(why, len, -e, "%s: %s", procs_file, strerror(e));
    }
    return 0;
}

int usage_src_procs_tree(struct usage_src *src, const char *proc_root, pid_t pid, char *why, size_t len)
{
    memset(src, 0, sizeof(*src));
    if (pid <= 0)
        return ib_why(why, len, -EINVAL, "no process to follow (pid %d)", (int)pid);
    struct ps *c;
    int rc = ps_open(src, proc_root, &c, why, len);
    if (rc)
        return rc;
    c->tree = pid;
    char path[384];
    snprintf(path, sizeof(path), "%s/%d/task", c->root, (int)pid);
    if (!file_there(path)) {
        usage_src_close(src);
        return ib_why(why, len, -ESRCH, "process %d is gone (no %s)", (int)pid, path);
    }
    return 0;
}

/* ---- resctrl monitoring, added to a process set (the group itself: common/resctrl.h) */

struct rdt {
    struct usage_src inner;
    struct resctrl_mon mon;
};

static int rdt_read(void *ctx, struct usage_snap *s, char *why, size_t len)
{
    struct rdt *c = ctx;
    int rc = usage_src_read(&c->inner, s, why, len);
    if (rc)
        return rc;
    struct resctrl_count n;
    if ((rc = resctrl_mon_read(&c->mon, &n, why, len)) != 0)
        return rc;
    s->have_llc = n.have_llc;
    s->llc_bytes = n.llc_bytes;
    s->have_mbw = n.have_mbm_total;
    s->mbw_bytes = n.mbm_total_bytes;
    return 0;
}

static void rdt_close(void *ctx)
{
    struct rdt *c = ctx;
    usage_src_close(&c->inner);
    resctrl_mon_close(&c->mon);
    free(c);
}

static const struct usage_src_ops rdt_ops = {.name = "procs+resctrl", .read = rdt_read, .close = rdt_close};

/* Every thread of every process of the set now into the group. */
static int rdt_tasks(struct rdt *c, struct ps *p, char *why, size_t len)
{
    int rc = ps_list(p, why, len);
    if (rc)
        return rc;
    char dir[384];
    unsigned written = 0;
    for (size_t i = 0; i < p->nl; i++) {
        snprintf(dir, sizeof(dir), "%s/%d/task", p->root, (int)p->list[i]);
        DIR *d = opendir(dir);
        struct dirent *de;
        while (rc == 0 && d && (de = readdir(d)) != NULL) {
            if (de->d_name[0] < '0' || de->d_name[0] > '9')
                continue;
            rc = resctrl_mon_add(&c->mon, (pid_t)atoi(de->d_name), why, len);
            if (rc == -ESRCH)
                rc = 0; /* the thread ended meanwhile */
            else if (rc == 0)
                written++;
        }
        if (d)
            closedir(d);
        if (rc)
            return rc;
    }
    return written ? 0 : ib_why(why, len, -ESRCH, "no thread of the process set to monitor (it is empty)");
}

int usage_src_add_resctrl(struct usage_src *src, const char *resctrl_root, char *why, size_t len)
{
    if (!src || src->ops != &ps_ops)
        return ib_why(why, len, -EINVAL, "resctrl monitoring is added to a process set source only");
    struct resctrl_features f;
    int rc = resctrl_mon_features(resctrl_root, &f, why, len);
    if (rc)
        return rc;
    if (!f.llc && !f.mbm_total)
        return ib_why(why, len, -ENOTSUP, "no resctrl monitoring: the CPU has no llc_occupancy or mbm_total_bytes");
    struct rdt *c = calloc(1, sizeof(*c));
    if (!c)
        return ib_why(why, len, -ENOMEM, "out of memory");
    if ((rc = resctrl_mon_open(&c->mon, resctrl_root, NULL, NULL, 0, why, len)) != 0) {
        free(c);
        return rc;
    }
    c->mon.mbm_local = false; /* not a usage figure: left unread */
    c->inner = *src;
    rc = rdt_tasks(c, c->inner.ctx, why, len);
    if (rc) {
        resctrl_mon_close(&c->mon);
        free(c);
        return rc;
    }
    src->ops = &rdt_ops;
    src->ctx = c;
    return 0;
}

int usage_src_read(const struct usage_src *src, struct usage_snap *s, char *why, size_t len)
{
    if (!src || !src->ops || !src->ops->read)
        return ib_why(why, len, -EINVAL, "usage source not open");
    uint64_t t = s->t_ns;
    memset(s, 0, sizeof(*s));
    s->t_ns = t;
    return src->ops->read(src->ctx, s, why, len);
}

void usage_src_close(struct usage_src *src)
{
    if (src && src->ops && src->ops->close)
        src->ops->close(src->ctx);
    if (src)
        memset(src, 0, sizeof(*src));
}

/* ---- the sampler */

const char *const usage_metric_name[USAGE_NMETRIC] = {"read", "write",       "read-ops", "write-ops", "cpu",
                                                     "memory", "net",      "net-packets", "llc",   "mem-bw"};
const char *const usage_metric_unit[USAGE_NMETRIC] = {"B/s", "B/s",      "op/s", "op/s", "CPU",
                                                     "B",   "B/s", "packet/s", "B",    "B/s"};

static uint64_t mono_now(void *ctx)
{
    (void)ctx;
    return clk_mono_ns();
}

static void mono_sleep_until(void *ctx, uint64_t t_ns)
{
    (void)ctx;
    struct timespec ts = {.tv_sec = (time_t)(t_ns / IB_NS_PER_S), .tv_nsec = (long)(t_ns % IB_NS_PER_S)};
    /* a signal ends the sleep early: the sampler looks at its stop flag and sleeps again */
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

void usage_clock_mono(struct usage_clock *c)
{
    c->now_ns = mono_now;
    c->sleep_until = mono_sleep_until;
    c->ctx = NULL;
}

void usage_series_free(struct usage_series *s)
{
    if (!s)
        return;
    free(s->t_ns);
    for (int m = 0; m < USAGE_NMETRIC; m++)
        free(s->v[m]);
    memset(s, 0, sizeof(*s));
}

static bool stopped(const atomic_int *stop) { return stop && atomic_load(stop); }

/* A snapshot stamped halfway through its read. */
static int snap(const struct usage_src *src, const struct usage_clock *clk, struct usage_snap *s, char *why,
                size_t len)
{
    uint64_t a = clk->now_ns(clk->ctx);
    int rc = usage_src_read(src, s, why, len);
    uint64_t b = clk->now_ns(clk->ctx);
    s->t_ns = a + (b - a) / 2;
    return rc;
}

/* (b - a) per second over dt_ns; NAN when absent in either or the counter went backwards. */
static double rate(bool have, uint64_t a, uint64_t b, uint64_t dt_ns, double per)
{
    if (!have || b < a || dt_ns == 0)
        return NAN;
    return (double)(b - a) * per / (double)dt_ns;
}

int usage_sample(const struct usage_src *src, const struct usage_clock *clk, uint64_t window_ns, unsigned nwin,
                 const atomic_int *stop, struct usage_series *out, char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    if (!src || !src->ops || !clk || !clk->now_ns || !clk->sleep_until || window_ns == 0 || nwin == 0)
        return ib_why(why, len, -EINVAL, "usage_sample: no source, no clock, or no window to sample");
    out->t_ns = calloc((size_t)nwin + 1, sizeof(uint64_t));
    bool ok = out->t_ns != NULL;
    for (int m = 0; m < USAGE_NMETRIC; m++)
        ok = ok && (out->v[m] = calloc(nwin, sizeof(double))) != NULL;
    if (!ok) {
        usage_series_free(out);
        return ib_why(why, len, -ENOMEM, "out of memory for %u windows", nwin);
    }
    struct usage_snap prev, cur;
    memset(&prev, 0, sizeof(prev));
    int rc = snap(src, clk, &prev, why, len);
    if (rc)
        return rc;
    out->t_ns[0] = prev.t_ns;
    uint64_t deadline = prev.t_ns;
    for (unsigned i = 0; i < nwin; i++) {
        deadline += window_ns;
        if (deadline < prev.t_ns + window_ns / 2) /* a late read: no window shorter than half of one */
            deadline = prev.t_ns + window_ns;
        while (!stopped(stop) && clk->now_ns(clk->ctx) < deadline)
            clk->sleep_until(clk->ctx, deadline);
        if (stopped(stop))
            return ib_why(why, len, -EINTR, "stopped after %u of %u windows", out->n, nwin);
        memset(&cur, 0, sizeof(cur));
        rc = snap(src, clk, &cur, why, len);
        if (rc)
            return rc;
        uint64_t dt = cur.t_ns > prev.t_ns ? cur.t_ns - prev.t_ns : 0;
        out->v[USAGE_READ_BPS][i] = rate(prev.have_io && cur.have_io, prev.read_bytes, cur.read_bytes, dt, 1e9);
        out->v[USAGE_WRITE_BPS][i] = rate(prev.have_io && cur.have_io, prev.write_bytes, cur.write_bytes, dt, 1e9);
        out->v[USAGE_READ_OPS][i] = rate(prev.have_io && cur.have_io, prev.read_ops, cur.read_ops, dt, 1e9);
        out->v[USAGE_WRITE_OPS][i] = rate(prev.have_io && cur.have_io, prev.write_ops, cur.write_ops, dt, 1e9);
        out->v[USAGE_CPU][i] = rate(prev.have_cpu && cur.have_cpu, prev.cpu_ns, cur.cpu_ns, dt, 1.0);
        out->v[USAGE_MEM_BYTES][i] = cur.have_mem ? (double)cur.mem_bytes : NAN;
        out->v[USAGE_NET_BPS][i] = rate(prev.have_net && cur.have_net, prev.net_bytes, cur.net_bytes, dt, 1e9);
        out->v[USAGE_NET_PPS][i] = rate(prev.have_net && cur.have_net, prev.net_packets, cur.net_packets, dt, 1e9);
        out->v[USAGE_LLC_BYTES][i] = cur.have_llc ? (double)cur.llc_bytes : NAN;
        out->v[USAGE_MEMBW_BPS][i] = rate(prev.have_mbw && cur.have_mbw, prev.mbw_bytes, cur.mbw_bytes, dt, 1e9);
        out->t_ns[i + 1] = cur.t_ns;
        out->n = i + 1;
        prev = cur;
    }
    return 0;
}

/* ---- summaries */

double usage_percentile_sorted(const double *y, unsigned k, double p)
{
    if (k == 0)
        return NAN;
    double h = (double)(k - 1) * p;
    unsigned j = (unsigned)floor(h);
    if (j >= k - 1)
        return y[k - 1];
    return y[j] + (h - (double)j) * (y[j + 1] - y[j]);
}

int usage_summarise(const double *x, unsigned n, double window_s, double noise_floor, struct usage_stats *o)
{
    memset(o, 0, sizeof(*o));
    o->mean = o->p50 = o->p90 = o->max = o->duty = o->gap_mean_s = NAN;
    if ((n && !x) || !(window_s > 0) || !isfinite(noise_floor))
        return -EINVAL;
    double *all = malloc(((size_t)n + 1) * sizeof(double));
    double *act = malloc(((size_t)n + 1) * sizeof(double));
    if (!all || !act) {
        free(all);
        free(act);
        return -ENOMEM;
    }
    unsigned k = 0, ka = 0, run = 0, longest = 0, runs_len = 0, gaps = 0, gap_len = 0, idle = 0;
    double sum = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            continue; /* left out: the runs join across it */
        all[k++] = x[i];
        sum += x[i];
        if (x[i] > noise_floor) {
            act[ka++] = x[i];
            if (run == 0 && o->bursts > 0) { /* the idle run before this burst lies between two bursts */
                gaps++;
                gap_len += idle;
            }
            if (run == 0)
                o->bursts++;
            run++;
            idle = 0;
        } else {
            if (run) {
                runs_len += run;
                longest = run > longest ? run : longest;
            }
            run = 0;
            idle++;
        }
    }
    if (run) {
        runs_len += run;
        longest = run > longest ? run : longest;
    }
    o->n = k;
    if (k == 0) {
        free(all);
        free(act);
        return -ENODATA;
    }
    qsort(all, k, sizeof(double), ib_cmp_double);
    qsort(act, ka, sizeof(double), ib_cmp_double);
    o->mean = sum / k;
    o->p50 = usage_percentile_sorted(all, k, 0.5);
    o->p90 = usage_percentile_sorted(all, k, 0.9);
    o->max = all[k - 1];
    o->duty = (double)ka / k;
    o->level = ka ? usage_percentile_sorted(act, ka, 0.9) : 0.0;
    o->burst_mean_s = o->bursts ? (double)runs_len / o->bursts * window_s : 0.0;
    o->burst_max_s = longest * window_s;
    o->gap_mean_s = gaps ? (double)gap_len / gaps * window_s : NAN;
    free(all);
    free(act);
    return 0;
}
