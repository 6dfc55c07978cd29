#!/usr/bin/env bash
# perf2trace.sh ROOT - scripts/perf2trace on hand-written perf texts (tests/fixtures/perf-*.txt, written from perf's
# own printf formats: `perf mem report -D` with and without -x , and `perf script -F tid,addr,data_src`): the
# traces expected line by line (each data source word decoded from its DSRC bits, samples without a data address
# skipped), the summary line, and a bad line rejected with exit 2 and one line naming it.
set -u
root=${1:?usage: perf2trace.sh ROOT}
conv="$root/scripts/perf2trace"
fx="$root/tests/fixtures"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { # NAME FIXTURE EXPECTED SUMMARY
  if ! "$conv" "$fx/$2" >"$out/$1.trace" 2>"$out/$1.err"; then
    echo "FAIL $1: exit $?: $(cat "$out/$1.err")"; fail=1; return
  fi
  if ! diff -u "$fx/$3" "$out/$1.trace"; then
    echo "FAIL $1: the trace differs from $3"; fail=1
  fi
  if [ "$(cat "$out/$1.err")" != "$4" ]; then
    echo "FAIL $1: summary '$(cat "$out/$1.err")', expected '$4'"; fail=1
  fi
}
check mem perf-mem-report-D.txt perf2trace-mem.expected "perf2trace: 7 samples, 1 without a data address skipped"
check mem-x perf-mem-report-D-x.txt perf2trace-mem.expected "perf2trace: 7 samples, 1 without a data address skipped"
check script perf-script-data-src.txt perf2trace-script.expected \
  "perf2trace: 5 samples, 1 without a data address skipped"
# from stdin, the same
if ! "$conv" <"$fx/perf-script-data-src.txt" 2>/dev/null | diff -q - "$fx/perf2trace-script.expected" >/dev/null; then
  echo "FAIL stdin: the trace differs"; fail=1
fi
# a bad line: exit 2, one line naming file and line
{ head -3 "$fx/perf-script-data-src.txt"; echo "   4250     7fffzz001008      83629000002 |OP LOAD"; } >"$out/bad.txt"
"$conv" "$out/bad.txt" >"$out/bad.trace" 2>"$out/bad.err"
rc=$?
want="perf2trace: $out/bad.txt:4: '7fffzz001008': a hexadecimal address expected"
if [ $rc -ne 2 ] || [ "$(cat "$out/bad.err")" != "$want" ]; then
  echo "FAIL bad: exit $rc, '$(cat "$out/bad.err")'; expected exit 2, '$want'"; fail=1
fi
{ echo "# PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL"; echo " 4242  4243 0x000055d0c0a01234"; } >"$out/short.txt"
"$conv" "$out/short.txt" >/dev/null 2>"$out/short.err"
rc=$?
if [ $rc -ne 2 ] || [ "$(wc -l <"$out/short.err")" -ne 1 ] || ! grep -q "short.txt:2: 3 fields, at least 6 expected" "$out/short.err"; then
  echo "FAIL short: exit $rc, '$(cat "$out/short.err")'"; fail=1
fi
"$conv" "$out/none.txt" >/dev/null 2>"$out/none.err"
rc=$?
if [ $rc -ne 2 ] || [ "$(cat "$out/none.err")" != "perf2trace: $out/none.txt: No such file or directory" ]; then
  echo "FAIL missing file: exit $rc, '$(cat "$out/none.err")'"; fail=1
fi
[ $fail -eq 0 ] && echo "perf2trace: all checks hold"
exit $fail
