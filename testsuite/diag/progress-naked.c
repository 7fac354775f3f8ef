/* diag-flags: -O2 */
/* A naked function has no frame for the call: 'progress' is ignored with a warning. */
__attribute__((naked, progress)) void
bare (void)
{
  __asm__ ("ret");
}
