/* ib_rand.h - splitmix64 (Steele, Lea & Flood 2014; the seeding step Vigna recommends for xoshiro): the one
 * deterministic mixer every seeded method in ibench draws from, so a seed means the same stream everywhere; and
 * xoshiro256** (Blackman & Vigna 2018) seeded by it, for the long streams of the simulator and the clustering's
 * sampling.  Header only. */
#ifndef IB_RAND_H
#define IB_RAND_H
#include <stdint.h>

/* The next value of the stream whose state is *x (advanced). */
static inline uint64_t ib_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A double uniform in [0, 1) from the top 53 bits of the next value. */
static inline double ib_unit01(uint64_t *x) { return (double)(ib_splitmix64(x) >> 11) * 0x1.0p-53; }

/* xoshiro256**: four words of state, each seeded by the next splitmix64 value of seed. */
struct ib_xoshiro {
    uint64_t s[4];
};
static inline void ib_xoshiro_seed(struct ib_xoshiro *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        g->s[i] = ib_splitmix64(&seed);
}
static inline uint64_t ib_rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t ib_xoshiro_next(struct ib_xoshiro *g)
{
    uint64_t *s = g->s, r = ib_rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ib_rotl64(s[3], 45);
    return r;
}

#endif
