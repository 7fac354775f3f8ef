/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-lines */
/* min-lines without =N. */
int f (void) { return 0; }
