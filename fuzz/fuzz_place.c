/* fuzz_place.c - libFuzzer target for the placement engine's input parsers (placement/).
 *
 * The first byte picks the parser, the rest is its text: 0 a distances file (pl_distances_parse), 1 a bandwidth
 * file (pl_bandwidth_parse), 2 /proc/PID/numa_maps (pl_numa_maps_parse, nodes 0-3), 3 an ordered CPU list
 * (pl_cpulist_parse).  Rules checked on every input: no crash, leak or out-of-bounds read; a refusal is -EINVAL
 * with a one-line reason; what is accepted holds what the parser promises (a square matrix with positive entries
 * and the diagonal smallest in its row; bandwidths positive, node sets non-empty and distinct; CPUs distinct). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_classes.h"
#include "pl_machine.h"
#include "pl_numa.h"
#include "pl_proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void refused(const char *what, int rc, const char *why)
{
    if (rc != -EINVAL && rc != -ENOMEM) {
        fprintf(stderr, "%s returned %d (%s)\n", what, rc, why);
        abort();
    }
    if (!why[0] || strchr(why, '\n')) {
        fprintf(stderr, "%s refused without a one-line reason: '%s'\n", what, why);
        abort();
    }
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "accepted input breaks a promise: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    char why[256] = "";
    int rc;
    switch (data[0] % 4) {
    case 0: {
        double *d = NULL;
        unsigned n = 0;
        rc = pl_distances_parse(text, &d, &n, why, sizeof(why));
        if (rc < 0) {
            refused("pl_distances_parse", rc, why);
            check(d == NULL, "a refused matrix is not returned");
            break;
        }
        check(n >= 1 && d != NULL, "a matrix has rows");
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = 0; j < n; j++)
                check(isfinite(d[i * n + j]) && d[i * n + j] > 0 && d[i * n + j] >= d[i * n + i],
                      "entries positive, the diagonal smallest in its row");
        free(d);
        break;
    }
    case 1: {
        struct pl_bandwidth b;
        memset(&b, 0, sizeof(b));
        rc = pl_bandwidth_parse(text, &b, why, sizeof(why));
        if (rc < 0) {
            refused("pl_bandwidth_parse", rc, why);
            break;
        }
        for (unsigned i = 0; i < b.n; i++) {
            check(b.v[i].nodes != 0, "a set has nodes");
            check(isfinite(b.v[i].bw) && b.v[i].bw > 0, "bandwidths positive");
            for (unsigned j = 0; j < i; j++)
                check(b.v[i].nodes != b.v[j].nodes, "no set twice");
        }
        pl_bandwidth_free(&b);
        break;
    }
    case 2: {
        static const unsigned nodes[] = {0, 1, 2, 3};
        uint64_t bytes[4];
        rc = pl_numa_maps_parse(text, nodes, 4, 4, bytes, why, sizeof(why));
        if (rc < 0)
            refused("pl_numa_maps_parse", rc, why);
        break;
    }
    default: {
        int *cpus = NULL;
        unsigned n = 0;
        rc = pl_cpulist_parse(text, &cpus, &n, why, sizeof(why));
        if (rc < 0) {
            refused("pl_cpulist_parse", rc, why);
            break;
        }
        /* sorted, so that a range of 50000 CPUs is checked in n log n, not n^2 (the harness's own timeout) */
        qsort(cpus, n, sizeof(*cpus), cmp_int);
        for (unsigned i = 0; i < n; i++) {
            check(cpus[i] >= 0, "CPUs are not negative");
            check(i == 0 || cpus[i] != cpus[i - 1], "no CPU twice");
        }
        free(cpus);
        break;
    }
    }
    free(text);
    return 0;
}
