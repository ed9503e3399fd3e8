# t_arch.sh - shim/'s layering holds (issue 16; shim/README.md, shim/LAYERS): no circle of
# more than two files and at most 5 calls from a lower layer to a higher one, measured by
# tests/arch/callgraph.py on the objects of the build tree.
source "$(dirname "$0")/../lib.sh"
command -v gcc-nm >/dev/null || skip_all "no gcc-nm"
[ -e "$BUILD_DIR/shim/core/hooks.o" ] || skip_all "no shim objects in $BUILD_DIR (a zig-built tree keeps none)"
out=$(cd "$ROOT" && BUILD=$BUILD_DIR tests/arch/callgraph.py --check shim); rc=$?
echo "$out" | grep -E '^(circle|up-call)' | sed 's/^/  /'
check "shim: $(echo "$out" | sed -n 's/^summary shim: //p') (at most a circle of 2, 5 up-calls)" test $rc = 0
finish
