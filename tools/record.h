/* record.h — `spanprof record` (record.c): its help texts and entry point, for the command table
 * in spanprof.c. */
#ifndef SPANPROF_RECORD_H
#define SPANPROF_RECORD_H

extern const char record_usage[];
extern const char record_help[];

/* argv[0] is "record"; returns CMD's exit status (or ends by its signal), or record's own. */
int run_record(int argc, char **argv);

#endif
