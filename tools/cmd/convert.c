/* convert.c — `spanprof convert`: turns a JSON profile (SPANPROF_JSON) or folded stacks
 * (SPANPROF_FOLDED) into a pprof profile (gzip-compressed profile.proto) for `go tool pprof`,
 * Pyroscope, Parca or Grafana, through the shared encoder in pprof/.
 *
 * What each input can give:
 *   JSON profile   one sample per span, its stack the span alone (the JSON has no stacks):
 *                  calls/count, wall/nanoseconds (self time, so the samples add up to the time
 *                  in spans; left out when the run only counted: "clock": "none"), with
 *                  SPANPROF=sample ("mode": "sample") the sampled wall and cpu/nanoseconds
 *                  (self), cpu/nanoseconds too when the spans carry cpu_self_ns
 *                  (SPANPROF_CPU=1), and
 *                  alloc_objects/count, alloc_space/bytes (self) when the spans carry
 *                  allocation fields.  Functions get the span's file and first line; the
 *                  duration and start come from wall_ns and start_time.
 *   folded stacks  one sample per stack with its one value: wall/nanoseconds, or calls/count
 *                  with --calls (a file from SPANPROF=count).  Frames written with
 *                  SPANPROF_FILE_LINE=1 ("name (file:line)") give functions their file and
 *                  line; --threads turns the first frame (SPANPROF_THREADS=1) into the
 *                  sample's thread label.  The file has no duration or start time.
 * Every value is exact, so the period is 1 of the first sample type.
 */
#define _GNU_SOURCE
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pprof.h"

const char convert_usage[] = "usage: spanprof convert [-o OUT] [--calls] [--threads] PROFILE\n";

const char convert_help[] =
    "\n"
    "Writes PROFILE, a JSON profile (SPANPROF_JSON) or folded stacks (SPANPROF_FOLDED),\n"
    "as a pprof profile (gzip-compressed profile.proto) for `go tool pprof`, Pyroscope,\n"
    "Parca or Grafana, and prints its path.\n"
    "\n"
    "From a JSON profile: one sample per span (the JSON has no stacks) with calls/count,\n"
    "wall/nanoseconds (self time) and, with allocation tracking, alloc_objects/count and\n"
    "alloc_space/bytes; duration and start time from the run information.\n"
    "From folded stacks: one sample per stack with the file's one value, as\n"
    "wall/nanoseconds (or calls/count with --calls); no duration.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT  where to write (default: PROFILE.pb.gz)\n"
    "      --calls       folded values are call counts (written with SPANPROF=count)\n"
    "      --threads     the first folded frame is the thread (SPANPROF_THREADS=1):\n"
    "                    make it a \"thread\" label\n"
    "  -h, --help        show this text\n";

/* What convert collects before handing it to the encoder. */
struct conv {
    struct spanprof__pprof_type types[5]; /* calls, wall, cpu, alloc_objects, alloc_space */
    size_t ntypes;
    struct spanprof__pprof_frame *frames; /* every sample's stack, one after the other */
    size_t nframes, frames_cap;
    struct sample {
        size_t first, depth;              /* in frames */
        int64_t values[5];
        const char *thread;
    } *samples;
    size_t nsamples, samples_cap;
    int64_t duration_ns, time_ns;
    const char *program;
    char **owned;                         /* strings to free at the end */
    size_t nowned, owned_cap;
};

static char *keep(struct conv *c, char *s)
{
    if (c->nowned == c->owned_cap) {
        c->owned_cap = c->owned_cap ? c->owned_cap * 2 : 64;
        c->owned = xrealloc(c->owned, c->owned_cap * sizeof *c->owned);
    }
    return c->owned[c->nowned++] = s;
}

static void add_frame(struct conv *c, const char *name, const char *file, int64_t line)
{
    if (c->nframes == c->frames_cap) {
        c->frames_cap = c->frames_cap ? c->frames_cap * 2 : 256;
        c->frames = xrealloc(c->frames, c->frames_cap * sizeof *c->frames);
    }
    c->frames[c->nframes++] = (struct spanprof__pprof_frame){name, file, line};
}

static struct sample *add_sample(struct conv *c, size_t first, const char *thread)
{
    if (c->nsamples == c->samples_cap) {
        c->samples_cap = c->samples_cap ? c->samples_cap * 2 : 256;
        c->samples = xrealloc(c->samples, c->samples_cap * sizeof *c->samples);
    }
    struct sample *s = &c->samples[c->nsamples++];
    memset(s, 0, sizeof *s);
    s->first = first;
    s->depth = c->nframes - first;
    s->thread = thread;
    return s;
}

/* ---- JSON profile ---- */

/* O's member KEY, a count or a time, into *OUT as pprof holds it (int64): 1, 0 (and *OUT 0) when
 * O has none, or -1 after a message naming PATH and KEY (jsonfield.c) when it is no such number. */
static int json_value(const char *path, json_object *o, const char *key, int64_t *out)
{
    uint64_t v = 0;
    int found = jf_u64(path, o, key, &v);
    if (found == 1 && v > INT64_MAX)
        return jf_invalid(path, key, "a whole number pprof holds (at most 2^63-1)");
    *out = (int64_t)v;
    return found;
}

/* O's member KEY when it is a string, else NULL (after a message when it is of another type). */
static const char *json_str(const char *path, json_object *o, const char *key)
{
    const char *v = NULL;
    jf_string(path, o, key, &v);
    return v;
}

/* "2026-11-22T10:00:00.123Z" as ns since the epoch into *NS (0 when S is NULL or does not
 * parse: unknown); -1 when it parses but lies outside what 64-bit nanoseconds hold (the years
 * 1678 to 2262). */
static int parse_start(const char *s, int64_t *ns)
{
    struct tm tm = {0};
    const char *rest = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    *ns = 0;
    if (!rest)
        return 0;
    errno = 0;
    time_t sec = timegm(&tm);
    int64_t frac = 0, scale = 100000000;
    if (*rest == '.')
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, scale /= 10)
            frac += (*rest - '0') * scale;
    if (*rest != 'Z')
        return 0;
    if ((sec == (time_t)-1 && errno) || sec > (INT64_MAX - frac) / 1000000000 ||
        sec < INT64_MIN / 1000000000)
        return -1;
    *ns = (int64_t)sec * 1000000000 + frac;
    return 0;
}

/* The whole of PATH parsed, or NULL after saying what is wrong and where. */
static json_object *parse_json_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    json_tokener *tok = json_tokener_new();
    json_object *root = NULL;
    enum json_tokener_error jerr = json_tokener_continue;
    size_t offset = 0;
    char buf[65536];
    size_t n;
    while (!root && (jerr == json_tokener_continue) && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        root = json_tokener_parse_ex(tok, buf, (int)n);
        jerr = json_tokener_get_error(tok);
        if (jerr != json_tokener_continue && jerr != json_tokener_success)
            offset += json_tokener_get_parse_end(tok);
        else
            offset += n;
    }
    int bad_read = ferror(f);
    fclose(f);
    json_tokener_free(tok);
    if (bad_read) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(EIO));
        json_object_put(root);
        return NULL;
    }
    if (!root || jerr != json_tokener_success) {
        if (jerr == json_tokener_continue || jerr == json_tokener_success)
            fprintf(stderr, "spanprof: '%s' is not a JSON profile: unexpected end of file\n", path);
        else
            fprintf(stderr, "spanprof: '%s' is not a JSON profile: %s at byte %zu\n", path,
                    json_tokener_error_desc(jerr), offset);
        json_object_put(root);
        return NULL;
    }
    return root;
}

static int load_json(const char *path, struct conv *c)
{
    json_object *root = parse_json_file(path);
    if (!root)
        return -1;
    json_object *spans;
    if (!json_object_object_get_ex(root, "spans", &spans) || !json_object_is_type(spans, json_type_array)) {
        json_object *events;
        int trace = json_object_is_type(root, json_type_array) ||
                    json_object_object_get_ex(root, "traceEvents", &events);
        fprintf(stderr, "spanprof: '%s' %s: convert reads a JSON profile (SPANPROF_JSON) or folded "
                        "stacks (SPANPROF_FOLDED)\n",
                path, trace ? "is a trace" : "has no \"spans\" array");
        json_object_put(root);
        return -1;
    }
    /* No clock: a count-mode run, calls only; but SPANPROF=sample's times are sampled ones. */
    const char *clock = json_str(path, root, "clock"), *mode = json_str(path, root, "mode");
    int timed = !clock || strcmp(clock, "none") != 0 || (mode && strcmp(mode, "sample") == 0);
    int sampled = mode && strcmp(mode, "sample") == 0;
    size_t n = json_object_array_length(spans);
    int allocs = 0, cpu = sampled; /* SPANPROF_CPU=1's spans have cpu_self_ns too */
    int64_t value;
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_array_get_idx(spans, i);
        int has_allocs = json_value(path, s, "allocs", &value);
        int has_cpu = json_value(path, s, "cpu_self_ns", &value);
        if (has_allocs < 0 || has_cpu < 0)
            goto fail;
        allocs |= has_allocs;
        cpu |= has_cpu;
    }
    c->types[c->ntypes++] = (struct spanprof__pprof_type){"calls", "count"};
    if (timed)
        c->types[c->ntypes++] = (struct spanprof__pprof_type){"wall", "nanoseconds"};
    if (cpu)
        c->types[c->ntypes++] = (struct spanprof__pprof_type){"cpu", "nanoseconds"};
    if (allocs) {
        c->types[c->ntypes++] = (struct spanprof__pprof_type){"alloc_objects", "count"};
        c->types[c->ntypes++] = (struct spanprof__pprof_type){"alloc_space", "bytes"};
    }
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_array_get_idx(spans, i);
        const char *name = json_str(path, s, "name");
        int64_t calls = 0, line = 0;
        int has_calls = json_value(path, s, "calls", &calls);
        if (has_calls < 0)
            goto fail;
        if (!name || !has_calls) {
            fprintf(stderr, "spanprof: '%s': span %zu has no %s\n", path, i + 1,
                    name ? "\"calls\" number" : "\"name\" string");
            goto fail;
        }
        const char *file = json_str(path, s, "file");
        if (json_value(path, s, "line", &line) < 0)
            goto fail;
        size_t first = c->nframes;
        add_frame(c, keep(c, xstrdup(name)), file ? keep(c, xstrdup(file)) : NULL, line);
        struct sample *smp = add_sample(c, first, NULL);
        static const char *const per_span[] = {"self_ns", "cpu_self_ns", "allocs", "alloc_bytes"};
        int kept[] = {timed, cpu, allocs, allocs};
        size_t k = 0;
        smp->values[k++] = calls;
        for (size_t x = 0; x < sizeof per_span / sizeof *per_span; x++) {
            if (!kept[x])
                continue;
            if (json_value(path, s, per_span[x], &smp->values[k++]) < 0)
                goto fail;
        }
    }
    if (json_value(path, root, "wall_ns", &c->duration_ns) < 0)
        goto fail;
    const char *start = json_str(path, root, "start_time");
    if (parse_start(start, &c->time_ns)) {
        fprintf(stderr, "spanprof: '%s': start_time '%s' is outside the years 1678 to 2262, which "
                        "pprof's nanosecond time cannot hold\n",
                path, start);
        goto fail;
    }
    const char *program = json_str(path, root, "program");
    c->program = program ? keep(c, xstrdup(program)) : NULL;
    json_object_put(root);
    return 0;
fail:
    json_object_put(root);
    return -1;
}

/* ---- folded stacks ---- */

/* Splits "name (file:line)" (SPANPROF_FILE_LINE=1) in place; other frames are names only. */
static void add_folded_frame(struct conv *c, char *frame)
{
    size_t len = strlen(frame);
    char *open = len > 4 && frame[len - 1] == ')' ? strrchr(frame, '(') : NULL;
    char *colon = open ? strrchr(open, ':') : NULL;
    if (open && open > frame && open[-1] == ' ' && colon && colon[1] != ')') {
        char *end;
        long line = strtol(colon + 1, &end, 10);
        if (end == frame + len - 1 && line >= 0) {
            open[-1] = 0;
            *colon = 0;
            add_frame(c, frame, open + 1, line);
            return;
        }
    }
    add_frame(c, frame, NULL, 0);
}

static int load_folded(const char *path, FILE *in, struct conv *c, int calls, int threads)
{
    c->types[c->ntypes++] = calls ? (struct spanprof__pprof_type){"calls", "count"}
                                  : (struct spanprof__pprof_type){"wall", "nanoseconds"};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    while ((len = getline(&line, &cap, in)) >= 0) {
        lineno++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (!len)
            continue;
        char *sp = strrchr(line, ' ');
        char *end = NULL;
        errno = 0;
        long long v = sp && sp[1] >= '0' && sp[1] <= '9' ? strtoll(sp + 1, &end, 10) : -1;
        if (v < 0 || *end || errno || sp == line) {
            for (char *p = line; *p; p++) /* quoted back: keep the terminal sane */
                if ((unsigned char)*p < ' ' || *p == 0x7f)
                    *p = '?';
            fprintf(stderr, "spanprof: '%s' line %ld is not folded stacks (\"a;b;c 123\"): '%.60s'\n",
                    path, lineno, line);
            free(line);
            return -1;
        }
        *sp = 0;
        char *stack = keep(c, xstrdup(line));
        const char *thread = NULL;
        size_t first = c->nframes;
        char *save = NULL;
        for (char *f = strtok_r(stack, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
            if (threads && !thread && c->nframes == first)
                thread = f;
            else
                add_folded_frame(c, f);
        }
        struct sample *s = add_sample(c, first, thread);
        s->values[0] = v;
    }
    int bad = ferror(in);
    free(line);
    if (bad) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno ? errno : EIO));
        return -1;
    }
    if (c->nsamples == 0) {
        fprintf(stderr, "spanprof: '%s' is empty: nothing to convert\n", path);
        return -1;
    }
    return 0;
}

/* ---- the command ---- */

static int write_pprof(const char *out, struct conv *c)
{
    struct spanprof__pprof_sample *s = xmalloc((c->nsamples ? c->nsamples : 1) * sizeof *s);
    for (size_t i = 0; i < c->nsamples; i++)
        s[i] = (struct spanprof__pprof_sample){c->frames + c->samples[i].first, c->samples[i].depth,
                                               c->samples[i].values, c->samples[i].thread};
    struct spanprof__pprof_model m = {
        .types = c->types,
        .ntypes = c->ntypes,
        .samples = s,
        .nsamples = c->nsamples,
        .period_type = c->types[0],
        .period = 1,
        .duration_ns = c->duration_ns,
        .time_ns = c->time_ns,
        .program = c->program,
    };
    struct tool_output o;
    FILE *f = output_open(&o, out);
    if (!f) {
        free(s);
        return EXIT_BAD_INPUT;
    }
    errno = 0;
    int rc = spanprof__pprof_write(f, &m);
    free(s);
    if (output_close(&o, rc != 0))
        return EXIT_BAD_INPUT;
    puts(out);
    return 0;
}

int run_convert(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "calls", no_argument, NULL, 'c' },
        { "threads", no_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *out = NULL;
    int calls = 0, threads = 0, ch;
    while ((ch = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o':
            out = optarg;
            break;
        case 'c':
            calls = 1;
            break;
        case 't':
            threads = 1;
            break;
        case 'h':
            fputs(convert_usage, stdout);
            fputs(convert_help, stdout);
            return 0;
        default:
            return tool_getopt_error(ch, argv);
        }
    }
    if (argc - optind != 1)
        return tool_usage_error("%s", argc - optind < 1 ? "convert needs a PROFILE" : "convert takes one PROFILE");
    const char *path = argv[optind];
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    /* JSON starts with '{' (or '[' for a trace) after any blank space; gzip with 1f 8b. */
    int first = getc(in);
    if (first == 0x1f && getc(in) == 0x8b) {
        fclose(in);
        fprintf(stderr, "spanprof: '%s' is gzip-compressed (a pprof file already?): convert reads "
                        "a JSON profile (SPANPROF_JSON) or folded stacks (SPANPROF_FOLDED)\n",
                path);
        return EXIT_BAD_INPUT;
    }
    rewind(in);
    do
        first = getc(in);
    while (first == ' ' || first == '\t' || first == '\n' || first == '\r');
    struct conv c = {0};
    int rc;
    if (first == '{' || first == '[') {
        fclose(in);
        if (calls || threads)
            return tool_usage_error("%s", "--calls and --threads are for folded stacks, not a JSON profile");
        rc = load_json(path, &c);
    } else {
        rewind(in);
        rc = load_folded(path, in, &c, calls, threads);
        fclose(in);
    }
    char *dflt = NULL;
    if (!rc) {
        if (!out)
            out = dflt = xasprintf("%s.pb.gz", path);
        rc = write_pprof(out, &c);
    } else {
        rc = EXIT_BAD_INPUT;
    }
    free(dflt);
    for (size_t i = 0; i < c.nowned; i++)
        free(c.owned[i]);
    free(c.owned);
    free(c.frames);
    free(c.samples);
    return rc;
}
