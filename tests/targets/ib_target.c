/* ib_target.c - synthetic targets with known sensitivities, for the profile tests (tests/test_profile.cpp).
 *
 *   ib_target chase BYTES LOADS   dependent loads over a random cycle of BYTES (LLC-resident when BYTES is near the
 *                                 effective LLC): sensitive to LLC capacity, blind to disk and network
 *   ib_target stream BYTES PASSES 64-bit sums over BYTES (DRAM-sized), PASSES times: sensitive to DRAM bandwidth,
 *                                 and takes a share of it
 *   ib_target sleep SECONDS       a service stand-in that does nothing
 *   ib_target crash               dies of SIGSEGV at once
 * Each run does a fixed amount of work and exits 0, so `--metric runtime` times it; it prints its own rate. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("ib_target: mmap");
        exit(1);
    }
    return p;
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "chase")) {
        size_t bytes = strtoull(argv[2], NULL, 0), lines = bytes / 64;
        uint64_t loads = strtoull(argv[3], NULL, 0);
        if (lines < 2)
            return 2;
        uint64_t *b = map(lines * 64);
        size_t *perm = malloc(lines * sizeof(size_t));
        for (size_t i = 0; i < lines; i++)
            perm[i] = i;
        for (size_t i = lines - 1; i > 0; i--) { /* Sattolo: one cycle through every line */
            size_t j = next() % i, t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < lines; i++)
            b[perm[i] * 8] = (uint64_t)perm[(i + 1) % lines] * 8;
        free(perm);
        uint64_t t0 = now_ns(), p = 0;
        for (uint64_t i = 0; i < loads; i++)
            p = b[p];
        double s = (double)(now_ns() - t0) / 1e9;
        printf("chase %zu bytes: %.3f ns/load (%llu)\n", bytes, s * 1e9 / (double)loads, (unsigned long long)(p & 1));
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "stream")) {
        size_t bytes = strtoull(argv[2], NULL, 0) & ~(size_t)63;
        unsigned passes = (unsigned)strtoul(argv[3], NULL, 0);
        uint64_t *b = map(bytes);
        memset(b, 1, bytes);
        uint64_t t0 = now_ns(), sum = 0;
        for (unsigned r = 0; r < passes; r++)
            for (size_t i = 0; i < bytes / 8; i += 8)
                sum += b[i] + b[i + 1] + b[i + 2] + b[i + 3] + b[i + 4] + b[i + 5] + b[i + 6] + b[i + 7];
        double s = (double)(now_ns() - t0) / 1e9;
        printf("stream %zu bytes x %u: %.2f GB/s (%llu)\n", bytes, passes, (double)bytes * passes / s / 1e9,
               (unsigned long long)(sum & 1));
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "sleep")) {
        sleep((unsigned)strtoul(argv[2], NULL, 0));
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "crash")) {
        raise(SIGSEGV);
        return 3;
    }
    fprintf(stderr, "usage: ib_target chase BYTES LOADS | stream BYTES PASSES | sleep SECONDS | crash\n");
    return 2;
}
