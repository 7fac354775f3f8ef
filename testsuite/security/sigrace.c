/* sigrace.c — signals whose handler runs a span, landing while the runtime is still starting.
 * A constructor that runs before the runtime's (the runtime is linked statically, so its
 * constructor runs after this program's priority-101 one) installs the handler for SIGRTMIN; the
 * preloaded sigrace_preload.inc raises that signal three times from inside the runtime's
 * start-up; main raises it four times more.  The profile must count every run of the handler.
 * (Real-time signals queue, so the count does not depend on when they are delivered.) */
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t handled;

__attribute__((span, noinline)) static void on_signal(int sig)
{
    (void)sig;
    handled++;
}

__attribute__((constructor(101))) static void install(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGRTMIN, &sa, NULL);
}

int main(void)
{
    for (int i = 0; i < 4; i++)
        raise(SIGRTMIN);
    printf("handler ran %d times\n", (int)handled);
    return 0;
}
