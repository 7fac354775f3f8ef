/* keywords.c — a build-time generator of the kind a project compiles with its CFLAGS (hence the
 * plugin, with -fplugin-arg-spanplugin-all) but links without its LIBS (hence no runtime), like
 * sqlite's mkkeywordhash or bash's mksyntax: it prints a C table of keyword hashes.  It has spans
 * by option and by attribute, a progress point of each kind, a tail call, recursion, a function
 * called back by qsort and an error path through setjmp/longjmp. */
#include <setjmp.h>
#include <spanprof.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const keywords[] = { "while", "if", "else", "return", "for", "do", "goto",
                                        "switch", "case", "break", "continue", "default" };
enum { NKEYWORDS = sizeof keywords / sizeof keywords[0] };

static jmp_buf on_error;

static unsigned hash(const char *s)
{
    unsigned h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

/* Called back by qsort, from the C library. */
static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

__attribute__((span("check"), noinline)) static void check(const char *word)
{
    if (strlen(word) > 6)
        longjmp(on_error, 1);
}

/* 1 when check gave up on WORD. */
static int too_long(const char *word)
{
    if (setjmp(on_error) == 0) {
        check(word);
        return 0;
    }
    return 1;
}

/* Recursion, and a tail call. */
static unsigned depth_sum(unsigned n)
{
    return n == 0 ? 0 : n + depth_sum(n - 1);
}

__attribute__((progress("emitted"), noinline)) static void emit(const char *word, unsigned slot)
{
    printf("  { \"%s\", %u },\n", word, slot);
    SPANPROF_PROGRESS("line");
}

int main(void)
{
    const char *sorted[NKEYWORDS];
    memcpy(sorted, keywords, sizeof sorted);
    qsort(sorted, NKEYWORDS, sizeof sorted[0], by_name);
    printf("static const struct { const char *name; unsigned slot; } table[] = {\n");
    for (int i = 0; i < NKEYWORDS; i++)
        emit(sorted[i], hash(sorted[i]) % 64);
    printf("};\n");
    int longer = 0;
    for (int i = 0; i < NKEYWORDS; i++)
        longer += too_long(sorted[i]);
    printf("/* %d keywords longer than 6, depth %u, flush %d */\n", longer, depth_sum(10),
           SPANPROF_FLUSH());
    return 0;
}
