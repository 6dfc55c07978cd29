#!/usr/bin/env bash
# validate_schema.sh IBENCH - `ibench validate --json` validates against docs/schema/validate-v1.schema.json and its
# --junit report against Jenkins' junit-10.xsd (tests/fixtures/junit), on real runs of this machine: a duty SoI with
# its outside meter (int) and a rate SoI with a probe ramp and no meter here (mem-bw); and the checker rejects a
# document that breaks the schema. Verdicts are not asserted: that is validation_quick's work.
set -u
ibench=${1:?usage: validate_schema.sh IBENCH}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
check="/usr/bin/python3 $here/check_profile_schema.py --schema validate-v1"
xsd="$here/fixtures/junit/junit-10.xsd"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
for soi in int mem-bw; do
  "$ibench" validate --soi "$soi" --quick --no-overlap --json --junit "$out/$soi.xml" >"$out/$soi.json" 2>"$out/$soi.err"
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
