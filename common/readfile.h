/* readfile.h - a file read whole: a small one (procfs, sysfs, cgroupfs) into a buffer, or one of any length up to a
 * bound into memory; the readers every layer uses. */
#ifndef IB_READFILE_H
#define IB_READFILE_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The whole file at path into buf (len bytes with its NUL; a longer file is cut), read until its end (a read
 * interrupted by a signal is taken again).  0, or -errno: -ENOENT (and -ESRCH under /proc) when it is gone. */
int ib_read_small(const char *path, char *buf, size_t len);
/* The whole file at path, however long up to max bytes, into *text (malloc'd, NUL-terminated; free it), its length
 * in *n (may be NULL): for files that grow (numa_maps, a user's input).  0, or -errno: -ENOENT when it is not there,
 * -EFBIG when it is longer than max, -ENOMEM; nothing is left allocated on an error. */
int ib_read_all(const char *path, size_t max, char **text, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
