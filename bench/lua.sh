#!/bin/sh
# lua.sh — the cost budget's table on a program made of many small functions: Lua 5.4's
# interpreter (Debian 12's lua5.4 sources, every .c file but luac.c, gcc -O2) built plainly,
# whole-program with the default size rule and with every function (min-size=0), running
# bench/lua/work.lua; each instrumented build with and without SPANPROF_BUDGET=5, interleaved,
# printed as a Markdown table with each row's CPU time against the plain build's
# (bench/rowtable.awk).
#
# Environment (set by bench.mk): BENCH_BIN, CC, PLUGIN, INCLUDE_DIR, LIBDIR, MEASURE.
# Optional: LUA_REPS (default 5).
set -u
here=$(cd "$(dirname "$0")" && pwd)
reps=${LUA_REPS:-5}
work="$BENCH_BIN/lua"
mkdir -p "$work" && work=$(cd "$work" && pwd)
NAME=lua
# shellcheck source=bench/realprog.sh
. "$here/realprog.sh"

# ---- sources: Debian's lua5.4 -------------------------------------------------------------------
src="$work/source"
[ -f "$src/src/lvm.c" ] || unpack_debian_source lua5.4 "$src"
version=$(debian_source_version)
# Debian's luaconf.h includes a header its packaging writes; the interpreter needs only the name.
[ -f "$src/src/lua5.4-deb-multiarch.h" ] ||
    printf '#define DEB_HOST_MULTIARCH "%s"\n' "$(gcc -dumpmachine)" >"$src/src/lua5.4-deb-multiarch.h"

# ---- builds (kept while newer than the plugin and this script) ----------------------------------
# build NAME FLAGS...: $work/NAME from every source but luac.c.
build() {
    name=$1
    shift
    if [ -x "$work/$name" ] && [ -n "$(find "$work/$name" -newer "$PLUGIN" -newer "$here/lua.sh" 2>/dev/null)" ]; then
        return 0
    fi
    echo "lua: building $name" >&2
    # shellcheck disable=SC2046,SC2086 # file and flag lists
    "$CC" -O2 -DLUA_USE_LINUX -I"$src/src" "$@" $(ls "$src"/src/*.c | grep -v '/luac\.c$') \
        -lm -ldl -o "$work/$name" >"$work/$name.log" 2>&1 || {
        echo "lua: building $name failed (see $work/$name.log)" >&2
        rm -f "$work/$name"
        return 1
    }
}
span="-fplugin=$PLUGIN -I$INCLUDE_DIR -fplugin-arg-spanplugin-all -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR"
build plain || skip_all "the plain build failed (see $work/plain.log)"
# shellcheck disable=SC2086 # a flag list
build all $span
# shellcheck disable=SC2086 # a flag list
build every $span -fplugin-arg-spanplugin-min-size=0

# ---- rows: LABEL|BUILD|SETTINGS|WHAT ---------------------------------------------------------------
ROWS="plain|plain||gcc -O2
all, off|all|SPANPROF=0|default selection, recording off
all, sample|all|SPANPROF=sample|default selection, exact calls, sampled time
all, sample, budget 5 %|all|SPANPROF=sample SPANPROF_BUDGET=5|the same under a 5 % cost budget
all, exact|all||default selection, exact wall time
all, exact, budget 5 %|all|SPANPROF_BUDGET=5|the same under a 5 % cost budget
every function, off|every|SPANPROF=0|min-size=0: every function a span, recording off
every function, sample|every|SPANPROF=sample|every function, sampled time
every function, sample, budget 5 %|every|SPANPROF=sample SPANPROF_BUDGET=5|the same under a 5 % cost budget
every function, exact|every||every function, exact wall time
every function, exact, budget 5 %|every|SPANPROF_BUDGET=5|the same under a 5 % cost budget"

# run REP LABEL BUILD SETTINGS: the workload in an empty folder; appends a results line.
run() {
    rep=$1 label=$2 bin=$3 settings=$4
    dir="$work/run"
    rm -rf "$dir" && mkdir -p "$dir"
    # shellcheck disable=SC2086 # settings split on spaces
    (cd "$dir" && env $settings "$MEASURE" "$work/$bin" "$here/lua/work.lua") >"$dir/.measure" 2>"$dir/.stderr"
    read -r cpu wall rss status <"$dir/.measure" || status=1
    bytes=$(find "$dir" -type f ! -name '.measure' ! -name '.stderr' -printf '%s\n' |
        awk '{ s += $1 } END { print s + 0 }')
    state=ok
    [ "${status:-1}" = 0 ] || state=failed
    [ $state = failed ] && sed 's/^/  | /' "$dir/.stderr" | tail -n 5 >&2
    echo "$label|$rep|${cpu:-0}|${wall:-0}|${rss:-0}|$bytes|$state" >>"$work/results"
}

run_rows lua
print_table "Lua ${version:-?} running bench/lua/work.lua: the interpreter built whole-program"
