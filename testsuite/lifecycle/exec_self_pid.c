/* exec_self_pid.c — exec_self.c with %p in the path: the second image of the process writes
 * out.PID.1.folded (the image number goes with the pid, the extension stays last).
 * test-env: SPANPROF_FOLDED=out.%p.folded */
#include "exec_self.c"
