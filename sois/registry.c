/* registry.c - the one table of SoIs, generated from soi_list.h. */
#include <string.h>

#include "soi.h"

#define SOI(ident) extern const struct soi_ops soi_##ident;
#include "soi_list.h"
#undef SOI

static const struct soi_ops *const registry[] = {
#define SOI(ident) &soi_##ident,
#include "soi_list.h"
#undef SOI
};

unsigned soi_count(void) { return (unsigned)(sizeof(registry) / sizeof(registry[0])); }

const struct soi_ops *soi_at(unsigned i) { return i < soi_count() ? registry[i] : NULL; }

const struct soi_ops *soi_find(const char *name)
{
    for (unsigned i = 0; i < soi_count(); i++)
        if (!strcmp(registry[i]->name, name))
            return registry[i];
    return NULL;
}
