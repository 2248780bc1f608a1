#!/usr/bin/env python3
"""A pre-fork server like gunicorn's: a master holds the listener, one worker serves it. At
SIGTERM the master closes its copy of the listener and passes the signal on to its worker, which
dies at once with whatever it was serving (no handler), and the master exits 0.3 s later: the
worker dies before its master.
Usage: forking_server.py IP PORT (each request takes 200 ms)."""
import os
import signal
import socket
import sys
import threading
import time


def serve(conn):
    with conn:
        while True:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            time.sleep(0.2)
            body = b"ok\n"
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


def worker(listener):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def main():
    child = 0

    def on_term(signum, frame):
        listener.close()  # as gunicorn's master: the listener closes with its last holder
        if child:
            os.kill(child, signal.SIGTERM)
        time.sleep(0.3)
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)  # before listening: ready means it has a handler
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((sys.argv[1], int(sys.argv[2])))
    listener.listen(128)
    child = os.fork()
    if child == 0:
        worker(listener)
    os.waitpid(child, 0)
    time.sleep(0.3)  # a worker that died on its own: this small server just ends too
    os._exit(1)


if __name__ == "__main__":
    main()
