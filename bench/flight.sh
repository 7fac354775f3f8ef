#!/bin/sh
# flight.sh — the flight recorder's cost on a request loop (testsuite/flight/reqloop.c, built
# whole-program): two threads serving a fixed number of requests (one in 2,000 stalls ~6 ms), in
# exact mode (SPANPROF_JSON) and with the flight recorder on (SPANPROF_FLIGHT=0.5 plus
# SPANPROF_SLOW=handle:2ms writing captures, and with SPANPROF_FLIGHT_MIN=10us too).  CPU seconds
# (user + system) of the program, runs taken in turn (REPS of each, default 5), the medians and
# their ratio to exact mode.  Then testsuite/flight/busy.c, a main thread calling a span in a
# loop, in exact mode and with every event pushed (SPANPROF_SLOW=request:10ms): its span events
# per CPU second, the same way, at two rates: BUSY_WORK=150 (each call ~150 dependent steps, about
# 10 M events a second on the reference VM) and 0 (an empty span as fast as
# it can: the worst case for the recorder, whose two pushes a call then have no work beside).
#
# Environment (set by bench.mk): BENCH_BIN (holds measure), B (the build directory: the plugin,
# the runtime), REPS.
set -u
reps=${REPS:-5}
work="$BENCH_BIN/flight.run"
rm -rf "$work" && mkdir -p "$work"
exe=$work/reqloop
${CC:-gcc} -O2 -fplugin="$B/spanplugin.so" -fplugin-arg-spanplugin-all -Iinclude \
    testsuite/flight/reqloop.c -o "$exe" -L"$B" -Wl,--no-as-needed -lspanprof \
    -Wl,-rpath,"$(cd "$B" && pwd)" -pthread || exit 1
requests=30 # × 10,000 per worker

run() {
    name=$1
    shift
    rm -rf "$work/caps"
    (cd "$work" && env SPANPROF_FOLDED= SPANPROF_JSON=p.json SPANPROF_SLOW_DIR=caps "$@" \
        "$BENCH_BIN/measure" "$exe" $requests work) | awk '{ print $1 }' >>"$work/$name"
}

i=0
while [ $i -lt "$reps" ]; do
    run exact
    run flight SPANPROF_FLIGHT=0.5 SPANPROF_SLOW=handle:2ms
    run flight-min SPANPROF_FLIGHT=0.5 SPANPROF_SLOW=handle:2ms SPANPROF_FLIGHT_MIN=10us
    i=$((i + 1))
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median "$work/exact")
echo "### The flight recorder on a request loop (bench/flight.sh)"
echo
echo "Two threads, $((requests * 10000)) requests each (handle → parse, digest; one in 2,000"
echo "stalls ~6 ms), whole-program; CPU seconds of the program, medians of $reps runs taken in turn."
echo
echo "| configuration | CPU s (median) | all runs | × exact |"
echo "|---|---:|---|---:|"
for name in exact flight flight-min; do
    m=$(median "$work/$name")
    printf '| %s | %.2f | %s | %.3f |\n' "$name" "$m" "$(tr '\n' ' ' <"$work/$name" | sed 's/ $//')" \
        "$(echo "$m $base" | awk '{ print $1 / $2 }')"
done
echo

busy=$work/busy
${CC:-gcc} -O2 -fplugin="$B/spanplugin.so" -Iinclude testsuite/flight/busy.c -o "$busy" -L"$B" \
    -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$(cd "$B" && pwd)" -pthread || exit 1
busy_run() {
    name=$1 steps=$2
    shift 2
    rm -rf "$work/caps"
    (cd "$work" && env SPANPROF_FOLDED= SPANPROF_SLOW_DIR=caps BUSY_RATE="$work/rate" \
        BUSY_WORK="$steps" "$@" "$busy" 2 >/dev/null) && cat "$work/rate" >>"$work/$name"
}
i=0
while [ $i -lt "$reps" ]; do
    for steps in 150 0; do
        busy_run "busy-exact-$steps" "$steps"
        busy_run "busy-flight-$steps" "$steps" SPANPROF_SLOW=request:10ms
    done
    i=$((i + 1))
done
echo "testsuite/flight/busy.c: the main thread's span events per CPU second, medians of $reps runs"
echo "of 2 s taken in turn; × exact is CPU per event (BUSY_WORK: dependent steps in each call)."
echo
echo "| BUSY_WORK | configuration | M events per CPU s (median) | all runs | × exact |"
echo "|---:|---|---:|---|---:|"
for steps in 150 0; do
    base=$(median "$work/busy-exact-$steps")
    for mode in exact flight; do
        f=$work/busy-$mode-$steps
        m=$(median "$f")
        printf '| %s | %s | %.1f | %s | %.3f |\n' "$steps" "$mode" \
            "$(echo "$m" | awk '{ print $1 / 1e6 }')" \
            "$(awk '{ printf "%.1f ", $1 / 1e6 }' "$f" | sed 's/ $//')" \
            "$(echo "$base $m" | awk '{ print $1 / $2 }')"
    done
done
echo
