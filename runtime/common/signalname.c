/* signalname.c — the rule for SPANPROF_DUMP_SIGNAL's value (signalname.h). */
#define _GNU_SOURCE /* sigabbrev_np */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/signalname.h"

int spanprof__dump_signal_parse(const char *text, int *named)
{
    if (named)
        *named = 0;
    if (strncmp(text, "SIG", 3) == 0)
        text += 3;
    long n = 0;
    for (int i = 1; i < NSIG && !n; i++)
        if (sigabbrev_np(i) && strcmp(text, sigabbrev_np(i)) == 0)
            n = i;
    if (!n) {
        char *end;
        errno = 0;
        n = strtol(text, &end, 10);
        if (*text < '0' || *text > '9' || *end || errno)
            return 0;
    }
    if (n < 1 || n > SIGRTMAX)
        return 0;
    if (named)
        *named = 1;
    if (n == SIGKILL || n == SIGSTOP || n == SIGSEGV || n == SIGBUS || n == SIGILL ||
        n == SIGFPE || n == SIGABRT)
        return 0;
    return (int)n;
}
