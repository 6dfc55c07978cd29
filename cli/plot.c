/* plot.c - gnuplot charts. Data and script go to a private temp directory; gnuplot writes a temp file beside the
 * target, which is renamed over it only when gnuplot succeeded (no partial charts). */
#define _GNU_SOURCE
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsguard.h"
#include "ib_err.h"
#include "watchdog.h"

extern char **environ;

static const char *ext_term(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot)
        return NULL;
    if (!strcmp(dot, ".png"))
        return "pngcairo size 900,560 font 'DejaVu Sans,10'";
    if (!strcmp(dot, ".svg"))
        return "svg size 900,560 dynamic font 'DejaVu Sans,10'";
    return NULL;
}

static int run_gnuplot(const char *script, char *why, size_t len)
{
    pid_t pid;
    char *argv[] = {(char *)"gnuplot", (char *)script, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return ib_why(why, len, -rc, "cannot run gnuplot (%s): scripts/bootstrap installs gnuplot-nox", strerror(rc));
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return ib_why(why, len, -errno, "waiting for gnuplot: %s", strerror(errno));
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        return ib_why(why, len, -EIO, "gnuplot failed (exit %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}

int plot_check(const char *path, char *why, size_t len)
{
    if (!ext_term(path))
        return ib_why(why, len, -EINVAL, "--plot '%s': the file must end in .png or .svg", path);
    char dir[PATH_MAX];
    if (strlen(path) >= sizeof(dir)) /* cut, it would name another file */
        return ib_why(why, len, -EINVAL, "--plot is too long (%zu characters, at most %zu)", strlen(path),
                      sizeof(dir) - 1);
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    if (access(slash ? (dir[0] ? dir : "/") : ".", W_OK) < 0) /* the reason first: a long path would crowd it out */
        return ib_why(why, len, -errno, "--plot: cannot write in its directory (%s): '%s'", strerror(errno), path);
    char script[] = "/tmp/ibench-plot-check-XXXXXX";
    int fd = mkostemp(script, O_CLOEXEC);
    if (fd < 0)
        return ib_why(why, len, -errno, "mkstemp: %s", strerror(errno));
    dprintf(fd, "exit\n");
    close(fd);
    int rc = run_gnuplot(script, why, len);
    unlink(script);
    return rc;
}

/* gnuplot string literal: single quotes, no quote inside (labels come from our own data) */
static void gq(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        fputc(*s == '\'' ? '"' : *s, f);
    fputc('\'', f);
}

/* A private temp directory with data and script paths, and the temporary output beside the target. */
struct plotfiles {
    char dir[4096], dat[4112], gp[4112], out[PATH_MAX + 32];
};

static int plot_begin(struct plotfiles *pf, const char *path, char *why, size_t len)
{
    /* a scratch directory like the SoIs': named with the pid, removed by the watchdog or the next ibench if this
     * one is killed */
    int rc = fs_make_private_dir(fs_default_dir(), "plot", pf->dir, sizeof(pf->dir), why, len);
    if (rc < 0)
        return rc;
    snprintf(pf->dat, sizeof(pf->dat), "%s/data.dat", pf->dir);
    snprintf(pf->gp, sizeof(pf->gp), "%s/plot.gp", pf->dir);
    if (snprintf(pf->out, sizeof(pf->out), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(pf->out)) {
        rmdir(pf->dir);
        return ib_why(why, len, -ENAMETOOLONG, "%s: the path is too long", path);
    }
    return 0;
}

static int plot_end(struct plotfiles *pf, const char *path, int rc, char *why, size_t len)
{
    if (rc == 0)
        rc = run_gnuplot(pf->gp, why, len);
    if (rc == 0 && rename(pf->out, path) < 0)
        rc = ib_why(why, len, -errno, "cannot rename the chart to %s: %s", path, strerror(errno));
    unlink(pf->out);
    if (rc < 0 && getenv("IBENCH_PLOT_KEEP")) { /* debugging: keep the data and the script */
        fprintf(stderr, "ibench: kept %s and %s\n", pf->dat, pf->gp);
        watchdog_note('D', 0, pf->dir); /* kept: not the watchdog's to remove */
        return rc;
    }
    fs_remove_private_dir(pf->dir);
    return rc;
}

/* The terminal for path's ending, the temp files, and the data file open for writing. 0 or -errno (nothing left). */
static int plot_open(struct plotfiles *pf, const char *path, const char **term, FILE **f, char *why, size_t len)
{
    if (!(*term = ext_term(path)))
        return ib_why(why, len, -EINVAL, "'%s': the file must end in .png or .svg", path);
    int rc = plot_begin(pf, path, why, len);
    if (rc < 0)
        return rc;
    if (!(*f = fopen(pf->dat, "we"))) {
        rc = ib_why(why, len, -errno, "cannot write plot data: %s", strerror(errno));
        return plot_end(pf, path, rc, why, len);
    }
    return 0;
}

/* The gnuplot script, open for writing, begun with the terminal, the output and a two-line title (enhanced: ^ and _
 * in it are markup, as in "R^2"; otherwise plain text). On failure the temp files are gone (plot_end), rc < 0. */
static int plot_script(struct plotfiles *pf, const char *path, const char *term, const char *title, const char *sub,
                       int enhanced, FILE **f, char *why, size_t len)
{
    if (!(*f = fopen(pf->gp, "we")))
        return plot_end(pf, path, ib_why(why, len, -errno, "cannot write the gnuplot script: %s", strerror(errno)),
                        why, len);
    fprintf(*f, "set terminal %s\nset output ", term);
    gq(*f, pf->out);
    fprintf(*f, "\nset title ");
    gq(*f, title);
    fprintf(*f, " . \"\\n\" . ");
    gq(*f, sub);
    fprintf(*f, "%s\n", enhanced ? "" : " noenhanced");
    return 0;
}

int plot_run(const char *path, json_t *doc, char *why, size_t len)
{
    if (!ext_term(path))
        return ib_why(why, len, -EINVAL, "--plot '%s': the file must end in .png or .svg", path);
    struct plotfiles pf;
    const char *term;
    FILE *f;
    int rc = plot_open(&pf, path, &term, &f, why, len);
    if (rc < 0)
        return rc;
    json_t *steps = json_object_get(doc, "steps");
    int chase = 0;
    size_t i;
    json_t *st;
    json_array_foreach(steps, i, st)
    {
        json_t *l = json_object_get(st, "load_ns");
        chase |= json_is_number(l);
        json_t *on = json_object_get(st, "on_cpu_pct"); /* -1: a run saved before it was reported */
        fprintf(f, "%.6f %.6f %.6f %.6f %.6f\n", json_number_value(json_object_get(st, "requested_pct")),
                json_number_value(json_object_get(st, "achieved_pct")),
                json_is_number(l) ? json_number_value(l) : 0.0,
                json_number_value(json_object_get(st, "active_pct")), json_is_number(on) ? json_number_value(on) : -1.0);
    }
    fclose(f);
    const char *name = json_string_value(json_object_get(json_object_get(doc, "soi"), "name"));
    const char *res = json_string_value(json_object_get(json_object_get(doc, "soi"), "resource"));
    const char *src = json_string_value(json_object_get(json_object_get(doc, "capacity"), "source"));
    json_t *lin = json_object_get(doc, "linearity");
    char title[512], sub[512] = "";
    snprintf(title, sizeof(title), "ibench run --soi %s: %s", name ? name : "?", res ? res : "");
    if (json_is_object(lin))
        snprintf(sub, sizeof(sub), "R^2 %.4f, slope %.3f, worst step %.2f points from ideal",
                 json_number_value(json_object_get(lin, "r2")), json_number_value(json_object_get(lin, "slope")),
                 json_number_value(json_object_get(lin, "worst_dev_ideal")));
    if ((rc = plot_script(&pf, path, term, title, sub, 1, &f, why, len)) < 0)
        return rc;
    fprintf(f, "set xlabel 'requested intensity (%%)'\nset ylabel 'achieved (%% of measured capacity)'\n"
               "set xrange [0:100]\nset yrange [0:*]\nset grid\nset key bottom right box opaque\n"
               "set label 1 ");
    gq(f, src ? src : "");
    fprintf(f, " at graph 0.01, graph -0.14 font ',8' noenhanced\nset bmargin 6\n");
    const char *meaning = json_string_value(json_object_get(doc, "load_meaning"));
    if (chase && meaning) { /* not a data chase (l1i): its own meaning, no data-cache plateaus */
        fprintf(f, "set y2label ");
        gq(f, meaning);
        fprintf(f, "\nset y2tics\nset ytics nomirror\nset y2range [0:*]\n");
    } else if (chase) {
        json_t *pl = json_object_get(doc, "latency_plateaus_ns");
        double l2 = json_number_value(json_object_get(pl, "l2")), llc = json_number_value(json_object_get(pl, "llc"));
        fprintf(f, "set y2label 'ns per dependent load (where the footprint lives)'\nset y2tics\nset ytics nomirror\n");
        if (llc > 0)
            fprintf(f, "set y2range [0:%g]\n", llc * 1.6);
        else
            fprintf(f, "set y2range [0:*]\n");
        if (l2 > 0)
            fprintf(f, "set arrow from graph 0, second %g to graph 1, second %g nohead dt 3 lc rgb '#d62728'\n"
                       "set label 'L2 latency %.1f ns' at graph 0.02, second %g offset 0,0.6 tc rgb '#d62728' "
                       "font ',8'\n", l2, l2, l2, l2);
        if (llc > 0)
            fprintf(f, "set arrow from graph 0, second %g to graph 1, second %g nohead dt 3 lc rgb '#d62728'\n"
                       "set label 'LLC latency %.1f ns (DRAM is %.0f ns)' at graph 0.02, second %g offset 0,0.6 "
                       "tc rgb '#d62728' font ',8'\n",
                       llc, llc, llc, json_number_value(json_object_get(pl, "dram")), llc);
    } else {
        /* the same scale on both sides: a duty SoI's achieved is its on-CPU share */
        fprintf(f, "set y2label 'the workers: share of their wall time (%%)'\nset yrange [0:105<*]\nset link y2\n"
                   "set y2tics\nset ytics nomirror\n");
    }
    fprintf(f, "plot x with lines dashtype 2 lc rgb '#888888' title 'ideal (achieved = requested)', ");
    gq(f, pf.dat);
    fprintf(f, " using 1:2 with linespoints pt 7 lc rgb '#1f77b4' lw 2 title 'achieved (self-meter)', ");
    gq(f, pf.dat);
    if (chase) {
        fprintf(f, " using 1:($3>0?$3:1/0) axes x1y2 with linespoints pt 5 lc rgb '#d62728' title 'ns/load'\n");
    } else {
        fprintf(f, " using 1:4 axes x1y2 with linespoints pt 5 lc rgb '#2ca02c' title 'active %% (inside step())', ");
        gq(f, pf.dat);
        fprintf(f, " using 1:($5>=0?$5:1/0) axes x1y2 with linespoints pt 9 lc rgb '#9467bd' title 'on-CPU %% "
                   "(own CPU time)'\n");
    }
    fclose(f);
    return plot_end(&pf, path, 0, why, len);
}

int plot_validate_ramp(const char *path, json_t *soi, char *why, size_t len)
{
    struct plotfiles pf;
    const char *term;
    FILE *f;
    int rc = plot_open(&pf, path, &term, &f, why, len);
    if (rc < 0)
        return rc;
    size_t i;
    json_t *l;
    json_t *alone = json_object_get(json_object_get(soi, "self"), "levels");
    json_array_foreach(json_object_get(soi, "levels"), i, l)
    {
        json_t *al = json_object_get(json_array_get(alone, i), "achieved_pct");
        fprintf(f, "%g %g %g %g %g\n", json_number_value(json_object_get(l, "level")),
                json_number_value(json_object_get(l, "achieved_pct")),
                json_number_value(json_object_get(l, "degradation_pct")),
                json_number_value(json_object_get(l, "degradation_se_pct")),
                json_is_number(al) ? json_number_value(al) : NAN);
    }
    fclose(f);
    json_t *pr = json_object_get(soi, "probe");
    char title[512], sub[512], y2[256];
    snprintf(title, sizeof(title), "ibench validate: %s (%s)", json_string_value(json_object_get(soi, "soi")),
             json_string_value(json_object_get(soi, "resource")));
    snprintf(sub, sizeof(sub), "%s: %s", json_string_value(json_object_get(soi, "verdict")),
             json_string_value(json_object_get(soi, "reason")));
    snprintf(y2, sizeof(y2), "%s probe: degradation vs 0 %% (%%)", pr ? json_string_value(json_object_get(pr, "name"))
                                                                    : "probe");
    if ((rc = plot_script(&pf, path, term, title, sub, 1, &f, why, len)) < 0)
        return rc;
    fprintf(f, "set xlabel 'requested intensity (%%)'\nset ylabel 'SoI self-meter (%% of measured capacity)'\n"
               "set xrange [0:100]\nset yrange [0:*]\nset y2range [*:*]\nset y2tics\nset ytics nomirror\n"
               "set grid\nset key top left box opaque\nset y2label ");
    gq(f, y2);
    if (pr) {
        fprintf(f, "\nset label 1 ");
        gq(f, json_string_value(json_object_get(pr, "what")));
        fprintf(f, " at graph 0.01, graph -0.14 font ',8' noenhanced\nset bmargin 6");
    }
    fprintf(f, "\nplot x with lines dashtype 2 lc rgb '#888888' title 'ideal self-meter', ");
    gq(f, pf.dat);
    fprintf(f, " using 1:5 with linespoints pt 6 lc rgb '#1f77b4' lw 1 dashtype 3 title 'SoI self-meter, alone', ");
    gq(f, pf.dat);
    fprintf(f, " using 1:2 with linespoints pt 7 lc rgb '#1f77b4' lw 2 title 'SoI self-meter, beside the probe', ");
    gq(f, pf.dat);
    fprintf(f, " using 1:3:4 axes x1y2 with yerrorlines pt 5 lc rgb '#d62728' lw 2 "
               "title 'probe degradation (+- standard error)'\n");
    fclose(f);
    return plot_end(&pf, path, 0, why, len);
}

int plot_heatmap(const char *path, json_t *rows, const char *const *probes, unsigned nprobes, char *why, size_t len)
{
    struct plotfiles pf;
    const char *term;
    FILE *f;
    int rc = plot_open(&pf, path, &term, &f, why, len);
    if (rc < 0)
        return rc;
    size_t i, n = json_array_size(rows);
    json_t *r;
    double vmax = 5;
    json_array_foreach(rows, i, r)
    {
        json_t *cells = json_object_get(r, "cells");
        for (unsigned k = 0; k < nprobes; k++) { /* a full grid (image needs one); NaN where skipped */
            json_t *d = json_object_get(json_object_get(cells, probes[k]), "degradation_pct");
            if (json_is_number(d)) {
                double v = json_number_value(d);
                fprintf(f, "%u %zu %g %+.1f\n", k, n - 1 - i, v, v);
                vmax = v > vmax ? v : vmax;
            } else {
                fprintf(f, "%u %zu NaN -\n", k, n - 1 - i); /* skipped: no figure */
            }
        }
    }
    fclose(f);
    if (!(f = fopen(pf.gp, "we")))
        return plot_end(&pf, path, ib_why(why, len, -errno, "cannot write the gnuplot script: %s", strerror(errno)),
                        why, len);
    /* the same terminal as every chart, with a size that fits the matrix */
    char t2[160];
    snprintf(t2, sizeof(t2), "%s", term);
    char *sz = strstr(t2, "size ");
    if (sz) { /* replace "size W,H" */
        char *end = strchr(sz + 5, ' ');
        char rest[96];
        snprintf(rest, sizeof(rest), "%s", end ? end : "");
        snprintf(sz, sizeof(t2) - (size_t)(sz - t2), "size 1100,%zu%s", 200 + 34 * n, rest);
    }
    fprintf(f, "set terminal %s\nset output ", t2);
    gq(f, pf.out);
    fprintf(f, "\nset title 'ibench validate: overlap matrix, probe degradation (%%) with each SoI at 100 %%'\n"
               "set xrange [-0.5:%u.5]\nset yrange [-0.5:%zu.5]\nset cbrange [0:%g]\nset cblabel 'degradation (%%)'\n"
               "set palette defined (0 '#ffffff', 1 '#fdd49e', 2 '#fc8d59', 3 '#d7301f', 4 '#7f0000')\n"
               "set xtics rotate by -30 font ',9'\nset ytics font ',9'\nunset key\nset tics scale 0\n",
            nprobes - 1, n - 1, vmax);
    fprintf(f, "set xtics (");
    for (unsigned k = 0; k < nprobes; k++)
        fprintf(f, "%s'%s' %u", k ? ", " : "", probes[k], k);
    fprintf(f, ")\nset ytics (");
    json_array_foreach(rows, i, r)
        fprintf(f, "%s'%s' %zu", i ? ", " : "", json_string_value(json_object_get(r, "soi")), n - 1 - i);
    fprintf(f, ")\nplot ");
    gq(f, pf.dat);
    fprintf(f, " using 1:2:3 with image, ");
    gq(f, pf.dat);
    fprintf(f, " using 1:2:4 with labels font ',8'\n");
    fclose(f);
    return plot_end(&pf, path, 0, why, len);
}

/* The profile's chart draws what a decision rests on: tolerated as a bar with its bracket (the last point that met
 * QoS .. the first that broke it) as an error bar; caused as a bar with +-2 se (the distinguishability bound), solid
 * when it is distinguishable from 0 and hatched, lighter, when it is not (such a figure is not pressure); skipped SoIs
 * keep their place on the axis, marked "skipped". The legend sits below the plot, never over the bars. */
int plot_profile(const char *path, const struct profile *p, char *why, size_t len)
{
    struct plotfiles pf;
    const char *term;
    FILE *f;
    int rc = plot_open(&pf, path, &term, &f, why, len);
    if (rc < 0)
        return rc;
    unsigned nmeasured = 0;
    /* columns: x name tolerated lo hi caused(distinguishable) caused(not) caused-2se caused+2se skipped caused */
    for (unsigned i = 0; i < p->nsois; i++) {
        const struct profile_soi *s = &p->sois[i];
        double tol = NAN, lo = NAN, hi = NAN, cd = NAN, cn = NAN, clo = NAN, chi = NAN, c = NAN;
        if (s->status == PROFILE_MEASURED) {
            nmeasured++;
            tol = s->tolerated;
            lo = s->bracket[0];
            hi = s->bracket[1];
            if (s->have_caused && isfinite(s->caused.value)) {
                /* the raw figure clamped to the chart's 0-100 */
                c = fmin(fmax(s->caused.value, 0), 100);
                if (s->caused.distinguishable == 0)
                    cn = c;
                else
                    cd = c;
                if (isfinite(s->caused.se)) {
                    clo = fmin(fmax(s->caused.value - 2 * s->caused.se, 0), 100);
                    chi = fmin(fmax(s->caused.value + 2 * s->caused.se, 0), 100);
                } else {
                    clo = chi = c;
                }
            }
        }
        fprintf(f, "%u \"%s\" %g %g %g %g %g %g %g %d %g\n", i, s->soi, tol, lo, hi, cd, cn, clo, chi,
                s->status != PROFILE_MEASURED, c);
    }
    fclose(f);
    if (nmeasured == 0)
        return plot_end(&pf, path, ib_why(why, len, -EINVAL, "the profile has no measured SoI to draw"), why, len);
    char title[512], sub[512];
    snprintf(title, sizeof(title), "ibench profile: %s", p->name);
    snprintf(sub, sizeof(sub), "metric %s, QoS %.0f %% of solo; %u of %u SoIs measured; %s", p->metric_spec,
             100 * p->qos, nmeasured, p->nsois, p->created);
    if ((rc = plot_script(&pf, path, term, title, sub, 0, &f, why, len)) < 0)
        return rc;
    fprintf(f, "set datafile missing NaN\nset pointintervalbox 0\nset style fill solid 0.85 border -1\nset boxwidth 0.36\n"
               "set yrange [0:108]\nset xrange [-0.6:%u.6]\nset grid ytics\nset ylabel 'intensity (%%)'\n"
               "set xtics rotate by -30 noenhanced\nset key outside below horizontal box\nset bmargin 9\n"
               "plot ",
            p->nsois - 1);
    gq(f, pf.dat);
    fprintf(f, " using ($1-0.19):3:xtic(2) with boxes lc rgb '#2ca02c' title 'tolerated (highest intensity "
               "within QoS)', ");
    gq(f, pf.dat);
    fprintf(f, " using ($1-0.19):3:4:5 with yerrorbars lc rgb '#1a6b1a' pt 1 ps 0 lw 1.5 title 'tolerated bracket', ");
    gq(f, pf.dat);
    fprintf(f, " using ($1+0.19):6 with boxes lc rgb '#d62728' title 'caused (share of the SoI work rate it took)', ");
    gq(f, pf.dat);
    fprintf(f, " using ($1+0.19):7 with boxes fs pattern 4 border lc rgb '#e08a8b' lc rgb '#e08a8b' "
               "title 'caused, within 2 se of 0 (not distinguishable)', ");
    gq(f, pf.dat);
    fprintf(f, " using ($1+0.19):11:8:9 with yerrorbars lc rgb '#7f1d1d' pt 1 ps 0 lw 1.5 "
               "title 'caused +- 2 se', ");
    gq(f, pf.dat);
    fprintf(f, " using 1:($10>0?4:1/0):(\"skipped\") with labels rotate by 90 left tc rgb '#555555' notitle\n");
    fclose(f);
    return plot_end(&pf, path, 0, why, len);
}

int plot_machines(const char *path, const char *title, const char *const *labels, unsigned *const *series,
                  const unsigned *n, unsigned nser, char *why, size_t len)
{
    struct plotfiles pf;
    const char *term;
    FILE *f;
    int rc = plot_open(&pf, path, &term, &f, why, len);
    if (rc < 0)
        return rc;
    for (unsigned s = 0; s < nser; s++) { /* one gnuplot data block per series, two blank lines apart */
        for (unsigned t = 0; t < n[s]; t++)
            fprintf(f, "%u %u\n", t, series[s][t]);
        fprintf(f, "\n\n");
    }
    fclose(f);
    rc = plot_script(&pf, path, term, title, "machines in use each second (machine-seconds: the area under a line)", 0,
                     &f, why, len);
    if (rc < 0)
        return rc;
    fprintf(f, "set xlabel 'time (s)'\nset ylabel 'machines used'\nset yrange [0:*]\nset grid\nset key top right\n"
               "plot ");
    for (unsigned s = 0; s < nser; s++) {
        fprintf(f, "%s", s ? ", " : "");
        gq(f, pf.dat);
        fprintf(f, " index %u using 1:2 with steps lw 2 title ", s);
        gq(f, labels[s]);
    }
    fprintf(f, "\n");
    fclose(f);
    return plot_end(&pf, path, 0, why, len);
}
