/* signal_death.c — a program that ends by the signal named on its command line (INT, TERM, HUP
 * or QUIT) while spans are open: its profile is written and it still dies by that signal.
 * test-driver: signals
 * test-env: SPANPROF_JSON=out.json */
#include <signal.h>
#include <stdio.h>
#include <string.h>

__attribute__((span, noinline)) void step(int i)
{
    if (i > 0)
        step(i - 1);
}

__attribute__((span, noinline)) void serve(int sig)
{
    for (int i = 0; i < 4; i++)
        step(2);
    fflush(stdout);
    raise(sig);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int sig;
    } sigs[] = {{"INT", SIGINT}, {"TERM", SIGTERM}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT}};
    for (size_t i = 0; argc > 1 && i < sizeof sigs / sizeof *sigs; i++)
        if (strcmp(argv[1], sigs[i].name) == 0) {
            printf("serving until SIG%s\n", argv[1]);
            serve(sigs[i].sig);
        }
    puts("still running");
    return 0;
}
