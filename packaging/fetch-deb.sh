#!/bin/sh
# packaging/fetch-deb.sh ARCH DIR PKG... - Debian packages built for another
# machine (arm64), downloaded by apt-get from this machine's Debian sources
# and unpacked into DIR, for a cross build (the aarch64 wheel's libjansson.a).
# apt runs with a state of its own under DIR: no dpkg --add-architecture, no
# change to what this machine installs or lists.
set -eu
arch=$1 dir=$2
shift 2
command -v apt-get >/dev/null || { echo "fetch-deb: no apt-get: unpack $* ($arch) into $dir yourself"; exit 1; }
st=$dir/.apt
rm -rf "$st/debs"
mkdir -p "$st/lists/partial" "$st/cache/archives/partial" "$st/debs"
: >"$st/status"
apt() {
    apt-get -qq -o Dir::State::Lists="$st/lists" -o Dir::Cache="$st/cache" -o Dir::State::status="$st/status" \
        -o APT::Architecture="$arch" -o APT::Architectures::="$arch" -o Debug::NoLocking=1 "$@"
}
apt update
pkgs=""
for p; do pkgs="$pkgs $p:$arch"; done
# (as root apt warns that _apt cannot write to DIR: harmless)
(cd "$st/debs" && apt download $pkgs 2>&1 | grep -v 'unsandboxed' || true)
n=0
for d in "$st"/debs/*.deb; do
    [ -e "$d" ] || break
    dpkg -x "$d" "$dir"
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "fetch-deb: apt-get download$pkgs fetched nothing"; exit 1; }
echo "fetch-deb:$pkgs -> $dir"
