/* 'span' on variables (including a function pointer) is a warning and is ignored. */
int counter __attribute__((span));
void (*callback)(void) __attribute__((span("cb")));

int
use (void)
{
  static int local __attribute__((span));
  return counter + local;
}
