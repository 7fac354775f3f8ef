/* signals.c — the profile of a process that ends by a signal, and dumps on a signal.
 *
 * Terminating signals (INT, TERM, HUP, QUIT): a handler only where the program leaves the
 * default action when the runtime starts; a program's own handler — installed before start-up
 * (seen here) or after (sigaction replaces ours) — keeps its behaviour exactly.  Ours does not
 * write: it asks the writer thread (writer.c) and waits for it at most TERM_WAIT_MS, then puts
 * the default action back and raises the signal again, so the process dies by it as it would
 * have (status 128+N, a core where the default dumps one).  No writer thread in this process,
 * or no answer in time (say, the interrupted thread holds a lock the writer needs): the folded
 * stacks are written from the handler by the async-signal-safe writer (report/safefolded.c).
 *
 * Crashes (SEGV, BUS, ILL, FPE, ABRT): the folded stacks, by the async-signal-safe writer, and
 * with SPANPROF_FLIGHT the flight recorder's last seconds (lifecycle/flight.c), once; then a handler the program had installed before start-up runs as before, or the default
 * action comes back and the fault happens again (or the signal is raised again when it was sent)
 * so the process dies as it would have.  A fault inside our handler kills the process at once
 * (the crash signals are blocked while it runs): never a hang, never a hidden crash.
 *
 * SPANPROF_DUMP_SIGNAL: the handler only wakes the writer thread; the program runs on.  Sent
 * with sigqueue and SPANPROF__FLIGHT_SIGVAL, it asks for a flight capture instead.
 *
 * When the library holding the runtime is unloaded, a stop stage puts back the actions it
 * replaced, wherever its handler is still installed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/flight.h"
#include "lifecycle/lifecycle.h"
#include "common/signalname.h"
#include "record/clock.h"

#define TERM_WAIT_MS 10000

static const int term_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define COUNT(a) (sizeof a / sizeof *a)

static struct sigaction chained[NSIG]; /* crash: the program's handler from before start-up */
static struct sigaction dump_old;       /* the dump signal's action before ours */
static int dump_installed;              /* SPANPROF_DUMP_SIGNAL's handler is ours, on this signal */
static int dying;                       /* a terminating signal is being handled */
static int crash_written;               /* the crash handler wrote (once per process image) */
int spanprof__term_handled;             /* some terminating signal has our handler */

static void say(const char *a, const char *b, const char *c)
{
    const char *parts[] = {"spanprof: ", a, b, c, "\n"};
    for (size_t i = 0; i < COUNT(parts); i++)
        if (write(2, parts[i], strlen(parts[i])) < 0)
            return;
}

/* The interrupted thread's open spans are charged up to now (the process is about to end). */
static void settle_self(void)
{
    struct spanprof__thread *t = spanprof__tls;
    if (t != &spanprof__sentinel_thread && !spanprof__flags.counting)
        spanprof__thread_settle(t, spanprof__clock_now());
}

static void die_by(int sig)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    raise(sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    /* Not reached: the default action of every signal handled here ends the process. */
    _exit(128 + sig);
}

static void term_handler(int sig, siginfo_t *info, void *uc)
{
    (void)info, (void)uc;
    spanprof__tls_busy = 1; /* spans run from here on are not recorded */
    if (__atomic_exchange_n(&dying, 1, __ATOMIC_ACQ_REL)) {
        /* Another thread is writing: it ends the process when done (or at its deadline). */
        for (;;)
            pause();
    }
    settle_self();
    uint32_t ticket;
    if (spanprof__writer_request_last(&ticket) != 0) {
        spanprof__folded_write_safe(&spanprof__outputs);
    } else if (spanprof__writer_wait(ticket, TERM_WAIT_MS) != 0) {
        say("warning: the profile was not written within 10 s of SIG", sigabbrev_np(sig),
            "; writing the folded stacks only");
        spanprof__folded_write_safe(&spanprof__outputs);
        spanprof__outfile_abandon();
    }
    die_by(sig);
}

static void crash_handler(int sig, siginfo_t *info, void *uc)
{
    int saved_errno = errno;
    spanprof__tls_busy = 1;
    if (!__atomic_exchange_n(&crash_written, 1, __ATOMIC_ACQ_REL)) {
        settle_self();
        spanprof__folded_write_safe(&spanprof__outputs);
        char name[32] = "SIG";
        const char *abbrev = sigabbrev_np(sig);
        strncat(name, abbrev ? abbrev : "NAL", sizeof name - 4);
        spanprof__flight_crash(name);
        spanprof__outfile_abandon(); /* the writer thread's half-written files die with us */
    }
    struct sigaction *prev = &chained[sig];
    if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        if (prev->sa_flags & SA_RESETHAND) {
            struct sigaction dfl = {.sa_handler = SIG_DFL};
            sigaction(sig, &dfl, NULL);
        }
        errno = saved_errno;
        if (prev->sa_flags & SA_SIGINFO)
            prev->sa_sigaction(sig, info, uc);
        else
            prev->sa_handler(sig);
        return;
    }
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* A fault happens again when the handler returns; a sent signal (kill, raise, abort) is
     * raised again, delivered when the handler returns and unblocks it. */
    if (info->si_code <= 0)
        raise(sig);
    errno = saved_errno;
}

/* A signal sent with sigqueue and SPANPROF__FLIGHT_SIGVAL (spanprof dump --flight) asks for a
 * flight capture instead of a dump. */
static void dump_handler(int sig, siginfo_t *info, void *uc)
{
    (void)sig, (void)uc;
    int saved_errno = errno;
    uint32_t ticket;
    if (info && info->si_code == SI_QUEUE && info->si_value.sival_int == SPANPROF__FLIGHT_SIGVAL)
        spanprof__flight_request();
    else
        spanprof__writer_request(&ticket);
    errno = saved_errno;
}

static int is_default(int sig, struct sigaction *old)
{
    return sigaction(sig, NULL, old) == 0 && !(old->sa_flags & SA_SIGINFO) &&
           old->sa_handler == SIG_DFL;
}

void spanprof__signals_start(int dump_signal)
{
    struct sigaction sa = {.sa_sigaction = term_handler, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < COUNT(term_signals); i++)
        sigaddset(&sa.sa_mask, term_signals[i]);
    if (dump_signal)
        sigaddset(&sa.sa_mask, dump_signal);
    for (size_t i = 0; i < COUNT(term_signals); i++) {
        struct sigaction old;
        if (term_signals[i] != dump_signal && is_default(term_signals[i], &old) &&
            sigaction(term_signals[i], &sa, NULL) == 0)
            spanprof__term_handled = 1;
    }

    struct sigaction crash = {.sa_sigaction = crash_handler,
                              .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
    sigemptyset(&crash.sa_mask);
    for (size_t i = 0; i < COUNT(crash_signals); i++)
        sigaddset(&crash.sa_mask, crash_signals[i]);
    for (size_t i = 0; i < COUNT(crash_signals); i++) {
        int sig = crash_signals[i];
        struct sigaction old;
        if (sigaction(sig, NULL, &old) != 0 ||
            (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN))
            continue;
        chained[sig] = old;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            chained[sig].sa_handler = SIG_DFL;
        sigaction(sig, &crash, NULL);
    }

    if (dump_signal) {
        struct sigaction old;
        struct sigaction dump = {.sa_sigaction = dump_handler, .sa_flags = SA_SIGINFO | SA_RESTART};
        sigemptyset(&dump.sa_mask);
        if (sigaction(dump_signal, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN) &&
            sigaction(dump_signal, &dump, NULL) == 0) {
            dump_old = old;
            dump_installed = dump_signal;
        } else {
            say("warning: SPANPROF_DUMP_SIGNAL=SIG", sigabbrev_np(dump_signal),
                ": the program handles that signal itself; no dumps on it");
        }
    }
}

/* SIG's action back to OLD, if the handler is still ours (a program that installed its own since
 * keeps it). */
static void restore(int sig, void *ours, const struct sigaction *old)
{
    struct sigaction now;
    if (sigaction(sig, NULL, &now) == 0 && (void *)now.sa_sigaction == ours)
        sigaction(sig, old, NULL);
}

/* The runtime is being unloaded (a stop stage): no handler of ours may run afterwards. */
static void stop_signals(void)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    for (size_t i = 0; i < COUNT(term_signals); i++)
        restore(term_signals[i], (void *)term_handler, &dfl);
    for (size_t i = 0; i < COUNT(crash_signals); i++)
        restore(crash_signals[i], (void *)crash_handler, &chained[crash_signals[i]]);
    if (dump_installed)
        restore(dump_installed, (void *)dump_handler, &dump_old);
    spanprof__term_handled = 0;
}
SPANPROF_STOP_STAGE(stop_signals);
