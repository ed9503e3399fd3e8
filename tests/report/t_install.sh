# t_install.sh - `make install` gives a working layout: bin/convguard finds
# lib/libconvguard.so (shim-path, run), the man page convguard(1) is there
# and renders, and --help points to what was installed (the man page).
source "$(dirname "$0")/../lib.sh"
[ -x "$BUILD_DIR/convguard" ] && [ -e "$BUILD_DIR/libconvguard.so" ] || skip_all "CLI or shim not built"
I=$WORK/inst
# -o: install what is built, whichever tree (make test-portable's too), without rebuilding it
make -s -C "$ROOT" install NEEDS_CHECK=0 BUILD="$BUILD_DIR" DESTDIR="$I" PREFIX=/opt/cg \
    -o "$BUILD_DIR/convguard" -o "$BUILD_DIR/libconvguard.so" >"$WORK/make.out" 2>&1
check "make install DESTDIR=… PREFIX=/opt/cg: exit 0" test $? = 0
P=$I/opt/cg
check "bin/convguard, lib/libconvguard.so, share/man/man1/convguard.1 installed" \
    test -x "$P/bin/convguard" -a -f "$P/lib/libconvguard.so" -a -f "$P/share/man/man1/convguard.1"
check "the installed files are the built ones" \
    cmp -s "$P/bin/convguard" "$BUILD_DIR/convguard"
check "installed: shim-path is ../lib/libconvguard.so" \
    test "$(env -u CONVGUARD_SHIM "$P/bin/convguard" shim-path)" = "$(realpath "$P/lib/libconvguard.so")"
# (a program that loads a CUDA library: one that loads none leaves no trace)
check "installed: run preloads it (the trace's LD_PRELOAD)" \
    bash -c "LD_LIBRARY_PATH=$DOUBLES/cudnn9:$DOUBLES/cudart:$DOUBLES/cuda env -u CONVGUARD_SHIM '$P/bin/convguard' run --quiet --dir '$WORK/t' -- '$CLIENTS/client_probe' >/dev/null && jq -e -s '.[0].env.LD_PRELOAD == \"$(realpath "$P/lib/libconvguard.so")\"' '$WORK'/t/*.jsonl"
mv "$P/lib/libconvguard.so" "$WORK/elsewhere.so"
env -u CONVGUARD_SHIM "$P/bin/convguard" shim-path >/dev/null 2>"$WORK/noshim.err"
check "no shim beside it: shim-path exits 1 and names CONVGUARD_SHIM" \
    bash -c "[ $? = 1 ] && grep -q CONVGUARD_SHIM '$WORK/noshim.err'"
check "CONVGUARD_SHIM points shim-path elsewhere" \
    test "$(CONVGUARD_SHIM="$WORK/elsewhere.so" "$P/bin/convguard" shim-path)" = "$WORK/elsewhere.so"
help=$("$P/bin/convguard" --help)
check "--help points to the man page, not to a file of the source tree" \
    bash -c "grep -q 'man convguard' <<<\"\$1\" && ! grep -q 'docs/' <<<\"\$1\"" _ "$help"
if command -v groff >/dev/null; then
    check "convguard.1 renders without a warning (groff -man -ww)" \
        bash -c "groff -man -ww -z '$P/share/man/man1/convguard.1' 2>&1 | grep -c . | grep -qx 0"
    check "convguard.1 names every command of --help" \
        bash -c "t=\$(groff -man -Tutf8 '$P/share/man/man1/convguard.1' 2>/dev/null | col -b); for c in run report doctor smoke shim-path version; do grep -q \"convguard \$c\" <<<\"\$t\" || exit 1; done"
else
    echo "  (groff not installed: the man page's rendering not checked)"
fi
finish
