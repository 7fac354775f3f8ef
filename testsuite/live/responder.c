/* responder.c — a stand-in for a running process of SPANPROF_LIVE=DIR in the live test: listens
 * on the Unix socket SOCK and answers each "snapshot\n" with the content FILE has at that moment
 * (so the test changes what the "process" did by replacing FILE), any other request with
 * "error unknown request\n".  After each answer it appends a line to LOG, so the test can wait
 * for a snapshot to have been taken.  With HANG=1 in the environment it reads the request and
 * never answers (a process that does not answer in time).  Runs until killed.
 *
 * Usage: responder SOCK FILE LOG */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fputs("usage: responder SOCK FILE LOG\n", stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int hang = getenv("HANG") && !strcmp(getenv("HANG"), "1");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    unlink(argv[1]);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16)) {
        perror("responder");
        return 1;
    }
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR)
                continue;
            perror("responder: accept");
            return 1;
        }
        char req[65];
        size_t n = 0;
        while (n < sizeof req - 1) {
            ssize_t r = read(c, req + n, 1);
            if (r <= 0)
                break;
            if (req[n++] == '\n')
                break;
        }
        req[n] = 0;
        if (hang) {
            sleep(30);
            close(c);
            continue;
        }
        if (strcmp(req, "snapshot\n")) {
            dprintf(c, "error unknown request\n");
        } else {
            FILE *f = fopen(argv[2], "rb");
            char buf[65536];
            size_t got;
            while (f && (got = fread(buf, 1, sizeof buf, f)) > 0)
                if (write(c, buf, got) < 0)
                    break;
            if (f)
                fclose(f);
        }
        close(c);
        FILE *log = fopen(argv[3], "a");
        if (log) {
            fputs("answered\n", log);
            fclose(log);
        }
    }
}
