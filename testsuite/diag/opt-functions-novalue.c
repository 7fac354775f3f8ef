/* diag-flags: -fplugin-arg-spanplugin-functions */
/* functions without =FILE. */
int f (void) { return 0; }
