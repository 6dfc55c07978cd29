/* fsguard.c - filesystem safety for the disk SoIs (fsguard.h). */
#define _GNU_SOURCE
#include "fsguard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "ib_err.h"

int fs_space_of(const char *path, struct fs_space *out)
{
    struct statvfs v;
    if (statvfs(path, &v) != 0)
        return -errno;
    uint64_t f = v.f_frsize ? v.f_frsize : v.f_bsize;
    out->total = (uint64_t)v.f_blocks * f;
    out->avail = (uint64_t)v.f_bavail * f;
    return 0;
}

uint64_t fs_margin(uint64_t total)
{
    uint64_t pct = (uint64_t)((double)total * FS_MARGIN_PCT / 100.0);
    return pct > FS_MARGIN_MIN ? pct : FS_MARGIN_MIN;
}

uint64_t fs_spare(const struct fs_space *s)
{
    uint64_t m = fs_margin(s->total);
    return s->avail > m ? s->avail - m : 0;
}

int fs_check_dir(const char *dir, char *why, size_t len)
{
    struct stat st;
    if (!dir || !*dir)
        return ib_why(why, len, -EINVAL, "no directory given");
    if (stat(dir, &st) != 0)
        return ib_why(why, len, -errno, "--dir %s: %s", dir, strerror(errno));
    if (S_ISBLK(st.st_mode))
        return ib_why(why, len, -EPERM, "--dir %s is a raw block device: use --device %s --force to run on it",
                      dir, dir);
    if (!S_ISDIR(st.st_mode))
        return ib_why(why, len, -ENOTDIR, "--dir %s is not a directory", dir);
    char probe[4096];
    snprintf(probe, sizeof(probe), "%s/.ibench-probe.XXXXXX", dir);
    int fd = mkostemp(probe, O_CLOEXEC);
    if (fd < 0)
        return ib_why(why, len, -errno, "--dir %s is not writable: %s", dir, strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

static void (*_Atomic dir_hook)(int made, const char *path);

void fs_set_dir_hook(void (*hook)(int made, const char *path))
{
    atomic_store(&dir_hook, hook);
}

int fs_mkdir_told(const char *path, mode_t mode, void (*hook)(int made, const char *path))
{
    if (hook)
        hook(1, path);
    if (mkdir(path, mode) == 0)
        return 0;
    const int e = errno;
    if (hook)
        hook(0, path);
    return -e;
}

int fs_make_private_dir(const char *dir, const char *tag, char *out, size_t outlen, char *why, size_t len)
{
    int n = snprintf(out, outlen, "%s/ibench-%s-%d.XXXXXX", dir, tag, (int)getpid());
    if (n < 0 || (size_t)n >= outlen)
        return ib_why(why, len, -ENAMETOOLONG, "--dir %s: path too long", dir);
    /* mkdtemp's name and mode, but each name is told to the hook before it is made (fs_set_dir_hook says why) */
    static const char az[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    void (*hook)(int, const char *) = atomic_load(&dir_hook);
    for (int tries = 0; tries < 100; tries++) {
        unsigned char r[6];
        if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
            return ib_why(why, len, -EIO, "cannot name a directory in %s: no random bytes", dir);
        for (int i = 0; i < 6; i++)
            out[n - 6 + i] = az[r[i] % (sizeof(az) - 1)];
        const int rc = fs_mkdir_told(out, 0700, hook);
        if (rc == 0)
            return 0;
        if (rc != -EEXIST)
            return ib_why(why, len, rc, "cannot make a directory in %s: %s", dir, strerror(-rc));
    }
    return ib_why(why, len, -EEXIST, "cannot make a directory in %s: every name tried exists", dir);
}

long fs_private_dir_pid(const char *name)
{
    if (strncmp(name, "ibench-", 7) != 0)
        return 0;
    const char *dot = strrchr(name, '.');
    if (!dot || strlen(dot + 1) != 6) /* mkdtemp's XXXXXX */
        return 0;
    const char *p = dot;
    while (p > name + 7 && p[-1] >= '0' && p[-1] <= '9')
        p--;
    /* at least one digit, after a '-' that ends a non-empty tag */
    if (p == dot || p - 1 <= name + 7 || p[-1] != '-' || dot - p > 10 || (dot - p > 1 && *p == '0'))
        return 0;
    long pid = 0;
    for (const char *q = p; q < dot; q++)
        pid = pid * 10 + (*q - '0');
    return pid;
}

int fs_remove_stale_dirs(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid = fs_private_dir_pid(e->d_name);
        if (pid <= 0 || pid == (long)getpid())
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != getuid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* its owner is alive (or not ours to signal) */
        char path[4096];
        int n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (n > 0 && (size_t)n < sizeof(path) && fs_remove_private_dir(path) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

int fs_remove_private_dir(const char *path)
{
    if (!path || !*path)
        return -EINVAL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "ibench-", 7) != 0)
        return -EINVAL;
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) != 0 && rc == 0)
            rc = -errno;
    }
    closedir(d);
    if (rmdir(path) != 0 && rc == 0)
        rc = -errno;
    void (*hook)(int, const char *) = atomic_load(&dir_hook);
    if (hook)
        hook(0, path);
    return rc;
}

int fs_is_memory(const char *path)
{
    struct statfs f;
    if (statfs(path, &f) != 0)
        return 0;
    return f.f_type == TMPFS_MAGIC || f.f_type == RAMFS_MAGIC;
}

const char *fs_default_dir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/var/tmp";
}
