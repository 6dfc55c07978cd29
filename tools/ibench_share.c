/* ibench-share - the test workload of thread clustering's `soft` source (docs/placement.md, "Thread clustering: the
 * sources"; Tam et al. EuroSys'07 §5.3.1, the synthetic microbenchmark: scoreboards shared by groups of threads, private data).
 *
 *   ibench-share --groups G --threads T [--lines L] [--global-lines K] [--noise PCT] [--private-lines P]
 *                [--sample N] [--seconds S] [--seed X]
 *
 * G groups of T threads.  Each group shares L cache lines its threads read and write; K lines are shared by every
 * thread; each thread has P private lines.  An access is to one of its private lines with probability PCT %, else to
 * one of its group's L lines or the K global lines, uniformly over the L + K.  Every thread reports one access in N
 * (the gap to the next report is uniform over 1 .. 2N-1, mean N, so a periodic pattern cannot alias with the
 * sampling: Tam et al. EuroSys'07 §4.3, temporal sampling) as (its TID, the line's address, PL_SRC_UNKNOWN: it cannot tell where
 * the access was served) into the channel /dev/shm/ibench-share.<pid> (placement/cluster/pl_src_soft.h).
 *
 * On stdout, before any access: one line "TID GROUP" per worker thread (groups 0 .. G-1, in thread order), then
 * "ready".  It runs S seconds (default 30) after "ready", then exits 0; SIGTERM or SIGINT end it early with exit 130;
 * bad options exit 2 with one line on stderr, a failure to set up exits 1.  The channel is removed on every exit but
 * SIGKILL (a SIGKILLed run leaves it; readers ignore a channel whose process is gone). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ib_err.h"
#include "ib_rand.h"
#include "pl_src_soft.h"

#define MAX_THREADS 1024u

struct opts {
    unsigned groups, threads, lines, global_lines, noise, private_lines, sample;
    double seconds;
    uint64_t seed;
};

struct worker {
    pthread_t th;
    unsigned index, group;
    uint64_t rng;
    struct pl_share_slot *slot;
    char *group_lines;   /* L lines */
    char *private_lines; /* P lines */
};

static const struct opts *g_o;
static char *g_global_lines;
static size_t g_line;
static int g_stop;
static pthread_barrier_t g_start;
static void *g_map;
static size_t g_map_size;
static char g_path[96];

static void channel_remove(void)
{
    if (g_path[0]) {
        unlink(g_path);
        g_path[0] = '\0';
    }
}

static void *work(void *arg)
{
    struct worker *w = arg;
    const struct opts *o = g_o;
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    w->slot->group = w->group;
    __atomic_store_n(&w->slot->tid, tid, __ATOMIC_RELEASE);
    pthread_barrier_wait(&g_start); /* registered */
    pthread_barrier_wait(&g_start); /* the layout is printed: go */
    uint64_t shared = (uint64_t)o->lines + o->global_lines;
    uint64_t gap_span = 2ull * o->sample - 1;
    uint64_t countdown = 1 + ib_splitmix64(&w->rng) % gap_span;
    while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
        for (int k = 0; k < 256; k++) {
            uint64_t r = ib_splitmix64(&w->rng);
            char *line;
            if (r % 100 < o->noise) {
                line = w->private_lines + (r >> 8) % o->private_lines * g_line;
            } else {
                uint64_t i = (r >> 8) % shared;
                line = i < o->lines ? w->group_lines + i * g_line : g_global_lines + (i - o->lines) * g_line;
            }
            /* read and write the line's first word (relaxed atomics: racy by design, defined by C11) */
            uint64_t *word = (uint64_t *)(void *)line;
            __atomic_store_n(word, __atomic_load_n(word, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
            if (--countdown == 0) {
                pl_share_put(w->slot, PL_SHARE_RING, (uint64_t)(uintptr_t)line, tid, PL_SRC_UNKNOWN);
                countdown = 1 + ib_splitmix64(&w->rng) % gap_span;
            }
        }
    }
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ibench-share --groups G --threads T [--lines L] [--global-lines K] [--noise PCT]\n"
               "                    [--private-lines P] [--sample N] [--seconds S] [--seed X]\n"
               "  G groups of T threads; each group shares L cache lines (default 8), all threads share K (default 2),\n"
               "  each thread has P private lines (default 256) that take PCT %% of its accesses (default 20).\n"
               "  One access in N (default 1000) is reported to /dev/shm/ibench-share.<pid> for `ibench place cluster\n"
               "  --source soft`.  Prints 'TID GROUP' per thread, then 'ready'; runs S seconds (default 30).\n");
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ibench-share: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *v)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || x < lo || x > hi)
        return -1;
    *v = (unsigned)x;
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {.groups = 0, .threads = 0, .lines = 8, .global_lines = 2, .noise = 20, .private_lines = 256,
                     .sample = 1000, .seconds = 30, .seed = 1};
    static const struct option lo[] = {
        {"groups", required_argument, 0, 'g'},  {"threads", required_argument, 0, 't'},
        {"lines", required_argument, 0, 'l'},   {"global-lines", required_argument, 0, 'k'},
        {"noise", required_argument, 0, 'n'},   {"private-lines", required_argument, 0, 'p'},
        {"sample", required_argument, 0, 's'},  {"seconds", required_argument, 0, 'S'},
        {"seed", required_argument, 0, 'x'},    {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'g':
            if (parse_uint(optarg, 1, MAX_THREADS, &o.groups))
                return bad("--groups: '%s' is not a whole number in 1-1024", optarg);
            break;
        case 't':
            if (parse_uint(optarg, 1, MAX_THREADS, &o.threads))
                return bad("--threads: '%s' is not a whole number in 1-1024", optarg);
            break;
        case 'l':
            if (parse_uint(optarg, 1, 1u << 20, &o.lines))
                return bad("--lines: '%s' is not a whole number in 1-1048576", optarg);
            break;
        case 'k':
            if (parse_uint(optarg, 0, 1u << 20, &o.global_lines))
                return bad("--global-lines: '%s' is not a whole number in 0-1048576", optarg);
            break;
        case 'n':
            if (parse_uint(optarg, 0, 100, &o.noise))
                return bad("--noise: '%s' is not a percentage 0-100", optarg);
            break;
        case 'p':
            if (parse_uint(optarg, 1, 1u << 20, &o.private_lines))
                return bad("--private-lines: '%s' is not a whole number in 1-1048576", optarg);
            break;
        case 's':
            if (parse_uint(optarg, 1, 1u << 30, &o.sample))
                return bad("--sample: '%s' is not a whole number in 1-1073741824", optarg);
            break;
        case 'S': {
            char *end;
            errno = 0;
            o.seconds = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(o.seconds > 0) || o.seconds > 86400)
                return bad("--seconds: '%s' is not a duration in (0, 86400] s", optarg);
            break;
        }
        case 'x': {
            char *end;
            errno = 0;
            o.seed = strtoull(optarg, &end, 0);
            if (errno || end == optarg || *end || optarg[0] == '-')
                return bad("--seed: '%s' is not a whole number", optarg);
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            return bad("%s needs a value", argv[optind - 1]);
        default:
            return bad("unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return bad("unexpected argument '%s'", argv[optind]);
    if (!o.groups || !o.threads)
        return bad("%s", !o.groups ? "--groups is required" : "--threads is required");
    if ((unsigned long)o.groups * o.threads > MAX_THREADS)
        return bad("%s", "--groups x --threads is more than 1024 threads");
    unsigned n = o.groups * o.threads;
    g_o = &o;
    long ls = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    g_line = ls >= 16 && ls <= 4096 && (ls & (ls - 1)) == 0 ? (size_t)ls : 64; /* 0 or -1 when unknown: 64 */

    char why[256];
    if (pl_share_create(n, (uint32_t)g_line, &g_map, &g_map_size, why, sizeof why) < 0) {
        fprintf(stderr, "ibench-share: %s\n", why);
        return 1;
    }
    pl_share_path(getpid(), g_path, sizeof g_path);
    atexit(channel_remove);

    /* SIGTERM and SIGINT are taken by sigtimedwait in main: every thread (they inherit the mask) leaves them blocked */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    size_t gsz = (size_t)o.groups * o.lines * g_line, ksz = (size_t)(o.global_lines ? o.global_lines : 1) * g_line;
    size_t psz = (size_t)n * o.private_lines * g_line;
    char *group_mem = aligned_alloc(g_line, gsz), *priv_mem = aligned_alloc(g_line, psz);
    g_global_lines = aligned_alloc(g_line, ksz);
    struct worker *w = calloc(n, sizeof *w);
    int rc = 1;
    unsigned started = 0;
    if (!group_mem || !priv_mem || !g_global_lines || !w) {
        fprintf(stderr, "ibench-share: out of memory\n");
        goto out;
    }
    memset(group_mem, 0, gsz);
    memset(priv_mem, 0, psz);
    memset(g_global_lines, 0, ksz);
    pthread_barrier_init(&g_start, NULL, n + 1);
    for (unsigned i = 0; i < n; i++) {
        w[i].index = i;
        w[i].group = i / o.threads;
        w[i].rng = o.seed * 0x100000001b3ULL + i;
        w[i].slot = pl_share_slot_at(g_map, i);
        w[i].group_lines = group_mem + (size_t)w[i].group * o.lines * g_line;
        w[i].private_lines = priv_mem + (size_t)i * o.private_lines * g_line;
        int e = pthread_create(&w[i].th, NULL, work, &w[i]);
        if (e) {
            /* the started threads wait at the barrier forever: a setup failure ends the process, channel removed */
            fprintf(stderr, "ibench-share: cannot start thread %u of %u: %s\n", i + 1, n, strerror(e));
            channel_remove();
            _exit(1);
        }
        started++;
    }
    pthread_barrier_wait(&g_start);
    for (unsigned i = 0; i < n; i++)
        printf("%u %u\n", w[i].slot->tid, w[i].group);
    printf("ready\n");
    fflush(stdout);
    pthread_barrier_wait(&g_start);

    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = o.seconds - ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9);
        if (left <= 0)
            break;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        int s = sigtimedwait(&sigs, NULL, &ts);
        if (s == SIGTERM || s == SIGINT) {
            rc = IB_EXIT_INTR;
            break;
        }
    }
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < started; i++)
        pthread_join(w[i].th, NULL);
    pthread_barrier_destroy(&g_start);
out:
    channel_remove();
    munmap(g_map, g_map_size);
    free(w);
    free(group_mem);
    free(priv_mem);
    free(g_global_lines);
    return rc;
}
