# debsrc.sh — fetches Debian 12 source packages without touching the system's apt state: a
# private apt configuration (its own sources list, lists and cache) under a work folder; the
# system's /etc/apt is read for nothing but the archive keyring and never written.  Used by the
# trust test (real/run.sh) and by `make bench` (bench/speedtest1.sh).
#
#   . testsuite/debsrc.sh
#   debsrc_setup DIR        # writes DIR/apt, reads the deb-src index; 1 on failure (log printed)
#   debsrc_fetch PKG DEST   # downloads PKG's source into DEST (the newest version whose files
#                           # the mirror has); prints the .dsc path; 1 on failure
# shellcheck shell=sh

debsrc_setup() {
    apt_dir="$1/apt"
    mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
    : >"$apt_dir/sources.list"
    # The deb-src twin of the system's deb822 entries for Debian 12.
    cat >"$apt_dir/sources.list.d/debian-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt_opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=$apt_dir/sources.list.d
 -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir/cache -o Debug::NoLocking=1"
    # As root apt drops to the _apt user for downloads, which cannot write into our directories.
    [ "$(id -u)" -eq 0 ] && apt_opts="$apt_opts -o APT::Sandbox::User=root"
    # shellcheck disable=SC2086 # option list
    apt-get $apt_opts update >"$apt_dir/update.log" 2>&1
    status=$?
    # apt-get update exits 0 when an index could not be fetched ("W: Failed to fetch …").
    if [ $status -ne 0 ] || grep -q '^[WE]: \|^Err:' "$apt_dir/update.log"; then
        sed 's/^/  | /' "$apt_dir/update.log"
        return 1
    fi
    return 0
}

debsrc_fetch() {
    mkdir -p "$2"
    # shellcheck disable=SC2086 # option list
    if ! (cd "$2" && apt-get $apt_opts source --download-only "$1") >"$2/fetch.log" 2>&1; then
        # A mirror may lack the newest version's files while its index lists them (a security
        # update's sources, once: 404): each other version the indexes list, newest first.
        newest=$(apt-cache $apt_opts showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' |
            sort -rV | uniq)
        fetched=0
        for version in $newest; do
            find "$2" -maxdepth 1 -type f ! -name fetch.log -exec rm -f {} +
            echo "== $1=$version" >>"$2/fetch.log"
            if (cd "$2" && apt-get $apt_opts source --download-only "$1=$version") \
                >>"$2/fetch.log" 2>&1; then
                fetched=1
                break
            fi
        done
        [ $fetched = 1 ] || return 1
    fi
    ls "$2"/*.dsc
}
