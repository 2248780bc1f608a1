# A small HTTP/1.1 server for the https tests: python3 tls_server.py PORT CERT KEY ("-" "-" for
# plain http). Prints "listening" once it accepts. GET /eof answers a close-delimited body and
# closes without TLS close_notify; every other path "ok" with X-Pod-Name and X-Resumed (whether
# the client resumed a TLS session).
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
