#!/bin/sh
# demo.sh — `make demo`: builds examples/pipeline.c with spanplugin and profiles it the way a user
# would, with `spanprof record`: a run (merged profile, flame graph page, the top of the report),
# a shorter traced run (timeline page), and — when coz is installed and allowed to sample — a run
# under coz (spans are coz latency points, the "item" progress point a throughput point) that
# prints which stage, made faster, would raise the pipeline's throughput, and by how much.
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
coz_records=${DEMO_COZ_RECORDS:-12000000}

# -g -gdwarf-4 -gno-variable-location-views: the debug info Debian's coz 0.2.2 can read
# (what `pkg-config --variable=coz_cflags spanprof` gives after an install).
echo "== building examples/pipeline.c with spanplugin"
set -x
$CC -O2 -g -gdwarf-4 -gno-variable-location-views -fplugin="$PLUGIN" -I"$INCLUDE_DIR" \
    examples/pipeline.c -o "$out/pipeline" -L"$LIBDIR" -Wl,--no-as-needed -lspanprof -Wl,-rpath,"$LIBDIR" -pthread
{ set +x; } 2>/dev/null

echo
echo "== spanprof record -o $out/run -- $out/pipeline $records"
"$TOOL" record -o "$out/run" --force -- "$out/pipeline" "$records" 2>&1

echo
echo "== a timeline: spanprof record --trace -o $out/traced -- $out/pipeline $trace_records"
"$TOOL" record -o "$out/traced" --force --trace --limit 3 -- "$out/pipeline" "$trace_records" 2>&1

if [ -n "${COZ:-}" ]; then
    echo
    echo "== causal profile: spanprof record --coz -o $out/coz -- $out/pipeline $coz_records (about 45 s)"
    # coz's own progress lines go to its log; the table is what record prints after them.
    if ! "$TOOL" record -o "$out/coz" --force --coz --limit 3 -- "$out/pipeline" "$coz_records" \
        >"$out/coz.log" 2>&1; then
        echo "coz could not run (see $out/coz.log); on a VM it may need: sysctl kernel.perf_event_paranoid=1"
    fi
    sed -n '/^coz profile:/,$p' "$out/coz.log"
else
    echo
    echo "(coz not installed: apt-get install coz-profiler, re-run ./configure, for the causal profile)"
fi

echo
echo "== what else to try"
echo "  spanprof report --sort=total $out/run        every span, by inclusive time"
echo "  spanprof diff $out/run $out/traced   what changed between two runs"
echo "  spanprof convert $out/run/profile.folded      a pprof profile (go tool pprof, Pyroscope, Parca)"
echo "  open $out/run/flamegraph.html and $out/traced/timeline.html in a browser (they work offline)"
exit 0
