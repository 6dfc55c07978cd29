/* render.h - one result document, three renderings: a human table (default), JSON, CSV.
 *
 * Results are built as a jansson document: { ..., "<rows key>": [ {col: value, ...}, ... ] }.  The JSON rendering
 * is the document itself; CSV and the table render the rows array using a column spec (key, header, format).
 */
#ifndef IB_RENDER_H
#define IB_RENDER_H
#include <jansson.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum out_fmt { OUT_TABLE = 0, OUT_JSON, OUT_CSV };

enum out_kind {
    OUT_K_STR = 0,  /* string as is */
    OUT_K_NUM,      /* number with `prec` decimals */
    OUT_K_BYTES,    /* number of bytes, shown as KiB/MiB/GiB in the table, raw in CSV */
    OUT_K_RATE,     /* per-second figure, shown with k/M/G prefix + unit in the table, raw in CSV */
    OUT_K_INT,      /* integer */
};

struct out_col {
    const char *key;     /* key in each row object */
    const char *header;  /* table/CSV header */
    enum out_kind kind;
    int prec;            /* decimals for OUT_K_NUM */
    const char *unit;    /* for OUT_K_RATE ("B/s" -> "GB/s"), may be NULL */
};

/* Text that came from a file (a profile's names, commands and reasons, a fleet's tenants), fit for a terminal: the
 * characters that could move the cursor, recolour the screen, retitle the window or break a line -- C0 controls
 * (newline and tab included), DEL, C1 controls, bidirectional overrides and bytes that are not UTF-8 -- come out
 * escaped as \xHH (a byte) or \u{HHHH} (a character); everything else is left as it is. Returns s itself when
 * nothing needs escaping (no copy, no length limit), else buf (len bytes, cut with "..." when too small). NULL: "".
 * TTY_TEXT(s) escapes into a buffer of its own that lives until the end of the enclosing block, so several may
 * stand in one printf. */
const char *tty_text(const char *s, char *buf, size_t len);
#define TTY_TEXT_MAX 1024
#define TTY_TEXT(s) tty_text((s), (char[TTY_TEXT_MAX]){0}, TTY_TEXT_MAX)

/* Render `rows` (a JSON array of objects). Missing keys / null values render as "-" (table) or "" (CSV).
 * Table: right-aligned columns, header underlined.  CSV: RFC 4180 quoting, header line first. */
int out_rows(FILE *f, enum out_fmt fmt, json_t *rows, const struct out_col *cols, unsigned ncols);
/* Whole document as pretty JSON with a trailing newline. */
int out_json(FILE *f, json_t *doc);
/* The progress line on stderr, when stderr is a terminal (or IBENCH_PROGRESS=1; =0: never): installs it as the
 * sink of out_progress (common/output.h). */
void render_progress_install(void);
/* For a long command (profile): where render_progress_install left progress off because stderr is not a terminal,
 * one line per progress report instead ("ibench LABEL: TEXT"); IBENCH_PROGRESS=0 still means none. */
void render_progress_lines(void);

#ifdef __cplusplus
}
#endif
#endif
