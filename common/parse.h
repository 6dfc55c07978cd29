/* parse.h - strict parsers for command-line values. All return 0 or -EINVAL/-ERANGE; never a partial parse. */
#ifndef IB_PARSE_H
#define IB_PARSE_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Finite double, whole string consumed (leading/trailing spaces rejected). */
int parse_double(const char *s, double *out);
/* Intensity: a number in [0,100], optional trailing '%'. */
int parse_intensity(const char *s, double *out);
/* Duration: "1.5" (seconds), "250ms", "2s", "500us", "100ns", "1m" (minutes). Must be > 0 unless allow_zero. */
int parse_duration_ns(const char *s, int allow_zero, uint64_t *out);
/* Size: "4096", "64K", "1.5M", "2G", "1T" (binary multiples; optional trailing 'B' or 'iB': "64KiB"). */
int parse_size(const char *s, uint64_t *out);
/* Unsigned integer in [min,max]. */
int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);
/* CPU list "0-3,5" (hwloc list syntax) into a malloc'd sorted array of unique ids. */
int parse_cpulist(const char *s, int **cpus, unsigned *n);
/* The one number formatter: v with a decimal prefix (k, M, G: rates, as STREAM and fio do) or a binary one (Ki, Mi,
 * Gi: sizes) before unit, moved up a prefix where it would print as the base ("1024 KiB" -> "1.00 MiB").  decimals
 * < 0: three significant digits (2, 1 or 0 decimals); else that many.  The base unit of a binary scale prints whole
 * ("512 B").  No prefix and no unit: the number alone. */
const char *fmt_scaled(double v, int binary, int decimals, const char *unit, char *buf, unsigned len);
/* Bytes as "1.50 MiB", rates as "12.3 GB/s": fmt_scaled with three significant digits. */
const char *fmt_bytes(double bytes, char *buf, unsigned len);
const char *fmt_rate(double per_s, const char *unit, char *buf, unsigned len);

#ifdef __cplusplus
}
#endif
#endif
