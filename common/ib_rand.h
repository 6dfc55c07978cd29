/* ib_rand.h - splitmix64 (Steele, Lea & Flood 2014; the seeding step Vigna recommends for xoshiro): the one
 * deterministic mixer every seeded method in ibench draws from, so a seed means the same stream everywhere.  Header
 * only. */
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

#endif
