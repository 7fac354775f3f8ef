#!/bin/sh
# deepjson.sh — the writing table of `make bench`: what writing the folded file costs on a
# profile that is expensive to write (bench/deepjson.c: a JSON reader, writer and destructor
# over 4 KB nested 1024 deep; the run itself takes milliseconds).  Each row is one setting; the
# figures are medians of 3 runs: CPU seconds and wall seconds of the whole run (nearly all of it
# the write at exit), peak RSS, and the folded file's size and line count.
#
# Environment (set by bench.mk): BENCH_BIN (holds deepjson and measure).
set -u
work="$BENCH_BIN/deepjson.run"
reps=3
ROWS="no folded file|SPANPROF_FOLDED=
default (64 MiB cap)|
no byte cap|SPANPROF_FOLDED_MAX_BYTES=1000000000000
no byte cap, file:line frames|SPANPROF_FOLDED_MAX_BYTES=1000000000000 SPANPROF_FILE_LINE=1
collapsed recursion|SPANPROF_FOLDED_RECURSION=collapse
count mode|SPANPROF=count"

echo "### Writing: a 4 KB JSON input nested 1024 deep (bench/deepjson.c)"
echo
echo "| setting | CPU s | wall s | peak RSS | folded file | lines |"
echo "|---|---:|---:|---:|---:|---:|"
echo "$ROWS" | while IFS='|' read -r label settings; do
    : >"$work.results"
    i=1
    while [ $i -le $reps ]; do
        rm -rf "$work" && mkdir -p "$work"
        # shellcheck disable=SC2086 # settings split on spaces
        (cd "$work" && env $settings "$BENCH_BIN/measure" "$BENCH_BIN/deepjson") >>"$work.results" \
            2>"$work.stderr"
        i=$((i + 1))
    done
    bytes=0 lines=0
    if [ -f "$work/spanprof.folded" ]; then
        bytes=$(wc -c <"$work/spanprof.folded")
        lines=$(wc -l <"$work/spanprof.folded")
    fi
    sort -n "$work.results" | awk -v label="$label${settings:+ (\`$settings\`)}" -v bytes="$bytes" \
        -v lines="$lines" -v n=$reps '
        { cpu[NR] = $1; wall[NR] = $2; rss[NR] = $3 }
        END {
            m = int((n + 1) / 2)  # cpu is sorted; wall and rss: of the same run
            printf "| %s | %.2f | %.2f | %.1f MiB | %.1f MB | %d |\n", label, cpu[m], wall[m],
                   rss[m] / 1024, bytes / 1e6, lines
        }'
done
