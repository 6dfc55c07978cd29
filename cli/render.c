/* render.c - one result document, three renderings: a human table (default), JSON, CSV (render.h); and the
 * terminal's progress line, installed as common/'s progress sink.
 *
 * Table: numbers right-aligned, text left-aligned, every column as wide as its widest cell (header included, width
 *        counted in UTF-8 code points), columns separated by two spaces, a line of dashes under the headers, no
 *        trailing blanks. OUT_K_BYTES cells read "1.50 MiB" (binary units), OUT_K_RATE cells "28.0 GB/s" (decimal
 *        prefixes), OUT_K_NUM cells have `prec` decimals, OUT_K_INT cells are whole numbers; null or missing is "-".
 * CSV:   header line of column keys (machine friendly; the human headers are for the table), then one line per
 *        row with raw values: integers as integers, reals in the shortest form that reads back to the same
 *        double, strings quoted per RFC 4180 when they hold a comma, quote, CR or LF; null or missing is an
 *        empty field.  Lines end in "\n".
 * JSON:  out_rows(OUT_JSON) prints the rows array itself, as out_json() does.
 */
#define _GNU_SOURCE
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "parse.h"

/* ---- text from files, for a terminal ---------------------------------------------------------------------- */

/* The length of the UTF-8 sequence at p (1-4) and its code point, or 0 when it is not one (a lone or overlong byte,
 * a surrogate, beyond U+10FFFF). */
static size_t utf8_at(const unsigned char *p, unsigned *cp)
{
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!n)
        return 0;
    unsigned v = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    static const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

/* A character a terminal acts on, or that makes text show other than it reads. */
static bool tty_unsafe(unsigned cp)
{
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F || cp == 0x061C;
}

const char *tty_text(const char *s, char *buf, size_t len)
{
    if (!s)
        return "";
    const unsigned char *p = (const unsigned char *)s;
    unsigned cp = 0;
    size_t n;
    for (; *p; p += n)
        if (!(n = utf8_at(p, &cp)) || tty_unsafe(cp))
            break;
    if (!*p)
        return s; /* the usual case: nothing to escape */
    if (!buf || len < 8)
        return "?";
    size_t k = (size_t)(p - (const unsigned char *)s);
    if (k > len - 4) {
        memcpy(buf, s, len - 4);
        memcpy(buf + len - 4, "...", 4);
        return buf;
    }
    memcpy(buf, s, k);
    for (; *p; p += n) {
        char e[16];
        n = utf8_at(p, &cp);
        size_t el;
        if (!n) {
            el = (size_t)snprintf(e, sizeof(e), "\\x%02x", *p);
            n = 1;
        } else if (tty_unsafe(cp)) {
            el = (size_t)snprintf(e, sizeof(e), cp < 0x80 ? "\\x%02x" : "\\u{%04x}", cp);
        } else {
            memcpy(e, p, n);
            el = n;
        }
        if (k + el > len - 4) { /* no room: say it was cut */
            memcpy(buf + k, "...", 4);
            return buf;
        }
        memcpy(buf + k, e, el);
        k += el;
    }
    buf[k] = 0;
    return buf;
}

/* ---- scalar formatting ------------------------------------------------------------------------------------ */

/* Shortest "%.Ng" (N = 15..17) that reads back as exactly `v`. */
static void fmt_real_raw(double v, char *buf, size_t len)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* Any JSON value as text, raw: integers as integers, reals round-trippable, strings as is.
 * Returns a malloc'd string or NULL (no memory). */
static char *value_raw(const json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING:
        return strdup(json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return strdup(buf);
    case JSON_REAL:
        fmt_real_raw(json_real_value(v), buf, sizeof(buf));
        return strdup(buf);
    case JSON_TRUE:
        return strdup("true");
    case JSON_FALSE:
        return strdup("false");
    case JSON_NULL:
        return strdup("");
    default: /* object or array: compact JSON */
        return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    }
}

/* A table cell (malloc'd), or NULL when out of memory. */
static char *cell_human(const json_t *v, const struct out_col *col)
{
    char buf[96];
    if (!v || json_is_null(v))
        return strdup("-");
    if (!json_is_number(v))
        return value_raw(v); /* strings as is, whatever the column kind */
    double d = json_number_value(v);
    switch (col->kind) {
    case OUT_K_NUM: {
        int prec = col->prec < 0 ? 0 : col->prec > 30 ? 30 : col->prec;
        snprintf(buf, sizeof(buf), "%.*f", prec, d);
        return strdup(buf);
    }
    case OUT_K_BYTES:
        fmt_scaled(d, 1, 2, "B", buf, sizeof(buf)); /* "512 B", "1.50 KiB", "1.50 MiB", ... */
        return strdup(buf);
    case OUT_K_RATE:
        fmt_scaled(d, 0, 1, col->unit, buf, sizeof(buf)); /* "28.0 GB/s", "512.0 B/s", "1.5 k" (no unit) */
        return strdup(buf);
    case OUT_K_INT:
        if (json_is_integer(v))
            snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else
            snprintf(buf, sizeof(buf), "%.0f", d);
        return strdup(buf);
    case OUT_K_STR:
    default:
        return value_raw(v);
    }
}

/* ---- table ------------------------------------------------------------------------------------------------ */

/* Display width: UTF-8 code points. */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80)
            w++;
    return w;
}

static void put_repeat(FILE *f, int c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputc(c, f);
}

static int render_table(FILE *f, json_t *rows, const struct out_col *cols, unsigned ncols)
{
    size_t nrows = json_array_size(rows);
    size_t ncells = (nrows + 1) * ncols;
    char **cell = calloc(ncells, sizeof(*cell));
    size_t *width = calloc(ncols, sizeof(*width));
    int ret = 0;
    if (!cell || !width) {
        ret = -ENOMEM;
        goto out;
    }
    for (unsigned c = 0; c < ncols; c++) {
        const char *h = cols[c].header ? cols[c].header : cols[c].key ? cols[c].key : "";
        cell[c] = strdup(h);
    }
    for (size_t r = 0; r < nrows; r++) {
        json_t *row = json_array_get(rows, r);
        for (unsigned c = 0; c < ncols; c++) {
            json_t *v = cols[c].key ? json_object_get(row, cols[c].key) : NULL;
            char *h = cell_human(v, &cols[c]);
            const char *t = h ? TTY_TEXT(h) : NULL; /* a cell may hold a name from a file */
            cell[(r + 1) * ncols + c] = t && t != h ? strdup(t) : h;
            if (t && t != h)
                free(h);
        }
    }
    for (size_t i = 0; i < ncells; i++) {
        if (!cell[i]) {
            ret = -ENOMEM;
            goto out;
        }
        size_t w = text_width(cell[i]);
        if (w > width[i % ncols])
            width[i % ncols] = w;
    }
    for (size_t r = 0; r < nrows + 1; r++) {
        for (unsigned c = 0; c < ncols; c++) {
            const char *s = cell[r * ncols + c];
            if (c)
                fputs("  ", f);
            if (cols[c].kind == OUT_K_STR) { /* text reads left-aligned; no trailing blanks on the last column */
                fputs(s, f);
                if (c + 1 < ncols)
                    put_repeat(f, ' ', width[c] - text_width(s));
            } else {
                put_repeat(f, ' ', width[c] - text_width(s));
                fputs(s, f);
            }
        }
        fputc('\n', f);
        if (r == 0) { /* dashes under the headers */
            for (unsigned c = 0; c < ncols; c++) {
                if (c)
                    fputs("  ", f);
                put_repeat(f, '-', width[c]);
            }
            fputc('\n', f);
        }
    }
out:
    if (cell)
        for (size_t i = 0; i < ncells; i++)
            free(cell[i]);
    free(cell);
    free(width);
    return ret;
}

/* ---- CSV -------------------------------------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int render_csv(FILE *f, json_t *rows, const struct out_col *cols, unsigned ncols)
{
    for (unsigned c = 0; c < ncols; c++) {
        if (c)
            fputc(',', f);
        csv_field(f, cols[c].key ? cols[c].key : "");
    }
    fputc('\n', f);
    size_t r;
    json_t *row;
    json_array_foreach(rows, r, row)
    {
        for (unsigned c = 0; c < ncols; c++) {
            if (c)
                fputc(',', f);
            json_t *v = cols[c].key ? json_object_get(row, cols[c].key) : NULL;
            if (!v || json_is_null(v))
                continue;
            char *s = value_raw(v);
            if (!s)
                return -ENOMEM;
            csv_field(f, s);
            free(s);
        }
        fputc('\n', f);
    }
    return 0;
}

/* ---- public ----------------------------------------------------------------------------------------------- */

static int finish(FILE *f, int ret)
{
    if (fflush(f) != 0 || ferror(f))
        return ret ? ret : -EIO;
    return ret;
}

int out_rows(FILE *f, enum out_fmt fmt, json_t *rows, const struct out_col *cols, unsigned ncols)
{
    if (!f || !json_is_array(rows))
        return -EINVAL;
    if (fmt == OUT_JSON)
        return out_json(f, rows);
    if (!cols || !ncols || (fmt != OUT_TABLE && fmt != OUT_CSV))
        return -EINVAL;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (!json_is_object(row))
            return -EINVAL;
    }
    int ret = fmt == OUT_CSV ? render_csv(f, rows, cols, ncols) : render_table(f, rows, cols, ncols);
    return finish(f, ret);
}

/* 17 significant digits (jansson's default precision, spelled out): every double reads back exactly. */
int out_json(FILE *f, json_t *doc)
{
    if (!f || !doc)
        return -EINVAL;
    if (json_dumpf(doc, f, OUT_JSON_FLAGS) != 0)
        return finish(f, -EIO);
    fputc('\n', f);
    return finish(f, 0);
}

/* ---- the terminal's progress line ---------------------------------------------------------------------------- */

static atomic_bool progress_displayed;

/* IBENCH_PROGRESS=1 forces progress on, IBENCH_PROGRESS=0 forces it off, otherwise only on a terminal. */
static bool progress_enabled(void)
{
    const char *e = getenv("IBENCH_PROGRESS");
    if (e && strcmp(e, "1") == 0)
        return true;
    if (e && strcmp(e, "0") == 0)
        return false;
    return isatty(STDERR_FILENO) == 1;
}

static void term_line(const char *label, const char *text)
{
    if (label)
        fprintf(stderr, "\r\033[K[%s] %s", label, text);
    else
        fprintf(stderr, "\r\033[K%s", text);
    fflush(stderr);
    atomic_store(&progress_displayed, true);
}

static void term_done(void)
{
    if (atomic_exchange(&progress_displayed, false)) {
        fputc('\n', stderr);
        fflush(stderr);
    }
}

void render_progress_install(void)
{
    if (progress_enabled())
        out_progress_sink(term_line, term_done);
}

static void plain_line(const char *label, const char *text)
{
    if (label)
        fprintf(stderr, "ibench %s: %s\n", label, text);
    else
        fprintf(stderr, "ibench: %s\n", text);
    fflush(stderr);
}

static void plain_done(void)
{
}

void render_progress_lines(void)
{
    const char *e = getenv("IBENCH_PROGRESS");
    if (progress_enabled() || (e && strcmp(e, "0") == 0))
        return; /* a terminal's line, or none */
    out_progress_sink(plain_line, plain_done);
}
