/* dlclose_stacks.c — allocation stacks across dlclose: a library allocates under a span and is
 * unloaded; another one of the same layout is then loaded at the same address and allocates too.
 * The memory flame graph names each library's own function (frame names are cached by address;
 * the cache must not outlive the library that was there).  The program checks that the second
 * library did land where the first was, so the case is the one under test. */
/* test: needs-libunwind */
/* test-env: SPANPROF_ALLOC_STACKS=1 SPANPROF_ALLOC_SAMPLE=1 */
/* test-libs: alloc_in_a alloc_in_b */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <spanprof.h>
#include <stdint.h>
#include <stdio.h>

typedef void (*lib_fn)(void);

__attribute__((span, noinline)) void call_library(lib_fn fn)
{
    fn();
    __asm__ volatile("" ::: "memory");
}

/* Loads ./libNAME.so, calls NAME under the span, unloads it; returns where NAME was. */
static uintptr_t load_call_unload(const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "./lib%s.so", name);
    void *lib = dlopen(path, RTLD_NOW);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 0;
    }
    lib_fn fn = (lib_fn)(uintptr_t)dlsym(lib, name);
    if (!fn) {
        printf("dlsym: %s\n", dlerror());
        return 0;
    }
    call_library(fn);
    if (dlclose(lib) != 0)
        printf("dlclose: %s\n", dlerror());
    return (uintptr_t)fn;
}

int main(void)
{
    uintptr_t a = load_call_unload("alloc_in_a");
    uintptr_t b = load_call_unload("alloc_in_b");
    printf("second library at the first one's address: %s\n", a && a == b ? "yes" : "no");
    return 0;
}
