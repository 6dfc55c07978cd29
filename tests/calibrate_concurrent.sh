#!/usr/bin/env bash
# calibrate_concurrent.sh - two `ibench calibrate` at once leave a cache holding both's measurements.
#
#   tests/calibrate_concurrent.sh IBENCH      (CTest label integration, RUN_SERIAL: both CPUs are measured)
#
# Both write the same private cache directory, started together: `calibrate --cpus 0` measures the bandwidths on one
# CPU (the highest) and on CPU 0; `calibrate` on one CPU and on all CPUs. Each saves what it measured under its CPU
# sets; the cache is locked while it is read and saved, and each save merges what is on disk, so afterwards `ibench
# topo --json` must show all three sets. Without the merge the later save overwrote the entries only the earlier one
# had (CPU 0's, or all CPUs'). Exit 77 on a machine with one CPU.
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: calibrate_concurrent.sh IBENCH" >&2; exit 2; }
ibench=$1
[ "$(nproc)" -ge 2 ] || { echo "skipped: needs 2 CPUs, this machine has $(nproc)"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/calconc.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export IBENCH_CACHE_DIR=$dir/cache

"$ibench" calibrate --cpus 0 --json >"$dir/c0.json" 2>"$dir/c0.err" &
p0=$!
"$ibench" calibrate --json >"$dir/c1.json" 2>"$dir/c1.err" &
p1=$!
wait $p0; rc0=$?
wait $p1; rc1=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || {
    echo "calibrate failed: --cpus 0 exit $rc0 ($(tail -1 "$dir/c0.err")), all CPUs exit $rc1 ($(tail -1 "$dir/c1.err"))"
    exit 1
}
"$ibench" topo --json >"$dir/topo.json" 2>"$dir/topo.err" || { echo "topo failed: $(tail -1 "$dir/topo.err")"; exit 1; }
python3 - "$dir/topo.json" "$(nproc)" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["bandwidth"]
have = {(r["kind"], r["cpus"]): r["bps"] for r in rows}
bad = 0
for kind in ("l2", "llc", "dram"):
    for cpu in ("0", str(int(sys.argv[2]) - 1), "0-%d" % (int(sys.argv[2]) - 1)):
        bps = have.get((kind, cpu))
        if bps is None:
            print(f"the cache lost {kind} on CPUs {cpu}: it holds {sorted(have)}")
            bad = 1
        elif not bps > 0:
            print(f"{kind} on CPUs {cpu}: {bps} B/s")
            bad = 1
        else:
            print(f"{kind:4} CPUs {cpu:4}: {bps / 1e9:6.1f} GB/s")
sys.exit(bad)
PY
