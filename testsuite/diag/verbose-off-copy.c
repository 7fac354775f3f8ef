/* diag-flags: -O2 -fplugin-arg-spanplugin-verbose -fplugin-arg-spanplugin-split=0 */
/* With optimisation on, a small span's body is copied for recording off (a note says so), unless
 * it holds what must not be in a function twice: asm goto, basic asm, a label whose address is
 * taken, a call that returns twice.  A big body and a function with a progress point keep one
 * body too.  (split=0: with the split, the default, most of these go to a clone instead,
 * verbose-split.c.) */
#include <setjmp.h>

int g (int);

__attribute__((span)) int
small (int x)
{
  return g (x + 1);
}

__attribute__((span)) int
with_asm_goto (int x)
{
  asm goto ("" :::: out);
  return x;
out:
  return -x;
}

__attribute__((span)) void
with_basic_asm (void)
{
  asm ("");
}

__attribute__((span)) int
extended_asm_is_fine (int x)
{
  asm volatile ("" : "+r" (x));
  return x;
}

__attribute__((span)) int
computed_goto (int i)
{
  static void *targets[] = { &&a, &&b };
  goto *targets[i & 1];
a:
  return 1;
b:
  return 2;
}

static jmp_buf env;

__attribute__((span)) int
with_setjmp (void)
{
  return setjmp (env);
}

__attribute__((span, progress)) int
with_progress (int x)
{
  return x * 2;
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
