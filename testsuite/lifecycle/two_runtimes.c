/* two_runtimes.c — a program linked with libspanprof.a that dlopens a library linked with
 * libspanprof.so (two_runtimes_lib.c): the library's copy of the runtime stays off with one
 * warning naming the fix, and the program's profile is written once, never overwritten.
 * Linked with -rdynamic (the fix), the library uses the program's copy: one profile with both.
 * The other way round — the program with libspanprof.so, the library with libspanprof.a inside —
 * the library's calls go to the program's copy, the library's own copy stays off quietly.
 * test-driver: two-runtimes */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((span, noinline)) void host_work(void)
{
}

int main(int argc, char **argv)
{
    host_work();
    void *lib = dlopen(argc > 1 ? argv[1] : "", RTLD_NOW);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    void (*run)(void) = (void (*)(void))dlsym(lib, "plugin_run");
    run();
    host_work();
    puts("done");
    return 0;
}
