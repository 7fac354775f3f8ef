/* namematch.h — the one rule for which span names a list of globs names (SPANPROF_COZ_PROGRESS,
 * SPANPROF_COZ_LATENCY, `spanprof record --progress`): used by the runtime's sites and, before a
 * run, by the tool (namematch.c; depends on nothing else, never installed). */
#ifndef SPANPROF_NAMEMATCH_H
#define SPANPROF_NAMEMATCH_H

#pragma GCC visibility push(hidden)

/* Whether NAME matches one of the comma-separated fnmatch patterns of LIST (NULL: none). */
int spanprof__name_matches(const char *list, const char *name);

#pragma GCC visibility pop

#endif /* SPANPROF_NAMEMATCH_H */
