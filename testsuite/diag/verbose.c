/* diag-flags: -fplugin-arg-spanplugin-verbose */
/* With 'verbose', one note per instrumented function, at the function. */
int plain (int x) { return x; }

__attribute__((span)) int
first (int x)
{
  return x + 1;
}

int second (int x) __attribute__((span("second.custom")));

int
second (int x)
{
  return x + 2;
}
