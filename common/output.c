/* output.c - result files written atomically, and progress reported through the sink the front end installs:
 * nothing here prints. */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Permissions for a freshly written `path`: those of the file it replaces, else 0666 & ~umask. */
static mode_t target_mode(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        return st.st_mode & 07777;
    mode_t mask = 022;
    FILE *s = fopen("/proc/self/status", "re"); /* reading the umask without umask(2)'s race */
    if (s) {
        char line[128];
        while (fgets(line, sizeof(line), s))
            if (strncmp(line, "Umask:", 6) == 0) {
                mask = (mode_t)strtoul(line + 6, NULL, 8);
                break;
            }
        fclose(s);
    }
    return 0666 & ~mask;
}

/* The directory of path ("." for a bare name), malloc'ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
}

/* Best effort: make the rename itself durable. */
static void fsync_parent(const char *path)
{
    char *dir = dir_of(path);
    if (!dir)
        return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* json_dump_callback's writes gathered into 64 KiB ones (json_dumpfd makes a write(2) per token). */
struct fd_buf {
    int fd, err;
    size_t n;
    char b[65536];
};

static int buf_flush(struct fd_buf *w)
{
    for (size_t off = 0; off < w->n && !w->err;) {
        ssize_t k = write(w->fd, w->b + off, w->n - off);
        if (k < 0 && errno != EINTR)
            w->err = -errno;
        else if (k > 0)
            off += (size_t)k;
    }
    w->n = 0;
    return w->err;
}

static int buf_put(const char *p, size_t len, void *data)
{
    struct fd_buf *w = data;
    while (len && !w->err) {
        if (w->n == sizeof(w->b))
            buf_flush(w);
        size_t k = len < sizeof(w->b) - w->n ? len : sizeof(w->b) - w->n;
        memcpy(w->b + w->n, p, k);
        w->n += k;
        p += k;
        len -= k;
    }
    return w->err ? -1 : 0;
}

/* What a file receives: a JSON document (with its line end), or text as it is. */
struct out_body {
    json_t *doc;
    const char *text;
    size_t len;
};

/* The body into fd, on the device. */
static int dump_fd(int fd, const struct out_body *body, mode_t mode)
{
    if (fchmod(fd, mode) != 0)
        return -errno;
    struct fd_buf *w = malloc(sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->fd = fd;
    w->err = 0;
    w->n = 0;
    int err = !body->doc ? (buf_put(body->text, body->len, w) == 0 ? buf_flush(w) : -EIO)
              : json_dump_callback(body->doc, buf_put, w, OUT_JSON_FLAGS) == 0 && buf_put("\n", 1, w) == 0
                  ? buf_flush(w)
                  : -EIO;
    if (w->err)
        err = w->err;
    free(w);
    if (err)
        return err;
    return fsync(fd) != 0 ? -errno : 0;
}

/* fd, an unnamed file of O_TMPFILE, given the name path: straight when nothing has it (no other name ever exists),
 * else under a temporary name renamed over path at once. 0, -EOPNOTSUPP when /proc cannot name the file (the caller
 * writes another way), or -errno. */
static int link_unnamed(int fd, const char *path)
{
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    if (errno == ENOENT && access(proc, F_OK) != 0)
        return -EOPNOTSUPP; /* no /proc */
    if (errno != EEXIST)
        return -errno;
    size_t len = strlen(path) + 48;
    char *tmp = malloc(len);
    if (!tmp)
        return -ENOMEM;
    int err = -EEXIST;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    for (unsigned i = 0; i < 16 && err == -EEXIST; i++) {
        snprintf(tmp, len, "%s.tmp.%d.%lx", path, (int)getpid(), (unsigned long)ts.tv_nsec + i);
        err = linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
    }
    if (err == 0 && rename(tmp, path) != 0) {
        err = -errno;
        unlink(tmp);
    }
    free(tmp);
    return err;
}

/* The way without O_TMPFILE: a named temporary file beside path, renamed over it when complete. */
static int write_named(const char *path, const struct out_body *body, mode_t mode)
{
    static const char suffix[] = ".tmp.XXXXXX";
    size_t plen = strlen(path);
    char *tmp = malloc(plen + sizeof(suffix));
    if (!tmp)
        return -ENOMEM;
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, suffix, sizeof(suffix));
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int err = -errno;
        free(tmp);
        return err;
    }
    int err = dump_fd(fd, body, mode);
    if (close(fd) != 0 && !err)
        err = -errno;
    if (!err && rename(tmp, path) != 0)
        err = -errno;
    if (err)
        unlink(tmp);
    free(tmp);
    return err;
}

/* Written whole or not at all. The file is written unnamed (O_TMPFILE) and named when complete, so a process killed
 * while writing (SIGKILL, which nothing can catch) leaves no partial or temporary file behind; where the filesystem
 * has no O_TMPFILE, through a named temporary file renamed over path. */
static int write_atomic(const char *path, const struct out_body *body)
{
    mode_t mode = target_mode(path);
    char *dir = dir_of(path);
    if (!dir)
        return -ENOMEM;
    int err = -EOPNOTSUPP;
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    free(dir);
    if (fd >= 0) {
        err = dump_fd(fd, body, mode);
        if (!err)
            err = link_unnamed(fd, path);
        close(fd);
    } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
        return -errno; /* no such directory, no permission: the named way would fail the same */
    }
    if (err == -EOPNOTSUPP)
        err = write_named(path, body, mode);
    if (err == 0)
        fsync_parent(path);
    return err;
}

int out_json_file_atomic(const char *path, json_t *doc)
{
    if (!path || !*path || !doc)
        return -EINVAL;
    return write_atomic(path, &(const struct out_body){.doc = doc});
}

int out_text_file_atomic(const char *path, const char *text, size_t len)
{
    if (!path || !*path || (!text && len))
        return -EINVAL;
    return write_atomic(path, &(const struct out_body){.text = text ? text : "", .len = len});
}

/* ---- progress --------------------------------------------------------------------------------------------- */

static _Atomic(out_progress_line_fn) sink_line;
static _Atomic(out_progress_done_fn) sink_done;

void out_progress_sink(out_progress_line_fn line, out_progress_done_fn done)
{
    atomic_store(&sink_line, line);
    atomic_store(&sink_done, done);
}

void out_progress(const char *label, const char *fmt, ...)
{
    out_progress_line_fn line = atomic_load(&sink_line);
    if (!fmt || !line)
        return;
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    line(label, text);
}

void out_progress_done(void)
{
    out_progress_done_fn done = atomic_load(&sink_done);
    if (done)
        done();
}
