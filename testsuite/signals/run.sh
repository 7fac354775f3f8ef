#!/bin/sh
# run.sh — spans in signal handlers: builds the samples in this folder with spanplugin (gcc -O0
# and -O2), runs them and compares a normalised result with NAME.expected.
#   sigalrm     a 10 kHz SIGALRM handler with spans over a loop of nested spans, in every
#               recording mode (default, count, histogram, CPU, allocation tracking, trace), on
#               the thread's stack, on an alternate stack below it and on one above it.  The
#               handler's runs (printed) must equal its span's calls; no anomaly; a stack with
#               the handler must be an interrupted stack with the handler's spans on top.
#   siglongjmp  the handler siglongjmps out at random points; spans first called after the
#               timer stops are all recorded, at the root.
#   sigstartup  the 10 kHz handler armed before the first span: signals land while the main
#               thread or a new thread gets its data, and (runtime linked statically, the first
#               span in a constructor that runs before the runtime's) while start-up and its
#               calibration run.  The handler's runs must equal its span's calls in the default,
#               count and sample modes; each run three times, the landings varying.
#   sigpaths    the 10 kHz handler while the program creates new call paths all the time: the
#               handler lands while nodes are made, under the same parent as its own often; its
#               runs must equal its spans' calls (default, count, sample, histogram modes).
# The handler's run count varies from run to run: where it equals the span's calls it is printed
# as H; stacks of the handler that have the shape above are left out (which of them occur varies).
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP, TRACECHECK, RUNTIME_LIBS.  Optional: ONLY,
# REGEN and EMULATOR (../lib.sh); LEVELS (default "-O0 -O2"); SIGNAL_CFLAGS (extra compiler flags, e.g.
# sanitizers); SIGNAL_MODES (default all).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

# normalise DIR KEEP: the run's exit status, stdout, profile and (if any) trace summary, with the
# handler's run count replaced by H where the profile agrees with it; of the profile only the
# lines matching the extended regular expression KEEP.
normalise() {
    dir=$1 keep=$2
    h=$(sed -n 's/^handled=//p' "$dir/stdout")
    echo "# exit $(cat "$dir/status")"
    echo "# stdout"
    sed "s/^handled=$h\$/handled=H/; s/^jumped=[0-9][0-9]*\$/jumped=J/" "$dir/stdout"
    echo "# stderr"
    cat "$dir/stderr"
    echo "# profile"
    "$PROFDUMP" "$dir/out.json" "$dir/out.folded" 2>&1 |
        sed "s/^\(span handler[a-z_]* calls=\)$h\$/\1H/" |
        grep -Ev '^stack (((early|work(;mid(;leaf)?)?);)?handler(;handler_inner)?)$' |
        sed 's/^anomaly abandoned_frames=[1-9][0-9]*$/anomaly abandoned_frames=some/' |
        grep -E "$keep"
    if [ -f "$dir/trace.json" ]; then
        echo "# trace"
        "$TRACECHECK" "$dir/trace.json" 2>&1 |
            sed 's/[0-9][0-9]* events, [0-9][0-9]* spans/N events, N spans/; s/dropped [0-9][0-9]*/dropped N/;
                 s/begun before [0-9][0-9]*/begun before N/; s/dropped_events [0-9][0-9]*/dropped_events N/'
    fi
}

# check NAME EXPECTED LABEL EXE ARGS ENV...: runs EXE with ARGS and ENV, compares with EXPECTED.
check() {
    name=$1 expected=$2 label=$3 exe=$4 args=$5
    shift 5
    dir="$work/$(echo "$name $label" | tr -c 'A-Za-z0-9+\n' '_')"
    mkdir -p "$dir"
    # shellcheck disable=SC2086 # args is a word list, EMULATOR a command
    (cd "$dir" && env SPANPROF_JSON="$dir/out.json" SPANPROF_FOLDED="$dir/out.folded" "$@" \
        ${EMULATOR:-} "$exe" $args >stdout 2>stderr; echo $? >status)
    keep=.
    # The loop's counts depend on where the jumps landed: only the spans after it are exact.
    [ "$name" = siglongjmp ] && keep='^(span (after|after_child|handler) |anomaly|threads|stack after)'
    # A hundred thousand call paths: their counts only.
    [ "$name" = sigpaths ] && keep='^(span |anomaly|threads)'
    normalise "$dir" "$keep" >"$dir/actual"
    compare_expected "$expected" "$label" "$dir/actual" "run: $* $exe $args"
}

build_signal_sample() { # SRC EXE: at $level, with the plugin and the shared runtime
    # shellcheck disable=SC2086 # level and SIGNAL_CFLAGS are word lists
    build "${1##*/} [$level]" "$2.log" $CC -g -fchecking $level ${SIGNAL_CFLAGS:-} \
        -fplugin="$PLUGIN" -I"$INCLUDE_DIR" "$1" -o "$2" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof \
        -Wl,-rpath,"$LIBDIR" -pthread
}

build_static_sample() { # SRC EXE: as build_signal_sample, with libspanprof.a
    # shellcheck disable=SC2086 # level, SIGNAL_CFLAGS and RUNTIME_LIBS are word lists
    build "${1##*/} [$level static]" "$2.log" $CC -g -fchecking $level ${SIGNAL_CFLAGS:-} \
        -fplugin="$PLUGIN" -I"$INCLUDE_DIR" "$1" -o "$2" -Wl,-u,__spanprof_enter \
        "$LIBDIR/libspanprof.a" $RUNTIME_LIBS -pthread -ldl
}

preload=$LIBDIR/libspanprof-alloc.so
for level in ${LEVELS:--O0 -O2}; do
    mkdir -p "$work/$level"
    if selected sigalrm && build_signal_sample "$here/sigalrm.c" "$work/$level/sigalrm"; then
        for stack in normal altstack altabove; do
            for mode in ${SIGNAL_MODES:-default count sample histogram cpu alloc trace}; do
                expected=sigalrm rounds=400000
                case $mode in
                default) set -- X=1 ;;
                count) set -- SPANPROF=count ;;
                sample) set -- SPANPROF=sample SPANPROF_SAMPLE_HZ=10000 ;;
                histogram) set -- SPANPROF_HISTOGRAM=1 ;;
                cpu) set -- SPANPROF_CPU=1; rounds=100000; expected=sigalrm-cpu ;;
                alloc) set -- LD_PRELOAD="$preload" SPANPROF_ALLOC=1 ;;
                trace) set -- SPANPROF_TRACE=trace.json; expected=sigalrm-trace ;;
                esac
                check sigalrm "$expected" "$level $stack $mode" "$work/$level/sigalrm" "$stack $rounds" "$@"
            done
        done
    fi
    if selected siglongjmp && build_signal_sample "$here/siglongjmp.c" "$work/$level/siglongjmp"; then
        for run in 1 2 3; do
            check siglongjmp siglongjmp "$level run $run" "$work/$level/siglongjmp" 200000 X=1
        done
    fi
    if selected sigpaths && build_signal_sample "$here/sigpaths.c" "$work/$level/sigpaths"; then
        for mode in default count sample histogram; do
            case $mode in
            default) set -- X=1 ;;
            count) set -- SPANPROF=count ;;
            sample) set -- SPANPROF=sample SPANPROF_SAMPLE_HZ=10000 ;;
            histogram) set -- SPANPROF_HISTOGRAM=1 ;;
            esac
            check sigpaths sigpaths "$level $mode" "$work/$level/sigpaths" 65536 "$@"
        done
    fi
    if selected sigstartup && build_signal_sample "$here/sigstartup.c" "$work/$level/sigstartup" &&
        build_static_sample "$here/sigstartup.c" "$work/$level/sigstartup-static"; then
        for start in main thread ctor; do
            exe=$work/$level/sigstartup
            [ $start = ctor ] && exe=$exe-static
            for mode in default count sample; do
                case $mode in
                default) set -- SIGSTARTUP=$start ;;
                count) set -- SIGSTARTUP=$start SPANPROF=count ;;
                sample) set -- SIGSTARTUP=$start SPANPROF=sample SPANPROF_SAMPLE_HZ=10000 ;;
                esac
                for run in 1 2 3; do
                    check sigstartup sigstartup "$level $start $mode run $run" "$exe" 400000 "$@"
                done
            done
        done
    fi
done
summary
