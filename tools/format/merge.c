/* merge.c — one profile from the profiles of many processes (a test suite's hundreds of runs),
 * for `spanprof merge` (cmd/merge.c) and the merge at the end of `spanprof record`; and the
 * inputs `spanprof report` and `spanprof diff` read (report_inputs, load_inputs).
 *
 * Each kind of profile is one entry of `formats` below: how to recognise a file of that kind
 * from its first bytes, and its merger (merge_json.c, merge_folded.c, merge_pprof.c), which
 * reads a file into an accumulator and writes the merged result. The kind
 * of every input is settled before any is read, so mixing kinds fails at once, naming the file. */
#define _GNU_SOURCE     /* memmem */
#include "format/format.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

enum { HEAD = 4096 };

struct merge_format {
    const char *name;                             /* "JSON profiles", in messages */
    int (*looks_like)(const char *head, size_t n); /* the file's first bytes are of this kind */
    void *(*start)(void);
    int (*add)(void *acc, const char *path);      /* -1 with a message */
    int (*finish)(void *acc, FILE *out);          /* writes the merged file and frees acc */
    void (*discard)(void *acc);
};

static const char *skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static int looks_json(const char *head, size_t n)
{
    const char *p = skip_blank(head, head + n);
    return p < head + n && *p == '{';
}

/* Folded stacks: the first line ends in a space and digits; an empty file (a process that
 * recorded no stack) is folded stacks with none. */
static int looks_folded(const char *head, size_t n)
{
    const char *p = skip_blank(head, head + n), *end = head + n;
    if (p == end)
        return 1;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    while (e > p && e[-1] == '\r')
        e--;
    const char *d = e;
    while (d > p && d[-1] >= '0' && d[-1] <= '9')
        d--;
    return d < e && d > p + 1 && d[-1] == ' ';
}

static void *json_start(void)
{
    return json_merge_new();
}

static int json_add(void *acc, const char *path)
{
    return json_merge_add_file(acc, path);
}

static int json_finish(void *acc, FILE *out)
{
    struct sp_profile p;
    json_merge_finish(acc, &p);
    int rc = sp_profile_write(&p, out);
    sp_profile_free(&p);
    return rc;
}

static void json_discard(void *acc)
{
    struct sp_profile p;
    json_merge_finish(acc, &p);
    sp_profile_free(&p);
}

static void *folded_start(void)
{
    return folded_merge_new();
}

static int folded_add(void *acc, const char *path)
{
    return folded_merge_add_file(acc, path);
}

static int folded_finish(void *acc, FILE *out)
{
    int rc = folded_merge_write(acc, out);
    folded_merge_free(acc);
    return rc;
}

static void folded_discard(void *acc)
{
    folded_merge_free(acc);
}

/* pprof profiles: gzip's magic number (every pprof writer compresses). */
static int looks_pprof(const char *head, size_t n)
{
    return n >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b;
}

static void *pprof_start(void)
{
    return pprof_merge_new();
}

static int pprof_add(void *acc, const char *path)
{
    return pprof_merge_add_file(acc, path);
}

static int pprof_finish(void *acc, FILE *out)
{
    return pprof_merge_write(acc, out);
}

static void pprof_discard(void *acc)
{
    pprof_merge_free(acc);
}

static const struct merge_format formats[] = {
    { "JSON profiles", looks_json, json_start, json_add, json_finish, json_discard },
    { "folded stacks", looks_folded, folded_start, folded_add, folded_finish, folded_discard },
    { "pprof profiles", looks_pprof, pprof_start, pprof_add, pprof_finish, pprof_discard },
};
enum { NFORMATS = sizeof formats / sizeof *formats };

/* The first bytes of PATH, malloc'd into *HEAD (HEAD bytes, or more: a file that starts with a
 * longer line — folded stacks of deep stacks — is read to that line's end, so its kind can be
 * told); -1 with a message when it cannot be read or is a directory. */
static int read_head(const char *path, char **head, size_t *n)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "spanprof: '%s' is a directory: merge takes files (such as %s/*.json)\n", path, path);
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "spanprof: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = HEAD;
    *head = xmalloc(cap);
    *n = fread(*head, 1, HEAD, f);
    while (*n == cap && !memchr(*head, '\n', *n) && !looks_json(*head, *n) &&
           !looks_pprof(*head, *n)) {
        *head = xrealloc(*head, cap *= 2);
        *n += fread(*head + *n, 1, cap - *n, f);
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(err));
        free(*head);
        return -1;
    }
    return 0;
}

static const struct merge_format *kind_of(const char *path, const char *head, size_t n)
{
    for (size_t k = 0; k < NFORMATS; k++)
        if (formats[k].looks_like(head, n))
            return &formats[k];
    fputs("spanprof: ", stderr);
    fprintf(stderr, "'%s' is none of the kinds merge reads (", path);
    for (size_t k = 0; k < NFORMATS; k++)
        fprintf(stderr, "%s%s", k ? ", " : "", formats[k].name);
    fputs(")\n", stderr);
    return NULL;
}

int merge_files(const char *out, char *const *paths, size_t npaths, const char **kind_name)
{
    const struct merge_format *kind = NULL;
    for (size_t i = 0; i < npaths; i++) {
        size_t n;
        char *head;
        if (read_head(paths[i], &head, &n))
            return EXIT_BAD_INPUT;
        const struct merge_format *k = kind_of(paths[i], head, n);
        free(head);
        if (!k)
            return EXIT_BAD_INPUT;
        if (kind && k != kind) {
            fprintf(stderr, "spanprof: '%s' holds %s, but '%s' holds %s: merge one kind at a time\n", paths[i],
                    k->name, paths[0], kind->name);
            return EXIT_BAD_INPUT;
        }
        kind = k;
    }

    void *acc = kind->start();
    for (size_t i = 0; i < npaths; i++) {
        if (kind->add(acc, paths[i])) {
            kind->discard(acc);
            return EXIT_BAD_INPUT;
        }
    }
    /* Written only now, and put in place only when whole: OUT may be one of the inputs. */
    int to_stdout = !strcmp(out, "-");
    struct tool_output o;
    FILE *f = to_stdout ? stdout : output_open(&o, out);
    if (!f) {
        kind->discard(acc);
        return EXIT_BAD_INPUT;
    }
    int rc = kind->finish(acc, f);
    if (to_stdout && (fflush(f) != 0 || rc)) {
        fprintf(stderr, "spanprof: cannot write to stdout: %s\n", strerror(errno ? errno : EIO));
        return EXIT_BAD_INPUT;
    }
    if (!to_stdout && output_close(&o, rc != 0))
        return EXIT_BAD_INPUT;
    *kind_name = kind->name;
    return 0;
}

/* ---- the inputs of `spanprof report` and `spanprof diff` ---- */

/* A JSON profile, judged from its first bytes: a JSON object that is not a Chrome trace. */
static int is_profile(const char *path)
{
    static char head[HEAD];
    size_t n;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    n = fread(head, 1, HEAD, f);
    fclose(f);
    return looks_json(head, n) && !memmem(head, n, "\"traceEvents\"", 13);
}

/* A pprof profile (or anything gzip'd): report has no per-span inclusive times to show from
 * one (its samples are stacks with self values), so it sends the user to pprof's own reports. */
static int is_pprof(const char *path)
{
    char head[2];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return looks_pprof(head, n);
}

int report_inputs(char *const *args, size_t nargs, char ***paths, size_t *npaths, int *any_dir)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    *any_dir = 0;
    for (size_t i = 0; i < nargs; i++) {
        struct stat st;
        if (stat(args[i], &st) || !S_ISDIR(st.st_mode)) {
            if (is_pprof(args[i])) {
                fprintf(stderr, "spanprof: '%s' is gzip-compressed: report reads JSON profiles "
                                "(SPANPROF_JSON) as written; for a pprof profile, `go tool pprof "
                                "-top %s` reports it and `spanprof merge` merges several\n",
                        args[i], args[i]);
                goto fail;
            }
            if (n == cap)
                v = xrealloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
            v[n++] = xstrdup(args[i]);    /* a file: read as given, errors included */
            continue;
        }
        *any_dir = 1;
        DIR *d = opendir(args[i]);
        if (!d) {
            fprintf(stderr, "spanprof: cannot open '%s': %s\n", args[i], strerror(errno));
            goto fail;
        }
        size_t first = n;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.')
                continue;
            char *path = xasprintf("%s%s%s", args[i], args[i][strlen(args[i]) - 1] == '/' ? "" : "/", de->d_name);
            struct stat fs;
            if (stat(path, &fs) || !S_ISREG(fs.st_mode) || !is_profile(path)) {
                free(path);
                continue;
            }
            if (n == cap)
                v = xrealloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
            v[n++] = path;
        }
        closedir(d);
        if (n == first) {
            /* A `spanprof record` run whose processes wrote folded stacks only (a crash). */
            char *folded = xasprintf("%s/profile.folded", args[i]);
            if (access(folded, R_OK) != 0) {
                free(folded);
                fprintf(stderr, "spanprof: '%s' holds no JSON profile (files written with SPANPROF_JSON)\n", args[i]);
                goto fail;
            }
            if (n == cap)
                v = xrealloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
            v[n++] = folded;
        }
        qsort(v + first, n - first, sizeof *v, cmp_strp);
    }
    *paths = v;
    *npaths = n;
    return 0;
fail:
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    return -1;
}

int load_inputs(char *const *args, size_t nargs, struct sp_profile *out)
{
    static char *single; /* the one input's path, which OUT's messages name: kept until the next */
    char **paths;
    size_t n;
    int any_dir, rc = -1;
    if (report_inputs(args, nargs, &paths, &n, &any_dir))
        return -1;
    if (n == 1 && (!any_dir || has_suffix(paths[0], "/profile.folded"))) {
        free(single);
        single = paths[0];
        paths[0] = NULL;
        rc = sp_profile_load_any(single, out);
    } else {
        struct json_merge *m = json_merge_new();
        size_t i;
        for (i = 0; i < n && json_merge_add_file(m, paths[i]) == 0; i++)
            ;
        json_merge_finish(m, out);
        if (i == n)
            rc = 0;
        else
            sp_profile_free(out);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return rc;
}
