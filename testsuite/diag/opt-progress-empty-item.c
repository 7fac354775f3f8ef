/* diag-flags: -fplugin-arg-spanplugin-progress=emit, */
/* A trailing comma in the progress list is an empty pattern: an error. */
int f (void) { return 0; }
