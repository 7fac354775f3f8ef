#!/bin/sh
# mkman.sh — writes the manual pages from the texts they must agree with, so they cannot drift:
#   spanprof.1  the tool: its usage lines and, per command, `spanprof help COMMAND` as printed
#   spanprof.7  the attribute, the plugin's options and the runtime's environment: the rows of
#               docs/manual.md's option tables (whose SPANPROF_* rows `make check-options`
#               compares with the runtime's own table)
# Usage: sh man/mkman.sh TOOL MANUAL VERSION OUTDIR
# EMULATOR (words, may be empty) runs TOOL when it is built for another machine (a cross build).
set -eu
tool=$1 manual=$2 version=$3 out=$4
run_tool() {
    # shellcheck disable=SC2086 # EMULATOR is a command and its options
    ${EMULATOR:-} "$tool" "$@"
}
mkdir -p "$out"

# The characters outside ASCII that the texts use, as roff's own names (groff reads bytes).
NON_ASCII='s/…/.../g; s/→/\\(->/g; s/≤/\\(<=/g; s/≥/\\(>=/g; s/×/\\(mu/g; s/µ/\\(mc/g; s/—/\\(em/g; s/–/\\(en/g'

# Text for roff's no-fill mode: backslashes escaped, a leading '.' or '\'' made literal.
roff_text() {
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e "$NON_ASCII"
}

# A Markdown table cell as roff: `code` in bold, *emphasis* in italics, escapes as roff_text.
md_cell() {
    sed -e 's/\\/\\e/g' -e 's/`\([^`]*\)`/\\fB\1\\fR/g' -e 's/\*\([^*][^*]*\)\*/\\fI\1\\fR/g' \
        -e "s/^\\([.']\\)/\\\\\\&\\1/" -e "$NON_ASCII"
}

# ---- spanprof.1 -------------------------------------------------------------------------------
commands=$(run_tool --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit }
                                  on && /^  [a-z]/ { print $1 }')
{
    echo ".TH SPANPROF 1 \"\" \"spanprof $version\" \"User Commands\""
    echo ".SH NAME"
    echo "spanprof \\- record, report, compare and view profiles of programs built with spanprof"
    echo ".SH SYNOPSIS"
    echo ".nf"
    run_tool --help | awk '/^$/ { exit } { sub(/^usage: /, ""); sub(/^       /, ""); print }' | roff_text
    echo ".fi"
    echo ".SH DESCRIPTION"
    echo "Programs built with the spanprof GCC plugin (see"
    echo ".BR spanprof (7))"
    echo "write folded stacks, JSON profiles, traces and pprof profiles of their spans."
    echo ".B spanprof record"
    echo "runs such a program and assembles what its processes wrote; the other commands read,"
    echo "compare, merge, convert and show those files, and coz's causal profiles of them."
    echo ".SH COMMANDS"
    for c in $commands; do
        echo ".SS \"spanprof $c\""
        echo ".nf"
        run_tool help "$c" | roff_text
        echo ".fi"
    done
    echo ".SH EXIT STATUS"
    echo "0 when the command did its work, 1 when an input could not be read or made no sense,"
    echo "2 for a command line it does not understand."
    echo ".B spanprof record"
    echo "exits with the status of the command it ran (or ends by the signal that ended it);"
    echo "125 when it fails before the command runs, 126 when the command cannot be run, 127"
    echo "when it is not found."
    echo ".SH SEE ALSO"
    echo ".BR spanprof (7),"
    echo ".BR coz (1),"
    echo ".BR gcc (1),"
    echo ".BR pprof (1)"
} >"$out/spanprof.1"

# ---- spanprof.7 -------------------------------------------------------------------------------
# table_rows HEADING: the rows of the first table after the manual's "## HEADING..." line.
table_rows() {
    awk -v want="## $1" 'index($0, want) == 1 { on = 1; next }
                         on && /^## / { exit }
                         on && /^\| `/ { print; seen = 1; next }
                         on && seen && !/^\|/ { exit }' "$manual"
}
{
    echo ".TH SPANPROF 7 \"\" \"spanprof $version\" \"Miscellaneous\""
    echo ".SH NAME"
    echo "spanprof \\- spans from one attribute: the GCC plugin's options and the runtime's environment"
    echo ".SH SYNOPSIS"
    echo ".nf"
    echo "#include <spanprof.h>"
    echo "__attribute__((span)) int f(void);          /* a span named f */"
    echo "__attribute__((span(\"name\"))) int g(void);  /* a span named name */"
    echo "__attribute__((progress)) void done(void);  /* each return: a coz progress visit */"
    echo ""
    printf '%s\n' 'gcc $(pkg-config --cflags spanprof) [-fplugin-arg-spanplugin-KEY[=VALUE]...] app.c \e' \
        '    $(pkg-config --libs spanprof) -o app'

    echo "SPANPROF_VARIABLE=value ./app"
    echo ".fi"
    echo ".SH DESCRIPTION"
    echo "The plugin, spanplugin.so, puts an enter call at the start of every span and an exit call"
    echo "on every way out of it; the runtime, libspanprof, keeps a shadow stack per thread and"
    echo "writes the profile when the program exits."
    echo ".B __attribute__((nospan))"
    echo "(or"
    echo ".BR no_instrument_function )"
    echo "keeps a function out of the options' selections;"
    echo ".BR SPAN ,"
    echo ".B SPAN_NAMED(\"name\")"
    echo "and"
    echo ".B SPANPROF_PROGRESS(\"name\")"
    echo "from spanprof.h also build without the plugin."
    echo ".SH PLUGIN OPTIONS"
    echo "Given as"
    printf '%s\n' '\fB\-fplugin\-arg\-spanplugin\-\fIKEY\fR[\fB=\fIVALUE\fR];'
    echo "an unknown key or a malformed value is a GCC error naming it."
    table_rows "Plugin options" | while IFS= read -r row; do
        key=$(printf '%s\n' "$row" | sed 's/^| `\([^`]*\)` |.*/\1/')
        meaning=$(printf '%s\n' "$row" | sed 's/^| `[^`]*` | \(.*\) |$/\1/')
        echo ".TP"
        printf '%s\n' "$key" | sed -e 's/^/.B /; s/-/\\-/g' -e "$NON_ASCII"
        printf '%s\n' "$meaning" | md_cell
    done
    echo ".SH ENVIRONMENT"
    echo "Read when the program starts; a privileged program (set-user-ID, set-group-ID or"
    echo "capability-raising) ignores them all. A bad value gives one warning line and the default."
    grep -E '^\| `SPANPROF(_[A-Z_]+)?` \|' "$manual" | while IFS= read -r row; do
        name=$(printf '%s\n' "$row" | sed 's/^| `\([^`]*\)` |.*/\1/')
        default=$(printf '%s\n' "$row" | sed 's/^| `[^`]*` | \([^|]*\) |.*/\1/')
        meaning=$(printf '%s\n' "$row" | sed 's/^| `[^`]*` | [^|]* | \(.*\) |$/\1/')
        echo ".TP"
        printf '.B %s\n' "$name"
        printf '(default: %s) %s\n' "$default" "$meaning" | md_cell
    done
    echo ".SH FILES"
    echo ".TP"
    echo ".B spanprof.folded"
    echo "the folded stacks a program writes by default, in its working directory"
    echo ".TP"
    echo ".B spanprof.out/"
    echo "where"
    echo ".B spanprof record"
    echo "puts a run"
    echo ".SH SEE ALSO"
    echo ".BR spanprof (1),"
    echo ".BR coz (1),"
    echo ".BR gcc (1)"
} >"$out/spanprof.7"
