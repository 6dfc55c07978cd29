#!/usr/bin/env bash
# check_layers.sh ROOT - the layer rules the compiler cannot see (the include directories enforce the rest: each
# layer's library exports its own headers only, so an upward #include does not compile):
#   1. below cli/ nothing prints or exits: no printf/puts/putchar/perror/exit/abort, no f*() on stdout or stderr
#      (a forked child's _exit after a failed exec is not ibench exiting; validation/core_ref.c is a separate
#      reference program with its own main, built for the benchmarks);
#   2. no file of a lower layer names a header that lives in a higher layer (the order: common sois validation
#      harness placement cli).
# A layer is its folder and every folder below it (placement/machine/ is placement, cli/place/coloc/ is cli): both
# rules read every file under a layer's folder, and a higher layer's headers are those anywhere under its folder.
# Prints every violation as FILE:LINE: text, and exits 1 when there is one.
set -u
shopt -s globstar nullglob
root=${1:?usage: check_layers.sh ROOT}
cd "$root" || exit 2
fail=0
layers=(common sois validation harness placement cli)
prints='(^|[^A-Za-z0-9_])(printf|vprintf|puts|putchar|perror|exit|abort)[[:space:]]*\(|(^|[^A-Za-z0-9_])(fprintf|vfprintf|fputs|fputc|fwrite|fflush)[[:space:]]*\([[:space:]]*(stdout|stderr)'
for d in common sois validation harness placement; do
  [ -d "$d" ] || continue
  files=("$d"/**/*.c "$d"/**/*.h)
  [ ${#files[@]} -gt 0 ] || continue
  while IFS= read -r hit; do
    case "$hit" in validation/core_ref.c:*) continue ;; esac
    echo "prints or exits below cli/: $hit"; fail=1
  done < <(grep -nE "$prints" "${files[@]}" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*|//)')
done
for ((i = 0; i < ${#layers[@]}; i++)); do
  lo=${layers[$i]}
  [ -d "$lo" ] || continue
  lofiles=("$lo"/**/*.c "$lo"/**/*.h "$lo"/**/*.S)
  [ ${#lofiles[@]} -gt 0 ] || continue
  for ((j = i + 1; j < ${#layers[@]}; j++)); do
    hi=${layers[$j]}
    [ -d "$hi" ] || continue
    for h in "$hi"/**/*.h; do
      b=$(basename "$h")
      while IFS= read -r hit; do
        echo "$lo includes $hi's header: $hit"; fail=1
      done < <(grep -nF "#include \"$b\"" "${lofiles[@]}")
    done
  done
done
[ "$fail" = 0 ] && echo "layers: every rule holds"
exit "$fail"
