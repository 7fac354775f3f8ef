/* spans.c — `spanprof spans PID [on|off GLOB...]`: lists the spans a running process has patch
 * points for, with their states, and switches them on or off while it runs.
 *
 * The process records with SPANPROF_LIVE=DIR, so its runtime answers on DIR/PID.sock
 * (live/protocol.h: the requests "sites" and "switch on|off GLOBS", the answer "spanprof-sites 1"
 * with a line per span).  This reads DIR from /proc/PID/environ (a relative DIR is taken from
 * /proc/PID/cwd, as the runtime took it from its working directory at start), sends one request,
 * and prints the answer as a table.  A process that wrote over its environment (a server
 * retitling itself) is found by its listening sockets instead (lib/procsock.c).
 *
 * Only the caller's own processes, and root's, are asked, so that no other user's spans are
 * shown or switched: a process of another user is refused before anything of it is read (its
 * user, from /proc/PID/status), and the socket is asked only when the process listening on it
 * runs as the caller or root (SO_PEERCRED, checked before the request is sent), as serve asks.
 * The socket is connected to through the file checked (O_PATH, no link followed), not by name
 * again, so a link or a file put in its place between the check and the connection is not
 * asked either.
 */
#define _GNU_SOURCE
#include "cmd/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live/protocol.h"

#define ANSWER_TIMEOUT_S 5.0
/* A whole-program build of a large project has tens of thousands of spans, about a hundred
 * bytes each in the answer: far below this, which only stops a peer that never ends. */
#define ANSWER_MAX ((size_t)64 << 20)

const char spans_usage[] = "usage: spanprof spans PID [on|off GLOB...]\n";

const char spans_help[] =
    "\n"
    "Lists the spans of the running process PID, which records with SPANPROF_LIVE=DIR,\n"
    "and their states; with on or off, switches the spans the GLOBs name (patterns as\n"
    "SPANPROF_SPANS takes them, `*` any characters) and lists those with their new\n"
    "states:\n"
    "  on        recording (or, not called yet, from its first call)\n"
    "  off       not recording (its patch points, if it has some, are no-ops)\n"
    "  stopping  switched off, waiting for the calls inside it to end\n"
    "Listed: the spans with patch points in the objects loaded (the plugin's default\n"
    "on x86-64 and arm64), and every other span called so far. DIR is read from\n"
    "/proc/PID/environ; the process answers on its socket DIR/PID.sock, and only\n"
    "processes of the caller's own user (or root's) are asked.\n"
    "\n"
    "Options:\n"
    "  -h, --help  show this text\n";

#define FAIL(...) (fprintf(stderr, "spanprof spans: " __VA_ARGS__), EXIT_BAD_INPUT)

/* TEXT (N bytes) with every control character as '?': names and words come from another
 * process and are printed to a terminal. */
static char *printable(const char *text, size_t n)
{
    char *s = xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        s[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
    s[n] = 0;
    return s;
}

static int other_user(long pid, uid_t uid)
{
    return FAIL("process %ld runs as uid %lu, not as you (uid %lu): only its own user can see or "
                "switch its spans\n", pid, (unsigned long)uid, (unsigned long)geteuid());
}

/* One line of a "spanprof-sites 1" answer, cut in place: 0, or -1 when it is not
 * STATE TAB NAME TAB FILE TAB LINE. */
static int site_line(char *line, char **state, char **name, char **file, char **lineno)
{
    char *field[4];
    field[0] = line;
    for (int i = 1; i < 4; i++) {
        char *tab = strchr(field[i - 1], '\t');
        if (!tab)
            return -1;
        *tab = 0;
        field[i] = tab + 1;
    }
    if (strchr(field[3], '\t') || !*field[1] || !*field[3] ||
        strspn(field[3], "0123456789") != strlen(field[3]))
        return -1;
    if (strcmp(field[0], "on") && strcmp(field[0], "off") && strcmp(field[0], "stopping"))
        return -1;
    *state = field[0];
    *name = field[1];
    *file = field[2];
    *lineno = field[3];
    return 0;
}

/* Prints ANSWER (LEN bytes, NUL-ended), process PID's answer, as a table: 0, or EXIT_BAD_INPUT
 * after a message. */
static int print_answer(long pid, char *answer, size_t len)
{
    static const char error[] = "error ";
    if (strncmp(answer, error, strlen(error)) == 0) {
        size_t n = strcspn(answer + strlen(error), "\n");
        char *words = printable(answer + strlen(error), n);
        /* a runtime that predates the requests of this command answers them so */
        int old = strcmp(words, "unknown request") == 0;
        fprintf(stderr, "spanprof spans: process %ld answered: %s%s\n", pid, words,
                old ? " (its runtime is older than switching spans: rebuild it with this "
                      "release's)" : "");
        free(words);
        return EXIT_BAD_INPUT;
    }
    size_t magic = strlen(SPANPROF_LIVE_SITES_MAGIC);
    if (len < magic || memcmp(answer, SPANPROF_LIVE_SITES_MAGIC, magic) != 0) {
        char *start = printable(answer, strcspn(answer, "\n") < 40 ? strcspn(answer, "\n") : 40);
        fprintf(stderr, "spanprof spans: process %ld gave a malformed answer: it starts '%s', not "
                        "'spanprof-sites 1' or 'error'\n", pid, start);
        free(start);
        return EXIT_BAD_INPUT;
    }
    struct table t;
    table_init(&t, 3, "lll");
    table_row(&t, xstrdup("state"), xstrdup("span"), xstrdup("file:line"));
    char *p = answer + magic, *end = answer + len;
    size_t lineno = 1;
    int ended = 0;
    while (p < end && !ended) {
        lineno++;
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || memchr(p, 0, (size_t)(nl - p)))
            break;                             /* cut short, or not text */
        *nl = 0;
        char *state, *name, *file, *line;
        if (strcmp(p, "end") == 0) {
            ended = 1;
        } else if (site_line(p, &state, &name, &file, &line) == 0) {
            char *where = *file ? xasprintf("%s:%s", file, line) : xasprintf("?:%s", line);
            table_row(&t, xstrdup(state), printable(name, strlen(name)),
                      printable(where, strlen(where)));
            free(where);
        } else {
            table_free(&t);
            return FAIL("process %ld gave a malformed answer: line %zu is not "
                        "STATE<tab>NAME<tab>FILE<tab>LINE\n", pid, lineno);
        }
        p = nl + 1;
    }
    if (!ended || p != end) {
        table_free(&t);
        return FAIL("process %ld gave a malformed answer: %s\n", pid,
                    ended ? "more after its 'end' line" : "no 'end' line (cut short)");
    }
    if (t.nrows == 1)
        printf("process %ld has no span to switch\n", pid);
    else
        table_print(&t, "");
    table_free(&t);
    return 0;
}

/* Asks process PID REQUEST and prints its answer: the tool's exit status. */
/* Whether PATH is the name the runtime of process *CTX bound its live socket to. */
static int is_bound_live_socket(const char *path, void *ctx)
{
    char base[64];
    snprintf(base, sizeof base, "/.%ld%s", *(const long *)ctx, SPANPROF_LIVE_SOCK_BOUND_SUFFIX);
    size_t n = strlen(path), b = strlen(base);
    return n > b && strcmp(path + n - b, base) == 0;
}

/* DIR of process PID's live socket (malloc'd), from the sockets it listens on, or NULL: for a
 * process whose environment no longer holds SPANPROF_LIVE (lib/procsock.c). */
static char *live_dir_of(long pid)
{
    char *bound = proc_listening_socket(pid, is_bound_live_socket, &pid);
    if (bound)
        *strrchr(bound, '/') = 0;
    return bound;
}

static int cmd_spans(long pid, const char *request)
{
    uid_t me = geteuid();
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%ld", pid);
    uid_t owner = proc_uid(pid);
    if (owner == (uid_t)-1)
        return access(proc, F_OK) != 0 ? FAIL("no process %ld\n", pid)
                                        : FAIL("cannot read '%s/status'\n", proc);
    if (owner != me && owner != 0)
        return other_user(pid, owner);
    static struct proc_env pe; /* static: still reachable at exit, after any return below */
    if (proc_env_read(pid, &pe) != 0) {
        if (errno == ENOENT)
            return FAIL("no process %ld\n", pid);
        if ((errno == EACCES || errno == EPERM) && owner != me)
            return other_user(pid, owner);
        return FAIL("cannot read '%s': %s\n", pe.failed, strerror(errno));
    }
    const char *mode = proc_env_value(&pe, "SPANPROF");
    if (mode && strcmp(mode, "0") == 0)
        return FAIL("process %ld runs with SPANPROF=0: it records nothing and has no socket\n", pid);
    const char *live = proc_env_value(&pe, "SPANPROF_LIVE");
    char *dir = live && *live ? proc_env_path(&pe, live) : live_dir_of(pid);
    if (!dir)
        return FAIL("process %ld does not run with SPANPROF_LIVE=DIR: switching spans needs its "
                    "socket\n", pid);
    char *path = xasprintf("%s/%ld%s", dir, pid, SPANPROF_LIVE_SOCK_SUFFIX);
    free(dir);
    int status = 0;
    struct stat st;
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
        status = FAIL("no socket '%s': process %ld has not recorded a span yet (its socket comes "
                      "with the first), or is not built with spanprof\n", path, pid);
    else if (fd < 0)
        status = FAIL("cannot open '%s': %s\n", path, strerror(errno));
    else if (fstat(fd, &st) != 0)
        status = FAIL("cannot read '%s': %s\n", path, strerror(errno));
    else if (S_ISLNK(st.st_mode))
        status = FAIL("'%s' is a symbolic link: not followed\n", path);
    else if (!S_ISSOCK(st.st_mode))
        status = FAIL("'%s' is not a socket\n", path);
    if (status) {
        if (fd >= 0)
            close(fd);
        free(path);
        return status;
    }

    char via[64];
    snprintf(via, sizeof via, "/proc/self/fd/%d", fd);
    uid_t peers[2] = {me, 0};
    struct unix_req r = {.path = via, .peers = peers, .npeers = 2};
    unix_requests(&r, 1, request, ANSWER_TIMEOUT_S, ANSWER_MAX);
    close(fd);
    switch (r.status) {
    case UNIX_REQ_OK:
        status = print_answer(pid, r.answer, r.len);
        break;
    case UNIX_REQ_GONE:
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            status = FAIL("process %ld ended before it answered\n", pid);
        else
            status = FAIL("nothing listens on '%s': left by an earlier process %ld, or its "
                          "runtime stopped answering\n", path, pid);
        break;
    case UNIX_REQ_TIMEOUT:
        status = FAIL("process %ld did not answer within %.0f s (stopped, or busy)\n", pid,
                      ANSWER_TIMEOUT_S);
        break;
    case UNIX_REQ_PEER:
        status = FAIL("'%s' is listened on by a process of uid %lu, not of you (uid %lu) or root: "
                      "not asked\n", path, (unsigned long)r.peer_uid, (unsigned long)me);
        break;
    default:
        status = FAIL("'%s': %s\n", path, r.err);
    }
    free(r.answer);
    free(path);
    return status;
}

int run_spans(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (ch != 'h')
            return tool_getopt_error(ch, argv);
        fputs(spans_usage, stdout);
        fputs(spans_help, stdout);
        return 0;
    }
    char **args = argv + optind;
    int nargs = argc - optind;
    if (nargs < 1)
        return tool_usage_error("%s", "spans needs a PID");
    long pid;
    if (tool_parse_pid(args[0], &pid) != 0)
        return tool_usage_error("'%s' is not a process id", args[0]);
    if (nargs == 1)
        return cmd_spans(pid, SPANPROF_LIVE_REQUEST_SITES);

    const char *prefix = !strcmp(args[1], "on")    ? SPANPROF_LIVE_REQUEST_SWITCH_ON
                         : !strcmp(args[1], "off") ? SPANPROF_LIVE_REQUEST_SWITCH_OFF
                                                   : NULL;
    if (!prefix)
        return tool_usage_error("'%s' is neither on nor off", args[1]);
    if (nargs == 2)
        return tool_usage_error("%s needs at least one GLOB", args[1]);
    /* One request for all the GLOBs, joined as SPANPROF_SPANS joins them: a comma inside one
     * would split it into two, a newline would end the request line early. */
    size_t len = strlen(prefix) + 1;
    for (int i = 2; i < nargs; i++) {
        if (!*args[i])
            return tool_usage_error("%s", "an empty GLOB names no span");
        if (strchr(args[i], '\n'))
            return tool_usage_error("%s", "a GLOB cannot hold a newline");
        if (strchr(args[i], ','))
            return tool_usage_error("GLOB '%s' holds a comma: give each glob as an argument of "
                                    "its own", args[i]);
        len += strlen(args[i]) + (i > 2);
    }
    if (len > SPANPROF_LIVE_REQUEST_MAX) {
        char *why = xasprintf("the GLOBs make a request of %zu bytes, over the %d a process takes "
                              "(SPANPROF_LIVE_REQUEST_MAX): switch them in several runs", len,
                              SPANPROF_LIVE_REQUEST_MAX);
        int rc = tool_usage_error("%s", why);
        free(why);
        return rc;
    }
    char *request = xmalloc(len + 1);
    strcpy(request, prefix);
    for (int i = 2; i < nargs; i++) {
        if (i > 2)
            strcat(request, ",");
        strcat(request, args[i]);
    }
    strcat(request, "\n");
    int status = cmd_spans(pid, request);
    free(request);
    return status;
}
