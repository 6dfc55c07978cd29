#!/usr/bin/env bash
# examples/memcached.sh - profile memcached under a memcslap load (docs/profile.md, "Examples").
#
#   examples/memcached.sh [ibench profile options...]     e.g. --sois mem-bw,llc-cap --out mc.json
#
# memcached (one thread, 64 MiB) serves on a free loopback port; memcslap (2 connections, 4000 sets each per run)
# is the load, run once per sample, and its "Time to set N keys by T threads: S seconds" line is the throughput
# metric (keys/s, through the built-in memcslap adapter). Both run on the target CPU (CPU 0 unless
# --target-cpus says otherwise). Needs the Debian packages memcached and libmemcached-tools (scripts/bootstrap --tests).
# MEMCSLAP_SETS=N: N sets per connection a sample instead (the suite runs it with fewer, to stay short).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ibench=${IBENCH:-$here/../build/ibench}
command -v memcached >/dev/null || { echo "memcached.sh: memcached is not installed (Debian package memcached; scripts/bootstrap --tests installs it)" >&2; exit 77; }
command -v memcslap >/dev/null || { echo "memcached.sh: memcslap is not installed (Debian package libmemcached-tools; scripts/bootstrap --tests installs it)" >&2; exit 77; }
port=""
for p in $(shuf -i 20000-29999 -n 50); do # a port nothing listens on
  if ! ss -Hltn "sport = :$p" | grep -q .; then port=$p; break; fi
done
[ -n "$port" ] || { echo "memcached.sh: no free port found" >&2; exit 1; }
user=(); [ "$(id -u)" = 0 ] && user=(-u root) # memcached refuses root without -u
exec "$ibench" profile --name memcached \
  --target "memcached ${user[*]} -l 127.0.0.1 -p $port -t 1 -m 64" \
  --load "memcslap --servers=127.0.0.1:$port --concurrency=2 --execute-number=${MEMCSLAP_SETS:-4000}" \
  --metric throughput "$@"
