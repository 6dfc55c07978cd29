/* cmd_plot.c - `ibench plot PROFILE`: a profile as a chart, tolerated and caused per SoI (plot.h). docs/profile.md. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "opts.h"
#include "plot.h"
#include "profile_fmt.h"

struct plot_opts {
    const char *out;
};

static int cmd_plot(void *opts, int argc, char **argv, int first)
{
    struct profile p;
    const char *path = NULL, *out = ((const struct plot_opts *)opts)->out;
    int rc = cli_profile_load("plot", argc, argv, first, &p, &path);
    if (rc != 0)
        return rc;
    char def[1100];
    if (!out) {
        snprintf(def, sizeof(def), "%s", path);
        char *dot = strrchr(def, '.');
        if (dot && !strcmp(dot, ".json"))
            *dot = 0;
        strncat(def, ".png", sizeof(def) - strlen(def) - 1);
        out = def;
    }
    char why[512];
    rc = plot_profile(out, &p, why, sizeof(why));
    profile_free(&p);
    if (rc < 0)
        return cli_fail(cli_exit_for(rc, 0), "plot", "%s", why);
    fprintf(stderr, "ibench plot: wrote %s\n", out);
    return IB_EXIT_OK;
}

/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt plot_table[] = {
    {CLI_STR("out", "FILE.png|FILE.svg", struct plot_opts, out,
             "where the chart goes: its ending picks PNG or SVG")},
};

const struct cli_cmd cli_cmd_plot = {
    .name = "plot",
    CLI_RUN(cmd_plot, struct plot_opts),
    .summary = "chart a profile: tolerated and caused per SoI",
    .usage = "usage: ibench plot PROFILE [--out FILE.png|FILE.svg]\n\n",
    .about = "Draws tolerated and caused interference per SoI (default: PROFILE with .png instead of .json).\n",
    CLI_OPTS(plot_table),
    .args = CLI_ARGS_ANY,
};
