/* pl_extender.c - the scheduler extender's decisions (pl_extender.h): the extender's life and a request's pipeline.
 * The parts, each with its rules at its top:
 * - pl_ext_reader.c: the request read (a 400 for what is not an ExtenderArgs), each node's state, the pod;
 * - pl_ext_state.c: one node's state, read from a Node object's text or through jansson, and quantities;
 * - pl_ext_decide.c: each node's tenants (listed and assumed), its verdict (place colocate's), prioritize's order;
 * - pl_ext_writer.c: the answers;
 * - pl_ext_cache.c (the profiles), pl_ext_nodes.c (the node state and the store's watch), pl_ext_tenants.c (assumed
 *   tenants), pl_ext_verdicts.c (verdicts across requests), pl_ext_metrics.c (the figures): what is held between
 *   requests.
 * - The pod's profile: annotation PL_EXT_ANN_PROFILE, a name of the store ([A-Za-z0-9._-], no path).  No annotation:
 *   filter passes every node and says so in "Note" (a field Go's decoder ignores), prioritize scores every node 0
 *   (neutral).  A name the store does not hold: 200 with "Error" set, which kube-scheduler treats as the extender's
 *   failure (ignorable: the pod schedules without us; else it waits): not knowing the pod is not a licence to place
 *   it. */
#define _GNU_SOURCE
#include "pl_extender.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ib_err.h"
#include "pl_ext.h"
#include "pl_ext_writer.h"

double ext_now(const struct pl_extender *x)
{
    if (x->o.clock)
        return x->o.clock(x->o.clock_ctx);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int pl_extender_new(const struct pl_extender_opts *o, struct pl_extender **out, char *why, size_t len)
{
    struct pl_extender *x = calloc(1, sizeof *x);
    if (!x)
        return ib_why(why, len, -ENOMEM, "out of memory");
    x->o = *o;
    if (ext_nodes_init(&x->nodes, o->profiles, o->nodes) < 0) {
        free(x);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    if (ext_cache_init(&x->cache, x->nodes.dir, o->cache_cap, o->lookup, o->lookup_ctx) < 0) {
        ext_nodes_fini(&x->nodes);
        free(x);
        return ib_why(why, len, -ENOMEM, "out of memory");
    }
    ext_assumed_init(&x->assumed, o->assume_ttl_s);
    ext_verdicts_init(&x->verdicts);
    ext_figures_init(&x->fig);
    /* the node state, read once now; readiness says whether it could be */
    ext_nodes_check(&x->nodes, o->lookup ? NULL : &x->cache, ext_now(x), true);
    *out = x;
    return 0;
}

void pl_extender_free(struct pl_extender *x)
{
    if (!x)
        return;
    ext_cache_fini(&x->cache);
    ext_nodes_fini(&x->nodes);
    ext_assumed_fini(&x->assumed);
    ext_verdicts_fini(&x->verdicts);
    ext_figures_fini(&x->fig);
    free(x);
}

bool pl_extender_ready(struct pl_extender *x, char *why, size_t len)
{
    return ext_nodes_ready(&x->nodes, why, len);
}

void ext_req_free(struct ext_req *r)
{
    for (unsigned i = 0; r->nodes && i < r->nn; i++) {
        if (r->own)
            ninfo_clear(&r->own[i]);
        free(r->nodes[i].fail);
        free(r->nodes[i].owned);
    }
    for (unsigned g = 0; g < r->ng; g++)
        free(r->gr[g].fail);
    free(r->gr);
    free(r->own);
    free(r->nodes);
    free(r->fa.it);
    free(r->uv);
    free(r->order);
    free(r->f.m);
    free(r->f.app);
    strtab_free(&r->rnames);
    json_decref(r->doc);
}

int pl_extender_handle(struct pl_extender *x, const char *verb, const char *body, size_t len, char **out, int *status)
{
    struct ext_req r = {.filter = !strcmp(verb, PL_EXT_VERB_FILTER), .now = ext_now(x)};
    if (!r.filter && strcmp(verb, PL_EXT_VERB_PRIORITIZE))
        return ext_bad_request(out, status, "unknown verb '%.32s' (filter, prioritize)", verb);
    int rc = ext_read_request(x, &r, body, len);
    if (rc == 0)
        rc = ext_read_pod(x, &r);
    if (rc == 0)
        rc = ext_fleet(x, &r);
    if (rc == 0)
        rc = ext_decide(x, &r);
    if (rc == 0 && r.filter)
        rc = ext_answer_filter(x, &r);
    if (rc == 0 && !r.filter) {
        ext_rank(&r);
        rc = ext_answer_prioritize(&r);
        if (rc == 0 && (rc = ext_assume_top(x, &r)) < 0) /* the answer is not given without its assumption */
            free(r.out), r.out = NULL;
    }
    ext_pins_release(&x->cache, &r.pn);
    ext_nodes_put(&x->nodes, r.snap);
    ext_req_free(&r);
    if (rc < 0)
        return rc;
    *out = r.out, *status = r.status;
    return 0;
}
