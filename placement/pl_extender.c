/* pl_extender.c - the extender's decisions (pl_extender.h).  Being written (issue 19): until then every request is
 * answered 400 with its reason. */
#include "pl_extender.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ib_err.h"

struct pl_extender {
    struct pl_extender_opts o;
};

int pl_extender_new(const struct pl_extender_opts *o, struct pl_extender **out, char *why, size_t len)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return ib_why(why, len, -ENOMEM, "out of memory");
    (*out)->o = *o;
    return 0;
}

void pl_extender_free(struct pl_extender *x) { free(x); }

int pl_extender_handle(struct pl_extender *x, const char *verb, const char *body, size_t len, char **out, int *status)
{
    (void)x, (void)verb, (void)body, (void)len;
    *status = 400;
    *out = strdup("{\"Error\": \"not implemented yet\"}");
    return *out ? 0 : -ENOMEM;
}
