#!/bin/sh
# realprog.sh — what the real-program benchmarks (speedtest1.sh, zstd.sh) share, sourced by them:
# giving up with a table line that says why, Debian's sources fetched and unpacked once, and the
# table printed from the ROWS list and the recorded runs (rowtable.awk).
# The sourcing script sets NAME (the table's name, for messages), here, work and ROWS.

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
