/* pl_ext_metrics.c - the extender's figures (pl_ext_metrics.h), pl_extender_get_stats and pl_extender_metrics: the
 * Prometheus text format 0.0.4, families prefixed ibench_extender_, each HELP and TYPE before its samples. */
#define _GNU_SOURCE
#include "pl_ext_metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_ext.h"
#include "pl_ext_writer.h"

void ext_figures_init(struct ext_figures *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
}

void ext_figures_fini(struct ext_figures *f)
{
    free(f->ref);
    pthread_mutex_destroy(&f->mu);
}

void ext_count_refusal(struct ext_figures *f, const char *res, size_t l, unsigned long times)
{
    char name[64];
    if (!l || l >= sizeof name || strspn(res, "abcdefghijklmnopqrstuvwxyz0123456789._-") < l)
        res = "other", l = 5;
    snprintf(name, sizeof name, "%.*s", (int)l, res);
    pthread_mutex_lock(&f->mu);
    unsigned i = 0;
    while (i < f->nref && strcmp(f->ref[i].name, name))
        i++;
    if (i == f->nref && f->nref < 256) {
        struct refusal *nr = realloc(f->ref, (f->nref + 1) * sizeof *nr);
        if (nr) {
            f->ref = nr;
            snprintf(f->ref[f->nref].name, sizeof f->ref[f->nref].name, "%s", name);
            f->ref[f->nref++].n = 0;
        }
    }
    if (i < f->nref)
        f->ref[i].n += times;
    pthread_mutex_unlock(&f->mu);
}

void ext_count_refusals(struct ext_figures *f, const char *why, unsigned long times)
{
    int depth = 0;
    const char *tok = why;
    for (const char *c = why; *c; c++) {
        if (*c == '(') {
            if (depth++ == 0) {
                const char *a = tok, *b = c;
                while (a < b && *a == ' ')
                    a++;
                while (b > a && b[-1] == ' ')
                    b--;
                ext_count_refusal(f, a, (size_t)(b - a), times);
            }
        } else if (*c == ')') {
            depth -= depth > 0;
        } else if (*c == ',' && depth == 0) {
            tok = c + 1;
        }
    }
}

void pl_extender_get_stats(struct pl_extender *x, struct pl_extender_stats *s)
{
    memset(s, 0, sizeof *s);
    s->decisions[0] = atomic_load(&x->fig.decisions[0]), s->decisions[1] = atomic_load(&x->fig.decisions[1]);
    ext_cache_stats(&x->cache, s);
    s->reloads = atomic_load(&x->nodes.reloads);
    s->nodes_read[0] = atomic_load(&x->fig.nodes_read[0]), s->nodes_read[1] = atomic_load(&x->fig.nodes_read[1]);
    s->nodes = ext_nodes_count(&x->nodes);
    ext_assumed_stats(&x->assumed, s);
    ext_verdicts_stats(&x->verdicts, s);
}

static void family(struct ext_buf *b, const char *name, const char *type, const char *help)
{
    ext_put(b, "# HELP ibench_extender_%s %s\n# TYPE ibench_extender_%s %s\n", name, help, name, type);
}

int pl_extender_metrics(struct pl_extender *x, char **text)
{
    struct pl_extender_stats s;
    pl_extender_get_stats(x, &s);
    struct ext_buf b = {0};
    family(&b, "decisions_total", "counter", "Requests decided (a pod with a profile of the store), by verb.");
    ext_put(&b, "ibench_extender_decisions_total{verb=\"filter\"} %lu\n", s.decisions[0]);
    ext_put(&b, "ibench_extender_decisions_total{verb=\"prioritize\"} %lu\n", s.decisions[1]);
    family(&b, "refusals_total", "counter",
           "Nodes filter refused, by the resource that broke (no-room: requests; unjudged: state unreadable).");
    pthread_mutex_lock(&x->fig.mu);
    for (unsigned i = 0; i < x->fig.nref; i++)
        ext_put(&b, "ibench_extender_refusals_total{resource=\"%s\"} %lu\n", x->fig.ref[i].name, x->fig.ref[i].n);
    pthread_mutex_unlock(&x->fig.mu);
    family(&b, "nodes_read_total", "counter",
           "Node objects whose state a request carried, by how it was read (scanned: from the text; parsed: an "
           "unusual one, through jansson).");
    ext_put(&b, "ibench_extender_nodes_read_total{path=\"scanned\"} %lu\n", s.nodes_read[0]);
    ext_put(&b, "ibench_extender_nodes_read_total{path=\"parsed\"} %lu\n", s.nodes_read[1]);
    /* the rest, one sample each: the text as it is served */
    ext_put(&b,
            "# HELP ibench_extender_cache_hits_total Profile lookups answered by the cache.\n"
            "# TYPE ibench_extender_cache_hits_total counter\n"
            "ibench_extender_cache_hits_total %lu\n"
            "# HELP ibench_extender_cache_misses_total Profile lookups that read the store.\n"
            "# TYPE ibench_extender_cache_misses_total counter\n"
            "ibench_extender_cache_misses_total %lu\n"
            "# HELP ibench_extender_cache_evictions_total Profiles dropped from the full cache, least recently used.\n"
            "# TYPE ibench_extender_cache_evictions_total counter\n"
            "ibench_extender_cache_evictions_total %lu\n"
            "# HELP ibench_extender_cache_expired_total Absences (not in the store) forgotten after their time.\n"
            "# TYPE ibench_extender_cache_expired_total counter\n"
            "ibench_extender_cache_expired_total %lu\n"
            "# HELP ibench_extender_cache_entries Profiles and absences cached now.\n"
            "# TYPE ibench_extender_cache_entries gauge\n"
            "ibench_extender_cache_entries %lu\n"
            "# HELP ibench_extender_cache_capacity Entries the cache holds at most.\n"
            "# TYPE ibench_extender_cache_capacity gauge\n"
            "ibench_extender_cache_capacity %lu\n"
            "# HELP ibench_extender_store_reloads_total Store changes seen (profile cache emptied, node state read "
            "again).\n"
            "# TYPE ibench_extender_store_reloads_total counter\n"
            "ibench_extender_store_reloads_total %lu\n"
            "# HELP ibench_extender_store_nodes Nodes in the node state held.\n"
            "# TYPE ibench_extender_store_nodes gauge\n"
            "ibench_extender_store_nodes %lu\n"
            "# HELP ibench_extender_assumed_tenants Pods recommended and not yet listed by their node.\n"
            "# TYPE ibench_extender_assumed_tenants gauge\n"
            "ibench_extender_assumed_tenants %lu\n"
            "# HELP ibench_extender_assumed_total Pods taken as assumed tenants of prioritize's top node.\n"
            "# TYPE ibench_extender_assumed_total counter\n"
            "ibench_extender_assumed_total %lu\n"
            "# HELP ibench_extender_assumed_confirmed_total Assumed tenants dropped because their node lists them.\n"
            "# TYPE ibench_extender_assumed_confirmed_total counter\n"
            "ibench_extender_assumed_confirmed_total %lu\n"
            "# HELP ibench_extender_assumed_expired_total Assumed tenants dropped unconfirmed after their time.\n"
            "# TYPE ibench_extender_assumed_expired_total counter\n"
            "ibench_extender_assumed_expired_total %lu\n",
            s.hits, s.misses, s.evictions, s.expired, s.entries, s.capacity, s.reloads, s.nodes, s.assumed,
            s.assumed_total, s.assumed_confirmed, s.assumed_expired);
    int st;
    return ext_answer_buf(&b, text, &st);
}
