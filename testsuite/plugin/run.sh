#!/bin/sh
# run.sh — the plugin tests: compiles every sample program in this folder with spanplugin at
# -O0, -O2, -O3 and -O2 -flto (with -fchecking), C samples with gcc and as C++ with g++, C++
# samples with g++; runs each with the runtime and compares its exit status, output and a
# normalised dump of its profile (see ../tools/profdump.c) with NAME.expected.
#
# Environment: CC, CXX, PLUGIN, INCLUDE_DIR, LIBDIR (holds libspanprof.so), PROFDUMP.
# Optional: SAMPLES="a b" to run only those; LEVELS="O0 O2" to build only at those levels;
# SAMPLE_CFLAGS: more compiler flags (e.g. sanitizers);
# REGEN=1 to rewrite the expected files from the gcc -O0 build instead of comparing.
# A sample may carry lines:  /* test-env: VAR=VALUE ... */   extra environment for the run
#                            /* test: c-only */               not compiled as C++
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2034 # read by lib.sh
suite=plugin
# shellcheck source=testsuite/lib.sh
. "$here/../lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/spanprof-plugin-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Prints the normalised result of one run in directory $1 whose main process had pid $2.
describe_run() {
    dir=$1 pid=$2
    print_run "$dir"
    echo "# profile"
    "$PROFDUMP" "$dir/out.$pid.json" "$dir/out.$pid.folded" 2>&1
    for json in "$dir"/out.*.json; do
        [ -f "$json" ] || continue
        other=${json%.json}
        other=${other##*.}
        [ "$other" = "$pid" ] && continue
        echo "# profile of a child process"
        "$PROFDUMP" "$json" "$dir/out.$other.folded" 2>&1
    done
}

run_one() {
    src=$1 name=$2 label=$3 compiler=$4 level=$5
    dir="$work/$name.$(echo "$label" | tr -c 'A-Za-z0-9+\n' '_')"
    mkdir -p "$dir"
    exe="$dir/prog"
    # shellcheck disable=SC2086 # compiler and level are word lists
    build="$compiler -g -fchecking $level ${SAMPLE_CFLAGS:-} -fplugin=$PLUGIN -I$INCLUDE_DIR $src -x none -o $exe -L$LIBDIR -lspanprof -Wl,-rpath,$LIBDIR -pthread"
    if ! $build >"$dir/build.log" 2>&1; then
        fail "$name [$label]: does not build"
        echo "  $build"
        sed 's/^/  | /' "$dir/build.log"
        return
    fi
    test_env=$(sed -n 's|.*test-env: \(.*\) \*/.*|\1|p' "$src")
    # shellcheck disable=SC2086 # test_env is a list of assignments
    (cd "$dir" && env SPANPROF_JSON="$dir/out.%p.json" SPANPROF_FOLDED="$dir/out.%p.folded" \
        $test_env "$exe" >stdout 2>stderr & echo $! >"$dir/pid"; wait $!; echo $? >"$dir/status")
    describe_run "$dir" "$(cat "$dir/pid")" >"$dir/actual"
    compare_expected "$name" "$label" "$dir/actual" "make check-plugin REGEN=1 SAMPLES=$name" \
        "built with: $build"
}

for src in "$here"/*.c "$here"/*.cc; do
    [ -f "$src" ] || continue
    file=${src##*/}
    name=${file%.*}
    selected "$name" || continue
    case $file in
    *.c)
        compilers="gcc=$CC"
        grep -q 'test: c-only' "$src" || compilers="$compilers g++=$CXX@-x@c++"
        ;;
    *) compilers="g++=$CXX" ;;
    esac
    for entry in $compilers; do
        tag=${entry%%=*}
        compiler=$(echo "${entry#*=}" | tr '@' ' ')
        for level in ${LEVELS:-O0 O2 O3 O2-flto}; do
            if [ "${REGEN:-0}" = 1 ] && [ "$level$tag" != O0gcc ] && [ "$level$tag" != "O0g++" ]; then
                continue
            fi
            flags=$(echo "-$level" | sed 's/-flto/ -flto/')
            run_one "$src" "$name" "$tag $flags" "$compiler" "$flags"
        done
        [ "${REGEN:-0}" = 1 ] && break
    done
done

summary
