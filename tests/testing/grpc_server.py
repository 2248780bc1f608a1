#!/usr/bin/python3
"""A gRPC test server on Debian's python3-grpcio (gRPC's C core), no generated code.

Serves zd.Echo/Call (echoes the request message, names itself in the `x-pod-name` initial
metadata) and grpc.health.v1.Health/Check (protobuf encoded by hand: the messages have one
field each). What it does on SIGTERM is the point of it:

  --on-term graceful  health NOT_SERVING, keep serving for --delay (a preStop-like wait), then
                      server.stop(grace=--drain): GOAWAY twice, in-flight RPCs finish
  --on-term now       after --delay, server.stop(None): GOAWAY(INTERNAL_ERROR) and every RPC in
                      flight answered UNAVAILABLE "Cancelling all calls"
  --on-term exit      after --delay, os._exit(0): no GOAWAY, connections closed by the kernel

Run it with /usr/bin/python3 (Debian's grpc module). Prints "listening on HOST:PORT" once it
accepts.
"""
import argparse
import os
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

SERVING, NOT_SERVING = 1, 2
HEALTH_SERVICES = ("", "zd.Echo")


def seconds(text):
    """A duration such as 1.5, 1.5s or 300ms, in seconds."""
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    return float(text[:-1] if text.endswith("s") else text)


def decode_service(message):
    """Field 1 (string) of a HealthCheckRequest; '' when absent."""
    i = 0
    while i < len(message):
        key = message[i]
        length = message[i + 1]  # services here are shorter than 128 bytes
        if key == 0x0A:
            return message[i + 2:i + 2 + length].decode()
        i += 2 + length
    return ""


class Server:
    def __init__(self, args):
        self.args = args
        self.name = args.name or os.environ.get("POD_NAME", "grpc-server")
        self.status = SERVING
        self.term = threading.Event()

    def call(self, request, context):
        context.send_initial_metadata((("x-pod-name", self.name),))
        if self.args.rpc_time > 0:
            time.sleep(self.args.rpc_time)
        return request

    def check(self, request, context):
        service = decode_service(request)
        if service not in HEALTH_SERVICES:
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service " + service)
        return bytes([0x08, self.status])

    def serve(self):
        handlers = (
            grpc.method_handlers_generic_handler(
                "zd.Echo", {"Call": grpc.unary_unary_rpc_method_handler(self.call)}),
            grpc.method_handlers_generic_handler(
                "grpc.health.v1.Health",
                {"Check": grpc.unary_unary_rpc_method_handler(self.check)}),
        )
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=self.args.threads))
        server.add_generic_rpc_handlers(handlers)
        address = f"{self.args.host}:{self.args.port}"
        port = server.add_insecure_port(address)
        if port == 0:
            sys.exit(f"grpc_server: cannot listen on {address}")
        server.start()
        print(f"listening on {self.args.host}:{port}", flush=True)
        signal.signal(signal.SIGTERM, lambda *_: self.term.set())
        signal.signal(signal.SIGINT, lambda *_: self.term.set())
        while not self.term.wait(0.05):
            pass
        self.stop(server)

    def stop(self, server):
        mode = self.args.on_term
        self.status = NOT_SERVING
        print(f"SIGTERM: {mode}, delay {self.args.delay}s", flush=True)
        time.sleep(self.args.delay)
        if mode == "exit":
            os._exit(0)
        grace = self.args.drain if mode == "graceful" else None
        server.stop(grace).wait()
        print("stopped", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--name", default="", help="x-pod-name (default: $POD_NAME)")
    p.add_argument("--on-term", choices=("graceful", "now", "exit"), default="graceful")
    p.add_argument("--delay", type=seconds, default=0.0, help="serve this long after SIGTERM")
    p.add_argument("--drain", type=seconds, default=5.0, help="graceful: stop(grace=DRAIN)")
    p.add_argument("--rpc-time", type=seconds, default=0.0, help="each Call takes this long")
    p.add_argument("--threads", type=int, default=8)
    Server(p.parse_args()).serve()


if __name__ == "__main__":
    main()
