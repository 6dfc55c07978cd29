#!/usr/bin/env python3
"""k8s_manifests.py ROOT - deploy/kubernetes and deploy/docker checked against the code they deploy.

Every YAML document under deploy/kubernetes parses and names its apiVersion, kind and metadata; the contract with
the extender (placement/k8s/pl_extender.h's #defines: annotation keys, verbs, port) holds in the scripts, ports, probes
and the KubeSchedulerConfiguration (names only, nodeCacheCapable: true: the node state ConfigMap ibench-nodes written
by the DaemonSet and mounted at the extender's --nodes); the pieces refer to each other by the same names; the
Dockerfile's build stage
installs what scripts/bootstrap lists to build.  One line per failed check, exit 1; exit 0 with a count."""
import re
import sys
from pathlib import Path
from urllib.parse import urlparse

import yaml

root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
kube = root / "deploy" / "kubernetes"
failures = []
passed = 0


def check(ok, what):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)


# ---- the C constants ---------------------------------------------------------------------------------------------
hdr = (root / "placement" / "k8s" / "pl_extender.h").read_text()
c = {m.group(1): m.group(2) for m in re.finditer(r'^#define\s+(PL_EXT_\w+)\s+"([^"]*)"', hdr, re.M)}
c.update({m.group(1): int(m.group(2)) for m in re.finditer(r"^#define\s+(PL_EXT_\w+)\s+(\d+)\s", hdr, re.M)})
for k in ("PL_EXT_ANN_PROFILE", "PL_EXT_ANN_TENANTS", "PL_EXT_ANN_MACHINE", "PL_EXT_VERB_FILTER",
          "PL_EXT_VERB_PRIORITIZE", "PL_EXT_PORT"):
    if k not in c:
        sys.exit(f"k8s_manifests: {k} not found in placement/k8s/pl_extender.h")
ann_keys = {c["PL_EXT_ANN_PROFILE"], c["PL_EXT_ANN_TENANTS"], c["PL_EXT_ANN_MACHINE"]}
port = c["PL_EXT_PORT"]

# ---- parse everything --------------------------------------------------------------------------------------------
docs = {}  # (file, kind, name) -> doc
files = sorted(kube.glob("*.yaml")) + sorted(kube.glob("*.yml"))
check(len(files) > 0, f"no YAML under {kube}")
for f in files:
    try:
        loaded = [d for d in yaml.safe_load_all(f.read_text()) if d is not None]
    except yaml.YAMLError as e:
        check(False, f"{f.name}: does not parse: {' '.join(str(e).split())}")
        continue
    check(len(loaded) > 0, f"{f.name}: no document")
    for i, d in enumerate(loaded):
        where = f"{f.name} document {i + 1}"
        check(isinstance(d, dict) and "apiVersion" in d and "kind" in d, f"{where}: no apiVersion or kind")
        if not isinstance(d, dict):
            continue
        kind = d.get("kind", "?")
        # component configurations (KubeSchedulerConfiguration) are files, not API objects: no metadata
        if str(d.get("apiVersion", "")).split("/")[0].endswith(".config.k8s.io"):
            name = kind
        else:
            md = d.get("metadata") or {}
            name = md.get("name") or md.get("generateName")
            check(bool(name), f"{where}: {kind} without metadata.name or generateName")
        docs[(f.name, kind, name)] = d


def find(kind, name=None, file=None):
    for (f, k, n), d in docs.items():
        if k == kind and (name is None or n == name) and (file is None or f == file):
            return d
    check(False, f"no {kind}{' ' + name if name else ''}{' in ' + file if file else ''}")
    return {}


def containers(d):
    spec = (d.get("spec") or {}).get("template", {}).get("spec", {})
    return spec.get("containers", []) + spec.get("initContainers", [])


def script(ctr):
    return "\n".join(str(x) for x in (ctr.get("command") or []) + (ctr.get("args") or []))


# ---- annotation keys in the scripts ------------------------------------------------------------------------------
for (f, kind, name), d in docs.items():
    for ctr in containers(d):
        for key in set(re.findall(r"ibench\.io/[A-Za-z0-9._-]+", script(ctr))):
            check(key in ann_keys, f"{f}: {kind} {name}: container {ctr.get('name')}: annotation key '{key}' is "
                                   f"not one of pl_extender.h's ({', '.join(sorted(ann_keys))})")

ds = find("DaemonSet", "ibench-node", "daemonset.yaml")
ds_script = "\n".join(script(x) for x in containers(ds))
check(c["PL_EXT_ANN_PROFILE"] in ds_script,
      f"daemonset.yaml: the publisher does not read the pods' {c['PL_EXT_ANN_PROFILE']} annotation")
check("ibench k8s node-annotations" in ds_script,
      f"daemonset.yaml: {c['PL_EXT_ANN_MACHINE']} is not published with ibench k8s node-annotations")
check("ibench k8s tenants-annotation" in ds_script,
      f"daemonset.yaml: {c['PL_EXT_ANN_TENANTS']} is not published with ibench k8s tenants-annotation")
check("ibench calibrate" in ds_script, "daemonset.yaml: the node is not calibrated (ibench calibrate)")
env = {e.get("name"): e for x in containers(ds) for e in x.get("env", [])}
check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
      "daemonset.yaml: NODE_NAME is not the downward API's spec.nodeName")
check(env.get("POD_NAMESPACE", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.namespace",
      "daemonset.yaml: POD_NAMESPACE (where ibench-nodes is) is not the downward API's metadata.namespace")

job = find("Job", None, "profile-job.yaml")
job_script = "\n".join(script(x) for x in containers(job))
check("ibench profile " in job_script and "ibench k8s profile-annotations" in job_script,
      "profile-job.yaml: the Job must run ibench profile and check the result with ibench k8s profile-annotations")

# ---- the extender: ports, probes, the store ----------------------------------------------------------------------
dep = find("Deployment", "ibench-extender", "extender.yaml")
svc = find("Service", "ibench-extender", "extender.yaml")
ext = [x for x in containers(dep) if "extender" in (x.get("args") or []) + (x.get("command") or [])]
check(len(ext) == 1, "extender.yaml: no container runs `ibench extender`")
for x in ext:
    args = [str(a) for a in (x.get("command") or []) + (x.get("args") or [])]
    listen = args[args.index("--listen") + 1] if "--listen" in args[:-1] else f"127.0.0.1:{port}"
    check(listen.rsplit(":", 1)[-1] == str(port), f"extender.yaml: --listen {listen}: the port is not {port}")
    check(not listen.startswith("127.") and not listen.startswith("[::1]"),
          f"extender.yaml: --listen {listen} is loopback: the Service cannot reach it")
    cports = [p.get("containerPort") for p in x.get("ports", [])]
    check(cports == [port], f"extender.yaml: containerPort {cports}, pl_extender.h says {port}")
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        hg = (x.get(probe) or {}).get("httpGet") or {}
        check(hg.get("port") in (port, "http") and hg.get("path") == path,
              f"extender.yaml: {probe} is not GET {path} on {port}")
    # memory: the bound docs/kubernetes.md ("Sizing") gives, from the options, within the container's limit: about
    # 30 MiB + body-memory (bodies arriving, all connections) + threads x 9 x max-body (requests decided) + 64 KiB a
    # connection
    def opt(name):
        return args[args.index(name) + 1] if name in args[:-1] else None

    def size(v, units):
        m = re.fullmatch(r"(\d+)([A-Za-z]*)", str(v or ""))
        return int(m.group(1)) * units[m.group(2)] if m and m.group(2) in units else None

    sizing = {k: opt(k) for k in ("--threads", "--max-body", "--body-memory", "--max-connections",
                                   "--max-per-address", "--timeout")}
    check(all(sizing.values()), f"extender.yaml: {sizing}: all must be set (the memory limit and the never-stalled "
          "rule are computed from them)")
    body = size(sizing["--max-body"], {"": 1, "K": 1 << 10, "M": 1 << 20})
    bodymem = size(sizing["--body-memory"], {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30})
    limit = size(((x.get("resources") or {}).get("limits") or {}).get("memory"),
                 {"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 1000, "M": 10**6, "G": 10**9})
    if all(sizing.values()) and body and bodymem and limit:
        conns, per = int(sizing["--max-connections"]), int(sizing["--max-per-address"])
        need = (30 << 20) + bodymem + int(sizing["--threads"]) * 9 * body + conns * (64 << 10)
        check(need <= limit, f"extender.yaml: --max-body {sizing['--max-body']}, --body-memory "
              f"{sizing['--body-memory']}, --threads {sizing['--threads']}, --max-connections {conns} need up to "
              f"{need >> 20} MiB; the memory limit is {limit >> 20} MiB")
        check(bodymem >= body, "extender.yaml: --body-memory below --max-body")
        # never stalled (docs/kubernetes.md): slots for 7 misbehaving addresses at their limit, and 8 besides
        check(conns >= 7 * per + 8, f"extender.yaml: --max-connections {conns} < 7 x --max-per-address {per} + 8")
        ext_timeout_s = int(sizing["--timeout"])
    else:
        check(False, "extender.yaml: a memory limit and a readable --max-body are needed")
    if "--profiles" in args[:-1]:
        store = args[args.index("--profiles") + 1]
        mounts = {m.get("mountPath"): m.get("name") for m in x.get("volumeMounts", [])}
        vols = {v.get("name"): v for v in dep["spec"]["template"]["spec"].get("volumes", [])}
        vol = vols.get(mounts.get(store), {})
        check(vol.get("configMap", {}).get("name") == "ibench-profiles",
              f"extender.yaml: --profiles {store} is not the ConfigMap ibench-profiles mounted")
    else:
        check(False, "extender.yaml: no --profiles DIR")
    # names only (nodeCacheCapable: true): the node state is the ConfigMap ibench-nodes, mounted where --nodes says
    if "--nodes" in args[:-1]:
        ndir = args[args.index("--nodes") + 1]
        mounts = {m.get("mountPath"): m.get("name") for m in x.get("volumeMounts", [])}
        vols = {v.get("name"): v for v in dep["spec"]["template"]["spec"].get("volumes", [])}
        check(vols.get(mounts.get(ndir), {}).get("configMap", {}).get("name") == "ibench-nodes",
              f"extender.yaml: --nodes {ndir} is not the ConfigMap ibench-nodes mounted")
    else:
        check(False, "extender.yaml: no --nodes DIR (the node state of names-only requests)")
for p in (svc.get("spec") or {}).get("ports", []):
    check(p.get("port") == port and p.get("targetPort") in (port, "http"),
          f"extender.yaml: Service port {p.get('port')} -> {p.get('targetPort')}, pl_extender.h says {port}")
check((svc.get("spec") or {}).get("sessionAffinity") == "ClientIP",
      "extender.yaml: the Service needs sessionAffinity: ClientIP (a scheduler's assumed tenants live in one replica)")
sel = (svc.get("spec") or {}).get("selector") or {}
labels = ((dep.get("spec") or {}).get("template", {}).get("metadata", {}) or {}).get("labels", {})
check(sel and all(labels.get(k) == v for k, v in sel.items()), "extender.yaml: the Service selects no extender pod")
store_cm = find("ConfigMap", "ibench-profiles", "namespace.yaml")
nodes_cm = find("ConfigMap", "ibench-nodes", "namespace.yaml")
check((nodes_cm.get("metadata") or {}).get("namespace") == (store_cm.get("metadata") or {}).get("namespace"),
      "namespace.yaml: ibench-nodes is not beside ibench-profiles")
check("configmaps/ibench-nodes" in ds_script and "publish_state" in ds_script,
      "daemonset.yaml: the publisher does not write the node state (configmaps/ibench-nodes)")
check("configmaps/ibench-profiles" in job_script, "profile-job.yaml: the Job does not update the store ibench-profiles")

# ---- the KubeSchedulerConfiguration ------------------------------------------------------------------------------
EXTENDER_FIELDS = {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
                   "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable"}
ksc = find("KubeSchedulerConfiguration", None, "scheduler-config.yaml")
check(ksc.get("apiVersion") == "kubescheduler.config.k8s.io/v1",
      f"scheduler-config.yaml: apiVersion {ksc.get('apiVersion')}, want kubescheduler.config.k8s.io/v1")
exts = ksc.get("extenders") or []
check(len(exts) == 1, f"scheduler-config.yaml: {len(exts)} extenders, want 1")
svc_ns = (svc.get("metadata") or {}).get("namespace")
for e in exts:
    unknown = set(e) - EXTENDER_FIELDS
    check(not unknown, f"scheduler-config.yaml: unknown extender field(s) {sorted(unknown)}")
    check(e.get("filterVerb") == c["PL_EXT_VERB_FILTER"],
          f"scheduler-config.yaml: filterVerb {e.get('filterVerb')!r}, pl_extender.h says {c['PL_EXT_VERB_FILTER']!r}")
    check(e.get("prioritizeVerb") == c["PL_EXT_VERB_PRIORITIZE"],
          f"scheduler-config.yaml: prioritizeVerb {e.get('prioritizeVerb')!r}, pl_extender.h says "
          f"{c['PL_EXT_VERB_PRIORITIZE']!r}")
    u = urlparse(str(e.get("urlPrefix", "")))
    check(u.scheme == ("https" if e.get("enableHTTPS") else "http"),
          f"scheduler-config.yaml: urlPrefix {e.get('urlPrefix')} and enableHTTPS disagree")
    check(u.port == port, f"scheduler-config.yaml: urlPrefix port {u.port}, pl_extender.h says {port}")
    check(u.hostname == f"ibench-extender.{svc_ns}.svc",
          f"scheduler-config.yaml: urlPrefix host {u.hostname} is not the Service ibench-extender.{svc_ns}.svc")
    check(e.get("nodeCacheCapable") is True,
          "scheduler-config.yaml: nodeCacheCapable must be true (names only: the extender holds the node state)")
    check(e.get("ignorable") is True, "scheduler-config.yaml: ignorable must be true (scheduling goes on without it)")
    check(isinstance(e.get("weight"), int) and e["weight"] > 0, "scheduler-config.yaml: weight must be a positive int")
    check(bool(re.fullmatch(r"\d+(ms|s|m)", str(e.get("httpTimeout", "")))),
          f"scheduler-config.yaml: httpTimeout {e.get('httpTimeout')!r} is not a duration")
    ht = re.fullmatch(r"(\d+)(ms|s|m)", str(e.get("httpTimeout", "")))
    if ht and "ext_timeout_s" in globals():
        ht_s = int(ht.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[ht.group(2)]
        check(ext_timeout_s < ht_s, f"extender.yaml: --timeout {ext_timeout_s} s is not below the scheduler's "
              f"httpTimeout {e.get('httpTimeout')}: a stalled client could hold a slot past the scheduler's wait")
cm = find("ConfigMap", "ibench-scheduler-config", "second-scheduler.yaml")
embedded = yaml.safe_load((cm.get("data") or {}).get("config.yaml", "")) or {}
check(embedded == ksc, "second-scheduler.yaml: config.yaml differs from scheduler-config.yaml")
sched = find("Deployment", "ibench-scheduler", "second-scheduler.yaml")
check(any("--config=/etc/ibench-scheduler/config.yaml" in script(x) for x in containers(sched)),
      "second-scheduler.yaml: kube-scheduler is not given the config")

# ---- RBAC --------------------------------------------------------------------------------------------------------


def allows(role, resource, verb):
    return any(resource in r.get("resources", []) and verb in r.get("verbs", []) for r in role.get("rules", []))


node_role = find("ClusterRole", "ibench-node", "daemonset.yaml")
check(allows(node_role, "nodes", "patch") and allows(node_role, "pods", "list"),
      "daemonset.yaml: the ClusterRole must allow patch nodes and list pods")
check(not any(v in r.get("verbs", []) for r in node_role.get("rules", []) for v in ("delete", "create", "*")),
      "daemonset.yaml: the ClusterRole allows more than it uses")
state_role = find("Role", "ibench-node-state", "daemonset.yaml")
check(allows(state_role, "configmaps", "patch") and
      all(r.get("resourceNames") == ["ibench-nodes"] for r in state_role.get("rules", [])),
      "daemonset.yaml: the Role ibench-node-state must allow patch on the ConfigMap ibench-nodes, and only it")
state_rb = find("RoleBinding", "ibench-node-state", "daemonset.yaml")
check((state_rb.get("roleRef") or {}).get("name") == "ibench-node-state" and
      any(sj.get("name") == "ibench-node" for sj in state_rb.get("subjects", [])),
      "daemonset.yaml: the RoleBinding does not give ibench-node-state to the ServiceAccount ibench-node")
job_role = find("Role", "ibench-profiler", "profile-job.yaml")
check(allows(job_role, "configmaps", "patch"), "profile-job.yaml: the Role must allow patch configmaps")
sa = find("ServiceAccount", "ibench-extender", "extender.yaml")
check(sa.get("automountServiceAccountToken") is False,
      "extender.yaml: the extender uses no API: its service account needs no token")
check((store_cm.get("metadata") or {}).get("namespace") == svc_ns,
      "namespace.yaml: the store is not in the extender's namespace")

# ---- the Dockerfile against scripts/bootstrap ----------------------------------------------------------------------
boot = (root / "scripts" / "bootstrap").read_text()
m = re.search(r"^packages=\((.*?)^\)", boot, re.S | re.M)
boot_pkgs = set(m.group(1).split()) if m else set()
check(bool(boot_pkgs), "scripts/bootstrap: no packages=( ... ) list")
TOOLCHAIN = {"build-essential", "cmake", "pkg-config"}
boot_build = {p for p in boot_pkgs if p in TOOLCHAIN or p.endswith("-dev")}
df = (root / "deploy" / "docker" / "Dockerfile").read_text()
stages = re.split(r"^FROM\s", df, flags=re.M)[1:]
check(len(stages) == 2, f"Dockerfile: {len(stages)} stages, want 2 (build, run-time)")
check(all(s.startswith("debian:12") for s in stages), "Dockerfile: every stage must be FROM debian:12")


def installed(stage):
    text = stage.replace("\\\n", " ")
    pk = set()
    for line in re.findall(r"apt-get install([^&\n]*)", text):
        pk |= {w for w in line.split() if not w.startswith("-")}
    return pk


if stages:
    got = installed(stages[0])
    check(got == boot_build, f"Dockerfile: the build stage installs {sorted(got)}, scripts/bootstrap's build "
                             f"packages are {sorted(boot_build)} (missing {sorted(boot_build - got)}, extra "
                             f"{sorted(got - boot_build)})")
if len(stages) > 1:
    run = installed(stages[1])
    check({"curl", "jq", "bash"} <= run, "Dockerfile: the run-time stage lacks curl, jq or bash (the scripts use them)")
    check(not any(p.endswith("-dev") for p in run), "Dockerfile: -dev packages in the run-time stage")
    check("libmicrohttpd12" in run, "Dockerfile: the run-time stage lacks libmicrohttpd12 (ibench extender)")

for f in failures:
    print(f"k8s_manifests: FAIL: {f}")
print(f"k8s_manifests: {passed} checks passed, {len(failures)} failed, {len(files)} manifests, "
      f"{len(docs)} documents")
sys.exit(1 if failures else 0)
