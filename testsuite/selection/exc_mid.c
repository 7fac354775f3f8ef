/* exc_mid.c — the C frame between the C++ thrower and catcher (built with -fexceptions, so its
 * exit call runs while the exception unwinds through it). */
int cxx_thrower (int);

__attribute__ ((span)) int
c_middle (int x)
{
  return cxx_thrower (x) + 1;
}
