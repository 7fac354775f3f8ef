/* diag-flags: -fplugin-arg-spanplugin-inline=2 */
/* inline is 0 or 1. */
int f (void) { return 0; }
