/* pl_trace.c - the trace source (pl_trace.h).  Strict: a line is a comment, blank, or exactly `tid address
 * [source]`; anything else stops the read with the line's number, since a half-read recording would cluster a
 * different application than the one recorded. */
#define _GNU_SOURCE /* getline */
#include "pl_trace.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"

static int parse_tid(const char *s, uint32_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s))
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int parse_addr(const char *s, uint64_t *out)
{
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    size_t n = strlen(s);
    if (!n || n > 16 || strspn(s, "0123456789abcdefABCDEF") != n)
        return -1;
    *out = strtoull(s, NULL, 16);
    return 0;
}

int pl_trace_read(const char *path, pl_sample_fn fn, void *ctx, char *why, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return ib_why(why, len, -errno, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    unsigned long no = 0;
    int rc = 0;
    while ((got = getline(&line, &cap, f)) >= 0) {
        no++;
        if (memchr(line, '\0', (size_t)got)) {
            rc = ib_why(why, len, -EINVAL, "%s:%lu: a NUL byte (not a text trace)", path, no);
            break;
        }
        char *tok[4], *save = NULL;
        unsigned nt = 0;
        for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
            if (nt == 0 && t[0] == '#')
                break;
            if (nt == 4)
                break;
            tok[nt++] = t;
        }
        if (!nt)
            continue;
        if (nt < 2 || nt > 3) {
            rc = ib_why(why, len, -EINVAL, "%s:%lu: 'tid address [source]' expected, %s", path, no,
                        nt < 2 ? "1 field" : "more than 3 fields");
            break;
        }
        struct pl_sample s = {0, 0, PL_SRC_UNKNOWN};
        if (parse_tid(tok[0], &s.tid)) {
            rc = ib_why(why, len, -EINVAL, "%s:%lu: '%s': a decimal thread id (0-4294967295) expected", path, no,
                        tok[0]);
            break;
        }
        if (parse_addr(tok[1], &s.addr)) {
            rc = ib_why(why, len, -EINVAL, "%s:%lu: '%s': a hexadecimal address (at most 64 bits) expected", path, no,
                        tok[1]);
            break;
        }
        if (nt == 3) {
            int src = pl_src_parse(tok[2]);
            if (src < 0) {
                rc = ib_why(why, len, -EINVAL, "%s:%lu: '%s': unknown, local, remote or memory expected", path, no,
                            tok[2]);
                break;
            }
            s.src = (enum pl_src)src;
        }
        if ((rc = fn(ctx, &s)) != 0) {
            if (rc > 0)
                rc = -ECANCELED;
            ib_why(why, len, rc, "%s:%lu: the consumer stopped: %s", path, no, strerror(-rc));
            break;
        }
    }
    if (!rc && ferror(f))
        rc = ib_why(why, len, -EIO, "%s: read error", path);
    free(line);
    fclose(f);
    return rc;
}
