/* record_tiny.c — a program whose progress function, tiny, is too small for a span of its own
 * under the plugin's default size rule (built whole-program, -fplugin-arg-spanplugin-all): for
 * `spanprof record --coz --progress tiny` (record.sh) and SPANPROF_COZ_PROGRESS=tiny under coz
 * (coz.sh).  It leaves a file named "ran" in its directory, so a test can tell it never ran. */
#include <stdio.h>

static volatile int sink;

__attribute__((noinline)) static void tiny(int i)
{
    sink = i;
}

int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        tiny(i);
        s += i * 3;
        if (s % 7 == 3)
            s ^= i;
    }
    return s;
}

int main(void)
{
    FILE *f = fopen("ran", "w");
    if (f)
        fclose(f);
    return work(1000) == -1;
}
