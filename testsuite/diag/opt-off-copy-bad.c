/* diag-flags: -fplugin-arg-spanplugin-off-copy=-1 */
/* off-copy takes a non-negative decimal number; anything else is an error naming the option. */
int f (void) { return 0; }
