/* diag-flags: -fplugin-arg-spanplugin-verbose=yes */
/* 'verbose' takes no value. */
int f (void) { return 0; }
