#!/bin/sh
# packaging/needs.sh build|test|wheel - what README's commands need, checked
# before make builds anything (packaging/needs.mk).  Prints nothing when all
# is there; otherwise, on stderr, what is missing and the one apt-get line
# that installs it (Debian/Ubuntu package names), and "missing" on stdout.
#   build: make, make demo, make install    a C compiler, jansson's header
#   test:  make test                        + a C++ compiler, jq, python3
#   wheel: make portable / wheel            + python3's venv (libjansson.a: packaging.mk says)
# CC, CXX, JANSSON_DIR: as make has them.
level=${1:-build}
missing=""
pkgs=""
need() { missing="${missing:+$missing,} $1"; pkgs="$pkgs $2"; }
have() { command -v "$1" >/dev/null 2>&1; }

cc=${CC:-cc}
have "${cc%% *}" || need "a C compiler ($cc)" gcc
if [ -n "${JANSSON_DIR:-}" ]; then
    [ -e "$JANSSON_DIR/usr/include/jansson.h" ] || need "$JANSSON_DIR/usr/include/jansson.h" libjansson-dev
elif ! echo '#include <jansson.h>' | ${cc} -E -x c - >/dev/null 2>&1 && [ ! -e /usr/include/jansson.h ]; then
    need "jansson.h" libjansson-dev
fi
case $level in
test)
    cxx=${CXX:-g++}
    have "${cxx%% *}" || need "a C++ compiler ($cxx)" g++
    have jq || need jq jq
    have python3 || need python3 python3
    ;;
wheel)
    python3 -c 'import ensurepip, venv' 2>/dev/null || need "python3 -m venv" python3-venv
    ;;
esac
[ -z "$missing" ] && exit 0
pkgs=$(printf '%s\n' $pkgs | sort -u | tr '\n' ' ')
{
    echo "convguard: \`make\` needs what this machine lacks:$missing"
    echo "  Debian/Ubuntu, as root:  apt-get update && apt-get install -y ${pkgs% }"
    [ "$level" = test ] && echo "  (make test also uses chromium for one rendering check, and skips it without)"
} >&2
echo missing
