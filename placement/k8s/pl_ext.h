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
    const char *json;       /* name as a JSON string (the node state's); NULL: written from name */
    size_t jlen;
    const struct ninfo *ni; /* its state: the request's (Nodes form) or the snapshot's (names); NULL: not there */
    char *fail;             /* non-NULL: fails before any verdict (its state cannot be judged) */
    char *owned;            /* a name copied out of the request (names only, not in the node state) */
    unsigned g;             /* its group */
    unsigned v;             /* its verdict: an index into uv; 0 when it fails before any */
};

/* The nodes of one state (the same tenants, the same room: ninfo_same_state), one machine of the fleet: a cluster's
 * nodes repeat a few tenant lists (the DaemonSet writes them sorted), so a node is a lookup of its group. */
struct ext_group {
    const struct ninfo *ni; /* the state, its first node's */
    char *fail;             /* non-NULL: its nodes fail with this (a tenant cannot be judged, too many tenants) */
    bool relook;            /* a node joining it looks its tenants up again, as the first did (the profile cache
                             * counts each lookup a request makes beyond what it memoises: ext_seen) */
    bool extended;          /* one node's own: its group's tenants plus its assumed ones */
    unsigned v;             /* its verdict's index into uv; 0: not made yet */
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
    json_t *doc;           /* the ExtenderArgs but its Nodes object and a NodeNames array */
    json_t *pod, *jnames;  /* in doc (jnames: NodeNames when it was not scanned) */
    struct ext_fast fa;
    struct span names;     /* NodeNames, scanned (p NULL: none, or in doc) */
    bool fast, by_name;    /* Nodes scanned; node names only */
    struct ext_node *nodes;
    struct ninfo *own;     /* Nodes form: each node's state */
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
    struct ext_group *gr;  /* group g is machine g of f */
    unsigned ng, gcap;
    struct pl_sim_fleet f; /* apps: every group's tenants, then the pod (a) */
    unsigned cap_apps, a;
    struct pl_verdict *uv; /* the distinct verdicts; uv[0] that of every node failing before any */
    unsigned nuv;
    unsigned *order, nok;  /* the nodes filter keeps, in node order; ext_rank puts prioritize's first ones first */
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
/* prioritize's order: its first PL_EXT_MAX_PRIORITY kept nodes (the ones scored) first in r->order. */
void ext_rank(struct ext_req *r);
/* Why node n fails before any verdict; NULL when it does not. */
const char *ext_node_fail(const struct ext_req *r, const struct ext_node *n);
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
