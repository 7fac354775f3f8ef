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
#   inline      calls.c, 100,000 calls of three nested marked spans, with runtime_calls.c
#               preloaded to count the calls of the runtime's entry points: the plugin's inline
#               code records every call once the spans are registered (the runtime only pushes
#               its events), so they are entered three times (the registrations) and never
#               exited; the trace holds every event
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, TRACECHECK.  ONLY="a b" runs only those cases;
# REGEN=1 rewrites the expected files from the -O0 build (see ../lib.sh); EMULATOR runs the
# programs (inline is skipped there: LD_PRELOAD would be read by the emulator's own loader).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

# Prints the summary of case $1 run in directory $2 by program $3 with extra arguments (and the
# environment RUN_ENV, a word list, for the program alone).
run_case() {
    name=$1 dir=$2 exe=$3
    shift 3
    mkdir -p "$dir"
    # shellcheck disable=SC2086 # RUN_ENV is a word list, EMULATOR a command
    (cd "$dir" && env SPANPROF_FOLDED='' SPANPROF_TRACE=trace.json ${RUN_ENV:-} ${EMULATOR:-} \
        "$exe" "$@" 2>stderr)
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

if selected inline && [ -z "${EMULATOR:-}" ]; then
    build "runtime_calls.c" "$work/build.log" $CC -shared -fPIC -O2 -I"$INCLUDE_DIR" \
        "$here/runtime_calls.c" -o "$work/runtime_calls.so" -ldl
fi

for level in -O0 -O2; do
    mkdir -p "$work/$level"
    if selected inline; then
        if [ -n "${EMULATOR:-}" ]; then
            skip "inline [$level]: LD_PRELOAD would be read by the emulator's own loader"
        elif [ -f "$work/runtime_calls.so" ]; then
            exe="$work/$level/calls"
            cmd="$CC -g -fchecking $level -fplugin=$PLUGIN -I$INCLUDE_DIR $here/calls.c -o $exe -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR"
            # shellcheck disable=SC2086 # a word list
            if build "calls [$level]" "$work/build.log" $cmd; then
                RUN_ENV="LD_PRELOAD=$work/runtime_calls.so SPANPROF_TRACE_BUFFER=16" \
                    run_case inline "$work/inline$level" "$exe" >"$work/inline$level.actual" 2>&1
                compare_expected inline "$level" "$work/inline$level.actual" "built with: $cmd"
            fi
        fi
    fi
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
