# t_portable.sh - packaging/check-glibc.sh, the check that the wheel's shim and
# CLI run on glibc 2.17 (objdump -T), catches what it is for; and under
# `make test-portable` (CG_BUILD=build-portable) the binaries under test pass it.
source "$(dirname "$0")/../lib.sh"
CHK=$ROOT/packaging/check-glibc.sh
command -v objdump >/dev/null || skip_all "no objdump (binutils)"

# a library that takes a symbol only newer glibcs have (this machine's build)
host=$(ldd --version 2>/dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+$')
cat >"$WORK/new.c" <<'EOF'
#include <stdlib.h>
#include <sys/random.h>
int f(void *b) { return (int)getrandom(b, 8, 0); } /* GLIBC_2.25 */
EOF
cat >"$WORK/unv.c" <<'EOF'
#include <unistd.h>
extern int cg_not_in_glibc(void);
int f(void) { return cg_not_in_glibc() + getpid(); }
EOF
cc -shared -fPIC -o "$WORK/libnew.so" "$WORK/new.c"
cc -shared -fPIC -o "$WORK/libunv.so" "$WORK/unv.c"
out=$("$CHK" 2.17 "$WORK/libnew.so" 2>&1)
check "a symbol newer than the limit fails the check and is named (getrandom, GLIBC_2.25; host glibc $host)" \
    bash -c "[ \$2 != 0 ] && grep -q 'GLIBC_2.25  getrandom' <<<\"\$1\"" _ "$out" $?
check "... and passes with the limit at 2.25" "$CHK" 2.25 "$WORK/libnew.so"
out=$("$CHK" 2.17 "$WORK/libunv.so" 2>&1)
check "an undefined symbol without a version fails the check (what gettid() did before 2.30)" \
    bash -c "[ \$2 != 0 ] && grep -q 'without a symbol version.*cg_not_in_glibc' <<<\"\$1\"" _ "$out" $?
cc -shared -fPIC -o "$WORK/libconvguard.so" "$WORK/new.c" -Wl,--no-as-needed -lm
out=$("$CHK" 2.36 "$WORK/libconvguard.so" 2>&1)
check "a shim that needs more than libc fails the check (libm.so.6)" \
    bash -c "[ \$2 != 0 ] && grep -q 'needs more than libc: libm.so.6' <<<\"\$1\"" _ "$out" $?

if [ -e "$BUILD_DIR/zig/.toolchain" ]; then
    echo "  portable tree: $(cat "$BUILD_DIR/zig/.toolchain")"
    "$CHK" 2.17 "$SHIM_SO" "$BUILD_DIR/convguard" | sed 's/^/    /'
    check "the shim and CLI under test: highest GLIBC_ 2.17, the shim needs libc alone, no libjansson" \
        "$CHK" 2.17 "$SHIM_SO" "$BUILD_DIR/convguard"
    check "the CLI under test links jansson statically (ldd names no libjansson)" \
        bash -c "! ldd '$BUILD_DIR/convguard' | grep -q libjansson"
else
    echo "  (not the portable tree: make test-portable checks its binaries here)"
fi
finish
