/* coz_profile.c — reads coz's profile.coz: one record a line, a record type then tab-separated
 * key=value fields.
 *
 * We keep the "experiment" records and the throughput/latency point records that follow each
 * one (they are that experiment's measurements). Other record types (startup, runtime, samples,
 * and whatever a later coz adds) are skipped, as coz's own viewer does. A record we need that
 * lacks a field, or a last line cut short (no newline and not a whole record — coz was killed
 * while writing), is an error naming the line: guessing would put wrong numbers in the table. */
#include "spanprof.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FIELDS = 16 };

struct fields {
    size_t n;
    char *key[MAX_FIELDS], *val[MAX_FIELDS];
};

/* Splits "type\tk=v\tk=v" in place; fields without '=' are ignored (coz's viewer does the same). */
static char *split_record(char *line, struct fields *f)
{
    f->n = 0;
    char *save, *type = strtok_r(line, "\t", &save), *tok;
    while ((tok = strtok_r(NULL, "\t", &save)) && f->n < MAX_FIELDS) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        f->key[f->n] = tok;
        f->val[f->n] = eq + 1;
        f->n++;
    }
    return type ? type : line;
}

static const char *field(const struct fields *f, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < f->n; i++)      /* the last one wins, as in coz's viewer */
        if (!strcmp(f->key[i], key))
            v = f->val[i];
    return v;
}

static int number(const struct fields *f, const char *key, double *out)
{
    const char *v = field(f, key);
    if (!v || !*v)
        return -1;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (*end || errno == ERANGE || !isfinite(d))
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
static int skipped_record_whole(const char *type, const struct fields *f)
{
    double d;
    if (!strcmp(type, "startup") || !strcmp(type, "runtime") || !strcmp(type, "shutdown"))
        return number(f, "time", &d) == 0;
    if (!strcmp(type, "samples"))
        return field(f, "location") && number(f, "count", &d) == 0;
    return 0;   /* an unknown type may itself be the cut-off part */
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

    size_t cap_e = 0, cap_p = 0, lineno = 0, bufcap = 0;
    char *buf = NULL;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&buf, &bufcap, fp)) >= 0) {
        lineno++;
        int terminated = len > 0 && buf[len - 1] == '\n';
        if (terminated)
            buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '\r')
            buf[--len] = '\0';
        if (len == 0)
            continue;

        struct fields f;
        const char *type = split_record(buf, &f);
        int ok = 1;
        if (!strcmp(type, "experiment")) {
            struct coz_experiment e = { 0 };
            if (location(field(&f, "selected"), &e.file, &e.line) || number(&f, "speedup", &e.speedup) ||
                number(&f, "duration", &e.duration)) {
                free(e.file);
                ok = 0;
            } else {
                if (c->nexps == cap_e)
                    c->exps = xrealloc(c->exps, (cap_e = cap_e ? 2 * cap_e : 64) * sizeof *c->exps);
                e.first_point = c->npoints;
                c->exps[c->nexps++] = e;
            }
        } else if (!strcmp(type, "throughput-point") || !strcmp(type, "progress-point") ||
                   !strcmp(type, "latency-point")) {
            struct coz_point p = { 0 };
            const char *name = field(&f, "name");
            if (type[0] == 'l') {
                p.kind = COZ_LATENCY;
                ok = name && *name && !number(&f, "arrivals", &p.arrivals) &&
                     !number(&f, "departures", &p.departures) && !number(&f, "difference", &p.difference);
            } else {
                p.kind = COZ_THROUGHPUT;
                ok = name && *name && !number(&f, "delta", &p.delta);
            }
            /* A measurement needs the experiment it belongs to. */
            if (ok && c->nexps == 0)
                ok = 0;
            if (ok) {
                p.name = xstrdup(name);
                if (c->npoints == cap_p)
                    c->points = xrealloc(c->points, (cap_p = cap_p ? 2 * cap_p : 128) * sizeof *c->points);
                c->points[c->npoints++] = p;
                c->exps[c->nexps - 1].npoints++;
            }
        } else if (!terminated && !skipped_record_whole(type, &f)) {
            ok = 0;
        } else {
            c->skipped_records++;
        }
        if (!ok) {
            fprintf(stderr, "spanprof: %s:%zu: truncated or malformed record\n", path, lineno);
            rc = -1;
            break;
        }
    }
    if (rc == 0 && ferror(fp)) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        rc = -1;
    }
    free(buf);
    fclose(fp);
    return rc;
}
