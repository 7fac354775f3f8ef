/* diag-mode: both */
/* diag-flags: -Wall -Wextra */
/* Annotated with the spanprof.h macros: no diagnostic with the plugin, and none without it
 * (the macros then expand to nothing). */
#include "spanprof.h"

SPAN static int
helper (int x)
{
  return x * 2;
}

SPAN_NAMED ("clean.compute") int
compute (int x)
{
  if (x < 0)
    return -1;
  return helper (x) + SPANPROF_FLUSH ();
}

int declared_first (int x) SPAN;

int
declared_first (int x)
{
  return compute (x);
}
