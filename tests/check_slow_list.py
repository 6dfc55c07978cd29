#!/usr/bin/env python3
"""check_slow_list.py BUILD_DIR SLOW_CMAKE - the quick label (`ctest -L quick`) is what tests/slow.cmake says it is.

CTest ignores a name in set_tests_properties that names no test, so a test renamed or removed would leave its entry
in slow.cmake pointing at nothing without a word. Checked here, from `ctest -N --show-only=json-v1`: every name in
slow.cmake is a test labelled `unit` and not `quick`; every other `unit` test is `quick`; no test outside `unit` is.
Exit 0 when all hold, 1 with one line per fault, 2 when it cannot run."""
import json
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: check_slow_list.py BUILD_DIR SLOW_CMAKE", file=sys.stderr)
        return 2
    build, slow_file = sys.argv[1], sys.argv[2]
    text = open(slow_file).read()
    m = re.search(r"set\(ibench_slow_unit_tests\s+([^)]*)\)", text)
    if not m:
        print(f"{slow_file}: no set(ibench_slow_unit_tests ...) list", file=sys.stderr)
        return 2
    slow = set(m.group(1).split())
    run = subprocess.run(["ctest", "--test-dir", build, "-N", "--show-only=json-v1"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"ctest -N failed: {run.stderr.strip()}", file=sys.stderr)
        return 2
    labels = {}
    for t in json.loads(run.stdout)["tests"]:
        labels[t["name"]] = next((p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"), [])
    faults = []
    for name in sorted(slow):
        if name not in labels:
            faults.append(f"{slow_file}: {name} names no test")
        elif "unit" not in labels[name] or "quick" in labels[name]:
            faults.append(f"{name}: listed as slow, labelled {';'.join(labels[name])} (want unit, not quick)")
    for name, lab in sorted(labels.items()):
        if name in slow:
            continue
        if "unit" in lab and "quick" not in lab:
            faults.append(f"{name}: a unit test outside the quick label, not listed in {slow_file}")
        if "quick" in lab and "unit" not in lab:
            faults.append(f"{name}: quick but not a unit test")
    for f in faults:
        print(f)
    quick = sum("quick" in lab for lab in labels.values())
    print(f"check_slow_list.py: {len(labels)} tests, {quick} quick, {len(slow)} listed slow, {len(faults)} faults")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
