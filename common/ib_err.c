#include "ib_err.h"

#include <stdio.h>

int ib_why(char *why, size_t len, int err, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
        /* One line, whatever an argument held (a user's option value, a file's key): control characters become '?'. */
        for (char *c = why; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
    }
    return err;
}
