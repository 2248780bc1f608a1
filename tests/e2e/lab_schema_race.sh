#!/usr/bin/env bash
# A version change against a real PostgreSQL 15 (lab --to, --db postgres, --migrate):
# - schema-app 1 -> 2 with the column renamed in one step before the rollout: the old pods'
#   queries fail, named schema-race with the database's error as evidence (exit 1);
# - the expand/contract step (add the column, roll to 2-dual, which writes both) drops nothing;
# - a failing migration is one line naming it (exit 2);
# - the database dies with the lab, also when the lab is SIGKILLed.
# The audit of the same migration files agrees. Each run: ~2 s of load at 200 requests/s.
# labels: timing
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lab_common.inc"
need_example schema-app
need_example naive
[ -x /usr/lib/postgresql/15/bin/postgres ] ||
  skip "postgresql-15 is not installed (scripts/setup.sh test installs it)"
command -v psql >/dev/null || skip "psql is not installed (postgresql-client-15)"
# As root, postgres runs as nobody, who must pass through the test folder to the run folders.
chmod o+x "$WORK"
M="$SOURCE_DIR/examples/schema-app/migrations"
APP="$EXAMPLES/schema-app"
PSQL="psql -X -q -v ON_ERROR_STOP=1"
SCHEMA=(--db postgres --no-keepalive --prestop sleep:1s --migrate-at before)

# postgres_gone DIR: no process runs with DIR's data folder on its command line (5 s to go).
postgres_gone() {
  for _ in $(seq 100); do
    pgrep -f "$1/postgres/data" >/dev/null || return 0
    sleep 0.05
  done
  pgrep -af "$1/postgres/data"; fail "postgres of $1 still runs"
}

# The rename in one step: version 1 still runs when "name" becomes "title".
run_lab rename schema-app "${SCHEMA[@]}" \
  --migrate "$PSQL -f $M/rename-in-one-step/V2__rename_name_to_title.sql" \
  --to "$APP --host {ip} --port {port} --app-version 2" -- --app-version 1
expect_failures rename
expect_grep 'schema-race' "$WORK/rename.out"
expect_grep '"kind":"migration_finished"' "$WORK/rename/events.ndjson"
expect_grep '"version":"A"' "$WORK/rename/events.ndjson"
expect_grep '"version":"B"' "$WORK/rename/events.ndjson"
expect_grep '"body":"ERROR:  column \\"name\\" .*does not exist' "$WORK/rename/requests.ndjson"
# Every failure is the schema race, on the old version's pods, with the SQL and the error.
python3 - "$WORK/rename/report.json" <<'PY' || { show rename; fail "rename: report.json"; }
import json, re, sys
report = json.load(open(sys.argv[1]))
holes = report["holes"]
assert [h["id"] for h in holes] == ["schema-race"], [h["id"] for h in holes]
evidence = holes[0]["evidence"]
for want in [r"on pods? .* of version A \(.*--app-version 1\) after the migration began",
             r"ALTER TABLE items RENAME COLUMN name TO title;` ran from",
             r'column "name" (of relation "items" )?does not exist']:
    assert re.search(want, evidence), (want, evidence)
versions = {p["name"]: p.get("version") for p in report["pods"]}
failed = {f["backend"] for f in report["failed_requests"]}
assert failed and all(versions[p] == "A" for p in failed), (versions, failed)
PY
postgres_gone "$WORK/rename"

# Expand/contract: add the column first; 2-dual writes both and reads title, else name.
run_lab expand schema-app "${SCHEMA[@]}" \
  --migrate "$PSQL -f $M/expand-contract/V2__expand_add_title.sql" \
  --to "$APP --host {ip} --port {port} --app-version 2-dual" -- --app-version 1
expect_no_failures expand
expect_grep '"exit_code":0,"kind":"migration_finished"' "$WORK/expand/events.ndjson"
postgres_gone "$WORK/expand"

# The audit says the same of the files.
expect_exit 1 "$ZERODROP" audit "$M/rename-in-one-step"
expect_grep 'sql-rename-column, schema-race' "$WORK/out"
expect_exit 0 "$ZERODROP" audit "$M/expand-contract"

# A failing migration: one line naming it and its last words, exit 2 (no database needed).
run_lab broken naive --migrate "sh -c 'echo applying; echo ERROR: relation nothing >&2; exit 3'"
[ "$rc" = 2 ] || { show broken; fail "broken: exit $rc, expected 2"; }
expect_grep "^zerodrop: error: --migrate 'sh -c echo applying; .*' failed: exit code 3: ERROR: relation nothing \(log .*/broken/migration.log\)$" \
  "$WORK/broken.err"
expect_grep '"exit_code":3,"kind":"migration_finished"' "$WORK/broken/events.ndjson"

# SIGKILL of the lab: its keeper takes postgres down with the pods.
"$ZERODROP" lab --db postgres --replicas 1 --warmup 60s --out "$WORK/killed" \
  -- "$APP" --host '{ip}' --port '{port}' >"$WORK/killed.out" 2>&1 &
lab=$!
for _ in $(seq 300); do
  grep -q '"kind":"pod_ready"' "$WORK/killed/events.ndjson" 2>/dev/null && break
  sleep 0.05
done
pgrep -f "$WORK/killed/postgres/data" >/dev/null || { cat "$WORK/killed.out"; fail "no postgres"; }
kill -9 "$lab"
wait "$lab" 2>/dev/null || true
postgres_gone "$WORK/killed"
echo "ok: schema-race named with the database's error; expand/contract drops nothing"
