/* optionsdoc.c — prints the manual's rows of every SPANPROF_* variable, from the runtime's option
 * table (runtime/lifecycle/options.c), for the test that keeps docs/manual.md in step with it. */
#include <stdio.h>

#include "lifecycle/options.h"

int main(void)
{
    spanprof__options_markdown(stdout);
    return 0;
}
