#!/bin/sh
# run.sh — browser test of `spanprof view`: builds testsuite/trace/threads.c with spanplugin, runs
# it for folded stacks and a trace, makes a page of each with `spanprof view`, opens each page in
# headless Chromium and checks what speedscope drew.  speedscope paints its flame graphs on a
# canvas, so the test opens the pages in its sandwich view (#view=sandwich), whose table lists
# every span name as DOM text, and reads the DOM after the page settled (--dump-dom with a
# virtual time budget): every span name must be there, and for the trace every thread's name
# (speedscope lists one profile per thread, "NAME (tid N)").  A page that failed to load shows
# speedscope's welcome screen instead, which fails the test.
# When Chromium is missing or cannot start, the test is skipped (and counted as skipped).
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, TOOL (spanprof), CHROMIUM (may be empty).
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
make_work_dir

# skip_all REASON: the whole test is skipped (counted once), and the runner ends.
skip_all() {
    skip "browser test: $1"
    finish
}

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$chromium" ] || skip_all "chromium not found (apt-get install chromium)"

# A fresh profile and no network or background activity: the pages must work offline.
browse() {
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/chromium-profile" --virtual-time-budget=15000 --dump-dom "$1"
}
if ! browse about:blank >"$work/blank.html" 2>"$work/chromium.log" || ! grep -q '<html' "$work/blank.html"; then
    skip_all "chromium cannot start here: $(grep -v '^$' "$work/chromium.log" | tail -n 1 | grep . || echo "$chromium failed")"
fi

exe="$work/threads"
cmd="$CC -O2 -g -fplugin=$PLUGIN -I$INCLUDE_DIR $here/../trace/threads.c -o $exe -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
# shellcheck disable=SC2086 # a word list
build "sample threads.c" "$work/build.log" $cmd || finish
(cd "$work" && SPANPROF_FOLDED=threads.folded SPANPROF_TRACE=threads.trace.json ./threads)
if ! "$TOOL" view "$work/threads.folded" >"$work/view.log" 2>&1 ||
    ! "$TOOL" view -o "$work/timeline.html" "$work/threads.trace.json" >>"$work/view.log" 2>&1; then
    if grep -q "needs speedscope" "$work/view.log"; then
        skip_all "speedscope is not built (needs npm): $(head -n 1 "$work/view.log")"
    fi
    fail "spanprof view"
    sed 's/^/  | /' "$work/view.log"
    finish
fi

# Text of the page's DOM after speedscope rendered it, one text node per line (scripts and
# styles, which hold the bundle and the base64 profile, removed).
page_text() {
    browse "file://$1#view=sandwich" 2>>"$work/chromium.log" |
        perl -0pe 's/<script.*?<\/script>//gs; s/<style.*?<\/style>//gs; s/<[^>]*>/\n/g' |
        sed 's/&quot;/"/g; s/&amp;/\&/g; /^[[:space:]]*$/d'
}

# check NAME PAGE LINE... : every LINE (a grep -x pattern) must be a text node of PAGE.
check() {
    name=$1 page=$2
    shift 2
    page_text "$page" >"$work/$name.txt"
    missing=""
    grep -q 'Welcome to' "$work/$name.txt" && missing=" (speedscope's welcome screen: the profile did not load)"
    for want in "$@"; do
        grep -qx -- "$want" "$work/$name.txt" || missing="$missing '$want'"
    done
    if [ -z "$missing" ]; then
        pass "$name"
    else
        fail "$name: not drawn:$missing"
        echo "  page: $page; its text:"
        head -n 40 "$work/$name.txt" | sed 's/^/  | /'
    fi
}

check flamegraph "$work/threads.folded.html" worker work leaf fib
check timeline "$work/timeline.html" work leaf fib \
    '.*, main (tid [0-9]*)' '.*, worker-1 (tid [0-9]*)' '.*, worker-2 (tid [0-9]*)'
finish
