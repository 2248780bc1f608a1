#!/usr/bin/env bash
# labels: offline
# zerodrop audit reads SQL migrations beside manifests: a column renamed in one step is a
# schema-race error at its statement (exit 1); the expand/contract sequence that replaces it passes
# (exit 0); every output format carries the findings; SQL PostgreSQL cannot parse is one error
# naming the file and position.
source "$(dirname "$0")/lib.sh"
M="$SOURCE_DIR/tests/audit/migrations"

expect_exit 1 "$ZERODROP" audit "$M/rename-in-one-step"
expect_grep '^.*/V2__rename_name_to_full_name\.sql:3:1: error: RENAME COLUMN users\.name TO full_name: .*\[sql-rename-column, schema-race\]$' "$WORK/out"
expect_grep '^  fix: expand/contract: add the new column' "$WORK/out"
# V1 creates the table and indexes it in the same file: nothing of it is in use yet.
! grep -q 'V1__create_users' "$WORK/out" || fail "V1 (a new table) was flagged: $(cat "$WORK/out")"

expect_exit 0 "$ZERODROP" audit "$M/expand-contract"
! grep -Eq ': (error|warning):' "$WORK/out" || fail "expand/contract was flagged: $(cat "$WORK/out")"

# Manifests and migrations in one run, JSON and GitHub formats.
expect_exit 1 "$ZERODROP" audit --format json "$SOURCE_DIR/tests/audit/data/traefik.yaml" "$M/rename-in-one-step"
python3 - "$WORK/out" <<'PY' || fail "JSON output lacks the migration finding"
import json, sys
doc = json.load(open(sys.argv[1]))
sql = [f for f in doc["findings"] if f["rule"] == "sql-rename-column"]
assert len(sql) == 1 and sql[0]["hole"] == "schema-race" and sql[0]["line"] == 3, sql
assert sql[0]["object"]["kind"] == "Table" and sql[0]["object"]["name"] == "users", sql
assert any(f["rule"] != "sql-rename-column" for f in doc["findings"]), "manifest findings lost"
PY
expect_exit 1 "$ZERODROP" audit --format github "$M/rename-in-one-step/V2__rename_name_to_full_name.sql"
expect_grep '^::error file=.*V2__rename_name_to_full_name\.sql,line=3' "$WORK/out"

# --fail-on and --ignore work on migration rules as on manifest rules.
expect_exit 0 "$ZERODROP" audit --ignore sql-rename-column "$M/rename-in-one-step"

printf 'SELECT 1;\nALTER TABL users DROP COLUMN x;\n' > "$WORK/V3__typo.sql"
expect_exit 1 "$ZERODROP" audit "$WORK/V3__typo.sql"
expect_grep 'V3__typo\.sql:2:7: error: syntax error at or near "TABL" \[invalid-migration\]' "$WORK/out"

# A folder with neither manifests nor migrations is still an error naming it.
mkdir "$WORK/empty"
expect_exit 2 "$ZERODROP" audit "$WORK/empty"
expect_grep 'empty: no \*\.yaml' "$WORK/err"
echo "ok: migrations audited with manifests, in every format"
