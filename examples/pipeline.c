/* pipeline.c — the demo program: a small multi-threaded log-processing pipeline
 *
 *   generate → parse → digest → summarise      (one thread per stage)
 *
 * Stages hand batches of records to each other through bounded queues (batches keep the
 * locking cost small next to the work, so the time goes where the stages put it).  Each stage function carries a span, so the profile shows
 * where the time goes per stage; "digest" is the deliberate bottleneck (it hashes every record
 * many rounds over), which a flame graph and coz's causal profile should both point at.
 * Each record leaving the pipeline is a progress point ("item", on summarise), so coz measures
 * throughput in records per second and predicts how much a faster stage would raise it.
 *
 * Usage: pipeline [RECORDS]      (default 200000)
 * The program builds and runs the same without the plugin: SPAN expands to nothing then. */
#define _GNU_SOURCE
#include <pthread.h>
#include <spanprof.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { QUEUE_SLOTS = 16, BATCH = 32, LINE_MAX_BYTES = 128, DIGEST_ROUNDS = 24 };

struct record {
    char line[LINE_MAX_BYTES];
    char level[8];
    unsigned status;
    unsigned latency_ms;
    uint64_t digest;
};

/* What travels between stages: up to BATCH records. */
struct batch {
    unsigned count;
    struct record records[BATCH];
};

/* A bounded blocking queue of batches; NULL is the end-of-stream marker. */
struct queue {
    struct batch *slots[QUEUE_SLOTS];
    unsigned head, tail, count, producers;
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
};

static void queue_init(struct queue *q, unsigned producers)
{
    memset(q, 0, sizeof *q);
    q->producers = producers;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    pthread_cond_init(&q->not_full, NULL);
}

static void queue_push(struct queue *q, struct batch *b)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == QUEUE_SLOTS)
        pthread_cond_wait(&q->not_full, &q->lock);
    q->slots[q->tail] = b;
    q->tail = (q->tail + 1) % QUEUE_SLOTS;
    q->count++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

/* One producer is done; the last one to finish wakes every consumer. */
static void queue_close(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->producers--;
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

/* Returns NULL once the queue is empty and all producers have closed it. */
static struct batch *queue_pop(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && q->producers > 0)
        pthread_cond_wait(&q->not_empty, &q->lock);
    struct batch *b = NULL;
    if (q->count > 0) {
        b = q->slots[q->head];
        q->head = (q->head + 1) % QUEUE_SLOTS;
        q->count--;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return b;
}

static struct queue to_parse, to_digest, to_summarise;
static unsigned long record_count = 200000;

/* --- stage 1: generate log lines (stands in for reading a file) --- */
SPAN_NAMED("generate") static void generate_line(struct record *r, unsigned long i)
{
    static const char *const levels[] = { "INFO", "INFO", "INFO", "WARN", "ERROR" };
    uint64_t x = i * 0x9e3779b97f4a7c15ull;
    snprintf(r->line, sizeof r->line, "2026-11-22T10:%02lu:%02lu level=%s status=%u latency=%lums path=/api/v1/item/%lu",
             (i / 60) % 60, i % 60, levels[x % 5], 200 + (unsigned)(x >> 8) % 4 * 100,
             (unsigned long)(x >> 20) % 900, i);
}

static void *generator(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "generator");
    for (unsigned long i = 0; i < record_count;) {
        struct batch *b = malloc(sizeof *b);
        for (b->count = 0; b->count < BATCH && i < record_count; b->count++, i++)
            generate_line(&b->records[b->count], i);
        queue_push(&to_parse, b);
    }
    queue_close(&to_parse);
    return NULL;
}

/* --- stage 2: parse key=value fields --- */
static const char *field(const char *line, const char *key)
{
    const char *at = strstr(line, key);
    return at ? at + strlen(key) : "";
}

SPAN_NAMED("parse") static void parse_line(struct record *r)
{
    const char *level = field(r->line, "level=");
    size_t n = strcspn(level, " ");
    if (n >= sizeof r->level)
        n = sizeof r->level - 1;
    memcpy(r->level, level, n);
    r->level[n] = '\0';
    r->status = (unsigned)strtoul(field(r->line, "status="), NULL, 10);
    r->latency_ms = (unsigned)strtoul(field(r->line, "latency="), NULL, 10);
}

static void *parser(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "parser");
    struct batch *b;
    while ((b = queue_pop(&to_parse)) != NULL) {
        for (unsigned i = 0; i < b->count; i++)
            parse_line(&b->records[i]);
        queue_push(&to_digest, b);
    }
    queue_close(&to_digest);
    return NULL;
}

/* --- stage 3: digest (the bottleneck: FNV-1a over the line, many rounds) --- */
SPAN static uint64_t fnv1a(const char *text, uint64_t seed)
{
    uint64_t hash = 0xcbf29ce484222325ull ^ seed;
    for (const char *p = text; *p; p++)
        hash = (hash ^ (unsigned char)*p) * 0x100000001b3ull;
    return hash;
}

SPAN_NAMED("digest") static void digest_record(struct record *r)
{
    uint64_t hash = 0;
    for (int round = 0; round < DIGEST_ROUNDS; round++)
        hash = fnv1a(r->line, hash);
    r->digest = hash;
}

static void *digester(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "digester");
    struct batch *b;
    while ((b = queue_pop(&to_digest)) != NULL) {
        for (unsigned i = 0; i < b->count; i++)
            digest_record(&b->records[i]);
        queue_push(&to_summarise, b);
    }
    queue_close(&to_summarise);
    return NULL;
}

/* --- stage 4: summarise --- */
struct summary {
    unsigned long records, errors, slow;
    uint64_t digest_xor;
};

SPAN_NAMED("summarise") PROGRESS_POINT_NAMED("item") static void summarise(struct summary *s, struct record *r)
{
    s->records++;
    s->errors += strcmp(r->level, "ERROR") == 0 || r->status >= 500;
    s->slow += r->latency_ms > 500;
    s->digest_xor ^= r->digest;
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && (record_count = strtoul(argv[1], NULL, 10)) == 0)) {
        fprintf(stderr, "usage: %s [RECORDS]   (RECORDS > 0, default 200000)\n", argv[0]);
        return 2;
    }
    queue_init(&to_parse, 1);
    queue_init(&to_digest, 1);
    queue_init(&to_summarise, 1);

    void *(*const stages[])(void *) = { generator, parser, digester };
    pthread_t threads[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&threads[i], NULL, stages[i], NULL);

    struct summary s = { 0 };
    struct batch *b;
    while ((b = queue_pop(&to_summarise)) != NULL) {
        for (unsigned i = 0; i < b->count; i++)
            summarise(&s, &b->records[i]);
        free(b);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(threads[i], NULL);
    printf("records=%lu errors=%lu slow=%lu digest=%016llx\n", s.records, s.errors, s.slow,
           (unsigned long long)s.digest_xor);
    return 0;
}
