/* lifecycle.h — the process's life, the runtime's top layer (never installed): start-up and the
 * outputs it sets up (start.c), the writer thread (writer.c), the names given at run time checked
 * (namecheck.c), the flight recorder's and the live profile's writers (flight.c, live.c), signals
 * (signals.c), exec (exec.c), unloading (dlclose.c, unload.c, handover.c) and descendants
 * (ancestry.c).  The variables themselves are in options.h.
 */
#ifndef SPANPROF_LIFECYCLE_H
#define SPANPROF_LIFECYCLE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "report/report.h"

#pragma GCC visibility push(hidden)

/* ---- start.c ---- */
/* The files written at exit and by spanprof_flush(), from the environment at start-up. */
extern struct spanprof__outputs spanprof__outputs;

/* ---- writer.c ---- */
/* Writes every output now, one write at a time (exit, spanprof_flush, dumps, exec). */
int spanprof__write_serial(void);
/* The process-exit write: after it, nothing more is written by this image. */
void spanprof__write_final(void);
/* Non-zero once this image wrote its files (exec.c counts the images that wrote). */
extern int spanprof__image_wrote;
/* At start-up: the dump timer (seconds, 0: none) and the fork handler. */
void spanprof__writer_setup(double interval);
/* Starts the writer thread in this process if it has none (never from a signal handler). */
void spanprof__writer_ensure(void);
/* Async-signal-safe.  Asks the writer thread for a write (-1: no writer thread in this
 * process); TICKET is what spanprof__writer_wait waits for, at most MS milliseconds (0: written,
 * -1: not in time). */
int spanprof__writer_request(uint32_t *ticket);
/* The same, for the write before the process dies of a signal: the live snapshot's last too. */
int spanprof__writer_request_last(uint32_t *ticket);
int spanprof__writer_wait(uint32_t ticket, int ms);

/* Async-signal-safe: wakes the writer thread without asking for a write (a flight capture is
 * waiting: it serves the queue at every wake-up). */
void spanprof__writer_kick(void);

/* ---- namecheck.c: run-time span names checked at start-up ---- */
struct spanprof__options;
/* One warning line on ERR for each glob of SPANPROF_SLOW, SPANPROF_COZ_PROGRESS and
 * SPANPROF_COZ_LATENCY that names no span of the modules loaded now. */
void spanprof__check_names(const struct spanprof__options *o, FILE *err);

/* ---- flight.c: SPANPROF_FLIGHT's captures ---- */
/* At start-up, before the collectors start: spanprof__flight from O (COUNTING: no timestamps, no
 * flight recorder, with a warning).  1 when the flight recorder is on. */
int spanprof__flight_setup(const struct spanprof__options *o, int counting);
/* Writes the captures waiting in the queue that are due (FORCE: all of them: the exit write, a
 * terminating signal's).  Returns the seconds until the next one is due, -1 when none waits. */
double spanprof__flight_serve(int force);
/* From the crash handler, once: the capture of the last SPANPROF_FLIGHT seconds, named by
 * SIGNAL ("SIGSEGV"), when the flight recorder is on.  Async-signal-safe. */
void spanprof__flight_crash(const char *signal);

/* ---- live.c: SPANPROF_LIVE ---- */
/* At start-up: the directory (NULL: none), checked and made if missing (else a warning), and
 * the fork handler.  1 when live profiles are on. */
int spanprof__live_setup(const char *dir);
/* The socket and its thread, in this process, if SPANPROF_LIVE is set and they are not there
 * yet (a thread's first span; never from a signal handler). */
void spanprof__live_ensure(void);
/* The final snapshot into the directory; ENDING (exit, a terminating signal): the socket goes
 * too.  Not ending: an exec, after which the new image takes the socket's name. */
void spanprof__live_final(int ending);

/* ---- signals.c ---- */
/* Installs the handlers for terminating signals and crashes where the program has none, and
 * for DUMP_SIGNAL (0: none). */
void spanprof__signals_start(int dump_signal);
/* Non-zero when some terminating signal has the runtime's handler. */
extern int spanprof__term_handled;

/* ---- exec.c ---- */
/* Looks up the C library's exec functions now, so a vfork child never has to. */
void spanprof__exec_start(void);

/* ---- dlclose.c ---- */
/* Looks up the C library's dlclose now. */
void spanprof__dlclose_start(void);

/* ---- unload.c ---- */
/* Set by the process-exit write (start.c): the destructor that runs later is not an unload. */
extern int spanprof__exit_ran;

/* ---- handover.c ---- */
/* At the runtime's unload, with the process lock held: leaves the profile for a copy loaded later
 * (the SPANPROF_HANDOVER entry in the environment). */
void spanprof__handover_leave(const struct spanprof__outputs *out);
/* At start-up, from SPANPROF_HANDOVER (VALUE, may be NULL): takes over the profile a copy
 * unloaded earlier in this image left, and OUT's naming. */
void spanprof__handover_adopt(const char *value, struct spanprof__outputs *out);
/* Non-zero when this copy took over from one unloaded earlier. */
extern int spanprof__successor;

/* ---- ancestry.c ---- */
/* At start-up, from SPANPROF_ANCESTOR (MARKER, may be NULL): sets OUT's descendant and image
 * and exports this image's marker; 0 when another copy of the runtime runs this process (this
 * one then stays off). */
int spanprof__ancestry_start(const char *marker, struct spanprof__outputs *out);
void spanprof__ancestry_fork_child(void);
/* The process this image's runtime started in (a vfork child differs). */
extern pid_t spanprof__image_pid;
/* "SPANPROF_ANCESTOR=PID:WRITTEN:ID" for this image into OUT.  Async-signal-safe. */
void spanprof__marker(char *out, size_t size, pid_t pid, unsigned written);
/* Non-zero when some span was called in this image (since start, or since the fork). */
int spanprof__image_recorded(void);

#pragma GCC visibility pop

#endif /* SPANPROF_LIFECYCLE_H */
