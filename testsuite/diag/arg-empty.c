/* An empty span name is an error. */
int unnamed (void) __attribute__((span("")));

__attribute__((span(""))) int
unnamed_def (void)
{
  return 0;
}
