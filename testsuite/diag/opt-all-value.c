/* diag-flags: -fplugin-arg-spanplugin-all=yes */
/* all is a flag. */
int f (void) { return 0; }
