/* pl_trace.h - the trace source of thread clustering: a text file of `tid address [source]` lines, so recordings
 * from other machines (scripts/perf2trace converts perf's) can be clustered here (docs/placement.md, "Thread
 * clustering: the pipeline", the trace format). */
#ifndef IB_PL_TRACE_H
#define IB_PL_TRACE_H
#include <stddef.h>

#include "pl_samples.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hands every sample of the file at path to fn(ctx, sample), in file order.  A line is `tid address [source]`:
 * tid decimal (0 - 2^32-1), address hexadecimal with or without 0x (at most 64 bits), source one of pl_src_parse's
 * words (absent: unknown); fields separated by blanks; `#` starts a comment line; blank lines are skipped.
 * 0; -ENOENT etc. (cannot open or read), -EINVAL with "PATH:LINE: reason" for a line that is none of these, or fn's
 * negative value when fn stops it ("PATH:LINE: ..."). */
int pl_trace_read(const char *path, pl_sample_fn fn, void *ctx, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
