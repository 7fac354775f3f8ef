#!/bin/sh
# install-deps.sh — installs the Debian 12 packages spanprof needs to build, test and run the
# demo, skipping those already installed.  Uses sudo when not run as root.
# nodejs and npm fetch speedscope for `spanprof view`; golang-go provides `go tool pprof`, which
# the pprof test (make check-pprof) uses to read spanprof's pprof files; libmicrohttpd-dev and
# libcurl4-openssl-dev are `spanprof serve`'s HTTP server and push client; prometheus (promtool and
# the server), curl and python3 (a push receiver) are the live profiles' test's (make check-live); libcap2-bin's setcap makes
# the file-capability program of the security test (make check-security); man-db reads the manual
# pages in the install test (and brings groff, which check-options reads them with); cmake builds
# the CMake package test's scratch project (make check-install); WITH_BROWSER=1 adds
# chromium for the browser test (make check-browser).  WITH_BENCH=1 adds what `make bench` compares
# against or builds with: uftrace, clang-14 (XRay), valgrind (instruction counts) and tcl (SQLite's
# build, for the speedtest1 table).  WITH_ARM64=1 adds the arm64 cross build and its test
# (./configure --host=aarch64-linux-gnu, make check-arm64): the arm64 architecture in dpkg, the
# cross compilers and the cross compiler's plugin headers, qemu-user (runs the arm64 programs),
# pkgconf:arm64 (aarch64-linux-gnu-pkg-config) and the arm64 builds of the libraries the runtime,
# the tool and the unit tests link against.
#
# GCC_VERSIONS="11 12" installs the compiler and plugin headers of each listed GCC release
# (default: the release of the system's gcc).
#
# --list prints the packages a fresh machine gets (nodejs and npm included), one line, and
# installs nothing: `make check-options` compares it with the README's list.
set -eu
default_major=$( (gcc -dumpversion 2>/dev/null || echo 12) | sed 's/\..*//')
packages="gcc g++ make autoconf pkg-config libjson-c-dev libunwind-dev check coz-profiler dpkg-dev
          libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go libcap2-bin man-db cmake
          libmicrohttpd-dev libcurl4-openssl-dev prometheus curl python3"
# A node.js that is already there (e.g. from another repository, whose nodejs package bundles
# npm and conflicts with Debian's npm package) is used as it is.
if [ "${1:-}" = --list ] || ! command -v npm >/dev/null 2>&1; then
    packages="$packages nodejs npm"
fi
[ "${WITH_BROWSER:-0}" = 1 ] && packages="$packages chromium"
[ "${WITH_BENCH:-0}" = 1 ] && packages="$packages uftrace clang-14 valgrind tcl"
for major in ${GCC_VERSIONS:-$default_major}; do
    packages="$packages gcc-$major g++-$major gcc-$major-plugin-dev"
done
if [ "${WITH_ARM64:-0}" = 1 ]; then
    packages="$packages gcc-$default_major-aarch64-linux-gnu g++-$default_major-aarch64-linux-gnu
              gcc-aarch64-linux-gnu g++-aarch64-linux-gnu gcc-$default_major-plugin-dev-aarch64-linux-gnu
              qemu-user pkgconf:arm64 libjson-c-dev:arm64 libprotobuf-c-dev:arm64 zlib1g-dev:arm64
              libmicrohttpd-dev:arm64 libcurl4-openssl-dev:arm64 check:arm64 libunwind-dev:arm64"
fi
if [ "${1:-}" = --list ]; then
    # shellcheck disable=SC2086 # one line of words
    echo $packages
    exit 0
fi

missing=""
for package in $packages; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $package"
done
if [ -z "$missing" ]; then
    echo "install-deps: all packages present: $packages"
    exit 0
fi
as_root=""
[ "$(id -u)" -eq 0 ] || as_root=sudo
# The :arm64 packages come from the arm64 architecture's package lists (fetched by the update).
if [ "${WITH_ARM64:-0}" = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "install-deps: adding the arm64 architecture to dpkg"
    $as_root dpkg --add-architecture arm64
fi
echo "install-deps: installing$missing"
$as_root apt-get update -q
# shellcheck disable=SC2086 # the package list is meant to split
DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -q --no-install-recommends $missing
