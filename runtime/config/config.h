/* config.h — the configuration layer's own declarations (never installed): start-up and
 * the outputs it configures (start.c) and the check of the program's debug information for coz (debuginfo.c).  The
 * variables themselves are in options.h.
 */
#ifndef SPANPROF_CONFIG_H
#define SPANPROF_CONFIG_H

#include <stdio.h>

#include "report/report.h"

#pragma GCC visibility push(hidden)

/* ---- start.c ---- */
/* The files written at exit and by spanprof_flush(), from the environment at start-up. */
extern struct spanprof__outputs spanprof__outputs;

/* ---- debuginfo.c ---- */
/* Why coz cannot use the debug information of the ELF file at PATH, or NULL when it can. */
const char *spanprof__debug_info_problem(const char *path);
/* One warning line on ERR when this program's debug information is unusable by coz. */
void spanprof__warn_debug_info_for_coz(FILE *err);

#pragma GCC visibility pop

#endif /* SPANPROF_CONFIG_H */
