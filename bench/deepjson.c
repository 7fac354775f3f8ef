/* deepjson.c — a profile that is expensive to write: a recursive-descent JSON reader, writer and
 * destructor run over a 4 KB input nested 1024 levels deep ("[1,[1,[1,...]]]"), the shape of
 * jsoncpp's deep-nesting test.  Each nesting level adds two frames to every stack below it and a
 * handful of distinct leaf stacks, so the folded file grows with the square of the depth while
 * the run itself takes milliseconds.  Span names are jsoncpp's, so the frames are as long as in
 * the real test.  `make bench` times the exit (folded writing) of this program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPAN(name) __attribute__((noinline, span(name)))

struct value {
    int is_array;
    int number;
    struct value *items[2];
    int n;
};

static const char *in;

SPAN("Json::OurReader::skipSpaces()") static void skip_spaces(void)
{
    while (*in == ' ' || *in == '\n')
        in++;
}

SPAN("Json::OurReader::match(char const*, int)") static int match(char c)
{
    if (*in != c)
        return 0;
    in++;
    return 1;
}

SPAN("Json::OurReader::readToken(Json::OurReader::Token&)") static char read_token(void)
{
    skip_spaces();
    return *in;
}

SPAN("Json::OurReader::decodeNumber(Json::OurReader::Token&, Json::Value&)")
static int decode_number(void)
{
    int n = 0;
    while (*in >= '0' && *in <= '9')
        n = n * 10 + *in++ - '0';
    return n;
}

SPAN("Json::Value::Value(Json::ValueType)") static struct value *new_value(int is_array)
{
    struct value *v = calloc(1, sizeof *v);
    if (!v)
        exit(1);
    v->is_array = is_array;
    return v;
}

static struct value *read_value(void);

SPAN("Json::OurReader::readArray(Json::OurReader::Token&)") static struct value *read_array(void)
{
    struct value *v = new_value(1);
    match('[');
    while (read_token() != ']' && v->n < 2) {
        v->items[v->n++] = read_value();
        if (read_token() == ',')
            match(',');
    }
    match(']');
    return v;
}

SPAN("Json::OurReader::readValue()") static struct value *read_value(void)
{
    if (read_token() == '[')
        return read_array();
    struct value *v = new_value(0);
    v->number = decode_number();
    return v;
}

static FILE *out;

SPAN("Json::StyledWriter::writeIndent()") static void write_indent(int depth)
{
    fprintf(out, "%*s", depth % 8, "");
}

SPAN("Json::StyledWriter::pushValue(std::string const&)") static void push_value(int n)
{
    fprintf(out, "%d", n);
}

static void write_value(const struct value *v, int depth);

SPAN("Json::StyledWriter::writeArrayValue(Json::Value const&)")
static void write_array(const struct value *v, int depth)
{
    fputc('[', out);
    for (int i = 0; i < v->n; i++) {
        write_indent(depth);
        write_value(v->items[i], depth + 1);
    }
    fputc(']', out);
}

SPAN("Json::StyledWriter::writeValue(Json::Value const&)")
static void write_value(const struct value *v, int depth)
{
    if (v->is_array)
        write_array(v, depth);
    else
        push_value(v->number);
}

SPAN("Json::Value::~Value()") static void free_value(struct value *v)
{
    for (int i = 0; i < v->n; i++)
        free_value(v->items[i]);
    free(v);
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 1024;
    char *text = malloc((size_t)depth * 4 + 1), *p = text;
    if (!text)
        return 1;
    for (int i = 0; i < depth; i++)
        p += sprintf(p, "[1,");
    memset(p, ']', (size_t)depth);
    p[depth] = 0;
    in = text;
    struct value *v = read_value();
    out = fopen("/dev/null", "w");
    write_value(v, 0);
    fclose(out);
    free_value(v);
    printf("parsed, wrote and freed %zu bytes nested %d deep\n", strlen(text), depth);
    free(text);
    return 0;
}
