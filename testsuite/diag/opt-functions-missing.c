/* diag-flags: -fplugin-arg-spanplugin-functions=no-such-file.txt */
/* An unreadable functions file: the error names the option and gives the reason. */
int f (void) { return 0; }
