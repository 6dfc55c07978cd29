/* ib_target.c - synthetic targets whose sensitivity is known by design, for the profile tests (tests/test_profile.cpp,
 * tests/profile_fleet.sh, validation/bench-profile; docs/synthetic-targets.md).
 *
 * The fleet: each run does a fixed amount of work, prints its own rate and exits 0, so `--metric cputime` (or
 * `runtime`) times it. LLC is the caller's LLC size in bytes: the tests read the measured one from `ibench topo
 * --json` (.caches[] | select(.level == "llc") | .effective), since hwloc's word is wrong on a VM.
 *   ib_target llc LLC LOADS [PCT]  dependent loads over a random cycle of PCT % (default 50) of LLC.
 *       Designed: falls once llc-cap's footprint plus its own exceeds the LLC (llc-cap tolerated ~ 100 - PCT);
 *       blind to mem-bw at low intensity, disk-bw, net-bw.
 *   ib_target dram LLC PASSES      64-bit sums over max(4 x LLC, 256 MiB), PASSES times. Designed: falls once
 *       mem-bw's share plus its own exceeds the DRAM bandwidth, and takes a share of it (caused mem-bw > 0); blind
 *       to llc-cap, disk-bw, net-bw.
 *   ib_target int ITERS            four independent multiply-xor chains in registers, ITERS rounds, no memory
 *       traffic beyond L1. Designed: blind to everything off its core (llc-cap, mem-bw, disk-bw, net-bw); only
 *       same-core SoIs (int, fp, on an SMT sibling) can slow it.
 *   ib_target disk DIR BYTES       writes BYTES (whole MiB) to a new file in DIR and reads it back, with O_DIRECT
 *       (or, where DIR refuses it, write + fdatasync + POSIX_FADV_DONTNEED + read). Designed: its wall time rises
 *       once disk-bw's share plus its own exceeds the device's bandwidth (use --metric runtime: waiting for the
 *       disk is not CPU time); blind to llc-cap, mem-bw, int.
 * Kept for the existing tests:
 *   ib_target chase BYTES LOADS    the llc mode's chase over BYTES
 *   ib_target stream BYTES PASSES  the dram mode's sums over BYTES
 *   ib_target sleep SECONDS [...]  a service stand-in that does nothing (extra words mark it for pgrep)
 *   ib_target crash                dies of SIGSEGV at once
 * Bad arguments: one line on stderr, exit 2. Run-time failures (mmap, I/O): one line, exit 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define USAGE                                                                                                          \
    "usage: ib_target llc LLC LOADS [PCT] | dram LLC PASSES | int ITERS | disk DIR BYTES | chase BYTES LOADS | "      \
    "stream BYTES PASSES | sleep SECONDS | crash"
#define MIB (1024ULL * 1024ULL)

__attribute__((format(printf, 2, 3), noreturn)) static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ib_target: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

/* A positive whole number, or exit 2 naming the argument. */
static uint64_t num(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || v == 0 || s[0] == '-')
        die(2, "%s must be a positive whole number, not '%s'", what, s);
    return v;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        die(1, "mmap of %zu bytes: %s", bytes, strerror(errno));
    madvise(p, bytes, MADV_HUGEPAGE); /* fewer TLB misses: the chase and the sums should feel caches, not the TLB */
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

static int chase(size_t bytes, uint64_t loads)
{
    size_t lines = bytes / 64;
    if (lines < 2)
        die(2, "the chase needs at least 128 bytes");
    uint64_t *b = map(lines * 64);
    size_t *perm = malloc(lines * sizeof(size_t));
    if (!perm)
        die(1, "out of memory");
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

static int stream(size_t bytes, uint64_t passes)
{
    bytes &= ~(size_t)63;
    if (!bytes)
        die(2, "the stream needs at least 64 bytes");
    uint64_t *b = map(bytes);
    memset(b, 1, bytes);
    uint64_t t0 = now_ns(), sum = 0;
    for (uint64_t r = 0; r < passes; r++)
        for (size_t i = 0; i < bytes / 8; i += 8)
            sum += b[i] + b[i + 1] + b[i + 2] + b[i + 3] + b[i + 4] + b[i + 5] + b[i + 6] + b[i + 7];
    double s = (double)(now_ns() - t0) / 1e9;
    printf("stream %zu bytes x %llu: %.2f GB/s (%llu)\n", bytes, (unsigned long long)passes,
           (double)bytes * (double)passes / s / 1e9, (unsigned long long)(sum & 1));
    return 0;
}

/* Four independent chains (so the core's ALUs, not one chain's latency, set the pace), all in registers. */
static int integer(uint64_t iters)
{
    uint64_t a = 1, b = 2, c = 3, d = 4, t0 = now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        a = (a ^ (a >> 29)) * 0xBF58476D1CE4E5B9ULL + i;
        b = (b ^ (b >> 31)) * 0x94D049BB133111EBULL + i;
        c = (c ^ (c >> 27)) * 0x9E3779B97F4A7C15ULL + i;
        d = (d ^ (d >> 33)) * 0xD6E8FEB86659FD93ULL + i;
    }
    double s = (double)(now_ns() - t0) / 1e9;
    printf("int %llu rounds: %.3f ns/round (%llu)\n", (unsigned long long)iters, s * 1e9 / (double)iters,
           (unsigned long long)((a ^ b ^ c ^ d) & 1));
    return 0;
}

static void io(int fd, char *buf, uint64_t chunk, uint64_t i, int write_it)
{
    ssize_t n = write_it ? pwrite(fd, buf, chunk, (off_t)(i * chunk)) : pread(fd, buf, chunk, (off_t)(i * chunk));
    if (n < 0)
        die(1, "disk: %s: %s", write_it ? "write" : "read", strerror(errno));
    if ((uint64_t)n != chunk)
        die(1, "disk: short %s", write_it ? "write" : "read");
}

/* The file is unlinked as soon as it is open, with the stop signals blocked until then: it disappears on every
 * exit, SIGTERM, SIGINT and even SIGKILL included, and no handler is needed. */
static int disk(const char *dir, uint64_t bytes)
{
    struct stat st;
    if (stat(dir, &st))
        die(2, "disk: %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        die(2, "disk: %s: not a directory", dir);
    const uint64_t chunk = MIB, chunks = (bytes + chunk - 1) / chunk;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/ib_target-disk.XXXXXX", dir) >= (int)sizeof path)
        die(2, "disk: %s: path too long", dir);
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    sigaddset(&stop, SIGQUIT);
    sigprocmask(SIG_BLOCK, &stop, &old);
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0)
        die(2, "disk: cannot make a file in %s: %s", dir, strerror(errno));
    int dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC), direct = dfd >= 0, err = errno;
    unlink(path);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (direct) {
        close(fd);
        fd = dfd;
    } else if (err != EINVAL) { /* EINVAL: the filesystem has no O_DIRECT (tmpfs); anything else is a failure */
        die(1, "disk: O_DIRECT open in %s: %s", dir, strerror(err));
    }
    char *buf = map(chunk); /* page-aligned, as O_DIRECT needs */
    memset(buf, 0x5A, chunk);
    uint64_t t0 = now_ns();
    for (uint64_t i = 0; i < chunks; i++) {
        memcpy(buf, &i, sizeof i); /* each chunk carries its index, checked on the way back */
        io(fd, buf, chunk, i, 1);
    }
    if (fdatasync(fd))
        die(1, "disk: fdatasync: %s", strerror(errno));
    if (!direct)
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* so the reads come from the device, not the page cache */
    uint64_t t1 = now_ns();
    for (uint64_t i = 0; i < chunks; i++) {
        uint64_t got;
        io(fd, buf, chunk, i, 0);
        memcpy(&got, buf, sizeof got);
        if (got != i)
            die(1, "disk: read back other data than was written");
    }
    uint64_t t2 = now_ns();
    close(fd);
    double mb = (double)(chunks * chunk) / 1e6;
    printf("disk %llu MiB%s: write %.1f MB/s, read %.1f MB/s\n", (unsigned long long)chunks,
           direct ? " O_DIRECT" : " buffered+fdatasync", mb / ((double)(t1 - t0) / 1e9),
           mb / ((double)(t2 - t1) / 1e9));
    return 0;
}

int main(int argc, char **argv)
{
    const char *m = argc >= 2 ? argv[1] : "";
    if (!strcmp(m, "llc") && (argc == 4 || argc == 5)) {
        uint64_t llc = num(argv[2], "LLC"), loads = num(argv[3], "LOADS"), pct = argc == 5 ? num(argv[4], "PCT") : 50;
        if (pct > 100)
            die(2, "PCT must be 1-100, not '%s'", argv[4]);
        return chase((size_t)(llc * pct / 100), loads);
    }
    if (!strcmp(m, "dram") && argc == 4) {
        uint64_t llc = num(argv[2], "LLC"), passes = num(argv[3], "PASSES");
        return stream((size_t)(4 * llc > 256 * MIB ? 4 * llc : 256 * MIB), passes);
    }
    if (!strcmp(m, "int") && argc == 3)
        return integer(num(argv[2], "ITERS"));
    if (!strcmp(m, "disk") && argc == 4)
        return disk(argv[2], num(argv[3], "BYTES"));
    if (!strcmp(m, "chase") && argc == 4)
        return chase((size_t)num(argv[2], "BYTES"), num(argv[3], "LOADS"));
    if (!strcmp(m, "stream") && argc == 4)
        return stream((size_t)num(argv[2], "BYTES"), num(argv[3], "PASSES"));
    if (!strcmp(m, "sleep") && argc >= 3) {
        sleep((unsigned)num(argv[2], "SECONDS"));
        return 0;
    }
    if (!strcmp(m, "crash") && argc == 2) {
        raise(SIGSEGV);
        return 3;
    }
    fprintf(stderr, "%s\n", USAGE);
    return 2;
}
