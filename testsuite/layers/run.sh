#!/bin/sh
# run.sh — the layering of the runtime and of the command-line tool, checked on their objects:
# the runtime's common/ < record/ < collect/ < report/ < lifecycle/, the tool's lib/ < format/ < cmd/, and no
# object may use a symbol that an object of a higher layer of its own program defines (calls and
# data alike, as nm sees them).  Each check runs on the real objects (no such reference), then
# on them plus a probe object in the lowest layer that calls a function of a higher one, which
# it must name: a recording object calling the report layer's writer, a helper of the tool's
# lib/ calling the JSON profile's reader of format/.
#
# Environment: CC; SRC_DIR (runtime/) and OBJ_DIR (its objects in the build: NAME.c's object is
# NAME.o in the same layer folder); TOOL_SRC_DIR (tools/) and TOOL_OBJ_DIR (its objects, laid
# out the same way).  ONLY="runtime probe tool tool-probe" runs some of the checks; REGEN=1
# rewrites the expected files (see ../lib.sh).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir
runtime_layers="common record collect report lifecycle"
tool_layers="lib format cmd"

# upward_references DIR LAYERS: one line per use of a higher layer's symbol by an object under
# DIR, whose folders are the LAYERS, lowest first.
upward_references() {
    for layer in $2; do
        for object in "$1/$layer"/*.o; do
            name="$layer/${object##*/}"
            nm -g --defined-only "$object" | awk -v l="$layer" -v o="$name" 'NF == 3 { print "D", l, o, $3 }'
            nm -u "$object" | awk -v l="$layer" -v o="$name" '{ print "U", l, o, $NF }'
        done
    done | awk -v order="$2" '
        BEGIN { n = split(order, names, " "); for (i = 1; i <= n; i++) rank[names[i]] = i }
        $1 == "D" { layer[$4] = $2; where[$4] = $3; next }
        { uses[++count] = $2 " " $3 " " $4 }
        END {
            for (i = 1; i <= count; i++) {
                split(uses[i], u, " ")
                if ((u[3] in layer) && rank[layer[u[3]]] > rank[u[1]])
                    print u[2] " uses " u[3] " from " where[u[3]] " (" layer[u[3]] " is above " u[1] ")"
            }
        }' | sort
}

# check NAME DIR LAYERS LABEL: the upward references of the objects under DIR against
# NAME.expected.
check() {
    upward_references "$2" "$3" >"$work/$1.out"
    [ -s "$work/$1.out" ] || echo "no object uses a symbol of a layer above its own" >"$work/$1.out"
    compare_expected "$1" "$4" "$work/$1.out"
}

# gather NAME SRC OBJ LAYERS: links the objects of the sources under SRC (one folder per layer)
# from OBJ into $work/NAME/LAYER/ (the build folder may also hold stale objects of sources that
# were moved or removed).
gather() {
    for layer in $4; do
        mkdir -p "$work/$1/$layer"
        for source in "$2/$layer"/*.c; do
            name=${source##*/}
            ln -s "$3/$layer/${name%.c}.o" "$work/$1/$layer/"
        done
    done
}

# probe NAME LAYER LABEL SOURCE: the objects gathered as NAME, plus SOURCE compiled into
# LAYER/probe.o, checked as NAME.
probe() {
    printf '%s\n' "$4" >"$work/$1.c"
    # shellcheck disable=SC2086 # CC may be a word list
    build "$1 [$3]" "$work/$1.log" $CC -c "$work/$1.c" -o "$work/$1/$2/probe.o"
}

if selected runtime || selected probe; then
    gather runtime "$SRC_DIR" "$OBJ_DIR" "$runtime_layers"
    gather probe "$SRC_DIR" "$OBJ_DIR" "$runtime_layers"
fi
selected runtime && check runtime "$work/runtime" "$runtime_layers" "the runtime's objects"
selected probe &&
    probe probe record "a recording object calling a writer" \
        'struct spanprof__outputs;
int spanprof__write_all(const struct spanprof__outputs *o);
int probe(void) { return spanprof__write_all(0); }' &&
    check probe "$work/probe" "$runtime_layers" "a recording object calling a writer"

if selected tool || selected tool-probe; then
    gather tool "$TOOL_SRC_DIR" "$TOOL_OBJ_DIR" "$tool_layers"
    gather tool-probe "$TOOL_SRC_DIR" "$TOOL_OBJ_DIR" "$tool_layers"
fi
selected tool && check tool "$work/tool" "$tool_layers" "the tool's objects"
selected tool-probe &&
    probe tool-probe lib "a helper of the tool calling a profile reader" \
        'struct sp_profile;
int sp_profile_load(const char *path, struct sp_profile *out);
int probe(void) { return sp_profile_load("", 0); }' &&
    check tool-probe "$work/tool-probe" "$tool_layers" "a helper of the tool calling a profile reader"

summary
