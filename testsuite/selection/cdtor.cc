// cdtor.cc — every constructor and destructor gets ONE span, however many clones g++ makes of
// it (complete/base object C1/C2, D1/D2, deleting D0, C4 with -fdeclone-ctor-dtor at -Os), and
// the counts are exact: N objects constructed -> calls=N.
#include <stdio.h>

struct VBase
{
  int vb;
  [[gnu::span]] VBase () : vb (1) {}
  [[gnu::span]] virtual ~VBase () { vb = 0; }
};

// With a virtual base, C1 and C2 (D1 and D2) are two different bodies.
struct WithVirtual : virtual VBase
{
  int w;
  [[gnu::span]] WithVirtual (int x) : w (x) {}
  [[gnu::span]] ~WithVirtual () override { w = 0; }
};

// Without one, C1 is usually an alias of C2.
struct Simple
{
  int s;
  [[gnu::span]] Simple (int x) : s (x) {}
  [[gnu::span]] ~Simple () { s = 0; }
};

// A derived class: its C1 calls Simple's C2 — a different constructor, counted once each.
struct Derived : Simple
{
  [[gnu::span]] Derived () : Simple (7) {}
};

int volatile sink;

int
main ()
{
  const int n = 5;
  for (int i = 0; i < n; i++)
    {
      WithVirtual w (i);    // VBase (complete), WithVirtual (complete)
      Simple s (i);
      sink = w.w + s.s;
    }
  for (int i = 0; i < n; i++)
    {
      VBase *p = new WithVirtual (i);   // destroyed through the deleting destructor
      delete p;
    }
  Derived d;                // Derived, Simple (base object constructor)
  sink = d.s;
  printf ("done\n");
  return 0;
}
