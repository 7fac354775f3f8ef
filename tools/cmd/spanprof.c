/* spanprof.c — the spanprof command-line tool: argument parsing, help texts and dispatch to the
 * commands, one file each beside this one (cmd/), which read and write profiles through
 * format/ and use the helpers of lib/.
 *
 * Exit status: 0 done, 1 an input could not be read or made no sense, 2 a bad command line
 * (with the command's usage on stderr). */
#include "cmd/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char general_usage[] =
    "usage: spanprof record [OPTIONS] [--] CMD [ARG...]\n"
    "       spanprof report [OPTIONS] [PROFILE|DIR...]\n"
    "       spanprof diff [OPTIONS] BEFORE AFTER\n"
    "       spanprof coz [OPTIONS] PROFILE.coz|PROFILE.jsonl PROFILE.json\n"
    "       spanprof merge -o OUT FILE...\n"
    "       spanprof view [-o OUT.html] PROFILE\n"
    "       spanprof convert [-o OUT] PROFILE\n"
    "       spanprof dump [--timeout SECONDS] [--flight] PID\n"
    "       spanprof spans PID [on|off GLOB...]\n"
    "       spanprof serve [OPTIONS] DIR\n"
    "       spanprof select [--budget PERCENT] [-o OUT] PROFILE.json\n"
    "       spanprof help [COMMAND]\n"
    "       spanprof --version\n";

static const char general_help[] =
    "\n"
    "Reads the profiles of a program built with spanprof (functions marked\n"
    "__attribute__((span))).\n"
    "\n"
    "Commands:\n"
    "  record   run a program and assemble the profiles of every process it starts:\n"
    "           merged profile, flame graph page and the top of the report\n"
    "  report   table of spans from the JSON profile (run with SPANPROF_JSON=PATH);\n"
    "           several profiles, or a directory of them, are merged first\n"
    "  diff     what changed between two runs, per span and per call\n"
    "  coz      coz's causal profile (profile.coz or profile.jsonl from\n"
    "           `coz run --- PROG`) per span\n"
    "  merge    one profile from many processes' JSON profiles or folded stacks\n"
    "  view     an HTML page showing folded stacks or a trace in speedscope\n"
    "  convert  a JSON profile or folded stacks as a pprof profile (go tool pprof)\n"
    "  dump     make a running program write its profile (SPANPROF_DUMP_SIGNAL)\n"
    "  spans    a running program's spans and their states; switch them on or off\n"
    "           while it runs (SPANPROF_LIVE)\n"
    "  serve    running programs' profiles (SPANPROF_LIVE) as Prometheus metrics\n"
    "           and pprof profiles over HTTP, or pushed to Pyroscope\n"
    "  select   the plugin's exclude list from a profile recorded with a cost\n"
    "           budget (SPANPROF_BUDGET): the spans it switched off, or would\n"
    "  help     this text, or a command's: spanprof help COMMAND\n"
    "\n"
    "Options:\n"
    "  -h, --help     show this text\n"
    "  -V, --version  show the version\n";

static const char report_usage[] =
    "usage: spanprof report [--sort=self|total|calls|cpu|name] [--limit N] [PROFILE|DIR...]\n";

static const char report_help[] =
    "\n"
    "Prints the run information and one line per span of a JSON profile: calls, total\n"
    "(inclusive) time, self time, mean time per call (total/calls) and the span's share\n"
    "of all spans' self time. Spans that share a name are kept apart by file:line.\n"
    "Progress points are listed when the profile has them.\n"
    "\n"
    "A directory of flight-recorder captures (SPANPROF_SLOW_DIR) is listed: when,\n"
    "span, duration, pid and file of each, and the slow call's slowest descendants;\n"
    "a `spanprof record --slow` directory lists its captures after the report.\n"
    "Given several profiles, or a directory (every JSON profile in it), it reports\n"
    "their merge, as `spanprof merge` would write it: the processes' spans summed.\n"
    "A `spanprof record` directory is read as its merged profile. Folded stacks\n"
    "(SPANPROF_FOLDED) give each frame's self and total time, without calls.\n"
    "With no PROFILE it reads what a run wrote here: spanprof.out/, else\n"
    "spanprof.json, else spanprof.folded.\n"
    "\n"
    "With CPU time in the profile (SPANPROF=sample, SPANPROF_CPU=1) a cpu column shows\n"
    "each span's, and the spans whose CPU time is under a tenth of their wall time\n"
    "are named as mostly waiting.\n"
    "\n"
    "Options:\n"
    "  --sort=KEY   self (default), total, calls, cpu: largest first; name: A to Z\n"
    "  --limit N    show the first N spans only (0: all)\n"
    "  -h, --help   show this text\n";

static const char coz_usage[] =
    "usage: spanprof coz [--progress NAME] [--latency NAME|all] [--sort=100|max|name]\n"
    "                    PROFILE.coz|PROFILE.jsonl PROFILE.json\n";

static const char coz_help[] =
    "\n"
    "Summarises coz's causal profile per span. It reads both formats coz writes:\n"
    "text records (profile.coz) and JSON Lines (profile.jsonl, coz's default since\n"
    "2026), told apart by their content. Each coz experiment virtually sped up\n"
    "one source line; it is given to the span whose function holds that line (the\n"
    "JSON profile of the same program gives each span's file and lines; files match\n"
    "by full path, else path suffix, else basename; the narrowest span wins). Lines\n"
    "in no span form \"(outside spans)\".\n"
    "\n"
    "For each span and virtual speedup (coz's speedups go to the nearest of 10%, 25%,\n"
    "50%, 100%; 0.75 to 50%), it prints the change coz predicts, computed as coz's\n"
    "plot does from the pooled experiments, against the span's own speedup-0\n"
    "experiments (\"base\"; if it has none, all speedup-0 experiments: \"all n=K\"):\n"
    "  throughput point  change of the progress rate: (P0 - P) / P0, P = duration/delta\n"
    "  latency point     change of mean latency (Little's law: difference divided by\n"
    "                    arrivals/duration): (L - L0) / L0, negative is shorter\n"
    "Each figure shows the number of experiments behind it: +12.3% (n=6). A cell\n"
    "with fewer than 5 experiments, or whose baseline has fewer, shows its count\n"
    "only (n=3) and does not rank its span; the last line says how many experiments\n"
    "(how much longer a run) the leading span needs for every cell to have 5.\n"
    "\n"
    "Options:\n"
    "  --progress NAME  throughput point to use (default: the first in the file)\n"
    "  --latency NAME   the table of this latency point; all: of every one (default:\n"
    "                   their names only, after the throughput table)\n"
    "  --sort=KEY       100 (default): largest gain at 100% first; max: largest gain\n"
    "                   at any speedup first; name: A to Z\n"
    "  -h, --help       show this text\n";

static const char merge_usage[] = "usage: spanprof merge -o OUT FILE...\n";

static const char merge_help[] =
    "\n"
    "Merges the profiles of many processes (a test suite's runs, one file each with\n"
    "%p in SPANPROF_JSON, SPANPROF_FOLDED or SPANPROF_PPROF) into OUT, all inputs\n"
    "of one kind:\n"
    "  JSON profiles  spans matched by name, file and line: calls, times and\n"
    "                 resource counts summed, maxima kept, percentiles left out;\n"
    "                 \"processes\" lists each process's run information\n"
    "  folded stacks  values of the same stack summed\n"
    "  pprof          (gzip'd profile.proto, SPANPROF_PPROF) values summed per stack\n"
    "                 (functions matched by name, file and first line) and thread\n"
    "                 label; durations summed; sample types and period must agree\n"
    "The kind is read from each file's content; mixing kinds is an error.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT  the merged file (\"-\": standard output)\n"
    "  -h, --help        show this text\n";

static const char view_usage[] = "usage: spanprof view [-o OUT.html] [--unit=ns|bytes|calls] PROFILE\n";

static const char view_help[] =
    "\n"
    "Writes one self-contained HTML page that shows PROFILE in speedscope, offline:\n"
    "folded stacks (SPANPROF_FOLDED) as a flame graph (speedscope's left-heavy view,\n"
    "values in ns shown as ms and µs), or a trace (SPANPROF_TRACE) as a timeline per\n"
    "thread, opened on the busiest thread (the most time inside spans), or, for a\n"
    "flight-recorder capture, on the slow call, marked \"(slow call, the capture's\n"
    "trigger)\"; the others are in the thread list at the top. PROFILE may be a run\n"
    "directory of `spanprof record`: its profile.folded, into its flamegraph.html.\n"
    "Prints the page's path; open it in a browser. Add #view=time-ordered,\n"
    "#view=left-heavy or #view=sandwich to its URL to start in another view.\n"
    "speedscope's files come from `make` (with npm) or `make install`;\n"
    "SPANPROF_SPEEDSCOPE_DIR overrides where they are read from.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT.html  where to write the page (default: PROFILE.html)\n"
    "  --unit=ns|bytes|calls  what folded stacks' values are: nanoseconds (the\n"
    "                         default: SPANPROF_FOLDED), bytes (the memory flame\n"
    "                         graph, SPANPROF_ALLOC_FOLDED) or calls (SPANPROF=count)\n"
    "  -h, --help             show this text\n";

static const char dump_usage[] = "usage: spanprof dump [--timeout SECONDS] [--flight] PID\n";

static const char dump_help[] =
    "\n"
    "Makes the running process PID, started with SPANPROF_DUMP_SIGNAL=SIG, write its\n"
    "profile so far: reads the signal and the output paths from /proc/PID/environ,\n"
    "sends the signal, waits until every output file has been replaced and prints\n"
    "their paths. The process runs on.\n"
    "\n"
    "Options:\n"
    "  --timeout SECONDS  how long to wait for the files (default: 10)\n"
    "  --flight           a flight-recorder capture instead (the process runs with\n"
    "                     SPANPROF_FLIGHT): every thread's last SPANPROF_FLIGHT seconds\n"
    "                     into SPANPROF_SLOW_DIR as request.PID.TIME.trace.json, whose\n"
    "                     path is printed\n"
    "  -h, --help         show this text\n";

static const char help_usage[] = "usage: spanprof help [COMMAND]\n";

static const char help_help[] =
    "\n"
    "Shows the list of commands, or COMMAND's usage, what it does, its options and its\n"
    "exit status (the same text as `spanprof COMMAND --help`).\n"
    "\n"
    "Exit status: 0; 2 for a command that does not exist.\n";

struct command {
    const char *name, *usage, *help;
    int (*run)(int argc, char **argv); /* NULL for help, which main answers */
};

static const struct command *current;

int tool_usage_error(const char *fmt, const char *arg)
{
    fputs("spanprof: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fputs(current ? current->usage : general_usage, stderr);
    fprintf(stderr, "Try 'spanprof help%s%s' for more information.\n", current ? " " : "",
            current ? current->name : "");
    return EXIT_USAGE;
}

int tool_parse_limit(const char *text, long *limit)
{
    char *end;
    errno = 0;
    *limit = strtol(text, &end, 10);
    return !*text || *end || *limit < 0 || errno ? -1 : 0;
}

int tool_parse_pid(const char *text, long *pid)
{
    /* digits only: strtol alone would take "+12" or " 12" */
    if (!*text || strspn(text, "0123456789") != strlen(text))
        return -1;
    errno = 0;
    *pid = strtol(text, NULL, 10);
    return errno || *pid <= 0 || *pid > INT_MAX /* pid_t */ ? -1 : 0;
}

static int show_help(const struct command *c)
{
    fputs(c ? c->usage : general_usage, stdout);
    fputs(c ? c->help : general_help, stdout);
    return 0;
}

/* Reports getopt's complaint in our words; ':' leads optstrings so a missing value is told apart. */
int tool_getopt_error(int ch, char **argv)
{
    const char *opt = argv[optind - 1];
    if (ch == ':')
        return tool_usage_error("option '%s' needs a value", opt);
    if (optopt && strncmp(opt, "--", 2)) {
        char buf[3] = { '-', (char)optopt, 0 };
        return tool_usage_error("unknown option '%s'", buf);
    }
    return tool_usage_error("unknown option '%s'", opt);
}

static int run_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "sort", required_argument, NULL, 's' },
        { "limit", required_argument, NULL, 'n' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    enum report_sort sort = SORT_SELF;
    long limit = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 's':
            if (!strcmp(optarg, "self"))
                sort = SORT_SELF;
            else if (!strcmp(optarg, "total"))
                sort = SORT_TOTAL;
            else if (!strcmp(optarg, "calls"))
                sort = SORT_CALLS;
            else if (!strcmp(optarg, "name"))
                sort = SORT_NAME;
            else if (!strcmp(optarg, "cpu"))
                sort = SORT_CPU;
            else
                return tool_usage_error("--sort must be self, total, calls, cpu or name, not '%s'", optarg);
            break;
        case 'n':
            if (tool_parse_limit(optarg, &limit))
                return tool_usage_error("--limit needs a number of spans, not '%s'", optarg);
            break;
        case 'h':
            return show_help(current);
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    /* A directory of flight-recorder captures (SPANPROF_SLOW_DIR): listed. */
    if (argc - optind == 1 && slow_is_capture_dir(argv[optind]))
        return cmd_slow_list(argv[optind], 1);
    if (argc - optind >= 1) {
        int rc = report_files(argv + optind, (size_t)(argc - optind), sort, limit);
        /* A `spanprof record --slow` directory: its captures after the report. */
        char *slow = argc - optind == 1 ? xasprintf("%s/slow", argv[optind]) : NULL;
        struct stat st;
        if (rc == 0 && slow && stat(slow, &st) == 0 && S_ISDIR(st.st_mode)) {
            putchar('\n');
            cmd_slow_list(slow, 1);
        }
        free(slow);
        return rc;
    }
    /* What a run wrote here: `spanprof record`'s directory, else the runtime's files. */
    static char *const defaults[] = { "spanprof.out", "spanprof.json", "spanprof.folded" };
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
        if (access(defaults[i], F_OK) == 0)
            return report_files(&defaults[i], 1, sort, limit);
    return tool_usage_error("%s", "report needs a PROFILE (none of spanprof.out/, spanprof.json, "
                             "spanprof.folded is here)");
}

static int run_coz(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "progress", required_argument, NULL, 'p' },
        { "latency", required_argument, NULL, 'l' },
        { "sort", required_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct causal_opts o = { NULL, NULL, CSORT_AT100 };
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            o.progress = optarg;
            break;
        case 'l':
            o.latency = optarg;
            break;
        case 's':
            if (!strcmp(optarg, "100"))
                o.sort = CSORT_AT100;
            else if (!strcmp(optarg, "max"))
                o.sort = CSORT_MAX;
            else if (!strcmp(optarg, "name"))
                o.sort = CSORT_NAME;
            else
                return tool_usage_error("--sort must be 100, max or name, not '%s'", optarg);
            break;
        case 'h':
            return show_help(current);
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    if (argc - optind != 2)
        return tool_usage_error("%s", "coz needs a PROFILE.coz and a PROFILE.json");
    struct coz_profile c;
    struct sp_profile p;
    /* Read both before printing anything, so a bad input gives only its error. */
    if (coz_profile_load(argv[optind], &c) || sp_profile_load(argv[optind + 1], &p))
        return EXIT_BAD_INPUT;
    return cmd_causal(&c, &p, &o);
}

/* The options of the commands that take only -o/--output and -h/--help: OUT gets -o's value.
 * Returns -1 to go on, else the exit status (after --help or a usage error). */
static int output_options(int argc, char **argv, const char **out)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int ch;
    while ((ch = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o':
            *out = optarg;
            break;
        case 'h':
            return show_help(current);
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    return -1;
}

static int run_merge(int argc, char **argv)
{
    const char *out = NULL;
    int status = output_options(argc, argv, &out);
    if (status >= 0)
        return status;
    if (!out)
        return tool_usage_error("%s", "merge needs -o OUT");
    if (argc - optind < 1)
        return tool_usage_error("%s", "merge needs at least one FILE");
    return cmd_merge(out, argv + optind, (size_t)(argc - optind));
}

static int run_view(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "unit", required_argument, NULL, 'u' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *out = NULL, *unit = "nanoseconds";
    int ch;
    while ((ch = getopt_long(argc, argv, ":ho:u:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o':
            out = optarg;
            break;
        case 'u':
            /* speedscope's names for them */
            if (!strcmp(optarg, "ns"))
                unit = "nanoseconds";
            else if (!strcmp(optarg, "bytes"))
                unit = "bytes";
            else if (!strcmp(optarg, "calls"))
                unit = "none";
            else
                return tool_usage_error("--unit must be ns, bytes or calls, not '%s'", optarg);
            break;
        case 'h':
            return show_help(current);
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    if (argc - optind != 1)
        return tool_usage_error("%s", argc - optind < 1 ? "view needs a PROFILE" : "view takes one PROFILE");
    return cmd_view(argv[optind], out, unit);
}

static int run_dump(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "timeout", required_argument, NULL, 't' },
        { "flight", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    double timeout = 10;
    int flight = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 't': {
            char *end;
            timeout = strtod(optarg, &end);
            if (!*optarg || *end || !(timeout > 0))
                return tool_usage_error("--timeout must be a number of seconds > 0, not '%s'", optarg);
            break;
        }
        case 'f':
            flight = 1;
            break;
        case 'h':
            return show_help(current);
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    if (argc - optind != 1)
        return tool_usage_error("%s", argc - optind < 1 ? "dump needs a PID" : "dump takes one PID");
    const char *pid = argv[optind];
    long checked;
    if (tool_parse_pid(pid, &checked) != 0)
        return tool_usage_error("'%s' is not a process id", pid);
    return cmd_dump(pid, timeout, flight);
}

static const struct command commands[] = {
    { "record", record_usage, record_help, run_record },
    { "report", report_usage, report_help, run_report },
    { "diff", diff_usage, diff_help, run_diff },
    { "coz", coz_usage, coz_help, run_coz },
    { "merge", merge_usage, merge_help, run_merge },
    { "view", view_usage, view_help, run_view },
    { "convert", convert_usage, convert_help, run_convert },
    { "dump", dump_usage, dump_help, run_dump },
    { "spans", spans_usage, spans_help, run_spans },
    { "serve", serve_usage, serve_help, run_serve },
    { "select", select_usage, select_help, run_select },
    { "help", help_usage, help_help, NULL },
};

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* A standard stream the caller closed (`2>&-`) gets /dev/null, close-on-exec: otherwise the
 * first file the tool opens takes its number, and a message meant for stderr lands in it (or
 * in record's run directory, whose descriptor took fd 2).  Close-on-exec, so the command record
 * runs still finds the stream closed, as its caller left it. */
static void keep_standard_streams_open(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
            open("/dev/null", O_RDWR | O_CLOEXEC); /* the lowest free number: FD */
}

int main(int argc, char **argv)
{
    keep_standard_streams_open();
    opterr = 0;      /* tool_getopt_error() words the complaints */
    if (argc < 2)
        return tool_usage_error("%s", "no command given");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        puts("spanprof " SPANPROF_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        return show_help(NULL);
    if (!strcmp(cmd, "help")) {
        if (argc == 2)
            return show_help(NULL);
        const struct command *c = find_command(argv[2]);
        if (!c)
            return tool_usage_error("unknown command '%s'", argv[2]);
        if (argc > 3) {
            current = c;
            return tool_usage_error("%s", "help takes one COMMAND");
        }
        return show_help(c);
    }
    if (cmd[0] == '-')
        return tool_usage_error("unknown option '%s'", cmd);
    current = find_command(cmd);
    if (!current)
        return tool_usage_error("unknown command '%s'", cmd);
    /* The command sees its own name as argv[0], so getopt starts after it. */
    return current->run(argc - 1, argv + 1);
}
