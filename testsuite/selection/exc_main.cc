// exc_main.cc — C++ exceptions unwinding through C++ span frames and through a C span frame
// built with -fexceptions (exc_mid.c): C++ catcher -> C middle -> C++ thrower.
#include <stdio.h>
#include <stdexcept>

extern "C" int c_middle (int);

extern "C" [[gnu::span]] int
cxx_thrower (int x)
{
  if (x % 2)
    throw std::runtime_error ("odd");
  return x;
}

[[gnu::span]] static int
cxx_catcher (int x)
{
  try
    {
      return c_middle (x);
    }
  catch (const std::exception &)
    {
      return -1;
    }
}

int
main ()
{
  int caught = 0;
  for (int i = 0; i < 6; i++)
    caught += cxx_catcher (i) < 0;
  printf ("caught %d\n", caught);
  return 0;
}
