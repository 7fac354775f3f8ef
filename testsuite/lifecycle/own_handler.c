/* own_handler.c — a program with its own SIGTERM handler, installed after the runtime started:
 * its handler runs, the program goes on and exits normally, and its profile is the exit's. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t terms;

static void on_term(int sig)
{
    (void)sig;
    terms++;
    static const char msg[] = "handler: SIGTERM\n";
    write(1, msg, strlen(msg));
}

__attribute__((span, noinline)) void job(void)
{
}

int main(void)
{
    job();
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    raise(SIGTERM);
    job();
    raise(SIGTERM);
    job();
    printf("main: %d SIGTERMs handled, exiting 0\n", (int)terms);
    return 0;
}
