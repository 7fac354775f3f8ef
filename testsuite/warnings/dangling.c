/* warnings-gcc: 12 */
/* -Wdangling-pointer (GCC 12's late access warnings, the last warnings on GIMPLE) on pointers
 * to locals used after their scope, in functions the plugin instruments (loops): the same
 * warnings, on the same lines, with the inline path's code at the function's ends.  (The copy
 * of a small body, offpath.cc, makes GCC print some of them twice: the same set.) */
extern void use (int *);
extern int get (void);

int
last_seen (int n)
{
  int *p = 0;
  int s = 0;
  for (int i = 0; i < n; i++)
    {
      int x = get ();
      p = &x;
      s += *p;
    }
  return s + (p ? *p : 0);
}

int
after_block (int n)
{
  int *p;
  {
    int a[4] = { 1, 2, 3, 4 };
    p = a;
    for (int i = 0; i < n; i++)
      use (p + (i & 3));
  }
  return n > 2 ? p[1] : 0;
}
