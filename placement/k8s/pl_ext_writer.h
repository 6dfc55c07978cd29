/* pl_ext_writer.h - how the extender writes: a growing buffer, JSON strings escaped as jansson escapes them, one-line
 * reasons, and answers (a small document through jansson; a large one written directly: jansson's tree of a
 * 1000-node answer costs more than the decisions). */
#ifndef IB_PL_EXT_WRITER_H
#define IB_PL_EXT_WRITER_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct ext_buf {
    char *s; /* NUL-terminated once anything is written */
    size_t n, cap;
    bool oom;
};

void ext_put(struct ext_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ext_put_raw(struct ext_buf *b, const char *s, size_t n);
/* Room for n bytes more at once (a large answer is not copied as it grows). */
void ext_reserve(struct ext_buf *b, size_t n);
/* s as a JSON string; a sequence that is not UTF-8 becomes U+FFFD (a reason may cut a name inside a character). */
void ext_put_str(struct ext_buf *b, const char *s);
/* s made one line of UTF-8 in place: control characters and each byte of a sequence that is not UTF-8 become '?'. */
char *ext_one_line(char *s);

/* *s (freed first) made the formatted text: 0, or -ENOMEM with *s NULL. */
int ext_set_text(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The answer: b's text (200), or -ENOMEM (b freed). */
int ext_answer_buf(struct ext_buf *b, char **out, int *status);
/* The answer: doc dumped compactly (doc's reference is taken), with status; -ENOMEM. */
int ext_answer_json(json_t *doc, int status, char **out, int *st);
/* A 400: {"Error": one line}. */
int ext_bad_request(char **out, int *st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
