"""receiver.py — a stand-in for Pyroscope in the live test: accepts POST /ingest on loopback,
writes each request's path and query to LOG (a line each) and its body to DIR/body.N, answers 200
with an empty body, or with REPLY_BYTES (environment) bytes of text: a target whose reply a
client must not print.  Prints the port it listens on (0: any free one) and runs until killed.

Usage: python3 receiver.py PORT LOG DIR"""
import http.server
import os
import sys

port, log, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
reply = int(os.environ.get("REPLY_BYTES", "0"))
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        count += 1
        with open(f"{out}/body.{count}", "wb") as f:
            f.write(body)
        with open(log, "a") as f:
            f.write(self.path + "\n")
        self.send_response(200)
        self.send_header("Content-Length", str(reply))
        self.end_headers()
        chunk = b"ingested\n" * 8192
        left = reply
        while left > 0:
            self.wfile.write(chunk[:left])
            left -= len(chunk)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", port), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
