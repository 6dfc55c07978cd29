#!/usr/bin/env python3
"""chaos.py - ibench killed at any moment leaves every program it touched running and clean (docs/safety.md).

    tests/chaos.py IBENCH SCENARIO [--points N] [--seed S] [--list]

Runs one ibench command again and again, each time sending SIGKILL, SIGTERM, SIGINT or SIGHUP (in turn) at a moment drawn
from a seeded generator over the span where the command pauses, pins or writes, and checks after each:

  - ibench ended: at once on SIGKILL; on SIGTERM/SIGINT/SIGHUP within 15 s, with 130 (or 0 when it had finished first);
  - within 2 s of its end, no process of its left: none carries this run's marker in its environment (every child
    of ibench inherits it; the watchdog too), and this script, a subreaper, has no child of ibench's to reap;
  - no cgroup of its left (<hierarchy>/ibench/<its pid>-*), so none frozen;
  - no scratch file left: the run's directory (its --dir and $TMPDIR) holds only the files the command writes on
    purpose (its --out) -- no ibench-* directory, no temporary file of an atomic write;
  - a service ibench did not start (profile --pid) still answers, with its CPU affinity (every thread) and its
    cgroups as before.

Scenarios: corun (a batch A, B paused and running), corun-service (a service B with its load), profile (a batch
target that starts a daemon: baselines, a disk SoI's ramp, caused rounds that pause the target's work),
profile-pid (a running HTTP service, pinned with --target-cpus), run (disk-bw, mem-cap), validate (disk-bw).
The seed (default 34) and each point's signal and moment are printed, so a failure can be replayed with --seed.
Exit 0 when every point left nothing, 1 otherwise, 2 on bad usage, 77 when this machine cannot run the scenario.
"""
import argparse
import ctypes
import glob
import http.client
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

PR_SET_CHILD_SUBREAPER = 36
CGROUP_ROOTS = ["/sys/fs/cgroup/freezer/ibench", "/sys/fs/cgroup/pids/ibench", "/sys/fs/cgroup/unified/ibench",
                "/sys/fs/cgroup/ibench"]
SIGNALS = [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVICE = r'''
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok\n"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.serve_forever()
'''

# prints the mean latency of n requests in ms (the load generator of the service scenarios)
CLIENT = ("python3 -c 'import http.client,sys,time\n"
          "t=time.time()\n"
          "for i in range(20):\n"
          "    c=http.client.HTTPConnection(\"127.0.0.1\",{port},timeout=5); c.request(\"GET\",\"/\"); c.getresponse().read(); c.close()\n"
          "print(\"latency\", (time.time()-t)/20*1000)'")


class Service:
    """An HTTP service this script starts (not ibench): it must outlive every kill, answering, as it was."""

    def __init__(self):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-c", SERVICE, str(self.port)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     env={k: v for k, v in os.environ.items() if k != "CHAOS_MARK"})
        for _ in range(100):
            if self.answers():
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("the test service did not start")
        self.state = self.snapshot()

    def answers(self, timeout=1.0):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            c.request("GET", "/")
            ok = c.getresponse().read() == b"ok\n"
            c.close()
            return ok
        except OSError:
            return False

    def snapshot(self):
        pid = self.proc.pid
        aff = {}
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                aff[int(t)] = sorted(os.sched_getaffinity(int(t)))
            except OSError:
                pass
        with open(f"/proc/{pid}/cgroup") as f:
            cg = f.read()
        return aff, cg

    def check(self):
        """What is wrong with the service now, or None."""
        if self.proc.poll() is not None:
            return f"the service died ({self.proc.returncode})"
        if not self.answers(2.0):
            return "the service does not answer"
        aff, cg = self.snapshot()
        was_aff, was_cg = self.state
        main = was_aff.get(self.proc.pid)
        for tid, cpus in aff.items():
            want = was_aff.get(tid, main)
            if cpus != want:
                return f"thread {tid} of the service has affinity {cpus}, was {want}"
        if cg != was_cg:
            return f"the service's cgroups changed: {cg!r} (was {was_cg!r})"
        return None

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def marked_procs(mark):
    """pids of live processes whose environment carries CHAOS_MARK=mark"""
    want = f"CHAOS_MARK={mark}".encode()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{d}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if want in env and state not in ("Z", "X"):
            out.append(int(d))
    return out


def reap():
    """reaps every child that ended (this script is a subreaper: ibench's orphans come here)"""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return f"{pid} [{state}] {args[:100]}"
    except OSError:
        return str(pid)


def cgroups_of(ibpid):
    return [d for root in CGROUP_ROOTS for d in glob.glob(f"{root}/{ibpid}-*")]


def frozen(cg):
    for f, bad in (("freezer.state", ("FROZEN", "FREEZING")), ("cgroup.freeze", ("1",))):
        try:
            with open(os.path.join(cg, f)) as fh:
                if fh.read().strip() in bad:
                    return True
        except OSError:
            pass
    return False


def scenarios(ib, work, svc_port):
    """name -> (argv builder for point i, kill window in s, files the command may leave on purpose)"""
    out = os.path.join(work, "out.json")
    daemon = f"setsid sleep 3{os.getpid() % 1000}.34 </dev/null >/dev/null 2>&1 &"
    return {
        "corun": (lambda i: [ib, "corun", "--a", "sleep 0.15", "--a-metric", "runtime", "--b",
                             "while :; do :; done", "--reps", "4", "--settle-solo", "60", "--settle-beside", "60",
                             "--out", out], (0.05, 2.0), {"out.json"}),
        "corun-service": (lambda i: [ib, "corun", "--a", "sleep 0.1", "--a-metric", "runtime", "--b",
                                     f"exec {sys.executable} -c '{SERVICE}' {svc_port}", "--b-load",
                                     CLIENT.format(port=svc_port), "--warmup", "300", "--reps", "4",
                                     "--settle-solo", "60", "--settle-beside", "60", "--out", out],
                          (0.05, 2.5), {"out.json"}),
        "profile": (lambda i: [ib, "profile", "--name", "chaos", "--target", f"{daemon} sleep 0.05", "--metric",
                               "runtime", "--sois", "disk-bw", "--samples", "1", "--baselines", "1", "--usage-seconds",
                               "0.5", "--timeout", "5", "--caused-budget", "1", "--dir", work, "--out", out], (0.05, 4.5), {"out.json"}),
        "profile-pid": None,  # filled below: needs the service's pid
        # the SoI by i % 2, the signal by i % 4: every signal with each SoI within eight points
        "run": (lambda i: [ib, "run", "--soi", "mem-cap", "--intensity", "50", "--duration", "2", "--max-bytes",
                           "256M"] if i % 2 else
                [ib, "run", "--soi", "disk-bw", "--levels", "0,50,100", "--step-ms", "500", "--rw", "write",
                 "--dir", work], (0.05, 2.5), set()),
        "validate": (lambda i: [ib, "validate", "--soi", "disk-bw", "--quick", "--dir", work], (0.1, 4.0), set()),
    }


def run_point(argv, mark, work, window, rng, sig, allowed, service, log):
    env = dict(os.environ, CHAOS_MARK=mark, TMPDIR=work, IBENCH_PROGRESS="0")
    t_kill = rng.uniform(*window)
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env)
    ended_first = False
    try:
        p.wait(timeout=t_kill)
        ended_first = True
    except subprocess.TimeoutExpired:
        os.kill(p.pid, sig)
    problems = []
    try:
        rc = p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        problems.append(f"ibench still running 15 s after {sig.name}")
        p.kill()
        rc = p.wait()
    err = p.stderr.read().decode(errors="replace").strip().splitlines()
    p.stderr.close()
    if ended_first and rc != 0:
        problems.append(f"the command failed on its own (exit {rc}): {err[-1] if err else ''}")
    # 130 (interrupted) or 0 (it finished as the signal came); or death by the signal itself once the command had said
    # it wrote its file: its handlers are gone by then, and the default action is the signal's (nothing is left: the
    # checks below still run)
    done = any("wrote" in l and "interrupted" not in l for l in err[-1:])
    if not ended_first and sig != signal.SIGKILL and rc not in (130, 0) and not (done and rc == -sig):
        problems.append(f"exit {rc} after {sig.name}, 130 expected: {err[-1] if err else ''}")
    if not ended_first and sig == signal.SIGKILL and rc != -signal.SIGKILL:
        problems.append(f"exit {rc} after SIGKILL")
    # an interrupt keeps what was measured: when ibench says it wrote its --out, the file is there and readable
    out = os.path.join(work, "out.json")
    if not ended_first and sig != signal.SIGKILL and rc == 130 and any("wrote" in l for l in err[-1:]):
        if not os.path.exists(out):
            problems.append(f"said it wrote {out}, which is not there: {err[-1]}")
        elif argv[1] == "profile":
            show = subprocess.run([argv[0], "show", out], capture_output=True, text=True)
            if show.returncode != 0 or "missing" not in show.stdout:
                problems.append(f"ibench show of the interrupted profile: exit {show.returncode}, "
                                f"{'no' if 'missing' not in show.stdout else 'a'} list of missing parts")
    # what ibench leaves must be gone within 2 s of its end (the watchdog's cleanup included)
    deadline = time.time() + 2.0
    while True:
        reap()
        procs = marked_procs(mark)
        cgs = cgroups_of(p.pid)
        if (not procs and not cgs) or time.time() > deadline:
            break
        time.sleep(0.02)
    for pid in procs:
        problems.append(f"process left: {describe(pid)}")
    for cg in cgs:
        problems.append(f"cgroup left: {cg}{' (FROZEN)' if frozen(cg) else ''}")
    left = sorted(set(os.listdir(work)) - allowed)
    if left:
        problems.append(f"scratch left in {work}: {', '.join(left)}")
    if service:
        why = service.check()
        if why:
            problems.append(why)
    log(f"  {sig.name:7s} at {t_kill:5.2f} s: {'ended first, ' if ended_first else ''}exit {rc}"
        f"{'' if not problems else ' -- ' + '; '.join(problems)}")
    # leave the next point a clean start whatever happened
    for pid in marked_procs(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for cg in cgs:
        for f, v in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
            try:
                with open(os.path.join(cg, f), "w") as fh:
                    fh.write(v)
            except OSError:
                pass
    for name in left:
        subprocess.run(["rm", "-rf", os.path.join(work, name)])
    for name in allowed:
        try:
            os.unlink(os.path.join(work, name))
        except OSError:
            pass
    reap()
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ibench")
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("CHAOS_SEED", "34")))
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    names = ["corun", "corun-service", "profile", "profile-pid", "run", "validate"]
    if a.list:
        print("\n".join(names))
        return 0
    if a.scenario not in names:
        print(f"chaos.py: unknown scenario {a.scenario!r} (one of {', '.join(names)})", file=sys.stderr)
        return 2
    if a.points < 1:
        print("chaos.py: --points must be at least 1", file=sys.stderr)
        return 2
    if os.cpu_count() < 2:
        print("chaos.py: skipped: one CPU (corun and the profile's SoIs need a second)")
        return 77
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    base = os.environ.get("TMPDIR", "/var/tmp")
    work = tempfile.mkdtemp(prefix="chaos-", dir=base if os.path.isdir(base) else None)
    rng = random.Random(f"{a.seed}/{a.scenario}")
    service = None
    log = lambda s: print(s, flush=True)
    try:
        svc_port = free_port()
        table = scenarios(a.ibench, work, svc_port)
        if a.scenario == "profile-pid":
            service = Service()
            table["profile-pid"] = (
                lambda i: [a.ibench, "profile", "--name", "chaos-pid", "--pid", str(service.proc.pid), "--load",
                           CLIENT.format(port=service.port), "--metric", "latency:latency ([0-9.]+)", "--target-cpus", "0",
                           "--sois", "disk-bw", "--samples", "1", "--baselines", "1", "--usage-seconds", "0.5", "--timeout", "5",
                           "--caused-budget", "1", "--dir", work, "--out", os.path.join(work, "out.json")],
                (0.05, 4.0), {"out.json"})
        build, window, allowed = table[a.scenario]
        log(f"chaos.py: {a.scenario}: {a.points} points, seed {a.seed}, kill window {window[0]}-{window[1]} s")
        bad = 0
        for i in range(a.points):
            sig = SIGNALS[(i + i // len(SIGNALS)) % len(SIGNALS)] if a.scenario == "run" else SIGNALS[i % len(SIGNALS)]
            mark = f"{os.getpid()}-{a.scenario}-{i}"
            if run_point(build(i), mark, work, window, rng, sig, allowed, service, log):
                bad += 1
        log(f"chaos.py: {a.scenario}: {a.points - bad}/{a.points} points left nothing behind")
        return 1 if bad else 0
    finally:
        if service:
            service.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
