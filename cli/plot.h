/* plot.h - charts through gnuplot (PNG or SVG by the file's extension), written atomically. */
#ifndef IB_PLOT_H
#define IB_PLOT_H
#include <jansson.h>
#include <stddef.h>

#include "profile_fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when `path` ends in .png or .svg and gnuplot can be run; -EINVAL / -ENOENT with why otherwise.
 * Checked before a run, so a bad --plot fails fast. */
int plot_check(const char *path, char *why, size_t len);
/* Chart of an `ibench run` result document: achieved % against requested % with the ideal line, and the SoI's
 * second self-meter (ns per load, or active %) on the right axis. */
int plot_run(const char *path, json_t *doc, char *why, size_t len);

/* `ibench validate`, one SoI (an element of its "sois" array): requested intensity against the SoI's self-metered
 * % (left axis, with the ideal line) and the probe's degradation % (right axis), with the verdict in the title. */
int plot_validate_ramp(const char *path, json_t *soi, char *why, size_t len);
/* The overlap matrix (validate's "overlap" array) as a heat-map: SoIs down, probes across, degradation % as colour,
 * values printed in the cells, blank where skipped. */
int plot_heatmap(const char *path, json_t *rows, const char *const *probes, unsigned nprobes, char *why, size_t len);
/* A profile (read by profile_read): per measured SoI, tolerated and caused interference side by side (0-100; caused
 * clamped to it for display). */
int plot_profile(const char *path, const struct profile *p, char *why, size_t len);
/* `place simulate`: machines used per second, one line per run (labels[s], series[s] of n[s] seconds). */
int plot_machines(const char *path, const char *title, const char *const *labels, unsigned *const *series,
                  const unsigned *n, unsigned nser, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
