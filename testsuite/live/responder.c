/* responder.c — a stand-in for a running process of SPANPROF_LIVE=DIR in the live test: listens
 * on the Unix socket SOCK and answers each "snapshot\n" with the content FILE has at that moment
 * (so the test changes what the "process" did by replacing FILE), each "spans\n" with the same
 * without its pprof part (LEN 0, as live/protocol.h says), any other request with
 * "error unknown request\n".  After each answer it appends "answered REQUEST" to LOG, so the test
 * can wait for a snapshot to have been taken and see what was asked.  With HANG=1 in the
 * environment it reads the request and never answers (a process that does not answer in time).
 * Runs until killed.
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
        int spans = strcmp(req, "spans\n") == 0;
        if (strcmp(req, "snapshot\n") && !spans) {
            dprintf(c, "error unknown request\n");
        } else {
            FILE *f = fopen(argv[2], "rb");
            static char buf[1 << 20];
            size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
            if (f)
                fclose(f);
            buf[got] = 0;
            /* spans: up to the end of the JSON part ("...json LEN\n" LEN bytes "\n"), then an
             * empty pprof part */
            const char *json = spans ? strstr(buf, "\njson ") : NULL;
            char *after;
            size_t jlen = json ? strtoul(json + 6, &after, 10) : 0;
            if (json && *after == '\n' && (size_t)(after + 1 - buf) + jlen + 1 <= got) {
                got = (size_t)(after + 1 - buf) + jlen + 1;
                if (write(c, buf, got) >= 0)
                    dprintf(c, "pprof 0\n\nend\n");
            } else if (write(c, buf, got) < 0) {
                perror("responder: write");
            }
        }
        close(c);
        FILE *log = fopen(argv[3], "a");
        if (log) {
            fprintf(log, "answered %s", req[0] ? req : "nothing\n");
            fclose(log);
        }
    }
}
