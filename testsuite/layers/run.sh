#!/bin/sh
# run.sh — the runtime's layering, checked on its objects: record/ < collect/ < report/ < config/,
# and no object may use a symbol that an object of a higher layer defines (calls and data alike,
# as nm sees them).  The check runs on the real objects (no such reference), then on them plus a
# probe object in record/ that calls the report layer's writer, which it must name.
#
# Environment: CC; SRC_DIR (runtime/) and OBJ_DIR (its objects in the build: NAME.c's object is
# NAME.o in the same layer folder).  ONLY="runtime" or "probe" runs one check; REGEN=1 rewrites
# the expected files (see ../lib.sh).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir
layers="record collect report config"

# upward_references DIR: one line per use of a higher layer's symbol by an object under DIR.
upward_references() {
    for layer in $layers; do
        for object in "$1/$layer"/*.o; do
            name="$layer/${object##*/}"
            nm -g --defined-only "$object" | awk -v l="$layer" -v o="$name" 'NF == 3 { print "D", l, o, $3 }'
            nm -u "$object" | awk -v l="$layer" -v o="$name" '{ print "U", l, o, $NF }'
        done
    done | awk -v order="$layers" '
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

# check NAME DIR LABEL: the upward references of the objects under DIR against NAME.expected.
check() {
    selected "$1" || return 0
    upward_references "$2" >"$work/$1.out"
    [ -s "$work/$1.out" ] || echo "no object uses a symbol of a layer above its own" >"$work/$1.out"
    compare_expected "$1" "$3" "$work/$1.out"
}

# gather NAME: links the objects of the runtime's sources into $work/NAME/LAYER/ (the build
# folder may also hold stale objects of sources that were moved or removed).
gather() {
    for layer in $layers; do
        mkdir -p "$work/$1/$layer"
        for source in "$SRC_DIR/$layer"/*.c; do
            name=${source##*/}
            ln -s "$OBJ_DIR/$layer/${name%.c}.o" "$work/$1/$layer/"
        done
    done
}
gather runtime
gather probe
check runtime "$work/runtime" "the runtime's objects"

printf 'struct spanprof__outputs;\nint spanprof__write_all(const struct spanprof__outputs *o);\n%s\n' \
    'int probe(void) { return spanprof__write_all(0); }' >"$work/probe.c"
# shellcheck disable=SC2086 # CC may be a word list
build "probe [a recording object calling a writer]" "$work/probe.log" \
    $CC -c "$work/probe.c" -o "$work/probe/record/probe.o" &&
    check probe "$work/probe" "a recording object calling a writer"

summary
