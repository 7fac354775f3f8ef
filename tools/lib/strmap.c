/* strmap.c — a hash map from byte strings to dense indexes 0, 1, 2, ... in order of first
 * insertion, for merging (a span's name/file/line, a folded stack) without a scan per entry. */
#include "lib/lib.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;      /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void strmap_init(struct strmap *m)
{
    m->slots = NULL;
    m->cap = m->n = 0;
}

static void grow(struct strmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 1024;
    struct strmap_entry *slots = xmalloc(cap * sizeof *slots);
    for (size_t i = 0; i < cap; i++)
        slots[i].key = NULL;
    for (size_t i = 0; i < m->cap; i++) {
        struct strmap_entry *e = &m->slots[i];
        if (!e->key)
            continue;
        size_t j = e->hash & (cap - 1);
        while (slots[j].key)
            j = (j + 1) & (cap - 1);
        slots[j] = *e;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

size_t strmap_index(struct strmap *m, const char *key, size_t len, int *added)
{
    if (2 * (m->n + 1) > m->cap)
        grow(m);
    uint64_t h = hash_bytes(key, len);
    size_t j = h & (m->cap - 1);
    for (;; j = (j + 1) & (m->cap - 1)) {
        struct strmap_entry *e = &m->slots[j];
        if (!e->key) {
            e->key = xmalloc(len + 1);
            memcpy(e->key, key, len);
            e->key[len] = '\0';
            e->len = len;
            e->hash = h;
            e->index = m->n++;
            *added = 1;
            return e->index;
        }
        if (e->hash == h && e->len == len && !memcmp(e->key, key, len)) {
            *added = 0;
            return e->index;
        }
    }
}

long strmap_find(const struct strmap *m, const char *key, size_t len)
{
    if (!m->cap)
        return -1;
    uint64_t h = hash_bytes(key, len);
    for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        const struct strmap_entry *e = &m->slots[j];
        if (!e->key)
            return -1;
        if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
            return (long)e->index;
    }
}

void strmap_free(struct strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    strmap_init(m);
}
