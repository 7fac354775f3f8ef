// shared.h — functions defined in a header and used by two units: the public inline function
// and the template instantiation get ONE (COMDAT) site in the program; the static function one
// per unit.
#ifndef SHARED_H
#define SHARED_H
[[gnu::span]] inline int
shared_inline (int x)
{
  return x + 1;
}

template <class T> [[gnu::span]]
T
shared_twice (T x)
{
  return x * 2;
}

[[gnu::span]] static inline int
shared_static (int x)
{
  return x - 1;
}
#endif
