#!/bin/sh
# run.sh — the plugin tests: compiles every sample program in this folder with spanplugin at
# -O0, -O2, -O3, -O2 -flto and -O3 -flto (with -fchecking, and -Wclobbered as an error: the
# samples are clean without the plugin, so the code it adds around setjmp must not make GCC
# fear for a variable), C samples with gcc and as C++ with g++, C++ samples with g++; runs each
# with the runtime and compares its exit status, output and a normalised dump of its profile
# (see ../tools/profdump.c) with NAME.expected: one file for every compiler and level.  Every span
# takes the plugin's inline path (inline=all: the samples' functions are small, which by default
# call the runtime); samples that do not choose a recording mode run a second time with
# SPANPROF=count, the inline path's other mode, against the same file.  Then inline_static.c's
# copies inlined into main, which carry the inline path (main reads the clock itself) unless
# built with inline-copies=0.
#
# Environment: CC, CXX, PLUGIN, INCLUDE_DIR, LIBDIR (holds libspanprof.so), PROFDUMP.
# Optional: ONLY="a b" to run only those samples; REGEN=1 to rewrite the expected files from the
# gcc -O0 build (the other builds are compared with it), see ../lib.sh; LEVELS="O0 O2" to build
# only at those levels; SAMPLE_CFLAGS: more compiler flags (e.g. sanitizers); PLUGIN_ARGS: more
# plugin options (inline-copies=0: the same expected files).
# A sample may carry lines:  /* test-env: VAR=VALUE ... */   extra environment for the run
#                            /* test: c-only */               not compiled as C++
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir
SAMPLE_PLUGIN_ARGS="-fplugin-arg-spanplugin-inline=all ${PLUGIN_ARGS:-}"

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
    build_sample "$src" "$name" "$label" \
        "$compiler -g -fchecking -Werror=clobbered $level ${SAMPLE_CFLAGS:-}" || return
    run_sample SPANPROF_JSON="$dir/out.%p.json" SPANPROF_FOLDED="$dir/out.%p.folded"
    describe_run "$dir" "$(cat "$dir/pid")" >"$dir/actual"
    compare_expected "$name" "$label" "$dir/actual" "built with: $cmd"
    # Counting recording: the same calls and stacks.
    case $test_env in *SPANPROF=*) return ;; esac
    rm -f "$dir"/out.*
    run_sample SPANPROF=count SPANPROF_JSON="$dir/out.%p.json" SPANPROF_FOLDED="$dir/out.%p.folded"
    describe_run "$dir" "$(cat "$dir/pid")" >"$dir/actual.count"
    REGEN=0 compare_expected "$name" "$label, SPANPROF=count" "$dir/actual.count" "built with: $cmd"
}

# test_sample SRC NAME: every compiler and level for one sample.
test_sample() {
    case $1 in
    *.c)
        compilers="gcc=$CC"
        grep -q 'test: c-only' "$1" || compilers="$compilers g++=$CXX@-x@c++"
        ;;
    *) compilers="g++=$CXX" ;;
    esac
    for entry in $compilers; do
        tag=${entry%%=*}
        compiler=$(echo "${entry#*=}" | tr '@' ' ')
        for level in ${LEVELS:-O0 O2 O3 O2-flto O3-flto}; do
            flags=$(echo "-$level" | sed 's/-flto/ -flto/')
            run_one "$1" "$2" "$tag $flags" "$compiler" "$flags"
        done
    done
}

for_each_test test_sample c cc

# inline-copies=0: at -O2 GCC inlines inline_static.c's scale() and square() into main (with
# off-copy=0, so that their recording bodies stay in them rather than in clones of their own).
# By default their inline path comes along, so main reads the clock itself; with the option
# main calls the runtime for them instead (and records the same: check-plugin runs the samples
# so too).
clock_reads_in_main() {
    "${CC%gcc*}objdump" -d --no-show-raw-insn "$1" |
        awk '/^[0-9a-f]+ <main>:/ { inside = 1; next } /^$/ { inside = 0 }
             inside && /rdtsc|cntvct_el0/ { n++ } END { print n + 0 }'
}
if [ -z "${PLUGIN_ARGS:-}" ] && selected inline_static; then
    copies=""
    for option in "" -fplugin-arg-spanplugin-inline-copies=0; do
        cmd="$CC -O2 -fplugin=$PLUGIN -fplugin-arg-spanplugin-inline=all -fplugin-arg-spanplugin-off-copy=0 $option -I$INCLUDE_DIR $here/inline_static.c -o $work/copies -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR"
        # shellcheck disable=SC2086 # a word list
        if ! $cmd >"$work/copies.log" 2>&1; then
            copies="$copies failed"
            break
        fi
        copies="$copies $(clock_reads_in_main "$work/copies")"
    done
    # shellcheck disable=SC2086 # two numbers, split on purpose
    set -- $copies
    if [ "$#" -eq 2 ] && [ "$2" = 0 ] && [ "$1" != 0 ] && [ "$1" != failed ]; then
        pass "inline-copies=0: main reads the clock in $1 places by default, in none with the option"
    else
        fail "inline-copies=0: clock reads in main by default and with the option:$copies (want some, then none)"
        sed 's/^/  | /' "$work/copies.log"
    fi
fi
summary
