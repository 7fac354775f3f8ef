/* 'progress' is checked like 'span': on a variable or a type a warning (and ignored); a
 * non-string, empty or second argument an error. */
int counter __attribute__((progress));
struct __attribute__((progress)) point { int x; };
int by_number (void) __attribute__((progress(42)));
int unnamed (void) __attribute__((progress("")));
int two (void) __attribute__((progress("a", "b")));
