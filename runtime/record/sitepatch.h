/* sitepatch.h — the patch points of spans that are OFF turned into no-ops, and back into jumps
 * when they are switched on again (sitepatch.c).
 */
#ifndef SPANPROF_SITEPATCH_H
#define SPANPROF_SITEPATCH_H

#include <stddef.h>

#include "spanprof.h"

#pragma GCC visibility push(hidden)

/* Every point of a loaded object whose site WANT accepts (called once per point, with CTX,
 * before anything is written) and whose bytes are still the plugin's jump becomes a no-op, in
 * one batch.  WANT must accept only sites whose state is OFF.  Returns how many were patched:
 * 0 too where the target has no patch points, or where the system refused patching (one
 * warning line, the first time: nothing is patched afterwards).  Not from a signal handler, nor
 * under the process lock (dl_iterate_phdr takes the loader's lock). */
size_t spanprof__sitepatch_off(int (*want)(struct spanprof_site *site, void *ctx), void *ctx);

/* Every patched point of a loaded object whose site WANT accepts gets its jump back, in one
 * batch.  WANT must accept only sites whose state is MUTED (record/siteswitch.c: a call passing a
 * point meanwhile records nothing).  Returns how many, or -1 where the system refused patching
 * (the points stay no-ops).  Not from a signal handler, nor under the process lock. */
long spanprof__sitepatch_on(int (*want)(struct spanprof_site *site, void *ctx), void *ctx);

/* VISIT is called with the site of every patch point of the loaded objects (a site once per
 * point: several for most).  Not from a signal handler, nor under the process lock. */
void spanprof__sitepatch_visit(int (*visit)(struct spanprof_site *site, void *ctx), void *ctx);

/* Recording is off in the whole process (SPANPROF=0): every site of the loaded objects that has
 * not been seen yet goes OFF, as its first call would make it, and every point of an OFF site
 * is patched.  Start-up's, before anything runs spans, and again as each object is loaded later
 * (lifecycle/start.c). */
size_t spanprof__sitepatch_recording_off(void);

/* SPANPROF_SPANS: every span of the loaded objects that is not chosen and has not been seen yet
 * goes OFF, and its points are patched.  Start-up's, once spanprof__g.spans is set, and again as
 * each object is loaded later (lifecycle/start.c). */
size_t spanprof__sitepatch_unchosen(void);

/* The number of objects the loader has loaded since the process began (0 where the C library
 * does not count them, or the target has no patch points): a change tells that objects came
 * since it was last read. */
unsigned long long spanprof__sitepatch_loads(void);

#pragma GCC visibility pop

#endif /* SPANPROF_SITEPATCH_H */
