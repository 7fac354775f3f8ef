/* diag-flags: -fplugin-arg-spanplugin-inline-copies=yes */
/* inline-copies is 0 or 1. */
int f (void) { return 0; }
