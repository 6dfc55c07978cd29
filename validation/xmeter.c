/* xmeter.c - the outside meter of validation (xmeter.h, docs/validation.md "The outside meter"). */
#define _GNU_SOURCE
#include "xmeter.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fsguard.h"
#include "ib_err.h"
#include "kcount.h"
#include "stats.h"

const char *val_xmeter_kind_text(enum vprobe_meter kind)
{
    switch (kind) {
    case VPM_ONCPU: return "the workers' CPU time (the kernel's count)";
    case VPM_BLK_READ: return "bytes read by the block device";
    case VPM_BLK_WRITE: return "bytes written by the block device";
    case VPM_FS_USED: return "bytes allocated on the file system";
    case VPM_NET_SENT: return "bytes sent by the network interfaces";
    case VPM_RSS: return "this process's resident memory";
    case VPM_LLC_OCCUPANCY: return "LLC occupancy (resctrl CMT)";
    case VPM_MEM_BW: return "memory bandwidth (resctrl MBM)";
    case VPM_NONE: break;
    }
    return "no counter";
}

/* ---- the readers: thin adapters over common/kcount.h ---------------------------------------------------------- */

static int blk_read(struct val_xmeter *xm, double *value, char *why, size_t len)
{
    struct kc_blk_count c;
    int rc = kc_blk_read(&xm->blk, &c, why, len);
    if (rc == 0)
        *value = (double)(xm->kind == VPM_BLK_READ ? c.rd_bytes : c.wr_bytes);
    return rc;
}

/* The file system's allocation, after a syncfs: ext4 (and other journalling file systems) return the blocks a
 * shrink freed only when the journal commits (every 5 s by default), so without it a footprint's descent would read
 * high for seconds. Read while the workers are parked, outside the step's window. */
static int fs_read(struct val_xmeter *xm, double *value, char *why, size_t len)
{
    int fd = open(xm->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        syncfs(fd);
        close(fd);
    }
    struct statvfs v;
    if (statvfs(xm->path, &v) != 0) {
        int e = errno;
        return ib_why(why, len, -e, "statvfs %s: %s", xm->path, strerror(e));
    }
    *value = (double)(v.f_blocks - v.f_bfree) * (double)v.f_frsize;
    return 0;
}

static int net_read(struct val_xmeter *xm, double *value, char *why, size_t len)
{
    (void)xm;
    struct kc_net_count c;
    int rc = kc_net_read(NULL, 0, NULL, &c, why, len);
    if (rc == 0)
        *value = (double)c.tx_bytes;
    return rc;
}

static int rss_read(struct val_xmeter *xm, double *value, char *why, size_t len)
{
    (void)xm;
    uint64_t b = 0;
    int rc = kc_rss_read(NULL, 0, &b, why, len);
    if (rc == 0)
        *value = (double)b;
    return rc;
}

/* resctrl: the group's LLC occupancy now (a level), or its memory traffic so far (a count) */
static int rdt_read(struct val_xmeter *xm, double *value, char *why, size_t len)
{
    struct resctrl_count c;
    int rc = resctrl_mon_read(&xm->mon, &c, why, len);
    if (rc < 0)
        return rc;
    const bool llc = xm->kind == VPM_LLC_OCCUPANCY;
    if (llc ? !c.have_llc : !c.have_mbm_total)
        return ib_why(why, len, -EAGAIN, "resctrl: %s reads Unavailable now", llc ? "llc_occupancy" : "mbm_total_bytes");
    *value = (double)(llc ? c.llc_bytes : c.mbm_total_bytes);
    return 0;
}

void val_xmeter_close(struct val_xmeter *xm)
{
    if (xm)
        resctrl_mon_close(&xm->mon);
}

int val_xmeter_open(enum vprobe_meter kind, const char *dir, const char *resctrl_root, struct val_xmeter *xm,
                    char *why, size_t len)
{
    memset(xm, 0, sizeof(*xm));
    xm->kind = kind;
    const char *d = dir ? dir : fs_default_dir();
    int rc = 0;
    switch (kind) {
    case VPM_BLK_READ:
    case VPM_BLK_WRITE:
        if ((rc = kc_blk_of_path(NULL, d, &xm->blk, why, len)) < 0)
            return rc == -ENODEV ? -ENOTSUP : rc;
        xm->rate = 1;
        xm->read = blk_read;
        snprintf(xm->what, sizeof(xm->what), "block device %s: bytes %s (%s)", xm->blk.name,
                 kind == VPM_BLK_READ ? "read" : "written", xm->blk.stat_path);
        snprintf(xm->unit, sizeof(xm->unit), "B/s");
        break;
    case VPM_FS_USED:
        snprintf(xm->path, sizeof(xm->path), "%s", d);
        xm->read = fs_read;
        snprintf(xm->what, sizeof(xm->what), "file system under %s: bytes allocated (statvfs, after syncfs)", d);
        snprintf(xm->unit, sizeof(xm->unit), "B");
        break;
    case VPM_NET_SENT:
        xm->rate = 1;
        xm->read = net_read;
        snprintf(xm->what, sizeof(xm->what), "every interface of this network namespace: bytes sent (/proc/self/net/dev)");
        snprintf(xm->unit, sizeof(xm->unit), "B/s");
        break;
    case VPM_RSS:
        xm->read = rss_read;
        snprintf(xm->what, sizeof(xm->what), "this process's resident memory (/proc/self/statm)");
        snprintf(xm->unit, sizeof(xm->unit), "B");
        break;
    case VPM_LLC_OCCUPANCY:
    case VPM_MEM_BW: {
        const bool llc = kind == VPM_LLC_OCCUPANCY;
        struct resctrl_features f;
        char w[320];
        if ((rc = resctrl_mon_features(resctrl_root, &f, w, sizeof(w))) < 0)
            return ib_why(why, len, rc, "%s; validate reads no PMU", w);
        if (llc ? !f.llc : !f.mbm_total)
            return ib_why(why, len, -ENOTSUP, "resctrl monitors no %s here", llc ? "llc_occupancy" : "mbm_total_bytes");
        pid_t self = gettid();
        if ((rc = resctrl_mon_open(&xm->mon, resctrl_root, NULL, &self, 1, w, sizeof(w))) < 0)
            return ib_why(why, len, rc == -ENOSPC || rc == -EACCES || rc == -EPERM ? -ENOTSUP : rc, "%s", w);
        xm->mon.llc = llc; /* read only what this meter needs */
        xm->mon.mbm_total = !llc;
        xm->mon.mbm_local = false;
        xm->rate = !llc;
        xm->read = rdt_read;
        snprintf(xm->what, sizeof(xm->what), "resctrl %s of this thread and the SoI's workers (%s)",
                 llc ? "llc_occupancy" : "mbm_total_bytes", xm->mon.dir);
        snprintf(xm->unit, sizeof(xm->unit), llc ? "B" : "B/s");
        break;
    }
    case VPM_ONCPU: /* read from the self-meter ramp's steps (read stays NULL): a duty SoI's figure is this count */
        snprintf(xm->what, sizeof(xm->what), "the workers' CPU time over the wall time (the kernel's count, "
                 "CLOCK_THREAD_CPUTIME_ID; the self-meter of a duty SoI reads it too)");
        snprintf(xm->unit, sizeof(xm->unit), "1");
        return 0;
    case VPM_NONE:
        return ib_why(why, len, -ENOTSUP, "no counter the kernel keeps of this resource");
    }
    double v;
    /* readable now, or said now (a resctrl group's counters come with its first read, before the ramp: a group
     * just made may read Unavailable until it has run) */
    if (xm->mon.dir[0] == 0 && (rc = xm->read(xm, &v, why, len)) < 0) {
        val_xmeter_close(xm);
        return rc;
    }
    return 0;
}

/* ---- the verdict ------------------------------------------------------------------------------------------------ */

enum val_verdict val_xmeter_judge(int rate, const double *xs, const double *v, const double *self, unsigned n,
                                  double capacity, struct val_xcheck *out)
{
    static const double lv[VAL_XLEVELS] = {0, 25, 50, 75, 100};
    out->ran = 1;
    out->rate = rate;
    out->fit_levels = rate ? VAL_XLEVELS - 1 : VAL_XLEVELS;
    double bg = 0;
    unsigned nbg = 0;
    for (unsigned i = 0; i < n; i++)
        if (xs[i] == 0 && isfinite(v[i])) {
            bg += v[i];
            nbg++;
        }
    out->background = bg = nbg ? bg / nbg : 0;
    double rd[VAL_XLEVELS][4], sum[VAL_XLEVELS] = {0}, vsum[VAL_XLEVELS] = {0}, msum = 0, ssum = 0;
    unsigned k[VAL_XLEVELS] = {0}, limited = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned l = (unsigned)(xs[i] / 25);
        if (l >= VAL_XLEVELS || !isfinite(v[i]) || !(capacity > 0))
            continue;
        double p = (v[i] - bg) / capacity * 100;
        /* a rate SoI's paced reading between two 100 % windows that read below x + 5: out of reach. The windows
         * are the SoI's own (the self-meter's: the host's capacity of the moment as the SoI met it) where given:
         * the meter's would excuse an SoI that presses half of what it says, whose every window reads 50 % */
        const double *w = self ? self : NULL;
        if (rate && xs[i] > 0 && xs[i] < 100 && i > 0 && i + 1 < n && xs[i - 1] == 100 && xs[i + 1] == 100 &&
            (w ? 0.5 * (w[i - 1] + w[i + 1])
               : 0.5 * ((v[i - 1] - bg) + (v[i + 1] - bg)) / capacity * 100) < xs[i] + 5) {
            limited++;
            continue;
        }
        if (k[l] < 4)
            rd[l][k[l]] = p;
        k[l]++;
        sum[l] += p;
        vsum[l] += v[i];
        if (xs[i] > 0 && xs[i] < 100 && self && isfinite(self[i])) {
            msum += p;
            ssum += self[i];
        }
    }
    double y[VAL_XLEVELS], worst = 0, noise = 0;
    int missing = 0;
    for (unsigned l = 0; l < VAL_XLEVELS; l++) {
        out->level[l] = lv[l];
        out->readings[l] = k[l];
        out->pct[l] = y[l] = k[l] ? sum[l] / k[l] : NAN;
        out->value[l] = k[l] ? vsum[l] / k[l] : NAN;
        if (l < out->fit_levels) {
            if (k[l] >= 2)
                noise = fmax(noise, fabs(rd[l][0] - rd[l][1]));
            if (l > 0)
                worst = fmax(worst, isfinite(y[l]) ? fabs(y[l] - lv[l]) : 0);
            missing |= k[l] == 0;
        }
    }
    out->noise_pts = noise;
    out->worst_pts = worst;
    out->capacity_limited = limited;
    out->self_ratio = ssum > 0 ? msum / ssum : NAN;
    struct linfit lf = {0};
    if (!missing)
        linfit_compute(lv, y, out->fit_levels, &lf);
    out->slope = missing ? NAN : lf.slope;
    out->r2 = missing ? NAN : lf.r2;
    char agree[96] = "";
    if (isfinite(out->self_ratio))
        snprintf(agree, sizeof(agree), "; %.2f of what the self-meter read", out->self_ratio);
    enum val_verdict verdict;
    if (!(capacity > 0)) {
        verdict = VAL_UNDECIDABLE;
        snprintf(out->reason, sizeof(out->reason), "the SoI has no capacity to read the meter against");
    } else if (missing) {
        verdict = VAL_UNDECIDABLE;
        snprintf(out->reason, sizeof(out->reason), "the meter's 100 %% windows read below the targets: %u "
                 "reading%s could not reach theirs", limited, limited == 1 ? "" : "s");
    } else {
        int bad = (lf.r2 < 0.98 && noise <= 5) || worst > 5 + noise;
        verdict = bad ? VAL_FAIL : VAL_PASS;
        char lvls[96];
        if (rate)
            snprintf(lvls, sizeof(lvls), "%.1f / %.1f / %.1f %% at 25 / 50 / 75 %%", y[1], y[2], y[3]);
        else
            snprintf(lvls, sizeof(lvls), "%.1f / %.1f / %.1f / %.1f %% at 25 / 50 / 75 / 100 %%", y[1], y[2], y[3],
                     y[4]);
        snprintf(out->reason, sizeof(out->reason), "read %s: a paced level %.1f points from x, R^2 %.4f (bar: <= "
                 "%.1f, R^2 >= 0.98)%s%s", lvls, worst, lf.r2, 5 + noise, agree,
                 bad ? ": the SoI does not press as it says" : "");
    }
    out->measured = out->verdict = verdict;
    return verdict;
}
