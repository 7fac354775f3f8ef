#!/bin/sh
# packages.sh README INSTALL_DEPS — the README's list of the Debian packages that install-deps.sh
# installs is exactly the script's (`install-deps.sh --list` for Debian 12's GCC 12, as the README
# says): the packages after "installs the Debian packages (`" up to the closing backquote, and
# those WITH_BROWSER=1 adds, after "`WITH_BROWSER=1` adds".  Prints each package that is in one
# and not the other and exits 1; exits 0 when they match.
set -eu
readme=$1 script=$2

# The words of the first backquoted text after MARK in the README, sorted, one a line.
readme_words() {
    tr '\n' ' ' <"$readme" | sed -n "s/.*$1[^\`]*\`\\([^\`]*\\)\`.*/\\1/p" | tr -s ' ' '\n' | sed '/^$/d' | sort
}
# install-deps.sh's list with ARGS in the environment, sorted, one a line.
script_words() {
    env GCC_VERSIONS=12 "$@" sh "$script" --list | tr -s ' ' '\n' | sed '/^$/d' | sort
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
readme_words 'installs the Debian packages (' >"$tmp/readme"
script_words WITH_BROWSER=0 >"$tmp/script"
# shellcheck disable=SC2016 # Markdown's backquotes
readme_words '`WITH_BROWSER=1` adds' >"$tmp/readme-browser"
script_words WITH_BROWSER=1 | comm -13 "$tmp/script" - >"$tmp/script-browser"
status=0
for list in "" -browser; do
    comm -23 "$tmp/script$list" "$tmp/readme$list" >"$tmp/only-script"
    comm -13 "$tmp/script$list" "$tmp/readme$list" >"$tmp/only-readme"
    what=${list:+" with WITH_BROWSER=1"}
    sed "s/^/  installed by install-deps.sh$what, not in README.md's list: /" "$tmp/only-script"
    sed "s/^/  in README.md's list$what, not installed by install-deps.sh: /" "$tmp/only-readme"
    if [ -s "$tmp/only-script" ] || [ -s "$tmp/only-readme" ] || [ ! -s "$tmp/readme$list" ]; then
        status=1
    fi
done
exit $status
