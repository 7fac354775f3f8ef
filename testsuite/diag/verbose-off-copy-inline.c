/* diag-flags: -O2 -fplugin-arg-spanplugin-verbose -fplugin-arg-spanplugin-split=0 */
/* A call to an always_inline function counts as that function's body towards the off copy's
 * limit (40 statements), and as the bodies of the always_inline functions it calls in turn: GCC
 * inlines them into both copies whatever their size.  A short wrapper around a large one keeps
 * one body; around a small one it gets the copy.  Whether GCC has lowered the callee when it
 * reaches the wrapper (defined before it, or after) makes no difference. */
int g (int);

static inline __attribute__((always_inline)) int
large_before (int x)
{
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  return x;
}

static inline __attribute__((always_inline)) int
small_helper (int x)
{
  return g (x) + 1;
}

static inline __attribute__((always_inline)) int large_after (int x);

/* Small, and so is what it always inlines. */
static inline __attribute__((always_inline)) int
small_chain (int x)
{
  return small_helper (x) * 2;
}

/* Small itself, large through the function it always inlines. */
static inline __attribute__((always_inline)) int
large_chain (int x)
{
  return large_before (x) * 2;
}

__attribute__((span)) int
wraps_large_before (int x)
{
  return large_before (x);
}

__attribute__((span)) int
wraps_large_after (int x)
{
  return large_after (x);
}

__attribute__((span)) int
wraps_small (int x)
{
  return small_chain (x);
}

__attribute__((span)) int
wraps_large_chain (int x)
{
  return large_chain (x);
}

static inline __attribute__((always_inline)) int
large_after (int x)
{
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x); x = g (x);
  return x;
}
