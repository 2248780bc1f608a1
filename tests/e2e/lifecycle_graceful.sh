#!/usr/bin/env bash
# examples/graceful, the library's reference server, end to end: conventions (X-Pod-Name, /, /readyz,
# /healthz, keep-alive), then the order at SIGTERM: readiness fails at once while it still serves
# and accepts; after --delay it stops accepting and closes idle keep-alive connections; an
# in-flight request finishes with Connection: close; exit 0 before the deadline. A request that
# outlives --drain-timeout makes it exit 1 at the deadline.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the test client"
GRACEFUL="$BUILD_DIR/examples/graceful"
[ -x "$GRACEFUL" ] || fail "$GRACEFUL was not built"

expect_exit 2 "$GRACEFUL" --delay soon
expect_grep "^graceful: error: --delay" "$WORK/err"

start() {  # ARGS...: starts graceful on a free port; sets pid and port
  POD_NAME=pod-7 "$GRACEFUL" --host 127.0.0.1 --port 0 "$@" 2>"$WORK/g.err" &
  pid=$!
  for _ in $(seq 200); do grep -qs "listening on" "$WORK/g.err" && break; sleep 0.05; done
  port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\).*/\1/p' "$WORK/g.err")
  [ -n "$port" ] || fail "graceful did not start: $(cat "$WORK/g.err")"
}

start --delay 1s --drain-timeout 10s --work 1.5s
python3 - "$port" "$pid" <<'PY' || { cat "$WORK/g.err"; fail "graceful shutdown order"; }
import http.client, os, signal, socket, sys, threading, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
def get(conn, path="/"):
    conn.request("GET", path); r = conn.getresponse(); body = r.read()
    return r.status, r.getheader("Connection"), r.getheader("X-Pod-Name"), body
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
assert get(c, "/readyz")[:1] == (200,)
assert get(c, "/healthz")[:1] == (200,)
assert get(c) == (200, None, "pod-7", b"ok\n"), get(c)
assert get(c)[1] is None, "keep-alive while serving"
idle = http.client.HTTPConnection("127.0.0.1", port, timeout=10); get(idle, "/healthz")
busy = http.client.HTTPConnection("127.0.0.1", port, timeout=10); get(busy, "/healthz")
os.kill(pid, signal.SIGTERM)
time.sleep(0.1)
probe = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
assert get(probe, "/readyz")[:2] == (503, "close"), "readiness fails at SIGTERM, on a new connection"
assert get(http.client.HTTPConnection("127.0.0.1", port, timeout=10), "/healthz")[0] == 200
# In flight across the end of the delay (--work 1.5s > delay 1s): answered, Connection: close.
result = {}
t = threading.Thread(target=lambda: result.update(r=get(busy)))
t.start()
idle.sock.settimeout(10)
assert idle.sock.recv(1) == b"", "idle keep-alive connection closed when draining starts"
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    raise AssertionError("still accepting after the delay")
except ConnectionRefusedError:
    pass
t.join()
assert result["r"][:2] == (200, "close"), result
print("ok: order serving -> unready -> draining -> drained")
PY
got=0; wait $pid || got=$?
[ "$got" = 0 ] || { cat "$WORK/g.err"; fail "graceful exited $got after draining, expected 0"; }
expect_grep "stopped \(drained\)" "$WORK/g.err"

# A request longer than the deadline: stopped at --drain-timeout, exit 1.
start --delay 0.2s --drain-timeout 0.6s --work 5s
python3 - "$port" "$pid" <<'PY' &
import http.client, os, signal, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request("GET", "/")
time.sleep(0.2); os.kill(int(sys.argv[2]), signal.SIGTERM)
try: c.getresponse().read()
except Exception: pass
PY
got=0; wait $pid || got=$?
[ "$got" = 1 ] || { cat "$WORK/g.err"; fail "graceful at its deadline exited $got, expected 1"; }
expect_grep "stopped \(deadline\)" "$WORK/g.err"
echo "ok: graceful"
