#include "ib_err.h"

#include <stdio.h>

int ib_why(char *why, size_t len, int err, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return err;
}
