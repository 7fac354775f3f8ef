/* The argument must be a narrow string constant. */
int limit;
int by_number (void) __attribute__((span(42)));
int by_variable (void) __attribute__((span(limit)));
int by_wide_string (void) __attribute__((span(L"wide")));
