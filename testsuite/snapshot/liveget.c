/* liveget.c — the live tests' client: asks the process behind a SPANPROF_LIVE socket for its
 * snapshot, or sends whatever a hostile test wants, and checks the answer's framing
 * (live/protocol.h).
 *
 *   liveget SOCKET [OUT]     sends the request; with OUT, writes OUT.json and OUT.pb.gz; prints
 *                            "snapshot: json N bytes, pprof N bytes", or what is wrong
 *   liveget -r WORD SOCKET [OUT]  the same with the request "WORD\n" ("spans")
 *   liveget -s TEXT SOCKET   sends TEXT (C escapes \n, \\) and prints the answer as it came
 *   liveget -q SOCKET        connects, sends nothing, prints the answer
 *   liveget -c SOCKET        connects, sends the request, closes without reading
 *   liveget -f FILE [OUT]    checks a final snapshot file as the first form does
 *   liveget -z N SOCKET      sends N mutations of the request (bytes changed, cut, inserted, or
 *                            random, up to 200 bytes; a fixed seed), each on a connection of its
 *                            own, and prints how many were answered with a snapshot, with an
 *                            error line and with nothing, and how many answers were not the one
 *                            the request calls for (a snapshot exactly when it starts with the
 *                            request line) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "live/protocol.h"

static int connect_to(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        printf("connect: %s\n", strerror(errno));
        exit(1);
    }
    return fd;
}

static char *read_all(FILE *f, size_t *n)
{
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    *n = 0;
    for (size_t k; (k = fread(buf + *n, 1, cap - *n, f)) > 0;)
        if ((*n += k) == cap)
            buf = realloc(buf, cap *= 2);
    return buf;
}

/* Parses "WORD LEN\n" at *P, returns the part's start and sets *LEN. */
static const char *part(const char **p, const char *end, const char *word, size_t *len)
{
    size_t w = strlen(word);
    if ((size_t)(end - *p) < w + 2 || memcmp(*p, word, w) || (*p)[w] != ' ')
        return NULL;
    char *nl;
    *len = strtoul(*p + w + 1, &nl, 10);
    if (*nl != '\n' || (size_t)(end - nl - 1) < *len + 1 || nl[1 + *len] != '\n')
        return NULL;
    const char *start = nl + 1;
    *p = start + *len + 1;
    return start;
}

static int check(const char *buf, size_t n, const char *out)
{
    const char *p = buf, *end = buf + n;
    size_t m = strlen(SPANPROF_LIVE_MAGIC), jl, pl;
    if (n < m || memcmp(buf, SPANPROF_LIVE_MAGIC, m)) {
        printf("not a snapshot: %.*s", (int)(n < 80 ? n : 80), buf);
        return 1;
    }
    p += m;
    const char *j = part(&p, end, "json", &jl), *pb = j ? part(&p, end, "pprof", &pl) : NULL;
    if (!pb || (size_t)(end - p) != 4 || memcmp(p, "end\n", 4)) {
        printf("bad framing\n");
        return 1;
    }
    printf("snapshot: json %s, pprof %s\n", jl ? "present" : "empty", pl ? "present" : "empty");
    if (out) {
        char path[4096];
        snprintf(path, sizeof path, "%s.json", out);
        FILE *f = fopen(path, "w");
        fwrite(j, 1, jl, f);
        fclose(f);
        snprintf(path, sizeof path, "%s.pb.gz", out);
        f = fopen(path, "w");
        fwrite(pb, 1, pl, f);
        fclose(f);
    }
    return 0;
}

/* The -z form (see the header). */
static int fuzz(const char *path, long n)
{
    unsigned long x = 88172645463325252ul; /* xorshift64, fixed: the same requests every run */
    long snapshots = 0, errors = 0, nothing = 0, wrong = 0;
    const char *req = SPANPROF_LIVE_REQUEST;
    size_t req_len = strlen(req);
    for (long i = 0; i < n; i++) {
        char buf[256];
        size_t len = req_len;
        memcpy(buf, req, len);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        switch (x % 4) {
        case 0: /* a byte changed */
            buf[(x >> 8) % len] = (char)(x >> 16);
            break;
        case 1: /* cut */
            len = (x >> 8) % len;
            break;
        case 2: /* a byte inserted */
            memmove(buf + (x >> 8) % len + 1, buf + (x >> 8) % len, len - (x >> 8) % len);
            buf[(x >> 8) % len] = (char)(x >> 16);
            len++;
            break;
        default: /* random bytes */
            len = (x >> 8) % 200;
            for (size_t k = 0; k < len; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                buf[k] = (char)x;
            }
        }
        int expect = len >= req_len && memcmp(buf, req, req_len) == 0;
        int fd = connect_to(path);
        send(fd, buf, len, MSG_NOSIGNAL);
        shutdown(fd, SHUT_WR); /* the end of the request: no wait for a line that never comes */
        FILE *f = fdopen(fd, "r");
        size_t got;
        char *answer = read_all(f, &got);
        fclose(f);
        int is_snapshot = got > 16 && memcmp(answer, SPANPROF_LIVE_MAGIC, 16) == 0;
        int is_error = got > 6 && memcmp(answer, "error ", 6) == 0;
        snapshots += is_snapshot;
        errors += is_error;
        nothing += got == 0;
        wrong += is_snapshot != expect || (!expect && !is_error);
        free(answer);
    }
    printf("fuzz: %ld requests: %ld snapshots, %ld errors, %ld unanswered, %ld wrong\n", n,
           snapshots, errors, nothing, wrong);
    return wrong != 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "-z") == 0)
        return fuzz(argv[3], atol(argv[2]));
    size_t n;
    if (argc >= 3 && strcmp(argv[1], "-f") == 0) {
        FILE *f = fopen(argv[2], "r");
        if (!f) {
            printf("%s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        char *buf = read_all(f, &n);
        return check(buf, n, argc > 3 ? argv[3] : NULL);
    }
    const char *send_text = SPANPROF_LIVE_REQUEST;
    int quiet = 0, no_read = 0, raw = 0;
    if (argc >= 4 && strcmp(argv[1], "-s") == 0) {
        static char text[1 << 16];
        size_t k = 0;
        for (const char *s = argv[2]; *s && k < sizeof text - 1; s++)
            text[k++] = s[0] == '\\' && s[1] == 'n' ? (s++, '\n') : s[0] == '\\' && s[1] == '\\' ? (s++, '\\') : *s;
        text[k] = 0;
        send_text = text;
        raw = 1;
        argv += 2, argc -= 2;
    } else if (argc >= 4 && strcmp(argv[1], "-r") == 0) {
        static char line[SPANPROF_LIVE_REQUEST_MAX + 2];
        snprintf(line, sizeof line, "%s\n", argv[2]);
        send_text = line;
        argv += 2, argc -= 2;
    } else if (argc >= 3 && (strcmp(argv[1], "-q") == 0 || strcmp(argv[1], "-c") == 0)) {
        quiet = argv[1][1] == 'q';
        no_read = argv[1][1] == 'c';
        raw = quiet;
        argv++, argc--;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: liveget [-r WORD|-s TEXT|-q|-c] SOCKET [OUT] | liveget -f FILE [OUT]\n");
        return 2;
    }
    int fd = connect_to(argv[1]);
    if (!quiet && send(fd, send_text, strlen(send_text), MSG_NOSIGNAL) < 0)
        printf("send: %s\n", strerror(errno));
    if (no_read) {
        close(fd);
        printf("closed\n");
        return 0;
    }
    FILE *f = fdopen(fd, "r");
    char *buf = read_all(f, &n);
    if (raw) {
        if (n > 16 && memcmp(buf, SPANPROF_LIVE_MAGIC, strlen(SPANPROF_LIVE_MAGIC)) == 0)
            return check(buf, n, NULL);
        printf("answer: %.*s%s", (int)n, buf, n && buf[n - 1] == '\n' ? "" : "(closed)\n");
        return 0;
    }
    return check(buf, n, argc > 2 ? argv[2] : NULL);
}
