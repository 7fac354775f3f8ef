// diag-flags: -fplugin-arg-spanplugin-verbose
// The conflict is reported once for a constructor, although g++ makes two bodies of it (the
// virtual base keeps C1 and C2 apart); a constructor with span gets one note.
struct V { int v; };
struct A : virtual V
{
  [[gnu::span, gnu::nospan]] A () {}
  [[gnu::span]] ~A () {}
};
A a;
