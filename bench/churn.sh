#!/bin/sh
# churn.sh — the thread-churn table of `make bench`: 20,000 short-lived threads, 8 alive at a
# time, each running 16 spans (testsuite/lifecycle/thread_churn.c), built without the plugin
# (plain) and with it (static runtime).  Each row's figures are medians of 5 runs, the rows run
# in turn within each repetition (the machine is shared: same-run ratios); CPU seconds, wall
# seconds and peak RSS of the whole run, from bench/measure.
#
# Environment (set by bench.mk): BENCH_BIN (holds churn-plain, churn-sp and measure).
set -u
work="$BENCH_BIN/churn.run"
reps=5
ROWS="uninstrumented|churn-plain|
count|churn-sp|SPANPROF=count
exact (folded)|churn-sp|
exact, JSON + per-thread folded|churn-sp|SPANPROF_JSON=p.json SPANPROF_THREADS=1
exact + trace|churn-sp|SPANPROF_TRACE=t.json"

echo "### Thread churn: 20,000 short-lived threads, 8 at a time (testsuite/lifecycle/thread_churn.c)"
echo
echo "| setting | CPU s | wall s | peak RSS |"
echo "|---|---:|---:|---:|"
rm -f "$work".*.results
i=1
while [ $i -le $reps ]; do
    n=0
    echo "$ROWS" | while IFS='|' read -r label bin settings; do
        n=$((n + 1))
        rm -rf "$work" && mkdir -p "$work"
        # shellcheck disable=SC2086 # settings split on spaces
        (cd "$work" && env $settings "$BENCH_BIN/measure" "$BENCH_BIN/$bin") >>"$work.$n.results"
    done
    i=$((i + 1))
done
n=0
echo "$ROWS" | while IFS='|' read -r label bin settings; do
    n=$((n + 1))
    sort -n "$work.$n.results" | awk -v label="$label${settings:+ (\`$settings\`)}" -v n=$reps '
        { cpu[NR] = $1; wall[NR] = $2; rss[NR] = $3 }
        END {
            m = int((n + 1) / 2)  # cpu is sorted; wall and rss: of the same run
            printf "| %s | %.2f | %.2f | %.1f MiB |\n", label, cpu[m], wall[m], rss[m] / 1024
        }'
done
