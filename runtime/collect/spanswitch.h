/* spanswitch.h — spans switched off and on while the program runs (spanswitch.c): the muting
 * that a cost budget shares, requests by name, and the record of what was switched when.
 */
#ifndef SPANPROF_SPANSWITCH_H
#define SPANPROF_SPANSWITCH_H

#include <stddef.h>

#include "live/protocol.h"
#include "record/record.h"

#pragma GCC visibility push(hidden)

/* ---- muting: under the process lock ---- */
/* SITE, a span that records, goes MUTED; it goes OFF in a later spanprof__switch_settle.  -1 when
 * too many are muting already (nothing changed). */
int spanprof__switch_mute(struct spanprof_site *site);
/* MUTED sites that no thread can still be inside go OFF.  Returns how many are still MUTED. */
size_t spanprof__switch_settle(void);

/* ---- requests: the live thread's, not under the lock ---- */
enum {
    SPANPROF__SWITCH_NO_MATCH = 1,  /* GLOBS names no span (with patch points, or seen) */
    SPANPROF__SWITCH_REFUSED = 2,   /* patching is refused here: the spans stay off */
    SPANPROF__SWITCH_NO_MEMORY = 3,
};
/* The spans (with patch points, or seen) that GLOBS (comma-separated globs) names switched on
 * (ON) or off, then *ANSWER (malloc'd, *LEN bytes) lists them as live/protocol.h says.  Returns
 * 0 or one of the values above. */
int spanprof__switch_spans(const char *globs, int on, char **answer, size_t *len);
/* Every such span, listed the same way; -1 without memory. */
int spanprof__switch_list(char **answer, size_t *len);
/* Settles the sites a request left MUTED and patches those that went OFF; returns the ms until
 * it should run again, or -1 when none is left. */
long spanprof__switch_serve(void);
/* Whether SITE was switched off by request and is OFF: its points may go (a patch filter). */
int spanprof__switch_patchable(struct spanprof_site *site, void *ctx);

/* A request reads the sites of the loaded objects from start to end: dlclose holds this from
 * before the C library's dlclose until the sites that went are replaced (lifecycle/dlclose.c). */
void spanprof__switch_hold(void);
/* The same, but 0 only when nothing holds it (and it is held now); never waits. */
int spanprof__switch_try_hold(void);
void spanprof__switch_release(void);

/* ---- the record ---- */
/* One switch by request: when (s since the process started) and which way.  Each site's switches
 * are chained from its latest (spanprof__switch_latest) back through spanprof__switch_before. */
struct spanprof__switch_event {
    double at_s;
    int on;
    uint32_t before; /* the site's switch before this one: index + 1 in the log, 0 none */
};
const struct spanprof__switch_event *spanprof__switch_latest(const struct spanprof_site *site);
const struct spanprof__switch_event *spanprof__switch_before(const struct spanprof__switch_event *e);
/* Switches made but not in the log (its 65,536 entries full, or no memory for its index). */
uint64_t spanprof__switch_unlogged(void);

#pragma GCC visibility pop

#endif /* SPANPROF_SPANSWITCH_H */
