/* pl_extender.h - the Kubernetes scheduler extender's decisions (docs/kubernetes.md): kube-scheduler
 * POSTs an ExtenderArgs (k8s.io/kube-scheduler/extender/v1) to `filter` and `prioritize`; the answer is an
 * ExtenderFilterResult or a HostPriorityList.  The decisions are place colocate's (pl_coloc_check on the node's
 * tenants plus the pod, the same margin and unknown rule): one library, two front ends.  No I/O but reading the
 * store; no HTTP (cli/http_server.c serves this over libmicrohttpd).
 *
 * Where the inputs come from:
 * - the pod's profile: the annotation PL_EXT_ANN_PROFILE names a profile of the store (DIR/NAME.json); a pod
 *   without it passes every node unchanged, and the answer says so;
 * - a node's tenants: the annotation PL_EXT_ANN_TENANTS, a JSON array of profile names of the store (what runs
 *   there: published by the node's DaemonSet, deploy/kubernetes);
 * - a node's calibration: the annotation PL_EXT_ANN_MACHINE, {"fingerprint", "cpu_model", "cpus"} (ibench k8s
 *   node-annotations), used for the check's machine-shape warning;
 * - with node names only (nodeCacheCapable: true, the shipped configuration), the same three from the node state
 *   directory (opts.nodes; default DIR/nodes), NAME.json = {"annotations": {KEY: VALUE, ...}, "status"?:
 *   {"allocatable": ...}}: deploy/kubernetes keeps them in the ConfigMap ibench-nodes, written by the DaemonSet.
 *   They are held in memory and reloaded when the directory changes, not read per request;
 * - pods the extender itself recommended (prioritize's top node) and that the node's tenants do not list yet:
 *   ASSUMED tenants of that node, counted in later decisions (a burst of pods sees its own earlier members) until
 *   the node's tenant list shows them or PL_EXT_ASSUME_TTL_S passes.  The one state kept across requests: a
 *   restart forgets it, and the tenant lists catch up within that TTL anyway.
 *
 * The store is watched by a stat of its directories (and of a ConfigMap volume's `..data` symlink, which the
 * kubelet swaps atomically) at most every PL_EXT_STORE_CHECK_MS, on the request path: no thread, no inotify
 * descriptor, and a plain directory written by atomic renames works the same.  On a change the profile cache is
 * emptied and the node state read again (by one request; the others go on with the state they had). */
#ifndef IB_PL_EXTENDER_H
#define IB_PL_EXTENDER_H
#include <stdbool.h>
#include <stddef.h>

struct profile;

#ifdef __cplusplus
extern "C" {
#endif

/* The contract with the manifests (tests/k8s_manifests.py checks deploy/kubernetes against these). */
#define PL_EXT_ANN_PROFILE "ibench.io/profile"   /* pod: the name of its profile in the store */
#define PL_EXT_ANN_TENANTS "ibench.io/tenants"   /* node: JSON array of its tenants' profile names */
#define PL_EXT_ANN_MACHINE "ibench.io/machine"   /* node: its calibration, JSON */
#define PL_EXT_VERB_FILTER "filter"              /* URL path /filter */
#define PL_EXT_VERB_PRIORITIZE "prioritize"      /* URL path /prioritize */
#define PL_EXT_PORT 8888                         /* the default --listen port */
#define PL_EXT_MAX_PRIORITY 10                   /* extenderv1.MaxExtenderPriority */
#define PL_EXT_MAX_BODY (4u << 20)               /* request bodies above this: 413 */
#define PL_EXT_MAX_NODES 10000                   /* nodes in one request */
/* The longest name of the store (a profile, a node of nodes/): a profile is the ConfigMap key NAME.json, and a key
 * is at most 253 characters (Kubernetes' IsConfigMapKey), so 253 - 5.  ibench k8s refuses longer names and the
 * extender treats them as not in the store: one limit, here. */
#define PL_EXT_NAME_MAX (253 - 5)
#define PL_EXT_CACHE_CAP 1024                    /* profiles (and absences) cached; least recently used go past it */
#define PL_EXT_MISS_TTL_MS 5000                  /* "not in the store" is believed this long, then asked again */
#define PL_EXT_STORE_CHECK_MS 1000               /* the store's directories are stat'ed at most this often */
#define PL_EXT_ASSUME_TTL_S 120                  /* an assumed tenant is kept at most this long (see kubernetes.md) */
#define PL_EXT_MAX_ASSUMED 4096                  /* assumed tenants held at once; the oldest go past it */

struct pl_extender;

struct pl_extender_opts {
    const char *profiles; /* the store directory (profiles NAME.json, nodes/NAME.json) */
    double margin;        /* the check's margin (PL_COLOC_MARGIN) */
    bool pessimistic;     /* unknowns (default true, as place colocate) */
    /* Optional: profiles by name from memory instead of the directory (tests, embedding); NULL: not there.  The
     * returned profile must outlive the extender. */
    const struct profile *(*lookup)(void *ctx, const char *name);
    void *lookup_ctx;
    const char *nodes;     /* the node state directory, NAME.json (NULL: PROFILES/nodes) */
    unsigned cache_cap;    /* profiles cached (0: PL_EXT_CACHE_CAP) */
    unsigned assume_ttl_s; /* assumed tenants kept at most this long; 0: none kept (the command: PL_EXT_ASSUME_TTL_S) */
    /* Optional: the clock, in seconds (tests); NULL: CLOCK_MONOTONIC. */
    double (*clock)(void *ctx);
    void *clock_ctx;
    bool established;     /* refuse only breaks established beyond the profiles' uncertainty (default true, as place
                           * colocate): an uncertain node passes filter and prioritize ranks it after the others */
    bool likely;          /* with established: an uncertain node whose point prediction is under a QoS line, its
                           * optimistic bound under 1, is refused too (pl_coloc_opts.likely; the command's default,
                           * --refuse likely) */
    bool decide_headroom; /* decide by the headroom rule (before 1.7); false (default): the model (pl_wmodel.h) */
    bool general_only;    /* tests: every Node object's state read through jansson, not from the scanned text (the
                           * two must decide alike) */
};

/* What the extender has done so far (the figures of pl_extender_metrics). */
struct pl_extender_stats {
    unsigned long decisions[2];  /* requests decided: [0] filter, [1] prioritize */
    unsigned long hits, misses, evictions, expired; /* the profile cache; expired: absences forgotten */
    unsigned long entries, capacity;
    unsigned long reloads;       /* store changes seen (profiles emptied or node state read again) */
    unsigned long nodes;         /* nodes in the node state held */
    unsigned long assumed, assumed_total, assumed_confirmed, assumed_expired;
    unsigned long profiles_freed; /* verdicts kept across requests made of a freed profile are void */
    unsigned long nodes_read[2];  /* Node objects' state read: [0] from the scanned text, [1] parsed (an unusual one) */
    unsigned long verdict_hits, verdict_misses; /* verdicts kept across requests: found, not found (then made) */
};

/* Opens the store (profiles are read on first use and cached, strictly validated).  0 or -errno with one line. */
int pl_extender_new(const struct pl_extender_opts *o, struct pl_extender **out, char *why, size_t len);
void pl_extender_free(struct pl_extender *x);

/* Handles one request: verb is PL_EXT_VERB_FILTER or PL_EXT_VERB_PRIORITIZE, body the ExtenderArgs JSON (len bytes,
 * not NUL-terminated).  Returns 0 with *out a malloc'd JSON answer and *status the HTTP status for it (200; 400 for a
 * request that is not an ExtenderArgs: malformed JSON, wrong types, no pod, a quantity that is not one; the body then
 * is {"Error": "one line"}),
 * or -ENOMEM.  Thread-safe: requests may be handled concurrently. */
int pl_extender_handle(struct pl_extender *x, const char *verb, const char *body, size_t len, char **out,
                       int *status);

/* The figures above, consistent per counter (each read atomically, not all at one instant). */
void pl_extender_get_stats(struct pl_extender *x, struct pl_extender_stats *s);

/* The figures as Prometheus text lines (# HELP, # TYPE, samples; families prefixed ibench_extender_): decisions by
 * verb, refusals by resource, the cache, store reloads, assumed tenants.  0 with *text malloc'd, or -ENOMEM. */
int pl_extender_metrics(struct pl_extender *x, char **text);

/* What a request's log line says of it, read from the request and its answer by the scanner (no tree; reading stops
 * at the first thing that is not JSON).  Strings are their text in the JSON, escapes kept, cut to the field. */
struct pl_extender_logf {
    bool has_pod;
    char pod[400];   /* "namespace/name" (or "name") of the pod's metadata */
    long nodes_in;   /* Nodes.items or NodeNames; -1: not read */
    long nodes_out;  /* filter: the nodes kept; prioritize: the nodes scored above 0; -1: not read */
    char error[256]; /* filter's answer's Error, when not empty */
};
void pl_extender_log_fields(const char *verb, const char *body, size_t len, const char *answer,
                            struct pl_extender_logf *lf);

/* Whether the store is loaded: its directory was read and the node state with it (a node state directory that does
 * not exist is an empty one).  false with the reason in why. */
bool pl_extender_ready(struct pl_extender *x, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
