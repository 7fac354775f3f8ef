/* encode.c — turns the model of pprof.h into a profile.proto message (protobuf-c, code generated
 * from profile.proto at build time) and streams it through zlib's gzip into a file.
 *
 * Three hash tables do the deduplication pprof's format asks for: strings (the string table),
 * frames (Function, and its Location), and (stack, thread) pairs (Sample).  Every table is
 * open-addressed over indices into a growing array, so nothing is freed until the end and
 * the arrays can be handed to protobuf-c as they are.  A sample's stack is turned into
 * location ids as it is added, so a caller can hand samples over one at a time (the builder)
 * without keeping them all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "pprof.h"
#include "profile.pb-c.h"

typedef Spanprof__Pprof__Profile Profile;
typedef Spanprof__Pprof__ValueType ValueType;
typedef Spanprof__Pprof__Sample Sample;
typedef Spanprof__Pprof__Label Label;
typedef Spanprof__Pprof__Mapping Mapping;
typedef Spanprof__Pprof__Location Location;
typedef Spanprof__Pprof__Line Line;
typedef Spanprof__Pprof__Function Function;

/* ---- a set of indices, hashed and compared through the encoder ---- */

struct set {
    uint32_t *slot; /* index + 1; 0 is empty */
    size_t cap;     /* power of two */
    size_t n;
};

struct enc;
typedef uint64_t (*hash_fn)(const struct enc *e, uint32_t idx);

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* The slot for hash H: the mixing above multiplies, which carries low bits upwards only, so fold
 * the high bits down before masking (murmur3's finaliser). */
static size_t slot_of(uint64_t h, size_t mask)
{
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (size_t)h & mask;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* ---- the encoder's state ---- */

struct enc {
    /* string table */
    char **strs;
    size_t nstrs, strs_cap;
    struct set str_set;
    /* functions; location i+1 is function i+1 */
    Function *funcs;
    size_t nfuncs, funcs_cap;
    struct set func_set;
    /* samples: their location ids and values live in two pools, by offset until the end */
    Sample *samples;
    size_t nsamples, samples_cap;
    size_t *loc_off, *val_off;      /* per sample, offsets into the pools */
    int64_t *thread;                /* per sample: string index of its thread, 0 for none */
    int64_t *lkey, *lval;           /* per sample: its further label's key and value, 0 for none */
    uint64_t *locs;
    size_t nlocs, locs_cap;
    int64_t *vals;
    size_t nvals, vals_cap;
    struct set sample_set;
    size_t ntypes;
    /* the sample being looked up (its ids sit past the pool's end until it is kept) */
    const uint64_t *probe_locs;
    size_t probe_depth;
    int64_t probe_thread, probe_lkey, probe_lval;
    const char *probe_str;
    Function probe_func;
    /* Frames repeat the same name and file pointers (the runtime's are its span sites): a small
     * direct-mapped cache by pointer spares hashing the strings again for every frame. */
    struct frame_cache {
        const char *name, *file;
        int64_t line;
        uint64_t id;
    } cache[1024];
    int oom;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Looks up the probe (hash H, EQ compares it with a stored index) in S; returns the index, or
 * -1 when absent, leaving *SLOT at the free slot to fill. */
static long set_find(const struct set *s, uint64_t h, int (*eq)(const struct enc *, uint32_t),
                     const struct enc *e, size_t *slot)
{
    size_t mask = s->cap - 1;
    for (size_t i = slot_of(h, mask);; i = (i + 1) & mask) {
        if (!s->slot[i]) {
            *slot = i;
            return -1;
        }
        if (eq(e, s->slot[i] - 1))
            return (long)(s->slot[i] - 1);
    }
}

/* Makes room for one more entry (load at most 1/2), rehashing with HASH. */
static int set_reserve(struct set *s, struct enc *e, hash_fn hash)
{
    if ((s->n + 1) * 2 <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap * 2 : 256;
    uint32_t *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slot[i])
            continue;
        size_t j = slot_of(hash(e, s->slot[i] - 1), cap - 1);
        while (slot[j])
            j = (j + 1) & (cap - 1);
        slot[j] = s->slot[i];
    }
    free(s->slot);
    s->slot = slot;
    s->cap = cap;
    return 0;
}

/* ---- strings ---- */

static uint64_t str_hash(const struct enc *e, uint32_t idx)
{
    return hash_str(e->strs[idx]);
}

static int str_eq(const struct enc *e, uint32_t idx)
{
    return strcmp(e->strs[idx], e->probe_str) == 0;
}

/* The string table index of S (NULL counts as ""), or 0 after running out of memory. */
static int64_t intern(struct enc *e, const char *s)
{
    if (!s || !*s || e->oom)
        return 0;
    if (set_reserve(&e->str_set, e, str_hash)) {
        e->oom = 1;
        return 0;
    }
    size_t slot;
    e->probe_str = s;
    long found = set_find(&e->str_set, hash_str(s), str_eq, e, &slot);
    if (found >= 0)
        return found;
    char *copy = strdup(s);
    if (!copy || grow((void **)&e->strs, &e->strs_cap, e->nstrs + 1, sizeof *e->strs)) {
        free(copy);
        e->oom = 1;
        return 0;
    }
    e->strs[e->nstrs] = copy;
    e->str_set.slot[slot] = (uint32_t)e->nstrs + 1;
    e->str_set.n++;
    return (int64_t)e->nstrs++;
}

/* ---- functions (and their locations) ---- */

static uint64_t func_key(const Function *f)
{
    return mix(mix(mix(0, (uint64_t)f->name), (uint64_t)f->filename), (uint64_t)f->start_line);
}

static uint64_t func_hash(const struct enc *e, uint32_t idx)
{
    return func_key(&e->funcs[idx]);
}

static int func_eq(const struct enc *e, uint32_t idx)
{
    const Function *f = &e->funcs[idx], *p = &e->probe_func;
    return f->name == p->name && f->filename == p->filename && f->start_line == p->start_line;
}

/* The location (= function) id of FR, or 0 after running out of memory. */
static uint64_t frame_id(struct enc *e, const struct spanprof__pprof_frame *fr)
{
    size_t c = slot_of(mix(mix(mix(0, (uintptr_t)fr->name), (uintptr_t)fr->file), (uint64_t)fr->line),
                       sizeof e->cache / sizeof *e->cache - 1);
    struct frame_cache *hit = &e->cache[c];
    if (hit->id && hit->name == fr->name && hit->file == fr->file && hit->line == fr->line)
        return hit->id;
    Function probe = SPANPROF__PPROF__FUNCTION__INIT;
    probe.name = intern(e, fr->name ? fr->name : "?");
    probe.filename = intern(e, fr->file);
    probe.start_line = fr->line > 0 ? fr->line : 0;
    if (e->oom || set_reserve(&e->func_set, e, func_hash)) {
        e->oom = 1;
        return 0;
    }
    size_t slot;
    e->probe_func = probe;
    long found = set_find(&e->func_set, func_key(&probe), func_eq, e, &slot);
    if (found >= 0) {
        *hit = (struct frame_cache){fr->name, fr->file, fr->line, (uint64_t)found + 1};
        return (uint64_t)found + 1;
    }
    if (grow((void **)&e->funcs, &e->funcs_cap, e->nfuncs + 1, sizeof *e->funcs)) {
        e->oom = 1;
        return 0;
    }
    probe.id = e->nfuncs + 1;
    probe.system_name = probe.name;
    e->funcs[e->nfuncs] = probe;
    e->func_set.slot[slot] = (uint32_t)e->nfuncs + 1;
    e->func_set.n++;
    *hit = (struct frame_cache){fr->name, fr->file, fr->line, e->nfuncs + 1};
    return ++e->nfuncs;
}

/* ---- samples ---- */

static uint64_t sample_key(const uint64_t *locs, size_t depth, int64_t thread, int64_t lkey, int64_t lval)
{
    uint64_t h = mix(0, (uint64_t)thread);
    if (lkey)
        h = mix(mix(h, (uint64_t)lkey), (uint64_t)lval);
    for (size_t i = 0; i < depth; i++)
        h = mix(h, locs[i]);
    return mix(h, depth);
}

static size_t sample_depth(const struct enc *e, uint32_t idx)
{
    size_t end = idx + 1 < e->nsamples ? e->loc_off[idx + 1] : e->nlocs;
    return end - e->loc_off[idx];
}

static uint64_t sample_hash(const struct enc *e, uint32_t idx)
{
    return sample_key(e->locs + e->loc_off[idx], sample_depth(e, idx), e->thread[idx], e->lkey[idx],
                      e->lval[idx]);
}

static int sample_eq(const struct enc *e, uint32_t idx)
{
    return e->thread[idx] == e->probe_thread && e->lkey[idx] == e->probe_lkey &&
           e->lval[idx] == e->probe_lval && sample_depth(e, idx) == e->probe_depth &&
           memcmp(e->locs + e->loc_off[idx], e->probe_locs, e->probe_depth * sizeof *e->probe_locs) == 0;
}

static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static void add_sample(struct enc *e, const struct spanprof__pprof_sample *s, const char *key,
                       const char *value)
{
    /* The ids go just past the pool's end: kept there if the stack is new. */
    if (grow((void **)&e->locs, &e->locs_cap, e->nlocs + s->depth + 1, sizeof *e->locs)) {
        e->oom = 1;
        return;
    }
    for (size_t i = 0; i < s->depth && !e->oom; i++) {
        uint64_t id = frame_id(e, &s->stack[s->depth - 1 - i]); /* leaf first */
        e->locs[e->nlocs + i] = id;
    }
    int64_t thread = intern(e, s->thread);
    int64_t lkey = key ? intern(e, key) : 0;
    int64_t lval = key ? intern(e, value ? value : "") : 0;
    if (e->oom || set_reserve(&e->sample_set, e, sample_hash)) {
        e->oom = 1;
        return;
    }
    e->probe_locs = e->locs + e->nlocs;
    e->probe_depth = s->depth;
    e->probe_thread = thread;
    e->probe_lkey = lkey;
    e->probe_lval = lval;
    size_t slot;
    long found = set_find(&e->sample_set, sample_key(e->probe_locs, s->depth, thread, lkey, lval),
                          sample_eq, e, &slot);
    if (found >= 0) {
        int64_t *v = e->vals + e->val_off[found];
        for (size_t i = 0; i < e->ntypes; i++)
            v[i] = add_sat(v[i], s->values[i]);
        return;
    }
    size_t n = e->nsamples;
    if (grow((void **)&e->samples, &e->samples_cap, n + 1, sizeof *e->samples) ||
        grow((void **)&e->vals, &e->vals_cap, e->nvals + e->ntypes, sizeof *e->vals)) {
        e->oom = 1;
        return;
    }
    /* The per-sample side arrays follow samples_cap. */
    size_t *lo = realloc(e->loc_off, e->samples_cap * sizeof *lo);
    if (lo)
        e->loc_off = lo;
    size_t *vo = realloc(e->val_off, e->samples_cap * sizeof *vo);
    if (vo)
        e->val_off = vo;
    int64_t *th = realloc(e->thread, e->samples_cap * sizeof *th);
    if (th)
        e->thread = th;
    int64_t *lk = realloc(e->lkey, e->samples_cap * sizeof *lk);
    if (lk)
        e->lkey = lk;
    int64_t *lv = realloc(e->lval, e->samples_cap * sizeof *lv);
    if (lv)
        e->lval = lv;
    if (!lo || !vo || !th || !lk || !lv) {
        e->oom = 1;
        return;
    }
    Sample init = SPANPROF__PPROF__SAMPLE__INIT;
    e->samples[n] = init;
    e->loc_off[n] = e->nlocs;
    e->val_off[n] = e->nvals;
    e->thread[n] = thread;
    e->lkey[n] = lkey;
    e->lval[n] = lval;
    memcpy(e->vals + e->nvals, s->values, e->ntypes * sizeof *e->vals);
    e->nvals += e->ntypes;
    e->nlocs += s->depth;
    e->nsamples++;
    e->sample_set.slot[slot] = (uint32_t)n + 1;
    e->sample_set.n++;
}

/* ---- gzip output: protobuf-c appends, zlib compresses, stdio writes ---- */

struct gz_sink {
    ProtobufCBuffer base; /* first: protobuf-c calls base.append with a pointer to it */
    z_stream z;
    FILE *f;
    int err;              /* errno of the first failure, 0 so far */
    unsigned char out[65536];
};

static void gz_run(struct gz_sink *g, int flush)
{
    do {
        g->z.next_out = g->out;
        g->z.avail_out = sizeof g->out;
        int rc = deflate(&g->z, flush);
        if (rc == Z_STREAM_ERROR) {
            g->err = EIO;
            return;
        }
        size_t have = sizeof g->out - g->z.avail_out;
        if (have && fwrite(g->out, 1, have, g->f) != have) {
            g->err = errno ? errno : EIO;
            return;
        }
    } while (g->z.avail_out == 0);
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    struct gz_sink *g = (struct gz_sink *)b;
    while (len && !g->err) {
        uInt chunk = len > (1u << 30) ? 1u << 30 : (uInt)len;
        g->z.next_in = (Bytef *)data;
        g->z.avail_in = chunk;
        gz_run(g, Z_NO_FLUSH);
        data += chunk;
        len -= chunk;
    }
}

static int write_gz(FILE *f, const Profile *p, int stored)
{
    struct gz_sink *g = calloc(1, sizeof *g);
    if (!g) {
        errno = ENOMEM;
        return -1;
    }
    g->base.append = gz_append;
    g->f = f;
    /* windowBits 15 + 16: a gzip header and trailer rather than zlib's.  zlib's default level:
     * on a profile of 211,110 stacks the fastest level saved about a quarter of the write time
     * (660 against 830 ms) for a file half as large again (810 KB against 540 KB), and these
     * files are made to be shipped.  Stored (level 0): a third of a live snapshot's CPU time
     * was deflate's, for bytes that only cross a socket. */
    int level = stored ? Z_NO_COMPRESSION : Z_DEFAULT_COMPRESSION;
    if (deflateInit2(&g->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        errno = ENOMEM;
        return -1;
    }
    spanprof__pprof__profile__pack_to_buffer(p, &g->base);
    if (!g->err)
        gz_run(g, Z_FINISH);
    deflateEnd(&g->z);
    int err = g->err;
    free(g);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

/* ---- the profile ---- */

static void enc_free(struct enc *e)
{
    for (size_t i = 0; i < e->nstrs; i++)
        free(e->strs[i]);
    free(e->strs);
    free(e->str_set.slot);
    free(e->funcs);
    free(e->func_set.slot);
    free(e->samples);
    free(e->loc_off);
    free(e->val_off);
    free(e->thread);
    free(e->lkey);
    free(e->lval);
    free(e->locs);
    free(e->vals);
    free(e->sample_set.slot);
}

/* ---- the builder ---- */

struct spanprof__pprof_builder {
    struct enc e;
    ValueType *types, **type_ptrs;
    size_t ntypes;
    ValueType period_type;
    int64_t period, duration_ns, time_ns;
    int64_t comment, label_key;
    int stored;
    Mapping mapping;
};

static void builder_free(struct spanprof__pprof_builder *b)
{
    enc_free(&b->e);
    free(b->types);
    free(b->type_ptrs);
    free(b);
}

struct spanprof__pprof_builder *spanprof__pprof_begin(const struct spanprof__pprof_model *m)
{
    if (!m->ntypes) {
        errno = EINVAL;
        return NULL;
    }
    struct spanprof__pprof_builder *b = calloc(1, sizeof *b);
    if (!b) {
        errno = ENOMEM;
        return NULL;
    }
    struct enc *e = &b->e;
    e->ntypes = b->ntypes = m->ntypes;
    /* string_table[0] must be "" */
    e->strs = calloc(64, sizeof *e->strs);
    e->strs_cap = 64;
    b->types = calloc(m->ntypes, sizeof *b->types);
    b->type_ptrs = calloc(m->ntypes, sizeof *b->type_ptrs);
    if (!e->strs || !(e->strs[0] = strdup("")) || !b->types || !b->type_ptrs) {
        e->nstrs = e->strs ? 1 : 0; /* strs[0] is "" or NULL: either frees */
        builder_free(b);
        errno = ENOMEM;
        return NULL;
    }
    e->nstrs = 1;
    b->label_key = intern(e, "thread");
    for (size_t i = 0; i < m->ntypes; i++) {
        ValueType init = SPANPROF__PPROF__VALUE_TYPE__INIT;
        b->types[i] = init;
        b->types[i].type = intern(e, m->types[i].type);
        b->types[i].unit = intern(e, m->types[i].unit);
        b->type_ptrs[i] = &b->types[i];
    }
    ValueType pt = SPANPROF__PPROF__VALUE_TYPE__INIT;
    pt.type = intern(e, m->period_type.type);
    pt.unit = intern(e, m->period_type.unit);
    b->period_type = pt;
    b->period = m->period;
    b->stored = m->stored;
    b->duration_ns = m->duration_ns;
    b->time_ns = m->time_ns;
    b->comment = m->comment ? intern(e, m->comment) : 0;
    Mapping mapping = SPANPROF__PPROF__MAPPING__INIT;
    mapping.id = 1;
    mapping.filename = intern(e, m->program);
    mapping.has_functions = mapping.has_filenames = mapping.has_line_numbers = 1;
    b->mapping = mapping;
    if (e->oom) {
        builder_free(b);
        errno = ENOMEM;
        return NULL;
    }
    return b;
}

int spanprof__pprof_add(struct spanprof__pprof_builder *b, const struct spanprof__pprof_sample *s)
{
    return spanprof__pprof_add_labelled(b, s, NULL, NULL);
}

int spanprof__pprof_add_labelled(struct spanprof__pprof_builder *b, const struct spanprof__pprof_sample *s,
                                 const char *key, const char *value)
{
    if (!b->e.oom)
        add_sample(&b->e, s, key, value);
    if (b->e.oom) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void spanprof__pprof_set_run(struct spanprof__pprof_builder *b, int64_t duration_ns, int64_t time_ns,
                             const char *program)
{
    b->duration_ns = duration_ns;
    b->time_ns = time_ns;
    b->mapping.filename = intern(&b->e, program);
}

int spanprof__pprof_finish(struct spanprof__pprof_builder *b, FILE *f)
{
    struct enc *e = &b->e;
    /* Now that nothing moves: point the messages at their arrays. */
    Sample **sample_ptrs = NULL;
    Location *locs = NULL, **loc_ptrs = NULL;
    Line *lines = NULL, **line_ptrs = NULL;
    Function **func_ptrs = NULL;
    Label *labels = NULL, **label_ptrs = NULL;
    Mapping *mapping_ptr = &b->mapping;
    if (!e->oom) {
        sample_ptrs = calloc(e->nsamples + 1, sizeof *sample_ptrs);
        locs = calloc(e->nfuncs + 1, sizeof *locs);
        loc_ptrs = calloc(e->nfuncs + 1, sizeof *loc_ptrs);
        lines = calloc(e->nfuncs + 1, sizeof *lines);
        line_ptrs = calloc(e->nfuncs + 1, sizeof *line_ptrs);
        func_ptrs = calloc(e->nfuncs + 1, sizeof *func_ptrs);
        labels = calloc(2 * e->nsamples + 1, sizeof *labels);
        label_ptrs = calloc(2 * e->nsamples + 1, sizeof *label_ptrs);
        if (!sample_ptrs || !locs || !loc_ptrs || !lines || !line_ptrs || !func_ptrs || !labels ||
            !label_ptrs)
            e->oom = 1;
    }
    int rc = -1;
    if (!e->oom) {
        for (size_t i = 0; i < e->nfuncs; i++) {
            Location li = SPANPROF__PPROF__LOCATION__INIT;
            Line ln = SPANPROF__PPROF__LINE__INIT;
            ln.function_id = e->funcs[i].id;
            ln.line = e->funcs[i].start_line;
            lines[i] = ln;
            line_ptrs[i] = &lines[i];
            li.id = e->funcs[i].id;
            li.mapping_id = b->mapping.id;
            li.n_line = 1;
            li.line = &line_ptrs[i];
            locs[i] = li;
            loc_ptrs[i] = &locs[i];
            func_ptrs[i] = &e->funcs[i];
        }
        for (size_t i = 0; i < e->nsamples; i++) {
            Sample *s = &e->samples[i];
            s->n_location_id = sample_depth(e, (uint32_t)i);
            s->location_id = e->locs + e->loc_off[i];
            s->n_value = e->ntypes;
            s->value = e->vals + e->val_off[i];
            size_t nl = 0;
            if (e->thread[i]) {
                Label l = SPANPROF__PPROF__LABEL__INIT;
                l.key = b->label_key;
                l.str = e->thread[i];
                labels[2 * i + nl] = l;
                label_ptrs[2 * i + nl] = &labels[2 * i + nl];
                nl++;
            }
            if (e->lkey[i]) {
                Label l = SPANPROF__PPROF__LABEL__INIT;
                l.key = e->lkey[i];
                l.str = e->lval[i];
                labels[2 * i + nl] = l;
                label_ptrs[2 * i + nl] = &labels[2 * i + nl];
                nl++;
            }
            if (nl) {
                s->n_label = nl;
                s->label = &label_ptrs[2 * i];
            }
            sample_ptrs[i] = s;
        }
        Profile p = SPANPROF__PPROF__PROFILE__INIT;
        p.n_sample_type = b->ntypes;
        p.sample_type = b->type_ptrs;
        p.n_sample = e->nsamples;
        p.sample = sample_ptrs;
        p.n_mapping = 1;
        p.mapping = &mapping_ptr;
        p.n_location = e->nfuncs;
        p.location = loc_ptrs;
        p.n_function = e->nfuncs;
        p.function = func_ptrs;
        p.n_string_table = e->nstrs;
        p.string_table = e->strs;
        p.time_nanos = b->time_ns;
        p.duration_nanos = b->duration_ns;
        p.period_type = &b->period_type;
        p.period = b->period;
        if (b->comment) {
            p.n_comment = 1;
            p.comment = &b->comment;
        }
        rc = write_gz(f, &p, b->stored);
    }
    int err = e->oom ? ENOMEM : errno;
    free(sample_ptrs);
    free(locs);
    free(loc_ptrs);
    free(lines);
    free(line_ptrs);
    free(func_ptrs);
    free(labels);
    free(label_ptrs);
    builder_free(b);
    errno = err;
    return rc;
}

int spanprof__pprof_write(FILE *f, const struct spanprof__pprof_model *m)
{
    struct spanprof__pprof_builder *b = spanprof__pprof_begin(m);
    if (!b)
        return -1;
    for (size_t i = 0; i < m->nsamples; i++)
        if (spanprof__pprof_add(b, &m->samples[i]))
            break; /* finish reports it */
    return spanprof__pprof_finish(b, f);
}
