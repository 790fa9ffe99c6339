#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/probe_peer.py: loopback peers for the `tracewire config --probe` tests:
# an HTTP server that answers every POST with a status (and records the requests), and a
# UDP socket that receives datagrams. Ports are ephemeral: it prints "HTTP_PORT UDP_PORT"
# on its first line, then serves until stdin closes. POSTs get --status (default 202), or
# 404 when the path has "missing", 401 when it has "auth".
import argparse
import http.server
import socket
import sys
import threading


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--status", type=int, default=202)
    parser.add_argument("--log", required=True, help="file receiving one line per request")
    args = parser.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, status):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with open(args.log, "a") as log:
                log.write("%s %s %d %s\n" % (self.command, self.path, len(body),
                                             self.headers.get("Content-Type")))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            # Paths name the answer a test wants: .../missing -> 404, .../auth -> 401.
            status = 404 if "missing" in self.path else 401 if "auth" in self.path else args.status
            self._answer(status)

        def do_GET(self):
            with open(args.log, "a") as log:
                log.write("GET %s\n" % self.path)
            body = b'{"strategyType":"PROBABILISTIC","probabilisticSampling":{"samplingRate":0.5}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *unused):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))

    def receive():
        while True:
            data, _ = udp.recvfrom(65536)
            with open(args.log, "a") as log:
                log.write("UDP %d\n" % len(data))

    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=receive, daemon=True).start()
    print(server.server_address[1], udp.getsockname()[1], flush=True)
    sys.stdin.read()  # until the test closes our stdin
    server.shutdown()


if __name__ == "__main__":
    main()
