/* fsguard.h - what the disk SoIs may do with a filesystem: where, how much, and cleaning up.
 *
 * Rules (docs/sois.md, "disk safety"):
 *  - never fill a filesystem: the spare space is what is available to unprivileged users (statvfs f_bavail) less a
 *    margin of max(5 % of the filesystem, 1 GiB); nothing starts, and nothing grows, past it;
 *  - write only inside the directory given: every file lives in a private directory made there with mkdtemp
 *    ("ibench-<soi>-<pid>.XXXXXX"), removed with its files on every exit path; one whose pid is gone (its ibench
 *    was killed) is removed by the next ibench that starts (fs_remove_stale_dirs);
 *  - a raw block device is refused as a directory; a device is used only through --device PATH with --force.
 */
#ifndef IB_FSGUARD_H
#define IB_FSGUARD_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FS_MARGIN_MIN (1ULL << 30) /* 1 GiB */
#define FS_MARGIN_PCT 5.0

struct fs_space {
    uint64_t total; /* bytes of the filesystem */
    uint64_t avail; /* bytes available to unprivileged users */
};

/* statvfs of path. 0 or -errno. */
int fs_space_of(const char *path, struct fs_space *out);
/* max(5 % of total, 1 GiB) */
uint64_t fs_margin(uint64_t total);
/* avail less the margin, 0 when the margin is already eaten into */
uint64_t fs_spare(const struct fs_space *s);

/* The directory must exist, be a directory (not a block device or a file) and accept a new file (checked by
 * making and removing one, so root on a read-only mount is caught too). 0, -ENOENT, -ENOTDIR, -EROFS/-EACCES/...,
 * with a one-line reason. */
int fs_check_dir(const char *dir, char *why, size_t len);
/* A private directory inside dir: "<dir>/ibench-<tag>-<pid>.XXXXXX" into out. 0 or -errno. */
int fs_make_private_dir(const char *dir, const char *tag, char *out, size_t outlen, char *why, size_t len);
/* Removes the regular files directly inside a private directory made above, then the directory itself.
 * Refuses (-EINVAL) a path whose last component does not start with "ibench-". 0 or -errno. */
int fs_remove_private_dir(const char *path);
/* mkdir(path, mode), the name told to hook (NULL: none) before it is made (made = 1) and again when it could not be
 * (made = 0), so that a process killed between the mkdir and the call leaves nothing its hook was not told of.
 * 0 or -errno. */
int fs_mkdir_told(const char *path, mode_t mode, void (*hook)(int made, const char *path));
/* Called with each private directory's name before it is made (made = 1), and when it is removed or could not be
 * made (made = 0); NULL: none. The harness's watchdog listens here, so that the directories of a killed ibench are
 * removed too; before, not after: a process killed between the mkdir and the call would leave one no one was told
 * of. */
void fs_set_dir_hook(void (*hook)(int made, const char *path));
/* The pid in a private directory's name ("ibench-<tag>-<pid>.XXXXXX"), 0 when the name is not of that form. */
long fs_private_dir_pid(const char *name);
/* Removes the private directories directly in dir whose ibench is gone: only names of the form above, only
 * directories (not symbolic links) owned by this user, only when no process has that pid. How many were removed. */
int fs_remove_stale_dirs(const char *dir);

/* 1 when path is on a memory filesystem (tmpfs, ramfs): its "disk" is RAM and its O_DIRECT is the page cache. */
int fs_is_memory(const char *path);

/* The default place for disk SoIs when no --dir is given: $TMPDIR if set, else /var/tmp (on disk, unlike a tmpfs
 * /tmp). */
const char *fs_default_dir(void);

#ifdef __cplusplus
}
#endif
#endif
