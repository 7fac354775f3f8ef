/* convert.h — `spanprof convert` (convert.c): its help texts and entry point, for the command
 * table in spanprof.c. */
#ifndef SPANPROF_CONVERT_H
#define SPANPROF_CONVERT_H

extern const char convert_usage[];
extern const char convert_help[];

/* argv[0] is "convert"; returns the tool's exit status. */
int run_convert(int argc, char **argv);

#endif
