/* merge_pprof.c — `spanprof merge` of pprof profiles (SPANPROF_PPROF, `spanprof convert`, or
 * any gzip-compressed profile.proto): one profile whose samples are the inputs' summed per
 * identical stack and thread.
 *
 * Each input is gunzipped (zlib) and decoded with the message code protoc-c generates from
 * pprof/profile.proto; its samples go one at a time into the same encoder the runtime writes with
 * (pprof/pprof.h), which keeps one Function per frame and sums the values of samples that repeat
 * a (stack, thread) pair.  A frame is a function's name, file and first line (start_line), so the
 * same span in two processes is one function; a location's inlined lines become frames of their
 * own, innermost last; a location with no line (an unsymbolized address) is named by its
 * address.  The "thread" label (SPANPROF_THREADS=1) is kept; other labels are dropped.
 *
 * The inputs must be of one kind: the same sample types (matched by type and unit, in any order:
 * the first input's order is kept), the same period type and period — a profile of CPU samples
 * cannot be summed with one of exact call counts.  The merge's duration is the sum of the
 * inputs' (as `go tool pprof` merges), its start the earliest, its program the inputs' when they
 * all name the same one.
 *
 * The encoder recognises frames by the addresses of their strings, so every string handed to it
 * is a copy interned here for the merge's whole life (an input's own strings are freed with it). */
#include "format/format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof.h"
#include "profile.pb-c.h"

typedef Spanprof__Pprof__Profile Profile;
typedef Spanprof__Pprof__Location Location;
typedef Spanprof__Pprof__Function Function;


struct pprof_merge {
    struct strmap strings;         /* interned copies, by content */
    char **str;                    /* index -> copy */
    size_t nstr, str_cap;
    struct spanprof__pprof_builder *b;
    const char *first_path;
    struct spanprof__pprof_type types[PPROF_MAX_TYPES], period_type;
    size_t ntypes;
    int64_t period, duration_ns, time_ns;
    const char *program;           /* interned; NULL once two inputs differ */
    int programs_differ;
    struct spanprof__pprof_frame *stack;
    size_t stack_cap;
    size_t nfiles;
    const char *path;              /* the input being read */
    size_t map[PPROF_MAX_TYPES];   /* its type I is the merge's type map[I] */
    int64_t values[PPROF_MAX_TYPES];
};

static const char *intern(struct pprof_merge *m, const char *s)
{
    if (!s)
        return NULL;
    int added;
    size_t len = strlen(s);
    size_t i = strmap_index(&m->strings, s, len, &added);
    if (added) {
        if (m->nstr == m->str_cap)
            m->str = xrealloc(m->str, (m->str_cap = m->str_cap ? 2 * m->str_cap : 256) * sizeof *m->str);
        m->str[m->nstr++] = xstrdup(s);
    }
    return m->str[i];
}

struct pprof_merge *pprof_merge_new(void)
{
    struct pprof_merge *m = xmalloc(sizeof *m);
    memset(m, 0, sizeof *m);
    strmap_init(&m->strings);
    return m;
}

static void pprof_merge_release(struct pprof_merge *m)
{
    for (size_t i = 0; i < m->nstr; i++)
        free(m->str[i]);
    free(m->str);
    free(m->stack);
    strmap_free(&m->strings);
    free(m);
}

void pprof_merge_free(struct pprof_merge *m)
{
    if (m->b) {
        /* finish is the builder's only way out; its output goes nowhere */
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            spanprof__pprof_finish(m->b, null);
            fclose(null);
        }
    }
    pprof_merge_release(m);
}

/* The most a pprof file may decompress to.  Profiles of real programs are a few megabytes (a
 * 300,000-span profile of spanprof's is under 20 MiB); a few hundred kilobytes of gzip can
 * expand to gigabytes, and decoding the protobuf takes several times the decompressed size. */
#define PPROF_MAX_INFLATED ((size_t)256 << 20)

/* The LEN bytes at GZ gunzipped into *OUT (malloc'd), WHAT naming them in messages; -1 with a
 * message. */
int pprof_gunzip(const unsigned char *gz, size_t len, const char *what, unsigned char **out,
                 size_t *outlen, FILE *msgs)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        fputs("spanprof: out of memory\n", msgs);
        return -1;
    }
    size_t cap = 1 << 16, n = 0, used = 0;
    unsigned char *buf = xmalloc(cap);
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (z.avail_in == 0) {
            size_t chunk = len - used > (1u << 30) ? (1u << 30) : len - used;
            if (chunk == 0) {
                fprintf(msgs, "spanprof: '%s': the gzip data ends early (byte %lu)\n", what,
                        (unsigned long)z.total_in);
                goto fail;
            }
            z.next_in = (unsigned char *)gz + used;
            z.avail_in = (uInt)chunk;
            used += chunk;
        }
        if (n == cap) {
            if (cap >= PPROF_MAX_INFLATED) {
                fprintf(msgs, "spanprof: '%s' decompresses to more than %zu MiB, the most "
                                "spanprof reads of a pprof profile\n",
                        what, PPROF_MAX_INFLATED >> 20);
                goto fail;
            }
            buf = xrealloc(buf, cap *= 2);
        }
        z.next_out = buf + n;
        z.avail_out = (uInt)(cap - n);
        rc = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
        if (rc != Z_OK && rc != Z_STREAM_END) {
            fprintf(msgs, "spanprof: '%s' is not valid gzip data: %s (byte %lu)\n", what,
                    z.msg ? z.msg : "corrupt", (unsigned long)z.total_in);
            goto fail;
        }
    }
    inflateEnd(&z);
    *out = buf;
    *outlen = n;
    return 0;
fail:
    inflateEnd(&z);
    free(buf);
    return -1;
}

/* PATH's content (compressed) into *OUT (malloc'd); -1 with a message. */
static int read_whole_file(const char *path, unsigned char **out, size_t *outlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "spanprof: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0, got;
    unsigned char *raw = xmalloc(cap);
    while ((got = fread(raw + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap)
            raw = xrealloc(raw, cap *= 2);
    if (ferror(f)) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", path, strerror(errno));
        fclose(f);
        free(raw);
        return -1;
    }
    fclose(f);
    *out = raw;
    *outlen = n;
    return 0;
}

/* String I of P's table, or NULL (for index 0, "", or one out of range: checked before). */
static const char *str_at(const Profile *p, int64_t i)
{
    return i > 0 && (size_t)i < p->n_string_table ? p->string_table[i] : NULL;
}

static int by_loc_id(const void *a, const void *b)
{
    uint64_t x = (*(Location *const *)a)->id, y = (*(Location *const *)b)->id;
    return x < y ? -1 : x > y;
}

static int by_func_id(const void *a, const void *b)
{
    uint64_t x = (*(Function *const *)a)->id, y = (*(Function *const *)b)->id;
    return x < y ? -1 : x > y;
}

static Location *find_loc(Location **v, size_t n, uint64_t id)
{
    Location key = {.id = id}, *kp = &key;
    Location **r = bsearch(&kp, v, n, sizeof *v, by_loc_id);
    return r ? *r : NULL;
}

static Function *find_func(Function **v, size_t n, uint64_t id)
{
    Function key = {.id = id}, *kp = &key;
    Function **r = bsearch(&kp, v, n, sizeof *v, by_func_id);
    return r ? *r : NULL;
}

/* Every string index P uses must be in its table: checked once, so the rest can trust them. */
static int strings_valid(const Profile *p)
{
#define OK(i) ((i) >= 0 && (size_t)(i) < p->n_string_table)
    for (size_t i = 0; i < p->n_sample_type; i++)
        if (!OK(p->sample_type[i]->type) || !OK(p->sample_type[i]->unit))
            return 0;
    if (p->period_type && (!OK(p->period_type->type) || !OK(p->period_type->unit)))
        return 0;
    for (size_t i = 0; i < p->n_function; i++)
        if (!OK(p->function[i]->name) || !OK(p->function[i]->filename))
            return 0;
    for (size_t i = 0; i < p->n_mapping; i++)
        if (!OK(p->mapping[i]->filename))
            return 0;
    for (size_t i = 0; i < p->n_sample; i++)
        for (size_t j = 0; j < p->sample[i]->n_label; j++)
            if (!OK(p->sample[i]->label[j]->key) || !OK(p->sample[i]->label[j]->str))
                return 0;
    return 1;
#undef OK
}

/* The frames of the sample being walked: its strings are the profile's, valid while it is. */
struct walk {
    struct spanprof__pprof_frame *stack;
    size_t depth, cap;
};

static void push(struct walk *w, const char *name, const char *file, int64_t line)
{
    if (w->depth == w->cap)
        w->stack = xrealloc(w->stack, (w->cap = w->cap ? 2 * w->cap : 64) * sizeof *w->stack);
    w->stack[w->depth++] = (struct spanprof__pprof_frame){name, file, line};
}

int pprof_read(const unsigned char *gz, size_t len, const char *what, const struct pprof_reader *r,
               void *arg)
{
    FILE *msgs = r->messages ? r->messages : stderr;
    unsigned char *data;
    size_t n;
    if (pprof_gunzip(gz, len, what, &data, &n, msgs))
        return -1;
    Profile *p = spanprof__pprof__profile__unpack(NULL, n, data);
    free(data);
    if (!p) {
        fprintf(msgs, "spanprof: '%s' is gzip-compressed but not a pprof profile (profile.proto "
                        "does not decode)\n",
                what);
        return -1;
    }
    int rc = -1;
    struct walk w = {NULL, 0, 0};
    struct spanprof__pprof_type types[PPROF_MAX_TYPES];
    if (!strings_valid(p)) {
        fprintf(msgs, "spanprof: '%s' refers to strings its string table does not hold: a "
                        "damaged pprof profile\n",
                what);
        goto out;
    }
    if (p->n_sample_type == 0 || p->n_sample_type > PPROF_MAX_TYPES) {
        fprintf(msgs, "spanprof: '%s' has %zu sample types: not a profile spanprof can read\n",
                what, p->n_sample_type);
        goto out;
    }
    for (size_t i = 0; i < p->n_sample_type; i++) {
        const char *t = str_at(p, p->sample_type[i]->type), *u = str_at(p, p->sample_type[i]->unit);
        types[i] = (struct spanprof__pprof_type){t ? t : "", u ? u : ""};
    }
    const char *pt = p->period_type ? str_at(p, p->period_type->type) : NULL;
    const char *pu = p->period_type ? str_at(p, p->period_type->unit) : NULL;
    struct pprof_info info = {
        .types = types,
        .ntypes = p->n_sample_type,
        .period_type = {pt ? pt : "", pu ? pu : ""},
        .period = p->period,
        .duration_ns = p->duration_nanos,
        .time_ns = p->time_nanos,
        .program = p->n_mapping ? str_at(p, p->mapping[0]->filename) : NULL,
    };
    if (r->kind && r->kind(arg, &info))
        goto out;

    qsort(p->location, p->n_location, sizeof *p->location, by_loc_id);
    qsort(p->function, p->n_function, sizeof *p->function, by_func_id);
    for (size_t i = 0; i < p->n_sample; i++) {
        const Spanprof__Pprof__Sample *s = p->sample[i];
        if (s->n_value != p->n_sample_type) {
            fprintf(msgs, "spanprof: '%s': sample %zu has %zu values for %zu sample types: a "
                            "damaged pprof profile\n",
                    what, i + 1, s->n_value, p->n_sample_type);
            goto out;
        }
        /* pprof lists a sample's locations leaf first, a location's lines innermost first:
         * walk both backwards for the outermost-first stack the encoder takes */
        w.depth = 0;
        for (size_t j = s->n_location_id; j-- > 0;) {
            Location *loc = find_loc(p->location, p->n_location, s->location_id[j]);
            if (!loc) {
                fprintf(msgs, "spanprof: '%s': sample %zu names location %llu, which the profile "
                                "does not hold: a damaged pprof profile\n",
                        what, i + 1, (unsigned long long)s->location_id[j]);
                goto out;
            }
            if (loc->n_line == 0)    /* named below, by its address (kept in line meanwhile) */
                push(&w, NULL, NULL, (int64_t)loc->address);
            for (size_t l = loc->n_line; l-- > 0;) {
                Function *fn = find_func(p->function, p->n_function, loc->line[l]->function_id);
                if (!fn) {
                    fprintf(msgs, "spanprof: '%s': location %llu names function %llu, which the "
                                    "profile does not hold: a damaged pprof profile\n",
                            what, (unsigned long long)loc->id, (unsigned long long)loc->line[l]->function_id);
                    goto out;
                }
                const char *name = str_at(p, fn->name);
                push(&w, name ? name : "?", str_at(p, fn->filename), fn->start_line);
            }
        }
        /* an unsymbolized address is named by its hex form, in a buffer per frame */
        char (*addrs)[32] = NULL;
        for (size_t j = 0; j < w.depth; j++)
            if (!w.stack[j].name) {
                if (!addrs)
                    addrs = xmalloc(w.depth * sizeof *addrs);
                snprintf(addrs[j], sizeof addrs[j], "0x%llx", (unsigned long long)w.stack[j].line);
                w.stack[j].name = addrs[j];
                w.stack[j].line = 0;
            }
        const char *thread = NULL;
        for (size_t l = 0; l < s->n_label; l++) {
            const char *key = str_at(p, s->label[l]->key);
            if (key && !strcmp(key, "thread") && s->label[l]->str)
                thread = str_at(p, s->label[l]->str);
        }
        int stop = r->sample(arg, w.stack, w.depth, s->value, thread);
        free(addrs);
        if (stop)
            goto out;
    }
    rc = 0;
out:
    free(w.stack);
    spanprof__pprof__profile__free_unpacked(p, NULL);
    return rc;
}

/* The run information of an input against the merge so far: the first input sets the kind, the
 * others must match it.  -1 with a message. */
static int merge_kind(void *arg, const struct pprof_info *in)
{
    struct pprof_merge *m = arg;
    size_t *map = m->map;
    const char *path = m->path;
    if (m->nfiles == 0) {
        m->first_path = path;
        m->ntypes = in->ntypes;
        for (size_t i = 0; i < m->ntypes; i++) {
            m->types[i].type = intern(m, in->types[i].type);
            m->types[i].unit = intern(m, in->types[i].unit);
            map[i] = i;
        }
        m->period_type.type = intern(m, in->period_type.type);
        m->period_type.unit = intern(m, in->period_type.unit);
        m->period = in->period;
    } else {
        int same = in->ntypes == m->ntypes;
        for (size_t i = 0; same && i < in->ntypes; i++) {
            size_t k = 0;
            while (k < m->ntypes && !(!strcmp(m->types[k].type, in->types[i].type) &&
                                      !strcmp(m->types[k].unit, in->types[i].unit)))
                k++;
            for (size_t j = 0; j < i && k < m->ntypes; j++)
                if (map[j] == k)
                    k = m->ntypes;   /* a type twice */
            same = k < m->ntypes;
            map[i] = k;
        }
        if (!same) {
            fprintf(stderr, "spanprof: '%s' has the sample types", path);
            for (size_t i = 0; i < in->ntypes; i++)
                fprintf(stderr, "%s %s/%s", i ? "," : "", in->types[i].type, in->types[i].unit);
            fprintf(stderr, " but '%s' has", m->first_path);
            for (size_t i = 0; i < m->ntypes; i++)
                fprintf(stderr, "%s %s/%s", i ? "," : "", m->types[i].type, m->types[i].unit);
            fputs(": merge profiles of one kind\n", stderr);
            return -1;
        }
        if (strcmp(m->period_type.type, in->period_type.type) ||
            strcmp(m->period_type.unit, in->period_type.unit) || m->period != in->period) {
            fprintf(stderr, "spanprof: '%s' has the period %lld %s/%s but '%s' has %lld %s/%s: "
                            "merge profiles of one kind\n",
                    path, (long long)in->period, in->period_type.type, in->period_type.unit,
                    m->first_path, (long long)m->period, m->period_type.type, m->period_type.unit);
            return -1;
        }
    }

    const char *program = in->program;
    if (m->nfiles == 0)
        m->program = intern(m, program);
    else if (!m->programs_differ && (!program || !m->program || strcmp(program, m->program)))
        m->programs_differ = 1, m->program = NULL;
    if (in->time_ns && (!m->time_ns || in->time_ns < m->time_ns))
        m->time_ns = in->time_ns;
    if (in->duration_ns > 0 && m->duration_ns > INT64_MAX - in->duration_ns) {
        fprintf(stderr, "spanprof: '%s': the summed duration_nanos would exceed 2^63-1 ns\n",
                path);
        return -1;
    }
    if (in->duration_ns > 0)
        m->duration_ns += in->duration_ns;

    if (!m->b) {
        struct spanprof__pprof_model model = {
            .types = m->types,
            .ntypes = m->ntypes,
            .period_type = m->period_type,
            .period = m->period,
        };
        m->b = spanprof__pprof_begin(&model);
        if (!m->b) {
            fputs("spanprof: out of memory\n", stderr);
            return -1;
        }
    }
    return 0;
}

static int merge_sample(void *arg, const struct spanprof__pprof_frame *stack, size_t depth,
                        const int64_t *in, const char *thread)
{
    struct pprof_merge *m = arg;
    if (depth > m->stack_cap)
        m->stack = xrealloc(m->stack, (m->stack_cap = depth) * sizeof *m->stack);
    for (size_t i = 0; i < depth; i++)
        m->stack[i] = (struct spanprof__pprof_frame){intern(m, stack[i].name), intern(m, stack[i].file),
                                                     stack[i].line};
    for (size_t k = 0; k < m->ntypes; k++)
        m->values[m->map[k]] = in[k];
    struct spanprof__pprof_sample smp = {m->stack, depth, m->values, intern(m, thread)};
    if (spanprof__pprof_add(m->b, &smp)) {
        fputs("spanprof: out of memory\n", stderr);
        return -1;
    }
    return 0;
}

int pprof_merge_add_file(struct pprof_merge *m, const char *path)
{
    unsigned char *data;
    size_t len;
    if (read_whole_file(path, &data, &len))
        return -1;
    static const struct pprof_reader reader = {merge_kind, merge_sample, NULL};
    m->path = path;
    int rc = pprof_read(data, len, path, &reader, m);
    free(data);
    if (rc == 0)
        m->nfiles++;
    return rc;
}

int pprof_merge_write(struct pprof_merge *m, FILE *out)
{
    /* The run information is known only now: the builder took its model at the first input. */
    spanprof__pprof_set_run(m->b, m->duration_ns, m->time_ns, m->program);
    int rc = spanprof__pprof_finish(m->b, out);
    m->b = NULL;
    pprof_merge_release(m);
    return rc;
}
