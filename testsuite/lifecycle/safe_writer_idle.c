/* safe_writer_idle.c — safe_writer.c with times and SPANPROF_IDLE=1: the folded stacks written
 * from the SIGTERM handler have the same lines as at exit, "(outside spans)" lines included
 * (values are times here, so only the stacks are compared).
 * test-driver: same-stacks-as-exit
 * test-env: SPANPROF=1 SPANPROF_IDLE=1 SPANPROF_THREADS=1 */
#include "safe_writer.c"
