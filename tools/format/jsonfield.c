/* jsonfield.c — a JSON object's members read by the type they must have, for every reader of files
 * the tool did not write itself: captures, traces, profiles from other runs, other machines,
 * editors or a full disk.
 *
 * json-c's accessors trust their caller: json_object_array_length of a string or an object stops
 * the program on an assertion, json_object_get_int64 of a string parses it and of an array gives
 * 0.  So each member is checked for its type before it is used, and one that has another type is
 * refused with one message of one form, naming the file and the member:
 *     spanprof: FILE: 'FIELD' is not an array
 * Each reader gives 1 and the value, 0 when O has no such member (O not being an object
 * included), or -1 after that message. */
#include "format/format.h"

#include <math.h>
#include <stdio.h>

int jf_invalid(const char *file, const char *field, const char *expected)
{
    fprintf(stderr, "spanprof: %s: '%s' is not %s\n", file, field, expected);
    return -1;
}

/* O's member FIELD into *V: 1, or 0 when there is none. */
static int member(json_object *o, const char *field, json_object **v)
{
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, field, v);
}

static int typed(const char *file, json_object *o, const char *field, enum json_type type,
                 const char *expected, json_object **out)
{
    json_object *v;
    if (!member(o, field, &v))
        return 0;
    if (!json_object_is_type(v, type))
        return jf_invalid(file, field, expected);
    *out = v;
    return 1;
}

int jf_array(const char *file, json_object *o, const char *field, json_object **out)
{
    return typed(file, o, field, json_type_array, "an array", out);
}

int jf_object(const char *file, json_object *o, const char *field, json_object **out)
{
    return typed(file, o, field, json_type_object, "an object", out);
}

int jf_string(const char *file, json_object *o, const char *field, const char **out)
{
    json_object *v;
    int found = typed(file, o, field, json_type_string, "a string", &v);
    if (found == 1)
        *out = json_object_get_string(v);
    return found;
}

/* json-c keeps a whole number above INT64_MAX as a uint64 and reads a negative one as an int64. */
int jf_u64(const char *file, json_object *o, const char *field, uint64_t *out)
{
    json_object *v;
    int found = typed(file, o, field, json_type_int, "a whole number from 0 to 2^64-1", &v);
    if (found == 1) {
        if (json_object_get_int64(v) < 0)
            return jf_invalid(file, field, "a whole number from 0 to 2^64-1");
        *out = json_object_get_uint64(v);
    }
    return found;
}

int jf_number(const char *file, json_object *o, const char *field, double *out)
{
    json_object *v;
    if (!member(o, field, &v))
        return 0;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return jf_invalid(file, field, "a number");
    double d = json_object_get_double(v);
    if (!isfinite(d))
        return jf_invalid(file, field, "a finite number");
    *out = d;
    return 1;
}

int jf_bool(const char *file, json_object *o, const char *field, int *out)
{
    json_object *v;
    int found = typed(file, o, field, json_type_boolean, "true or false", &v);
    if (found == 1)
        *out = json_object_get_boolean(v);
    return found;
}
