#!/bin/sh
# realprog.sh — what the real-program benchmarks (speedtest1.sh, zstd.sh) share, sourced by them:
# giving up with a table line that says why, Debian's sources fetched and unpacked once, every
# row run in interleaved repetitions, and the table printed from the ROWS list and the recorded
# runs (rowtable.awk).
# The sourcing script sets NAME (the table's name, for messages), here, work, reps and ROWS, and
# defines run REP LABEL BUILD SETTINGS (one run, appending its line to $work/results).

# skip_all REASON...: one line in place of the table, and the end of the script.
skip_all() {
    echo "### $NAME: skipped — $*"
    exit 0
}

# unpack_debian_source PACKAGE DIR: Debian 12's source package PACKAGE unpacked into DIR, with its
# .dsc in $work/src (fetched through testsuite/debsrc.sh's private apt configuration).
unpack_debian_source() {
    command -v dpkg-source >/dev/null || skip_all "dpkg-source is missing: apt-get install dpkg-dev"
    # shellcheck source=testsuite/debsrc.sh
    . "$here/../testsuite/debsrc.sh"
    echo "$NAME: fetching Debian's $1 sources into $work" >&2
    debsrc_setup "$work" >&2 || skip_all "cannot read Debian's source archive (network down?)"
    dsc=$(debsrc_fetch "$1" "$work/src") || skip_all "apt-get source $1 failed (see $work/src/fetch.log)"
    rm -rf "$2"
    dpkg-source --no-check -x "$dsc" "$2" >"$work/unpack.log" 2>&1 || skip_all "dpkg-source -x failed (see $work/unpack.log)"
}

# The source package's version, once unpacked.
debian_source_version() {
    sed -n 's/^Version: //p' "$work"/src/*.dsc 2>/dev/null | head -n 1
}

# print_rows: the table's header and one row per ROWS line ("LABEL|BINARY|SETTINGS|WHAT"; a
# BINARY "-PACKAGE" is a row skipped for lack of it) from $work/results.
print_rows() {
    echo "| row | build and setting | CPU s | × plain | wall s | peak RSS | output |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    echo "$ROWS" | while IFS='|' read -r label bin settings what; do
        case $bin in
        -*)
            echo "| $label | $what | skipped: apt-get install ${bin#-} | | | | |"
            continue
            ;;
        esac
        awk -F'|' -v label="$label" -v what="$what${settings:+ (\`$settings\`)}" -f "$here/rowtable.awk" "$work/results"
    done
}

# run_rows LABEL: a fresh $work/results from REPS repetitions, each running every row that is not
# skipped, in ROWS order, with a line "LABEL: repetition I of REPS" on stderr; sets load (the load
# average when they began).
run_rows() {
    : >"$work/results"
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    i=1
    while [ $i -le "$reps" ]; do
        echo "$1: repetition $i of $reps" >&2
        echo "$ROWS" | while IFS='|' read -r label bin settings what; do
            case $bin in -*) continue ;; esac
            run $i "$label" "$bin" "$settings"
        done
        i=$((i + 1))
    done
}

# print_table TITLE: the table run_rows recorded, under the heading TITLE.
print_table() {
    echo "### $1"
    echo
    echo "Repetitions: $reps, interleaved; load average at start: $load. CPU seconds of the whole"
    echo "process tree (user + system), wall seconds, median over repetitions; × plain is the median"
    echo "of the CPU ratio to the plain run of the same repetition."
    echo
    print_rows
}
