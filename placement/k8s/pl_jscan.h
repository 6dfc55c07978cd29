/* pl_jscan.h - a validating JSON scanner that skips what it is not asked for (the extender reads three
 * things of a ~10 KB Node object, and building jansson's tree of all of it cost ~0.2 s a request at 1000 nodes).
 *
 * It walks JSON text in place, allocates nothing, and checks RFC 8259's grammar as it goes: structure, strings
 * (escapes, no control characters, UTF-8 well formed, no \u0000), numbers (integers within 64 bits, reals within
 * a double's range: jansson's limits), literals, nesting up to JSCAN_MAX_DEPTH.  What it does not check in what it skips: duplicate keys (the parts handed to jansson are checked
 * there).  The caller descends into the members it wants (jscan_member, jscan_element) and skips the rest
 * (jscan_value); spans of values can then be handed to a parser or copied out verbatim. */
#ifndef IB_PL_JSCAN_H
#define IB_PL_JSCAN_H
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JSCAN_MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

struct jscan {
    const char *start, *p, *end;
    const char *err; /* the first error (a constant string), NULL while none */
};

void jscan_init(struct jscan *s, const char *text, size_t len);
/* Skips white space; the next byte, or 0 at the end. */
char jscan_peek(struct jscan *s);
/* Skips one value (whatever it is), checking it.  0, or -1 with s->err. */
int jscan_value(struct jscan *s, int depth);
/* Objects: jscan_member after '{' (jscan_open) and after each member's value: 1 with the key's raw text (between
 * its quotes, escapes not decoded) and s->p at the value, 0 at the closing '}' (consumed), -1 on an error. */
int jscan_open(struct jscan *s, char bracket);
int jscan_member(struct jscan *s, bool *first, const char **key, size_t *klen);
/* Arrays: the same, 1 with s->p at the element, 0 at ']' (consumed). */
int jscan_element(struct jscan *s, bool *first);
/* Whether a raw key is `want`, letters compared without regard to case (Go's encoding/json matches keys so);
 * a key with escapes is decoded first.  key points inside its quotes in the text (key[-1] and key[klen] are '"'). */
bool jscan_key_is(const char *key, size_t klen, const char *want);
/* One UTF-8 sequence starting at a byte >= 0x80, before end: its length, or 0 when it is not well formed (an
 * overlong form, a surrogate, past U+10FFFF, cut short). */
size_t jscan_utf8_len(const unsigned char *p, const unsigned char *end);
/* After the top-level value: only white space left.  0, or -1 with s->err. */
int jscan_finish(struct jscan *s);

#ifdef __cplusplus
}
#endif
#endif
