#!/bin/sh
# folded.sh — end to end: the folded file of a program built with spanplugin and run with
# SPANPROF=count (exact values), as it is by default and under each SPANPROF_FOLDED_* limit,
# with the warnings on stderr.  One expected file, folded.expected, holds every case.
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
need_plugin
make_work_dir
selected folded || finish
build_sample "$here/folded_limits.c" folded "${CC:-gcc} -O2" "${CC:-gcc} -O2" || finish
out="$work/folded.out"
: >"$out"
for setting in "" SPANPROF_FOLDED_RECURSION=collapse SPANPROF_FOLDED_MAX_DEPTH=3 \
    SPANPROF_FOLDED_MAX_BYTES=60 "SPANPROF_FOLDED_MAX_BYTES=60 SPANPROF_THREADS=1"; do
    rm -f "$dir/spanprof.folded"
    # shellcheck disable=SC2086 # a list of assignments
    run_sample SPANPROF=count $setting
    {
        echo "## ${setting:-defaults}"
        print_run "$dir"
        echo "# spanprof.folded"
        # the thread frame is the program's name
        sed 's/^prog;/PROGRAM;/' "$dir/spanprof.folded"
    } >>"$out"
done
compare_expected folded "${CC:-gcc} -O2" "$out" "$cmd"
finish
