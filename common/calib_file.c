/* calib_file.c - the calibration's fingerprint and its cache file (calib.h): what names the machine, and the
 * per-machine JSON file every value of which is range-checked when read back, written atomically and shared safely
 * between concurrent ibench processes (a lock file).  The measurements themselves are calib.c's. */
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

#include "config.h"
#include "ib_err.h"
#include "output.h"
#include "parse.h"

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

int calib_dir_make(const char *path)
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
    int rc = calib_dir_make(dir);
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
