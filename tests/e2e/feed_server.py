#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A feed server for the agent's [feed NAME] case (e2e.sh, agent_feeds):
the good and the bad ways a feed's server answers, on ADDR:PORT.

Usage: feed_server.py ADDR PORT DIR LIFETIME_S
Prints "ready" once listening; exits after LIFETIME_S (or when DIR/stop
exists), so a test cut short leaves nothing behind. Each request is one
line on stdout: "PATH STATUS".

  /NAME.txt     DIR/NAME.txt, with an ETag of its content: 304 to an
                If-None-Match that matches it
  /missing      404
  /slow         the headers after 10 s (a client's timeout passes first)
  /truncated    Content-Length 4096, half of it sent, then the connection
                closed
  /cut          no Content-Length: whole lines, then half a line, then
                the connection closed (only the format shows it)
  /html         200, text/html: an error page served as the feed
"""
import hashlib
import http.server
import os
import sys
import threading
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def note(self, status):
        print(f"{self.path} {status}", flush=True)

    def send_body(self, status, body, ctype="text/plain", etag=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.note(status)

    def do_GET(self):
        p = self.path
        if p.endswith(".txt") and "/" not in p[1:]:
            try:
                with open(os.path.join(self.server.dir, p[1:]), "rb") as f:
                    body = f.read()
            except OSError:
                return self.send_body(404, b"no such feed\n")
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return self.note(304)
            return self.send_body(200, body, etag=etag)
        if p == "/missing":
            return self.send_body(404, b"not found\n")
        if p == "/slow":
            time.sleep(10)
            return self.send_body(200, b"198.51.100.2\n")
        if p == "/truncated":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "4096")
            self.end_headers()
            self.wfile.write(b"198.51.100.2\n" * 150)  # 1950 of 4096 bytes
            self.wfile.flush()
            self.note("200-truncated")
            self.close_connection = True
            return
        if p == "/cut":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"198.51.100.2\n198.51.100.0/24\n198.51.100.0/2")
            self.wfile.flush()
            self.note("200-cut")
            self.close_connection = True
            return
        if p == "/html":
            return self.send_body(200, b"<!DOCTYPE html>\n<html><body>Service "
                                  b"Unavailable</body></html>\n", ctype="text/html")
        return self.send_body(404, b"not found\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client gone before the answer (the slow path's timeout)


def main():
    addr, port, folder, lifetime = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    srv = Server((addr, port), Handler)
    srv.dir = folder
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("ready", flush=True)
    end = time.monotonic() + lifetime
    stop = os.path.join(folder, "stop")
    while time.monotonic() < end and not os.path.exists(stop):
        time.sleep(0.1)
    srv.shutdown()


if __name__ == "__main__":
    main()
