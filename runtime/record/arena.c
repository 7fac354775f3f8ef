/* arena.c — the runtime's memory: anonymous mappings and a bump allocator over them.
 *
 * Memory comes from mmap, never malloc, so a malloc interposer that is itself instrumented
 * cannot recurse into us, and arena chunks are never unmapped while the process runs (a reader
 * without the lock, such as the crash writer, must only ever see mapped memory).  Fresh mappings
 * are zeroed, which callers rely on; a rewound arena (a thread's data being reused, threadretire.c)
 * zeroes what it had handed out and hands its chunks out again.
 */
#include <string.h>
#include <sys/mman.h>

#include "record/record.h"

#define ARENA_CHUNK ((size_t)64 * 1024)

/* At the start of each chunk, one cache line (allocations stay 64-byte aligned). */
struct chunk {
    char *next;  /* the chunk that follows in this arena's chain, or NULL */
    size_t size; /* bytes mapped, this header included */
    size_t used; /* bytes handed out (header included) when the arena moved past it */
};
#define CHUNK_HEAD ((size_t)64)
_Static_assert(sizeof(struct chunk) <= CHUNK_HEAD, "a chunk header fits in one cache line");

void *spanprof__map(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void spanprof__unmap(void *p, size_t size)
{
    munmap(p, size);
}

int spanprof__map_grow(void **buf, size_t *cap, size_t need, size_t elem, size_t max)
{
    if (need <= *cap)
        return 1;
    size_t c = *cap ? *cap : 65536 / elem;
    while (c < need)
        c *= 2;
    if (c > max)
        return 0;
    void *p = spanprof__map(c * elem);
    if (!p)
        return 0;
    if (*buf) {
        memcpy(p, *buf, *cap * elem);
        spanprof__unmap(*buf, *cap * elem);
    }
    *buf = p;
    *cap = c;
    return 1;
}

static void use_chunk(struct spanprof__arena *a, char *c)
{
    a->chunk = c;
    a->cur = c + CHUNK_HEAD;
    a->end = c + ((struct chunk *)c)->size;
}

/* Moves A to a chunk with room for SIZE bytes: the next one in the chain if it is big enough,
 * else a new one linked in after the current one.  0 when out of memory. */
static int next_chunk(struct spanprof__arena *a, size_t size)
{
    struct chunk *cur = (struct chunk *)a->chunk;
    if (cur) {
        cur->used = (size_t)(a->cur - a->chunk);
        if (cur->next && ((struct chunk *)cur->next)->size - CHUNK_HEAD >= size) {
            use_chunk(a, cur->next);
            return 1;
        }
    }
    size_t bytes = size + CHUNK_HEAD > ARENA_CHUNK ? size + CHUNK_HEAD : ARENA_CHUNK;
    char *p = spanprof__map(bytes);
    if (!p)
        return 0;
    struct chunk *c = (struct chunk *)p;
    c->size = bytes;
    if (cur) {
        c->next = cur->next; /* the rest of the old chunk is dropped: at most one node's worth */
        cur->next = p;
    } else {
        a->first = p;
    }
    use_chunk(a, p);
    return 1;
}

/* A new chunk, under a hold (record.h): a signal handler's allocations must not interleave with
 * the move, and the mmap is a system call anyway.  One of them may have moved the arena between
 * the caller's look and the hold: then there may be room again. */
static void *alloc_in_new_chunk(struct spanprof__arena *a, size_t size)
{
    struct spanprof__hold hold;
    spanprof__hold_enter(&hold);
    char *r = NULL;
    if ((uintptr_t)a->end - (uintptr_t)a->cur >= size || next_chunk(a, size)) {
        r = a->cur;
        a->cur = r + size;
    }
    spanprof__hold_leave(&hold);
    return r;
}

/* A signal handler on the owner's thread may allocate from the same arena (its spans create
 * nodes, calltree.c) between any two instructions here, and runs to its end before this code
 * goes on: so the bump is a compare-and-swap, which fails, and is retried, when the handler
 * moved cur meanwhile.  cur is read first (acquire: end is read after it), and if the handler
 * moved to another chunk after that read, the swap fails however end compares. */
void *spanprof__arena_alloc(struct spanprof__arena *a, size_t size)
{
    size = (size + 63) & ~(size_t)63; /* nodes are one cache line each */
    char *cur = __atomic_load_n(&a->cur, __ATOMIC_ACQUIRE);
    for (;;) {
        if ((uintptr_t)__atomic_load_n(&a->end, __ATOMIC_RELAXED) - (uintptr_t)cur < size)
            return alloc_in_new_chunk(a, size);
        if (__atomic_compare_exchange_n(&a->cur, &cur, cur + size, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE))
            return cur;
    }
}

/* Zeroes only what was handed out: pages never touched stay untouched (and out of the RSS). */
void spanprof__arena_rewind(struct spanprof__arena *a)
{
    if (!a->first)
        return;
    ((struct chunk *)a->chunk)->used = (size_t)(a->cur - a->chunk);
    for (char *c = a->first; c; c = ((struct chunk *)c)->next) {
        struct chunk *h = (struct chunk *)c;
        if (h->used > CHUNK_HEAD)
            memset(c + CHUNK_HEAD, 0, h->used - CHUNK_HEAD);
        h->used = 0;
        if (c == a->chunk)
            break; /* the chunks after it were not used since the last rewind */
    }
    use_chunk(a, a->first);
}
