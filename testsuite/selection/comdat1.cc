// comdat1.cc — first unit of the COMDAT test (with comdat2.cc and shared.h).
#include "shared.h"
#include <stdio.h>

int in_unit2 (int);

int volatile sink;

int
main ()
{
  for (int i = 0; i < 3; i++)
    sink = shared_inline (i) + shared_twice (i) + shared_static (i);
  sink = in_unit2 (4);
  printf ("done\n");
  return 0;
}
