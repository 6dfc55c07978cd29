/* pl_ext_names.h - names in the extender (pl_extender.h): the store's rule for a name, the hash every table of the
 * extender uses, and interned strings (the tenant names of many nodes held once, so that equal names are equal
 * pointers and a tenant list compares by its pointers). */
#ifndef IB_PL_EXT_NAMES_H
#define IB_PL_EXT_NAMES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MurmurHash3's finaliser: every input bit moves every output bit.  A table indexed by a hash's low bits needs it
 * when the hash is of addresses: profiles are large allocations, their addresses' low bits all alike. */
static inline uint64_t ext_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

/* FNV-1a of a NUL-terminated string, and of n bytes. */
uint64_t ext_hash(const char *s);
uint64_t ext_hash_n(const char *s, size_t n);
/* A name of the store: [A-Za-z0-9._-], not "." or "..", at most PL_EXT_NAME_MAX characters. */
bool ext_good_name(const char *s);

struct strtab {
    char **s; /* open addressing, nb a power of two, at most half full */
    unsigned n, nb;
};
/* s interned in t: the one copy of s, or NULL when out of memory. */
const char *strtab_intern(struct strtab *t, const char *s);
void strtab_free(struct strtab *t);

#endif
