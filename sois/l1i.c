/* l1i.c - SoI8, L1 instruction cache: executes a code footprint of x % of the L1i, jumping between its cache lines
 * in random order.
 *
 * The code is generated at run time, by hand (no assembler), into an anonymous mapping per worker (ib_map, so it
 * counts in ib_map_live_bytes).  Whenever the footprint changes the region is made writable, rewritten, and made
 * executable again (W^X: it is never writable and executable at once), then the instruction cache is synchronised.
 *
 * Layout of a region of n blocks (one 64-byte cache line each, block b at offset b*64):
 *
 *   every block   off+0   48 83 c0 01      add  $1,%rax          counts blocks executed
 *                 off+4   10 x 4 bytes     add  $1,%rcx/%rdx/%r8/%r9/%r10/%r11  (48 83 c1 01, 48 83 c2 01,
 *                                          49 83 c0 01, 49 83 c1 01, 49 83 c2 01, 49 83 c3 01): cheap filler
 *                                          spread over six registers so it is not one long dependency chain
 *   inner block   off+44  e9 rel32         jmp  <next block of the permutation>
 *   last block    off+44  48 ff cf         dec  %rdi             one pass done
 *                 off+47  0f 85 rel32      jnz  <first block>
 *                 off+53  c3               ret
 *   the rest of each line is int3 (cc), never executed.
 *
 *   entry stub at n*64:  f3 0f 1e fa  endbr64 (a NOP where IBT is off)
 *                        48 89 f0     mov %rsi,%rax
 *                        e9 rel32     jmp <first block>
 *
 * so the region is called as uint64_t code(uint64_t passes, uint64_t acc) and returns acc + passes * n: it runs the
 * cycle `passes` times.  The blocks are visited in a random cyclic permutation, so consecutive blocks land on
 * scattered cache sets and the next-line instruction prefetcher has nothing to follow; the n lines are distinct and
 * cover the L1i sets evenly at 100 %.
 *
 * Self-meter: distinct code bytes executed in the step (n * 64 once a full pass ran, else the blocks executed * 64),
 * blocks executed per second as the secondary figure, and ns per block as load_ns (where the code lives: L1i, L2...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "ib_err.h"
#include "parse.h"
#include "soikit.h"

#define L1I_BLOCK 64
#define L1I_FILLERS 10
#define L1I_TAIL_OFF (4 + 4 * L1I_FILLERS) /* 44 */
#define L1I_STEP_NS 75000.0                /* aim for ~75 us per step() */
#define PAGE 4096

typedef uint64_t (*l1i_fn)(uint64_t passes, uint64_t acc);

struct l1i_thread {
    uint8_t *code;        /* ib_map'd region */
    size_t map_bytes;     /* what was passed to ib_map */
    size_t prot_bytes;    /* page-rounded span that mprotect covers */
    size_t max_blocks;
    size_t nblocks;       /* current footprint */
    size_t entry;         /* offset of the entry stub */
    int prot;             /* current protection of the region */
    uint64_t seed;
    double ns_per_block;  /* running estimate, sizes the next step */
    uint64_t blocks_done; /* since the meter was reset */
    uint64_t passes_done;
    uint64_t ns_done;
};

struct l1i {
    unsigned n;
    struct l1i_thread *t;
    double share[SOI_MAX_THREADS];
    size_t blocks_per_domain;
    unsigned ndomains;
};

/* Test hooks (tests/test_l1i_prefetch.cpp declares them too). */
size_t l1i_code_bytes(size_t nblocks);
size_t l1i_generate(uint8_t *buf, size_t nblocks, uint64_t seed);
int l1i_thread_code(const struct soi *s, unsigned tid, const uint8_t **code, size_t *nblocks, size_t *entry,
                    int *prot);

size_t l1i_code_bytes(size_t nblocks) { return (nblocks + 1) * L1I_BLOCK; }

static void put_rel32(uint8_t *at, size_t from_end, size_t target)
{
    int32_t rel = (int32_t)((int64_t)target - (int64_t)from_end);
    memcpy(at, &rel, 4);
}

/* Writes nblocks blocks plus the entry stub into buf (l1i_code_bytes(nblocks) bytes); returns the stub's offset. */
size_t l1i_generate(uint8_t *buf, size_t nblocks, uint64_t seed)
{
    static const uint8_t fill[6][4] = {{0x48, 0x83, 0xc1, 0x01}, {0x48, 0x83, 0xc2, 0x01}, {0x49, 0x83, 0xc0, 0x01},
                                       {0x49, 0x83, 0xc1, 0x01}, {0x49, 0x83, 0xc2, 0x01}, {0x49, 0x83, 0xc3, 0x01}};
    memset(buf, 0xcc, l1i_code_bytes(nblocks));
    size_t stub = nblocks * L1I_BLOCK;
    if (nblocks == 0) {
        buf[stub] = 0xc3; /* ret: nothing to run */
        return stub;
    }
    size_t *perm = malloc(nblocks * sizeof(*perm)); /* NULL: identity order, still correct code */
    for (size_t i = 0; perm && i < nblocks; i++)
        perm[i] = i;
    uint64_t s = seed | 1;
    for (size_t i = nblocks - 1; perm && i > 0; i--) {
        size_t j = (size_t)(ib_rand(&s) % (i + 1));
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
#define PERM(i) (perm ? perm[i] : (i))
    for (size_t k = 0; k < nblocks; k++) {
        size_t off = PERM(k) * L1I_BLOCK;
        uint8_t *b = buf + off;
        static const uint8_t add_rax[4] = {0x48, 0x83, 0xc0, 0x01};
        memcpy(b, add_rax, 4);
        for (unsigned f = 0; f < L1I_FILLERS; f++)
            memcpy(b + 4 + 4 * f, fill[(k + f) % 6], 4);
        uint8_t *t = b + L1I_TAIL_OFF;
        if (k + 1 < nblocks) {
            t[0] = 0xe9;
            put_rel32(t + 1, off + L1I_TAIL_OFF + 5, PERM(k + 1) * L1I_BLOCK);
        } else {
            t[0] = 0x48, t[1] = 0xff, t[2] = 0xcf;
            t[3] = 0x0f, t[4] = 0x85;
            put_rel32(t + 5, off + L1I_TAIL_OFF + 9, PERM(0) * L1I_BLOCK);
            t[9] = 0xc3;
        }
    }
    uint8_t *e = buf + stub;
    static const uint8_t head[7] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x89, 0xf0};
    memcpy(e, head, sizeof(head));
    e[7] = 0xe9;
    put_rel32(e + 8, stub + 12, PERM(0) * L1I_BLOCK);
#undef PERM
    free(perm);
    return stub;
}

int l1i_thread_code(const struct soi *s, unsigned tid, const uint8_t **code, size_t *nblocks, size_t *entry,
                    int *prot)
{
    const struct l1i *l = s->priv;
    if (!l || tid >= l->n)
        return -EINVAL;
    const struct l1i_thread *t = &l->t[tid];
    *code = t->code;
    *nblocks = t->nblocks;
    *entry = t->entry;
    *prot = t->prot;
    return 0;
}

/* Rewrite thread t's code for n blocks, keeping W^X. */
static int l1i_build(struct l1i_thread *t, size_t n)
{
    if (mprotect(t->code, t->prot_bytes, PROT_READ | PROT_WRITE) != 0)
        return -errno;
    t->prot = PROT_READ | PROT_WRITE;
    t->seed = t->seed * 6364136223846793005ULL + 1442695040888963407ULL;
    t->entry = l1i_generate(t->code, n, t->seed);
    t->nblocks = n;
    if (mprotect(t->code, t->prot_bytes, PROT_READ | PROT_EXEC) != 0)
        return -errno;
    t->prot = PROT_READ | PROT_EXEC;
    __builtin___clear_cache((char *)t->code, (char *)t->code + l1i_code_bytes(n));
    return 0;
}

static void l1i_reset_meter(struct l1i *l)
{
    for (unsigned i = 0; i < l->n; i++)
        l->t[i].blocks_done = l->t[i].passes_done = l->t[i].ns_done = 0;
}

static void l1i_teardown(struct soi *s)
{
    struct l1i *l = s->priv;
    if (!l)
        return;
    for (unsigned i = 0; l->t && i < l->n; i++)
        if (l->t[i].code)
            ib_unmap(l->t[i].code, l->t[i].map_bytes);
    free(l->t);
    free(l);
    s->priv = NULL;
}

static int l1i_prepare(struct soi *s, char *why, size_t len)
{
    const struct soi_env *env = s->env;
#if !defined(__x86_64__)
    return ib_why(why, len, -ENOTSUP, "l1i generates x86-64 code; this is not an x86-64 build");
#endif
    struct topo_cache tc;
    if (topo_cache_info(env->topo, 1, true, env->cpus[0], &tc) < 0 || tc.size == 0)
        return ib_why(why, len, -ENOTSUP, "no L1 instruction cache reported for CPU %d", env->cpus[0]);
    struct l1i *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    s->priv = l;
    int rc = kit_shares(env->topo, TOPO_SCOPE_CORE, env->cpus, env->nthreads, l->share, &l->ndomains);
    if (rc < 0) {
        l1i_teardown(s);
        return ib_why(why, len, rc, "l1i: cannot tell which threads share a core: %s", strerror(-rc));
    }
    l->blocks_per_domain = (size_t)(tc.size / L1I_BLOCK);
    l->t = calloc(env->nthreads, sizeof(*l->t));
    if (!l->t) {
        l1i_teardown(s);
        return -ENOMEM;
    }
    l->n = env->nthreads;
    for (unsigned i = 0; i < l->n; i++) {
        struct l1i_thread *t = &l->t[i];
        t->max_blocks = (size_t)((double)l->blocks_per_domain * l->share[i] + 0.5);
        t->map_bytes = l1i_code_bytes(t->max_blocks);
        t->prot_bytes = (t->map_bytes + PAGE - 1) & ~(size_t)(PAGE - 1);
        t->code = ib_map(t->map_bytes, 0);
        t->seed = 0x9e3779b97f4a7c15ULL * (i + 1) ^ (uint64_t)env->cpus[i];
        t->ns_per_block = 1.0;
        if (!t->code) {
            l1i_teardown(s);
            return ib_why(why, len, -ENOMEM, "l1i: cannot map %zu bytes of code", t->map_bytes);
        }
        rc = l1i_build(t, 0);
        if (rc < 0) {
            l1i_teardown(s);
            return ib_why(why, len, rc == -EACCES || rc == -EPERM ? -ENOTSUP : rc,
                          "l1i: cannot make generated code executable: %s", strerror(-rc));
        }
    }
    s->capacity = (double)l->blocks_per_domain * L1I_BLOCK * l->ndomains;
    snprintf(s->unit, sizeof(s->unit), "B");
    snprintf(s->secondary_unit, sizeof(s->secondary_unit), "blocks/s");
    snprintf(s->load_meaning, sizeof(s->load_meaning),
             "ns per 64-byte code block executed");
    char b[32];
    snprintf(s->capacity_src, sizeof(s->capacity_src), "hwloc L1i %s per core x %u core%s",
             fmt_bytes((double)tc.size, b, sizeof(b)), l->ndomains, l->ndomains == 1 ? "" : "s");
    return 0;
}

static int l1i_set_intensity(struct soi *s, double x, char *why, size_t len)
{
    struct l1i *l = s->priv;
    for (unsigned i = 0; i < l->n; i++) {
        struct l1i_thread *t = &l->t[i];
        size_t want = (size_t)((double)l->blocks_per_domain * l->share[i] * x / 100.0 + 0.5);
        if (want > t->max_blocks)
            want = t->max_blocks;
        if (want != t->nblocks) {
            int rc = l1i_build(t, want);
            if (rc < 0)
                return ib_why(why, len, rc, "l1i: cannot regenerate the code: %s", strerror(-rc));
        }
    }
    l1i_reset_meter(l);
    return 0;
}

static int l1i_step(struct soi *s, unsigned tid, uint64_t *units)
{
    struct l1i_thread *t = &((struct l1i *)s->priv)->t[tid];
    *units = 0;
    if (t->nblocks == 0)
        return 0;
    double want_blocks = L1I_STEP_NS / (t->ns_per_block > 0.05 ? t->ns_per_block : 0.05);
    uint64_t passes = (uint64_t)(want_blocks / (double)t->nblocks);
    if (passes < 1)
        passes = 1;
    l1i_fn fn = (l1i_fn)(void *)(t->code + t->entry);
    uint64_t t0 = clk_mono_ns();
    uint64_t done = fn(passes, 0);
    uint64_t ns = clk_mono_ns() - t0;
    if (done != passes * t->nblocks)
        return -EFAULT; /* the generated code did not run as built */
    t->blocks_done += done;
    t->passes_done += passes;
    t->ns_done += ns;
    double nb = (double)ns / (double)done;
    t->ns_per_block = 0.75 * t->ns_per_block + 0.25 * nb;
    *units = done;
    return 0;
}

static int l1i_measure(struct soi *s, struct soi_meter *m)
{
    struct l1i *l = s->priv;
    double bytes = 0, lat = 0;
    unsigned nlat = 0;
    for (unsigned i = 0; i < l->n; i++) {
        const struct l1i_thread *t = &l->t[i];
        uint64_t distinct = t->passes_done >= 1 ? t->nblocks : t->blocks_done;
        bytes += (double)distinct * L1I_BLOCK;
        if (t->blocks_done) {
            lat += (double)t->ns_done / (double)t->blocks_done;
            nlat++;
        }
    }
    m->achieved = bytes;
    m->load_ns = nlat ? lat / nlat : 0;
    l1i_reset_meter(l);
    return 0;
}

const struct soi_ops soi_l1i = {
    .version = SOI_OPS_VERSION,
    .name = "l1i",
    .resource = "L1 instruction cache",
    .summary = "executes generated code over x % of the L1i, jumping between its lines in random order",
    .paper = "SoI8",
    .scope = TOPO_SCOPE_CORE,
    .kind = SOI_FOOTPRINT,
    .prepare = l1i_prepare,
    .set_intensity = l1i_set_intensity,
    .step = l1i_step,
    .measure = l1i_measure,
    .teardown = l1i_teardown,
};
