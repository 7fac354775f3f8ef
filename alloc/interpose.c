/* interpose.c — libspanprof-alloc.so: the malloc family, interposed for SPANPROF_ALLOC=1.
 *
 * Load it with LD_PRELOAD=libspanprof-alloc.so (or link it before libc).  A program that does not
 * load it pays nothing; loaded without SPANPROF_ALLOC=1 every call is forwarded to the next
 * definition (glibc) after one predictable branch.
 *
 * With SPANPROF_ALLOC=1 (read at the first allocation, fixed for the process) every block gets a
 * 16-byte header in front of the pointer returned: the allocating span's owner token (see
 * alloc_hooks.h) and a word holding the requested size (bits 0-47), log2 of the header's offset
 * from the real block (bits 48-55: 4, or log2 of a larger alignment) and the fork generation
 * (bits 56-63).  A free reads the header to tell the runtime whose live bytes go away; a block
 * allocated before a fork is freed in the child without touching its (parent's) owner.
 * realloc counts as a free of the old block and an allocation of the new one.
 *
 * Start-up: the next definitions are found with dlsym(RTLD_NEXT), which may itself allocate;
 * those allocations come from a static bootstrap arena, whose blocks are never freed.
 * Re-entry: allocations made while a sample is being taken (libunwind) are not counted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/alloc_hooks.h"
#include "stacks.h"

#define EXPORT __attribute__((visibility("default")))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HDR_SHIFT 4 /* 16-byte header: keeps malloc's 16-byte alignment */
#define MAX_SIZE (((uint64_t)1 << 48) - 1)

static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    size_t (*usable)(void *);
} real;

enum { UNINIT, RESOLVING, FORWARD, TRACK };
static int state;
static const struct spanprof_alloc_hooks *hooks; /* set by the runtime at its start-up */
static unsigned epoch;                           /* fork generation */
static __thread int in_hook __attribute__((tls_model("initial-exec")));

/* ---- bootstrap arena: 16-byte size prefix, then the block ---- */
static _Alignas(64) char boot[64 * 1024];
static size_t boot_used;

static void *boot_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    size_t start = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), user, end;
    do {
        user = (start + 16 + align - 1) & ~(align - 1);
        end = user + size;
        if (end > sizeof boot || end < user)
            return NULL;
    } while (!__atomic_compare_exchange_n(&boot_used, &start, end, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    *(size_t *)(boot + user - 16) = size;
    return boot + user; /* static memory: already zero, so calloc is served too */
}

static int is_boot(const void *p)
{
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

static void init(void)
{
    int expect = UNINIT;
    if (!__atomic_compare_exchange_n(&state, &expect, RESOLVING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return; /* someone else is resolving: the caller falls back to the arena */
    real.malloc = dlsym(RTLD_NEXT, "malloc");
    real.calloc = dlsym(RTLD_NEXT, "calloc");
    real.realloc = dlsym(RTLD_NEXT, "realloc");
    real.free = dlsym(RTLD_NEXT, "free");
    real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real.usable = dlsym(RTLD_NEXT, "malloc_usable_size");
    /* Same rules as the runtime: only "1" turns it on, SPANPROF=0 turns everything off, and a
     * privileged program (AT_SECURE) reads none of it. */
    const char *on = secure_getenv("SPANPROF_ALLOC"), *all = secure_getenv("SPANPROF");
    int track = on && strcmp(on, "1") == 0 && !(all && strcmp(all, "0") == 0);
    __atomic_store_n(&state, track ? TRACK : FORWARD, __ATOMIC_RELEASE);
}

/* 1 when the caller must use the bootstrap arena. */
static inline int booting(void)
{
    if (UNLIKELY(__atomic_load_n(&state, __ATOMIC_ACQUIRE) < FORWARD)) {
        init();
        return __atomic_load_n(&state, __ATOMIC_ACQUIRE) < FORWARD;
    }
    return 0;
}

/* ---- headers ---- */
static inline uint64_t *header(void *user)
{
    return (uint64_t *)user - 2;
}

static inline void *base_of(void *user)
{
    return (char *)user - ((size_t)1 << ((header(user)[1] >> 48) & 0xff));
}

static inline void *stamp(void *base, unsigned shift, size_t size)
{
    char *user = (char *)base + ((size_t)1 << shift);
    void *owner = NULL;
    const struct spanprof_alloc_hooks *h = hooks;
    if (h && !in_hook) {
        owner = h->on_alloc(size);
        in_hook = 1;
        spanprof_alloc__maybe_sample(h, size);
        in_hook = 0;
    }
    uint64_t *hd = header(user);
    hd[0] = (uintptr_t)owner;
    hd[1] = (uint64_t)size | (uint64_t)shift << 48 | (uint64_t)(epoch & 0xff) << 56;
    return user;
}

static inline void unstamp(void *user)
{
    const struct spanprof_alloc_hooks *h = hooks;
    if (!h || in_hook)
        return;
    uint64_t *hd = header(user);
    int same_process = (hd[1] >> 56) == (epoch & 0xff);
    h->on_free(same_process ? (void *)(uintptr_t)hd[0] : NULL, (size_t)(hd[1] & MAX_SIZE));
}

static void *track_aligned(size_t align, size_t size)
{
    unsigned shift = HDR_SHIFT;
    while (((size_t)1 << shift) < align)
        shift++;
    size_t off = (size_t)1 << shift;
    void *base;
    if (size > MAX_SIZE - off) {
        errno = ENOMEM;
        return NULL;
    }
    int rc = real.posix_memalign(&base, align < 16 ? 16 : align, size + off);
    if (rc) {
        errno = rc;
        return NULL;
    }
    return stamp(base, shift, size);
}

static void *do_aligned(size_t align, size_t size)
{
    if (booting())
        return boot_alloc(size, align);
    if (state == TRACK)
        return track_aligned(align, size);
    void *p;
    int rc = real.posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size);
    if (rc) {
        errno = rc;
        return NULL;
    }
    return p;
}

/* ---- the interface ---- */

EXPORT void *malloc(size_t size)
{
    if (UNLIKELY(booting()))
        return boot_alloc(size, 16);
    if (state != TRACK)
        return real.malloc(size);
    if (size > MAX_SIZE - 16) {
        errno = ENOMEM;
        return NULL;
    }
    void *base = real.malloc(size + 16);
    return base ? stamp(base, HDR_SHIFT, size) : NULL;
}

EXPORT void free(void *p)
{
    if (!p || UNLIKELY(is_boot(p)))
        return;
    if (state != TRACK) {
        real.free(p);
        return;
    }
    unstamp(p);
    real.free(base_of(p));
}

EXPORT void *calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    if (UNLIKELY(booting()))
        return boot_alloc(total, 16);
    if (state != TRACK)
        return real.calloc(n, size);
    if (total > MAX_SIZE - 16) {
        errno = ENOMEM;
        return NULL;
    }
    void *base = real.calloc(1, total + 16);
    return base ? stamp(base, HDR_SHIFT, total) : NULL;
}

EXPORT void *realloc(void *p, size_t size)
{
    if (!p)
        return malloc(size);
    if (UNLIKELY(is_boot(p))) {
        void *q = malloc(size);
        size_t old = *(size_t *)((char *)p - 16);
        if (q)
            memcpy(q, p, old < size ? old : size);
        return q;
    }
    if (state != TRACK)
        return real.realloc(p, size);
    if (size == 0) { /* glibc: frees and returns NULL */
        free(p);
        return NULL;
    }
    uint64_t *hd = header(p);
    size_t old = (size_t)(hd[1] & MAX_SIZE);
    if (((hd[1] >> 48) & 0xff) != HDR_SHIFT) { /* an aligned block: move it */
        void *q = malloc(size);
        if (q) {
            memcpy(q, p, old < size ? old : size);
            free(p);
        }
        return q;
    }
    if (size > MAX_SIZE - 16) {
        errno = ENOMEM;
        return NULL;
    }
    uint64_t saved[2] = {hd[0], hd[1]};
    void *base = real.realloc(base_of(p), size + 16);
    if (!base)
        return NULL; /* the old block is untouched and still counted */
    hd = (uint64_t *)base;
    hd[0] = saved[0];
    hd[1] = saved[1];
    unstamp((char *)base + 16);
    return stamp(base, HDR_SHIFT, size);
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, total);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    int saved = errno;
    void *p = do_aligned(align, size);
    int rc = p ? 0 : (errno ? errno : ENOMEM);
    errno = saved;
    if (p)
        *out = p;
    return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (align == 0 || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return do_aligned(align, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
    size_t a = 1; /* like glibc: a non-power-of-two alignment is rounded up */
    while (a < align)
        a <<= 1;
    return do_aligned(a, size);
}

EXPORT void *valloc(size_t size)
{
    return do_aligned((size_t)sysconf(_SC_PAGESIZE), size);
}

EXPORT void *pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    return do_aligned(page, rounded ? rounded : page);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (is_boot(p))
        return *(size_t *)((char *)p - 16);
    if (booting() || state != TRACK)
        return real.usable(p);
    return real.usable(base_of(p)) - ((size_t)1 << ((header(p)[1] >> 48) & 0xff));
}

EXPORT int spanprof_alloc_attach(const struct spanprof_alloc_hooks *h, int stacks,
                                 uint64_t sample_mean)
{
    booting();
    if (state != TRACK || !h || h->version != SPANPROF_ALLOC_HOOKS_VERSION)
        return 0;
    spanprof_alloc__sample_mean = stacks ? sample_mean : 0;
    __atomic_store_n(&hooks, h, __ATOMIC_RELEASE);
    return 1;
}

static void fork_child(void)
{
    epoch++;
}

__attribute__((constructor)) static void setup(void)
{
    booting();
    pthread_atfork(NULL, NULL, fork_child);
}
