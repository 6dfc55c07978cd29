#!/usr/bin/env bash
# examples/xz.sh - profile a CPU and memory batch job: `xz -9` of a generated 1.5 MB text file, timed per run
# (docs/profile.md, "Examples").
#
#   examples/xz.sh [ibench profile options...]      e.g. --sois mem-bw,llc-cap --out xz.json
#
# The input is made in a private temporary directory, removed on every exit. One run takes about 1 s here.
# XZ_LINES=N: an input of N lines instead of 220000 (the suite runs it smaller, to stay short).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ibench=${IBENCH:-$here/../build/ibench}
command -v xz >/dev/null || { echo "xz.sh: xz is not installed (Debian package xz-utils; scripts/bootstrap --tests installs it)" >&2; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ibench-xz.XXXXXX")
trap 'rm -rf "$dir"' EXIT
seq 1 "${XZ_LINES:-220000}" > "$dir/input.txt"
"$ibench" profile --name xz --target "xz -9 -T1 -c $dir/input.txt > /dev/null" --metric runtime "$@"
