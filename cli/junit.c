/* junit.c - `ibench validate`'s result document as JUnit XML (junit.h). The text is built in a growing buffer; every
 * string from the document goes through one escaper, so a reason can hold any character and the XML stays valid. */
#define _GNU_SOURCE
#include "junit.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ib_err.h"

/* ---- the text, written to a memory stream (open_memstream): the first failure sticks, and everything after it is
 * dropped; p and n hold the text once sb_done has closed the stream ---------------------------------------------- */

struct sb {
    FILE *f;
    char *p;
    size_t n;
    int err;
};

static int sb_open(struct sb *b)
{
    if (!b->err && !b->f && !(b->f = open_memstream(&b->p, &b->n)))
        b->err = -ENOMEM;
    return b->err;
}

static void sb_put(struct sb *b, const char *s, size_t k)
{
    if (sb_open(b) == 0 && k && fwrite(s, 1, k, b->f) != k)
        b->err = -ENOMEM;
}

static void sb_str(struct sb *b, const char *s) { sb_put(b, s, strlen(s)); }

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sb *b, const char *fmt, ...)
{
    if (sb_open(b) < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(b->f, fmt, ap) < 0)
        b->err = -ENOMEM;
    va_end(ap);
}

/* Close the stream: p (malloc'd, NULL when nothing was written) and n are the text. 0 or the first failure. */
static int sb_done(struct sb *b)
{
    if (b->f && fclose(b->f) != 0 && !b->err)
        b->err = -ENOMEM;
    b->f = NULL;
    return b->err;
}

/* The well-formed UTF-8 character at s[0..n): its length when XML 1.0 admits it (Char: #x9 | #xA | #xD |
 * [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]), minus its length when it forbids it, 0 for a byte that
 * starts no character. */
static long xml_char_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' ? 1 : -1;
    size_t k = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!k || k > n)
        return 0;
    uint32_t cp = c & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000}; /* overlong forms are not UTF-8 */
    if (cp < least[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return cp == 0xfffe || cp == 0xffff ? -(long)k : (long)k;
}

/* s[0..n) as XML character data (attr = 0) or an attribute value between double quotes (attr = 1): the five
 * markup characters as entities; in an attribute, tab, line feed and carriage return as character references (a
 * reader would normalise them to spaces); a character XML 1.0 forbids (NUL and the other C0 controls, U+FFFE,
 * U+FFFF) as '?', and each byte that is not UTF-8 too. */
static void sb_esc(struct sb *b, const char *str, size_t n, int attr)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t run = 0; /* characters copied as they are, written in one go */
    for (size_t i = 0; i < n;) {
        const char *rep = NULL;
        long c = xml_char_len(s + i, n - i);
        size_t k = c > 0 ? (size_t)c : c < 0 ? (size_t)-c : 1; /* a byte that is not UTF-8: one '?' per byte */
        switch (c > 0 ? s[i] : 0) {
        case 0: rep = "?"; break;
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        case '\t': rep = attr ? "&#9;" : NULL; break;
        case '\n': rep = attr ? "&#10;" : NULL; break;
        case '\r': rep = "&#13;"; break; /* in text too: a reader turns a bare CR into LF */
        default: break;
        }
        if (rep) {
            sb_put(b, str + i - run, run);
            run = 0;
            sb_str(b, rep);
        } else {
            run += k;
        }
        i += k;
    }
    sb_put(b, str + n - run, run);
}

/* A JSON string escaped; NUL inside it (\u0000) is a character like any other, so the length is jansson's. */
static void sb_jstr(struct sb *b, const json_t *s, int attr)
{
    sb_esc(b, json_string_value(s), json_string_length(s), attr);
}

/* ---- verdicts ---------------------------------------------------------------------------------------------------- */

enum jv { JV_PASS, JV_FAIL, JV_SKIP };

/* How the verdict v[0..n) lands in JUnit under fail_on; *known = 0 for a name this ibench does not know. */
static enum jv classify(const char *v, size_t n, unsigned fail_on, int *known)
{
    static const struct {
        const char *name;
        unsigned bit; /* the fail_on bit that makes it a failure; 0: never one */
        enum jv as;
    } names[] = {
        {"pass", 0, JV_PASS},          {"FAIL", 0, JV_FAIL},
        {"BUSY", JUNIT_FAIL_BUSY, JV_SKIP}, {"ISOLATED", JUNIT_FAIL_ISOLATED, JV_SKIP},
        {"UNCHECKED", JUNIT_FAIL_UNCHECKED, JV_SKIP}, {"skipped", 0, JV_SKIP},
        {"undecidable", 0, JV_SKIP},   {"interrupted", 0, JV_SKIP},
    };
    *known = 1;
    for (size_t i = 0; i < IB_ARRAY_SIZE(names); i++)
        if (n == strlen(names[i].name) && !memcmp(v, names[i].name, n))
            return names[i].bit & fail_on ? JV_FAIL : names[i].as;
    /* A verdict this ibench does not know (a newer producer's, or a typo) fails: a reader must not pass what it
     * does not understand, and a CI job that fails on it says where to look. */
    *known = 0;
    return JV_FAIL;
}

int junit_verdict_fails(const char *verdict, unsigned fail_on)
{
    int known;
    return !verdict || classify(verdict, strlen(verdict), fail_on, &known) == JV_FAIL;
}

int junit_fail_on_parse(const char *list, unsigned *mask, char *why, size_t len)
{
    static const struct {
        const char *name;
        unsigned bits;
    } names[] = {{"busy", JUNIT_FAIL_BUSY},
                 {"isolated", JUNIT_FAIL_ISOLATED},
                 {"unchecked", JUNIT_FAIL_UNCHECKED},
                 {"all", JUNIT_FAIL_ALL}};
    if (!list || !*list)
        return ib_why(why, len, -EINVAL, "--fail-on: empty; give busy, isolated, unchecked (comma-separated) or all");
    unsigned m = 0;
    for (const char *p = list;;) {
        size_t k = strcspn(p, ",");
        size_t i = 0;
        while (i < IB_ARRAY_SIZE(names) && !(k == strlen(names[i].name) && !strncasecmp(p, names[i].name, k)))
            i++;
        if (i == IB_ARRAY_SIZE(names))
            return ib_why(why, len, -EINVAL, "--fail-on: '%.*s' is not busy, isolated, unchecked or all",
                          (int)(k < 64 ? k : 64), p);
        m |= names[i].bits;
        if (!p[k])
            break;
        p += k + 1;
    }
    *mask = m;
    return 0;
}

/* ---- the document ------------------------------------------------------------------------------------------------ */

struct cases {
    struct sb xml; /* the <testcase> elements, counted as they are written */
    unsigned tests, failures, skipped;
    char **names; /* the overlap checks' names so far, to keep each one distinct */
    unsigned nnames;
};

/* A member that must be a string when present: 0 and *s (NULL when absent), or -EINVAL with why. */
static int opt_str(const json_t *o, const char *key, const char *where, const json_t **s, char *why, size_t len)
{
    *s = json_object_get(o, key);
    if (*s && !json_is_string(*s))
        return ib_why(why, len, -EINVAL, "not a validate result: %s: \"%s\" is not a string", where, key);
    return 0;
}

/* "seconds" when present: a number >= 0. *sec < 0 when absent. */
static int opt_seconds(const json_t *o, const char *where, double *sec, char *why, size_t len)
{
    const json_t *t = json_object_get(o, "seconds");
    *sec = -1;
    if (!t || json_is_null(t))
        return 0;
    double v = json_number_value(t);
    if (!json_is_number(t) || !isfinite(v) || v < 0)
        return ib_why(why, len, -EINVAL, "not a validate result: %s: \"seconds\" is not a number of seconds >= 0",
                      where);
    *sec = v;
    return 0;
}

/* One <testcase>. name is name_n bytes (cut where the caller shortened it); full, when given, is the whole text the
 * name was cut from, kept in <system-out>. reason may be NULL. */
static void add_case(struct cases *c, const char *classname, const char *name, size_t name_n, const json_t *full,
                     const json_t *verdict, const json_t *reason, double sec, unsigned fail_on)
{
    struct sb *b = &c->xml;
    const char *vs = json_string_value(verdict);
    size_t vn = json_string_length(verdict);
    int known;
    enum jv as = classify(vs, vn, fail_on, &known);
    const char *rs = reason ? json_string_value(reason) : "";
    size_t rn = reason ? json_string_length(reason) : 0;
    c->tests++;
    sb_str(b, "    <testcase classname=\"");
    sb_esc(b, classname, strlen(classname), 1);
    sb_str(b, "\" name=\"");
    sb_esc(b, name, name_n, 1);
    sb_str(b, "\"");
    if (sec >= 0)
        sb_printf(b, " time=\"%.3f\"", sec);
    if (as == JV_PASS && !full) {
        sb_str(b, "/>\n");
        return;
    }
    sb_str(b, ">\n");
    if (as == JV_FAIL) {
        c->failures++;
        sb_str(b, "      <failure message=\"");
        if (!known) {
            sb_str(b, "verdict '");
            sb_esc(b, vs, vn, 1);
            sb_str(b, "' unknown to this ibench");
            sb_str(b, rn ? ": " : "");
        }
        sb_esc(b, rs, rn, 1);
        sb_str(b, "\" type=\"");
        if (known)
            sb_esc(b, vs, vn, 1);
        else
            sb_str(b, "unknown");
        sb_str(b, "\">");
        sb_esc(b, rs, rn, 0);
        sb_str(b, "</failure>\n");
    } else if (as == JV_SKIP) {
        c->skipped++;
        sb_str(b, "      <skipped message=\"");
        sb_esc(b, vs, vn, 1);
        sb_str(b, rn ? ": " : "");
        sb_esc(b, rs, rn, 1);
        sb_str(b, "\"/>\n");
    }
    if (full) {
        sb_str(b, "      <system-out>");
        sb_jstr(b, full, 0);
        sb_str(b, "</system-out>\n");
    }
    sb_str(b, "    </testcase>\n");
}

/* One element of "sois": a test case per element of its "checks", or one named "validate" from its own verdict. */
static int soi_cases(struct cases *c, const json_t *r, size_t i, unsigned fail_on, char *why, size_t len)
{
    char where[96], cls[160];
    snprintf(where, sizeof(where), "sois[%zu]", i);
    const json_t *name, *checks = json_is_object(r) ? json_object_get(r, "checks") : NULL;
    if (!json_is_object(r) || !json_is_string(name = json_object_get(r, "soi")))
        return ib_why(why, len, -EINVAL, "not a validate result: %s is not an object with a \"soi\" name", where);
    snprintf(cls, sizeof(cls), "ibench.validate.%s", json_string_value(name));
    snprintf(where, sizeof(where), "sois[%zu] (%.40s)", i, json_string_value(name));
    if (checks && !json_is_null(checks) && !json_is_array(checks))
        return ib_why(why, len, -EINVAL, "not a validate result: %s: \"checks\" is not an array", where);
    const json_t *v, *reason;
    int rc;
    if (!json_array_size(checks)) { /* skipped as a whole, or a producer without checks: the SoI's own verdict */
        if (!json_is_string(v = json_object_get(r, "verdict")))
            return ib_why(why, len, -EINVAL, "not a validate result: %s has no checks and no \"verdict\"", where);
        if ((rc = opt_str(r, "reason", where, &reason, why, len)) < 0)
            return rc;
        add_case(c, cls, "validate", strlen("validate"), NULL, v, reason, -1, fail_on);
        return 0;
    }
    size_t k;
    const json_t *ck, *cn;
    json_array_foreach(checks, k, ck) {
        char at[160];
        snprintf(at, sizeof(at), "%s: checks[%zu]", where, k);
        double sec;
        if (!json_is_object(ck) || !json_is_string(cn = json_object_get(ck, "check")) ||
            !json_is_string(v = json_object_get(ck, "verdict")))
            return ib_why(why, len, -EINVAL, "not a validate result: %s is not an object with \"check\" and "
                          "\"verdict\" strings", at);
        if ((rc = opt_str(ck, "reason", at, &reason, why, len)) < 0 || (rc = opt_seconds(ck, at, &sec, why, len)) < 0)
            return rc;
        add_case(c, cls, json_string_value(cn), json_string_length(cn), NULL, v, reason, sec, fail_on);
    }
    return 0;
}

/* An overlap check, named by its text cut to JUNIT_NAME_MAX bytes at a character's start ("..." where cut; the
 * whole text then in <system-out>), made distinct from the names before it by " (2)", " (3)", ... */
static int overlap_case(struct cases *c, const json_t *ck, size_t i, unsigned fail_on, char *why, size_t len)
{
    const json_t *text, *v;
    if (!json_is_object(ck) || !json_is_string(text = json_object_get(ck, "check")) ||
        !json_is_string(v = json_object_get(ck, "verdict")))
        return ib_why(why, len, -EINVAL, "not a validate result: overlap_checks[%zu] is not an object with \"check\" "
                      "and \"verdict\" strings", i);
    const char *t = json_string_value(text);
    size_t n = json_string_length(text), cut = n;
    if (n > JUNIT_NAME_MAX) {
        cut = JUNIT_NAME_MAX - 3;
        while (cut > 0 && ((unsigned char)t[cut] & 0xc0) == 0x80)
            cut--;
    }
    char name[JUNIT_NAME_MAX + 16];
    for (size_t k = 0; k < cut; k++)
        name[k] = t[k] ? t[k] : '?'; /* a NUL in the text (\u0000) is written as '?' anyway: the name stays whole */
    strcpy(name + cut, cut < n ? "..." : "");
    size_t base = strlen(name);
    for (unsigned dup = 2;; dup++) {
        unsigned j = 0;
        while (j < c->nnames && strcmp(c->names[j], name))
            j++;
        if (j == c->nnames)
            break;
        snprintf(name + base, sizeof(name) - base, " (%u)", dup);
    }
    char **names = realloc(c->names, (c->nnames + 1) * sizeof(*names));
    if (!names)
        return -ENOMEM;
    c->names = names;
    if (!(names[c->nnames] = strdup(name)))
        return -ENOMEM;
    c->nnames++;
    add_case(c, "ibench.validate.overlap", name, strlen(name), cut < n ? text : NULL, v, text, -1, fail_on);
    return 0;
}

/* The document's scalar members (ibench's version, quick, the CPUs used, ...) as <property> elements. */
static void properties(struct sb *b, const json_t *doc)
{
    const char *key;
    const json_t *val;
    int any = 0;
    json_object_foreach((json_t *)doc, key, val) {
        if (!json_is_string(val) && !json_is_number(val) && !json_is_boolean(val))
            continue;
        sb_str(b, any++ ? "" : "    <properties>\n");
        sb_str(b, "      <property name=\"");
        sb_esc(b, key, strlen(key), 1);
        sb_str(b, "\" value=\"");
        if (json_is_string(val))
            sb_jstr(b, val, 1);
        else if (json_is_integer(val))
            sb_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(val));
        else if (json_is_real(val))
            sb_printf(b, "%.15g", json_real_value(val));
        else
            sb_str(b, json_is_true(val) ? "true" : "false");
        sb_str(b, "\"/>\n");
    }
    sb_str(b, any ? "    </properties>\n" : "");
}

int junit_from_validate(const json_t *doc, unsigned fail_on, char **xml, char *why, size_t len)
{
    if (!xml)
        return ib_why(why, len, -EINVAL, "junit: no place for the XML");
    *xml = NULL;
    if (!json_is_object(doc))
        return ib_why(why, len, -EINVAL, "not a validate result: the document is not a JSON object");
    const json_t *sois = json_object_get(doc, "sois"), *ov = json_object_get(doc, "overlap_checks"), *e;
    if (sois && !json_is_array(sois))
        return ib_why(why, len, -EINVAL, "not a validate result: \"sois\" is not an array");
    if (ov && !json_is_array(ov))
        return ib_why(why, len, -EINVAL, "not a validate result: \"overlap_checks\" is not an array");
    double sec;
    int rc = opt_seconds(doc, "the document", &sec, why, len);
    if (rc < 0)
        return rc;
    struct cases c = {0};
    size_t i;
    json_array_foreach(sois, i, e) {
        if ((rc = soi_cases(&c, e, i, fail_on, why, len)) < 0)
            break;
    }
    if (rc == 0)
        json_array_foreach(ov, i, e) {
            if ((rc = overlap_case(&c, e, i, fail_on, why, len)) < 0)
                break;
        }
    for (unsigned j = 0; j < c.nnames; j++)
        free(c.names[j]);
    free(c.names);
    if (sb_done(&c.xml) < 0 && rc == 0)
        rc = c.xml.err;
    struct sb out = {0};
    if (rc == 0) {
        /* Jenkins' junit-10.xsd has no "skipped" on <testsuites>: the count is the <testsuite>'s */
        char t[64];
        snprintf(t, sizeof(t), "%.3f", sec < 0 ? 0 : sec);
        sb_str(&out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb_printf(&out, "<testsuites name=\"ibench validate\" tests=\"%u\" failures=\"%u\" errors=\"0\" time=\"%s\">\n",
                  c.tests, c.failures, t);
        sb_printf(&out, "  <testsuite name=\"ibench validate\" tests=\"%u\" failures=\"%u\" errors=\"0\" "
                  "skipped=\"%u\" time=\"%s\">\n", c.tests, c.failures, c.skipped, t);
        properties(&out, doc);
        if (c.xml.n)
            sb_put(&out, c.xml.p, c.xml.n);
        sb_str(&out, "  </testsuite>\n</testsuites>\n");
    }
    if (sb_done(&out) < 0 && rc == 0)
        rc = out.err;
    free(c.xml.p);
    if (rc < 0) {
        free(out.p);
        if (rc == -ENOMEM)
            ib_why(why, len, rc, "junit: out of memory");
        return rc;
    }
    *xml = out.p;
    return 0;
}
