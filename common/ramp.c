/* ramp.c - intensity schedules: hold, linear ramp, custom list.
 *
 * The builders overwrite *s without freeing what it held (callers ramp_free() first); on error *s is left empty
 * ({0, NULL}).  Every step is 0..100 % and has dur_ns > 0; a schedule has 1..RAMP_MAX_STEPS steps.
 */
#include "ramp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

static int intensity_ok(double x)
{
    return x >= 0.0 && x <= 100.0; /* false for NaN */
}

static void ramp_clear(struct ramp_sched *s)
{
    s->n = 0;
    s->steps = NULL;
}

static int ramp_alloc(struct ramp_sched *s, size_t n)
{
    s->steps = calloc(n, sizeof(*s->steps));
    if (!s->steps)
        return -ENOMEM;
    s->n = n;
    return 0;
}

int ramp_hold(struct ramp_sched *s, double x, uint64_t dur_ns)
{
    if (!s)
        return -EINVAL;
    ramp_clear(s);
    if (!intensity_ok(x) || dur_ns == 0)
        return -EINVAL;
    int rc = ramp_alloc(s, 1);
    if (rc)
        return rc;
    s->steps[0].intensity = x;
    s->steps[0].dur_ns = dur_ns;
    return 0;
}

int ramp_linear(struct ramp_sched *s, double from, double to, unsigned nsteps, uint64_t step_ns)
{
    if (!s)
        return -EINVAL;
    ramp_clear(s);
    if (!intensity_ok(from) || !intensity_ok(to) || nsteps == 0 || nsteps > RAMP_MAX_STEPS || step_ns == 0)
        return -EINVAL;
    int rc = ramp_alloc(s, nsteps);
    if (rc)
        return rc;
    double lo = from < to ? from : to, hi = from < to ? to : from;
    for (unsigned i = 0; i < nsteps; i++) {
        double x;
        if (i == 0)
            x = from;
        else if (i == nsteps - 1)
            x = to;
        else
            x = from + (to - from) * (double)i / (double)(nsteps - 1); /* per point: no accumulated error */
        if (x < lo)
            x = lo;
        if (x > hi)
            x = hi;
        s->steps[i].intensity = x;
        s->steps[i].dur_ns = step_ns;
    }
    return 0;
}

int ramp_list(struct ramp_sched *s, const double *xs, size_t n, uint64_t step_ns)
{
    if (!s)
        return -EINVAL;
    ramp_clear(s);
    if (!xs || n == 0 || n > RAMP_MAX_STEPS || step_ns == 0)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!intensity_ok(xs[i]))
            return -EINVAL;
    int rc = ramp_alloc(s, n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        s->steps[i].intensity = xs[i];
        s->steps[i].dur_ns = step_ns;
    }
    return 0;
}

int ramp_parse_list(const char *str, double **xs, size_t *n)
{
    if (xs)
        *xs = NULL;
    if (n)
        *n = 0;
    if (!str || !xs || !n || !*str)
        return -EINVAL;

    size_t count = 1;
    for (const char *p = str; *p; p++)
        if (*p == ',')
            count++;
    if (count > RAMP_MAX_STEPS)
        return -EINVAL;

    char *copy = strdup(str);
    double *arr = malloc(count * sizeof(*arr));
    if (!copy || !arr) {
        free(copy);
        free(arr);
        return -ENOMEM;
    }
    size_t k = 0;
    char *elem = copy;
    for (;;) {
        char *comma = strchr(elem, ',');
        if (comma)
            *comma = '\0';
        /* empty elements ("10,,20", "10,", ",10") fail here: parse_intensity rejects "" */
        if (parse_intensity(elem, &arr[k]) != 0) {
            free(copy);
            free(arr);
            return -EINVAL;
        }
        k++;
        if (!comma)
            break;
        elem = comma + 1;
    }
    free(copy);
    *xs = arr;
    *n = k;
    return 0;
}

uint64_t ramp_total_ns(const struct ramp_sched *s)
{
    uint64_t t = 0;

    if (!s || !s->steps)
        return 0;
    for (size_t i = 0; i < s->n; i++) {
        if (t > UINT64_MAX - s->steps[i].dur_ns)
            return UINT64_MAX; /* saturate */
        t += s->steps[i].dur_ns;
    }
    return t;
}

void ramp_free(struct ramp_sched *s)
{
    if (!s)
        return;
    free(s->steps);
    ramp_clear(s);
}
