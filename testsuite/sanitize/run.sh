#!/bin/sh
# run.sh — dumps while threads record, under ThreadSanitizer: builds flush.c (threads recording)
# and churn.c (threads ending, their data merged and reused) with spanplugin
# against the runtime built with -fsanitize=thread (static, so the runtime itself is
# instrumented), runs it in each recording mode whose per-call data the writers read (default,
# histogram, CPU time, trace, counting, and sampling, whose sampler thread reads every thread's
# top frame) and fails on any ThreadSanitizer report, on a nonzero exit, or when the final
# profile does not hold every call (compared with NAME.expected).  Then ../patch/switch.c, its
# spans switched on and off by request 100 times while eight threads call them (built here
# without patch points: the runtime's state alone switches them): no report, and the calls made
# while on counted exactly.  Then the same program under a cost budget of 1 % (exact, sampled and
# counting), which switches spans off while the threads call them and the requests switch them
# back: no report, and the budget switched spans off (the profile's "switched_off" count).
#
# Environment: CC (with -fsanitize=thread), PLUGIN, INCLUDE_DIR, LIB (the TSan-built
# libspanprof.a), RUNTIME_LIBS (the libraries it needs), PROFDUMP.  Optional: ONLY, REGEN
# (../lib.sh).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

for prog in flush churn; do
    selected "$prog" || continue
    exe="$work/$prog"
    # shellcheck disable=SC2086 # CC and RUNTIME_LIBS are word lists
    build "$prog" "$work/$prog.build.log" $CC -g -O1 -fplugin="$PLUGIN" -I"$INCLUDE_DIR" \
        "$here/$prog.c" -o "$exe" -Wl,-u,__spanprof_enter $LIB $RUNTIME_LIBS -pthread || continue
    for mode in default histogram cpu trace count sample; do
        dir="$work/$prog.$mode"
        mkdir -p "$dir"
        case $mode in
        default) set -- X=1 ;;
        histogram) set -- SPANPROF_HISTOGRAM=1 ;;
        cpu) set -- SPANPROF_CPU=1 ;;
        trace) set -- SPANPROF_TRACE="$dir/trace.json" ;;
        count) set -- SPANPROF=count ;;
        sample) set -- SPANPROF=sample SPANPROF_SAMPLE_HZ=10000 ;;
        esac
        (cd "$dir" && env SPANPROF_JSON="$dir/out.json" SPANPROF_FOLDED="$dir/out.folded" \
            TSAN_OPTIONS="exitcode=66 halt_on_error=0" "$@" "$exe" >stdout 2>stderr; echo $? >status)
        {
            echo "# exit $(cat "$dir/status")"
            echo "# stdout"
            cat "$dir/stdout"
            echo "# stderr (ThreadSanitizer's reports)"
            cat "$dir/stderr"
            echo "# profile"
            "$PROFDUMP" "$dir/out.json" "$dir/out.folded" 2>&1 | grep -v '^stack deep;deep'
        } >"$dir/actual"
        compare_expected "$prog" "$mode" "$dir/actual" "run: $* $exe"
    done
done
exe="$work/switch"
if selected switch || selected budget; then
    # shellcheck disable=SC2086 # CC and RUNTIME_LIBS are word lists
    build switch "$work/switch.build.log" $CC -g -O1 -fplugin="$PLUGIN" \
        -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -I"$INCLUDE_DIR" \
        "$here/../patch/switch.c" -o "$exe" -Wl,-u,__spanprof_enter $LIB $RUNTIME_LIBS -pthread
fi
if selected switch && [ -x "$exe" ]; then
    dir="$work/switch.run"
    mkdir -m 700 "$dir"
    # The live thread is not joined at exit (the process ends it): not a leak to report.
    (cd "$dir" && env SPANPROF_JSON="$dir/out.json" SPANPROF_FOLDED= SPANPROF_LIVE="$dir" \
        SPANPROF_SPANS=leaf TSAN_OPTIONS="exitcode=66 halt_on_error=0 report_thread_leaks=0" \
        "$exe" 100 >stdout 2>stderr; echo $? >status)
    made=$(sed -n 's/^counted_on //p' "$dir/stdout")
    got=$("$PROFDUMP" "$dir/out.json" 2>&1 | sed -n 's/^span counted calls=//p')
    [ "$(cat "$dir/status")" = 0 ] && [ ! -s "$dir/stderr" ] && [ -n "$made" ] && [ "$got" = "$made" ]
    result $? "switch: 100 switches under ThreadSanitizer: exit $(cat "$dir/status"), counted $got calls of the $made made while on, stderr: $(head -c 400 "$dir/stderr")"
fi
if selected budget && [ -x "$exe" ]; then
    for mode in exact sample count; do
        case $mode in
        exact) set -- X=1 ;;
        sample) set -- SPANPROF=sample SPANPROF_SAMPLE_HZ=10000 ;;
        count) set -- SPANPROF=count ;;
        esac
        dir="$work/budget.$mode"
        mkdir -m 700 "$dir"
        (cd "$dir" && env "$@" SPANPROF_BUDGET=1 SPANPROF_JSON="$dir/out.json" SPANPROF_FOLDED= \
            SPANPROF_LIVE="$dir" TSAN_OPTIONS="exitcode=66 halt_on_error=0 report_thread_leaks=0" \
            "$exe" 50 >stdout 2>stderr; echo $? >status)
        off=$(sed -n 's/.*"switched_off": *\([0-9]*\).*/\1/p' "$dir/out.json" | head -n 1)
        [ "$(cat "$dir/status")" = 0 ] && [ ! -s "$dir/stderr" ] && [ "${off:-0}" -gt 0 ]
        result $? "budget: $mode, 1 % budget and 50 switches under ThreadSanitizer: exit $(cat "$dir/status"), $off switches off by the budget, stderr: $(head -c 400 "$dir/stderr")"
    done
fi

summary
