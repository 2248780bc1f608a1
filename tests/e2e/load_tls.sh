#!/usr/bin/env bash
# zerodrop load over https: verified against --cacert, refused without it (the reason printed),
# -k, a name mismatch, a plain-http server, a close-delimited body ended without close_notify.
source "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || skip "the openssl command is needed to make test certificates"
command -v python3 >/dev/null || skip "python3 is needed for the TLS test server"

cert() {  # cert NAME SAN: a self-signed certificate and key in $WORK/NAME.{pem,key}
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout "$WORK/$1.key" -out "$WORK/$1.pem" -subj "/CN=$1" -addext "subjectAltName=$2" \
    2>"$WORK/openssl.err" || { cat "$WORK/openssl.err"; fail "openssl could not make a certificate"; }
}
cert local "DNS:localhost,IP:127.0.0.1"
cert other "DNS:other.test"

cat >"$WORK/server.py" <<'PY'
import http.server, ssl, sys
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_GET(self):
        if self.path == "/eof":  # a close-delimited body; the socket closes without close_notify
            self.close_connection = True
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"until the end\n")
            return
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Pod-Name", "tls-pod")
        resumed = getattr(self.connection, "session_reused", False)
        self.send_header("X-Resumed", "resumed" if resumed else "full")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
port, certificate, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
if certificate != "-":
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
print("listening", flush=True)
server.serve_forever()
PY
start_server() {  # start_server PORT CERT KEY ("-" for plain http)
  python3 "$WORK/server.py" "$@" >"$WORK/server-$1.log" 2>&1 &
  for _ in $(seq 100); do grep -q listening "$WORK/server-$1.log" && return 0; sleep 0.05; done
  cat "$WORK/server-$1.log"; fail "the test server on port $1 did not start"
}
local_port=$(free_port); start_server "$local_port" "$WORK/local.pem" "$WORK/local.key"
other_port=$(free_port); start_server "$other_port" "$WORK/other.pem" "$WORK/other.key"
plain_port=$(free_port); start_server "$plain_port" - -
url="https://127.0.0.1:$local_port/"

# Verified against --cacert, keep-alive: every request ok, a few connections, the backend header.
expect_exit 0 "$ZERODROP" load "$url" --cacert "$WORK/local.pem" --rate 100 -d 2s -c 8 \
  --records "$WORK/ok.ndjson"
expect_grep "^requests 200  ok 200  failed 0" "$WORK/out"
opened=$(sed -n 's/.*connections opened \([0-9]*\).*/\1/p' "$WORK/out")
[ "$opened" -le 8 ] || fail "keep-alive over TLS opened $opened connections for 200 requests"
expect_grep '"backend":"tls-pod"' "$WORK/ok.ndjson"
# By name too (SNI and the DNS name in the certificate).
expect_exit 0 "$ZERODROP" load "https://localhost:$local_port/" --cacert "$WORK/local.pem" -n 20 -d 2s
# One TLS connection per request without keep-alive; after the first, sessions are resumed (the
# server says which in X-Resumed, recorded as the backend).
expect_exit 0 "$ZERODROP" load "$url" --cacert "$WORK/local.pem" --rate 50 -d 1s --no-keepalive \
  -c 1 --backend-header X-Resumed --records "$WORK/resume.ndjson"
expect_grep "^requests 50  ok 50  failed 0" "$WORK/out"
expect_grep "connections opened 50$" "$WORK/out"
resumed=$(grep -c '"backend":"resumed"' "$WORK/resume.ndjson" || true)
[ "$resumed" -ge 45 ] || fail "only $resumed of 50 TLS connections resumed a session"

# Not trusted without --cacert: each request a connect_error, and the summary says why.
expect_exit 1 "$ZERODROP" load "$url" --rate 20 -d 1s --json "$WORK/untrusted.json"
expect_grep "^failures  connect_error 20$" "$WORK/out"
expect_grep "^  connect_error, first: TLS handshake: certificate verify failed .*self-signed certificate$" "$WORK/out"
expect_grep '"connect_error": "TLS handshake: certificate verify failed' "$WORK/untrusted.json"
# -k skips verification.
expect_exit 0 "$ZERODROP" load "$url" -k --rate 20 -d 1s
# A trusted certificate for another name.
expect_exit 1 "$ZERODROP" load "https://127.0.0.1:$other_port/" --cacert "$WORK/other.pem" -n 3 -d 1s
expect_grep "connect_error, first: TLS handshake: .*IP address mismatch" "$WORK/out"
# An https URL to a plain-http server.
expect_exit 1 "$ZERODROP" load "https://127.0.0.1:$plain_port/" -k -n 3 -d 1s
expect_grep "connect_error, first: TLS handshake: " "$WORK/out"
# A close-delimited body whose end is a TCP close without TLS close_notify: complete, ok.
expect_exit 0 "$ZERODROP" load "${url}eof" --cacert "$WORK/local.pem" --rate 20 -d 1s
expect_grep "^requests 20  ok 20  failed 0" "$WORK/out"
echo "ok"
