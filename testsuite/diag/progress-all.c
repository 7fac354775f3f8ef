/* diag-flags: -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-verbose */
/* Whole-program mode adds spans, never progress points: only the attribute makes one. */
int plain (int x) { return x + 1; }
__attribute__((progress)) int counted (int x) { return x * 2; }
__attribute__((nospan, progress ("done"))) int only_point (int x) { return x - 1; }
