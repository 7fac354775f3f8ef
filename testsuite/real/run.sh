#!/bin/sh
# run.sh — the trust test: fetches real C programs from Debian's source archive, builds each one
# twice (plainly, then with every function instrumented by spanplugin: `all` with min-size=0, the
# most instrumentation a user can ask for), runs the program's own
# test suite against both builds, and checks the profiles the instrumented test processes wrote.
# Ends with a table of build/test times and span counts and a line "real: N passed, M failed".
#
# Each program is described by one NAME.sh file in this folder (PACKAGE, MIN_SPANS, MIN_HIT and
# the functions real_build and real_test, run in the unpacked source tree with CC, CFLAGS,
# LDFLAGS and LIBS set; optionally MIN_THREADS, the number of threads with spans that at least
# one test process must report, for programs whose tests run threads).
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR (holds libspanprof.so), PROFDUMP, TOOL (spanprof).
# Optional: REAL_WORK (work directory, default ./real-work), ONLY="zlib bzip2" to run only those
# (see ../lib.sh).
#
# Sources come from a private apt configuration under REAL_WORK (its own sources list, lists and
# cache): the system's /etc/apt is read for nothing but the archive keyring and never written.
# No network, or no such source package, is a failure, never a skip.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
# Kept after the run, for its logs and the unpacked sources (lib.sh sets LC_ALL=C: ASCII quotes in
# the GCC notes counted below).
work=${REAL_WORK:-$PWD/real-work}
mkdir -p "$work" && work=$(cd "$work" && pwd)

# A folded line deeper than this means enter/exit pairs went out of balance: none of the chosen
# programs recurses more than a few levels (their deepest legitimate stacks are 10-20 frames),
# whereas a lost exit call makes the depth grow with the number of calls, into the thousands.
MAX_DEPTH=64

fail_setup() {
    fail "$*"
    finish
}

# ---- private apt configuration (../debsrc.sh) ------------------------------------------------
# shellcheck source=testsuite/debsrc.sh
. "$here/../debsrc.sh"
command -v dpkg-source >/dev/null || fail_setup "dpkg-source is missing: apt-get install dpkg-dev"
echo "real: reading Debian's source index (deb-src bookworm) into $work/apt"
debsrc_setup "$work" ||
    fail_setup "cannot read Debian's source archive (network down or mirror unreachable?); nothing was tested"

# ---- helpers -----------------------------------------------------------------------------------
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Exports CC, CFLAGS, LDFLAGS and LIBS for a plain ($1 = plain) or instrumented build.
use_flags() {
    export CC CFLAGS LDFLAGS LIBS
    if [ "$1" = plain ]; then
        CFLAGS=$base_cflags LDFLAGS="" LIBS=""
    else
        CFLAGS="$base_cflags $plugin_flags" LDFLAGS=$span_ldflags LIBS=$span_libs
    fi
}

# Runs real_build or real_test ($1) in directory $2, output to $3; prints the seconds it took
# into $4; returns its status.
timed() {
    start=$(now)
    (cd "$2" && "$1" </dev/null) >"$3" 2>&1
    status=$?
    elapsed "$start" "$(now)" >"$4"
    return $status
}

plugin_flags="-fplugin=$PLUGIN -fplugin-arg-spanplugin-all -fplugin-arg-spanplugin-min-size=0 -fplugin-arg-spanplugin-verbose -I$INCLUDE_DIR"
span_ldflags="-L$LIBDIR -Wl,-rpath,$LIBDIR"
# No commas in LIBS: autotools substitutes it with sed 's,@LIBS@,…,' (liblzma.pc).
span_libs="-Xlinker --no-as-needed -lspanprof -pthread"
base_cflags="-O2 -g"

table="$work/table"
printf '%-9s %-18s %6s %5s %9s %9s %8s %8s %6s\n' program version spans hit build build+sp \
    test test+sp procs >"$table"

# Reports a failed step of program $1 (reason $2) with the tail of log $3; the program fails.
problem() {
    echo "  problem with $1: $2"
    [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 30 "$3" | sed 's/^/  | /'
    ok=0
}

# Checks the profiles in $1 against the limits; prints what it found; sets hit, procs.
check_profiles() {
    name=$1 out=$2
    procs=0 hit=0 threads=0
    set -- "$out"/*.json
    if [ ! -f "$1" ]; then
        problem "$name" "the instrumented test run wrote no profile at all"
        return
    fi
    : >"$out/spans"
    for json in "$out"/*.json; do
        procs=$((procs + 1))
        folded=${json%.json}.folded
        if [ ! -f "$folded" ]; then
            problem "$name" "$json has no folded twin"
            continue
        fi
        if ! "$PROFDUMP" "$json" "$folded" >"$json.dump" 2>&1; then
            problem "$name" "profile $json or $folded is malformed" "$json.dump"
            continue
        fi
        if grep -q '^anomaly unmatched_exits=' "$json.dump"; then
            problem "$name" "exits without enter in $json" "$json.dump"
        fi
        sed -n 's/^span \([^ ]*\) calls=[1-9][0-9]*$/\1/p' "$json.dump" >>"$out/spans"
        n=$(sed -n 's/^ *"thread_count": *\([0-9][0-9]*\).*/\1/p' "$json" | head -n 1)
        [ "${n:-0}" -gt "$threads" ] && threads=$n
    done
    hit=$(sort -u "$out/spans" | wc -l)
    lines=$(cat "$out"/*.folded | wc -l)
    depth=$(cat "$out"/*.folded | awk '{ n = split($1, frames, ";"); if (n > max) max = n } END { print max + 0 }')
    echo "  $procs profiles, $lines folded stacks, deepest $depth frames, $hit distinct spans called," \
        "at most $threads threads in one process"
    [ "$lines" -gt 0 ] || problem "$name" "all folded stack files are empty"
    [ "$depth" -le $MAX_DEPTH ] || problem "$name" "a folded stack is $depth frames deep (limit $MAX_DEPTH)"
    [ "$hit" -ge "$MIN_HIT" ] || problem "$name" "only $hit distinct spans were called (expected at least $MIN_HIT)"
    [ "$threads" -ge "${MIN_THREADS:-0}" ] ||
        problem "$name" "no profile reports more than $threads threads (expected at least $MIN_THREADS in one process)"
}

# One report of all the test processes' profiles (spanprof report DIR merges them), shown with
# its ten heaviest spans; it must count every process, and merging the folded stacks must keep
# their total exactly.
merged_report() {
    name=$1 out=$2
    if ! "$TOOL" report --limit 10 "$out" >"$out-merged-report" 2>&1; then
        problem "$name" "spanprof report of the profiles in $out failed" "$out-merged-report"
        return
    fi
    sed 's/^/  | /' "$out-merged-report"
    n=$(sed -n '1s/.*(\([0-9][0-9]*\) process.*/\1/p' "$out-merged-report")
    [ "${n:-0}" -eq "$procs" ] || problem "$name" "the merged report counts ${n:-no} processes, not $procs"
    if ! "$TOOL" merge -o "$out-merged.folded" "$out"/*.folded >"$out-merge.log" 2>&1; then
        problem "$name" "spanprof merge of the folded stacks failed" "$out-merge.log"
        return
    fi
    sum_in=$(cat "$out"/*.folded | awk '{ s += $NF } END { printf "%.0f", s }')
    sum_out=$(awk '{ s += $NF } END { printf "%.0f", s }' "$out-merged.folded")
    [ "$sum_in" = "$sum_out" ] || problem "$name" "merged folded stacks total $sum_out ns, the inputs $sum_in ns"
}

# ---- the programs ------------------------------------------------------------------------------
for file in "$here"/*.sh; do
    name=${file##*/}
    name=${name%.sh}
    [ "$name" = run ] && continue
    selected "$name" || continue
    unset PACKAGE MIN_SPANS MIN_HIT MIN_THREADS
    # shellcheck disable=SC1090 # one file per program
    . "$here/$name.sh"
    echo "== $name (source package $PACKAGE)"
    ok=1
    dir="$work/$name"
    rm -rf "$dir"
    mkdir -p "$dir/src"
    if ! dsc=$(debsrc_fetch "$PACKAGE" "$dir/src"); then
        problem "$name" "apt-get source $PACKAGE failed" "$dir/src/fetch.log"
        fail "$name"
        continue
    fi
    version=$(sed -n 's/^Version: //p' "$dsc")
    for variant in plain spanprof; do
        if ! dpkg-source --no-check -x "$dsc" "$dir/$variant" >"$dir/unpack.log" 2>&1; then
            problem "$name" "dpkg-source -x $dsc failed" "$dir/unpack.log"
        fi
    done
    [ $ok = 1 ] || { fail "$name"; continue; }

    # Plain build and test: the reference times, and proof the suite passes without us.
    use_flags plain
    if ! timed real_build "$dir/plain" "$dir/plain-build.log" "$dir/plain-build.time"; then
        problem "$name" "plain build failed" "$dir/plain-build.log"
    elif ! timed real_test "$dir/plain" "$dir/plain-test.log" "$dir/plain-test.time"; then
        problem "$name" "its test suite fails even without spanprof" "$dir/plain-test.log"
    fi

    # Instrumented build (SPANPROF=0: configure's test programs are instrumented too, and would
    # leave profiles behind), then the same test suite with a profile per process.
    out="$dir/profiles"
    mkdir -p "$out"
    use_flags spanprof
    if ! (export SPANPROF=0; timed real_build "$dir/spanprof" "$dir/spanprof-build.log" "$dir/spanprof-build.time"); then
        problem "$name" "build with spanplugin failed" "$dir/spanprof-build.log"
    elif ! (export SPANPROF_JSON="$out/%p.json" SPANPROF_FOLDED="$out/%p.folded"
            timed real_test "$dir/spanprof" "$dir/spanprof-test.log" "$dir/spanprof-test.time"); then
        problem "$name" "its test suite fails when instrumented" "$dir/spanprof-test.log"
    fi
    # One note per instrumented function and compilation; a file compiled twice (static and
    # shared objects) or a header function in several units counts once per location.
    spans=$(grep -o "^[^ ]*: note: spanplugin: instrumented '.*'" "$dir/spanprof-build.log" 2>/dev/null |
        sed 's|^\./||' | sort -u | wc -l)
    procs=0 hit=0
    if [ $ok = 1 ]; then
        [ "$spans" -ge "$MIN_SPANS" ] ||
            problem "$name" "only $spans functions instrumented (expected at least $MIN_SPANS)"
        check_profiles "$name" "$out"
        merged_report "$name" "$out"
    fi
    time_of() { cat "$dir/$1.time" 2>/dev/null || echo -; }
    printf '%-9s %-18s %6s %5s %8ss %8ss %7ss %7ss %6s\n' "$name" "$version" "$spans" "$hit" \
        "$(time_of plain-build)" "$(time_of spanprof-build)" "$(time_of plain-test)" \
        "$(time_of spanprof-test)" "$procs" >>"$table"
    if [ $ok = 1 ]; then pass "$name"; else fail "$name"; fi
done

echo
echo "spans: functions instrumented; hit: distinct spans called in the test run; procs: profiled"
echo "test processes; build/test: seconds without spanprof, +sp: with it (make -j2)"
cat "$table"
summary && [ "$passed" -gt 0 ]
