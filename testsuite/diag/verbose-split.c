/* diag-flags: -O2 -fplugin-arg-spanplugin-verbose */
/* With patch points (the default), a span whose small body gets the off copy records through a
 * clone of its function, and the function keeps its own code for while the span is off (a note
 * names the clone).  A function whose arguments or result cannot be passed on to a clone
 * (variadic, a structure returned in memory) or that must be inlined everywhere (always_inline)
 * keeps both bodies instead; a big body, or what must not be in a function twice (asm goto),
 * keeps one body, as without the split. */
#include <stdarg.h>

int g (int);

__attribute__((span)) int
small (int x)
{
  return g (x + 1);
}

__attribute__((span)) int
big (int x)
{
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  return x;
}

__attribute__((span)) int
address_taken (int x)
{
  int *p = &x;
  return g (*p);
}

__attribute__((span)) int
variadic (int n, ...)
{
  va_list ap;
  va_start (ap, n);
  int x = va_arg (ap, int);
  va_end (ap);
  return g (x + n);
}

struct big_result { int v[8]; };

__attribute__((span)) struct big_result
in_memory (int x)
{
  struct big_result r = { { g (x) } };
  return r;
}

__attribute__((span, always_inline)) inline int
must_inline (int x)
{
  return g (x);
}

__attribute__((span)) int
with_asm_goto (int x)
{
  asm goto ("" :::: out);
  return x;
out:
  return -x;
}

int
caller (int x)
{
  return must_inline (x);
}
