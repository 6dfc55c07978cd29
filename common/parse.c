/* parse.c - strict parsers for command-line values.
 *
 * Every parser consumes the whole string or fails: no leading or trailing blanks, no partial parses, and the
 * output is written only on success.  Errors: -EINVAL for malformed input, -ERANGE for well-formed input whose
 * value does not fit (overflow, outside [min,max], a non-zero duration that rounds to 0 ns).
 *
 * Durations and sizes are parsed as exact decimal fixed point (no floating point), so "1.5" s is exactly
 * 1500000000 ns and "1.5M" exactly 1572864 bytes.  They take no sign and no exponent.
 *
 * parse_double uses strtod, which honours LC_NUMERIC; ibench never calls setlocale(), so '.' is the decimal
 * point.
 */
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

/* Largest CPU id parse_cpulist accepts (hwloc bitmaps grow to the largest index set). */
#define PARSE_CPU_MAX_ID 65535UL
/* Fraction digits kept by the fixed-point parser (10^18 < 2^63). */
#define FIX_MAX_FDIG 18u

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Length of an unsigned decimal number at s: digits [. digits] or . digits, optionally followed by an exponent
 * [eE][+-]digits when allow_exp.  0 if there is no number (no digit at all). */
static size_t scan_decimal(const char *s, int allow_exp)
{
    size_t i = 0, nd = 0;

    while (is_digit(s[i])) {
        i++;
        nd++;
    }
    if (s[i] == '.') {
        i++;
        while (is_digit(s[i])) {
            i++;
            nd++;
        }
    }
    if (nd == 0)
        return 0;
    if (allow_exp && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-')
            j++;
        if (is_digit(s[j])) {
            while (is_digit(s[j]))
                j++;
            i = j;
        }
    }
    return i;
}

int parse_double(const char *s, double *out)
{
    if (!s || !out)
        return -EINVAL;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    /* Our own grammar check first: strtod would also take blanks, "nan", "inf", hex floats. */
    size_t n = scan_decimal(p, 1);
    if (n == 0 || p[n] != '\0')
        return -EINVAL;

    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end != p + n)
        return -EINVAL;
    if (errno == ERANGE && fabs(v) > 1.0)
        return -ERANGE; /* overflow; underflow to a denormal/zero is accepted */
    if (!isfinite(v))
        return -ERANGE;
    *out = v;
    return 0;
}

int parse_intensity(const char *s, double *out)
{
    char buf[64];
    double v;

    if (!s || !out)
        return -EINVAL;
    size_t len = strlen(s);
    if (len > 0 && s[len - 1] == '%')
        len--;
    if (len == 0 || len >= sizeof(buf))
        return -EINVAL;
    /* No sign: "-0" or "+5" are not intensities anyone means. */
    if (s[0] == '+' || s[0] == '-')
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    int rc = parse_double(buf, &v);
    if (rc)
        return rc;
    if (!(v >= 0.0 && v <= 100.0))
        return -ERANGE;
    *out = v;
    return 0;
}

/* An exact unsigned decimal: ip + fnum / 10^fdig. */
struct fixnum {
    uint64_t ip;
    uint64_t fnum;
    unsigned fdig;
    int ovf;     /* integer part overflowed uint64 */
    int inexact; /* non-zero fraction digits beyond FIX_MAX_FDIG were dropped */
};

/* Scans digits [. digits] or . digits (no sign, no exponent) at the start of s. Returns the end of the number (its
 * suffix), NULL when s is NULL or does not start with a number. */
static const char *scan_fixed(const char *s, struct fixnum *f)
{
    size_t i = 0, nd = 0;

    memset(f, 0, sizeof(*f));
    if (!s)
        return NULL;
    while (is_digit(s[i])) {
        unsigned d = (unsigned)(s[i] - '0');
        if (f->ip > (UINT64_MAX - d) / 10)
            f->ovf = 1;
        else
            f->ip = f->ip * 10 + d;
        i++;
        nd++;
    }
    if (s[i] == '.') {
        i++;
        while (is_digit(s[i])) {
            unsigned d = (unsigned)(s[i] - '0');
            if (f->fdig < FIX_MAX_FDIG) {
                f->fnum = f->fnum * 10 + d;
                f->fdig++;
            } else if (d != 0) {
                f->inexact = 1;
            }
            i++;
            nd++;
        }
    }
    if (nd == 0)
        return NULL;
    while (f->fdig > 0 && f->fnum % 10 == 0) {
        f->fnum /= 10;
        f->fdig--;
    }
    return s + i;
}

static int fix_is_zero(const struct fixnum *f)
{
    return !f->ovf && f->ip == 0 && f->fnum == 0 && !f->inexact;
}

/* *out = f * mult.  With round_nearest the fraction is rounded (half up); otherwise the product must be whole
 * (-EINVAL if not).  -ERANGE if it does not fit in uint64. */
static int fix_mul(const struct fixnum *f, uint64_t mult, int round_nearest, uint64_t *out)
{
    if (f->ovf)
        return -ERANGE;
    uint64_t p10 = 1;
    for (unsigned i = 0; i < f->fdig; i++)
        p10 *= 10;
    unsigned __int128 whole = (unsigned __int128)f->ip * mult;
    unsigned __int128 fr = (unsigned __int128)f->fnum * mult;
    unsigned __int128 q = fr / p10, r = fr % p10;
    if (round_nearest) {
        if (r * 2 >= p10)
            q++;
    } else if (r != 0 || f->inexact) {
        return -EINVAL;
    }
    whole += q;
    if (whole > UINT64_MAX)
        return -ERANGE;
    *out = (uint64_t)whole;
    return 0;
}

int parse_duration_ns(const char *s, int allow_zero, uint64_t *out)
{
    static const struct {
        const char *sfx;
        uint64_t mult;
    } units[] = {
        {"", 1000000000ULL},  {"ns", 1ULL}, {"us", 1000ULL}, {"ms", 1000000ULL},
        {"s", 1000000000ULL}, {"m", 60ULL * 1000000000ULL},
    };
    struct fixnum f;
    const char *sfx = scan_fixed(s, &f);
    if (!sfx || !out)
        return -EINVAL;
    uint64_t mult = 0;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(sfx, units[i].sfx) == 0) {
            mult = units[i].mult;
            break;
        }
    }
    if (mult == 0)
        return -EINVAL;
    uint64_t v;
    int rc = fix_mul(&f, mult, 1, &v);
    if (rc)
        return rc;
    if (v == 0) {
        if (!fix_is_zero(&f))
            return -ERANGE; /* e.g. "0.1ns": non-zero but below the resolution */
        if (!allow_zero)
            return -EINVAL;
    }
    *out = v;
    return 0;
}

int parse_size(const char *s, uint64_t *out)
{
    struct fixnum f;
    const char *p = scan_fixed(s, &f);
    if (!p || !out)
        return -EINVAL;
    unsigned shift = 0;
    switch (lower(*p)) {
    case 'k': shift = 10; break;
    case 'm': shift = 20; break;
    case 'g': shift = 30; break;
    case 't': shift = 40; break;
    default: break;
    }
    if (shift) {
        p++;
        if (lower(p[0]) == 'i' && lower(p[1]) == 'b')
            p += 2;
        else if (lower(p[0]) == 'b')
            p++;
    } else if (lower(p[0]) == 'b') {
        p++; /* "4096B" */
    }
    if (*p != '\0')
        return -EINVAL;
    uint64_t v;
    int rc = fix_mul(&f, 1ULL << shift, 0, &v);
    if (rc)
        return rc;
    if (v == 0 && strcmp(s, "0") != 0)
        return -EINVAL;
    *out = v;
    return 0;
}

int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
    unsigned long v = 0;

    if (!s || !out || min > max || !is_digit(s[0]))
        return -EINVAL;
    for (const char *p = s; *p; p++) {
        if (!is_digit(*p))
            return -EINVAL;
        unsigned d = (unsigned)(*p - '0');
        if (v > (~0UL - d) / 10) {
            /* keep scanning so trailing junk still reports -EINVAL */
            for (const char *q = p; *q; q++)
                if (!is_digit(*q))
                    return -EINVAL;
            return -ERANGE;
        }
        v = v * 10 + d;
    }
    if (v < min || v > max)
        return -ERANGE;
    *out = v;
    return 0;
}

/* One CPU id for the list pre-check: decimal, no leading zeros (hwloc reads "010" as octal), <= max id. */
static int cpulist_num(const char **pp, unsigned long *v)
{
    const char *p = *pp;
    unsigned long x = 0;

    if (!is_digit(*p))
        return -EINVAL;
    if (p[0] == '0' && is_digit(p[1]))
        return -EINVAL;
    while (is_digit(*p)) {
        x = x * 10 + (unsigned long)(*p - '0');
        if (x > PARSE_CPU_MAX_ID)
            return -ERANGE;
        p++;
    }
    *pp = p;
    *v = x;
    return 0;
}

int parse_cpulist(const char *s, int **cpus, unsigned *n)
{
    if (cpus)
        *cpus = NULL;
    if (n)
        *n = 0;
    if (!s || !cpus || !n || !*s)
        return -EINVAL;

    /* hwloc_bitmap_list_sscanf is lenient (blanks, signs, hex/octal, junk after a number, open "3-" ranges,
     * reversed ranges silently empty); accept only  num[-num](,num[-num])*  with lo <= hi. */
    const char *p = s;
    for (;;) {
        unsigned long lo, hi;
        int rc = cpulist_num(&p, &lo);
        if (rc)
            return rc;
        if (*p == '-') {
            p++;
            rc = cpulist_num(&p, &hi);
            if (rc)
                return rc;
            if (hi < lo)
                return -EINVAL;
        }
        if (*p == '\0')
            break;
        if (*p != ',')
            return -EINVAL;
        p++; /* an empty element or trailing comma fails in cpulist_num */
    }

    hwloc_bitmap_t bm = hwloc_bitmap_alloc();
    if (!bm)
        return -ENOMEM;
    int ret = 0;
    if (hwloc_bitmap_list_sscanf(bm, s) < 0) {
        ret = -EINVAL;
        goto out;
    }
    int w = hwloc_bitmap_weight(bm);
    if (w <= 0) { /* empty, or infinite (-1) */
        ret = -EINVAL;
        goto out;
    }
    int *arr = malloc((size_t)w * sizeof(*arr));
    if (!arr) {
        ret = -ENOMEM;
        goto out;
    }
    unsigned k = 0;
    unsigned id;
    hwloc_bitmap_foreach_begin(id, bm)
    {
        if (k < (unsigned)w)
            arr[k++] = (int)id;
    }
    hwloc_bitmap_foreach_end();
    *cpus = arr;
    *n = k;
out:
    hwloc_bitmap_free(bm);
    return ret;
}

const char *fmt_scaled(double v, int binary, int decimals, const char *unit, char *buf, unsigned len)
{
    static const char *const dpfx[] = {"", "k", "M", "G", "T", "P", "E"}, *const bpfx[] = {"", "Ki", "Mi", "Gi", "Ti",
                                                                                          "Pi", "Ei"};
    const char *const *pfx = binary ? bpfx : dpfx;
    const size_t npfx = sizeof(dpfx) / sizeof(dpfx[0]);
    const double base = binary ? 1024.0 : 1000.0;
    size_t i = 0;
    double a = fabs(v);

    if (!buf || len == 0)
        return buf;
    if (!unit)
        unit = "";
    if (decimals > 9)
        decimals = 9;
    for (;;) { /* up a prefix while v would print as the base at this one */
        int whole = (i == 0 && binary) || decimals < 0;
        double top = base - (whole ? 0.5 : 0.5 * pow(10, -decimals));
        if (!isfinite(a) || i + 1 >= npfx || a < top)
            break;
        v /= base;
        a /= base;
        i++;
    }
    int dec = decimals;
    if (i == 0 && binary)
        dec = 0;
    else if (decimals < 0)
        dec = a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
    if (!*pfx[i] && !*unit)
        snprintf(buf, len, "%.*f", dec, v);
    else
        snprintf(buf, len, "%.*f %s%s", dec, v, pfx[i], unit);
    return buf;
}

const char *fmt_bytes(double bytes, char *buf, unsigned len)
{
    return fmt_scaled(bytes, 1, -1, "B", buf, len);
}

const char *fmt_rate(double per_s, const char *unit, char *buf, unsigned len)
{
    return fmt_scaled(per_s, 0, -1, unit, buf, len);
}
