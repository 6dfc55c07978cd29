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

/* Best effort: make the rename itself durable. */
static void fsync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir)
        return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int out_json_file_atomic(const char *path, json_t *doc)
{
    static const char suffix[] = ".tmp.XXXXXX";
    if (!path || !*path || !doc)
        return -EINVAL;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + sizeof(suffix));
    if (!tmp)
        return -ENOMEM;
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, suffix, sizeof(suffix));

    mode_t mode = target_mode(path);
    int err;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        err = -errno;
        free(tmp);
        return err;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        err = -errno;
        close(fd);
        goto fail;
    }
    if (fchmod(fd, mode) != 0) {
        err = -errno;
        fclose(f);
        goto fail;
    }
    err = json_dumpf(doc, f, OUT_JSON_FLAGS) == 0 && fputc('\n', f) != EOF && fflush(f) == 0 ? 0 : -EIO;
    if (err) {
        fclose(f);
        goto fail;
    }
    if (fsync(fd) != 0) {
        err = -errno;
        fclose(f);
        goto fail;
    }
    if (fclose(f) != 0) {
        err = -errno;
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        err = -errno;
        goto fail;
    }
    fsync_parent(path);
    free(tmp);
    return 0;
fail:
    unlink(tmp);
    free(tmp);
    return err < 0 ? err : -EIO;
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
