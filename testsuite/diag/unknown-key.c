/* diag-flags: -fplugin-arg-spanplugin-bogus */
/* An unknown -fplugin-arg-spanplugin-KEY is an error naming the key; the plugin then refuses
 * to load. */
int f (void) { return 0; }
