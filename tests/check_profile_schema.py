#!/usr/bin/python3
"""check_profile_schema.py - validate ibench profiles against docs/schema/profile-v1.schema.json (python3-jsonschema).

    tests/check_profile_schema.py PROFILE...      exit 0 when every file is valid, 1 with the first error otherwise
"""
import json
import os
import sys

import jsonschema

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "docs", "schema", "profile-v1.schema.json")) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in sys.argv[1:]:
    with open(path) as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        print(f"{path}: invalid at {'/'.join(map(str, e.path)) or '(top)'}: {e.message}", file=sys.stderr)
        bad = 1
    else:
        print(f"{path}: valid profile v1 ({len(doc['sois'])} SoIs)")
sys.exit(bad)
