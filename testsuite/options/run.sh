#!/bin/sh
# run.sh — the documentation against the code it documents, so neither drifts:
#   - docs/manual.md's SPANPROF_* rows (in whichever of its tables) are exactly the rows the
#     runtime's option table prints (optionsdoc), one per variable;
#   - the manual's plugin-options table has a row for every key plugin/options.cc accepts;
#   - the manual pages (made by man/mkman.sh) name every variable and every plugin option
#     (spanprof.7) and every command of the tool (spanprof.1), and groff reads them without a
#     warning;
#   - README.md stays a front page (350 lines at most), and its list of Debian packages is
#     install-deps.sh's (packages.sh).
#
# Environment: OPTIONSDOC (prints the table's rows), MANUAL (docs/manual.md), PLUGIN_OPTIONS
# (plugin/options.cc), MANDIR (the built pages), TOOL (the spanprof command), README.  There is no expected
# file to regenerate: the manual is the one, its rows written by hand from optionsdoc's.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

"$OPTIONSDOC" | sort >"$work/table"
# shellcheck disable=SC2016 # Markdown's backquotes, not a command
grep -E '^\| `SPANPROF(_[A-Z_]+)?` \|' "$MANUAL" | sort >"$work/manual"
compare_files "manual rows [$(wc -l <"$work/table") variables]" "$work/table" "$work/manual" \
    "the rows to put in docs/manual.md: build/optionsdoc (from runtime/lifecycle/options.c)" \
    "- the option table, + docs/manual.md"

# The plugin's keys, as its parser compares them: strcmp (key, "NAME").
sed -n 's/.*strcmp (key, "\([a-z-]*\)").*/\1/p' "$PLUGIN_OPTIONS" | sort -u >"$work/keys"
# shellcheck disable=SC2016
sed -n 's/^| `\([a-z-]*\)[=`].*/\1/p' "$MANUAL" | sort -u >"$work/documented"
comm -23 "$work/keys" "$work/documented" >"$work/undocumented"
test "$(wc -l <"$work/keys")" -ge 9 && test ! -s "$work/undocumented"
result $? "plugin options: the manual has a row for each of the $(wc -l <"$work/keys") keys"
[ -s "$work/undocumented" ] && sed 's/^/  not in docs\/manual.md: /' "$work/undocumented"

# Every name must appear in the page as roff writes it (hyphens as \-).
missing=""
for key in $(cat "$work/keys"); do
    grep -q "^\.B $(printf '%s' "$key" | sed 's/-/\\\\-/g')" "$MANDIR/spanprof.7" || missing="$missing $key"
done
for var in $(sed 's/^| `\([A-Z_]*\)`.*/\1/' "$work/table"); do
    grep -qx "\.B $var" "$MANDIR/spanprof.7" || missing="$missing $var"
done
commands=$("$TOOL" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
for command in $commands; do
    grep -qx ".SS \"spanprof $command\"" "$MANDIR/spanprof.1" || missing="$missing $command"
done
test -z "$missing" && test "$(echo "$commands" | wc -l)" -ge 9
result $? "manual pages: spanprof.7 names every option and variable, spanprof.1 every command${missing:+ (missing:$missing)}"

# The README is a front page; the manual holds the rest.
lines=$(wc -l <"$README")
test "$lines" -le 350
result $? "README.md is a front page: $lines lines (at most 350; the rest belongs in docs/)"

if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$MANDIR/spanprof.1" "$MANDIR/spanprof.7" >"$work/groff" 2>&1 &&
        test ! -s "$work/groff"
    result $? "manual pages: groff reads them without a warning"
    sed 's/^/  | /' "$work/groff"
else
    skip "manual pages: groff is not installed (apt-get install groff-base)"
fi

# The README's package list is install-deps.sh's.
sh "$here/packages.sh" "$README" "$here/../../install-deps.sh" >"$work/packages" 2>&1
result $? "README.md lists the packages install-deps.sh installs"
cat "$work/packages"

# No tracked file holds a merge's conflict markers (one reached the manual once).  From a git
# checkout, the tracked files; from a tarball, every file under the source tree.
top=$(cd "$here/../.." && pwd)
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$top" ls-files -z
else
    (cd "$top" && find . -path ./build -prune -o -type f -print0)
fi | (cd "$top" && xargs -0 grep -lE '^(<<<<<<<|>>>>>>>)( |$)|^=======$' 2>/dev/null) >"$work/conflicts"
marked=$(tr '\n' ' ' <"$work/conflicts")
test -z "$marked"
result $? "no file holds conflict markers${marked:+ (in: ${marked% })}"
summary
