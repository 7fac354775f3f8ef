/* commands.h — the commands that live in files of their own (convert.c, record.c, diff.c): their
 * help texts and entry points, for the command table in spanprof.c.  Each entry point takes
 * argv[0] as the command's name and returns the tool's exit status. */
#ifndef SPANPROF_COMMANDS_H
#define SPANPROF_COMMANDS_H

extern const char convert_usage[], convert_help[];
int run_convert(int argc, char **argv);

extern const char record_usage[], record_help[];
/* CMD's exit status (or record ends by CMD's signal), or record's own (125-127). */
int run_record(int argc, char **argv);

extern const char diff_usage[], diff_help[];
int run_diff(int argc, char **argv);

#endif
