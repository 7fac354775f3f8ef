/* arena.c — the runtime's memory: anonymous mappings and a bump allocator over them.
 *
 * Memory comes from mmap, never malloc, so a malloc interposer that is itself instrumented
 * cannot recurse into us, and nothing is freed while the process runs (thread data must outlive
 * its thread until the process-exit write).  Fresh mappings are zeroed, which callers rely on.
 */
#include <sys/mman.h>

#include "record/record.h"

#define ARENA_CHUNK ((size_t)64 * 1024)

void *spanprof__map(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void spanprof__unmap(void *p, size_t size)
{
    munmap(p, size);
}

void *spanprof__arena_alloc(struct spanprof__arena *a, size_t size)
{
    size = (size + 63) & ~(size_t)63; /* nodes are one cache line each */
    if ((size_t)(a->end - a->cur) < size) {
        size_t chunk = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        char *p = spanprof__map(chunk);
        if (!p)
            return NULL;
        a->cur = p; /* the rest of the old chunk is dropped: at most one node's worth */
        a->end = p + chunk;
    }
    void *r = a->cur;
    a->cur += size;
    return r;
}
