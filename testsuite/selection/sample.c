/* sample.c — C functions for the selection tests (run.sh compiles it with various options and
 * compares the "instrumented" notes with CASE.expected). */
#include "other.h"

int tiny (int x) { return x + 1; }

int
short_fn (int x)
{ return x * 3; }

int
parse_header (const char *s)
{
  int n = 0;
  while (*s)
    n += *s++;
  return n;
}

int
parse_body (const char *s)
{
  int n = 0;
  for (; *s; s++)
    n ^= *s;
  return n;
}

__attribute__ ((no_instrument_function)) int
untouchable (int x)
{
  return x - 1;
}

__attribute__ ((nospan)) int
quiet (int x)
{
  return x - 2;
}

__attribute__ ((span)) int
marked (int x)
{
  return x - 3;
}

__attribute__ ((span ("custom.name"))) int
marked_named (int x)
{
  return x - 4;
}

static int
helper (int x)
{
  return x + 5;
}

extern inline __attribute__ ((gnu_inline, always_inline)) int
ext_inline (int x)
{
  return x + 6;
}

int
main (void)
{
  return tiny (1) + short_fn (2) + parse_header ("a") + parse_body ("b") + untouchable (3)
         + quiet (4) + marked (5) + marked_named (6) + helper (7) + ext_inline (8)
         + from_header (9);
}
