/* calib.c - measured capacities: cache knees from a latency sweep, streaming bandwidth per level, JSON cache. */
#define _GNU_SOURCE
#include "calib.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "ib_err.h"
#include "kernels.h"
#include "measure.h"
#include "output.h"
#include "parse.h"
#include "pressure.h"
#include "stats.h"

const char *calib_level_name(enum calib_level l)
{
    static const char *const names[] = {"l1d", "l2", "llc"};
    return l < CALIB_NLEVELS ? names[l] : "?";
}

/* ---- fingerprint and file ------------------------------------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

int calib_fingerprint(const struct topo *t, const struct cpu_info *ci, const struct mlim *m, char *out,
                      size_t len)
{
    char desc[512];
    struct topo_cache c1 = {0}, c2 = {0}, c3 = {0};
    topo_cache_info(t, 1, false, -1, &c1);
    topo_cache_info(t, 2, false, -1, &c2);
    topo_cache_info(t, topo_llc_level(t), false, -1, &c3);
    /* The machine only: a file format here would make one machine's old profiles and records another machine's. */
    snprintf(desc, sizeof(desc), "%s|%s|%u.%u.%u|packages=%u|numa=%u|cores=%u|pus=%u|l1=%llu|l2=%llu|llc=%llu|mem=%llu",
             ci->vendor, ci->model, ci->family, ci->model_id, ci->stepping, topo_npackages(t), topo_nnuma(t),
             topo_ncores(t), topo_npus(t), (unsigned long long)c1.size, (unsigned long long)c2.size,
             (unsigned long long)c3.size, (unsigned long long)(m->mem_total >> 30));
    int n = snprintf(out, len, "%s-%02x-%02x-%ucpu-%016llx", !strncmp(ci->vendor, "Authentic", 9) ? "amd"
                                                             : !strncmp(ci->vendor, "Genuine", 7) ? "intel"
                                                                                                   : "cpu",
                     ci->family, ci->model_id, topo_npus(t), (unsigned long long)fnv1a(desc));
    return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

const char *calib_dir(char *buf, size_t len)
{
    const char *d = getenv("IBENCH_CACHE_DIR");
    if (d && *d)
        snprintf(buf, len, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && *d)
        snprintf(buf, len, "%s/ibench", d);
    else if ((d = getenv("HOME")) && *d)
        snprintf(buf, len, "%s/.cache/ibench", d);
    else
        snprintf(buf, len, "/tmp/ibench-cache-%u", (unsigned)getuid());
    return buf;
}

/* Missing directories are created private: the cache says what this machine can do, nobody else's to rewrite. */
static int mkdir_p(const char *path)
{
    char tmp[1024];
    if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* The directory of c's file (its path up to the last slash). */
static void path_dir(const struct calib *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s", c->path);
    char *slash = strrchr(buf, '/');
    if (slash && slash != buf)
        *slash = 0;
    else if (slash)
        slash[1] = 0;
    else
        snprintf(buf, len, ".");
}

/* A cache directory is used only when it is ours and nobody else can write to it: anyone who can replace the file
 * chooses the capacities every load level is computed from.  0 when safe or absent (created 0700 on save), else
 * -EPERM with c->nocache set and the reason in c->nocache_why. */
static int dir_check(struct calib *c)
{
    char dir[sizeof(c->path)];
    struct stat st;
    path_dir(c, dir, sizeof(dir));
    if (stat(dir, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(c->nocache_why, sizeof(c->nocache_why), "calibration cache %s cannot be inspected: %s", dir,
                 strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(c->nocache_why, sizeof(c->nocache_why), "calibration cache %s is not a directory", dir);
    } else if (st.st_uid != geteuid()) {
        snprintf(c->nocache_why, sizeof(c->nocache_why), "calibration cache %s belongs to uid %u, not to you (uid %u)",
                 dir, (unsigned)st.st_uid, (unsigned)geteuid());
    } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(c->nocache_why, sizeof(c->nocache_why), "calibration cache %s is writable by %s (mode %03o)", dir,
                 st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 0777));
    } else {
        return 0;
    }
    c->nocache = 1;
    return -EPERM;
}

/* Opens and flocks (op: LOCK_SH or LOCK_EX) the lock file beside c's cache file; the fd, or -errno. */
static int lock_file(const struct calib *c, int op)
{
    char lp[sizeof(c->path) + 8];
    size_t n = strlen(c->path);
    if (n > 5 && !strcmp(c->path + n - 5, ".json"))
        n -= 5;
    snprintf(lp, sizeof(lp), "%.*s.lock", (int)n, c->path);
    int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    while (flock(fd, op) < 0)
        if (errno != EINTR) {
            int err = -errno;
            close(fd);
            return err;
        }
    return fd;
}

void calib_reset(struct calib *c)
{
    char fp[sizeof(c->fingerprint)], path[sizeof(c->path)], nwhy[sizeof(c->nocache_why)];
    int nocache = c->nocache;
    memcpy(fp, c->fingerprint, sizeof(fp));
    memcpy(path, c->path, sizeof(path));
    memcpy(nwhy, c->nocache_why, sizeof(nwhy));
    memset(c, 0, sizeof(*c));
    memcpy(c->fingerprint, fp, sizeof(fp));
    memcpy(c->path, path, sizeof(path));
    memcpy(c->nocache_why, nwhy, sizeof(nwhy));
    c->nocache = nocache;
}

/* ---- reading back: every value range-checked ------------------------------------------------------------------
 * A value outside these bounds (negative, NaN, infinite, a string, absurdly large) is no measurement of any machine:
 * the entry holding it is dropped, so it is measured again. */
#define CALIB_MAX_BYTES (1ULL << 40) /* a cache level, sweep point or working set: below 1 TiB */
#define CALIB_MAX_NS 1e6             /* one load: below a millisecond */
#define CALIB_MAX_RATE 1e15          /* bytes or instructions per second over a whole machine */
#define CALIB_MAX_SPREAD 1e3         /* (max-min)/median of the repeats */
#define CALIB_MAX_WHEN 1e11          /* unix time: year ~5000 */

/* o[k] (or o itself when k is NULL) as a finite number in [lo, hi]: 0, else -ERANGE (absent counts as bad). */
static int jnum(json_t *o, const char *k, double lo, double hi, double *out)
{
    json_t *v = k ? json_object_get(o, k) : o;
    if (!json_is_number(v))
        return -ERANGE;
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi)
        return -ERANGE;
    *out = x;
    return 0;
}

static int jbytes(json_t *o, const char *k, uint64_t *out)
{
    double x;
    int rc = jnum(o, k, 0, (double)CALIB_MAX_BYTES, &x);
    if (rc == 0)
        *out = (uint64_t)x;
    return rc;
}

/* The spread of the knees over the sweeps, their range, each sweep's summary and the note: -ERANGE if implausible. */
static int load_spread(struct calib *c, json_t *caches)
{
    json_t *sp = json_object_get(caches, "spread"), *lo = json_object_get(caches, "knee_min");
    json_t *hi = json_object_get(caches, "knee_max"), *sws = json_object_get(caches, "sweeps");
    json_t *note = json_object_get(caches, "note");
    int bad = 0;
    for (int l = 0; l < CALIB_NLEVELS; l++) {
        bad |= jnum(sp, calib_level_name(l), 0, CALIB_MAX_SPREAD, &c->spread[l]);
        bad |= jbytes(lo, calib_level_name(l), &c->knee_lo[l]) | jbytes(hi, calib_level_name(l), &c->knee_hi[l]);
    }
    if (!json_is_string(note) || strlen(json_string_value(note)) >= sizeof(c->caches_note) || !json_is_array(sws) ||
        json_array_size(sws) > CALIB_MAX_SWEEPS)
        return -ERANGE;
    snprintf(c->caches_note, sizeof(c->caches_note), "%s", json_string_value(note));
    size_t i;
    json_t *w;
    json_array_foreach(sws, i, w)
    {
        struct calib_sweep_sum *e = &c->sweeps[c->nsweeps++];
        json_t *k = json_object_get(w, "knee"), *p = json_object_get(w, "plateau_ns");
        json_t *wait = json_object_get(w, "wait_pct"), *rej = json_object_get(w, "reject");
        for (int l = 0; l < CALIB_NLEVELS; l++)
            bad |= jbytes(k, calib_level_name(l), &e->knee[l]) | jnum(p, calib_level_name(l), 0, CALIB_MAX_NS,
                                                                      &e->plateau_ns[l]);
        bad |= jnum(p, "dram", 0, CALIB_MAX_NS, &e->plateau_ns[CALIB_NLEVELS]);
        e->wait_pct = NAN;
        if (!json_is_null(wait))
            bad |= jnum(wait, NULL, 0, 100, &e->wait_pct);
        if (!json_is_string(rej) || strlen(json_string_value(rej)) >= sizeof(e->reject))
            bad = -ERANGE;
        else
            snprintf(e->reject, sizeof(e->reject), "%s", json_string_value(rej));
    }
    return bad;
}

/* The caches section, all or nothing: one implausible value and the sweep is measured again. */
static int load_caches(struct calib *c, json_t *caches)
{
    json_t *cl = json_object_get(caches, "claimed"), *me = json_object_get(caches, "measured");
    json_t *pl = json_object_get(caches, "plateau_ns"), *sw = json_object_get(caches, "sweep");
    double cpu, when;
    int bad = jnum(caches, "cpu", 0, 1 << 20, &cpu) | jnum(caches, "when", 0, CALIB_MAX_WHEN, &when);
    c->sweep_cpu = bad ? 0 : (int)cpu;
    c->caches_when = bad ? 0 : (int64_t)when;
    for (int l = 0; l < CALIB_NLEVELS; l++) {
        bad |= jbytes(cl, calib_level_name(l), &c->claimed[l]);
        bad |= jbytes(me, calib_level_name(l), &c->measured[l]);
        bad |= jnum(pl, calib_level_name(l), 0, CALIB_MAX_NS, &c->plateau_ns[l]);
    }
    bad |= jnum(pl, "dram", 0, CALIB_MAX_NS, &c->plateau_ns[CALIB_NLEVELS]);
    bad |= load_spread(c, caches);
    if (!json_is_array(sw) || json_array_size(sw) == 0 || json_array_size(sw) > CALIB_MAX_SWEEP)
        bad = -ERANGE;
    size_t i;
    json_t *pt;
    json_array_foreach(sw, i, pt)
    {
        if (bad || i >= CALIB_MAX_SWEEP)
            break;
        struct calib_point *p = &c->sweep[c->nsweep++];
        bad |= jbytes(json_array_get(pt, 0), NULL, &p->bytes) | jnum(json_array_get(pt, 1), NULL, 0, CALIB_MAX_NS,
                                                                     &p->ns);
        if (!bad && (p->bytes == 0 || !(p->ns > 0)))
            bad = -ERANGE;
    }
    if (bad) {
        memset(c->spread, 0, sizeof(c->spread));
        memset(c->knee_lo, 0, sizeof(c->knee_lo));
        memset(c->knee_hi, 0, sizeof(c->knee_hi));
        memset(c->sweeps, 0, sizeof(c->sweeps));
        c->nsweeps = 0;
        c->caches_note[0] = 0;
        memset(c->claimed, 0, sizeof(c->claimed));
        memset(c->measured, 0, sizeof(c->measured));
        memset(c->plateau_ns, 0, sizeof(c->plateau_ns));
        c->nsweep = 0;
        c->sweep_cpu = 0;
        c->caches_when = 0;
        return -ERANGE;
    }
    c->have_caches = 1;
    return 0;
}

/* The canonical key of a CPU list as read from a file: hwloc's own rendering of it; -ERANGE unless it is a plain
 * list of CPU numbers and ascending ranges ("0-3,8"; hwloc's own parser takes "-3" for an infinite set) whose
 * canonical form fits. */
static int canon_cpus(const char *s, char *out, size_t len)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    if (!b)
        return -ENOMEM;
    int rc = *s ? 0 : -ERANGE;
    while (rc == 0 && *s) {
        char *end;
        if (*s < '0' || *s > '9')
            rc = -ERANGE;
        unsigned long lo = rc ? 0 : strtoul(s, &end, 10), hi = lo;
        if (rc == 0 && *end == '-') {
            s = end + 1;
            if (*s < '0' || *s > '9')
                rc = -ERANGE;
            else
                hi = strtoul(s, &end, 10);
        }
        if (rc == 0 && (hi < lo || hi >= (1UL << 20) || (*end && *end != ',') || (*end == ',' && !end[1])))
            rc = -ERANGE;
        if (rc == 0 && hwloc_bitmap_set_range(b, (unsigned)lo, (int)hi) < 0)
            rc = -ENOMEM;
        if (rc == 0)
            s = *end ? end + 1 : end;
    }
    if (rc == 0) {
        int n = hwloc_bitmap_list_snprintf(out, len, b);
        rc = n > 0 && (size_t)n < len ? 0 : -ERANGE;
    }
    hwloc_bitmap_free(b);
    return rc;
}

/* Keep e unless c holds a newer entry of the same key. */
static void merge_entry(struct calib *c, const struct calib_bw *e)
{
    for (unsigned i = 0; i < c->nbw; i++)
        if (!strcmp(c->bw[i].kind, e->kind) && !strcmp(c->bw[i].cpus, e->cpus)) {
            if (e->when > c->bw[i].when)
                c->bw[i] = *e;
            return;
        }
    int dirty = c->dirty;
    calib_bw_store(c, e);
    c->dirty = dirty;
}

static void load_doc(struct calib *c, json_t *doc)
{
    json_t *caches = json_object_get(doc, "caches");
    if (json_is_object(caches))
        load_caches(c, caches);
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(doc, "bandwidth"), i, b)
    {
        struct calib_bw e = {0};
        const char *kind = json_string_value(json_object_get(b, "kind"));
        const char *cpus = json_string_value(json_object_get(b, "cpus"));
        double when;
        if (!kind || !*kind || strlen(kind) >= sizeof(e.kind) || !cpus || canon_cpus(cpus, e.cpus, sizeof(e.cpus)))
            continue;
        snprintf(e.kind, sizeof(e.kind), "%s", kind);
        if (jbytes(b, "ws_bytes", &e.ws_bytes) || jnum(b, "bps", 0, CALIB_MAX_RATE, &e.bps) || !(e.bps > 0) ||
            jnum(b, "spread", 0, CALIB_MAX_SPREAD, &e.spread) || jnum(b, "when", 0, CALIB_MAX_WHEN, &when))
            continue;
        e.when = (int64_t)when;
        merge_entry(c, &e);
    }
}

/* Reads c's file into c (which holds nothing yet) when its format and fingerprint are ours.  The format is checked
 * on its own: the fingerprint does not change with it, so a file of another format has the same name and is
 * refused here (measured again), never read as this one. */
static void read_file(struct calib *c)
{
    json_error_t jerr;
    json_t *doc = json_load_file(c->path, 0, &jerr);
    if (!doc)
        return; /* absent or unreadable: start empty, measure on demand */
    if (json_integer_value(json_object_get(doc, "format")) == CALIB_FORMAT &&
        !strcmp(json_string_value(json_object_get(doc, "fingerprint")) ?: "", c->fingerprint))
        load_doc(c, doc);
    json_decref(doc);
}

int calib_open(struct calib *c, const char *fp, char *why, size_t len)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->fingerprint, sizeof(c->fingerprint), "%s", fp);
    char dir[900];
    if (snprintf(c->path, sizeof(c->path), "%s/calib-%s.json", calib_dir(dir, sizeof(dir)), fp) >=
        (int)sizeof(c->path))
        return ib_why(why, len, -ENAMETOOLONG, "calibration cache path too long");
    if (dir_check(c) < 0 || access(c->path, F_OK) < 0)
        return 0; /* unsafe (nothing read) or no file yet */
    /* A read-only cache can still be read without the lock: files are only ever replaced whole, by rename. */
    int fd = lock_file(c, LOCK_SH);
    read_file(c);
    if (fd >= 0)
        close(fd);
    return 0;
}

/* Merge what the file holds into c: the newer latency sweep, and the newer of each rate entry. */
static void merge_file(struct calib *c)
{
    struct calib *d = calloc(1, sizeof(*d));
    if (!d)
        return;
    memcpy(d->fingerprint, c->fingerprint, sizeof(d->fingerprint));
    memcpy(d->path, c->path, sizeof(d->path));
    read_file(d);
    if (d->have_caches && (!c->have_caches || d->caches_when > c->caches_when)) {
        c->have_caches = 1;
        c->sweep_cpu = d->sweep_cpu;
        c->caches_when = d->caches_when;
        memcpy(c->claimed, d->claimed, sizeof(c->claimed));
        memcpy(c->measured, d->measured, sizeof(c->measured));
        memcpy(c->plateau_ns, d->plateau_ns, sizeof(c->plateau_ns));
        memcpy(c->sweep, d->sweep, sizeof(c->sweep));
        c->nsweep = d->nsweep;
        memcpy(c->spread, d->spread, sizeof(c->spread));
        memcpy(c->knee_lo, d->knee_lo, sizeof(c->knee_lo));
        memcpy(c->knee_hi, d->knee_hi, sizeof(c->knee_hi));
        memcpy(c->sweeps, d->sweeps, sizeof(c->sweeps));
        c->nsweeps = d->nsweeps;
        memcpy(c->caches_note, d->caches_note, sizeof(c->caches_note));
    }
    for (unsigned i = 0; i < d->nbw; i++)
        merge_entry(c, &d->bw[i]);
    free(d);
}

static json_t *calib_doc(const struct calib *c)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_integer(CALIB_FORMAT));
    json_object_set_new(doc, "fingerprint", json_string(c->fingerprint));
    json_object_set_new(doc, "tool", json_string("ibench " IBENCH_VERSION));
    if (c->have_caches) {
        json_t *caches = json_object(), *cl = json_object(), *me = json_object(), *pl = json_object();
        json_t *sw = json_array();
        for (int l = 0; l < CALIB_NLEVELS; l++) {
            json_object_set_new(cl, calib_level_name(l), json_integer((json_int_t)c->claimed[l]));
            json_object_set_new(me, calib_level_name(l), json_integer((json_int_t)c->measured[l]));
            json_object_set_new(pl, calib_level_name(l), json_real(c->plateau_ns[l]));
        }
        json_object_set_new(pl, "dram", json_real(c->plateau_ns[CALIB_NLEVELS]));
        json_t *sp = json_object(), *klo = json_object(), *khi = json_object(), *sws = json_array();
        for (int l = 0; l < CALIB_NLEVELS; l++) {
            json_object_set_new(sp, calib_level_name(l), json_real(c->spread[l]));
            json_object_set_new(klo, calib_level_name(l), json_integer((json_int_t)c->knee_lo[l]));
            json_object_set_new(khi, calib_level_name(l), json_integer((json_int_t)c->knee_hi[l]));
        }
        for (unsigned i = 0; i < c->nsweeps && i < CALIB_MAX_SWEEPS; i++) {
            const struct calib_sweep_sum *e = &c->sweeps[i];
            json_t *k = json_object(), *p = json_object();
            for (int l = 0; l < CALIB_NLEVELS; l++) {
                json_object_set_new(k, calib_level_name(l), json_integer((json_int_t)e->knee[l]));
                json_object_set_new(p, calib_level_name(l), json_real(e->plateau_ns[l]));
            }
            json_object_set_new(p, "dram", json_real(e->plateau_ns[CALIB_NLEVELS]));
            json_array_append_new(sws, json_pack("{s:o,s:o,s:o,s:s}", "knee", k, "plateau_ns", p, "wait_pct",
                                                 isfinite(e->wait_pct) ? json_real(e->wait_pct) : json_null(),
                                                 "reject", e->reject));
        }
        json_object_set_new(caches, "spread", sp);
        json_object_set_new(caches, "knee_min", klo);
        json_object_set_new(caches, "knee_max", khi);
        json_object_set_new(caches, "sweeps", sws);
        json_object_set_new(caches, "note", json_string(c->caches_note));
        for (unsigned i = 0; i < c->nsweep; i++)
            json_array_append_new(sw, json_pack("[I,f]", (json_int_t)c->sweep[i].bytes, c->sweep[i].ns));
        json_object_set_new(caches, "cpu", json_integer(c->sweep_cpu));
        json_object_set_new(caches, "when", json_integer(c->caches_when));
        json_object_set_new(caches, "claimed", cl);
        json_object_set_new(caches, "measured", me);
        json_object_set_new(caches, "plateau_ns", pl);
        json_object_set_new(caches, "sweep", sw);
        json_object_set_new(doc, "caches", caches);
    }
    json_t *bw = json_array();
    for (unsigned i = 0; i < c->nbw; i++)
        json_array_append_new(bw, json_pack("{s:s,s:s,s:I,s:f,s:f,s:I}", "kind", c->bw[i].kind, "cpus",
                                            c->bw[i].cpus, "ws_bytes", (json_int_t)c->bw[i].ws_bytes, "bps",
                                            c->bw[i].bps, "spread", c->bw[i].spread, "when",
                                            (json_int_t)c->bw[i].when));
    json_object_set_new(doc, "bandwidth", bw);
    return doc;
}

int calib_save(struct calib *c, char *why, size_t len)
{
    if (c->nocache)
        return ib_why(why, len, -EPERM, "%s", c->nocache_why);
    char dir[sizeof(c->path)];
    path_dir(c, dir, sizeof(dir));
    int rc = mkdir_p(dir);
    if (rc < 0)
        return ib_why(why, len, rc, "cannot create %s: %s", dir, strerror(-rc));
    if (dir_check(c) < 0)
        return ib_why(why, len, -EPERM, "%s", c->nocache_why);
    int fd = lock_file(c, LOCK_EX);
    if (fd < 0)
        return ib_why(why, len, fd, "cannot lock the calibration cache in %s: %s", dir, strerror(-fd));
    merge_file(c); /* under the lock: nothing another process saved since we read is lost */
    json_t *doc = calib_doc(c);
    rc = doc ? out_json_file_atomic(c->path, doc) : -ENOMEM;
    json_decref(doc);
    close(fd);
    if (rc < 0)
        return ib_why(why, len, rc, "cannot write %s: %s", c->path, strerror(-rc));
    return 0;
}

/* ---- knees ---------------------------------------------------------------------------------------------- */

/* Median latency of the points with bytes in [lo, hi]; 0 when there are none. */
static double median_in(const struct calib_point *p, unsigned n, uint64_t lo, uint64_t hi)
{
    double v[CALIB_MAX_SWEEP];
    unsigned k = 0;
    for (unsigned i = 0; i < n && k < CALIB_MAX_SWEEP; i++)
        if (p[i].bytes >= lo && p[i].bytes <= hi)
            v[k++] = p[i].ns;
    return k ? ib_median(v, k) : 0;
}

int calib_find_knee(const struct calib_point *pts, unsigned n, uint64_t lo_bytes, uint64_t hi_bytes,
                    uint64_t *knee, double *lo_ns, double *hi_ns)
{
    if (!pts || n < 3 || lo_bytes == 0 || hi_bytes <= lo_bytes)
        return -EINVAL;
    double lo = median_in(pts, n, lo_bytes / 2, lo_bytes);
    double hi = median_in(pts, n, hi_bytes, 2 * hi_bytes);
    if (!(lo > 0) || !(hi > lo * 1.15)) /* no step worth calling a cache boundary */
        return -ENOENT;
    double thr = sqrt(lo * hi);
    /* First point past the low plateau where latency crosses the threshold and stays above it (a lone noisy
     * spike inside a plateau does not count). */
    for (unsigned i = 1; i < n; i++) {
        if (pts[i].bytes <= lo_bytes / 2 || pts[i].ns < thr)
            continue;
        if (i + 1 < n && pts[i + 1].ns < thr)
            continue;
        const struct calib_point *a = &pts[i - 1], *b = &pts[i];
        double t = a->ns >= thr ? 0 : (log(thr) - log(a->ns)) / (log(b->ns) - log(a->ns));
        double lb = log((double)a->bytes) + t * (log((double)b->bytes) - log((double)a->bytes));
        *knee = (uint64_t)exp(lb) & ~(uint64_t)63;
        if (lo_ns)
            *lo_ns = lo;
        if (hi_ns)
            *hi_ns = hi;
        return 0;
    }
    return -ENOENT;
}

uint64_t calib_effective(const struct calib *c, enum calib_level l)
{
    if (l >= CALIB_NLEVELS)
        return 0;
    /* A knee above the claim is the next level's transition bleeding in (seen here: an L2 "knee" at 2x the 1 MiB
     * L2 on an AMD victim-L3 VM), never a bigger cache: a cache cannot hold more than the hardware has. */
    if (c->measured[l] && c->claimed[l] && c->measured[l] > c->claimed[l])
        return c->claimed[l];
    return c->measured[l] ? c->measured[l] : c->claimed[l];
}

/* ---- latency sweep -------------------------------------------------------------------------------------- */

struct bind_guard {
    hwloc_bitmap_t old;
    const struct topo *t;
};

static int bind_push(struct bind_guard *g, const struct topo *t, int cpu)
{
    g->t = t;
    g->old = hwloc_bitmap_alloc();
    if (!g->old)
        return -ENOMEM;
    hwloc_get_cpubind(topo_hwloc(t), g->old, HWLOC_CPUBIND_THREAD);
    return topo_bind_thread(t, cpu);
}

static void bind_pop(struct bind_guard *g)
{
    if (!g->old)
        return;
    if (!hwloc_bitmap_iszero(g->old))
        hwloc_set_cpubind(topo_hwloc(g->t), g->old, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(g->old);
    g->old = NULL;
}

static int cmp_pt(const void *a, const void *b)
{
    const struct calib_point *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* One point: the median of `reps` timed walks of about budget_ns each (the first sweep: 5 of 3 ms; the short ones
 * that follow: 3 of 1.5 ms, since their number, not their length, is what averages the host's moving LLC out). */
static double measure_point(void *buf, uint64_t bytes, double est_ns, double budget, unsigned reps)
{
    uint64_t iters = (uint64_t)(budget / (est_ns > 0.5 ? est_ns : 0.5));
    if (iters < 20000)
        iters = 20000;
    if (iters > 3000000)
        iters = 3000000;
    return chase_latency_ns(buf, bytes, iters, reps, bytes * 2654435761ULL + 1);
}

/* Top of the window the LLC's own latency is read from: 3x the L2 claim (past the L2's bleed into the LLC), at most
 * half the LLC claim; an eighth of the LLC claim without an L2. */
static uint64_t llc_lo_bytes(const uint64_t claimed[CALIB_NLEVELS])
{
    uint64_t c2 = claimed[CALIB_L2], c3 = claimed[CALIB_LLC];
    uint64_t lo = c2 ? 3 * c2 : c3 / 8;
    return lo > c3 / 2 ? c3 / 2 : lo;
}

void calib_sweep_knees(const struct calib_point *pts, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                       struct calib_sweep_sum *s)
{
    uint64_t c1 = claimed[CALIB_L1], c2 = claimed[CALIB_L2], c3 = claimed[CALIB_LLC];
    double lo, hi;
    memset(s->knee, 0, sizeof(s->knee));
    memset(s->plateau_ns, 0, sizeof(s->plateau_ns));
    if (c1 && calib_find_knee(pts, n, c1 / 2, 2 * c1, &s->knee[CALIB_L1], &lo, &hi) == 0)
        s->plateau_ns[CALIB_L1] = lo;
    if (c2 && calib_find_knee(pts, n, c2 / 2, 2 * c2, &s->knee[CALIB_L2], &lo, &hi) == 0)
        s->plateau_ns[CALIB_L2] = lo;
    if (c3 && c3 > c2 && calib_find_knee(pts, n, llc_lo_bytes(claimed), 2 * c3, &s->knee[CALIB_LLC], &lo, &hi) == 0) {
        s->plateau_ns[CALIB_LLC] = lo;
        s->plateau_ns[CALIB_NLEVELS] = hi;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Median of the non-zero knees of level l over the kept sweeps, with their range; 0 when none. */
static uint64_t knee_median(const struct calib_sweep_sum *s, unsigned n, int l, uint64_t *lo, uint64_t *hi)
{
    uint64_t v[CALIB_MAX_SWEEPS];
    unsigned k = 0;
    for (unsigned i = 0; i < n && k < CALIB_MAX_SWEEPS; i++)
        if (!s[i].reject[0] && s[i].knee[l])
            v[k++] = s[i].knee[l];
    *lo = *hi = 0;
    if (!k)
        return 0;
    qsort(v, k, sizeof(v[0]), cmp_u64);
    *lo = v[0];
    *hi = v[k - 1];
    /* an even count takes the lower middle: of two candidate sizes, the one more surely inside the cache */
    return v[(k - 1) / 2] & ~(uint64_t)63;
}

static void verdict_of(const struct calib_sweep_sum *s, unsigned n, struct calib_verdict *v);

unsigned calib_judge(struct calib_sweep_sum *s, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                     struct calib_verdict *v)
{
    char a[32], b[32];
    memset(v, 0, sizeof(*v));
    if (n > CALIB_MAX_SWEEPS)
        n = CALIB_MAX_SWEEPS;
    unsigned with_llc = 0;
    for (unsigned i = 0; i < n; i++)
        with_llc += s[i].knee[CALIB_LLC] != 0;
    /* checks on each sweep alone */
    for (unsigned i = 0; i < n; i++) {
        struct calib_sweep_sum *w = &s[i];
        const double *p = w->plateau_ns;
        w->reject[0] = 0;
        if (isfinite(w->wait_pct) && w->wait_pct > IB_BUSY_WAIT_PCT) {
            snprintf(w->reject, sizeof(w->reject), "its thread waited %.0f %% of the time for a CPU", w->wait_pct);
            continue;
        }
        for (int l = CALIB_L1; l <= CALIB_L2 && !w->reject[0]; l++)
            if (w->knee[l] && claimed[l] && w->knee[l] > claimed[l] / 4 * 5)
                snprintf(w->reject, sizeof(w->reject), "%s knee %s above its claim of %s", calib_level_name(l),
                         fmt_bytes((double)w->knee[l], a, sizeof(a)), fmt_bytes((double)claimed[l], b, sizeof(b)));
        if (w->reject[0])
            continue;
        if (w->knee[CALIB_LLC] && w->knee[CALIB_LLC] <= llc_lo_bytes(claimed))
            snprintf(w->reject, sizeof(w->reject), "LLC knee %s inside the window its LLC latency was read from",
                     fmt_bytes((double)w->knee[CALIB_LLC], a, sizeof(a)));
        else if (w->knee[CALIB_LLC] && p[CALIB_NLEVELS] > 0 && p[CALIB_LLC] * 2 > p[CALIB_NLEVELS])
            snprintf(w->reject, sizeof(w->reject), "LLC latency %.1f ns is DRAM-like (DRAM %.1f ns)", p[CALIB_LLC],
                     p[CALIB_NLEVELS]);
        else if (!w->knee[CALIB_LLC] && claimed[CALIB_LLC] && 2 * with_llc > n)
            snprintf(w->reject, sizeof(w->reject), "no LLC knee, where most sweeps found one");
    }
    /* the LLC latency against the quietest sweep's: interference only ever adds latency */
    double quiet = 0;
    for (unsigned i = 0; i < n; i++)
        if (!s[i].reject[0] && s[i].plateau_ns[CALIB_LLC] > 0 && (!(quiet > 0) || s[i].plateau_ns[CALIB_LLC] < quiet))
            quiet = s[i].plateau_ns[CALIB_LLC];
    for (unsigned i = 0; i < n; i++)
        if (!s[i].reject[0] && quiet > 0 && s[i].plateau_ns[CALIB_LLC] > 1.25 * quiet)
            snprintf(s[i].reject, sizeof(s[i].reject),
                     "LLC latency %.1f ns, %.0f %% above the quietest sweep's %.1f ns", s[i].plateau_ns[CALIB_LLC],
                     100 * (s[i].plateau_ns[CALIB_LLC] / quiet - 1), quiet);
    verdict_of(s, n, v);
    return v->nkept;
}

/* The medians and ranges of the sweeps not rejected. */
static void verdict_of(const struct calib_sweep_sum *s, unsigned n, struct calib_verdict *v)
{
    memset(v, 0, sizeof(*v));
    for (unsigned i = 0; i < n; i++)
        v->nkept += !s[i].reject[0];
    for (int l = 0; l < CALIB_NLEVELS; l++) {
        v->knee[l] = knee_median(s, n, l, &v->knee_lo[l], &v->knee_hi[l]);
        v->spread[l] = v->knee[l] ? (double)(v->knee_hi[l] - v->knee_lo[l]) / (double)v->knee[l] : 0;
    }
    for (int l = 0; l <= CALIB_NLEVELS; l++) {
        double x[CALIB_MAX_SWEEPS];
        unsigned k = 0;
        for (unsigned i = 0; i < n; i++)
            if (!s[i].reject[0] && s[i].plateau_ns[l] > 0)
                x[k++] = s[i].plateau_ns[l];
        v->plateau_ns[l] = k ? ib_median(x, k) : 0;
    }
    int lv = v->knee[CALIB_LLC] ? CALIB_LLC : CALIB_L2;
    v->agree = v->nkept >= CALIB_MIN_SWEEPS && v->spread[lv] <= CALIB_AGREE_SPREAD;
}

void calib_settle(struct calib_sweep_sum *s, unsigned n, const uint64_t claimed[CALIB_NLEVELS],
                  struct calib_verdict *v, char *note, size_t len)
{
    char a[32], b[32];
    if (n > CALIB_MAX_SWEEPS)
        n = CALIB_MAX_SWEEPS;
    if (len)
        *note = 0;
    if (calib_judge(s, n, claimed, v) > 0) {
        if (v->nkept < CALIB_MIN_SWEEPS)
            snprintf(note, len, "only %u of %u sweeps passed their checks: their median is used", v->nkept, n);
        else if (!v->agree)
            snprintf(note, len,
                     "%u of %u sweeps passed their checks and their LLC knees spread %.0f %% (%s-%s), over the %.0f "
                     "%% bound: their median is used", v->nkept, n, 100 * v->spread[CALIB_LLC],
                     fmt_bytes((double)v->knee_lo[CALIB_LLC], a, sizeof(a)),
                     fmt_bytes((double)v->knee_hi[CALIB_LLC], b, sizeof(b)), 100 * CALIB_AGREE_SPREAD);
        return;
    }
    /* On a host busy on every CPU all sweeps may have waited: the ones consistent apart from that come next, then
     * all of them; either way it is said, and the start-of-run check tests the size again.  s keeps its verdicts. */
    struct calib_sweep_sum all[CALIB_MAX_SWEEPS];
    memcpy(all, s, n * sizeof(all[0]));
    double wlo = NAN, whi = NAN;
    for (unsigned i = 0; i < n; i++) {
        if (isfinite(all[i].wait_pct)) {
            wlo = isnan(wlo) || all[i].wait_pct < wlo ? all[i].wait_pct : wlo;
            whi = isnan(whi) || all[i].wait_pct > whi ? all[i].wait_pct : whi;
        }
        all[i].wait_pct = NAN;
    }
    if (isfinite(wlo) && calib_judge(all, n, claimed, v) > 0) {
        snprintf(note, len,
                 "every sweep of %u was rejected, %s waited for a CPU (%.0f-%.0f %% of the time): the median of the %u "
                 "consistent apart from that is used, and may be off", n, whi > IB_BUSY_WAIT_PCT ? "some" : "none",
                 wlo, whi, v->nkept);
        return;
    }
    for (unsigned i = 0; i < n; i++)
        all[i].reject[0] = 0;
    verdict_of(all, n, v);
    v->agree = 0;
    snprintf(note, len, "no sweep of %u passed its checks (first: %s): the median of all is used, unchecked", n,
             s[0].reject);
}

int calib_check_judge(double level_ns, double next_ns, double inside_ns, double outside_ns, char *why, size_t len)
{
    if (!(level_ns > 0) || !(next_ns > level_ns)) {
        ib_why(why, len, 0, "no latencies to judge against");
        return 0;
    }
    double thr = sqrt(level_ns * next_ns);
    if (!(inside_ns < thr)) {
        ib_why(why, len, 0, "inside %.0f ns, DRAM-like", inside_ns);
        return 0;
    }
    if (!(outside_ns > thr)) {
        ib_why(why, len, 0, "outside %.0f ns, still LLC-like", outside_ns);
        return 0;
    }
    if (why && len)
        *why = 0;
    return 1;
}

/* The sizes of one sweep: 2^(1/4) apart from 16 KiB to top, and 2^(1/8) apart within [dense/1.6, dense*1.6]. */
static unsigned sweep_plan(uint64_t top, uint64_t dense, uint64_t *sz, unsigned max)
{
    unsigned n = 0;
    for (double b = 16 * 1024; b <= (double)top * 1.0001 && n < max; b *= 1.189207115) {
        if (dense && b > dense / 1.6 && b < dense * 1.6) { /* the dense stretch, in eighths of an octave */
            for (double d = b; d < dense * 1.6 && d <= (double)top * 1.0001 && n < max; d *= 1.090507733)
                sz[n++] = (uint64_t)d & ~(uint64_t)63;
            while (b * 1.189207115 < dense * 1.6)
                b *= 1.189207115;
            continue;
        }
        sz[n++] = (uint64_t)b & ~(uint64_t)63;
    }
    return n;
}

struct sweep_run {
    void *buf;
    const atomic_int *stop;
    calib_progress_fn progress;
    void *arg;
    unsigned done, total; /* points, for the progress bar */
};

/* One sweep over sz[0..n) into pts, with the thread's run-queue wait over it (NAN when unknown). */
static int sweep_once(struct sweep_run *r, const uint64_t *sz, unsigned n, int full, struct calib_point *pts,
                      double *wait_pct)
{
    struct ib_sched a, b;
    char w[64];
    int have = ib_sched_thread(0, &a, w, sizeof(w)) == 0;
    double est = 1.0;
    for (unsigned i = 0; i < n; i++) {
        if (r->stop && atomic_load(r->stop))
            return -EINTR;
        est = full ? measure_point(r->buf, sz[i], est, 3e6, 5) : measure_point(r->buf, sz[i], est, 1.5e6, 3);
        pts[i] = (struct calib_point){sz[i], est};
        r->done++;
        if (r->progress)
            r->progress(r->arg, "latency sweeps", (double)r->done / (r->total > r->done ? r->total : r->done + 1));
    }
    *wait_pct = have && ib_sched_thread(0, &b, w, sizeof(w)) == 0 ? ib_sched_wait_pct(&a, &b) : NAN;
    return 0;
}

/* A chase's latency at one size, for the checks: the median of 3 short timed walks after a warm pass. */
static double check_point(void *buf, uint64_t bytes)
{
    return chase_latency_ns(buf, bytes & ~(uint64_t)63, 100000, 3, bytes * 2654435761ULL + 7);
}

int calib_measure_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop,
                         calib_progress_fn progress, void *arg, char *why, size_t len)
{
    struct topo_cache tc;
    int llc = topo_llc_level(t);
    memset(c->claimed, 0, sizeof(c->claimed));
    if (topo_cache_info(t, 1, false, cpu, &tc) == 0)
        c->claimed[CALIB_L1] = tc.size;
    if (llc >= 2 && topo_cache_info(t, 2, false, cpu, &tc) == 0)
        c->claimed[CALIB_L2] = tc.size;
    if (llc >= 2 && topo_cache_info(t, llc, false, cpu, &tc) == 0)
        c->claimed[CALIB_LLC] = tc.size;
    if (llc == 2) /* two-level machine: the L2 is the LLC */
        c->claimed[CALIB_L2] = 0;
    uint64_t top = 4 * c->claimed[CALIB_LLC];
    if (top < 64 * IB_MIB)
        top = 64 * IB_MIB;
    if (top > IB_GIB)
        top = IB_GIB;

    struct bind_guard g = {0};
    int rc = bind_push(&g, t, cpu);
    if (rc < 0) {
        bind_pop(&g);
        return ib_why(why, len, rc, "cannot bind to CPU %d for the latency sweep", cpu);
    }
    void *buf = ib_map(top, 1);
    struct calib_point(*pts)[CALIB_MAX_SWEEP] = calloc(CALIB_MAX_SWEEPS, sizeof(*pts));
    unsigned npts[CALIB_MAX_SWEEPS] = {0};
    if (!buf || !pts) {
        if (buf)
            ib_unmap(buf, top);
        free(pts);
        bind_pop(&g);
        char b[32];
        return ib_why(why, len, -ENOMEM, "cannot map %s for the latency sweep", fmt_bytes((double)top, b, sizeof(b)));
    }
    memset(buf, 1, top);
    uint64_t sz[CALIB_MAX_SWEEP];
    struct sweep_run r = {.buf = buf, .stop = stop, .progress = progress, .arg = arg};
    struct calib_sweep_sum sums[CALIB_MAX_SWEEPS];
    struct calib_verdict v = {0};
    unsigned ns = 0, nfull = sweep_plan(top, 0, sz, CALIB_MAX_SWEEP);
    uint64_t dram_from = 2 * c->claimed[CALIB_LLC];
    char held_why[160] = "";
    double in_ns = 0;
    int held = 0;
    r.total = nfull + (CALIB_MIN_SWEEPS - 1) * (nfull * 3 / 4);
    /* The first sweep is the full one: it measures the DRAM plateau, which the shorter ones that follow borrow. */
    while (rc == 0 && ns < CALIB_MAX_SWEEPS) {
        uint64_t guess = ns ? v.knee[CALIB_LLC] : 0;
        if (ns && !guess) /* fall back on any sweep's LLC knee to place the short sweep */
            for (unsigned i = 0; i < ns && !guess; i++)
                guess = sums[i].knee[CALIB_LLC];
        uint64_t stop_at = ns && guess ? 4 * guess : top;
        if (stop_at < 16 * IB_MIB)
            stop_at = 16 * IB_MIB;
        if (stop_at > top || dram_from == 0)
            stop_at = top;
        unsigned n = sweep_plan(stop_at, guess, sz, CALIB_MAX_SWEEP - CALIB_MAX_SWEEP / 4);
        struct calib_sweep_sum *w = &sums[ns];
        memset(w, 0, sizeof(*w));
        if ((rc = sweep_once(&r, sz, n, ns == 0, pts[ns], &w->wait_pct)) < 0)
            break;
        if (stop_at < top)
            for (unsigned i = 0; i < npts[0] && n < CALIB_MAX_SWEEP; i++)
                if (pts[0][i].bytes >= dram_from && pts[0][i].bytes > stop_at)
                    pts[ns][n++] = pts[0][i];
        qsort(pts[ns], n, sizeof(pts[ns][0]), cmp_pt);
        npts[ns] = n;
        calib_sweep_knees(pts[ns], n, c->claimed, w);
        ns++;
        calib_judge(sums, ns, c->claimed, &v);
        if (!v.agree)
            continue;
        /* the median knee itself, checked as a cached one is: just inside it must read LLC-like */
        if (v.knee[CALIB_LLC] && v.plateau_ns[CALIB_NLEVELS] > 0) {
            uint64_t in = (uint64_t)((double)v.knee[CALIB_LLC] * CALIB_CHECK_IN);
            in_ns = check_point(buf, in);
            held = in_ns < sqrt(v.plateau_ns[CALIB_LLC] * v.plateau_ns[CALIB_NLEVELS]);
            if (!held)
                snprintf(held_why, sizeof(held_why), "%.0f ns just inside it", in_ns);
        } else {
            held = 1;
        }
        if (held)
            break;
    }
    ib_unmap(buf, top);
    bind_pop(&g);
    if (rc < 0) {
        free(pts);
        return ib_why(why, len, rc, "latency sweep interrupted");
    }
    calib_settle(sums, ns, c->claimed, &v, c->caches_note, sizeof(c->caches_note));
    if (!*c->caches_note && !held) {
        char a[32];
        snprintf(c->caches_note, sizeof(c->caches_note),
                 "the median LLC knee %s read %s after %u sweeps: used, but it may not hold",
                 fmt_bytes((double)v.knee[CALIB_LLC], a, sizeof(a)), held_why, ns);
    }
    /* the sweep kept for the record: the one whose LLC knee is the median */
    unsigned pick = 0;
    for (unsigned i = 0; i < ns; i++)
        if ((sums[i].knee[CALIB_LLC] & ~(uint64_t)63) == v.knee[CALIB_LLC]) {
            pick = i;
            break;
        }
    memcpy(c->sweep, pts[pick], npts[pick] * sizeof(c->sweep[0]));
    c->nsweep = npts[pick];
    free(pts);
    memcpy(c->measured, v.knee, sizeof(c->measured));
    memcpy(c->knee_lo, v.knee_lo, sizeof(c->knee_lo));
    memcpy(c->knee_hi, v.knee_hi, sizeof(c->knee_hi));
    memcpy(c->spread, v.spread, sizeof(c->spread));
    memcpy(c->plateau_ns, v.plateau_ns, sizeof(c->plateau_ns));
    memcpy(c->sweeps, sums, ns * sizeof(sums[0]));
    c->nsweeps = ns;
    c->have_caches = 1;
    c->sweep_cpu = cpu;
    c->caches_when = (int64_t)time(NULL);
    c->dirty = 1;
    /* the memory bandwidths' working sets derive from the knees: forget those measured against older knees; the
     * peak issue rates, the interconnect and the I/O paths do not depend on cache sizes and stay */
    unsigned keep = 0;
    for (unsigned i = 0; i < c->nbw; i++)
        if (!calib_kind_is_memory(c->bw[i].kind))
            c->bw[keep++] = c->bw[i];
    c->nbw = keep;
    return 0;
}

int calib_recheck(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop, struct calib_check *r,
                  char *why, size_t len)
{
    memset(r, 0, sizeof(*r));
    r->level = CALIB_LLC;
    r->size = calib_effective(c, CALIB_LLC);
    double lat = c->plateau_ns[CALIB_LLC], next = c->plateau_ns[CALIB_NLEVELS];
    if (!c->have_caches || !c->measured[CALIB_LLC] || !r->size || !(lat > 0) || !(next > lat))
        return ib_why(why, len, -ENOENT, "no measured LLC size to check");
    uint64_t out = (uint64_t)((double)r->size * CALIB_CHECK_OUT);
    struct bind_guard g = {0};
    int rc = bind_push(&g, t, cpu);
    if (rc < 0) {
        bind_pop(&g);
        return ib_why(why, len, rc, "cannot bind to CPU %d to check the cached LLC size", cpu);
    }
    uint64_t t0 = clk_mono_ns();
    void *buf = ib_map(out, 1);
    if (!buf) {
        bind_pop(&g);
        return ib_why(why, len, -ENOMEM, "cannot map %llu bytes to check the cached LLC size",
                      (unsigned long long)out);
    }
    memset(buf, 1, out);
    r->inside_ns = check_point(buf, (uint64_t)((double)r->size * CALIB_CHECK_IN));
    r->outside_ns = check_point(buf, out);
    ib_unmap(buf, out);
    bind_pop(&g);
    r->cost_s = (double)(clk_mono_ns() - t0) / 1e9;
    r->held = calib_check_judge(lat, next, r->inside_ns, r->outside_ns, r->why, sizeof(r->why));
    if (r->held)
        return 0;
    if (stop && atomic_load(stop))
        return ib_why(why, len, -EINTR, "interrupted");
    rc = calib_measure_caches(c, t, cpu, stop, NULL, NULL, why, len);
    if (rc < 0)
        return rc;
    r->remeasured = 1;
    r->new_size = calib_effective(c, CALIB_LLC);
    return 0;
}

int calib_need_caches(struct calib *c, const struct topo *t, int cpu, const atomic_int *stop, char *why, size_t len)
{
    if (c->have_caches)
        return 0;
    return calib_measure_caches(c, t, cpu, stop, NULL, NULL, why, len);
}

/* ---- bandwidth ------------------------------------------------------------------------------------------ */

uint64_t calib_bw_ws(const struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     unsigned nthreads)
{
    if (nthreads == 0)
        nthreads = 1;
    uint64_t l2 = calib_effective(c, CALIB_L2), llc = calib_effective(c, CALIB_LLC), ws;
    struct topo_cache tc;
    uint64_t llc_claimed = topo_cache_info(t, topo_llc_level(t), false, -1, &tc) == 0 ? tc.size : llc;
    if (!strcmp(kind, "l2")) {
        ws = l2 ? l2 / 2 : 128 * IB_KIB; /* inside L2, well beyond L1 */
    } else if (!strcmp(kind, "llc")) {
        /* inside the effective LLC but well beyond L2: half the LLC shared out, at least 1.5x an L2 each, but never
         * more than 80 % of the LLC in all (staying in the LLC wins when many threads share a small one) */
        ws = llc / 2 / nthreads;
        if (ws < l2 + l2 / 2)
            ws = l2 + l2 / 2;
        if (ws * nthreads > llc / 10 * 8)
            ws = llc / 10 * 8 / nthreads;
    } else { /* dram: at least 4x the larger of the claimed and the effective LLC, at most 10 % of memory */
        uint64_t big = llc_claimed > llc ? llc_claimed : llc;
        uint64_t total = 4 * big;
        if (total < 64 * IB_MIB)
            total = 64 * IB_MIB;
        uint64_t cap = m && m->mem_total ? m->mem_total / 10 : total;
        if (total > cap)
            total = cap;
        ws = total / nthreads;
    }
    return ws & ~(uint64_t)4095;
}

int calib_cpus_key(const int *cpus, unsigned n, char *buf, size_t len)
{
    if (len)
        *buf = 0;
    if (!n)
        return -EINVAL;
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    if (!b)
        return -ENOMEM;
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++)
        rc = cpus[i] < 0 ? -EINVAL : hwloc_bitmap_set(b, (unsigned)cpus[i]) < 0 ? -ENOMEM : 0;
    if (rc == 0) {
        int w = hwloc_bitmap_list_snprintf(buf, len, b);
        rc = w < 0 ? -EINVAL : (size_t)w >= len ? -ENAMETOOLONG : 0;
    }
    if (rc < 0 && len)
        *buf = 0; /* never a cut key */
    hwloc_bitmap_free(b);
    return rc;
}

int calib_bw_store(struct calib *c, const struct calib_bw *e)
{
    if (strnlen(e->kind, sizeof(e->kind)) >= sizeof(e->kind) || !e->kind[0] ||
        strnlen(e->cpus, sizeof(e->cpus)) >= sizeof(e->cpus) || !e->cpus[0])
        return -ENAMETOOLONG;
    struct calib_bw *slot = NULL;
    for (unsigned i = 0; i < c->nbw && !slot; i++)
        if (!strcmp(c->bw[i].kind, e->kind) && !strcmp(c->bw[i].cpus, e->cpus))
            slot = &c->bw[i];
    if (!slot && c->nbw < CALIB_MAX_BW)
        slot = &c->bw[c->nbw++];
    for (unsigned i = 0; !slot && i < c->nbw; i++) /* full: the oldest entry gives way */
        if (i == 0 || c->bw[i].when < slot->when)
            slot = &c->bw[i];
    *slot = *e;
    c->dirty = 1;
    return 0;
}

const struct calib_bw *calib_bw_find(const struct calib *c, const char *kind, const int *cpus, unsigned n)
{
    char key[CALIB_CPUS_LEN];
    if (calib_cpus_key(cpus, n, key, sizeof(key)) < 0)
        return NULL;
    for (unsigned i = 0; i < c->nbw; i++)
        if (!strcmp(c->bw[i].kind, kind) && !strcmp(c->bw[i].cpus, key))
            return &c->bw[i];
    return NULL;
}

int calib_kind_is_memory(const char *kind)
{
    return !strcmp(kind, "l2") || !strcmp(kind, "llc") || !strcmp(kind, "dram");
}

enum calib_kind_class calib_kind_class(const char *k)
{
    if (calib_kind_is_memory(k))
        return CALIB_CLASS_MEMORY;
    if ((k[0] == 'd' && k[1] && strchr("rwm", k[1]) && k[2] >= '0' && k[2] <= '9') || k[0] == 'n')
        return CALIB_CLASS_IO;
    return CALIB_CLASS_OPS;
}

const char *calib_kind_unit(const char *kind)
{
    if (calib_kind_class(kind) != CALIB_CLASS_OPS)
        return "B/s";
    return !strcmp(kind, "interconnect") ? "msg/s" : "ops/s";
}

enum stream_op calib_bw_op(const char *kind) { return !strcmp(kind, "dram") ? STREAM_TRIAD : STREAM_READ; }

size_t calib_bw_chunk(const char *kind)
{
    return !strcmp(kind, "dram") ? 2 * IB_MIB : !strcmp(kind, "llc") ? 4 * IB_MIB : 8 * IB_MIB;
}

/* One thread's buffer; the threads step through it as the SoI does: same chunks, same wrap, a clock read a step. */
struct bw_job {
    uint64_t ws;
    enum stream_op op;
    size_t chunk;
    struct {
        void *buf;
        char pad[56]; /* one cache line per thread */
    } t[];
};

#define BW_REPS 5
#define BW_REP_NS (120 * IB_NS_PER_MS)

static int bw_setup(void *arg, unsigned tid)
{
    struct bw_job *j = arg;
    void *buf = ib_map(j->ws, 1);
    if (!buf)
        return -ENOMEM;
    memset(buf, 1, j->ws); /* first touch on this CPU: NUMA-local pages */
    j->t[tid].buf = buf;
    return 0;
}

static int bw_window(void *arg, unsigned tid, int rep, uint64_t ns, double *bps)
{
    (void)rep;
    struct bw_job *j = arg;
    void *buf = j->t[tid].buf;
    volatile uint64_t sink = 0;
    size_t pos = 0;
    sink += stream_step(buf, j->ws, &pos, j->ws, j->op); /* warm */
    uint64_t bytes = 0, t0 = clk_mono_ns(), dt;
    do {
        bytes += stream_step(buf, j->ws, &pos, j->chunk, j->op);
        dt = clk_mono_ns() - t0;
    } while (dt < ns);
    (void)sink;
    *bps = (double)bytes / ((double)dt / 1e9);
    return 0;
}

static void bw_teardown(void *arg, unsigned tid)
{
    struct bw_job *j = arg;
    ib_unmap(j->t[tid].buf, j->ws);
    j->t[tid].buf = NULL;
}

int calib_measure_bw(struct calib *c, const struct topo *t, const struct mlim *m, const char *kind,
                     const int *cpus, unsigned n, const atomic_int *stop, double *bps, char *why, size_t len)
{
    if (strcmp(kind, "l2") && strcmp(kind, "llc") && strcmp(kind, "dram"))
        return ib_why(why, len, -EINVAL, "unknown bandwidth kind '%s'", kind);
    if (n == 0 || n > 1024)
        return ib_why(why, len, -EINVAL, "bad CPU count %u", n);
    if (!topo_is_this_machine(t))
        return ib_why(why, len, -ENOTSUP, "bandwidth can only be measured on this machine's topology");
    uint64_t ws = calib_bw_ws(c, t, m, kind, n);
    struct bw_job *j = calloc(1, sizeof(*j) + (size_t)n * sizeof(j->t[0]));
    if (!j)
        return ib_why(why, len, -ENOMEM, "%s bandwidth measurement failed: out of memory", kind);
    *j = (struct bw_job){.ws = ws, .op = calib_bw_op(kind), .chunk = calib_bw_chunk(kind)};
    char what[48];
    snprintf(what, sizeof(what), "%s bandwidth measurement", kind);
    struct meas_spec sp = {.what = what, .n = n, .cpus = cpus, .topo = t, .stop = stop, .arg = j, .nmeasure = n,
                           .windows = BW_REPS, .window_ns = BW_REP_NS, .setup = bw_setup, .window = bw_window,
                           .teardown = bw_teardown};
    struct meas_out o = {0};
    int rc = meas_run(&sp, &o, why, len);
    free(j);
    if (rc < 0)
        return rc;
    struct calib_bw e = {.ws_bytes = ws, .bps = o.median, .spread = o.spread, .when = (int64_t)time(NULL)};
    snprintf(e.kind, sizeof(e.kind), "%s", kind);
    if (calib_cpus_key(cpus, n, e.cpus, sizeof(e.cpus)) == 0) /* else measured, but too long a key to cache */
        calib_bw_store(c, &e);
    *bps = o.median;
    return 0;
}

int calib_need_bw(struct calib *c, const struct topo *t, const struct mlim *m, const char *kind, const int *cpus,
                  unsigned n, const atomic_int *stop, double *bps, char *why, size_t len)
{
    int rc = calib_need_caches(c, t, cpus[0], stop, why, len);
    if (rc < 0)
        return rc;
    const struct calib_bw *e = calib_bw_find(c, kind, cpus, n);
    if (e && e->ws_bytes == calib_bw_ws(c, t, m, kind, n)) {
        *bps = e->bps;
        return 0;
    }
    return calib_measure_bw(c, t, m, kind, cpus, n, stop, bps, why, len);
}
