/* pl_extender.h - the Kubernetes scheduler extender's decisions (issue 19; docs/kubernetes.md): kube-scheduler POSTs
 * an ExtenderArgs (k8s.io/kube-scheduler/extender/v1) to `filter` and `prioritize`; the answer is an
 * ExtenderFilterResult or a HostPriorityList.  The decisions are place colocate's (pl_coloc_check on the node's
 * tenants plus the pod, the same margin and unknown rule): one library, two front ends.  No I/O but reading the
 * profile store; no HTTP (cli/cmd_extender.c serves this over libmicrohttpd).
 *
 * Where the inputs come from (the extender keeps no state of its own, so a restart loses nothing):
 * - the pod's profile: the annotation PL_EXT_ANN_PROFILE names a profile of the store (DIR/NAME.json); a pod
 *   without it passes every node unchanged, and the answer says so;
 * - a node's tenants: the annotation PL_EXT_ANN_TENANTS, a JSON array of profile names of the store (what runs
 *   there: published by the node's DaemonSet, deploy/kubernetes);
 * - a node's calibration: the annotation PL_EXT_ANN_MACHINE, {"fingerprint", "cpu_model", "cpus"} (ibench k8s
 *   node-annotations), used for the check's machine-shape warning;
 * - with node names only (nodeCacheCapable: true), the same three from the store's DIR/nodes/NAME.json
 *   ({"annotations": {KEY: VALUE, ...}, "status"?: {"allocatable": ...}}), which such a deployment must provide: the
 *   shipped manifests (deploy/kubernetes) use full node objects (nodeCacheCapable: false) and need none. */
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

struct pl_extender;

struct pl_extender_opts {
    const char *profiles; /* the store directory (profiles NAME.json, nodes/NAME.json) */
    double margin;        /* the check's margin (PL_COLOC_MARGIN) */
    bool pessimistic;     /* unknowns (default true, as place colocate) */
    /* Optional: profiles by name from memory instead of the directory (tests, embedding); NULL: not there.  The
     * returned profile must outlive the extender. */
    const struct profile *(*lookup)(void *ctx, const char *name);
    void *lookup_ctx;
    bool established;     /* refuse only breaks established beyond the profiles' uncertainty (default true, as place
                           * colocate): an uncertain node passes filter and prioritize ranks it after the others */
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

/* Lines of the Prometheus text format about the decisions (the profile cache...), for GET /metrics: 0 with *text
 * malloc'd (every line ends with a newline), or -ENOMEM. */
int pl_extender_metrics(struct pl_extender *x, char **text);
/* Ready to decide (GET /readyz): true, or false with one line in why (the store cannot be read). */
bool pl_extender_ready(struct pl_extender *x, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
