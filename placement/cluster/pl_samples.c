/* pl_samples.c - the source names of pl_samples.h: the words of a trace file's optional third field. */
#include "pl_samples.h"

#include <string.h>

#include "ib_err.h"

static const char *const src_names[] = {"unknown", "local", "remote", "memory"};

const char *pl_src_name(enum pl_src s)
{
    return (unsigned)s < IB_ARRAY_SIZE(src_names) ? src_names[s] : "?";
}

int pl_src_parse(const char *word)
{
    for (unsigned i = 0; i < IB_ARRAY_SIZE(src_names); i++)
        if (strcmp(word, src_names[i]) == 0)
            return (int)i;
    return -1;
}
