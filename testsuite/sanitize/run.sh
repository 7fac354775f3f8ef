#!/bin/sh
# run.sh — dumps while threads record, under ThreadSanitizer: builds flush.c (threads recording)
# and churn.c (threads ending, their data merged and reused) with spanplugin
# against the runtime built with -fsanitize=thread (static, so the runtime itself is
# instrumented), runs it in each recording mode whose per-call data the writers read (default,
# histogram, CPU time, trace, counting, and sampling, whose sampler thread reads every thread's
# top frame) and fails on any ThreadSanitizer report, on a nonzero exit, or when the final
# profile does not hold every call (compared with NAME.expected).
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
    build="$CC -g -O1 -fplugin=$PLUGIN -I$INCLUDE_DIR $here/$prog.c -o $exe -Wl,-u,__spanprof_enter $LIB $RUNTIME_LIBS -pthread"
    if ! $build >"$work/$prog.build.log" 2>&1; then
        fail "$prog: does not build"
        echo "  $build"
        sed 's/^/  | /' "$work/$prog.build.log"
        continue
    fi
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
summary
