/* runtime_calls.c — a preload library that counts the calls instrumented code makes into the
 * runtime's enter and exit (spanprof.h: SPANPROF_ABI_ENTER and __spanprof_exit), passes each on to
 * the runtime, and prints the two counts to stderr at exit:
 *     runtime calls: enter N, exit M
 * It stands in front of the runtime in symbol lookup (LD_PRELOAD), so the program's calls, made
 * through its GOT, come here first; the runtime's own calls to itself do not. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include <spanprof.h>

static uint64_t enters, exits;

void counted_enter(struct spanprof_site *site, void *frame, uintptr_t entry) __asm__(SPANPROF_ABI_ENTER);
void counted_enter(struct spanprof_site *site, void *frame, uintptr_t entry)
{
    static void (*next)(struct spanprof_site *, void *, uintptr_t);
    if (!next)
        *(void **)&next = dlsym(RTLD_NEXT, SPANPROF_ABI_ENTER);
    __atomic_fetch_add(&enters, 1, __ATOMIC_RELAXED);
    next(site, frame, entry);
}

void __spanprof_exit(struct spanprof_site *site, void *frame)
{
    static void (*next)(struct spanprof_site *, void *);
    if (!next)
        *(void **)&next = dlsym(RTLD_NEXT, "__spanprof_exit");
    __atomic_fetch_add(&exits, 1, __ATOMIC_RELAXED);
    next(site, frame);
}

__attribute__((destructor)) static void print_counts(void)
{
    fprintf(stderr, "runtime calls: enter %llu, exit %llu\n", (unsigned long long)enters,
            (unsigned long long)exits);
}
