/* watchdog.h - what ibench leaves behind when it dies without cleaning up (SIGKILL, a crash, the OOM killer).
 *
 * Nothing runs in a process killed by SIGKILL, so cleanup after one is another process's: a watchdog forked at start
 * that holds one end of a socket whose other end only ibench holds (close-on-exec: no child inherits it). ibench
 * tells it each cgroup and scratch directory it makes and removes; when the socket reaches end-of-file (ibench is
 * gone, however it ended), the watchdog kills the cgroups still listed, removes them and the directories, and exits.
 * It ignores the terminal's signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT reach its process group) so that it outlives
 * ibench by that cleanup only. */
#ifndef IB_WATCHDOG_H
#define IB_WATCHDOG_H
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forks the watchdog and routes the scratch directories fsguard makes to it. 0 (also when already running), or
 * -errno with why (then nothing is cleaned after a SIGKILL; everything else works). */
int watchdog_start(char *why, size_t len);
/* Ends it (nothing listed is left by then on a clean exit) and reaps it, waiting at most about 2 s. */
void watchdog_stop(void);
/* Tells it that a cgroup (kind 'C') or scratch directory (kind 'D') was made (made = 1) or removed (made = 0). A
 * no-op without a watchdog. Thread-safe. */
void watchdog_note(char kind, int made, const char *path);
/* The watchdog's pid, -1 when none (tests). */
pid_t watchdog_pid(void);

#ifdef __cplusplus
}
#endif
#endif
