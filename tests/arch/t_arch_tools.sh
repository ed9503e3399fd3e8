# t_arch_tools.sh - issue 16's measure of tools/ (tests/arch/callgraph.py on
# the built objects): no circle (issue 30 took the last two-file one), and no call from a
# lower folder of tools/LAYERS into a higher one (issue 30: host/ under the
# commands took the last of them).
source "$(dirname "$0")/../lib.sh"
command -v gcc-nm >/dev/null || skip_all "no gcc-nm"
command -v python3 >/dev/null || skip_all "no python3"
[ -d "$BUILD_DIR/tools" ] || skip_all "no objects in $BUILD_DIR/tools"
out=$(cd "$ROOT" && BUILD=$BUILD_DIR python3 tests/arch/callgraph.py --check --max-up 0 tools 2>&1)
rc=$?
echo "  $(grep '^summary' <<<"$out")"
check "tools/: no circle of more than 2 files, no up-call (callgraph.py --check --max-up 0)" test $rc = 0
# issue 30: the last 2-file circle (findings.c, outcome.c) went with finding.c; none may come back
check "tools/: no circle at all" bash -c "grep -q '^summary tools: .* 0 circles' <<<\"\$1\"" _ "$out"
edges=$(sed -n 's/^== tools: [0-9]* files, \([0-9]*\) file-to-file edges.*/\1/p' <<<"$out")
check "tools/: the objects were read ($edges edges between files)" test "${edges:-0}" -gt 0
check "tools/LAYERS names every folder of tools/" bash -c "cd '$ROOT/tools' && for d in */; do grep -qx \"\${d%/}\" LAYERS || exit 1; done"
finish
