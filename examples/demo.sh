#!/bin/sh
# demo.sh — `make demo`: builds examples/pipeline.c with spanplugin, runs it to write a flame
# graph input (folded stacks), a JSON profile and a pprof profile, prints the heaviest stacks, and — when coz is
# installed and allowed to sample — runs it under `coz run` (spans become coz latency points,
# the "item" progress point a throughput point) and prints the causal profile per span:
# which stage, made faster, would raise the pipeline's throughput, and by how much.
#
# Environment (set by the Makefile): CC, PLUGIN, INCLUDE_DIR, LIBDIR, TOOL (the spanprof tool),
# COZ (may be empty).
# DEMO_RECORDS overrides the number of records processed in the plain run, DEMO_TRACE_RECORDS
# those of the (shorter) traced run, DEMO_COZ_RECORDS those of the run under coz (about 45 s on
# a 2-core machine; shorter runs give coz too few experiments to tell the bottleneck from noise).
set -eu
out=build/demo
mkdir -p "$out"
records=${DEMO_RECORDS:-400000}
trace_records=${DEMO_TRACE_RECORDS:-500}

# -g -gdwarf-4 -gno-variable-location-views: the debug info Debian's coz 0.2.2 can read
# (what `pkg-config --variable=coz_cflags spanprof` gives after an install).
echo "== building examples/pipeline.c with spanplugin"
set -x
$CC -O2 -g -gdwarf-4 -gno-variable-location-views -fplugin="$PLUGIN" -I"$INCLUDE_DIR" \
    examples/pipeline.c -o "$out/pipeline" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$LIBDIR" -pthread
{ set +x; } 2>/dev/null

echo "== running it: $records records"
SPANPROF_FOLDED="$out/pipeline.folded" SPANPROF_JSON="$out/pipeline.json" \
    SPANPROF_PPROF="$out/pipeline.pb.gz" "$out/pipeline" "$records"

echo
echo "== spans (spanprof report $out/pipeline.json)"
"$TOOL" report "$out/pipeline.json"

echo
echo "== heaviest stacks by self time (from $out/pipeline.folded)"
sort -k2,2nr -t' ' "$out/pipeline.folded" | head -n 8 |
    awk '{ value = $NF; sub(/ [0-9]+$/, ""); printf "  %10.1f ms  %s\n", value / 1e6, $0 }'

echo
echo "== timeline: a shorter run with SPANPROF_TRACE ($trace_records records)"
SPANPROF_FOLDED="" SPANPROF_TRACE="$out/pipeline.trace.json" "$out/pipeline" "$trace_records" >/dev/null

echo
echo "== pages (spanprof view): a flame graph of the folded stacks, a timeline of the trace"
flame_page="" timeline_page=""
if flame_page=$("$TOOL" view -o "$out/flamegraph.html" "$out/pipeline.folded") &&
    timeline_page=$("$TOOL" view -o "$out/timeline.html" "$out/pipeline.trace.json"); then
    echo "  $flame_page"
    echo "  $timeline_page"
else
    echo "  (no pages: see the message above)"
    flame_page="" timeline_page=""
fi

coz_records=${DEMO_COZ_RECORDS:-12000000}
if [ -n "${COZ:-}" ]; then
    echo
    echo "== causal profile: coz run --- $out/pipeline $coz_records (about 45 s)"
    rm -f "$out/profile.coz" # coz appends to it
    if (cd "$out" && "$COZ" run --- ./pipeline "$coz_records" >coz.log 2>&1) && [ -s "$out/profile.coz" ]; then
        echo "experiments run: $(grep -c '^experiment' "$out/profile.coz")"
        echo
        echo "== what would a faster span give? (spanprof coz --latency digest $out/profile.coz $out/pipeline.json)"
        "$TOOL" coz --latency digest "$out/profile.coz" "$out/pipeline.json" || true
    else
        echo "coz could not run (see $out/coz.log); on a VM it may need: sysctl kernel.perf_event_paranoid=1"
    fi
else
    echo
    echo "(coz not installed: apt-get install coz-profiler, re-run ./configure, for the causal profile)"
fi

echo
echo "== outputs"
echo "  $out/pipeline.folded   flame graph input: flamegraph.pl $out/pipeline.folded > pipeline.svg"
echo "                          or drop it on https://www.speedscope.app"
echo "  $out/pipeline.json     JSON profile: calls, total and self time per span"
echo "  $out/pipeline.pb.gz    pprof profile: go tool pprof -http=localhost:8080 $out/pipeline.pb.gz,"
echo "                          or Grafana Pyroscope / Parca (see README, *pprof*)"
echo "  $out/pipeline.trace.json  Chrome trace: https://ui.perfetto.dev (Open trace file) or speedscope"
[ -n "$flame_page" ] && echo "  $flame_page   flame graph page (speedscope, works offline): open it in a browser"
[ -n "$timeline_page" ] && echo "  $timeline_page     timeline page, one track per thread: open it in a browser"
[ -n "${COZ:-}" ] && [ -f "$out/profile.coz" ] &&
    echo "  $out/profile.coz       coz causal profile: spanprof coz $out/profile.coz $out/pipeline.json,
                          coz plot, or load it at https://plasma-umass.org/coz"
exit 0
