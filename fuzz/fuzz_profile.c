/* fuzz_profile.c - libFuzzer target for the profile reader (harness/profile_fmt.c).
 *
 * The input is the text of a profile file. Rules checked on every input:
 *  - the reader returns 0 or -EINVAL with a one-line reason, never crashes, leaks or reads out of bounds;
 *  - a profile it accepts is written back by profile_dumps and read again (a round trip the writer promises). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_fmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    struct profile p;
    char why[256] = "";
    int rc = profile_parse(text, "fuzz.json", &p, why, sizeof(why));
    free(text);
    if (rc < 0) {
        if (rc != -EINVAL && rc != -ENOMEM) {
            fprintf(stderr, "profile_parse returned %d (%s)\n", rc, why);
            abort();
        }
        if (!why[0] || strchr(why, '\n')) {
            fprintf(stderr, "profile_parse refused without a one-line reason: '%s'\n", why);
            abort();
        }
        return 0;
    }
    char *again = profile_dumps(&p);
    if (again) {
        struct profile q;
        if (profile_parse(again, "dumped.json", &q, why, sizeof(why)) < 0) {
            fprintf(stderr, "an accepted profile does not read back after profile_dumps: %s\n", why);
            abort();
        }
        profile_free(&q);
        free(again);
    }
    profile_free(&p);
    return 0;
}
