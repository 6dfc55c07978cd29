/* resctrl.c - a resctrl monitoring group of a set of threads (resctrl.h). */
#define _GNU_SOURCE
#include "resctrl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ib_err.h"
#include "kcount.h"
#include "readfile.h"

#define ROOT_MAX 256

static const char *root_of(const char *root) { return root ? root : "/sys/fs/resctrl"; }

int resctrl_mon_features(const char *root, struct resctrl_features *f, char *why, size_t len)
{
    memset(f, 0, sizeof(*f));
    root = root_of(root);
    if (strlen(root) >= ROOT_MAX)
        return ib_why(why, len, -ENAMETOOLONG, "path too long: %.60s...", root);
    char path[ROOT_MAX + 64], buf[4096];
    snprintf(path, sizeof(path), "%s/info", root);
    if (access(path, F_OK) != 0)
        return ib_why(why, len, -ENOTSUP, "no resctrl monitoring: %s is not mounted", root);
    snprintf(path, sizeof(path), "%s/info/L3_MON/mon_features", root);
    if (ib_read_small(path, buf, sizeof(buf)) != 0)
        return ib_why(why, len, -ENOTSUP, "no resctrl monitoring: the CPU has no L3 monitoring (no %s)", path);
    const char *p = buf, *ls, *le;
    while (kc_next_line(&p, &ls, &le)) {
        const char *q = ls, *ts, *te;
        if (!kc_next_tok(&q, le, &ts, &te))
            continue;
        f->llc = f->llc || kc_tok_is(ts, te, "llc_occupancy");
        f->mbm_total = f->mbm_total || kc_tok_is(ts, te, "mbm_total_bytes");
        f->mbm_local = f->mbm_local || kc_tok_is(ts, te, "mbm_local_bytes");
    }
    return 0;
}

int resctrl_mon_add(struct resctrl_mon *m, pid_t tid, char *why, size_t len)
{
    if (!m->dir[0])
        return ib_why(why, len, -EINVAL, "resctrl group not open");
    if (tid <= 0) /* the kernel reads 0 as the writer itself */
        return ib_why(why, len, -EINVAL, "not a thread id: %d", (int)tid);
    char tasks[sizeof(m->dir) + 8];
    snprintf(tasks, sizeof(tasks), "%s/tasks", m->dir);
    /* one thread id a write; O_CREAT|O_APPEND for a fixture tree, where no kernel made the file */
    int fd = open(tasks, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return ib_why(why, len, -errno, "cannot open %s: %s", tasks, strerror(errno));
    char line[32];
    int n = snprintf(line, sizeof(line), "%d\n", (int)tid);
    ssize_t w = write(fd, line, (size_t)n);
    int e = w == n ? 0 : w < 0 ? errno : EIO;
    close(fd);
    if (e == ESRCH)
        return ib_why(why, len, -ESRCH, "thread %d has ended", (int)tid);
    if (e == EINVAL)
        return ib_why(why, len, -EINVAL, "thread %d is in another resctrl control group (the kernel refuses to move it "
                                         "to %s)", (int)tid, m->dir);
    if (e)
        return ib_why(why, len, -e, "cannot write thread %d to %s: %s", (int)tid, tasks, strerror(e));
    return 0;
}

int resctrl_mon_open(struct resctrl_mon *m, const char *root, const char *name, const pid_t *tids, size_t ntids,
                     char *why, size_t len)
{
    memset(m, 0, sizeof(*m));
    struct resctrl_features f;
    int rc = resctrl_mon_features(root, &f, why, len);
    if (rc)
        return rc;
    if (!f.llc && !f.mbm_total && !f.mbm_local)
        return ib_why(why, len, -ENOTSUP, "no resctrl monitoring: the CPU has no llc_occupancy, mbm_total_bytes or "
                                          "mbm_local_bytes");
    char dir[sizeof(m->dir)];
    int w = name ? snprintf(dir, sizeof(dir), "%s/mon_groups/%s", root_of(root), name)
                 : snprintf(dir, sizeof(dir), "%s/mon_groups/ibench-%d", root_of(root), (int)getpid());
    if (w < 0 || (size_t)w >= sizeof(dir) - 16 || (name && (!*name || strchr(name, '/'))))
        return ib_why(why, len, -EINVAL, "not a resctrl group name: '%.60s'", name ? name : "");
    int e = mkdir(dir, 0755) == 0 ? 0 : errno;
    if (e == EEXIST && rmdir(dir) == 0) /* left by a killed process of the same name */
        e = mkdir(dir, 0755) == 0 ? 0 : errno;
    if (e)
        return ib_why(why, len, -e, "cannot make the resctrl group %s: %s%s", dir, strerror(e),
                      e == EACCES || e == EPERM ? " (resctrl needs root)"
                      : e == ENOSPC           ? " (no free RMID: too many monitoring groups)"
                                              : "");
    snprintf(m->dir, sizeof(m->dir), "%s", dir);
    m->llc = f.llc;
    m->mbm_total = f.mbm_total;
    m->mbm_local = f.mbm_local;
    size_t moved = 0;
    for (size_t i = 0; i < ntids; i++) {
        rc = resctrl_mon_add(m, tids[i], why, len);
        if (rc == -ESRCH)
            continue;
        if (rc) {
            resctrl_mon_close(m);
            return rc;
        }
        moved++;
    }
    if (ntids && !moved) {
        resctrl_mon_close(m);
        return ib_why(why, len, -ESRCH, "none of the %zu threads to monitor is there any more", ntids);
    }
    return 0;
}

/* One domain's file: *v += its number; *ok false when the kernel says "Unavailable" or "Error". */
static int dom_value(const char *path, uint64_t *v, bool *ok, char *why, size_t len)
{
    char buf[4096];
    int rc = kc_read(path, buf, sizeof(buf), why, len);
    if (rc)
        return rc;
    if (!strncmp(buf, "Unavailable", 11) || !strncmp(buf, "Error", 5)) {
        *ok = false; /* the RMID's counter could not be read now */
        return 0;
    }
    uint64_t x;
    rc = kc_number(buf, path, &x, why, len);
    if (rc)
        return rc;
    *v += x;
    return 0;
}

int resctrl_mon_read(const struct resctrl_mon *m, struct resctrl_count *c, char *why, size_t len)
{
    memset(c, 0, sizeof(*c));
    if (!m->dir[0])
        return ib_why(why, len, -EINVAL, "resctrl group not open");
    static const char *const file[3] = {"llc_occupancy", "mbm_total_bytes", "mbm_local_bytes"};
    const bool want[3] = {m->llc, m->mbm_total, m->mbm_local};
    bool ok[3] = {m->llc, m->mbm_total, m->mbm_local};
    uint64_t sum[3] = {0};
    char dir[sizeof(m->dir) + 16], path[sizeof(dir) + 300];
    snprintf(dir, sizeof(dir), "%s/mon_data", m->dir);
    DIR *d = opendir(dir);
    if (!d)
        return ib_why(why, len, -errno, "cannot open %s: %s", dir, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "mon_L3_", 7))
            continue;
        c->domains++;
        for (int k = 0; k < 3 && rc == 0; k++) {
            snprintf(path, sizeof(path), "%s/%s/%s", dir, de->d_name, file[k]);
            if (want[k])
                rc = dom_value(path, &sum[k], &ok[k], why, len);
        }
    }
    closedir(d);
    if (rc)
        return rc;
    if (!c->domains)
        return ib_why(why, len, -EIO, "%s holds no mon_L3_* domain", dir);
    c->have_llc = ok[0];
    c->have_mbm_total = ok[1];
    c->have_mbm_local = ok[2];
    c->llc_bytes = ok[0] ? sum[0] : 0;
    c->mbm_total_bytes = ok[1] ? sum[1] : 0;
    c->mbm_local_bytes = ok[2] ? sum[2] : 0;
    return 0;
}

void resctrl_mon_close(struct resctrl_mon *m)
{
    if (!m || !m->dir[0])
        return;
    rmdir(m->dir); /* the kernel moves its tasks back to the default group */
    memset(m, 0, sizeof(*m));
}
