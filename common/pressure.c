/* pressure.c - machine pressure and run-queue delay from procfs (pressure.h). */
#define _GNU_SOURCE
#include "pressure.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ib_err.h"
#include "readfile.h"

const char *const ib_psi_name[IB_PSI_N] = {"cpu", "io", "memory"};

/* The total= of the line starting with `kind` ("some"/"full"); -ENOENT when there is no such line. */
static int psi_line(const char *text, const char *kind, uint64_t *total)
{
    size_t kl = strlen(kind);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, kind, kl) != 0 || l[kl] != ' ')
            continue;
        const char *eol = strchr(l, '\n');
        const char *t = strstr(l, "total=");
        if (!t || (eol && t > eol))
            return -EINVAL;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(t + 6, &end, 10);
        if (errno || end == t + 6)
            return -EINVAL;
        *total = v;
        return 0;
    }
    return -ENOENT;
}

int ib_psi_parse(const char *text, uint64_t *some_us, uint64_t *full_us, bool *have_full, char *why, size_t len)
{
    int rc = psi_line(text, "some", some_us);
    if (rc)
        return ib_why(why, len, -EINVAL, "pressure file without a readable 'some ... total=' line");
    rc = psi_line(text, "full", full_us);
    if (rc == -EINVAL)
        return ib_why(why, len, -EINVAL, "pressure file with an unreadable 'full' line");
    *have_full = rc == 0;
    if (rc)
        *full_us = 0;
    return 0;
}

int ib_stat_parse(const char *text, uint64_t *steal, uint64_t *total, char *why, size_t len)
{
    if (strncmp(text, "cpu ", 4) != 0)
        return ib_why(why, len, -EINVAL, "/proc/stat does not start with the aggregate 'cpu' line");
    /* user nice system idle iowait irq softirq steal guest guest_nice: guest time is already in user/nice, so the
     * total counts the first eight */
    uint64_t f[8] = {0};
    const char *p = text + 4;
    int n = 0;
    for (; n < 8; n++) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
            break;
        f[n] = v;
        p = end;
    }
    if (n < 4)
        return ib_why(why, len, -EINVAL, "/proc/stat's 'cpu' line has %d fields, expected at least 4", n);
    uint64_t t = 0;
    for (int i = 0; i < n; i++)
        t += f[i];
    *steal = n >= 8 ? f[7] : 0;
    *total = t;
    return 0;
}

int ib_schedstat_parse(const char *text, uint64_t *run_ns, uint64_t *wait_ns, uint64_t *slices, char *why,
                       size_t len)
{
    unsigned long long r, w, n;
    if (sscanf(text, "%llu %llu %llu", &r, &w, &n) != 3)
        return ib_why(why, len, -EINVAL, "schedstat is not 'on-CPU-ns wait-ns slices'");
    *run_ns = r;
    *wait_ns = w;
    if (slices)
        *slices = n;
    return 0;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * IB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

int ib_pressure_read(struct ib_pressure_snap *s, const char *root, char *why, size_t len)
{
    if (!root)
        root = "/proc";
    memset(s, 0, sizeof(*s));
    s->t_ns = mono_ns();
    char path[512], buf[4096];
    for (int r = 0; r < IB_PSI_N; r++) {
        snprintf(path, sizeof(path), "%s/pressure/%s", root, ib_psi_name[r]);
        bool hf;
        /* absent (old kernel, psi=0) or unreadable: the source is absent, which every reader shows as such */
        if (ib_read_small(path, buf, sizeof(buf)) == 0 &&
            ib_psi_parse(buf, &s->psi_some_us[r], &s->psi_full_us[r], &hf, NULL, 0) == 0)
            s->psi_have[r] = true;
    }
    snprintf(path, sizeof(path), "%s/stat", root);
    int rc = ib_read_small(path, buf, sizeof(buf));
    if (rc)
        return ib_why(why, len, rc, "cannot read %s: %s", path, strerror(-rc));
    s->stat_have = ib_stat_parse(buf, &s->steal_ticks, &s->total_ticks, NULL, 0) == 0;
    return 0;
}

void ib_pressure_delta(const struct ib_pressure_snap *a, const struct ib_pressure_snap *b, struct ib_pressure *out)
{
    out->wall_s = b->t_ns > a->t_ns ? (double)(b->t_ns - a->t_ns) / 1e9 : 0.0;
    double wall_us = out->wall_s * 1e6;
    for (int r = 0; r < IB_PSI_N; r++) {
        out->some_pct[r] = out->full_pct[r] = NAN;
        if (a->psi_have[r] && b->psi_have[r] && wall_us > 0) {
            out->some_pct[r] = 100.0 * (double)(b->psi_some_us[r] - a->psi_some_us[r]) / wall_us;
            out->full_pct[r] = 100.0 * (double)(b->psi_full_us[r] - a->psi_full_us[r]) / wall_us;
            /* the kernel's totals and our clock are sampled a few µs apart: a share cannot exceed the interval */
            out->some_pct[r] = fmin(fmax(out->some_pct[r], 0.0), 100.0);
            out->full_pct[r] = fmin(fmax(out->full_pct[r], 0.0), 100.0);
        }
    }
    out->steal_pct = NAN;
    if (a->stat_have && b->stat_have && b->total_ticks > a->total_ticks)
        out->steal_pct = 100.0 * (double)(b->steal_ticks - a->steal_ticks) / (double)(b->total_ticks - a->total_ticks);
}

/* Wall-weighted mean of a running share; NAN stays NAN only while every part is NAN. */
static double wmean(double acc, double acc_w, double v, double w)
{
    if (isnan(v))
        return acc;
    if (isnan(acc) || acc_w <= 0)
        return v;
    return (acc * acc_w + v * w) / (acc_w + w);
}

void ib_pressure_add(struct ib_pressure *acc, const struct ib_pressure *a)
{
    if (acc->wall_s <= 0) {
        *acc = *a;
        return;
    }
    for (int r = 0; r < IB_PSI_N; r++) {
        acc->some_pct[r] = wmean(acc->some_pct[r], acc->wall_s, a->some_pct[r], a->wall_s);
        acc->full_pct[r] = wmean(acc->full_pct[r], acc->wall_s, a->full_pct[r], a->wall_s);
    }
    acc->steal_pct = wmean(acc->steal_pct, acc->wall_s, a->steal_pct, a->wall_s);
    acc->wall_s += a->wall_s;
}

int ib_sched_thread(pid_t tid, struct ib_sched *s, char *why, size_t len)
{
    char path[128], buf[256];
    if (tid)
        snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
    else
        snprintf(path, sizeof(path), "/proc/thread-self/schedstat");
    memset(s, 0, sizeof(*s));
    int rc = ib_read_small(path, buf, sizeof(buf));
    if (rc)
        return ib_why(why, len, rc, "cannot read %s: %s", path, strerror(-rc));
    rc = ib_schedstat_parse(buf, &s->run_ns, &s->wait_ns, &s->slices, why, len);
    if (rc)
        return rc;
    s->have = true;
    s->ntasks = 1;
    return 0;
}

int ib_sched_process(pid_t pid, struct ib_sched *s, char *why, size_t len)
{
    char dir[64], path[384], buf[256];
    snprintf(dir, sizeof(dir), "/proc/%d/task", pid ? (int)pid : (int)getpid());
    memset(s, 0, sizeof(*s));
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        return ib_why(why, len, -e, "cannot list %s: %s", dir, strerror(e));
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "%s/%s/schedstat", dir, de->d_name);
        uint64_t r = 0, w = 0, n = 0;
        /* a thread that exits between readdir and read is simply not counted */
        if (ib_read_small(path, buf, sizeof(buf)) != 0 || ib_schedstat_parse(buf, &r, &w, &n, NULL, 0) != 0)
            continue;
        s->run_ns += r;
        s->wait_ns += w;
        s->slices += n;
        s->ntasks++;
    }
    closedir(d);
    if (s->ntasks == 0)
        return ib_why(why, len, -ENOENT, "no readable schedstat under %s (CONFIG_SCHED_INFO off?)", dir);
    s->have = true;
    return 0;
}

double ib_sched_wait_pct(const struct ib_sched *a, const struct ib_sched *b)
{
    if (!a->have || !b->have || b->run_ns < a->run_ns || b->wait_ns < a->wait_ns)
        return NAN;
    double run = (double)(b->run_ns - a->run_ns), wait = (double)(b->wait_ns - a->wait_ns);
    if (run + wait <= 0)
        return NAN;
    return 100.0 * wait / (run + wait);
}

int ib_sched_threads(const pid_t *tids, unsigned n, struct ib_sched *s, char *why, size_t len)
{
    memset(s, 0, sizeof(*s));
    for (unsigned i = 0; i < n; i++) {
        struct ib_sched t;
        int rc = ib_sched_thread(tids[i], &t, why, len);
        if (rc) {
            memset(s, 0, sizeof(*s));
            return rc;
        }
        s->run_ns += t.run_ns;
        s->wait_ns += t.wait_ns;
        s->slices += t.slices;
        s->ntasks++;
    }
    s->have = n > 0;
    return n > 0 ? 0 : ib_why(why, len, -EINVAL, "no threads to read");
}

void ib_sched_delta(const struct ib_sched *a, const struct ib_sched *b, struct ib_sched *out)
{
    memset(out, 0, sizeof(*out));
    if (!a->have || !b->have || b->run_ns < a->run_ns || b->wait_ns < a->wait_ns || b->slices < a->slices)
        return;
    out->have = true;
    out->run_ns = b->run_ns - a->run_ns;
    out->wait_ns = b->wait_ns - a->wait_ns;
    out->slices = b->slices - a->slices;
    out->ntasks = b->ntasks;
}

void ib_sched_add(struct ib_sched *acc, const struct ib_sched *d)
{
    if (!d->have)
        return;
    acc->have = true;
    acc->run_ns += d->run_ns;
    acc->wait_ns += d->wait_ns;
    acc->slices += d->slices;
    if (d->ntasks > acc->ntasks)
        acc->ntasks = d->ntasks;
}

double ib_sched_share(const struct ib_sched *d)
{
    if (!d->have || d->run_ns + d->wait_ns < IB_BUSY_MIN_RUNNABLE_NS)
        return NAN;
    return 100.0 * (double)d->wait_ns / (double)(d->run_ns + d->wait_ns);
}

bool ib_busy(double wait_pct) { return wait_pct > IB_BUSY_WAIT_PCT; /* false for NAN */ }

double ib_sched_wait_per_run_us(const struct ib_sched *d)
{
    return d->have && d->slices ? (double)d->wait_ns / (double)d->slices / 1e3 : NAN;
}

bool ib_busy_waits(double wait_per_run_us) { return !(wait_per_run_us < IB_BUSY_WAIT_RUN_US); /* NAN: true */ }

void ib_busy_text(double wait_pct, const struct ib_pressure *p, char *out, size_t len)
{
    size_t n;
    if (isnan(wait_pct))
        n = (size_t)snprintf(out, len, "the SoI's threads' run-queue delay was not measured (no schedstat)");
    else
        n = (size_t)snprintf(out, len, "the SoI's threads waited %.1f %% of their runnable time for a CPU "
                             "(bound %.0f %%)", wait_pct, IB_BUSY_WAIT_PCT);
    if (p && !isnan(p->some_pct[IB_PSI_CPU]) && n < len)
        n += (size_t)snprintf(out + n, len - n, "; PSI cpu some %.1f %%", p->some_pct[IB_PSI_CPU]);
    if (p && !isnan(p->steal_pct) && n < len)
        snprintf(out + n, len - n, "%s steal %.1f %%", p && !isnan(p->some_pct[IB_PSI_CPU]) ? "," : ";",
                 p->steal_pct);
}
