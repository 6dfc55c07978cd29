#!/usr/bin/env bash
# place_schema.sh IBENCH - every `ibench place` command's --json validates against docs/schema/placement-v1.schema.json
# on several topologies (synthetic, XML, this machine), and the checker rejects a document that breaks it.
set -u
ibench=${1:?usage: place_schema.sh IBENCH}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
check="/usr/bin/python3 $here/check_profile_schema.py --schema placement-v1"
out=$(mktemp -d)
victim=
trap '[ -n "$victim" ] && kill "$victim" 2>/dev/null; rm -rf "$out"' EXIT
fail=0
n=0
run() { # NAME ARGS...: the command must exit 0 and its JSON validate
  local name=$1
  shift
  if ! "$ibench" place "$@" --json >"$out/$name.json" 2>"$out/$name.err"; then
    echo "FAIL: ibench place $* exited $?: $(cat "$out/$name.err")"
    fail=1
    return
  fi
  if ! $check "$out/$name.json"; then
    fail=1
  fi
  n=$((n + 1))
}
clover='synthetic:pack:2 l2:2 core:2 pu:1'
intel='synthetic:pack:4 [numa] l3:1 l2:12 core:1 pu:2'
run topo-clover topo --topology "$clover"
run topo-intel topo --topology "$intel"
run topo-live topo
ring="$out/ring.json"
echo '[[10,20,30,20],[20,10,20,30],[30,20,10,20],[20,30,20,10]]' >"$ring"
run classes-clover classes --topology "$clover" --threads 4
run classes-clover-all classes --topology "$clover" --threads 4 --all
run classes-intel classes --topology "$intel" --threads 24 --concerns numa,l2
run classes-live classes --threads 1
bw="$out/bw.json"
echo '{"unit": "GB/s", "sets": [{"nodes": [0], "bandwidth": 10}, {"nodes": [1], "bandwidth": 11},
  {"nodes": [0, 1], "bandwidth": 19.5}]}' >"$bw"
run classes-bandwidth classes --topology 'synthetic:pack:2 [numa] core:2 pu:1' --threads 2 --bandwidth "$bw"
# a live process of this machine: pinned to its first CPU, then shown
sleep 60 &
victim=$!
run apply apply --pid "$victim" --cpus 0
run apply-interleave apply --pid "$victim" --cpus 0 --mem interleave --no-cpuset
run apply-mem-none apply --pid "$victim" --cpus 0 --mem none
run show show --pid "$victim"
kill "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
run run-cpus run --dry-run --cpus 0
run run-class run --dry-run --topology "$intel" --class 2 --threads 24 --concerns numa,l2 --mem interleave
run score-offline score --cpu-usage 1,0,0,0 --memory 0,0,1,0 --distances "$ring" --hops
run score-live score --pid $$ --window 50ms
# co-location on profiles: a pair (safe), a group of three, a prediction
mc="$here/fixtures/profile-memcached.json"
run pair pair "$mc" "$mc"
run pair-three pair "$mc" "$mc" "$mc" --unknown optimistic --margin 0
run predict predict "$mc" --beside "$mc" --beside "$mc"
# the worst pair: tolerates nothing, causes everything, a wide margin: headroom -150 is still valid output
worst="$out/worst.json"
/usr/bin/python3 - "$mc" "$worst" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["sois"]:
    if s.get("status") == "measured":
        s["tolerated"], s["tolerated_bracket"], s["caused"] = 0.0, [0.0, 0.0], 100.0
        s["caused_detail"]["value"] = 100.0
json.dump(d, open(sys.argv[2], "w"))
EOF
run pair-worst pair "$worst" "$worst" --margin 50
records="$here/fixtures/corun"
run predict-check predict --check "$records/xz-dram.json" "$records/other-machine.json" --profiles "$here/../docs/data/corun"
run predict-fit predict --check "$records"/*.json --profiles "$here/../docs/data/corun" --fit
run predict-half predict --check "$records"/*.json --profiles "$here/../docs/data/corun" --half A --rule min-extend-any
corpus="$here/../docs/data/corpus"
run predict-corpus predict --check "$corpus"/records/*.json --profiles "$corpus/profiles-a" --half B --seed 7
run predict-sets predict --check "$corpus"/records/*.json --profiles "$corpus/profiles-a" --profiles "$corpus/profiles-a"
corun="$here/../docs/data/corun"
fleet="$here/../examples/fleet"
run colocate colocate --fleet "$fleet/fleet.json" --unknown optimistic --profiles "$corun/memcached.json" \
  "$corun/dram.json:2:8" "$corun/xz.json"
run colocate-uncertain colocate --fleet "$fleet/fleet.json" --profiles "$corun/memcached.json" "$corun/dram.json:2:8" \
  --refuse established
run pair-uncertain pair "$corun/memcached.json" "$corun/disk.json" --refuse established
run pair-likely pair "$corun/memcached.json" "$corun/disk.json"
run pair-unsafe-old pair "$corun/memcached.json" "$corun/disk.json" --refuse uncertain
grep -q '"verdict": "uncertain"' "$out/pair-uncertain.json" || { echo "FAIL: pair-uncertain is not uncertain"; fail=1; }
# the default (--refuse likely) refuses that uncertain pair: memcached's point prediction is under its QoS line
grep -q '"verdict": "unsafe"' "$out/pair-likely.json" || { echo "FAIL: pair-likely is not refused"; fail=1; }
grep -q '"refuse": "likely"' "$out/pair-likely.json" || { echo "FAIL: pair-likely does not say its rule"; fail=1; }
run simulate simulate --scenario ibench-200x40 --policy interference --seed 1
run simulate-headroom simulate --scenario ibench-200x40 --policy interference --seed 1 --decide headroom
run simulate-recorded simulate --scenario ibench-200x40-recorded --policy interference --seed 1 --truth recorded --records "$here/fixtures/corun"
run simulate-files simulate --fleet "$fleet/machines.json" --arrivals "$fleet/arrivals.json" --policy least-loaded \
  --seed 2
run provision provision "$corun/disk.json" --catalog "$here/../examples/catalog.json"
run provision-bare provision "$mc"
seed0="$here/fixtures/tang-isca11"
run map map --topology "$clover" --concerns package,l2 --target "$seed0/contentAnalyzer.json" \
  --corunner "$seed0/stitcher.json"
run map-live map --target "$corun/memcached.json" --corunner "$corun/dram.json"
# heterogeneous cores: recorded profiles as the big type, examples/hetero's hand-made little ones
little="$here/../examples/hetero"
run hetero hetero --cores big:2,little:4 $(for a in disk dram llc memcached redis xz; do
  printf ' --app %s=big:%s,little:%s' "$a" "$corun/$a.json" "$little/$a-little.json"; done)
run hetero-optimistic hetero --cores big:1,little:1 --unknown optimistic --shared mem-bw,llc-cap \
  --app xz=big:"$corun/xz.json",little:"$little/xz-little.json" --app llc=little:"$little/llc-little.json",big:"$corun/llc.json"
# the placement model: train (k auto, and labels), predict, pack by cluster and by a measured vector
vec="$here/../examples/placement/vectors-7x6.csv"
run model-train model train --vectors "$vec" --seed 1 -o "$out/model.json"
run model-predict model predict --model "$out/model.json" --measured "$vec"
printf 'workload,5,1,2,3,4,label\na1,1,0.68,0.84,0.94,0.97,A\na2,1,0.72,0.86,0.96,0.99,A\nz1,1,1.2,1.1,1.1,1.0,Z\n' \
  >"$out/pack.csv"
printf 'workload,1,2,3,4,5\nnew,1.19,1.1,1.1,1.0,1\n' >"$out/new.csv"
run model-train-labels model train --vectors "$out/pack.csv" -o "$out/pack-model.json"
run pack pack --model "$out/pack-model.json" --goal 0.9 --threads 8 --cluster A --topology 'synthetic:pack:4 [numa] l2:4 core:1 pu:2'
run pack-measured pack --model "$out/pack-model.json" --goal 1 --threads 8 --measured "$out/new.csv" \
  --topology 'synthetic:pack:4 [numa] l2:4 core:1 pu:2'
run atom-oracle atom --oracle "$seed0/oracle-webSearch-protobuf.json" --threads 4 --topology "$clover" \
  --concerns package,l2 --period 600 --seed 2
run atom-dry atom --pid $$ --dry-run
# thread clustering on a trace: two pairs of threads, each on its own lines
awk 'BEGIN { for (r = 0; r < 1000; r++) for (t = 1; t <= 4; t++) printf "%d 0x%x remote\n", t, 65536 + int((t - 1) / 2) * 4096 + (r % 4) * 64 }' >"$out/pairs.trace"
run cluster cluster --trace "$out/pairs.trace" --topology 'synthetic:pack:2 core:2 pu:1'
run cluster-chips cluster --trace "$out/pairs.trace" --chips 2
# a JSON that breaks the schema (an unknown kind) must be rejected: exit 1, the error at that field
"$ibench" place topo --topology "$clover" --json | sed 's/"kind": "synthetic"/"kind": "imaginary"/' >"$out/bad.json"
msg=$($check "$out/bad.json" 2>&1)
rc=$?
if [ $rc -ne 1 ] || ! grep -q 'invalid' <<<"$msg"; then
  echo "FAIL: a document with kind \"imaginary\" was not rejected (exit $rc): $msg"
  fail=1
fi
[ $fail = 0 ] && echo "place_schema: $n documents valid, a broken one rejected"
exit $fail
