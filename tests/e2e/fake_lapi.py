#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A hostile stand-in for a CrowdSec Local API (tests/e2e/crowdsec.sh).

Usage: fake_lapi.py ADDR PORT MODE_FILE SECONDS
Every GET is answered as the file MODE_FILE says at that moment:
  garbage   200, a body that is not JSON
  forbidden 403, LAPI's answer to a bad key
  body:JSON 200, the JSON after "body:" as it is
Serves for at most SECONDS, then exits.
"""
import http.server
import sys
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[3]) as f:
            mode = f.read().strip()
        status, body = 200, b'{"new": [ {"value": "192.0.2.1", '
        if mode == "forbidden":
            status, body = 403, b'{"message":"access forbidden"}'
        elif mode.startswith("body:"):
            body = mode[5:].encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Handler)
threading.Timer(float(sys.argv[4]), server.shutdown).start()
server.serve_forever()
