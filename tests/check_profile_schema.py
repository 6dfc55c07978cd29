#!/usr/bin/python3
"""check_profile_schema.py - validate ibench profiles against docs/schema/profile-v1.schema.json (python3-jsonschema),
or other ibench JSON output against another schema of docs/schema/.

    tests/check_profile_schema.py PROFILE...      exit 0 when every file is valid, 1 with the first error otherwise
    tests/check_profile_schema.py --schema placement-v1 FILE...

Exit 1 means "checked and invalid" (a schema error, or a file that is not JSON) and nothing else: anything that
keeps the check from running (no jsonschema module, an unreadable file or schema, no argument) exits 2, so a test
that expects a rejection cannot pass on a checker that never ran.
"""
import json
import os
import sys


def cannot_check(msg):
    print(f"check_profile_schema: cannot check: {msg}", file=sys.stderr)
    sys.exit(2)


try:
    import jsonschema
except ImportError as e:
    cannot_check(f"{e} (install python3-jsonschema)")

args = sys.argv[1:]
name = "profile-v1"
if len(args) >= 2 and args[0] == "--schema":
    name = args[1]
    args = args[2:]
if not args:
    cannot_check("usage: check_profile_schema.py [--schema NAME] FILE...")
here = os.path.dirname(os.path.abspath(__file__))
try:
    with open(os.path.join(here, "..", "docs", "schema", name + ".schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
except (OSError, ValueError, jsonschema.exceptions.SchemaError) as e:
    cannot_check(f"the schema: {e}")
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in args:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        cannot_check(str(e))
    try:
        doc = json.loads(text)
    except ValueError as e:
        print(f"{path}: invalid: not JSON: {e}", file=sys.stderr)
        bad = 1
        continue
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        print(f"{path}: invalid at {'/'.join(map(str, e.path)) or '(top)'}: {e.message}", file=sys.stderr)
        bad = 1
    else:
        what = f"profile v1 ({len(doc['sois'])} SoIs)" if name == "profile-v1" else f"{name} ({doc.get('command')})"
        print(f"{path}: valid {what}")
sys.exit(bad)
