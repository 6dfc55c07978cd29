/* fuzz_cli.c - libFuzzer target for the command-line parsers: common/parse.c, ramp_parse_list, soi_opt_set and
 * `ibench run`'s option parser (cli_parse_run, which returns instead of exiting).
 *
 * Input layout: the first byte picks the parser, the rest is its text. For cli_parse_run the text is split at NUL
 * bytes into argv (argv[0] = "run"). Rules checked: every parser returns 0 or a negative errno, never crashes, leaks
 * or reads out of bounds; what it accepts is in its documented range. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse.h"
#include "ramp.h"
#include "soi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "fuzz_cli: %s failed on '%s'\n", #cond, s);                                                \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

static void run_argv(const char *buf, size_t n)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)"run";
    for (size_t i = 0; i < n && argc < 63;) {
        argv[argc++] = (char *)buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    struct run_opts o;
    char why[256] = "";
    int rc = cli_parse_run(argc, argv, &o, why, sizeof(why));
    if (rc < 0 && (!why[0] || strchr(why, '\n'))) {
        fprintf(stderr, "cli_parse_run refused without a one-line reason: '%s'\n", why);
        abort();
    }
    if (rc == 0 && !o.help && o.have_intensity && !(o.intensity >= 0 && o.intensity <= 100)) {
        fprintf(stderr, "cli_parse_run accepted intensity %g\n", o.intensity);
        abort();
    }
    cli_free_run(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned which = data[0];
    size_t n = size - 1;
    /* the text, NUL-terminated (cli_parse_run: also after its last argument) */
    char *s = malloc(n + 2);
    if (!s)
        return 0;
    memcpy(s, data + 1, n);
    s[n] = s[n + 1] = 0;
    int rc;
    switch (which % 10) {
    case 0: {
        double d;
        rc = parse_double(s, &d);
        CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
        CHECK(rc < 0 || isfinite(d));
        break;
    }
    case 1: {
        double d;
        rc = parse_intensity(s, &d);
        CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
        CHECK(rc < 0 || (d >= 0 && d <= 100));
        break;
    }
    case 2:
    case 3: {
        uint64_t ns;
        int allow_zero = which % 10 == 3;
        rc = parse_duration_ns(s, allow_zero, &ns);
        CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
        CHECK(rc < 0 || allow_zero || ns > 0);
        break;
    }
    case 4: {
        uint64_t b;
        rc = parse_size(s, &b);
        CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
        break;
    }
    case 5: {
        unsigned long u, lo = (data[0] >> 4) & 3, hi = 1000000;
        rc = parse_uint(s, lo, hi, &u);
        CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
        CHECK(rc < 0 || (u >= lo && u <= hi));
        break;
    }
    case 6: {
        int *cpus = NULL;
        unsigned nc = 0;
        rc = parse_cpulist(s, &cpus, &nc);
        CHECK(rc < 0 ? !cpus && !nc : cpus && nc);
        for (unsigned i = 1; rc == 0 && i < nc; i++)
            CHECK(cpus[i - 1] < cpus[i] && cpus[i - 1] >= 0);
        free(cpus);
        break;
    }
    case 7: {
        double *xs = NULL;
        size_t nx = 0;
        rc = ramp_parse_list(s, &xs, &nx);
        for (size_t i = 0; rc == 0 && i < nx; i++)
            CHECK(xs[i] >= 0 && xs[i] <= 100);
        free(xs);
        break;
    }
    case 8: {
        /* soi_opt_set on the SoI the first text byte picks, then "NAME=VALUE": what it accepts lands in range */
        char *eq = n >= 1 && soi_count() ? strchr(s + 1, '=') : NULL;
        if (eq) {
            const struct soi_ops *ops = soi_at((unsigned char)s[0] % soi_count());
            static struct soi_env env;
            char why[256] = "";
            *eq = 0;
            soi_env_init(&env, ops, NULL, 1, NULL, -1, NULL);
            rc = soi_opt_set(&env, s + 1, eq + 1, why, sizeof(why));
            CHECK(rc == 0 || (rc < 0 && why[0] && !strchr(why, '\n')));
            const struct soi_opt *o = rc == 0 ? soi_opt_find(ops, s + 1) : NULL;
            CHECK(rc != 0 || o);
            if (o && o->type != SOI_O_CHOICE) {
                double v = soi_opt_get(&env, o);
                CHECK(v >= o->min && v <= o->max);
            }
        }
        break;
    }
    default:
        run_argv(s, n);
        break;
    }
    free(s);
    return 0;
}
