#!/usr/bin/env bash
# cost: 14
# zerodrop load over https: verified against --cacert, refused without it (the reason printed),
# -k, a name mismatch, a plain-http server, a close-delimited body ended without close_notify.
source "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || skip "the openssl command is needed to make test certificates"
command -v python3 >/dev/null || skip "python3 is needed for the TLS test server"

make_cert local "DNS:localhost,IP:127.0.0.1"
make_cert other "DNS:other.test"

local_port=$(free_port); start_tls_server "$local_port" "$WORK/local.pem" "$WORK/local.key"
other_port=$(free_port); start_tls_server "$other_port" "$WORK/other.pem" "$WORK/other.key"
plain_port=$(free_port); start_tls_server "$plain_port" - -
url="https://127.0.0.1:$local_port/"

# Verified against --cacert, keep-alive: every request ok, a few connections, the backend header.
expect_exit 0 "$ZERODROP" load "$url" --cacert "$WORK/local.pem" --rate 100 -d 2s -c 8 \
  --records "$WORK/ok.ndjson"
expect_all_ok 200 "$WORK/out"
opened=$(sed -n 's/.*connections opened \([0-9]*\).*/\1/p' "$WORK/out")
[ "$opened" -le 8 ] || fail "keep-alive over TLS opened $opened connections for 200 requests"
expect_grep '"backend":"tls-pod"' "$WORK/ok.ndjson"
# By name too (SNI and the DNS name in the certificate).
expect_exit 0 "$ZERODROP" load "https://localhost:$local_port/" --cacert "$WORK/local.pem" -n 20 -d 2s
# One TLS connection per request without keep-alive; after the first, sessions are resumed (the
# server says which in X-Resumed, recorded as the backend).
expect_exit 0 "$ZERODROP" load "$url" --cacert "$WORK/local.pem" --rate 50 -d 1s --no-keepalive \
  -c 1 --backend-header X-Resumed --records "$WORK/resume.ndjson"
expect_all_ok 50 "$WORK/out"
sent=$(load_sent "$WORK/out")
expect_grep "connections opened $sent$" "$WORK/out"
resumed=$(grep -c '"backend":"resumed"' "$WORK/resume.ndjson" || true)
[ "$resumed" -ge $((sent - 5)) ] || fail "only $resumed of $sent TLS connections resumed a session"

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
expect_all_ok 20 "$WORK/out"
echo "ok"
