#!/bin/sh
# install.sh — `make install` into a scratch prefix, then build a sample program the way the
# README tells users to (pkg-config --cflags/--libs spanprof), linked against the shared and
# the static runtime, and check its profile and the installed `spanprof` tool.
# Environment: MAKE, CC, PROFDUMP.
# shellcheck source=testsuite/lib.sh
. "$(dirname "$0")/../lib.sh"
top=$(cd "$here/../.." && pwd)
make_work_dir
prefix=$work

$MAKE -s -C "$top" install prefix="$prefix/usr" plugindir="$prefix/gcc-plugins" >"$prefix/install.log" 2>&1
result $? "install: make install prefix=… plugindir=…"
for file in usr/bin/spanprof usr/include/spanprof.h usr/lib/libspanprof.so.0 usr/lib/libspanprof.so \
            usr/lib/libspanprof.a usr/lib/pkgconfig/spanprof.pc gcc-plugins/spanplugin.so; do
    test -e "$prefix/$file"
    result $? "install: installed $file"
done

export PKG_CONFIG_PATH="$prefix/usr/lib/pkgconfig"
cflags=$(pkg-config --cflags spanprof) && libs=$(pkg-config --libs spanprof)
result $? "install: pkg-config --cflags --libs spanprof"
case $cflags in *"-fplugin=$prefix/gcc-plugins/spanplugin.so"*) status=0 ;; *) status=1 ;; esac
result $status "install: --cflags loads the installed plugin by full path ($cflags)"

# --cflags: the installed header's folder and the plugin, no include folder of the runtime's own
# libraries (json-c's); --libs: an rpath, since this prefix is no system library folder.
test "$(echo "$cflags" | tr ' ' '\n' | grep -c '^-I')" -eq 1 && case $cflags in *"-I$prefix/usr/include"*) true ;; *) false ;; esac
result $? "install: --cflags names only the install's include folder ($cflags)"
case $libs in *"-Wl,-rpath,$prefix/usr/lib"*) status=0 ;; *) status=1 ;; esac
result $status "install: --libs has an rpath to a non-system prefix ($libs)"

# A system prefix (staged with DESTDIR): no rpath, the loader finds the library there itself.
$MAKE -s -C "$top" install DESTDIR="$work/stage" prefix=/usr plugindir=/usr/lib/gcc-plugins \
    >"$work/stage.log" 2>&1 && ! grep -q -- '-rpath' "$work/stage/usr/lib/pkgconfig/spanprof.pc"
result $? "install: prefix=/usr: spanprof.pc has no rpath"

# A prefix and nothing else (as a user without root installs): every file under the prefix, the
# plugin in PREFIX/lib/spanprof, and spanprof.pc and the CMake package naming it there.  Staged
# with DESTDIR, so a file meant for anywhere else shows up outside STAGE/opt/sp.
$MAKE -s -C "$top" install DESTDIR="$work/stage-prefix" prefix=/opt/sp >"$work/stage-prefix.log" 2>&1
result $? "install: make install prefix=/opt/sp (staged with DESTDIR)"
outside=$(cd "$work/stage-prefix" && find . ! -type d | sed 's|^\.||' | grep -v '^/opt/sp/' | tr '\n' ' ')
test -z "$outside"
result $? "install: prefix=/opt/sp: every file under the prefix${outside:+ (outside: $outside)}"
test -f "$work/stage-prefix/opt/sp/lib/spanprof/spanplugin.so" &&
    grep -qx 'plugindir=/opt/sp/lib/spanprof' "$work/stage-prefix/opt/sp/lib/pkgconfig/spanprof.pc" &&
    grep -q '"/opt/sp/lib/spanprof/spanplugin.so"' "$work/stage-prefix/opt/sp/lib/cmake/spanprof/spanprofConfig.cmake"
result $? "install: prefix=/opt/sp: the plugin in /opt/sp/lib/spanprof, named there by spanprof.pc and the CMake package"

test "$(pkg-config --variable=coz_cflags spanprof)" = "-g -gdwarf-4 -gno-variable-location-views"
result $? "install: pkg-config --variable=coz_cflags spanprof gives the debug-info flags coz reads"

# The profile section of the plugin test's expected output is what this run must give too.
sample="$top/testsuite/plugin/early_return.c"
sed -n '/^# profile$/,$p' "$top/testsuite/plugin/early_return.expected" | sed 1d >"$prefix/expected"
for link in shared static; do
    if [ $link = shared ]; then
        link_flags=$libs    # its rpath finds the runtime: the prefix is not a system directory
    else
        link_flags=$(pkg-config --variable=static_libs spanprof)
    fi
    # shellcheck disable=SC2086 # flag lists
    $CC -O2 -g $cflags "$sample" $link_flags -o "$prefix/app-$link" 2>"$prefix/build.log"
    result $? "install: build through pkg-config, $link runtime"
    (cd "$prefix" && env -u LD_LIBRARY_PATH SPANPROF_JSON=app.json SPANPROF_FOLDED=app.folded \
        "./app-$link" >/dev/null)
    result $? "install: run, $link runtime, without LD_LIBRARY_PATH"
    "$PROFDUMP" "$prefix/app.json" "$prefix/app.folded" >"$prefix/actual" 2>&1
    compare_files "install: profile of the $link build matches testsuite/plugin/early_return.expected" \
        "$prefix/expected" "$prefix/actual" \
        "if the new output is right: make check-plugin REGEN=1 ONLY=early_return"
done

# The manual pages, as `man` finds them under the prefix: spanprof(1) names every command the
# tool lists in its help, spanprof(7) every plugin option.
if command -v man >/dev/null 2>&1; then
    MANPATH="$prefix/usr/share/man" MANWIDTH=100 man -P cat 1 spanprof >"$prefix/man1.txt" 2>&1
    result $? "install: man spanprof (MANPATH=PREFIX/share/man)"
    missing=""
    for command in $("$prefix/usr/bin/spanprof" --help | awk '/^Commands:/ { on = 1; next }
                                                          on && /^  [a-z]/ { print $1 }'); do
        grep -q "^   spanprof $command\$" "$prefix/man1.txt" || missing="$missing $command"
    done
    test -z "$missing"
    result $? "install: man spanprof has a section per command${missing:+ (missing:$missing)}"
    MANPATH="$prefix/usr/share/man" MANWIDTH=100 man -P cat 7 spanprof >"$prefix/man7.txt" 2>&1 &&
        grep -q '^       off-copy=N' "$prefix/man7.txt" && grep -q '^       SPANPROF_QUIET' "$prefix/man7.txt"
    result $? "install: man 7 spanprof lists the plugin options and the variables"
else
    skip "install: man is not installed (apt-get install man-db)"
fi

"$prefix/usr/bin/spanprof" report "$prefix/app.json" >"$prefix/report" 2>&1 &&
    grep -q '^classify ' "$prefix/report" && grep -q '^maybe_print ' "$prefix/report"
result $? "install: installed spanprof report lists the spans"

summary
