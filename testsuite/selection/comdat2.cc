// comdat2.cc — second unit of the COMDAT test.
#include "shared.h"

int
in_unit2 (int n)
{
  int r = 0;
  for (int i = 0; i < n; i++)
    r += shared_inline (i) + shared_twice (i) + shared_static (i);
  return r;
}
