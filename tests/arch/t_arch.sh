# t_arch.sh - shim/'s layering holds (issue 16; shim/README.md, shim/LAYERS): no circle of
# more than two files and at most 5 calls from a lower layer to a higher one, measured by
# tests/arch/callgraph.py on the objects of the build tree; no #include of a higher layer's
# header (issue 30), read from the sources.
source "$(dirname "$0")/../lib.sh"
command -v gcc-nm >/dev/null || skip_all "no gcc-nm"
[ -e "$BUILD_DIR/shim/core/hooks.o" ] || skip_all "no shim objects in $BUILD_DIR (a zig-built tree keeps none)"
out=$(cd "$ROOT" && BUILD=$BUILD_DIR tests/arch/callgraph.py --check shim); rc=$?
echo "$out" | grep -E '^(circle|up-call|up-include)' | sed 's/^/  /'
check "shim: $(echo "$out" | sed -n 's/^summary shim: //p') (at most a circle of 2, 5 up-calls, no up-include)" test $rc = 0
check "shim: the includes were read" grep -Eq '^== shim: .*, [1-9][0-9]* include edges' <<<"$out"

# The include check itself, on a tree of headers alone (no objects to read): a
# lower folder's file that includes a higher folder's header fails --check; the
# same include the other way, a shared table and a name outside the tree pass.
t=$WORK/tree
mkdir -p "$t/low" "$t/high"
printf '# lowest first\nlow\nhigh\nshared: table.h\n' >"$t/LAYERS"
echo '/* a table */' >"$t/table.h"
echo '#include "low/low.h"' >"$t/top.h"
printf '#include "table.h"\n#include "outside.h"\n' >"$t/low/low.h"
printf '#include "low/low.h"\n#include "table.h"\n' >"$t/high/high.h"
inc() { (cd "$WORK" && BUILD=$WORK/none python3 "$ROOT/tests/arch/callgraph.py" --check tree); }
check "callgraph.py: lower to lower, shared and outside includes pass" inc
echo '#include "high/high.h"' >>"$t/low/low.h"
out=$(inc); rc=$?
check "callgraph.py: low/low.h including high/high.h fails --check" test $rc = 1
check "callgraph.py: ... and names it" grep -qx 'up-include low/low.h -> high/high.h' <<<"$out"
sed -i '$d' "$t/low/low.h"
echo '#include "top.h"' >>"$t/high/high.h"
out=$(inc); rc=$?
check "callgraph.py: a top-level header not named shared is the top layer" \
    bash -c "test $rc = 1 && grep -qx 'up-include high/high.h -> top.h' <<<'$out'"
sed -i '$d' "$t/high/high.h"
echo '#include "low/low.h"' >>"$t/table.h"
out=$(inc); rc=$?
check "callgraph.py: a shared table may include only shared ones" \
    bash -c "test $rc = 1 && grep -qx 'up-include table.h -> low/low.h' <<<'$out'"
finish
