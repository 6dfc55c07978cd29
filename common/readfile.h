/* readfile.h - a small file (procfs, sysfs, cgroupfs) read whole: the one reader every layer uses for them. */
#ifndef IB_READFILE_H
#define IB_READFILE_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The whole file at path into buf (len bytes with its NUL; a longer file is cut), read until its end (a read
 * interrupted by a signal is taken again).  0, or -errno: -ENOENT (and -ESRCH under /proc) when it is gone. */
int ib_read_small(const char *path, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
