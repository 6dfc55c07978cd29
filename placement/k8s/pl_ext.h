/* pl_ext.h - inside the extender (pl_extender.h): the state it holds between requests, one module each, and one
 * request as it goes through pl_extender_handle's stages (read, the pod, the tenants, the verdicts, the answer).
 * A stage returns 0 to go on, 1 when it has answered (r->out, r->status: a 400, or an answer without decisions), or
 * -ENOMEM. */
#ifndef IB_PL_EXT_H
#define IB_PL_EXT_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pl_ext_cache.h"
#include "pl_ext_metrics.h"
#include "pl_ext_names.h"
#include "pl_ext_nodes.h"
#include "pl_ext_state.h"
#include "pl_ext_tenants.h"
#include "pl_ext_verdicts.h"
#include "pl_extender.h"
#include "pl_sim.h"
#include "pl_verdict.h"

struct pl_extender {
    struct pl_extender_opts o;
    struct ext_cache cache;       /* the profiles */
    struct ext_nodes nodes;       /* the node state and the store's watch */
    struct ext_assumed assumed;   /* assumed tenants */
    struct ext_verdicts verdicts; /* verdicts across requests */
    struct ext_figures fig;       /* decisions, refusals, Node objects read */
};

/* The clock, in seconds (opts.clock, else CLOCK_MONOTONIC). */
double ext_now(const struct pl_extender *x);

/* The request's Nodes object, scanned: its items' spans, kind and apiVersion. */
struct ext_fast {
    struct span raw; /* the whole Nodes value; p NULL: no Nodes object */
    bool items;      /* Nodes.items was an array */
    struct nspans *it;
    unsigned n, cap;
    struct span kind, api;
};

/* One candidate node of a request. */
struct ext_node {
    const char *name;
    const struct ninfo *ni; /* its state: &own (Nodes form) or the snapshot's (names); NULL: not in the store */
    struct ninfo own;
    char *fail;             /* non-NULL: fails before any verdict (its state or a tenant cannot be judged) */
    unsigned v;             /* its verdict: an index into uv */
};

/* The profiles a request has looked up, by name: a request names a handful of profiles thousands of times. */
struct ext_seen {
    const char *name[64];
    const struct profile *p[64];
    unsigned n;
};

struct ext_req {
    bool filter;
    double now;
    /* read (pl_ext_reader.c) */
    json_t *doc;           /* the ExtenderArgs but its Nodes object */
    json_t *pod, *jnames;  /* in doc */
    struct ext_fast fa;
    bool fast, by_name;    /* Nodes scanned; node names only */
    struct ext_node *nodes;
    unsigned nn;
    struct strtab rnames;  /* the tenant names of the request's Node objects */
    struct nsnap *snap;    /* names only: the node state it is decided on */
    const char *pname;     /* the pod's profile name (in doc) */
    const struct profile *pp;
    char key[300];         /* the pod's key for assumed tenants, when keyed */
    bool keyed;
    double pod_cpu, pod_mem;
    /* decided (pl_ext_decide.c) */
    struct ext_pins pn;
    struct ext_seen sn;
    struct pl_sim_fleet f; /* one machine a node; apps: every node's tenants, then the pod (a) */
    unsigned cap_apps, a;
    struct pl_verdict *uv; /* the distinct verdicts; uv[0] that of every node failing before any */
    unsigned nuv;
    unsigned *order, nok;  /* the nodes filter keeps: in node order, then prioritize's */
    /* answered */
    char *out;
    int status;
};

/* pl_ext_reader.c: the body read (a 400 for what is not an ExtenderArgs) and each node's state. */
int ext_read_request(struct pl_extender *x, struct ext_req *r, const char *body, size_t len);
/* The pod: its profile (none, or not in the store: answered at once), its key and its requests. */
int ext_read_pod(struct pl_extender *x, struct ext_req *r);
/* pl_ext_decide.c: each node's tenants, listed and assumed, as a fleet. */
int ext_fleet(struct pl_extender *x, struct ext_req *r);
/* Each node's verdict, and the nodes filter keeps in r->order. */
int ext_decide(struct pl_extender *x, struct ext_req *r);
/* prioritize's order of the kept nodes. */
void ext_rank(struct ext_req *r);
/* The top node takes the pod as an assumed tenant. */
int ext_assume_top(struct pl_extender *x, struct ext_req *r);
/* pl_ext_writer.c: the answers. */
int ext_answer_filter(struct pl_extender *x, struct ext_req *r);
int ext_answer_prioritize(struct ext_req *r);
/* The answer when the pod has no profile annotation: every node passes unchanged, or scores 0. */
int ext_answer_no_profile(struct ext_req *r);
/* The answer when the pod's profile is not in the store: the extender's failure (msg), no node judged. */
int ext_answer_no_store(struct ext_req *r, char *msg);
void ext_req_free(struct ext_req *r);

#endif
