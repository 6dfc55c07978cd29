#!/usr/bin/env bash
# validate_schema.sh IBENCH - `ibench validate --json` validates against docs/schema/validate-v1.schema.json and its
# --junit report against Jenkins' junit-10.xsd (tests/fixtures/junit), on real runs of this machine: a duty SoI with
# its outside meter (int) and a rate SoI with a probe ramp (mem-bw, with --fail-on unchecked); the exit status is 1
# exactly when the report holds a failure; and the checker rejects a document that breaks the schema. Verdicts are
# not asserted: that is validation_quick's work.
set -u
ibench=${1:?usage: validate_schema.sh IBENCH}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
check="/usr/bin/python3 $here/check_profile_schema.py --schema validate-v1"
xsd="$here/fixtures/junit/junit-10.xsd"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
for soi in int mem-bw; do
  extra=()
  [ "$soi" = mem-bw ] && extra=(--fail-on unchecked) # its outside meter is UNCHECKED without resctrl
  "$ibench" validate --soi "$soi" --quick --no-overlap --json --junit "$out/$soi.xml" "${extra[@]}" \
    >"$out/$soi.json" 2>"$out/$soi.err"
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "FAIL: ibench validate --soi $soi exited $rc: $(tail -1 "$out/$soi.err")"
    fail=1
    continue
  fi
  $check "$out/$soi.json" || fail=1
  xmllint --noout --schema "$xsd" "$out/$soi.xml" 2>"$out/$soi.xmllint" || {
    echo "FAIL: $soi's JUnit report: $(cat "$out/$soi.xmllint")"
    fail=1
  }
  # the exit status and the report agree: 1 exactly when the report has a failure (--fail-on counted)
  failures=$(grep -o '<testsuite [^>]*failures="[0-9]*"' "$out/$soi.xml" | grep -o 'failures="[0-9]*"' | tr -dc 0-9)
  if { [ "${failures:-0}" -gt 0 ] && [ "$rc" -ne 1 ]; } || { [ "${failures:-0}" -eq 0 ] && [ "$rc" -ne 0 ]; }; then
    echo "FAIL: $soi ${extra[*]}: exit $rc with $failures failure(s) in its JUnit report"
    fail=1
  fi
done
# the checker can fail: a verdict that is not one
if [ -s "$out/int.json" ]; then
  sed 's/"verdict": *"pass"/"verdict": "fine"/' "$out/int.json" >"$out/bad.json"
  if $check "$out/bad.json" >/dev/null 2>&1; then
    echo "FAIL: a document with the verdict 'fine' passed the schema check"
    fail=1
  fi
fi
[ "$fail" -eq 0 ] && echo "validate_schema: 2 runs, JSON and JUnit valid; a broken document refused"
exit "$fail"
