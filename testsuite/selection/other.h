/* other.h — a function defined in a header, for exclude-file. */
static inline int
from_header (int x)
{
  return x * 7;
}
