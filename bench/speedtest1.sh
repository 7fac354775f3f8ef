#!/bin/sh
# speedtest1.sh — the real-program table of `make bench`: SQLite's speedtest1 (Debian 12's sqlite3
# sources, whole-program) built plainly, with empty -finstrument-functions hooks on every
# function (the floor), with spanprof's `all` (default size rule, and min-size=0: every
# function), with -pg for uftrace and with Clang XRay, then run in every
# configuration of the ROWS list below, interleaved, and printed as a Markdown table with each
# row's slowdown against the plain build (median over repetitions of the ratio within each one).
#
# One table per database: `file`, speedtest1 writing a database file in the run folder as it is
# normally run (`speedtest1 --size 20 speedtest1.db`: the plain run then spends about a third of
# its CPU time in the kernel, writing the file), and `temp`, no file name (SQLite's temporary
# database, in memory until it spills: almost all of the time in the program's own code, so every
# per-call cost weighs about twice as much).
#
# Times are CPU seconds (user + system of the whole process tree, from bench/measure.c): on a
# shared machine wall time mostly measures the neighbours.  A row whose tool is not installed is
# shown as skipped with the package that provides it.
#
# Environment (set by bench.mk): BENCH_BIN (the benchmark build folder), CC, PLUGIN, INCLUDE_DIR,
# LIBDIR (holds libspanprof.so), MEASURE (bench/measure.c built), HOOKS (bench/hooks.c), TOOL
# (the spanprof command, whose select makes the exclude list of the `selected` build).
# Optional: SPEEDTEST_SIZE (speedtest1 --size, default 20), SPEEDTEST_REPS (default 3),
# CLANG (default clang-14), UFTRACE (default uftrace), SPEEDTEST_DBS (the tables, default
# "file temp").
set -u
here=$(cd "$(dirname "$0")" && pwd)
size=${SPEEDTEST_SIZE:-20}
reps=${SPEEDTEST_REPS:-3}
dbs=${SPEEDTEST_DBS:-file temp}
clang=${CLANG:-clang-14}
uftrace=${UFTRACE:-uftrace}
work="$BENCH_BIN/speedtest1"
mkdir -p "$work" && work=$(cd "$work" && pwd)
NAME=speedtest1
# shellcheck source=bench/realprog.sh
. "$here/realprog.sh"

# ---- sources: Debian's sqlite3, the amalgamation made by its own build ------------------------
src="$work/sqlite"
if [ ! -f "$src/sqlite3.c" ]; then
    command -v tclsh >/dev/null || skip_all "tclsh (sqlite's build needs it) is missing: apt-get install tcl"
    unpack_debian_source sqlite3 "$src"
    (cd "$src" && ./configure --disable-tcl && make sqlite3.c) >"$work/amalgamation.log" 2>&1 ||
        skip_all "building sqlite3.c failed (see $work/amalgamation.log)"
fi
version=$(debian_source_version)

# ---- builds (kept while newer than what they are built from) --------------------------------
SOURCES="$src/test/speedtest1.c $src/sqlite3.c"
CFLAGS="-O2 -I$src"
LINK="-lpthread -lm"
# build NAME DEPENDENCY COMPILER FLAGS...: builds $work/NAME unless it is newer than DEPENDENCY;
# $libs (libraries, after the sources) is linked in too.
libs=""
build() {
    name=$1 dep=$2
    shift 2
    if [ -x "$work/$name" ] &&
        [ -n "$(find "$work/$name" -newer "$dep" -newer "$src/sqlite3.c" 2>/dev/null)" ]; then
        return 0
    fi
    echo "speedtest1: building $name" >&2
    # shellcheck disable=SC2086 # flag lists
    "$@" $CFLAGS $SOURCES $libs $LINK -o "$work/$name" >"$work/$name.log" 2>&1 || {
        echo "speedtest1: building $name failed (see $work/$name.log)" >&2
        rm -f "$work/$name"
        return 1
    }
}
build plain "$here/speedtest1.sh" "$CC"
build floor "$HOOKS" "$CC" -finstrument-functions "$HOOKS"
libs="-L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR"
build spanprof "$PLUGIN" "$CC" -fplugin="$PLUGIN" -fplugin-arg-spanplugin-all -I"$INCLUDE_DIR"
build every "$PLUGIN" "$CC" -fplugin="$PLUGIN" -fplugin-arg-spanplugin-all \
    -fplugin-arg-spanplugin-min-size=0 -I"$INCLUDE_DIR"
# Rebuilt with `spanprof select --budget 5`'s exclude list, from a run of every function that
# measures (SPANPROF_BUDGET=100) on the temporary database.
if [ -x "$work/every" ] && { [ ! -s "$work/exclude.txt" ] || [ "$work/every" -nt "$work/exclude.txt" ]; }; then
    rm -rf "$work/select" && mkdir -p "$work/select"
    (cd "$work/select" && SPANPROF_BUDGET=100 SPANPROF_JSON=measured.json SPANPROF_FOLDED= \
        "$work/every" --size "$size" >/dev/null 2>&1 &&
        "$TOOL" select --budget 5 -o "$work/exclude.txt" measured.json) >"$work/select.log" 2>&1 ||
        echo "speedtest1: spanprof select failed (see $work/select.log)" >&2
fi
[ -s "$work/exclude.txt" ] && build selected "$work/exclude.txt" "$CC" -fplugin="$PLUGIN" \
    -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 \
    -fplugin-arg-spanplugin-exclude-list="$work/exclude.txt" -I"$INCLUDE_DIR"
libs=""
have_uftrace=0
if command -v "$uftrace" >/dev/null; then
    build pg "$here/speedtest1.sh" "$CC" -pg && have_uftrace=1
fi
have_clang=0
if command -v "$clang" >/dev/null; then
    build clang "$here/speedtest1.sh" "$clang" && build xray "$here/speedtest1.sh" "$clang" \
        -fxray-instrument -fxray-instruction-threshold=1 && have_clang=1
fi

# ---- rows: LABEL|BINARY|SETTINGS|WHAT (a binary "-PACKAGE" is a row skipped for lack of it) ---
uf=pg xr=xray cl=clang
[ $have_uftrace = 1 ] || uf=-uftrace
[ $have_clang = 1 ] || { xr=-clang-14; cl=-clang-14; }
ROWS="plain|plain||gcc -O2
floor|floor||empty -finstrument-functions hooks
off|spanprof|SPANPROF=0|spanprof whole-program (default selection), recording off
count|spanprof|SPANPROF=count|calls per stack, no clock
sample|spanprof|SPANPROF=sample|exact calls, sampled time
exact|spanprof||the default: folded stacks, exact wall time
every function, off|every|SPANPROF=0|min-size=0: every function a span (as the floor), recording off
every function, count|every|SPANPROF=count|the same, calls per stack
every function, sample|every|SPANPROF=sample|the same, sampled time
every function, exact|every||the same, exact wall time
every function, sample, budget 5 %|every|SPANPROF=sample SPANPROF_BUDGET=5|the same under a 5 % cost budget
every function, exact, budget 5 %|every|SPANPROF_BUDGET=5|the same, exact wall time, under a 5 % budget
every function, selected, sample|selected|SPANPROF=sample|rebuilt with \`spanprof select --budget 5\`'s exclude list, no budget
every function, selected, exact|selected||the same, exact wall time
trace|spanprof|SPANPROF_TRACE=trace.json|exact + Chrome trace of the last 8 MiB per thread
trace 1 MiB|spanprof|SPANPROF_TRACE=trace.json SPANPROF_TRACE_BUFFER=1|the same with funtrace's ring size
uftrace|$uf|uftrace record|gcc -pg under uftrace record
clang plain|$cl||clang-14 -O2
XRay unpatched|$xr|XRAY_OPTIONS=patch_premain=false|sleds present, never patched
XRay FDR|$xr|XRAY_OPTIONS=patch_premain=true:xray_mode=xray-fdr:xray_logfile_base=xray-log.|flight data recorder mode"

# run N LABEL BINARY SETTINGS: one run in an empty folder, on the database $db; appends "LABEL REP
# CPU WALL RSS BYTES STATE" to $work/results (STATE: ok, failed, pending when the runtime does not
# know a setting).  BYTES: the files the run leaves, its database left out.
dbfile=speedtest1.db
run() {
    rep=$1 label=$2 bin=$3 settings=$4
    dir="$work/run"
    rm -rf "$dir" && mkdir -p "$dir"
    cmd="$work/$bin"
    case $settings in
    "uftrace record") cmd="$uftrace record -d $dir/uftrace.data $cmd"; settings="" ;;
    esac
    dbarg=""
    [ "$db" = file ] && dbarg=$dbfile
    # shellcheck disable=SC2086 # settings and command split on spaces, no database argument
    (cd "$dir" && env $settings "$MEASURE" $cmd --size "$size" $dbarg) >"$dir/.measure" 2>"$dir/.stderr"
    read -r cpu wall rss status <"$dir/.measure" || status=1
    bytes=$(find "$dir" -type f ! -name '.measure' ! -name '.stderr' ! -name "$dbfile*" -printf '%s\n' |
        awk '{ s += $1 } END { print s + 0 }')
    state=ok
    [ "${status:-1}" = 0 ] || state=failed
    grep -q "is not 0, 1, count or sample\|is not a spanprof variable" "$dir/.stderr" && state=pending
    [ $state = failed ] && sed 's/^/  | /' "$dir/.stderr" | tail -n 5 >&2
    echo "$label|$rep|${cpu:-0}|${wall:-0}|${rss:-0}|$bytes|$state" >>"$work/results"
}

# table DB: every row on the database DB (file or temp), the repetitions interleaved, then its table.
table() {
    db=$1
    run_rows "speedtest1 ($db database)"
    case $db in
    file) on="a database file (\`speedtest1 --size $size $dbfile\`)" ;;
    *) on="its temporary database (\`speedtest1 --size $size\`, no file name)" ;;
    esac
    print_table "speedtest1 on $on: SQLite ${version:-?}, built whole-program"
}

first=1
for db in $dbs; do
    case $db in
    file | temp) ;;
    *) echo "speedtest1: SPEEDTEST_DBS: '$db' is not file or temp" >&2; exit 2 ;;
    esac
    [ $first = 1 ] || echo
    first=0
    table "$db"
done
