// sample.cc — C++ functions for the selection tests: namespaces, templates, operators,
// lambdas, constructors and destructors (compiler-made members are never selected).
namespace ns {
struct Parser
{
  int v;
  Parser () : v (0) {}
  ~Parser () { v = -1; }
  int parse (int x) { return v + x; }
  Parser &operator+= (int x) { v += x; return *this; }
  bool operator< (const Parser &o) const { return v < o.v; }
};

template <class T>
T
tmax (T a, T b)
{
  return a < b ? b : a;
}
} // namespace ns

struct Plain
{
  int x;            // implicit constructor, destructor, copy: artificial, never selected
};

namespace other {
int helper (int x) { return x + 1; }
}

[[gnu::nospan]] int quiet (int x) { return x; }

int
main ()
{
  ns::Parser p, q;
  p += 2;
  Plain a{1}, b = a;
  auto twice = [] (int v) { return 2 * v; };
  return ns::tmax (1, 2) + ns::tmax (1.0, 2.0) + p.parse (1) + (p < q) + b.x + twice (3)
         + other::helper (1) + quiet (0) > 100;
}
