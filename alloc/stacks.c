/* stacks.c — allocation-stack sampling for SPANPROF_ALLOC_STACKS=1.
 *
 * Sampling by bytes: each thread counts down a random number of bytes drawn from an exponential
 * distribution with mean T (SPANPROF_ALLOC_SAMPLE); the allocation that crosses zero is sampled and
 * a new countdown drawn (the exponential is memoryless, so this is a Poisson process over bytes).
 * An allocation of s bytes is then sampled with probability 1 - exp(-s/T) and stands for
 * s / (1 - exp(-s/T)) bytes, which makes the sums unbiased.
 *
 * A sample walks the stack with libunwind (unw_step, which also gives each frame's stack pointer)
 * up to the innermost open span's frame, keeps the frames strictly inside it, not counting this
 * library's own, and names them with unw_get_proc_name (the ELF symbol table, so static functions
 * have names too).  Names are cached by address in a table that only grows until a library is
 * unloaded: another one may then be loaded at the same addresses, so the table is emptied when
 * the loader's count of unloaded objects has moved.  The strings live forever, as the runtime
 * keeps pointers to them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stacks.h"

uint64_t spanprof_alloc__sample_mean;
__thread int64_t spanprof_alloc__until __attribute__((tls_model("initial-exec")));
static __thread uint64_t rng __attribute__((tls_model("initial-exec")));

#ifdef SPANPROF_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define CACHE_SIZE 4096 /* entries; a full cache just stops caching */
struct entry {
    uintptr_t ip;
    const char *name;
};
static struct entry *cache;
static unsigned long long cache_unloads; /* the loader's unload count the cache is valid for */
static char *pool, *pool_end;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *own_base;

static char *pool_copy(const char *s)
{
    size_t n = strlen(s) + 1;
    if ((size_t)(pool_end - pool) < n) {
        size_t chunk = n > 65536 ? n : 65536;
        char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        pool = p;
        pool_end = p + chunk;
    }
    char *r = pool;
    memcpy(r, s, n);
    pool += n;
    return r;
}

/* dl_iterate_phdr callback: the loader's count of objects unloaded so far (the same in every
 * object's record, so the first one is enough). */
static int read_unloads(struct dl_phdr_info *info, size_t size, void *out)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)out = info->dlpi_subs;
    return 1;
}

/* Empties the cache if a library was unloaded since it was filled (lock held).  About 0.1 µs
 * (the loader's read lock), once per sampled allocation, which costs microseconds anyway. */
static void forget_unloaded(void)
{
    unsigned long long unloads = cache_unloads;
    dl_iterate_phdr(read_unloads, &unloads);
    if (unloads == cache_unloads)
        return;
    if (cache)
        memset(cache, 0, CACHE_SIZE * sizeof *cache);
    cache_unloads = unloads;
}

/* Name of the function at the cursor's frame (lock held). */
static const char *frame_name(unw_cursor_t *cur, uintptr_t ip)
{
    if (!cache) {
        cache = mmap(NULL, CACHE_SIZE * sizeof *cache, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (cache == MAP_FAILED)
            cache = NULL;
    }
    size_t i = (ip * 0x9e3779b97f4a7c15u) >> 52, probes = 0;
    for (; cache && cache[i].ip && probes < 16; i = (i + 1) % CACHE_SIZE, probes++)
        if (cache[i].ip == ip)
            return cache[i].name;
    char buf[512];
    unw_word_t off;
    const char *name = "[unknown]";
    if (unw_get_proc_name(cur, buf, sizeof buf, &off) == 0 && buf[0])
        name = pool_copy(buf);
    if (!name)
        name = "[unknown]";
    if (cache && !cache[i].ip && probes < 16) {
        cache[i].name = name;
        cache[i].ip = ip;
    }
    return name;
}

static int is_own(uintptr_t ip)
{
    Dl_info info;
    return dladdr((void *)ip, &info) && info.dli_fbase == own_base;
}

static size_t capture(uintptr_t span_cfa, const char **names)
{
    unw_context_t uc;
    unw_cursor_t cur;
    if (unw_getcontext(&uc) || unw_init_local(&cur, &uc))
        return 0;
    struct {
        uintptr_t ip;
        const char *name;
    } fr[SPANPROF_ALLOC_MAX_FRAMES];
    size_t n = 0, kept = 0;
    pthread_mutex_lock(&lock);
    if (!own_base) {
        Dl_info info;
        if (dladdr((void *)capture, &info))
            own_base = info.dli_fbase;
    }
    forget_unloaded();
    /* Frame i's CFA is frame i+1's stack pointer: a frame is inside the span when the next
     * frame's SP is below the span's CFA. */
    do {
        unw_word_t ip, sp;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) || unw_get_reg(&cur, UNW_REG_SP, &sp))
            break;
        if (n > 0) {
            if (sp >= span_cfa)
                break; /* frame n-1 is the span's function or outside it */
            kept = n;
        }
        if (n == SPANPROF_ALLOC_MAX_FRAMES)
            break;
        fr[n].ip = ip;
        fr[n].name = is_own(ip) ? NULL : frame_name(&cur, ip);
        n++;
    } while (unw_step(&cur) > 0);
    pthread_mutex_unlock(&lock);
    size_t out = 0;
    for (size_t i = kept; i-- > 0;) /* outermost first */
        if (fr[i].name)
            names[out++] = fr[i].name;
    return out;
}
#else
static size_t capture(uintptr_t span_cfa, const char **names)
{
    (void)span_cfa, (void)names;
    return 0;
}
#endif

/* xorshift64*: per thread, seeded from the thread's stack address and the pid. */
static double uniform(void)
{
    if (!rng)
        rng = ((uintptr_t)&rng ^ ((uint64_t)getpid() << 32)) | 1;
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53; /* [0, 1) */
}

static int64_t draw(void)
{
    double b = -log(1.0 - uniform()) * (double)spanprof_alloc__sample_mean;
    return b < 1 ? 1 : b > 9.0e18 ? (int64_t)9.0e18 : (int64_t)b;
}

void spanprof_alloc__sample(const struct spanprof_alloc_hooks *h, size_t size)
{
    static __thread int started __attribute__((tls_model("initial-exec")));
    if (!started) { /* this thread's first countdown: not a sample yet */
        started = 1;
        spanprof_alloc__until = draw() - (int64_t)size;
        if (spanprof_alloc__until > 0)
            return;
    }
    spanprof_alloc__until = draw();
    uintptr_t cfa = 0;
    void *span = h->sample_span(&cfa);
    if (!span)
        return;
    double t = (double)spanprof_alloc__sample_mean, s = (double)size;
    double weight = s / -expm1(-s / t);
    const char *names[SPANPROF_ALLOC_MAX_FRAMES];
    size_t n = capture(cfa, names);
    h->sample_add(span, names, n, weight);
}
