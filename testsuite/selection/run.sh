#!/bin/sh
# run.sh — tests of which functions spanplugin instruments (-fplugin-arg-spanplugin-all and its
# size rule, include/exclude/exclude-file/functions/min-lines/min-size, nospan, C++ names) and of one-site-per-span
# (C++ constructor/destructor clones, COMDAT sites of header inline functions, with and without
# -flto), plus exceptions unwinding through C++ and C span frames.
#
# Two kinds of case:
#   note cases     compile only, with -fplugin-arg-spanplugin-verbose; the sorted names in the
#                  "note: spanplugin: instrumented 'NAME'" lines (and those left out for their
#                  size, with the reason) must equal CASE.expected.
#                  Needs no runtime.
#   runtime cases  link with the runtime, run with SPANPROF_JSON, compare program output,
#                  `$PROFDUMP out.json [out.folded]` and the site symbols `nm` shows with
#                  CASE.expected (the same file for every optimisation level).
# Environment: CC, CXX, PLUGIN (required), INCLUDE_DIR, LIBDIR (holds libspanprof.so; without it
#   the runtime cases are skipped), PROFDUMP.  ONLY="a b" runs only those cases; REGEN=1 rewrites
#   the expected files (see ../lib.sh).
# Output: PASS/FAIL/SKIP per case (FAIL with the diff and how to regenerate), then
#   "selection: N passed, M failed"; exit status 1 if any case failed, 2 on a setup error.
CC=${CC:-gcc}
CXX=${CXX:-g++}
LIBDIR=${LIBDIR:-}
PROFDUMP=${PROFDUMP:-}
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir
A=-fplugin-arg-spanplugin-

# note_case CASE COMPILER SOURCE OPTIONS...: which functions get a span, and which a progress
# point.
note_case () {
    name=$1 compiler=$2 src=$3
    shift 3
    selected "$name" || return 0
    cmd="$compiler -fchecking -fdiagnostics-plain-output -fplugin=$PLUGIN ${A}verbose $* -I$INCLUDE_DIR -c $src -o /dev/null"
    # Run here, so relative paths in options (functions=FILE) and locations stay short.
    # shellcheck disable=SC2086 # cmd is a word list
    (cd "$here" && $cmd) >"$work/log" 2>&1
    status=$?
    sed -n -e "s/.*: note: spanplugin: instrumented '\\(.*\\)'\$/\\1/p" \
        -e "s/.*: note: spanplugin: progress point '\\(.*\\)'\$/progress point: \\1/p" \
        -e "s/.*: note: spanplugin: left out '\\(.*\\)': \\(.*\\)\$/left out: \\1 (\\2)/p" "$work/log" |
        sort >"$work/actual"
    if [ $status -ne 0 ]; then
        echo "# compiler failed ($status):" >>"$work/actual"
        grep -E ': (error|warning):' "$work/log" >>"$work/actual"
    fi
    compare_expected "$name" "$compiler $*" "$work/actual" "compiled in $here with: $cmd"
}

# run_case CASE LEVEL SOURCES...: link with the runtime, run, describe; SOURCES may carry
# per-file flags as FILE:FLAG (e.g. exc_mid.c:-fexceptions).
run_case () {
    name=$1 level=$2
    shift 2
    selected "$name" || return 0
    dir="$work/$name.$(echo "$level" | tr -c 'A-Za-z0-9\n' '_')"
    mkdir -p "$dir"
    if [ -z "$LIBDIR" ] || [ ! -f "$LIBDIR/libspanprof.so" ] || [ ! -x "$PROFDUMP" ]; then
        skip "$name [$level]: needs LIBDIR with libspanprof.so and PROFDUMP"
        return
    fi
    objs=''
    for spec in "$@"; do
        src=${spec%%:*} extra=
        [ "$src" != "$spec" ] && extra=${spec#*:}
        case $src in *.c) compiler=$CC ;; *) compiler=$CXX ;; esac
        obj="$dir/${src%.*}.o"
        # shellcheck disable=SC2086 # a word list
        build "$name [$level]" "$dir/build.log" \
            $compiler -g -fchecking $level $extra -fplugin=$PLUGIN -I$INCLUDE_DIR -c "$here/$src" -o "$obj" || return
        objs="$objs $obj"
    done
    # shellcheck disable=SC2086 # word lists
    build "$name [$level]" "$dir/build.log" \
        $CXX $level -fplugin=$PLUGIN $objs -o "$dir/prog" -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR || return
    (cd "$dir" && SPANPROF_JSON="$dir/out.json" SPANPROF_FOLDED="$dir/out.folded" ./prog >stdout 2>stderr
     echo $? >status)
    {
        print_run "$dir"
        echo "# profile"
        "$PROFDUMP" "$dir/out.json" "$dir/out.folded" 2>&1
        echo "# site symbols (count name; LTO's local-symbol suffixes dropped)"
        nm "$dir/prog" | sed -n 's/.* \(__spanprof_site\.[^ ]*\)$/\1/p' \
            | sed 's/\.lto_priv\.[0-9]*$//' | sort | uniq -c | sed 's/^ *//'
    } >"$dir/actual"
    compare_expected "$name" "$level" "$dir/actual"
}

# The filter cases instrument every function (min-size=0), so that small ones show the filters.
EVERY="${A}all ${A}min-size=0"
# ---- which functions: C ------------------------------------------------------------------------
note_case c-none     "$CC" sample.c
note_case c-all      "$CC" sample.c $EVERY
note_case c-include  "$CC" sample.c $EVERY "${A}include=parse_*,main"
note_case c-exclude  "$CC" sample.c $EVERY "${A}exclude=parse_*,marked"
note_case c-exclude-list "$CC" sample.c $EVERY "${A}exclude-list=exclude-list.txt"
note_case c-exclude-file "$CC" sample.c $EVERY "${A}exclude-file=*other.h"
note_case c-min-lines "$CC" sample.c $EVERY "${A}min-lines=4"
note_case c-functions "$CC" sample.c "${A}functions=funcs.txt"
note_case c-functions-min-lines "$CC" sample.c "${A}functions=funcs.txt" "${A}min-lines=3"
note_case c-all-optimised "$CC" sample.c $EVERY -O2
note_case c-progress "$CC" sample.c "${A}progress=parse_*,untouchable,quiet"
note_case c-all-progress "$CC" sample.c $EVERY "${A}progress=parse_body,marked"
# ---- the size rule of `all` (min-size) ----------------------------------------------------------
note_case c-size-default "$CC" size.c "${A}all"
note_case c-size-every "$CC" size.c "${A}all" "${A}min-size=0"
note_case c-min-size-optimised "$CC" size.c "${A}all" "${A}min-size=50" -O2
note_case c-min-size-small "$CC" size.c "${A}all" "${A}min-size=3"
note_case c-size-functions "$CC" size.c "${A}functions=size-funcs.txt" "${A}min-size=50"
# ---- which functions: C++ ----------------------------------------------------------------------
note_case cc-all     "$CXX" sample.cc $EVERY
note_case cc-include "$CXX" sample.cc $EVERY "${A}include=ns::*"
note_case cc-exclude "$CXX" sample.cc $EVERY "${A}exclude=ns::Parser::*,main"
note_case cc-functions "$CXX" sample.cc "${A}functions=funcs.cc.txt"

# ---- one span per constructor/destructor, exact counts -----------------------------------------
for level in -O0 -O2 -Os "-O2 -flto"; do
    run_case cdtor "$level" cdtor.cc
done
# ---- one COMDAT site for a header inline function used in two units ---------------------------
for level in -O0 -O2 "-O2 -flto"; do
    run_case comdat "$level" comdat1.cc comdat2.cc
done
# ---- exceptions through C++ frames and a C frame built with -fexceptions ---------------------
for level in -O0 -O2; do
    run_case exceptions "$level" exc_main.cc exc_mid.c:-fexceptions
done

summary
