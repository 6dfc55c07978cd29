/* kcount.h - the kernel's own counters, read for any layer that needs a meter no ibench code writes: the block device
 * under a path (its sysfs stat), a network namespace's interfaces (/proc/PID/net/dev), a process's resident memory
 * (/proc/PID/statm); and the text primitives the readers of such files share (here and in harness/usage.c).
 *
 * Every reader takes the root it reads under (a sysfs or procfs root; NULL: "/sys", "/proc"), so tests run on fixture
 * trees. Library code: never prints or exits; 0 or -errno, with a one-line reason in why. */
#ifndef IB_KCOUNT_H
#define IB_KCOUNT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the text of counter files: lines, tokens, numbers */

/* The next line of *p: [*s, *e) without its newline; false at the end of the text. */
bool kc_next_line(const char **p, const char **s, const char **e);
/* The next token of [*p, e) separated by spaces or tabs: [*ts, *te); false when none is left. */
bool kc_next_tok(const char **p, const char *e, const char **ts, const char **te);
/* [s, e) is word. */
bool kc_tok_is(const char *s, const char *e, const char *word);
/* [s, e) is all decimal digits (at least one) and fits in 64 bits. */
bool kc_tok_u64(const char *s, const char *e, uint64_t *v);
/* The decimal fields of the first line of text into v: at least min, at most max read (the rest of the line is not).
 * The number read, or -EINVAL with why ("NAME: empty", "NAME: 2 fields, expected 7", "NAME: field 3 'x' is not a
 * number"; "expected at least MIN" when min < max). */
int kc_fields_u64(const char *text, const char *name, uint64_t *v, int min, int max, char *why, size_t len);
/* A file holding one decimal number and a newline. 0, or -EINVAL with why ("NAME: 'max' is not one number"). */
int kc_number(const char *text, const char *name, uint64_t *v, char *why, size_t len);
/* The whole file at path into buf (ib_read_small); -EFBIG when it fills buf (a cut counter would read as a wrong
 * one). 0, or -errno with why "cannot read PATH: ..." (-ENOENT, and -ESRCH under /proc, when it is gone). */
int kc_read(const char *path, char *buf, size_t len, char *why, size_t wlen);

/* ---- the block device under a path */

/* Where a path's block I/O is counted: the device of its file system, st_dev, through SYSROOT/dev/block/MAJ:MIN,
 * the link sysfs keeps for every block device, a partition or a device-mapper device included (a dm device's counts
 * are what its file systems submitted to it, not what reached the disks below). */
struct kc_blk {
    unsigned major, minor;
    char name[64];  /* the uevent's DEVNAME ("vda", "sda1", "dm-0"), else the link's target's last part, else MAJ:MIN */
    char stat_path[448]; /* SYSROOT/dev/block/MAJ:MIN/stat */
};

/* The stat file's fields (the kernel's Documentation/block/stat.rst; one line of decimal numbers):
 *   1 read I/Os, 2 read merges, 3 read sectors, 4 read ticks (ms), 5 write I/Os, 6 write merges, 7 write sectors,
 *   8 write ticks, 9 in flight, 10 io_ticks (ms the device had I/O in flight), 11 time in queue (ms);
 *   12-15 discard I/Os, merges, sectors, ticks (Linux 4.19 and later); 16-17 flush I/Os, ticks (5.5 and later).
 * A kernel writes 11, 15 or 17 fields (a later one may append more: they are ignored). The sectors are "standard
 * UNIX 512-byte sectors, not any device- or filesystem-specific block size" (stat.rst): bytes are sectors x 512 on
 * every device, whatever its logical block size. I/Os are completed requests, after merging. */
struct kc_blk_count {
    unsigned nfields;               /* how many the line had */
    bool have_discard, have_flush;  /* the fields were there (15 and 17) */
    uint64_t rd_ios, rd_bytes;  /* completed reads; sectors read x 512 */
    uint64_t wr_ios, wr_bytes;
    uint64_t io_ticks_ms;
    uint64_t discard_ios, discard_bytes; /* 0 without have_discard */
    uint64_t flush_ios;                  /* 0 without have_flush */
};

/* The block device under path: stat(path).st_dev, then SYSROOT/dev/block/MAJ:MIN/stat (sysroot NULL: "/sys").
 * 0; -ENODEV with why naming the path and MAJ:MIN when its file system has no block device (major 0: tmpfs, proc,
 * overlay, a btrfs subvolume, NFS) or sysfs has no such entry (what is missing named); or -errno with why (path
 * itself: "cannot stat PATH"). */
int kc_blk_of_path(const char *sysroot, const char *path, struct kc_blk *b, char *why, size_t len);
/* Its counters now. 0, or -errno with why (-EINVAL: the stat line is malformed, one line naming the field). */
int kc_blk_read(const struct kc_blk *b, struct kc_blk_count *c, char *why, size_t len);
/* The stat line's text as above. 0, or -EINVAL with why. */
int kc_blk_parse(const char *text, struct kc_blk_count *c, char *why, size_t len);

/* ---- network interfaces of a process's network namespace */

/* /proc/PID/net/dev (Documentation/filesystems/proc.rst, "Networking info in /proc/net"; written by dev_seq_show in
 * net/core/net-procfs.c): two header lines, then per interface "NAME: rx_bytes rx_packets rx_errs rx_drop rx_fifo
 * rx_frame rx_compressed rx_multicast tx_bytes tx_packets tx_errs tx_drop tx_fifo tx_colls tx_carrier
 * tx_compressed". Counts of the namespace PID is in, every process's in it (not PID's sockets'). On lo every byte is
 * both sent and received, so lo's rx equal its tx. */
struct kc_net_count {
    uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;
    unsigned nif; /* the interfaces summed (1 for a named one) */
};

/* The line of ifname in net/dev's text, or (ifname NULL) the sum over every interface, lo included (an empty list
 * sums to zeros). 0; -ENODEV with why when ifname is not listed; -EINVAL with why naming the line and field. */
int kc_net_parse(const char *text, const char *ifname, struct kc_net_count *c, char *why, size_t len);
/* PROCROOT/PID/net/dev (procroot NULL: "/proc"; pid 0: "self"), parsed as above. 0, or -errno with why. */
int kc_net_read(const char *procroot, pid_t pid, const char *ifname, struct kc_net_count *c, char *why, size_t len);

/* ---- resident memory of a process */

/* /proc/PID/statm (proc.rst, "Contents of the statm fields"): "size resident shared text lib data dt" in pages;
 * resident x page_size. 0, or -EINVAL with why. */
int kc_rss_parse(const char *text, uint64_t page_size, uint64_t *bytes, char *why, size_t len);
/* PROCROOT/PID/statm (procroot NULL: "/proc"; pid 0: "self"), resident pages x this machine's page size. 0, or
 * -errno with why (-ENOENT/-ESRCH: the process is gone). */
int kc_rss_read(const char *procroot, pid_t pid, uint64_t *bytes, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
