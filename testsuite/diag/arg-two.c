/* At most one argument: GCC's own arity check reports it. */
int two (void) __attribute__((span("a", "b")));
