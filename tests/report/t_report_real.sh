# t_report_real.sh - the real cuDNN 9 on this machine, under `convguard run`:
# without a driver, cudnnCreate fails and the report must say "no NVIDIA driver".
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
P=$BUILD_DIR/report/cuda_client
LIB=${CUDNN_DIR:-/usr/local/cuda/lib}
[ -e "$LIB/libcudnn.so.9" ] || skip_all "no cuDNN 9 in $LIB"
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    skip_all "this machine has an NVIDIA driver: the no-driver case cannot be shown"
fi

"$CG" run --dir "$WORK/d" -- "$P" create "$LIB" >"$WORK/out" 2>"$WORK/err"
rc=$?
check "the program's exit status comes back (1: cudnnCreate failed)" test $rc = 1
check "the program's own output is untouched" grep -q "cudnnCreate -> 1001" "$WORK/out"
check "the report is printed because the program failed" grep -q "^convguard report: " "$WORK/err"
check "it names the missing driver" grep -q "no NVIDIA driver: libcuda.so.1 could not be loaded" "$WORK/err"
check "with the fix" bash -c "tr -s ' \\n' '  ' <'$WORK/err' | grep -q 'install the NVIDIA driver'"
check "and the failures in order: libcuda.so.1, cudnnCreate 1001, cudaMalloc 35" \
    bash -c "grep -E '#[0-9]+ (dlopen libcuda.so.1 failed|cudnnCreate -> CUDNN_STATUS_NOT_INITIALIZED \(1001\)|cudaMalloc(\([^)]*\))? -> cudaErrorInsufficientDriver \(35\))' '$WORK/err' | wc -l | grep -qx 3"
check "cuDNN's version was read from the library: 9.19" grep -q "cuDNN 9.19" "$WORK/err"
T=$(trace_of "$WORK/d")
"$CG" report --json "$T" >"$WORK/j"
check "report --json on the trace: handle_no_driver first" jq -e '.findings[0].rule == "handle_no_driver"' "$WORK/j"
check "no benign probe listed as a failure" bash -c "! grep -q 'libcudnn_graph.so.9.19' '$WORK/err'"
finish
