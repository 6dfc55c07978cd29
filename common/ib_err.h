/* ib_err.h - error conventions shared by every ibench library.
 *
 * Library functions (common/, sois/, validation/, placement/) return 0 or a negative errno and never print or
 * exit.  Where a caller needs words, functions take a `char *why, size_t len` buffer and fill it with one line.
 * Only the command-line front end (cli/) prints and maps results to process exit codes.
 */
#ifndef IB_ERR_H
#define IB_ERR_H
#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ib_exit {
    IB_EXIT_OK = 0,
    IB_EXIT_FAIL = 1,       /* run-time failure */
    IB_EXIT_USAGE = 2,      /* bad input */
    IB_EXIT_SKIP = 77,      /* cannot run here (no resource, not supported); never a pass */
    IB_EXIT_INTR = 130,     /* interrupted by SIGINT/SIGTERM */
};

/* Write a formatted one-line reason into why[len] (if why != NULL). Returns `err` so callers can
 * `return ib_why(why, len, -EINVAL, "bad %s", x);`. */
int ib_why(char *why, size_t len, int err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define IB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define IB_KIB (1024ULL)
#define IB_MIB (1024ULL * 1024ULL)
#define IB_GIB (1024ULL * 1024ULL * 1024ULL)
#define IB_NS_PER_S 1000000000ULL
#define IB_NS_PER_MS 1000000ULL
#define IB_NS_PER_US 1000ULL

#ifdef __cplusplus
}
#endif
#endif
