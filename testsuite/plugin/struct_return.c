/* struct_return.c — spans on functions returning structs in registers and in memory. */
#include <spanprof.h>
#include <stdio.h>
#include <string.h>

struct pair { int first, second; };
struct big { char text[64]; long values[8]; };

__attribute__((span)) struct pair make_pair(int a, int b)
{
    struct pair p = { a, b };
    if (a > b)
        return (struct pair){ b, a };
    return p;
}

__attribute__((span)) struct big make_big(const char *text, long seed)
{
    struct big result;
    memset(&result, 0, sizeof result);
    if (!text)
        return result;
    strncpy(result.text, text, sizeof result.text - 1);
    for (int i = 0; i < 8; i++)
        result.values[i] = seed * i;
    return result;
}

int main(void)
{
    long sum = 0;
    for (int i = 0; i < 10; i++) {
        struct pair p = make_pair(i, 5);
        struct big b = make_big(i % 2 ? "odd" : NULL, i);
        sum += p.first + p.second + b.values[7] + (long)strlen(b.text);
    }
    printf("sum=%ld\n", sum);
    return 0;
}
