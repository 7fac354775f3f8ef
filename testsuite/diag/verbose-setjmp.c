/* diag-flags: -fplugin-arg-spanplugin-verbose */
/* With 'verbose', one note per call that may return twice, in any function (no span here):
 * each gets the longjmp repair. */
#include <setjmp.h>
#include <unistd.h>

static jmp_buf env;
static sigjmp_buf senv;

int
handler_frame (void)
{
  if (setjmp (env))
    return 1;
  if (sigsetjmp (senv, 1))
    return 2;
  return vfork () < 0;
}
