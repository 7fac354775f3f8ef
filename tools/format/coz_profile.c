/* coz_profile.c — reads coz's output in either of its formats, told apart by content:
 *   text (profile.coz):          one record a line, a record type then tab-separated key=value
 *   JSON Lines (profile.jsonl):  one JSON object a line, {"type": "experiment", ...}, the same
 *                                fields (keys with '_' where the text has '-': selected_samples)
 * coz writes JSON Lines by default since 2026; older coz (Debian's 0.2.2) writes text.
 *
 * We keep the "experiment" records and the throughput/latency point records that follow each
 * one (they are that experiment's measurements). Other record types (startup, runtime, samples,
 * and whatever a later coz adds) are skipped, as coz's own viewer does. A record we need that
 * lacks a field, or a last line cut short (no newline and not a whole record — coz was killed
 * while writing), is an error naming the line: guessing would put wrong numbers in the table.
 * Both formats go through one record handler, so they give the same profile. */
#include "format/format.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FIELDS = 16 };

/* One record, from either format: the text's fields or the JSON object. */
struct record {
    const char *type;
    size_t n;                              /* text */
    char *key[MAX_FIELDS], *val[MAX_FIELDS];
    json_object *obj;                      /* JSON Lines */
};

/* Splits "type\tk=v\tk=v" in place; fields without '=' are ignored (coz's viewer does the same). */
static void split_record(char *line, struct record *r)
{
    r->n = 0;
    r->obj = NULL;
    char *save, *type = strtok_r(line, "\t", &save), *tok;
    while ((tok = strtok_r(NULL, "\t", &save)) && r->n < MAX_FIELDS) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        r->key[r->n] = tok;
        r->val[r->n] = eq + 1;
        r->n++;
    }
    r->type = type ? type : line;
}

/* The JSON key of a text key: "selected-samples" is "selected_samples" in JSON Lines. */
static json_object *json_field(const struct record *r, const char *key)
{
    char jkey[64];
    size_t i;
    for (i = 0; key[i] && i + 1 < sizeof jkey; i++)
        jkey[i] = key[i] == '-' ? '_' : key[i];
    jkey[i] = '\0';
    json_object *v;
    return json_object_object_get_ex(r->obj, jkey, &v) ? v : NULL;
}

static const char *field(const struct record *r, const char *key)
{
    if (r->obj) {
        json_object *v = json_field(r, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    }
    const char *v = NULL;
    for (size_t i = 0; i < r->n; i++)      /* the last one wins, as in coz's viewer */
        if (!strcmp(r->key[i], key))
            v = r->val[i];
    return v;
}

static int number(const struct record *r, const char *key, double *out)
{
    double d;
    if (r->obj) {
        /* coz writes numbers as JSON numbers (a speedup of 1 as an integer); json-c's double of
         * an integer is the same value strtod gives for the text format's digits */
        json_object *v = json_field(r, key);
        if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
            return -1;
        d = json_object_get_double(v);
    } else {
        const char *v = field(r, key);
        if (!v || !*v)
            return -1;
        char *end;
        errno = 0;
        d = strtod(v, &end);
        if (*end || errno == ERANGE)
            return -1;
    }
    if (!isfinite(d))
        return -1;
    *out = d;
    return 0;
}

/* "FILE:LINE" split at the last colon, so paths with colons survive. */
static int location(const char *v, char **file, long *line)
{
    const char *colon = v ? strrchr(v, ':') : NULL;
    if (!colon || colon == v || !colon[1])
        return -1;
    char *end;
    long l = strtol(colon + 1, &end, 10);
    if (*end || l < 0)
        return -1;
    *file = xstrdup(v);
    (*file)[colon - v] = '\0';
    *line = l;
    return 0;
}

/* For record types we skip we only check a last line that lacks its newline: is it whole? */
static int skipped_record_whole(const struct record *r)
{
    double d;
    if (r->obj)
        return 1;          /* it parsed as a whole JSON object */
    if (!strcmp(r->type, "startup") || !strcmp(r->type, "runtime") || !strcmp(r->type, "shutdown"))
        return number(r, "time", &d) == 0;
    if (!strcmp(r->type, "samples"))
        return field(r, "location") && number(r, "count", &d) == 0;
    return 0;   /* an unknown type may itself be the cut-off part */
}

struct loader {
    struct coz_profile *c;
    size_t cap_e, cap_p;
};

/* Takes one record into the profile; 0, or -1 when it is malformed. */
static int take_record(struct loader *ld, const struct record *r, int terminated)
{
    struct coz_profile *c = ld->c;
    const char *type = r->type;
    if (!strcmp(type, "experiment")) {
        struct coz_experiment e = { 0 };
        if (location(field(r, "selected"), &e.file, &e.line) || number(r, "speedup", &e.speedup) ||
            number(r, "duration", &e.duration)) {
            free(e.file);
            return -1;
        }
        if (c->nexps == ld->cap_e)
            c->exps = xrealloc(c->exps, (ld->cap_e = ld->cap_e ? 2 * ld->cap_e : 64) * sizeof *c->exps);
        e.first_point = c->npoints;
        c->exps[c->nexps++] = e;
        return 0;
    }
    if (!strcmp(type, "throughput-point") || !strcmp(type, "progress-point") || !strcmp(type, "latency-point")) {
        struct coz_point p = { 0 };
        const char *name = field(r, "name");
        int ok;
        if (type[0] == 'l') {
            p.kind = COZ_LATENCY;
            ok = name && *name && !number(r, "arrivals", &p.arrivals) && !number(r, "departures", &p.departures) &&
                 !number(r, "difference", &p.difference);
        } else {
            p.kind = COZ_THROUGHPUT;
            ok = name && *name && !number(r, "delta", &p.delta);
        }
        /* A measurement needs the experiment it belongs to. */
        if (!ok || c->nexps == 0)
            return -1;
        p.name = xstrdup(name);
        if (c->npoints == ld->cap_p)
            c->points = xrealloc(c->points, (ld->cap_p = ld->cap_p ? 2 * ld->cap_p : 128) * sizeof *c->points);
        c->points[c->npoints++] = p;
        c->exps[c->nexps - 1].npoints++;
        return 0;
    }
    if (!terminated && !skipped_record_whole(r))
        return -1;
    c->skipped_records++;
    return 0;
}

/* The record types coz writes, which a text profile's first record must be one of. */
static int known_type(const char *line)
{
    static const char *const types[] = { "startup", "experiment", "throughput-point", "progress-point",
                                         "latency-point", "samples", "runtime", "shutdown" };
    size_t n = strcspn(line, "\t");
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strlen(types[i]) == n && !strncmp(line, types[i], n))
            return 1;
    return 0;
}

/* A whole JSON object on one line, with a string "type"; NULL with *err set otherwise. */
static json_object *json_record(json_tokener *tok, const char *line, size_t len, const char **err)
{
    json_tokener_reset(tok);
    json_object *o = json_tokener_parse_ex(tok, line, (int)len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    if (!o && je == json_tokener_continue) {
        *err = "the object is not closed on its line";
        return NULL;
    }
    if (!o) {
        *err = json_tokener_error_desc(je);
        return NULL;
    }
    size_t end = json_tokener_get_parse_end(tok);
    while (end < len && (line[end] == ' ' || line[end] == '\t'))
        end++;
    json_object *t;
    if (end < len)
        *err = "more after the object";
    else if (!json_object_is_type(o, json_type_object))
        *err = "not a JSON object";
    else if (!json_object_object_get_ex(o, "type", &t) || !json_object_is_type(t, json_type_string))
        *err = "no \"type\"";
    else
        return o;
    json_object_put(o);
    return NULL;
}

static int unknown_format(const char *path, size_t lineno, const char *line)
{
    /* its first characters, with anything unprintable (a binary file) shown as '?' */
    char shown[31];
    size_t n;
    for (n = 0; n < sizeof shown - 1 && line[n]; n++)
        shown[n] = line[n] >= 0x20 && line[n] < 0x7f ? line[n] : '?';
    shown[n] = '\0';
    fprintf(stderr,
            "spanprof: %s:%zu: not a coz profile: expected coz's text records (\"startup<TAB>time=...\", "
            "as in profile.coz) or JSON Lines ({\"type\":\"startup\",...}, as in profile.jsonl); "
            "the line starts \"%s\"\n",
            path, lineno, shown);
    return -1;
}

int coz_profile_load(const char *path, struct coz_profile *c)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "spanprof: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }

    struct loader ld = { c, 0, 0 };
    json_tokener *tok = json_tokener_new();
    size_t lineno = 0, bufcap = 0;
    char *buf = NULL;
    ssize_t len;
    int rc = 0, format = 0;     /* 0 not known yet, 't' text, 'j' JSON Lines */
    while ((len = getline(&buf, &bufcap, fp)) >= 0) {
        lineno++;
        int terminated = len > 0 && buf[len - 1] == '\n';
        if (terminated)
            buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '\r')
            buf[--len] = '\0';
        if (len == 0)
            continue;

        /* The first record decides: coz writes one format per file. */
        if (!format) {
            const char *p = buf + strspn(buf, " \t");
            if (*p == '{') {
                const char *err;
                json_object *o = json_record(tok, buf, (size_t)len, &err);
                if (!o && terminated) {
                    rc = unknown_format(path, lineno, buf);
                    break;
                }
                json_object_put(o);
                format = 'j';
            } else if (known_type(buf)) {
                format = 't';
            } else {
                rc = unknown_format(path, lineno, buf);
                break;
            }
        }

        struct record r;
        const char *err = NULL;
        if (format == 'j') {
            memset(&r, 0, sizeof r);
            r.obj = json_record(tok, buf, (size_t)len, &err);
            if (r.obj)
                r.type = json_object_get_string(json_object_object_get(r.obj, "type"));
        } else {
            split_record(buf, &r);
        }
        int bad = format == 'j' && !r.obj ? -1 : take_record(&ld, &r, terminated);
        json_object_put(r.obj);
        if (bad) {
            if (err)
                fprintf(stderr, "spanprof: %s:%zu: truncated or malformed record (%s)\n", path, lineno, err);
            else
                fprintf(stderr, "spanprof: %s:%zu: truncated or malformed record\n", path, lineno);
            rc = -1;
            break;
        }
    }
    if (rc == 0 && ferror(fp)) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        rc = -1;
    }
    json_tokener_free(tok);
    free(buf);
    fclose(fp);
    return rc;
}
