/* exec_static.c — exec_self.c linked fully statically (-static), where the C library's exec
 * functions cannot be looked up behind the runtime's: the runtime's system-call stand-ins run
 * the exec, with the same files as in the dynamic program.
 * test-build: fully-static */
#include "exec_self.c"
