/* scratch.c - scratch files in a private directory, removed together (scratch.h). */
#define _GNU_SOURCE
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ib_err.h"
#include "parse.h"

int scratch_open(struct scratch *sc, const char *base, const char *tag, uint64_t need, unsigned flags, char *why,
                 size_t len)
{
    memset(sc, 0, sizeof(*sc));
    if (!base)
        base = fs_default_dir();
    if (!base || !*base) {
        sc->refused_input = 1;
        return ib_why(why, len, -EINVAL, "%s: no directory given", tag);
    }
    if ((size_t)snprintf(sc->base, sizeof(sc->base), "%s", base) >= sizeof(sc->base)) {
        sc->refused_input = 1;
        return ib_why(why, len, -ENAMETOOLONG, "%s: the directory '%.64s...' is too long", tag, base);
    }
    int rc = fs_check_dir(base, why, len);
    if (rc < 0) {
        sc->refused_input = 1;
        return rc;
    }
    sc->memory = fs_is_memory(base);
    if (sc->memory && (flags & SCRATCH_DISK))
        return ib_why(why, len, -ENOTSUP, "%s: %s is on a memory filesystem (tmpfs): its reads and writes go to memory, "
                      "not to storage (give --dir on a disk)", tag, base);
    if ((rc = fs_space_of(base, &sc->space)) < 0)
        return ib_why(why, len, rc, "%s: statvfs %s: %s", tag, base, strerror(-rc));
    uint64_t spare = fs_spare(&sc->space);
    if (need > spare) {
        char b1[32], b2[32], b3[32], b4[32];
        sc->refused_input = 1;
        return ib_why(why, len, -ENOSPC, "%s: %s needed in %s, but it can spare only %s (%s available less the margin "
                      "of %s)", tag, fmt_bytes((double)need, b1, sizeof(b1)), base,
                      fmt_bytes((double)spare, b2, sizeof(b2)), fmt_bytes((double)sc->space.avail, b3, sizeof(b3)),
                      fmt_bytes((double)fs_margin(sc->space.total), b4, sizeof(b4)));
    }
    if ((rc = fs_make_private_dir(base, tag, sc->dir, sizeof(sc->dir), why, len)) < 0) {
        sc->dir[0] = 0; /* a failed make leaves its last name there */
        return rc;
    }
    return 0;
}

int scratch_file(struct scratch *sc, const char *name, int oflags, uint64_t size, char *path, size_t pathlen,
                 char *why, size_t len)
{
    char p[4200];
    if (!sc->dir[0])
        return ib_why(why, len, -EBADF, "scratch file %s: no private directory", name);
    if (!name || !*name || strchr(name, '/'))
        return ib_why(why, len, -EINVAL, "scratch file '%s': a plain name is needed", name ? name : "");
    if (sc->nfiles >= SCRATCH_MAX_FILES)
        return ib_why(why, len, -EMFILE, "scratch file %s: at most %d files", name, SCRATCH_MAX_FILES);
    if ((size_t)snprintf(p, sizeof(p), "%s/%s", sc->dir, name) >= sizeof(p))
        return ib_why(why, len, -ENAMETOOLONG, "scratch file %s: path too long", name);
    if (path && (size_t)snprintf(path, pathlen, "%s", p) >= pathlen)
        return ib_why(why, len, -ENAMETOOLONG, "scratch file %s: path too long for its caller", name);
    int fd = open(p, oflags | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        if (e != EEXIST)
            unlink(p); /* a filesystem may create the file before refusing a flag */
        if (e == EINVAL && (oflags & O_DIRECT))
            return ib_why(why, len, -ENOTSUP, "%s does not support O_DIRECT: the page cache would answer instead of the "
                          "disk", sc->base);
        return ib_why(why, len, -e, "cannot create %s: %s", p, strerror(e));
    }
    if (size > 0 && fallocate(fd, 0, 0, (off_t)size) != 0 && errno != EOPNOTSUPP) {
        int e = errno;
        close(fd);
        unlink(p);
        return ib_why(why, len, -e, "cannot allocate %s: %s", p, strerror(e));
    }
    sc->fd[sc->nfiles++] = fd;
    return fd;
}

void scratch_close(struct scratch *sc)
{
    for (unsigned i = 0; i < sc->nfiles; i++)
        if (sc->fd[i] >= 0)
            close(sc->fd[i]);
    sc->nfiles = 0;
    if (sc->dir[0])
        fs_remove_private_dir(sc->dir); /* its files, then itself */
    sc->dir[0] = 0;
}
