#!/usr/bin/env python3
"""A server whose every Nth response is malformed: a header line without a colon, which a proxy
must reject (HAProxy answers 502 itself, logging the termination state PH). Keep-alive HTTP/1.1;
/readyz always answers well. Dies at SIGTERM (no handler).
Usage: bad_response_server.py IP PORT [N] (N: 10)."""
import socket
import sys
import threading

EVERY = int(sys.argv[3]) if len(sys.argv) > 3 else 10
count = 0
lock = threading.Lock()


def respond(request):
    global count
    if request.startswith(b"GET /readyz "):
        return b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"
    with lock:
        count += 1
        bad = count % EVERY == 0
    if bad:
        return b"HTTP/1.1 200 OK\r\nBad Header Line\r\nContent-Length: 3\r\n\r\nok\n"
    return b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"


def serve(conn):
    with conn:
        data = b""
        while True:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            head, data = data.split(b"\r\n\r\n", 1)
            conn.sendall(respond(head))


def main():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((sys.argv[1], int(sys.argv[2])))
    listener.listen(128)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


main()
