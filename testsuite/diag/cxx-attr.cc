// C++11 attribute syntax: [[gnu::span]] gets the same checks as __attribute__((span)).
[[gnu::span]] int ok_plain (int x) { return x; }
[[gnu::span ("ok.named")]] int ok_named (int x) { return x; }
[[gnu::span (42)]] int bad_number (int x);
[[gnu::span ("")]] int bad_empty (int x);
[[gnu::span]] int variable;
struct [[gnu::span]] type_with_span { int x; };
namespace ns
{
struct parser
{
  [[gnu::span ("a", "b")]] int two (int x);
};
}
