#!/bin/sh
# zstd.sh — the whole-program table of `make bench` beside speedtest1's: zstd (Debian 12's libzstd
# sources, its own Makefile, `make -C programs zstd`, gcc -O2 -g) built plainly, with spanprof
# whole-program (-fplugin-arg-spanplugin-all, its default size rule) and with every function
# instrumented (min-size=0), with -pg for uftrace and with Clang XRay at its default instruction threshold;
# each build's CPU time, then `zstd -9` of 40 MB of zstd's own generated test data in every
# configuration of ROWS, interleaved, printed as a Markdown table with each row's CPU time against
# the plain build's (bench/rowtable.awk).
#
# Times are CPU seconds (user + system of the process tree, bench/measure.c).  A row whose tool is
# not installed is shown as skipped with the package that provides it.
#
# Environment (set by bench.mk): BENCH_BIN, CC, PLUGIN, INCLUDE_DIR, LIBDIR, MEASURE.
# Optional: ZSTD_REPS (default 3), ZSTD_INPUT_MB (default 40), CLANG (default clang-14),
# UFTRACE (default uftrace).
set -u
here=$(cd "$(dirname "$0")" && pwd)
reps=${ZSTD_REPS:-3}
input_mb=${ZSTD_INPUT_MB:-40}
clang=${CLANG:-clang-14}
uftrace=${UFTRACE:-uftrace}
work="$BENCH_BIN/zstd"
mkdir -p "$work" && work=$(cd "$work" && pwd)
NAME=zstd
# shellcheck source=bench/realprog.sh
. "$here/realprog.sh"

# ---- sources: Debian's libzstd ---------------------------------------------------------------
src="$work/source"
[ -f "$src/programs/zstdcli.c" ] || unpack_debian_source libzstd "$src"
version=$(debian_source_version)

# ---- builds: each in its own copy of the tree, timed; kept while newer than the plugin -------
# build NAME COMPILER CFLAGS LDFLAGS: $work/NAME/programs/zstd, its build's CPU seconds in
# $work/NAME.cpu.
build() {
    name=$1 cc=$2 cflags=$3 ldflags=$4
    if [ -x "$work/$name/programs/zstd" ] && [ -s "$work/$name.cpu" ] &&
        [ -n "$(find "$work/$name/programs/zstd" -newer "$PLUGIN" -newer "$here/zstd.sh" 2>/dev/null)" ]; then
        return 0
    fi
    echo "zstd: building $name" >&2
    rm -rf "${work:?}/$name" && cp -r "$src" "$work/$name"
    "$MEASURE" make -C "$work/$name/programs" -j2 zstd CC="$cc" CFLAGS="$cflags" LDFLAGS="$ldflags" \
        >"$work/$name.measure" 2>"$work/$name.log"
    read -r cpu wall rss status <"$work/$name.measure" || status=1
    if [ "${status:-1}" != 0 ] || [ ! -x "$work/$name/programs/zstd" ]; then
        echo "zstd: building $name failed (see $work/$name.log)" >&2
        return 1
    fi
    echo "$cpu" >"$work/$name.cpu"
}
span="-fplugin=$PLUGIN -I$INCLUDE_DIR -fplugin-arg-spanplugin-all"
span_ld="-L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR"
build plain "$CC" "-O2 -g" "" || skip_all "the plain build failed (see $work/plain.log)"
build all "$CC" "-O2 -g $span" "$span_ld"
build every "$CC" "-O2 -g $span -fplugin-arg-spanplugin-min-size=0" "$span_ld"
have_uftrace=0
command -v "$uftrace" >/dev/null && build pg "$CC" "-O2 -g -pg" "-pg" && have_uftrace=1
have_clang=0
command -v "$clang" >/dev/null && build clang "$clang" "-O2 -g" "" &&
    build xray "$clang" "-O2 -g -fxray-instrument" "-fxray-instrument" && have_clang=1

# The input: zstd's own data generator, 40 MB of compressible data, made once.
input="$work/input.dat"
if [ ! -s "$input" ]; then
    if ! make -C "$work/plain/tests" datagen >"$work/datagen.log" 2>&1 ||
        ! "$work/plain/tests/datagen" -g"${input_mb}M" >"$input"; then
        rm -f "$input"
        skip_all "zstd's datagen failed (see $work/datagen.log)"
    fi
fi

# ---- rows: LABEL|BUILD|SETTINGS|WHAT (a build "-PACKAGE" is a row skipped for lack of it) -----
uf=pg xr=xray cl=clang
[ $have_uftrace = 1 ] || uf=-uftrace
[ $have_clang = 1 ] || { xr=-clang-14; cl=-clang-14; }
ROWS="plain|plain||gcc -O2 -g
all, off|all|SPANPROF=0|default selection (loopless or always_inline functions under 50 statements left out), recording off
all, count|all|SPANPROF=count|default selection, calls per stack
all, sample|all|SPANPROF=sample|default selection, exact calls, sampled time
all, exact|all||default selection, exact wall time
all, flight|all|SPANPROF_FLIGHT=1 SPANPROF_SLOW=ZSTD_compress*:1000s|default selection, the flight recorder (1 s window, a trigger no call reaches: nothing written)
all, flight-min|all|SPANPROF_FLIGHT=1 SPANPROF_FLIGHT_MIN=10us SPANPROF_SLOW=ZSTD_compress*:1000s|the same keeping only calls of 10 µs or more
every function, off|every|SPANPROF=0|all with min-size=0: every function a span, recording off
every function, count|every|SPANPROF=count|every function, calls per stack
every function, sample|every|SPANPROF=sample|every function, exact calls, sampled time
every function, exact|every||every function, exact wall time
all, sample, budget 5 %|all|SPANPROF=sample SPANPROF_BUDGET=5|default selection, sampled, under a 5 % cost budget
all, exact, budget 5 %|all|SPANPROF_BUDGET=5|default selection, exact wall time, under a 5 % budget
every function, sample, budget 5 %|every|SPANPROF=sample SPANPROF_BUDGET=5|every function, sampled, under a 5 % budget
every function, exact, budget 5 %|every|SPANPROF_BUDGET=5|every function, exact wall time, under a 5 % budget
uftrace|$uf|uftrace record|gcc -pg under uftrace record
clang plain|$cl||clang-14 -O2 -g
XRay unpatched|$xr|XRAY_OPTIONS=patch_premain=false|default threshold (200 instructions), sleds never patched
XRay FDR|$xr|XRAY_OPTIONS=patch_premain=true:xray_mode=xray-fdr:xray_logfile_base=xray-log.|flight data recorder mode"

# run REP LABEL BUILD SETTINGS: `zstd -9` of the input in an empty folder; appends a results line.
run() {
    rep=$1 label=$2 bin=$3 settings=$4
    dir="$work/run"
    rm -rf "$dir" && mkdir -p "$dir"
    cmd="$work/$bin/programs/zstd"
    case $settings in
    "uftrace record") cmd="$uftrace record -d $dir/uftrace.data $cmd"; settings="" ;;
    esac
    # shellcheck disable=SC2086 # settings and command split on spaces
    (cd "$dir" && env $settings "$MEASURE" $cmd -q -9 -f "$input" -o out.zst) >"$dir/.measure" 2>"$dir/.stderr"
    read -r cpu wall rss status <"$dir/.measure" || status=1
    bytes=$(find "$dir" -type f ! -name '.measure' ! -name '.stderr' ! -name 'out.zst' -printf '%s\n' |
        awk '{ s += $1 } END { print s + 0 }')
    state=ok
    [ "${status:-1}" = 0 ] || state=failed
    [ $state = failed ] && sed 's/^/  | /' "$dir/.stderr" | tail -n 5 >&2
    echo "$label|$rep|${cpu:-0}|${wall:-0}|${rss:-0}|$bytes|$state" >>"$work/results"
}

run_rows zstd
print_table "zstd -9 of ${input_mb} MB: zstd ${version:-?}, built whole-program with its own Makefile"
echo
echo "Build CPU time (\`make -C programs -j2 zstd\`, user + system):"
echo
echo "| build | CPU s | × plain |"
echo "|---|---:|---:|"
plain_cpu=$(cat "$work/plain.cpu")
for b in plain all every pg clang xray; do
    [ -s "$work/$b.cpu" ] || continue
    awk -v b="$b" -v c="$(cat "$work/$b.cpu")" -v p="$plain_cpu" \
        'BEGIN { printf "| %s | %.1f | %.2f |\n", b, c, (p > 0 ? c / p : 0) }'
done
