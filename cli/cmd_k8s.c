/* cmd_k8s.c - `ibench k8s`: the annotations and the profile-store ConfigMap the Kubernetes scheduler extender reads
 * (pl_extender.h, docs/kubernetes.md), printed ready for `kubectl annotate` / `kubectl apply -f -`.  Prints only: it
 * talks to no cluster. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ib_err.h"
#include "machine.h"
#include "pl_extender.h"
#include "profile_fmt.h"

/* Kubernetes' TotalAnnotationSizeLimitB (apimachinery, ValidateAnnotationsSize): the sum of the keys' and values'
 * lengths of one object's annotations. */
#define K8S_ANNOTATION_LIMIT 262144
/* `kubectl apply` records the whole object it applied in this annotation, so a ConfigMap applied with a profile in
 * its data carries that profile a second time, JSON-escaped, in an annotation. */
#define K8S_LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
/* The store's ConfigMap in deploy/kubernetes (the extender mounts it). */
#define K8S_STORE_DEFAULT "ibench-profiles"
/* Compact and exact: the doubles read back bit for bit (as profile_write writes them). */
#define K8S_COMPACT_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

/* Store names: a ConfigMap key (alphanumerics, '-', '_', '.'); the first character alphanumeric, so no name is a
 * hidden file or the mount's own ..data links. */
static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > PL_EXT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.')))
            return 0;
    }
    return 1;
}

/* Kubernetes object names (RFC 1123 subdomain) and namespaces (RFC 1123 label, max 63). */
static int dns_ok(const char *s, size_t max, int dots)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!an && ((i == 0 || i == n - 1) || (c != '-' && !(dots && c == '.'))))
            return 0;
    }
    return 1;
}

/* One annotation: KEY=VALUE, or with --json the merge patch. */
static int print_annotation(const char *key, const char *value, int json)
{
    if (!json) {
        printf("%s=%s\n", key, value);
        return IB_EXIT_OK;
    }
    json_t *doc = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", key, value);
    if (!doc || json_dumpf(doc, stdout, OUT_JSON_FLAGS) != 0) {
        json_decref(doc);
        return cli_fail(IB_EXIT_FAIL, "k8s", "cannot write the JSON");
    }
    fputc('\n', stdout);
    json_decref(doc);
    return IB_EXIT_OK;
}

struct k8s_opts {
    const char *name, *cm, *ns, *topology;
    int json, compact;
};

_Static_assert(PL_EXT_NAME_MAX == 248, "the help below says 248");

static const struct cli_cmd k8s_profile, k8s_node, k8s_tenants; /* defined at the end */

static int profile_annotations(void *opts, int argc, char **argv, int first)
{
    const char *cmd = k8s_profile.name;
    const struct k8s_opts *o = opts;
    const char *name = o->name, *cm = o->cm, *ns = o->ns;
    int json = o->json, compact = o->compact;
    if (first >= argc)
        return cli_fail(IB_EXIT_USAGE, cmd, "which profile? (ibench k8s profile-annotations PROFILE)");
    if (first + 1 < argc)
        return cli_fail(IB_EXIT_USAGE, cmd, "unexpected argument '%s'", argv[first + 1]);
    const char *path = argv[first];
    if (compact + !!cm + json > 1)
        return cli_fail(IB_EXIT_USAGE, cmd, "--compact, --configmap and --json each choose the output: one of them");
    if (ns && !cm)
        return cli_fail(IB_EXIT_USAGE, cmd, "--namespace goes with --configmap");
    if (cm && !dns_ok(cm, 253, 1))
        return cli_fail(IB_EXIT_USAGE, cmd, "bad --configmap '%s': a Kubernetes name (a-z, 0-9, '-', '.')", cm);
    if (ns && !dns_ok(ns, 63, 0))
        return cli_fail(IB_EXIT_USAGE, cmd, "bad --namespace '%s': a Kubernetes namespace (a-z, 0-9, '-')", ns);

    /* the default name: the file's base name without .json */
    char base[PL_EXT_NAME_MAX + 8] = "";
    if (!name) {
        const char *b = strrchr(path, '/');
        b = b ? b + 1 : path;
        size_t n = strlen(b);
        if (n > 5 && !strcmp(b + n - 5, ".json"))
            n -= 5;
        if (n >= sizeof(base))
            n = sizeof(base) - 1;
        memcpy(base, b, n);
        base[n] = 0;
        if (!name_ok(base))
            return cli_fail(IB_EXIT_USAGE, cmd, "'%s' is no store name (letters, digits, '-', '_', '.'): give --name",
                            base);
        name = base;
    } else if (!name_ok(name)) {
        return cli_fail(IB_EXIT_USAGE, cmd,
                        "bad --name '%s': letters, digits, '-', '_', '.', starting with a letter or digit, at most %d",
                        name, PL_EXT_NAME_MAX);
    }

    /* what the extender would refuse is refused here */
    struct profile p;
    char why[512];
    int rc = profile_read(path, &p, why, sizeof(why));
    if (rc < 0)
        return cli_fail(rc == -ENOMEM ? IB_EXIT_FAIL : IB_EXIT_USAGE, cmd, "%s", why);
    cli_profile_warn(cmd, &p);
    profile_free(&p);
    json_error_t err;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    char *text = doc ? json_dumps(doc, K8S_COMPACT_FLAGS) : NULL;
    json_decref(doc);
    json_t *str = text ? json_string(text) : NULL;
    char *quoted = str ? json_dumps(str, JSON_ENCODE_ANY) : NULL;
    json_decref(str);
    if (!quoted) {
        free(text);
        return cli_fail(IB_EXIT_FAIL, cmd, "%s: cannot re-encode the profile (out of memory?)", path);
    }
    size_t bytes = strlen(K8S_LAST_APPLIED) + strlen(quoted);
    free(quoted);
    if (bytes > K8S_ANNOTATION_LIMIT) {
        free(text);
        return cli_fail(IB_EXIT_USAGE, cmd,
                        "%s: the compact profile needs %zu bytes as an annotation, over Kubernetes' limit of %d "
                        "(TotalAnnotationSizeLimitB): trim it (fewer samples or SoIs)",
                        path, bytes, K8S_ANNOTATION_LIMIT);
    }

    int code = IB_EXIT_OK;
    if (compact) {
        printf("%s\n", text);
    } else if (cm) {
        /* YAML by hand: a literal block holds the one-line compact JSON verbatim (no newline in it, no escaping) */
        printf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", cm);
        if (ns)
            printf("  namespace: %s\n", ns);
        printf("  labels:\n    app.kubernetes.io/part-of: ibench\ndata:\n  %s.json: |-\n    %s\n", name, text);
    } else if (json) {
        char key[PL_EXT_NAME_MAX + 8];
        snprintf(key, sizeof(key), "%s.json", name);
        json_t *out = json_pack("{s:{s:{s:s}},s:s,s:I,s:i}", "metadata", "annotations", PL_EXT_ANN_PROFILE, name,
                                "store_key", key, "annotation_bytes", (json_int_t)bytes, "limit_bytes",
                                K8S_ANNOTATION_LIMIT);
        if (!out || json_dumpf(out, stdout, OUT_JSON_FLAGS) != 0)
            code = cli_fail(IB_EXIT_FAIL, cmd, "cannot write the JSON");
        else
            fputc('\n', stdout);
        json_decref(out);
    } else {
        code = print_annotation(PL_EXT_ANN_PROFILE, name, 0);
    }
    free(text);
    return code;
}

static int node_annotations(void *opts, int argc, char **argv, int first)
{
    const char *cmd = k8s_node.name;
    const struct k8s_opts *o = opts;
    const char *spec = o->topology;
    int json = o->json;
    /* as ibench place takes it: live (this machine), synthetic:STRING (an hwloc synthetic description), FILE.xml */
    if (spec && !strcmp(spec, "live"))
        spec = NULL;
    else if (spec && !strncmp(spec, "synthetic:", 10))
        spec += 10;
    struct machine m;
    char why[512] = "";
    int rc = machine_open(&m, spec, why, sizeof(why));
    if (rc < 0)
        return cli_fail(spec ? IB_EXIT_USAGE : IB_EXIT_FAIL, cmd, "%s", why);
    /* the machine block of a profile (harness/profile.c describe()): the same fingerprint, model and PU count */
    json_t *v = json_pack("{s:s,s:s,s:i}", "fingerprint", m.fp, "cpu_model", m.cpu.model, "cpus",
                          (int)topo_npus(m.topo));
    machine_close(&m);
    char *text = v ? json_dumps(v, K8S_COMPACT_FLAGS) : NULL;
    json_decref(v);
    if (!text)
        return cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    int code = print_annotation(PL_EXT_ANN_MACHINE, text, json);
    free(text);
    return code;
}

static int tenants_annotation(void *opts, int argc, char **argv, int first)
{
    const char *cmd = k8s_tenants.name;
    int json = ((const struct k8s_opts *)opts)->json; /* names and --json in any order */
    json_t *arr = json_array();
    for (int i = first; i < argc; i++) {
        if (!name_ok(argv[i])) {
            json_decref(arr);
            return cli_fail(IB_EXIT_USAGE, cmd,
                            "bad profile name '%s': letters, digits, '-', '_', '.', starting with a letter or digit",
                            argv[i]);
        }
        json_array_append_new(arr, json_string(argv[i]));
    }
    char *text = json_dumps(arr, K8S_COMPACT_FLAGS);
    json_decref(arr);
    if (!text)
        return cli_fail(IB_EXIT_FAIL, cmd, "out of memory");
    size_t bytes = strlen(PL_EXT_ANN_TENANTS) + strlen(text);
    int code = bytes > K8S_ANNOTATION_LIMIT
                   ? cli_fail(IB_EXIT_USAGE, cmd, "%zu bytes, over Kubernetes' annotation limit of %d", bytes,
                              K8S_ANNOTATION_LIMIT)
                   : print_annotation(PL_EXT_ANN_TENANTS, text, json);
    free(text);
    return code;
}


/* ---- the options and the help, as data (opts.h) ------------------------------------------------------------------ */

static const struct cli_opt profile_table[] = {
    {CLI_STR("name", "NAME", struct k8s_opts, name, "the profile's store name (default: PROFILE's file name)")},
    {CLI_FLAG("compact", struct k8s_opts, compact,
              "print the compact profile JSON instead (the store's file NAME.json)")},
    {CLI_STR("configmap", "CM", struct k8s_opts, cm,
             "print a ConfigMap CM holding the profile under the key NAME.json (YAML), for\n"
             "kubectl apply -f -")},
    {CLI_STR("namespace", "NS", struct k8s_opts, ns, "with --configmap: its namespace")},
    {CLI_FLAG("json", struct k8s_opts, json, "the merge patch, with the annotation's size and the limit")},
};

static const struct cli_opt node_table[] = {
    {CLI_STR("topology", "SPEC", struct k8s_opts, topology, "live (this machine, the default), FILE.xml or "
                                                             "synthetic:STRING")},
    {CLI_FLAG("json", struct k8s_opts, json, "the merge patch")},
};

static const struct cli_opt tenants_table[] = {
    {CLI_FLAG("json", struct k8s_opts, json, "the merge patch")},
};

static const struct cli_cmd k8s_profile = {
    .name = "k8s profile-annotations",
    CLI_RUN(profile_annotations, struct k8s_opts),
    .summary = PL_EXT_ANN_PROFILE "=NAME for a pod; NAME defaults to PROFILE's file name without .json\n"
               "(letters, digits, '-', '_', '.', starting with a letter or digit; at most 248:\n"
               "the ConfigMap key NAME.json is at most 253).  The\n"
               "profile is read and validated; its compact JSON, JSON-escaped as kubectl apply's\n"
               K8S_LAST_APPLIED " annotation\n"
               "would hold it, must fit Kubernetes' 262144-byte annotation limit, else exit 2.",
    CLI_OPTS(profile_table),
    .args = CLI_ARGS_ANY,
    .parent = &cli_cmd_k8s,
};

static const struct cli_cmd k8s_node = {
    .name = "k8s node-annotations",
    CLI_RUN(node_annotations, struct k8s_opts),
    .summary = PL_EXT_ANN_MACHINE "={\"fingerprint\",\"cpu_model\",\"cpus\"} of this machine (the\n"
               "fingerprint ibench profile writes into a profile's machine block)",
    CLI_OPTS(node_table),
    .parent = &cli_cmd_k8s,
};

static const struct cli_cmd k8s_tenants = {
    .name = "k8s tenants-annotation",
    CLI_RUN(tenants_annotation, struct k8s_opts),
    .summary = PL_EXT_ANN_TENANTS "=[\"NAME\",...]: the profiles running on a node, in the order given\n"
               "(none: [])",
    CLI_OPTS(tenants_table),
    .args = CLI_ARGS_ANY,
    .parent = &cli_cmd_k8s,
};

static const struct cli_cmd *const k8s_cmds[] = {&k8s_profile, &k8s_node, &k8s_tenants};

const struct cli_cmd cli_cmd_k8s = {
    .name = "k8s",
    .summary = "Kubernetes: the annotations and profile ConfigMap the scheduler extender reads",
    .usage = "usage: ibench k8s profile-annotations PROFILE [--name NAME] [--compact | --configmap CM [--namespace NS]] "
             "[--json]\n"
             "       ibench k8s node-annotations [--topology live|FILE.xml|synthetic:STRING] [--json]\n"
             "       ibench k8s tenants-annotation [NAME...] [--json]\n\n",
    .about = "Prints what the scheduler extender reads (docs/kubernetes.md), one KEY=VALUE line per annotation, ready for\n"
             "  kubectl annotate --overwrite pod|node X \"$(ibench k8s ...)\"   (quote it: values may hold spaces)\n"
             "or, with --json, a merge patch {\"metadata\": {\"annotations\": {...}}} for kubectl patch --type merge -p.\n\n",
    .more = "exit codes: 0 ok, 1 run-time failure, 2 bad input\n",
    .flags = CLI_CMD_HELP_ALL,
    CLI_SUB(k8s_cmds),
};
