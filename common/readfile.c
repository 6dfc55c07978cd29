/* readfile.c - a file read whole (readfile.h). */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int ib_read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t r = read(fd, buf + got, len - 1 - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            close(fd);
            return e;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return 0;
}

int ib_read_all(const char *path, size_t max, char **text, size_t *n)
{
    *text = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : -ENOMEM;
    while (rc == 0) {
        if (used + 1 >= cap) {
            char *nb = cap <= max ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                rc = cap <= max ? -ENOMEM : -EFBIG;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + used, cap - used - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rc = -errno;
        else if (r == 0)
            break;
        else
            used += (size_t)r;
    }
    close(fd);
    if (rc == 0 && used > max)
        rc = -EFBIG;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[used] = 0;
    *text = buf;
    if (n)
        *n = used;
    return 0;
}
