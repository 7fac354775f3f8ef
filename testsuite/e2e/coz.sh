#!/bin/sh
# coz.sh — end to end under coz: a program built with spanplugin and linked with the runtime,
# run as `coz run --- ./prog`, must leave `latency-point name=<span>` lines in profile.coz with
# arrivals == departures (its spans are balanced).  Skipped, saying why, when coz is missing or
# cannot sample here.
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, COZ.
set -u
work=$(mktemp -d "${TMPDIR:-/tmp}/spanprof-coz.XXXXXX")
trap 'rm -rf "$work"' EXIT
here=$(cd "$(dirname "$0")" && pwd)

if [ -z "${COZ:-}" ]; then
    echo "SKIP coz end-to-end: coz is not installed (Debian package coz-profiler)"
    echo "coz: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
$CC -O2 -g -gdwarf-4 -gno-variable-location-views -fplugin="$PLUGIN" -I"$INCLUDE_DIR" \
    "$here/coz_workload.c" -o "$work/prog" -L"$LIBDIR" -lspanprof -Wl,-rpath,"$LIBDIR" || exit 1
if ! (cd "$work" && SPANPROF_FOLDED='' "$COZ" run --- ./prog >coz.log 2>&1) || [ ! -s "$work/profile.coz" ]; then
    echo "SKIP coz end-to-end: coz could not profile here (perf events denied?):"
    tail -n 3 "$work/coz.log" | sed 's/^/  | /'
    echo "coz: 0 passed, 0 failed, 1 skipped"
    exit 0
fi

passed=0 failed=0
for span in cozwork.outer cozwork.inner; do
    # Sum the counters over all experiments of this latency point.
    result=$(awk -F'\t' -v want="name=$span" '
        $1 == "latency-point" && $2 == want {
            seen++
            for (i = 3; i <= NF; i++) { split($i, kv, "="); sum[kv[1]] += kv[2] }
        }
        END { printf "%d %d %d", seen, sum["arrivals"], sum["departures"] }' "$work/profile.coz")
    # shellcheck disable=SC2086 # three numbers, split on purpose
    set -- $result
    if [ "$1" -gt 0 ] && [ "$2" -gt 0 ] && [ "$2" -eq "$3" ]; then
        echo "PASS coz latency-point $span: $1 lines, arrivals = departures = $2"
        passed=$((passed + 1))
    else
        echo "FAIL coz latency-point $span: lines=$1 arrivals=$2 departures=$3"
        grep '^latency-point' "$work/profile.coz" | head -n 5 | sed 's/^/  | /'
        failed=$((failed + 1))
    fi
done
echo "coz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
