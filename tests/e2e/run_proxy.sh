#!/usr/bin/env bash
# zerodrop run --listen/--to: in front of an app that never sends `Connection: close`, keep-alive
# is kept while serving (across a HEAD answered with Content-Length); from SIGTERM on responses
# carry `Connection: close`; when draining starts, idle client connections are closed and the
# listener stops accepting; the app's exit
# status comes through. Upstream failures answer 502.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the test app and client"

cat >"$WORK/app.py" <<'PY'
# A keep-alive HTTP/1.1 server that never closes a connection by itself.
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = b"app\n"
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def do_HEAD(self):  # as nginx does: the GET's Content-Length, no body
        self.send_response(200); self.send_header("Content-Length", "4"); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
app_port=$(free_port)
"$ZERODROP" run --listen 127.0.0.1:0 --to "127.0.0.1:$app_port" --delay 1s --drain-timeout 10s \
  -- python3 "$WORK/app.py" "$app_port" >"$WORK/run.out" 2>"$WORK/run.err" &
run_pid=$!
for _ in $(seq 200); do grep -qs "proxy on" "$WORK/run.err" && break; sleep 0.05; done
proxy_port=$(sed -n 's/.*proxy on [0-9.]*:\([0-9]*\) .*/\1/p' "$WORK/run.err")
[ -n "$proxy_port" ] || fail "no proxy port in: $(cat "$WORK/run.err")"

python3 - "$proxy_port" "$run_pid" <<'PY' || fail "keep-alive hygiene check failed"
import http.client, os, signal, socket, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
def get(conn):
    conn.request("GET", "/"); r = conn.getresponse(); body = r.read()
    return r.status, r.getheader("Connection"), body
deadline = time.time() + 10
while True:  # the app may still be starting: 502 until it listens
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    status, connection, body = get(c)
    if status == 200: break
    assert time.time() < deadline, f"proxy never reached the app: {status}"
    time.sleep(0.05)
for _ in range(3):  # serving: the same connection is kept
    status, connection, body = get(c)
    assert (status, connection, body) == (200, None, b"app\n"), (status, connection, body)
c.request("HEAD", "/"); r = c.getresponse()  # no body to wait for, whatever Content-Length says
assert (r.status, r.getheader("Content-Length"), r.read()) == (200, "4", b""), r.status
status, connection, body = get(c)  # and the connection still carries the next request
assert (status, connection, body) == (200, None, b"app\n"), (status, connection, body)
idle = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
assert get(idle)[0] == 200
os.kill(pid, signal.SIGTERM)
time.sleep(0.2)
status, connection, body = get(c)  # during the delay: served, with Connection: close
assert (status, connection) == (200, "close"), (status, connection)
fresh = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
assert get(fresh)[:2] == (200, "close"), "new connections are still accepted during the delay"
idle.sock.setblocking(False)
try:
    idle.sock.recv(1)
    raise AssertionError("the idle connection was closed during the delay")
except BlockingIOError:
    pass
t = time.time()
idle.sock.settimeout(5)
assert idle.sock.recv(1) == b"", "the idle connection was not closed by the drain"
waited = time.time() - t
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    raise AssertionError("the proxy still accepts after the delay")
except ConnectionRefusedError:
    pass
print(f"ok: keep-alive while serving, Connection: close from SIGTERM, idle closed after {waited:.2f}s")
PY
got=0; wait $run_pid || got=$?
[ "$got" = 143 ] || { cat "$WORK/run.err"; fail "zerodrop run exited $got, expected the app's 143"; }

# Upstream down: 502 with Connection: close, not a hang or a reset.
dead_port=$(free_port)
"$ZERODROP" run --delay 0s --listen 127.0.0.1:0 --to "127.0.0.1:$dead_port" -- sleep 30 2>"$WORK/run2.err" &
run_pid=$!
for _ in $(seq 200); do grep -qs "proxy on" "$WORK/run2.err" && break; sleep 0.05; done
proxy_port=$(sed -n 's/.*proxy on [0-9.]*:\([0-9]*\) .*/\1/p' "$WORK/run2.err")
curl -s -D "$WORK/headers" -o /dev/null --max-time 5 "http://127.0.0.1:$proxy_port/" || true
expect_grep "^HTTP/1.1 502" "$WORK/headers"
expect_grep "^Connection: close" "$WORK/headers"
kill -TERM $run_pid
got=0; wait $run_pid || got=$?
[ "$got" = 143 ] || fail "zerodrop run over sleep exited $got, expected 143"
echo "ok: front proxy"
