/* pl_classes_parse.c - bandwidth files (pl_classes.h): {"version": 1, "bandwidth": [{"nodes": [...], ...}]}, read
 * strictly: the interconnect rule's input. */
#define _GNU_SOURCE
#include "pl_classes.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"

/* ---- bandwidth files ---------------------------------------------------------------------------------------- */

void pl_bandwidth_free(struct pl_bandwidth *b)
{
    if (!b)
        return;
    free(b->v);
    memset(b, 0, sizeof(*b));
}

int pl_bandwidth_parse(const char *text, struct pl_bandwidth *b, char *why, size_t len)
{
    memset(b, 0, sizeof(*b));
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc)
        return ib_why(why, len, -EINVAL, "bandwidth file: not JSON (line %d: %s)", je.line, je.text);
    int rc = 0;
    json_t *unit = json_object_get(doc, "unit"), *sets = json_object_get(doc, "sets");
    if (!json_is_object(doc) || !json_is_array(sets) || json_array_size(sets) == 0) {
        rc = ib_why(why, len, -EINVAL, "bandwidth file: want {\"unit\": ..., \"sets\": [{\"nodes\": [...], "
                                       "\"bandwidth\": X}, ...]}");
        goto out;
    }
    if (unit && (!json_is_string(unit) || strlen(json_string_value(unit)) >= sizeof(b->unit))) {
        rc = ib_why(why, len, -EINVAL, "bandwidth file: \"unit\" must be a short string");
        goto out;
    }
    snprintf(b->unit, sizeof(b->unit), "%s", unit ? json_string_value(unit) : "");
    b->v = calloc(json_array_size(sets), sizeof(*b->v));
    if (!b->v) {
        rc = ib_why(why, len, -ENOMEM, "out of memory");
        goto out;
    }
    size_t i;
    json_t *s;
    json_array_foreach(sets, i, s) {
        json_t *nodes = json_object_get(s, "nodes"), *bw = json_object_get(s, "bandwidth");
        if (!json_is_array(nodes) || json_array_size(nodes) == 0 || !json_is_number(bw)) {
            rc = ib_why(why, len, -EINVAL, "bandwidth file: set %zu needs \"nodes\" (a non-empty list) and "
                                           "\"bandwidth\" (a number)", i);
            goto out;
        }
        double v = json_number_value(bw);
        if (!(v > 0) || !isfinite(v)) {
            rc = ib_why(why, len, -EINVAL, "bandwidth file: set %zu: bandwidth %g is not positive", i, v);
            goto out;
        }
        uint64_t m = 0;
        size_t j;
        json_t *nd;
        json_array_foreach(nodes, j, nd) {
            json_int_t x = json_is_integer(nd) ? json_integer_value(nd) : -1;
            if (x < 0 || x >= 64 || (m >> x & 1)) {
                rc = ib_why(why, len, -EINVAL, "bandwidth file: set %zu: node entries must be distinct OS indexes "
                                               "0-63", i);
                goto out;
            }
            m |= 1ULL << x;
        }
        for (unsigned k = 0; k < b->n; k++)
            if (b->v[k].nodes == m) {
                rc = ib_why(why, len, -EINVAL, "bandwidth file: set %zu repeats set %u", i, k);
                goto out;
            }
        b->v[b->n].nodes = m;
        b->v[b->n++].bw = v;
    }
out:
    json_decref(doc);
    if (rc < 0)
        pl_bandwidth_free(b);
    return rc;
}

int pl_bandwidth_load(const char *path, struct pl_bandwidth *b, char *why, size_t len)
{
    memset(b, 0, sizeof(*b));
    FILE *f = fopen(path, "re");
    if (!f)
        return ib_why(why, len, -errno == -ENOENT ? -ENOENT : -EINVAL, "bandwidth file %s: %s", path,
                      strerror(errno));
    char *text = NULL;
    size_t cap = 0, n = 0;
    int rc = 0;
    while (!rc) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > (16u << 20)) {
                rc = ib_why(why, len, -EINVAL, "bandwidth file %s: larger than 16 MiB", path);
                break;
            }
            char *t = realloc(text, cap);
            if (!t) {
                rc = ib_why(why, len, -ENOMEM, "out of memory");
                break;
            }
            text = t;
        }
        size_t r = fread(text + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (!rc && ferror(f))
        rc = ib_why(why, len, -EINVAL, "bandwidth file %s: read error", path);
    fclose(f);
    if (!rc) {
        text[n] = 0;
        rc = pl_bandwidth_parse(text, b, why, len);
    }
    free(text);
    return rc;
}
