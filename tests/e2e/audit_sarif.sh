#!/bin/bash
# labels: offline
# zerodrop audit --format sarif validates against the official SARIF 2.1.0 JSON schema
# (sarif-2.1.0-rtm.5.json, the OASIS schema as published on SchemaStore). The schema is not
# downloadable from here, so it is taken at test time from the npm package @microsoft/jest-sarif,
# which ships it, and cached in the build folder; python3-jsonschema validates. Skips, saying
# why, when npm cannot fetch the package or jsonschema is missing.
source "$(dirname "$0")/lib.sh"
DATA="$SOURCE_DIR/tests/audit/data"
CACHE="${BUILD_DIR:-$WORK}/audit-sarif-schema"
SCHEMA="$CACHE/package/lib/schemas/sarif-2.1.0-rtm.5.json"

python3 -c 'import jsonschema' 2>/dev/null \
  || skip "python3 jsonschema is missing (apt-get install python3-jsonschema)"
if [ ! -f "$SCHEMA" ]; then
  command -v npm >/dev/null || skip "npm is missing: cannot fetch the SARIF schema package"
  mkdir -p "$CACHE"
  ( cd "$CACHE" && timeout 120 npm pack --silent @microsoft/jest-sarif@1.0.0-beta.0 \
      > pack.log 2>&1 && tar xzf microsoft-jest-sarif-1.0.0-beta.0.tgz ) \
    || skip "npm could not fetch @microsoft/jest-sarif (offline?): $(tail -1 "$CACHE/pack.log")"
fi
[ -f "$SCHEMA" ] || fail "the package no longer ships $SCHEMA"

code=0
"$ZERODROP" audit --format sarif "$DATA" > "$WORK/audit.sarif" 2> "$WORK/err" || code=$?
[ "$code" = 1 ] || { cat "$WORK/err"; fail "exit $code, expected 1"; }
python3 - "$SCHEMA" "$WORK/audit.sarif" <<'PY' || fail "SARIF output does not validate"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
validator = jsonschema.Draft4Validator(schema)
errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
for e in errors[:10]:
    print("schema:", "/".join(map(str, e.path)), e.message, file=sys.stderr)
if errors:
    sys.exit(1)
# What GitHub code scanning needs beyond the schema: a tool name, a rule per result, and a
# location with a line for every result.
run = doc["runs"][0]
assert run["tool"]["driver"]["name"] == "zerodrop"
ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
assert run["results"], "no results"
for r in run["results"]:
    assert r["ruleId"] in ids, r
    region = r["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] >= 1 and region["startColumn"] >= 1, r
    assert r["message"]["text"], r
print(f"{len(run['results'])} results valid against SARIF 2.1.0")
PY
# A broken document must still give a valid log (invalid-manifest with its line).
expect_grep '"ruleId": "invalid-manifest"' "$WORK/audit.sarif"
echo "audit_sarif: ok"
