#!/bin/sh
# run.sh — end-to-end tests of SPANPROF_TRACE: builds threads.c with spanplugin (gcc -O0 and
# -O2), runs it in the cases below and compares the trace summary printed by tracecheck (JSON
# parsed with json-c: per-thread names, event counts, nesting, monotonic timestamps, drop counts)
# plus the run's stderr with CASE.expected.
#   full        default buffer: nothing dropped
#   tiny        SPANPROF_TRACE_BUFFER=0.0005 (32 events per thread): drops, still balanced
#   fork        a forked child writes its own trace (path without %p: ".PID" appended)
#   churn       40 more threads that end one after the other: the 32 that ended last are kept
#   bad-buffer  SPANPROF_TRACE_BUFFER=lots: one warning, default buffer
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, TRACECHECK.  ONLY="a b" runs only those cases;
# REGEN=1 rewrites the expected files from the -O0 build (see ../lib.sh).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

# Prints the summary of case $1 run in directory $2 by program $3 with extra arguments.
run_case() {
    name=$1 dir=$2 exe=$3
    shift 3
    mkdir -p "$dir"
    (cd "$dir" && SPANPROF_FOLDED='' SPANPROF_TRACE=trace.json "$exe" "$@" 2>stderr)
    echo "# stderr"
    cat "$dir/stderr"
    echo "# trace"
    "$TRACECHECK" "$dir/trace.json"
    for child in "$dir"/trace.json.*; do
        [ -f "$child" ] || continue
        echo "# trace of a child process"
        "$TRACECHECK" "$child"
    done
}

for level in -O0 -O2; do
    mkdir -p "$work/$level"
    exe="$work/$level/threads"
    cmd="$CC -g -fchecking $level -fplugin=$PLUGIN -I$INCLUDE_DIR $here/threads.c -o $exe -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
    # shellcheck disable=SC2086 # a word list
    build "threads [$level]" "$work/build.log" $cmd || continue
    for name in full tiny fork churn bad-buffer; do
        selected "$name" || continue
        dir="$work/$name$level"
        case $name in
        full) run_case "$name" "$dir" "$exe" ;;
        tiny) SPANPROF_TRACE_BUFFER=0.0005 run_case "$name" "$dir" "$exe" ;;
        fork) run_case "$name" "$dir" "$exe" fork ;;
        churn) run_case "$name" "$dir" "$exe" churn ;;
        bad-buffer) SPANPROF_TRACE_BUFFER=lots run_case "$name" "$dir" "$exe" ;;
        esac >"$dir.actual" 2>&1
        compare_expected "$name" "$level" "$dir.actual" "built with: $cmd"
    done
done
summary
