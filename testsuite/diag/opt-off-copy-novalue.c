/* diag-flags: -fplugin-arg-spanplugin-off-copy */
/* off-copy takes a number of statements; without one it is an error naming the option. */
int f (void) { return 0; }
