#!/usr/bin/env bash
# profile_leftovers.sh - nothing outlives ibench: `ibench profile` of a daemonizing target, killed with SIGHUP,
# SIGTERM and SIGKILL of ibench itself, leaves no process and no scratch directory behind (issue 14, bug 1).
#
#   tests/profile_leftovers.sh IBENCH [RUNS]      (CTest label integration, RUN_SERIAL; RUNS per signal, default 20)
#
# The target escapes ibench's process group (setsid) and so is reached only through its cgroup (or, after a SIGKILL
# of ibench, through the watchdog that kills that cgroup). Each run waits until the target has started once, lets
# the profile go on for 0.1-0.9 s (into the baselines or the first SoI, whose scratch directory lives in --dir and
# $TMPDIR), then sends the signal and checks, within a bounded wait, that no process carrying this run's marker is
# left and that no ibench-* directory is.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: profile_leftovers.sh IBENCH [RUNS]" >&2; exit 2; }
ibench=$1 runs=${2:-20}
dir=$(mktemp -d "${TMPDIR:-/tmp}/leftovers.XXXXXX")
export TMPDIR=$dir
marker="60$$.25" # a sleep no one else runs: its argument names this test's daemons
cleanup() { pkill -KILL -f "sleep $marker" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail=0

# 0 when nothing of run $1 is left within 3 s, else prints what is.
left_over() {
    local tag=$1 i procs dirs
    for i in $(seq 30); do
        procs=$(pgrep -f -- "sleep $marker|--name leftovers-$tag( |$)" || true)
        dirs=$(find "$dir" -mindepth 1 -maxdepth 1 -name 'ibench-*' || true)
        [ -z "$procs" ] && [ -z "$dirs" ] && return 0
        sleep 0.1
    done
    [ -n "$procs" ] && echo "  processes left: $(ps -o pid=,args= -p "$(echo $procs | tr ' ' ',')" | tr '\n' ';')"
    [ -n "$dirs" ] && echo "  directories left: $dirs"
    return 1
}

for sig in HUP TERM KILL; do
    bad=0
    for run in $(seq "$runs"); do
        tag=$sig-$run
        rm -f "$dir/started"
        # a batch target that starts a daemon (setsid: out of ibench's process group) and returns at once
        "$ibench" profile --name "leftovers-$tag" --metric runtime --sois disk-bw --samples 1 --baselines 1 \
            --timeout 5 --dir "$dir" --out "$dir/p.json" \
            --target "touch $dir/started; setsid sleep $marker </dev/null >/dev/null 2>&1 & sleep 0.05" \
            >/dev/null 2>&1 &
        pid=$!
        for i in $(seq 200); do [ -e "$dir/started" ] && break; sleep 0.05; done
        [ -e "$dir/started" ] || { echo "run $tag: the target never started" >&2; bad=$((bad + 1)); kill -KILL $pid; }
        sleep "0.$((RANDOM % 9 + 1))"
        kill -"$sig" $pid 2>/dev/null
        wait $pid 2>/dev/null
        if ! out=$(left_over "$tag"); then
            echo "run $tag: SIG$sig of ibench left something behind:" >&2
            echo "$out" >&2
            bad=$((bad + 1))
            pkill -KILL -f "sleep $marker" 2>/dev/null
            find "$dir" -mindepth 1 -maxdepth 1 -name 'ibench-*' -exec rm -rf {} +
        fi
    done
    echo "profile_leftovers.sh: SIG$sig: $((runs - bad))/$runs runs left nothing behind"
    [ "$bad" -eq 0 ] || fail=1
done
exit $fail
