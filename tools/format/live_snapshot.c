/* live_snapshot.c — reads a running process's snapshot (live/protocol.h: the answer to
 * "snapshot\n" on PID.sock, and the content of PID.START.final): its framing, its JSON profile's
 * spans with their counters and histograms, and its pprof profile's stacks. */
#include "format/format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "live/protocol.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- stacks ---- */

void live_stacks_init(struct live_stacks *st)
{
    memset(st, 0, sizeof *st);
    strmap_init(&st->index);
}

void live_stacks_free(struct live_stacks *st)
{
    for (size_t i = 0; i < st->n; i++) {
        for (size_t j = 0; j < st->v[i].depth; j++) {
            free((char *)st->v[i].frames[j].name);
            free((char *)st->v[i].frames[j].file);
        }
        free(st->v[i].frames);
        free(st->v[i].thread);
        free(st->v[i].values);
    }
    free(st->v);
    for (size_t i = 0; i < st->ntypes; i++) {
        free((char *)st->types[i].type);
        free((char *)st->types[i].unit);
    }
    free((char *)st->period_type.type);
    free((char *)st->period_type.unit);
    strmap_free(&st->index);
    memset(st, 0, sizeof *st);
}

/* The stack's key: each frame's name, file and line, then the thread, NUL-separated. */
static char *frames_key(const struct spanprof__pprof_frame *frames, size_t depth, const char *thread,
                       size_t *len)
{
    size_t cap = 64, n = 0;
    char *k = xmalloc(cap);
    for (size_t i = 0; i <= depth; i++) {
        char line[24];
        const char *a = i < depth ? frames[i].name : (thread ? thread : "");
        const char *b = i < depth ? (frames[i].file ? frames[i].file : "") : "";
        snprintf(line, sizeof line, "%lld", i < depth ? (long long)frames[i].line : -1LL);
        size_t need = strlen(a) + strlen(b) + strlen(line) + 3;
        while (n + need >= cap)
            k = xrealloc(k, cap *= 2);
        n += (size_t)sprintf(k + n, "%s%c%s%c%s", a, 0, b, 0, line) + 1;
    }
    *len = n;
    return k;
}

char *live_stack_key(const struct live_stack *s, size_t *len)
{
    return frames_key(s->frames, s->depth, s->thread, len);
}

void live_stacks_add(struct live_stacks *st, const struct spanprof__pprof_frame *frames, size_t depth,
                     const char *thread, const int64_t *values)
{
    size_t len;
    char *key = frames_key(frames, depth, thread, &len);
    int added;
    size_t i = strmap_index(&st->index, key, len, &added);
    free(key);
    if (!added) {
        int64_t *v = st->v[i].values;
        for (size_t k = 0; k < st->ntypes; k++)
            if (__builtin_add_overflow(v[k], values[k], &v[k]))
                v[k] = INT64_MAX;
        return;
    }
    if (st->n == st->cap)
        st->v = xrealloc(st->v, (st->cap = st->cap ? 2 * st->cap : 64) * sizeof *st->v);
    struct live_stack *s = &st->v[st->n++];
    s->depth = depth;
    s->frames = xmalloc((depth ? depth : 1) * sizeof *s->frames);
    for (size_t j = 0; j < depth; j++)
        s->frames[j] = (struct spanprof__pprof_frame){xstrdup(frames[j].name),
                                                      frames[j].file ? xstrdup(frames[j].file) : NULL,
                                                      frames[j].line};
    s->thread = thread ? xstrdup(thread) : NULL;
    s->values = xmalloc((st->ntypes ? st->ntypes : 1) * sizeof *s->values);
    memcpy(s->values, values, st->ntypes * sizeof *s->values);
}

static int stacks_kind(void *arg, const struct pprof_info *in)
{
    struct live_stacks *st = arg;
    st->ntypes = in->ntypes;
    for (size_t i = 0; i < in->ntypes; i++)
        st->types[i] = (struct spanprof__pprof_type){xstrdup(in->types[i].type), xstrdup(in->types[i].unit)};
    st->period_type = (struct spanprof__pprof_type){xstrdup(in->period_type.type),
                                                    xstrdup(in->period_type.unit)};
    st->period = in->period;
    return 0;
}

static int stacks_sample(void *arg, const struct spanprof__pprof_frame *stack, size_t depth,
                         const int64_t *values, const char *thread)
{
    live_stacks_add(arg, stack, depth, thread, values);
    return 0;
}

/* ---- the JSON profile ---- */

/* An integer member >= 0 into *OUT: 1 when there, 0 when absent, -1 when not such a number. */
static int uint_member(json_object *o, const char *key, uint64_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return 0;
    if (json_object_is_type(v, json_type_int)) {
        errno = 0;
        int64_t i = json_object_get_int64(v);
        if (i < 0)
            return -1;
        uint64_t u = json_object_get_uint64(v);
        *out = u;
        return 1;
    }
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (!(d >= 0 && d < 1.8e19))
            return -1;
        *out = (uint64_t)d;
        return 1;
    }
    return -1;
}

static int read_histogram(json_object *h, struct live_span *sp, char *err, size_t errlen)
{
    json_object *b;
    if (!json_object_is_type(h, json_type_object) || uint_member(h, "count", &sp->hist_count) != 1 ||
        uint_member(h, "sum_ns", &sp->hist_sum_ns) != 1 ||
        !json_object_object_get_ex(h, "buckets", &b) || !json_object_is_type(b, json_type_array))
        return fail(err, errlen, "span '%s': \"histogram\" needs count, sum_ns and buckets", sp->name);
    size_t n = json_object_array_length(b);
    sp->buckets = xmalloc((n ? n : 1) * sizeof *sp->buckets);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(b, i);
        if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2)
            return fail(err, errlen, "span '%s': histogram bucket %zu is not [LE_NS, COUNT]", sp->name, i + 1);
        int64_t le = json_object_get_int64(json_object_array_get_idx(e, 0));
        int64_t c = json_object_get_int64(json_object_array_get_idx(e, 1));
        if (le < 0 || c < 0 || (i && le <= sp->buckets[i - 1].le_ns))
            return fail(err, errlen, "span '%s': histogram bucket %zu is negative or out of order", sp->name, i + 1);
        sp->buckets[i] = (struct live_bucket){le, (uint64_t)c};
        sp->nbuckets++;
    }
    sp->has_hist = 1;
    return 0;
}

static int read_json(json_object *root, struct live_snapshot *s, char *err, size_t errlen)
{
    json_object *spans, *v;
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "spans", &spans) || !json_object_is_type(spans, json_type_array))
        return fail(err, errlen, "the JSON profile has no \"spans\" array");
    if (json_object_object_get_ex(root, "pid", &v))
        s->pid = json_object_get_int64(v);
    const char *exe = js_member_string(root, "exe");
    if (!exe)
        exe = js_member_string(root, "program");
    s->exe = xstrdup(exe ? exe : "");
    const char *host = js_member_string(root, "host");
    s->host = host ? xstrdup(host) : NULL;
    if (json_object_object_get_ex(root, "start_unix_ns", &v))
        s->start_unix_ns = json_object_get_int64(v);
    if (json_object_object_get_ex(root, "live_seq", &v))
        s->seq = json_object_get_int64(v);
    size_t n = json_object_array_length(spans);
    s->spans = xmalloc((n ? n : 1) * sizeof *s->spans);
    memset(s->spans, 0, (n ? n : 1) * sizeof *s->spans);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(spans, i);
        struct live_span *sp = &s->spans[i];
        const char *name = json_object_is_type(e, json_type_object) ? js_member_string(e, "name") : NULL;
        if (!name)
            return fail(err, errlen, "span %zu has no name", i + 1);
        s->nspans++;
        sp->name = xstrdup(name);
        const char *file = js_member_string(e, "file");
        sp->file = xstrdup(file ? file : "");
        if (json_object_object_get_ex(e, "line", &v))
            sp->line = (long)json_object_get_int64(v);
        if (uint_member(e, "calls", &sp->calls) != 1 || uint_member(e, "total_ns", &sp->total_ns) != 1 ||
            uint_member(e, "self_ns", &sp->self_ns) != 1)
            return fail(err, errlen, "span '%s' needs calls, total_ns and self_ns", name);
        int r = uint_member(e, "cpu_total_ns", &sp->cpu_total_ns);
        if (r == 0)
            r = uint_member(e, "cpu_ns", &sp->cpu_total_ns);   /* SPANPROF_CPU=1: inclusive */
        sp->has_cpu_total = r == 1;
        sp->has_cpu_self = uint_member(e, "cpu_self_ns", &sp->cpu_self_ns) == 1;
        if (json_object_object_get_ex(e, "histogram", &v) && read_histogram(v, sp, err, errlen))
            return -1;
    }
    return 0;
}

/* ---- the framing ---- */

/* Reads "WORD LEN\n" at *P (END the buffer's end) and the LEN bytes after it, then "\n". */
static int read_part(const char **p, const char *end, const char *word, const char **data, size_t *len,
                     char *err, size_t errlen)
{
    size_t wl = strlen(word);
    if ((size_t)(end - *p) < wl + 2 || memcmp(*p, word, wl) || (*p)[wl] != ' ')
        return fail(err, errlen, "no \"%s LEN\" line where expected", word);
    const char *q = *p + wl + 1;
    unsigned long long n = 0;
    const char *digits = q;
    while (q < end && *q >= '0' && *q <= '9' && q - digits < 20)
        n = n * 10 + (unsigned long long)(*q++ - '0');
    if (q == digits || q >= end || *q != '\n')
        return fail(err, errlen, "a bad \"%s LEN\" line", word);
    q++;
    if (n > (unsigned long long)(end - q) || (size_t)(end - q) - n < 1 || q[n] != '\n')
        return fail(err, errlen, "the %s part is cut short (%llu bytes announced)", word, n);
    *data = q;
    *len = (size_t)n;
    *p = q + n + 1;
    return 0;
}

int live_snapshot_parse(const char *buf, size_t len, struct live_snapshot *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    live_stacks_init(&s->stacks);
    s->exe = xstrdup("");
    const char *p = buf, *end = buf + len;
    size_t ml = strlen(SPANPROF_LIVE_MAGIC);
    if (len < ml || memcmp(buf, SPANPROF_LIVE_MAGIC, ml)) {
        if (len > 6 && !memcmp(buf, "error ", 6)) {
            const char *nl = memchr(buf, '\n', len);
            return fail(err, errlen, "the process answered: %.*s", (int)((nl ? nl : end) - buf), buf);
        }
        return fail(err, errlen, "not a spanprof-live 1 snapshot");
    }
    p += ml;
    const char *json, *gz;
    size_t jlen, gzlen;
    if (read_part(&p, end, "json", &json, &jlen, err, errlen) ||
        read_part(&p, end, "pprof", &gz, &gzlen, err, errlen))
        return -1;
    if ((size_t)(end - p) < 4 || memcmp(p, "end\n", 4))
        return fail(err, errlen, "no \"end\" line after the pprof part");
    json_tokener *tok = json_tokener_new();
    json_object *root = json_tokener_parse_ex(tok, json, (int)jlen);
    enum json_tokener_error je = json_tokener_get_error(tok);
    json_tokener_free(tok);
    if (!root || je != json_tokener_success) {
        json_object_put(root);
        return fail(err, errlen, "the JSON part does not parse: %s", json_tokener_error_desc(je));
    }
    free(s->exe);
    s->exe = NULL;
    int rc = read_json(root, s, err, errlen);
    json_object_put(root);
    if (!s->exe)
        s->exe = xstrdup("");
    if (rc)
        return -1;
    if (gzlen == 0)
        return 0; /* the answer to "spans": no stacks */
    s->has_stacks = 1;
    char *msg = NULL;
    size_t msglen = 0;
    FILE *mem = open_memstream(&msg, &msglen);
    if (!mem)
        return fail(err, errlen, "out of memory");
    struct pprof_reader reader = {stacks_kind, stacks_sample, mem};
    rc = pprof_read((const unsigned char *)gz, gzlen, "snapshot", &reader, &s->stacks);
    fclose(mem);
    if (rc) {
        if (msglen && msg[msglen - 1] == '\n')
            msg[msglen - 1] = 0;
        fail(err, errlen, "the pprof part: %s", strncmp(msg, "spanprof: ", 10) ? msg : msg + 10);
    }
    free(msg);
    return rc;
}

void live_snapshot_free(struct live_snapshot *s)
{
    for (size_t i = 0; i < s->nspans; i++) {
        free(s->spans[i].name);
        free(s->spans[i].file);
        free(s->spans[i].buckets);
    }
    free(s->spans);
    free(s->exe);
    free(s->host);
    live_stacks_free(&s->stacks);
    memset(s, 0, sizeof *s);
}
