#!/bin/sh
# coz.sh — end to end under coz: a program built with spanplugin and linked with the runtime,
# run as `coz run --- ./prog`, must leave `latency-point name=<span>` lines in profile.coz with
# arrivals matching departures (its spans are balanced; see below for the window margin), and
# `throughput-point name=<progress point>` lines whose deltas add up to no more than the hits;
# and the runtime's one-line warning about debug info coz cannot use must appear exactly for
# the builds that have it.  Then a program with no markup at all (coz_unmarked.c), built
# whole-program (every function: min-size=0) with the progress point chosen at run time
# (SPANPROF_COZ_PROGRESS=emit), and
# built with only -fplugin-arg-spanplugin-progress=emit, each run 25 s under coz: enough
# experiments and baselines (coz never stalls on spans), `emit` a throughput point, no latency
# point whose counts went negative, and `spanprof coz` ranking the bottleneck first on figures
# of 5 or more experiments.  The whole-program run is made by `spanprof record --coz
# --progress emit`, as a user would, and its table is the one record prints; with the default
# size rule, which leaves emit out, record must say before the run that --progress names no
# span and what to do, and the runtime must warn at start for SPANPROF_COZ_PROGRESS naming no
# span (record_tiny.c).  Skipped, saying why, when coz is missing or cannot sample here.
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, COZ, TOOL (spanprof).
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

# Balanced spans: coz counts arrivals and departures inside each experiment's window, and a
# call in flight when a window opens or closes is counted on one side only — so per window
# the two may differ by one (one thread here), and inner, which runs twice per outer call,
# arrives twice as often as outer to within two.  coz reads a point's two counters one after
# the other, not together: a reading interrupted between them (coz's thread preempted on a
# busy machine) counts the calls made meanwhile on one side only, tens of them.  So a quarter
# of the windows may be off.  A runtime that lost or doubled begins or ends here and there
# would put windows off by one or two; one that does so on some path, every window.
# windows: prints "WINDOWS OUTER_ARRIVALS OUTER_OFF INNER_ARRIVALS INNER_OFF TWICE_OFF" — the
# experiments with both points, arrivals over them, and the windows off by more than the margin.
windows() {
    awk -F'\t' '
        function abs(x) { return x < 0 ? -x : x }
        $1 == "experiment" { w++ }
        $1 == "latency-point" {
            split($2, name, "="); split($3, a, "="); split($4, d, "=")
            arrivals[w, name[2]] = a[2]; departures[w, name[2]] = d[2]
        }
        END {
            for (i = 1; i <= w; i++) {
                if (!((i, "cozwork.outer") in arrivals) || !((i, "cozwork.inner") in arrivals))
                    continue
                n++
                oa = arrivals[i, "cozwork.outer"]; ia = arrivals[i, "cozwork.inner"]
                outer += oa; inner += ia
                if (abs(oa - departures[i, "cozwork.outer"]) > 1) outer_off++
                if (abs(ia - departures[i, "cozwork.inner"]) > 1) inner_off++
                if (abs(ia - 2 * oa) > 2) twice_off++
            }
            printf "%d %d %d %d %d %d", n, outer, outer_off, inner, inner_off, twice_off
        }' "$work/profile.coz"
}
# check OK LABEL: PASS when OK is 1; a FAIL shows the first latency-point lines.
check() {
    if [ "$1" -eq 1 ]; then
        pass "coz $2"
    else
        fail "coz $2"
        grep '^latency-point' "$work/profile.coz" | head -n 5 | sed 's/^/  | /'
    fi
}
# shellcheck disable=SC2046 # six numbers, split on purpose
set -- $(windows)
n=$1 outer_arrivals=$2 outer_off=$3 inner_arrivals=$4 inner_off=$5 twice_off=$6
may=$((n / 4))
ok=0; [ "$n" -gt 0 ] && [ "$outer_arrivals" -gt 0 ] && [ "$outer_off" -le $may ] && ok=1
check $ok "latency-point cozwork.outer: $n windows, arrivals $outer_arrivals, departures off by more than one in $outer_off (at most $may)"
ok=0; [ "$n" -gt 0 ] && [ "$inner_arrivals" -gt 0 ] && [ "$inner_off" -le $may ] && ok=1
check $ok "latency-point cozwork.inner: $n windows, arrivals $inner_arrivals, departures off by more than one in $inner_off (at most $may)"
ok=0; [ "$n" -gt 0 ] && [ "$twice_off" -le $may ] && ok=1
check $ok "cozwork.inner arrives twice per cozwork.outer: $inner_arrivals vs 2 x $outer_arrivals, off by more than two in $twice_off windows (at most $may)"

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

# The running "difference" (begin count - end count, unsigned) of each latency point line:
# activations in flight, a handful; an end counted without its begin wraps it around to near
# 2^64 in every line after it.  coz reads the two counts one after the other here too, so a
# quarter of the lines may be off.  Prints "LINES OFF LARGEST-OF-THE-REST".
differences() {
    awk -F'\t' '$1 == "latency-point" { n++; split($5, kv, "=")
                                        if (length(kv[2]) > 6 || kv[2] + 0 > 16) off++
                                        else if (kv[2] + 0 > max) max = kv[2] + 0 }
                END { printf "%d %d %d", n, off, max }' "$1"
}
# shellcheck disable=SC2046 # three numbers, split on purpose
set -- $(differences "$work/profile.coz")
ok=0; [ "$2" -le $(($1 / 4)) ] && ok=1
check $ok "latency points balanced: $1 lines, difference above 16 in $2 (at most $(($1 / 4))), largest of the rest $3"

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

# ---- a program nobody marked up ----------------------------------------------------------
# unmarked TAG ENV PLUGIN-ARGS...: builds coz_unmarked.c with those plugin arguments into
# $work/TAG/prog and runs it 25 s under coz with ENV (VAR=VALUE words) and a JSON profile.  ENV
# "record" runs it the way a user would, `spanprof record --coz --progress emit`, whose table
# (printed at the end) is checked below; its files are linked where the other run's are.
unmarked() {
    tag=$1 env=$2
    shift 2
    mkdir -p "$work/$tag"
    # shellcheck disable=SC2086 # CC may be a word list
    build "coz_unmarked.c $*" "$work/$tag/build.log" $CC -O2 -g -gdwarf-4 -gno-variable-location-views \
        -fplugin="$PLUGIN" "$@" "$here/coz_unmarked.c" -o "$work/$tag/prog" -L"$LIBDIR" \
        -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$LIBDIR" -pthread || return 1
    if [ "$env" = record ]; then
        (cd "$work/$tag" && "$TOOL" record -o rec --coz --progress emit -- ./prog 25 >coz.log 2>&1 &&
            ln -s rec/profile.coz profile.coz && ln -s rec/profile.json spans.json)
        return
    fi
    # shellcheck disable=SC2086 # ENV is a word list
    (cd "$work/$tag" && env SPANPROF_FOLDED='' SPANPROF_JSON=spans.json $env "$COZ" run --- ./prog 25 \
        >coz.log 2>&1)
}
# experiments TAG: "EXPERIMENTS BASELINES EMIT-LINES LATENCY-LINES" of TAG's profile.coz.
experiments() {
    awk -F'\t' '$1 == "experiment" { n++; if ($3 == "speedup=0.00") base++ }
                $1 == "throughput-point" && $2 == "name=emit" { emit++ }
                $1 == "latency-point" { latency++ }
                END { printf "%d %d %d %d", n, base, emit, latency }' "$work/$1/profile.coz"
}
for run in "whole-program:record:-fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0" \
    "progress-option::-fplugin-arg-spanplugin-progress=emit"; do
    tag=${run%%:*} rest=${run#*:}
    # shellcheck disable=SC2086 # the plugin arguments are a word list
    unmarked "$tag" "${rest%%:*}" ${rest#*:} || continue
    # shellcheck disable=SC2046 # four numbers, split on purpose
    set -- $(experiments "$tag")
    ok=0; [ "$1" -ge 15 ] && [ "$2" -ge 3 ] && [ "$3" -eq "$1" ] && [ "$4" -eq 0 ] && ok=1
    check $ok "unmarked, $tag: $1 experiments, $2 baselines, emit measured in $3, $4 latency-point lines"
    [ $ok -eq 1 ] || tail -n 5 "$work/$tag/coz.log" | sed 's/^/  | /'
done

# With the default size rule, emit (three statements) has no span, so --progress emit finds no
# span: record says so before it runs the program (status 125, no profile.coz), and how to make
# it a progress point.
mkdir -p "$work/default"
# shellcheck disable=SC2086 # CC may be a word list
if build "coz_unmarked.c default selection" "$work/default/build.log" $CC -O2 -g -gdwarf-4 \
    -gno-variable-location-views -fplugin="$PLUGIN" -fplugin-arg-spanplugin-all \
    "$here/coz_unmarked.c" -o "$work/default/prog" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof \
    -Wl,-rpath,"$LIBDIR" -pthread; then
    (cd "$work/default" && "$TOOL" record -o rec --coz --progress emit -- ./prog 3 >coz.log 2>&1)
    status=$?
    want="spanprof: --progress emit names no span of './prog' or of the libraries it links (a function smaller than the plugin's min-size has none): rebuild with -fplugin-arg-spanplugin-progress=emit, which makes a progress point of a function of any size, or mark it __attribute__((progress))"
    ok=0; [ $status -eq 125 ] && grep -qxF "$want" "$work/default/coz.log" &&
        [ ! -e "$work/default/rec/profile.coz" ] && ok=1
    check $ok "record --coz --progress emit, emit left out by its size: refused before the run ($status), saying how to choose it"
    [ $ok -eq 1 ] || tail -n 5 "$work/default/coz.log" | sed 's/^/  | /'
fi

# SPANPROF_COZ_PROGRESS without record: the runtime says it at start under coz, once, for a
# glob that names no span (record_tiny.c, tiny left out by its size), and not for one that does
# (every variable's names are checked alike: testsuite/flight/run.sh, case names).
mkdir -p "$work/tiny"
# shellcheck disable=SC2086 # CC may be a word list
if build "record_tiny.c whole-program" "$work/tiny/build.log" $CC -O2 -g -gdwarf-4 \
    -gno-variable-location-views -fplugin="$PLUGIN" -fplugin-arg-spanplugin-all \
    "$here/record_tiny.c" -o "$work/tiny/prog" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof \
    -Wl,-rpath,"$LIBDIR"; then
    want="spanprof: warning: SPANPROF_COZ_PROGRESS: 'tiny' names no span, so coz sees no progress point for it: the program has the function but no span for it (the plugin's size rule leaves small functions out): rebuild with -fplugin-arg-spanplugin-progress=tiny (a progress point of a function of any size) or mark it __attribute__((progress))"
    for glob in tiny 'wor*'; do
        (cd "$work/tiny" && SPANPROF_FOLDED='' SPANPROF_COZ_PROGRESS="$glob" "$COZ" run --- ./prog >coz.log 2>&1)
        warnings=$(grep -c 'spanprof: warning' "$work/tiny/coz.log")
        if [ "$glob" = tiny ]; then
            ok=0; [ "$warnings" -eq 1 ] && grep -qxF "$want" "$work/tiny/coz.log" && ok=1
        else
            ok=0; [ "$warnings" -eq 0 ] && ok=1
        fi
        check $ok "SPANPROF_COZ_PROGRESS=$glob under coz: $warnings warning(s) at start"
        [ $ok -eq 1 ] || grep 'spanprof' "$work/tiny/coz.log" | sed 's/^/  | /'
    done
fi

# The whole-program run's table, as `spanprof record --coz` printed it: transform (the bottleneck)
# above decode, though it sorts after it by name, on at least one figure, and no figure anywhere
# from fewer than 5 experiments.
table=$work/whole-program/table
if [ -s "$work/whole-program/profile.coz" ]; then
    sed -n '/^throughput point/,$p' "$work/whole-program/coz.log" >"$table"
    first=$(awk '$1 == "transform" || $1 == "decode" { print $1; exit }' "$table")
    figures=$(grep -c '^  transform .*% (n=' "$table")
    thin=$(grep -cE '% \(n=[0-4]\)' "$table")
    ok=0; [ "$first" = transform ] && [ "$figures" -eq 1 ] && [ "$thin" -eq 0 ] && ok=1
    check $ok "spanprof coz ranks transform first ($first), with figures ($figures), none from n<5 ($thin)"
    [ $ok -eq 1 ] || sed 's/^/  | /' "$table"
fi
summary
