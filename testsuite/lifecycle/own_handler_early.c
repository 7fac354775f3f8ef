/* own_handler_early.c — a program whose SIGTERM handler is installed before the runtime starts
 * (a constructor that runs first, in a program linked with libspanprof.a): the runtime sees it
 * and leaves SIGTERM alone; the handler runs, the program goes on and exits normally.
 * test-build: static */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_term(int sig)
{
    (void)sig;
    static const char msg[] = "handler: SIGTERM\n";
    write(1, msg, strlen(msg));
}

__attribute__((constructor(101))) static void install(void)
{
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

__attribute__((span, noinline)) void job(void)
{
}

int main(void)
{
    job();
    raise(SIGTERM);
    job();
    puts("main: exiting 0");
    return 0;
}
