#!/usr/bin/env python3
"""fake-sites.py: a stand-in for a process that records with SPANPROF_LIVE=DIR, for the tests of
`spanprof spans` (run.sh's spans-live and spans-other-user): it listens on DIR/PID.sock, PID its
own, mode 0600, as the runtime does (live/protocol.h), and answers connection N with the content
of ANSWER N, byte for byte, whatever was asked; each request line goes to LOG as it came (an
empty line when the client sent nothing).  After the last answer it closes its socket but leaves
its name, and runs on until killed: a socket nobody listens on, beside a process still there.

With AS_UID=N in the environment (started as root) it listens as user N: SO_PEERCRED then says
the socket is another user's.  Its files are opened before, so that user needs no access to them.

Usage: SPANPROF_LIVE=DIR [AS_UID=N] fake-sites.py LOG ANSWER...
"""
import os
import signal
import socket
import sys


def main():
    log = open(sys.argv[1], "ab", buffering=0)
    answers = []
    for name in sys.argv[2:]:
        with open(name, "rb") as f:
            answers.append(f.read())
    directory = os.environ["SPANPROF_LIVE"]
    name = "%d.sock" % os.getpid()
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(directory, "." + name + ".tmp"))
    os.chmod(os.path.join(directory, "." + name + ".tmp"), 0o600)
    if os.environ.get("AS_UID"):  # SO_PEERCRED gives the user that called listen()
        uid = int(os.environ["AS_UID"])
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    listener.listen(4)
    # whole, as the runtime puts it: the test waits for the name
    os.rename("." + name + ".tmp", name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    for answer in answers:
        conn, _ = listener.accept()
        request = b""
        while not request.endswith(b"\n"):
            chunk = conn.recv(4096)
            if not chunk:
                break
            request += chunk
        log.write(request if request.endswith(b"\n") else request + b"\n")
        try:
            conn.sendall(answer)
        except OSError:  # a client that asked nothing and left
            pass
        conn.close()
    listener.close()
    signal.pause()


if __name__ == "__main__":
    main()
