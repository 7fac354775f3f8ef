#!/bin/sh
# run.sh — SPANPROF=sample: builds each program in this folder with spanplugin (gcc -O2, linked
# with libspanprof.so), runs it with SPANPROF=sample and SPANPROF_JSON=out.%p.json in a folder of
# its own, and compares with NAME.expected: exit status, stdout, stderr, then for each profile
# the exact calls per span (profdump) and whether each span got samples.
#
# accuracy.c (spans shorter than the sampling period), accuracy_long.c (longer ones) and
# accuracy_one_cpu.c (short spans, the program and its sampler on one CPU) are run
# four times each (exact, sample, count mode, and exact with SPANPROF_CPU=1), with a busy loop
# on every core beside them all along: the runner makes its own load, since the machines these
# numbers matter on are busy.  Their expected files hold the verdicts: calls identical to count
# mode's; each span's share of wall time within 5 points of what the program measured itself in
# the same run, in exact and in sample mode (each run against its own truth: two runs under load
# do not split their time alike);
# and, sampled and with SPANPROF_CPU=1, the spans' CPU time 0.85 to 1.1 of the thread's, the
# sleeping span charged at most 5 % of its wall time, and each span's share of the spans' CPU
# time within 5 points of its share by the program's own CPU clock (sampled: within the points
# an accuracy program names on a "sampled-cpu-points: N" line, 5 where it names none).
# Shares are compared (never absolute times), the program's work is measured in wall time (a
# busy loop on the clock: the same shares under any load), it measures itself too, and an
# attempt that misses is repeated (at most 3).  sampler_thread.c also runs with
# SPANPROF=count and SPANPROF=1 (no sampler thread there).
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP.  Optional: ONLY="a b"; REGEN=1
# rewrites the expected files (see ../lib.sh).  A program may carry a line
#   test-env: VAR=VALUE ...    extra environment
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

# sampled JSON: "time NAME sampled" (samples > 0) or "time NAME not sampled", one per span.
sampled() {
    "$PROFDUMP" --times "$1" | awk '{
        s = "not sampled"
        for (i = 2; i <= NF; i++)
            if ($i ~ /^samples=/ && substr($i, 9) + 0 > 0)
                s = "sampled"
        print "time " $1 " " s
    }' | sort
}

# describe DIR PID: the run, then each profile (the process's own first, then its children's).
describe() {
    print_run "$1"
    if [ -f "$1/out.$2.json" ]; then
        echo "# profile"
        "$PROFDUMP" "$1/out.$2.json" 2>&1
        sampled "$1/out.$2.json"
    fi
    for json in "$1"/out.*.json; do
        [ -f "$json" ] && [ "$json" != "$1/out.$2.json" ] || continue
        echo "# profile of a child process"
        "$PROFDUMP" "$json" 2>&1
        sampled "$json"
    done
}

# run_mode MODE: runs the program built in $dir with SPANPROF=MODE in $dir/MODE; MODE cpu is
# exact mode with SPANPROF_CPU=1, writing folded stacks of CPU time (SPANPROF_FOLDED_VALUE=cpu).
run_mode() {
    rm -rf "${dir:?}/$1"
    mkdir -p "$dir/$1"
    case $1 in
    cpu) mode_env="SPANPROF=1 SPANPROF_CPU=1 SPANPROF_FOLDED=out.folded SPANPROF_FOLDED_VALUE=cpu" ;;
    *) mode_env="SPANPROF=$1 SPANPROF_FOLDED=" ;;
    esac
    # shellcheck disable=SC2086 # test_env and mode_env are lists of assignments, EMULATOR a command
    (cd "$dir/$1" && env SPANPROF_JSON="out.%p.json" $mode_env $test_env \
        ${EMULATOR:-} "$dir/prog" >stdout 2>stderr & echo $! >"$dir/$1/pid"
     wait $!; echo $? >"$dir/$1/status")
}

# One attempt of the accuracy test: its verdicts into $dir/actual.
accuracy_attempt() {
    for mode in 1 sample count cpu; do
        run_mode "$mode"
    done
    {
        echo "# exit $(cat "$dir/sample/status")"
        echo "# stderr"
        cat "$dir/sample/stderr"
        for mode in count sample; do
            echo "# calls, $mode mode"
            "$PROFDUMP" "$dir/$mode/out.$(cat "$dir/$mode/pid").json" 2>&1
        done
        echo "# shares of wall time"
        # The folded stacks of CPU time: each (leaf) span's line holds its JSON cpu_ns exactly
        # (out.folded, or out.folded.PID from the image accuracy_one_cpu.c executes).
        "$PROFDUMP" --times "$dir/cpu/out.$(cat "$dir/cpu/pid").json" | tr '=' ' ' |
            awk 'NR == FNR { for (i = 2; i < NF; i++) if ($i == "cpu_ns") json[$1] = $(i + 1); next }
                 { folded[$1] = $2 }
                 END { bad = 0
                       for (s in json) if (folded[s] != json[s]) { bad = 1; printf "folded cpu %s: %s, JSON %s\n", s, folded[s], json[s] }
                       if (!bad) print "SPANPROF_FOLDED_VALUE=cpu: each span'"'"'s folded value is its CPU time" }' \
                - "$(ls "$dir/cpu"/out.folded* | head -n 1)"
        for mode in 1 sample cpu; do
            grep '^truth \|^cpu \|^cputruth ' "$dir/$mode/stdout" | sed "s/^/$mode /"
            "$PROFDUMP" --times "$dir/$mode/out.$(cat "$dir/$mode/pid").json" | sed "s/^/$mode span /"
        done | awk -v sampled_cpu_points="${sampled_cpu_points:-5}" '
            function share(mode, kind, name) { return 100 * v[mode, kind, name] / sum[mode, kind] }
            function verdict(what, a, b, points) {
                d = a - b
                if (d < 0) d = -d
                if (d <= points)
                    print what ": within " points " points"
                else
                    printf "%s: %.1f and %.1f, %.1f points apart\n", what, a, b, d
            }
            # MODE run, its label, its JSON field of CPU time: the spans (all leaves) hold the
            # thread'"'"'s CPU time, the sleeping one next to none of it, and each its share of
            # them as the program measured it with its own CPU clock.
            function cpu_checks(mode, label, field, points,   spans, ratio, cpu, wall, own, k, s) {
                spans = x[mode, "work_a", field] + x[mode, "work_b", field] + x[mode, "nap", field]
                ratio = thread_cpu[mode] > 0 ? spans / thread_cpu[mode] : 0
                if (ratio >= 0.85 && ratio <= 1.1)
                    print label ": the spans'"'"' CPU time is the thread'"'"'s (0.85 to 1.1 of it)"
                else
                    printf "%s: the spans'"'"' CPU time is %.2f of the thread'"'"'s\n", label, ratio
                cpu = x[mode, "nap", field]; wall = v[mode, "profile", "nap"]
                if (wall > 0 && cpu <= wall / 20)
                    print label ": nap charged at most 5 % of its wall time as CPU"
                else
                    printf "%s: nap charged %d ns CPU of %d ns wall\n", label, cpu, wall
                own = cpu_truth[mode, "work_a"] + cpu_truth[mode, "work_b"] + cpu_truth[mode, "nap"]
                for (k = 1; k <= n; k++) {
                    s = order[k]
                    if (spans > 0 && own > 0)
                        verdict(label ": " s "'"'"'s share of the spans'"'"' CPU vs the program'"'"'s own CPU clock",
                                100 * x[mode, s, field] / spans, 100 * cpu_truth[mode, s] / own, points)
                    else
                        print label ": no CPU time on the spans"
                }
            }
            $2 == "truth" { v[$1, "truth", $3] = $4; sum[$1, "truth"] += $4 }
            $2 == "cpu" { thread_cpu[$1] = $4 }
            $2 == "cputruth" { cpu_truth[$1, $3] = $4 }
            $2 == "span" {
                split($4, t, "="); v[$1, "profile", $3] = t[2]; sum[$1, "profile"] += t[2]
                for (i = 5; i <= NF; i++) { split($i, f, "="); x[$1, $3, f[1]] = f[2] }
                names[$3] = 1
            }
            BEGIN { n = split("work_a work_b nap", order, " ") }
            END {
                for (k = 1; k <= n; k++) {
                    s = order[k]
                    verdict(s " sampled vs the program'"'"'s own clock", share("sample", "profile", s),
                            share("sample", "truth", s), 5)
                    verdict(s " exact vs the program'"'"'s own clock", share("1", "profile", s),
                            share("1", "truth", s), 5)
                }
                cpu_checks("sample", "sampled", "cpu_total_ns", sampled_cpu_points)
                cpu_checks("cpu", "SPANPROF_CPU=1", "cpu_ns", 5)
            }'
    } >"$dir/actual"
}

# start_load / stop_load: a busy loop on every core, for as long as the accuracy runs take.
load_pids=""
start_load() {
    cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
    i=0
    while [ "$i" -lt "$cores" ]; do
        (while :; do :; done) &
        load_pids="$load_pids $!"
        i=$((i + 1))
    done
}
stop_load() {
    # shellcheck disable=SC2086 # a list of pids
    [ -n "$load_pids" ] && kill $load_pids 2>/dev/null
    load_pids=""
}
trap 'stop_load; rm -rf "$work"' EXIT

test_accuracy() {
    start_load
    for attempt in 1 2 3; do
        accuracy_attempt
        [ "${REGEN:-0}" = 1 ] && break
        cmp -s "$dir/actual" "$here/$1.expected" && break
        echo "  $1: attempt $attempt missed:" >&2
        sed 's/^/  | /' "$dir/actual" >&2
    done
    stop_load
    compare_expected "$1" "gcc -O2" "$dir/actual" "built with: $cmd"
}

# before_first_span.c's verdicts: the span's sampled wall time is its own 200 ms (190 to 300),
# and the time outside spans the 600 ms before it (at least 590).
before_first_span() {
    json="$dir/sample/out.$(cat "$dir/sample/pid").json"
    "$PROFDUMP" --times "$json" | awk '$1 == "short_sleep" {
        split($2, f, "="); ms = f[2] / 1e6
        if (ms >= 190 && ms <= 300) print "short_sleep: its own 200 ms"
        else printf "short_sleep: %.1f ms\n", ms }'
    idle=$(tr ',{}' '\n\n\n' <"$json" | sed -n 's/.*"outside_spans_ns": *\([0-9]*\).*/\1/p' | head -n 1)
    if [ "${idle:-0}" -ge 590000000 ]; then
        echo "outside spans: the 600 ms before it"
    else
        echo "outside spans: ${idle:-no} ns"
    fi
}

test_program() {
    build_sample "$1" "$2" "gcc -O2" "$CC -g -O2" || return
    case $2 in
    accuracy*)
        sampled_cpu_points=$(file_directive sampled-cpu-points "$1")
        test_accuracy "$2"
        return
        ;;
    esac
    run_mode sample
    describe "$dir/sample" "$(cat "$dir/sample/pid")" >"$dir/actual"
    [ "$2" = before_first_span ] && before_first_span >>"$dir/actual"
    if [ "$2" = sampler_thread ]; then
        for mode in count 1; do
            run_mode "$mode"
            echo "# SPANPROF=$mode"
            cat "$dir/$mode/stdout" "$dir/$mode/stderr"
        done >>"$dir/actual"
    fi
    compare_expected "$2" "gcc -O2" "$dir/actual" "built with: $cmd"
}

for_each_test test_program c
summary
