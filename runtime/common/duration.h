/* duration.h — durations as SPANPROF_SLOW and SPANPROF_FLIGHT_MIN write them (`5ms`, `250us`,
 * `1.5s`, `800ns`), and SPANPROF_SLOW's list of SPAN:DURATION rules: shared by the runtime's
 * options and the tool's `record --slow` (duration.c; depends on nothing else, never installed).
 */
#ifndef SPANPROF_DURATION_H
#define SPANPROF_DURATION_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* The LEN bytes at TEXT as a duration: a decimal number > 0 and a unit (ns, us, ms, s), at most
 * a day.  1 with *NS set (at least 1), 0 when not a duration. */
int spanprof__duration_parse(const char *text, size_t len, uint64_t *ns);

/* Calls FN(GLOB, GLOB_LEN, NS, ARG) for each SPAN:DURATION of the comma-separated LIST (a glob
 * may hold no comma; its last colon ends it).  0, or -1 when an entry is not SPAN:DURATION with
 * a non-empty SPAN and a valid duration (FN is then called for none). */
int spanprof__slow_rules(const char *list, void (*fn)(const char *glob, size_t len, uint64_t ns,
                                                      void *arg),
                         void *arg);

#pragma GCC visibility pop

#endif /* SPANPROF_DURATION_H */
