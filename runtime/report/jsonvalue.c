/* jsonvalue.c — the few json-c values every JSON writer (profile, resource fields, trace run
 * information) builds the same way.
 */
#include <json-c/json.h>

#include "report/report.h"

json_object *spanprof__json_u64(uint64_t v)
{
    return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

json_object *spanprof__json_str(const char *s)
{
    return json_object_new_string(s ? s : "");
}

json_object *spanprof__json_thread(const struct spanprof__thread *t)
{
    char buf[32];
    json_object *jt = json_object_new_object();
    /* A retired group (threads that ended, merged by name) has no tid of its own: it says how
     * many threads it holds instead. */
    if (!t->merged)
        json_object_object_add(jt, "tid", json_object_new_int64(t->tid));
    json_object_object_add(jt, "name", spanprof__json_str(spanprof__thread_label(t, buf, sizeof buf)));
    if (t->merged)
        json_object_object_add(jt, "threads", spanprof__json_u64(t->merged));
    return jt;
}
