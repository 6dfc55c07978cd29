#!/usr/bin/env bash
# examples/redis.sh - profile redis-server under a redis-benchmark GET load (docs/profile.md, "Examples").
#
#   examples/redis.sh [ibench profile options...]     e.g. --sois mem-bw,llc-cap --out redis.json
#
# redis-server serves on a free loopback port with persistence off, its working directory a private temporary one
# (removed on every exit) and its log on stdout, so it touches no system file. The load, run once per sample, is
# redis-benchmark: 50000 GETs over 4 connections (0.6-1.6 s here), whose "GET: N requests per second" line is the
# throughput metric. Both run on the target CPU (CPU 0 unless --target-cpus says otherwise). Needs the Debian
# packages redis-server and redis-tools (scripts/bootstrap --tests). REDIS_GETS=N: N GETs a sample instead (the suite
# runs it with fewer, to stay short).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ibench=${IBENCH:-$here/../build/ibench}
command -v redis-server >/dev/null || { echo "redis.sh: redis-server is not installed (Debian package redis-server; scripts/bootstrap --tests installs it)" >&2; exit 77; }
command -v redis-benchmark >/dev/null || { echo "redis.sh: redis-benchmark is not installed (Debian package redis-tools; scripts/bootstrap --tests installs it)" >&2; exit 77; }
port=""
for p in $(shuf -i 20000-29999 -n 50); do # a port nothing listens on
  if ! ss -Hltn "sport = :$p" | grep -q .; then port=$p; break; fi
done
[ -n "$port" ] || { echo "redis.sh: no free port found" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ibench-redis.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# ibench stops the server's process group (SIGTERM, then SIGKILL) on every exit path; with --save '' it writes nothing.
"$ibench" profile --name redis \
  --target "redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --daemonize no --dir '$dir' --logfile ''" \
  --load "redis-benchmark -h 127.0.0.1 -p $port -t get -n ${REDIS_GETS:-50000} -c 4 -q" \
  --metric 'throughput:GET: ([0-9.]+)' "$@"
