#!/usr/bin/env bash
# zerodrop run as PID 1 of a PID namespace (tini/dumb-init parity): it is PID 1, reaps orphaned
# zombies (a non-reaping PID 1 leaves them), forwards signals to the app's process group, passes
# SIGTERM on only after --delay, SIGKILLs an app that ignores it at --drain-timeout, and exits
# with the app's status (128+N for signal N).
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "PID namespaces need root here (unshare --pid --fork --mount-proc)"
unshare --pid --fork --mount-proc --kill-child true 2>/dev/null || skip "unshare --pid is not allowed on this machine"
NS=(unshare --pid --fork --mount-proc --kill-child)  # the namespace dies with the test
ns() { "${NS[@]}" "$@"; }

wait_file() {  # FILE: waits up to 10 s for FILE to exist
  for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done
  fail "timed out waiting for $1"
}
pid_in_ns() {  # UNSHARE_PID: the host pid of the namespace's PID 1 (zerodrop)
  local kids
  for _ in $(seq 200); do
    kids=$(cat "/proc/$1/task/$1/children" 2>/dev/null || true)
    [ -n "$kids" ] && { echo "${kids%% *}"; return 0; }
    sleep 0.05
  done
  fail "no PID 1 under unshare $1"
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# PID 1, and the exit status comes through.
expect_exit 42 ns "$ZERODROP" run -- sh -c 'test "$PPID" = 1 || exit 3; exit 42'
expect_exit 137 ns "$ZERODROP" run -- sh -c 'kill -KILL $$'

# Zombie reaping: five orphans exit while the app runs; the app counts zombies and exits with it.
count_zombies='for i in 1 2 3 4 5; do (sleep 0.05 &); done; sleep 0.6; z=0
  for s in /proc/[0-9]*/stat; do [ "$(cut -d" " -f3 "$s" 2>/dev/null)" = Z ] && z=$((z+1)); done
  exit $z'
expect_exit 0 ns "$ZERODROP" run -- sh -c "$count_zombies"
# Control: a PID 1 that only waits for its own child leaves the five zombies.
expect_exit 5 ns python3 -c 'import subprocess,sys; sys.exit(subprocess.call(["sh","-c",sys.argv[1]]))' "$count_zombies"

# Signal forwarding: USR1 reaches the app at once.
"${NS[@]}" "$ZERODROP" run -- sh -c "trap 'echo usr1 > $WORK/usr1; exit 7' USR1; touch $WORK/started1
  while :; do sleep 0.05; done" &
upid=$!
wait_file "$WORK/started1"
kill -USR1 "$(pid_in_ns $upid)"
got=0; wait $upid || got=$?
[ "$got" = 7 ] || fail "app ended by the forwarded USR1 exited $got, expected 7"
[ -e "$WORK/usr1" ] || fail "the app did not get SIGUSR1"

# SIGTERM reaches the app only after --delay, then its status comes through.
"${NS[@]}" "$ZERODROP" run --delay 0.5s --drain-timeout 5s -- sh -c "trap 'date +%s%N > $WORK/term; exit 0' TERM
  touch $WORK/started2; while :; do sleep 0.05; done" &
upid=$!
wait_file "$WORK/started2"
sent=$(now_ms)
kill -TERM "$(pid_in_ns $upid)"
got=0; wait $upid || got=$?
[ "$got" = 0 ] || fail "app stopped by the delayed SIGTERM: zerodrop exited $got, expected 0"
waited=$(( $(cat "$WORK/term") / 1000000 - sent ))
[ "$waited" -ge 500 ] || fail "the app got SIGTERM ${waited}ms after zerodrop, before the 500ms delay"

# An app that ignores the stop signal is killed at --drain-timeout: exit 137.
"${NS[@]}" "$ZERODROP" run --delay 0.2s --drain-timeout 1s -- sh -c "trap '' TERM; touch $WORK/started3
  while :; do sleep 0.05; done" &
upid=$!
wait_file "$WORK/started3"
sent=$(now_ms)
kill -TERM "$(pid_in_ns $upid)"
got=0; wait $upid || got=$?
took=$(( $(now_ms) - sent ))
[ "$got" = 137 ] || fail "app ignoring SIGTERM: zerodrop exited $got, expected 137"
[ "$took" -ge 1000 ] || fail "killed after ${took}ms, before the 1s drain timeout"
echo "ok: PID 1, reaping (0 zombies vs 5 without), forwarding, delayed stop after ${waited}ms, kill at ${took}ms"
