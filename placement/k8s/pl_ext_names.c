/* pl_ext_names.c - names in the extender (pl_ext_names.h). */
#define _GNU_SOURCE
#include "pl_ext_names.h"

#include <stdlib.h>
#include <string.h>

#include "pl_extender.h"

uint64_t ext_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

uint64_t ext_hash_n(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

bool ext_good_name(const char *s)
{
    if (!*s || strlen(s) > PL_EXT_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(s);
}

void strtab_free(struct strtab *t)
{
    for (unsigned i = 0; i < t->nb; i++)
        free(t->s[i]);
    free(t->s);
    memset(t, 0, sizeof *t);
}

const char *strtab_intern(struct strtab *t, const char *s)
{
    if (2 * (t->n + 1) > t->nb) {
        unsigned nb = t->nb ? 2 * t->nb : 64;
        char **ns = calloc(nb, sizeof *ns);
        if (!ns)
            return NULL;
        for (unsigned i = 0; i < t->nb; i++)
            if (t->s[i]) {
                unsigned h = (unsigned)ext_hash(t->s[i]) & (nb - 1);
                while (ns[h])
                    h = (h + 1) & (nb - 1);
                ns[h] = t->s[i];
            }
        free(t->s);
        t->s = ns, t->nb = nb;
    }
    unsigned h = (unsigned)ext_hash(s) & (t->nb - 1);
    for (; t->s[h]; h = (h + 1) & (t->nb - 1))
        if (!strcmp(t->s[h], s))
            return t->s[h];
    if (!(t->s[h] = strdup(s)))
        return NULL;
    t->n++;
    return t->s[h];
}
