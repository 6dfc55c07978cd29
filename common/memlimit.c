/* memlimit.c - how much memory this process may use: /proc/meminfo and cgroup v1/v2 limits.
 *
 * All paths are built as `<root><absolute path>` so the same code reads the live system (root "") and the
 * fixture trees under tests/fixtures.  Every path goes through join() which refuses to truncate.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* getline() even under a strict -std=c11 */
#endif
#include "memlimit.h"

#include "ib_err.h"
#include "parse.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* cgroup v1 reports "no limit" as a huge page-rounded number (9223372036854771712 = LONG_MAX rounded down to a
 * page); anything at or above 2^62 is treated as unlimited. */
#define MLIM_V1_UNLIMITED_MIN (1ULL << 62)

/* The margin never drops below this. */
#define MLIM_MARGIN_MIN (512 * IB_MIB)

/* snprintf(buf, len, "%s%s%s", a, b, c), failing with -ENAMETOOLONG instead of truncating. */
static int join(char *buf, size_t len, const char *a, const char *b, const char *c)
{
    int n = snprintf(buf, len, "%s%s%s", a, b, c);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n >= len)
        return -ENAMETOOLONG;
    return 0;
}

/* Copy for display, truncating to len - 1 characters. */
static void copy_truncated(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Parse a decimal u64 with optional surrounding whitespace; the whole string must be consumed. */
static int parse_u64(const char *s, uint64_t *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -EINVAL;
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    if (*end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

/* Read a one-value cgroup file: a decimal number or "max" (-> MLIM_UNLIMITED). -errno if it cannot be read,
 * -EINVAL if it holds something else. */
static int read_value_file(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    char buf[64];
    bool got = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!got)
        return -EINVAL;
    if (strncmp(buf, "max", 3) == 0 && (buf[3] == '\0' || buf[3] == '\n')) {
        *out = MLIM_UNLIMITED;
        return 0;
    }
    return parse_u64(buf, out);
}

/* MemTotal and MemAvailable from <root>/proc/meminfo, in bytes. */
static int read_meminfo(struct mlim *m, const char *root)
{
    char path[PATH_MAX];
    int rc = join(path, sizeof path, root, "/proc/meminfo", "");
    if (rc)
        return rc;
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;

    bool have_total = false, have_avail = false;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        /* "MemTotal:       24684084 kB" */
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        uint64_t *dst = NULL;
        if (strcmp(line, "MemTotal") == 0)
            dst = &m->mem_total;
        else if (strcmp(line, "MemAvailable") == 0)
            dst = &m->mem_available;
        else
            continue;

        char *val = colon + 1;
        char *unit = strstr(val, " kB");
        uint64_t kb;
        if (!unit)
            continue;
        *unit = '\0';
        if (parse_u64(val, &kb) || kb > UINT64_MAX / IB_KIB)
            continue;
        *dst = kb * IB_KIB;
        if (dst == &m->mem_total)
            have_total = true;
        else
            have_avail = true;
    }
    fclose(f);
    return have_total && have_avail ? 0 : -EINVAL;
}

/* Our cgroup paths from <root>/proc/self/cgroup: the v1 memory controller's (if listed) and the v2 "0::"
 * one.  A missing file leaves both empty and is not an error. */
static int read_self_cgroup(const char *root, char *v1, char *v2, size_t len)
{
    char path[PATH_MAX];
    int rc = join(path, sizeof path, root, "/proc/self/cgroup", "");
    if (rc)
        return rc;
    v1[0] = v2[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;

    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    rc = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        /* "hierarchy-id:controller,list:/path"; the path may itself contain ':' so split on the first two. */
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = '\0';
        const char *id = line, *ctrls = c1 + 1, *cgpath = c2 + 1;
        char *dst = NULL;

        if (strcmp(id, "0") == 0 && *ctrls == '\0') {
            dst = v2;
        } else {
            /* Exact match of "memory" in the comma-separated list (not e.g. "name=memory_x"). */
            for (const char *p = ctrls; *p;) {
                size_t tok = strcspn(p, ",");
                if (tok == 6 && strncmp(p, "memory", 6) == 0)
                    dst = v1;
                p += tok;
                if (*p == ',')
                    p++;
            }
        }
        if (dst) {
            int w = snprintf(dst, len, "%s", cgpath);
            if (w < 0 || (size_t)w >= len) {
                rc = -ENAMETOOLONG;
                break;
            }
        }
    }
    free(line);
    fclose(f);
    return rc;
}

/* One cgroup hierarchy's file names and its notion of "no limit". */
struct cg_flavor {
    const char *mount;    /* under root */
    const char *limit;    /* file name */
    const char *usage;    /* file name */
    uint64_t unlimited_min; /* limit values >= this mean unlimited */
};

static const struct cg_flavor cg_v1 = {
    "/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes", MLIM_V1_UNLIMITED_MIN,
};
static const struct cg_flavor cg_v2 = {
    "/sys/fs/cgroup", "memory.max", "memory.current", MLIM_UNLIMITED,
};

/* Read one value file under dir; absent (or not a directory on the way) is "no value", not an error. */
static int read_cg_file(const char *dir, const char *name, uint64_t *val, bool *have)
{
    char path[PATH_MAX];
    int rc = join(path, sizeof path, dir, "/", name);
    if (rc)
        return rc;
    rc = read_value_file(path, val);
    *have = rc == 0;
    if (rc == -ENOENT || rc == -ENOTDIR)
        rc = 0;
    return rc;
}

/* True if path has a ".." component: a cgroup namespace shows cgroups outside it as "/../x", which must not
 * send the walk above the mount. */
static bool has_dotdot(const char *path)
{
    for (const char *p = strstr(path, "/.."); p; p = strstr(p + 1, "/.."))
        if (p[3] == '/' || p[3] == '\0')
            return true;
    return false;
}

/* Walk from <base><cgpath> up to <base>, keeping the tightest limit and the usage of the cgroup that set it.
 * If <base><cgpath> does not exist (a cgroup namespace hides it from us) or lies outside <base>, start at <base>
 * itself. */
static int walk_cgroup(struct mlim *m, const char *base, const char *cgpath, const struct cg_flavor *fl)
{
    char rel[PATH_MAX];
    int rc = join(rel, sizeof rel, cgpath, "", "");
    if (rc)
        return rc;
    /* Drop trailing slashes so "/" becomes "" (the mount itself) and "/a/b/" becomes "/a/b". */
    size_t n = strlen(rel);
    while (n > 0 && rel[n - 1] == '/')
        rel[--n] = '\0';

    char dir[PATH_MAX];
    rc = join(dir, sizeof dir, base, rel, "");
    if (rc)
        return rc;
    if (has_dotdot(rel) || !is_dir(dir))
        rel[0] = '\0';

    bool first = true;
    for (;;) {
        rc = join(dir, sizeof dir, base, rel, "");
        if (rc)
            return rc;

        uint64_t limit = MLIM_UNLIMITED, usage = 0;
        bool have_limit, have_usage;
        rc = read_cg_file(dir, fl->limit, &limit, &have_limit);
        if (rc)
            return rc;
        rc = read_cg_file(dir, fl->usage, &usage, &have_usage);
        if (rc)
            return rc;
        if (!have_limit || limit >= fl->unlimited_min)
            limit = MLIM_UNLIMITED;
        if (!have_usage)
            usage = 0;

        /* Our own cgroup's usage is reported even when nothing is limited; an ancestor replaces it only with
         * a strictly tighter limit. */
        if (first || limit < m->cg_limit) {
            m->cg_limit = limit;
            m->cg_usage = usage;
            first = false;
        }

        if (rel[0] == '\0')
            break;
        char *slash = strrchr(rel, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
    return 0;
}

int mlim_read(struct mlim *m, const char *root)
{
    if (!m)
        return -EINVAL;
    if (!root)
        root = "";
    memset(m, 0, sizeof *m);
    m->cg_limit = MLIM_UNLIMITED;

    int rc = read_meminfo(m, root);
    if (rc)
        return rc;

    /* Full-length paths for the walk; m->cg_path gets a (possibly truncated) copy for display. */
    char v1path[PATH_MAX], v2path[PATH_MAX];
    rc = read_self_cgroup(root, v1path, v2path, sizeof v1path);
    if (rc)
        return rc;

    char base[PATH_MAX], probe[PATH_MAX];

    /* v1 memory controller first: on hybrid systems it is the one that enforces limits. */
    if (v1path[0]) {
        rc = join(base, sizeof base, root, cg_v1.mount, "");
        if (rc)
            return rc;
        if (is_dir(base)) {
            rc = walk_cgroup(m, base, v1path, &cg_v1);
            if (rc)
                return rc;
            m->cg_version = 1;
            copy_truncated(m->cg_path, sizeof m->cg_path, v1path);
            return 0;
        }
    }

    /* v2: needs the "0::" line and a unified hierarchy mounted at /sys/fs/cgroup. */
    if (v2path[0]) {
        rc = join(base, sizeof base, root, cg_v2.mount, "");
        if (rc)
            return rc;
        rc = join(probe, sizeof probe, base, "/cgroup.controllers", "");
        if (rc)
            return rc;
        if (exists(probe)) {
            rc = walk_cgroup(m, base, v2path, &cg_v2);
            if (rc)
                return rc;
            m->cg_version = 2;
            copy_truncated(m->cg_path, sizeof m->cg_path, v2path);
            return 0;
        }
    }
    return 0;
}

uint64_t mlim_margin(const struct mlim *m)
{
    uint64_t base = m->mem_total;
    if (m->cg_limit < base)
        base = m->cg_limit;
    uint64_t margin = base / 10;
    return margin > MLIM_MARGIN_MIN ? margin : MLIM_MARGIN_MIN;
}

uint64_t mlim_spare(const struct mlim *m)
{
    uint64_t avail = m->mem_available;
    if (m->cg_limit != MLIM_UNLIMITED) {
        uint64_t room = m->cg_limit > m->cg_usage ? m->cg_limit - m->cg_usage : 0;
        if (room < avail)
            avail = room;
    }
    uint64_t margin = mlim_margin(m);
    return avail > margin ? avail - margin : 0;
}

uint64_t mlim_cap(const struct mlim *m, uint64_t max_bytes)
{
    uint64_t spare = mlim_spare(m);
    return max_bytes != 0 && max_bytes < spare ? max_bytes : spare;
}

int mlim_check(const struct mlim *m, uint64_t n, uint64_t each, const char *what, char *why, size_t len)
{
    struct mlim live;
    if (!m) {
        int rc = mlim_read(&live, "");
        if (rc < 0)
            return ib_why(why, len, rc, "%s: cannot read the memory limits: %s", what, strerror(-rc));
        m = &live;
    }
    uint64_t need, spare = mlim_spare(m);
    int wraps = __builtin_mul_overflow(n, each, &need);
    if (!wraps && need <= spare)
        return 0;
    char a[32], b[32], c[32], d[32];
    return ib_why(why, len, -E2BIG,
                  "%s %s%s, more than this machine can spare (%s: the smaller of MemAvailable %s and the "
                  "cgroup's room, less a %s margin%s)",
                  what, wraps ? "more than " : "", fmt_bytes(wraps ? 0x1p64 : (double)need, a, sizeof(a)),
                  fmt_bytes((double)spare, b, sizeof(b)), fmt_bytes((double)m->mem_available, c, sizeof(c)),
                  fmt_bytes((double)mlim_margin(m), d, sizeof(d)),
                  m->cg_limit != MLIM_UNLIMITED ? ", within the cgroup limit" : "");
}
