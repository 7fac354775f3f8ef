/* signalname.h — which signals may be dump signals (SPANPROF_DUMP_SIGNAL), read by the runtime's
 * options and by `spanprof dump` alike (signalname.c; depends on nothing else, never installed).
 */
#ifndef SPANPROF_SIGNALNAME_H
#define SPANPROF_SIGNALNAME_H

#pragma GCC visibility push(hidden)

/* The signal TEXT names — the C library's name with or without "SIG" (USR2, SIGUSR2) or a
 * number — if a program may catch it and it is not one of the signals the runtime keeps for
 * itself or never handles (KILL, STOP, and the crash signals SEGV, BUS, ILL, FPE, ABRT): its
 * number, else 0.  *NAMED (may be NULL) is set to whether TEXT names a signal at all. */
int spanprof__dump_signal_parse(const char *text, int *named);

/* The value `spanprof dump --flight` sends with SPANPROF_DUMP_SIGNAL (sigqueue): a flight
 * capture is asked for instead of a dump. */
#define SPANPROF__FLIGHT_SIGVAL 0x666c6974

#pragma GCC visibility pop

#endif /* SPANPROF_SIGNALNAME_H */
