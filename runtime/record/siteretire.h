/* siteretire.h — sites of objects going away (dlclose, or the runtime's own unload), replaced
 * wherever the runtime points to them by copies it owns (siteretire.c says how; never installed).
 */
#ifndef SPANPROF_SITERETIRE_H
#define SPANPROF_SITERETIRE_H

#include "record/record.h"

#pragma GCC visibility push(hidden)

struct spanprof__range {
    uintptr_t lo, hi; /* [lo, hi) */
};
struct spanprof__retired_site {
    const struct spanprof_site *old; /* NULL: free slot */
    struct spanprof_site *copy;
};
struct spanprof__retire {
    const struct spanprof__range *ranges; /* the objects going away (unless ALL) */
    size_t nranges;
    int all;                               /* every site (the runtime itself goes away) */
    struct spanprof__retired_site *table;  /* old address -> copy (open addressing) */
    size_t cap, used;
};
/* With the process lock held.  Before the objects go: copies of their sites that something points
 * to (-1: no memory).  After they went: every pointer into them turned to its copy.  Then
 * spanprof__retire_end (always, after a successful collect). */
int spanprof__retire_collect(struct spanprof__retire *r);
void spanprof__retire_apply(struct spanprof__retire *r);
void spanprof__retire_end(struct spanprof__retire *r);
/* At SITE's registration (lock held): 1 when it is the site of a library loaded again, which
 * then takes its copy's id and place (nodes, histograms; a progress point's counter, in
 * coz_end). */
int spanprof__retire_revive(struct spanprof_site *site);
/* Where the copies' index is kept (handed over to a later copy of the runtime). */
void spanprof__retire_copies(void ***table, size_t **cap, size_t **n);
/* What pointer S becomes (S itself when not retired); by address only, for collectors' own
 * pointers (the trace rings; call between collect and apply or right after apply). */
const struct spanprof_site *spanprof__retired(struct spanprof__retire *r,
                                              const struct spanprof_site *s);

#pragma GCC visibility pop

#endif /* SPANPROF_SITERETIRE_H */
