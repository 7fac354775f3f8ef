/* A naked function cannot hold calls: the attribute is ignored with a warning. */
__attribute__((span, naked)) void
bare (void)
{
  __asm__ ("ret");
}
