/* scratch.h - the scratch files of a disk SoI or a file probe: checked, counted against the spare space, made in a
 * private directory, and removed together.
 *
 * Rules (fsguard.h, docs/sois.md "disk safety"):
 *  - the base directory is checked first (exists, a directory, writable) and, for callers that need a disk, refused
 *    when it is a memory filesystem (tmpfs, ramfs): its "disk" is RAM;
 *  - the bytes asked for must fit the spare space (available less the margin) or nothing is made;
 *  - every file lives in one private directory "<base>/ibench-<tag>-<pid>.XXXXXX" (the pid lets the next ibench
 *    remove it when this one was killed: fs_remove_stale_dirs);
 *  - scratch_close() closes every descriptor, removes every file and the directory; it is idempotent, safe after
 *    any partial failure, and a zeroed struct scratch is already closed (nothing to release).
 */
#ifndef IB_SCRATCH_H
#define IB_SCRATCH_H
#include <stddef.h>
#include <stdint.h>

#include "fsguard.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SCRATCH_MAX_FILES 256 /* one per SoI thread at most (SOI_MAX_THREADS) */

enum {
    SCRATCH_DISK = 1u, /* the caller measures storage: a memory filesystem is refused (-ENOTSUP) */
};

struct scratch {
    char base[4096];          /* the directory the private one is made in */
    char dir[4096];           /* the private directory ("" when none exists) */
    struct fs_space space;    /* of base, read by scratch_open */
    int memory;               /* base is a memory filesystem */
    int refused_input;        /* the last failure was the caller's input: the base directory, or more bytes than
                               * it can spare */
    unsigned nfiles;          /* fd[0 .. nfiles) are the files made (-1: closed) */
    int fd[SCRATCH_MAX_FILES];
};

/* sc is overwritten (close one in use first). Checks base (NULL: fs_default_dir()), refuses a memory filesystem when flags has SCRATCH_DISK, refuses need bytes
 * above the spare space (-ENOSPC; 0: no need to check), then makes the private directory for tag. 0 or -errno with a
 * one-line reason; on failure nothing is left and sc is closed. */
int scratch_open(struct scratch *sc, const char *base, const char *tag, uint64_t need, unsigned flags, char *why,
                 size_t len);
/* Creates file `name` (no '/') in the private directory: oflags (O_RDWR, O_DIRECT ...) plus O_CREAT | O_EXCL |
 * O_CLOEXEC, mode 0600, allocated with fallocate to size bytes when size > 0 (a filesystem without fallocate leaves
 * it to the caller's writes). The path goes to path[pathlen] when path is not NULL. Returns the descriptor, owned by
 * sc (scratch_close closes it), or -errno with a reason: -ENOTSUP when the filesystem refuses O_DIRECT. A file that
 * failed is removed at once. */
int scratch_file(struct scratch *sc, const char *name, int oflags, uint64_t size, char *path, size_t pathlen,
                 char *why, size_t len);
/* Closes every file, removes them and the private directory. */
void scratch_close(struct scratch *sc);

#ifdef __cplusplus
}
#endif
#endif
