/* crash_chained.c — a program that installs its own SIGSEGV handler before the runtime starts
 * (a constructor that runs first, in a program linked with libspanprof.a): the folded stacks
 * are written, then its handler runs as it always did (here: a message and exit status 7).
 * test-build: static */
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig)
{
    (void)sig;
    static const char msg[] = "program's handler: SIGSEGV\n";
    write(1, msg, strlen(msg));
    _exit(7);
}

__attribute__((constructor(101))) static void install(void)
{
    struct sigaction sa = {.sa_handler = on_segv};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
}

__attribute__((span, noinline)) void fault(int *volatile p)
{
    *p = 1;
}

int main(void)
{
    fault(NULL);
    return 0;
}
