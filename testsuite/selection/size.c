/* size.c — functions of every kind the size rule of `all` (min-size=N) tells apart: run.sh
 * compiles it with `all` alone (the default, min-size=50), with min-size=0 (every function),
 * min-size=50 at -O2 and min-size=3, and with functions= naming a small one.  The comments say what min-size=50 does; the statement counts
 * are the ones the plugin's "left out" notes print. */

int tiny (int x) { return x + 1; }                      /* 2 statements, no loop: left out */

int
small_loop (const char *s)                              /* small, but a loop: kept */
{
  int n = 0;
  while (*s)
    n++, s++;
  return n;
}

unsigned
small_recursive (unsigned n)                            /* small, but calls itself: kept */
{
  return n < 2 ? n : small_recursive (n - 1) + small_recursive (n - 2);
}

static inline __attribute__ ((always_inline)) int
inlined_loop (const int *v, int n)                      /* a loop, but always_inline and small: left out */
{
  int s = 0;
  for (int i = 0; i < n; i++)
    s += v[i];
  return s;
}

__attribute__ ((span)) int
small_marked (int x)                                    /* the attribute always wins */
{
  return x - 3;
}

int
branchy (int x)                                         /* no loop, 50 statements or more: kept */
{
  int r = 0;
  if (x & 1) r += 3; else r -= 1;
  if (x & 2) r += 5; else r -= 2;
  if (x & 4) r += 7; else r -= 3;
  if (x & 8) r += 11; else r -= 4;
  if (x & 16) r += 13; else r -= 5;
  if (x & 32) r += 17; else r -= 6;
  if (x & 64) r += 19; else r -= 7;
  if (x & 128) r += 23; else r -= 8;
  if (x & 256) r += 29; else r -= 9;
  if (x & 512) r += 31; else r -= 10;
  if (x & 1024) r += 37; else r -= 11;
  if (x & 2048) r += 41; else r -= 12;
  return r;
}

int
main (void)                                             /* small, but main: kept */
{
  static const int v[3] = { 1, 2, 3 };
  return tiny (1) + small_loop ("ab") + (int) small_recursive (5) + small_marked (4) + branchy (9)
         + inlined_loop (v, 3);
}
