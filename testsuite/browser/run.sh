#!/bin/sh
# run.sh — browser test of `spanprof view`: builds three samples with spanplugin (threads.c from
# the trace suite, and here busy.c: three threads, the busiest in the middle; requests.c: 40
# requests of 20 short steps, 1 ms apart), makes a page of each one's folded stacks and trace
# with `spanprof view` and of the change from threads to busy with `spanprof diff --html`, opens
# each page in headless Chromium and checks what speedscope drew, from the page's DOM after it
# settled (--dump-dom with a virtual time budget):
#   - as opened: the view speedscope starts in (the selected one of its three view buttons:
#     Left Heavy for folded stacks, Time Order for a trace) and, for a trace, the thread shown
#     (the toolbar's title, "heavy (tid N) (2/3)": the busiest thread, not the first) and the
#     thread list, which must hold every thread with its time in a unit (µs, ms); the page's
#     title, the program's ("busy (flame graph) - spanprof"), kept after speedscope loaded the
#     profile; the diff page on the change ("change: grew and shrank (1/3)"); requests.c's
#     timeline on a stretch of some requests, not the whole run (the page says where it
#     zoomed: its data-opened-on attribute, "FROM-TO of LENGTH" ns, at most a tenth of the run);
#   - in the sandwich view (#view=sandwich, whose table lists every frame as DOM text, where the
#     flame graphs are canvas paintings): every span name, and for folded stacks times in ms
#     (busy.c's 60 ms nap), which speedscope writes only when the values carry a unit.
# A page that failed to load shows speedscope's welcome screen instead, which fails the test.
# Each page as opened is also saved as a screenshot in SHOT_DIR, to look at.
# When Chromium is missing or cannot start, the test is skipped (and counted as skipped).
#
# Environment: CC, PLUGIN, INCLUDE_DIR, LIBDIR, TOOL (spanprof), CHROMIUM (may be empty), SHOT_DIR.
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

# build_run NAME SOURCE: builds SOURCE as $work/NAME and runs it there for NAME.folded and
# NAME.trace.json (and, with SPANPROF_IDLE=1 set by the caller, their outside-spans frames).
build_run() {
    exe="$work/$1"
    cmd="$CC -O2 -g -fplugin=$PLUGIN -I$INCLUDE_DIR $2 -o $exe -L$LIBDIR -Wl,--no-as-needed -lspanprof -Wl,-rpath,$LIBDIR -pthread"
    # shellcheck disable=SC2086 # a word list
    build "sample $1" "$work/build-$1.log" $cmd || return 1
    (cd "$work" && SPANPROF_FOLDED=$1.folded SPANPROF_TRACE=$1.trace.json SPANPROF_JSON=$1.json "./$1")
}
build_run threads "$here/../trace/threads.c" || finish
build_run busy "$here/busy.c" || finish
build_run requests "$here/requests.c" || finish
: >"$work/view.log"
"$TOOL" diff --html "$work/diff.html" "$work/threads.folded" "$work/busy.folded" >>"$work/view.log" 2>&1
for page in threads busy requests; do
    if ! "$TOOL" view -o "$work/$page-flamegraph.html" "$work/$page.folded" >>"$work/view.log" 2>&1 ||
        ! "$TOOL" view -o "$work/$page-timeline.html" "$work/$page.trace.json" >>"$work/view.log" 2>&1; then
        if grep -q "needs speedscope" "$work/view.log"; then
            skip_all "speedscope is not built (needs npm): $(head -n 1 "$work/view.log")"
        fi
        fail "spanprof view"
        sed 's/^/  | /' "$work/view.log"
        finish
    fi
done

# The page's DOM after speedscope rendered it (URL: a page, maybe with a #hash).
page_dom() {
    browse "file://$1" 2>>"$work/chromium.log"
}

# Its text, one text node per line (scripts and styles, which hold the bundle and the base64
# profile, removed).
dom_text() {
    perl -0pe 's/<script.*?<\/script>//gs; s/<style.*?<\/style>//gs; s/<[^>]*>/\n/g' |
        sed 's/&quot;/"/g; s/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g; /^[[:space:]]*$/d'
}

# The selected one of speedscope's view buttons in a DOM: the button whose class is not the one
# the other two share.
selected_view() {
    perl -0ne 'my @b = /<div class="([^"]*)"><span[^>]*>[^<]*<\/span>(Time Order|Left Heavy|Sandwich)<\/div>/g;
        my %n; $n{$b[$_]}++ for grep { $_ % 2 == 0 } 0 .. $#b;
        for (my $i = 0; $i < @b; $i += 2) { print "$b[$i + 1]\n" if @b == 6 && $n{$b[$i]} == 1 }'
}

# check_text NAME TEXTFILE LINE...: every LINE (a grep -x pattern) must be a text node.
check_text() {
    name=$1 text=$2
    shift 2
    missing=""
    grep -q 'Welcome to' "$text" && missing=" (speedscope's welcome screen: the profile did not load)"
    for want in "$@"; do
        grep -qx -- "$want" "$text" || missing="$missing '$want'"
    done
    if [ -z "$missing" ]; then
        pass "$name"
    else
        fail "$name: not drawn:$missing"
        echo "  its text:"
        head -n 40 "$text" | sed 's/^/  | /'
    fi
}

# check_sandwich NAME PAGE LINE...: the page in the sandwich view has every LINE as a text node.
check_sandwich() {
    name=$1 page=$2
    shift 2
    page_dom "$page#view=sandwich" | dom_text >"$work/$name.txt"
    check_text "$name" "$work/$name.txt" "$@"
}

# check_opened NAME PAGE VIEW [TITLE [LINE...]]: the page as opened starts in VIEW, its toolbar
# title (the text after the view buttons, one line) matches TITLE, and every LINE is a text
# node; a screenshot goes to SHOT_DIR/NAME.png.
check_opened() {
    name=$1 page=$2 view=$3
    shift 3
    page_dom "$page" >"$work/$name.dom"
    dom_text <"$work/$name.dom" >"$work/$name.txt"
    got=$(selected_view <"$work/$name.dom")
    if [ "$got" != "$view" ]; then
        fail "$name: opens in '${got:-no view}', not '$view'"
        return
    fi
    if [ $# -gt 0 ]; then
        title=$(sed -n '/^Sandwich$/{n;N;s/ *\n/ /;p;q}' "$work/$name.txt")
        if ! printf '%s\n' "$title" | grep -qx -- "$1"; then
            fail "$name: shows '$title', not '$1'"
            return
        fi
        shift
    fi
    if [ -n "${SHOT_DIR:-}" ]; then
        mkdir -p "$SHOT_DIR"
        timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
            --disable-background-networking --disable-component-update --disable-sync \
            --user-data-dir="$work/chromium-profile" --virtual-time-budget=15000 \
            --window-size=1280,800 --screenshot="$SHOT_DIR/$name.png" "file://$page" \
            >>"$work/chromium.log" 2>&1 || rm -f "$SHOT_DIR/$name.png"
    fi
    check_text "$name" "$work/$name.txt" "$@"
}

# check_title NAME TITLE: the page of check_opened NAME is titled TITLE once loaded.
check_title() {
    got=$(sed -n 's/.*<title>\(.*\)<\/title>.*/\1/p' "$work/$1.dom")
    if [ "$got" = "$2" ]; then
        pass "$1: titled '$2'"
    else
        fail "$1: titled '$got', not '$2'"
    fi
}

check_sandwich flamegraph "$work/threads-flamegraph.html" worker work leaf fib
check_sandwich timeline "$work/threads-timeline.html" work leaf fib \
    '.*main (tid [0-9]*)' '.*worker-1 (tid [0-9]*)' '.*worker-2 (tid [0-9]*)'

# Folded stacks: the flame graph, in ns shown as ms (heavy's 60 ms nap, longer on a busy machine;
# two decimals).
check_opened flamegraph-opened "$work/busy-flamegraph.html" "Left Heavy"
check_sandwich flamegraph-units "$work/busy-flamegraph.html" nap step worker '[0-9][0-9]*\.[0-9][0-9]ms (.*)'
# The trace: on heavy, second of three threads; light and main listed with their times.
check_opened timeline-opened "$work/busy-timeline.html" "Time Order" 'heavy (tid [0-9]*) (2/3)' \
    'light (tid [0-9]*)' 'main (tid [0-9]*)' '[0-9][0-9]*\.[0-9][0-9]ms' '[0-9.]*µs'
check_title flamegraph-opened "busy (flame graph) - spanprof"
check_title timeline-opened "busy (timeline) - spanprof"
# The change first, in the flame graph.
check_opened diff-opened "$work/diff.html" "Left Heavy" 'change: grew and shrank (1/3)'
check_title diff-opened "busy: $work/threads.folded → $work/busy.folded (change) - spanprof"
# requests.c's timeline: zoomed in from its some 40 ms to a stretch a tenth of that or less.
check_opened requests-opened "$work/requests-timeline.html" "Time Order" '.*' 'requests (tid [0-9]*)'
check_title requests-opened "requests (timeline) - spanprof"
opened=$(sed -n 's/.* data-opened-on="\([0-9]*\)-\([0-9]*\) of \([0-9]*\)".*/\1 \2 \3/p' "$work/requests-opened.dom")
if [ -n "$opened" ] && echo "$opened" | awk '{ exit !($2 > $1 && ($2 - $1) * 10 <= $3) }'; then
    pass "requests-opened: on a stretch ($opened: from, to, of ns)"
else
    fail "requests-opened: not zoomed to a stretch (data-opened-on: '${opened:-none}')"
fi
[ -n "${SHOT_DIR:-}" ] && echo "screenshots of the pages as opened: $SHOT_DIR/*.png"
finish
