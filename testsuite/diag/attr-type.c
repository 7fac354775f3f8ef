/* 'span' on types (a struct, a typedef) is a warning and is ignored. */
struct __attribute__((span)) point
{
  int x, y;
};
typedef int span_int __attribute__((span));

span_int
get (struct point p)
{
  return p.x + p.y;
}
