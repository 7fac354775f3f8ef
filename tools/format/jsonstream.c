/* jsonstream.c — reads a large JSON document from a file a piece at a time, with json-c.
 *
 * A profile can be hundreds of megabytes; building json-c's tree of all of it costs several times
 * the file in memory, and a file that is broken near its end would be read whole before anything
 * is said. So the caller walks the outer structure itself (js_peek / js_take: braces, brackets,
 * commas, colons) and asks json-c only for one value at a time (js_value: a key, a span entry),
 * feeding json-c's tokener 64 KiB at a time from a buffered read. The first syntax error stops
 * the read, and every message names the line and column where it was found.  js_trace_walk
 * walks a Chrome trace that way, an event at a time (view's importer, record's trace merge).
 * js_member_string reads a string member of a value so read, for every reader of spanprof's
 * JSON. */
#include "format/format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int js_open(struct jstream *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->line = s->col = 1;
    s->f = fopen(path, "rb");
    if (!s->f) {
        fprintf(stderr, "spanprof: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    s->tok = json_tokener_new();
    if (!s->tok) {
        fputs("spanprof: out of memory\n", stderr);
        exit(EXIT_BAD_INPUT);
    }
    return 0;
}

void js_close(struct jstream *s)
{
    if (s->f)
        fclose(s->f);
    if (s->tok)
        json_tokener_free(s->tok);
    s->f = NULL;
    s->tok = NULL;
}

void js_error(struct jstream *s, const char *fmt, ...)
{
    if (s->quiet)
        return;
    fprintf(stderr, "spanprof: %s:%zu:%zu: ", s->path, s->line, s->col);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Moves past N buffered bytes, keeping line and column (in bytes) of the next one. */
static void advance(struct jstream *s, size_t n)
{
    const char *p = s->buf + s->pos, *end = p + n, *nl;
    while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
        s->line++;
        s->col = 1;
        p = nl + 1;
    }
    s->col += (size_t)(end - p);
    s->pos += n;
    s->offset += n;
}

/* Refills an empty buffer; 0 at end of file (or a read error, reported once). */
static int refill(struct jstream *s)
{
    if (s->pos < s->len)
        return 1;
    if (s->eof)
        return 0;
    s->pos = 0;
    s->len = fread(s->buf, 1, sizeof s->buf, s->f);
    if (s->len == 0) {
        s->eof = 1;
        if (ferror(s->f)) {
            fprintf(stderr, "spanprof: cannot read '%s': %s\n", s->path, strerror(errno));
            s->read_error = 1;
        }
        return 0;
    }
    return 1;
}

int js_peek(struct jstream *s)
{
    for (;;) {
        if (!refill(s))
            return EOF;
        char c = s->buf[s->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return (unsigned char)c;
        advance(s, 1);
    }
}

int js_take(struct jstream *s, int c, const char *what)
{
    int got = js_peek(s);
    if (got == c) {
        advance(s, 1);
        return 0;
    }
    if (!s->read_error) {
        if (got == EOF)
            js_error(s, "not a JSON profile: unexpected end of file (expected %s)", what);
        else
            js_error(s, "not a JSON profile: expected %s, found '%c'", what, got);
    }
    return -1;
}

json_object *js_value(struct jstream *s)
{
    json_tokener_reset(s->tok);
    if (js_peek(s) == EOF) {
        if (!s->read_error)
            js_error(s, "not a JSON profile: unexpected end of file");
        return NULL;
    }
    for (;;) {
        json_object *o = json_tokener_parse_ex(s->tok, s->buf + s->pos, (int)(s->len - s->pos));
        enum json_tokener_error e = json_tokener_get_error(s->tok);
        advance(s, json_tokener_get_parse_end(s->tok));
        if (o)
            return o;
        if (e != json_tokener_continue) {
            js_error(s, "not a JSON profile: %s (byte %llu)", json_tokener_error_desc(e),
                     (unsigned long long)s->offset);
            return NULL;
        }
        if (!refill(s)) {
            if (!s->read_error)
                js_error(s, "not a JSON profile: unexpected end of file");
            return NULL;
        }
    }
}

int js_end(struct jstream *s)
{
    int c = js_peek(s);
    if (c == EOF)
        return s->read_error ? -1 : 0;
    js_error(s, "not a JSON profile: unexpected '%c' after the end of the document", c);
    return -1;
}

int js_trace_walk(const char *path, int quiet, int (*each)(json_object *event, void *ctx), void *ctx,
                  json_object **other)
{
    struct jstream s;
    if (js_open(&s, path))
        return -1;
    s.quiet = quiet;
    int rc = -1;
    if (js_take(&s, '{', "'{'"))
        goto out;
    for (;;) {
        json_object *key = js_value(&s);
        if (!key)
            goto out;
        const char *name = json_object_is_type(key, json_type_string) ? json_object_get_string(key) : "";
        int events = !strcmp(name, "traceEvents"), other_data = !strcmp(name, "otherData");
        json_object_put(key);
        if (js_take(&s, ':', "':'"))
            goto out;
        if (events) {
            if (js_take(&s, '[', "'['"))
                goto out;
            while (js_peek(&s) != ']') {
                json_object *e = js_value(&s);
                if (!e)
                    goto out;
                int stop = each ? each(e, ctx) : 0;
                json_object_put(e);
                if (stop) {
                    rc = stop;
                    goto out;
                }
                if (js_peek(&s) != ']' && js_take(&s, ',', "','"))
                    goto out;
            }
            js_take(&s, ']', "']'");
        } else {
            json_object *v = js_value(&s); /* displayTimeUnit, otherData, anything else */
            if (!v)
                goto out;
            if (other_data && other && !*other)
                *other = v;
            else
                json_object_put(v);
        }
        if (js_peek(&s) != ',')
            break;
        js_take(&s, ',', "','");
    }
    rc = js_take(&s, '}', "'}'") ? -1 : 0;
out:
    js_close(&s);
    return rc;
}

const char *js_member_string(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}
