/* debuginfo.h — whether coz can read a program's debug information, asked by the runtime at
 * start-up under coz and by `spanprof record --coz` before it runs a program (debuginfo.c;
 * depends on common/elfsection.c only, never installed). */
#ifndef SPANPROF_DEBUGINFO_H
#define SPANPROF_DEBUGINFO_H

#include <stdio.h>

#pragma GCC visibility push(hidden)

/* The flags that give debug information coz reads. */
#define SPANPROF_COZ_DEBUG_FLAGS "-g -gdwarf-4 -gno-variable-location-views"

/* Why coz cannot use the debug information of the ELF file at PATH ("DWARF 5", "DWARF 4 with
 * location views"), or NULL when it can or that cannot be told. */
const char *spanprof__debug_info_problem(const char *path);
/* One warning line on ERR when this program's debug information is unusable by coz. */
void spanprof__warn_debug_info_for_coz(FILE *err);

#pragma GCC visibility pop

#endif /* SPANPROF_DEBUGINFO_H */
