/* output.h - result files written atomically, and progress through a sink: the lower layers never print; the front
 * end installs the sink (cli/render.h: a line on a terminal), and without one progress goes nowhere. */
#ifndef IB_OUTPUT_H
#define IB_OUTPUT_H
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How ibench writes JSON: indented, reals to the last digit (they read back exactly). */
#define OUT_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)
/* Write `doc` as JSON to `path` atomically: written unnamed in path's directory (O_TMPFILE), fsync'ed, then named
 * path (else a named temporary file renamed over it); killed at any moment, it leaves path as it was or complete,
 * and no other file. */
int out_json_file_atomic(const char *path, json_t *doc);
/* The same for len bytes of text (a JUnit report, ...), written as they are. */
int out_text_file_atomic(const char *path, const char *text, size_t len);
/* Progress: out_progress formats "text" and hands it, with its label (may be NULL), to the installed sink;
 * out_progress_done says the progress is over (a line is finished). Thread-safe; no sink: nothing. */
typedef void (*out_progress_line_fn)(const char *label, const char *text);
typedef void (*out_progress_done_fn)(void);
void out_progress_sink(out_progress_line_fn line, out_progress_done_fn done);
void out_progress(const char *label, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_progress_done(void);

#ifdef __cplusplus
}
#endif
#endif
