/* diag-flags: -fplugin-arg-spanplugin-progress */
/* progress= needs a list of patterns. */
int f (void) { return 0; }
