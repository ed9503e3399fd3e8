# t_cudnn_parts.sh - cuDNN's parts from two folders (issue 27 item 6): one
# version is a warning at most (cudnn_parts_split), parts of different
# versions an error (cudnn_sublib_mismatch).  Real runs of the TensorFlow-like
# example under the shim, against copies of the cuDNN 9.1.0 double laid out
# as a partial copy first in LD_LIBRARY_PATH; and doctor of the same layout.
# Before issue 27 a part whose version could not be read (no version data, a
# plain .so.9 name, not a wheel: NVIDIA's heuristic and engine parts) made
# a successful run's same-version copy an error.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
EX=$BUILD_DIR/examples/conv_tflike
D9=$DOUBLES/cudnn9 RT=$DOUBLES/cudart DRV=$DOUBLES/cuda
export CG_CONV_SHAPE=2,4,8,8,4,3,3 CONVGUARD_QUIET=1
[ -x "$EX" ] || skip_all "no $EX (make test-deps)"

# run NAME LLP: the example under the shim with LD_LIBRARY_PATH=LLP:runtime:driver; its report in $WORK/NAME.json
run() {
    local name=$1 llp=$2
    LD_LIBRARY_PATH="$llp:$RT:$DRV" run_shim "$WORK/$name" "$EX" >"$WORK/$name.out" 2>&1
    echo $? >"$WORK/$name.rc"
    "$CG" report --json "$WORK/$name" >"$WORK/$name.json" 2>/dev/null
}
rules() { jq -c '[.findings[] | [.rule, .severity]]' "$WORK/$1.json"; }

# the full install, in a folder that is no wheel: its cnn part has no version to read
mkdir -p "$WORK/full" "$WORK/partial"
cp "$D9"/* "$WORK/full/"
cp "$D9/libcudnn.so.9" "$D9/libcudnn_graph.so.9" "$WORK/partial/"

# ---- one version: dispatcher and graph from the partial copy, cnn (version unknown) from the full one
run same "$WORK/partial:$WORK/full"
check "same: the run succeeded (exit 0)" test "$(cat "$WORK/same.rc")" = 0
check "same: cnn came from the other folder, its version unknown" jqt "$(trace_of "$WORK/same")" \
    "any(.[]; .ev==\"lib\" and .path==\"$WORK/full/libcudnn_cnn.so.9\" and .version==null)"
check "same: a warning, cudnn_parts_split ($(rules same))" \
    jq -e '[.findings[] | [.rule, .severity]] == [["cudnn_parts_split", "warning"]]' "$WORK/same.json"
check "same: no error" jq -e '[.findings[] | select(.severity == "error")] | length == 0' "$WORK/same.json"

# ---- one version, the part's version only in its file name, major.minor as "9.19" is (here "9.1")
mkdir -p "$WORK/named"
cp "$D9"/* "$WORK/named/"
mv "$WORK/named/libcudnn_cnn.so.9" "$WORK/named/libcudnn_cnn.so.9.1"
ln -s libcudnn_cnn.so.9.1 "$WORK/named/libcudnn_cnn.so.9"
run named "$WORK/partial:$WORK/named"
# (the dispatcher probes libcudnn_cnn.so.9.1.0, .so.9.1, .so.9 as cuDNN 9.19 probes .so.9.19: .so.9.1 is found)
check "named: the cnn part, found as libcudnn_cnn.so.9.1, has version 90100 from its name" jqt "$(trace_of "$WORK/named")" \
    "any(.[]; .ev==\"lib\" and .path==\"$WORK/named/libcudnn_cnn.so.9.1\" and .file_version==\"9.1\" and .version==90100)"
check "named: a warning, cudnn_parts_split ($(rules named))" \
    jq -e '[.findings[] | [.rule, .severity]] == [["cudnn_parts_split", "warning"]]' "$WORK/named.json"

# ---- two versions: the cnn part is 9.0.0 (its file's real name says so)
mkdir -p "$WORK/older"
cp "$D9"/* "$WORK/older/"
mv "$WORK/older/libcudnn_cnn.so.9" "$WORK/older/libcudnn_cnn.so.9.0.0"
ln -s libcudnn_cnn.so.9.0.0 "$WORK/older/libcudnn_cnn.so.9"
run older "$WORK/partial:$WORK/older"
check "older: the cnn part is 9.0.0 (90000)" jqt "$(trace_of "$WORK/older")" \
    "any(.[]; .ev==\"lib\" and .path==\"$WORK/older/libcudnn_cnn.so.9\" and .version==90000)"
check "older: an error, cudnn_sublib_mismatch ($(rules older))" \
    jq -e '.findings[0] | .rule == "cudnn_sublib_mismatch" and .severity == "error"' "$WORK/older.json"
check "older: no cudnn_parts_split" jq -e '[.findings[].rule] | index("cudnn_parts_split") == null' "$WORK/older.json"

# ---- a link into another folder: the part's folder is the one the link leads to (lib.real_dir)
mkdir -p "$WORK/linked"
cp "$D9/libcudnn.so.9" "$D9/libcudnn_graph.so.9" "$WORK/linked/"
ln -s "$WORK/full/libcudnn_cnn.so.9" "$WORK/linked/libcudnn_cnn.so.9"
run linked "$WORK/linked"
check "linked: the cnn part's lib event names the folder the link leads to" jqt "$(trace_of "$WORK/linked")" \
    "any(.[]; .ev==\"lib\" and .path==\"$WORK/linked/libcudnn_cnn.so.9\" and .real_dir==\"$WORK/full\")"
check "linked: one version from two folders, a warning ($(rules linked))" \
    jq -e '[.findings[] | [.rule, .severity]] == [["cudnn_parts_split", "warning"]]' "$WORK/linked.json"

# ---- doctor: a dispatcher alone first in LD_LIBRARY_PATH, its graph part from the full copy (one version)
mkdir -p "$WORK/alone"
cp "$D9/libcudnn.so.9" "$WORK/alone/"
run alone "$WORK/alone:$WORK/full"
check "alone: the report: a warning, cudnn_parts_split ($(rules alone))" \
    jq -e '[.findings[] | [.rule, .severity]] == [["cudnn_parts_split", "warning"]]' "$WORK/alone.json"
LD_LIBRARY_PATH="$WORK/alone:$WORK/full:$RT:$DRV" "$CG" doctor --json >"$WORK/doctor.json" 2>/dev/null
check "alone: doctor says the same: warnings about $WORK/alone, no error" jq -e --arg d "$WORK/alone/" '
    [.problems[] | select(.problem | contains($d))] | length >= 1 and all(.[]; .severity == "warning")' "$WORK/doctor.json"
finish
