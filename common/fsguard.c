/* fsguard.c - filesystem safety for the disk SoIs (fsguard.h). */
#define _GNU_SOURCE
#include "fsguard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int fs_make_private_dir(const char *dir, const char *tag, char *out, size_t outlen, char *why, size_t len)
{
    int n = snprintf(out, outlen, "%s/ibench-%s.XXXXXX", dir, tag);
    if (n < 0 || (size_t)n >= outlen)
        return ib_why(why, len, -ENAMETOOLONG, "--dir %s: path too long", dir);
    if (!mkdtemp(out))
        return ib_why(why, len, -errno, "cannot make a directory in %s: %s", dir, strerror(errno));
    return 0;
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
