/* pl_verdict.c - the co-location verdict (pl_verdict.h).  Rules: room first (CPU, memory, the group limit), so a
 * machine that cannot hold the application is never judged on interference; a machine without tenants fits; else
 * pl_coloc_check of its tenants plus the application decides (by default the model: pl_wmodel.h), and a group
 * that cannot be judged is not safe. */
#include "pl_verdict.h"

#include <math.h>
#include <stdio.h>

const char *pl_verdict_name(enum pl_verdict_kind k)
{
    static const char *const n[] = {"no room", "fits", "safe", "unsafe", "uncertain"};
    return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

static unsigned worst(const struct pl_wm_pred *p, unsigned n)
{
    unsigned w = 0;
    for (unsigned a = 1; a < n; a++)
        if (p[a].rel < p[w].rel)
            w = a;
    return w;
}

void pl_verdict_of(const struct pl_sim_fleet *f, unsigned mi, unsigned a, bool interference,
                   const struct pl_coloc_opts *o, struct pl_verdict *v)
{
    const double gib = 1073741824.0;
    const struct pl_sim_machine *m = &f->m[mi];
    const struct pl_sim_app *ap = &f->app[a];
    v->fit = NAN;
    if (m->cpu_used + ap->cpus > m->cpus || m->mem_used + ap->mem > m->mem || m->ntenants >= PL_SIM_MAX_TENANTS) {
        v->kind = PL_V_NO_ROOM;
        snprintf(v->why, sizeof v->why, "no room: %g of %u CPUs and %.1f of %.1f GiB free, %u CPUs and %.1f GiB needed",
                 m->cpus - m->cpu_used, m->cpus, (m->mem - m->mem_used) / gib, m->mem / gib, ap->cpus, ap->mem / gib);
        return;
    }
    if (!interference || m->ntenants == 0) {
        v->kind = PL_V_FITS;
        snprintf(v->why, sizeof v->why, "%g of %u CPUs free%s", m->cpus - m->cpu_used, m->cpus,
                 m->ntenants ? "" : ", no tenant");
        return;
    }
    const struct profile *g[PL_COLOC_MAX_APPS];
    for (unsigned t = 0; t < m->ntenants; t++)
        g[t] = f->app[m->tenant[t]].p;
    g[m->ntenants] = ap->p;
    struct pl_coloc_result r;
    if (pl_coloc_check(g, m->ntenants + 1, o, &r, v->why, sizeof v->why) < 0) {
        v->kind = PL_V_UNSAFE; /* cannot be judged: not safe (v->why says why) */
        return;
    }
    v->kind = r.verdict == PL_COLOC_UNCERTAIN ? PL_V_UNCERTAIN : r.safe ? PL_V_SAFE : PL_V_UNSAFE;
    v->fit = r.safe ? r.fit : NAN;
    if (v->kind == PL_V_UNCERTAIN)
        snprintf(v->why, sizeof v->why, "no break established beyond the profiles' uncertainty; uncertain: %s",
                 r.uncertain ? r.uncertain : "(terse)");
    else if (r.safe && r.pred) { /* the model: the member predicted lowest, against its line */
        const unsigned w = worst(r.pred, r.napps);
        snprintf(v->why, sizeof v->why, "every member predicted at or above its QoS beyond the uncertainty; lowest %s "
                 "%.2f [%.2f, %.2f] (QoS %.2f)", g[w]->name ? g[w]->name : "?", r.pred[w].rel, r.pred[w].lo,
                 r.pred[w].hi, pl_wm_qos(g[w]));
    }
    else
        snprintf(v->why, sizeof v->why, "%s", r.safe ? "every headroom >= 0 both ways" : r.deciding ? r.deciding : "");
    pl_coloc_result_free(&r);
}
