/* pl_jscan.c - the validating skip-scanner (pl_jscan.h).  A run of ordinary characters in a string (most of a Node
 * object: image names, digests) is skipped sixteen bytes at a time (SSE2), else eight (a word's bit tricks); the
 * byte that stops the run goes through a byte-class table. */
#include "pl_jscan.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum { C_ORD = 0, C_QUOTE, C_BSL, C_CTL, C_HIGH };

static unsigned char g_class[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void classes_init(void)
{
    for (int c = 0; c < 256; c++)
        g_class[c] = c < 0x20 ? C_CTL : c == '"' ? C_QUOTE : c == '\\' ? C_BSL : c >= 0x80 ? C_HIGH : C_ORD;
}

static const unsigned char *classes(void)
{
    pthread_once(&g_once, classes_init);
    return g_class;
}

static int fail(struct jscan *s, const char *why)
{
    if (!s->err)
        s->err = why;
    return -1;
}

void jscan_init(struct jscan *s, const char *text, size_t len)
{
    s->start = s->p = text, s->end = text + len, s->err = NULL;
}

char jscan_peek(struct jscan *s)
{
    if (s->p < s->end && (unsigned char)*s->p > ' ') /* most often: no white space */
        return *s->p;
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
    return s->p < s->end ? *s->p : 0;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15)
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

size_t jscan_utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0], n, cp;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (unsigned i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* s->p at the opening quote; leaves it after the closing one. */
static int string(struct jscan *s)
{
    const unsigned char *t = classes();
    const char *p = s->p + 1, *end = s->end;
    for (;;) {
#ifdef __SSE2__
        /* sixteen bytes at a time while none is a quote, a backslash, a control character or above 0x7f (the
         * last two at once: below 0x20 as signed bytes) */
        const __m128i quote = _mm_set1_epi8('"'), bsl = _mm_set1_epi8('\\'), sp = _mm_set1_epi8(0x20);
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bsl)),
                                     _mm_cmplt_epi8(v, sp));
            int bits = _mm_movemask_epi8(m);
            if (bits) {
                p += __builtin_ctz((unsigned)bits);
                break;
            }
            p += 16;
        }
#endif
        /* eight bytes at a time while none is a quote, a backslash, a control character or above 0x7f */
        const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
            if (((q - ones) & ~q & highs) | ((b - ones) & ~b & highs) | ((w - ones * 0x20) & ~w & highs) |
                (w & highs))
                break;
            p += 8;
        }
        while (p < end && t[(unsigned char)*p] == C_ORD)
            p++;
        if (p >= end)
            return s->p = p, fail(s, "a string without its end");
        switch (t[(unsigned char)*p]) {
        case C_QUOTE: s->p = p + 1; return 0;
        case C_CTL: s->p = p; return fail(s, "a control character in a string");
        case C_HIGH: {
            size_t n = jscan_utf8_len((const unsigned char *)p, (const unsigned char *)end);
            if (!n)
                return s->p = p, fail(s, "a string that is not UTF-8");
            p += n;
            break;
        }
        default: /* a backslash */
            if (p + 1 >= end)
                return s->p = p, fail(s, "a string without its end");
            if (p[1] == 'u') {
                unsigned v;
                if (end - p < 6 || hex4(p + 2, &v) < 0)
                    return s->p = p, fail(s, "a bad \\u escape");
                if (v == 0)
                    return s->p = p, fail(s, "\\u0000 is not allowed");
                p += 6;
                if (v >= 0xd800 && v <= 0xdbff) { /* a high surrogate: its low one must follow */
                    unsigned w;
                    if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &w) < 0 || w < 0xdc00 ||
                        w > 0xdfff)
                        return s->p = p, fail(s, "a lone surrogate in a \\u escape");
                    p += 6;
                } else if (v >= 0xdc00 && v <= 0xdfff) {
                    return s->p = p, fail(s, "a lone surrogate in a \\u escape");
                }
            } else if (strchr("\"\\/bfnrt", p[1]) && p[1]) {
                p += 2;
            } else {
                return s->p = p, fail(s, "a bad escape in a string");
            }
        }
    }
}

static int number(struct jscan *s)
{
    const char *p = s->p, *end = s->end;
    bool real = false;
    if (p < end && *p == '-')
        p++;
    if (p < end && *p == '0')
        p++;
    else if (p < end && *p >= '1' && *p <= '9')
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    else
        return fail(s, "a bad number");
    if (p < end && *p == '.') {
        real = true;
        if (++p >= end || *p < '0' || *p > '9')
            return s->p = p, fail(s, "a bad number");
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        real = true;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return s->p = p, fail(s, "a bad number");
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    /* jansson's limits: an integer within long long, a real within a double's range */
    char tmp[64];
    size_t n = (size_t)(p - s->p);
    bool fits = true;
    if (!real && n <= 18) {
        /* at most 18 digits: within long long, no need to ask strtoll */
    } else if (n < sizeof tmp) {
        memcpy(tmp, s->p, n);
        tmp[n] = 0;
        errno = 0;
        if (real) {
            double v = strtod(tmp, NULL);
            fits = !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL));
        } else {
            (void)strtoll(tmp, NULL, 10);
            fits = errno != ERANGE;
        }
    } else if (!real) {
        fits = false; /* over 63 characters of digits */
    } else { /* a long real: its exponent decides; strtod it from a copy */
        char *big = malloc(n + 1);
        if (!big)
            return fail(s, "out of memory");
        memcpy(big, s->p, n);
        big[n] = 0;
        errno = 0;
        double v = strtod(big, NULL);
        fits = !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL));
        free(big);
    }
    if (!fits)
        return fail(s, real ? "a real number out of range" : "an integer out of range");
    s->p = p;
    return 0;
}

static int literal(struct jscan *s, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n))
        return fail(s, "an unexpected character");
    s->p += n;
    return 0;
}

int jscan_open(struct jscan *s, char bracket)
{
    if (jscan_peek(s) != bracket)
        return fail(s, bracket == '{' ? "an object expected" : "an array expected");
    s->p++;
    return 0;
}

/* The next member or element of a container: 0 at its closing bracket (consumed), 1 with s->p at the item (past
 * its comma), -1 on an error. */
static int next_item(struct jscan *s, bool *first, char close, const char *err)
{
    char c = jscan_peek(s);
    if (c == close) {
        s->p++;
        return 0;
    }
    if (!*first) {
        if (c != ',')
            return fail(s, err);
        s->p++;
        jscan_peek(s);
    }
    *first = false;
    return 1;
}

int jscan_member(struct jscan *s, bool *first, const char **key, size_t *klen)
{
    int r = next_item(s, first, '}', "',' or '}' expected");
    if (r <= 0)
        return r;
    if (jscan_peek(s) != '"')
        return fail(s, "a key expected");
    const char *k = s->p + 1;
    if (string(s) < 0)
        return -1;
    *key = k, *klen = (size_t)(s->p - 1 - k);
    if (jscan_peek(s) != ':')
        return fail(s, "':' expected");
    s->p++;
    jscan_peek(s);
    return 1;
}

int jscan_element(struct jscan *s, bool *first)
{
    return next_item(s, first, ']', "',' or ']' expected");
}

int jscan_value(struct jscan *s, int depth)
{
    if (depth > JSCAN_MAX_DEPTH)
        return fail(s, "nested too deep");
    bool first = true;
    const char *k;
    size_t kl;
    int r;
    switch (jscan_peek(s)) {
    case '{':
        s->p++;
        while ((r = jscan_member(s, &first, &k, &kl)) == 1)
            if (jscan_value(s, depth + 1) < 0)
                return -1;
        return r;
    case '[':
        s->p++;
        while ((r = jscan_element(s, &first)) == 1)
            if (jscan_value(s, depth + 1) < 0)
                return -1;
        return r;
    case '"': return string(s);
    case 't': return literal(s, "true");
    case 'f': return literal(s, "false");
    case 'n': return literal(s, "null");
    case 0: return fail(s, "a value expected, the end found");
    default: return number(s);
    }
}

bool jscan_key_is(const char *key, size_t klen, const char *want)
{
    if (!memchr(key, '\\', klen))
        return klen == strlen(want) && !strncasecmp(key, want, klen);
    /* escapes: decode the key as the JSON string it is (it was checked) */
    json_t *v = json_loadb(key - 1, klen + 2, JSON_DECODE_ANY, NULL);
    bool is = json_is_string(v) && !strcasecmp(json_string_value(v), want);
    json_decref(v);
    return is;
}

int jscan_finish(struct jscan *s)
{
    return jscan_peek(s) ? fail(s, "end of text expected") : 0;
}
