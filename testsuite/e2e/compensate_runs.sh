#!/bin/sh
# compensate_runs.sh — the measurement of a span call's cost, run after run: compensate_runs.c
# (fib(22), a recursive span of 57,313 calls) 200 times.  Every run's JSON must have the
# measurement ("compensation" with call_ns: a measurement that once failed in about one run of a
# hundred left the times uncompensated, ten times the others, without a word), and fib's total
# must stay clear of zero (a measurement a few per cent high, which the minimum of differences
# between two loops gave now and then, took all of it): no run under a twentieth of the lowest
# tenth of the runs.  A bound that holds with the machine busy: a preemption or a busy neighbour
# only adds time, to some runs; the spread is printed.
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, PROFDUMP.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir
selected compensate_runs || finish
build_sample "$here/compensate_runs.c" compensate_runs "${CC:-gcc} -O2" "${CC:-gcc} -O2" || finish
runs=200

: >"$dir/runs"
i=0
while [ $i -lt $runs ]; do
    run_sample SPANPROF_JSON=p.json SPANPROF_FOLDED=
    echo "$(cat "$dir/status") $("$PROFDUMP" --compensation "$dir/p.json" | tr ' ' ,)" \
        "$("$PROFDUMP" --times "$dir/p.json" | sed -n 's/^fib total_ns=\([0-9]*\).*/\1/p')" >>"$dir/runs"
    i=$((i + 1))
done

# status compensation total, one line per run
awk '$1 != 0 || $2 !~ /^call_ns=/ { n++ } END { exit n > 0 }' "$dir/runs"
result $? "compensate_runs: the call's cost measured in each of $runs runs ($(awk '$2 !~ /^call_ns=/' "$dir/runs" | wc -l) without)"
awk '$1 != 0 || $2 !~ /^call_ns=/ { print "  exit " $1 ": " $2 }' "$dir/runs" | sort | uniq -c
sed 's/.*call_ns=\([0-9.]*\),.*/\1/' "$dir/runs" | grep -v '[^0-9.]' | sort -n >"$dir/call_ns"
sort -n -k3 "$dir/runs" | awk '{ print $3 }' >"$dir/totals"
stats=$(awk '{ v[NR] = $1 } END {
    p10 = v[int(NR / 10) + 1]; med = v[int(NR / 2) + 1]
    printf "lowest %d, lowest tenth %d, median %d, highest %d ns", v[1], p10, med, v[NR]
    exit !(NR > 0 && v[1] > 0 && v[1] * 20 >= p10) }' "$dir/totals")
result $? "compensate_runs: fib's total in $runs runs: $stats"
echo "  call_ns: lowest $(head -n1 "$dir/call_ns"), median $(sed -n "$(( ($(wc -l <"$dir/call_ns") + 1) / 2 ))p" "$dir/call_ns"), highest $(tail -n1 "$dir/call_ns")"
finish
