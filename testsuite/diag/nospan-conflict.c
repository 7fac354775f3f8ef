/* diag-flags: -fplugin-arg-spanplugin-verbose */
/* span and nospan on one function — on the same or on different declarations — is an error at
 * the definition; the function is not instrumented. */
int __attribute__ ((span)) f (void);
int __attribute__ ((nospan)) f (void) { return 0; }

int __attribute__ ((span, nospan)) g (void) { return 1; }
