#!/usr/bin/env python3
"""A loopback sink for the Uploads suite: reads every request body to the end and throws it away.

    python3 Benchmarks/Server/sink.py PORT

Any POST or PUT: the body is read in full (Content-Length or chunked framing) into one reused
1 MiB buffer, then the answer is 200 with `{"bytes": N}` (N = the body bytes received), so the
benchmark can check that the whole body arrived. Keep-alive, one thread per connection, standard
library only. scripts/bench.sh starts it beside nginx (nginx's `return` answers before it has read
the body, which would let a client stop sending early).
"""
import http.server
import json
import socketserver
import sys

CHUNK = 1 << 20


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _discard(self, count, buffer):
        view = memoryview(buffer)
        while count > 0:
            n = self.rfile.readinto(view[: min(count, CHUNK)])
            if not n:
                raise ConnectionError("body ended early")
            count -= n

    def _read_body(self):
        buffer = bytearray(CHUNK)
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return total
                self._discard(size, buffer)
                self.rfile.readline()  # the CRLF after the chunk
                total += size
        length = int(self.headers.get("Content-Length") or 0)
        self._discard(length, buffer)
        return length

    def do_POST(self):
        if self.headers.get("Expect", "").lower() == "100-continue":
            pass  # BaseHTTPRequestHandler already answered 100 Continue
        size = self._read_body()
        body = json.dumps({"bytes": size}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_PUT = do_POST

    def do_GET(self):
        body = b'{"sink": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
