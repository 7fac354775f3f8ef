"""httpfuzz.py — the live test's mutated HTTP requests to spanprof serve.

    python3 httpfuzz.py PORT N

Sends N requests, each on a connection of its own: a valid request for /metrics or for the
cumulative profile with one or a few bytes changed, cut or inserted, or random bytes (a fixed
seed: the same requests every run), closes its side, and reads the answer (5 s at most).  Prints
one line: how many were answered with an HTTP status line, how many were closed without one, and
how many got no answer in time (each of those is a hang)."""
import random
import socket
import sys

port, n = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(20261126)
bases = [b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
         b"GET /debug/pprof/profile?pid=5151 HTTP/1.1\r\nHost: x\r\n\r\n",
         b"HEAD /metrics HTTP/1.0\r\n\r\n"]
answered = closed = hung = 0
for _ in range(n):
    req = bytearray(rng.choice(bases))
    kind = rng.randrange(4)
    if kind == 0:
        for _ in range(rng.randrange(1, 4)):
            req[rng.randrange(len(req))] = rng.randrange(256)
    elif kind == 1:
        req = req[:rng.randrange(len(req))]
    elif kind == 2:
        at = rng.randrange(len(req))
        req[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
    else:
        req = bytearray(rng.randrange(256) for _ in range(rng.randrange(300)))
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    try:
        s.sendall(bytes(req))
        s.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        if got.startswith(b"HTTP/1."):
            answered += 1
        else:
            closed += 1
    except socket.timeout:
        hung += 1
    except OSError:
        closed += 1
    finally:
        s.close()
print(f"{n} mutated requests: {answered} answered, {closed} closed, {hung} hung")
