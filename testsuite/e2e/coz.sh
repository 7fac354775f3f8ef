#!/bin/sh
# coz.sh — end to end under coz: a program built with spanplugin and linked with the runtime,
# run as `coz run --- ./prog`, must leave `latency-point name=<span>` lines in profile.coz with
# arrivals matching departures (its spans are balanced; see below for the window margin), and
# `throughput-point name=<progress point>` lines whose deltas add up to no more than the hits;
# and the runtime's one-line warning about debug info coz cannot use must appear exactly for
# the builds that have it.  Skipped, saying why, when coz is missing or cannot sample here.
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, COZ.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir
items=2000000 # a few seconds: several coz experiment windows (a 1 s run gave just one)

if [ -z "${COZ:-}" ]; then
    skip "coz end-to-end: coz is not installed (Debian package coz-profiler)"
    finish
fi
# shellcheck disable=SC2086 # CC may be a word list
build "coz_workload.c" "$work/build.log" $CC -O2 -g -gdwarf-4 -gno-variable-location-views -fplugin="$PLUGIN" \
    -I"$INCLUDE_DIR" "$here/coz_workload.c" -o "$work/prog" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$LIBDIR" || finish
if ! (cd "$work" && SPANPROF_FOLDED='' "$COZ" run --- ./prog "$items" >coz.log 2>&1) || [ ! -s "$work/profile.coz" ]; then
    skip "coz end-to-end: coz could not profile here (perf events denied?):"
    tail -n 3 "$work/coz.log" | sed 's/^/  | /'
    finish
fi

# Sum a latency point's counters over all experiments: prints "LINES ARRIVALS DEPARTURES".
latency_totals() {
    awk -F'\t' -v want="name=$1" '
        $1 == "latency-point" && $2 == want {
            seen++
            for (i = 3; i <= NF; i++) { split($i, kv, "="); sum[kv[1]] += kv[2] }
        }
        END { printf "%d %d %d", seen, sum["arrivals"], sum["departures"] }' "$work/profile.coz"
}

# Balanced spans: coz counts arrivals and departures inside each experiment's window, and a
# call in flight when a window opens or closes is counted on one side only — so per window
# the two may differ by one (one thread here).  Over all windows they must agree to within
# the number of windows.  inner runs twice per outer call, so its arrivals are twice outer's
# to within the same margin.
# check OK LABEL: PASS when OK is 1; a FAIL shows the first latency-point lines.
check() {
    if [ "$1" -eq 1 ]; then
        pass "coz $2"
    else
        fail "coz $2"
        grep '^latency-point' "$work/profile.coz" | head -n 5 | sed 's/^/  | /'
    fi
}
# shellcheck disable=SC2046 # three numbers, split on purpose
set -- $(latency_totals cozwork.outer)
outer_lines=$1 outer_arrivals=$2 outer_departures=$3
# shellcheck disable=SC2046
set -- $(latency_totals cozwork.inner)
inner_lines=$1 inner_arrivals=$2 inner_departures=$3
# within DIFF MARGIN: |DIFF| <= MARGIN
within() {
    if [ "$1" -lt 0 ]; then [ $((-$1)) -le "$2" ]; else [ "$1" -le "$2" ]; fi
}

ok=0; [ "$outer_lines" -gt 0 ] && [ "$outer_arrivals" -gt 0 ] &&
    within $((outer_arrivals - outer_departures)) "$outer_lines" && ok=1
check $ok "latency-point cozwork.outer: $outer_lines lines, arrivals $outer_arrivals, departures $outer_departures"
ok=0; [ "$inner_lines" -gt 0 ] && [ "$inner_arrivals" -gt 0 ] &&
    within $((inner_arrivals - inner_departures)) "$inner_lines" && ok=1
check $ok "latency-point cozwork.inner: $inner_lines lines, arrivals $inner_arrivals, departures $inner_departures"
ok=0; within $((inner_arrivals - 2 * outer_arrivals)) $((2 * outer_lines)) && ok=1
check $ok "cozwork.inner arrives twice per cozwork.outer: $inner_arrivals vs 2 x $outer_arrivals"

# Sum a throughput point's deltas over all experiments: prints "LINES DELTAS".
throughput_totals() {
    awk -F'\t' -v want="name=$1" '
        $1 == "throughput-point" && $2 == want { seen++; split($3, kv, "="); sum += kv[2] }
        END { printf "%d %d", seen, sum }' "$work/profile.coz"
}
# Each progress point is hit once per item (cozwork.item, on outer's return) or every other
# item (cozwork.even, SPANPROF_PROGRESS); coz counts visits inside its experiment windows, so
# the deltas are positive and add up to at most the hits.
for point in cozwork.item:$items cozwork.even:$((items / 2)); do
    name=${point%%:*} hits=${point#*:}
    # shellcheck disable=SC2046
    set -- $(throughput_totals "$name")
    ok=0; [ "$1" -gt 0 ] && [ "$2" -gt 0 ] && [ "$2" -le "$hits" ] && ok=1
    check $ok "throughput-point $name: $1 lines, deltas $2 (at most $hits hits)"
done
ok=0; grep -q 'spanprof: warning' "$work/coz.log" || ok=1
check $ok "no debug-info warning for -gdwarf-4 -gno-variable-location-views"

# Debug info coz can't use: exactly one warning line naming the problem and the flags.
for build in "dwarf5:-g -gdwarf-5:DWARF 5" "locviews:-g -gdwarf-4:DWARF 4 with location views"; do
    tag=${build%%:*} rest=${build#*:}
    flags=${rest%%:*} problem=${rest#*:}
    # shellcheck disable=SC2086 # flag list
    build "coz_workload.c $flags" "$work/build.log" $CC -O2 $flags -fplugin="$PLUGIN" -I"$INCLUDE_DIR" \
        "$here/coz_workload.c" -o "$work/prog-$tag" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$LIBDIR" || continue
    (cd "$work" && SPANPROF_FOLDED='' "$COZ" run --- "./prog-$tag" 10 >"coz-$tag.log" 2>&1)
    want="spanprof: warning: coz cannot use this program's debug info ($problem); rebuild it with -g -gdwarf-4 -gno-variable-location-views"
    ok=0; [ "$(grep -c 'spanprof: warning' "$work/coz-$tag.log")" -eq 1 ] &&
        grep -qxF "$want" "$work/coz-$tag.log" && ok=1
    check $ok "one debug-info warning for $flags ($problem)"
    [ $ok -eq 1 ] || grep 'spanprof' "$work/coz-$tag.log" | sed 's/^/  | /'
done
summary
