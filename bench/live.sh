#!/bin/sh
# live.sh — the live-profile table of `make bench` (SPANPROF_LIVE, bench/live.c): what a snapshot
# costs the process, and what being scraped every second costs a program that works.
#
#   snapshots   500 spans × 3 levels on 1 and 8 parked threads, in exact, count and sample
#               mode, whole and spans only (what a scrape of /metrics asks for): median and
#               largest time from request to last byte over 30 snapshots, the process's CPU
#               time per snapshot, the snapshot's size
#   scraping    2 threads doing a fixed amount of work (500 spans × 3 levels, ~3 s) in each
#               mode, without SPANPROF_LIVE and with it plus a client asking every second; CPU
#               seconds (user + system) of the program, medians of 5 runs taken in turn, and the
#               ratio within each mode
#
# Environment (set by bench.mk): BENCH_BIN (holds livebench and measure).
set -u
work="$BENCH_BIN/live.run"
reps=5
rm -rf "$work" && mkdir -p "$work"

echo "### Live profiles: a snapshot of 500 spans (bench/live.c)"
echo
echo "| mode | threads | asked for | median ms | largest ms | CPU ms | bytes |"
echo "|---|---:|---|---:|---:|---:|---:|"
# The modes by the value of SPANPROF that selects them.
modes="exact=1 count=count sample=sample"

for pair in $modes; do
    mode=${pair%=*} m=${pair#*=}
    for threads in 1 8; do
        for what in snapshot spans; do
            # shellcheck disable=SC2046 # no word or one
            (cd "$work" && SPANPROF=$m SPANPROF_FOLDED= SPANPROF_LIVE="$work/live" \
                "$BENCH_BIN/livebench" snapshot $threads $([ $what = spans ] && echo spans)) |
                awk -v mode=$mode -v what=$what '{ printf "| %s | %d | %s | %.1f | %.1f | %.1f | %d |\n", mode, $1, what, $2, $3, $4, $5 }'
        done
    done
done
echo
echo "### Live profiles: scraped every second while working (bench/live.c, 2 threads, CPU s)"
echo
echo "| mode | without SPANPROF_LIVE | scraped every second | × |"
echo "|---|---:|---:|---:|"
for pair in $modes; do
    mode=${pair%=*} m=${pair#*=}
    : >"$work/off" && : >"$work/on"
    i=1
    while [ $i -le $reps ]; do
        (cd "$work" && SPANPROF=$m SPANPROF_FOLDED= "$BENCH_BIN/measure" "$BENCH_BIN/livebench" work 3) >>"$work/off"
        rm -rf "$work/live"
        "$BENCH_BIN/livebench" scrape "$work/live" &
        scraper=$!
        (cd "$work" && SPANPROF=$m SPANPROF_FOLDED= SPANPROF_LIVE="$work/live" \
            "$BENCH_BIN/measure" "$BENCH_BIN/livebench" work 3) >>"$work/on"
        kill $scraper
        wait $scraper 2>/dev/null
        i=$((i + 1))
    done
    off=$(sort -n "$work/off" | awk -v n=$reps 'NR == int((n + 1) / 2) { print $1 }')
    on=$(sort -n "$work/on" | awk -v n=$reps 'NR == int((n + 1) / 2) { print $1 }')
    awk -v mode=$mode -v off="$off" -v on="$on" 'BEGIN { printf "| %s | %.3f | %.3f | %.3f |\n", mode, off, on, on / off }'
done
